//===- Generator.h - Random well-typed, UB-free Triton-C kernels ---------===//
//
// The differential fuzzer's kernel generator (docs/fuzz.md): a
// RapidCheck generator of kernels that compile and whose every launch is
// defined (no out-of-bounds access, no poison reaching a store, no division by
// zero or INT_MIN / -1, no shift out of range, no float -> int overflow), with
// their arguments and grid. Built with rc::gen combinators, so RapidCheck
// shrinks a failing kernel. docs/fuzz.md says what is generated and how UB is
// avoided.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/DType.h"

#include <rapidcheck.h>

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tc::fuzz {

/// A buffer argument: its parameter name, dtype, shape and initial contents
/// (each value exact in the dtype).
struct BufferDesc {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<double> data;        // row-major, prod(shape) values
  bool isOutput = false;           // written by the kernel
  std::vector<std::string> dims{}; // the size scalar of each axis ("M", "N"), for the reducer
  /// The kernel's pointer is this many elements into its allocation (whose
  /// first `offset` elements hold 5, or true, and must stay so): a pointer
  /// that is not 16-byte aligned (class launches, below).
  int64_t offset = 0;
};

/// Another launch of the same kernel (same source, defines and parameters)
/// with its integer arguments and pointer offsets in other specialisation
/// classes (runtime/Specialize.h: equal to 1, divisible by 16, neither; a
/// pointer 16-byte aligned or not): classLaunchKernel() makes it.
struct ClassLaunch {
  std::vector<std::pair<std::string, int64_t>> ints; // integer scalars with their new values
  int64_t offset = 0;                                 // every buffer's BufferDesc::offset
};

/// A grid axis: the scalar that holds the problem size along it and the tile
/// define that divides it (grid[axis] = cdiv(size, tile), or one more).
struct GridAxis {
  std::string size; // e.g. "M"
  std::string tile; // e.g. "TM"
};

/// A scalar argument (integers hold exact integral values).
struct ScalarDesc {
  std::string name;
  DType dtype = DType::I32;
  double value = 0;
};

/// One generated kernel with everything needed to launch it.
struct FuzzKernel {
  std::string source;
  std::string kernelName;
  std::vector<std::pair<std::string, std::string>> defines;
  std::vector<BufferDesc> buffers; // in parameter order (buffers come first)
  std::vector<ScalarDesc> scalars; // in parameter order, after the buffers
  std::array<int64_t, 3> grid{1, 1, 1};
  std::vector<std::string> features; // sorted, unique (e.g. "dtype.half", "reduce", "dot")
  bool smallInts = false;            // inputs are small integers in [-4, 4] (exact mode)
  std::vector<GridAxis> gridAxes{};  // per grid axis in use (for the reducer)
  /// Launches of the kernel in other argument classes (GenPolicy::argClasses):
  /// each is checked like the kernel, its GPU launch compiled for its class.
  std::vector<ClassLaunch> classLaunches{};
  // Test hook (TC_FUZZ_TEST_COMPILE_FAIL_INDEX, fuzz/Worker.h): the GPU
  // oracle's compile of any module that holds this kernel fails.
  bool testCompileFailure = false;
  // Test hook (TC_FUZZ_TEST_BATCH_FAULT_INDEX): with --compile-only, this
  // kernel "faults" when checked in a batch of several (CUDA then counts as
  // gone in the worker), and passes alone.
  bool testBatchFault = false;
};

/// Probabilities of the generator's choices (each in [0, 1]).
struct GenPolicy {
  double twoD = 0.5;          // 2-D tiles (else 1-D)
  double smallInts = 0.5;     // input mode: small integers (else general values)
  double poisonLoads = 0.15;  // masked loads without fallback (then no reductions or dot)
  double unmasked = 0.1;      // sizes that are multiples of the tile, plain loads and stores
  double extraProgram = 0.2;  // one more program than needed on an axis (fully masked)
  double reduction = 0.5;     // per kernel: a reduction statement
  double dot = 0.35;          // per 2-D kernel: a matrix product
  double loop = 0.4;          // a runtime-bound loop
  double ifStmt = 0.35;       // an `if` on a scalar condition
  double scalarParam = 0.5;   // a scalar parameter used in expressions
  double atomic = 0.2;        // the result goes to the output by an atomic (not a store)
  double threeD = 0.15;       // 3-D tiles [TB, TM, TN] and a 3-D grid (before twoD is drawn)
  double matmul = 0.06;       // a tutorial-style K-loop matmul kernel instead of an elementwise one
  double attention = 0.03;    // a FlashAttention-like kernel (two `@` per trip, online softmax)
  double attentionValues = 0.5; // of attention kernels: the GPU's mma.values form (BM, aligned rows)
  int numWarps = 4;             // the GPU's num_warps the mma.values form is sized for
  double argClasses = 0.1;    // launched again with other argument classes (ClassLaunch)
  double dotAcc = 0.5;        // `@` into a non-zero accumulator (`c += a @ b`, `c + a @ b`)
  double atomicCollide = 0.4; // of atomic kernels: lanes collide (order-independent ops only)
  double atomicHot = 0.4;     // per kernel, times atomic x atomicCollide: a colliding atomic with
                              // every lane on element 0, known before the shape (half of the
                              // 1-D ones get a wide tile: hundreds of threads contend)
  double atomicCas = 0.3;     // of the other atomic kernels: atomic_cas
  double atomicOld = 0.4;     // of the other atomic kernels: the old values are stored to Z
  double loopPointer = 0.4;   // of loops: a pointer that walks through an input, masks following
  double helperStatements = 0.5; // of helpers: a local declaration before `return`
  double edgeValues = 0.3;   // of general-mode kernels: NaN, +-inf, -0.0, subnormal float inputs
  double edgeFraction = 0.1; // of those kernels' float input elements
  int maxInputs = 3;         // input buffers: 1 to maxInputs
  int maxStatements = 5;     // elementwise statements: 1 to maxStatements
  int maxDepth = 3;          // expression depth
  int max1DTile = 64;        // largest 1-D tile (power of two)
  int max2DTile = 16;        // largest 2-D tile axis (power of two)
  int max3DTile = 4;         // largest 3-D tile axis (power of two)
  double wideTile = 0.04;    // of 1-D kernels: a tile of 512 to 2048 elements (several slots a
                             // thread on the GPU: slices and conversions in registers)
  int matmulMinTile = 16;    // matmul kernels: TM, TN, TK powers of two in [min, max]
  int matmulMaxTile = 32;
  // A kernel aimed at one of the GPU's fast paths (one of aimablePaths():
  // a matmul loop in the form that path takes; docs/fuzz.md, "Fast paths");
  // "" for the usual mix. The campaign sets it per kernel (--focus, and the
  // weighting of paths below their floor).
  std::string aim;
  double aimSmallInts = 0.85; // aimed kernels: small-integer inputs (exact results)
};

/// The fast paths a kernel can be aimed at (GenPolicy::aim, `triton-fuzz
/// --focus`) and that the campaign steers toward (fuzz/PathWeights.h):
/// "wgmma", "mma.sync", "mma.loop", "pipeline" (matmul loops) and
/// "mma.values.pipeline", "mma.values" (attention kernels in the form of the
/// GPU's mma.values path, with or mostly with its values pipeline).
const std::vector<std::string> &aimablePaths();

/// Whether `aim` is one of the attention aims ("mma.values", "mma.values.pipeline").
bool isValuesAim(const std::string &aim);


/// Everything `--focus` takes: aimablePaths() and the kernel shapes that are
/// not one lowering path ("attention": every kernel FlashAttention-like).
const std::vector<std::string> &focusTargets();

/// Whether a kernel whose lowering took `paths` (codegen::Compiled::paths)
/// took the fast path `aim`: the path itself, or for "pipeline" any
/// "pipeline.stages=S", for "mma.values.pipeline" any
/// "mma.values.pipeline.stages=S".
bool tookPath(const std::vector<std::string> &paths, const std::string &aim);

/// A generator of kernels under `policy`.
rc::Gen<FuzzKernel> genKernel(const GenPolicy &policy = {});

/// The kernel genKernel(policy) gives for (seed, size): deterministic, and
/// usable without linking RapidCheck (rapidcheck stays inside libtriton).
FuzzKernel generateKernel(const GenPolicy &policy, uint64_t seed, int size = 100);

/// RapidCheck's shrinks of the kernel for (seed, size), taken greedily: the
/// smallest kernel found within `seconds` for which `stillFails` holds (the
/// original if no shrink does). `steps` (optional) counts accepted shrinks.
FuzzKernel shrinkKernel(const GenPolicy &policy, uint64_t seed, int size,
                        const std::function<bool(const FuzzKernel &)> &stillFails, double seconds,
                        int *steps = nullptr);

/// `k` as launched by its class launch `i`: the integer scalars set, every
/// buffer whose axis is sized by a changed scalar (BufferDesc::dims) made
/// again at its new shape (inputs with new values of the kernel's mode,
/// outputs with the fill they had), each buffer at the launch's offset, the
/// grid following its sizes (gridAxes), no class launches of its own.
FuzzKernel classLaunchKernel(const FuzzKernel &k, size_t i);

/// "M=24 K=1 offset=1": what class launch `l` changes.
std::string describeClassLaunch(const ClassLaunch &l);

/// The kernel as text for a report: defines, grid, arguments and source.
std::string describeKernel(const FuzzKernel &k);

} // namespace tc::fuzz
