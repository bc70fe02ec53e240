// Tile IR -> LLVM IR for nvptx64: lowerKernel (the class is in Lowerer.h).
#include "codegen/Lowerer.h"

#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace tc::codegen {

using lower::Lowerer;
using lower::Unsupported;

bool lowerKernel(const ir::Module &module, const ir::Function &fn, const Options &opts,
                 llvm::LLVMContext &ctx, LoweredKernel &out, std::string &error) {
  static const unsigned kWarps[] = {1, 2, 4, 8, 16, 32};
  if (std::find(std::begin(kWarps), std::end(kWarps), opts.numWarps) == std::end(kWarps)) {
    error = "num_warps must be 1, 2, 4, 8, 16 or 32 (got " + std::to_string(opts.numWarps) + ")";
    return false;
  }
  // Options exit-values and prefetch: loop results from their initial values
  // (ExitValues.cpp), and the loops that qualify load one trip ahead
  // (Prefetch.cpp); a copy of the kernel where either changes it.
  PreparedKernel pk = prepareKernel(module, fn, opts);
  const ir::Module &m = pk.module(module);
  const ir::Function &f = pk.function(fn);
  try {
    try {
      Lowerer(m, f, opts, ctx).run(out);
    } catch (const lower::SharedOverflow &e) {
      if (!e.sharedA)
        throw;
      // Q's own region (wgmma reading it from shared memory) took the room
      // the kernel's other staging needed: Q's fragments from registers.
      Lowerer again(m, f, opts, ctx);
      again.withoutSharedA();
      again.run(out);
    }
    if (pk.exitValues.loops > 0)
      out.paths.push_back("loop.exit_values");
    if (pk.prefetch.loops > 0 || pk.exitValues.loops > 0) {
      if (pk.prefetch.loops > 0)
        out.paths.push_back("loop.prefetch");
      std::sort(out.paths.begin(), out.paths.end());
    }
  } catch (const Unsupported &e) {
    std::string what = e.what();
    error = what.rfind("internal:", 0) == 0 ? "internal error in the GPU backend: " + what.substr(10)
                                            : "not supported by the GPU backend yet: " + what;
    return false;
  }
  std::string verify;
  llvm::raw_string_ostream os(verify);
  if (llvm::verifyModule(*out.module, &os)) {
    error = "internal error in the GPU backend: the generated LLVM IR is invalid: " + os.str();
    return false;
  }
  return true;
}

} // namespace tc::codegen
