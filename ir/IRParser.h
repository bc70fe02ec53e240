//===- IRParser.h - Parse the text form of the tile IR ----------------===//
#pragma once

#include "ir/IR.h"
#include "support/Diagnostics.h"

#include <memory>

namespace tc::ir {

/// Parses the printer's text format from file `file` of the source manager.
/// Errors go to `diags` (file:line:col of the IR text, with caret); returns
/// nullptr on error. The result is not verified (call verifyModule).
std::unique_ptr<Module> parseModule(uint32_t file, const SourceManager &sm, DiagEngine &diags);

} // namespace tc::ir
