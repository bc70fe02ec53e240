// Running one case in this process: compile, bind, launch, check. The
// process-isolated parallel driver is Worker.cpp.
#include "conformance/Runner.h"
#include "support/FileIO.h"

#include "codegen/Ulp.h"
#include "conformance/Json.h"
#include "interp/InterpreterBackend.h"
#include "runtime/TritonBackend.h"

#include <algorithm>
#include <chrono>
#include <fnmatch.h>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace tc::conf {

namespace {

constexpr std::string_view kStatusNames[kNumStatuses] = {"pass",    "fail",    "error", "crash",
                                                         "timeout", "skipped", "xfail", "xpass"};

std::string paramTypeText(const ir::Type &t) {
  return std::string(conformanceName(t.dtype)) + (t.isPtr ? "*" : "");
}

} // namespace

std::string shellQuote(const std::string &s) {
  bool plain = !s.empty();
  for (char c : s)
    plain = plain && (std::isalnum(static_cast<unsigned char>(c)) ||
                      std::string_view("_-./=+:,@%").find(c) != std::string_view::npos);
  if (plain)
    return s;
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

namespace {

bool contains(const std::string &hay, const std::string &needle) {
  return hay.find(needle) != std::string::npos;
}

// A compile_error expectation against the compiler's errors.
Verdict checkCompileError(const Case &c, const CompileOutcome &k) {
  const Expectation &e = c.expect;
  std::string want = "a compile error containing '" + e.message + "'" +
                     (e.line ? " on line " + std::to_string(e.line) : "");
  if (k.ok())
    return {Status::Fail, "compiled without errors; expected " + want, std::nullopt};
  for (const CompileOutcome::Error &err : k.errors)
    if (contains(err.message, e.message) && (e.line == 0 || err.line == e.line))
      return {};
  return {Status::Fail, "expected " + want + "; the compiler said:\n" + k.diagnostics,
          std::nullopt};
}

// A trap expectation against how the run ended.
Verdict checkTrap(const Case &c, const RunResult &r) {
  const Expectation &e = c.expect;
  std::string want = "trap " + std::string(trapKindName(e.trap)) +
                     (e.message.empty() ? "" : " with a message containing '" + e.message + "'");
  if (r.status == RunResult::Status::Ok)
    return {Status::Fail, "ran to completion; expected " + want, std::nullopt};
  const Trap &t = *r.trap;
  if (t.kind == e.trap && contains(t.message, e.message))
    return {};
  return {Status::Fail, "expected " + want + "; got:\n" + t.render(), std::nullopt};
}

} // namespace

// The GPU's documented ULP bound (codegen/Ulp.h) of the least exact function
// the kernel calls, plus one for the reference's own rounding; 0 when the
// kernel calls none (every other op must agree exactly or within the case's
// tolerance).
uint64_t gpuExtraUlps(const ir::Function &fn) {
  int worst = 0;
  ir::forEachOp(fn.body(), [&](const ir::Op &op, unsigned) {
    if (op.numOperands() > 0 && !op.operand(0)->type().isPtr)
      worst = std::max(worst, codegen::gpuUlpBound(op.kind(), op.operand(0)->type().dtype));
  });
  return worst > 0 ? static_cast<uint64_t>(worst) + 1 : 0;
}

std::map<std::string, uint64_t> gpuExtraUlpsByBuffer(const ir::Function &fn) {
  std::map<std::string, uint64_t> out;
  uint64_t ulps = gpuExtraUlps(fn);
  if (ulps == 0)
    return out;
  // The parameter a pointer is based on; nullptr when it cannot be told (a
  // region argument, pointers of two parameters, a pointer made of integers).
  std::map<const ir::Value *, const ir::Value *> bases;
  std::function<const ir::Value *(const ir::Value *)> base =
      [&](const ir::Value *v) -> const ir::Value * {
    if (v->ownerBlock() == &fn.body())
      return v;
    if (auto it = bases.find(v); it != bases.end())
      return it->second;
    const ir::Value *b = nullptr;
    if (const ir::Op *d = v->definingOp()) {
      bool first = true;
      for (const ir::Value *o : d->operands()) {
        if (!o->type().isPtr)
          continue;
        const ir::Value *ob = base(o);
        b = first || ob == b ? ob : nullptr;
        first = false;
        if (!b)
          break;
      }
    }
    bases[v] = b;
    return b;
  };
  // Values a ULP-bounded result reaches, to a fixed point (loop-carried values
  // come back through yields). Coarse where it is cheap to be: a reached
  // operand of a yield reaches every result and region argument of its op.
  std::set<const ir::Value *> reached, buffers;
  bool allBuffers = false, changed = true;
  auto bufferReached = [&](const ir::Value *b) {
    return allBuffers || (b ? buffers.count(b) > 0 : !buffers.empty());
  };
  auto mark = [&](const ir::Value *v) { changed = reached.insert(v).second || changed; };
  auto markOp = [&](const ir::Op &op) {
    for (const auto &r : op.results())
      mark(r.get());
    for (const auto &region : op.regions())
      for (const auto &a : region->args())
        mark(a.get());
  };
  while (changed) {
    changed = false;
    ir::forEachOp(fn.body(), [&](const ir::Op &op, unsigned) {
      bool in = op.numOperands() > 0 && !op.operand(0)->type().isPtr &&
                codegen::gpuUlpBound(op.kind(), op.operand(0)->type().dtype) > 0;
      for (const ir::Value *o : op.operands())
        in = in || reached.count(o) > 0;
      bool reads = op.kind() == ir::OpKind::Load || op.kind() == ir::OpKind::AtomicRMW ||
                   op.kind() == ir::OpKind::AtomicCas;
      bool writes = op.kind() == ir::OpKind::Store || op.kind() == ir::OpKind::AtomicRMW ||
                    op.kind() == ir::OpKind::AtomicCas;
      if (reads && op.numOperands() > 0 && bufferReached(base(op.operand(0))))
        in = true;
      if (!in)
        return;
      if (writes && op.numOperands() > 0) {
        if (const ir::Value *b = base(op.operand(0)))
          changed = buffers.insert(b).second || changed;
        else if (!allBuffers)
          allBuffers = changed = true;
      }
      markOp(op);
      if (op.kind() == ir::OpKind::Yield || op.kind() == ir::OpKind::Condition)
        if (const ir::Op *parent = op.parentBlock() ? op.parentBlock()->parentOp() : nullptr)
          markOp(*parent);
    });
  }
  for (unsigned i = 0; i < fn.numParams(); ++i)
    if (fn.param(i)->type().isPtr && bufferReached(fn.param(i)))
      out[fn.paramName(i)] = ulps;
  return out;
}

namespace {

Verdict launchAndCheck(const Suite &s, const Case &c, const CompiledKernel &kernel,
                       Backend &backend, const RunOptions &opts) {
  std::unique_ptr<BoundArgs> args = bindArgs(c);
  RunResult r;
  if (std::optional<Trap> bad = checkArgs(c, kernel)) {
    r.status = RunResult::Status::Trapped;
    r.trap = std::move(bad);
  } else {
    GridOutcome g = evalGrid(c.gridSpec(), kernel, args->launch);
    if (!g.dims)
      return {Status::Error, "grid: " + g.error, std::nullopt};
    r = backend.launch(kernel, *g.dims, args->launch, opts);
  }
  // A kernel Triton cannot express is outside the triton backend's comparable
  // subset: skipped, with the construct named (docs/triton.md).
  if (r.status == RunResult::Status::Error && isTritonUnsupported(r.error))
    return {Status::Skipped, r.error, std::nullopt};
  if (r.status == RunResult::Status::Error)
    return {Status::Error, backend.name() + " backend error: " + r.error, std::nullopt};
  switch (c.expect.kind) {
  case ExpectKind::Trap: return checkTrap(c, r);
  case ExpectKind::Outputs:
  case ExpectKind::ImplementationDefined:
  case ExpectKind::CompileError: break;
  }
  if (r.status == RunResult::Status::Trapped)
    return {Status::Error, "unexpected trap:\n" + r.trap->render(), std::nullopt};
  if (c.expect.kind == ExpectKind::Outputs)
    return checkOutputs(c, *args,
                        backend.name() == "gpu" || backend.name() == "triton"
                            ? gpuExtraUlpsByBuffer(kernel.function())
                            : std::map<std::string, uint64_t>());
  return {};
}

} // namespace

std::string_view statusName(Status s) {
  return kStatusNames[static_cast<int>(s)];
}

std::optional<Status> parseStatus(std::string_view name) {
  for (int i = 0; i < kNumStatuses; ++i)
    if (kStatusNames[i] == name)
      return static_cast<Status>(i);
  return std::nullopt;
}

bool isFailure(Status s) {
  return s == Status::Fail || s == Status::Error || s == Status::Crash || s == Status::Timeout;
}

/// The first element that matches neither `spec` nor `ulps` ULPs (NaN = NaN;
/// withinExtraUlps: a zero of the wrong sign is not a ULP away).
std::optional<Mismatch> compareWithUlps(const HostArray &got, const HostArray &want,
                                        const CompareSpec &spec, uint64_t ulps) {
  std::optional<Mismatch> m = compareArrays(got, want, spec);
  if (!m || ulps == 0 || m->index < 0 || !isFloat(want.dtype))
    return m;
  std::optional<Mismatch> first;
  int64_t count = 0;
  for (int64_t i = 0; i < want.numElements(); ++i) {
    uint64_t g = got.getBits(i), w = want.getBits(i);
    if (elementsMatch(want.dtype, g, w, spec) || withinExtraUlps(want.dtype, g, w, ulps))
      continue;
    if (!first) {
      first = m;
      first->index = i;
      first->got = formatElement(want.dtype, g);
      first->want = formatElement(want.dtype, w);
    }
    ++count;
  }
  if (first)
    first->count = count;
  return first;
}

Verdict checkOutputs(const Case &c, const BoundArgs &args, uint64_t extraUlps) {
  std::map<std::string, uint64_t> each;
  if (extraUlps > 0)
    for (const OutputSpec &o : c.expect.outputs)
      each[o.name] = extraUlps;
  return checkOutputs(c, args, each);
}

Verdict checkOutputs(const Case &c, const BoundArgs &args,
                     const std::map<std::string, uint64_t> &extraUlpsOf) {
  for (const OutputSpec &o : c.expect.outputs) {
    size_t i = 0;
    while (c.args[i].name != o.name)
      ++i;
    auto found = extraUlpsOf.find(o.name);
    uint64_t extraUlps = found == extraUlpsOf.end() ? 0 : found->second;
    if (std::optional<Mismatch> m =
            compareWithUlps(*args.buffers[i], o.want, o.compare, extraUlps)) {
      m->output = o.name;
      std::string where =
          m->index < 0
              ? "has the wrong shape or dtype"
              : "differs at index " + std::to_string(m->index) + " (" + std::to_string(m->count) +
                    " of " + std::to_string(o.want.numElements()) + " elements; compare " +
                    o.compare.str() +
                    (extraUlps ? " or ulp=" + std::to_string(extraUlps) : std::string()) + ")";
      return {Status::Fail, "output '" + o.name + "' " + where, std::move(m)};
    }
  }
  for (size_t i = 0; i < c.args.size(); ++i) {
    const ArgSpec &a = c.args[i];
    if (!a.isBuffer)
      continue;
    bool listed = false;
    for (const OutputSpec &o : c.expect.outputs)
      listed = listed || o.name == a.name;
    if (listed)
      continue;
    if (std::optional<Mismatch> m = compareBits(*args.buffers[i], args.initial[i])) {
      m->output = a.name;
      return {Status::Fail,
              "buffer '" + a.name + "' is not an expected output but changed at index " +
                  std::to_string(m->index) + " (" + std::to_string(m->count) + " of " +
                  std::to_string(args.initial[i].numElements()) + " elements)",
              std::move(m)};
    }
  }
  return {};
}

std::optional<Trap> checkArgs(const Case &c, const CompiledKernel &kernel) {
  const ir::Function &f = kernel.function();
  auto trap = [&](std::string msg) {
    Trap t;
    t.kind = TrapKind::InvalidLaunch;
    t.kernel = kernel.name();
    t.message = std::move(msg);
    return t;
  };
  if (f.numParams() != c.args.size()) {
    std::string names;
    for (unsigned i = 0; i < f.numParams(); ++i)
      names += (i ? ", " : "") + f.paramName(i);
    return trap("kernel '" + kernel.name() + "' has " + std::to_string(f.numParams()) +
                " parameters (" + names + "), the case gives " + std::to_string(c.args.size()) +
                " arguments");
  }
  for (unsigned i = 0; i < f.numParams(); ++i) {
    const ArgSpec &a = c.args[i];
    const ir::Type &t = f.param(i)->type();
    std::string pos = "argument " + std::to_string(i) + " ";
    if (a.name != f.paramName(i))
      return trap(pos + "is '" + a.name + "' but parameter " + std::to_string(i) + " is '" +
                  f.paramName(i) + "'");
    if (a.isBuffer != t.isPtr)
      return trap(pos + "'" + a.name + "' is a " + (a.isBuffer ? "buffer" : "scalar") +
                  " but the parameter is " + paramTypeText(t));
    if (a.isBuffer && a.dtype != t.dtype)
      return trap("buffer '" + a.name + "' is " + std::string(conformanceName(a.dtype)) +
                  " but parameter '" + a.name + "' is " + paramTypeText(t));
  }
  return std::nullopt;
}

Verdict runVariant(const Suite &s, const Case &c, const Variant &v, Backend &backend,
                   const RunOptions &opts) {
  CompileOutcome k = compileKernel(c.compileRequest(v, s));
  if (c.expect.kind == ExpectKind::CompileError)
    return checkCompileError(c, k);
  if (!k.ok())
    return {Status::Error, "compile error:\n" + k.diagnostics, std::nullopt};
  return launchAndCheck(s, c, *k.kernel, backend, opts);
}

CaseRecord runCase(const Suite &s, const Case &c, Backend &backend, const RunOptions &opts) {
  CaseRecord r;
  r.suite = s.name;
  r.name = c.name;
  r.file = s.file;
  r.features = c.features;
  r.backend = backend.name();
  r.expect = std::string(expectKindName(c.expect.kind));
  r.reproduce = reproduceCommand(s.file, c.name, r.backend);
  auto start = std::chrono::steady_clock::now();
  RunOptions withWarps = opts; // the case's num_warps, where it gives one
  if (c.numWarps && !withWarps.numWarps)
    withWarps.numWarps = static_cast<unsigned>(*c.numWarps);
  for (const Variant &v : c.variants()) {
    ++r.variants;
    Verdict verdict = runVariant(s, c, v, backend, withWarps);
    if (verdict.status == Status::Pass)
      continue;
    r.status = verdict.status;
    (verdict.status == Status::Skipped ? r.reason : r.error) = std::move(verdict.error);
    r.mismatch = std::move(verdict.mismatch);
    r.variant = v.label;
    r.source = c.source;
    break;
  }
  r.time = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

namespace {
struct Registered {
  BackendFactory factory;
  bool detectsTraps = false;
};
std::map<std::string, Registered, std::less<>> &registry() {
  static std::map<std::string, Registered, std::less<>> r;
  return r;
}
} // namespace

void registerBackend(const std::string &name, BackendFactory factory, bool detectsTraps) {
  registry()[name] = {std::move(factory), detectsTraps};
}

std::unique_ptr<Backend> createBackend(const std::string &name, std::string &why) {
  if (auto it = registry().find(name); it != registry().end())
    return it->second.factory();
  if (name == "interp")
    return createInterpreterBackend();
  if (name == "gpu") {
    why = "the gpu backend is not part of this build";
    return nullptr;
  }
  if (name == "triton") {
    why = "the triton backend is not registered in this tool";
    return nullptr;
  }
  why = "unknown backend '" + name + "' (interp, gpu or triton)";
  return nullptr;
}

bool backendDetectsTraps(std::string_view backend) {
  if (auto it = registry().find(backend); it != registry().end())
    return it->second.detectsTraps;
  return backend == "interp";
}

std::string reproduceCommand(const std::string &file, const std::string &caseName,
                             std::string_view backend, const std::vector<std::string> &extraArgs) {
  std::string cmd = std::string(backend == "gpu"      ? "triton-run"
                                : backend == "triton" ? "triton-run --backend triton"
                                                      : "triton-interp") +
                    " --launch " + shellQuote(file) + " --case " + shellQuote(caseName);
  for (const std::string &a : extraArgs)
    cmd += " " + shellQuote(a);
  return cmd;
}

const KnownFailure *KnownFailures::match(const std::string &suite, const std::string &caseName,
                                         const std::string &backend) const {
  for (const KnownFailure &k : entries)
    if (fnmatch(k.suite.c_str(), suite.c_str(), 0) == 0 &&
        fnmatch(k.caseName.c_str(), caseName.c_str(), 0) == 0 &&
        (k.backend.empty() || fnmatch(k.backend.c_str(), backend.c_str(), 0) == 0))
      return &k;
  return nullptr;
}

std::optional<KnownFailures> loadKnownFailures(const std::string &path, std::string &error) {
  std::string text;
  if (std::string why; !readFileCapped(path, kMaxJsonFileBytes, text, why)) {
    error = path + ": cannot read the file: " + why;
    return std::nullopt;
  }
  std::string perr;
  std::optional<Json> j = parseJson(text, perr);
  if (!j) {
    error = path + ":" + perr;
    return std::nullopt;
  }
  if (!j->is_array()) {
    error = path + ": expected a list of {\"suite\", \"case\", \"backend\", \"reason\"}";
    return std::nullopt;
  }
  KnownFailures out;
  for (size_t i = 0; i < j->size(); ++i) {
    const Json &e = (*j)[i];
    std::string where = path + ": [" + std::to_string(i) + "]";
    if (!e.is_object()) {
      error = where + ": expected an object";
      return std::nullopt;
    }
    KnownFailure k;
    for (const auto &[key, value] : e.items()) {
      if (!value.is_string()) {
        error = where + "." + key + ": expected a string";
        return std::nullopt;
      }
      std::string v = value.get<std::string>();
      if (key == "suite")
        k.suite = v;
      else if (key == "case")
        k.caseName = v;
      else if (key == "backend")
        k.backend = v;
      else if (key == "reason")
        k.reason = v;
      else {
        error = where + "." + key + ": unknown field '" + key + "'";
        return std::nullopt;
      }
    }
    if (k.suite.empty() || k.caseName.empty()) {
      error = where + ": needs 'suite' and 'case'";
      return std::nullopt;
    }
    out.entries.push_back(std::move(k));
  }
  return out;
}

void applyKnownFailures(CaseRecord &r, const KnownFailures &known) {
  const KnownFailure *k = known.match(r.suite, r.name, r.backend);
  if (!k)
    return;
  r.reason = k->reason;
  if (isFailure(r.status)) {
    r.actual = r.status;
    r.status = Status::XFail;
  } else if (r.status == Status::Pass) {
    r.status = Status::XPass;
  }
}

bool selected(const RunnerOptions &opts, const std::string &suite, const std::string &caseName,
              const std::vector<std::string> &features) {
  auto any = [](const std::vector<std::string> &globs, const std::string &s) {
    if (globs.empty())
      return true;
    for (const std::string &g : globs)
      if (fnmatch(g.c_str(), s.c_str(), 0) == 0)
        return true;
    return false;
  };
  if (!any(opts.suiteGlobs, suite) || !any(opts.caseGlobs, caseName))
    return false;
  if (opts.featureGlobs.empty())
    return true;
  for (const std::string &f : features)
    if (any(opts.featureGlobs, f))
      return true;
  return false;
}

} // namespace tc::conf
