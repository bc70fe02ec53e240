//===- Parser.h - Recursive-descent parser of Triton-C ----------------===//
#pragma once

#include "frontend/AST.h"
#include "frontend/Token.h"
#include "support/Diagnostics.h"

#include <memory>
#include <vector>

namespace tc {

/// Parses a preprocessed token stream (ending in eof) into a translation unit.
/// Syntax errors are reported to `diags` with recovery (several per file); the
/// result holds every function that could be parsed.
std::unique_ptr<ast::TranslationUnit> parseTranslationUnit(const std::vector<Token> &tokens,
                                                           DiagEngine &diags);

} // namespace tc
