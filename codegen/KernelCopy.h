//===- KernelCopy.h - Helpers of the IR rewrites on a kernel's copy -------===//
//
// Internal to codegen/: options exit-values (ExitValues.cpp) and prefetch
// (Prefetch.cpp) rewrite a copy of the kernel that the lowering compiles, and
// leave the module they were given as it is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <memory>
#include <vector>

namespace tc::codegen {

/// A module holding a copy of `fn` (same name, parameters and file table).
struct KernelCopy {
  std::unique_ptr<ir::Module> module;
  ir::Function *function = nullptr;
};
KernelCopy copyKernel(const ir::Module &module, const ir::Function &fn);

/// Uses of `from` in `b` and in the regions under it now use `to`.
void replaceUses(ir::Block &b, const ir::Value *from, ir::Value *to);

/// The `for` and `while` ops of `b` and the regions under it, inner loops first.
void collectLoops(ir::Block &b, std::vector<ir::Op *> &loops);

} // namespace tc::codegen
