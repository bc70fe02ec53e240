//===- PPLexer.h - Lexer entry points used by the preprocessor ---------===//
//
// Internal to the frontend: lexFile (Lexer.h) is the public entry point.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Token.h"
#include "support/Diagnostics.h"

#include <string>
#include <string_view>
#include <vector>

namespace tc {

/// How the raw lexer treats malformed input.
enum class LexErrorMode : uint8_t {
  /// Report unterminated literals and stray characters at once.
  Report,
  /// Turn them into `unknown` tokens (text kept) without a diagnostic; the
  /// preprocessor reports them only if they reach its output (not in skipped
  /// #if blocks, not when stringized). See describeUnknownToken.
  Defer,
};

/// Lexes `text` as the contents of file `file` (locations refer to it; use
/// SourceLoc::kNoFile for a scratch buffer). Unterminated block comments are
/// always reported when `diags` is non-null. `errors`, when non-null, is
/// incremented once per lexical error (reported or deferred).
std::vector<Token> lexBuffer(std::string_view text, uint32_t file, DiagEngine *diags,
                             LexErrorMode mode, unsigned *errors = nullptr);

/// For an `unknown` token produced in Defer mode: reports the lexical error it
/// stands for (stray character or unterminated literal) at `loc`.
void reportUnknownToken(const Token &tok, SourceLoc loc, DiagEngine &diags);

} // namespace tc
