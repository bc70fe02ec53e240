//===- GpuOracle.h - The fuzzer's GPU property: interp == GPU ------------===//
//
// Checks one generated kernel on the GPU against the reference interpreter
// (docs/fuzz.md): the interpreter runs first (a trap is a discard, a
// compile error a generator bug, as in fuzz/Oracle.h), then the GPU backend,
// and every buffer is compared. Output buffers: bit-exact for kernels in
// small-int mode (their arithmetic is exact), else the dtype's default
// tolerance, loosened to the GPU's documented ULP bound when the kernel calls
// a transcendental function (conformance/Runner.h gpuExtraUlps), except the
// bounded outputs (boundedOutputs: bit for bit, or a function's ULPs alone);
// every other buffer must be unchanged. Failure properties:
//   gpu-compile  the backend refuses or fails to compile the kernel
//   gpu-fault    the launch ends in an error (illegal address, ...)
//   gpu-hang     the launch did not finish within the time limit
//   gpu-mismatch a buffer differs (the message names the first element)
// and, for a share `emiRate` of the passing kernels, an EMI variant
// (fuzz/Emi.h) must give the plain kernel's results:
//   emi-mismatch     on the interpreter, bit for bit ("emi-compile": a
//                    variant that does not compile is a generator bug)
//   emi-gpu-mismatch on the GPU, compared as the plain kernel's outputs are
//   emi-gpu-compile  the backend does not compile the variant
// Each check records where its time went (OracleResult::stageMs): frontend,
// interp, llvm-ir (lowering to LLVM IR), libdevice (linking it), llvm-opt, ptx (NVPTX codegen), jit
// (cuModuleLoadData; ptxas with --compile-only), context (the CUDA context,
// the compile key), launch (copies included), compare.
// After a fault CUDA is unusable in this process (gpu/GpuBackend.h):
// poisoned() says so, and the caller (a worker) must exit.
//
// Batches (checkBatch, `triton-fuzz --batch N`): each kernel goes through the
// frontend and the interpreter alone (a trap is a discard, as above); the
// survivors are compiled into ONE module (codegen::compileBatch: one LLVM
// module, the same passes, libdevice linked once, one PTX, one
// cuModuleLoadData; with compileOnly, one ptxas run), then each is launched
// on its own buffers and compared. Attribution stays per kernel:
//   - a batch that does not compile or load is checked one kernel at a time
//     (check()'s path), so the kernel that fails is named;
//   - a kernel that fails in a batch is checked again alone; if it fails
//     alone, that result is the finding; if not, it fails with the property
//     "batch-only-<property>" (a real bug that shows only when compiled with
//     other kernels); after a fault or hang CUDA is gone, so it comes back
//     with recheckAlone (the campaign re-checks it in a new worker) and the
//     batch's later kernels are not checked (the campaign re-queues them);
//   - the module-level stages (llvm-ir, libdevice, llvm-opt, ptx, jit,
//     context) are split evenly over the batch's compiled kernels;
//   - kernels aimed at a fast path (an "aim.PATH" feature) are not in that
//     module: those aimed at one path get a module of their own, checked
//     the same way (a lone one is checked alone);
//   - a kernel's lowering paths come from the module's compile (GPU:
//     gpu::CompileInfo::paths), not from a lowering of their own.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fuzz/Oracle.h"
#include "gpu/GpuBackend.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace tc::fuzz {

class StageClock;

/// Float output buffers compared without a tolerance (docs/fuzz.md, "bounded
/// outputs"). Each store into such a buffer writes, at an address and under a
/// mask computed without rounding differences between the interpreter and
/// the GPU, either such a value itself (elementwise IEEE operations, casts,
/// loads of buffers the kernel does not write, loops and ifs of them, integer
/// `@`, reductions other than a float `+`: docs/semantics.md makes each of
/// them round once, the same way on both sides) or one ULP-bounded
/// function's result of one (`exp2(x)`, `(half)sin(x)`, through casts to a
/// float type with no more bits and no more significand bits: not bf16 ->
/// half). Buffer name -> the ULPs its elements may
/// differ by: 0 (bit for bit) for the first kind, the function's GPU bound in
/// the stored type plus one (the interpreter's own rounding) for the second.
/// Without a tolerance a subnormal flushed to zero (6e-39 against 0), a
/// contraction into an fma or a double rounding is a mismatch.
using BoundedOutputs = std::map<std::string, uint64_t>;
BoundedOutputs boundedOutputs(const ir::Function &fn);

struct GpuOracleOptions {
  int device = 0;           // CUDA device ordinal
  codegen::Options codegen; // num_warps, --disable-opt
  double maxSeconds = 20;   // per launch (interpreter and GPU)
  int recycleEvery = 200;   // a fresh backend after this many kernels (frees modules)
  /// The recycled backend takes the same CUDA context back (cuda::setContextReuse):
  /// one context per worker for the campaign, new only after a fault (a new process).
  /// $TC_FUZZ_REUSE_CONTEXT=0 makes a new context with each backend, as before.
  bool reuseContext = true;
  double emiRate = 0.1;     // the share of kernels also checked with an EMI variant
  /// --compile-only: no CUDA. Each kernel goes through the interpreter and
  /// the whole GPU compile pipeline (codegen::compile for sm `compileSm`,
  /// every pass a user's kernel goes through), and its PTX through `ptxas`
  /// when one is found (the offline stand-in for the driver's JIT); nothing
  /// is launched. Failures: gpu-compile (codegen refuses, ptxas rejects).
  bool compileOnly = false;
  unsigned compileSm = 90;
  /// Timing-sensitive kernels (timingSensitive(): a wgmma, pipelined or mma
  /// loop) run `repeats` more times, and a share `stageVariantRate` of them
  /// (chosen by a hash of the kernel) `repeats` + 1 times with another
  /// num_stages (stageVariant()); a mismatch in any run fails the kernel with
  /// its frequency ("mismatch in 3 of 10 runs (num_stages 3: 1 of 5, ...)").
  int repeats = 4;
  double stageVariantRate = 0.25;
  /// A share of the kernels (chosen by a hash of the kernel: warpsVariant())
  /// also run once with num_warps 8 (4 when the campaign's is 8), compared
  /// with the same reference: a kernel's results do not depend on num_warps,
  /// its code does (two warpgroups on wgmma, 8-warp layouts, reductions
  /// across more warps). --compile-only compiles them at 8 too. An 8-warp
  /// compile costs about 1.4x a 4-warp one (LLVM and ptxas), so the default
  /// share costs a campaign about 8% of its kernels per second. 0: never.
  double warpsVariantRate = 0.08;
};

/// Whether a kernel whose code took `paths` waits on asynchronous copies or
/// tensor-core products (wgmma, a pipelined or mma loop, the values pipeline of
/// attention loops): a missing or misplaced wait shows only when the timing is
/// unlucky, and the stage count changes the timing (stageVariant).
bool stagedPath(const std::vector<std::string> &paths);

/// Whether a kernel whose code took `paths` is checked with repeated runs: a
/// staged path, or 8/16-bit atomics done as compare-and-swap loops
/// (`atomic.partword`), where a loop that retries with a stale word loses an
/// update only when another thread's swap lands in between.
bool timingSensitive(const std::vector<std::string> &paths);

/// The other num_stages a staged kernel also runs with (2, 3 or 4,
/// not opts.codegen.numStages), for a share opts.stageVariantRate of the
/// kernels chosen by their hash; nullopt for the others.
std::optional<unsigned> stageVariant(const FuzzKernel &k, const GpuOracleOptions &opts);

/// The other num_warps a kernel also runs with (8, or 4 when the campaign's
/// num_warps is 8), for a share opts.warpsVariantRate of the kernels chosen
/// by their hash (independently of stageVariant); nullopt for the others.
std::optional<unsigned> warpsVariant(const FuzzKernel &k, const GpuOracleOptions &opts);

class GpuOracle {
public:
  explicit GpuOracle(GpuOracleOptions opts);
  ~GpuOracle();
  /// Checks `k`: interpreter first, then the GPU, then the comparison.
  OracleResult check(const FuzzKernel &k);
  /// Result `r` of kernel `i` of a batch and the wall time it took (its own
  /// steps plus its share of the batch's), called as soon as it is known.
  using BatchDone = std::function<void(size_t i, OracleResult r, double checkMs)>;
  /// Checks `ks` as one batch (see above). `done` is called once per kernel,
  /// except for the kernels after one that poisoned CUDA (poisoned() is then
  /// true): the caller must have those checked by another process.
  void checkBatch(const std::vector<FuzzKernel> &ks, const BatchDone &done);
  /// The device's name and compute capability (creates the context); with
  /// compileOnly, what stands in for it ("no GPU: compile only, sm_90, ptxas").
  std::string deviceDescription();
  /// Whether CUDA became unusable in this process (after a fault or a hang).
  bool poisoned() const { return poisoned_; }

private:
  struct Pending;
  /// `kernels` more kernels go on the backend (a fresh context every recycleEvery).
  gpu::GpuBackend &backend(int kernels = 1);
  /// The frontend and the interpreter: the final result of a kernel that
  /// drops out, else nullopt with `p` filled.
  std::optional<OracleResult> interpret(const FuzzKernel &k, StageClock &clock, Pending &p);
  /// The rest of check() for a kernel that interpret() kept: compiled alone.
  OracleResult finishAlone(const FuzzKernel &k, Pending &p, StageClock &clock);
  /// Launches `p`'s kernel (prepared already) and compares; the EMI variant.
  OracleResult runAndCompare(const FuzzKernel &k, Pending &p, gpu::GpuBackend &gpu,
                             StageClock &clock);
  OracleResult gpuError(const std::string &property, const std::string &error);
  /// The EMI variant of a passing kernel `k` (`p.want`: its interpreter outputs);
  /// in a GPU batch the variant prepared in the batch's module (Pending::emiKernel).
  void checkEmi(const FuzzKernel &k, Pending &p, OracleResult &out);
  OracleResult checkTimed(const FuzzKernel &k, StageClock &clock);
  OracleResult compileOnly(const FuzzKernel &k, const CompiledKernel &kernel, StageClock &clock,
                           OracleResult out);
  /// --compile-only: `ptx` through ptxas when there is one: a refusal
  /// (gpu-compile) or a repair note (ptxas-repair), its message after `prefix`.
  std::optional<OracleResult> ptxasVerdict(const std::string &ptx, unsigned sm,
                                           const std::string &prefix);
  /// --compile-only: the kernel compiled (and through ptxas) at its
  /// warpsVariant() too; the failure, if any.
  std::optional<OracleResult> compileWarpsVariant(const FuzzKernel &k, const CompiledKernel &kernel,
                                                  StageClock &clock);
  /// A GPU run of the kernel at its warpsVariant() `warps`, compared with the
  /// reference; the failure, if any (nothing when the backend refuses the
  /// shape at that count, or the interpreter one ULP off explains it).
  /// The comparison's parameters for one kernel (compareWithReference's).
  struct Tolerances {
    uint64_t ulps = 0;
    double dotScale = 0, mathTol = 0;
    const BoundedOutputs *direct = nullptr;
  };
  std::optional<OracleResult> warpsVariantRun(const FuzzKernel &k, Pending &p, gpu::GpuBackend &gpu,
                                              unsigned warps, StageClock &clock,
                                              const Tolerances &tol);
  /// The class launches of a kernel that passed (docs/fuzz.md "Argument
  /// classes"): property (g) on the interpreter, then each launch on the GPU
  /// compiled for its arguments' classes (GpuBackend::prepare with the
  /// arguments; with compileOnly, the specialised copy through codegen and
  /// ptxas), compared with its reference as the kernel's own launch is. On
  /// the GPU every class's copy is first compiled into ONE module
  /// (GpuBackend::prepareClasses); when that fails, each alone as above.
  void checkClasses(const FuzzKernel &k, Pending &p, StageClock &clock, OracleResult &out);
  /// compileOnly: every class's specialised copy of `kernel` compiled into
  /// ONE module (codegen::compileBatch) and one ptxas run; true when both
  /// accept it (false: checkClasses compiles the classes one at a time, so
  /// that a failure is named with its class).
  bool compileClassesTogether(const CompiledKernel &kernel, const std::vector<ClassRun> &runs);
  /// The repeated runs of a timing-sensitive kernel (GpuOracleOptions::repeats).
  struct Repeats {
    int runs = 0, bad = 0;                 // all runs (the first included), mismatching ones
    std::string detail, first;             // per stage count; the first mismatch of a repeat
    std::map<std::string, HostArray> got;  // that run's buffers
    std::optional<OracleResult> error;     // a fault or hang
  };
  Repeats repeatRuns(const FuzzKernel &k, Pending &p, gpu::GpuBackend &gpu, bool staged,
                     StageClock &clock, const Tolerances &tol, bool firstBad);
  codegen::Options compileOnlyOptions() const;

  GpuOracleOptions opts_;
  std::unique_ptr<gpu::GpuBackend> backend_;
  int kernelsOnBackend_ = 0;
  bool launchingBatch_ = false; // no fresh context (the batch's module) until it is done
  bool poisoned_ = false;
  std::optional<std::string> ptxas_; // --compile-only: the ptxas found ("" none)
  unsigned deviceSm_ = 0;            // the device's sm (GPU runs' path coverage)
  bool groupAimed_ = true; // kernels aimed at one path share a module ($TC_FUZZ_AIMED_ALONE=1: not)
};

/// The line of a ptxas log that says ptxas repaired our PTX ("" when none):
/// "(C7517) warpgroup.wait is injected ... to allow use of registers defined
/// by GMMA", i.e. the PTX reads wgmma accumulators before their
/// wgmma.wait_group. The failure property "ptxas-repair": --compile-only
/// checks every kernel's ptxas log; a GPU run runs ptxas (when one is found:
/// $PTXAS, the toolkit the build was configured with, $PATH) on the kernels
/// that took wgmma, since the driver's JIT repairs the same PTX silently.
std::string ptxasRepair(const std::string &log);

/// A kernel that failed (`batch`) in a batch but not alone: the failure with
/// the property "batch-only-<property>" and a message that says so.
OracleResult onlyInBatch(const OracleResult &batch);

/// Launches `kernel` on `backend` with `k`'s grid and scalars and `buffers`
/// (by name), under a limit of `seconds`; `raceCheck` as RunOptions::raceCheck.
RunResult runOn(Backend &backend, const CompiledKernel &kernel, const FuzzKernel &k,
                std::map<std::string, HostArray> &buffers, double seconds, bool raceCheck = false);

/// The reference outputs of `k`: interp(ir) with one thread (what every
/// finding's conformance case expects). False with `error` when the kernel
/// does not compile or does not run to completion; with `raceCheck`, also when
/// two of its programs race (a `data_race` trap, as the conformance runner
/// reports it).
bool interpReference(const FuzzKernel &k, double maxSeconds, std::map<std::string, HostArray> &out,
                     std::string &error, bool raceCheck = false);

/// The first element of `got` that differs from `want` under the fuzzer's
/// GPU comparison (see above); "" when they agree. `extraUlps` is
/// gpuExtraUlps of the kernel; `dotScale` is dotToleranceScale of the kernel
/// (general-mode float outputs then get the dtype's tolerance times it);
/// `direct` is boundedOutputs of the kernel (null: none).
std::string compareWithReference(const FuzzKernel &k, const std::map<std::string, HostArray> &want,
                                 const std::map<std::string, HostArray> &got, uint64_t extraUlps,
                                 double dotScale = 0, double mathRelTol = 0,
                                 const BoundedOutputs *direct = nullptr);

/// The (buffer, index) pairs of the elements that differ under the GPU
/// comparison (the same as compareWithReference's).
ElementSet differingElements(const FuzzKernel &k, const std::map<std::string, HostArray> &want,
                             const std::map<std::string, HostArray> &got, uint64_t extraUlps,
                             double dotScale = 0, double mathRelTol = 0,
                             const BoundedOutputs *direct = nullptr);

/// For a kernel that calls ULP-bounded functions (codegen/Ulp.h), the relative
/// error their results may carry into any float output, whatever its dtype:
/// 4 x (bound + 1) x the machine epsilon of the narrowest dtype they are called
/// in (an f32 `sin` converted to f64 is off by f32 ULPs, not f64 ones; the 4
/// allows a few continuous operations after the call). 0 when there are none.
double mathRelativeTolerance(const ir::Function &fn);

/// The "tolerance scaled by K for `@`" of docs/fuzz.md: the tensor-core path
/// sums the products of `@` in an order of its own, so a kernel with `@` is
/// compared (in general mode) with the dtype's rtol times the sum of the K
/// extents of its `@` ops (times 8 for one inside a loop, whose trips add up),
/// and atol times that and 64 (|products| <= 64 for general inputs in [-8, 8]);
/// all of it times the length of the kernel's longest `+` reduction, if any
/// (a sum of results of `@` adds up their errors, and its result can be much
/// smaller than its terms: found by a campaign, an f32 `@` of K = 16 summed
/// over 16 rows was 4.4e-6 off relatively). 0 when the kernel has no `@`.
double dotToleranceScale(const ir::Function &fn);

} // namespace tc::fuzz
