//===- GpuOracle.cpp - The fuzzer's GPU property: interp == GPU ----------===//
#include "fuzz/GpuOracle.h"

#include "fuzz/Emi.h"

#include "codegen/Cuda.h"
#include "codegen/Ulp.h"
#include "conformance/Compare.h"
#include "conformance/Runner.h"
#include "interp/InterpreterBackend.h"

#include <algorithm>
#include <sstream>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <set>

namespace tc::fuzz {
namespace {
// Binds `buffers` (by name) and `k`'s scalars.
LaunchArgs bind(const FuzzKernel &k, std::map<std::string, HostArray> &buffers) {
  LaunchArgs args;
  for (auto &[name, a] : buffers)
    args.setBuffer(name, &a);
  for (const ScalarDesc &s : k.scalars)
    args.setScalar(s.name, isFloat(s.dtype)
                               ? ScalarValue::ofFloat(s.dtype, s.value)
                               : ScalarValue::ofInt(s.dtype, static_cast<int64_t>(s.value)));
  return args;
}
} // namespace

RunResult runOn(Backend &backend, const CompiledKernel &kernel, const FuzzKernel &k,
                std::map<std::string, HostArray> &buffers, double seconds, bool raceCheck) {
  LaunchArgs args = bind(k, buffers);
  RunOptions opts;
  opts.maxSeconds = seconds;
  opts.raceCheck = raceCheck;
  return backend.launch(kernel, k.grid, args, opts);
}

namespace {

bool contains(const std::string &s, const char *part) {
  return s.find(part) != std::string::npos;
}

// Whether element i of an output matches: `spec`, or within `ulps` for floats.
bool outputMatches(const HostArray &got, const HostArray &want, int64_t i,
                   const conf::CompareSpec &spec, uint64_t ulps) {
  uint64_t g = got.getBits(i), w = want.getBits(i);
  if (conf::elementsMatch(want.dtype, g, w, spec))
    return true;
  return ulps > 0 && isFloat(want.dtype) &&
         conf::elementsMatch(want.dtype, g, w, conf::CompareSpec::ulps(ulps));
}

std::string describeMismatch(const std::string &name, const HostArray &got, const HostArray &want,
                             int64_t first, int64_t count, const std::string &how) {
  return "gpu differs from interp in " + name + "[" + std::to_string(first) + "]: got " +
         conf::formatElement(want.dtype, got.getBits(first)) + ", want " +
         conf::formatElement(want.dtype, want.getBits(first)) + " (" + std::to_string(count) +
         " of " + std::to_string(want.numElements()) + " elements differ; compare " + how + ")";
}

} // namespace

double dotToleranceScale(const ir::Function &fn) {
  double scale = 0;
  int64_t sum = 1; // the longest `+` reduction: it adds up the products' errors
  ir::forEachOp(fn.body(), [&](const ir::Op &op, unsigned loops) {
    if (op.kind() == ir::OpKind::Reduce && op.strAttr("kind") == "add") {
      const ir::Type &t = op.operand(0)->type();
      sum = std::max(sum, t.shape[static_cast<size_t>(op.intAttr("axis"))]);
    }
    if (op.kind() != ir::OpKind::Dot)
      return;
    const ir::Type &a = op.operand(0)->type();
    scale += static_cast<double>(a.shape[a.rank() - 1]) * (loops > 0 ? 8 : 1);
  });
  return scale * static_cast<double>(sum);
}

// Significand bits (with the implicit one) of a float dtype.
static int mantissaBits(DType t) {
  if (t == DType::F16)
    return 11;
  if (t == DType::BF16)
    return 8;
  return t == DType::F32 ? 24 : 53;
}

double mathRelativeTolerance(const ir::Function &fn) {
  double tol = 0;
  ir::forEachOp(fn.body(), [&](const ir::Op &op, unsigned) {
    if (op.numOperands() == 0 || op.operand(0)->type().isPtr)
      return;
    DType t = op.operand(0)->type().dtype;
    int bound = codegen::gpuUlpBound(op.kind(), t);
    if (bound > 0 && isFloat(t))
      tol = std::max(tol, 4.0 * (bound + 1) * std::ldexp(1.0, 1 - mantissaBits(t)));
  });
  return tol;
}

namespace {

// The analysis behind boundedOutputs: which values the interpreter and the
// GPU compute to the same bits (every op rounds once, as IEEE says, on both
// sides: docs/semantics.md), and which parameter a pointer is based on.
class ExactValues {
public:
  explicit ExactValues(const ir::Function &fn) : fn_(fn) {}

  /// The parameter `v` (a pointer) is based on; nullptr when it is not one
  /// parameter (or cannot be told).
  const ir::Value *base(const ir::Value *v) {
    std::set<const ir::Value *> visiting;
    const ir::Value *b = baseOf(v, visiting);
    return b == &cycle_ ? nullptr : b;
  }

  /// Parameters that a store or an atomic writes to (set before exact() is asked).
  std::set<const ir::Value *> written;

  /// Whether op `op` runs the same number of times, under the same conditions,
  /// on both sides: every `if` condition, `for` bound and `while` condition
  /// around it is exact.
  bool exactControl(const ir::Op &op) {
    for (const ir::Block *b = op.parentBlock(); b && b != &fn_.body();) {
      const ir::Op *parent = b->parentOp();
      if (!parent)
        return false;
      switch (parent->kind()) {
      case ir::OpKind::If:
        if (!exact(parent->operand(0)))
          return false;
        break;
      case ir::OpKind::For:
        for (unsigned i = 0; i < 3; ++i)
          if (!exact(parent->operand(i)))
            return false;
        break;
      case ir::OpKind::While: {
        const ir::Value *c = condition(*parent);
        if (!c || !exact(c))
          return false;
        break;
      }
      default: return false;
      }
      b = parent->parentBlock();
    }
    return true;
  }

  /// Whether `v` has the same bits on the interpreter and the GPU for the same inputs.
  bool exact(const ir::Value *v) {
    if (auto it = known_.find(v); it != known_.end())
      return it->second;
    if (assumed_.count(v))
      return true; // a loop-carried value being decided: exact unless its trips say otherwise
    bool r = decide(v);
    // A "true" that rests on an assumption still open is not kept: the
    // assumption may fail. A "false" never rests on one.
    if (!r || assumed_.empty())
      known_[v] = r;
    return r;
  }

private:
  static bool isParamOf(const ir::Function &fn, const ir::Value *v) {
    return v->ownerBlock() == &fn.body();
  }

  const ir::Value *combine(const ir::Value *a, const ir::Value *b) const {
    if (a == &cycle_)
      return b;
    if (b == &cycle_)
      return a;
    return a == b ? a : nullptr;
  }

  // The yielded value `i` of region `r` of `op` (nullptr: none).
  static const ir::Value *yielded(const ir::Op &op, unsigned r, unsigned i) {
    const ir::Op *t = op.region(r)->terminator();
    return t && t->kind() == ir::OpKind::Yield && i < t->numOperands() ? t->operand(i) : nullptr;
  }
  // A while loop's condition and its forwarded value `i` (nullptr: none).
  static const ir::Value *condition(const ir::Op &loop) {
    const ir::Op *t = loop.region(0)->terminator();
    return t && t->kind() == ir::OpKind::Condition && t->numOperands() > 0 ? t->operand(0)
                                                                           : nullptr;
  }
  static const ir::Value *forwarded(const ir::Op &loop, unsigned i) {
    const ir::Op *t = loop.region(0)->terminator();
    return t && t->kind() == ir::OpKind::Condition && i + 1 < t->numOperands() ? t->operand(i + 1)
                                                                               : nullptr;
  }

  const ir::Value *baseOf(const ir::Value *v, std::set<const ir::Value *> &visiting) {
    if (!v)
      return nullptr;
    if (isParamOf(fn_, v))
      return v->type().isPtr ? v : nullptr;
    if (const ir::Block *b = v->ownerBlock()) {
      const ir::Op *loop = b->parentOp();
      if (!loop)
        return nullptr;
      unsigned j = v->index();
      if (!visiting.insert(v).second)
        return &cycle_;
      const ir::Value *r = nullptr;
      if (loop->kind() == ir::OpKind::For && j > 0) // a carried value: first, then each trip's
        r = combine(baseOf(loop->operand(2 + j), visiting),
                    baseOf(yielded(*loop, 0, j - 1), visiting));
      else if (loop->kind() == ir::OpKind::While && b == loop->region(0))
        r = combine(baseOf(loop->operand(j), visiting), baseOf(yielded(*loop, 1, j), visiting));
      else if (loop->kind() == ir::OpKind::While)
        r = baseOf(forwarded(*loop, j), visiting);
      visiting.erase(v);
      return r;
    }
    const ir::Op *op = v->definingOp();
    switch (op->kind()) {
    case ir::OpKind::AddPtr:
    case ir::OpKind::Splat:
    case ir::OpKind::Broadcast:
    case ir::OpKind::ExpandDims:
    case ir::OpKind::Reshape:
    case ir::OpKind::Trans:
    case ir::OpKind::ExtractSlice: return baseOf(op->operand(0), visiting);
    case ir::OpKind::Select:
      return combine(baseOf(op->operand(1), visiting), baseOf(op->operand(2), visiting));
    case ir::OpKind::For: return baseOf(op->region(0)->arg(v->index() + 1), visiting);
    case ir::OpKind::While: return baseOf(forwarded(*op, v->index()), visiting);
    default: return nullptr;
    }
  }

  bool operandsExact(const ir::Op &op) {
    for (const ir::Value *o : op.operands())
      if (!exact(o))
        return false;
    return true;
  }

  // Whether the loop-carried value `v` is exact: `parts` are what it is made
  // of (its first value, what each trip gives it, the trip count's inputs),
  // decided with `v` assumed exact (a cycle back to it adds nothing).
  bool carried(const ir::Value *v, std::initializer_list<const ir::Value *> parts) {
    assumed_.insert(v);
    bool r = true;
    for (const ir::Value *p : parts)
      if (!p || !exact(p)) {
        r = false;
        break;
      }
    assumed_.erase(v);
    return r;
  }

  bool decide(const ir::Value *v) {
    if (isParamOf(fn_, v))
      return true;
    if (const ir::Block *b = v->ownerBlock()) {
      const ir::Op *loop = b->parentOp();
      unsigned j = v->index();
      if (loop && loop->kind() == ir::OpKind::For) {
        if (j == 0) // the induction variable
          return carried(v, {loop->operand(0), loop->operand(1), loop->operand(2)});
        return carried(v, {loop->operand(0), loop->operand(1), loop->operand(2),
                           loop->operand(2 + j), yielded(*loop, 0, j - 1)});
      }
      if (loop && loop->kind() == ir::OpKind::While) {
        if (b == loop->region(0)) // before: the first value, then each trip's
          return carried(v, {loop->operand(j), yielded(*loop, 1, j), condition(*loop)});
        return carried(v, {forwarded(*loop, j), condition(*loop)});
      }
      return false; // another region's argument: not followed
    }
    const ir::Op &op = *v->definingOp();
    using K = ir::OpKind;
    switch (op.kind()) {
    case K::Constant:
    case K::Range:
    case K::GetProgramId:
    case K::GetNumPrograms:
    case K::Splat:
    case K::Broadcast:
    case K::ExpandDims:
    case K::Reshape:
    case K::Trans:
    case K::ExtractSlice:
    case K::InsertSlice:
    case K::Cast:
    case K::Neg:
    case K::Not:
    case K::Abs:
    case K::Sqrt:
    case K::Floor:
    case K::Ceil:
    case K::Add:
    case K::Sub:
    case K::Mul:
    case K::Div:
    case K::Rem:
    case K::And:
    case K::Or:
    case K::Xor:
    case K::Shl:
    case K::Shr:
    case K::Min:
    case K::Max:
    case K::UMulHi:
    case K::CmpEq:
    case K::CmpNe:
    case K::CmpLt:
    case K::CmpLe:
    case K::CmpGt:
    case K::CmpGe:
    case K::AddPtr:
    case K::Fma:
    case K::Select: return operandsExact(op);
    case K::Bitcast: // a computed NaN's payload is the backend's own (docs/gpu-numerics.md)
      return !isFloat(op.operand(0)->type().dtype) && operandsExact(op);
    case K::Reduce: {
      // A float sum's order is the backend's own; the other reductions are exact.
      const std::string &kind = op.strAttr("kind");
      if (kind == "add" && isFloat(op.operand(0)->type().dtype))
        return false;
      return operandsExact(op);
    }
    case K::Dot: // integers: exact in any order (wrapping sums); floats: the backend's order
      return !isFloat(op.result()->type().dtype) && operandsExact(op);
    case K::Load: {
      const ir::Value *b = base(op.operand(0));
      return b && !written.count(b) && operandsExact(op);
    }
    case K::For: return exact(op.region(0)->arg(v->index() + 1));
    case K::While: {
      const ir::Value *f = forwarded(op, v->index()), *c = condition(op);
      return f && c && exact(f) && exact(c);
    }
    case K::If: {
      const ir::Value *t = yielded(op, 0, v->index()), *e = yielded(op, 1, v->index());
      return exact(op.operand(0)) && t && e && exact(t) && exact(e);
    }
    case K::Undef:
    case K::Exp:
    case K::Exp2:
    case K::Log:
    case K::Log2:
    case K::Rsqrt:
    case K::Sin:
    case K::Cos:
    case K::Store:
    case K::AtomicRMW:
    case K::AtomicCas:
    case K::Print:
    case K::Assert:
    case K::DebugBarrier:
    case K::Yield:
    case K::Condition:
    case K::Return: return false;
    }
    return false;
  }

  const ir::Function &fn_;
  const ir::Value cycle_{ir::Type{}, nullptr, nullptr, 0}; // baseOf: a loop back to itself
  std::map<const ir::Value *, bool> known_;
  std::set<const ir::Value *> assumed_;
};

} // namespace

BoundedOutputs boundedOutputs(const ir::Function &fn) {
  ExactValues ev(fn);
  std::vector<const ir::Op *> stores;
  std::map<const ir::Value *, uint64_t> ulps;
  std::set<const ir::Value *> other; // written otherwise at least once (atomics, ...)
  bool unknownWrite = false;
  ir::forEachOp(fn.body(), [&](const ir::Op &op, unsigned) {
    if (op.kind() != ir::OpKind::Store && op.kind() != ir::OpKind::AtomicRMW &&
        op.kind() != ir::OpKind::AtomicCas)
      return;
    const ir::Value *b = ev.base(op.operand(0));
    if (!b)
      unknownWrite = true;
    else
      ev.written.insert(b);
    if (op.kind() == ir::OpKind::Store)
      stores.push_back(&op);
    else
      other.insert(b);
  });
  if (unknownWrite)
    return {};
  for (const ir::Op *st : stores) {
    const ir::Value *b = ev.base(st->operand(0));
    DType stored = st->operand(1)->type().dtype;
    if (!isFloat(stored))
      continue; // compared bit for bit anyway
    // Where and whether it stores must not depend on a rounding either: its
    // address, its mask, and the conditions and trip counts around it.
    if (!ev.exact(st->operand(0)) || (st->numOperands() > 2 && !ev.exact(st->operand(2))) ||
        !ev.exactControl(*st)) {
      other.insert(b);
      continue;
    }
    if (ev.exact(st->operand(1))) { // the same bits on both sides
      ulps.emplace(b, 0);
      continue;
    }
    // The stored value through value-preserving ops and float casts to the
    // same or a narrower type (each rounds once: at most one ULP of the
    // narrower type on top of the function's own error).
    const ir::Value *v = st->operand(1);
    for (;;) {
      const ir::Op *d = v->definingOp();
      if (!d)
        break;
      ir::OpKind k = d->kind();
      bool reshape = k == ir::OpKind::Splat || k == ir::OpKind::Broadcast ||
                     k == ir::OpKind::ExpandDims || k == ir::OpKind::Reshape ||
                     k == ir::OpKind::Trans;
      DType from = d->numOperands() == 1 ? d->operand(0)->type().dtype : DType::I32;
      // No more significand bits than the source either: bf16 -> half is not
      // narrowing (one bf16 ULP is 8 half ULPs; a bf16 function's bound in
      // half ULPs would be 8 times the bound of half).
      bool narrowing = k == ir::OpKind::Cast && isFloat(from) && isFloat(v->type().dtype) &&
                       bitWidth(v->type().dtype) <= bitWidth(from) &&
                       mantissaBits(v->type().dtype) <= mantissaBits(from);
      if (!reshape && !narrowing)
        break;
      v = d->operand(0);
    }
    const ir::Op *fnOp = v->definingOp();
    int bound = fnOp && fnOp->numOperands() == 1 && isFloat(v->type().dtype)
                    ? codegen::gpuUlpBound(fnOp->kind(), fnOp->operand(0)->type().dtype)
                    : 0;
    if (bound <= 0 || !ev.exact(fnOp->operand(0))) {
      other.insert(b);
      continue;
    }
    uint64_t u = static_cast<uint64_t>(codegen::gpuUlpBound(fnOp->kind(), stored)) + 1;
    ulps[b] = std::max(ulps[b], u);
  }
  BoundedOutputs out;
  for (unsigned i = 0; i < fn.numParams(); ++i)
    if (auto it = ulps.find(fn.param(i)); it != ulps.end() && !other.count(fn.param(i)))
      out[fn.paramName(i)] = it->second;
  return out;
}

// The largest finite magnitude among the float inputs, at least 1: the scale of
// the values a ULP-bounded function's error is relative to.
static double floatInputScale(const FuzzKernel &k, const std::map<std::string, HostArray> &want) {
  double scale = 1;
  for (const BufferDesc &b : k.buffers) {
    if (b.isOutput || !isFloat(b.dtype))
      continue;
    const HostArray &a = want.at(b.name);
    for (int64_t i = 0; i < a.numElements(); ++i)
      if (double v = std::fabs(a.getDouble(i)); std::isfinite(v))
        scale = std::max(scale, v);
  }
  return scale;
}

// Calls `onBuffer(b, count, first, how)` for each buffer of `k` with elements
// that differ under the GPU comparison, and `onElement(name, i)` for each of
// them (either may be null); returns at the first buffer when `firstOnly`.
static void forEachMismatch(
    const FuzzKernel &k, const std::map<std::string, HostArray> &want,
    const std::map<std::string, HostArray> &got, uint64_t extraUlps, double dotScale,
    double mathRelTol, const BoundedOutputs *direct, bool firstOnly,
    const std::function<void(const BufferDesc &, int64_t, int64_t, const std::string &)> &onBuffer,
    const std::function<void(const std::string &, int64_t)> &onElement) {
  // A ULP-bounded result is off relative to its own magnitude, which a later
  // subtraction can shrink (`sum of log2(...) + x - S`, seed 20261402 kernel
  // 206233: 6 f32 ULPs of 2.59 in a result of 0.086): the absolute tolerance
  // is the relative one times the largest input, as intermediate values are
  // mostly about that size.
  double mathAbsTol = mathRelTol > 0 ? mathRelTol * floatInputScale(k, want) : 0;
  // An `@` of f16, bf16 or f32 tiles accumulates in f32: an f64 output of it
  // carries f32's rounding, in the tensor cores' order (seed 2026120680 kernel
  // 52216: `double *pY = c` of a float acc, 2.7e-4 relative after 24 trips), so
  // it is compared at f32's tolerance unless the kernel has an f64 `@`.
  bool f64Dot = std::find(k.features.begin(), k.features.end(), "dot.float64") != k.features.end();
  for (const BufferDesc &b : k.buffers) {
    const HostArray &w = want.at(b.name), &g = got.at(b.name);
    DType precision = b.dtype == DType::F64 && dotScale > 0 && !f64Dot ? DType::F32 : b.dtype;
    // Inputs must come back unchanged, bit for bit.
    conf::CompareSpec spec =
        !b.isOutput || k.smallInts ? conf::CompareSpec::exact() : conf::defaultCompare(precision);
    if (b.isOutput && !k.smallInts && isFloat(b.dtype) && dotScale > 0)
      spec = conf::CompareSpec::tolerance(spec.rtol * dotScale, spec.atol * dotScale * 64);
    if (b.isOutput && isFloat(b.dtype) && mathRelTol > 0) {
      double rtol = spec.kind == conf::CompareSpec::Kind::Tolerance ? spec.rtol : 0;
      double atol = spec.kind == conf::CompareSpec::Kind::Tolerance ? spec.atol : 0;
      spec = conf::CompareSpec::tolerance(std::max(rtol, mathRelTol), std::max(atol, mathAbsTol));
    }
    uint64_t ulps = b.isOutput ? extraUlps : 0;
    // A bounded output: bit for bit, or its function's ULPs, and nothing else.
    std::optional<uint64_t> bound;
    if (direct && b.isOutput && isFloat(b.dtype))
      if (auto d = direct->find(b.name); d != direct->end())
        bound = d->second;
    if (bound) {
      spec = conf::CompareSpec::exact();
      ulps = *bound;
    }
    int64_t first = -1, count = 0;
    for (int64_t i = 0; i < w.numElements(); ++i)
      if (!(b.isOutput ? outputMatches(g, w, i, spec, ulps) : g.getBits(i) == w.getBits(i))) {
        first = first < 0 ? i : first;
        ++count;
        if (onElement)
          onElement(b.name, i);
      }
    if (count > 0) {
      std::string how = b.isOutput ? spec.str() : "bits (an input must be unchanged)";
      if (ulps > 0)
        how += " or ulp=" + std::to_string(ulps);
      if (bound)
        how += *bound == 0 ? ", an exactly computed output" : ", a math function's output";
      if (onBuffer)
        onBuffer(b, count, first, how);
      if (firstOnly)
        return;
    }
  }
}

std::string compareWithReference(const FuzzKernel &k, const std::map<std::string, HostArray> &want,
                                 const std::map<std::string, HostArray> &got, uint64_t extraUlps,
                                 double dotScale, double mathRelTol, const BoundedOutputs *direct) {
  std::string diff;
  forEachMismatch(
      k, want, got, extraUlps, dotScale, mathRelTol, direct, true,
      [&](const BufferDesc &b, int64_t count, int64_t first, const std::string &how) {
        diff = describeMismatch(b.name, got.at(b.name), want.at(b.name), first, count, how);
      },
      nullptr);
  return diff;
}

/// How a GPU run that finished (Ok or Trapped) differs from the reference
/// `want`: a trap the interpreter did not have, or the first mismatching
/// output (compareWithReference); empty when it agrees.
static std::string runDifference(const RunResult &r, const FuzzKernel &k,
                                 const std::map<std::string, HostArray> &want,
                                 const std::map<std::string, HostArray> &got, uint64_t extraUlps,
                                 double dotScale, double mathRelTol, const BoundedOutputs *direct) {
  if (r.status == RunResult::Status::Trapped)
    return "the GPU trapped where the interpreter did not: " +
           (r.trap ? r.trap->render() : std::string("?"));
  return compareWithReference(k, want, got, extraUlps, dotScale, mathRelTol, direct);
}

ElementSet differingElements(const FuzzKernel &k, const std::map<std::string, HostArray> &want,
                             const std::map<std::string, HostArray> &got, uint64_t extraUlps,
                             double dotScale, double mathRelTol, const BoundedOutputs *direct) {
  ElementSet out;
  forEachMismatch(k, want, got, extraUlps, dotScale, mathRelTol, direct, false, nullptr,
                  [&](const std::string &name, int64_t i) { out.emplace(name, i); });
  return out;
}

bool interpReference(const FuzzKernel &k, double maxSeconds, std::map<std::string, HostArray> &out,
                     std::string &error, bool raceCheck) {
  CompileOutcome c = compileFuzzKernel(k);
  if (!c.ok()) {
    error = "the kernel does not compile:\n" + c.diagnostics;
    return false;
  }
  out = makeBuffers(k);
  RunResult r = runOn(*createInterpreterBackend(), *c.kernel, k, out, maxSeconds, raceCheck);
  if (r.status == RunResult::Status::Ok)
    return true;
  error = r.trap ? r.trap->render() : "interpreter error: " + r.error;
  return false;
}

GpuOracle::GpuOracle(GpuOracleOptions opts) : opts_(std::move(opts)) {
  // Measurement switch (docs/fuzz.md, "Fast paths"): each aimed kernel
  // compiled alone, as before 2026-12-04.
  if (const char *a = std::getenv("TC_FUZZ_AIMED_ALONE"); a && std::string(a) == "1")
    groupAimed_ = false;
  // One CUDA context for the worker's whole life: a recycled backend (every
  // recycleEvery kernels, to free its modules) takes the context back.
  // Every module the fuzzer loads is new: the driver's JIT cache
  // (~/.nv/ComputeCache) would only write each one to disk and evict old
  // ones, a file shared by every worker. Off unless the user says otherwise
  // (set before this process initialises CUDA).
  if (!opts_.compileOnly)
    ::setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/0);
  const char *env = std::getenv("TC_FUZZ_REUSE_CONTEXT");
  if (!opts_.compileOnly && opts_.reuseContext && !(env && std::string(env) == "0"))
    cuda::setContextReuse(true);
}
GpuOracle::~GpuOracle() = default;

gpu::GpuBackend &GpuOracle::backend(int kernels) {
  // Not while a batch's kernels are being launched: its module would go.
  if (backend_ && kernelsOnBackend_ >= opts_.recycleEvery && !launchingBatch_)
    backend_.reset(); // the context goes, and every module loaded in it
  if (!backend_) {
    gpu::GpuOptions g;
    g.device = opts_.device;
    g.codegen = opts_.codegen;
    g.diskCache = false; // every kernel is new: caching them would only fill the disk
    backend_ = gpu::createGpuBackend(g);
    kernelsOnBackend_ = 0;
  }
  kernelsOnBackend_ += kernels;
  return *backend_;
}

std::string GpuOracle::deviceDescription() {
  if (opts_.compileOnly)
    return "no GPU: compile only, sm_" + std::to_string(opts_.compileSm) +
           (codegen::findPtxas().empty() ? ", no ptxas" : ", ptxas");
  std::string d = backend().deviceDescription();
  if (cuda::imageMode() != cuda::ImageMode::Driver)
    d += std::string(", modules: ptxas cubins (TC_CUBIN=") + cuda::imageModeName(cuda::imageMode()) +
         ")";
  return d;
}

OracleResult GpuOracle::gpuError(const std::string &property, const std::string &error) {
  OracleResult r;
  r.status = OracleResult::Status::Fail;
  r.property = property;
  r.message = error;
  // A CUDA error (as opposed to a codegen refusal) may have poisoned the process.
  if (opts_.compileOnly)
    return r; // no CUDA in this process
  if ((property != "gpu-compile" && property != "emi-gpu-compile") ||
      contains(error, "CUDA_ERROR") || contains(error, "only a new process"))
    poisoned_ = true;
  return r;
}

// Adds the time since the last mark to a stage of `out` (OracleResult::stageMs).
class StageClock {
public:
  explicit StageClock(std::map<std::string, double> &out) : out_(out) {}
  void mark(const std::string &stage) {
    auto now = std::chrono::steady_clock::now();
    out_[stage] += std::chrono::duration<double, std::milli>(now - last_).count();
    last_ = now;
  }
  // Splits `ms` (already spent, counted by the next mark) off into `stage`.
  void attribute(const std::string &stage, double ms) {
    out_[stage] += ms;
    last_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double, std::milli>(ms));
  }

private:
  std::map<std::string, double> &out_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

namespace {

// codegen's stage names -> the campaign's.
std::string stageOf(const std::string &codegenStage) {
  if (codegenStage == "optimize")
    return "llvm-opt";
  if (codegenStage == "ptx")
    return "ptx";
  if (codegenStage == "link-libdevice")
    return "libdevice";
  return "llvm-ir"; // lower
}

} // namespace

OracleResult GpuOracle::check(const FuzzKernel &k) {
  std::map<std::string, double> stages;
  StageClock clock(stages);
  OracleResult result = checkTimed(k, clock);
  result.stageMs = std::move(stages);
  return result;
}

struct GpuOracle::Pending {
  CompileOutcome c;
  std::map<std::string, HostArray> want; // the interpreter's buffers
  OracleResult out;                      // a pass, with the reference
  /// The log of the ptxas run that made the kernel's module's cubin
  /// (cuda::ImageMode::Ptxas); nullopt when the driver JIT-compiled it.
  std::optional<std::string> ptxasLog;
  /// GPU batches: the kernel's EMI variant (emiSelected), compiled into the
  /// batch's module with the kernels (checkBatch); checkEmi launches this
  /// object instead of compiling the variant alone. Null when checked alone.
  std::optional<FuzzKernel> emi;
  std::shared_ptr<CompiledKernel> emiKernel;
  /// The lowering paths the GPU backend's compile of the kernel reported
  /// (gpu::CompileInfo::paths); nullopt when it did not (then runAndCompare
  /// lowers the kernel again for them).
  std::optional<std::vector<std::string>> paths;
};

namespace {

/// Splits a load's time (`loadMs`, all of cuModuleLoadData for the driver's
/// JIT) into `stages`: with a cubin, "cubin" (the ptxas process) and "jit"
/// (loading the cubin). Returns ptxas's log when the load since `seq` made a
/// cubin.
std::optional<std::string> loadStages(uint64_t seq, double loadMs,
                                      const std::function<void(const char *, double)> &add) {
  const cuda::LoadReport &lr = cuda::lastLoad();
  if (lr.seq == seq || !lr.cubin) {
    add("jit", loadMs);
    return std::nullopt;
  }
  add("cubin", lr.ptxasMs);
  add("jit", std::max(0.0, loadMs - lr.ptxasMs));
  if (lr.jitFallback)
    return std::nullopt;
  return lr.ptxasLog;
}

} // namespace

namespace {
const char *const kPlantedCompileFailure =
    "planted compile failure (test hook TC_FUZZ_TEST_COMPILE_FAIL_INDEX)";
} // namespace

std::string ptxasRepair(const std::string &log) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line))
    if (line.find("(C7517)") != std::string::npos ||
        line.find("warpgroup.wait is injected") != std::string::npos)
      return line;
  return "";
}

namespace {
const char *const kRepairMessage =
    "ptxas repaired the kernel's PTX (wgmma accumulators read before their wgmma.wait_group; "
    "on the GPU the results are right only because ptxas waits): ";
} // namespace

OracleResult onlyInBatch(const OracleResult &batch) {
  OracleResult r = batch;
  r.status = OracleResult::Status::Fail;
  r.property = "batch-only-" + batch.property;
  r.message = "fails only when compiled into one module with other kernels (--batch); it "
              "passes when checked alone: " +
              batch.message;
  r.recheckAlone = false;
  return r;
}

OracleResult GpuOracle::checkTimed(const FuzzKernel &k, StageClock &clock) {
  Pending p;
  if (std::optional<OracleResult> r = interpret(k, clock, p))
    return std::move(*r);
  return finishAlone(k, p, clock);
}

std::optional<OracleResult> GpuOracle::interpret(const FuzzKernel &k, StageClock &clock,
                                                 Pending &p) {
  OracleResult out;
  p.c = compileFuzzKernel(k);
  clock.mark("frontend");
  if (!p.c.ok()) {
    out.status = OracleResult::Status::GeneratorBug;
    out.property = "compile";
    out.message = p.c.diagnostics;
    return out;
  }
  p.want = makeBuffers(k);
  RunResult ref = runOn(*createInterpreterBackend(), *p.c.kernel, k, p.want, opts_.maxSeconds);
  clock.mark("interp");
  if (ref.status != RunResult::Status::Ok) {
    out.status = ref.trap ? OracleResult::Status::Discard : OracleResult::Status::GeneratorBug;
    out.property = ref.trap ? std::string(trapKindName(ref.trap->kind)) : "launch";
    out.message = ref.trap ? ref.trap->render() : ref.error;
    return out;
  }
  p.out.reference = p.want;
  return std::nullopt;
}

OracleResult GpuOracle::finishAlone(const FuzzKernel &k, Pending &p, StageClock &clock) {
  if (k.testCompileFailure)
    return gpuError("gpu-compile", std::string("the GPU backend does not compile the kernel: ") +
                                       kPlantedCompileFailure);
  if (opts_.compileOnly) {
    OracleResult r = compileOnly(k, *p.c.kernel, clock, p.out);
    if (r.status == OracleResult::Status::Pass && !k.classLaunches.empty())
      checkClasses(k, p, clock, r);
    return r;
  }
  gpu::GpuBackend &gpu = backend();
  std::string error;
  gpu::CompileInfo info;
  uint64_t seq = cuda::lastLoad().seq;
  bool prepared = gpu.prepare(*p.c.kernel, error, &info);
  for (const codegen::StageTime &t : info.times)
    clock.attribute(stageOf(t.stage), t.ms);
  p.ptxasLog = loadStages(seq, info.loadMs,
                          [&](const char *stage, double ms) { clock.attribute(stage, ms); });
  if (prepared && info.paths.size() == 1)
    p.paths = info.paths[0];
  // The rest of prepare: the CUDA context (a fresh one every recycleEvery
  // kernels) and the compile key (the IR printed and hashed).
  clock.mark("context");
  if (!prepared)
    return gpuError("gpu-compile", "the GPU backend does not compile the kernel: " + error);
  return runAndCompare(k, p, gpu, clock);
}

OracleResult GpuOracle::runAndCompare(const FuzzKernel &k, Pending &p, gpu::GpuBackend &gpu,
                                      StageClock &clock) {
  OracleResult out = p.out;
  const CompiledKernel &kernel = *p.c.kernel;
  {
    // Path coverage: the GPU backend compiled the kernel (in gpu/, perhaps
    // from a cache); lowering it again for the device's sm says which paths
    // that code took (codegen::loweringPaths: the same lowering).
    if (!deviceSm_) {
      std::string d = gpu.deviceDescription();
      size_t at = d.rfind("sm_");
      deviceSm_ = at == std::string::npos ? 90u
                                          : static_cast<unsigned>(std::atoi(d.c_str() + at + 3));
    }
    codegen::Options o = opts_.codegen;
    o.sm = std::min(deviceSm_, 90u); // as gpu/GpuBackend.cpp's configure
    // As the backend compiles it: the fuzzer's buffers are whole allocations
    // (gpu/GpuBackend.cpp, configure), so pointers count as 16-byte aligned.
    o.alignedPointers = true;
    if (deviceSm_ != 90) // sm_90a code (wgmma) runs on sm_90 devices only
      o.wgmma = false;
    std::string error;
    std::vector<std::string> paths;
    if (p.paths) // from the compile that made the kernel's module: not lowered again
      out.paths = *p.paths;
    else if (codegen::loweringPaths(kernel.module(), kernel.function(), o, paths, error))
      out.paths = std::move(paths);
    clock.mark("llvm-ir");
    // A wgmma kernel's PTX through ptxas too, when there is one: a missing
    // wgmma.wait_group does not show in the results (the driver's ptxas
    // injects the wait), only in ptxas's note that it did (ptxasRepair).
    // With cubins from ptxas (cuda::ImageMode::Ptxas) the note is in the log
    // of the run that made the kernel's module: no second compile.
    if (p.ptxasLog) {
      if (std::string repair = ptxasRepair(*p.ptxasLog); !repair.empty()) {
        out.status = OracleResult::Status::Fail; // (CUDA is fine: no gpuError)
        out.property = "ptxas-repair";
        out.message = kRepairMessage + repair;
        return out;
      }
    } else if (out.paths &&
               std::find(out.paths->begin(), out.paths->end(), "wgmma") != out.paths->end()) {
      if (!ptxas_.has_value())
        ptxas_ = codegen::findPtxas();
      if (!ptxas_->empty()) {
        codegen::Result c = codegen::compile(kernel.module(), kernel.function(), o);
        std::string log;
        bool accepted = c.ok() && codegen::runPtxas(c.compiled->ptx, o.sm, log);
        clock.mark("ptxas");
        if (std::string repair = accepted ? ptxasRepair(log) : ""; !repair.empty()) {
          out.status = OracleResult::Status::Fail; // (CUDA is fine: no gpuError)
          out.property = "ptxas-repair";
          out.message = kRepairMessage + repair;
          return out;
        }
      }
    }
  }
  std::map<std::string, HostArray> got = makeBuffers(k);
  RunResult r = runOn(gpu, kernel, k, got, opts_.maxSeconds);
  clock.mark("launch");
  if (r.status == RunResult::Status::Error)
    return gpuError(contains(r.error, "did not finish within") ? "gpu-hang" : "gpu-fault", r.error);
  out.other = got;
  const ir::Function &fn = kernel.function();
  uint64_t ulps = conf::gpuExtraUlps(fn);
  double dotScale = dotToleranceScale(fn), mathTol = mathRelativeTolerance(fn);
  BoundedOutputs direct = boundedOutputs(fn);
  std::string diff = runDifference(r, k, p.want, got, ulps, dotScale, mathTol, &direct);
  clock.mark("compare");
  if (!diff.empty() && r.status == RunResult::Status::Ok) {
    // Not judged: every element the GPU differs in, the interpreter one ULP
    // off in its math differs in too (docs/fuzz.md, property (f)).
    ElementSet differing = differingElements(k, p.want, got, ulps, dotScale, mathTol, &direct);
    UlpSensitivity u = ulpSensitivity(kernel, k, p.want, opts_.maxSeconds, &differing);
    if (u.covers(differing)) {
      out.status = OracleResult::Status::Discard;
      out.property = "ulp-sensitive";
      out.message = "the GPU differs (" + diff + "), and so does the interpreter " + u.first;
      return out;
    }
  }
  if (r.status == RunResult::Status::Ok && out.paths && timingSensitive(*out.paths)) {
    // The timing-sensitive paths: the same kernel again, and with another
    // stage count, so that a race that shows once in ten runs is caught and
    // its frequency reported.
    Repeats rep = repeatRuns(k, p, gpu, stagedPath(*out.paths), clock,
                             {ulps, dotScale, mathTol, &direct}, !diff.empty());
    if (rep.error)
      return std::move(*rep.error);
    if (rep.bad > 0) {
      out.status = OracleResult::Status::Fail;
      out.property = "gpu-mismatch";
      out.message = "mismatch in " + std::to_string(rep.bad) + " of " + std::to_string(rep.runs) +
                    " runs (" + rep.detail + "): " + (diff.empty() ? rep.first : diff);
      if (diff.empty())
        out.other = std::move(rep.got);
      return out;
    }
  }
  if (!diff.empty()) {
    out.status = OracleResult::Status::Fail;
    out.property = "gpu-mismatch";
    out.message = diff;
  }
  if (out.status == OracleResult::Status::Pass && r.status == RunResult::Status::Ok)
    if (std::optional<unsigned> w = warpsVariant(k, opts_))
      if (std::optional<OracleResult> bad =
              warpsVariantRun(k, p, gpu, *w, clock, {ulps, dotScale, mathTol, &direct})) {
        bad->paths = out.paths;
        return std::move(*bad);
      }
  if (out.status == OracleResult::Status::Pass && !k.classLaunches.empty())
    checkClasses(k, p, clock, out);
  if (out.status == OracleResult::Status::Pass && emiSelected(k, opts_.emiRate)) {
    checkEmi(k, p, out);
    clock.mark("emi"); // the variant: interpreter runs, compile, launch, comparison
  }
  return out;
}

bool stagedPath(const std::vector<std::string> &paths) {
  for (const std::string &p : paths)
    if (p == "wgmma" || p == "mma.loop" || p.rfind("pipeline.stages=", 0) == 0 ||
        p.rfind("mma.values.pipeline.stages=", 0) == 0)
      return true;
  return false;
}

bool timingSensitive(const std::vector<std::string> &paths) {
  return stagedPath(paths) ||
         std::find(paths.begin(), paths.end(), "atomic.partword") != paths.end();
}

std::optional<unsigned> stageVariant(const FuzzKernel &k, const GpuOracleOptions &o) {
  if (o.stageVariantRate <= 0 || o.codegen.numStages < 2)
    return std::nullopt; // --disable-opt pipeline: no stages to vary
  uint64_t h = kernelHash(k) * 0x9e3779b97f4a7c15ull;
  double u = static_cast<double>(h >> 11) * 0x1.0p-53;
  if (u >= o.stageVariantRate)
    return std::nullopt;
  std::vector<unsigned> others;
  for (unsigned s : {2u, 3u, 4u})
    if (s != o.codegen.numStages)
      others.push_back(s);
  return others[(h >> 3) % others.size()];
}

std::optional<unsigned> warpsVariant(const FuzzKernel &k, const GpuOracleOptions &o) {
  if (o.warpsVariantRate <= 0)
    return std::nullopt;
  uint64_t h = (kernelHash(k) ^ 0x5bd1e995u) * 0xd1b54a32d192ed03ull; // not stageVariant's draw
  double u = static_cast<double>(h >> 11) * 0x1.0p-53;
  if (u >= o.warpsVariantRate)
    return std::nullopt;
  return o.codegen.numWarps == 8 ? 4u : 8u;
}

GpuOracle::Repeats GpuOracle::repeatRuns(const FuzzKernel &k, Pending &p, gpu::GpuBackend &gpu,
                                         bool staged, StageClock &clock, const Tolerances &tol,
                                         bool firstBad) {
  Repeats rep;
  rep.runs = 1;
  rep.bad = firstBad ? 1 : 0;
  const CompiledKernel &kernel = *p.c.kernel;
  unsigned stages = gpu.numStages();
  int runsAtDefault = 1, badAtDefault = rep.bad;
  // Runs the kernel `n` times with the backend's current stage count; false
  // after a fault or hang (rep.error then holds it).
  auto runs = [&](int n, int &count, int &bad) {
    for (int i = 0; i < n; ++i) {
      std::map<std::string, HostArray> got = makeBuffers(k);
      RunResult r = runOn(gpu, kernel, k, got, opts_.maxSeconds);
      if (r.status == RunResult::Status::Error) {
        rep.error = gpuError(contains(r.error, "did not finish within") ? "gpu-hang" : "gpu-fault",
                             "a repeated run (num_stages " + std::to_string(gpu.numStages()) +
                                 "): " + r.error);
        return false;
      }
      std::string d =
          runDifference(r, k, p.want, got, tol.ulps, tol.dotScale, tol.mathTol, tol.direct);
      ++count;
      ++rep.runs;
      if (d.empty())
        continue;
      ++bad;
      ++rep.bad;
      if (rep.first.empty()) {
        rep.first = "num_stages " + std::to_string(gpu.numStages()) + ": " + d;
        rep.got = std::move(got);
      }
    }
    return true;
  };
  bool ok = runs(opts_.repeats, runsAtDefault, badAtDefault);
  rep.detail = "num_stages " + std::to_string(stages) + ": " + std::to_string(badAtDefault) +
               " of " + std::to_string(runsAtDefault);
  if (std::optional<unsigned> s = stageVariant(k, opts_); ok && staged && s) {
    int count = 0, bad = 0;
    gpu.setNumStages(*s);
    ok = runs(opts_.repeats + 1, count, bad);
    gpu.setNumStages(stages);
    rep.detail += ", num_stages " + std::to_string(*s) + ": " + std::to_string(bad) + " of " +
                  std::to_string(count);
  }
  clock.mark("repeat");
  return rep;
}

std::optional<OracleResult> GpuOracle::warpsVariantRun(const FuzzKernel &k, Pending &p,
                                                       gpu::GpuBackend &gpu, unsigned warps,
                                                       StageClock &clock, const Tolerances &tol) {
  const CompiledKernel &kernel = *p.c.kernel;
  unsigned base = gpu.numWarps();
  gpu.setNumWarps(warps);
  std::map<std::string, HostArray> got = makeBuffers(k);
  RunResult r = runOn(gpu, kernel, k, got, opts_.maxSeconds);
  gpu.setNumWarps(base);
  clock.mark("warps");
  std::string with = warpsVariantMessage(warps, base, "agrees");
  if (r.status == RunResult::Status::Error) {
    // A shape the backend refuses at that count is a limit, not a finding.
    if (contains(r.error, "not supported by the GPU backend"))
      return std::nullopt;
    return gpuError(contains(r.error, "did not finish within") ? "gpu-hang" : "gpu-fault",
                    with + r.error);
  }
  std::string diff =
      runDifference(r, k, p.want, got, tol.ulps, tol.dotScale, tol.mathTol, tol.direct);
  if (diff.empty())
    return std::nullopt;
  OracleResult out;
  if (r.status == RunResult::Status::Ok) { // as for the first run: property (f)
    ElementSet differing =
        differingElements(k, p.want, got, tol.ulps, tol.dotScale, tol.mathTol, tol.direct);
    UlpSensitivity u = ulpSensitivity(kernel, k, p.want, opts_.maxSeconds, &differing);
    if (u.covers(differing))
      return std::nullopt; // not judged, and the first run passed
  }
  out.status = OracleResult::Status::Fail;
  out.property = "gpu-mismatch";
  out.message = with + diff;
  out.other = std::move(got);
  return out;
}

void GpuOracle::checkBatch(const std::vector<FuzzKernel> &ks, const BatchDone &done) {
  auto msSince = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  struct Item {
    size_t i = 0;
    Pending p;
    std::map<std::string, double> stages;
    double ms = 0; // wall time spent on it (its share of the batch's included)
  };
  std::vector<Item> all;
  for (size_t i = 0; i < ks.size(); ++i) {
    Item it;
    it.i = i;
    auto t0 = std::chrono::steady_clock::now();
    std::optional<OracleResult> r;
    {
      StageClock clock(it.stages);
      r = interpret(ks[i], clock, it.p);
    }
    it.ms = msSince(t0);
    if (r) {
      r->stageMs = std::move(it.stages);
      done(i, std::move(*r), it.ms);
      continue;
    }
    all.push_back(std::move(it));
  }
  auto deliver = [&](Item &it, OracleResult r) {
    r.stageMs = it.stages;
    done(it.i, std::move(r), it.ms);
  };
  // Today's path for one kernel: compiled alone.
  auto alone = [&](Item &it) {
    it.p.emi.reset(); // alone: the EMI variant compiled alone too
    it.p.emiKernel.reset();
    it.p.paths.reset();
    auto t0 = std::chrono::steady_clock::now();
    StageClock clock(it.stages);
    OracleResult r = finishAlone(ks[it.i], it.p, clock);
    it.ms += msSince(t0);
    return r;
  };
  // Kernels aimed at a fast path (GenPolicy::aim) are not compiled with the
  // others: in a shared module a wgmma loop makes ptxas slower on every kernel
  // (measured, --compile-only: a batch of 32 with two of them took 3.2 s of
  // ptxas instead of 0.75 s, and 2.5 times the CPU per kernel over a
  // campaign). The kernels aimed at one path share a module of their own.
  std::vector<std::vector<Item>> groups(1);
  std::map<std::string, size_t> aimGroup;
  for (Item &it : all) {
    const std::vector<std::string> &f = ks[it.i].features;
    auto aim = std::find_if(f.begin(), f.end(),
                            [](const std::string &x) { return x.rfind("aim.", 0) == 0; });
    size_t g = 0;
    if (all.size() > 1 && aim != f.end()) {
      std::string key = groupAimed_ ? *aim : *aim + "#" + std::to_string(it.i);
      auto [at, fresh] = aimGroup.emplace(key, groups.size());
      if (fresh)
        groups.emplace_back();
      g = at->second;
    }
    groups[g].push_back(std::move(it));
  }
  // Checks `items` compiled into one module (alone when it is one kernel).
  auto checkModule = [&](std::vector<Item> &items) {
    if (items.empty())
      return;
    if (items.size() == 1) {
      deliver(items[0], alone(items[0]));
      return;
    }
    // One module for every kernel that the interpreter kept.
    std::map<std::string, double> shared;
    auto t0 = std::chrono::steady_clock::now();
    std::string error;
    bool ok = false;
    if (std::any_of(items.begin(), items.end(),
                    [&](const Item &it) { return ks[it.i].testCompileFailure; })) {
      error = kPlantedCompileFailure;
    } else if (opts_.compileOnly) {
      codegen::Options o = compileOnlyOptions();
      std::vector<codegen::BatchKernel> batch;
      for (const Item &it : items)
        batch.push_back({&it.p.c.kernel->module(), &it.p.c.kernel->function()});
      codegen::BatchResult r = codegen::compileBatch(batch, o, false);
      ok = r.ok();
      error = r.error;
      if (ok) {
        for (size_t j = 0; j < items.size() && j < r.compiled->paths.size(); ++j)
          items[j].p.out.paths = r.compiled->paths[j];
        for (const codegen::StageTime &t : r.compiled->times)
          shared[stageOf(t.stage)] += t.ms;
        if (!ptxas_.has_value())
          ptxas_ = codegen::findPtxas();
        if (!ptxas_->empty()) {
          auto t1 = std::chrono::steady_clock::now();
          ok = codegen::runPtxas(r.compiled->ptx, o.sm, error);
          shared["jit"] += msSince(t1);
          // A repair is some kernel's: checked one at a time, it is named.
          if (ok && !ptxasRepair(error).empty()) {
            ok = false;
            error = kRepairMessage + ptxasRepair(error);
          }
        }
      }
    } else {
      std::vector<const CompiledKernel *> kernels;
      for (const Item &it : items)
        kernels.push_back(it.p.c.kernel.get());
      // The EMI variants of the kernels that will be checked with one go into
      // the same module: not one module (and one driver JIT) each. They are
      // compiled for nothing when their kernel fails first (rare).
      auto t1 = std::chrono::steady_clock::now();
      std::vector<std::pair<std::optional<FuzzKernel>, std::shared_ptr<CompiledKernel>>> emis(
          items.size());
      for (size_t j = 0; j < items.size(); ++j) {
        const FuzzKernel &k = ks[items[j].i];
        if (!emiSelected(k, opts_.emiRate))
          continue;
        std::optional<FuzzKernel> v = emiVariant(k, kernelHash(k));
        if (!v)
          continue;
        CompileOutcome c = compileFuzzKernel(*v);
        if (!c.ok())
          continue; // checkEmi reports it (an emi-compile generator bug)
        kernels.push_back(c.kernel.get());
        emis[j] = {std::move(v), c.kernel};
      }
      shared["emi"] += msSince(t1);
      gpu::GpuBackend &gpu = backend(static_cast<int>(kernels.size()));
      gpu::CompileInfo info;
      uint64_t seq = cuda::lastLoad().seq;
      ok = gpu.prepareBatch(kernels, error, &info);
      if (ok)
        for (size_t j = 0; j < items.size(); ++j) {
          items[j].p.emi = std::move(emis[j].first);
          items[j].p.emiKernel = std::move(emis[j].second);
          if (info.paths.size() == kernels.size()) // the kernels first, then the variants
            items[j].p.paths = info.paths[j];
        }
      for (const codegen::StageTime &t : info.times)
        shared[stageOf(t.stage)] += t.ms;
      std::optional<std::string> log =
          loadStages(seq, info.loadMs, [&](const char *stage, double ms) { shared[stage] += ms; });
      // A repair is some kernel's: checked one at a time, it is named.
      if (ok && log && !ptxasRepair(*log).empty()) {
        ok = false;
        error = kRepairMessage + ptxasRepair(*log);
      }
      for (Item &it : items)
        it.p.ptxasLog = log; // no repair in it: none of the module's kernels was repaired
    }
    double wall = msSince(t0), timed = 0;
    for (const auto &[stage, ms] : shared)
      timed += ms;
    // The rest: copying the IR into one module, and (GPU) the context.
    if (wall > timed)
      shared[opts_.compileOnly ? "llvm-ir" : "context"] += wall - timed;
    double n = static_cast<double>(items.size());
    for (Item &it : items) {
      for (const auto &[stage, ms] : shared)
        it.stages[stage] += ms / n;
      it.ms += wall / n;
    }
    if (!ok && !opts_.compileOnly && backend_ && backend_->unusable()) {
      poisoned_ = true; // no kernel to blame: the caller has them checked in new processes
      return;
    }
    if (!ok) {
      // The batch does not compile or load: one kernel at a time names the culprit.
      for (Item &it : items) {
        if (poisoned_)
          return; // the caller has the rest checked in a new process
        deliver(it, alone(it));
      }
      return;
    }
    if (opts_.compileOnly) {
      for (Item &it : items) {
        if (ks[it.i].testBatchFault) { // the test hook: as after a fault in a batch
          poisoned_ = true;
          OracleResult r;
          r.status = OracleResult::Status::Fail;
          r.property = "gpu-fault";
          r.message = "planted fault in a batch (test hook TC_FUZZ_TEST_BATCH_FAULT_INDEX)";
          r.recheckAlone = true;
          deliver(it, std::move(r));
          return;
        }
        OracleResult r = it.p.out;
        auto t1 = std::chrono::steady_clock::now();
        {
          StageClock clock(it.stages);
          std::optional<OracleResult> bad;
          if (r.status == OracleResult::Status::Pass)
            bad = compileWarpsVariant(ks[it.i], *it.p.c.kernel, clock);
          if (bad) {
            bad->paths = r.paths;
            r = std::move(*bad);
          } else if (!ks[it.i].classLaunches.empty()) {
            checkClasses(ks[it.i], it.p, clock, r);
          }
        }
        it.ms += msSince(t1);
        deliver(it, std::move(r));
      }
      return;
    }
    launchingBatch_ = true;
    struct Reset {
      bool &flag;
      ~Reset() { flag = false; }
    } reset{launchingBatch_};
    for (Item &it : items) {
      if (poisoned_)
        return;
      auto t1 = std::chrono::steady_clock::now();
      OracleResult r;
      {
        StageClock clock(it.stages);
        r = runAndCompare(ks[it.i], it.p, *backend_, clock);
      }
      it.ms += msSince(t1);
      if (r.status == OracleResult::Status::Fail) {
        if (backend_ && backend_->unusable())
          poisoned_ = true; // e.g. a failed device assert: CUDA refuses everything now
        if (poisoned_) {
          r.recheckAlone = true; // a fault or hang: CUDA is gone here
          deliver(it, std::move(r));
          return;
        }
        // Before it becomes a finding: does it fail alone (today's path)?
        OracleResult a = alone(it);
        r = a.status == OracleResult::Status::Fail ? std::move(a) : onlyInBatch(r);
      }
      deliver(it, std::move(r));
    }
  };
  // The aimed kernels first (as when each was compiled alone), then the rest.
  for (size_t g = 1; g <= groups.size(); ++g) {
    checkModule(groups[g % groups.size()]);
    if (poisoned_)
      return; // the caller has the rest checked in a new process
  }
}

codegen::Options GpuOracle::compileOnlyOptions() const {
  codegen::Options o = opts_.codegen;
  o.sm = opts_.compileSm;
  // What the GPU backend compiles for the fuzzer's buffers, whole allocations
  // (gpu/GpuBackend.cpp, configure): pointers 16-byte aligned, as
  // `tritonc --assume-aligned` (without it no matmul loop is pipelined).
  o.alignedPointers = true;
  return o;
}

OracleResult GpuOracle::compileOnly(const FuzzKernel &k, const CompiledKernel &kernel,
                                    StageClock &clock, OracleResult out) {
  codegen::Options o = compileOnlyOptions();
  codegen::Result r = codegen::compile(kernel.module(), kernel.function(), o);
  if (r.compiled)
    for (const codegen::StageTime &t : r.compiled->times)
      clock.attribute(stageOf(t.stage), t.ms);
  clock.mark("llvm-ir");
  if (!r.ok())
    return gpuError("gpu-compile", "the GPU backend does not compile the kernel: " + r.error);
  std::optional<OracleResult> refused = ptxasVerdict(r.compiled->ptx, o.sm, "");
  if (!ptxas_->empty())
    clock.mark("jit");
  if (refused)
    return std::move(*refused);
  if (!r.compiled->paths.empty())
    out.paths = r.compiled->paths[0];
  if (std::optional<OracleResult> bad = compileWarpsVariant(k, kernel, clock)) {
    bad->paths = out.paths;
    return std::move(*bad);
  }
  return out;
}

std::optional<OracleResult> GpuOracle::ptxasVerdict(const std::string &ptx, unsigned sm,
                                                    const std::string &prefix) {
  if (!ptxas_.has_value())
    ptxas_ = codegen::findPtxas();
  if (ptxas_->empty())
    return std::nullopt;
  std::string log;
  if (!codegen::runPtxas(ptx, sm, log))
    return gpuError("gpu-compile", prefix + "ptxas rejects the kernel's PTX: " + log);
  if (std::string repair = ptxasRepair(log); !repair.empty())
    return gpuError("ptxas-repair", prefix + kRepairMessage + repair);
  return std::nullopt;
}

std::optional<OracleResult> GpuOracle::compileWarpsVariant(const FuzzKernel &k,
                                                           const CompiledKernel &kernel,
                                                           StageClock &clock) {
  std::optional<unsigned> w = warpsVariant(k, opts_);
  if (!w)
    return std::nullopt;
  codegen::Options o = compileOnlyOptions();
  o.numWarps = *w;
  codegen::Result v = codegen::compile(kernel.module(), kernel.function(), o);
  std::string with = warpsVariantMessage(*w, opts_.codegen.numWarps, "compiles");
  std::optional<OracleResult> bad;
  if (!v.ok()) {
    // A shape the backend refuses at that count is a limit, not a finding.
    if (!contains(v.error, "not supported by the GPU backend"))
      bad =
          gpuError("gpu-compile", with + "the GPU backend does not compile the kernel: " + v.error);
  } else {
    bad = ptxasVerdict(v.compiled->ptx, o.sm, with);
  }
  clock.mark("warps");
  return bad;
}

void GpuOracle::checkClasses(const FuzzKernel &k, Pending &p, StageClock &clock,
                             OracleResult &out) {
  std::vector<ClassRun> runs;
  bool ok = checkClassLaunches(*p.c.kernel, k, opts_.maxSeconds, out, &runs);
  clock.mark("classes");
  if (!ok)
    return; // the interpreter already differs on the specialised copy
  const CompiledKernel &kernel = *p.c.kernel;
  const ir::Function &fn = kernel.function();
  // --compile-only: every class's specialised copy in ONE module, one ptxas
  // run (as a batch of kernels); one class at a time below only when that
  // module fails, so that the failure is named with its class.
  if (opts_.compileOnly && runs.size() > 1 && compileClassesTogether(kernel, runs)) {
    clock.mark("classes");
    return;
  }
  // The GPU launches use a kernel object of their own: the backend serves
  // every launch of an object prepared without arguments whose pointers are
  // aligned with that generic code (gpu/GpuBackend.cpp, load), so the
  // kernel's own object would run its classes unspecialised.
  std::shared_ptr<CompiledKernel> own;
  gpu::GpuBackend *dev = nullptr;
  if (!opts_.compileOnly && !runs.empty()) {
    CompileOutcome c = compileFuzzKernel(k);
    if (!c.ok())
      return; // compiled once already
    own = c.kernel;
    dev = &backend(static_cast<int>(runs.size()));
    // Every class's specialised copy in ONE module and one load (as
    // --compile-only above); when that fails, the loop compiles each class
    // alone (prepare with its arguments), so that a failure names its class.
    if (runs.size() > 1 && dev->specializes()) {
      std::vector<std::map<std::string, HostArray>> buffers;
      std::vector<LaunchArgs> args;
      buffers.reserve(runs.size());
      args.reserve(runs.size());
      std::vector<const LaunchArgs *> argp;
      for (const ClassRun &run : runs) {
        buffers.push_back(makeBuffers(run.kernel));
        args.push_back(fuzz::bind(run.kernel, buffers.back()));
        argp.push_back(&args.back());
      }
      std::string error;
      dev->prepareClasses(*own, argp, error, nullptr);
      clock.mark("classes");
    }
  }
  for (ClassRun &run : runs) {
    std::string what = "class launch " + std::to_string(run.index) + " (" +
                       describeClassLaunch(k.classLaunches[run.index]) + ", classes " +
                       run.spec.key() + " " + describeSpecialization(fn, run.spec) + ")";
    auto fail = [&](OracleResult r) {
      r.classLaunch = static_cast<int>(run.index);
      r.paths = out.paths;
      out = std::move(r);
    };
    if (opts_.compileOnly) {
      // The specialised copy as the GPU backend compiles a launch's class
      // (gpu/GpuBackend.cpp: each pointer's alignment from its class).
      codegen::Options o = compileOnlyOptions();
      o.alignedPointers = false;
      SpecializedKernel sk = specializeKernel(kernel.module(), fn, run.spec);
      codegen::Result r = codegen::compile(*sk.module, *sk.function, o);
      if (!r.ok())
        return fail(gpuError("gpu-compile",
                             what + ": the GPU backend does not compile the kernel for its "
                                    "classes: " + r.error));
      if (!ptxas_.has_value())
        ptxas_ = codegen::findPtxas();
      if (!ptxas_->empty()) {
        std::string log;
        if (!codegen::runPtxas(r.compiled->ptx, o.sm, log))
          return fail(gpuError("gpu-compile", what + ": ptxas rejects the PTX: " + log));
      }
      clock.mark("classes");
      continue;
    }
    std::map<std::string, HostArray> got = makeBuffers(run.kernel);
    LaunchArgs args = fuzz::bind(run.kernel, got);
    std::string error;
    // (Found in the classes' module when prepareClasses made it.)
    if (!dev->prepare(*own, error, nullptr, &args))
      return fail(gpuError("gpu-compile", what + ": the GPU backend does not compile the "
                                                 "kernel for its classes: " + error));
    RunResult r = runOn(*dev, *own, run.kernel, got, opts_.maxSeconds);
    clock.mark("classes");
    if (r.status == RunResult::Status::Error)
      return fail(gpuError(contains(r.error, "did not finish within") ? "gpu-hang" : "gpu-fault",
                           what + ": " + r.error));
    uint64_t ulps = conf::gpuExtraUlps(fn);
    double dotScale = dotToleranceScale(fn), mathTol = mathRelativeTolerance(fn);
    BoundedOutputs direct = boundedOutputs(fn);
    std::string diff =
        runDifference(r, run.kernel, run.want, got, ulps, dotScale, mathTol, &direct);
    if (diff.empty())
      continue;
    if (r.status == RunResult::Status::Ok) { // not judged when ULPs explain it
      ElementSet differing =
          differingElements(run.kernel, run.want, got, ulps, dotScale, mathTol, &direct);
      UlpSensitivity u =
          ulpSensitivity(kernel, run.kernel, run.want, opts_.maxSeconds, &differing);
      if (u.covers(differing))
        continue;
    }
    OracleResult f = out;
    f.status = OracleResult::Status::Fail;
    f.property = "gpu-mismatch";
    f.message = what + ": " + diff;
    f.reference = run.want;
    f.other = std::move(got);
    return fail(std::move(f));
  }
}

bool GpuOracle::compileClassesTogether(const CompiledKernel &kernel,
                                       const std::vector<ClassRun> &runs) {
  // As the GPU backend compiles a launch's class (gpu/GpuBackend.cpp: each
  // pointer's alignment from its class), the copies side by side.
  codegen::Options o = compileOnlyOptions();
  o.alignedPointers = false;
  // One copy per class: launches of one class run one compiled kernel on the
  // GPU too (the backend's caches are keyed by Specialization::key()).
  std::set<std::string> classes;
  std::vector<SpecializedKernel> copies;
  std::vector<codegen::BatchKernel> batch;
  for (const ClassRun &run : runs) {
    if (!classes.insert(run.spec.key()).second)
      continue;
    copies.push_back(specializeKernel(kernel.module(), kernel.function(), run.spec));
    batch.push_back({copies.back().module.get(), copies.back().function});
  }
  codegen::BatchResult r = codegen::compileBatch(batch, o, false);
  if (!r.ok())
    return false;
  if (!ptxas_.has_value())
    ptxas_ = codegen::findPtxas();
  std::string log;
  return ptxas_->empty() || codegen::runPtxas(r.compiled->ptx, o.sm, log);
}

void GpuOracle::checkEmi(const FuzzKernel &k, Pending &p, OracleResult &out) {
  const std::map<std::string, HostArray> &want = p.want;
  if (!fuzz::checkEmi(k, want, opts_.maxSeconds, out))
    return; // the interpreter already differs (or the variant does not compile)
  // In a batch the variant is in the batch's module already (checkBatch).
  bool inBatch = p.emiKernel != nullptr;
  std::optional<FuzzKernel> v = inBatch ? p.emi : emiVariant(k, kernelHash(k));
  if (!v)
    return;
  CompileOutcome c;
  if (inBatch)
    c.kernel = p.emiKernel;
  else
    c = compileFuzzKernel(*v);
  if (!c.ok())
    return; // fuzz::checkEmi compiled it
  std::map<std::string, HostArray> vwant = makeBuffers(*v), got = makeBuffers(*v);
  for (const auto &[name, a] : want)
    vwant.at(name) = a;
  gpu::GpuBackend &gpu = backend(inBatch ? 0 : 1); // a batch counted its variant
  std::string error;
  if (!inBatch && !gpu.prepare(*c.kernel, error, nullptr)) {
    out = gpuError("emi-gpu-compile",
                   "the GPU backend does not compile the EMI variant: " + error + "\n" + v->source);
    return;
  }
  RunResult r = runOn(gpu, *c.kernel, *v, got, opts_.maxSeconds);
  if (r.status == RunResult::Status::Error) {
    out = gpuError(contains(r.error, "did not finish within") ? "gpu-hang" : "gpu-fault",
                   "the EMI variant: " + r.error);
    return;
  }
  const ir::Function &fn = c.kernel->function();
  uint64_t ulps = conf::gpuExtraUlps(fn);
  double dotScale = dotToleranceScale(fn), mathTol = mathRelativeTolerance(fn);
  BoundedOutputs direct = boundedOutputs(fn);
  std::string diff =
      r.status == RunResult::Status::Trapped
          ? "the GPU trapped on the EMI variant: " + (r.trap ? r.trap->render() : std::string("?"))
          : compareWithReference(*v, vwant, got, ulps, dotScale, mathTol, &direct);
  if (!diff.empty() && r.status == RunResult::Status::Ok) {
    ElementSet differing = differingElements(*v, vwant, got, ulps, dotScale, mathTol, &direct);
    UlpSensitivity u = ulpSensitivity(*c.kernel, *v, vwant, opts_.maxSeconds, &differing);
    if (u.covers(differing)) {
      out.status = OracleResult::Status::Discard;
      out.property = "ulp-sensitive";
      out.message = "the EMI variant: the GPU differs (" + diff +
                    "), and so does the interpreter " + u.first;
      return;
    }
  }
  if (!diff.empty()) {
    out.status = OracleResult::Status::Fail;
    out.property = "emi-gpu-mismatch";
    out.message = "the EMI variant: " + diff + "\nthe variant:\n" + v->source;
    out.other = got;
  }
}

} // namespace tc::fuzz
