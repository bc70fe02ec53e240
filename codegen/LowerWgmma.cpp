//===- LowerWgmma.cpp - Matmul loops on wgmma.mma_async (sm_90a) ----------===//
//
// A pipelined matmul loop (LowerMmaLoop.cpp) whose operands are fp16 or bf16
// with an fp32 accumulator runs its k steps on Hopper's asynchronous
// warpgroup mma instead of mma.sync (docs/gpu-perf.md, "wgmma"):
//
// * Operands. The cp.async copies write each stream's tile in the canonical
//   layouts of the PTX ISA's matrix descriptors: rows of W = 32, 64 or 128
//   bytes (a wider row is cut into column blocks of 128 bytes, stored one
//   after the other), and in every group of 8 rows the 16-byte chunk c of row
//   r at chunk c ^ (r mod 8) (for W = 128; W = 64 and 32 XOR fewer bits):
//   the hardware applies the same XOR to the address bits 4-6 with bits 7-9,
//   so stages are 1024-byte aligned. a (m x k, k contiguous) is "K-major",
//   b (k x n, n contiguous) "N-major" (imm-trans-b = 1).
// * Descriptors (PTX ISA, "Matrix Descriptor Format"): start address >> 4 in
//   bits 0-13, leading byte offset >> 4 in 16-29, stride byte offset >> 4 in
//   32-45, swizzle mode in 62-63 (1: 128 B, 2: 64 B, 3: 32 B). K-major a:
//   stride = 8 rows; a k step of 16 moves the start 32 bytes along the row
//   (into the next column block past W). N-major b: leading = one column
//   block (k rows of W bytes), stride = 8 rows; a k step moves 16 rows.
// * Accumulators. wgmma.m64nNk16 gives each warp of the warpgroup 16 rows of
//   the 64 with, per 8 columns, the registers of an m16n8 mma.sync fragment:
//   so the warp tiles of the loop are 16 x n (warp w of warpgroup g, its
//   j-th tile: rows 64 (g + j G) + 16 (w mod 4) for G warpgroups), and the
//   fragments go to and from shared memory as the mma.sync loop's do.
// * Order in a trip i (S stages): cp.async.wait_group S - 2, fence.proxy.async
//   (the copies are generic-proxy writes that the tensor cores read through
//   the async proxy), barrier, wgmma.fence, one wgmma per warp tile and k
//   step, wgmma.commit_group, wgmma.wait_group 1 (trip i - 1's products are
//   done, trip i's run on), barrier (so in every thread), then the copies of
//   trip i + S - 1 into the stage trip i - 1 read. The loop's result waits
//   for the last trip's products (wgmma.wait_group 0). With 2 stages the
//   copies come first (into the stage trip i - 1 read) and each trip waits
//   for its own products (wait_group 0): with one group left in flight the
//   copies could only start after the products (measured 359 against 548
//   TFLOP/s at 4096^3 on an H200; 3 stages: 669).
// * The values pipeline's `@` (LowerMmaValues.cpp, attention) use the same
//   layouts and descriptors: wgmmaValueDot, one wgmma per fragment row and k
//   step, a from registers (P) or, when loop-invariant (Q), staged once
//   before the loop in the K-major swizzled layout of a matmul's a and read
//   through a descriptor as well; wait_group 0 before the accumulators are
//   read (so before the next trip's barrier, after which the stage is
//   refilled). The trip's last `@` (P @ V into the carried acc) may leave its
//   group in flight: the next trip's first wait covers it (L.deferDot), and
//   the copies then refill the stage two trips back (planValuePipes).
//
//===----------------------------------------------------------------------===//
#include "codegen/LowerMma.h"

namespace tc::codegen::lower {

namespace {

/// Accumulator registers per thread at most.
constexpr int64_t kMaxWgmmaAcc = 128;
/// Shared memory of the stages at most (as for mma.sync loops).
constexpr size_t kMaxWgmmaPipeBytes = 160 * 1024;

} // namespace

/// Switches a pipelined loop to wgmma where the target, types and shapes
/// allow it (else it stays on mma.sync, and L is left as it was).
bool Lowerer::planWgmma(MmaLoop &L) {
  MmaPlan &p = L.p;
  int64_t warpgroups = opts_.numWarps / 4;
  bool halves = (p.a->dtype == DType::F16 || p.a->dtype == DType::BF16) && p.c->dtype == DType::F32;
  bool int8 = p.a->dtype == DType::I8 && p.c->dtype == DType::I32 && opts_.int8Wgmma;
  if (!opts_.wgmma || opts_.sm != 90 || !L.pipelined || opts_.numWarps % 4 || !(halves || int8) ||
      p.m % 64 || p.n % 8 || p.n > 256)
    return false;
  // Fewer 64-row blocks than warpgroups (halves only): the warpgroups of a
  // block split its n columns (L.splitN), each a column block of B's stage.
  int64_t blocksM = p.m / 64, splitN = 1;
  if (blocksM % warpgroups) {
    if (!opts_.splitN || !halves || warpgroups % blocksM)
      return false;
    splitN = warpgroups / blocksM;
  }
  int64_t part = p.n / splitN; // columns of one warpgroup's wgmma
  if (p.n % splitN || part % 8)
    return false;
  int64_t in = static_cast<int64_t>(byteSize(p.a->dtype));
  // int8: b is transposed into rows of k bytes, K-major like a. Split n:
  // b's rows cut into column blocks of one warpgroup's columns (or narrower),
  // so that a warpgroup's columns start a column block of the stage.
  int64_t wa = swizzleWidth(p.k * in), wb = swizzleWidth(int8 ? p.k : part * in);
  int64_t perWarp = splitN > 1 ? 1 : (p.m / 16) / opts_.numWarps;
  if (!wa || !wb || perWarp * part / 2 > kMaxWgmmaAcc)
    return false;
  size_t aBytes = static_cast<size_t>(p.m * p.k * in), bBytes = static_cast<size_t>(p.k * p.n * in);
  size_t bOff = alignTo(aBytes, kSwizzleAlign), btOff = 0;
  size_t stageBytes = alignTo(bOff + bBytes, kSwizzleAlign);
  if (int8) {
    btOff = stageBytes;
    stageBytes = alignTo(btOff + bBytes, kSwizzleAlign);
  }
  int64_t stages = L.stages;
  while (stages > 2 && static_cast<size_t>(stages) * stageBytes > kMaxWgmmaPipeBytes)
    --stages;
  if (static_cast<size_t>(stages) * stageBytes > kMaxWgmmaPipeBytes)
    return false;
  MmaLoop::Stream &a = L.streams[0], &b = L.streams[1];
  a.swizzle = wa;
  a.off = 0;
  b.off = bOff;
  if (int8) { // copied as it is, rows of n bytes
    b.swizzle = 0;
    b.xorRows = true;
    b.pitch = p.n;
    L.transposeB = true;
    L.btOff = btOff;
    L.btSwizzle = wb;
  } else {
    b.swizzle = wb;
  }
  L.stages = stages;
  L.stageBytes = stageBytes;
  L.wgmma = true;
  L.wgmmaPending = stages >= 3 ? 1 : 0;
  L.ahead = stages - 1;
  if (plantedBug("wgmma-stage")) // one trip further: into the stage being read
    ++L.ahead;
  L.splitN = splitN;
  p.tileM = 16;
  p.tileN = part;
  p.tilesN = splitN;
  p.tiles = (p.m / 16) * splitN;
  L.tilesPerWarp = perWarp;
  return true;
}

llvm::Value *swizzledOffset(llvm::IRBuilder<> &b, int64_t w, int64_t rows, llvm::Value *row,
                            llvm::Value *colBytes) {
  auto i32 = [&](int64_t x) { return b.getInt32(static_cast<uint32_t>(x)); };
  llvm::Value *block = b.CreateUDiv(colBytes, i32(w));
  llvm::Value *within = b.CreateURem(colBytes, i32(w));
  llvm::Value *lin =
      b.CreateAdd(b.CreateMul(block, i32(rows * w)), b.CreateAdd(b.CreateMul(row, i32(w)), within));
  // Swizzle<log2(w / 16), 4, 3>: address bits 4.. XOR bits 7..
  llvm::Value *bits = b.CreateAnd(b.CreateLShr(lin, i32(7)), i32(w / 16 - 1));
  if (plantedBug("wgmma-swizzle")) // the XOR taken from the wrong row bits
    bits = b.CreateAnd(b.CreateLShr(lin, i32(8)), i32(w / 16 - 1));
  return b.CreateXor(lin, b.CreateShl(bits, i32(4)));
}

llvm::Value *aStagedRow(llvm::IRBuilder<> &b, int64_t m, int64_t numWarps, llvm::Value *r) {
  auto i32 = [&](int64_t x) { return b.getInt32(static_cast<uint32_t>(x)); };
  int64_t tm = m / numWarps, fragsM = tm / 16;
  if (fragsM == 1) // warp w's rows are 16 w ..: already in place
    return r;
  llvm::Value *warp = b.CreateUDiv(r, i32(tm)), *in = b.CreateURem(r, i32(tm));
  llvm::Value *g = b.CreateLShr(warp, i32(2)), *v = b.CreateAnd(warp, i32(3));
  llvm::Value *i = b.CreateLShr(in, i32(4)), *t = b.CreateAnd(in, i32(15));
  llvm::Value *block = b.CreateAdd(b.CreateMul(g, i32(fragsM)), i);
  return b.CreateAdd(b.CreateMul(block, i32(64)), b.CreateAdd(b.CreateMul(v, i32(16)), t));
}

/// The byte offset in a stage of the 16-byte chunk at (row, byte col) of a
/// stream's tile in its swizzled layout (i32 values).
llvm::Value *Lowerer::swizzledChunk(const MmaLoop &L, size_t which, llvm::Value *row,
                                    llvm::Value *colBytes) {
  const MmaLoop::Stream &s = L.streams[which];
  // A transposed stream (K^T staged as K's rows) has the tile's columns as rows.
  int64_t rowsStaged = s.transposed ? s.cols : s.rows;
  return b_.CreateAdd(swizzledOffset(b_, s.swizzle, rowsStaged, row, colBytes),
                      b_.getInt32(static_cast<uint32_t>(s.off)));
}

/// The byte offset in a stage of the 16-byte chunk at (row, byte col) of a
/// stream copied as it is with its chunks XOR-permuted per row (xorRows).
llvm::Value *Lowerer::rawChunk(const MmaLoop &L, size_t which, llvm::Value *row,
                               llvm::Value *colBytes) {
  const MmaLoop::Stream &s = L.streams[which];
  auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
  int64_t rowBytes = s.pitch * static_cast<int64_t>(byteSize(s.tile->dtype));
  int64_t chunks = rowBytes / 16, x = 1;
  while (x < 8 && chunks % (2 * x) == 0)
    x *= 2;
  llvm::Value *chunk = b_.CreateLShr(colBytes, i32(4));
  chunk = b_.CreateXor(chunk, b_.CreateAnd(b_.CreateLShr(row, i32(2)), i32(x - 1)));
  return b_.CreateAdd(
      b_.CreateAdd(b_.CreateMul(row, i32(rowBytes)), b_.CreateShl(chunk, i32(4))),
      b_.CreateAdd(b_.CreateAnd(colBytes, i32(15)), i32(static_cast<int64_t>(s.off))));
}

/// An int8 loop's b on wgmma (L.transposeB): the stage's b, k rows of n bytes
/// as cp.async copied them, rewritten as n rows of k bytes (K-major) at
/// L.btOff in wgmma's swizzled layout, which is how wgmma reads 8-bit b. The
/// threads take 4 x 4-byte blocks: 4 words from 4 rows (ld.shared.b32), 4
/// words of 4 bytes of one column each out (byte permutes, st.shared.b32).
/// The 8 lowest bits of a block's index pick its k words (the reads: 8 rows
/// 4 apart, whose chunks rawChunk puts in 8 bank groups), the rest its n
/// words. Then fence.proxy.async (generic-proxy writes the tensor cores read)
/// and a barrier. After the trip's barrier that ends the copies' wait.
void Lowerer::transposeStageB(const MmaLoop &L, llvm::Value *stageOff) {
  const MmaPlan &p = L.p;
  auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
  int64_t kWords = p.k / 4, nWords = p.n / 4, total = kWords * nWords; // kWords: 8 | kWords
  llvm::Value *base = b_.CreateAdd(pipeBase(), stageOff);
  llvm::Type *word = b_.getInt32Ty();
  auto at = [&](llvm::Value *off) {
    return b_.CreateInBoundsGEP(b_.getInt8Ty(), smem(), b_.CreateAdd(base, off));
  };
  AsyncEvent read{AsyncEvent::Kind::Read}; // the stage's b as copied (checkAsyncSchedule)
  read.region = 0;
  noteAsync(read);
  for (int64_t j = 0; j * T_ < total; ++j) {
    int64_t left = total - j * T_;
    llvm::Value *valid = left < T_ ? b_.CreateICmpULT(tid_, i32(left)) : nullptr;
    emitGuarded(valid, [&]() -> llvm::Value * {
      llvm::Value *q = b_.CreateAdd(tid_, i32(j * T_));
      llvm::Value *hi = b_.CreateLShr(q, i32(3));
      llvm::Value *kw = b_.CreateOr(b_.CreateShl(b_.CreateUDiv(hi, i32(nWords)), i32(3)),
                                    b_.CreateAnd(q, i32(7)));
      llvm::Value *nw = b_.CreateURem(hi, i32(nWords));
      llvm::Value *kb = b_.CreateShl(kw, i32(2)), *nb = b_.CreateShl(nw, i32(2));
      std::array<llvm::Value *, 4> in{};
      // Rows kb .. kb + 3 share their chunk permutation (row >> 2): the same
      // column, a row apart.
      llvm::Value *first = at(rawChunk(L, 1, kb, nb));
      for (int64_t r = 0; r < 4; ++r) {
        llvm::Value *ptr = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), first,
                                                         static_cast<uint64_t>(r * p.n));
        in[static_cast<size_t>(r)] = b_.CreateAlignedLoad(word, ptr, llvm::Align(4));
      }
      // Out word c = byte c of in[0], in[1], in[2], in[3]: 8 byte permutes
      // (prmt: selector nibble i picks byte i of the result from a's bytes
      // 0-3 and b's 4-7). Pairs first: [in0.b0, in1.b0, in0.b1, in1.b1] (0x5140)
      // and [in0.b2, in1.b2, in0.b3, in1.b3] (0x7362), then the low halves
      // (0x5410) and the high halves (0x7632) of two pairs.
      auto prmt = [&](llvm::Value *a, llvm::Value *b, uint32_t sel) {
        return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_prmt, {}, {a, b, b_.getInt32(sel)});
      };
      llvm::Value *lo01 = prmt(in[0], in[1], 0x5140), *hi01 = prmt(in[0], in[1], 0x7362);
      llvm::Value *lo23 = prmt(in[2], in[3], 0x5140), *hi23 = prmt(in[2], in[3], 0x7362);
      if (plantedBug("int8-transpose")) // rows k + 2 and k + 3 in place of k and k + 1
        std::swap(lo01, lo23);
      std::array<llvm::Value *, 4> out = {prmt(lo01, lo23, 0x5410), prmt(lo01, lo23, 0x7632),
                                          prmt(hi01, hi23, 0x5410), prmt(hi01, hi23, 0x7632)};
      for (int64_t c = 0; c < 4; ++c) {
        llvm::Value *off =
            b_.CreateAdd(swizzledOffset(b_, L.btSwizzle, p.n, b_.CreateAdd(nb, i32(c)), kb),
                         i32(static_cast<int64_t>(L.btOff)));
        b_.CreateAlignedStore(out[static_cast<size_t>(c)], at(off), llvm::Align(4));
      }
      return nullptr;
    });
  }
  noteAsync({AsyncEvent::Kind::StageWrite}); // b^T at L.btOff, in the trip's own stage
  if (!plantedBug("int8-transpose-fence"))
    asmStatement("fence.proxy.async.shared::cta;");
  barrier();
}

/// An inline PTX statement without operands that orders memory.
void Lowerer::asmStatement(const std::string &text) {
  if (text.rfind("wgmma.commit_group", 0) == 0)
    noteAsync({AsyncEvent::Kind::ReadCommit});
  else if (text.rfind("fence.proxy.async", 0) == 0)
    noteAsync({AsyncEvent::Kind::Fence});
  auto *fty = llvm::FunctionType::get(b_.getVoidTy(), false);
  b_.CreateCall(llvm::InlineAsm::get(fty, text, "~{memory}", true), {});
}

/// wgmma.wait_group `pending`: the accumulators pass through the statement,
/// so nothing reads them before the products that write them are done.
Slots Lowerer::wgmmaWait(int64_t pending, const Slots &acc) {
  AsyncEvent wait{AsyncEvent::Kind::ReadWait};
  wait.pending = pending;
  noteAsync(wait);
  std::vector<llvm::Type *> types;
  std::string constraints;
  for (llvm::Value *a : acc) { // f32, or s32 (int8)
    types.push_back(a->getType());
    constraints += a->getType()->isFloatTy() ? "=f," : "=r,";
  }
  auto *sty = llvm::StructType::get(ctx_, types);
  for (size_t i = 0; i < acc.size(); ++i)
    constraints += std::to_string(i) + ",";
  constraints += "~{memory}";
  auto *fty = llvm::FunctionType::get(sty, types, false);
  llvm::Value *r = b_.CreateCall(
      llvm::InlineAsm::get(fty, "wgmma.wait_group.sync.aligned " + std::to_string(pending) + ";",
                           constraints, true),
      acc);
  Slots out;
  for (unsigned i = 0; i < acc.size(); ++i)
    out.push_back(b_.CreateExtractValue(r, i));
  return out;
}

/// The thread's warpgroup, tid / 128, broadcast from lane 0 of its warp
/// (shfl.sync.idx): the same value, which ptxas then knows to be uniform in
/// the warp, so the descriptors computed from it live in uniform registers
/// (without it, 128x64x64 attention moved Q's descriptors with 8 R2UR a trip).
/// Computed once, where tid is read (the kernel's entry, every thread); 0
/// with one warpgroup.
llvm::Value *Lowerer::warpgroupIndex() {
  if (opts_.numWarps <= 4)
    return b_.getInt32(0);
  if (!warpgroup_) {
    llvm::IRBuilder<> e(ctx_);
    auto *tid = llvm::cast<llvm::Instruction>(tid_);
    e.SetInsertPoint(tid->getParent(), std::next(tid->getIterator()));
    llvm::Value *g = e.CreateLShr(tid_, e.getInt32(7));
    warpgroup_ = e.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_idx_i32, {},
                                   {e.getInt32(0xffffffffu), g, e.getInt32(0), e.getInt32(31)});
  }
  return warpgroup_;
}

/// A descriptor's address field (bits 0-13: the shared-memory address >> 4)
/// of the stage at byte offset stageOff from pipeBase().
llvm::Value *Lowerer::stageAddressField(llvm::Value *stageOff) {
  auto i64 = [&](int64_t x) { return b_.getInt64(static_cast<uint64_t>(x)); };
  llvm::Value *addr =
      b_.CreateAdd(b_.CreatePtrToInt(smem(), b_.getInt64Ty()),
                   b_.CreateZExt(b_.CreateAdd(pipeBase(), stageOff), b_.getInt64Ty()));
  return b_.CreateLShr(b_.CreateAnd(addr, i64(0x3FFFF)), i64(4));
}

namespace {

/// `offset` (16-byte units) as a value and a constant: c alone, x + c, or
/// itself and 0 (null stays null).
std::pair<llvm::Value *, uint64_t> splitConstantStep(llvm::Value *offset) {
  if (auto *c = llvm::dyn_cast_or_null<llvm::ConstantInt>(offset))
    return {nullptr, c->getZExtValue()};
  if (auto *add = llvm::dyn_cast_or_null<llvm::BinaryOperator>(offset);
      add && add->getOpcode() == llvm::Instruction::Add)
    if (auto *c = llvm::dyn_cast<llvm::ConstantInt>(add->getOperand(1)))
      return {add->getOperand(0), c->getZExtValue()};
  return {offset, 0};
}

} // namespace

/// A wgmma operand's descriptor: the constant fields `bits` (descriptorBits)
/// with `field` (stageAddressField) plus `offset` (16-byte units) in the
/// address field, built as `mov.b64 d, {lo, hi}` from its two 32-bit words
/// (inline PTX). The address part never carries out of the low word (shared
/// memory is below 256 KiB), so the high word is the constant's. ptxas (CUDA
/// 13.0, -O1 and up) dropped the constant high word (stride and swizzle) of a
/// 64-bit `mul.wide.u32 (warpgroup, rows) + field + bits` that a wgmma takes:
/// the A descriptors of two warpgroups' wgmma (num_warps 8) read an unset
/// uniform register (docs/upstream/ptxas-wgmma-desc-hi.md; fuzz seed
/// 2026120530, 128x128x128 matmul loops and 128-row attention on 8 warps).
llvm::Value *Lowerer::wgmmaDescriptor(llvm::Value *field, uint64_t bits, llvm::Value *offset) {
  if (!ptxasWorkaroundsOn()) // the test hook: the 64-bit sum
    return b_.CreateAdd(b_.CreateOr(field, b_.getInt64(bits)), offset ? offset : b_.getInt64(0));
  // Option desc-steps: the offset's constant part (a k step, a fragment row)
  // is added to the packed descriptor as a 64-bit constant (Triton's form, an
  // add.s64 that ptxas makes one UIADD3.64), so an operand's k steps share one
  // pack; packed each, a wgmma's descriptor cost two UMOVs a trip.
  uint64_t step = 0;
  if (opts_.descSteps) {
    std::tie(offset, step) = splitConstantStep(offset);
    if (plantedBug("desc-step")) // the step kept in 6 bits: 1 KiB and more wrap
      step &= 63;
  }
  llvm::Type *i32 = b_.getInt32Ty();
  llvm::Value *lo = b_.CreateAdd(b_.CreateTrunc(field, i32),
                                 b_.getInt32(static_cast<uint32_t>(bits & 0xffffffffu)));
  if (offset)
    lo = b_.CreateAdd(lo, b_.CreateTrunc(offset, i32));
  auto *fty = llvm::FunctionType::get(b_.getInt64Ty(), {i32, i32}, false);
  auto *pack = llvm::InlineAsm::get(fty, "mov.b64 $0, {$1, $2};", "=l,r,r", false);
  llvm::CallInst *packed =
      b_.CreateCall(fty, pack, {lo, b_.getInt32(static_cast<uint32_t>(bits >> 32))});
  if (!opts_.descSteps)
    return packed;
  packed->setDoesNotAccessMemory(); // equal packs are one (EarlyCSE, GVN)
  packed->setDoesNotThrow();
  return step ? b_.CreateAdd(packed, b_.getInt64(step)) : packed;
}

/// wgmma.fence.sync.aligned with `regs` passing through it (tied operands):
/// their definitions come before the fence, their uses after.
Slots Lowerer::wgmmaFence(const Slots &regs) {
  std::vector<llvm::Type *> types;
  std::string constraints;
  for (llvm::Value *r : regs) {
    types.push_back(r->getType());
    constraints += r->getType()->isFloatTy() ? "=f," : "=r,";
  }
  for (size_t i = 0; i < regs.size(); ++i)
    constraints += std::to_string(i) + ",";
  constraints += "~{memory}";
  auto *fty = llvm::FunctionType::get(llvm::StructType::get(ctx_, types), types, false);
  llvm::Value *r = b_.CreateCall(
      llvm::InlineAsm::get(fty, "wgmma.fence.sync.aligned;", constraints, true), regs);
  Slots out;
  for (unsigned i = 0; i < regs.size(); ++i)
    out.push_back(b_.CreateExtractValue(r, i));
  return out;
}

/// One trip's products on the stage at byte offset stageOff: per warp tile
/// One wgmma.mma_async call (its accumulator operands first in args): its
/// results replace out[at .. at + per).
void Lowerer::wgmmaInto(llvm::InlineAsm *mma, const std::vector<llvm::Value *> &args, Slots &out,
                        int64_t at, int64_t per) {
  llvm::Value *d = b_.CreateCall(mma, args);
  for (int64_t r = 0; r < per; ++r)
    out[static_cast<size_t>(at + r)] = b_.CreateExtractValue(d, static_cast<unsigned>(r));
}

/// (64 rows for the warpgroup) and k step of 16 (int8: 32), one
/// wgmma.m64nNk16 (m64nNk32.s32.s8.s8). int8's b is transposed first
/// (transposeStageB).
Slots Lowerer::wgmmaLoopStep(const MmaLoop &L, llvm::Value *stageOff, const Slots &acc) {
  const MmaPlan &p = L.p;
  const MmaLoop::Stream &sa = L.streams[0], &sb = L.streams[1];
  auto i64 = [&](int64_t x) { return b_.getInt64(static_cast<uint64_t>(x)); };
  int64_t in = static_cast<int64_t>(byteSize(p.a->dtype));
  int64_t n = p.tileN, per = n / 2, warpgroups = opts_.numWarps / 4;
  bool int8 = L.transposeB;
  if (int8)
    transposeStageB(L, stageOff);
  // The stage's shared-memory address, then each operand's descriptor at
  // its start (fields other than the address are constants).
  llvm::Value *field = stageAddressField(stageOff);
  uint64_t bitsA = descriptorBits(16, 8 * sa.swizzle, sa.swizzle);
  // b: N-major (imm-trans-b 1: the leading offset one column block of k
  // rows, a k step 16 rows), or int8's transposed b, K-major like a (n rows;
  // a k step of 32 moves 32 bytes along the row).
  uint64_t bitsB = int8 ? descriptorBits(16, 8 * L.btSwizzle, L.btSwizzle)
                        : descriptorBits(p.k * sb.swizzle, 8 * sb.swizzle, sb.swizzle);
  // wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T {d}, a-desc, b-desc, scale-d, 1, 1, 0, 1
  // (int8: m64nNk32.s32.s8.s8 {d}, a-desc, b-desc, scale-d; both K-major).
  // Operands: the outputs, the tied inputs, then the descriptors and scale-d.
  std::string shape = "m64n" + std::to_string(n) + (int8 ? "k32.s32.s8.s8" : "k16.f32.");
  if (!int8) {
    const char *ty = p.a->dtype == DType::F16 ? "f16" : "bf16";
    shape += std::string(ty) + "." + ty;
  }
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(2 * per + 2) +
                     ", 0;\nwgmma.mma_async.sync.aligned." + shape + " {";
  for (int64_t i = 0; i < per; ++i)
    text += (i ? ", $" : "$") + std::to_string(i);
  text += "}, $" + std::to_string(2 * per) + ", $" + std::to_string(2 * per + 1) +
          (int8 ? ", p;\n}" : ", p, 1, 1, 0, 1;\n}");
  llvm::Type *accType = int8 ? b_.getInt32Ty() : b_.getFloatTy();
  std::string constraints;
  for (int64_t i = 0; i < per; ++i)
    constraints += int8 ? "=r," : "=f,";
  for (int64_t i = 0; i < per; ++i)
    constraints += std::to_string(i) + ",";
  constraints += "l,l,r";
  std::vector<llvm::Type *> accTypes(static_cast<size_t>(per), accType);
  std::vector<llvm::Type *> argTypes = accTypes;
  argTypes.push_back(b_.getInt64Ty());
  argTypes.push_back(b_.getInt64Ty());
  argTypes.push_back(b_.getInt32Ty());
  auto *fty = llvm::FunctionType::get(llvm::StructType::get(ctx_, accTypes), argTypes, false);
  llvm::InlineAsm *mma = llvm::InlineAsm::get(fty, text, constraints, true);

  asmStatement("wgmma.fence.sync.aligned;");
  llvm::Value *warpgroup = warpgroupIndex();
  // Split n (L.splitN): warpgroup g's rows are block g / splitN, its columns
  // column block g mod splitN of n / splitN columns, which start that many
  // column blocks of b's stage (k rows of swizzle bytes each) further.
  llvm::Value *colsB = nullptr;
  if (L.splitN > 1) {
    llvm::Value *splitN = b_.getInt32(static_cast<uint32_t>(L.splitN));
    colsB = b_.CreateMul(b_.CreateZExt(b_.CreateURem(warpgroup, splitN), b_.getInt64Ty()),
                         i64((n * in * p.k) >> 4));
    warpgroup = b_.CreateUDiv(warpgroup, splitN);
    warpgroups = 1; // tilesPerWarp is 1
  }
  AsyncEvent read{AsyncEvent::Kind::Read}; // the trip's stage (checkAsyncSchedule)
  read.async = true;
  noteAsync(read);
  Slots out = acc;
  for (int64_t j = 0; j < L.tilesPerWarp; ++j) {
    // The warpgroup's 64 rows: block g + j G of the tile.
    llvm::Value *block =
        b_.CreateZExt(b_.CreateAdd(warpgroup, b_.getInt32(static_cast<uint32_t>(j * warpgroups))),
                      b_.getInt64Ty());
    llvm::Value *rowsA = b_.CreateMul(block, i64((64 * sa.swizzle) >> 4));
    for (int64_t k0 = 0; k0 < p.k; k0 += p.kStep) {
      int64_t kb = k0 * in; // byte column of a (and of int8's transposed b)
      int64_t offA = static_cast<int64_t>(sa.off) + kMajorOffset(kb, p.m, sa.swizzle);
      int64_t offB = int8 ? static_cast<int64_t>(L.btOff) + kMajorOffset(kb, n, L.btSwizzle)
                          : static_cast<int64_t>(sb.off) + k0 * sb.swizzle;
      std::vector<llvm::Value *> args(out.begin() + j * per, out.begin() + (j + 1) * per);
      args.push_back(wgmmaDescriptor(field, bitsA, b_.CreateAdd(rowsA, i64(offA >> 4))));
      llvm::Value *descOffB = i64(offB >> 4);
      if (colsB)
        descOffB = b_.CreateAdd(colsB, descOffB);
      args.push_back(wgmmaDescriptor(field, bitsB, descOffB));
      args.push_back(b_.getInt32(1));
      wgmmaInto(mma, args, out, j * per, per);
    }
  }
  asmStatement("wgmma.commit_group.sync.aligned;");
  return wgmmaWait(L.wgmmaPending, out);
}

/// acc + a @ b of the values pipeline (LowerMmaValues.cpp) on wgmma: b read
/// from the stream's swizzled stage through a descriptor; a from registers
/// (aFr[i][step]: the 4 registers of an m16n8k16 a fragment, which are
/// wgmma's register A of the warp's 16 rows: P packed from the accumulators),
/// or, for a loop-invariant a staged before the loop (the stream's aShared:
/// Q; aFr empty), from shared memory through a descriptor too. Per fragment
/// row i of the warp and k step, one wgmma.m64nNk16 (the warpgroup's 4 warps
/// give its 64 rows, each its own), its d registers the row's m16n8 fragments
/// in order. wgmma.fence first, commit_group, then wait_group 0 before the
/// accumulators are read: so every wgmma of the trip has finished reading its
/// stage when the thread reaches the next trip's barrier, after which that
/// stage is refilled. With L.deferDot (P @ V, the trip's last `@`, into the
/// carried acc) that `@` does not wait: its accumulators go to the back edge
/// in flight, and the next trip's first `@` waits for both groups with the
/// carried acc passing through its wait; the stage it read is refilled only
/// after the next trip's barrier (planValuePipes: two trips back).
Slots Lowerer::wgmmaValueDot(const MmaPlan &p, const MmaLoop &L, size_t which,
                             llvm::Value *stageOff, const std::vector<std::vector<Slots>> &aFr,
                             const Slots &acc) {
  const MmaLoop::Stream &s = L.streams[which];
  auto i64 = [&](int64_t x) { return b_.getInt64(static_cast<uint64_t>(x)); };
  int64_t in = static_cast<int64_t>(byteSize(p.a->dtype));
  int64_t n = p.n, per = n / 2, w = s.swizzle;
  int64_t rowsStaged = s.transposed ? s.cols : s.rows;
  const char *ty = p.a->dtype == DType::F16 ? "f16" : "bf16";
  bool aDesc = s.aShared;
  llvm::Value *field = stageAddressField(stageOff);
  // K^T staged as K's rows (n rows of k) is "K-major" b (imm-trans-b 0: the
  // leading offset unused, 8 rows apart; a k step moves 32 bytes along the
  // row, into the next column block past w); V (k rows of n) is N-major
  // (imm-trans-b 1: the leading offset one column block, a k step 16 rows).
  bool kMajor = s.transposed;
  uint64_t bitsB = descriptorBits(kMajor ? 16 : rowsStaged * w, 8 * w, w);
  // wgmma.mma_async.sync.aligned.m64nNk16.f32.T.T {d}, {a} | a-desc, b-desc, scale-d, 1, 1,
  // [imm-trans-a,] imm-trans-b. Operands: the outputs, the tied inputs, then
  // a (4 registers or a descriptor), b's descriptor and scale-d.
  int64_t aOps = aDesc ? 1 : 4;
  std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, $" + std::to_string(2 * per + aOps + 1) +
                     ", 0;\nwgmma.mma_async.sync.aligned.m64n" + std::to_string(n) + "k16.f32." +
                     ty + "." + ty + " {";
  for (int64_t i = 0; i < per; ++i)
    text += (i ? ", $" : "$") + std::to_string(i);
  if (aDesc) { // a K-major from shared memory: imm-trans-a 0
    text += "}, $" + std::to_string(2 * per);
  } else {
    text += "}, {";
    for (int64_t q = 0; q < 4; ++q)
      text += (q ? ", $" : "$") + std::to_string(2 * per + q);
    text += "}";
  }
  text += ", $" + std::to_string(2 * per + aOps) + ", p, 1, 1, " + (aDesc ? "0, " : "") +
          (kMajor ? "0" : "1") + ";\n}";
  std::string constraints;
  for (int64_t i = 0; i < per; ++i)
    constraints += "=f,";
  for (int64_t i = 0; i < per; ++i)
    constraints += std::to_string(i) + ",";
  constraints += aDesc ? "l,l,r" : "r,r,r,r,l,r";
  std::vector<llvm::Type *> accTypes(static_cast<size_t>(per), b_.getFloatTy());
  std::vector<llvm::Type *> argTypes = accTypes;
  if (aDesc)
    argTypes.push_back(b_.getInt64Ty());
  else
    for (int q = 0; q < 4; ++q)
      argTypes.push_back(b_.getInt32Ty());
  argTypes.push_back(b_.getInt64Ty());
  argTypes.push_back(b_.getInt32Ty());
  auto *fty = llvm::FunctionType::get(llvm::StructType::get(ctx_, accTypes), argTypes, false);
  llvm::InlineAsm *mma = llvm::InlineAsm::get(fty, text, constraints, true);

  // a's descriptor (staged a): K-major like the matmul loops' a (stride 8
  // rows, the leading offset unused), the 64-row block of warpgroup g and
  // fragment row i at rows 64 (g * fragsM + i) (aStagedRow), a k step 32
  // bytes along the row (into the next column block of m rows past the
  // swizzle width).
  int64_t fragsM = static_cast<int64_t>(aFr.size());
  llvm::Value *fieldA = nullptr, *blockA = nullptr;
  int64_t wa = s.aSwizzle;
  uint64_t bitsA = descriptorBits(16, 8 * wa, wa);
  if (aDesc) {
    fragsM = p.fragsM();
    fieldA = stageAddressField(b_.getInt32(static_cast<uint32_t>(s.aOff)));
    llvm::Value *warpgroup = warpgroupIndex();
    blockA = b_.CreateMul(
        b_.CreateZExt(b_.CreateMul(warpgroup, b_.getInt32(static_cast<uint32_t>(fragsM))),
                      b_.getInt64Ty()),
        i64((64 * wa) >> 4));
  }

  // wgmma.fence orders the registers' writes before the wgmmas read them
  // (PTX ISA: accumulators and register A): they pass through it, so
  // everything that computes them (P's f16 packing, a zero accumulator)
  // is done before the fence.
  Slots regs = acc;
  for (const std::vector<Slots> &row : aFr)
    for (const Slots &a : row)
      regs.insert(regs.end(), a.begin(), a.end());
  regs = wgmmaFence(regs);
  Slots out(regs.begin(), regs.begin() + static_cast<long>(acc.size()));
  std::vector<std::vector<Slots>> fenced = aFr;
  size_t at = acc.size();
  for (std::vector<Slots> &row : fenced)
    for (Slots &a : row)
      for (llvm::Value *&r : a)
        r = regs[at++];
  AsyncEvent read{AsyncEvent::Kind::Read}; // the stage, trip-relative 0
  read.async = true;
  noteAsync(read);
  for (int64_t k0 = 0; k0 < p.k; k0 += 16) {
    int64_t kb = k0 * in;
    int64_t off = static_cast<int64_t>(s.off) +
                  (kMajor ? kMajorOffset(kb, rowsStaged, w) : k0 * w);
    for (int64_t i = 0; i < fragsM; ++i) {
      auto first = out.begin() + i * per;
      std::vector<llvm::Value *> args(first, first + per);
      if (aDesc) {
        int64_t offA = i * 64 * wa + kMajorOffset(kb, p.m, wa);
        args.push_back(wgmmaDescriptor(fieldA, bitsA, b_.CreateAdd(blockA, i64(offA >> 4))));
      } else {
        const Slots &a = fenced[static_cast<size_t>(i)][static_cast<size_t>(k0 / 16)];
        args.insert(args.end(), a.begin(), a.end());
      }
      args.push_back(wgmmaDescriptor(field, bitsB, i64(off >> 4)));
      args.push_back(b_.getInt32(1));
      wgmmaInto(mma, args, out, i * per, per);
    }
  }
  asmStatement("wgmma.commit_group.sync.aligned;");
  // The trip's last `@` with its wait deferred (L.deferDot): nothing in the
  // trip reads its accumulators, which go to the back edge in flight.
  if (s.user == L.deferDot)
    return out;
  int64_t pending = 0;
  if (plantedBug("values-wgmma-wait")) // the accumulators read before the products are done
    pending = 1;
  if (!L.deferDot || s.user != L.streams[0].user)
    return wgmmaWait(pending, out);
  // The trip's first `@`: its wait also covers the previous trip's last
  // group (groups complete in order), whose accumulators, the carried value,
  // pass through it, so nothing in this trip reads them before.
  const ir::Value *arg = L.body->arg(static_cast<unsigned>(L.argBase + L.deferPos));
  Slots carried = mmaValues_.at(arg);
  Slots both = out;
  both.insert(both.end(), carried.begin(), carried.end());
  both = wgmmaWait(pending, both);
  mmaValues_[arg] = Slots(both.begin() + static_cast<long>(out.size()), both.end());
  return Slots(both.begin(), both.begin() + static_cast<long>(out.size()));
}

} // namespace tc::codegen::lower
