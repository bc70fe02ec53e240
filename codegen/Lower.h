//===- Lower.h - Tile IR to an LLVM module for nvptx64 (internal) --------===//
//
// Internal to codegen/. The lowering model (docs/gpu.md, the "first
// lowering that is simple and correct"):
//
// * A program is one CTA of T = 32 * num_warps threads. Scalars are computed
//   redundantly by every thread (so control flow is uniform).
// * A tile of N elements is spread over the threads in a *blocked layout* over
//   its row-major flattened index: thread t owns K = max(1, N / T) slots; with
//   V' = min(V, K) consecutive elements per run, slot k of thread t holds
//   element ((k / V') * T + t) * V' + k % V' (so a warp's accesses are
//   contiguous; V = 16 bytes / the narrowest element a tile load or store
//   of the kernel accesses, at most 32 bytes / the widest, with
//   Options::vectorize, else 1: docs/gpu-perf.md). When
//   N < T, thread t holds element t mod N and only threads
//   t < N are its *owners* (the others compute duplicates and never write).
//   Every tile of N elements has the same layout, so elementwise ops,
//   expand_dims and reshape need no data movement.
// * Ops whose result lanes need other threads' lanes (broadcast, trans,
//   reduce, dot, print, scalar atomics) stage their operand through dynamic
//   shared memory: barrier, owners write, barrier, every thread reads what it
//   needs. One staging area, reused, sized for the largest staging.
// * Loads, stores and atomics are per slot, predicated on the mask (and, for
//   stores and atomics, on ownership); scalar stores and atomics are done by
//   thread 0 (an atomic's old value is then shared through shared memory).
//
// Which of these a value gets, and how each change of layout is made, is
// decided once before anything is emitted by the layouts pass (Layout.h,
// LowerLayouts.cpp; `tritonc --emit=layouts` prints it); the lowering reads
// its decisions.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Codegen.h"

#include <llvm/IR/Module.h>

#include <memory>
#include <string>

namespace tc::codegen {

struct LoweredKernel {
  std::unique_ptr<llvm::Module> module;
  std::string entry;
  unsigned numThreads = 128;
  size_t sharedBytes = 0;
  bool archSpecific = false; // uses sm_90a instructions (wgmma)
  std::vector<std::string> paths; // the lowering paths taken, sorted (Compiled::paths)
  std::vector<KernelParam> params;
  std::vector<TensorMapParam> tensorMaps;
};

/// Lowers `fn` into a new module in `ctx`. On failure returns false with a
/// one-line `error` ("not supported by the GPU backend yet: ...").
bool lowerKernel(const ir::Module &module, const ir::Function &fn, const Options &opts, llvm::LLVMContext &ctx,
                 LoweredKernel &out, std::string &error);

/// Whether the backend's workarounds of ptxas bugs are on: all but under the
/// test hook TC_TEST_NO_PTXAS_WORKAROUND=1 (codegen/Target.cpp; docs/gpu.md).
bool ptxasWorkaroundsOn();

} // namespace tc::codegen
