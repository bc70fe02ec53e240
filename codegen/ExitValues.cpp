//===- ExitValues.cpp - A stepped loop result as its start plus the steps -===//
//
// Option "exit-values" (docs/gpu-perf.md, "Two loops: causal attention"). A
// value that each trip of a loop steps by an amount the loop does not change
// (`p += inc` for a pointer, `k += inc` for an integer) leaves the loop as
//
//   result = init + n * inc      (n: the trips the loop ran)
//
// A loop's result is opaque to the axis analysis and to the pipelines (a tile
// held in registers in the first loop's layout), so code after the loop that
// goes on with it (the second loop of causal attention that carries its K^T
// and V pointer tiles on from the first) loaded it element by element and
// could not stream it. Written as above, it is computed from values from
// before the loop: the analysis proves its contiguity and alignment, and a loop
// that starts from it streams it as one that starts from `base + offset`.
//
// The same bits as the loop it replaces (the reference interpreter runs the
// kernel as written):
//   - n is a 64-bit counter the loop carries (0 before it, + 1 at the end of
//     each trip), not a trip count computed from bounds: it is exact for every
//     loop, a `while` included, and whatever the loop's own counter does at
//     its type's end;
//   - a pointer steps by inc * sizeof(pointee) each trip, wrapping at 2^64,
//     the offset extending by its own signedness: the result is
//     init + n * ext64(inc) in 64-bit arithmetic, the same sum; an integer of
//     w bits wraps at 2^w: init + (n mod 2^w) * inc in its own type;
//   - inc is a value from before the loop, or computed in the trip from such
//     values by ops that can neither trap nor be undefined (no division,
//     shift, load or float-to-integer cast); those ops are cloned after the
//     loop, where they compute the same value, whether the loop ran or not;
//   - inc has no undefined lane: it is computed from the kernel's parameters,
//     constants, ranges and program ids alone (no load, no value of another
//     loop or branch). After a loop that ran no trip the result is init, and
//     init + 0 * inc with an undefined lane of inc would be undefined there
//     (review of 2026-12-07: a masked load's step trapped a store after the
//     loop in the interpreter, and is undefined behaviour in LLVM);
//   - only results used after the loop are rewritten, and only where the
//     initial value is a scalar or a tile computed from scalars (ranges,
//     constants, splats and the arithmetic of those): a tile that must be
//     kept in registers across the loop to be added to after it would cost
//     the loop those registers.
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"
#include "codegen/KernelCopy.h"
#include "support/PlantedBugs.h"

#include <map>
#include <unordered_map>

namespace tc::codegen {
namespace {

// Ops cloned after the loop to compute inc: pure, never trapping nor
// undefined on any operand.
bool clonableStep(const ir::Op &op) {
  switch (op.kind()) {
  case ir::OpKind::Constant:
  case ir::OpKind::Splat:
  case ir::OpKind::Broadcast:
  case ir::OpKind::ExpandDims:
  case ir::OpKind::Reshape:
  case ir::OpKind::Add:
  case ir::OpKind::Sub:
  case ir::OpKind::Mul:
  case ir::OpKind::Neg: return op.numRegions() == 0;
  case ir::OpKind::Cast: // integer to integer only
    return !isFloat(op.operand(0)->type().dtype) && !isFloat(op.result()->type().dtype) &&
           !op.operand(0)->type().isPtr && !op.result()->type().isPtr;
  default: return false;
  }
}

// Whether v has no undefined lane: computed from the kernel's parameters,
// constants, ranges and program ids by clonableStep ops (which never make an
// undefined value of defined operands).
bool definedEverywhere(const ir::Value *v, std::unordered_map<const ir::Value *, bool> &memo) {
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  const ir::Op *d = v->definingOp();
  bool ok;
  if (!d) {
    const ir::Block *b = v->ownerBlock();
    ok = b && !b->parentOp(); // a parameter (an argument of the function's body)
  } else if (d->kind() == ir::OpKind::Constant || d->kind() == ir::OpKind::Range ||
             d->kind() == ir::OpKind::GetProgramId || d->kind() == ir::OpKind::GetNumPrograms) {
    ok = true;
  } else {
    ok = clonableStep(*d);
    memo[v] = false;
    for (size_t i = 0; ok && i < d->numOperands(); ++i)
      ok = definedEverywhere(d->operand(i), memo);
  }
  memo[v] = ok;
  return ok;
}

// Ops of a tile computed from scalars (the lowering rematerialises such a tile
// where it is used instead of keeping it in registers).
bool fromScalarsOp(const ir::Op &op) {
  switch (op.kind()) {
  case ir::OpKind::Range:
  case ir::OpKind::Trans:
  case ir::OpKind::Cast:
  case ir::OpKind::AddPtr: return op.numRegions() == 0;
  default: return clonableStep(op);
  }
}

void countUses(const ir::Block &b, std::unordered_map<const ir::Value *, unsigned> &uses) {
  for (const auto &op : b.ops()) {
    for (const ir::Value *v : op->operands())
      ++uses[v];
    for (const auto &r : op->regions())
      countUses(*r, uses);
  }
}

// Whether op is `loop` or nested in one of its regions.
bool within(const ir::Op *op, const ir::Op &loop) {
  while (op) {
    if (op == &loop)
      return true;
    const ir::Block *b = op->parentBlock();
    op = b ? b->parentOp() : nullptr;
  }
  return false;
}

bool definedWithin(const ir::Value *v, const ir::Op &loop) {
  if (const ir::Op *d = v->definingOp())
    return within(d, loop);
  const ir::Block *b = v->ownerBlock();
  return b && within(b->parentOp(), loop);
}

// Whether tile v is computed from scalars by fromScalarsOp ops (a scalar is).
bool fromScalars(const ir::Value *v, std::unordered_map<const ir::Value *, bool> &memo) {
  if (v->type().isScalar())
    return true;
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  const ir::Op *d = v->definingOp();
  bool ok = d && fromScalarsOp(*d);
  memo[v] = false;
  for (size_t i = 0; ok && i < d->numOperands(); ++i)
    ok = fromScalars(d->operand(i), memo);
  memo[v] = ok;
  return ok;
}

class ExitValueRewriter {
public:
  ExitValueRewriter(ir::Op &loop, ir::Block &root,
                    const std::unordered_map<const ir::Value *, unsigned> &uses)
      : loop_(loop), root_(root), uses_(uses), isFor_(loop.kind() == ir::OpKind::For) {
    A_ = loop.region(isFor_ ? 0 : 1);
    B_ = isFor_ ? nullptr : loop.region(0);
  }

  /// Rewrites the loop's qualifying results; returns how many.
  unsigned run();

private:
  struct Stepped {
    unsigned result;             // the loop's result
    ir::Value *init;             // its value before the first trip
    std::vector<ir::Value *> inc; // the steps of one trip (in A)
  };

  /// Whether v can be computed after the loop: from outside it, or by
  /// clonableStep ops of A's own.
  bool invariant(const ir::Value *v) {
    if (!definedWithin(v, loop_))
      return true;
    const ir::Op *d = v->definingOp();
    if (!d || d->parentBlock() != A_ || !clonableStep(*d))
      return false;
    if (auto it = invariant_.find(v); it != invariant_.end())
      return it->second;
    invariant_[v] = false;
    bool ok = true;
    for (size_t i = 0; ok && i < d->numOperands(); ++i)
      ok = invariant(d->operand(i));
    invariant_[v] = ok;
    return ok;
  }

  ir::Value *cloneAfter(ir::Value *v, ir::Builder &b) {
    if (!definedWithin(v, loop_))
      return v;
    if (auto it = clones_.find(v); it != clones_.end())
      return it->second;
    const ir::Op *d = v->definingOp();
    std::vector<ir::Value *> operands;
    for (ir::Value *o : d->operands())
      operands.push_back(cloneAfter(o, b));
    std::vector<ir::NamedAttr> attrs(d->attrs().begin(), d->attrs().end());
    ir::Op *c = b.create(d->kind(), {v->type()}, std::move(operands), std::move(attrs));
    c->setLoc(d->loc());
    clones_[v] = c->result();
    return c->result();
  }

  /// The steps from `arg` (A's argument) to `next` (what A yields for it):
  /// next = arg + inc[0] + inc[1] ... through addptr (pointers) or add
  /// (integers) ops of A, each inc invariant.
  bool steps(const ir::Value *arg, const ir::Value *next, std::vector<ir::Value *> &inc) {
    const ir::Type &t = arg->type();
    bool ptr = t.isPtr, integer = !t.isPtr && isInt(t.dtype) && t.dtype != DType::Bool;
    if (!ptr && !integer)
      return false;
    while (next != arg) {
      ir::Op *d = next->definingOp();
      if (!d || d->parentBlock() != A_ || d->numOperands() != 2 || d->numResults() != 1)
        return false;
      ir::Value *x = nullptr, *step = nullptr;
      if (ptr && d->kind() == ir::OpKind::AddPtr) {
        x = d->operand(0);
        step = d->operand(1);
      } else if (integer && d->kind() == ir::OpKind::Add) {
        bool left = invariant(d->operand(1));
        x = d->operand(left ? 0 : 1);
        step = d->operand(left ? 1 : 0);
      } else {
        return false;
      }
      if (x->type() != t || !invariant(step) || !definedEverywhere(step, defined_) ||
          inc.size() > 8)
        return false;
      inc.push_back(step);
      next = x;
    }
    return !inc.empty();
  }

  void collect(std::vector<Stepped> &out);
  ir::Value *exitValue(const Stepped &s, ir::Value *n, ir::Builder &b);

  ir::Op &loop_;
  ir::Block &root_;
  const std::unordered_map<const ir::Value *, unsigned> &uses_;
  bool isFor_;
  ir::Block *A_ = nullptr, *B_ = nullptr;
  std::unordered_map<const ir::Value *, bool> invariant_, fromScalars_, defined_;
  std::map<const ir::Value *, ir::Value *> clones_;
};

void ExitValueRewriter::collect(std::vector<Stepped> &out) {
  ir::Op *yield = A_->terminator();
  ir::Op *cond = B_ ? B_->terminator() : nullptr;
  if (!yield || (B_ && !cond))
    return;
  for (unsigned j = 0; j < loop_.numResults(); ++j) {
    auto u = uses_.find(loop_.result(j));
    if (u == uses_.end() || u->second == 0)
      continue;
    // The carried value k whose value at the exit is result j, unchanged.
    unsigned k = j;
    ir::Value *arg = nullptr;
    if (isFor_) {
      arg = A_->arg(j + 1);
    } else {
      const ir::Value *f = cond->operand(j + 1);
      if (f->definingOp() || f->ownerBlock() != B_)
        continue;
      k = static_cast<unsigned>(f->index());
      arg = A_->arg(j);
    }
    if (k >= yield->numOperands())
      continue;
    ir::Value *init = loop_.operand((isFor_ ? 3 : 0) + k);
    Stepped s{j, init, {}};
    if (!steps(arg, yield->operand(k), s.inc) || !fromScalars(init, fromScalars_))
      continue;
    out.push_back(std::move(s));
  }
}

ir::Value *ExitValueRewriter::exitValue(const Stepped &s, ir::Value *n, ir::Builder &b) {
  ir::Value *v = s.init;
  const ir::Type &t = v->type();
  for (ir::Value *step : s.inc) {
    ir::Value *inc = cloneAfter(step, b);
    if (t.isPtr) {
      // init + n * ext64(inc): a splat's scalar times n, splat once.
      const ir::Op *d = inc->definingOp();
      ir::Value *scalar =
          d && d->kind() == ir::OpKind::Splat && d->numOperands() == 1 ? d->operand(0) : nullptr;
      ir::Value *x = scalar ? scalar : inc;
      ir::Value *x64 = x->type().dtype == DType::I64 ? x : b.cast(x, DType::I64);
      ir::Value *count = x->type().isScalar() ? n : b.splat(n, x->type().shape);
      ir::Value *off = b.binary(ir::OpKind::Mul, count, x64);
      if (scalar && inc->type().isTile())
        off = b.splat(off, inc->type().shape);
      if (plantedBug("exit-value-step"))
        off = b.binary(ir::OpKind::Sub, off, x64); // one step short
      ir::Op *add = b.create(ir::OpKind::AddPtr, {t}, {v, off});
      v = add->result();
    } else {
      ir::Value *count = t.dtype == DType::I64 ? n : b.cast(n, t.dtype);
      if (inc->type().isTile())
        count = b.splat(count, inc->type().shape);
      ir::Value *off = b.binary(ir::OpKind::Mul, count, inc);
      if (t.isTile() && off->type().isScalar())
        off = b.splat(off, t.shape);
      v = b.binary(ir::OpKind::Add, v, off);
    }
  }
  return v;
}

unsigned ExitValueRewriter::run() {
  if (!A_ || A_->ops().empty() || (B_ && B_->ops().empty()))
    return 0;
  std::vector<Stepped> stepped;
  collect(stepped);
  if (stepped.empty())
    return 0;

  // The trip counter: 0 before the loop, + 1 at the end of each trip.
  ir::Block *outer = loop_.parentBlock();
  size_t at = 0;
  while (outer->ops()[at].get() != &loop_)
    ++at;
  ir::Builder b(outer);
  b.setLoc(loop_.loc());
  b.setInsertionPoint(outer, at);
  ir::Type i64 = ir::Type::scalar(DType::I64);
  loop_.addOperand(b.constantInt(i64, 0));
  ir::Op *yield = A_->terminator();
  if (B_)
    B_->terminator()->addOperand(B_->addArgument(i64));
  ir::Value *trip = A_->addArgument(i64);
  ir::Builder inA(A_);
  inA.setLoc(loop_.loc());
  inA.setInsertionPoint(A_, A_->ops().size() - 1); // before the yield
  yield->addOperand(inA.binary(ir::OpKind::Add, trip, inA.constantInt(i64, 1)));
  ir::Value *n = loop_.addResult(i64);

  // The exit values, right after the loop.
  size_t after = at + 2; // the constant and the loop
  b.setInsertionPoint(outer, after);
  for (const Stepped &s : stepped) {
    ir::Value *result = loop_.result(s.result);
    ir::Value *v = exitValue(s, n, b);
    replaceUses(root_, result, v);
  }
  return static_cast<unsigned>(stepped.size());
}

bool anyLoopResultUsed(const ir::Block &b) {
  std::unordered_map<const ir::Value *, unsigned> uses;
  countUses(b, uses);
  bool any = false;
  ir::forEachOp(b, [&](const ir::Op &op, unsigned) {
    if (op.kind() == ir::OpKind::For || op.kind() == ir::OpKind::While)
      for (unsigned j = 0; j < op.numResults(); ++j)
        any = any || uses.count(op.result(j));
  });
  return any;
}

} // namespace

PrefetchedKernel rewriteExitValues(const ir::Module &module, const ir::Function &fn,
                                   const Options &opts) {
  PrefetchedKernel out;
  if (!opts.exitValues || !anyLoopResultUsed(fn.body()))
    return out;
  auto [copy, f] = copyKernel(module, fn);
  std::vector<ir::Op *> loops;
  collectLoops(f->body(), loops);
  for (ir::Op *loop : loops) {
    // Uses counted again for each loop: an inner loop's rewrite adds uses.
    std::unordered_map<const ir::Value *, unsigned> uses;
    countUses(f->body(), uses);
    out.loops += ExitValueRewriter(*loop, f->body(), uses).run() > 0 ? 1 : 0;
  }
  if (out.loops == 0)
    return out;
  out.module = std::move(copy);
  out.function = f;
  return out;
}

const ir::Module &PreparedKernel::module(const ir::Module &original) const {
  if (prefetch.module)
    return *prefetch.module;
  return exitValues.module ? *exitValues.module : original;
}

const ir::Function &PreparedKernel::function(const ir::Function &original) const {
  if (prefetch.function)
    return *prefetch.function;
  return exitValues.function ? *exitValues.function : original;
}

PreparedKernel prepareKernel(const ir::Module &module, const ir::Function &fn,
                             const Options &opts) {
  PreparedKernel out;
  out.exitValues = rewriteExitValues(module, fn, opts);
  out.prefetch = prefetchLoopLoads(out.exitValues.module ? *out.exitValues.module : module,
                                   out.exitValues.function ? *out.exitValues.function : fn, opts);
  return out;
}

} // namespace tc::codegen
