//===- Culprit.cpp - Which optimisation makes a GPU failure go away ------===//
#include "fuzz/Culprit.h"

#include "fuzz/Oracle.h"
#include "runtime/Launch.h"

#include <chrono>
#include <climits>

namespace tc::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

} // namespace

std::vector<std::string> gatedPasses(const FuzzKernel &k, codegen::Options opts,
                                     std::string &error) {
  CompileOutcome c = compileFuzzKernel(k);
  if (!c.ok()) {
    error = c.diagnostics;
    return {};
  }
  opts.optBisectLimit = INT_MAX;
  codegen::Result r = codegen::compile(c.kernel->module(), c.kernel->function(), opts);
  if (!r.ok()) {
    error = r.error;
    return {};
  }
  return r.compiled->gatedPasses;
}

Culprit findCulprit(const FuzzKernel &k, const codegen::Options &base,
                    const std::function<bool(const codegen::Options &)> &fails,
                    const CulpritOptions &copts) {
  Culprit c;
  auto start = Clock::now();
  auto timeLeft = [&] {
    bool left = std::chrono::duration<double>(Clock::now() - start).count() < copts.seconds;
    c.outOfTime = c.outOfTime || !left;
    return left;
  };
  auto probe = [&](const codegen::Options &o) {
    ++c.probes;
    return fails(o);
  };
  c.reproduced = probe(base);
  if (!c.reproduced)
    return c;
  // 1. The backend's own optimisations, one at a time.
  for (const std::string &name : codegen::optimizationNames()) {
    if (!timeLeft())
      return c;
    codegen::Options o = base;
    std::string error;
    if (!codegen::disableOptimizations(o, name, error) ||
        codegen::describeOptions(o) == codegen::describeOptions(base))
      continue; // already off
    if (!probe(o))
      c.disableOpt.push_back(name);
  }
  // 2. LLVM's optional passes: the smallest limit at which the failure shows.
  if (copts.bisectLlvm && timeLeft()) {
    std::string error;
    std::vector<std::string> passes = gatedPasses(k, base, error);
    c.passCount = static_cast<int>(passes.size());
    codegen::Options o = base;
    o.optBisectLimit = 0;
    if (!passes.empty() && !probe(o)) {
      c.llvmNeeded = true;
      int lo = 0, hi = c.passCount; // fails(hi) (all passes run), !fails(lo)
      o.optBisectLimit = hi;
      if (!probe(o)) // the gate itself changes nothing, but say so if it does
        hi = -1;
      while (hi > 0 && hi - lo > 1 && timeLeft()) {
        int mid = lo + (hi - lo) / 2;
        o.optBisectLimit = mid;
        (probe(o) ? hi : lo) = mid;
      }
      if (hi > 0 && hi - lo == 1) {
        c.passIndex = hi;
        c.passName = passes[static_cast<size_t>(hi - 1)];
      }
    }
  }
  // 3. ptxas: the driver's JIT at -O0.
  if (copts.checkPtxas && timeLeft()) {
    codegen::Options o = base;
    o.jitOptLevel = 0;
    c.ptxasChecked = true;
    c.ptxasO0Clean = !probe(o);
  }
  // 4. The driver's JIT at its default level instead of ptxas's module: a
  // failure only ptxas's modules show (docs/upstream/ptxas-wgmma-desc-hi.md
  // was one) is ptxas's or leans on something the JIT happens to do.
  if (copts.checkPtxas && copts.ptxasModules && timeLeft()) {
    codegen::Options o = base;
    o.driverJit = true;
    c.driverJitChecked = true;
    c.driverJitClean = !probe(o);
  }
  return c;
}

std::string Culprit::summary() const {
  if (!reproduced)
    return "culprit: not reproduced on a re-run (flaky?)";
  std::vector<std::string> gone;
  for (const std::string &n : disableOpt)
    gone.push_back("--disable-opt " + n);
  if (passIndex > 0)
    gone.push_back("LLVM pass " + std::to_string(passIndex) + "/" + std::to_string(passCount) +
                   " (" + passName + ") and later skipped");
  else if (llvmNeeded)
    gone.push_back("LLVM's optional passes skipped (bisection inconclusive)");
  if (ptxasO0Clean)
    gone.push_back("ptxas -O0 (driver JIT)");
  if (driverJitClean)
    gone.push_back("the driver's JIT instead of ptxas's module (TC_CUBIN=driver)");
  std::string s;
  if (gone.empty()) {
    s = "culprit: no optimisation makes it go away (";
    std::vector<std::string> tried;
    if (!codegen::optimizationNames().empty())
      tried.push_back("each --disable-opt");
    if (passCount > 0)
      tried.push_back("all " + std::to_string(passCount) + " optional LLVM passes skipped");
    if (ptxasChecked)
      tried.push_back("ptxas -O0");
    if (driverJitChecked)
      tried.push_back("the driver's JIT");
    for (size_t i = 0; i < tried.size(); ++i)
      s += (i ? ", " : "") + tried[i];
    s += "): codegen, ptxas or the hardware";
  } else {
    s = "culprit: goes away with ";
    for (size_t i = 0; i < gone.size(); ++i)
      s += (i ? "; " : "") + gone[i];
  }
  if (outOfTime)
    s += " (search cut short by its time budget)";
  return s;
}

} // namespace tc::fuzz
