//===- Lexer.h - Raw tokens of a source file --------------------------===//
#pragma once

#include "frontend/Token.h"
#include "support/Diagnostics.h"

#include <vector>

namespace tc {

/// Splits file `file` into preprocessing tokens (identifiers are not yet
/// keywords; numbers are pp-numbers, except that `0...4` lexes as `0`, `...`,
/// `4`). Comments are dropped; `atLineStart`/`leadingSpace` are set. Errors
/// (unterminated comment or string, stray characters) are reported to `diags`
/// and lexing continues. The result ends with an eof token.
std::vector<Token> lexFile(uint32_t file, const SourceManager &sm, DiagEngine &diags);

} // namespace tc
