//===- Printer.h - Deterministic text form of the tile IR -------------===//
#pragma once

#include "ir/IR.h"

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace tc::ir {

struct PrintOptions {
  bool locations = true; // append loc("file":line:col) to every op
};

/// Optional annotations (the GPU backend's layouts: tritonc --emit=layouts):
/// text printed after a value's type, and comment lines (without the `// `)
/// printed before an op, given the printed name of any value.
struct PrintHooks {
  std::function<std::string(const Value &)> valueSuffix;
  std::function<std::vector<std::string>(const Op &,
                                         const std::function<std::string(const Value *)> &)>
      opComments;
};

void printModule(const Module &m, std::ostream &os, const PrintOptions &opts = {});
void printModule(const Module &m, std::ostream &os, const PrintOptions &opts,
                 const PrintHooks &hooks);
std::string toString(const Module &m, const PrintOptions &opts = {});
/// One op on one line (regions elided as `{...}`), for verifier messages.
std::string opToString(const Op &op);

} // namespace tc::ir
