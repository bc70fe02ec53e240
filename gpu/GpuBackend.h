//===- GpuBackend.h - Running compiled kernels on an NVIDIA GPU ----------===//
//
// The GPU implementation of tc::Backend (runtime/Launch.h): compiles the
// kernel's IR through codegen/ (cached in memory and on disk), copies the
// argument buffers to the device, launches, copies them back. It checks the
// launch arguments exactly as the interpreter does (invalid_launch,
// misaligned), so both backends reject the same launches.
//
// Faults: a kernel that faults (illegal address, trap) or exceeds the time
// limit ends the launch with RunResult::Status::Error naming the kernel and
// the launch; an `assert` that fails is Status::Trapped (assertion_failed).
//
// Argument specialisation (codegen::Options::specialize, on by default): each
// launch classifies its integer and pointer arguments (runtime/Specialize.h)
// and runs the kernel compiled for that class; the in-memory and disk caches
// and launchDevice's key include the class, so no launch runs code compiled
// for another class. Off (`--disable-opt specialize`), one kernel serves every
// launch whose pointers are aligned, as before.
//
// Device arrays (HostArray::device, e.g. CUDA tensors) are passed by address,
// never copied. A launch whose buffers are all device arrays is asynchronous,
// as a CUDA kernel launch is: it returns once the kernel is queued on the
// stream, and a fault or failed assert surfaces at the caller's next
// synchronisation, not as this launch's result.
// A fault poisons CUDA for the whole process (driver 580 refuses every new
// context afterwards), so later launches fail with a message saying that only
// a new process can use the GPU: run untrusted kernels in worker processes
// (the conformance runner and the fuzzer do).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Codegen.h"
#include "runtime/Launch.h"

#include <memory>
#include <string>
#include <vector>

namespace tc::gpu {

struct GpuOptions {
  int device = 0;           // CUDA device ordinal
  codegen::Options codegen; // num_warps, target (sm is taken from the device)
  bool diskCache = true;    // $XDG_CACHE_HOME/triton-c (or ~/.cache/triton-c)
  std::string cacheDir;     // overrides the default cache directory
  /// Use the device's primary context (the one PyTorch uses) instead of a
  /// context of our own, so that device pointers of CUDA tensors are valid.
  bool primaryContext = false;
  /// bench(): before each timed launch, write a kL2FlushBytes buffer (outside
  /// the timed events), so that no launch finds the previous one's data in
  /// the L2 cache, as Triton's do_bench does. Launches on the context's own
  /// stream only (the flush is a cuMemsetD8 on the legacy default stream,
  /// which that stream waits for).
  bool flushL2 = false;
};

/// The buffer GpuOptions::flushL2 writes: 256 MiB, as do_bench's (the L2 of an
/// H100/H200 is 50-60 MiB).
inline constexpr size_t kL2FlushBytes = size_t(256) << 20;

/// Timing of repeated launches (CUDA events), for --bench.
struct BenchResult {
  std::vector<double> ms; // one per timed launch
  double medianMs = 0, minMs = 0;
};

/// Per-stage compile time and whether the module came from a cache.
struct CompileInfo {
  std::vector<codegen::StageTime> times;
  double loadMs = 0;    // cuModuleLoadData
  double totalMs = 0;   // source IR -> loaded module
  std::string cacheHit; // "", "memory" or "disk"
  /// The lowering paths each compiled kernel took (codegen::Compiled::paths:
  /// one list per kernel of prepareBatch, one for prepare), from the compile
  /// itself; empty when not known (a kernel from the disk cache).
  std::vector<std::vector<std::string>> paths;
};

class GpuBackend : public Backend {
public:
  /// Times `iterations` launches after `warmup` untimed ones; the buffers in
  /// `args` are uploaded once (results of the last launch are written back).
  virtual RunResult bench(const CompiledKernel &kernel, std::array<int64_t, 3> grid,
                          LaunchArgs &args, const RunOptions &opts, int warmup, int iterations,
                          BenchResult &out) = 0;
  /// Compiles (or finds in a cache) and loads the kernel without running it.
  /// With `args` (and codegen::Options::specialize), for their argument
  /// classes (runtime/Specialize.h), as a launch with them compiles it; without,
  /// the generic kernel (pointers taken as 16-byte aligned, nothing assumed of
  /// the integers), which later launches of this kernel object with aligned
  /// pointers then run whatever their class (the fuzzer's checks do this).
  virtual bool prepare(const CompiledKernel &kernel, std::string &error, CompileInfo *info,
                       const LaunchArgs *args = nullptr) = 0;
  /// Compiles several kernels into ONE module (codegen::compileBatch: one LLVM
  /// module, one PTX, one cuModuleLoadData) and makes each launchable: a later
  /// launch() of kernels[i] with whole-allocation (host) buffers runs its
  /// function of that module. `info` gets the batch's stage times. False
  /// with `error` when codegen refuses any kernel or the driver rejects the
  /// module (then check the kernels one at a time to name the culprit). A
  /// backend that cannot batch returns false, saying so.
  virtual bool prepareBatch(const std::vector<const CompiledKernel *> &kernels, std::string &error,
                            CompileInfo *info) {
    (void)kernels;
    (void)info;
    error = "this backend does not compile kernels in batches";
    return false;
  }
  /// Compiles `kernel` for the argument classes of each of `args` (as
  /// prepare(kernel, ..., args[i]) would, one copy per distinct class, classes
  /// already loaded skipped) into ONE module (codegen::compileBatch, one
  /// cuModuleLoadData), so that later launches of `kernel` with arguments of
  /// those classes run their copy of that module. Launches whose arguments
  /// a launch would reject are left out. False with `error` when codegen
  /// refuses a copy or the driver rejects the module (then prepare each alone
  /// to name the class), or when launches are not specialised.
  virtual bool prepareClasses(const CompiledKernel &kernel,
                              const std::vector<const LaunchArgs *> &args, std::string &error,
                              CompileInfo *info) {
    (void)kernel, (void)args, (void)info;
    error = "this backend does not compile argument classes together";
    return false;
  }
  /// Whether launches are specialised on their argument classes.
  virtual bool specializes() const { return false; }
  /// The variant of the kernel a launch with these raw parameter values runs
  /// (as launchDevice takes them): with specialisation, the argument classes'
  /// Specialization::key() ("spec=.DD1"); without, "aligned" or "unaligned"
  /// (every pointer 16-byte aligned, or not). With the kernel's id, num_warps
  /// and num_stages it is launchDevice's cache key; the compile caches key on
  /// it too. (Exposed for tests of that key.)
  virtual std::string launchVariant(const CompiledKernel &kernel, const uint64_t *values) const {
    (void)kernel, (void)values;
    return "aligned";
  }
  /// Whether CUDA became unusable in this process (a sticky error, e.g. a fault).
  virtual bool unusable() const { return false; }
  /// Threads per program for the following launches (a part of the compile key).
  virtual void setNumWarps(unsigned numWarps) = 0;
  virtual unsigned numWarps() const = 0;
  /// Software-pipelining stages for the following compiles (a part of the compile key).
  virtual void setNumStages(unsigned numStages) = 0;
  virtual unsigned numStages() const = 0;
  /// The device's name and compute capability ("NVIDIA H100 80GB HBM3, sm_90").
  virtual std::string deviceDescription() = 0;
  /// Launches on `stream` (a CUstream, e.g. PyTorch's current stream) from now
  /// on; nullptr: the backend's own stream.
  virtual void setStream(void *stream) = 0;
  /// The repeated-launch path of the Python package: every pointer parameter is
  /// a device address, `values[i]` holds parameter i's bits as cuLaunchKernel
  /// takes them (a scalar's already checked against its type). Launches
  /// asynchronously on `stream` with `numWarps` and `numStages`, compiling on
  /// first use, and returns true; returns false and launches nothing when the
  /// launch needs launch()'s full treatment: a grid out of range, a pointer
  /// alignment or __multipleof claim that does not hold, a kernel that is not
  /// compiled and loaded yet, or any CUDA error (launch() then reports it).
  virtual bool launchDevice(const CompiledKernel &kernel, std::array<int64_t, 3> grid,
                            const uint64_t *values, unsigned numWarps, unsigned numStages,
                            void *stream) {
    (void)kernel, (void)grid, (void)values, (void)numWarps, (void)numStages, (void)stream;
    return false; // a backend without this path: every launch goes through launch()
  }
};

/// Option prefetch's grid gate (codegen/Prefetch.cpp, docs/gpu-perf.md "Loops
/// without `@`"): whether a launch of `grid` programs of `numWarps` warps on a
/// device of `multiprocessors` SMs has more than 16 warps a multiprocessor, and
/// so runs the kernel compiled without the option. Prefetching in registers
/// gives a loop the memory-level parallelism that many resident warps give
/// anyway, and costs registers: LayerNorm's three-pass kernel on 8 warps went
/// from 63 to 66 registers (4 to 3 programs an SM) and 8% slower on an H100,
/// while column sums on a grid of 64 programs ran 2.5x faster.
///   wideGridForPrefetch({64, 1, 1}, 4, 132)    // false: 256 warps
///   wideGridForPrefetch({4096, 1, 1}, 8, 132)  // true: 32768 warps
bool wideGridForPrefetch(std::array<int64_t, 3> grid, unsigned numWarps, int multiprocessors);

/// Whether a CUDA device can be used here; if not, `why` is "no CUDA device: ...".
bool cudaAvailable(std::string *why);

/// The number of CUDA devices (0 when none, with `why` as for cudaAvailable).
/// Probed in a child process, like cudaAvailable, so this process stays free
/// to fork workers that use CUDA.
int cudaDeviceCount(std::string *why);

std::unique_ptr<GpuBackend> createGpuBackend(const GpuOptions &opts = {});

/// Exit code of every GPU command when no device is present.
inline constexpr int kExitNoDevice = 4;

} // namespace tc::gpu
