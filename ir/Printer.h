//===- Printer.h - Deterministic text form of the tile IR -------------===//
#pragma once

#include "ir/IR.h"

#include <iosfwd>
#include <string>

namespace tc::ir {

struct PrintOptions {
  bool locations = true; // append loc("file":line:col) to every op
};

void printModule(const Module &m, std::ostream &os, const PrintOptions &opts = {});
std::string toString(const Module &m, const PrintOptions &opts = {});
/// One op on one line (regions elided as `{...}`), for verifier messages.
std::string opToString(const Op &op);

} // namespace tc::ir
