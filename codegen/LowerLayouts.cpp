//===- LowerLayouts.cpp - assignLayouts: a layout for every tile value ----===//
//
// The pass of codegen/Layout.h, run by the Lowerer before it emits anything
// (Lowerer::planLayouts) and on its own for `tritonc --emit=layouts`
// (assignLayouts). It makes the lowering's layout decisions once, records them
// where the lowering reads them (vec_, deferredLoads_, remat_, accessPerm_,
// mmaDots_, mmaLoops_) and describes them in layouts_: each tile value's
// layout and each change of layout with its mechanism and cost, so that what
// --emit=layouts prints is what the PTX does.
//
//===----------------------------------------------------------------------===//
#include "codegen/Layout.h"
#include "codegen/LowerMma.h"

namespace tc::codegen::lower {

namespace {

bool isLoop(const ir::Op &op) {
  return op.kind() == ir::OpKind::For || op.kind() == ir::OpKind::While;
}

std::string runNote(const std::string &what, int64_t run, DType dt, bool aligned,
                    bool maskUniform) {
  if (run < 2)
    return what + ": element by element";
  int64_t bytes = run * static_cast<int64_t>(byteSize(dt));
  std::string s = what + ": runs of " + std::to_string(run) + " " + std::string(irName(dt)) + " (" +
                  std::to_string(bytes) + " bytes";
  if (bytes > 16)
    s += ", " + std::to_string(bytes / 16) + " 16-byte accesses";
  s += std::string(")") + (aligned ? ", aligned" : ", alignment checked at run time");
  if (!maskUniform)
    s += ", mask checked at run time";
  return s;
}

} // namespace

Layout Lowerer::blockedOf(const ir::Type &t) const {
  return Layout::blocked(t.shape, T_, vec_);
}

void Lowerer::setLayout(const ir::Value *v, const Layout &l) {
  if (!v->type().isScalar())
    layouts_.values[v] = l;
}

void Lowerer::addConversion(const ir::Op &op, std::string what, Layout from, Layout to,
                            Conversion::Mechanism m, std::string how, size_t bytes, int barriers,
                            int depth) {
  Conversion c;
  c.op = &op;
  c.what = std::move(what);
  c.from = std::move(from);
  c.to = std::move(to);
  c.mechanism = m;
  c.how = std::move(how);
  c.bytes = bytes;
  c.barriers = barriers;
  c.loopDepth = depth;
  layouts_.conversions.push_back(std::move(c));
}

/// Whether the lowering recomputes a broadcast or trans (remat) instead of
/// staging it.
bool Lowerer::rematDecision(const ir::Op &op) {
  return opts_.remat && !plantedBug("missing-barrier") &&
         op.operand(0)->type().numElements() != 1 && rematable(op.result());
}

void Lowerer::planLayouts() {
  std::vector<const ir::Op *> ops;
  ir::forEachOp(fn_.body(), [&](const ir::Op &op, unsigned) { ops.push_back(&op); });
  // The run length V of the blocked layout: 16 bytes of the narrowest element a
  // tile load or store accesses, so that each of them can be one 16-byte access
  // per run; a wider access splits a run into several 16-byte accesses
  // (planAccess), at most two for the widest (V <= 32 / widest). Scalar accesses
  // take no part: one fp32 store of a statistic must not halve the width of
  // every fp16 access. A kernel without tile accesses keeps 16 / its widest.
  unsigned widest = 0, tileNarrowest = 0, tileWidest = 0;
  for (const ir::Op *op : ops) {
    if (op->kind() == ir::OpKind::Load || op->kind() == ir::OpKind::Store) {
      const ir::Type &pt = op->operand(0)->type();
      unsigned es = byteSize(pt.dtype);
      widest = std::max(widest, es);
      if (!pt.isScalar()) {
        tileNarrowest = tileNarrowest ? std::min(tileNarrowest, es) : es;
        tileWidest = std::max(tileWidest, es);
      }
    }
  }
  vec_ = 1;
  if (opts_.vectorize && tileNarrowest)
    vec_ = std::max<int64_t>(1, std::min<int64_t>(16 / tileNarrowest, 32 / tileWidest));
  else if (opts_.vectorize && widest)
    vec_ = std::max<int64_t>(1, 16 / widest);
  layouts_.kernel = fn_.name();
  layouts_.numThreads = T_;
  layouts_.vec = vec_;
  for (const ir::Op *op : ops) {
    if (op->kind() == ir::OpKind::Load && fusesIntoTrans(*op))
      deferredLoads_.insert(op);
    if (isLoop(*op)) {
      auto L = std::make_shared<MmaLoop>();
      if (matchMmaLoop(*op, *L))
        mmaLoops_[op] = L;
    }
  }
  planMmaValues();
  if (std::vector<const ir::Op *> over = mmaDotsOverRegisters(); !over.empty()) {
    // Planned again without them (planMmaValues' results cleared, the
    // layouts it gave included).
    mmaDeclined_.insert(over.begin(), over.end());
    for (const ir::Value *v : mmaRes_)
      layouts_.values.erase(v);
    mmaRes_.clear();
    mmaOps_.clear();
    mmaBlocked_.clear();
    mmaHoistA_.clear();
    mmaLoopOf_.clear();
    valuePipes_.clear();
    valuePipeWhyNot_.clear();
    planMmaValues();
  }
  for (unsigned i = 0; i < fn_.numParams(); ++i)
    setLayout(fn_.param(i), blockedOf(fn_.param(i)->type()));
  mmaHoistNoted_.clear();
  planBlock(fn_.body(), 0);
}

void Lowerer::planBlock(const ir::Block &block, int depth) {
  for (const auto &a : block.args())
    if (!layouts_.values.count(a.get()))
      setLayout(a.get(), blockedOf(a->type()));
  for (const auto &op : block.ops()) {
    planOp(*op, depth);
    for (size_t r = 0; r < op->numRegions(); ++r)
      planBlock(*op->region(static_cast<unsigned>(r)), depth + (isLoop(*op) ? 1 : 0));
  }
}

void Lowerer::planOp(const ir::Op &op, int depth) {
  using M = Conversion::Mechanism;
  for (const auto &r : op.results())
    checkType(r->type()); // refused as the lowering refuses it
  if (mmaOps_.count(&op))
    return planMmaValueOp(op, depth);
  for (const auto &r : op.results())
    if (!layouts_.values.count(r.get()))
      setLayout(r.get(), blockedOf(r->type()));
  auto elemBytesOf = [&](const ir::Type &t) { return elemBytes(t); };
  auto layoutOf = [&](const ir::Value *v) {
    auto it = layouts_.values.find(v);
    return it != layouts_.values.end() ? it->second : blockedOf(v->type());
  };
  auto rowOrder = [](size_t rank) {
    std::vector<int64_t> o;
    for (size_t d = rank; d-- > 0;)
      o.push_back(static_cast<int64_t>(d));
    return o;
  };
  auto note = [&](std::string s) { layouts_.notes[&op].push_back(std::move(s)); };
  switch (op.kind()) {
  case ir::OpKind::Load: {
    const ir::Type &pt = op.operand(0)->type();
    if (pt.isScalar() || !axes_)
      return;
    if (deferredLoads_.count(&op)) {
      note("load: done by its trans users in their layouts (no staging)");
      return;
    }
    for (const auto &[loop, L] : mmaLoops_)
      if (L->skipped.count(&op))
        return; // the matmul loop's stream (planLoop)
    for (const auto &[loop, L] : valuePipes_)
      for (size_t w = 0; w < L->numStreams; ++w)
        if (L->streams[w].load == &op) { // the values pipeline's stream
          const MmaLoop::Stream &s = L->streams[w];
          int64_t rowLen = s.transposed ? s.rows : s.cols;
          Layout sh = Layout::shared(s.transposed ? std::vector<int64_t>{0, 1}
                                                  : std::vector<int64_t>{1, 0},
                                     s.swizzle ? 0 : rowLen, s.swizzle ? 1 : s.pitch - rowLen,
                                     s.swizzle, L->stages, s.transposed);
          setLayout(op.result(), sh);
          addConversion(op, "result", Layout::blocked(pt.shape, T_, vec_), sh, M::CpAsync,
                        "cp.async 16-byte chunks from global memory, " + std::to_string(L->ahead) +
                            (L->ahead == 1 ? " trip" : " trips") + " ahead (no registers)" +
                            (s.recomputed ? ", pointers recomputed for that trip" : "") +
                            (s.mask ? ", chunks masked off zero-filled" : "") +
                            (w == 0 ? "; the trip's wait_group and barrier" : ""),
                        static_cast<size_t>(s.rows * s.cols) * byteSize(s.tile->dtype),
                        w == 0 ? 1 : 0, depth);
          return;
        }
    const ir::Value *ptr = op.operand(0);
    const ir::Value *mask = op.numOperands() > 1 ? op.operand(1) : nullptr;
    const ir::Value *other = op.numOperands() > 2 ? op.operand(2) : nullptr;
    if (auto perm = coalescingPerm(ptr, mask, other)) {
      accessPerm_[&op] = *perm;
      ir::Shape ps;
      for (int64_t p : *perm)
        ps.push_back(pt.shape[static_cast<size_t>(p)]);
      AccessPlan plan = planAccess(ptr, mask, ps, static_cast<size_t>(perm->back()));
      Layout coalesced = Layout::blocked(pt.shape, T_, vec_, *perm);
      note(runNote("load (coalesced along axis " + std::to_string(perm->back()) + ")", plan.run,
                   pt.dtype, plan.aligned, plan.maskUniform));
      int64_t n = pt.numElements(), pad = pt.shape.back();
      size_t bytes = static_cast<size_t>(pad > 1 ? n + n / pad : n) * elemBytesOf(op.result()->type());
      addConversion(op, "result", coalesced, blockedOf(op.result()->type()), M::Shared,
                    "loaded in the coalesced order, exchanged through shared memory", bytes, 2,
                    depth);
      return;
    }
    AccessPlan plan = planAccess(ptr, mask, pt.shape, pt.rank() - 1);
    note(runNote("load", plan.run, pt.dtype, plan.aligned, plan.maskUniform));
    return;
  }
  case ir::OpKind::Store: {
    const ir::Type &pt = op.operand(0)->type();
    if (pt.isScalar() || !axes_)
      return;
    const ir::Value *ptr = op.operand(0), *val = op.operand(1);
    const ir::Value *mask = op.numOperands() > 2 ? op.operand(2) : nullptr;
    if (!repeatedAddresses(op).empty()) {
      note("store: element by element (repeated addresses: the last one in order writes)");
      return;
    }
    if (!val->type().isScalar())
      if (auto perm = coalescingPerm(ptr, mask, nullptr)) {
        accessPerm_[&op] = *perm;
        ir::Shape ps;
        for (int64_t p : *perm)
          ps.push_back(pt.shape[static_cast<size_t>(p)]);
        AccessPlan plan = planAccess(ptr, mask, ps, static_cast<size_t>(perm->back()));
        note(runNote("store (coalesced along axis " + std::to_string(perm->back()) + ")", plan.run,
                     pt.dtype, plan.aligned, plan.maskUniform));
        int64_t n = pt.numElements(), pad = pt.shape.back();
        size_t bytes = static_cast<size_t>(pad > 1 ? n + n / pad : n) * elemBytesOf(val->type());
        addConversion(op, "operand 1", layoutOf(val), Layout::blocked(pt.shape, T_, vec_, *perm),
                      M::Shared, "exchanged through shared memory into the coalesced order", bytes,
                      2, depth);
        return;
      }
    AccessPlan plan = planAccess(ptr, mask, pt.shape, pt.rank() - 1);
    note(runNote("store", plan.run, pt.dtype, plan.aligned, plan.maskUniform));
    return;
  }
  case ir::OpKind::Broadcast:
  case ir::OpKind::Trans: {
    const ir::Type &in = op.operand(0)->type(), &out = op.result()->type();
    if (in.isScalar())
      return;
    bool trans = op.kind() == ir::OpKind::Trans;
    const ir::Op *src = op.operand(0)->definingOp();
    Layout from = layoutOf(op.operand(0)), to = blockedOf(out);
    if (!trans && in.shape == out.shape)
      return;
    if (trans && src && deferredLoads_.count(src)) {
      addConversion(op, "operand 0", Layout::blocked(in.shape, T_, vec_, op.intsAttr("perm")), to,
                    M::Free, "the load is done in this layout (fused into the trans)", 0, 0, depth);
      return;
    }
    if (rematDecision(op)) {
      remat_.insert(&op);
      addConversion(op, "operand 0", from, to, M::Free,
                    "recomputed at each element's coordinates (remat)", 0, 0, depth);
      return;
    }
    if (in.numElements() == 1) {
      addConversion(op, "operand 0", from, to, M::Free, "every thread holds the one element", 0, 0,
                    depth);
      return;
    }
    int64_t n = in.numElements(), pad = trans && in.rank() >= 2 ? in.shape.back() : 0;
    size_t bytes = static_cast<size_t>(pad > 1 ? n + n / pad : n) * elemBytesOf(in);
    Layout staged = Layout::shared(rowOrder(in.rank()), pad > 1 ? pad : 0, 1);
    addConversion(op, "operand 0", from, to, M::Shared, "through " + staged.str(), bytes, 2, depth);
    return;
  }
  case ir::OpKind::Reduce: {
    const ir::Type &in = op.operand(0)->type(), &out = op.result()->type();
    int64_t axis = op.intAttr("axis");
    int64_t len = in.shape[static_cast<size_t>(axis)];
    int64_t inner = product(in.shape, static_cast<size_t>(axis) + 1, in.rank());
    int64_t outer = product(in.shape, 0, static_cast<size_t>(axis));
    if (len & (len - 1))
      throw Unsupported("a reduction over an axis of " + std::to_string(len) +
                        " elements (not a power of two)"); // as lowerReduce
    const std::string &kind = op.strAttr("kind");
    bool isArg = kind == "argmax" || kind == "argmin";
    DType acc = kind == "add" ? addAccumulator(in.dtype) : in.dtype;
    auto [slotLevels, laneLevels] =
        reduceLevelsInWarp(in.numElements(), inner, len, reduceAnyOrder(kind, acc));
    int64_t levels = slotLevels + laneLevels, len2 = len >> levels;
    Layout partial = Layout::slice(layoutOf(op.operand(0)), axis);
    std::string tree = std::to_string(slotLevels) + " tree levels in registers, " +
                       std::to_string(laneLevels) + " across lanes (shfl.sync)";
    if (len2 == 1 && outer * inner == 1) {
      addConversion(op, "result", partial, blockedOf(out), M::Registers,
                    tree + "; every thread holds the result", 0, 0, depth);
      return;
    }
    int64_t nOut = out.isScalar() ? 1 : out.numElements();
    bool fold = len2 * slotsOf(nOut) <= 64; // kMaxFoldReads (LowerReduce.cpp)
    size_t bytes = alignUp(static_cast<size_t>(outer * len2 * inner) * byteSize(acc));
    size_t idxBytes = isArg ? alignUp(static_cast<size_t>(outer * len2 * inner) * 4) : 0;
    std::string rest =
        len2 == 1 ? ""
        : fold    ? ", " + std::to_string(log2Ceil(len2)) + " levels folded by each reader"
               : ", " + std::to_string(log2Ceil(len2)) + " levels across threads in shared memory";
    addConversion(op, "result", partial, blockedOf(out), M::Shared,
                  tree + "; partial results through shared memory" + rest,
                  (fold ? 1 : 2) * (bytes + idxBytes), 2 + (fold ? 0 : log2Ceil(len2)), depth);
    return;
  }
  case ir::OpKind::Dot: {
    for (const auto &[loop, L] : mmaLoops_)
      if (L->dot == &op)
        return planLoopDot(*L, depth);
    MmaPlan p;
    if (planMma(op, p) && p.bytes <= kMaxSharedBytes) {
      mmaDots_.insert(&op);
      Layout acc = Layout::mma(2, {16, 8, p.kStep}, {p.tileM, p.tileN}, opts_.numWarps);
      int64_t in = static_cast<int64_t>(byteSize(p.a->dtype));
      int64_t kw = std::max<int64_t>(1, 4 / in);
      addConversion(
          op, "operand 0", layoutOf(op.operand(0)), Layout::dotOperand(0, acc, kw), M::Shared,
          "through " + Layout::shared({1, 0}, p.k, p.pitchA - p.k).str() + " and ldmatrix",
          static_cast<size_t>(p.m * p.pitchA * in), 2, depth);
      addConversion(op, "operand 1", layoutOf(op.operand(1)), Layout::dotOperand(1, acc, kw),
                    M::Shared,
                    "through " +
                        Layout::shared({1, 0}, p.bTransposed ? p.k : p.n,
                                       p.pitchB - (p.bTransposed ? p.k : p.n), 0, 1, p.bTransposed)
                            .str() +
                        " and ldmatrix (same barriers)",
                    static_cast<size_t>((p.bTransposed ? p.n : p.k) * p.pitchB * in), 0, depth);
      size_t accBytes = static_cast<size_t>(p.m * p.pitchC) * 4;
      if (p.zeroAcc)
        addConversion(op, "operand 2", layoutOf(op.operand(2)), acc, M::Free,
                      "+0: the fragments start at zero", 0, 0, depth);
      else
        addConversion(op, "operand 2", layoutOf(op.operand(2)), acc, M::Shared,
                      "through shared memory (same barriers)", accBytes, 0, depth);
      addConversion(op, "result", acc, blockedOf(op.result()->type()), M::Shared,
                    "through shared memory", accBytes, 1, depth);
      note("`@` on mma.sync (m16n8k" + std::to_string(p.kStep) + ")");
      return;
    }
    const ir::Type &a = op.operand(0)->type(), &b = op.operand(1)->type();
    Layout sh = Layout::shared(rowOrder(a.rank()));
    addConversion(op, "operand 0", layoutOf(op.operand(0)), sh, M::Shared,
                  "staged for the products",
                  alignUp(static_cast<size_t>(a.numElements()) * elemBytesOf(a)), 2, depth);
    addConversion(op, "operand 1", layoutOf(op.operand(1)), sh, M::Shared,
                  "staged for the products (same barriers)",
                  static_cast<size_t>(b.numElements()) * elemBytesOf(b), 0, depth);
    note("`@` on CUDA cores: each thread's result elements, k ascending, from shared memory");
    return;
  }
  case ir::OpKind::ExtractSlice:
  case ir::OpKind::InsertSlice: {
    bool extract = op.kind() == ir::OpKind::ExtractSlice;
    const ir::Type &in = op.operand(0)->type();
    const ir::Type &part = extract ? op.result()->type() : op.operand(2)->type();
    int64_t axis = op.intAttr("axis"),
            inner = product(in.shape, static_cast<size_t>(axis) + 1, in.rank());
    const ir::Value *moved = extract ? op.operand(0) : op.operand(2);
    Layout to = extract ? blockedOf(op.result()->type()) : blockedOf(in);
    if (!part.isScalar() && sliceIsLocal(in.numElements(), part.numElements(), inner)) {
      addConversion(op, extract ? "operand 0" : "operand 2", layoutOf(moved), to, M::Registers,
                    "selects between each thread's own slots", 0, 0, depth);
      return;
    }
    const ir::Type &staged = extract ? in : part;
    if (extract && in.numElements() == 1)
      return;
    addConversion(op, extract ? "operand 0" : "operand 2", layoutOf(moved), to, M::Shared,
                  "through shared memory",
                  static_cast<size_t>(staged.isScalar() ? 1 : staged.numElements()) *
                      elemBytesOf(staged),
                  2, depth);
    return;
  }
  case ir::OpKind::Print:
    for (size_t i = 0; i < op.numOperands(); ++i) {
      const ir::Type &t = op.operand(static_cast<unsigned>(i))->type();
      if (!t.isScalar())
        addConversion(op, "operand " + std::to_string(i),
                      layoutOf(op.operand(static_cast<unsigned>(i))),
                      Layout::shared(rowOrder(t.rank())), M::Shared, "staged for thread 0 to print",
                      static_cast<size_t>(t.numElements()) * elemBytesOf(t), 2, depth);
    }
    return;
  case ir::OpKind::AtomicRMW:
  case ir::OpKind::AtomicCas:
    if (op.operand(0)->type().isScalar()) {
      // Done by thread 0 between barriers; its old value shared through shared memory.
      Layout uniform = blockedOf(op.result()->type());
      addConversion(op, "result", uniform, uniform, M::Shared,
                    "a scalar atomic: thread 0 does it, the old value shared",
                    elemBytesOf(op.result()->type()), 2, depth);
    }
    return;
  case ir::OpKind::DebugBarrier:
    layouts_.plainBarriers[depth > 0 ? 1 : 0] += 1;
    note("a barrier (debug_barrier)");
    return;
  case ir::OpKind::For:
  case ir::OpKind::While:
    if (auto it = mmaLoops_.find(&op); it != mmaLoops_.end())
      planLoop(*it->second, depth);
    if (auto it = valuePipes_.find(&op); it != valuePipes_.end())
      planValuePipeLoop(op, *it->second, depth);
    if (auto why = valuePipeWhyNot_.find(&op); why != valuePipeWhyNot_.end())
      layouts_.notes[&op].push_back(
          (valuePipes_.count(&op) ? "values pipeline, partly: " : "values pipeline not taken: ") +
          why->second);
    planMmaValueLoop(op, depth);
    return;
  default: return;
  }
}

/// A matmul loop (LowerMmaLoop.cpp): acc in fragments across the trips, a
/// and b through cp.async stages or staged per trip.
void Lowerer::planLoop(const MmaLoop &L, int depth) {
  using M = Conversion::Mechanism;
  const MmaPlan &p = L.p;
  Layout acc = L.wgmma ? Layout::mma(3, {16, p.tileN, p.kStep}, {16, p.tileN}, opts_.numWarps)
                       : Layout::mma(2, {16, 8, p.kStep}, {p.tileM, p.tileN}, opts_.numWarps);
  const ir::Op &loop = *L.loop;
  size_t first = L.isFor ? 3 : 0;
  const ir::Value *init = loop.operand(static_cast<unsigned>(first + L.accPos));
  // The carried acc is in fragments in the body (and the condition region).
  setLayout(L.body->arg(static_cast<unsigned>(L.argBase + L.accPos)), acc);
  if (L.cond)
    setLayout(L.cond->arg(static_cast<unsigned>(L.accPos)), acc);
  setLayout(L.dot->result(), acc);
  const ir::Op *def = init->definingOp();
  size_t accBytes = static_cast<size_t>(p.m * p.pitchC) * byteSize(p.c->dtype);
  Layout initLayout =
      layouts_.values.count(init) ? layouts_.values.at(init) : blockedOf(init->type());
  if (def && def->kind() == ir::OpKind::Constant)
    addConversion(loop, "acc before the loop", initLayout, acc, M::Free,
                  "a constant: the fragments start at it", 0, 0, depth);
  else
    addConversion(loop, "acc before the loop", initLayout, acc, M::Shared, "through shared memory",
                  accBytes, 2, depth);
  if (L.tma) {
    Layout first = streamLayout(L, 0);
    addConversion(loop, "a and b before the loop", first, first, M::Tma,
                  "the first " + std::to_string(L.ahead) +
                      " trips' tiles, each stage's by one thread with cp.async.bulk.tensor and "
                      "an mbarrier (the mbarriers set up between two barriers: earlier readers of "
                      "the stages are done, every waiter after; one after the loop, before they "
                      "are invalidated)",
                  static_cast<size_t>(L.ahead) * (streamBytes(L, 0) + streamBytes(L, 1)), 3, depth);
  } else if (L.pipelined) {
    Layout first = streamLayout(L, 0);
    addConversion(loop, "a and b before the loop", first, first, M::CpAsync,
                  "the first " + std::to_string(L.ahead) +
                      " trips' copies (a barrier first: earlier readers of the stages are done)",
                  static_cast<size_t>(L.ahead) * (streamBytes(L, 0) + streamBytes(L, 1)), 1, depth);
  }
  if (L.accCast) { // cast on the fragments, its narrow result converted
    const ir::Type &t = L.accCast->result()->type();
    setLayout(loop.result(static_cast<unsigned>(L.accPos)), acc);
    // Its result is in the blocked layout (its users read it there); the
    // conversion says where the cast ran.
    setLayout(L.accCast->result(), blockedOf(t));
    addConversion(*L.accCast, "result", acc, blockedOf(t), M::Shared,
                  "the loop's acc cast to " + std::string(irName(t.dtype)) +
                      " on its fragments first, then staged (not as " +
                      std::string(irName(p.c->dtype)) + ")",
                  static_cast<size_t>(p.m * p.pitchC) * byteSize(t.dtype), 2, depth);
  } else {
    addConversion(loop, "acc after the loop", acc,
                  blockedOf(loop.result(static_cast<unsigned>(L.accPos))->type()), M::Shared,
                  "through shared memory", accBytes, 2, depth);
  }
  layouts_.notes[&loop].push_back(
      std::string("matmul loop: acc += a @ b on ") +
      (L.wgmma ? "wgmma.mma_async (sm_90a)" : "mma.sync") + ", acc in registers across trips" +
      (L.tma ? ", a and b in " + std::to_string(L.stages) + " stages filled by the TMA " +
                   std::to_string(L.ahead) +
                   " trips ahead (a trip the tensor maps cannot copy exactly: cp.async)"
       : L.pipelined ? ", a and b in " + std::to_string(L.stages) + " cp.async stages issued " +
                           std::to_string(L.ahead) + " trips ahead"
                     : ", a and b staged from registers every trip"));
}

/// Bytes a stream copies per trip.
size_t Lowerer::streamBytes(const MmaLoop &L, size_t w) const {
  const MmaLoop::Stream &s = L.streams[w];
  return static_cast<size_t>(s.rows * s.cols) * byteSize(s.tile->dtype);
}

/// A pipelined stream's stages: rows padded (mma.sync) or swizzled (wgmma).
Layout Lowerer::streamLayout(const MmaLoop &L, size_t w) const {
  const MmaLoop::Stream &s = L.streams[w];
  return Layout::shared({1, 0}, s.swizzle ? 0 : s.cols, s.pitch - s.cols, s.swizzle, L.stages);
}

void Lowerer::planLoopDot(const MmaLoop &L, int depth) {
  using M = Conversion::Mechanism;
  const MmaPlan &p = L.p;
  const ir::Op &dot = *L.dot;
  const Layout &acc = layouts_.values.at(dot.result());
  int64_t in = static_cast<int64_t>(byteSize(p.a->dtype));
  int64_t kw = std::max<int64_t>(1, 4 / in);
  if (L.pipelined) {
    for (size_t w = 0; w < 2; ++w) {
      const MmaLoop::Stream &s = L.streams[w];
      Layout sh = streamLayout(L, w);
      setLayout(s.load->result(), sh);
      size_t bytes = streamBytes(L, w);
      if (L.tma)
        addConversion(
            *s.load, "result", Layout::blocked(s.tile->shape, T_, vec_), sh, M::Tma,
            "cp.async.bulk.tensor of " +
                std::to_string(s.cols * static_cast<int64_t>(byteSize(s.tile->dtype)) / s.swizzle) +
                " box(es) of " + std::to_string(s.rows) + " rows from tensor map " +
                std::to_string(s.tmaMap) + ", " + std::to_string(L.ahead) +
                " trips ahead (no registers)" +
                (w == 0 ? std::string("; the trip waits on its stage's mbarrier") +
                              (L.wgmmaPending ? "" : " and a barrier")
                        : ""),
            bytes, w == 0 ? 1 : 0, depth); // one barrier a trip either way
      else
        addConversion(*s.load, "result", Layout::blocked(s.tile->shape, T_, vec_), sh, M::CpAsync,
                      "cp.async 16-byte chunks from global memory, " + std::to_string(L.ahead) +
                          " trips ahead (no registers)",
                      bytes, w == 0 ? (L.wgmma && L.wgmmaPending ? 2 : 1) : 0, depth);
      if (L.wgmma && L.transposeB && w == 1)
        addConversion(dot, "operand 1", sh,
                      Layout::shared({1, 0}, 0, 1, L.btSwizzle, L.stages, true), M::Shared,
                      "transposed every trip into n rows of k bytes (wgmma reads 8-bit operands "
                      "K-major only): 4 x 4-byte blocks, ld.shared.b32, prmt, st.shared.b32, "
                      "fence.proxy.async and a barrier; wgmma reads it through descriptors",
                      bytes, 1, depth);
      else if (L.wgmma)
        addConversion(dot, "operand " + std::to_string(w), sh, sh, M::Free,
                      "wgmma reads shared memory through descriptors", 0, 0, depth);
      else
        addConversion(dot, "operand " + std::to_string(w), sh,
                      Layout::dotOperand(static_cast<int>(w), acc, kw), M::Registers,
                      "ldmatrix from the stage", 0, 0, depth);
    }
    return;
  }
  addConversion(dot, "operand 0", layouts_.values.at(dot.operand(0)),
                Layout::dotOperand(0, acc, kw), M::Shared,
                "through " + Layout::shared({1, 0}, p.k, p.pitchA - p.k).str() + " and ldmatrix",
                static_cast<size_t>(p.m * p.pitchA * in), 2, depth);
  addConversion(dot, "operand 1", layouts_.values.at(dot.operand(1)),
                Layout::dotOperand(1, acc, kw), M::Shared,
                "through " +
                    Layout::shared({1, 0}, p.bTransposed ? p.k : p.n,
                                   p.pitchB - (p.bTransposed ? p.k : p.n), 0, 1, p.bTransposed)
                        .str() +
                    " and ldmatrix (same barriers)",
                static_cast<size_t>((p.bTransposed ? p.n : p.k) * p.pitchB * in), 0, depth);
}

} // namespace tc::codegen::lower

namespace tc::codegen {

bool assignLayouts(const ir::Module &module, const ir::Function &fn, const Options &opts,
                   KernelLayouts &out, std::string &error) {
  static const unsigned kWarps[] = {1, 2, 4, 8, 16, 32};
  if (std::find(std::begin(kWarps), std::end(kWarps), opts.numWarps) == std::end(kWarps)) {
    error = "num_warps must be 1, 2, 4, 8, 16 or 32 (got " + std::to_string(opts.numWarps) + ")";
    return false;
  }
  llvm::LLVMContext ctx;
  try {
    lower::Lowerer l(module, fn, opts, ctx);
    out = l.layoutsOnly();
  } catch (const lower::Unsupported &e) {
    std::string what = e.what();
    error = what.rfind("internal:", 0) == 0
                ? "internal error in the GPU backend: " + what.substr(10)
                : "not supported by the GPU backend yet: " + what;
    return false;
  }
  return true;
}

} // namespace tc::codegen
