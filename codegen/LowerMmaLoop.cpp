//===- LowerMmaLoop.cpp - Matmul loops: fragments and cp.async stages -----===//
//
// A `while` or `for` whose body accumulates `acc = acc + a @ b` on tensor
// cores (the tutorial's matmul) is lowered as a whole instead of op by op
// (docs/gpu-perf.md, "Matmul loops"):
//
// * acc lives in mma fragment registers across the trips (each warp owns the
//   same warp tiles in every trip): it goes through shared memory once before
//   the loop (unless it starts as a constant) and once after it, instead of
//   twice per trip. Needs: acc is a carried value used only by the `@`, whose
//   result is only yielded back in its place.
// * pipeline (num_stages = S >= 2): when a and b are loaded through carried
//   pointer tiles stepped by a uniform loop-invariant offset, contiguous and
//   16-byte aligned along their rows, the loads become cp.async copies into S
//   shared-memory stages, issued S - 1 trips ahead. A load's mask (with
//   `other` +0, option "masked-stream") must be the same over each 16-byte
//   chunk and computable for a later trip: each chunk is then copied or
//   zero-filled (src-size 0) by the mask evaluated for the trip it is for.
//   The pointer tiles are not carried: each thread keeps the start addresses
//   of its 16-byte chunks (recomputed from the index arithmetic) and one
//   offset per tile. A copy for trip i + S - 1 reads memory only when that
//   trip runs: the condition is evaluated on the carried scalars predicted
//   S - 1 trips ahead (each is left alone or stepped by a loop-invariant
//   amount), so nothing is read that the program would not read. Option
//   copy-guard branches around them where that trip does not run; without
//   it they are issued in every trip, zero-filled (src-size 0) there.
//   Trip i: wait for its copies (cp.async.wait_group S - 2), barrier (also
//   ends trip i - 1's reads of the stage about to be refilled), issue trip
//   i + S - 1's copies, run the k steps on stage i mod S.
// Otherwise the operands are staged from registers each trip as lowerDotMma
// does, with acc still in fragments. Everything the body does besides the
// `@`, its loads and the pointer steps is lowered as usual.
//
//===----------------------------------------------------------------------===//
#include "codegen/LowerMma.h"

namespace tc::codegen::lower {

namespace {

/// Accumulator registers per thread at most (a 64 x 64 warp tile).
constexpr int64_t kMaxLoopFragments = 128;
/// Shared memory of the stages at most (leaves room for other staging).
constexpr size_t kMaxPipeBytes = 160 * 1024;

/// Scalar ops that may be evaluated ahead of time or before the loop: pure,
/// and no integer division (which traps on 0).
bool movable(const ir::Op &op) {
  return ir::hasTrait(op.kind(), ir::Pure) && op.numRegions() == 0 && op.numResults() == 1 &&
         op.kind() != ir::OpKind::Div && op.kind() != ir::OpKind::Rem;
}

} // namespace

bool Lowerer::usedOnlyBy(const ir::Value *v, const ir::Op *user) const {
  auto it = users_.find(v);
  return it != users_.end() && it->second.size() == 1 && it->second[0] == user;
}

/// Whether v has the same value in every trip of L's loop; body ops it needs
/// are recorded in L.hoisted (scalars, constants and splats only).
bool Lowerer::invariantIn(const ir::Value *v, MmaLoop &L) {
  if (!definedInside(v, *L.loop))
    return true;
  const ir::Op *d = v->definingOp();
  if (!d || d->parentBlock() != L.body)
    return false;
  if (L.hoisted.count(d))
    return true;
  if (!movable(*d) || !(v->type().isScalar() || d->kind() == ir::OpKind::Constant ||
                        d->kind() == ir::OpKind::Splat))
    return false;
  for (const ir::Value *o : d->operands())
    if (!invariantIn(o, L))
      return false;
  L.hoisted.insert(d);
  return true;
}

/// Finds the accumulating `@` of a loop and how its trips run (false: the
/// loop is lowered op by op).
bool Lowerer::matchMmaLoop(const ir::Op &loop, MmaLoop &L) {
  if (!opts_.tensorCores || opts_.sm < 80 || plantedBug("missing-barrier"))
    return false;
  L.loop = &loop;
  L.isFor = loop.kind() == ir::OpKind::For;
  L.body = loop.region(L.isFor ? 0 : 1);
  L.argBase = L.isFor ? 1 : 0;
  L.carried = loop.numResults();
  L.yield = L.body->terminator();
  if (L.body->numArgs() != L.argBase + L.carried || !L.yield ||
      L.yield->kind() != ir::OpKind::Yield || L.yield->numOperands() != L.carried)
    return false;
  if (!L.isFor) {
    L.cond = loop.region(0);
    L.condOp = L.cond->terminator();
    if (!L.condOp || L.condOp->kind() != ir::OpKind::Condition ||
        L.condOp->numOperands() != L.carried + 1 || L.cond->numArgs() != L.carried)
      return false;
    for (size_t i = 0; i < L.carried; ++i) // the body gets the carried values as they are
      if (L.condOp->operand(static_cast<unsigned>(i + 1)) != L.cond->arg(static_cast<unsigned>(i)))
        return false;
  }
  bool returns = false;
  ir::forEachOp(*L.body, [&](const ir::Op &op, unsigned) {
    returns = returns || op.kind() == ir::OpKind::Return;
  });
  if (returns)
    return false;
  for (const auto &op : L.body->ops()) {
    if (op->kind() != ir::OpKind::Dot)
      continue;
    std::optional<size_t> pos = carriedPos(op->operand(2), L.body, L.argBase);
    MmaPlan p;
    if (!pos || !usedOnlyBy(op->operand(2), op.get()) || !usedOnlyBy(op->result(), L.yield) ||
        L.yield->operand(static_cast<unsigned>(*pos)) != op->result() ||
        (!L.isFor && !usedOnlyBy(L.cond->arg(static_cast<unsigned>(*pos)), L.condOp)) ||
        !planMma(*op, p) || p.tiles % opts_.numWarps)
      continue;
    int64_t perWarp = p.tiles / opts_.numWarps;
    if (perWarp * p.fragsM() * p.fragsN() * 4 > kMaxLoopFragments)
      continue;
    L.dot = op.get();
    L.accPos = *pos;
    L.p = p;
    L.tilesPerWarp = perWarp;
    break;
  }
  if (!L.dot)
    return false;
  L.stageBytes = L.p.offC; // a then b, as planMma lays them out
  L.p.offC = 0;            // acc is staged alone (before and after the loop)
  L.p.zeroAcc = false;
  matchStreams(L);
  if (L.pipelined && !planWgmma(L) && L.p.bTransposed)
    unpipeline(L); // int8 streams only to wgmma (its b transposed in the stage)
  L.accCast = narrowingAccCast(L);
  size_t accBytes = static_cast<size_t>(L.p.m * L.p.pitchC) * byteSize(L.p.c->dtype);
  size_t afterBytes = static_cast<size_t>(L.p.m * L.p.pitchC) * byteSize(L.stagedAfter().dtype);
  // The acc is staged before the loop only when it does not start at a constant.
  const ir::Op *init =
      loop.operand(static_cast<unsigned>((L.isFor ? 3 : 0) + L.accPos))->definingOp();
  if (init && init->kind() == ir::OpKind::Constant)
    accBytes = 0;
  L.bytes = std::max({accBytes, afterBytes, static_cast<size_t>(L.stages) * L.stageBytes});
  planTma(L);
  if (L.tma) { // the stages' mbarriers past everything else
    L.mbarOff = alignTo(L.bytes, 8);
    if (L.mbarOff + 8 * static_cast<size_t>(L.stages) <= kMaxPipeBytes)
      L.bytes = L.mbarOff + 8 * static_cast<size_t>(L.stages);
    else
      L.tma = false;
  }
  if (L.bytes > kMaxPipeBytes)
    return false;
  if (L.tma)
    registerTensorMaps(L);
  return true;
}

/// Option epilogue-cast: the acc's only user after the loop when it is a cast
/// of the loop's block to a narrower type (MmaLoop::accCast).
const ir::Op *Lowerer::narrowingAccCast(const MmaLoop &L) const {
  if (!opts_.epilogueCast)
    return nullptr;
  auto it = users_.find(L.loop->result(static_cast<unsigned>(L.accPos)));
  if (it == users_.end() || it->second.size() != 1)
    return nullptr;
  const ir::Op *u = it->second[0];
  if (u->kind() != ir::OpKind::Cast || u->parentBlock() != L.loop->parentBlock())
    return nullptr;
  DType to = u->result()->type().dtype;
  if (to == DType::Bool || u->result()->type().isPtr || byteSize(to) >= byteSize(L.p.c->dtype))
    return nullptr;
  return u;
}

/// Pipelines a and b when both qualify (else L.stages = 1: staged per trip).
/// int8 (b staged transposed) only where wgmma may take the loop: mma.sync
/// has no form for b's stages as cp.async copies them.
void Lowerer::matchStreams(MmaLoop &L) {
  L.stages = 1;
  bool int8Ok = opts_.wgmma && opts_.int8Wgmma && opts_.sm == 90;
  if (opts_.numStages < 2 || (L.p.bTransposed && !int8Ok) || !opts_.remat ||
      holdsLoopWithDot(*L.body) || !matchStream(L, 0) || !matchStream(L, 1) ||
      L.streams[0].pos == L.streams[1].pos || !predictable(L) || !streamMasksAhead(L)) {
    unpipeline(L);
    return;
  }
  L.stages = opts_.numStages;
  while (L.stages > 2 && static_cast<size_t>(L.stages) * L.stageBytes > kMaxPipeBytes)
    --L.stages;
  if (static_cast<size_t>(L.stages) * L.stageBytes > kMaxPipeBytes) {
    unpipeline(L);
    return;
  }
  L.pipelined = true;
  L.ahead = L.stages - 1;
  for (const MmaLoop::Stream &s : L.streams) {
    L.skipped.insert(s.load);
    L.skipped.insert(s.step);
  }
}

/// Back to operands staged from registers every trip.
void Lowerer::unpipeline(MmaLoop &L) {
  L.stages = 1;
  L.ahead = 1;
  L.pipelined = false;
  L.hoisted.clear();
  L.aheadOps.clear();
  L.skipped.clear();
  L.affine.clear();
}

/// Operand `which` of the `@` is a load through a carried pointer tile whose
/// only other use is `p + s` (s uniform and loop-invariant), yielded in its
/// place; its rows are contiguous and 16-byte aligned. A mask needs `other`
/// +0 (a chunk masked off is zero-filled); matchStreams checks the rest of it.
bool Lowerer::matchStream(MmaLoop &L, size_t which) {
  MmaLoop::Stream &s = L.streams[which];
  const ir::Value *operand = L.dot->operand(static_cast<unsigned>(which));
  const ir::Op *load = operand->definingOp();
  if (!load || load->kind() != ir::OpKind::Load || load->parentBlock() != L.body ||
      !(load->numOperands() == 1 ||
        (load->numOperands() == 3 && isPositiveZero(load->operand(2)) && opts_.maskedStreams)) ||
      !usedOnlyBy(operand, L.dot))
    return false;
  const ir::Value *ptr = load->operand(0);
  std::optional<size_t> pos = carriedPos(ptr, L.body, L.argBase);
  if (!pos || *pos == L.accPos)
    return false;
  const ir::Value *next = L.yield->operand(static_cast<unsigned>(*pos));
  const ir::Op *step = next->definingOp();
  auto users = users_.find(ptr);
  if (!step || step->kind() != ir::OpKind::AddPtr || step->parentBlock() != L.body ||
      step->operand(0) != ptr || !usedOnlyBy(next, L.yield) || users == users_.end() ||
      users->second.size() != 2 ||
      !((users->second[0] == load && users->second[1] == step) ||
        (users->second[0] == step && users->second[1] == load)) ||
      (!L.isFor && !usedOnlyBy(L.cond->arg(static_cast<unsigned>(*pos)), L.condOp)))
    return false;
  const ir::Value *inc = step->operand(1);
  const ir::Op *incDef = inc->definingOp();
  if (!incDef || (incDef->kind() != ir::OpKind::Splat && incDef->kind() != ir::OpKind::Constant) ||
      !invariantIn(inc, L))
    return false;
  const ir::Value *init = L.loop->operand(static_cast<unsigned>((L.isFor ? 3 : 0) + *pos));
  const ir::Type &t = operand->type();
  auto in = static_cast<int64_t>(byteSize(t.dtype));
  if (t.rank() != 2 || !rematable(init))
    return false;
  AxisInfo a = axes_->info(init);
  if (a.contig.size() != 2 || a.contig[1] < 16 / in ||
      AxisAnalysis::runDivisibility(a, 1, 16 / in, in) < 16 || (axes_->info(inc).eltDiv * in) % 16)
    return false;
  s.load = load;
  s.step = step;
  s.pos = *pos;
  s.inc = inc;
  s.mask = load->numOperands() == 3 ? load->operand(1) : nullptr;
  s.tile = &t;
  s.rows = t.shape[0];
  s.cols = t.shape[1];
  s.pitch = which == 0 ? L.p.pitchA : L.p.pitchB;
  s.off = which == 0 ? L.p.offA : L.p.offB;
  return true;
}

/// The streams' masks (the tutorial's `rk < K - k ? *pa : 0`) can be
/// evaluated for a later trip (aheadable: recomputable from the induction
/// variable, the carried scalars predictable() knows and values from outside
/// the loop) and are the same over each 16-byte chunk of a row; their scalar
/// ops go into L.aheadOps, in the body's order. After predictable().
bool Lowerer::streamMasksAhead(MmaLoop &L) {
  std::unordered_set<const ir::Op *> ahead;
  for (const MmaLoop::Stream &s : L.streams) {
    if (!s.mask)
      continue;
    int64_t chunk = 16 / static_cast<int64_t>(byteSize(s.tile->dtype));
    if (!aheadable(L, s.mask, ahead))
      return false;
    if (!s.mask->type().isScalar()) {
      AxisInfo m = axes_->info(s.mask);
      if (m.cnst.size() != 2 || m.cnst[1] < chunk || m.cnst[1] % chunk)
        return false;
    }
  }
  std::unordered_map<const ir::Op *, size_t> order;
  for (const auto &o : L.body->ops())
    order[o.get()] = order.size();
  L.aheadOps.assign(ahead.begin(), ahead.end());
  std::sort(L.aheadOps.begin(), L.aheadOps.end(),
            [&](const ir::Op *x, const ir::Op *y) { return order[x] < order[y]; });
  return true;
}

/// Whether the loop condition of a later trip can be computed now: a `for`
/// always; a while when its condition reads only carried integer scalars that
/// the body leaves alone or steps by a loop-invariant amount, through pure
/// scalar ops.
bool Lowerer::predictable(MmaLoop &L) {
  if (L.isFor)
    return true;
  L.unchanged.assign(L.carried, false);
  std::vector<bool> known(L.carried, false);
  for (size_t pos = 0; pos < L.carried; ++pos) {
    const ir::Value *arg = L.body->arg(static_cast<unsigned>(pos));
    const ir::Value *next = L.yield->operand(static_cast<unsigned>(pos));
    if (next == arg) {
      L.unchanged[pos] = known[pos] = true;
      continue;
    }
    const ir::Op *d = next->definingOp();
    const ir::Type &t = arg->type();
    if (!t.isScalar() || t.isPtr || isFloat(t.dtype) || t.dtype == DType::Bool || !d ||
        d->parentBlock() != L.body ||
        (d->kind() != ir::OpKind::Add && d->kind() != ir::OpKind::Sub))
      continue;
    const ir::Value *inc = nullptr;
    if (d->operand(0) == arg)
      inc = d->operand(1);
    else if (d->kind() == ir::OpKind::Add && d->operand(1) == arg)
      inc = d->operand(0);
    if (inc && inc != arg && invariantIn(inc, L)) {
      L.affine.push_back({pos, inc, d->kind() == ir::OpKind::Sub});
      known[pos] = true;
    }
  }
  for (const auto &op : L.cond->ops()) {
    if (op.get() == L.condOp)
      continue;
    if (!movable(*op) || !op->result()->type().isScalar())
      return false;
  }
  for (size_t pos = 0; pos < L.carried; ++pos) {
    auto users = users_.find(L.cond->arg(static_cast<unsigned>(pos)));
    if (known[pos] || users == users_.end())
      continue;
    for (const ir::Op *u : users->second)
      if (u != L.condOp)
        return false;
  }
  return true;
}

/// The carried values `ahead` trips after `state` (positions that are
/// neither left alone nor stepped stay empty); for a `for`, the induction
/// variable in ivAhead.
std::vector<Slots> Lowerer::predictedState(const MmaLoop &L, const std::vector<Slots> &state,
                                           llvm::Value *iv, int64_t ahead, llvm::Value *&ivAhead) {
  if (L.isFor) {
    llvm::Value *step = get(L.loop->operand(2))[0];
    ivAhead = b_.CreateAdd(iv, b_.CreateMul(step, llvm::ConstantInt::get(step->getType(), ahead)));
    return {};
  }
  std::vector<Slots> out(L.carried);
  for (size_t pos = 0; pos < L.carried; ++pos)
    if (L.unchanged[pos])
      out[pos] = state[pos];
  for (const MmaLoop::Affine &a : L.affine) {
    DType dt = L.body->arg(static_cast<unsigned>(a.pos))->type().dtype;
    llvm::Value *inc = get(a.inc)[0];
    llvm::Value *total = b_.CreateMul(inc, llvm::ConstantInt::get(inc->getType(), ahead));
    out[a.pos] = {
        se_.binary(a.sub ? ir::OpKind::Sub : ir::OpKind::Add, dt, state[a.pos][0], total)};
  }
  return out;
}

/// The loop condition for the carried values `state` (a `for`: iv < ub).
llvm::Value *Lowerer::predictedCond(const MmaLoop &L, const std::vector<Slots> &state,
                                    llvm::Value *iv) {
  if (L.isFor) {
    llvm::Value *ub = get(L.loop->operand(1))[0];
    return isSignedInt(L.loop->operand(0)->type().dtype) ? b_.CreateICmpSLT(iv, ub)
                                                         : b_.CreateICmpULT(iv, ub);
  }
  bindArgs(*L.cond, state);
  for (const auto &op : L.cond->ops())
    if (op.get() != L.condOp)
      lowerOp(*op, nullptr);
  return get(L.condOp->operand(0))[0];
}

/// The byte offset of the matmul loops' shared memory (a placeholder that
/// run() replaces once the other staging's size is known).
llvm::Value *Lowerer::pipeBase() {
  if (!pipeBase_) {
    pipeBase_ = llvm::BinaryOperator::CreateAdd(b_.getInt32(0), b_.getInt32(0), "pipe.base");
    pipeBase_->insertAfter(llvm::cast<llvm::Instruction>(tid_));
  }
  return pipeBase_;
}

/// Runs f(j, tile) for the warp tiles this thread's warp owns: warp w owns
/// tiles w, w + num_warps, ... (the same ones in every trip). With n split
/// between warpgroups (L.splitN, one 16-row tile a warp): warp v of
/// warpgroup g owns rows 64 (g / splitN) + 16 v, column block g mod splitN.
template <typename F> void Lowerer::forEachOwnTile(const MmaLoop &L, F f) {
  llvm::Value *lane = b_.CreateAnd(tid_, b_.getInt32(31));
  llvm::Value *warp = b_.CreateLShr(tid_, b_.getInt32(5));
  if (L.splitN > 1) {
    auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
    llvm::Value *g = b_.CreateLShr(warp, i32(2)), *v = b_.CreateAnd(warp, i32(3));
    llvm::Value *rowBlock = b_.CreateAdd(b_.CreateShl(b_.CreateUDiv(g, i32(L.splitN)), i32(2)), v);
    llvm::Value *tile =
        b_.CreateAdd(b_.CreateMul(rowBlock, i32(L.splitN)), b_.CreateURem(g, i32(L.splitN)));
    f(0, mmaTileAt(L.p, tile, lane));
    return;
  }
  for (int64_t j = 0; j < L.tilesPerWarp; ++j) {
    llvm::Value *tile = b_.CreateAdd(warp, b_.getInt32(static_cast<uint32_t>(j * opts_.numWarps)));
    f(static_cast<size_t>(j), mmaTileAt(L.p, tile, lane));
  }
}

/// The loop's initial acc (blocked slots) as this thread's fragments.
Slots Lowerer::accToFragments(const MmaLoop &L, const ir::Value *init) {
  size_t per = static_cast<size_t>(L.p.fragsM() * L.p.fragsN() * 4);
  Slots frags(per * static_cast<size_t>(L.tilesPerWarp));
  const ir::Op *def = init->definingOp();
  if (def && def->kind() == ir::OpKind::Constant) {
    frags.assign(frags.size(),
                 se_.toMemory(se_.constant(L.p.c->dtype, *def->attr("value")), L.p.c->dtype));
    return frags;
  }
  withStagingBase(pipeBase(), [&] {
    barrier();
    stageRows(get(init), *L.p.c, 0, L.p.pitchC, false);
    barrier();
    forEachOwnTile(L, [&](size_t j, const MmaTile &t) {
      Slots x = mmaLoadAcc(L.p, t);
      std::copy(x.begin(), x.end(), frags.begin() + static_cast<long>(j * per));
    });
  });
  return frags;
}

/// This thread's fragments after the loop, back in the blocked layout (cast
/// first, on the fragments, with L.accCast: the cast's result).
Slots Lowerer::fragmentsToRows(const MmaLoop &L, const Slots &acc) {
  size_t per = static_cast<size_t>(L.p.fragsM() * L.p.fragsN() * 4);
  if (L.pipelined) {
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_all, {}, {});
    noteAsync({AsyncEvent::Kind::CopyWaitAll});
  }
  Slots frags = acc;
  if (L.accCast) {
    setLoc(*L.accCast);
    for (llvm::Value *&x : frags)
      x = scalarOp(*L.accCast, {x});
  }
  const ir::Type &staged = L.stagedAfter();
  Slots rows;
  withStagingBase(pipeBase(), [&] {
    barrier();
    noteAsync({AsyncEvent::Kind::Store}); // the fragments, over the stages' memory
    forEachOwnTile(L, [&](size_t j, const MmaTile &t) {
      mmaStoreAcc(L.p, t,
                  Slots(frags.begin() + static_cast<long>(j * per),
                        frags.begin() + static_cast<long>((j + 1) * per)),
                  &staged);
    });
    barrier();
    rows = readRows(staged, 0, L.p.pitchC);
  });
  return rows;
}

/// The k steps of one trip on the stage at byte offset stageOff.
Slots Lowerer::mmaLoopStep(const MmaLoop &L, llvm::Value *stageOff, const Slots &acc) {
  size_t per = static_cast<size_t>(L.p.fragsM() * L.p.fragsN() * 4);
  noteAsync({AsyncEvent::Kind::Read}); // ldmatrix from the trip's stage
  Slots out = acc;
  withStagingBase(b_.CreateAdd(pipeBase(), stageOff), [&] {
    forEachOwnTile(L, [&](size_t j, const MmaTile &t) {
      auto first = out.begin() + static_cast<long>(j * per);
      Slots x = mmaKLoop(L.p, t, Slots(first, first + static_cast<long>(per)));
      std::copy(x.begin(), x.end(), first);
    });
  });
  return out;
}

/// One trip without the pipeline: a and b staged from their registers.
Slots Lowerer::stagedLoopStep(const MmaLoop &L, const Slots &acc) {
  withStagingBase(pipeBase(), [&] {
    barrier(); // the previous trip's reads are done
    stageRows(get(L.dot->operand(0)), *L.p.a, L.p.offA, L.p.pitchA, false);
    stageRows(get(L.dot->operand(1)), *L.p.b, L.p.offB, L.p.pitchB, L.p.bTransposed);
    barrier();
  });
  return mmaLoopStep(L, b_.getInt32(0), acc);
}

/// Each stream's chunks for this thread: chunk q = tid + j * T of the tile
/// (rows of cols / chunk chunks), its address at the loop's start (the
/// pointer tile's initial value recomputed at the chunk's first element).
Lowerer::StreamChunks Lowerer::streamSources(const MmaLoop &L) {
  StreamChunks c;
  for (size_t w = 0; w < L.numStreams; ++w) {
    const MmaLoop::Stream &s = L.streams[w];
    int64_t in = static_cast<int64_t>(byteSize(s.tile->dtype)), chunk = 16 / in;
    // A transposed stream's staged rows are the tile's columns.
    int64_t rowsStaged = s.transposed ? s.cols : s.rows, rowLen = s.transposed ? s.rows : s.cols;
    int64_t perRow = rowLen / chunk;
    c.total[w] = rowsStaged * perRow;
    const ir::Value *init = s.recomputed // (no carried position: recomputed each trip)
                                ? nullptr
                                : L.loop->operand(static_cast<unsigned>((L.isFor ? 3 : 0) + s.pos));
    RematMemo memo;
    for (int64_t j = 0; j * T_ < c.total[w]; ++j) {
      llvm::Value *q = b_.CreateAdd(tid_, b_.getInt32(static_cast<uint32_t>(j * T_)));
      llvm::Value *row = b_.CreateUDiv(q, b_.getInt32(static_cast<uint32_t>(perRow)));
      llvm::Value *col = b_.CreateMul(b_.CreateURem(q, b_.getInt32(static_cast<uint32_t>(perRow))),
                                      b_.getInt32(static_cast<uint32_t>(chunk)));
      Slots at = s.transposed ? Slots{col, row} : Slots{row, col};
      c.coords[w].push_back(at);
      c.src[w].push_back(s.recomputed ? nullptr : rematAt(init, at, memo));
      if (s.keyPerm) { // key 2 fn t + 2j + e at row 8j + 2t + e (planKeyPermutation)
        auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
        int64_t run = 2 * (s.keyPerm / 8);
        llvm::Value *t = b_.CreateUDiv(row, i32(run)), *r = b_.CreateURem(row, i32(run));
        row = b_.CreateAdd(b_.CreateAdd(b_.CreateShl(b_.CreateLShr(r, i32(1)), i32(3)),
                                        b_.CreateShl(t, i32(1))),
                           b_.CreateAnd(r, i32(1)));
      }
      if (s.swizzle || s.xorRows) {
        llvm::Value *colBytes = b_.CreateMul(col, b_.getInt32(static_cast<uint32_t>(in)));
        c.dst[w].push_back(s.swizzle ? swizzledChunk(L, w, row, colBytes)
                                     : rawChunk(L, w, row, colBytes));
        continue;
      }
      llvm::Value *elem =
          b_.CreateAdd(b_.CreateMul(row, b_.getInt32(static_cast<uint32_t>(s.pitch))), col);
      c.dst[w].push_back(b_.CreateAdd(b_.CreateMul(elem, b_.getInt32(static_cast<uint32_t>(in))),
                                      b_.getInt32(static_cast<uint32_t>(s.off))));
    }
  }
  return c;
}

/// Stream `which`'s element offset `ahead` trips after `off` (i64).
llvm::Value *Lowerer::offsetAhead(const MmaLoop &L, size_t which, llvm::Value *off, int64_t ahead) {
  const ir::Value *inc = L.streams[which].inc;
  llvm::Value *x = get(inc)[0];
  x = isSignedInt(inc->type().dtype) ? b_.CreateSExtOrTrunc(x, b_.getInt64Ty())
                                     : b_.CreateZExtOrTrunc(x, b_.getInt64Ty());
  return b_.CreateAdd(off, b_.CreateMul(x, b_.getInt64(static_cast<uint64_t>(ahead))));
}

/// The TMA waits' parity: trip 0's, and the stage whose trips flip it (as
/// the lowering computes it; AsyncSchedule::tmaParity0, tmaFlipStage).
constexpr int64_t kTmaParity0 = 0, kTmaFlipStage = 0;

/// One pipelined trip. loopState: the two offsets, whether trip i + S - 2
/// runs, this trip's stage; nextState gets their values for the next trip.
Slots Lowerer::pipelinedLoopStep(const MmaLoop &L, const StreamChunks &c,
                                 const std::vector<Slots> &state, llvm::Value *iv,
                                 const Slots &loopState, Slots &nextState) {
  int64_t ahead = L.ahead;
  auto stageBytes = b_.getInt32(static_cast<uint32_t>(L.stageBytes));
  if (L.tma) {
    tmaWait(L, loopState[3], loopState[8]);
    if (!L.wgmmaPending) // every thread is done with the stage refilled below
      barrier();
  } else {
    int64_t inFlight = std::max<int64_t>(0, ahead - 1);
    if (plantedBug("pipeline-wait-group")) // waits for the group before this trip's
      inFlight = ahead;
    cpAsyncWait(inFlight);
    if (L.wgmma) // the copies' writes, made visible to the tensor cores' reads
      asmStatement("fence.proxy.async.shared::cta;");
    barrier();
  }
  llvm::Value *ivAhead = nullptr;
  std::vector<Slots> later = predictedState(L, state, iv, ahead, ivAhead);
  llvm::Value *runs = b_.CreateAnd(loopState[2], predictedCond(L, later, ivAhead));
  llvm::Value *stage = loopState[3];
  llvm::Value *fill = b_.CreateAdd(stage, b_.getInt32(static_cast<uint32_t>(ahead)));
  llvm::Value *wraps = b_.CreateICmpUGE(fill, b_.getInt32(static_cast<uint32_t>(L.stages)));
  fill = b_.CreateSelect(wraps, b_.CreateSub(fill, b_.getInt32(static_cast<uint32_t>(L.stages))),
                         fill);
  Slots offAhead = {offsetAhead(L, 0, loopState[0], ahead), offsetAhead(L, 1, loopState[1], ahead)};
  llvm::Value *stageOff = b_.CreateMul(stage, stageBytes);
  Slots acc;
  if (L.wgmma && L.wgmmaPending) {
    // The products first: the refill below overlaps them. It goes into the
    // stage of the trip before, whose products every thread has waited for
    // (wgmma.wait_group 1) before this second barrier.
    acc = wgmmaLoopStep(L, stageOff, get(L.dot->operand(2)));
    if (!(L.tma && plantedBug("tma-refill-barrier")))
      barrier();
  }
  Slots rowCol(loopState.begin() + 4, loopState.begin() + std::min<size_t>(8, loopState.size()));
  if (L.tma) {
    emitGuarded(runs, [&]() -> llvm::Value * {
      tmaFill(L, fill, ahead, rowCol, offAhead);
      return nullptr;
    });
  } else {
    issueTripCopies(L, c, offAhead, b_.CreateMul(fill, stageBytes), state, iv, runs);
  }
  if (!L.wgmma)
    acc = mmaLoopStep(L, stageOff, get(L.dot->operand(2)));
  else if (!L.wgmmaPending) // two stages: the products wait for themselves
    acc = wgmmaLoopStep(L, stageOff, get(L.dot->operand(2)));
  llvm::Value *nextStage = b_.CreateAdd(stage, b_.getInt32(1));
  nextStage =
      b_.CreateSelect(b_.CreateICmpEQ(nextStage, b_.getInt32(static_cast<uint32_t>(L.stages))),
                      b_.getInt32(0), nextStage);
  nextState = {offsetAhead(L, 0, loopState[0], 1), offsetAhead(L, 1, loopState[1], 1), runs,
               nextStage};
  if (L.tma) { // the tiles one trip later; the phase flips when the stages wrap
    Slots next = tmaAdvance(rowCol);
    nextState.insert(nextState.end(), next.begin(), next.end());
    nextState.push_back(b_.CreateXor(
        loopState[8],
        b_.CreateZExt(b_.CreateICmpEQ(nextStage, b_.getInt32(static_cast<uint32_t>(kTmaFlipStage))),
                      b_.getInt32Ty())));
  }
  return acc;
}

/// Programs per SM to ask ptxas registers for: 64K registers over an
/// estimate of a thread's demand (the accumulator fragments, one k step's
/// operand fragments, three registers per 16-byte chunk it copies, 16 for
/// the rest). 8 warps on 128x128 tiles: 128 registers, 2 programs per SM
/// (measured without spills; 1 program left them at 168). Without the
/// pipeline the operands are in registers as well: 1 program (up to 255).
unsigned Lowerer::mmaLoopCtas(const MmaLoop &L) const {
  if (!L.pipelined) // the operands' slots are in registers too: all of them
    return 1;
  int64_t frags = L.tilesPerWarp * L.p.fragsM() * L.p.fragsN() * 4;
  int64_t operands = L.wgmma ? 0 : L.p.fragsM() * 4 + L.p.fragsN() * 2; // wgmma: from shared
  int64_t chunks = 0;
  for (const MmaLoop::Stream &s : L.streams)
    chunks +=
        (s.rows * s.cols / (16 / static_cast<int64_t>(byteSize(s.tile->dtype))) + T_ - 1) / T_;
  int64_t demand = frags + operands + 3 * chunks + (L.wgmma ? 32 : 16);
  return static_cast<unsigned>(std::max<int64_t>(1, 65536 / (T_ * demand)));
}

bool Lowerer::lowerMmaLoop(const ir::Op &loop) {
  auto found = mmaLoops_.find(&loop); // planLayouts ran matchMmaLoop
  if (found == mmaLoops_.end())
    return false;
  const MmaLoop &L = *found->second;
  StagesClaim claim(*this, loop, L.pipelined);
  if (L.wgmma) {
    archSpecific_ = true;
    pipeAlign_ = 1024;
  }
  setMinCtasPerSm(mmaLoopCtas(L));
  notePath(L.wgmma ? "wgmma" : "mma.sync");
  if (L.transposeB)
    notePath("wgmma.int8"); // option int8-wgmma
  if (L.splitN > 1)
    notePath("wgmma.split_n"); // n split between the warpgroups of a 64-row block
  notePath("mma.loop");
  if (L.pipelined && (L.streams[0].mask || L.streams[1].mask))
    notePath("mma.loop.masked_stream"); // option masked-stream
  if (L.accCast)
    notePath("mma.loop.epilogue_cast"); // option epilogue-cast
  notePath(L.pipelined ? "pipeline.stages=" + std::to_string(L.stages) : "pipeline.off");
  pipeBytes_ = std::max(pipeBytes_, L.bytes);
  size_t first = L.isFor ? 3 : 0;
  // Before the loop: invariants, acc's fragments, the first S - 1 trips' copies.
  for (const auto &op : L.body->ops())
    if (L.hoisted.count(op.get()))
      lowerOp(*op, nullptr);
  std::vector<Slots> init = operandSlots(loop, first);
  std::vector<Slots> carriedInit(L.carried);
  for (size_t pos = 0; pos < L.carried; ++pos)
    if (!L.special(pos))
      carriedInit[pos] = init[pos];
  Slots acc0 = accToFragments(L, loop.operand(static_cast<unsigned>(first + L.accPos)));
  llvm::Value *lb = L.isFor ? get(loop.operand(0))[0] : nullptr;
  StreamChunks chunks;
  Slots loopInit;
  // The cp.async stages' schedule as emitted (codegen/AsyncSchedule.h).
  AsyncSchedule sched;
  bool checked = false;
  std::vector<AsyncEvent> *outerEvents = asyncEvents_;
  asyncEvents_ = nullptr; // (a loop inside a recorded trip: one barrier there, below)
  if (L.pipelined) {
    // The TMA's tile coordinates (row, column) of each stream j trips in.
    auto rowColAt = [&](int64_t j) {
      Slots rc;
      for (size_t w = 0; w < 2; ++w) {
        auto [row, col] =
            tmaSplit(b_.CreateAdd(tma_.off0[w], offsetAhead(L, w, b_.getInt64(0), j)), tma_.ld[w]);
        rc.push_back(row);
        rc.push_back(col);
      }
      return rc;
    };
    checked = true;
    sched.stages = L.stages;
    sched.tmaParity0 = kTmaParity0;
    sched.tmaFlipStage = kTmaFlipStage;
    sched.derivedRegion = L.transposeB; // int8's b, transposed in each trip's stage
    if (L.tma) {
      notePath("mma.loop.tma"); // option tma
      tmaPrepare(L);
      asyncEvents_ = &sched.prologue;
      tmaInitBarriers(L); // between two barriers: earlier readers first, every waiter after
    } else {
      chunks = streamSources(L);
      asyncEvents_ = &sched.prologue;
      barrier(); // earlier readers of the stages are done
    }
    llvm::Value *runs = nullptr;
    for (int64_t j = 0; j < L.ahead; ++j) {
      llvm::Value *ivJ = nullptr;
      std::vector<Slots> sj = predictedState(L, carriedInit, lb, j, ivJ);
      llvm::Value *c = predictedCond(L, sj, ivJ);
      runs = runs ? b_.CreateAnd(runs, c) : c;
      Slots off = {offsetAhead(L, 0, b_.getInt64(0), j), offsetAhead(L, 1, b_.getInt64(0), j)};
      Slots rc = L.tma ? rowColAt(j) : Slots{};
      emitGuarded(runs, [&]() -> llvm::Value * {
        if (L.tma)
          tmaFill(L, b_.getInt32(static_cast<uint32_t>(j)), j, rc, off);
        else
          issueValueCopies(
              L, chunks, off,
              b_.getInt32(static_cast<uint32_t>(j * static_cast<int64_t>(L.stageBytes))),
              carriedInit, lb, j);
        return nullptr;
      });
      if (!L.tma)
        cpAsyncCommit(j); // trip j's tiles into stage j
    }
    loopInit = {b_.getInt64(0), b_.getInt64(0), runs, b_.getInt32(0)};
    if (L.tma) { // the tiles trip `ahead` copies, and trip 0's phase
      Slots rc = rowColAt(L.ahead);
      loopInit.insert(loopInit.end(), rc.begin(), rc.end());
      loopInit.push_back(b_.getInt32(static_cast<uint32_t>(kTmaParity0)));
    }
  }
  // The loop.
  auto [pre, header, body, exit] = enterLoop("mma.loop");
  std::vector<Slots> phis = makePhis(carriedInit, pre);
  std::vector<Slots> own = makePhis({acc0, loopInit}, pre);
  llvm::PHINode *iv = nullptr;
  std::vector<Slots> fwd;
  llvm::Value *more = nullptr;
  if (L.isFor) {
    iv = b_.CreatePHI(lb->getType(), 2);
    iv->addIncoming(lb, pre);
    more = predictedCond(L, {}, iv);
    fwd = phis;
  } else {
    bindArgs(*L.cond, phis);
    lowerBlock(*L.cond, &fwd);
    more = fwd[0][0];
    fwd.erase(fwd.begin());
  }
  b_.CreateCondBr(more, body, exit);
  b_.SetInsertPoint(body);
  if (iv)
    values_[L.body->arg(0)] = {iv};
  bindArgs(*L.body, fwd, L.argBase);
  values_[L.dot->operand(2)] = own[0];
  if (checked)
    asyncEvents_ = &sched.trip;
  Slots loopNext;
  for (const auto &op : L.body->ops()) {
    if (op.get() == L.yield)
      break;
    if (L.hoisted.count(op.get()) || L.skipped.count(op.get()))
      continue;
    if (op.get() != L.dot) {
      lowerOp(*op, nullptr);
      continue;
    }
    setLoc(*op);
    values_[op->result()] = L.pipelined ? pipelinedLoopStep(L, chunks, fwd, iv, own[1], loopNext)
                                        : stagedLoopStep(L, own[0]);
  }
  std::vector<Slots> next(L.carried);
  for (size_t pos = 0; pos < L.carried; ++pos)
    if (!L.special(pos))
      next[pos] = get(L.yield->operand(static_cast<unsigned>(pos)));
  llvm::BasicBlock *end = b_.GetInsertBlock();
  addIncoming(phis, next, end);
  addIncoming(own, {get(L.dot->result()), loopNext}, end);
  if (iv)
    iv->addIncoming(b_.CreateAdd(iv, get(loop.operand(2))[0]), end);
  b_.CreateBr(header);
  // After the loop.
  b_.SetInsertPoint(exit);
  if (checked)
    asyncEvents_ = &sched.exit;
  if (L.tma)
    tmaInvalBarriers(L);
  for (size_t pos = 0; pos < L.carried; ++pos) {
    const ir::Value *result = loop.result(static_cast<unsigned>(pos));
    if (pos == L.accPos) {
      // The last trip's products may still be in flight.
      bool wait = L.wgmma && L.wgmmaPending && !plantedBug("wgmma-wait");
      Slots rows = fragmentsToRows(L, wait ? wgmmaWait(0, own[0]) : own[0]);
      if (L.accCast) { // the cast's result; the acc itself has no other user
        loweredEarly_.insert(L.accCast);
        define(*L.accCast, std::move(rows));
      } else {
        values_[result] = std::move(rows);
      }
    } else if (L.special(pos)) { // a stream's pointer tile: its start + the offset
      size_t w = L.streams[0].pos == pos ? 0 : 1;
      Slots p;
      if (users_.count(result))
        for (llvm::Value *x : init[pos])
          p.push_back(b_.CreateGEP(se_.memType(L.streams[w].tile->dtype), x, own[1][w]));
      values_[result] = p;
    } else {
      values_[result] = L.isFor ? phis[pos] : fwd[pos];
    }
  }
  asyncEvents_ = outerEvents;
  noteAsync({AsyncEvent::Kind::Barrier}); // fragmentsToRows' barriers run on every path
  if (!checked)
    return true;
  if (std::string hazard = checkAsyncSchedule(sched); !hazard.empty())
    throw Unsupported(std::string("internal: the ") + (L.tma ? "TMA" : "cp.async") +
                      " stages of the matmul loop at line " + std::to_string(loop.loc().line) +
                      " would race: " + hazard +
                      " (--disable-opt pipeline compiles the loop without them)");
  return true;
}

} // namespace tc::codegen::lower
