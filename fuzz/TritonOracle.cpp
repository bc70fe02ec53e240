//===- TritonOracle.cpp - The fuzzer pointed at Triton ---------------------===//
#include "fuzz/TritonOracle.h"

#include "fuzz/Emi.h"
#include "fuzz/GpuOracle.h"
#include "fuzz/Worker.h"

#include "conformance/Compare.h"
#include "conformance/Runner.h"
#include "ir/IR.h"
#include "interp/InterpreterBackend.h"
#include "runtime/TritonBackend.h"
#include "tritonpy/TritonPy.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

namespace tc::fuzz {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double msSince(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

bool has(const std::vector<std::string> &v, const std::string &x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool contains(const std::string &s, const char *part) { return s.find(part) != std::string::npos; }

// The compare messages of fuzz/GpuOracle.cpp speak of "gpu": here it is Triton.
std::string asTriton(std::string diff) {
  const std::string from = "gpu differs from interp", to = "triton differs from interp";
  if (diff.rfind(from, 0) == 0)
    diff.replace(0, from.size(), to);
  return diff;
}

TritonOptions backendOptions(const TritonOracleOptions &o) {
  TritonOptions t;
  t.mode = o.mode;
  t.python = o.python;
  t.numWarps = o.numWarps;
  t.numStages = o.numStages;
  t.timeout = o.maxSeconds;
  t.env = o.env;
  t.fpFusion = o.fpFusion;
  t.dotInputPrecision = o.dotInputPrecision;
  return t;
}

} // namespace

std::string tritonDivergence(const std::vector<std::string> &features, const std::string &mode,
                             const std::string &errorText) {
  bool error = !errorText.empty();
  bool unsupportedType = contains(errorText, "Unsupported data type");
  // docs/triton.md, "Triton's interpreter: divergences found" (Triton 3.6.0).
  if (mode == "interpret") {
    if (has(features, "op.fma") && !error)
      return "tl.fma rounds twice in Triton's interpreter (NumPy's x * y + z)";
    if (has(features, "op.umulhi"))
      return "tl.umulhi in Triton 3.6's interpreter: of signed operands the signed high half; "
             "of 64-bit ones uint64 data (arithmetic on it then mixes types)";
    if (has(features, "atomic.add") && has(features, "dtype.bfloat16") && unsupportedType)
      return "no bf16 atomic_add in Triton's interpreter";
    if (has(features, "atomic.xchg") && (!error || unsupportedType) && std::any_of(features.begin(), features.end(), [](auto &f) {
          return f == "dtype.float32" || f == "dtype.float64" || f == "dtype.float16" ||
                 f == "dtype.bfloat16";
        }))
      return "no float atomic_xchg in Triton's interpreter";
    if (has(features, "atomic.min") && has(features, "dtype.float64") && !error)
      return "a float64 atomic_min returns a wrong old value in Triton 3.6's interpreter";
  }
  return "";
}

namespace {
// "Triton 3.6.0 ..." or "3.6.0" -> {3, 6}; nullopt when there is no version.
std::optional<std::pair<int, int>> tritonVersion(const std::string &text) {
  std::string v = text.rfind("Triton ", 0) == 0 ? text.substr(7) : text;
  int major = 0, minor = 0;
  char dot = 0;
  std::istringstream in(v);
  if (!(in >> major >> dot >> minor) || dot != '.')
    return std::nullopt;
  return std::make_pair(major, minor);
}
} // namespace

TritonKnownBug tritonKnownBug(const std::string &errorText, const std::string &version) {
  // docs/triton.md, "GPU campaign of 2026-12-04": both fixed in Triton 3.9.0.
  struct Known {
    const char *name, *assertion, *pass;
    std::pair<int, int> fixed;
  };
  static const Known known[] = {
      {"fp64-dot-narrow-operand",
       "Currently fp64 don't support largeK MMA",
       "Pipeline failed while executing [`ConvertTritonGPUToLLVM`",
       {3, 9}},
      {"coalesce-dead-while",
       "Assertion `idx < size()' failed",
       "Pipeline failed while executing [`TritonGPUCoalesce`",
       {3, 9}},
  };
  std::optional<std::pair<int, int>> v = tritonVersion(version);
  if (!v || !contains(errorText, "PassManager::run failed"))
    return {};
  for (const Known &k : known)
    if (*v < k.fixed && contains(errorText, k.assertion) && contains(errorText, k.pass))
      return {k.name, std::to_string(k.fixed.first) + "." + std::to_string(k.fixed.second) + ".0",
              "docs/upstream/triton-" + std::string(k.name) + ".md"};
  return {};
}

namespace {
void collectFacts(const ir::Block &b, TritonKernelFacts &f) {
  auto stretchingBroadcast = [](const ir::Value *v) {
    const ir::Op *d = v->definingOp();
    return d && d->kind() == ir::OpKind::Broadcast &&
           d->operand(0)->type().shape != d->result()->type().shape;
  };
  auto scalarCompare = [](const ir::Value *v) {
    const ir::Op *d = v->definingOp();
    if (!d || !v->type().isScalar())
      return false;
    switch (d->kind()) {
    case ir::OpKind::CmpEq:
    case ir::OpKind::CmpNe:
    case ir::OpKind::CmpLt:
    case ir::OpKind::CmpLe:
    case ir::OpKind::CmpGt:
    case ir::OpKind::CmpGe:
      return true;
    case ir::OpKind::Cast: // to bool: `x != 0` in the translation
      return v->type().dtype == DType::Bool;
    default:
      return false;
    }
  };
  for (const auto &op : b.ops()) {
    switch (op->kind()) {
    case ir::OpKind::AtomicRMW: // (ptr, value [, mask])
      f.atomicBroadcastValue |= stretchingBroadcast(op->operand(1));
      break;
    case ir::OpKind::AtomicCas: // (ptr, cmp, value [, mask])
      f.atomicBroadcastValue |=
          stretchingBroadcast(op->operand(1)) || stretchingBroadcast(op->operand(2));
      break;
    case ir::OpKind::Splat:
    case ir::OpKind::Broadcast:
      f.scalarCompareSplat |= scalarCompare(op->operand(0));
      break;
    case ir::OpKind::Dot:
      f.dot = true;
      break;
    default:
      break;
    }
    for (const auto &r : op->regions())
      collectFacts(*r, f);
  }
}
} // namespace

TritonKernelFacts tritonKernelFacts(const ir::Function &fn) {
  TritonKernelFacts f;
  collectFacts(fn.body(), f);
  return f;
}

TritonKnownBug tritonInterpKnownBug(const std::string &errorText, const std::string &version,
                                    const TritonKernelFacts &facts) {
  // docs/triton.md, "Fuzzing Triton": the two bugs of Triton's interpreter the
  // campaigns keep finding. Only for a worker that said its version and that
  // it runs the interpreter.
  std::optional<std::pair<int, int>> v = tritonVersion(version);
  if (!v || !contains(version, "interpreter"))
    return {};
  if (errorText.empty()) {
    // A stride-0 value array read as contiguous: wrong values, no error.
    if (facts.atomicBroadcastValue && *v < std::make_pair(3, 9))
      return {"interp-atomic-broadcast-value", "3.9.0",
              "docs/upstream/triton-interp-atomic-broadcast-value.md"};
    return {};
  }
  // A scalar comparison's result labelled with its operands' dtype: splat to a
  // float tile, `&` with a mask raises (3.6.0 and 3.9.0), or a store rejects it
  // as a mask (3.9.0). Not fixed in any release we know of.
  bool raises = contains(errorText, "InterpreterError") &&
                ((contains(errorText, "ufunc 'bitwise_") &&
                  contains(errorText, "not supported for the input types")) ||
                 contains(errorText, "mask has unsupported dtype"));
  if (facts.scalarCompareSplat && raises)
    return {"interp-compare-result-dtype", "",
            "docs/upstream/triton-interp-compare-result-dtype.md"};
  return {};
}

bool tritonDotNanDivergence(const TritonKernelFacts &facts, const std::string &description,
                            const std::map<std::string, HostArray> &want,
                            const ElementSet &differing) {
  if (!facts.dot || differing.empty() || !contains(description, "interpreter") ||
      !contains(description, kMatmulDropsNan))
    return false;
  for (const auto &[name, i] : differing) {
    auto it = want.find(name);
    if (it == want.end() || !isFloat(it->second.dtype) || i >= it->second.numElements() ||
        std::isfinite(it->second.getDouble(i)))
      return false;
  }
  return true;
}

class TritonChecker final : public Checker {
public:
  explicit TritonChecker(TritonOracleOptions o) : opts_(std::move(o)) {}

  OracleResult check(const FuzzKernel &k) override {
    std::map<std::string, double> stages;
    auto last = Clock::now();
    auto mark = [&](const char *stage) {
      stages[stage] += msSince(last);
      last = Clock::now();
    };
    OracleResult r = checkTimed(k, mark);
    r.stageMs = std::move(stages);
    return r;
  }

  std::string device() override {
    TritonBackend &b = backend();
    std::string why;
    if (!b.available(&why))
      return "Triton not available: " + why;
    return b.description();
  }
  bool mustExit() const override { return false; }

  /// The culprit step: other launch settings for the same worker.
  void reconfigure(const TritonOracleOptions &o) {
    opts_ = o;
    if (backend_)
      backend_->setLaunchOptions(backendOptions(o));
  }

  std::string onFinding(const FuzzKernel &k, const std::string &property, const std::string &name,
                        double seconds) override {
    std::string out;
    // An EMI finding's script runs its EMI variant (whose reference outputs are
    // the plain kernel's: property emi-mismatch checked that on the interpreter).
    std::optional<FuzzKernel> variant;
    if (property.rfind("emi-", 0) == 0)
      variant = emiVariant(k, kernelHash(k));
    const FuzzKernel &sk = variant ? *variant : k;
    if ((variant || property.rfind("emi-", 0) != 0) && !opts_.reproDir.empty()) {
      std::map<std::string, HostArray> want;
      std::string error;
      if (interpReference(sk, 20, want, error)) {
        std::string header = "triton-fuzz --target triton --triton-mode " + opts_.mode +
                             " finding " + name + " (" + property + ")";
        if (variant)
          header += ", the kernel's EMI variant";
        std::string script =
            tritonScript(sk, want, header, opts_.numWarps, opts_.numStages, error);
        if (!script.empty()) {
          std::error_code ec;
          fs::create_directories(opts_.reproDir, ec);
          fs::path file = fs::path(opts_.reproDir) / (name + ".py");
          std::ofstream f(file);
          f << script;
          if (f.good())
            out = "standalone Triton script: " + file.string();
        }
      }
    }
    TritonCulprit c = findTritonCulprit(k, property, opts_, seconds);
    std::string s = c.summary();
    return out.empty() ? s : s + "; " + out;
  }

private:
  TritonBackend &backend() {
    // A fresh worker now and then: Triton keeps every kernel it compiled (and
    // on the GPU its loaded module) for the life of the process.
    if (backend_ && ++launches_ > kRecycleEvery) {
      backend_.reset();
      launches_ = 0;
    }
    if (!backend_)
      backend_ = createTritonBackend(backendOptions(opts_));
    return *backend_;
  }
  static constexpr int kRecycleEvery = 1000; // launches per Triton worker

  OracleResult fail(const std::string &property, const std::string &message) {
    OracleResult r;
    r.status = OracleResult::Status::Fail;
    r.property = property;
    r.message = message;
    return r;
  }

  // A launch's error as a result: refused (a discard), a documented
  // divergence (a discard), or a failure.
  OracleResult launchError(const FuzzKernel &k, const CompiledKernel &kernel,
                           const std::string &error, const std::string &prefix) {
    if (isTritonUnsupported(error)) {
      OracleResult r;
      r.status = OracleResult::Status::Discard;
      r.property = "triton-unsupported";
      r.message = error;
      return r;
    }
    if (std::string why =
            opts_.judgeDivergences ? tritonDivergence(k.features, opts_.mode, error) : "";
        !why.empty() && error.rfind("Triton: ", 0) == 0) {
      OracleResult r;
      r.status = OracleResult::Status::Discard;
      r.property = "triton-divergence";
      r.message = "a documented divergence (docs/triton.md): " + why + ": " + error;
      return r;
    }
    if (!opts_.reportKnownBugs && error.rfind("Triton: ", 0) == 0) {
      std::string version = backend_ ? backend_->description() : ""; // the worker that ran it
      TritonKnownBug bug = tritonKnownBug(error, version);
      if (bug.name.empty() && opts_.mode == "interpret")
        bug = tritonInterpKnownBug(error, version, tritonKernelFacts(kernel.function()));
      if (!bug.name.empty()) {
        OracleResult r;
        r.status = OracleResult::Status::Discard;
        r.property = "triton-known-bug:" + bug.name;
        r.message = knownBugMessage(bug, version) + error;
        return r;
      }
    }
    if (contains(error, "did not finish the launch within"))
      return fail(prefix + "triton-hang", error);
    if (error.rfind("the triton worker ", 0) == 0 && !contains(error, "answered"))
      return fail(prefix + "triton-crash", error);
    return fail(prefix + "triton-error", error);
  }

  static std::string knownBugMessage(const TritonKnownBug &bug, const std::string &version) {
    return "a known bug of " + version.substr(0, version.find(' ', 7)) +
           (bug.fixedIn.empty() ? std::string(", not fixed as of Triton 3.9.0")
                                : ", fixed in " + bug.fixedIn) +
           " (" + bug.doc + "; --report-known-triton-bugs reports it): ";
  }

  template <class Mark> OracleResult checkTimed(const FuzzKernel &k, Mark &mark) {
    OracleResult out;
    CompileOutcome c = compileFuzzKernel(k);
    mark("frontend");
    if (!c.ok()) {
      out.status = OracleResult::Status::GeneratorBug;
      out.property = "compile";
      out.message = c.diagnostics;
      return out;
    }
    // Outside the comparable subset: no need to run anything.
    tritonpy::Result t = tritonpy::translate(c.kernel->module(), c.kernel->function());
    mark("translate");
    if (!t.ok()) {
      out.status = OracleResult::Status::Discard;
      out.property = "triton-unsupported";
      out.message = t.error;
      return out;
    }
    std::map<std::string, HostArray> want = makeBuffers(k);
    RunResult ref = runOn(*createInterpreterBackend(), *c.kernel, k, want, opts_.maxSeconds);
    mark("interp");
    if (ref.status != RunResult::Status::Ok) {
      out.status = ref.trap ? OracleResult::Status::Discard : OracleResult::Status::GeneratorBug;
      out.property = ref.trap ? std::string(trapKindName(ref.trap->kind)) : "launch";
      out.message = ref.trap ? ref.trap->render() : ref.error;
      return out;
    }
    out.reference = want;
    std::map<std::string, HostArray> got = makeBuffers(k);
    RunResult r = runOn(backend(), *c.kernel, k, got, opts_.maxSeconds);
    mark("triton");
    if (r.status == RunResult::Status::Error)
      return launchError(k, *c.kernel, r.error, "");
    out.other = got;
    std::string diff = compare(k, *c.kernel, want, got, r, "");
    mark("compare");
    if (!diff.empty()) {
      if (diff == "-") { // not judged (ulp-sensitive / a documented divergence)
        out.status = OracleResult::Status::Discard;
        out.property = judged_.first;
        out.message = judged_.second;
        return out;
      }
      out.status = OracleResult::Status::Fail;
      out.property = "triton-mismatch";
      out.message = diff;
      return out;
    }
    if (emiSelected(k, opts_.emiRate)) {
      checkEmi(k, want, out);
      mark("emi");
    }
    return out;
  }

  // The first difference ("" when none; "-" when it is not judged: judged_
  // then holds the discard's kind and message).
  std::string compare(const FuzzKernel &k, const CompiledKernel &kernel,
                      const std::map<std::string, HostArray> &want,
                      const std::map<std::string, HostArray> &got, const RunResult &r,
                      const std::string &what) {
    const ir::Function &fn = kernel.function();
    uint64_t ulps = conf::gpuExtraUlps(fn);
    double dotScale = dotToleranceScale(fn), mathTol = mathRelativeTolerance(fn);
    if (r.status == RunResult::Status::Trapped)
      return what + "Triton's launch was refused: " + (r.trap ? r.trap->render() : "?");
    std::string diff = compareWithReference(k, want, got, ulps, dotScale, mathTol);
    if (diff.empty())
      return "";
    diff = what + asTriton(diff);
    ElementSet differing = differingElements(k, want, got, ulps, dotScale, mathTol);
    UlpSensitivity u = ulpSensitivity(kernel, k, want, opts_.maxSeconds, &differing);
    if (u.covers(differing)) {
      judged_ = {"ulp-sensitive", "Triton differs (" + diff + "), and so does the interpreter " +
                                      u.first};
      return "-";
    }
    if (opts_.judgeDivergences && opts_.mode == "interpret" && backend_ &&
        tritonDotNanDivergence(tritonKernelFacts(fn), backend_->description(), want, differing)) {
      judged_ = {"triton-divergence",
                 "a documented divergence (docs/triton.md): tl.dot is NumPy's matmul in Triton's "
                 "interpreter, and this NumPy's BLAS skips zero multiplicands (NaN * 0 and inf * "
                 "0 add nothing); every differing element is NaN or infinite in the reference: " +
                     diff};
      return "-";
    }
    if (std::string why =
            opts_.judgeDivergences ? tritonDivergence(k.features, opts_.mode, "") : "";
        !why.empty()) {
      judged_ = {"triton-divergence", "a documented divergence (docs/triton.md): " + why + ": " +
                                          diff};
      return "-";
    }
    if (!opts_.reportKnownBugs && opts_.mode == "interpret" && backend_) {
      std::string version = backend_->description();
      if (TritonKnownBug bug = tritonInterpKnownBug("", version, tritonKernelFacts(fn));
          !bug.name.empty()) {
        judged_ = {"triton-known-bug:" + bug.name, knownBugMessage(bug, version) + diff};
        return "-";
      }
    }
    return diff;
  }

  void checkEmi(const FuzzKernel &k, const std::map<std::string, HostArray> &want,
                OracleResult &out) {
    if (!fuzz::checkEmi(k, want, opts_.maxSeconds, out))
      return; // the interpreter already differs (or the variant does not compile)
    std::optional<FuzzKernel> v = emiVariant(k, kernelHash(k));
    if (!v)
      return;
    CompileOutcome c = compileFuzzKernel(*v);
    if (!c.ok())
      return;
    std::map<std::string, HostArray> vwant = makeBuffers(*v), got = makeBuffers(*v);
    for (const auto &[name, a] : want)
      vwant.at(name) = a;
    RunResult r = runOn(backend(), *c.kernel, *v, got, opts_.maxSeconds);
    if (r.status == RunResult::Status::Error) {
      OracleResult e = launchError(*v, *c.kernel, r.error, "emi-");
      if (e.status == OracleResult::Status::Fail)
        e.message = "the EMI variant: " + e.message + "\nthe variant:\n" + v->source;
      else
        e.message = "the EMI variant: " + e.message;
      e.reference = std::move(out.reference);
      out = std::move(e);
      return;
    }
    std::string diff = compare(*v, *c.kernel, vwant, got, r, "the EMI variant: ");
    if (diff == "-") {
      out.status = OracleResult::Status::Discard;
      out.property = judged_.first;
      out.message = judged_.second;
    } else if (!diff.empty()) {
      out.status = OracleResult::Status::Fail;
      out.property = "emi-triton-mismatch";
      out.message = diff + "\nthe variant:\n" + v->source;
      out.other = got;
    }
  }

  TritonOracleOptions opts_;
  std::unique_ptr<TritonBackend> backend_;
  int launches_ = 0;
  std::pair<std::string, std::string> judged_;
};

std::unique_ptr<Checker> makeTritonChecker(const TritonOracleOptions &opts) {
  return std::make_unique<TritonChecker>(opts);
}

// ---------------------------------------------------------------------------
// The standalone script.

namespace {

std::string base64(const uint8_t *p, size_t n) {
  static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < n; i += 3) {
    uint32_t v = (uint32_t(p[i]) << 16) | (uint32_t(p[i + 1]) << 8) | p[i + 2];
    out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
  }
  if (i < n) {
    uint32_t v = uint32_t(p[i]) << 16;
    if (i + 1 < n)
      v |= uint32_t(p[i + 1]) << 8;
    out += {t[v >> 18], t[(v >> 12) & 63], i + 1 < n ? t[(v >> 6) & 63] : '=', '='};
  }
  return out;
}

// A Python string literal of base64 text, wrapped at 100 columns.
std::string pyBytes(const HostArray &a) {
  std::string b = base64(a.bytes(), a.byteCount());
  std::string out = "(";
  for (size_t i = 0; i < b.size(); i += 96)
    out += (i ? "\n        " : "") + std::string("\"") + b.substr(i, 96) + "\"";
  return out + (b.empty() ? "\"\")" : ")");
}

std::string pyDouble(double d) {
  if (std::isnan(d))
    return "float(\"nan\")";
  if (std::isinf(d))
    return d > 0 ? "float(\"inf\")" : "float(\"-inf\")";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

// The oracle's comparison of buffer `b` (fuzz/GpuOracle.h, compareWithReference):
// ("exact"|"tolerance", rtol, atol, ulps).
std::string pyCompare(const FuzzKernel &k, const BufferDesc &b, const ir::Function &fn,
                      const std::map<std::string, HostArray> &want) {
  if (!b.isOutput)
    return "(\"exact\", 0.0, 0.0, 0)";
  conf::CompareSpec spec =
      k.smallInts ? conf::CompareSpec::exact() : conf::defaultCompare(b.dtype);
  double dotScale = dotToleranceScale(fn), mathRelTol = mathRelativeTolerance(fn);
  if (!k.smallInts && isFloat(b.dtype) && dotScale > 0)
    spec = conf::CompareSpec::tolerance(spec.rtol * dotScale, spec.atol * dotScale * 64);
  if (isFloat(b.dtype) && mathRelTol > 0) {
    double scale = 1;
    for (const BufferDesc &x : k.buffers)
      if (!x.isOutput && isFloat(x.dtype))
        for (int64_t i = 0; i < want.at(x.name).numElements(); ++i)
          if (double v = std::fabs(want.at(x.name).getDouble(i)); std::isfinite(v))
            scale = std::max(scale, v);
    double rtol = spec.kind == conf::CompareSpec::Kind::Tolerance ? spec.rtol : 0;
    double atol = spec.kind == conf::CompareSpec::Kind::Tolerance ? spec.atol : 0;
    spec = conf::CompareSpec::tolerance(std::max(rtol, mathRelTol),
                                        std::max(atol, mathRelTol * scale));
  }
  uint64_t ulps = isFloat(b.dtype) ? conf::gpuExtraUlps(fn) : 0;
  if (spec.kind == conf::CompareSpec::Kind::Ulp) {
    ulps = std::max<uint64_t>(ulps, spec.ulp);
    spec = conf::CompareSpec::exact();
  }
  bool tol = spec.kind == conf::CompareSpec::Kind::Tolerance;
  return std::string("(\"") + (tol ? "tolerance" : "exact") + "\", " + pyDouble(spec.rtol) + ", " +
         pyDouble(spec.atol) + ", " + std::to_string(ulps) + ")";
}

const char *kScriptMain = R"PY(

# ---------------------------------------------------------------------------
# The finding: the inputs above, Triton's answer against Triton-C's semantics.

import argparse as _argparse
import base64 as _base64
import math as _math
import os as _os
import sys as _sys

_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _tensor(dtype, data, device):
    raw = bytearray(_base64.b64decode(data))
    t = torch.frombuffer(raw, dtype=TORCH_DTYPES[dtype]).clone() if raw else \
        torch.empty(0, dtype=TORCH_DTYPES[dtype])
    return t.to(device)


def _bits(t):
    t = t.cpu().contiguous()
    if t.dtype == torch.bool:
        t = t.view(torch.uint8)
    return [int(x) & ((1 << (8 * t.element_size())) - 1)
            for x in t.view(_BITS[t.element_size()]).tolist()]


def _values(t, dtype):
    t = t.cpu()
    if dtype in ("f16", "bf16", "f32", "f64"):
        return t.double().tolist()
    if dtype in ("u16", "u32", "u64"):  # travel as the signed type of their width
        w = {"u16": 16, "u32": 32, "u64": 64}[dtype]
        return [x & ((1 << w) - 1) for x in t.tolist()]
    return [int(x) for x in t.tolist()]


def _ordered(bits, width):  # ULP distance: the bits as an ordered integer
    sign = 1 << (width - 1)
    return -(bits & (sign - 1)) if bits & sign else bits


def _matches(dtype, gb, wb, gv, wv, how):
    kind, rtol, atol, ulps = how
    if dtype not in ("f16", "bf16", "f32", "f64"):
        return gb == wb
    if _math.isnan(gv) or _math.isnan(wv):
        return _math.isnan(gv) and _math.isnan(wv)
    if gb == wb:
        return True
    if _math.isinf(gv) or _math.isinf(wv):
        return gv == wv
    if kind == "tolerance" and abs(gv - wv) <= atol + rtol * abs(wv):
        return True
    width = {"f16": 16, "bf16": 16, "f32": 32, "f64": 64}[dtype]
    return ulps > 0 and abs(_ordered(gb, width) - _ordered(wb, width)) <= ulps


def main():
    ap = _argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--num-warps", type=int, default=NUM_WARPS)
    ap.add_argument("--num-stages", type=int, default=NUM_STAGES)
    a = ap.parse_args()
    interp = _os.environ.get("TRITON_INTERPRET") == "1"
    if not hasattr(torch.Tensor, "untyped_storage"):  # torch < 2.0 (Triton's interpreter)
        torch.Tensor.untyped_storage = lambda self: self.storage().untyped()
    device = "cpu" if interp or not torch.cuda.is_available() else "cuda"
    if device == "cpu" and not interp:
        print("no CUDA device: run it with TRITON_INTERPRET=1 for Triton's interpreter")
        return 2
    tensors = {n: _tensor(d, data, device) for n, (d, data) in INPUTS.items()}
    args = [tensors[v] if k == "ptr" else v for (k, v) in ARGS]
    try:
        launch(GRID, *args, num_warps=a.num_warps, num_stages=a.num_stages)
        if device == "cuda":
            torch.cuda.synchronize()
    except Exception as e:  # Triton raised (a compile error, an interpreter error, ...)
        import traceback
        traceback.print_exc()
        print("ERROR: Triton %s raised on the kernel: %s" % (triton.__version__, str(e)[-2000:]))
        return 1
    wrong = 0
    print("Triton %s, %s, num_warps=%d, num_stages=%d" % (
        triton.__version__, "TRITON_INTERPRET=1" if interp else torch.cuda.get_device_name(),
        a.num_warps, a.num_stages))
    for name, (dtype, data) in EXPECTED.items():
        want = _tensor(dtype, data, "cpu")
        got = tensors[name]
        gb, wb = _bits(got), _bits(want)
        gv, wv = _values(got, dtype), _values(want, dtype)
        bad = [i for i in range(len(wb)) if not _matches(dtype, gb[i], wb[i], gv[i], wv[i],
                                                          COMPARE[name])]
        for i in bad[:16]:
            print("%s[%d]: Triton gives %r, Triton-C's semantics give %r (compare %s)" % (
                name, i, gv[i], wv[i], COMPARE[name][0] if COMPARE[name][0] != "exact" or
                dtype not in ("f16", "bf16", "f32", "f64") else "bits"))
        if len(bad) > 16:
            print("... %d more elements of %s differ" % (len(bad) - 16, name))
        wrong += len(bad)
    if wrong:
        print("WRONG: %d elements differ from the expected values" % wrong)
        return 1
    print("OK: Triton agrees with Triton-C's semantics here")
    return 0


if __name__ == "__main__":
    _sys.exit(main())
)PY";

} // namespace

std::string tritonScript(const FuzzKernel &k, const std::map<std::string, HostArray> &expected,
                         const std::string &header, unsigned numWarps, unsigned numStages,
                         std::string &error) {
  CompileOutcome c = compileFuzzKernel(k);
  if (!c.ok()) {
    error = "the kernel does not compile:\n" + c.diagnostics;
    return "";
  }
  tritonpy::Options to;
  to.numWarps = numWarps;
  tritonpy::Result t = tritonpy::translate(c.kernel->module(), c.kernel->function(), to);
  if (!t.ok()) {
    error = t.error;
    return "";
  }
  const ir::Function &fn = c.kernel->function();
  std::map<std::string, HostArray> inputs = makeBuffers(k);
  std::ostringstream s;
  s << "\"\"\"A Triton reproducer: " << header << ".\n\n"
    << "Needs only torch and triton. `python THIS.py` runs the kernel on the GPU\n"
    << "(`TRITON_INTERPRET=1 python THIS.py`: on Triton's interpreter), prints every\n"
    << "element Triton gets wrong with the value Triton-C's semantics give (the\n"
    << "reference interpreter's result), and exits 1 when any is wrong, 0 when none.\n\n"
    << "The Triton-C kernel it was translated from (tritonc --emit=triton):\n\n";
  std::string src = describeKernel(k);
  for (char ch : src)
    s << (ch == '\\' ? std::string("\\\\") : std::string(1, ch));
  s << "\"\"\"\n\n" << t.code;
  s << "\n\nNUM_WARPS, NUM_STAGES = " << numWarps << ", " << numStages << "\n";
  s << "GRID = (" << k.grid[0] << ", " << k.grid[1] << ", " << k.grid[2] << ")\n";
  s << "# The arguments in parameter order: (\"ptr\", buffer name) or (\"scalar\", value).\n";
  s << "ARGS = [";
  for (unsigned i = 0; i < fn.numParams(); ++i) {
    const std::string &pn = fn.paramName(i);
    s << (i ? ",\n        " : "");
    if (fn.param(i)->type().isPtr) {
      s << "(\"ptr\", \"" << pn << "\")";
      continue;
    }
    auto sc = std::find_if(k.scalars.begin(), k.scalars.end(),
                           [&](const ScalarDesc &d) { return d.name == pn; });
    if (sc == k.scalars.end()) {
      error = "no value for scalar parameter " + pn;
      return "";
    }
    s << "(\"scalar\", "
      << (isFloat(sc->dtype) ? pyDouble(sc->value)
                             : std::to_string(static_cast<int64_t>(sc->value)))
      << ")";
  }
  s << "]\n# Each buffer before the launch: (dtype, base64 of its bytes, little-endian).\n";
  s << "INPUTS = {\n";
  for (const BufferDesc &b : k.buffers)
    s << "    \"" << b.name << "\": (\"" << tritonpy::paramDTypeName(b.dtype) << "\", "
      << pyBytes(inputs.at(b.name)) << "),\n";
  s << "}\n# Each buffer after the launch as Triton-C's semantics define it (its reference\n"
    << "# interpreter): outputs, and inputs, which must come back unchanged.\n";
  s << "EXPECTED = {\n";
  for (const BufferDesc &b : k.buffers)
    s << "    \"" << b.name << "\": (\"" << tritonpy::paramDTypeName(b.dtype) << "\", "
      << pyBytes(expected.at(b.name)) << "),\n";
  s << "}\n# How each is compared (triton-fuzz's oracle): (\"exact\" | \"tolerance\", rtol, atol,\n"
    << "# ULPs also allowed for math functions); NaN matches NaN.\n";
  s << "COMPARE = {\n";
  for (const BufferDesc &b : k.buffers)
    s << "    \"" << b.name << "\": " << pyCompare(k, b, fn, expected) << ",\n";
  s << "}\n" << kScriptMain;
  return s.str();
}

// ---------------------------------------------------------------------------
// The culprit step.

std::string TritonCulprit::summary() const {
  if (skipped)
    return "Triton culprit step not run (not reduced: the campaign's time was up)";
  if (!reproduced)
    return "Triton culprit step: the failure did not show again with the campaign's settings";
  auto join = [](const std::vector<std::string> &v) {
    std::string s;
    for (const std::string &x : v)
      s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  std::string s = cures.empty() ? "Triton culprit step: no setting makes it go away"
                                : "Triton culprit step: goes away with " + join(cures);
  if (!kept.empty())
    s += "; stays with " + join(kept);
  if (!notRun.empty())
    s += "; not tried: " + join(notRun);
  return s;
}

TritonCulprit findTritonCulprit(const FuzzKernel &k, const std::string &property,
                                const TritonOracleOptions &opts, double seconds) {
  TritonCulprit out;
  if (seconds <= 0) {
    out.skipped = true;
    return out;
  }
  auto start = Clock::now();
  bool emi = property.rfind("emi-", 0) == 0;
  // The same failure with `o` (a worker of its own when `fresh`).
  std::unique_ptr<TritonChecker> shared;
  auto fails = [&](const TritonOracleOptions &o, bool fresh) {
    std::unique_ptr<TritonChecker> own;
    TritonChecker *c = nullptr;
    if (fresh) {
      own = std::make_unique<TritonChecker>(o);
      c = own.get();
    } else {
      if (!shared)
        shared = std::make_unique<TritonChecker>(o);
      shared->reconfigure(o);
      c = shared.get();
    }
    OracleResult r = c->check(k);
    return r.status == OracleResult::Status::Fail && r.property == property;
  };
  TritonOracleOptions base = opts;
  base.reproDir.clear();
  base.judgeDivergences = false;
  base.emiRate = emi ? 1 : 0;
  out.reproduced = fails(base, false);
  if (!out.reproduced)
    return out;
  bool gpu = opts.mode == "gpu";
  std::vector<std::pair<std::string, TritonOracleOptions>> probes;
  auto add = [&](const std::string &name, auto change) {
    TritonOracleOptions o = base;
    change(o);
    probes.emplace_back(name, o);
  };
  if (gpu) {
    add("TRITON_INTERPRET=1", [](TritonOracleOptions &o) { o.mode = "interpret"; });
    add("DISABLE_LLVM_OPT=1", [](TritonOracleOptions &o) { o.env["DISABLE_LLVM_OPT"] = "1"; });
    add("DISABLE_PTXAS_OPT=1", [](TritonOracleOptions &o) { o.env["DISABLE_PTXAS_OPT"] = "1"; });
    // The translation launches with enable_fp_fusion=False (tritonpy): the probe turns
    // Triton's contraction of a * b + c into fma back on.
    add("enable_fp_fusion=True", [](TritonOracleOptions &o) { o.fpFusion = true; });
    for (unsigned w : {1u, 2u, 8u})
      if (w != opts.numWarps)
        add("num_warps=" + std::to_string(w), [w](TritonOracleOptions &o) { o.numWarps = w; });
    for (unsigned st : {1u, 2u, 4u})
      if (st != opts.numStages)
        add("num_stages=" + std::to_string(st), [st](TritonOracleOptions &o) { o.numStages = st; });
  }
  if (has(k.features, "dot"))
    add("input_precision=\"tf32x3\"",
        [](TritonOracleOptions &o) { o.dotInputPrecision = "tf32x3"; });
  else
    out.notRun.push_back("input_precision (no '@')");
  if (!gpu)
    out.notRun.push_back("num_warps, num_stages, pass switches (Triton's interpreter ignores them)");
  for (auto &[name, o] : probes) {
    if (msSince(start) / 1000 > seconds) {
      out.notRun.push_back(name + " (out of time)");
      continue;
    }
    // Environment switches and another mode need a worker of their own
    // (and no compile cache: TRITON_ALWAYS_COMPILE).
    bool fresh = !o.env.empty() || o.mode != base.mode;
    if (!o.env.empty())
      o.env["TRITON_ALWAYS_COMPILE"] = "1";
    (fails(o, fresh) ? out.kept : out.cures).push_back(name);
  }
  return out;
}

} // namespace tc::fuzz
