//===- Prefetch.cpp - Loads of the next trip issued one trip ahead --------===//
//
// Option "prefetch" (docs/gpu-perf.md, "Loops without `@`"). A GPU warp issues
// in order: in `for (...) { x = *p(i); acc += f(x); }` it issues trip i's
// loads, waits for them at their first use, and only then issues trip i+1's,
// so one trip's bytes are in flight per warp. Loops with an `@` have their
// own pipelines (LowerMmaLoop.cpp, LowerMmaValues.cpp); this pass gives the
// others the same overlap in registers: each qualifying load of the loop's
// body is issued for trip i + 1 at the top of trip i (its value carried into
// the next trip), and once before the loop for the first trip:
//
//   x0 = load(p(lb), m(lb) & (lb < ub))
//   for i, ..., x = x0 {
//     xn = load(p(i + step), m(i + step) & (i + step < ub))   // issued first
//     ... the body, with x for the load ...
//     yield ..., xn
//   }
//
// The same bits as the loop it replaces, which is why it is a codegen pass (the
// reference interpreter runs the loop as written):
//   - the loop writes no memory (no store, no atomic anywhere in it), so a
//     load moved one trip earlier reads the same values;
//   - a load's pointer, mask and `other` are computed, for the next trip, from
//     the loop counter and the carried values' next values by pure ops that
//     can neither trap nor be undefined (no division, shift, slice, load or
//     float-to-integer cast), so the ops cloned for a trip that does not run
//     compute unused values and nothing else, and the guard is a select;
//   - the next trip's load is masked by "that trip runs", computed in 64 bits
//     (the counter is at most 32 bits wide), so it reads nothing past the
//     loop's end;
//   - the loop has no nested loop, no `@`, no assert, print or barrier (an
//     assert that traps in trip i must not follow a read of trip i + 1's
//     addresses).
// Loads under an `if` in the body stay where they are. The loaded bytes a
// thread keeps in flight are bounded (kMaxBytesPerThread) so the extra live
// registers do not spill.
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"
#include "codegen/KernelCopy.h"
#include "support/PlantedBugs.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

namespace tc::codegen {
namespace {

// The bytes of prefetched values a thread may hold across a trip: 32
// registers (colsum's 32x128 fp32 tile on 4 warps).
constexpr int64_t kMaxBytesPerThread = 128;

// Ops that may be cloned to compute a later trip's pointer, mask or `other`:
// pure, and never trapping nor undefined on any operand (ir/IR.h). A float to
// integer cast is neither: it traps on NaN and out of range in the
// interpreter, and is poison in LLVM (fptosi), which a trip that does not run
// could produce (review of 2026-12-06: with it a well-defined kernel compiled
// to `exit`).
bool clonable(const ir::Op &op) {
  if (op.kind() == ir::OpKind::Cast && isFloat(op.operand(0)->type().dtype) &&
      !isFloat(op.result()->type().dtype))
    return false;
  switch (op.kind()) {
  case ir::OpKind::Constant:
  case ir::OpKind::Range:
  case ir::OpKind::GetProgramId:
  case ir::OpKind::GetNumPrograms:
  case ir::OpKind::Splat:
  case ir::OpKind::Broadcast:
  case ir::OpKind::ExpandDims:
  case ir::OpKind::Reshape:
  case ir::OpKind::Trans:
  case ir::OpKind::Cast:
  case ir::OpKind::Bitcast:
  case ir::OpKind::Neg:
  case ir::OpKind::Not:
  case ir::OpKind::Abs:
  case ir::OpKind::Add:
  case ir::OpKind::Sub:
  case ir::OpKind::Mul:
  case ir::OpKind::And:
  case ir::OpKind::Or:
  case ir::OpKind::Xor:
  case ir::OpKind::Min:
  case ir::OpKind::Max:
  case ir::OpKind::UMulHi:
  case ir::OpKind::CmpEq:
  case ir::OpKind::CmpNe:
  case ir::OpKind::CmpLt:
  case ir::OpKind::CmpLe:
  case ir::OpKind::CmpGt:
  case ir::OpKind::CmpGe:
  case ir::OpKind::AddPtr:
  case ir::OpKind::Select: return true;
  default: return false;
  }
}

// Whether the loop's body (with its nested regions) keeps the loop eligible.
bool bodyQualifies(const ir::Block &body) {
  bool ok = true;
  ir::forEachOp(body, [&](const ir::Op &op, unsigned) {
    switch (op.kind()) {
    case ir::OpKind::Store:
    case ir::OpKind::AtomicRMW:
    case ir::OpKind::AtomicCas:
    case ir::OpKind::Dot:
    case ir::OpKind::Assert:
    case ir::OpKind::Print:
    case ir::OpKind::DebugBarrier:
    case ir::OpKind::For:
    case ir::OpKind::While:
    case ir::OpKind::Return: ok = false; break;
    default: break;
    }
  });
  return ok;
}

int64_t bytesPerThread(const ir::Type &t, unsigned numWarps) {
  int64_t bytes = t.numElements() * std::max<int64_t>(1, bitWidth(t.dtype) / 8);
  return t.isScalar() ? bytes : (bytes + 32 * numWarps - 1) / (32 * numWarps);
}

// A loop as the pass sees it. The loads move within the loop's body block A
// (a `for`'s body, a `while`'s after-region); A's arguments are a trip's
// values: for a `for` the counter and the carried values, for a `while` the
// values its condition forwards, computed in the before-region B from the
// carried values.
class LoopPrefetcher {
public:
  LoopPrefetcher(ir::Op &loop, const Options &opts)
      : loop_(loop), opts_(opts), isFor_(loop.kind() == ir::OpKind::For) {
    a_.block = loop.region(isFor_ ? 0 : 1);
    for (const auto &op : a_.block->ops())
      a_.top.insert(op.get());
    if (!isFor_) {
      b_.block = loop.region(0);
      for (const auto &op : b_.block->ops())
        b_.top.insert(op.get());
    }
  }

  /// Transforms the loop when it qualifies; returns whether it did.
  bool run();

private:
  struct Region {
    ir::Block *block = nullptr;
    std::set<const ir::Op *> top; // the block's own ops (not nested ones)
    std::map<const ir::Value *, bool> early;
  };

  // Whether `v` is one of r's own ops' results or r's argument.
  static bool definedIn(const ir::Value *v, const Region &r) {
    if (const ir::Op *d = v->definingOp())
      return r.top.count(d) > 0;
    return v->ownerBlock() == r.block;
  }
  // The argument number of `v` in r's block, or -1.
  static int argIndex(const ir::Value *v, const Region &r) {
    return !v->definingOp() && v->ownerBlock() == r.block ? static_cast<int>(v->index()) : -1;
  }

  /// Whether `v` is computable at the top of r's block from its arguments and
  /// values defined outside it, by clonable ops.
  static bool early(const ir::Value *v, Region &r) {
    if (!definedIn(v, r) || !v->definingOp())
      return true;
    if (auto it = r.early.find(v); it != r.early.end())
      return it->second;
    const ir::Op *d = v->definingOp();
    bool ok = clonable(*d) && d->numRegions() == 0;
    r.early[v] = false;
    for (size_t i = 0; ok && i < d->numOperands(); ++i)
      ok = early(d->operand(i), r);
    r.early[v] = ok;
    return ok;
  }

  /// Adds to `args` the arguments of r's block that `v` reads (through r's ops).
  static void argsRead(const ir::Value *v, const Region &r, std::set<unsigned> &args,
                       std::set<const ir::Value *> &seen) {
    if (!definedIn(v, r) || !seen.insert(v).second)
      return;
    if (int k = argIndex(v, r); k >= 0)
      args.insert(static_cast<unsigned>(k));
    else
      for (const ir::Value *o : v->definingOp()->operands())
        argsRead(o, r, args, seen);
  }

  /// A clone of `v` under `env` (r's arguments replaced), built with `b`;
  /// values defined outside r are used as they are.
  static ir::Value *clone(ir::Value *v, std::map<const ir::Value *, ir::Value *> &env, Region &r,
                          ir::Builder &b) {
    if (auto it = env.find(v); it != env.end())
      return it->second;
    if (!definedIn(v, r))
      return v;
    const ir::Op *d = v->definingOp();
    std::vector<ir::Value *> operands;
    for (ir::Value *o : d->operands())
      operands.push_back(clone(o, env, r, b));
    std::vector<ir::NamedAttr> attrs(d->attrs().begin(), d->attrs().end());
    ir::Op *c = b.create(d->kind(), {v->type()}, std::move(operands), std::move(attrs));
    c->setLoc(d->loc());
    env[v] = c->result();
    return c->result();
  }

  /// The load `ld` for the trip whose values `env` gives, masked by `runs`.
  ir::Value *cloneLoad(const ir::Op &ld, ir::Value *runs,
                       std::map<const ir::Value *, ir::Value *> &env, ir::Builder &b) {
    ir::Value *ptr = clone(ld.operand(0), env, a_, b);
    ir::Value *guard = ptr->type().isTile() ? b.splat(runs, ptr->type().shape) : runs;
    // `runs ? mask : false`, not `mask & runs`: for a trip that does not run
    // the cloned mask may be computed from values that trip never has
    // (undefined lanes in the interpreter, poison in LLVM), and only a select
    // keeps them out of the result.
    ir::Value *mask = guard;
    if (ld.numOperands() > 1) {
      ir::Value *m = clone(ld.operand(1), env, a_, b);
      ir::Op *sel =
          b.create(ir::OpKind::Select, {m->type()}, {guard, m, b.constantInt(m->type(), 0)});
      mask = sel->result();
    }
    std::vector<ir::Value *> operands = {ptr, mask};
    if (ld.numOperands() > 2)
      operands.push_back(clone(ld.operand(2), env, a_, b));
    std::vector<ir::NamedAttr> attrs(ld.attrs().begin(), ld.attrs().end());
    ir::Op *c =
        b.create(ir::OpKind::Load, {ld.result()->type()}, std::move(operands), std::move(attrs));
    c->setLoc(ld.loc());
    return c->result();
  }

  ir::Op *yieldOp() const { return a_.block->terminator(); }
  // The value a trip yields for the loop's carried value k.
  ir::Value *yielded(size_t k) const { return yieldOp()->operand(k); }
  // A `while`'s condition op (ending B): (cond, forwarded...).
  ir::Op *conditionOp() const { return b_.block->terminator(); }

  /// For a `for`, `first (+ step) < ub` in 64 bits (the counter has at most
  /// 32: no overflow).
  ir::Value *forRuns(ir::Value *first, ir::Value *step, ir::Builder &b) {
    ir::Value *x = b.cast(first, DType::I64);
    if (step)
      x = b.binary(ir::OpKind::Add, x, b.cast(step, DType::I64));
    return b.binary(ir::OpKind::CmpLt, x, b.cast(loop_.operand(1), DType::I64));
  }

  /// The values of A's arguments `needed` for a trip and whether that trip
  /// runs, built with `b`: the first trip's (before the loop) or the next
  /// one's (at the top of A, where the yielded values `carriedNext` are).
  ir::Value *tripValues(bool first, const std::set<unsigned> &needed, ir::Builder &b,
                        std::map<const ir::Value *, ir::Value *> &env);

  ir::Op &loop_;
  const Options &opts_;
  bool isFor_;
  Region a_, b_;
};

ir::Value *LoopPrefetcher::tripValues(bool first, const std::set<unsigned> &needed, ir::Builder &b,
                                      std::map<const ir::Value *, ir::Value *> &env) {
  ir::Block *A = a_.block;
  // Planted bug prefetch-carried: the next trip's pointers are this trip's
  // (a pointer carried from trip to trip is not advanced).
  auto stale = [&](unsigned j) {
    return !first && A->arg(j)->type().isPtr && plantedBug("prefetch-carried");
  };
  if (isFor_) {
    ir::Value *iv = A->arg(0);
    if (needed.count(0))
      env[iv] = first ? loop_.operand(0) : b.binary(ir::OpKind::Add, iv, loop_.operand(2));
    for (unsigned j : needed)
      if (j > 0)
        env[A->arg(j)] = first ? loop_.operand(3 + j - 1) : stale(j) ? A->arg(j) : yielded(j - 1);
    return first ? forRuns(loop_.operand(0), nullptr, b) : forRuns(iv, loop_.operand(2), b);
  }
  // A `while`: B's condition and forwarded values, for B's arguments = the
  // loop's inits (first trip) or this trip's yielded values (next trip).
  std::map<const ir::Value *, ir::Value *> envB;
  for (size_t k = 0; k < b_.block->numArgs(); ++k)
    envB[b_.block->arg(k)] = first ? loop_.operand(k) : yielded(k);
  ir::Op *cond = conditionOp();
  for (unsigned j : needed)
    env[A->arg(j)] = stale(j) ? A->arg(j) : clone(cond->operand(1 + j), envB, b_, b);
  return clone(cond->operand(0), envB, b_, b);
}

bool LoopPrefetcher::run() {
  ir::Block *A = a_.block;
  if (!bodyQualifies(*A) || (b_.block && !bodyQualifies(*b_.block)))
    return false;
  if (isFor_) {
    DType t = A->arg(0)->type().dtype;
    if (!isInt(t) || bitWidth(t) > 32)
      return false;
    // A loop of at most one trip known from constants gains nothing.
    auto constant = [](const ir::Value *v) -> std::optional<int64_t> {
      const ir::Op *d = v->definingOp();
      if (d && d->kind() == ir::OpKind::Constant && v->type().isScalar())
        if (const auto *i = std::get_if<int64_t>(d->attr("value")))
          return *i;
      return std::nullopt;
    };
    if (auto lb = constant(loop_.operand(0)), ub = constant(loop_.operand(1)),
        st = constant(loop_.operand(2));
        lb && ub && st && (*ub <= *lb || *st <= 0 || *ub - *lb <= *st))
      return false;
  } else if (A->ops().size() <= 1) {
    return false; // a `do ... while`: the body is in B
  }

  // Which of the loop's carried values (B's arguments, or the `for`'s) a
  // trip's A arguments `args` are computed from; each must have a next value
  // computable at A's top (its yield early in A), and for a `while` each
  // forwarded value and the condition must be computable from them in B.
  auto carriedOf = [&](const std::set<unsigned> &args, std::set<unsigned> &carried) {
    if (isFor_) {
      for (unsigned j : args)
        if (j > 0)
          carried.insert(j - 1);
      return true;
    }
    ir::Op *cond = conditionOp();
    for (unsigned j : args) {
      if (!early(cond->operand(1 + j), b_))
        return false;
      std::set<const ir::Value *> seen;
      argsRead(cond->operand(1 + j), b_, carried, seen);
    }
    return true;
  };
  std::set<unsigned> loopCarried; // the trip guard's own (a `while`'s condition)
  if (!isFor_) {
    if (!early(conditionOp()->operand(0), b_))
      return false;
    std::set<const ir::Value *> seen;
    argsRead(conditionOp()->operand(0), b_, loopCarried, seen);
  }
  auto nextsEarly = [&](const std::set<unsigned> &carried) {
    for (unsigned k : carried)
      if (!early(yielded(k), a_))
        return false;
    return true;
  };
  if (!nextsEarly(loopCarried))
    return false;

  std::vector<const ir::Op *> loads;
  std::set<unsigned> needed, carried = loopCarried;
  int64_t bytes = 0;
  for (const auto &op : A->ops()) {
    if (op->kind() != ir::OpKind::Load)
      continue;
    bool ok = true;
    std::set<unsigned> args, viaArgs;
    for (const ir::Value *o : op->operands()) {
      ok = ok && early(o, a_);
      std::set<const ir::Value *> seen;
      argsRead(o, a_, args, seen);
    }
    ok = ok && carriedOf(args, viaArgs) && nextsEarly(viaArgs);
    int64_t b = bytesPerThread(op->result()->type(), opts_.numWarps);
    if (!ok || bytes + b > kMaxBytesPerThread)
      continue;
    bytes += b;
    loads.push_back(op.get());
    needed.insert(args.begin(), args.end());
    carried.insert(viaArgs.begin(), viaArgs.end());
  }
  if (loads.empty())
    return false;

  // The ops computing the next values of those carried values move to the
  // top of A (pure, reading only A's arguments and outer values: in their
  // order, before every other op), where the next trip's loads read them.
  std::set<const ir::Op *> hoist;
  std::function<void(const ir::Value *)> need = [&](const ir::Value *v) {
    const ir::Op *d = v->definingOp();
    if (!d || !a_.top.count(d) || !hoist.insert(d).second)
      return;
    for (const ir::Value *o : d->operands())
      need(o);
  };
  for (unsigned k : carried)
    need(yielded(k));
  auto &ops = A->ops();
  size_t insertAt =
      static_cast<size_t>(std::stable_partition(ops.begin(), ops.end(),
                                                [&](const std::unique_ptr<ir::Op> &op) {
                                                  return hoist.count(op.get()) > 0;
                                                }) -
                          ops.begin());

  // The loads of the first trip (inserted in `block` before position `at`)
  // or of the next one.
  auto loadsFor = [&](bool first, ir::Block *block, size_t at) {
    ir::Builder b(block);
    b.setInsertionPoint(block, at);
    b.setLoc(loop_.loc());
    std::map<const ir::Value *, ir::Value *> env;
    ir::Value *runs = tripValues(first, needed, b, env);
    std::vector<ir::Value *> out;
    for (const ir::Op *ld : loads)
      out.push_back(cloneLoad(*ld, runs, env, b));
    return out;
  };
  // Before the loop, and at the top of A (after the hoisted ops).
  ir::Block *outer = loop_.parentBlock();
  size_t at = 0;
  while (outer->ops()[at].get() != &loop_)
    ++at;
  std::vector<ir::Value *> firsts = loadsFor(true, outer, at);
  std::vector<ir::Value *> nexts = loadsFor(false, A, insertAt);

  // The loads become carried values (for a `while`, forwarded by its
  // condition too); the originals go.
  for (size_t j = 0; j < loads.size(); ++j) {
    const ir::Type &ty = loads[j]->result()->type();
    loop_.addOperand(firsts[j]);
    if (!isFor_)
      conditionOp()->addOperand(b_.block->addArgument(ty));
    ir::Value *cur = A->addArgument(ty);
    loop_.addResult(ty);
    yieldOp()->addOperand(nexts[j]);
    replaceUses(*A, loads[j]->result(), cur);
  }
  std::set<const ir::Op *> gone(loads.begin(), loads.end());
  std::erase_if(ops, [&](const std::unique_ptr<ir::Op> &op) { return gone.count(op.get()) > 0; });
  return true;
}

} // namespace

PrefetchedKernel prefetchLoopLoads(const ir::Module &module, const ir::Function &fn,
                                   const Options &opts) {
  PrefetchedKernel out;
  if (!opts.prefetch)
    return out;
  // A cheap look first: most kernels have no such loop.
  bool any = false;
  ir::forEachOp(fn.body(), [&](const ir::Op &op, unsigned) {
    any = any || ((op.kind() == ir::OpKind::For || op.kind() == ir::OpKind::While) &&
                  bodyQualifies(*op.region(op.numRegions() - 1)));
  });
  if (!any)
    return out;
  auto [copy, f] = copyKernel(module, fn);
  std::vector<ir::Op *> loops;
  collectLoops(f->body(), loops);
  for (ir::Op *loop : loops)
    out.loops += LoopPrefetcher(*loop, opts).run() ? 1 : 0;
  if (out.loops == 0)
    return out;
  out.module = std::move(copy);
  out.function = f;
  return out;
}

} // namespace tc::codegen
