//===- Culprit.h - Which optimisation makes a GPU failure go away --------===//
//
// DESIGN.md section 8, "Finding the culprit": a GPU finding is re-run with
// each of the backend's optimisations switched off (`--disable-opt NAME`),
// with LLVM's optional passes bisected (as `-opt-bisect-limit` does: the
// optimiser's and the NVPTX code generator's passes, in order, through
// codegen::Options::optBisectLimit), with ptxas at -O0 instead of the
// driver JIT's default (codegen::Options::jitOptLevel), and, where ptxas made
// the campaign's modules, through the driver's JIT instead (driverJit). The
// result names what
// makes the failure go away, or says that nothing does.
//
// The search is independent of the GPU: `fails(options)` says whether the
// failure shows with those code generation options (the campaign's reducer
// runs the reduced kernel on the GPU; tests use predicates on the PTX).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/Codegen.h"
#include "fuzz/Generator.h"

#include <functional>
#include <string>
#include <vector>

namespace tc::fuzz {

struct Culprit {
  bool reproduced = false;             // the failure showed with the base options
  std::vector<std::string> disableOpt; // optimisations whose `--disable-opt` makes it go away
  int passCount = 0;                   // optional LLVM passes offered (0: not bisected)
  bool llvmNeeded = false;             // with no optional LLVM pass run it goes away
  int passIndex = -1;                  // 1-based: the first limit at which it shows
  std::string passName;                // "InstCombinePass on fuzz"
  bool ptxasO0Clean = false;           // goes away with the JIT at -O0
  bool ptxasChecked = false;
  bool driverJitClean = false; // goes away with the driver's JIT (the modules were ptxas's)
  bool driverJitChecked = false;
  int probes = 0; // runs of `fails`
  bool outOfTime = false;
  /// One line for the finding: "goes away with --disable-opt vectorize; LLVM
  /// pass 41/388 (InstCombinePass on fuzz); ptxas -O0" or "no optimisation
  /// makes it go away (...)".
  std::string summary() const;
};

struct CulpritOptions {
  bool bisectLlvm = true;
  bool checkPtxas = true; // needs a GPU (the JIT's level)
  /// Whether the campaign's modules are made by ptxas ($TC_CUBIN): then the
  /// search also runs the kernel through the driver's JIT at its default level.
  bool ptxasModules = false;
  double seconds = 60;    // budget over all probes (each probe is one compile and run)
};

/// Searches what makes the failure of `k` go away. `fails(opts)` runs the
/// kernel with code generation options `opts` (derived from `base`) and says
/// whether the failure is still there.
Culprit findCulprit(const FuzzKernel &k, const codegen::Options &base,
                    const std::function<bool(const codegen::Options &)> &fails,
                    const CulpritOptions &copts = {});

/// The optional LLVM passes offered when `k` is compiled with `opts` ("" on
/// a compile error, with `error`).
std::vector<std::string> gatedPasses(const FuzzKernel &k, codegen::Options opts,
                                     std::string &error);

} // namespace tc::fuzz
