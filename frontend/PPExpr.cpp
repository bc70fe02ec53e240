//===- PPExpr.cpp - Constant expressions of #if and #elif --------------===//
//
// A precedence-climbing evaluator over the tokens of one directive line.
// Arithmetic is done on uint64_t bit patterns so that signed overflow wraps
// instead of being undefined behaviour in the compiler itself.
//
//===----------------------------------------------------------------------===//
#include "frontend/PPExpr.h"
#include "frontend/StackGuard.h"

#include <cctype>
#include <string>

namespace tc {

namespace {

constexpr unsigned kMaxExprDepth = 256;

struct PPValue {
  uint64_t bits = 0;
  bool isUnsigned = false;

  bool isTrue() const { return bits != 0; }
  int64_t asSigned() const { return static_cast<int64_t>(bits); }
  static PPValue boolean(bool b) { return {b ? 1u : 0u, false}; }
};

/// Binary operator precedence (C), 0 for a token that is not a binary operator.
int binaryPrecedence(TokKind k) {
  switch (k) {
  case TokKind::pipepipe: return 1;
  case TokKind::ampamp: return 2;
  case TokKind::pipe: return 3;
  case TokKind::caret: return 4;
  case TokKind::amp: return 5;
  case TokKind::equalequal:
  case TokKind::exclaimequal: return 6;
  case TokKind::less:
  case TokKind::greater:
  case TokKind::lessequal:
  case TokKind::greaterequal: return 7;
  case TokKind::lessless:
  case TokKind::greatergreater: return 8;
  case TokKind::plus:
  case TokKind::minus: return 9;
  case TokKind::star:
  case TokKind::slash:
  case TokKind::percent: return 10;
  default: return 0;
  }
}

int hexDigit(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

class ExprEvaluator {
public:
  ExprEvaluator(const std::vector<Token> &toks, SourceLoc endLoc, DiagEngine &diags)
      : toks_(toks), endLoc_(endLoc), diags_(diags) {}

  std::optional<int64_t> run();

private:
  const Token *peek() const { return pos_ < toks_.size() ? &toks_[pos_] : nullptr; }
  SourceLoc hereLoc() const { return peek() ? peek()->loc : endLoc_; }
  void fail(DiagId id, SourceLoc loc, std::vector<std::string> args = {}, uint32_t len = 1);

  PPValue parseConditional(bool eval);
  PPValue parseBinary(int minPrec, bool eval);
  PPValue parseUnary(bool eval);
  PPValue parsePrimary(bool eval);
  PPValue parseCharConstant(const Token &tok);
  PPValue applyBinary(TokKind op, PPValue l, PPValue r, const Token &opTok, bool eval);

  const std::vector<Token> &toks_;
  SourceLoc endLoc_;
  DiagEngine &diags_;
  size_t pos_ = 0;
  unsigned depth_ = 0;
  bool failed_ = false;
};

void ExprEvaluator::fail(DiagId id, SourceLoc loc, std::vector<std::string> args, uint32_t len) {
  if (!failed_)
    diags_.report(id, loc, std::move(args), len);
  failed_ = true;
}

std::optional<int64_t> ExprEvaluator::run() {
  if (toks_.empty()) {
    fail(DiagId::err_pp_expected_value_in_expr, endLoc_);
    return std::nullopt;
  }
  PPValue v = parseConditional(true);
  if (!failed_ && peek())
    fail(DiagId::err_pp_missing_binary_op, peek()->loc, {peek()->text}, peek()->length());
  if (failed_)
    return std::nullopt;
  return v.asSigned();
}

// conditional-expression: binary ('?' conditional ':' conditional)?
PPValue ExprEvaluator::parseConditional(bool eval) {
  if (++depth_ > kMaxExprDepth || stackNearlyExhausted()) {
    fail(DiagId::err_pp_expr_too_deep, hereLoc(), {std::to_string(kMaxExprDepth)});
    --depth_;
    return {};
  }
  PPValue cond = parseBinary(1, eval);
  if (failed_ || !peek() || peek()->isNot(TokKind::question)) {
    --depth_;
    return cond;
  }
  ++pos_;
  PPValue a = parseConditional(eval && cond.isTrue());
  if (!failed_ && (!peek() || peek()->isNot(TokKind::colon)))
    fail(DiagId::err_pp_expected_colon_in_expr, hereLoc());
  if (failed_) {
    --depth_;
    return {};
  }
  ++pos_;
  PPValue b = parseConditional(eval && !cond.isTrue());
  --depth_;
  PPValue r = cond.isTrue() ? a : b;
  r.isUnsigned = a.isUnsigned || b.isUnsigned;
  return r;
}

// binary: unary (binop binary-of-higher-precedence)*
PPValue ExprEvaluator::parseBinary(int minPrec, bool eval) {
  PPValue lhs = parseUnary(eval);
  while (!failed_ && peek()) {
    const Token &opTok = *peek();
    int prec = binaryPrecedence(opTok.kind);
    if (prec == 0 || prec < minPrec)
      break;
    ++pos_;
    bool evalRhs = eval;
    if (opTok.is(TokKind::ampamp))
      evalRhs = eval && lhs.isTrue();
    if (opTok.is(TokKind::pipepipe))
      evalRhs = eval && !lhs.isTrue();
    PPValue rhs = parseBinary(prec + 1, evalRhs);
    if (failed_)
      break;
    lhs = applyBinary(opTok.kind, lhs, rhs, opTok, eval);
  }
  return lhs;
}

PPValue ExprEvaluator::applyBinary(TokKind op, PPValue l, PPValue r, const Token &opTok,
                                   bool eval) {
  bool u = l.isUnsigned || r.isUnsigned;
  uint64_t a = l.bits, b = r.bits;
  auto sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
  switch (op) {
  case TokKind::pipepipe: return PPValue::boolean(l.isTrue() || r.isTrue());
  case TokKind::ampamp: return PPValue::boolean(l.isTrue() && r.isTrue());
  case TokKind::pipe: return {a | b, u};
  case TokKind::caret: return {a ^ b, u};
  case TokKind::amp: return {a & b, u};
  case TokKind::equalequal: return PPValue::boolean(a == b);
  case TokKind::exclaimequal: return PPValue::boolean(a != b);
  case TokKind::less: return PPValue::boolean(u ? a < b : sa < sb);
  case TokKind::greater: return PPValue::boolean(u ? a > b : sa > sb);
  case TokKind::lessequal: return PPValue::boolean(u ? a <= b : sa <= sb);
  case TokKind::greaterequal: return PPValue::boolean(u ? a >= b : sa >= sb);
  case TokKind::plus: return {a + b, u};
  case TokKind::minus: return {a - b, u};
  case TokKind::star: return {a * b, u};
  case TokKind::lessless:
    // The type is the left operand's; out-of-range counts give 0.
    if ((!r.isUnsigned && sb < 0) || b >= 64)
      return {0, l.isUnsigned};
    return {a << b, l.isUnsigned};
  case TokKind::greatergreater:
    if ((!r.isUnsigned && sb < 0) || b >= 64)
      return {(!l.isUnsigned && sa < 0) ? ~uint64_t(0) : 0, l.isUnsigned};
    if (l.isUnsigned)
      return {a >> b, true};
    return {static_cast<uint64_t>(sa >> b), false};
  case TokKind::slash:
  case TokKind::percent: {
    bool isDiv = op == TokKind::slash;
    if (b == 0) {
      if (eval)
        fail(isDiv ? DiagId::err_pp_division_by_zero : DiagId::err_pp_remainder_by_zero, opTok.loc);
      return {0, u};
    }
    if (u)
      return {isDiv ? a / b : a % b, true};
    if (sa == INT64_MIN && sb == -1) // overflows: wraps like the other operators
      return {isDiv ? a : 0, false};
    return {static_cast<uint64_t>(isDiv ? sa / sb : sa % sb), false};
  }
  default: break;
  }
  return {};
}

// unary: ('+' | '-' | '!' | '~') unary | primary
PPValue ExprEvaluator::parseUnary(bool eval) {
  const Token *t = peek();
  if (!t) {
    fail(DiagId::err_pp_expected_value_in_expr, endLoc_);
    return {};
  }
  TokKind k = t->kind;
  if (k != TokKind::plus && k != TokKind::minus && k != TokKind::exclaim && k != TokKind::tilde)
    return parsePrimary(eval);
  if (++depth_ > kMaxExprDepth || stackNearlyExhausted()) {
    fail(DiagId::err_pp_expr_too_deep, t->loc, {std::to_string(kMaxExprDepth)});
    return {};
  }
  ++pos_;
  PPValue v = parseUnary(eval);
  --depth_;
  switch (k) {
  case TokKind::minus: return {0 - v.bits, v.isUnsigned};
  case TokKind::exclaim: return PPValue::boolean(!v.isTrue());
  case TokKind::tilde: return {~v.bits, v.isUnsigned};
  default: return v;
  }
}

// primary: integer | char-constant | identifier | '(' conditional ')'
PPValue ExprEvaluator::parsePrimary(bool eval) {
  if (failed_)
    return {};
  const Token &t = *peek();
  switch (t.kind) {
  case TokKind::numeric_constant: {
    ++pos_;
    bool isUnsigned = false;
    std::optional<uint64_t> v = parsePPInteger(t, diags_, isUnsigned);
    if (!v)
      failed_ = true;
    return {v.value_or(0), isUnsigned};
  }
  case TokKind::char_constant: ++pos_; return parseCharConstant(t);
  case TokKind::identifier: ++pos_; return PPValue::boolean(t.text == "true");
  case TokKind::l_paren: {
    ++pos_;
    PPValue v = parseConditional(eval);
    if (!failed_ && (!peek() || peek()->isNot(TokKind::r_paren)))
      fail(DiagId::err_pp_expected_rparen_in_expr, hereLoc());
    ++pos_;
    return v;
  }
  case TokKind::r_paren:
  case TokKind::colon:
  case TokKind::question: fail(DiagId::err_pp_expected_value_in_expr, t.loc); return {};
  default:
    if (binaryPrecedence(t.kind) != 0)
      fail(DiagId::err_pp_expected_value_in_expr, t.loc);
    else
      fail(DiagId::err_pp_invalid_token_in_expr, t.loc, {t.text}, t.length());
    return {};
  }
}

// 'c', '\n', '\x41', '\101'; several characters combine as (v << 8) | c.
// A single character is a (signed) char value, sign-extended.
PPValue ExprEvaluator::parseCharConstant(const Token &tok) {
  const std::string &s = tok.text;
  uint64_t value = 0;
  size_t count = 0;
  int last = 0;
  for (size_t i = 1; i + 1 < s.size(); ++count) {
    int c = static_cast<unsigned char>(s[i++]);
    if (c == '\\' && i + 1 < s.size()) {
      char e = s[i++];
      switch (e) {
      case 'n': c = '\n'; break;
      case 't': c = '\t'; break;
      case 'r': c = '\r'; break;
      case 'a': c = '\a'; break;
      case 'b': c = '\b'; break;
      case 'f': c = '\f'; break;
      case 'v': c = '\v'; break;
      case 'x':
        c = 0;
        while (i + 1 < s.size() && hexDigit(s[i]) >= 0)
          c = (c * 16 + hexDigit(s[i++])) & 0xFF;
        break;
      default:
        if (e >= '0' && e <= '7') {
          c = e - '0';
          for (int k = 0; k < 2 && i + 1 < s.size() && s[i] >= '0' && s[i] <= '7'; ++k)
            c = (c * 8 + (s[i++] - '0')) & 0xFF;
        } else {
          c = static_cast<unsigned char>(e); // \\ \' \" \? and unknown escapes
        }
      }
    }
    last = c;
    value = (value << 8) | static_cast<uint64_t>(c & 0xFF);
  }
  if (count == 0) {
    fail(DiagId::err_pp_invalid_char_constant, tok.loc, {s}, tok.length());
    return {};
  }
  if (count == 1)
    return {static_cast<uint64_t>(static_cast<int64_t>(static_cast<signed char>(last))), false};
  return {static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(value))), false};
}

/// Splits `text` into digits and an integer suffix; false if the suffix is
/// not one of C's (u, l, ul, lu, ll, ull, llu in any case).
bool splitSuffix(const std::string &text, std::string &digits, bool &isUnsigned) {
  size_t end = text.size();
  while (end > 0 && std::string("uUlL").find(text[end - 1]) != std::string::npos)
    --end;
  std::string suffix = text.substr(end);
  digits = text.substr(0, end);
  for (char &c : suffix)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const char *const kValid[] = {"", "u", "l", "ul", "lu", "ll", "ull", "llu"};
  for (const char *v : kValid)
    if (suffix == v) {
      isUnsigned = suffix.find('u') != std::string::npos;
      return true;
    }
  return false;
}

} // namespace

std::optional<uint64_t> parsePPInteger(const Token &tok, DiagEngine &diags, bool &isUnsigned) {
  const std::string &text = tok.text;
  bool hex = text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  bool bin = text.size() > 1 && text[0] == '0' && (text[1] == 'b' || text[1] == 'B');
  bool isFloat = text.find('.') != std::string::npos;
  for (char c : text)
    if ((!hex && (c == 'e' || c == 'E')) || (hex && (c == 'p' || c == 'P')))
      isFloat = true;
  if (isFloat) {
    diags.report(DiagId::err_pp_float_in_expr, tok.loc, {text}, tok.length());
    return std::nullopt;
  }
  std::string digits;
  isUnsigned = false;
  bool ok = splitSuffix(text, digits, isUnsigned);
  unsigned base = hex ? 16 : bin ? 2 : (digits.size() > 1 && digits[0] == '0') ? 8 : 10;
  size_t start = (hex || bin) ? 2 : 0;
  ok = ok && digits.size() > start;
  uint64_t value = 0;
  bool overflow = false;
  for (size_t i = start; ok && i < digits.size(); ++i) {
    int d = hexDigit(digits[i]);
    if (d < 0 || static_cast<unsigned>(d) >= base) {
      ok = false;
      break;
    }
    if (value > (UINT64_MAX - static_cast<uint64_t>(d)) / base)
      overflow = true;
    value = value * base + static_cast<uint64_t>(d);
  }
  if (!ok) {
    diags.report(DiagId::err_pp_invalid_integer, tok.loc, {text}, tok.length());
    return std::nullopt;
  }
  if (overflow) {
    diags.report(DiagId::err_pp_integer_too_large, tok.loc, {text}, tok.length());
    return std::nullopt;
  }
  if (value > static_cast<uint64_t>(INT64_MAX))
    isUnsigned = true;
  return value;
}

std::optional<int64_t> evaluatePPExpr(const std::vector<Token> &toks, SourceLoc endLoc,
                                      DiagEngine &diags) {
  return ExprEvaluator(toks, endLoc, diags).run();
}

} // namespace tc
