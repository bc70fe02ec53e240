//===- LowerMmaValues.cpp - Tile values that live in mma.sync fragments ---===//
//
// Option "mma-values" (docs/gpu-perf.md): the result of an `@` on mma.sync
// stays in the accumulator's registers (#mma) when something reduces it along
// its rows (attention's S = Q K^T: row max, exp2, row sum), and the values
// computed from it stay there too:
//   * #mma of an [m, n] tile (m a multiple of 16 * num_warps, n of 16): warp w
//     owns rows [w * tm, (w + 1) * tm), tm = m / num_warps, all n columns, in
//     m16n8 accumulator fragments: slot (i * n/8 + j) * 4 + 2h + e of lane
//     4 * g + t holds row w * tm + 16i + 8h + g, column 8j + 2t + e (the PTX
//     ISA's c0..c3 of fragment (i, j));
//   * #slice<{dim = 1, parent = #mma}> of an [m] or [m, 1] tile: slot 2i + h
//     holds row w * tm + 16i + 8h + g (the 4 lanes of a quad hold it alike);
//   * elementwise ops of such values (and of scalars and splats) run slot by
//     slot; a reduction along axis 1 (add, max, min) runs the reference's
//     pairwise tree for add: column bit 0 in the thread, bits 1-2 across the
//     lanes of a quad (shfl.sync.bfly 1, 2), the rest in the thread again, the
//     same combines in the same order as interp/ExecReduce.cpp; max and min
//     (associative and commutative) fold the thread's columns first, then
//     two shuffles per row; no shared memory, no barrier;
//   * x[:, newaxis] of a row slice and its broadcast are free;
//   * loop-carried values whose yielded value lives there stay there;
//   * an `@` whose accumulator lives there accumulates into it, and its a
//     operand (fp16) comes from registers (two n8 accumulator fragments
//     converted to f16 pairs are one m16k16 a fragment, FlashAttention-2's
//     register trick); b is staged in shared memory and read with ldmatrix.
// Everything else takes the blocked layout: a value one of whose users needs
// it is converted through shared memory where it is defined.
//
//===----------------------------------------------------------------------===//
#include "codegen/LowerMma.h"
#include "codegen/MmaFragment.h"

#include <cmath>
#include <functional>

namespace tc::codegen::lower {

namespace {

bool isPow2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

bool isElementwise(ir::OpKind k) {
  switch (k) {
  case ir::OpKind::Cast:
  case ir::OpKind::Neg:
  case ir::OpKind::Abs:
  case ir::OpKind::Exp:
  case ir::OpKind::Exp2:
  case ir::OpKind::Log:
  case ir::OpKind::Log2:
  case ir::OpKind::Sqrt:
  case ir::OpKind::Rsqrt:
  case ir::OpKind::Add:
  case ir::OpKind::Sub:
  case ir::OpKind::Mul:
  case ir::OpKind::Div:
  case ir::OpKind::Min:
  case ir::OpKind::Max:
  case ir::OpKind::CmpEq:
  case ir::OpKind::CmpNe:
  case ir::OpKind::CmpLt:
  case ir::OpKind::CmpLe:
  case ir::OpKind::CmpGt:
  case ir::OpKind::CmpGe:
  case ir::OpKind::Fma:
  case ir::OpKind::Select: return true;
  default: return false;
  }
}

} // namespace

/// Whether a value of type t can live in #mma (rank 2, n >= 16) or its row
/// slice (rank 1, or rank 2 with n = 1) for this kernel's warps.
bool Lowerer::mmaValueShape(const ir::Type &t) const {
  if (t.isScalar() || t.isPtr || t.dtype == DType::F64 || byteSize(t.dtype) > 4 ||
      (t.rank() != 1 && t.rank() != 2))
    return false;
  int64_t m = t.shape[0], w = opts_.numWarps;
  if (m % (16 * w) || m / w > 64)
    return false;
  if (t.rank() == 1 || t.shape[1] == 1)
    return true;
  int64_t n = t.shape[1];
  return n % 16 == 0 && (m / w / 16) * (n / 8) * 4 <= 128;
}

int64_t Lowerer::mmaSlots(const ir::Type &t) const {
  int64_t fm = t.shape[0] / opts_.numWarps / 16;
  if (t.rank() == 1 || t.shape[1] == 1)
    return fm * 2;
  return fm * (t.shape[1] / 8) * 4;
}

bool Lowerer::mmaUniform(const ir::Value *v) const {
  if (v->type().isScalar())
    return true;
  const ir::Op *d = v->definingOp();
  return d && ((d->kind() == ir::OpKind::Splat && d->operand(0)->type().isScalar()) ||
               d->kind() == ir::OpKind::Constant);
}

/// Index arithmetic (a mask such as `cols[newaxis, :] < N`) recomputed at each
/// slot's coordinates instead of converted (as remat does for blocked values).
bool Lowerer::mmaRemat(const ir::Value *v) {
  // (Not asked of the values in #mma: getMma takes those first. During
  // planMmaValues a mask may still be in the candidates; it leaves them.)
  return opts_.remat && !plantedBug("missing-barrier") && v->definingOp() &&
         !v->type().isScalar() && rematable(v);
}

/// An `@` that can accumulate into #mma: fp16/bf16 operands, fp32 result, not
/// a matmul loop's (LowerMmaLoop.cpp keeps those).
bool Lowerer::mmaValueDot(const ir::Op &op) const {
  for (const auto &[loop, L] : mmaLoops_)
    if (L->dot == &op)
      return false;
  const ir::Type &a = op.operand(0)->type(), &b = op.operand(1)->type(), &c = op.result()->type();
  return opts_.tensorCores && a.rank() == 2 && (a.dtype == DType::F16 || a.dtype == DType::BF16) &&
         b.dtype == a.dtype && c.dtype == DType::F32 && a.shape[1] % 16 == 0 && mmaValueShape(c) &&
         c.shape[1] > 1;
}

/// The values that live in #mma and the ops lowered on them: the greatest
/// set of candidates closed under the rules of each op (a loop-carried value
/// and the `@` that accumulates into it are taken together), then only the
/// groups of connected values that contain a row reduction (elsewhere the
/// blocked layout costs no more).
void Lowerer::planMmaValues() {
  if (!opts_.mmaValues || !opts_.tensorCores)
    return;
  std::vector<const ir::Op *> ops;
  ir::forEachOp(fn_.body(), [&](const ir::Op &op, unsigned) { ops.push_back(&op); });
  for (const ir::Op *op : ops)
    if (op->kind() == ir::OpKind::For || op->kind() == ir::OpKind::While)
      for (const auto &r : op->regions())
        if (const ir::Op *t = r->terminator())
          mmaLoopOf_[t] = op;
  std::unordered_set<const ir::Value *> &C = mmaRes_;
  auto in = [&](const ir::Value *v) { return C.count(v) > 0; };
  // What each loop carries: (the value yielded, the arguments, the result).
  struct Carry {
    const ir::Value *yielded, *result;
    std::vector<const ir::Value *> args;
  };
  std::vector<Carry> carries;
  auto candidate = [&](const ir::Op &op) -> bool {
    ir::OpKind k = op.kind();
    if (op.numResults() != 1 || !mmaValueShape(op.result()->type()))
      return false;
    const ir::Type &t = op.result()->type();
    if (k == ir::OpKind::Dot)
      return mmaValueDot(op);
    if (isElementwise(k))
      return true;
    if (k == ir::OpKind::Reduce) {
      const ir::Type &a = op.operand(0)->type();
      const std::string &kind = op.strAttr("kind");
      return a.rank() == 2 && op.intAttr("axis") == 1 && a.shape[1] >= 16 && isPow2(a.shape[1]) &&
             t.rank() == 1 &&
             t.dtype == a.dtype &&
             (kind == "max" || kind == "min" || (kind == "add" && addAccumulator(a.dtype) == a.dtype));
    }
    if (k == ir::OpKind::ExpandDims)
      return op.intAttr("axis") == 1 && op.operand(0)->type().rank() == 1;
    if (k == ir::OpKind::Broadcast) {
      const ir::Type &a = op.operand(0)->type();
      return a.rank() == 2 && a.shape[1] == 1 && t.rank() == 2 && t.shape[0] == a.shape[0] &&
             t.shape[1] > 1;
    }
    return false;
  };
  for (const ir::Op *opp : ops) {
    const ir::Op &op = *opp;
    if (candidate(op)) {
      C.insert(op.result());
      continue;
    }
    bool isFor = op.kind() == ir::OpKind::For;
    if ((!isFor && op.kind() != ir::OpKind::While) || mmaLoops_.count(&op))
      continue;
    const ir::Block &body = *op.region(isFor ? 0 : 1);
    const ir::Op *yield = body.terminator();
    if (!yield || yield->numOperands() != op.numResults())
      continue;
    if (!isFor) { // the condition must forward its arguments in place
      const ir::Op *cond = op.region(0)->terminator();
      if (!cond || cond->numOperands() != op.region(0)->numArgs() + 1)
        continue;
      bool inPlace = true;
      for (size_t p = 0; p < op.region(0)->numArgs(); ++p)
        inPlace = inPlace && cond->operand(static_cast<unsigned>(p + 1)) ==
                                 op.region(0)->arg(static_cast<unsigned>(p));
      if (!inPlace)
        continue;
    }
    for (size_t p = 0; p < op.numResults(); ++p) {
      const ir::Value *r = op.result(static_cast<unsigned>(p));
      if (!mmaValueShape(r->type()))
        continue;
      Carry c{yield->operand(static_cast<unsigned>(p)), r, {}};
      if (isFor)
        c.args.push_back(body.arg(static_cast<unsigned>(p + 1)));
      else
        c.args = {op.region(0)->arg(static_cast<unsigned>(p)), body.arg(static_cast<unsigned>(p))};
      C.insert(r);
      for (const ir::Value *a : c.args)
        C.insert(a);
      carries.push_back(c);
    }
  }
  // Remove what breaks a rule until nothing does.
  bool changed = true;
  while (changed) {
    changed = false;
    auto drop = [&](const ir::Value *v) {
      if (C.erase(v))
        changed = true;
    };
    for (const ir::Op *opp : ops) {
      const ir::Op &op = *opp;
      if (op.numResults() != 1 || !in(op.result()))
        continue;
      ir::OpKind k = op.kind();
      if (isElementwise(k)) {
        bool any = false, all = true;
        for (const ir::Value *v : op.operands()) {
          if (in(v))
            any = true;
          else if (!mmaUniform(v) && !mmaRemat(v))
            all = false;
        }
        if (!any || !all)
          drop(op.result());
      } else if (k == ir::OpKind::Reduce || k == ir::OpKind::ExpandDims ||
                 k == ir::OpKind::Broadcast) {
        if (!in(op.operand(0)))
          drop(op.result());
      }
    }
    for (const Carry &c : carries) {
      bool ok = in(c.yielded) && in(c.result);
      for (const ir::Value *a : c.args)
        ok = ok && in(a);
      if (!ok) {
        drop(c.result);
        for (const ir::Value *a : c.args)
          drop(a);
      }
    }
  }
  // Groups of connected values; keep those with a row reduction.
  std::unordered_map<const ir::Value *, const ir::Value *> parent;
  std::function<const ir::Value *(const ir::Value *)> find = [&](const ir::Value *v) {
    auto it = parent.find(v);
    if (it == parent.end() || it->second == v)
      return v;
    const ir::Value *r = find(it->second);
    parent[v] = r;
    return r;
  };
  auto join = [&](const ir::Value *a, const ir::Value *b) {
    if (in(a) && in(b))
      parent[find(a)] = find(b);
  };
  for (const ir::Op *opp : ops)
    if (opp->numResults() == 1 && in(opp->result()))
      for (const ir::Value *v : opp->operands())
        join(v, opp->result());
  for (const Carry &c : carries) {
    join(c.yielded, c.result);
    for (const ir::Value *a : c.args)
      join(a, c.result);
  }
  std::unordered_set<const ir::Value *> useful;
  for (const ir::Op *opp : ops)
    if (opp->kind() == ir::OpKind::Reduce && in(opp->result()))
      useful.insert(find(opp->result()));
  for (auto it = C.begin(); it != C.end();)
    it = useful.count(find(*it)) ? std::next(it) : C.erase(it);
  for (const ir::Op *opp : ops)
    if (opp->numResults() == 1 && in(opp->result()) && opp->kind() != ir::OpKind::For &&
        opp->kind() != ir::OpKind::While)
      mmaOps_.insert(opp);
  for (const ir::Value *v : C)
    setLayout(v, mmaValueLayout(v->type()));
  // Loop-invariant a operands (Q of attention): fragments loaded once.
  std::unordered_map<const ir::Op *, unsigned> depthOf;
  ir::forEachOp(fn_.body(), [&](const ir::Op &op, unsigned loops) { depthOf[&op] = loops; });
  for (const ir::Op *op : mmaOps_) {
    if (op->kind() != ir::OpKind::Dot)
      continue;
    const ir::Value *a = op->operand(0);
    const ir::Op *def = a->definingOp();
    if (C.count(a) || !def || mmaUniform(a) || def->numResults() != 1 || def->numRegions() ||
        depthOf[def] >= depthOf[op] || a == op->operand(1))
      continue;
    if (users_[a].size() == 1) // this `@` alone uses it
      mmaHoistA_[a] = static_cast<int>(depthOf[def]);
  }
  // Users that need the blocked layout of a value in #mma.
  for (const ir::Value *v : mmaRes_) {
    auto it = users_.find(v);
    if (it == users_.end())
      continue;
    for (const ir::Op *u : it->second) {
      bool ok = false;
      if (u->kind() == ir::OpKind::Dot && mmaOps_.count(u))
        ok = (v == u->operand(2)) ||
             (v == u->operand(0) && v->type().dtype == DType::F16 && v != u->operand(1));
      else if (u->kind() == ir::OpKind::Yield || u->kind() == ir::OpKind::Condition)
        ok = mmaCarried(*u, v);
      else
        ok = mmaOps_.count(u) > 0;
      if (!ok)
        mmaBlocked_.insert(v);
    }
  }
}

/// Whether the yield/condition u passes v only at positions carried in #mma.
bool Lowerer::mmaCarried(const ir::Op &u, const ir::Value *v) const {
  bool any = false;
  for (size_t i = 0; i < u.numOperands(); ++i)
    if (u.operand(static_cast<unsigned>(i)) == v) {
      if (!mmaCarriedAt(u, i))
        return false;
      any = true;
    }
  return any;
}

/// Whether operand i of the yield/condition u is carried in #mma by its loop.
bool Lowerer::mmaCarriedAt(const ir::Op &u, size_t i) const {
  auto it = mmaLoopOf_.find(&u);
  if (it == mmaLoopOf_.end())
    return false;
  bool cond = u.kind() == ir::OpKind::Condition;
  if (cond && i == 0)
    return false;
  return mmaRes_.count(it->second->result(static_cast<unsigned>(i - (cond ? 1 : 0)))) > 0;
}

/// The layout of a value in #mma: the accumulator's, or its row slice.
Layout Lowerer::mmaValueLayout(const ir::Type &t) const {
  int64_t w = opts_.numWarps, tm = t.shape[0] / w;
  if (t.rank() == 1)
    return Layout::slice(Layout::mma(2, {16, 8, 16}, {tm, 8}, w), 1);
  return Layout::mma(2, {16, 8, 16}, {tm, t.shape[1]}, w);
}

/// --emit=layouts for an op lowered on #mma values (planOp's part).
void Lowerer::planMmaValueOp(const ir::Op &op, int depth) {
  using M = Conversion::Mechanism;
  const ir::Type &out = op.result()->type();
  Layout to = mmaValueLayout(out);
  auto layoutOf = [&](const ir::Value *v) {
    auto it = layouts_.values.find(v);
    return it != layouts_.values.end() ? it->second : blockedOf(v->type());
  };
  auto fromBlocked = [&](const ir::Value *v, const std::string &what) {
    if (mmaRes_.count(v) || mmaUniform(v))
      return;
    if (mmaRemat(v)) {
      addConversion(op, what, layoutOf(v), mmaValueLayout(v->type()), M::Free,
                    "recomputed at each element's coordinates (remat)", 0, 0, depth);
      return;
    }
    addConversion(op, what, layoutOf(v), mmaValueLayout(v->type()), M::Shared,
                  "through shared memory", static_cast<size_t>(v->type().numElements()) *
                                               elemBytes(v->type()), 2, depth);
  };
  if (op.kind() == ir::OpKind::Dot) {
    const ir::Type &a = op.operand(0)->type(), &b = op.operand(1)->type();
    int64_t in = static_cast<int64_t>(byteSize(a.dtype));
    bool aRegs = mmaRes_.count(op.operand(0)) && a.dtype == DType::F16;
    Layout dotA = Layout::dotOperand(0, to, 2), dotB = Layout::dotOperand(1, to, 2);
    auto hoist = mmaHoistA_.find(op.operand(0));
    if (aRegs)
      addConversion(op, "operand 0", layoutOf(op.operand(0)), dotA, M::Registers,
                    "accumulator fragments packed to f16 pairs (no shared memory)", 0, 0, depth);
    else if (hoist != mmaHoistA_.end())
      addConversion(op, "operand 0", layoutOf(op.operand(0)), dotA, M::Shared,
                    "through " + Layout::shared({1, 0}, a.shape[1], 16 / in).str() +
                        " and ldmatrix once, where it is defined (loop-invariant)",
                    static_cast<size_t>(a.shape[0] * (a.shape[1] + 16 / in) * in), 2,
                    hoist->second);
    else
      addConversion(op, "operand 0", layoutOf(op.operand(0)), dotA, M::Shared,
                    "through " + Layout::shared({1, 0}, a.shape[1], 16 / in).str() + " and ldmatrix",
                    static_cast<size_t>(a.shape[0] * (a.shape[1] + 16 / in) * in), 2, depth);
    addConversion(op, "operand 1", layoutOf(op.operand(1)), dotB, M::Shared,
                  "through " + Layout::shared({1, 0}, b.shape[1], 16 / in).str() +
                      " and ldmatrix" + (aRegs || hoist != mmaHoistA_.end() ? "" : " (same barriers)"),
                  static_cast<size_t>(b.shape[0] * (b.shape[1] + 16 / in) * in),
                  aRegs || hoist != mmaHoistA_.end() ? 2 : 0, depth);
    if (!mmaRes_.count(op.operand(2)))
      fromBlocked(op.operand(2), "operand 2");
    layouts_.notes[&op].push_back("`@` on mma.sync (m16n8k16), the result kept in registers");
  } else {
    for (size_t i = 0; i < op.numOperands(); ++i)
      fromBlocked(op.operand(static_cast<unsigned>(i)), "operand " + std::to_string(i));
    if (op.kind() == ir::OpKind::Reduce)
      layouts_.notes[&op].push_back(
          "along the rows of #mma: in registers and across the 4 lanes of a quad (shfl.sync)");
  }
  setLayout(op.result(), to);
  planMmaValueBlocked(op, op.result(), depth);
}

/// A value in #mma that some user needs blocked: converted where it is defined.
void Lowerer::planMmaValueBlocked(const ir::Op &op, const ir::Value *v, int depth) {
  if (!mmaBlocked_.count(v))
    return;
  const ir::Type &t = v->type();
  addConversion(op, "result", mmaValueLayout(t), blockedOf(t), Conversion::Mechanism::Shared,
                "through shared memory (for a user off #mma)",
                static_cast<size_t>(t.numElements()) * elemBytes(t), 2, depth);
}

/// A loop carrying values in #mma: the initial values converted before it,
/// the arguments and results some user needs blocked.
void Lowerer::planMmaValueLoop(const ir::Op &op, int depth) {
  bool isFor = op.kind() == ir::OpKind::For;
  size_t first = isFor ? 3 : 0;
  for (size_t p = 0; p < op.numResults(); ++p) {
    const ir::Value *r = op.result(static_cast<unsigned>(p));
    if (!mmaRes_.count(r))
      continue;
    const ir::Value *init = op.operand(static_cast<unsigned>(first + p));
    if (!mmaRes_.count(init) && !mmaUniform(init))
      addConversion(op, "carried value " + std::to_string(p) + " before the loop",
                    blockedOf(init->type()), mmaValueLayout(init->type()),
                    Conversion::Mechanism::Shared, "through shared memory",
                    static_cast<size_t>(init->type().numElements()) * elemBytes(init->type()), 2,
                    depth);
    else if (mmaUniform(init))
      addConversion(op, "carried value " + std::to_string(p) + " before the loop",
                    blockedOf(init->type()), mmaValueLayout(init->type()),
                    Conversion::Mechanism::Free, "every thread holds the one value", 0, 0, depth);
    for (size_t rg = 0; rg < op.numRegions(); ++rg)
      planMmaValueBlocked(op, op.region(static_cast<unsigned>(rg))->arg(static_cast<unsigned>(p + (isFor ? 1 : 0))),
                          depth + 1);
    planMmaValueBlocked(op, r, depth);
  }
}

// ---- Lowering -----------------------------------------------------------------

/// The element maps are codegen/MmaFragment.h's (checked against the PTX
/// ISA's tables by tests/unit/MmaFragmentTest.cpp): slot s of thread tid
/// holds valueElem(shape, tid, s) = valueElem(shape, 0, s) plus
/// (warp * rowsPerWarp + group, 2 * thread-in-group); a row slice's slot s
/// holds rowSliceRow(shape, tid, s) = rowSliceRow(shape, 0, s) plus the same rows.
namespace {
mma::ValueShape shapeOf(const ir::Type &t, int64_t numWarps) {
  bool rows = t.rank() == 1 || t.shape[1] == 1;
  return {t.shape[0], rows ? 8 : t.shape[1], numWarps};
}
} // namespace

/// This thread's row of slot `s` (row slice: slot 2i + h; #mma: its fragment's).
llvm::Value *Lowerer::mmaRowOf(const ir::Type &t, int64_t s) {
  auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
  mma::ValueShape v = shapeOf(t, opts_.numWarps);
  int64_t base = (t.rank() == 1 || t.shape[1] == 1) ? mma::rowSliceRow(v, 0, s)
                                                    : mma::valueElem(v, 0, s).row;
  llvm::Value *lane = b_.CreateAnd(tid_, i32(31)), *warp = b_.CreateLShr(tid_, i32(5));
  return b_.CreateAdd(
      b_.CreateAdd(b_.CreateMul(warp, i32(v.rowsPerWarp())), b_.CreateLShr(lane, i32(2))),
      i32(base));
}

llvm::Value *Lowerer::mmaColOf(const ir::Type &t, int64_t s) {
  auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
  llvm::Value *lane = b_.CreateAnd(tid_, i32(31));
  return b_.CreateAdd(b_.CreateShl(b_.CreateAnd(lane, i32(3)), i32(1)),
                      i32(mma::valueElem(shapeOf(t, opts_.numWarps), 0, s).col));
}

/// Flat row-major index of slot s's element.
llvm::Value *Lowerer::mmaIndexOf(const ir::Type &t, int64_t s) {
  llvm::Value *row = mmaRowOf(t, s);
  if (t.rank() == 1 || t.shape[1] == 1)
    return row;
  return b_.CreateAdd(b_.CreateMul(row, b_.getInt32(static_cast<uint32_t>(t.shape[1]))),
                      mmaColOf(t, s));
}

/// #mma (or its slice) -> blocked, through shared memory.
Slots Lowerer::mmaToBlocked(const ir::Type &t, const Slots &s) {
  int64_t n = t.numElements();
  sharedBytes_ = std::max(sharedBytes_, static_cast<size_t>(n) * elemBytes(t));
  bool rows = t.rank() == 1 || t.shape[1] == 1;
  barrier();
  // A row slice: the first lane of each quad writes.
  llvm::Value *own = rows ? b_.CreateICmpEQ(b_.CreateAnd(tid_, b_.getInt32(3)), b_.getInt32(0))
                          : nullptr;
  emitGuarded(own, [&]() -> llvm::Value * {
    for (int64_t k = 0; k < mmaSlots(t); ++k)
      b_.CreateStore(se_.toMemory(slot(s, static_cast<size_t>(k)), t.dtype),
                     stagedAddr(t, 0, mmaIndexOf(t, k)));
    return nullptr;
  });
  barrier();
  Slots out;
  for (int64_t k = 0; k < slotsOf(n); ++k)
    out.push_back(readStaged(t, 0, elemIndex(n, k)));
  return out;
}

/// blocked -> #mma (or its slice), through shared memory.
Slots Lowerer::mmaFromBlocked(const ir::Type &t, const Slots &s) {
  barrier();
  stage(s, t, 0);
  barrier();
  Slots out;
  for (int64_t k = 0; k < mmaSlots(t); ++k)
    out.push_back(readStaged(t, 0, mmaIndexOf(t, k)));
  return out;
}

/// v's slots in #mma: its own, a uniform value's one slot, or converted.
Slots Lowerer::getMma(const ir::Value *v) {
  if (auto it = mmaValues_.find(v); it != mmaValues_.end())
    return it->second;
  if (mmaUniform(v))
    return {get(v)[0]};
  const ir::Type &t = v->type();
  if (mmaRemat(v) && t.rank() == 2) {
    RematMemo memo;
    Slots s;
    for (int64_t k = 0; k < mmaSlots(t); ++k)
      s.push_back(rematAt(v, {mmaRowOf(t, k), t.shape[1] == 1 ? b_.getInt32(0) : mmaColOf(t, k)},
                          memo));
    return s;
  }
  if (mmaRemat(v) && t.rank() == 1) {
    RematMemo memo;
    Slots s;
    for (int64_t k = 0; k < mmaSlots(t); ++k)
      s.push_back(rematAt(v, {mmaRowOf(t, k)}, memo));
    return s;
  }
  return mmaFromBlocked(t, get(v));
}

/// Binds v (in #mma when planned so, else blocked).
void Lowerer::bindValue(const ir::Value *v, Slots s) {
  if (!mmaRes_.count(v)) {
    values_[v] = std::move(s);
    return;
  }
  size_t n = static_cast<size_t>(mmaSlots(v->type()));
  if (s.size() == 1 && n > 1)
    s.assign(n, s[0]);
  if (mmaBlocked_.count(v))
    values_[v] = mmaToBlocked(v->type(), s);
  mmaValues_[v] = std::move(s);
}

/// A value's slots as a loop carries it (its layout's count).
Slots Lowerer::carriedSlots(const ir::Value *v, bool inMma) {
  if (inMma) {
    Slots s = getMma(v);
    size_t n = static_cast<size_t>(mmaSlots(v->type()));
    if (s.size() == 1 && n > 1)
      s.assign(n, s[0]);
    return s;
  }
  const Slots &s = get(v);
  Slots w;
  for (int64_t k = 0; k < slotsOf(v->type()); ++k)
    w.push_back(slot(s, static_cast<size_t>(k)));
  return w;
}

void Lowerer::lowerMmaValueOp(const ir::Op &op) {
  const ir::Type &out = op.result()->type();
  ir::OpKind k = op.kind();
  notePath("mma.values");
  if (k == ir::OpKind::Dot)
    return lowerMmaValueDot(op);
  if (k == ir::OpKind::ExpandDims)
    return bindValue(op.result(), getMma(op.operand(0)));
  if (k == ir::OpKind::Broadcast) {
    Slots in = getMma(op.operand(0)), s;
    mma::ValueShape v = shapeOf(out, opts_.numWarps);
    for (int64_t r = 0; r < mmaSlots(out); ++r)
      s.push_back(slot(in, static_cast<size_t>(mma::rowSlotOf(v, r))));
    return bindValue(op.result(), s);
  }
  if (k == ir::OpKind::Reduce)
    return lowerMmaValueReduce(op);
  // Elementwise: slot by slot.
  std::vector<Slots> xs;
  for (const ir::Value *v : op.operands())
    xs.push_back(getMma(v));
  Slots s;
  for (int64_t r = 0; r < mmaSlots(out); ++r) {
    Slots x;
    for (const Slots &o : xs)
      x.push_back(slot(o, static_cast<size_t>(r)));
    s.push_back(scalarOp(op, x));
  }
  bindValue(op.result(), s);
}

/// Along axis 1: the reference's pairwise tree over the column bits (bit 0
/// and bits >= 3 in the thread, bits 1 and 2 across the quad's lanes).
void Lowerer::lowerMmaValueReduce(const ir::Op &op) {
  const ir::Type &in = op.operand(0)->type();
  const std::string &kind = op.strAttr("kind");
  DType dt = in.dtype;
  int64_t n = in.shape[1], fn = n / 8, fm = in.shape[0] / opts_.numWarps / 16;
  Slots x = getMma(op.operand(0));
  if (x.size() == 1)
    x.assign(static_cast<size_t>(mmaSlots(in)), x[0]);
  auto comb = [&](llvm::Value *a, llvm::Value *c) { return combine(kind, dt, a, nullptr, c, nullptr).first; };
  Slots outS;
  for (int64_t i = 0; i < fm; ++i)
    for (int64_t h = 0; h < 2; ++h) {
      // Per n8 fragment j: its two columns (bit 0), then lanes (bits 1, 2).
      std::vector<llvm::Value *> part;
      for (int64_t j = 0; j < fn; ++j) {
        size_t r = static_cast<size_t>((i * fn + j) * 4 + h * 2);
        part.push_back(comb(x[r], x[r + 1]));
      }
      // max and min (maxNum/minNum with the signed-zero rule: associative and
      // commutative) fold the fragments first: two shuffles per row. add keeps
      // the reference's order (bit for bit the interpreter's sum).
      if (kind != "add")
        for (size_t step = 1; step < part.size(); step *= 2)
          for (size_t j = 0; j + step < part.size(); j += 2 * step)
            part[j] = comb(part[j], part[j + step]);
      if (kind != "add")
        part.resize(1);
      for (uint32_t mask : {1u, 2u}) {
        llvm::Value *upper =
            b_.CreateICmpNE(b_.CreateAnd(tid_, b_.getInt32(mask)), b_.getInt32(0));
        for (auto &p : part) {
          llvm::Value *other = shuffleXor(p, mask);
          llvm::Value *left = b_.CreateSelect(upper, other, p);
          llvm::Value *right = b_.CreateSelect(upper, p, other);
          p = comb(left, right);
        }
      }
      // Bits 3 and up: fragments j and j + 2^l.
      for (size_t step = 1; step < part.size(); step *= 2)
        for (size_t j = 0; j + step < part.size(); j += 2 * step)
          part[j] = comb(part[j], part[j + step]);
      outS.push_back(part[0]);
    }
  bindValue(op.result(), outS);
}

/// The a fragments of a loop-invariant a operand (m x k, fp16/bf16) of `@` on
/// #mma, loaded once where it is defined: staged in padded shared memory and
/// read with ldmatrix, fragment row i and k step s as registers (i * steps + s) * 4 + q.
void Lowerer::loadHoistedA(const ir::Value *v) {
  auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
  const ir::Type &t = v->type();
  int64_t m = t.shape[0], k = t.shape[1], in = static_cast<int64_t>(byteSize(t.dtype));
  int64_t pitch = k + 16 / in, tm = m / opts_.numWarps, steps = k / 16;
  sharedBytes_ = std::max(sharedBytes_, static_cast<size_t>(m * pitch * in));
  barrier();
  stageRows(values_.at(v), t, 0, pitch, false);
  barrier();
  // ldmatrix.x4 on a: lanes 0-15 give rows 0-15 of the first 8 k, lanes 16-31 of the next 8.
  llvm::Value *lane = b_.CreateAnd(tid_, i32(31)), *warp = b_.CreateLShr(tid_, i32(5));
  llvm::Value *row = b_.CreateAdd(b_.CreateMul(warp, i32(tm)), b_.CreateAnd(lane, i32(15)));
  llvm::Value *base =
      b_.CreateAdd(b_.CreateMul(row, i32(pitch)), b_.CreateMul(b_.CreateLShr(lane, i32(4)), i32(8)));
  Slots frags;
  for (int64_t i = 0; i < tm / 16; ++i)
    for (int64_t s = 0; s < steps; ++s) {
      Slots x = ldmatrix(t, 0, b_.CreateAdd(base, i32(16 * i * pitch + 16 * s)), false);
      frags.insert(frags.end(), x.begin(), x.end());
    }
  mmaAFrags_[v] = frags;
}

/// acc + a @ b with acc and the result in #mma: b (and a, unless it lives in
/// #mma as fp16) staged in padded shared memory and read with ldmatrix; each
/// warp runs its own rows' fragments over all columns.
void Lowerer::lowerMmaValueDot(const ir::Op &op) {
  auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
  MmaPlan p;
  if (!planMma(op, p))
    throw Unsupported("internal: an `@` in #mma without an mma.sync form");
  notePath("mma.sync");
  allowAllRegisters();
  int64_t w = opts_.numWarps, in = static_cast<int64_t>(byteSize(p.a->dtype));
  p.tileM = p.m / w;
  p.tileN = p.n;
  p.tilesN = 1;
  p.tiles = w;
  bool aRegs = mmaRes_.count(op.operand(0)) && p.a->dtype == DType::F16;
  auto hoisted = mmaAFrags_.find(op.operand(0)); // loaded before the loop
  bool aHoisted = !aRegs && hoisted != mmaAFrags_.end();
  p.pitchA = p.k + 16 / in;
  p.pitchB = p.n + 16 / in;
  p.offA = 0;
  p.offB = aRegs || aHoisted ? 0 : alignUp(static_cast<size_t>(p.m * p.pitchA * in));
  size_t bytes = p.offB + static_cast<size_t>(p.k * p.pitchB * in);
  sharedBytes_ = std::max(sharedBytes_, bytes);
  Slots acc;
  if (p.zeroAcc && !mmaRes_.count(op.operand(2)))
    acc.assign(static_cast<size_t>(mmaSlots(*p.c)), llvm::Constant::getNullValue(b_.getFloatTy()));
  else
    acc = carriedSlots(op.operand(2), true);
  Slots aFr;
  if (aRegs)
    aFr = carriedSlots(op.operand(0), true);
  barrier();
  if (!aRegs && !aHoisted)
    stageRows(get(op.operand(0)), *p.a, p.offA, p.pitchA, false);
  stageRows(get(op.operand(1)), *p.b, p.offB, p.pitchB, false);
  barrier();
  llvm::Value *lane = b_.CreateAnd(tid_, i32(31));
  llvm::Value *warp = b_.CreateLShr(tid_, i32(5));
  MmaTile t = mmaTileAt(p, warp, lane);
  auto *h2 = llvm::FixedVectorType::get(b_.getHalfTy(), 2);
  auto pack = [&](llvm::Value *lo, llvm::Value *hi) {
    llvm::Value *v = llvm::PoisonValue::get(h2);
    v = b_.CreateInsertElement(v, se_.toMemory(lo, DType::F16), uint64_t(0));
    v = b_.CreateInsertElement(v, se_.toMemory(hi, DType::F16), uint64_t(1));
    return b_.CreateBitCast(v, b_.getInt32Ty());
  };
  mma::ValueShape av{p.m, p.k, w}; // a in #mma
  for (int64_t s = 0; s < p.k / p.kStep; ++s) {
    std::vector<Slots> af, bf;
    for (int64_t i = 0; i < p.fragsM(); ++i) {
      if (aRegs) {
        // Register q holds a elements 2q, 2q + 1: accumulator fragments
        // 2s, 2s + 1 of a's rows (mma::aSlotOf).
        Slots regs;
        for (int64_t q = 0; q < 4; ++q)
          regs.push_back(pack(aFr[static_cast<size_t>(mma::aSlotOf(av, s, i, 2 * q))],
                              aFr[static_cast<size_t>(mma::aSlotOf(av, s, i, 2 * q + 1))]));
        af.push_back(regs);
      } else if (aHoisted) {
        size_t r = static_cast<size_t>((i * (p.k / p.kStep) + s) * 4);
        af.push_back(Slots(hoisted->second.begin() + static_cast<long>(r),
                           hoisted->second.begin() + static_cast<long>(r + 4)));
      } else {
        af.push_back(ldmatrix(*p.a, p.offA, b_.CreateAdd(t.a, i32(p.kStep * s + 16 * i * p.pitchA)),
                              false));
      }
    }
    for (int64_t j = 0; j < p.fragsN() / 2; ++j)
      bf.push_back(ldmatrix(*p.b, p.offB, b_.CreateAdd(t.b, i32(p.kStep * s * p.pitchB + 16 * j)),
                            true));
    for (int64_t i = 0; i < p.fragsM(); ++i)
      for (int64_t j = 0; j < p.fragsN(); ++j) {
        size_t r = static_cast<size_t>((i * p.fragsN() + j) * 4);
        const Slots &bj = bf[static_cast<size_t>(j / 2)];
        size_t bq = static_cast<size_t>(j % 2) * 2;
        Slots d = mmaSync(p, af[static_cast<size_t>(i)], bj[bq], bj[bq + 1],
                          Slots(acc.begin() + static_cast<long>(r),
                                acc.begin() + static_cast<long>(r + 4)));
        for (size_t q = 0; q < 4; ++q)
          acc[r + q] = d[q];
      }
  }
  bindValue(op.result(), acc);
}

} // namespace tc::codegen::lower
