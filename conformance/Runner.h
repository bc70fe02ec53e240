//===- Runner.h - Running conformance cases on a backend -----------------===//
//
// Every case runs on one backend, once per variant (combination of list-valued
// defines); every variant must meet the case's expectation, and the record
// names the first variant that does not. By default each case runs in a forked
// worker process, so a case that crashes the runner becomes a `crash` record,
// one that hangs is killed after the timeout and becomes `timeout`, and the
// run goes on; `jobs` workers run at once.
//
// Statuses (conformance/FORMAT.md): pass, fail (ran, wrong result), error (unexpected
// compile error or trap, or a case that does not load), crash, timeout,
// skipped (backend not available, not listed in the case's `backends`, or a
// trap case on a backend that cannot detect traps), xfail and xpass (the case
// is listed in an expectations file as a known failure and failed / passed).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "conformance/Case.h"

#include <array>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc::conf {

enum class Status : uint8_t { Pass, Fail, Error, Crash, Timeout, Skipped, XFail, XPass };
inline constexpr int kNumStatuses = 8;
inline constexpr Status kAllStatuses[kNumStatuses] = {
    Status::Pass,    Status::Fail,    Status::Error, Status::Crash,
    Status::Timeout, Status::Skipped, Status::XFail, Status::XPass};

/// "pass", "fail", "error", "crash", "timeout", "skipped", "xfail", "xpass".
std::string_view statusName(Status s);
std::optional<Status> parseStatus(std::string_view name);
/// fail, error, crash, timeout: a case that did not meet its expectation.
bool isFailure(Status s);

/// The result of one case on one backend: one record of a report.
struct CaseRecord {
  std::string suite; // the suite's name
  std::string name;  // the case's name
  std::string file;  // the suite file
  std::vector<std::string> features;
  std::string backend;
  Status status = Status::Pass;
  double time = 0;                  // seconds, all variants
  std::string variant;              // the variant that failed ("" when none or no lists)
  int variants = 0;                 // variants that ran
  std::optional<Mismatch> mismatch; // fail: the first mismatching element
  std::string error;                // what went wrong (diagnostics, trap, crash)
  std::string expect;               // the expectation kind ("outputs", ...)
  std::string reason;               // xfail / xpass: the expectations file's reason
  std::optional<Status> actual;     // xfail: the status before the expectations file
  std::string source;               // the kernel text (records that did not pass)
  std::string reproduce;            // a command that reruns the case
};

/// The outcome of one variant.
struct Verdict {
  Status status = Status::Pass;
  std::string error;
  std::optional<Mismatch> mismatch;
};

/// Compares the buffers of a finished run with the case's expected outputs,
/// and every buffer the case does not list with its initial contents.
/// With extraUlps > 0, a float element of any output also passes within that
/// many ULPs (the runner gives the gpu backend gpuExtraUlpsByBuffer instead).
Verdict checkOutputs(const Case &c, const BoundArgs &args, uint64_t extraUlps = 0);

/// As above, with each buffer's own extra ULPs (a buffer not in the map: 0).
Verdict checkOutputs(const Case &c, const BoundArgs &args,
                     const std::map<std::string, uint64_t> &extraUlps);

/// The GPU's documented ULP bound (codegen/Ulp.h) of the least exact function
/// `fn` calls, plus one for the reference's own rounding; 0 when it calls none.
uint64_t gpuExtraUlps(const ir::Function &fn);

/// gpuExtraUlps(fn) for each pointer parameter that a result of such a
/// function can reach (through any op, a yield, or memory: a store of such a
/// value makes the buffer's loads carry it; a pointer whose parameter cannot
/// be told counts as every buffer); other buffers are not in the map. The GPU
/// agrees bit for bit on everything but those functions (docs/gpu-numerics.md),
/// so a buffer no such result reaches gets no extra ULPs.
std::map<std::string, uint64_t> gpuExtraUlpsByBuffer(const ir::Function &fn);

/// The arguments against the kernel's parameters (order, names, buffer or
/// scalar, buffer dtype = pointee): an invalid_launch trap when they differ.
std::optional<Trap> checkArgs(const Case &c, const CompiledKernel &kernel);

/// Compiles, binds, launches and checks one variant in this process.
Verdict runVariant(const Suite &s, const Case &c, const Variant &v, Backend &backend,
                   const RunOptions &opts);

/// Runs every variant of a case in this process (no isolation).
CaseRecord runCase(const Suite &s, const Case &c, Backend &backend, const RunOptions &opts);

/// Makes a backend available to createBackend under `name` (the GPU backend,
/// and tests); `detectsTraps` says whether it reports traps.
using BackendFactory = std::function<std::unique_ptr<Backend>()>;
void registerBackend(const std::string &name, BackendFactory factory, bool detectsTraps);

/// The backends by name: "interp", and any registered one; "gpu" until one is
/// registered is unavailable. Null (with `why`) for an unavailable backend.
std::unique_ptr<Backend> createBackend(const std::string &name, std::string &why);
/// Whether `backend` reports traps (on others trap cases are skipped, except
/// invalid_launch, which the runner checks itself).
bool backendDetectsTraps(std::string_view backend);

/// The command that reruns a case on `backend`, shell-quoted where needed:
/// `triton-interp --launch FILE --case NAME` for the interpreter, `triton-run
/// --launch FILE --case NAME` (the GPU) for "gpu"; `extraArgs` follow.
std::string reproduceCommand(const std::string &file, const std::string &caseName,
                             std::string_view backend = "interp",
                             const std::vector<std::string> &extraArgs = {});
/// `s` quoted for a POSIX shell when it needs quoting.
std::string shellQuote(const std::string &s);

/// One entry of an expectations file: a known failure. Fields are globs
/// (fnmatch); an empty backend matches every backend.
struct KnownFailure {
  std::string suite, caseName, backend, reason;
};

/// An expectations file: a JSON list of {"suite", "case", "backend", "reason"}.
struct KnownFailures {
  std::vector<KnownFailure> entries;
  const KnownFailure *match(const std::string &suite, const std::string &caseName,
                            const std::string &backend) const;
};
std::optional<KnownFailures> loadKnownFailures(const std::string &path, std::string &error);

/// Turns a record's status into xfail / xpass when `known` lists it.
void applyKnownFailures(CaseRecord &r, const KnownFailures &known);

struct RunnerOptions {
  std::string backend = "interp";
  unsigned jobs = 0;   // workers at once; 0: the number of cores
  double timeout = 60; // seconds per case (all its variants); 0: none
  bool isolate = true; // run cases in forked worker processes
  unsigned batch = 16; // isolate: cases one worker runs in turn (0, 1: one each)
  std::vector<std::string> suiteGlobs, featureGlobs, caseGlobs; // filters (any of each)
  const KnownFailures *known = nullptr;
  std::ostream *progress = nullptr; // "[12/50] 1 failed" lines and each bad case's whole error
  /// Extra arguments of a case's reproduce command (the gpu backend's
  /// --num-warps, --num-stages, --disable-opt when the run used other ones).
  std::function<std::vector<std::string>(const Case &)> reproduceArgs;
};

/// Runs the selected cases of every loaded suite (files that did not load give
/// one `error` record each) and returns the records in input order.
std::vector<CaseRecord> runSuites(const std::vector<LoadResult> &suites, const RunnerOptions &opts);

/// Whether a case passes the filters (globs: fnmatch; features: any listed).
bool selected(const RunnerOptions &opts, const std::string &suite, const std::string &caseName,
              const std::vector<std::string> &features);

} // namespace tc::conf
