//===- Passes.h - IR transformations ----------------------------------===//
//
// Each pass is one file behind one function, returns whether it changed the
// module, and keeps the IR valid. Passes assume the program is well-defined.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace tc::ir {

/// Folds ops whose operands are constants (same semantics as the interpreter:
/// wrap-around, truncating division; never folds an op that would trap).
bool foldConstants(Module &m);
/// Removes pure ops whose results are unused (and unused loop-carried values' ops).
bool eliminateDeadCode(Module &m);
/// Merges identical pure ops (same kind, operands, attributes, types) in scope.
bool eliminateCommonSubexpressions(Module &m);
/// Simplifies splat/broadcast/expand_dims chains (splat of splat, broadcast to
/// the same shape, broadcast of splat -> splat, ...).
bool canonicalize(Module &m);

struct PipelineOptions {
  bool printAfterAll = false; // print the module after each pass to `out`
  bool verifyEach = false;    // run the verifier after each pass
  std::ostream *out = nullptr;
  /// Pass names to run in order; empty: the default pipeline
  /// canonicalize, fold, cse, dce.
  std::vector<std::string> passes;
};

/// The names accepted in PipelineOptions::passes.
std::vector<std::string> passNames();

/// Runs the pipeline; returns false (after printing the failures to `out`
/// or std::cerr) if verification fails after a pass, or a pass name is unknown.
bool runPipeline(Module &m, const PipelineOptions &opts);

} // namespace tc::ir
