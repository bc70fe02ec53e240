//===- Case.h - A fuzzer finding as a conformance case --------------------===//
//
// Writes a failing kernel as a suite file in the conformance format
// (conformance/FORMAT.md): the source, defines, grid, every argument
// with its exact data, and the reference outputs (interp(ir), one thread) as
// the expectation (exact, or the dtype's default tolerance for GPU findings
// in general-value mode). The seed, the property, the first difference, the
// signature ("fuzz-signature: <sig>") and the command that reproduces the
// finding are in the suite's description.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fuzz/Oracle.h"

#include <cstdint>
#include <map>
#include <string>

namespace tc::fuzz {

struct CaseInfo {
  std::string name;      // the case's name (also the file's stem)
  uint64_t seed = 0;     // the kernel's seed
  std::string reproduce; // the command that finds it again
  std::string signature; // the failure's signature ("fuzz-signature: <sig>" in the
                         // description, for knownSignatures in fuzz/Report.h)
  bool exact = true;     // "compare": "exact" (else the dtype's default tolerance)
  /// Outputs compared without the tolerance (the GPU oracle's bounded outputs,
  /// fuzz/GpuOracle.h): name -> N, "compare": {"ulp": N}, or "exact" for 0.
  std::map<std::string, uint64_t> ulpOutputs;
  std::string note;      // one more line for the description ("" when none)
  std::string expected = "the reference run, interp(ir) with one thread";
  /// The GPU campaign's num_warps: the case's "num_warps" when it is not 4.
  /// A failure of the num_warps variant always gives the variant's.
  unsigned numWarps = 4;
  /// The GPU campaign loaded modules that ptxas made ($TC_CUBIN): the
  /// description says how to run the case the same way (the conformance
  /// runner's default is the driver's JIT).
  bool ptxasModules = false;
};

/// The suite file text (JSON) for failure `r` of kernel `k`.
std::string conformanceCase(const FuzzKernel &k, const OracleResult &r, const CaseInfo &info);

} // namespace tc::fuzz
