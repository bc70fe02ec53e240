//===- LowerDot.cpp - Lowering `@` ----------------------------------------===//
#include "codegen/LowerMma.h"

#include <cmath>
#include <tuple>
#include <variant>

namespace tc::codegen::lower {

/// acc + a @ b on tensor cores where the operands allow it (LowerDot's
/// second half), else on the CUDA cores in the reference order.
void Lowerer::lowerDot(const ir::Op &op) {
  if (!mmaDots_.count(&op)) // planLayouts's decision
    return lowerDotFma(op);
  if (!lowerDotMma(op))
    throw Unsupported("internal: the layouts put an `@` on mma.sync that has no plan");
}

/// acc + a @ b: for each result element, k ascending, multiply then add in
/// the accumulator type (the reference order; no FMA contraction). The k
/// loop is a run-time loop (kDotUnroll steps per trip) carrying every slot's
/// accumulator, so code size does not grow with K.
void Lowerer::lowerDotFma(const ir::Op &op) {
  notePath("dot.fma");
  const ir::Type &a = op.operand(0)->type(), &bt = op.operand(1)->type();
  const ir::Type &out = op.result()->type();
  size_t r = a.rank();
  int64_t m = a.shape[r - 2], kd = a.shape[r - 1], n = bt.shape[r - 1];
  DType acc = out.dtype;
  const Slots &acs = get(op.operand(2));
  size_t offB = alignUp(static_cast<size_t>(a.numElements()) * elemBytes(a));
  barrier();
  stage(get(op.operand(0)), a, 0);
  stage(get(op.operand(1)), bt, offB);
  barrier();
  int64_t total = out.numElements(), slots = slotsOf(total);
  Slots rowA, colB, init;
  for (int64_t k = 0; k < slots; ++k) {
    llvm::Value *e = elemIndex(total, k);
    llvm::Value *batch = b_.CreateUDiv(e, b_.getInt32(static_cast<uint32_t>(m * n)));
    llvm::Value *i = axisIndex(e, out.shape, r - 2), *j = axisIndex(e, out.shape, r - 1);
    rowA.push_back(
        b_.CreateMul(b_.CreateAdd(b_.CreateMul(batch, b_.getInt32(static_cast<uint32_t>(m))), i),
                     b_.getInt32(static_cast<uint32_t>(kd))));
    colB.push_back(
        b_.CreateAdd(b_.CreateMul(batch, b_.getInt32(static_cast<uint32_t>(kd * n))), j));
    init.push_back(slot(acs, static_cast<size_t>(k)));
  }
  // Written out whole (one trip) while a thread's products stay within
  // kMaxUnrolledProducts: measured 7x faster than the loop for 128x128x64
  // fp16 tiles on an H200. Larger tiles loop, kDotUnroll steps per trip.
  // Accumulators beyond the register file (more than kSpillingSlots a
  // thread: 128x128 on one warp) spill whatever the form, and a body of
  // 8192 products over them took ptxas minutes (int8 128x128x16 at 1 warp:
  // 95 s): their bodies hold kSpillingProducts at most.
  int64_t maxProducts = slots > kSpillingSlots ? kSpillingProducts : kMaxUnrolledProducts;
  int64_t unroll = slots * kd <= maxProducts
                       ? kd
                       : std::clamp<int64_t>(maxProducts / slots, 1, std::min(kd, kDotUnroll));
  while (kd % unroll)
    unroll /= 2;
  // c + a[rowA[k] + q] * b[colB[k] + q * n], with q and q * n given.
  auto step = [&](llvm::Value *c, int64_t k, llvm::Value *q, llvm::Value *qn) {
    llvm::Value *av = readStaged(a, 0, b_.CreateAdd(rowA[k], q));
    llvm::Value *bv = readStaged(bt, offB, b_.CreateAdd(colB[k], qn));
    llvm::Value *p =
        se_.binary(ir::OpKind::Mul, acc, se_.cast(av, a.dtype, acc), se_.cast(bv, bt.dtype, acc));
    if (plantedBug("dot-acc-type"))
      p = se_.cast(se_.binary(ir::OpKind::Mul, a.dtype, av, se_.cast(bv, bt.dtype, a.dtype)),
                   a.dtype, acc);
    return se_.binary(ir::OpKind::Add, acc, c, p);
  };
  if (unroll == kd) { // straight-line code: per slot, k = 0, 1, ..., kd - 1
    Slots c = init;
    for (int64_t k = 0; k < slots; ++k)
      for (int64_t q = 0; q < kd; ++q)
        c[k] = step(c[k], k, b_.getInt32(static_cast<uint32_t>(q)),
                    b_.getInt32(static_cast<uint32_t>(q * n)));
    define(op, c);
    return;
  }
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *loop = llvm::BasicBlock::Create(ctx_, "dot.k", kernel_);
  auto *done = llvm::BasicBlock::Create(ctx_, "dot.end", kernel_);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode *q = b_.CreatePHI(b_.getInt32Ty(), 2);
  q->addIncoming(b_.getInt32(0), pre);
  std::vector<llvm::PHINode *> cs;
  for (llvm::Value *c0 : init) {
    cs.push_back(b_.CreatePHI(c0->getType(), 2));
    cs.back()->addIncoming(c0, pre);
  }
  Slots cur(cs.begin(), cs.end());
  for (int64_t u = 0; u < unroll; ++u) {
    llvm::Value *qu = b_.CreateAdd(q, b_.getInt32(static_cast<uint32_t>(u)));
    llvm::Value *qn = b_.CreateMul(qu, b_.getInt32(static_cast<uint32_t>(n)));
    for (int64_t k = 0; k < slots; ++k)
      cur[k] = step(cur[k], k, qu, qn);
  }
  llvm::Value *q1 = b_.CreateAdd(q, b_.getInt32(static_cast<uint32_t>(unroll)));
  llvm::BasicBlock *end = b_.GetInsertBlock();
  q->addIncoming(q1, end);
  for (int64_t k = 0; k < slots; ++k)
    cs[k]->addIncoming(cur[k], end);
  b_.CreateCondBr(b_.CreateICmpULT(q1, b_.getInt32(static_cast<uint32_t>(kd))), loop, done);
  b_.SetInsertPoint(done);
  define(op, cur); // the values after the last trip
}

// ---- Tensor cores ------------------------------------------------------------
//
// acc + a @ b of 2-D tiles a (m x k), b (k x n) on mma.sync.aligned (row.col):
// fp16 or bf16 operands with an fp32 accumulator on m16n8k16, int8 operands
// with an int32 accumulator on m16n8k32; m and n multiples of 16, k of the
// instruction's k.
//  1. a, b and acc are staged in shared memory, every row padded by 16 bytes
//     (a, b) or 32 bytes (acc). ldmatrix reads 8 rows of 16 bytes per phase: a
//     row pitch that is odd in 16-byte units puts them in 8 different groups of
//     4 banks. The 8-byte accumulator accesses of a half-warp cover 4 rows of
//     32 bytes: a pitch of 32 (mod 128) bytes puts them in 4 different groups.
//     For int8, b is staged transposed (n rows of k), since ldmatrix.trans
//     moves 16-bit elements and the int8 b fragment packs 4 consecutive k.
//  2. The output is cut into warp tiles (chooseWarpTile), dealt to the warps
//     in turn. A warp loads its tile's accumulator fragments, runs the k steps
//     (per 16 rows of a one ldmatrix.x4, per 16 columns of b one ldmatrix.x4,
//     .trans for 16-bit b: two n8 fragments), then writes the fragments back
//     in place (warp tiles are disjoint).
//  3. Every thread reads its own slots of the result back (elemIndex: whatever
//     the blocked layout is).
// The tensor cores sum in an order of their own, not k ascending: the result
// is exact for integers, and for floats where every product and partial sum
// is exact in fp32 (small integers); else within the K-scaled tolerance of
// docs/fuzz.md.

namespace {

constexpr int64_t kMmaPadBytes = 16;   // bytes added to every staged row of a and b
constexpr int64_t kMaxWarpTile = 64;   // 64 x 64: 128 accumulators per thread
constexpr int64_t kMmaUnrollSteps = 8; // k steps written out per trip of the k loop

/// The warp tile (rows, columns; multiples of 16) for an m x n product on
/// `warps` warps: as many busy warps as possible, then whole rounds (every
/// warp the same number of tiles), then the largest tile, then the squarest.
std::pair<int64_t, int64_t> chooseWarpTile(int64_t m, int64_t n, int64_t warps) {
  std::pair<int64_t, int64_t> best{0, 0};
  std::tuple<int64_t, bool, int64_t, int64_t> bestKey{-1, false, 0, 0};
  for (int64_t tm = 16; tm <= kMaxWarpTile; tm += 16)
    for (int64_t tn = 16; tn <= kMaxWarpTile; tn += 16) {
      if (m % tm || n % tn)
        continue;
      int64_t tiles = (m / tm) * (n / tn);
      auto key =
          std::make_tuple(std::min(tiles, warps), tiles % warps == 0, tm * tn, -std::abs(tm - tn));
      if (key > bestKey) {
        bestKey = key;
        best = {tm, tn};
      }
    }
  return best;
}

/// The k of the mma.sync shape for operands of dtype `in` and an accumulator
/// of dtype `acc` (0: no tensor-core form).
int64_t mmaK(DType in, DType acc) {
  if ((in == DType::F16 || in == DType::BF16) && acc == DType::F32)
    return 16;
  if (in == DType::I8 && acc == DType::I32)
    return 32;
  return 0;
}

} // namespace

bool isPositiveZero(const ir::Value *c) {
  const ir::Op *d = c->definingOp();
  if (d && d->kind() == ir::OpKind::Splat)
    d = d->operand(0)->definingOp();
  if (!d || d->kind() != ir::OpKind::Constant)
    return false;
  const ir::AttrValue *a = d->attr("value");
  if (!a)
    return false;
  if (const int64_t *i = std::get_if<int64_t>(a))
    return *i == 0;
  if (const double *f = std::get_if<double>(a))
    return *f == 0.0 && !std::signbit(*f);
  return false;
}

/// Fills p for acc + a @ b on mma.sync with one staging of a, b and acc
/// from offset 0; false where the operands have no tensor-core form.
bool Lowerer::planMma(const ir::Op &op, MmaPlan &p) {
  p.a = &op.operand(0)->type();
  p.b = &op.operand(1)->type();
  p.c = &op.result()->type();
  p.kStep = mmaK(p.a->dtype, p.c->dtype);
  if (!opts_.tensorCores || p.a->rank() != 2 || p.b->dtype != p.a->dtype || !p.kStep)
    return false;
  p.m = p.a->shape[0];
  p.k = p.a->shape[1];
  p.n = p.b->shape[1];
  if (p.m % 16 || p.n % 16 || p.k % p.kStep)
    return false;
  std::tie(p.tileM, p.tileN) = chooseWarpTile(p.m, p.n, opts_.numWarps);
  p.tilesN = p.n / p.tileN;
  p.tiles = (p.m / p.tileM) * p.tilesN;
  p.bTransposed = p.a->dtype == DType::I8;
  int64_t in = static_cast<int64_t>(byteSize(p.a->dtype)), pad = kMmaPadBytes / in;
  p.pitchA = p.k + pad;
  p.pitchB = (p.bTransposed ? p.k : p.n) + pad;
  p.pitchC = p.n + 8; // 32 bytes
  p.offB = alignUp(static_cast<size_t>(p.m * p.pitchA * in));
  p.offC = p.offB + alignUp(static_cast<size_t>((p.bTransposed ? p.n : p.k) * p.pitchB * in));
  p.bytes = p.offC + static_cast<size_t>(p.m * p.pitchC) * 4;
  p.zeroAcc = isPositiveZero(op.operand(2));
  p.roundAcc = plantedBug("dot-acc-type");
  return true;
}

bool Lowerer::lowerDotMma(const ir::Op &op) {
  MmaPlan p;
  if (!planMma(op, p) || p.bytes > kMaxSharedBytes)
    return false; // the CUDA-core path stages less
  sharedBytes_ = std::max(sharedBytes_, p.bytes);
  notePath("mma.sync");
  allowAllRegisters();
  barrier();
  stageRows(get(op.operand(0)), *p.a, p.offA, p.pitchA, false);
  stageRows(get(op.operand(1)), *p.b, p.offB, p.pitchB, p.bTransposed);
  if (!p.zeroAcc)
    stageRows(get(op.operand(2)), *p.c, p.offC, p.pitchC, false);
  barrier();
  mmaTileLoop(p);
  barrier();
  define(op, readRows(*p.c, p.offC, p.pitchC));
  return true;
}

/// Marks the kernel `.minnctapersm 1`: without a hint, ptxas gives a kernel
/// whose demand is far above what fits (128x128 tiles on 4 warps) 32
/// registers and spills the rest; with it, up to 255.
void Lowerer::allowAllRegisters() {
  setMinCtasPerSm(1);
}

/// Asks ptxas for registers such that `ctas` programs fit on an SM
/// (`.minnctapersm`); with several requests the smallest count wins.
void Lowerer::setMinCtasPerSm(unsigned ctas) {
  llvm::NamedMDNode *ann = mod_->getOrInsertNamedMetadata("nvvm.annotations");
  for (unsigned i = 0; i < ann->getNumOperands(); ++i) {
    llvm::MDNode *node = ann->getOperand(i);
    if (node->getNumOperands() != 3)
      continue;
    const auto *key = llvm::dyn_cast<llvm::MDString>(node->getOperand(1));
    if (!key || key->getString() != "minctasm")
      continue;
    auto *old = llvm::mdconst::extract<llvm::ConstantInt>(node->getOperand(2));
    if (old->getZExtValue() > ctas)
      node->replaceOperandWith(2, llvm::ConstantAsMetadata::get(b_.getInt32(ctas)));
    return;
  }
  llvm::Metadata *ops[] = {llvm::ValueAsMetadata::get(kernel_),
                           llvm::MDString::get(ctx_, "minctasm"),
                           llvm::ConstantAsMetadata::get(b_.getInt32(ctas))};
  ann->addOperand(llvm::MDNode::get(ctx_, ops));
}

/// Registers per thread a loop with `@` on #mma keeps live, estimated: the
/// loop's carried values in #mma (attention's acc, m_i, l_i), the largest `@`
/// result of a trip with half as much again for its fp16 copy (S and P), the a
/// fragments loaded before the loop into registers (Q, unless wgmma reads it
/// from shared memory), mma.sync's b fragments of one k step, the b operands
/// loaded into registers each trip when the loop is not on the values
/// pipeline (L null: no cp.async stages; the largest of them), and
/// kValueLoopOverhead for addresses, indices and temporaries, and the tiles
/// an enclosing loop keeps live across this one (liveAcrossLoop). Calibrated
/// with ptxas -v on the attention example: 128x64x64 on 8 warps estimates 109
/// (Q from shared memory) and fits 128 registers without spills.
int64_t Lowerer::valueLoopDemand(const ir::Op &loop, const MmaLoop *L) {
  constexpr int64_t kValueLoopOverhead = 25;
  auto regs = [&](const ir::Type &t) {
    return t.numElements() * static_cast<int64_t>(byteSize(t.dtype)) / 4 / T_;
  };
  const ir::Block &body = L ? *L->body : loopBody(loop);
  int64_t carried = 0, trip = 0, hoisted = 0, bFrags = 0, bLoads = 0;
  for (unsigned i = 0; i < loop.numResults(); ++i)
    if (mmaRes_.count(loop.result(i)))
      carried += mmaSlots(loop.result(i)->type());
  for (const auto &o : body.ops()) {
    if (o->kind() != ir::OpKind::Dot || !mmaRes_.count(o->result()))
      continue;
    const ir::Type &c = o->result()->type();
    bool accCarried = false;
    if (auto it = users_.find(o->result()); it != users_.end())
      for (const ir::Op *u : it->second)
        accCarried |= u->kind() == ir::OpKind::Yield;
    if (!accCarried)
      trip = std::max(trip, mmaSlots(c) * 3 / 2);
    bool aShared = false; // wgmma reads it from shared memory (Q on the values pipeline)
    for (size_t w = 0; L && w < L->numStreams; ++w)
      aShared = aShared || (L->streams[w].aShared && L->streams[w].user == o.get());
    if (!definedInside(o->operand(0), loop) && !mmaRes_.count(o->operand(0)) && !aShared)
      hoisted += regs(o->operand(0)->type());
    if (!L || !L->wgmma)
      bFrags = std::max(bFrags, c.shape[1] / 8 * 2);
    if (!L && definedInside(o->operand(1), loop))
      bLoads = std::max(bLoads, regs(o->operand(1)->type()));
  }
  return carried + trip + hoisted + bFrags + bLoads + liveAcrossLoop(loop) + kValueLoopOverhead;
}

/// Registers per thread of the tiles that the bodies of the loops around
/// `loop` keep live across it: a value of such a body (its argument, or an
/// op's result before `loop`, or before the op that holds it) used after it in
/// that body (the yield included: an outer loop's running sum). Tiles the
/// lowering recomputes where they are used (rematable) and the a operands of
/// `@` (counted with the loop that reads them) are left out; each enclosing
/// loop adds kEnclosingLoopOverhead for its own counter, addresses and
/// scalars. The kernel's own body is not walked: values live across a loop
/// there are the attention kernels' Q and pointers, which the calibration
/// above includes. Calibrated with ptxas -v on attention over heads in an outer
/// loop that sums their outputs (lit gpu/attention-occupancy.tc): at 128x64x64
/// on 8 warps 2 programs spilled 244 bytes (182 registers without the
/// request), at 64x32x64 on 4 warps 4 programs spilled 72 (158).
int64_t Lowerer::liveAcrossLoop(const ir::Op &loop) {
  constexpr int64_t kEnclosingLoopOverhead = 16;
  auto regs = [&](const ir::Value *v) -> int64_t {
    const ir::Type &t = v->type();
    if (!t.isTile())
      return 0;
    if (mmaRes_.count(v))
      return mmaSlots(t);
    int64_t bytes = t.isPtr ? 8 : static_cast<int64_t>(byteSize(t.dtype));
    return (t.numElements() * bytes + 4 * T_ - 1) / (4 * T_);
  };
  int64_t total = 0;
  const ir::Op *inner = &loop;
  for (const ir::Block *b = loop.parentBlock(); b && b->parentOp(); b = inner->parentBlock()) {
    const ir::Op *outer = b->parentOp();
    bool loopBody = outer->kind() == ir::OpKind::For || outer->kind() == ir::OpKind::While;
    if (loopBody) {
      std::unordered_map<const ir::Op *, size_t> at; // b's own ops, in order
      for (size_t i = 0; i < b->ops().size(); ++i)
        at[b->ops()[i].get()] = i;
      size_t here = at.count(inner) ? at[inner] : 0;
      auto liveAcross = [&](const ir::Value *v) {
        auto u = users_.find(v);
        if (u == users_.end())
          return false;
        bool after = false;
        for (const ir::Op *user : u->second) {
          if (user->kind() == ir::OpKind::Dot && user->operand(0) == v)
            return false;
          const ir::Op *top = user; // the op of b that holds the use
          while (top && top->parentBlock() != b)
            top = top->parentBlock() ? top->parentBlock()->parentOp() : nullptr;
          after = after || (top && at.count(top) && at[top] > here);
        }
        return after;
      };
      auto count = [&](const ir::Value *v) {
        if (v->type().isTile() && !rematable(v) && liveAcross(v))
          total += regs(v);
      };
      for (size_t i = 0; i < b->numArgs(); ++i)
        count(b->arg(static_cast<unsigned>(i)));
      for (size_t i = 0; i < here; ++i)
        for (size_t r = 0; r < b->ops()[i]->numResults(); ++r)
          count(b->ops()[i]->result(static_cast<unsigned>(r)));
      total += kEnclosingLoopOverhead;
    }
    inner = outer;
  }
  return total;
}

/// The `@` of loops off the values pipeline whose estimated demand
/// (valueLoopDemand) exceeds the 255 registers a thread can have. Such a loop
/// spills kilobytes per thread on either layout, and one on #mma (bf16
/// attention, 64x128x128 on 4 warps, pointers not 16-byte aligned: 2.2 KiB of
/// spills) came out wrong from ptxas -O1 to -O3 (right at -O0; racecheck and
/// memcheck clean; found by the fuzzer on 2026-12-04) while the same kernel on
/// the blocked layout is right. planLayouts plans mma-values again without
/// them: they stay on the blocked layout. A workaround, not a cure; the values
/// pipeline's loops are not counted so (their blocked form spills more).
std::vector<const ir::Op *> Lowerer::mmaDotsOverRegisters() {
  constexpr int64_t kRegisterFile = 255;
  std::vector<const ir::Op *> over;
  ir::forEachOp(fn_.body(), [&](const ir::Op &op, unsigned) {
    if ((op.kind() != ir::OpKind::For && op.kind() != ir::OpKind::While) || valuePipes_.count(&op))
      return;
    const ir::Block &body = loopBody(op);
    std::vector<const ir::Op *> dots;
    for (const auto &o : body.ops())
      if (o->kind() == ir::OpKind::Dot && mmaOps_.count(o.get()))
        dots.push_back(o.get());
    if (!dots.empty() && valueLoopDemand(op, nullptr) > kRegisterFile)
      over.insert(over.end(), dots.begin(), dots.end());
  });
  return over;
}

/// The `.minnctapersm` of a kernel with a values-pipeline loop, once its
/// shared memory is known: as many programs per SM as the registers (the
/// largest demand of its loops), the shared memory and the SM's threads
/// allow; 1 with "occupancy" off, as before (every register to one program).
void Lowerer::finishOccupancy() {
  if (!valueLoopDemand_)
    return;
  unsigned ctas = 1;
  if (opts_.occupancy) {
    // Registers are allocated per warp in units of 256 (8 per thread).
    int64_t perThread = (valueLoopDemand_ + 7) / 8 * 8;
    int64_t byRegs = 65536 / (T_ * perThread);
    // Shared memory per SM (CUDA programming guide, "Compute capabilities"),
    // 1 KiB of it reserved per program.
    int64_t smem = opts_.sm == 90 ? 228 * 1024 : (opts_.sm == 80 || opts_.sm == 87) ? 164 * 1024 : 100 * 1024;
    int64_t bySmem = smem / (static_cast<int64_t>(sharedBytes_) + 1024);
    // Resident threads and programs per SM: 2048 and 32 on sm_80 and sm_90,
    // at most 1536 and 16 taken elsewhere (sm_86: 1536 and 16, sm_89: 1536 and 24).
    bool big = opts_.sm == 80 || opts_.sm == 90;
    int64_t byThreads = (big ? 2048 : 1536) / T_, byPrograms = big ? 32 : 16;
    ctas = static_cast<unsigned>(
        std::max<int64_t>(1, std::min({byRegs, bySmem, byThreads, byPrograms})));
  }
  setMinCtasPerSm(ctas);
}

/// Warp w takes warp tiles w, w + num_warps, ... (a warp-uniform loop).
void Lowerer::mmaTileLoop(const MmaPlan &p) {
  llvm::Value *lane = b_.CreateAnd(tid_, b_.getInt32(31));
  llvm::Value *warp = b_.CreateLShr(tid_, b_.getInt32(5));
  stridedLoop("mma.tile", warp, opts_.numWarps, p.tiles,
              [&](llvm::Value *tile) { mmaWarpTile(p, tile, lane); });
}

/// Element index, in an array staged with a row pitch, of flat index e of a
/// row-major tile with rows of rowLen (transposed: its columns staged as rows).
llvm::Value *Lowerer::paddedIndex(llvm::Value *e, int64_t rowLen, int64_t pitch, bool transposed) {
  if (rowLen == pitch && !transposed)
    return e;
  llvm::Value *len = b_.getInt32(static_cast<uint32_t>(rowLen));
  llvm::Value *r = b_.CreateUDiv(e, len), *c = b_.CreateURem(e, len);
  if (transposed)
    std::swap(r, c);
  return b_.CreateAdd(b_.CreateMul(r, b_.getInt32(static_cast<uint32_t>(pitch))), c);
}

/// Owners write every slot of the 2-D tile v (type t) at byte offset off,
/// rows `pitch` elements apart (transposed: its columns as rows).
void Lowerer::stageRows(const Slots &v, const ir::Type &t, size_t off, int64_t pitch,
                        bool transposed) {
  int64_t n = t.numElements(), rowLen = t.shape.back();
  emitGuarded(ownerOf(n), [&]() -> llvm::Value * {
    llvm::Value *run = nullptr;
    for (int64_t k = 0; k < slotsOf(n); ++k) {
      llvm::Value *idx = rowSlotIndex(n, k, rowLen, pitch, transposed, run);
      b_.CreateStore(se_.toMemory(slot(v, static_cast<size_t>(k)), t.dtype),
                     stagedAddr(t, off, idx));
    }
    return nullptr;
  });
}

/// This thread's slots of a 2-D tile of type t staged by stageRows.
Slots Lowerer::readRows(const ir::Type &t, size_t off, int64_t pitch) {
  int64_t n = t.numElements(), rowLen = t.shape.back();
  Slots s;
  llvm::Value *run = nullptr;
  for (int64_t k = 0; k < slotsOf(n); ++k)
    s.push_back(readStaged(t, off, rowSlotIndex(n, k, rowLen, pitch, false, run)));
  return s;
}

/// paddedIndex of slot k's element. The slots of a run of the blocked layout
/// are consecutive elements, and a run never crosses a row when rowLen is a
/// multiple of its length (runs start at multiples of it): slot k is then the
/// run's first index (kept in `run`) plus k's place in the run, which also
/// lets LLVM see the run as one vector access (and find it fast).
llvm::Value *Lowerer::rowSlotIndex(int64_t n, int64_t k, int64_t rowLen, int64_t pitch,
                                   bool transposed, llvm::Value *&run) {
  int64_t v = std::min<int64_t>(vec_, slotsOf(n));
  if (transposed || n < T_ || v < 2 || rowLen % v)
    return paddedIndex(elemIndex(n, k), rowLen, pitch, transposed);
  if (k % v == 0 || !run)
    run = paddedIndex(elemIndex(n, k - k % v), rowLen, pitch, false);
  return k % v ? b_.CreateAdd(run, b_.getInt32(static_cast<uint32_t>(k % v))) : run;
}

/// One warp tile: its accumulators in, the k steps, its accumulators out.
void Lowerer::mmaWarpTile(const MmaPlan &p, llvm::Value *tile, llvm::Value *lane) {
  MmaTile t = mmaTileAt(p, tile, lane);
  mmaStoreAcc(p, t, mmaKLoop(p, t, mmaLoadAcc(p, t)));
}

/// This lane's staged element indices for warp tile `tile`. Fragment layouts
/// are those of the PTX ISA for m16n8k16 and m16n8k32 (lane = 4 * group +
/// thread-in-group).
Lowerer::MmaTile Lowerer::mmaTileAt(const MmaPlan &p, llvm::Value *tile, llvm::Value *lane) {
  auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
  llvm::Value *m0 = b_.CreateMul(b_.CreateUDiv(tile, i32(p.tilesN)), i32(p.tileM));
  llvm::Value *n0 = b_.CreateMul(b_.CreateURem(tile, i32(p.tilesN)), i32(p.tileN));
  // ldmatrix.x4 on a: lanes 0-15 give rows 0-15 of the first 16 bytes of k,
  // lanes 16-31 rows 0-15 of the next 16 bytes.
  llvm::Value *row16 = b_.CreateAnd(lane, i32(15));
  llvm::Value *half = b_.CreateMul(b_.CreateLShr(lane, i32(4)), i32(p.chunk()));
  // Accumulator fragment: c0 c1 at (group, 2 * thread-in-group + 0/1), c2 c3 8 rows below.
  llvm::Value *group = b_.CreateLShr(lane, i32(2));
  llvm::Value *pair = b_.CreateShl(b_.CreateAnd(lane, i32(3)), i32(1));
  MmaTile t;
  t.a = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(m0, row16), i32(p.pitchA)), half);
  if (p.bTransposed) {
    // b as n rows of k: lanes 0-7 and 8-15 give n rows 0-7 at k bytes 0-15
    // and 16-31, lanes 16-31 the same for n rows 8-15.
    llvm::Value *nRow =
        b_.CreateAdd(b_.CreateAnd(lane, i32(7)), b_.CreateShl(b_.CreateLShr(lane, i32(4)), i32(3)));
    llvm::Value *kHalf =
        b_.CreateMul(b_.CreateAnd(b_.CreateLShr(lane, i32(3)), i32(1)), i32(p.chunk()));
    t.b = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(n0, nRow), i32(p.pitchB)), kHalf);
  } else {
    // ldmatrix.x4.trans on b: lanes 0-15 give k rows 0-15 of the first 8
    // columns, lanes 16-31 of the next 8 (two n8 fragments).
    t.b = b_.CreateAdd(b_.CreateMul(row16, i32(p.pitchB)), b_.CreateAdd(n0, half));
  }
  t.c = b_.CreateAdd(b_.CreateMul(b_.CreateAdd(m0, group), i32(p.pitchC)), b_.CreateAdd(n0, pair));
  return t;
}

namespace {

/// Visits the accumulator fragments of a warp tile: f(first register,
/// element offset of its row pair from the lane's base), two registers each.
template <typename F> void forEachAccPair(int64_t fragsM, int64_t fragsN, int64_t pitch, F f) {
  for (int64_t i = 0; i < fragsM; ++i)
    for (int64_t j = 0; j < fragsN; ++j)
      for (int64_t h = 0; h < 2; ++h)
        f(static_cast<size_t>((i * fragsN + j) * 4 + h * 2), (16 * i + 8 * h) * pitch + 8 * j);
}

} // namespace

/// The warp tile's accumulator fragments (4 per m16n8 fragment, row-major
/// over fragments): +0 or read from the staged acc, two at a time.
Slots Lowerer::mmaLoadAcc(const MmaPlan &p, const MmaTile &t) {
  Slots acc(static_cast<size_t>(p.fragsM() * p.fragsN() * 4));
  llvm::Type *et = se_.memType(p.c->dtype);
  auto *v2 = llvm::FixedVectorType::get(et, 2);
  forEachAccPair(p.fragsM(), p.fragsN(), p.pitchC, [&](size_t r, int64_t d) {
    if (p.zeroAcc) {
      acc[r] = acc[r + 1] = llvm::Constant::getNullValue(et);
      return;
    }
    llvm::Value *ptr =
        stagedAddr(*p.c, p.offC, b_.CreateAdd(t.c, b_.getInt32(static_cast<uint32_t>(d))));
    llvm::Value *x = b_.CreateAlignedLoad(v2, ptr, llvm::Align(8));
    acc[r] = b_.CreateExtractElement(x, uint64_t(0));
    acc[r + 1] = b_.CreateExtractElement(x, uint64_t(1));
  });
  return acc;
}

/// Writes the accumulator fragments back where mmaLoadAcc read them; with
/// `staged`, fragments of that type (an mma loop's epilogue cast) at the same
/// element offsets of an array of its elements.
void Lowerer::mmaStoreAcc(const MmaPlan &p, const MmaTile &t, const Slots &acc,
                          const ir::Type *staged) {
  const ir::Type &st = staged ? *staged : *p.c;
  size_t es = byteSize(st.dtype);
  auto *v2 = llvm::FixedVectorType::get(se_.memType(st.dtype), 2);
  forEachAccPair(p.fragsM(), p.fragsN(), p.pitchC, [&](size_t r, int64_t d) {
    llvm::Value *x = llvm::PoisonValue::get(v2);
    x = b_.CreateInsertElement(x, se_.toMemory(acc[r], st.dtype), uint64_t(0));
    x = b_.CreateInsertElement(x, se_.toMemory(acc[r + 1], st.dtype), uint64_t(1));
    llvm::Value *ptr =
        stagedAddr(st, p.offC, b_.CreateAdd(t.c, b_.getInt32(static_cast<uint32_t>(d))));
    b_.CreateAlignedStore(x, ptr, llvm::Align(2 * es));
  });
}

/// The k steps of one warp tile: written out up to kMmaUnrollSteps, else a
/// run-time loop of kMmaUnrollSteps steps per trip carrying the accumulators.
Slots Lowerer::mmaKLoop(const MmaPlan &p, const MmaTile &t, Slots acc) {
  int64_t steps = p.k / p.kStep, unroll = std::min(steps, kMmaUnrollSteps);
  while (steps % unroll)
    --unroll;
  if (unroll == steps) {
    for (int64_t s = 0; s < steps; ++s)
      mmaKStep(p, t, b_.getInt32(static_cast<uint32_t>(p.kStep * s)), acc);
    return acc;
  }
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *loop = llvm::BasicBlock::Create(ctx_, "mma.k", kernel_);
  auto *done = llvm::BasicBlock::Create(ctx_, "mma.k.end", kernel_);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode *k0 = b_.CreatePHI(b_.getInt32Ty(), 2);
  k0->addIncoming(b_.getInt32(0), pre);
  std::vector<llvm::PHINode *> phis;
  for (llvm::Value *x : acc) {
    phis.push_back(b_.CreatePHI(x->getType(), 2));
    phis.back()->addIncoming(x, pre);
  }
  Slots cur(phis.begin(), phis.end());
  for (int64_t u = 0; u < unroll; ++u)
    mmaKStep(p, t, b_.CreateAdd(k0, b_.getInt32(static_cast<uint32_t>(p.kStep * u))), cur);
  llvm::Value *next = b_.CreateAdd(k0, b_.getInt32(static_cast<uint32_t>(p.kStep * unroll)));
  llvm::BasicBlock *end = b_.GetInsertBlock();
  k0->addIncoming(next, end);
  for (size_t r = 0; r < phis.size(); ++r)
    phis[r]->addIncoming(cur[r], end);
  b_.CreateCondBr(b_.CreateICmpULT(next, b_.getInt32(static_cast<uint32_t>(p.k))), loop, done);
  b_.SetInsertPoint(done);
  return cur;
}

/// ldmatrix.sync.aligned.m8n8.x4(.trans).shared.b16 at this lane's row
/// address (element idx of a staged array of type t): four 32-bit registers.
Slots Lowerer::ldmatrix(const ir::Type &t, size_t off, llvm::Value *idx, bool trans) {
  llvm::Value *ptr = stagedAddr(t, off, idx); // the intrinsic is overloaded on its type
  llvm::Value *x =
      b_.CreateIntrinsic(trans ? llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_trans_b16
                               : llvm::Intrinsic::nvvm_ldmatrix_sync_aligned_m8n8_x4_b16,
                         {ptr->getType()}, {ptr});
  Slots r;
  for (unsigned q = 0; q < 4; ++q)
    r.push_back(b_.CreateExtractValue(x, q));
  return r;
}

/// One k step at k0 of a warp tile: the a fragments (one ldmatrix.x4 per 16
/// rows), the b fragments (one ldmatrix.x4 per 16 columns: two n8
/// fragments), then one mma per m16n8 accumulator fragment.
void Lowerer::mmaKStep(const MmaPlan &p, const MmaTile &t, llvm::Value *k0, Slots &acc) {
  auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
  std::vector<Slots> af, bf;
  for (int64_t i = 0; i < p.fragsM(); ++i)
    af.push_back(
        ldmatrix(*p.a, p.offA, b_.CreateAdd(t.a, b_.CreateAdd(k0, i32(16 * i * p.pitchA))), false));
  for (int64_t j = 0; j < p.fragsN() / 2; ++j) {
    llvm::Value *idx =
        p.bTransposed
            ? b_.CreateAdd(t.b, b_.CreateAdd(k0, i32(16 * j * p.pitchB)))
            : b_.CreateAdd(t.b, b_.CreateAdd(b_.CreateMul(k0, i32(p.pitchB)), i32(16 * j)));
    Slots x = ldmatrix(*p.b, p.offB, idx, !p.bTransposed);
    // Registers 0, 1: the first n8 fragment (x4.trans: k 0-7, 8-15; transposed
    // b: k bytes 0-15, 16-31), 2, 3: the second.
    bf.push_back(x);
  }
  for (int64_t i = 0; i < p.fragsM(); ++i)
    for (int64_t j = 0; j < p.fragsN(); ++j) {
      size_t r = static_cast<size_t>((i * p.fragsN() + j) * 4);
      const Slots &bj = bf[static_cast<size_t>(j / 2)];
      size_t bq = static_cast<size_t>(j % 2) * 2;
      size_t swap = j % 2 == 1 && plantedBug("mma-fragment") ? 1 : 0; // k halves swapped
      Slots d = mmaSync(
          p, af[static_cast<size_t>(i)], bj[bq + swap], bj[bq + 1 - swap],
          Slots(acc.begin() + static_cast<long>(r), acc.begin() + static_cast<long>(r + 4)));
      for (size_t q = 0; q < 4; ++q)
        acc[r + q] = d[q];
    }
}

/// One mma.sync of the plan's shape: d = a * b + c (a: 4 registers, b: 2, c: 4 values).
Slots Lowerer::mmaSync(const MmaPlan &p, const Slots &a, llvm::Value *b0, llvm::Value *b1,
                       const Slots &c) {
  DType in = p.a->dtype, acc = p.c->dtype;
  llvm::Type *half2 = llvm::FixedVectorType::get(b_.getHalfTy(), 2);
  auto operand = [&](llvm::Value *r) { return in == DType::F16 ? b_.CreateBitCast(r, half2) : r; };
  auto id = in == DType::F16    ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_f32_f32
            : in == DType::BF16 ? llvm::Intrinsic::nvvm_mma_m16n8k16_row_col_bf16
                                : llvm::Intrinsic::nvvm_mma_m16n8k32_row_col_s8;
  std::vector<llvm::Value *> args;
  for (llvm::Value *x : a)
    args.push_back(operand(x));
  args.push_back(operand(b0));
  args.push_back(operand(b1));
  args.insert(args.end(), c.begin(), c.end());
  llvm::Value *d = b_.CreateIntrinsic(id, {}, args);
  Slots out;
  for (unsigned q = 0; q < 4; ++q) {
    llvm::Value *x = b_.CreateExtractValue(d, q);
    if (p.roundAcc) // the planted bug: the sum kept in the input type
      x = se_.cast(se_.cast(x, acc, in), in, acc);
    out.push_back(x);
  }
  return out;
}

} // namespace tc::codegen::lower
