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
//     lanes of a quad (shfl.sync.bfly 1, 2; each lane keeps half of the
//     fragments at each, a reduce-scatter), the fragment bits in the thread,
//     the top two across the quad again: the same combines in the same
//     order as interp/ExecReduce.cpp; max and min
//     (associative and commutative) fold the thread's columns first, then
//     two shuffles per row; no shared memory, no barrier;
//   * x[:, newaxis] of a row slice and its broadcast are free;
//   * loop-carried values whose yielded value lives there stay there;
//   * an `@` whose accumulator lives there accumulates into it, and its a
//     operand (fp16) comes from registers (two n8 accumulator fragments
//     converted to f16 pairs are one m16k16 a fragment, FlashAttention-2's
//     register trick); b is staged in shared memory and read with ldmatrix,
//     or streamed through cp.async stages (the values pipeline below), which
//     on sm_90 wgmma reads through descriptors (LowerWgmma.cpp's
//     wgmmaValueDot: a from registers, the same m16n8 accumulator fragments).
// Everything else takes the blocked layout: a value one of whose users needs
// it is converted through shared memory where it is defined.
//
//===----------------------------------------------------------------------===//
#include "codegen/LowerMma.h"
#include "codegen/MmaFragment.h"

#include <cmath>
#include <functional>
#include <optional>

namespace tc::codegen::lower {

namespace {

/// Classes of connected values (union-find with path compression); `join`
/// merges two values' classes, `find` gives a class's representative.
class ValueClasses {
public:
  const ir::Value *find(const ir::Value *v) {
    auto it = parent_.find(v);
    if (it == parent_.end() || it->second == v)
      return v;
    const ir::Value *r = find(it->second);
    parent_[v] = r;
    return r;
  }
  void join(const ir::Value *a, const ir::Value *b) { parent_[find(a)] = find(b); }

private:
  std::unordered_map<const ir::Value *, const ir::Value *> parent_;
};

/// The stream (of the values pipelines `pipes`) whose `@` reads the hoisted
/// a operand v from shared memory (wgmma), or null.
template <typename Pipes> auto stagedAStream(const Pipes &pipes, const ir::Value *v) {
  decltype(&pipes.begin()->second->streams[0]) found = nullptr;
  for (const auto &[op, L] : pipes)
    for (size_t w = 0; w < L->numStreams; ++w)
      if (L->streams[w].aShared && L->streams[w].user->operand(0) == v)
        found = &L->streams[w];
  return found;
}

/// Whether v is, or is computed through ops without regions from, a value
/// `hit` accepts.
bool derivedFrom(const ir::Value *v, const std::function<bool(const ir::Value *)> &hit) {
  std::vector<const ir::Value *> todo{v};
  std::unordered_set<const ir::Value *> seen;
  while (!todo.empty()) {
    const ir::Value *x = todo.back();
    todo.pop_back();
    if (!seen.insert(x).second)
      continue;
    if (hit(x))
      return true;
    const ir::Op *d = x->definingOp();
    if (!d || d->numRegions())
      continue;
    for (const ir::Value *o : d->operands())
      todo.push_back(o);
  }
  return false;
}

bool isLoopResult(const ir::Value *v) {
  const ir::Op *d = v->definingOp();
  return d && (d->kind() == ir::OpKind::For || d->kind() == ir::OpKind::While);
}

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
  return opts_.tensorCores && !mmaDeclined_.count(&op) && a.rank() == 2 && (a.dtype == DType::F16 || a.dtype == DType::BF16) &&
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
  ValueClasses classes;
  auto find = [&](const ir::Value *v) { return classes.find(v); };
  auto join = [&](const ir::Value *a, const ir::Value *b) {
    if (in(a) && in(b))
      classes.join(a, b);
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
    // Used only as the a operand of such `@`s, each in a loop below its
    // definition (Q of a causal attention's two loops: loaded once for both).
    bool onlyA = true;
    for (const ir::Op *u : users_[a])
      onlyA = onlyA && u->kind() == ir::OpKind::Dot && mmaOps_.count(u) && u->operand(0) == a &&
              u->operand(1) != a && depthOf[u] > depthOf[def];
    if (onlyA)
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
      else if (u->kind() == ir::OpKind::For || u->kind() == ir::OpKind::While)
        ok = mmaLoopInit(*u, v);
      else
        ok = mmaOps_.count(u) > 0;
      if (!ok)
        mmaBlocked_.insert(v);
    }
  }
  planValuePipes(ops);
  planKeyPermutation();
}

/// Option key-perm. The reference sums a row pairwise over its column index;
/// in #mma lane 4g + t holds columns 8j + 2t + e, so the levels of column
/// bits 1 and 2 cross lanes between the thread's own levels (8 shuffles and
/// 16 selects a row at n = 64). Where the columns of an `@`'s result are
/// keys it is free to permute them: its b (K^T) streams as rows of n, and
/// staging K's row 2 (n / 8) t + 2j + e as row 8j + 2t + e puts the key in
/// column 8j + 2t + e of the result. Each thread then holds consecutive keys,
/// and a row sum is its own adds and two shuffles, in the reference's order.
/// The permutation spreads to every #mma value computed from that result (a
/// class of values joined by elementwise ops, accumulators and loop-carried
/// values); P @ V with P from registers reads V's rows (keys again) staged in
/// the same order. A class is permuted where it has a row sum, every `@` that
/// produces a value in it has its b streamed as rows of n, and every `@` that
/// takes one from registers as its a has its b streamed as rows of k. Masks
/// recomputed at a slot's coordinates and conversions to and from the blocked
/// layout use the column's true index (mmaColOf).
void Lowerer::planKeyPermutation() {
  mmaPermuted_.clear();
  if (!opts_.keyPerm)
    return;
  auto full = [&](const ir::Value *v) {
    return mmaRes_.count(v) && v->type().rank() == 2 && v->type().shape[1] > 1;
  };
  ValueClasses classes;
  auto find = [&](const ir::Value *v) { return classes.find(v); };
  auto join = [&](const ir::Value *a, const ir::Value *b) {
    if (full(a) && full(b))
      classes.join(a, b);
  };
  for (const ir::Op *op : mmaOps_) {
    if (op->kind() == ir::OpKind::Dot)
      join(op->operand(2), op->result());
    else if (isElementwise(op->kind()))
      for (const ir::Value *v : op->operands())
        join(v, op->result());
  }
  for (const auto &[term, loop] : mmaLoopOf_) {
    bool cond = term->kind() == ir::OpKind::Condition;
    bool isFor = loop->kind() == ir::OpKind::For;
    for (size_t i = cond ? 1 : 0; i < term->numOperands(); ++i) {
      if (!mmaCarriedAt(*term, i))
        continue;
      auto pos = static_cast<unsigned>(i - (cond ? 1 : 0));
      const ir::Value *result = loop->result(pos);
      join(term->operand(static_cast<unsigned>(i)), result);
      // the initial value (another loop's result, in #mma) as the loop carries it
      join(loop->operand((isFor ? 3 : 0) + pos), result);
      if (isFor) {
        join(loop->region(0)->arg(pos + 1), result);
      } else {
        join(loop->region(0)->arg(pos), result);
        join(loop->region(1)->arg(pos), result);
      }
    }
  }
  std::unordered_set<const ir::Value *> useful, broken;
  for (const ir::Op *op : mmaOps_) {
    if (op->kind() == ir::OpKind::Reduce && op->strAttr("kind") == "add" && full(op->operand(0)))
      useful.insert(find(op->operand(0)));
    if (op->kind() != ir::OpKind::Dot)
      continue;
    const MmaLoop *pipe = nullptr;
    int sw = valueStreamOf(*op, &pipe);
    const MmaLoop::Stream *s = sw >= 0 ? &pipe->streams[static_cast<size_t>(sw)] : nullptr;
    if (full(op->result()) && !(s && s->transposed))
      broken.insert(find(op->result()));
    const ir::Value *a = op->operand(0);
    if (full(a) && a->type().dtype == DType::F16 && !(s && !s->transposed))
      broken.insert(find(a));
  }
  for (const ir::Value *v : mmaRes_)
    if (full(v) && useful.count(find(v)) && !broken.count(find(v)))
      mmaPermuted_.insert(v);
  if (mmaPermuted_.empty())
    return;
  // The streams staged in the permuted order.
  for (auto &[loop, L] : valuePipes_)
    for (size_t w = 0; w < L->numStreams; ++w) {
      MmaLoop::Stream &s = L->streams[w];
      const ir::Value *a = s.user->operand(0);
      if (keysPermuted(s.user->result()))
        s.keyPerm = s.user->result()->type().shape[1];
      else if (keysPermuted(a) && a->type().dtype == DType::F16)
        s.keyPerm = a->type().shape[1];
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

/// Whether the loop `loop` takes v only as initial values it carries in #mma
/// (a loop's result handed on to the next loop: a causal attention's two).
bool Lowerer::mmaLoopInit(const ir::Op &loop, const ir::Value *v) const {
  size_t first = loop.kind() == ir::OpKind::For ? 3 : 0;
  bool any = false;
  for (size_t i = 0; i < loop.numOperands(); ++i)
    if (loop.operand(static_cast<unsigned>(i)) == v) {
      if (i < first || i - first >= loop.numResults() ||
          !mmaRes_.count(loop.result(static_cast<unsigned>(i - first))))
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

/// Whether operand i of the yield/condition u is carried with its keys
/// permuted (as its loop's result is).
bool Lowerer::mmaCarriedPermuted(const ir::Op &u, size_t i) const {
  auto it = mmaLoopOf_.find(&u);
  if (it == mmaLoopOf_.end() || !mmaCarriedAt(u, i))
    return false;
  bool cond = u.kind() == ir::OpKind::Condition;
  return keysPermuted(it->second->result(static_cast<unsigned>(i - (cond ? 1 : 0))));
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
  const MmaLoop *pipe = nullptr;
  bool wgmma = op.kind() == ir::OpKind::Dot && valueStreamOf(op, &pipe) >= 0 && pipe->wgmma;
  if (wgmma) // wgmma's accumulators: per warp the same m16n8 fragments
    to = Layout::mma(3, {16, out.shape[1], 16}, {out.shape[0] / opts_.numWarps, out.shape[1]},
                     opts_.numWarps);
  if (op.kind() == ir::OpKind::Dot) {
    const ir::Type &a = op.operand(0)->type(), &b = op.operand(1)->type();
    int64_t in = static_cast<int64_t>(byteSize(a.dtype));
    bool aRegs = mmaRes_.count(op.operand(0)) && a.dtype == DType::F16;
    Layout dotA = Layout::dotOperand(0, to, 2), dotB = Layout::dotOperand(1, to, 2);
    auto hoist = mmaHoistA_.find(op.operand(0));
    const auto *staged = wgmma ? stagedAStream(valuePipes_, op.operand(0)) : nullptr;
    bool again =
        !aRegs && hoist != mmaHoistA_.end() && !mmaHoistNoted_.insert(op.operand(0)).second;
    if (aRegs)
      addConversion(op, "operand 0", layoutOf(op.operand(0)), dotA, M::Registers,
                    "accumulator fragments packed to f16 pairs (no shared memory)", 0, 0, depth);
    else if (again) // another `@` (another loop) reads the same a
      addConversion(op, "operand 0", layoutOf(op.operand(0)),
                    staged ? Layout::shared({1, 0}, 0, 1, staged->aSwizzle) : dotA,
                    staged ? M::Free : M::Registers,
                    staged ? "wgmma reads it from the region the first `@` above stored it in"
                           : "the fragments loaded once for the first `@` above",
                    0, 0, depth);
    else if (staged) {
      Layout sh = Layout::shared({1, 0}, 0, 1, staged->aSwizzle);
      addConversion(
          op, "operand 0", layoutOf(op.operand(0)), sh, M::Shared,
          std::string(staged->aLate ? "stored once, in the loop's prologue after the first "
                                      "trips' copies are issued (late-q: its load in flight "
                                      "with them; the first trip's barrier publishes it)"
                                    : "stored once, where it is defined (loop-invariant)") +
              ", in its own region for the whole loop; wgmma reads it through a "
              "matrix descriptor (no registers)",
          static_cast<size_t>(a.numElements() * in), staged->aLate ? 0 : 2, hoist->second);
    } else if (hoist != mmaHoistA_.end())
      addConversion(op, "operand 0", layoutOf(op.operand(0)), dotA, M::Shared,
                    "through " + Layout::shared({1, 0}, a.shape[1], 16 / in).str() +
                        " and ldmatrix once, where it is defined (loop-invariant)",
                    static_cast<size_t>(a.shape[0] * (a.shape[1] + 16 / in) * in), 2,
                    hoist->second);
    else
      addConversion(op, "operand 0", layoutOf(op.operand(0)), dotA, M::Shared,
                    "through " + Layout::shared({1, 0}, a.shape[1], 16 / in).str() + " and ldmatrix",
                    static_cast<size_t>(a.shape[0] * (a.shape[1] + 16 / in) * in), 2, depth);
    if (wgmma)
      addConversion(op, "operand 1", layoutOf(op.operand(1)), layoutOf(op.operand(1)), M::Free,
                    "wgmma reads its cp.async stage through a matrix descriptor (" +
                        std::to_string(pipe->stages) + " stages)",
                    0, 0, depth);
    else if (valueStreamOf(op, &pipe) >= 0)
      addConversion(op, "operand 1", layoutOf(op.operand(1)), dotB, M::Registers,
                    "ldmatrix from its cp.async stage (" + std::to_string(pipe->stages) +
                        " stages)",
                    0, 0, depth);
    else
      addConversion(op, "operand 1", layoutOf(op.operand(1)), dotB, M::Shared,
                    "through " + Layout::shared({1, 0}, b.shape[1], 16 / in).str() +
                        " and ldmatrix" +
                        (aRegs || hoist != mmaHoistA_.end() ? "" : " (same barriers)"),
                    static_cast<size_t>(b.shape[0] * (b.shape[1] + 16 / in) * in),
                    aRegs || hoist != mmaHoistA_.end() ? 2 : 0, depth);
    if (!mmaRes_.count(op.operand(2)))
      fromBlocked(op.operand(2), "operand 2");
    // With P @ V's wait deferred (planValuePipes), the trip's first `@`
    // waits for both groups, and the last one not at all.
    std::string wait = "wait_group 0";
    if (wgmma && pipe->deferDot == &op)
      wait = "no wait in the trip (the next trip's first `@` waits for it, the loop's exit "
             "after the last)";
    else if (wgmma && pipe->deferDot && pipe->streams[0].user == &op)
      wait = "wait_group 0 (also for the previous trip's last `@`)";
    layouts_.notes[&op].push_back(
        wgmma ? "`@` on wgmma.mma_async (m64n" + std::to_string(out.shape[1]) + "k16, a from " +
                    (staged ? "shared memory" : "registers") + ", sm_90a), " + wait +
                    ": the result kept in registers"
              : "`@` on mma.sync (m16n8k16), the result kept in registers");
    if (keysPermuted(op.result()))
      layouts_.notes[&op].push_back(
          "its columns permuted (key-perm): lane 4g + t holds columns 2 (n / 8) t + 2j + e, "
          "b's rows staged in that order");
    else if (keysPermuted(op.operand(0)) && a.dtype == DType::F16)
      layouts_.notes[&op].push_back(
          "its k permuted as a's columns are (key-perm): b's rows staged in that order");
  } else {
    for (size_t i = 0; i < op.numOperands(); ++i)
      fromBlocked(op.operand(static_cast<unsigned>(i)), "operand " + std::to_string(i));
    if (op.kind() == ir::OpKind::Reduce)
      layouts_.notes[&op].push_back(
          keysPermuted(op.operand(0)) && op.strAttr("kind") == "add"
              ? "along the rows of #mma, keys permuted: the pairwise tree in registers, then "
                "across the 4 lanes of a quad (2 shfl.sync a row)"
              : "along the rows of #mma: in registers and across the 4 lanes of a quad "
                "(shfl.sync)");
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

/// This thread's column of slot s: 8j + 2t + e for fragment j, lane 4g + t,
/// element e; with the keys permuted (mmaPermuted_), 2 (n / 8) t + 2j + e.
llvm::Value *Lowerer::mmaColOf(const ir::Type &t, int64_t s, bool permuted) {
  auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
  llvm::Value *quad = b_.CreateAnd(tid_, i32(3));
  int64_t c0 = mma::valueElem(shapeOf(t, opts_.numWarps), 0, s).col; // 8j + e
  if (plantedBug("key-perm-cols")) // masks and conversions take the column as if in order
    permuted = false;
  if (!permuted)
    return b_.CreateAdd(b_.CreateShl(quad, i32(1)), i32(c0));
  int64_t fn = t.shape[1] / 8;
  return b_.CreateAdd(b_.CreateMul(quad, i32(2 * fn)), i32(2 * (c0 / 8) + c0 % 2));
}

/// Flat row-major index of slot s's element.
llvm::Value *Lowerer::mmaIndexOf(const ir::Type &t, int64_t s, bool permuted) {
  llvm::Value *row = mmaRowOf(t, s);
  if (t.rank() == 1 || t.shape[1] == 1)
    return row;
  return b_.CreateAdd(b_.CreateMul(row, b_.getInt32(static_cast<uint32_t>(t.shape[1]))),
                      mmaColOf(t, s, permuted));
}

/// #mma (or its slice) -> blocked, through shared memory.
Slots Lowerer::mmaToBlocked(const ir::Type &t, const Slots &s, bool permuted) {
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
                     stagedAddr(t, 0, mmaIndexOf(t, k, permuted)));
    return nullptr;
  });
  barrier();
  Slots out;
  for (int64_t k = 0; k < slotsOf(n); ++k)
    out.push_back(readStaged(t, 0, elemIndex(n, k)));
  return out;
}

/// blocked -> #mma (or its slice), through shared memory.
Slots Lowerer::mmaFromBlocked(const ir::Type &t, const Slots &s, bool permuted) {
  barrier();
  stage(s, t, 0);
  barrier();
  Slots out;
  for (int64_t k = 0; k < mmaSlots(t); ++k)
    out.push_back(readStaged(t, 0, mmaIndexOf(t, k, permuted)));
  return out;
}

/// v's slots in #mma: its own, a uniform value's one slot, or converted (for
/// a user whose columns are `permuted` or not: a value in #mma has its
/// user's permutation, planKeyPermutation).
Slots Lowerer::getMma(const ir::Value *v, bool permuted) {
  if (auto it = mmaValues_.find(v); it != mmaValues_.end())
    return it->second;
  if (mmaUniform(v))
    return {get(v)[0]};
  const ir::Type &t = v->type();
  if (mmaRemat(v) && t.rank() == 2) {
    RematMemo memo;
    Slots s;
    for (int64_t k = 0; k < mmaSlots(t); ++k)
      s.push_back(rematAt(
          v, {mmaRowOf(t, k), t.shape[1] == 1 ? b_.getInt32(0) : mmaColOf(t, k, permuted)}, memo));
    return s;
  }
  if (mmaRemat(v) && t.rank() == 1) {
    RematMemo memo;
    Slots s;
    for (int64_t k = 0; k < mmaSlots(t); ++k)
      s.push_back(rematAt(v, {mmaRowOf(t, k)}, memo));
    return s;
  }
  return mmaFromBlocked(t, get(v), permuted);
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
    values_[v] = mmaToBlocked(v->type(), s, keysPermuted(v));
  mmaValues_[v] = std::move(s);
}

/// A value's slots as a loop carries it (its layout's count).
Slots Lowerer::carriedSlots(const ir::Value *v, bool inMma, bool permuted) {
  if (inMma) {
    Slots s = getMma(v, permuted);
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
    xs.push_back(getMma(v, keysPermuted(op.result())));
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
/// and bits >= 3 in the thread, bits 1 and 2 across the quad's lanes; for add
/// with 4 or more n8 fragments the quad levels scatter the fragments over the
/// lanes and the top two fragment bits go across the quad again).
void Lowerer::lowerMmaValueReduce(const ir::Op &op) {
  const ir::Type &in = op.operand(0)->type();
  const std::string &kind = op.strAttr("kind");
  DType dt = in.dtype;
  int64_t n = in.shape[1], fn = n / 8, fm = in.shape[0] / opts_.numWarps / 16;
  Slots x = getMma(op.operand(0));
  if (x.size() == 1)
    x.assign(static_cast<size_t>(mmaSlots(in)), x[0]);
  auto comb = [&](llvm::Value *a, llvm::Value *c) { return combine(kind, dt, a, nullptr, c, nullptr).first; };
  // The reference's pairwise tree over values in the thread (fragments j and
  // j + 2^l at level l), into part[0].
  auto pairwiseInThread = [&](std::vector<llvm::Value *> &part) {
    for (size_t step = 1; step < part.size(); step *= 2)
      for (size_t j = 0; j + step < part.size(); j += 2 * step)
        part[j] = comb(part[j], part[j + step]);
  };
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
        pairwiseInThread(part);
      if (kind != "add")
        part.resize(1);
      // The combines are commutative (integer add, IEEE add with the GPU's
      // canonical NaN, max and min with the signed-zero rule), so a lane
      // combines its own value with the one it receives in either order: the
      // tree's nodes are the reference's, bit for bit (LLVM folded away the
      // operand-ordering selects add once had).
      if (kind == "add" && keysPermuted(op.operand(0))) {
        // Keys permuted (planKeyPermutation): the thread holds columns
        // 2 fn t + 2j + e, so the column bits below the top two are its own
        // (bit 0 above, then the fragment bits), the top two across the quad.
        pairwiseInThread(part);
        for (uint32_t mask : {1u, 2u})
          part[0] = comb(part[0], shuffleXor(part[0], mask));
        outS.push_back(part[0]);
        continue;
      }
      if (kind == "add" && fn >= 4 && isPow2(fn)) {
        // The same tree, scattered over the quad: at the lane levels (column
        // bits 1, 2) each lane keeps the half of the fragments whose top
        // fragment bit (then the next) equals its lane bit and sends the other
        // half, one shuffle per pair instead of one per fragment; the
        // fragment bits below in the thread; then the two top fragment bits
        // across the quad again (lanes xor 2, then xor 1). 8 shuffles a row
        // at n = 64 instead of 16, 17 adds instead of 31.
        for (uint32_t mask : {1u, 2u}) {
          llvm::Value *upper =
              b_.CreateICmpNE(b_.CreateAnd(tid_, b_.getInt32(mask)), b_.getInt32(0));
          size_t half = part.size() / 2;
          std::vector<llvm::Value *> next;
          for (size_t j = 0; j < half; ++j) {
            llvm::Value *keep = b_.CreateSelect(upper, part[j + half], part[j]);
            llvm::Value *send = b_.CreateSelect(upper, part[j], part[j + half]);
            next.push_back(comb(keep, shuffleXor(send, mask)));
          }
          part = std::move(next);
        }
        pairwiseInThread(part);
        for (uint32_t mask : {2u, 1u})
          part[0] = comb(part[0], shuffleXor(part[0], mask));
        outS.push_back(part[0]);
        continue;
      }
      for (uint32_t mask : {1u, 2u})
        for (auto &p : part)
          p = comb(p, shuffleXor(p, mask));
      // Bits 3 and up: fragments j and j + 2^l.
      pairwiseInThread(part);
      outS.push_back(part[0]);
    }
  bindValue(op.result(), outS);
}

/// Stores v, a loop-invariant a operand that wgmma reads from shared memory
/// (a stream's user's), into its region at aOff: rows of aSwizzle bytes,
/// swizzled, in aStagedRow's order (no barriers, no fence: the caller's).
void Lowerer::storeSharedA(const ir::Value *v, size_t aOff, int64_t aSwizzle) {
  auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
  const ir::Type &t = v->type();
  int64_t m = t.shape[0], k = t.shape[1], in = static_cast<int64_t>(byteSize(t.dtype));
  int64_t n = t.numElements(), wa = aSwizzle;
  llvm::Value *base = b_.CreateAdd(pipeBase(), i32(static_cast<int64_t>(aOff)));
  emitGuarded(ownerOf(n), [&]() -> llvm::Value * {
    // A run of the blocked layout is consecutive elements of one row
    // (runs start at multiples of their length): each whole 16-byte chunk
    // of it lands whole (the swizzle moves chunks), one vector store.
    int64_t vlen = std::min<int64_t>(vec_, slotsOf(n)), chunk = 16 / in;
    bool whole = n >= T_ && vlen % chunk == 0 && k % vlen == 0;
    int64_t step = whole ? chunk : 1;
    const Slots &vals = values_.at(v);
    for (int64_t j = 0; j < slotsOf(n); j += step) {
      llvm::Value *e = elemIndex(n, j);
      llvm::Value *row = aStagedRow(b_, m, opts_.numWarps, b_.CreateUDiv(e, i32(k)));
      llvm::Value *col = b_.CreateMul(b_.CreateURem(e, i32(k)), i32(in));
      llvm::Value *addr = b_.CreateInBoundsGEP(
          b_.getInt8Ty(), smem(), b_.CreateAdd(base, swizzledOffset(b_, wa, m, row, col)));
      if (step == 1) {
        b_.CreateStore(se_.toMemory(slot(vals, static_cast<size_t>(j)), t.dtype), addr);
        continue;
      }
      llvm::Value *vecv = llvm::PoisonValue::get(
          llvm::FixedVectorType::get(memTypeOf(t), static_cast<unsigned>(chunk)));
      for (int64_t q = 0; q < chunk; ++q)
        vecv = b_.CreateInsertElement(
            vecv, se_.toMemory(slot(vals, static_cast<size_t>(j + q)), t.dtype), uint64_t(q));
      b_.CreateAlignedStore(vecv, addr, llvm::Align(16));
    }
    return nullptr;
  });
}

/// The a fragments of a loop-invariant a operand (m x k, fp16/bf16) of `@` on
/// #mma, loaded once where it is defined: staged in padded shared memory and
/// read with ldmatrix, fragment row i and k step s as registers (i * steps + s) * 4 + q.
void Lowerer::loadHoistedA(const ir::Value *v) {
  auto i32 = [&](int64_t x) { return b_.getInt32(static_cast<uint32_t>(x)); };
  const ir::Type &t = v->type();
  int64_t m = t.shape[0], k = t.shape[1], in = static_cast<int64_t>(byteSize(t.dtype));
  if (const auto *s = stagedAStream(valuePipes_, v)) {
    // wgmma reads it from shared memory (planValueWgmma): staged once in
    // its region, swizzled, no fragments (mmaAFrags_ empty: hoisted).
    pipeAlign_ = std::max<size_t>(pipeAlign_, kSwizzleAlign);
    pipeBytes_ = std::max(pipeBytes_, s->aOff + static_cast<size_t>(t.numElements() * in));
    mmaAFrags_[v] = {};
    if (s->aLate)
      return;  // option late-q: stored in the loop's prologue (lowerValuePipeLoop)
    barrier(); // earlier wgmma reads of the region (Q defined in an outer loop) are done
    storeSharedA(v, s->aOff, s->aSwizzle);
    // Generic-proxy writes that the tensor cores read through the async
    // proxy: fenced by each writer, then a barrier (as the copies of a stage).
    asmStatement("fence.proxy.async.shared::cta;");
    barrier();
    return;
  }
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
  if (!pipeTrip_.L) // a values-pipeline loop asks for its occupancy (finishOccupancy)
    allowAllRegisters();
  int64_t w = opts_.numWarps, in = static_cast<int64_t>(byteSize(p.a->dtype));
  p.tileM = p.m / w;
  p.tileN = p.n;
  p.tilesN = 1;
  p.tiles = w;
  bool aRegs = mmaRes_.count(op.operand(0)) && p.a->dtype == DType::F16;
  auto hoisted = mmaAFrags_.find(op.operand(0)); // loaded before the loop
  bool aHoisted = !aRegs && hoisted != mmaAFrags_.end();
  // b streamed through cp.async stages (the values pipeline): its stage.
  const MmaLoop *pipe = nullptr;
  int sw = valueStreamOf(op, &pipe);
  const MmaLoop::Stream *stream =
      sw >= 0 && pipe == pipeTrip_.L ? &pipe->streams[static_cast<size_t>(sw)] : nullptr;
  notePath(stream && pipe->wgmma ? "wgmma" : "mma.sync");
  if (keysPermuted(op.result()))
    notePath("mma.values.key_perm"); // option key-perm
  llvm::Value *stageOff = stream ? valuePipeStage() : nullptr;
  p.pitchA = p.k + 16 / in;
  p.pitchB = p.n + 16 / in;
  if (stream) {
    p.bTransposed = stream->transposed; // n rows of k: non-.trans ldmatrix
    p.pitchB = stream->pitch;
  }
  p.offA = 0;
  p.offB = aRegs || aHoisted ? 0 : alignUp(static_cast<size_t>(p.m * p.pitchA * in));
  size_t bytes = stream ? static_cast<size_t>(p.m * p.pitchA * in)
                        : p.offB + static_cast<size_t>(p.k * p.pitchB * in);
  if (!stream || (!aRegs && !aHoisted))
    sharedBytes_ = std::max(sharedBytes_, bytes);
  Slots acc;
  if (p.zeroAcc && !mmaRes_.count(op.operand(2)))
    acc.assign(static_cast<size_t>(mmaSlots(*p.c)), llvm::Constant::getNullValue(b_.getFloatTy()));
  else
    acc = carriedSlots(op.operand(2), true, keysPermuted(op.result()));
  Slots aFr;
  if (aRegs)
    aFr = carriedSlots(op.operand(0), true, keysPermuted(op.operand(0)));
  if (!stream) {
    barrier();
    if (!aRegs && !aHoisted)
      stageRows(get(op.operand(0)), *p.a, p.offA, p.pitchA, false);
    stageRows(get(op.operand(1)), *p.b, p.offB, p.pitchB, false);
    barrier();
  } else if (!aRegs && !aHoisted) {
    barrier();
    stageRows(get(op.operand(0)), *p.a, p.offA, p.pitchA, false);
    barrier();
  }
  auto *h2 = llvm::FixedVectorType::get(b_.getHalfTy(), 2);
  auto pack = [&](llvm::Value *lo, llvm::Value *hi) {
    llvm::Value *v = llvm::PoisonValue::get(h2);
    v = b_.CreateInsertElement(v, se_.toMemory(lo, DType::F16), uint64_t(0));
    v = b_.CreateInsertElement(v, se_.toMemory(hi, DType::F16), uint64_t(1));
    return b_.CreateBitCast(v, b_.getInt32Ty());
  };
  mma::ValueShape av{p.m, p.k, w}; // a in #mma
  // Register q of a's fragment row i at k step s: elements 2q, 2q + 1 of
  // accumulator fragments 2s, 2s + 1 of a's rows (mma::aSlotOf), or Q's
  // fragments loaded before the loop.
  auto aFragment = [&](int64_t i, int64_t s) {
    if (aHoisted) {
      size_t r = static_cast<size_t>((i * (p.k / p.kStep) + s) * 4);
      return Slots(hoisted->second.begin() + static_cast<long>(r),
                   hoisted->second.begin() + static_cast<long>(r + 4));
    }
    Slots regs;
    for (int64_t q = 0; q < 4; ++q) {
      int64_t e = 2 * q;
      if (plantedBug("mma-values-operand")) // the two n8 fragments swapped
        e ^= 4;
      regs.push_back(pack(aFr[static_cast<size_t>(mma::aSlotOf(av, s, i, e))],
                          aFr[static_cast<size_t>(mma::aSlotOf(av, s, i, e + 1))]));
    }
    return regs;
  };
  if (stream && pipe->wgmma) { // wgmma: a from registers or staged (Q), b through a descriptor
    if (stream->aShared && !aHoisted) // loadHoistedA stores it where it is defined
      throw Unsupported("internal: a staged a operand of wgmma not stored before its loop");
    std::vector<std::vector<Slots>> frags(static_cast<size_t>(stream->aShared ? 0 : p.fragsM()));
    for (int64_t i = 0; i < static_cast<int64_t>(frags.size()); ++i)
      for (int64_t s = 0; s < p.k / p.kStep; ++s)
        frags[static_cast<size_t>(i)].push_back(aFragment(i, s));
    bindValue(op.result(), wgmmaValueDot(p, *pipe, static_cast<size_t>(sw), stageOff, frags, acc));
    return;
  }
  llvm::Value *lane = b_.CreateAnd(tid_, i32(31));
  llvm::Value *warp = b_.CreateLShr(tid_, i32(5));
  MmaTile t = mmaTileAt(p, warp, lane);
  if (stream) // ldmatrix reads the stage below, after a's staging and its barriers (at issue)
    noteAsync({AsyncEvent::Kind::Read});
  for (int64_t s = 0; s < p.k / p.kStep; ++s) {
    std::vector<Slots> af, bf;
    for (int64_t i = 0; i < p.fragsM(); ++i) {
      if (aRegs || aHoisted) {
        af.push_back(aFragment(i, s));
      } else {
        af.push_back(ldmatrix(*p.a, p.offA, b_.CreateAdd(t.a, i32(p.kStep * s + 16 * i * p.pitchA)),
                              false));
      }
    }
    for (int64_t j = 0; j < p.fragsN() / 2; ++j) {
      if (!stream) {
        bf.push_back(ldmatrix(*p.b, p.offB,
                              b_.CreateAdd(t.b, i32(p.kStep * s * p.pitchB + 16 * j)), true));
        continue;
      }
      // From the stage: rows of n (.trans), or n rows of k (K^T as K's rows).
      int64_t idx = p.bTransposed ? p.kStep * s + 16 * j * p.pitchB : p.kStep * s * p.pitchB + 16 * j;
      withStagingBase(b_.CreateAdd(pipeBase(), stageOff), [&] {
        bf.push_back(ldmatrix(*p.b, stream->off, b_.CreateAdd(t.b, i32(idx)), !p.bTransposed));
      });
    }
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

// ---- The values pipeline --------------------------------------------------------
//
// A `for` whose body has `@` on #mma with a b operand loaded (no mask) through
// a carried pointer tile stepped by a uniform, loop-invariant offset
// (attention's K^T and V): the loads become cp.async copies of 16-byte chunks
// into num_stages shared-memory stages, issued S - 1 trips ahead, laid out as
// ldmatrix reads them (rows of n padded by 16 bytes; K^T, contiguous along
// axis 0, as K's rows: n rows of k, read with non-.trans ldmatrix). The first
// streamed `@` of a trip waits for the trip's copies (cp.async.wait_group
// S - 2), syncs (which also ends the previous trip's reads of the stage about
// to be refilled), issues trip i + S - 1's copies (predicated off past the
// end) and commits; later ones read the same stage without a barrier (on
// wgmma the last one's wait may be deferred to the next trip, the copies then
// refilling the stage two trips back: planValuePipes). The
// carried pointer tiles stay as they are (their loads are gone, so they die
// unless something else uses them); each thread's chunk addresses are
// recomputed from the tiles' initial values plus one offset per stream.

namespace tc::codegen::lower {

namespace {

/// Shared memory of the stages at most (leaves room for other staging).
constexpr size_t kMaxValuePipeBytes = 160 * 1024;

} // namespace

/// Whether v can be evaluated for a later trip: recomputable index
/// arithmetic whose leaves are values from outside the loop, the `for`'s
/// induction variable, or carried scalars of a `while` that each trip leaves
/// alone or steps by an invariant amount (predictable()); the body's scalar
/// ops on the way (pure, no division) go into ops.
bool Lowerer::aheadable(MmaLoop &L, const ir::Value *v, std::unordered_set<const ir::Op *> &ops) {
  if (!v->type().isScalar() && !rematable(v))
    return false;
  std::unordered_set<const ir::Value *> seen;
  std::vector<const ir::Value *> todo{v};
  while (!todo.empty()) {
    const ir::Value *x = todo.back();
    todo.pop_back();
    if (!seen.insert(x).second || !definedInside(x, *L.loop))
      continue;
    const ir::Op *d = x->definingOp();
    if (!d) {
      if (x->ownerBlock() != L.body || !x->type().isScalar())
        return false;
      size_t idx = x->index();
      if (L.isFor) {
        if (idx != 0)
          return false;
        continue;
      }
      bool known = idx < L.unchanged.size() && L.unchanged[idx];
      for (const MmaLoop::Affine &a : L.affine)
        known = known || a.pos == idx;
      if (!known)
        return false;
      continue;
    }
    if (d->parentBlock() != L.body || d->kind() == ir::OpKind::Div ||
        d->kind() == ir::OpKind::Rem || d->numRegions() || d->numResults() != 1 ||
        !ir::hasTrait(d->kind(), ir::Pure))
      return false;
    // A scalar the same in every trip (a reduce of a tile from before the
    // loop, say) is lowered once, before the loop, not again for each copy.
    if (x->type().isScalar() && !L.hoisted.count(d) && invariantIn(x, L))
      continue;
    if (x->type().isScalar() && !L.hoisted.count(d)) {
      // Lowered again for the later trip (withTripAhead), which reads its
      // operands as they are then bound: only scalars (bound for that trip) or
      // values from outside the loop. A tile of the body (a reduce's or an
      // extract_slice's) would be this trip's, or not lowered yet.
      for (const ir::Value *o : d->operands())
        if (!o->type().isScalar() && definedInside(o, *L.loop))
          return false;
      ops.insert(d);
    }
    todo.insert(todo.end(), d->operands().begin(), d->operands().end());
  }
  return true;
}

/// b of `dot` as stream w of L: an unmasked load in the body used by `dot`
/// alone, through a carried pointer tile that the body steps by a uniform
/// loop-invariant offset and yields in its place, contiguous and 16-byte
/// aligned along one axis in runs of 16 bytes (proved by the axis analysis).
bool Lowerer::matchValueStream(MmaLoop &L, const ir::Op &dot, size_t w) {
  MmaLoop::Stream &s = L.streams[w];
  const ir::Value *operand = dot.operand(1);
  const ir::Op *load = operand->definingOp();
  if (!load || load->kind() != ir::OpKind::Load || load->parentBlock() != L.body ||
      !usedOnlyBy(operand, &dot) || operand == dot.operand(0) || mmaRes_.count(operand))
    return false;
  // A mask whose lanes off get +0 (cp.async with src-size 0 zero-fills).
  const ir::Value *mask = load->numOperands() > 1 ? load->operand(1) : nullptr;
  if (load->numOperands() > 2 && !isPositiveZero(load->operand(2)))
    return false;
  const ir::Type &t = operand->type();
  if (t.rank() != 2 || (t.dtype != DType::F16 && t.dtype != DType::BF16))
    return false;
  int64_t in = static_cast<int64_t>(byteSize(t.dtype)), chunk = 16 / in;
  const ir::Value *ptr = load->operand(0);
  std::optional<size_t> pos = carriedPos(ptr, L.body, L.argBase);
  const ir::Op *step = nullptr;
  const ir::Value *inc = nullptr, *facts = ptr;
  std::unordered_set<const ir::Op *> ahead;
  if (pos && *pos < L.carried) { // stepped: init + inc per trip
    step = L.yield->operand(static_cast<unsigned>(*pos))->definingOp();
    if (!step || step->kind() != ir::OpKind::AddPtr || step->parentBlock() != L.body ||
        step->operand(0) != ptr)
      return false;
    inc = step->operand(1);
    const ir::Op *incDef = inc->definingOp();
    if (!incDef ||
        (incDef->kind() != ir::OpKind::Splat && incDef->kind() != ir::OpKind::Constant) ||
        !invariantIn(inc, L))
      return false;
    if (!L.isFor && !usedOnlyBy(L.cond->arg(static_cast<unsigned>(*pos)), L.condOp))
      return false;
    facts = L.loop->operand(static_cast<unsigned>((L.isFor ? 3 : 0) + *pos));
    if (!rematable(facts)) {
      // A tile result of another loop (a scalar one is uniform): one that
      // option exit-values did not rewrite (ExitValues.cpp), or with it off.
      auto tileResult = [](const ir::Value *v) { return isLoopResult(v) && v->type().isTile(); };
      if (derivedFrom(facts, tileResult))
        valuePipeWhyNot_[L.loop] =
            "the pointer tile of the `@` operand loaded at line " +
            std::to_string(load->loc().line) +
            " starts the loop as (or computed from) another loop's result, which the copies "
            "cannot address chunk by chunk: that operand is not streamed; start it from a "
            "tile computed before the loops (e.g. `base + offset`)";
      return false;
    }
    if ((axes_->info(inc).eltDiv * in) % 16)
      return false;
  } else if (pos || !aheadable(L, ptr, ahead)) { // recomputed from the carried scalars
    return false;
  }
  AxisInfo a = axes_->info(facts);
  if (a.contig.size() != 2)
    return false;
  auto runs = [&](size_t axis) {
    return a.contig[axis] >= chunk && t.shape[axis] % chunk == 0 &&
           AxisAnalysis::runDivisibility(a, axis, chunk, in) >= 16;
  };
  bool rows = runs(1), cols = !rows && runs(0);
  if (!rows && !cols)
    return false;
  if (mask) { // the same over each chunk
    if (!aheadable(L, mask, ahead))
      return false;
    AxisInfo m = axes_->info(mask);
    size_t axis = rows ? 1 : 0;
    if (!mask->type().isScalar() &&
        (m.cnst.size() != 2 || m.cnst[axis] < chunk || m.cnst[axis] % chunk))
      return false;
  }
  for (const ir::Op *o : ahead)
    if (std::find(L.aheadOps.begin(), L.aheadOps.end(), o) == L.aheadOps.end())
      L.aheadOps.push_back(o);
  s = MmaLoop::Stream{};
  s.load = load;
  s.step = step;
  s.pos = pos ? *pos : L.carried; // recomputed: no carried position
  s.recomputed = !pos;
  s.ptr = ptr;
  s.mask = mask;
  s.inc = inc;
  s.tile = &t;
  s.rows = t.shape[0];
  s.cols = t.shape[1];
  s.transposed = cols;
  s.pitch = (cols ? s.rows : s.cols) + chunk;
  s.user = &dot;
  return true;
}

/// Whether the streamed `@` of L run on wgmma.mma_async (sm_90a; option
/// "wgmma"): warpgroups of 4 warps, fp16/bf16 operands and an fp32 result,
/// a from registers (P packed from #mma, or Q's fragments loaded before the
/// loop), n a multiple of 8 up to 256, and each stream's staged rows a
/// swizzle width (32, 64 or a multiple of 128 bytes). Then each stream is
/// staged in wgmma's canonical swizzled layout (swizzle set); else nothing
/// changes and they stay on mma.sync with ldmatrix.
bool Lowerer::planValueWgmma(MmaLoop &L) {
  if (!opts_.wgmma || opts_.sm != 90 || opts_.numWarps % 4)
    return false;
  std::array<int64_t, 2> widths{};
  for (size_t w = 0; w < L.numStreams; ++w) {
    const MmaLoop::Stream &s = L.streams[w];
    const ir::Op &dot = *s.user;
    const ir::Type &a = dot.operand(0)->type(), &c = dot.result()->type();
    int64_t n = c.shape[1], k = a.shape[1], in = static_cast<int64_t>(byteSize(a.dtype));
    bool aRegs = mmaRes_.count(dot.operand(0)) && a.dtype == DType::F16;
    bool aHoisted = !aRegs && mmaHoistA_.count(dot.operand(0));
    if (!(a.dtype == DType::F16 || a.dtype == DType::BF16) || s.tile->dtype != a.dtype ||
        c.dtype != DType::F32 || (!aRegs && !aHoisted) || n % 8 || n > 256 || k % 16 ||
        (c.shape[0] / opts_.numWarps) % 16)
      return false;
    widths[w] = swizzleWidth((s.transposed ? s.rows : s.cols) * in);
    if (!widths[w])
      return false;
  }
  for (size_t w = 0; w < L.numStreams; ++w) {
    MmaLoop::Stream &s = L.streams[w];
    s.swizzle = widths[w];
    // A loop-invariant a (Q) staged once in shared memory for wgmma to read
    // through a descriptor (its region: planValuePipes): its registers are
    // not held across the loop (register A would keep m k / (32 num_warps)
    // 32-bit registers live in every trip).
    const ir::Value *a = s.user->operand(0);
    int64_t wa = swizzleWidth(a->type().shape[1] * static_cast<int64_t>(byteSize(a->type().dtype)));
    s.aShared = sharedA_ && !(mmaRes_.count(a) && a->type().dtype == DType::F16) &&
                mmaHoistA_.count(a) && wa;
    s.aSwizzle = s.aShared ? wa : 0;
  }
  L.wgmma = true;
  return true;
}

/// The `for` loops whose `@` on #mma get their b operands through cp.async stages.
void Lowerer::planValuePipes(const std::vector<const ir::Op *> &ops) {
  if (opts_.numStages < 2 || !opts_.remat || !axes_ || opts_.sm < 80 ||
      plantedBug("missing-barrier"))
    return;
  // Whether the wait of the trip's last `@` on wgmma can move to the next
  // trip (sets L.deferDot, L.deferPos): two streamed `@`, the second's result
  // (in #mma, not converted) used by the yield alone at one carried position,
  // nothing after it in the trip but ops without regions that are no `@`;
  // that carried value read in the body only by ops after the first streamed
  // `@` (whose wait it passes through), not converted, and a `while`'s
  // condition forwarding it untouched.
  auto deferrable = [&](MmaLoop &L) {
    if (L.numStreams != 2)
      return false;
    const ir::Op *first = L.streams[0].user, *last = L.streams[1].user;
    const ir::Value *r = last->result();
    auto it = users_.find(r);
    if (!mmaRes_.count(r) || mmaBlocked_.count(r) || it == users_.end() || it->second.size() != 1 ||
        it->second[0] != L.yield)
      return false;
    std::optional<size_t> pos;
    for (size_t i = 0; i < L.yield->numOperands(); ++i)
      if (L.yield->operand(static_cast<unsigned>(i)) == r) {
        if (pos)
          return false;
        pos = i;
      }
    if (!pos)
      return false;
    std::unordered_map<const ir::Op *, size_t> order;
    for (const auto &o : L.body->ops())
      order[o.get()] = order.size();
    for (const auto &o : L.body->ops())
      if (order[o.get()] > order[last] && o.get() != L.yield &&
          (o->numRegions() || o->kind() == ir::OpKind::Dot))
        return false;
    const ir::Value *arg = L.body->arg(static_cast<unsigned>(L.argBase + *pos));
    if (!mmaRes_.count(arg) || mmaBlocked_.count(arg))
      return false;
    // Not where the accumulator is computed from another loop's accumulator
    // whose wait was deferred (a causal attention's second loop): with both
    // waits deferred, ptxas 13.0 serialized every wgmma of the kernel at
    // 128x32x128 (C7515), and the loop on the diagonal runs a few trips.
    auto deferredResult = [&](const ir::Value *x) {
      for (const auto &[op, P] : valuePipes_)
        if (P->deferDot && x == op->result(static_cast<unsigned>(P->deferPos)))
          return true;
      return false;
    };
    if (derivedFrom(L.loop->operand(static_cast<unsigned>((L.isFor ? 3 : 0) + *pos)),
                    deferredResult))
      return false;
    if (auto u = users_.find(arg); u != users_.end())
      for (const ir::Op *user : u->second) {
        const ir::Op *top = user; // the body's op that holds the use
        while (top && top->parentBlock() != L.body)
          top = top->parentBlock() ? top->parentBlock()->parentOp() : nullptr;
        if (!top || top == first || !order.count(top) || order[top] < order[first])
          return false;
      }
    if (!L.isFor) {
      const ir::Value *c = L.cond->arg(static_cast<unsigned>(*pos));
      if (mmaBlocked_.count(c) || !usedOnlyBy(c, L.condOp))
        return false;
    }
    L.deferDot = last;
    L.deferPos = *pos;
    return true;
  };
  for (const ir::Op *op : ops) {
    bool isFor = op->kind() == ir::OpKind::For;
    if ((!isFor && op->kind() != ir::OpKind::While) || mmaLoops_.count(op))
      continue;
    auto L = std::make_shared<MmaLoop>();
    L->loop = op;
    L->isFor = isFor;
    L->body = op->region(isFor ? 0 : 1);
    L->argBase = isFor ? 1 : 0;
    L->carried = op->numResults();
    L->yield = L->body->terminator();
    if (!L->yield || L->yield->kind() != ir::OpKind::Yield ||
        L->yield->numOperands() != L->carried || L->body->numArgs() != L->argBase + L->carried)
      continue;
    if (!isFor) { // the body gets the carried values as the condition has them
      L->cond = op->region(0);
      L->condOp = L->cond->terminator();
      if (!L->condOp || L->condOp->kind() != ir::OpKind::Condition ||
          L->condOp->numOperands() != L->carried + 1 || L->cond->numArgs() != L->carried)
        continue;
      bool inPlace = true;
      for (size_t i = 0; i < L->carried; ++i)
        inPlace = inPlace && L->condOp->operand(static_cast<unsigned>(i + 1)) ==
                                 L->cond->arg(static_cast<unsigned>(i));
      if (!inPlace)
        continue;
    }
    bool returns = false;
    ir::forEachOp(*L->body, [&](const ir::Op &o, unsigned) {
      returns = returns || o.kind() == ir::OpKind::Return;
    });
    if (returns || holdsLoopWithDot(*L->body)) // the stages' region is shared
      continue;
    if (!predictable(*L))
      continue;
    L->numStreams = 0;
    for (const auto &o : L->body->ops()) {
      if (L->numStreams == 2)
        break;
      if (o->kind() != ir::OpKind::Dot || !mmaOps_.count(o.get()))
        continue;
      if (matchValueStream(*L, *o, L->numStreams) &&
          (L->numStreams == 0 || L->streams[1].recomputed ||
           L->streams[0].pos != L->streams[1].pos))
        ++L->numStreams;
    }
    if (!L->numStreams)
      continue;
    // The scalars evaluated for a later trip, in the body's order.
    std::unordered_map<const ir::Op *, size_t> order;
    for (const auto &o : L->body->ops())
      order[o.get()] = order.size();
    std::sort(L->aheadOps.begin(), L->aheadOps.end(),
              [&](const ir::Op *x, const ir::Op *y) { return order[x] < order[y]; });
    size_t off = 0;
    if (planValueWgmma(*L)) {
      for (size_t w = 0; w < L->numStreams; ++w) { // swizzled, unpadded, 1024-byte aligned
        MmaLoop::Stream &s = L->streams[w];
        s.off = off;
        off = alignTo(off + static_cast<size_t>(s.rows * s.cols) * byteSize(s.tile->dtype),
                      kSwizzleAlign);
      }
    }
    for (size_t w = 0; w < L->numStreams && !L->wgmma; ++w) {
      MmaLoop::Stream &s = L->streams[w];
      s.off = off;
      off = alignUp(off + static_cast<size_t>((s.transposed ? s.cols : s.rows) * s.pitch) *
                              byteSize(s.tile->dtype));
    }
    L->stageBytes = off;
    L->stages = opts_.numStages;
    while (L->stages > 2 && static_cast<size_t>(L->stages) * L->stageBytes > kMaxValuePipeBytes)
      --L->stages;
    if (static_cast<size_t>(L->stages) * L->stageBytes > kMaxValuePipeBytes)
      continue;
    L->ahead = L->stages - 1;
    if (L->wgmma && deferrable(*L)) {
      // The trip's P @ V runs on while the next trip waits for its copies,
      // syncs and issues Q @ K^T (its wait covers both groups). The copies
      // issued after trip i's barrier must then not refill the stage trip
      // i - 1 read: another warpgroup's P @ V of trip i - 1 may still read it
      // (it has not waited yet). Either the copies move after Q @ K^T's wait
      // and a second barrier (2 barriers per trip, and the copies issued
      // later in the trip), or they refill the stage trip i - 2 read, whose
      // products every thread waited for before trip i's barrier (one
      // barrier, as before). The second, with one stage more to keep the
      // copies S - 1 trips ahead (as Triton's pipeliner adds a buffer for an
      // asynchronous dot) while the stages and the staged a (Q) stay within
      // half the pipeline's limit (so that the stage does not cost a second
      // program per SM: 128x64x64 takes 4 x 16 + 16 KiB, 128x32x128 would
      // take 4 x 16 + 32), else one trip less ahead (S - 2; none left with 2
      // stages: the wait is not deferred).
      size_t aBytes = 0;
      for (size_t w = 0; w < L->numStreams; ++w)
        if (L->streams[w].aShared)
          aBytes += L->streams[w].aBytes();
      if (static_cast<size_t>(L->stages + 1) * L->stageBytes + aBytes <= kMaxValuePipeBytes / 2)
        ++L->stages;
      if (L->stages >= 3) {
        L->ahead = L->stages - 2;
        if (plantedBug("values-wgmma-refill")) // into the stage trip i - 1's P @ V may read
          ++L->ahead;
      } else {
        L->deferDot = nullptr;
      }
    }
    L->pipelined = true;
    L->bytes = static_cast<size_t>(L->stages) * L->stageBytes;
    for (size_t w = 0; w < L->numStreams; ++w)
      L->skipped.insert(L->streams[w].load);
    valuePipes_[op] = L;
  }
  // The staged a operands of wgmma (Q): each its own region past every
  // loop's stages (a loop between Q's definition and its own may reuse the
  // stages), 1024-byte aligned for the swizzle, in the order of the ops (the
  // same offsets in every compile); within the stages' limit, else from
  // registers as before.
  size_t top = 0;
  for (const auto &[op, L] : mmaLoops_)
    top = std::max(top, L->bytes);
  for (const auto &[op, L] : valuePipes_)
    top = std::max(top, L->bytes);
  top = alignTo(top, kSwizzleAlign);
  // An a read by the streams of several loops (Q of a causal attention's
  // two) has one region, stored once where it is defined.
  // Every `@` that reads it must read it from there: where one does not (its
  // loop not on wgmma, or not pipelined), all take its fragments instead.
  std::unordered_map<const ir::Value *, const MmaLoop::Stream *> regionOf;
  std::unordered_map<const ir::Value *, int> streamsOf;
  std::unordered_set<const ir::Op *> readShared;
  for (const auto &[op, L] : valuePipes_)
    for (size_t w = 0; w < L->numStreams; ++w)
      if (L->streams[w].aShared) {
        ++streamsOf[L->streams[w].user->operand(0)];
        readShared.insert(L->streams[w].user);
      }
  for (const auto &[op, L] : valuePipes_)
    for (size_t w = 0; w < L->numStreams; ++w) {
      MmaLoop::Stream &s = L->streams[w];
      if (!s.aShared)
        continue;
      for (const ir::Op *u : users_[s.user->operand(0)])
        if (!readShared.count(u)) {
          s.aShared = false;
          s.aSwizzle = 0;
          break;
        }
    }
  for (const ir::Op *op : ops) {
    auto it = valuePipes_.find(op);
    if (it == valuePipes_.end())
      continue;
    for (size_t w = 0; w < it->second->numStreams; ++w) {
      MmaLoop::Stream &s = it->second->streams[w];
      if (!s.aShared)
        continue;
      const ir::Value *a = s.user->operand(0);
      if (auto r = regionOf.find(a); r != regionOf.end()) {
        s.aShared = r->second->aShared;
        s.aSwizzle = r->second->aSwizzle;
        s.aOff = r->second->aOff;
        continue;
      }
      regionOf[a] = &s;
      size_t end = top + s.aBytes();
      if (end > kMaxValuePipeBytes) {
        // As the stages, leave room for other staging: a from registers
        // (ldmatrix before the loop).
        s.aShared = false;
        s.aSwizzle = 0;
        continue;
      }
      s.aOff = top;
      top = alignTo(end, kSwizzleAlign);
      usedSharedA_ = true;
      const ir::Op *def = s.user->operand(0)->definingOp();
      s.aLate = opts_.lateQ && def && def->parentBlock() == op->parentBlock() && streamsOf[a] == 1;
    }
  }
}

/// The stream whose b operand `dot` reads (-1: none), and its loop.
int Lowerer::valueStreamOf(const ir::Op &dot, const MmaLoop **loop) const {
  for (const auto &[op, L] : valuePipes_)
    for (size_t w = 0; w < L->numStreams; ++w)
      if (L->streams[w].user == &dot) {
        if (loop)
          *loop = L.get();
        return static_cast<int>(w);
      }
  return -1;
}

/// Whether `load` is a pipelined stream's (its copies replace it).
bool Lowerer::valueStreamLoad(const ir::Op &load) const {
  for (const auto &[op, L] : valuePipes_)
    if (L->skipped.count(&load))
      return true;
  return false;
}

/// --emit=layouts: the copies before the loop (the loads' and the `@`'s
/// parts are planOp's and planMmaValueOp's).
void Lowerer::planValuePipeLoop(const ir::Op &op, const MmaLoop &L, int depth) {
  size_t bytes = 0;
  for (size_t w = 0; w < L.numStreams; ++w)
    bytes += static_cast<size_t>(L.streams[w].rows * L.streams[w].cols) *
             byteSize(L.streams[w].tile->dtype);
  const MmaLoop::Stream &s = L.streams[0];
  int64_t rowLen = s.transposed ? s.rows : s.cols;
  Layout sh = Layout::shared(s.transposed ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{1, 0},
                             s.swizzle ? 0 : rowLen, s.swizzle ? 1 : s.pitch - rowLen, s.swizzle,
                             L.stages, s.transposed);
  addConversion(op, "streamed b operands before the loop", sh, sh, Conversion::Mechanism::CpAsync,
                (L.ahead == 1 ? std::string("the first trip's copies")
                              : "the first " + std::to_string(L.ahead) + " trips' copies") +
                    " (a barrier first: earlier readers of the stages are done)",
                static_cast<size_t>(L.ahead) * bytes, 1, depth);
  layouts_.notes[&op].push_back(
      "values pipeline: the b operands of " + std::to_string(L.numStreams) + " `@` on #mma in " +
      std::to_string(L.stages) + " cp.async stages issued " + std::to_string(L.ahead) +
      (L.ahead == 1 ? " trip ahead" : " trips ahead") +
      (L.wgmma ? ", swizzled for wgmma.mma_async (sm_90a)" : "") +
      (L.deferDot ? "; the last `@`'s wait deferred to the next trip: the copies refill the "
                    "stage two trips back"
                  : ""));
}

/// The stage this trip's streamed `@` read (byte offset from pipeBase()):
/// the first one of the trip waits, syncs and issues the copies S - 1 trips
/// ahead.
llvm::Value *Lowerer::valuePipeStage() {
  ValuePipeTrip &P = pipeTrip_;
  if (P.stageOff)
    return P.stageOff;
  const MmaLoop &L = *P.L;
  const auto &c = *static_cast<const StreamChunks *>(P.chunks);
  int64_t ahead = L.ahead;
  auto stageBytes = b_.getInt32(static_cast<uint32_t>(L.stageBytes));
  int64_t inFlight = std::max<int64_t>(0, ahead - 1);
  if (plantedBug("values-pipeline-wait")) // waits for the group before this trip's
    inFlight = ahead;
  cpAsyncWait(inFlight);
  if (L.wgmma) // the copies' writes, made visible to the tensor cores' reads
    asmStatement("fence.proxy.async.shared::cta;");
  barrier();
  size_t ns = L.numStreams;
  llvm::Value *runs = b_.CreateAnd(P.state[ns], valuePipeRuns(L, P.carried, P.iv, ahead));
  llvm::Value *stage = P.state[ns + 1];
  llvm::Value *fill = b_.CreateAdd(stage, b_.getInt32(static_cast<uint32_t>(ahead)));
  llvm::Value *wraps = b_.CreateICmpUGE(fill, b_.getInt32(static_cast<uint32_t>(L.stages)));
  fill = b_.CreateSelect(wraps, b_.CreateSub(fill, b_.getInt32(static_cast<uint32_t>(L.stages))),
                         fill);
  Slots offAhead;
  for (size_t w = 0; w < ns; ++w)
    offAhead.push_back(streamOffset(L, w, P.state[w], ahead));
  issueTripCopies(L, c, offAhead, b_.CreateMul(fill, stageBytes), P.carried, P.iv, runs);
  P.stageOff = b_.CreateMul(stage, stageBytes);
  llvm::Value *nextStage = b_.CreateAdd(stage, b_.getInt32(1));
  nextStage =
      b_.CreateSelect(b_.CreateICmpEQ(nextStage, b_.getInt32(static_cast<uint32_t>(L.stages))),
                      b_.getInt32(0), nextStage);
  P.next.clear();
  for (size_t w = 0; w < ns; ++w)
    P.next.push_back(streamOffset(L, w, P.state[w], 1));
  P.next.push_back(runs);
  P.next.push_back(nextStage);
  return P.stageOff;
}

/// A stepped stream's element offset `ahead` trips after `off` (a recomputed
/// one has none: 0).
llvm::Value *Lowerer::streamOffset(const MmaLoop &L, size_t w, llvm::Value *off, int64_t ahead) {
  return L.streams[w].recomputed ? b_.getInt64(0) : offsetAhead(L, w, off, ahead);
}

/// Runs f with the body's arguments (and its scalars in L.aheadOps) bound to
/// their values `ahead` trips after the trip with carried values `state` (a
/// `for`: induction variable iv); restores them afterwards.
void Lowerer::withTripAhead(const MmaLoop &L, const std::vector<Slots> &state, llvm::Value *iv,
                            int64_t ahead, const std::function<void()> &f) {
  llvm::Value *ivAhead = nullptr;
  std::vector<Slots> later = predictedState(L, state, iv, ahead, ivAhead);
  std::vector<std::pair<const ir::Value *, std::optional<Slots>>> saved;
  auto save = [&](const ir::Value *v) {
    auto it = values_.find(v);
    saved.emplace_back(v, it == values_.end() ? std::nullopt : std::optional<Slots>(it->second));
  };
  if (L.isFor) {
    save(L.body->arg(0));
    values_[L.body->arg(0)] = {ivAhead};
  } else {
    for (size_t pos = 0; pos < L.carried; ++pos)
      if (!later[pos].empty()) {
        save(L.body->arg(static_cast<unsigned>(pos)));
        values_[L.body->arg(static_cast<unsigned>(pos))] = later[pos];
      }
  }
  llvm::DebugLoc loc = b_.getCurrentDebugLocation(); // lowerOp sets the ahead ops' lines
  for (const ir::Op *o : L.aheadOps) {
    save(o->result());
    lowerOp(*o, nullptr);
  }
  b_.SetCurrentDebugLocation(loc);
  f();
  for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
    if (it->second)
      values_[it->first] = *it->second;
    else
      values_.erase(it->first);
  }
}

/// A trip's copies for the trip L.ahead trips on, into the stage at byte
/// offset `stage`, and their commit: where that trip runs (`runs`). Option
/// copy-guard branches around them where it does not; without it they are
/// issued in every trip, zero-filled (src-size 0, nothing read) where it
/// does not: no branch in the trip; the loop's exit waits for them
/// (cp.async.wait_all).
void Lowerer::issueTripCopies(const MmaLoop &L, const StreamChunks &c, const Slots &off,
                              llvm::Value *stage, const std::vector<Slots> &state, llvm::Value *iv,
                              llvm::Value *runs) {
  bool predicated = !opts_.guardCopies;
  if (predicated) {
    issueValueCopies(L, c, off, stage, state, iv, L.ahead, runs);
  } else {
    emitGuarded(runs, [&]() -> llvm::Value * {
      issueValueCopies(L, c, off, stage, state, iv, L.ahead);
      return nullptr;
    });
  }
  // into stage + ahead, trip + ahead's tiles (when it runs, or zero-filled)
  cpAsyncCommit(L.ahead, predicated);
}

/// cp.async of this thread's chunks of the streams into the stage at byte
/// offset `stage`, for the trip `ahead` trips after the one with carried
/// values `state`: a stepped stream's chunk at its start plus off[w]
/// elements, a recomputed one's pointer and a mask evaluated at the chunk's
/// coordinates for that trip; a chunk masked off, or every chunk where
/// `runs` (if given) is false, is zero-filled (src-size 0).
void Lowerer::issueValueCopies(const MmaLoop &L, const StreamChunks &c, const Slots &off,
                               llvm::Value *stage, const std::vector<Slots> &state, llvm::Value *iv,
                               int64_t ahead, llvm::Value *runs) {
  bool later = false;
  for (size_t w = 0; w < L.numStreams; ++w)
    later = later || L.streams[w].recomputed || L.streams[w].mask;
  auto issue = [&] {
    llvm::Value *base = b_.CreateAdd(pipeBase(), stage);
    auto *global = llvm::PointerType::get(ctx_, 1);
    for (size_t w = 0; w < L.numStreams; ++w) {
      const MmaLoop::Stream &s = L.streams[w];
      llvm::Type *et = se_.memType(s.tile->dtype);
      RematMemo memo;
      for (size_t j = 0; j < c.coords[w].size(); ++j) {
        int64_t left = c.total[w] - static_cast<int64_t>(j) * T_;
        llvm::Value *valid =
            left < T_ ? b_.CreateICmpULT(tid_, b_.getInt32(static_cast<uint32_t>(left))) : nullptr;
        emitGuarded(valid, [&]() -> llvm::Value * {
          const Slots &at = c.coords[w][j];
          llvm::Value *src = s.recomputed ? rematAt(s.ptr, at, memo)
                                          : b_.CreateGEP(et, c.src[w][j], off[w]);
          src = b_.CreateAddrSpaceCast(src, global);
          llvm::Value *dst =
              b_.CreateInBoundsGEP(b_.getInt8Ty(), smem(), b_.CreateAdd(base, c.dst[w][j]));
          if (!s.mask && !runs) {
            b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16, {},
                               {dst, src});
            return nullptr;
          }
          llvm::Value *on = s.mask ? rematAt(s.mask, at, memo) : nullptr;
          // A select, not an `and`: for a trip that does not run the mask may
          // be poison (a shift by its out-of-range count, say: aheadable
          // allows shifts and casts), which an `and` with false would keep.
          if (on && runs)
            on = b_.CreateSelect(runs, on, b_.getFalse());
          else if (!on)
            on = runs;
          llvm::Value *bytes = b_.CreateSelect(on, b_.getInt32(16), b_.getInt32(0));
          b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16_s, {},
                             {dst, src, bytes});
          return nullptr;
        });
      }
    }
  };
  if (later)
    withTripAhead(L, state, iv, ahead, issue);
  else
    issue();
}

/// Whether the trip `ahead` trips after the one with carried values `state`
/// (a `for`: induction variable iv) runs: the loop condition on the carried
/// scalars predicted that far (LowerMmaLoop.cpp's predictedState), the
/// condition region lowered again on them alone.
llvm::Value *Lowerer::valuePipeRuns(const MmaLoop &L, const std::vector<Slots> &state,
                                    llvm::Value *iv, int64_t ahead) {
  llvm::Value *ivAhead = nullptr;
  std::vector<Slots> later = predictedState(L, state, iv, ahead, ivAhead);
  if (L.isFor)
    return predictedCond(L, {}, ivAhead);
  for (size_t pos = 0; pos < L.carried; ++pos)
    if (!later[pos].empty()) // the positions the condition may read (predictable)
      values_[L.cond->arg(static_cast<unsigned>(pos))] = later[pos];
  for (const auto &o : L.cond->ops())
    if (o.get() != L.condOp)
      lowerOp(*o, nullptr);
  return get(L.condOp->operand(0))[0];
}

/// A `for` or `while` with pipelined streams: lowerFor / lowerWhile plus the
/// first S - 1 trips' copies before the loop and the streams' state carried
/// through it.
void Lowerer::lowerValuePipeLoop(const ir::Op &op, const MmaLoop &L) {
  StagesClaim claim(*this, op, true);
  notePath("mma.values.pipeline.stages=" + std::to_string(L.stages));
  if (L.wgmma) {
    notePath("mma.values.wgmma");
    archSpecific_ = true;
    pipeAlign_ = 1024;
  }
  pipeBytes_ = std::max(pipeBytes_, L.bytes);
  valueLoopDemand_ = std::max(valueLoopDemand_, valueLoopDemand(op, &L));
  for (const auto &o : L.body->ops())
    if (L.hoisted.count(o.get()))
      lowerOp(*o, nullptr);
  llvm::Value *lb = L.isFor ? get(op.operand(0))[0] : nullptr;
  std::vector<Slots> init = operandSlots(op, L.isFor ? 3 : 0);
  StreamChunks chunks = streamSources(L);
  size_t ns = L.numStreams;
  AsyncSchedule sched;
  sched.stages = L.stages;
  std::vector<AsyncEvent> *outerEvents = asyncEvents_;
  asyncEvents_ = &sched.prologue;
  if (!plantedBug("stages-start-barrier"))
    barrier(); // earlier readers of the stages are done
  llvm::Value *runs = nullptr, *firstRuns = nullptr;
  for (int64_t j = 0; j < L.ahead; ++j) {
    llvm::Value *c = valuePipeRuns(L, init, lb, j);
    runs = runs ? b_.CreateAnd(runs, c) : c;
    if (!j)
      firstRuns = c;
    Slots off;
    for (size_t w = 0; w < ns; ++w)
      off.push_back(streamOffset(L, w, b_.getInt64(0), j));
    emitGuarded(runs, [&]() -> llvm::Value * {
      issueValueCopies(
          L, chunks, off,
          b_.getInt32(static_cast<uint32_t>(j * static_cast<int64_t>(L.stageBytes))), init, lb,
          j);
      return nullptr;
    });
    cpAsyncCommit(j); // trip j's tiles into stage j, when trips 0..j run
  }
  // Option late-q: Q into its region now, its load's latency overlapping the
  // copies' (the prologue's barrier above ended earlier reads of the region;
  // the first trip's wait and barrier publish it to every warp's wgmma).
  bool late = false;
  for (size_t w = 0; w < ns; ++w)
    if (const MmaLoop::Stream &s = L.streams[w]; s.aShared && s.aLate) {
      storeSharedA(s.user->operand(0), s.aOff, s.aSwizzle);
      late = true;
    }
  if (late) {
    notePath("mma.values.wgmma.late_q"); // option late-q
    asmStatement("fence.proxy.async.shared::cta;");
  }
  Slots loopInit(ns, b_.getInt64(0));
  loopInit.push_back(runs);
  loopInit.push_back(b_.getInt32(0));
  // With P @ V's wait deferred, a loop that runs no trip goes around it and
  // the exit's wait: that wait is then reached from the last trip alone (LLVM
  // folds the rotated loop's own entry test, the same condition, into this
  // one). Reached also with the initial values (the rotated loop's zero-trip
  // path into a shared exit), ptxas takes them for writes of in-flight
  // accumulators and serializes every wgmma of the kernel (C7515).
  llvm::BasicBlock *skip = nullptr;
  if (L.deferDot) {
    llvm::BasicBlock *enter = llvm::BasicBlock::Create(ctx_, "defer.enter", kernel_);
    skip = llvm::BasicBlock::Create(ctx_, "defer.skip", kernel_);
    b_.CreateCondBr(firstRuns, enter, skip);
    b_.SetInsertPoint(enter);
  }
  auto [pre, header, body, exit] = enterLoop(L.isFor ? "for" : "while");
  llvm::PHINode *iv = nullptr;
  if (L.isFor) {
    iv = b_.CreatePHI(lb->getType(), 2);
    iv->addIncoming(lb, pre);
  }
  std::vector<Slots> phis = makePhis(init, pre);
  std::vector<Slots> own = makePhis({loopInit}, pre);
  std::vector<Slots> fwd;
  llvm::Value *more = nullptr;
  if (L.isFor) {
    more = predictedCond(L, {}, iv);
    fwd = phis;
  } else {
    bindArgs(*L.cond, phis);
    lowerBlock(*L.cond, &fwd);
    if (fwd.empty())
      throw Unsupported("internal: while without a condition");
    more = fwd[0][0];
    fwd.erase(fwd.begin());
  }
  b_.CreateCondBr(more, body, exit);
  b_.SetInsertPoint(body);
  if (iv)
    values_[L.body->arg(0)] = {iv};
  bindArgs(*L.body, fwd, L.argBase);
  ValuePipeTrip saved = pipeTrip_;
  pipeTrip_ = ValuePipeTrip{};
  pipeTrip_.L = &L;
  pipeTrip_.chunks = &chunks;
  pipeTrip_.iv = iv;
  pipeTrip_.carried = fwd;
  pipeTrip_.state = own[0];
  std::vector<Slots> next;
  asyncEvents_ = &sched.trip;
  for (const auto &o : L.body->ops()) {
    if (b_.GetInsertBlock()->getTerminator())
      break;
    if (L.hoisted.count(o.get()) || L.skipped.count(o.get()))
      continue;
    lowerOp(*o, &next);
  }
  asyncEvents_ = &sched.exit;
  if (!pipeTrip_.stageOff)
    throw Unsupported("internal: a pipelined loop without its streamed `@`");
  Slots ownNext = pipeTrip_.next;
  pipeTrip_ = saved;
  if (!b_.GetInsertBlock()->getTerminator()) {
    if (iv)
      iv->addIncoming(b_.CreateAdd(iv, get(op.operand(2))[0]), b_.GetInsertBlock());
    addIncoming(phis, next, b_.GetInsertBlock());
    addIncoming(own, {ownNext}, b_.GetInsertBlock());
    b_.CreateBr(header);
  }
  b_.SetInsertPoint(exit);
  // Without option copy-guard the zero-filled copies past the end are in
  // flight (with it nothing is): every copy done before the region is used again.
  b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_all, {}, {});
  noteAsync({AsyncEvent::Kind::CopyWaitAll});
  std::vector<Slots> results = L.isFor ? phis : fwd;
  if (L.deferDot) { // the last trip's deferred group, before anything reads its result
    results[L.deferPos] = wgmmaWait(0, results[L.deferPos]);
    llvm::BasicBlock *done = b_.GetInsertBlock();
    llvm::BasicBlock *join = llvm::BasicBlock::Create(ctx_, "defer.join", kernel_);
    b_.CreateBr(join);
    b_.SetInsertPoint(skip); // no trip: the results are the initial values
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
    for (size_t i = 0; i < results.size(); ++i)
      for (size_t k = 0; k < results[i].size(); ++k) {
        llvm::Value *v = results[i][k];
        llvm::PHINode *phi = b_.CreatePHI(v->getType(), 2);
        phi->addIncoming(v, done);
        phi->addIncoming(slot(init[i], k), skip);
        results[i][k] = phi;
      }
  }
  asyncEvents_ = outerEvents;
  // The schedule just emitted, replayed under the weakest timing PTX allows
  // (codegen/AsyncSchedule.h): a race is a compile error, not a wrong result.
  if (std::string hazard = checkAsyncSchedule(sched); !hazard.empty())
    throw Unsupported("internal: the cp.async stages of the loop at line " +
                      std::to_string(op.loc().line) + " would race: " + hazard +
                      " (--disable-opt pipeline compiles the loop without them)");
  for (size_t i = 0; i < op.numResults(); ++i)
    bindValue(op.result(static_cast<unsigned>(i)), results[i]);
}

} // namespace tc::codegen::lower
