//===- Reducer.h - Reducing a failing kernel beyond RapidCheck's shrinks --===//
//
// After RapidCheck's shrinks (fuzz/Generator.h shrinkKernel), a failure is
// reduced further on the kernel itself, as C-Reduce does but knowing the
// language: delete statements, replace an expression by one of its operands
// or by a constant, shrink tile defines and buffer shapes (with the grid to
// match), and simplify the input data (zeros, ones). A candidate is kept only
// if `stillFails` holds for it; the predicate itself checks that the candidate
// compiles, does not trap on the interpreter (stays well-defined) and still
// shows the same failure. Reduction stops at a fixpoint or when the time
// budget is spent.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fuzz/Generator.h"

#include <functional>
#include <string>

namespace tc::fuzz {

struct ReduceStats {
  int candidates = 0; // candidates tried
  int accepted = 0;   // candidates kept
  double seconds = 0;
};

/// The smallest kernel found from `k` within `seconds` for which `stillFails`
/// holds (`k` itself when no candidate does).
FuzzKernel reduceKernel(const FuzzKernel &k, const std::function<bool(const FuzzKernel &)> &stillFails,
                        double seconds, ReduceStats *stats = nullptr);

/// A short signature for deduplicating failures of a (reduced) kernel:
/// the property, the output's dtype and the sorted set of IR op kinds in the
/// kernel after the pass pipeline (e.g. "gpu-mismatch|f32|load,reduce.max,store"),
/// so two reductions of the same bug usually agree.
std::string failureSignature(const FuzzKernel &k, const std::string &property);

} // namespace tc::fuzz
