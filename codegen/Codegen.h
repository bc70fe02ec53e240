//===- Codegen.h - Tile IR to LLVM IR (nvptx64) to PTX --------------------===//
//
// The GPU compiler's public surface. No LLVM header leaks out of codegen/:
// callers get text (LLVM IR, PTX) and a description of the kernel's launch
// interface.
//
//   codegen::Options o;           // num_warps 4, sm_90
//   auto r = codegen::compile(kernel.module(), kernel.function(), o);
//   if (!r.ok()) ... r.error      // "not supported by the GPU backend yet: ..."
//   r.compiled->ptx               // loadable with cuModuleLoadData
//
// Launch ABI of a generated kernel (what the runtime marshals):
//   - one parameter per IR parameter, in order: pointers as 64-bit global
//     addresses; scalars by value in their own width (bool as one byte 0/1,
//     fp16/bf16 as their 16-bit patterns);
//   - blockDim = (numThreads, 1, 1), gridDim = the launch grid;
//   - dynamic shared memory of `sharedBytes` bytes (the runtime raises the
//     function's limit when that exceeds 48 KiB);
//   - after those, one 128-byte parameter (`.param .align 64 .b8 [128]`) per
//     entry of `tensorMaps` (option "tma"): a CUtensorMap the runtime encodes
//     at each launch from the parameters that entry names
//     (cuda::encodeTensorMap), or 128 zero bytes where the arguments do not
//     qualify (the kernel checks the same conditions and copies without it).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tc::codegen {

struct Options {
  unsigned numWarps = 4; // threads per program = 32 * numWarps (1, 2, 4, 8, 16, 32)
  unsigned sm = 90;      // target compute capability (80 and up)
  unsigned optLevel = 3; // LLVM pipeline level (0..3)
  bool wantLLVM = false; // keep the optimised LLVM IR text in Compiled::llvmIR
  bool lineInfo = true;  // .loc lines in the PTX (for profilers and compute-sanitizer)

  // Optimisations (docs/gpu-perf.md). Each is on by default and can be switched
  // off (`--disable-opt NAME`) to bisect a mismatch to the one that caused it.
  bool vectorize = true;   // "vectorize": wider per-thread runs, 8/16-byte accesses where proven
  bool remat = true;       // "remat": broadcasts of index arithmetic recomputed, not staged
  bool tensorCores = true; // "mma": `@` of fp16/bf16 tiles through mma.sync
  // "mma-values": an `@` whose result is reduced along its rows (attention's
  // S = Q K^T) keeps it in the mma.sync accumulator registers, and so do the
  // elementwise ops, row reductions, broadcasts and loop-carried values
  // computed from it (codegen/LowerMmaValues.cpp); off, such values go
  // through shared memory to the blocked layout.
  bool mmaValues = true;
  // "key-perm": an `@` on #mma whose result a row sum reads (attention's S =
  // Q K^T), with b streamed as rows of n (K^T from K's rows), gets its n
  // columns permuted so that each thread holds consecutive ones: the rows of
  // K (and of V, for P @ V) are staged in that order. The reference's
  // pairwise row sum is then the thread's own adds and two shuffles; masks
  // and conversions use the columns' true indices (codegen/LowerMmaValues.cpp).
  bool keyPerm = true;
  // "wgmma": on sm_90, matmul loops whose operands stream through cp.async
  // stages run on wgmma.mma_async (sm_90a) from 128-byte-swizzled shared
  // memory (docs/gpu-perf.md, "wgmma"); off, or elsewhere, mma.sync.
  bool wgmma = true;
  // "int8-wgmma": int8 matmul loops on wgmma too (sm_90a): a streams as fp16's
  // does; b, whose rows are n-contiguous, is copied as it is and transposed
  // into K-major rows in shared memory every trip (wgmma reads 8-bit operands
  // K-major only). Off, int8 loops run on mma.sync without the pipeline.
  bool int8Wgmma = true;
  // "split-n": a wgmma matmul loop whose tile has fewer 64-row blocks than
  // warpgroups (64-row tiles on 8 or 16 warps) splits its n columns between
  // the warpgroups of a block (fp16, bf16); off, such loops run on mma.sync.
  bool splitN = true;
  // "masked-stream": a matmul loop's operand loaded with a mask and `other`
  // +0 (the tutorial's `rk < K - k ? *pa : 0`) streams through the cp.async
  // stages like an unmasked one, each 16-byte chunk copied or zero-filled
  // (src-size 0) by the mask evaluated for its trip; off, such loops stage
  // their operands from registers every trip (no pipeline, no wgmma).
  bool maskedStreams = true;
  // "epilogue-cast": a matmul loop's acc whose only user after the loop is a
  // cast to a narrower type (`*pc = c` into half) is cast on its fragments,
  // and the narrow values go through shared memory to the store's layout (half
  // the shared memory and its traffic for fp16 out); off, the fp32 acc is
  // converted and then cast. The same bits either way.
  bool epilogueCast = true;
  // "late-q": attention's Q (the loop-invariant a operand that wgmma reads
  // from shared memory), defined in its loop's block, is stored into shared
  // memory in the loop's prologue after the first K and V copies are issued,
  // so that its load and their copies are in flight together (and its two
  // barriers go: the first trip's publishes it); off, it is stored where it is
  // defined.
  bool lateQ = true;
  // "tma": on sm_90, a wgmma matmul loop of two or more warpgroups (8 warps and
  // up; with one it measured slower) whose a and b streams are plain
  // (unmasked) pointer tiles `P + r * ld + c` over a pointer parameter P and a
  // row pitch ld (an integer parameter or a constant) fills its stages with
  // the Tensor Memory Accelerator (cp.async.bulk.tensor + an mbarrier per
  // stage, one thread issuing) from tensor maps the runtime encodes at launch
  // (Compiled::tensorMaps); a trip whose tile the map cannot address exactly
  // (the tile crosses the end of a row, the arguments do not qualify) is
  // copied with cp.async as without it. Off, every copy is cp.async.
  bool tma = true;
  // "occupancy": a kernel whose loop runs the values pipeline (attention) asks
  // ptxas (`.minnctapersm`) for as many programs per SM as its estimated
  // register demand, shared memory and the SM's threads allow (attention
  // 128x64x64 on 8 warps: 2, in 128 registers); off, every register to one
  // program (`.minnctapersm 1`).
  bool occupancy = true;
  // "shared-divisor": the fp32 divisions of a basic block that share a
  // divisor (`acc / l[:, newaxis]`) take the divisor's correctly rounded
  // reciprocal once and a product with two fused corrections each, with a
  // range check that sends the whole group to `div.rn.f32` when an operand
  // is zero, subnormal, huge or not finite (codegen/SharedDivisor.cpp): the
  // same bits; off, one `div.rn.f32` a quotient.
  bool sharedDivisor = true;
  // "exp2-range": an fp32/fp16/bf16 exp2 whose operand is provably not below
  // -126 (a max with a constant >= -126: `exp2(max(x, -126.0f))`) is
  // `ex2.approx.ftz.f32` alone; libdevice's `exp2f` is that same instruction
  // behind a compare and two multiplies that keep results below 2^-126
  // subnormal, which such an operand never takes. The same bits; off,
  // libdevice's everywhere.
  bool exp2Range = true;
  // "prefetch": in a loop without `@` that writes no memory, each load whose
  // pointer, mask and `other` follow from the loop counter and the carried
  // values is issued one trip ahead (at the top of the trip before, its value
  // carried into the next), so a warp has two trips' loads in flight instead
  // of one (codegen/Prefetch.cpp). The same bits; off, loads stay where they
  // are written. The GPU backend compiles a launch whose grid has more than
  // 16 warps a multiprocessor without it (gpu::wideGridForPrefetch): such
  // grids have the warps to hide the latency, and the extra registers cost
  // programs per SM.
  bool prefetch = true;
  // "exit-values": a loop's result that each trip steps by an amount the loop
  // does not change (`p += inc`, a pointer or an integer), used after the
  // loop, is computed there as init + n * inc, n a trip counter the loop
  // carries (codegen/ExitValues.cpp): the axis analysis then sees its
  // contiguity and alignment, and a second loop that goes on from it streams
  // it. The same bits; off, the result is the loop's own.
  bool exitValues = true;
  // "desc-steps": a wgmma operand's matrix descriptor is packed from its two
  // 32-bit words once per shared-memory block (codegen/LowerWgmma.cpp,
  // wgmmaDescriptor), and each k step's or fragment row's descriptor is that
  // plus a 64-bit constant (one UIADD3.64 in SASS, Triton's form). Off, each
  // wgmma's descriptor is packed on its own, its constant in the low word
  // (two UMOVs a wgmma). The same descriptors.
  bool descSteps = true;
  // "copy-guard": a pipelined loop on cp.async (an attention loop's values
  // pipeline, a matmul loop not on the TMA) branches around each trip's
  // copies for the trip S - 1 ahead where that trip does not run. Off, they
  // are issued in every trip, with a source size of 0 bytes (no read; the
  // stage zero-filled) where it does not, as Triton's pipeliner does: no
  // branch in the trip, and the loop's exit waits for every copy. The same
  // bits either way. (Not yet measured on a GPU: on by default until then.)
  bool guardCopies = true;
  // Shared-memory stages of the operands of matmul loops (1: no pipelining);
  // 3 measured fastest for 128x128x64 tiles on 4 warps with wgmma (669
  // TFLOP/s at 4096^3 on an H200 against 548 with 2); mma.sync prefers 2
  // (337 against 321) (docs/gpu-perf.md).
  unsigned numStages = 3;
  // Every pointer parameter is 16-byte aligned, as if declared __aligned(16):
  // the GPU backend sets it, since each pointer it passes is the start of a
  // device allocation (Triton specialises on 16-byte alignment the same way).
  bool alignedPointers = false;
  // "specialize": the GPU backend compiles each kernel for its launch's
  // argument classes (runtime/Specialize.h: integers equal to 1 or divisible by
  // 16, 16-byte aligned pointers), as Triton does; off, one kernel for every
  // launch (pointers taken as aligned when every one is). codegen::compile
  // itself does not read it: the classes reach it as parameter attributes.
  bool specialize = true;

  // Bisection (fuzz/Culprit.h), both off by default and no part of the code
  // users get. optBisectLimit >= 0 runs only the first N optional LLVM passes
  // of the optimiser and the NVPTX code generator together, in their order (as
  // `-opt-bisect-limit=N` does) and lists every one seen in
  // Compiled::gatedPasses. jitOptLevel >= 0 asks the driver's JIT for that
  // optimisation level of ptxas (CU_JIT_OPTIMIZATION_LEVEL 0..4; default 4).
  // driverJit loads the module through the driver's JIT even where $TC_CUBIN
  // has ptxas make it (codegen/Cuda.h, ImageMode): whether a failure needs
  // ptxas's module.
  int optBisectLimit = -1;
  int jitOptLevel = -1;
  bool driverJit = false;
};

/// The optimisation names `--disable-opt` accepts, in a fixed order.
/// Option "prefetch" (codegen/Prefetch.cpp): a copy of `fn` whose qualifying
/// loops load one trip ahead, or an empty result (module null) when no loop
/// qualifies or the option is off. The lowering compiles the copy.
struct PrefetchedKernel {
  std::unique_ptr<ir::Module> module;
  const ir::Function *function = nullptr;
  unsigned loops = 0; // loops transformed
};
PrefetchedKernel prefetchLoopLoads(const ir::Module &module, const ir::Function &fn,
                                   const Options &opts);
/// Option "exit-values" (codegen/ExitValues.cpp): a copy of `fn` whose loops'
/// stepped results used after them are computed from their initial values
/// (`loops`: the loops rewritten), or an empty result when none qualifies or
/// the option is off.
PrefetchedKernel rewriteExitValues(const ir::Module &module, const ir::Function &fn,
                                   const Options &opts);
/// What the lowering compiles: `fn` after rewriteExitValues, then
/// prefetchLoopLoads; each result empty where that pass changed nothing.
struct PreparedKernel {
  PrefetchedKernel exitValues, prefetch;
  const ir::Module &module(const ir::Module &original) const;
  const ir::Function &function(const ir::Function &original) const;
};
PreparedKernel prepareKernel(const ir::Module &module, const ir::Function &fn, const Options &opts);

const std::vector<std::string> &optimizationNames();
/// Those names and "all", comma-separated (for the tools' --help).
std::string optimizationList();

/// Switches off each optimisation named in `list` ("vectorize,mma"; "all"
/// names every one). Returns false with `error` for an unknown name.
bool disableOptimizations(Options &opts, const std::string &list, std::string &error);

/// The options that change the generated code, as text for cache keys and
/// reports ("num_warps=4 sm=90 O3 vectorize remat mma stages=1").
std::string describeOptions(const Options &opts);

/// One kernel parameter of the launch ABI.
struct KernelParam {
  std::string name;
  DType dtype = DType::I32; // the scalar's type, or the pointee's
  bool isPtr = false;
};

/// A hidden kernel parameter (option "tma", after the IR's parameters): a
/// CUtensorMap over the 2-D view `ptr[row * ld + col]` of a pointer parameter,
/// rows `ld` elements apart, tiles of boxRows x boxCols copied into shared
/// memory with `swizzle` bytes' swizzle (wgmma's canonical layout).
struct TensorMapParam {
  unsigned ptrParam = 0; // the pointer parameter (the map's global address)
  int ldParam = -1;      // the integer parameter holding ld, or -1: ldConst
  int64_t ldConst = 0;
  unsigned elemBytes = 2;
  unsigned boxCols = 64, boxRows = 64; // box {boxCols, boxRows}, each <= 256
  unsigned swizzle = 128;              // 32, 64 or 128 (bytes of a box row)
};

struct StageTime {
  std::string stage; // "lower", "link-libdevice", "optimize", "ptx"
  double ms = 0;
};

struct Compiled {
  std::string entry;  // the kernel's symbol in the PTX
  std::string llvmIR; // optimised LLVM IR (when Options::wantLLVM)
  std::string ptx;    // NUL-free PTX text
  unsigned numThreads = 128;
  size_t sharedBytes = 0;    // dynamic shared memory per program
  unsigned sm = 90;          // the PTX's target, as ptxas -arch wants it
  bool archSpecific = false; // `.target sm_90a` (wgmma): ptxas -arch=sm_90a
  std::vector<KernelParam> params;
  std::vector<TensorMapParam> tensorMaps; // hidden parameters after `params` (option "tma")
  std::vector<StageTime> times;
  // With Options::optBisectLimit >= 0: the optional LLVM passes in the order
  // they were offered ("InstCombinePass on fuzz"), run or skipped.
  std::vector<std::string> gatedPasses;
  // The lowering paths each kernel took, one sorted list per kernel compiled
  // (in order), noted by the lowering where it commits to the code it emits:
  // "wgmma", "wgmma.int8" (an int8 loop on wgmma, b transposed every trip),
  // "mma.sync" (a `@` on mma.sync, in a loop or alone), "mma.loop",
  // "pipeline.stages=S" / "pipeline.off" (a matmul loop's operands through S
  // cp.async stages or staged per trip), "dot.fma" (the CUDA-core `@`),
  // "vector.load.NB" / "vector.store.NB" (an N-byte vector access emitted),
  // "remat", "slice.registers" / "slice.shared", "atomic.KIND" / "atomic.cas",
  // "mma.values.key_perm" (an `@` on #mma whose key columns are permuted),
  // "div.shared" (fp32 divisions that share a divisor, codegen/SharedDivisor.cpp;
  // noted after the optimiser, so only by a compile, not by loweringPaths).
  std::vector<std::vector<std::string>> paths;
};

struct Result {
  std::optional<Compiled> compiled;
  std::string error; // when !compiled: one line, e.g. "not supported by the GPU backend yet: ..."
  bool ok() const { return compiled.has_value(); }
};

/// Lowers `fn` (a verified kernel of `module`) to PTX for sm_`opts.sm`.
Result compile(const ir::Module &module, const ir::Function &fn, const Options &opts);

/// The paths Compiled::paths can hold that every report lists, taken or not
/// (a path not listed here, such as "pipeline.stages=4", is reported when taken).
const std::vector<std::string> &loweringPathNames();

/// Only lowers `fn` to LLVM IR (no LLVM pipeline, no PTX) and returns the
/// lowering paths it takes (Compiled::paths), as compile() would report them.
/// False with `error` when the backend refuses the kernel.
bool loweringPaths(const ir::Module &module, const ir::Function &fn, const Options &opts,
                   std::vector<std::string> &paths, std::string &error);

/// Compiles several kernels of `module` into one LLVM module and one PTX
/// module (as nvcc puts every kernel of a file in one), for tools that print
/// the code; the other fields of Compiled describe the first kernel.
Result compileKernels(const ir::Module &module, const std::vector<const ir::Function *> &fns,
                      const Options &opts);

/// One kernel of a batch: a verified kernel `function` of its own `module`
/// (each compiled from its own source with its own defines).
struct BatchKernel {
  const ir::Module *module = nullptr;
  const ir::Function *function = nullptr;
};

/// Where kernel i of a batch is in the batch's PTX, and how it is launched.
struct BatchEntry {
  std::string entry; // its symbol: `<name>_b<i>`
  unsigned numThreads = 128;
  size_t sharedBytes = 0;
  std::vector<KernelParam> params;
  std::vector<TensorMapParam> tensorMaps;
};

struct BatchResult {
  std::optional<Compiled> compiled; // one PTX module holding every kernel
  std::vector<BatchEntry> kernels;  // with launchInfo: one per kernel, in order
  std::string error;
  bool ok() const { return compiled.has_value(); }
};

/// Compiles several kernels, each from its own IR module, into ONE LLVM
/// module and one PTX module (the fuzzer checks many tiny kernels per driver
/// JIT call: fuzz/GpuOracle.h). The kernels are copied into one IR module,
/// kernel i renamed `<name>_b<i>`, and go through compileKernels: the same
/// lowering, libdevice linked once, the same LLVM pipeline and NVPTX codegen
/// as a single kernel. With `launchInfo`, BatchResult::kernels gets each
/// kernel's launch interface (threads, dynamic shared memory, parameters)
/// from that same lowering (no kernel is lowered twice).
BatchResult compileBatch(const std::vector<BatchKernel> &kernels, const Options &opts,
                         bool launchInfo);

/// Copies `fn` of `src` into `dst` as a new function named `name` (locations
/// remapped to `dst`'s file table). Returns the copy.
ir::Function *copyFunction(ir::Module &dst, const ir::Module &src, const ir::Function &fn,
                           const std::string &name);

/// Makes LLVM's fatal errors (reached only through a bug in the backend or in
/// LLVM) print `error: internal compiler error: ...` and exit with code 70
/// instead of aborting. Installed the first time a kernel is compiled.
void installLlvmFatalErrorHandler();

/// "LLVM 19.1.7 nvptx64, libdevice <hash>": part of every cache key.
std::string compilerVersion();

/// Runs `ptxas -arch=sm_<sm>` on `ptx` (the ptxas found as $PTXAS, in
/// /usr/local/cuda/bin, or on PATH); `sm_<sm>a` when the PTX targets the
/// architecture-specific `sm_<sm>a` (wgmma). Returns true when it accepts the text;
/// `log` gets its messages. Fails with a message when no ptxas is found.
bool runPtxas(const std::string &ptx, unsigned sm, std::string &log, bool verbose = false);

/// The ptxas that runPtxas uses: $PTXAS, else TC_CUDA_HOME/bin/ptxas (the
/// toolkit the build was configured with), else the first on $PATH; empty
/// when there is none.
std::string findPtxas();

/// Why there is no ptxas, and where it was looked for (a sentence).
std::string ptxasMissing();

} // namespace tc::codegen
