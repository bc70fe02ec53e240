//===- Oracle.h - The fuzzer's CPU-only properties ------------------------===//
//
// Runs one generated kernel through the checks that need no GPU (docs/fuzz.md
//): the kernel compiles (else the generator has a bug), its launch on
// the interpreter does not trap (else the kernel was not UB-free: a discard),
// and then
//   (a) its IR prints, parses back and prints identically;
//   (b) interp(passes(ir)) == interp(ir) (default pass pipeline);
//   (c) the results do not depend on RunOptions::threads (1 vs N);
//   (d) for kernels without reductions or `@` (which work within a tile), the
//       results do not depend on the tile-size defines (TS, TM, TN);
//   (f) for kernels with ULP-bounded math, the results with each such result
//       moved by one ULP pass the GPU oracle's comparison ("ulp-sensitive").
// Results are compared bit for bit, except that any NaN matches any NaN (the
// conformance suite's "exact").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fuzz/Generator.h"
#include "runtime/Launch.h"
#include "runtime/Specialize.h"
#include "support/Numerics.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>

namespace tc::fuzz {

struct OracleOptions {
  unsigned threads = 4;     // the thread count compared with 1 in property (c)
  double maxSeconds = 20;   // per launch (a hang counts as a discard)
  bool tileVariants = true; // property (d)
  double emiRate = 0.1;     // property (e): the share of kernels checked with an EMI variant
  bool ulpStability = false; // property (f) (--ulp-sensitivity)
};

struct OracleResult {
  enum class Status { Pass, Discard, GeneratorBug, Fail };
  Status status = Status::Pass;
  std::string property; // Fail: "roundtrip", "passes", "threads", "tiles", "emi-mismatch",
                        // "ulp-sensitive"; Discard:
                        // the trap kind
  std::string message;  // diagnostics, the trap, or the first difference
  /// The buffers after interp(ir) with one thread (the reference), and after
  /// the run that differs from it (Fail of "passes"/"threads").
  std::map<std::string, HostArray> reference, other;
  /// Where the check's time went, in ms per stage ("frontend", "interp",
  /// "llvm-ir", "llvm-opt", "ptx", "jit", "launch", "compare", ...): the
  /// campaign sums them into its per-stage breakdown. Empty when not timed.
  std::map<std::string, double> stageMs;
  /// GPU oracle, batches: the kernel failed (`property`, `message`) in a
  /// batch and CUDA is unusable in this process, so it could not be checked
  /// alone: it must be, in a new process, before it becomes a finding.
  bool recheckAlone = false;
  /// GPU oracle: the lowering paths the backend took for the kernel
  /// (codegen::Compiled::paths), for the campaign's path coverage table.
  /// Unset when it was not compiled (and in cpu-only campaigns).
  std::optional<std::vector<std::string>> paths;
  /// The failure is that of the kernel's class launch with this index
  /// (FuzzKernel::classLaunches; `reference` and `other` are that launch's
  /// buffers); -1 for the kernel's own launch.
  int classLaunch = -1;
};

/// Checks `k` against every CPU-only property.
OracleResult checkKernel(const FuzzKernel &k, const OracleOptions &opts = {});

/// "with num_warps W (num_warps B <verdict>): ": how a failure of the GPU
/// oracle's num_warps variant (warpsVariant) starts its message.
std::string warpsVariantMessage(unsigned warps, unsigned base, const std::string &verdict);
/// The W of a message that warpsVariantMessage began (the num_warps the
/// failing run had), or nullopt.
std::optional<unsigned> findingNumWarps(const std::string &message);

/// Property (e): an EMI variant of `k` (fuzz/Emi.h), on the interpreter
/// before and after the pass pipeline, against `plain` (interp(ir) of `k`).
/// False with `out` filled ("emi-mismatch", or a generator bug "emi-compile").
bool checkEmi(const FuzzKernel &k, const std::map<std::string, HostArray> &plain, double maxSeconds,
              OracleResult &out);

/// Property (g), argument classes (docs/fuzz.md "Argument classes"): for
/// each class launch of `k` (FuzzKernel::classLaunches, classLaunchKernel),
/// interp(ir) of `kernel` (k compiled) with the launch's arguments is the
/// reference (a launch whose reference traps is skipped), and the copy of
/// the kernel specialised for the arguments' classes (classArgs: each
/// allocation 16-byte aligned, the pointer at its offset; specializeKernel)
/// must give the same buffers on the interpreter, bit for bit. A class whose
/// promise the arguments break (a classifier that calls 24 divisible by 16)
/// traps there. False with `out` filled ("spec-mismatch", classLaunch set).
/// `runs` (optional) gets each launch that was checked.
struct ClassRun {
  size_t index = 0;
  FuzzKernel kernel; // classLaunchKernel(k, index)
  Specialization spec;
  std::map<std::string, HostArray> want; // its reference buffers
};
bool checkClassLaunches(const CompiledKernel &kernel, const FuzzKernel &k, double maxSeconds,
                        OracleResult &out, std::vector<ClassRun> *runs = nullptr);

/// The classes of `k`'s arguments in `kernel` as a launch with `buffers`
/// (makeBuffers) has them: each buffer a 16-byte aligned allocation with the
/// pointer at its origin.
Specialization classArgs(const CompiledKernel &kernel, const FuzzKernel &k,
                         std::map<std::string, HostArray> &buffers);

/// Elements of a kernel's buffers: (buffer name, index).
using ElementSet = std::set<std::pair<std::string, int64_t>>;

/// What property (f) finds: where the interpreter's results, with every
/// ULP-bounded math result one ULP off, fail the GPU comparison against the
/// reference.
struct UlpSensitivity {
  std::string first; // the first such difference ("" when there is none)
  ElementSet elements; // every element that differs in any of the runs
  bool trapped = false; // a run trapped (then any element may differ)
  /// Whether every element of `gpuDiff` (a GPU's differences) differs here too.
  bool covers(const ElementSet &gpuDiff) const {
    if (first.empty())
      return false;
    return trapped || std::includes(elements.begin(), elements.end(), gpuDiff.begin(),
                                    gpuDiff.end());
  }
};

/// The GPU's accuracy bound in ULPs (codegen/Ulp.h) of a math function of the
/// interpreter's; 0 where the GPU's result is exact (abs, floor, ceil). What
/// ulpSensitivity moves: `num::MathNudge{seed, &gpuMathBound, 0}`.
int gpuMathBound(num::MathFn f, DType t);

/// Property (f), which the GPU oracle also asks before it reports a
/// difference: `reference` (interp(ir) of `k`, one thread) against the
/// interpreter's results with every ULP-bounded math result one ULP off (at
/// random, all up, all down), under the GPU comparison. With `target` (the
/// elements a GPU differs in), up to kExtraUlpPatterns more random patterns
/// (some with most results left exact) until `target` is covered. Empty when
/// `k` has no such math.
UlpSensitivity ulpSensitivity(const CompiledKernel &kernel, const FuzzKernel &k,
                              const std::map<std::string, HostArray> &reference, double maxSeconds,
                              const ElementSet *target = nullptr);
/// The same, compiling `k` first (empty when it does not compile).
UlpSensitivity ulpSensitivity(const FuzzKernel &k,
                              const std::map<std::string, HostArray> &reference, double maxSeconds,
                              const ElementSet *target = nullptr);
/// Random ULP patterns `ulpSensitivity` tries beyond the first three when it
/// has a target to cover.
inline constexpr int kExtraUlpPatterns = 32;

/// `k` with other tile sizes (a quarter or four times each define) and the
/// grid to match, when its results cannot depend on them; nullopt otherwise.
std::optional<FuzzKernel> retiled(const FuzzKernel &k);

/// The kernel's IR as lowered, or after the default pass pipeline ("" if it
/// does not compile).
std::string printedIR(const FuzzKernel &k, bool optimize);

/// Compiles `k` as the runtime compiles a user's kernel (source "fuzz.tc",
/// its defines), for the GPU oracle, the culprit search and tests.
CompileOutcome compileFuzzKernel(const FuzzKernel &k);

/// The host arrays of `k`'s buffers, by name, as generated; a buffer with
/// an offset is one flat allocation of offset + size elements whose first
/// `offset` hold 5 (true for bool), with HostArray::origin at the data.
std::map<std::string, HostArray> makeBuffers(const FuzzKernel &k);

/// The first element where `a` and `b` differ ("" if none; NaN matches NaN).
std::string firstDifference(const std::map<std::string, HostArray> &a,
                            const std::map<std::string, HostArray> &b);

} // namespace tc::fuzz
