//===- CompileKernels.h - compileKernels with each kernel's launch interface ===//
//
// Internal to codegen/ (Batch.cpp): compileKernels (Codegen.h), and from the
// same lowering each kernel's launch interface (its entry, threads, dynamic
// shared memory, parameters), which Compiled holds for the first kernel only.
// A batch's kernels are then lowered once, not once more each for this.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Codegen.h"

#include <vector>

namespace tc::codegen {

/// compileKernels(module, fns, opts); on success `entries` has one BatchEntry
/// per kernel of `fns`, in order.
Result compileKernels(const ir::Module &module, const std::vector<const ir::Function *> &fns,
                      const Options &opts, std::vector<BatchEntry> &entries);

} // namespace tc::codegen
