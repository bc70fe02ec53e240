//===- CheckPtx.h - `triton-conformance check-ptx`: every kernel through ptxas ===//
//
// The offline GPU check of CI: every distinct kernel
// (source, defines, kernel name, num_warps) of the suites' cases that are not
// compile_error cases is compiled with codegen::compile, as the gpu backend
// does, and its PTX is checked with `ptxas -arch=sm_<sm>`. Each kernel is
// compiled in a forked child, so a crash in the compiler is reported against
// its case and the check goes on. No GPU is needed.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Codegen.h"
#include "conformance/Case.h"

#include <string>
#include <vector>

namespace tc::conf {

/// Exit status of check-ptx when it cannot run: no ptxas (ctest's skip code).
constexpr int kCheckPtxSkipped = 77;

struct CheckPtxFlags {
  std::vector<std::string> paths;
  unsigned jobs = 0; // kernels at once; 0: the number of cores
  unsigned sm = 90;
  unsigned numWarps = 4;         // for cases that give no num_warps
  // Every kernel's stages (before --disable-opt).
  unsigned numStages = codegen::Options{}.numStages;
  double timeout = 60;           // seconds per kernel (codegen and ptxas); 0: none
  bool allowUnsupported = false; // "not supported by the GPU backend" does not fail
  bool quiet = false;
  std::string disableOpt; // optimisations switched off (codegen::disableOptimizations)
};

/// Checks every kernel of `suites`; prints the failures and the summary line
/// "N kernels, N accepted by ptxas, N rejected, N not supported by the GPU
/// backend". Returns 0, or 1 when a kernel is rejected (or unsupported without
/// --allow-unsupported), or kCheckPtxSkipped when there is no ptxas (the
/// CUDA toolkit is not installed), after a line saying so.
int checkPtxCommand(const std::vector<LoadResult> &suites, const CheckPtxFlags &flags);

} // namespace tc::conf
