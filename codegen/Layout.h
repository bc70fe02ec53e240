//===- Layout.h - Layouts of tile values and the assignLayouts pass -------===//
//
// A layout says which thread of a program holds which element of a tile value
// (DESIGN.md section 7, "a layout for every tile value"; the kinds are
// Triton's TritonGPU encodings, printed in a Triton-like syntax):
//
//   #blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1],
//             order = [1, 0], vec = 8}>
//       a CTA tile of sizePerThread * threadsPerWarp * warpsPerCTA elements per
//       axis, repeated over the value (or wrapped around it: a value smaller
//       than the CTA tile is replicated); `order` lists the axes fastest first;
//       `vec` is a thread's run of consecutive elements (the widest access);
//   #slice<{dim = 1, parent = ...}>       the parent with axis `dim` removed;
//   #uniform<{threads = 128}>             a scalar: every thread holds it;
//   #shared<{order = [1, 0], ...}>        staged in shared memory (padding or
//                                         the wgmma swizzle, pipeline stages);
//   #mma<{versionMajor = 2|3, ...}>       mma.sync (2) / wgmma (3) accumulator
//                                         fragments in registers;
//   #dot_op<{opIdx = 0|1, parent = ...}>  an `@` operand's fragments.
//
// assignLayouts gives every tile value of a kernel the layout the GPU lowering
// uses for it and lists every change of layout as a Conversion with its
// mechanism and cost. The lowering (codegen/Lowerer.h) takes its decisions
// from the same result: the run length, which ops stage through shared memory,
// which `@` runs on tensor cores, which loops keep an accumulator in mma
// fragments. `tritonc --emit=layouts` prints it (docs/gpu-perf.md).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Codegen.h"

#include <iosfwd>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

namespace tc::codegen {

struct Layout {
  enum class Kind { Blocked, Slice, Shared, Mma, DotOperand };
  Kind kind = Kind::Blocked;
  // Blocked. `flat` (shapes whose axes do not split into powers of the run,
  // the warp and the program): element e is in run e / vec, run r at thread
  // r mod numThreads; printed as such.
  std::vector<int64_t> sizePerThread, threadsPerWarp, warpsPerCTA, order;
  int64_t vec = 1;
  bool flat = false;
  int64_t numThreads = 0;
  // Slice: the parent with axis `dim` removed. DotOperand: the accumulator's layout.
  int64_t dim = 0;
  std::shared_ptr<const Layout> parent;
  // Shared: `order` (as blocked); padElems unused elements after every
  // `padEvery` (0: none); or rows of `swizzleBytes` with 16-byte chunks XOR-swizzled (wgmma);
  // `stages` buffers (cp.async pipeline); `transposedRows`: columns stored as rows.
  int64_t padEvery = 0, padElems = 1, swizzleBytes = 0, stages = 1;
  bool transposedRows = false;
  // Mma: versionMajor 2 (mma.sync) or 3 (wgmma); instrShape [m, n, k]; each of
  // numWarps warps owns warp tiles of warpTile elements (round robin).
  int version = 0;
  std::vector<int64_t> instrShape, warpTile;
  int64_t numWarps = 0;
  // DotOperand: operand 0 (a) or 1 (b) of `@`, kWidth consecutive k elements per register pair.
  int opIdx = 0;
  int64_t kWidth = 0;

  std::string str() const;
  bool operator==(const Layout &o) const { return str() == o.str(); }
  bool operator!=(const Layout &o) const { return !(*this == o); }

  /// The blocked layout of a tile of `shape` over `numThreads` threads with
  /// runs of up to `vec` elements (fewer when the tile is small), its axes
  /// taken in `perm`'s order (last = fastest; empty: row-major): the layout
  /// the lowering gives every tile (Lower.h).
  static Layout blocked(const ir::Shape &shape, int64_t numThreads, int64_t vec,
                        const std::vector<int64_t> &perm = {});
  static Layout slice(const Layout &parent, int64_t dim);
  static Layout shared(std::vector<int64_t> order, int64_t padEvery = 0, int64_t padElems = 1,
                       int64_t swizzleBytes = 0, int64_t stages = 1, bool transposedRows = false);
  static Layout mma(int version, std::vector<int64_t> instrShape, std::vector<int64_t> warpTile,
                    int64_t numWarps);
  static Layout dotOperand(int opIdx, const Layout &parent, int64_t kWidth);

  /// Blocked: the lowest thread that holds the element at `coords` of a tile
  /// of `shape` (Triton's semantics of the encoding).
  int64_t threadOf(const ir::Shape &shape, const std::vector<int64_t> &coords) const;
};

/// One change of layout and what it costs.
struct Conversion {
  enum class Mechanism {
    Free,      // same element-to-thread map, or recomputed where it is needed
    Shared,    // written to shared memory and read back (barriers around it)
    CpAsync,   // global memory to shared memory stages with cp.async (no registers)
    Tma,       // the same with the TMA (cp.async.bulk.tensor, one thread; option tma)
    Registers, // within each thread (and warp shuffles)
  };
  const ir::Op *op = nullptr;
  std::string what; // "operand 0", "result", "acc before the loop", ...
  Layout from, to;
  Mechanism mechanism = Mechanism::Free;
  std::string how;  // in words: "recomputed (remat)", "ldmatrix", ...
  size_t bytes = 0; // of shared memory
  int barriers = 0;
  int loopDepth = 0; // loops around it: >0 means paid every trip
  std::string str() const;
};

struct KernelLayouts {
  std::string kernel;
  int64_t numThreads = 128;
  int64_t vec = 1; // the blocked layout's run length
  std::unordered_map<const ir::Value *, Layout> values;
  /// Notes on an op's access or computation (e.g. "16-byte vectors").
  std::unordered_map<const ir::Op *, std::vector<std::string>> notes;
  std::vector<Conversion> conversions; // in program order
  int plainBarriers[2] = {0, 0}; // debug_barrier ops outside loops, in loops
  /// "conversions through shared memory: N (B bytes, K barriers); per trip of loops: ..."
  std::string summary() const;
};

/// Runs the pass for `fn` (after the IR passes, as compile does). On failure
/// (a construct the GPU backend cannot lower) returns false with `error`.
bool assignLayouts(const ir::Module &module, const ir::Function &fn, const Options &opts,
                   KernelLayouts &out, std::string &error);

/// The kernel's IR with each tile value's layout after its type (aliases
/// #blocked0, #mma0, ... defined at the top), each conversion as a comment
/// before its op, and the summary line.
void printLayouts(const ir::Module &module, const ir::Function &fn, const KernelLayouts &layouts,
                  std::ostream &os);

} // namespace tc::codegen
