//===- TritonOracle.h - The fuzzer pointed at Triton: interp == Triton ---===//
//
// `triton-fuzz --target triton` (docs/fuzz.md, "Against Triton"): each
// generated kernel runs on the reference interpreter first (a trap is a
// discard, a compile error a generator bug, as in fuzz/GpuOracle.h), then is
// translated to a Triton module (tritonpy/) and run by Triton through the
// triton backend's worker (runtime/TritonBackend.h), on the GPU or on Triton's
// interpreter (TRITON_INTERPRET=1). Every buffer is compared as the GPU oracle
// compares it (compareWithReference: exact for small-int kernels, the dtype's
// tolerance otherwise, the GPU's ULP bounds for math, the `@` scale).
//
// Not failures (discards, counted by kind in the campaign's summary):
//   triton-unsupported  the translator refuses the kernel (outside the
//                       comparable subset: a construct Triton cannot express)
//   triton-divergence   the kernel uses an operation whose documented
//                       divergence (docs/triton.md) explains the difference
//                       in this mode (e.g. tl.fma rounding twice in Triton
//                       3.6's interpreter)
//   ulp-sensitive       as in the GPU oracle
//   triton-known-bug:NAME  Triton fails to compile the kernel with the
//                       diagnostic of a known Triton bug that the Triton in
//                       use still has (tritonKnownBug), or Triton's interpreter
//                       shows a known bug of its own on a kernel of that bug's
//                       shape (tritonInterpKnownBug); not with
//                       --report-known-triton-bugs
// Failures:
//   triton-error     Triton raises on the kernel (compile error, ...)
//   triton-crash     the worker process died on it (a new one starts)
//   triton-hang      the launch did not finish within the time limit
//   triton-mismatch  a buffer differs from the reference
//   emi-triton-mismatch / emi-triton-error  the same for the EMI variant
//                    (a share emiRate of the passing kernels, fuzz/Emi.h)
//
// Findings: the reducer (fuzz/Reducer.h) shrinks them as GPU findings; then
// onFinding() writes a standalone Triton script (needs only torch and triton)
// and runs the culprit search below.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fuzz/Oracle.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tc::ir {
class Function;
}

namespace tc::fuzz {

class Checker;

struct TritonOracleOptions {
  bool enabled = false;          // --target triton
  std::string mode = "interpret"; // --triton-mode: "gpu" or "interpret"
  std::string python;            // "" : as runtime/TritonBackend.h finds it
  unsigned numWarps = 4, numStages = 3;
  double maxSeconds = 60; // a launch with its compile (Triton compiles take ~0.1-1 s)
  double emiRate = 0.1;
  /// Where findings' standalone scripts go ("" : not written): DIR/NAME.py.
  std::string reproDir;
  // What the culprit step varies (runtime/TritonBackend.h, TritonOptions).
  std::map<std::string, std::string> env; // the worker's environment (pass switches)
  std::optional<bool> fpFusion;           // enable_fp_fusion
  std::string dotInputPrecision = "ieee"; // tl.dot's input_precision for fp32
  /// Discard differences a documented divergence explains (off in the culprit
  /// step: there a TRITON_INTERPRET=1 run that differs still counts).
  bool judgeDivergences = true;
  /// Report a compile failure that is a known Triton bug of this Triton version
  /// (tritonKnownBug) as a failure, not a discard (--report-known-triton-bugs).
  bool reportKnownBugs = false;
};

/// The checker of `--target triton` (one Triton worker process per checker).
std::unique_ptr<Checker> makeTritonChecker(const TritonOracleOptions &opts);

/// The documented divergence of Triton in `mode` (docs/triton.md) that a
/// kernel with these features can show, "" when none: a difference (with
/// `errorText`: the error Triton raised instead) of such a kernel is a
/// discard ("triton-divergence"), not a finding.
std::string tritonDivergence(const std::vector<std::string> &features, const std::string &mode,
                             const std::string &errorText);

/// The known Triton bug (docs/upstream/) that Triton's error `errorText` shows
/// for Triton `version` (the worker's "Triton X.Y.Z ..." description or "X.Y.Z"),
/// "" when none: recognised by the compiler diagnostic that the worker appends
/// (the LLVM assertion and the failing pass), only for a version that has the
/// bug (each is fixed in Triton 3.9.0); an unknown version has none. The name is
/// the docs/upstream/triton-NAME.md report's.
struct TritonKnownBug {
  std::string name; // "" : none
  std::string fixedIn, doc;
};
TritonKnownBug tritonKnownBug(const std::string &errorText, const std::string &version);

/// What a kernel's IR has that a known bug of Triton's interpreter needs (the
/// translation maps each IR op to one Triton call, so the IR shows the Triton
/// module's shape).
struct TritonKernelFacts {
  /// An atomic whose value (or compare) operand is a `broadcast` that stretches
  /// an axis: `tl.broadcast_to` of a tile, a stride-0 NumPy view in the
  /// interpreter.
  bool atomicBroadcastValue = false;
  /// A comparison of two scalars (or a scalar cast to bool, which the
  /// translation writes as `x != 0`) whose result is splat or broadcast to a
  /// tile.
  bool scalarCompareSplat = false;
  /// A matrix product (`@`: tl.dot).
  bool dot = false;
};
TritonKernelFacts tritonKernelFacts(const ir::Function &fn);

/// The known bug of Triton's interpreter (TRITON_INTERPRET=1; docs/upstream/)
/// that explains what Triton `version` did with a kernel with `facts`: the
/// error it raised (`errorText`), or, with `errorText` empty, a difference from
/// the reference. Recognised by the diagnostic and the kernel's shape together
/// (a difference, which has no diagnostic, by the shape and the version alone),
/// only for a version that has the bug; "" when none.
TritonKnownBug tritonInterpKnownBug(const std::string &errorText, const std::string &version,
                                    const TritonKernelFacts &facts);

/// In interpreter mode, on a worker whose NumPy loses NaN * 0 in matmul
/// (TritonBackend's kMatmulDropsNan in `description`): a kernel with `@` whose
/// differing elements (`differing`) all have a NaN or infinite reference value
/// (`want`) shows the documented divergence of Triton's interpreter's tl.dot
/// there (docs/triton.md), not a finding.
bool tritonDotNanDivergence(const TritonKernelFacts &facts, const std::string &description,
                            const std::map<std::string, HostArray> &want,
                            const ElementSet &differing);

/// A standalone Python script for kernel `k` (needs only torch and triton):
/// the Triton module (tritonpy), the inputs baked in, the reference outputs
/// (`expected`, the interpreter's: Triton-C's semantics), the oracle's
/// comparison; it launches the kernel with `numWarps`/`numStages` (its
/// --num-warps/--num-stages flags override them; TRITON_INTERPRET=1 runs it on
/// Triton's interpreter), prints every wrong element with the right one, and
/// exits 1 when any is wrong (0 when Triton agrees). "" with `error` when the
/// kernel does not translate.
std::string tritonScript(const FuzzKernel &k, const std::map<std::string, HostArray> &expected,
                         const std::string &header, unsigned numWarps, unsigned numStages,
                         std::string &error);

/// The culprit step of a Triton finding: the kernel again with each setting a
/// Triton user can vary (num_warps 1/2/8, num_stages 1/2/4, input_precision
/// tf32x3 for `@`, enable_fp_fusion off, TRITON_INTERPRET=1, and the
/// environment switches that turn passes off: DISABLE_LLVM_OPT=1,
/// DISABLE_PTXAS_OPT=1), each in its own worker; the result names the settings
/// that make the failure go away.
struct TritonCulprit {
  bool skipped = false; // no time (seconds <= 0): nothing run
  bool reproduced = false;
  std::vector<std::string> cures, kept; // settings with which it goes away / stays
  std::vector<std::string> notRun;      // not tried (time, not applicable)
  std::string summary() const;
};
TritonCulprit findTritonCulprit(const FuzzKernel &k, const std::string &property,
                                const TritonOracleOptions &opts, double seconds);

} // namespace tc::fuzz
