//===- IRParser.h - Parse the text form of the tile IR ----------------===//
#pragma once

#include "ir/IR.h"
#include "support/Diagnostics.h"

#include <memory>
#include <string>
#include <unordered_map>

namespace tc::ir {

/// Where each op and kernel of a parsed module was written in the IR text
/// (the op's first token, the kernel's name): verifier errors point there.
struct SourcePositions {
  std::unordered_map<const Op *, SourceLoc> ops;
  std::unordered_map<std::string, SourceLoc> functions;
};

/// Parses the printer's text format from file `file` of the source manager.
/// Errors go to `diags` (file:line:col of the IR text, with caret); returns
/// nullptr on error. The result is not verified (call verifyModule); given
/// `positions`, it records where each op was written.
std::unique_ptr<Module> parseModule(uint32_t file, const SourceManager &sm, DiagEngine &diags,
                                    SourcePositions *positions = nullptr);

} // namespace tc::ir
