//===- ParseLiteral.cpp - Numbers, strings and character constants -------===//
//
// The lexer hands over pp-numbers unclassified; here they become integer
// literals (decimal, hex 0x, octal 0, binary 0b; suffixes u, l, ll in C's
// combinations, accepted and ignored) or floating literals (decimal or hex,
// with an exponent or a '.', optional f/F suffix). Integer values must fit in
// 64 bits; they are kept as unsigned __int128 for sema's constant folding.
//
//===----------------------------------------------------------------------===//
#include "frontend/ParserImpl.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace tc {

using namespace ast;

namespace {
bool isDigitIn(char c, unsigned base) {
  if (base == 16)
    return std::isxdigit(static_cast<unsigned char>(c));
  return c >= '0' && c <= '9' && static_cast<unsigned>(c - '0') < base;
}

unsigned digitValue(char c) {
  if (c >= '0' && c <= '9')
    return static_cast<unsigned>(c - '0');
  return static_cast<unsigned>(std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
}

bool isValidIntSuffix(std::string_view s) {
  static constexpr std::string_view kSuffixes[] = {
      "",   "u",  "U",  "l",   "L",   "ll",  "LL",  "ul",  "uL",  "Ul",  "UL", "lu",
      "lU", "Lu", "LU", "ull", "uLL", "Ull", "ULL", "llu", "llU", "LLu", "LLU"};
  for (std::string_view v : kSuffixes)
    if (s == v)
      return true;
  return false;
}

const char *baseName(unsigned base) {
  switch (base) {
  case 2: return "binary";
  case 8: return "octal";
  case 16: return "hexadecimal";
  default: return "decimal";
  }
}

/// True if a pp-number spells a floating literal.
bool looksFloating(std::string_view text, bool hex) {
  for (char c : text) {
    if (c == '.')
      return true;
    if (hex ? (c == 'p' || c == 'P') : (c == 'e' || c == 'E'))
      return true;
  }
  return false;
}

/// `loc` moved `offset` columns right, when it points into the file itself.
SourceLoc offsetLoc(SourceLoc loc, size_t offset) {
  if (loc.expansion == 0 && loc.valid())
    loc.col += static_cast<uint32_t>(offset);
  return loc;
}
} // namespace

// number ::= integer-literal | floating-literal     (classifying a pp-number)
ExprPtr Parser::parseNumber() {
  const Token &t = advance();
  std::string_view text = t.text;
  bool hex = text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  bool bin = text.size() > 1 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B');
  if (!bin && looksFloating(text, hex))
    return parseFloatLiteral(t);
  unsigned base = hex ? 16 : bin ? 2 : (text.size() > 1 && text[0] == '0') ? 8 : 10;
  std::string_view body = text.substr(hex || bin ? 2 : 0);
  size_t n = 0;
  while (n < body.size() && isDigitIn(body[n], base == 16 ? 16 : 10))
    ++n;
  return parseIntLiteral(t, body.substr(0, n), base, body.substr(n));
}

// integer-literal ::= digits suffix?   (digits already split from the suffix)
ExprPtr Parser::parseIntLiteral(const Token &t, std::string_view digits, unsigned base,
                                std::string_view suffix) {
  if (digits.empty()) {
    error(DiagId::err_invalid_numeric_literal, t, {t.text});
    return nullptr;
  }
  for (size_t i = 0; i < digits.size(); ++i) {
    if (!isDigitIn(digits[i], base)) {
      size_t offset = t.text.size() - suffix.size() - digits.size() + i;
      diags_.report(DiagId::err_invalid_digit, offsetLoc(t.loc, offset),
                    {std::string(1, digits[i]), baseName(base)});
      return nullptr;
    }
  }
  if (!isValidIntSuffix(suffix)) {
    size_t offset = t.text.size() - suffix.size();
    diags_.report(DiagId::err_invalid_suffix, offsetLoc(t.loc, offset),
                  {std::string(suffix), "integer"}, static_cast<uint32_t>(suffix.size()));
    return nullptr;
  }
  constexpr unsigned __int128 kMax = UINT64_MAX;
  unsigned __int128 value = 0;
  for (char c : digits) {
    value = value * base + digitValue(c);
    if (value > kMax) {
      error(DiagId::err_int_literal_too_large, t);
      return nullptr;
    }
  }
  auto e = std::make_unique<IntLiteralExpr>(t.loc);
  e->spelling = t.text;
  e->value = value;
  e->length = t.length();
  return finish(std::move(e));
}

// floating-literal ::= (decimal or hex, as strtod reads it) ('f' | 'F')?
ExprPtr Parser::parseFloatLiteral(const Token &t) {
  std::string text = t.text;
  errno = 0;
  char *end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  size_t used = static_cast<size_t>(end - text.c_str());
  std::string_view suffix = std::string_view(text).substr(used);
  if (used == 0) {
    error(DiagId::err_invalid_numeric_literal, t, {t.text});
    return nullptr;
  }
  if (!suffix.empty() && suffix != "f" && suffix != "F") {
    diags_.report(DiagId::err_invalid_suffix, offsetLoc(t.loc, used),
                  {std::string(suffix), "floating"}, static_cast<uint32_t>(suffix.size()));
    return nullptr;
  }
  if (errno == ERANGE && std::isinf(value)) {
    error(DiagId::err_float_literal_too_large, t);
    return nullptr;
  }
  auto e = std::make_unique<FloatLiteralExpr>(t.loc);
  e->spelling = t.text;
  e->value = value;
  e->length = t.length();
  return finish(std::move(e));
}

// Unescapes \n \t \r \0 \a \b \f \v \\ \' \" \? \ooo \xhh; warns on others.
std::string Parser::unescape(std::string_view body, const Token &t) {
  size_t bodyStart = t.text.find_first_of("\"'") + 1;
  std::string out;
  for (size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\\' || i + 1 == body.size()) {
      out += body[i];
      continue;
    }
    size_t escAt = i;
    char c = body[++i];
    switch (c) {
    case 'n': out += '\n'; continue;
    case 't': out += '\t'; continue;
    case 'r': out += '\r'; continue;
    case 'a': out += '\a'; continue;
    case 'b': out += '\b'; continue;
    case 'f': out += '\f'; continue;
    case 'v': out += '\v'; continue;
    case '\\':
    case '\'':
    case '"':
    case '?': out += c; continue;
    default: break;
    }
    if (c >= '0' && c <= '7') {
      unsigned v = 0;
      size_t k = 0;
      for (; k < 3 && i + k < body.size() && body[i + k] >= '0' && body[i + k] <= '7'; ++k)
        v = v * 8 + static_cast<unsigned>(body[i + k] - '0');
      i += k - 1;
      out += static_cast<char>(v & 0xFF);
    } else if (c == 'x' && i + 1 < body.size() &&
               std::isxdigit(static_cast<unsigned char>(body[i + 1]))) {
      unsigned v = 0;
      while (i + 1 < body.size() && std::isxdigit(static_cast<unsigned char>(body[i + 1])))
        v = (v * 16 + digitValue(body[++i])) & 0xFF;
      out += static_cast<char>(v);
    } else {
      diags_.report(DiagId::warn_unknown_escape, offsetLoc(t.loc, bodyStart + escAt),
                    {std::string(1, c)}, 2);
      out += c;
    }
  }
  return out;
}

namespace {
/// The text between the quotes of a string or character token (tolerating a
/// missing closing quote, which the lexer has reported).
std::string_view quotedBody(std::string_view text, char quote) {
  size_t open = text.find(quote);
  if (open == std::string_view::npos)
    return {};
  std::string_view body = text.substr(open + 1);
  if (!body.empty() && body.back() == quote)
    body.remove_suffix(1);
  return body;
}
} // namespace

// string-literals ::= string-literal+       (adjacent literals concatenate)
ExprPtr Parser::parseString() {
  const Token &first = tok();
  auto e = std::make_unique<StringLiteralExpr>(first.loc);
  while (at(TokKind::string_literal)) {
    const Token &t = advance();
    e->value += unescape(quotedBody(t.text, '"'), t);
  }
  e->length = spanFrom(first);
  return finish(std::move(e));
}

// char-constant ::= '\'' c-char '\''        (an integer literal of one byte)
ExprPtr Parser::parseCharConstant() {
  const Token &t = advance();
  std::string value = unescape(quotedBody(t.text, '\''), t);
  if (value.size() != 1) {
    error(DiagId::err_invalid_char_constant, t, {t.text});
    return nullptr;
  }
  auto e = std::make_unique<IntLiteralExpr>(t.loc);
  e->spelling = t.text;
  e->value = static_cast<unsigned char>(value[0]);
  e->length = t.length();
  return finish(std::move(e));
}

} // namespace tc
