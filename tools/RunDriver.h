//===- RunDriver.h - The command line shared by triton-interp and triton-run ===//
//
// Both tools take the same kernel, defines, grid and argument flags, bind
// arguments the same way, print buffers in the same format and end with the
// same exit codes:
//
//   0 ok, 1 trap (or a failed run or comparison), 2 compile error, 3 usage error.
//
// A tool adds its own flags next to addCommonOptions() and drives the steps
// below (plan, compile, bind, launch, print); every message starts with the
// tool's name ("triton-run: error: ...").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "conformance/Case.h"
#include "conformance/Runner.h"
#include "runtime/ArgSpec.h"
#include "runtime/Launch.h"
#include "support/Npy.h"

#include <CLI/CLI.hpp>

#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tc::tools {

inline constexpr int kExitOk = 0, kExitTrap = 1, kExitCompileError = 2, kExitUsage = 3;
/// Ctrl-C (128 + SIGINT, as a shell reports a process SIGINT ended).
inline constexpr int kExitInterrupted = 130;

/// The flags every run tool takes.
struct DriverOptions {
  std::string input, kernel, grid, program, launch, caseName, bf16Descr = "u2";
  std::vector<std::string> defines, undefines, includeDirs, args, prints, outs;
  bool force = false, trace = false, dumpIR = false, bf16AsU2 = false, printAll = false;
  bool variantsExact = false; // triton-interp: variants must agree bit for bit
  conf::ToleranceOverride tolerance; // --rtol, --atol (replacing the dtype's default parts)
  unsigned threads = 1;
  uint64_t maxSteps = 0, seed = 0;
  double timeout = 0;
};

/// Everything checked before the first compilation.
struct Plan {
  std::vector<DefineSpec> defineSpecs;
  std::vector<DefineList> variants;
  std::vector<ArgSpec> args;
  std::vector<std::pair<std::string, std::string>> outs; // buffer name, path
  GridSpec grid;
  std::optional<std::array<int64_t, 3>> program;
  BufferOptions bufferOpts;
  NpyWriteOptions npyOpts;
};

/// One variant: its kernel and, once bound, its arguments and grid.
struct VariantRun {
  std::string name; // "SIZE=64" (list-valued defines only)
  DefineList defines;
  std::shared_ptr<CompiledKernel> kernel;
  std::unique_ptr<BoundArgs> bound;
  std::array<int64_t, 3> grid{1, 1, 1};
};

/// --timeout SECONDS: a finite number >= 0 (large values saturate).
CLI::Validator timeLimitValidator();
/// A decimal integer that fits uint64 (no sign, no wrap-around: --seed, --max-steps).
CLI::Validator uint64Validator();
/// --rtol/--atol: a finite number >= 0.
CLI::Validator toleranceValidator();
/// Adds --rtol and --atol (stored in opt.tolerance) with `what` in their help.
void addToleranceOptions(CLI::App &app, DriverOptions &opt, const std::string &what);
/// The comparison of float buffers of dtype `t`: the dtype's default tolerance
/// with --rtol/--atol replacing its parts, and how to name it in messages:
/// "float16 tolerance rtol=0.01 atol=1e-05 (--rtol 0.01)".
std::string toleranceText(DType t, const conf::ToleranceOverride &o);

/// Adds the shared flags (input, -D/-U/-I, --kernel, --grid, --arg, --print,
/// --out, --program, --trace, --threads, --max-steps, --timeout, ...) to `app`.
void addCommonOptions(CLI::App &app, DriverOptions &opt);

/// Parses argv with `app`, accepting `-dump-ir`-style single-dash spellings.
/// Returns -1 when the tool should go on, else the exit code (help, errors).
int parseCommandLine(CLI::App &app, int argc, char **argv);

/// A deep copy of bound arguments (the copy's LaunchArgs point to its own arrays).
std::unique_ptr<BoundArgs> cloneBound(const BoundArgs &b);

/// "[3, 4]" for flat index `flat` of `shape` ("[7]" for one dimension).
std::string indexText(const std::vector<int64_t> &shape, int64_t flat);

/// The total bytes of every buffer of `args`.
uint64_t bufferBytes(const LaunchArgs &args);

/// Evaluates a count given on the command line (--bytes, --flops: an integer
/// expression over the defines and integer scalar arguments in `env`, the
/// grid-expression syntax) that must be at least `minimum`; nullopt with
/// "FLAG 'EXPR': why" in `error` otherwise.
std::optional<int64_t> evalCountExpr(const std::string &flag, const std::string &expr,
                                     const ExprEnv &env, int64_t minimum, std::string &error);

/// The steps of a run tool; messages are prefixed with the tool's name.
class RunDriver {
public:
  RunDriver(std::string tool, const DriverOptions &opt) : tool_(std::move(tool)), opt_(opt) {}

  const std::string &tool() const { return tool_; }
  const DriverOptions &options() const { return opt_; }

  /// Prints `msg` as errors, one per line ("note: " lines stay notes); returns 3.
  int usageError(const std::string &msg) const;
  /// Prints "TOOL: error: msg"; returns `rc`.
  int error(const std::string &msg, int rc) const;

  /// Checks the kernel file and --grid are given and parses every option that
  /// does not need the kernel.
  int makePlan(Plan &plan) const;
  /// Compiles every variant (a compile error comes before any run) and checks
  /// that --print/--out name buffers.
  int compileVariants(const Plan &plan, std::vector<VariantRun> &runs) const;
  /// Every file the run reads: the kernel, the --arg files and, given `runs`,
  /// each file their compilation read (#include files). No output may be one.
  std::vector<std::string> inputFiles(const Plan &plan,
                                      const std::vector<VariantRun> *runs = nullptr) const;
  /// Compiles one variant; prints the diagnostics.
  std::shared_ptr<CompiledKernel> compile(const DefineList &defines, int &rc) const;
  /// Binds the arguments of `run` and evaluates its grid (and --program).
  int bind(const Plan &plan, VariantRun &run) const;
  /// Run options from the flags (threads, limits, trace, --program).
  RunOptions runOptions(const Plan &plan) const;
  /// Maps a launch result to an exit code, printing the trap or error.
  int reportResult(const RunResult &r) const;
  /// Compares every buffer of every variant with the first variant's: integers
  /// exactly, floats within the suite's default tolerance (bits: --variants-exact).
  int compareVariants(const std::vector<const VariantRun *> &runs) const;
  /// --print and --out of the buffers `bound`.
  int printAndWrite(const Plan &plan, const BoundArgs &bound) const;

  /// Called before each variant of a --launch case runs.
  using CaseHook = std::function<void(const conf::Case &, const conf::Variant &)>;
  /// --launch FILE [--case NAME]: runs a conformance case on `backend` and checks
  /// its expectation; `hook` sees each variant before it runs.
  int runLaunch(Backend &backend, const CaseHook &hook = {}) const;

private:
  bool parseDefines(Plan &plan, std::string &error) const;
  void warnUnusedDefines(const CompiledKernel &k) const;
  bool parseProgram(Plan &plan, std::string &error) const;
  bool parseOuts(Plan &plan, std::string &error) const;
  int checkBufferNames(const Plan &plan, const CompiledKernel &k) const;
  std::string firstDifference(const std::string &name, const HostArray &a, const HostArray &b,
                              const std::string &na, const std::string &nb) const;
  const conf::Case *pickCase(const conf::Suite &suite, int &rc) const;
  int reportVerdict(const conf::Case &c, const conf::Variant &v,
                    const conf::Verdict &verdict) const;

  std::string tool_;
  const DriverOptions &opt_;
};

} // namespace tc::tools
