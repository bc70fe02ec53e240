//===- Token.h - Tokens of Triton-C ---------------------------------------===//
#pragma once

#include "support/SourceManager.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace tc {

enum class TokKind : uint16_t {
#define TOK(X) X,
#include "frontend/TokenKinds.def"
};

/// The name of a kind ("identifier", "l_paren", "kw_int", ...).
std::string_view tokKindName(TokKind k);
/// The spelling of a punctuator or keyword kind ("(", "int"), else the empty string.
std::string_view tokSpelling(TokKind k);
/// For an identifier spelled like a keyword, the keyword kind; else TokKind::identifier.
TokKind keywordKind(std::string_view spelling);

struct Token {
  TokKind kind = TokKind::eof;
  std::string text; // spelling as written (after macro expansion, the produced text)
  SourceLoc loc;
  bool atLineStart = false;  // first token on its line (preprocessor directives)
  bool leadingSpace = false; // whitespace before it (stringizing, -E output)
  bool noExpand = false;     // preprocessor: an identifier that must not be expanded again

  bool is(TokKind k) const { return kind == k; }
  bool isNot(TokKind k) const { return kind != k; }
  uint32_t length() const { return static_cast<uint32_t>(text.empty() ? 1 : text.size()); }
};

} // namespace tc
