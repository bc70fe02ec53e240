//===- Verifier.h - Structural and type checks of the tile IR ---------===//
#pragma once

#include "ir/IR.h"

#include <string>
#include <vector>

namespace tc::ir {

struct VerifyFailure {
  std::string message;  // what is wrong, e.g. "operand 1 has type tile<32xf32>, expected ..."
  std::string function; // the function it is in
  std::string opText;   // the offending op, printed (opToString)
  Location loc;
  const Op *op = nullptr; // the offending op (nullptr: the function as a whole)
};

/// Checks every op against its rule (operand/result counts and types, attributes,
/// regions and terminators, SSA dominance in structured regions). Collects all
/// failures instead of stopping at the first.
std::vector<VerifyFailure> verifyModule(const Module &m);

/// Renders failures as "error: verifier: <message>\n  in function @f: <op>\n".
std::string formatFailures(const Module &m, const std::vector<VerifyFailure> &failures);

} // namespace tc::ir
