//===- IRParser.cpp - Parse the text form of the tile IR ------------------===//
//
// A lexer with line/column tracking and a recursive-descent parser for the
// printer's format (ir/Printer.cpp). Parsing stops at the first error, which is
// reported at the IR text's file:line:col. Region nesting is bounded, so no
// input can exhaust the stack.
//
//===----------------------------------------------------------------------===//
#include "ir/IRParser.h"

#include "support/FloatBits.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace tc::ir {

namespace {

/// The shortest text that reads back as `d` ("1e+10").
std::string shortestText(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

constexpr unsigned kMaxRegionDepth = 128;
constexpr int64_t kMaxTileElements = int64_t(1) << 31;

enum class Tok {
  Eof,
  Error, // a lexing error: `diag` and `text` say which
  Ident,
  ValueId, // %name (text without '%')
  FuncId,  // @name (text without '@')
  Int,
  Float,
  String, // text holds the decoded contents
  Type,   // only from Lexer::lexType
  LParen,
  RParen,
  LBrace,
  RBrace,
  Less,
  Greater,
  LSquare,
  RSquare,
  Comma,
  Colon,
  Equal,
  Caret,
  Minus,
};

struct Token {
  Tok kind = Tok::Eof;
  size_t offset = 0, length = 0;
  uint32_t line = 1, col = 1;
  bool atLineStart = false; // a newline precedes it
  std::string text;
  int64_t intValue = 0;
  double floatValue = 0;
  DiagId diag = DiagId::err_ir_invalid_char; // for Tok::Error
};

bool isIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

/// Splits the IR text into tokens on demand; types are lexed in a mode of
/// their own (lexType) because `64x32xf16` is not made of ordinary tokens.
class Lexer {
public:
  explicit Lexer(std::string_view text) : text_(text) {}
  Token next();
  /// Re-lexes from the start of `t` as a type spelling.
  Token lexType(const Token &t);

private:
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  void advance();
  bool skipSpaceAndComments(); // returns whether a newline was crossed
  Token start(Tok kind) const;
  Token finish(Token t) const;
  Token lexNumber(Token t);
  Token lexString(Token t);
  Token lexSigil(Token t, Tok kind);
  Token error(Token t, DiagId id, std::string arg);

  std::string_view text_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
};

void Lexer::advance() {
  if (pos_ >= text_.size())
    return;
  if (text_[pos_] == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  ++pos_;
}

bool Lexer::skipSpaceAndComments() {
  bool newline = false;
  while (pos_ < text_.size()) {
    char c = peek();
    if (c == '\n')
      newline = true;
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      advance();
    } else if (c == '/' && peek(1) == '/') {
      while (pos_ < text_.size() && peek() != '\n')
        advance();
    } else {
      break;
    }
  }
  return newline;
}

Token Lexer::start(Tok kind) const {
  Token t;
  t.kind = kind;
  t.offset = pos_;
  t.line = line_;
  t.col = col_;
  return t;
}

Token Lexer::finish(Token t) const {
  t.length = pos_ - t.offset;
  return t;
}

Token Lexer::error(Token t, DiagId id, std::string arg) {
  t.kind = Tok::Error;
  t.diag = id;
  t.text = std::move(arg);
  if (pos_ == t.offset)
    advance();
  return finish(std::move(t));
}

Token Lexer::next() {
  bool newline = skipSpaceAndComments();
  Token t = start(Tok::Eof);
  t.atLineStart = newline;
  if (pos_ >= text_.size())
    return t;
  char c = peek();
  if (isDigit(c) || (c == '-' && isDigit(peek(1))))
    return lexNumber(std::move(t));
  if (c == '"')
    return lexString(std::move(t));
  if (c == '%')
    return lexSigil(std::move(t), Tok::ValueId);
  if (c == '@')
    return lexSigil(std::move(t), Tok::FuncId);
  if (isIdentStart(c)) {
    t.kind = Tok::Ident;
    while (isIdentChar(peek()) || peek() == '.')
      advance();
    t.text = std::string(text_.substr(t.offset, pos_ - t.offset));
    return finish(std::move(t));
  }
  static const std::pair<char, Tok> kPunct[] = {
      {'(', Tok::LParen}, {')', Tok::RParen},  {'{', Tok::LBrace},  {'}', Tok::RBrace},
      {'<', Tok::Less},   {'>', Tok::Greater}, {'[', Tok::LSquare}, {']', Tok::RSquare},
      {',', Tok::Comma},  {':', Tok::Colon},   {'=', Tok::Equal},   {'^', Tok::Caret},
      {'-', Tok::Minus}};
  for (const auto &[ch, kind] : kPunct) {
    if (c == ch) {
      t.kind = kind;
      advance();
      return finish(std::move(t));
    }
  }
  std::string shown =
      std::isprint(static_cast<unsigned char>(c))
          ? std::string(1, c)
          : "\\x" + std::string(1, "0123456789abcdef"[(c >> 4) & 15]) + "0123456789abcdef"[c & 15];
  return error(std::move(t), DiagId::err_ir_invalid_char, shown);
}

Token Lexer::lexSigil(Token t, Tok kind) {
  advance();
  size_t nameStart = pos_;
  while (isIdentChar(peek()) || (kind == Tok::FuncId && (peek() == '.' || peek() == '$')))
    advance();
  if (pos_ == nameStart)
    return error(std::move(t), DiagId::err_ir_expected,
                 kind == Tok::ValueId ? "a value name after '%'" : "a kernel name after '@'");
  t.kind = kind;
  t.text = std::string(text_.substr(nameStart, pos_ - nameStart));
  return finish(std::move(t));
}

// INT ::= '-'? [0-9]+      FLOAT ::= '-'? [0-9]+ ('.' [0-9]*)? ([eE] [+-]? [0-9]+)?
Token Lexer::lexNumber(Token t) {
  if (peek() == '-')
    advance();
  while (isDigit(peek()))
    advance();
  bool isFloat = false;
  if (peek() == '.') {
    isFloat = true;
    advance();
    while (isDigit(peek()))
      advance();
  }
  if ((peek() == 'e' || peek() == 'E') &&
      (isDigit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && isDigit(peek(2))))) {
    isFloat = true;
    advance();
    advance();
    while (isDigit(peek()))
      advance();
  }
  std::string_view s = text_.substr(t.offset, pos_ - t.offset);
  t.text = std::string(s);
  const char *first = s.data(), *last = s.data() + s.size();
  if (isFloat) {
    auto [p, ec] = std::from_chars(first, last, t.floatValue);
    if (ec != std::errc() || p != last)
      return error(std::move(t), DiagId::err_ir_float_out_of_range, std::string(s));
    t.kind = Tok::Float;
  } else {
    auto [p, ec] = std::from_chars(first, last, t.intValue);
    if (ec != std::errc() || p != last)
      return error(std::move(t), DiagId::err_ir_int_out_of_range, std::string(s));
    t.kind = Tok::Int;
  }
  return finish(std::move(t));
}

// STRING ::= '"' (char | '\' ('"' | '\' | 'n' | 't' | HEX HEX))* '"'
Token Lexer::lexString(Token t) {
  advance();
  std::string value;
  while (true) {
    char c = peek();
    if (pos_ >= text_.size() || c == '\n')
      return error(std::move(t), DiagId::err_ir_unterminated_string, "");
    advance();
    if (c == '"')
      break;
    if (c != '\\') {
      value += c;
      continue;
    }
    char e = peek();
    if (e == '"' || e == '\\' || e == 'n' || e == 't') {
      value += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      advance();
    } else if (hexValue(e) >= 0 && hexValue(peek(1)) >= 0) {
      value += static_cast<char>(hexValue(e) * 16 + hexValue(peek(1)));
      advance();
      advance();
    } else {
      return error(std::move(t), DiagId::err_ir_bad_escape, "");
    }
  }
  t.kind = Tok::String;
  t.text = std::move(value);
  return finish(std::move(t));
}

// type ::= [A-Za-z0-9_!]+ ('<' ... '>')?   (balanced angle brackets)
Token Lexer::lexType(const Token &at) {
  pos_ = at.offset;
  line_ = at.line;
  col_ = at.col;
  Token t = start(Tok::Type);
  int depth = 0;
  while (pos_ < text_.size()) {
    char c = peek();
    if (c == '<') {
      ++depth;
    } else if (c == '>') {
      if (depth == 0)
        break;
      if (--depth == 0) {
        advance();
        break;
      }
    } else if (!isIdentChar(c) && c != '!') {
      break;
    }
    advance();
  }
  t.text = std::string(text_.substr(t.offset, pos_ - t.offset));
  return finish(std::move(t));
}

/// Parses one module; every parse function returns false after reporting an error.
class Parser {
public:
  Parser(uint32_t file, const SourceManager &sm, DiagEngine &diags, SourcePositions *positions)
      : file_(file), lex_(sm.text(file)), diags_(diags), positions_(positions) {
    tok_ = lex_.next();
  }
  std::unique_ptr<Module> parseModule();

private:
  // Token helpers.
  void consume() { tok_ = lex_.next(); }
  bool is(Tok k) const { return tok_.kind == k; }
  bool isKeyword(std::string_view kw) const { return is(Tok::Ident) && tok_.text == kw; }
  bool expect(Tok k, const char *what);
  bool expectKeyword(std::string_view kw);
  bool errorExpected(const std::string &what);
  bool report(const Token &t, DiagId id, std::vector<std::string> args = {});

  // Values in scope.
  Value *lookup(const std::string &name) const;
  bool define(const Token &nameTok, Value *v);

  struct Param {
    Token name;
    Type type;
    ParamAttrs attrs;
  };
  bool parseFunction();
  bool parseParam(Param &p);
  bool parseParamAttr(ParamAttrs &attrs, std::vector<std::string> &seen);
  bool parseType(Type &out);
  bool parseLoc(Location &out);
  bool parseOp(Block &block, unsigned depth);
  bool parseResultNames(std::vector<Token> &names);
  bool parseOperands(std::vector<Value *> &operands);
  bool parseAttrs(Op &op);
  bool parseAttrValue(const std::string &name, AttrValue &out);
  bool parseIntList(std::vector<int64_t> &out);
  bool parseResultTypes(std::vector<Type> &types);
  bool parseRegion(Block &block, unsigned depth);
  bool parseBlockArgs(Block &block);
  bool checkCounts(const Token &mnemonicTok, OpKind kind, const Op &op);

  uint32_t file_;
  Lexer lex_;
  DiagEngine &diags_;
  SourcePositions *positions_ = nullptr;
  Token tok_;
  std::unique_ptr<Module> module_;
  std::vector<std::unordered_map<std::string, Value *>> scopes_;
};

bool Parser::report(const Token &t, DiagId id, std::vector<std::string> args) {
  diags_.report(id, SourceLoc{file_, t.line, t.col, 0}, std::move(args),
                static_cast<uint32_t>(std::max<size_t>(1, std::min<size_t>(t.length, 1000))));
  return false;
}

bool Parser::errorExpected(const std::string &what) {
  if (is(Tok::Error))
    return report(tok_, tok_.diag, {tok_.text});
  return report(tok_, DiagId::err_ir_expected, {what});
}

bool Parser::expect(Tok k, const char *what) {
  if (!is(k))
    return errorExpected(what);
  consume();
  return true;
}

bool Parser::expectKeyword(std::string_view kw) {
  if (!isKeyword(kw))
    return errorExpected("'" + std::string(kw) + "'");
  consume();
  return true;
}

Value *Parser::lookup(const std::string &name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto found = it->find(name);
    if (found != it->end())
      return found->second;
  }
  return nullptr;
}

bool Parser::define(const Token &nameTok, Value *v) {
  if (lookup(nameTok.text))
    return report(nameTok, DiagId::err_ir_redefinition, {nameTok.text});
  scopes_.back()[nameTok.text] = v;
  return true;
}

// module ::= function*
std::unique_ptr<Module> Parser::parseModule() {
  module_ = std::make_unique<Module>();
  while (!is(Tok::Eof))
    if (!parseFunction())
      return nullptr;
  return std::move(module_);
}

// function ::= 'kernel' '@' NAME '(' (param (',' param)*)? ')' loc? '{' op* '}'
bool Parser::parseFunction() {
  if (!expectKeyword("kernel"))
    return false;
  if (!is(Tok::FuncId))
    return errorExpected("a kernel name '@name'");
  Token nameTok = tok_;
  if (module_->lookup(nameTok.text))
    return report(nameTok, DiagId::err_ir_redefinition_kernel, {nameTok.text});
  consume();
  if (!expect(Tok::LParen, "'('"))
    return false;
  std::vector<Param> params;
  if (!is(Tok::RParen)) {
    do {
      params.emplace_back();
      if (!parseParam(params.back()))
        return false;
    } while (is(Tok::Comma) && (consume(), true));
  }
  if (!expect(Tok::RParen, "',' or ')'"))
    return false;
  Location loc;
  if (isKeyword("loc") && !parseLoc(loc))
    return false;
  Function *f = module_->addFunction(nameTok.text, loc);
  if (positions_)
    positions_->functions[nameTok.text] = SourceLoc{file_, nameTok.line, nameTok.col, 0};
  scopes_.assign(1, {});
  for (Param &p : params)
    if (!define(p.name, f->addParam(p.name.text, p.type, p.attrs)))
      return false;
  if (!expect(Tok::LBrace, "'{'"))
    return false;
  while (!is(Tok::RBrace))
    if (!parseOp(f->body(), 0))
      return false;
  consume();
  return true;
}

// param ::= '%' NAME ':' type ('<' pattr (',' pattr)* '>')?
bool Parser::parseParam(Param &p) {
  if (!is(Tok::ValueId))
    return errorExpected("a parameter '%name'");
  p.name = tok_;
  consume();
  if (!expect(Tok::Colon, "':'") || !parseType(p.type))
    return false;
  if (!is(Tok::Less))
    return true;
  consume();
  std::vector<std::string> seen;
  do {
    if (!parseParamAttr(p.attrs, seen))
      return false;
  } while (is(Tok::Comma) && (consume(), true));
  return expect(Tok::Greater, "',' or '>'");
}

// pattr ::= 'multipleof' '=' INT | 'aligned' '=' INT | 'noalias' | 'readonly' | 'writeonly'
bool Parser::parseParamAttr(ParamAttrs &attrs, std::vector<std::string> &seen) {
  if (!is(Tok::Ident))
    return errorExpected("a parameter attribute");
  Token nameTok = tok_;
  const std::string &name = nameTok.text;
  for (const std::string &s : seen)
    if (s == name)
      return report(nameTok, DiagId::err_ir_duplicate_attr, {name});
  seen.push_back(name);
  consume();
  if (name == "noalias" || name == "readonly" || name == "writeonly") {
    (name == "noalias"    ? attrs.noalias
     : name == "readonly" ? attrs.readonly
                          : attrs.writeonly) = true;
    return true;
  }
  if (name != "multipleof" && name != "aligned")
    return report(nameTok, DiagId::err_ir_unknown_param_attr, {name});
  if (!expect(Tok::Equal, "'='"))
    return false;
  if (!is(Tok::Int) || tok_.intValue <= 0)
    return is(Tok::Int) ? report(tok_, DiagId::err_ir_bad_param_attr, {name})
                        : errorExpected("a positive integer");
  (name == "multipleof" ? attrs.multipleOf : attrs.aligned) = tok_.intValue;
  consume();
  return true;
}

// type ::= see ir/Type.h: i32, !ptr<f32>, tile<64x32xf16>, tile<64x!ptr<f32>>
bool Parser::parseType(Type &out) {
  if (is(Tok::Eof))
    return errorExpected("a type");
  Token t = lex_.lexType(tok_);
  consume();
  if (t.text.empty())
    return report(t, DiagId::err_ir_expected, {"a type"});
  std::optional<Type> ty = ir::parseType(t.text);
  if (!ty)
    return report(t, DiagId::err_ir_bad_type, {t.text});
  int64_t n = 1;
  for (int64_t d : ty->shape) {
    if (d > kMaxTileElements || n > kMaxTileElements / d)
      return report(t, DiagId::err_ir_tile_too_large, {t.text, std::to_string(kMaxTileElements)});
    n *= d;
  }
  out = std::move(*ty);
  return true;
}

// loc ::= 'loc' '(' STRING ':' INT ':' INT ')'
bool Parser::parseLoc(Location &out) {
  consume();
  if (!expect(Tok::LParen, "'('"))
    return false;
  if (!is(Tok::String))
    return errorExpected("a file name string");
  std::string file = tok_.text;
  consume();
  uint32_t lineCol[2] = {0, 0};
  for (uint32_t &v : lineCol) {
    if (!expect(Tok::Colon, "':'"))
      return false;
    if (!is(Tok::Int))
      return errorExpected("a line or column number");
    if (tok_.intValue < 0 || tok_.intValue > std::numeric_limits<uint32_t>::max())
      return report(tok_, DiagId::err_ir_int_out_of_range, {tok_.text});
    v = static_cast<uint32_t>(tok_.intValue);
    consume();
  }
  if (!expect(Tok::RParen, "')'"))
    return false;
  out = Location{module_->fileIndex(file), lineCol[0], lineCol[1]};
  return true;
}

// op ::= (value (',' value)* '=')? MNEMONIC (value (',' value)*)? ('<' attr (',' attr)* '>')?
//        (':' type (',' type)*)? region* loc?
bool Parser::parseOp(Block &block, unsigned depth) {
  std::vector<Token> names;
  if (is(Tok::ValueId) && !parseResultNames(names))
    return false;
  if (!is(Tok::Ident))
    return errorExpected(names.empty() ? "an op" : "an op mnemonic");
  Token mnemonicTok = tok_;
  std::optional<OpKind> kind = opKindFromMnemonic(tok_.text);
  if (!kind)
    return report(tok_, DiagId::err_ir_unknown_op, {tok_.text});
  consume();
  std::vector<Value *> operands;
  if (is(Tok::ValueId) && !tok_.atLineStart && !parseOperands(operands))
    return false;
  auto op = std::make_unique<Op>(*kind, Location{});
  op->setOperands(std::move(operands));
  if (is(Tok::Less) && !parseAttrs(*op))
    return false;
  std::vector<Type> types;
  if (is(Tok::Colon) && !parseResultTypes(types))
    return false;
  if (types.size() != names.size())
    return report(mnemonicTok, DiagId::err_ir_result_count,
                  {mnemonicTok.text, std::to_string(names.size()), std::to_string(types.size())});
  // As the language warns for `half x = 1e10;`: the value becomes infinity.
  if (*kind == OpKind::Constant && types.size() == 1 && !types[0].isPtr && isFloat(types[0].dtype))
    if (const AttrValue *v = op->attr("value"); v && std::holds_alternative<double>(*v)) {
      double d = std::get<double>(*v);
      if (std::isfinite(d) && std::isinf(roundToFloat(d, types[0].dtype)))
        diags_.report(DiagId::warn_ir_float_overflow,
                      SourceLoc{file_, mnemonicTok.line, mnemonicTok.col, 0},
                      {shortestText(d), std::string(irName(types[0].dtype))},
                      static_cast<uint32_t>(mnemonicTok.length));
    }
  for (Type &t : types)
    op->addResult(std::move(t));
  while (is(Tok::LBrace))
    if (!parseRegion(*op->addRegion(), depth + 1))
      return false;
  if (!checkCounts(mnemonicTok, *kind, *op))
    return false;
  Location loc;
  if (isKeyword("loc") && !parseLoc(loc))
    return false;
  op->setLoc(loc);
  op->setParentBlock(&block);
  if (positions_) {
    const Token &first = names.empty() ? mnemonicTok : names.front();
    positions_->ops[op.get()] = SourceLoc{file_, first.line, first.col, 0};
  }
  Op *raw = op.get();
  block.ops().push_back(std::move(op));
  for (size_t i = 0; i < names.size(); ++i)
    if (!define(names[i], raw->result(static_cast<unsigned>(i))))
      return false;
  return true;
}

// The `value (',' value)* '='` prefix of an op.
bool Parser::parseResultNames(std::vector<Token> &names) {
  while (true) {
    if (!is(Tok::ValueId))
      return errorExpected("a result name '%name'");
    names.push_back(tok_);
    consume();
    if (!is(Tok::Comma))
      break;
    consume();
  }
  return expect(Tok::Equal, "'=' after the result names");
}

// operands ::= value (',' value)*
bool Parser::parseOperands(std::vector<Value *> &operands) {
  while (true) {
    if (!is(Tok::ValueId))
      return errorExpected("an operand '%name'");
    Value *v = lookup(tok_.text);
    if (!v)
      return report(tok_, DiagId::err_ir_undefined_value, {tok_.text});
    operands.push_back(v);
    consume();
    if (!is(Tok::Comma))
      return true;
    consume();
  }
}

// attrs ::= '<' attr (',' attr)* '>'     attr ::= NAME '=' attr-value
bool Parser::parseAttrs(Op &op) {
  consume();
  do {
    if (!is(Tok::Ident))
      return errorExpected("an attribute name");
    Token nameTok = tok_;
    if (op.attr(nameTok.text))
      return report(nameTok, DiagId::err_ir_duplicate_attr, {nameTok.text});
    consume();
    if (!expect(Tok::Equal, "'='"))
      return false;
    AttrValue value;
    if (!parseAttrValue(nameTok.text, value))
      return false;
    op.setAttr(nameTok.text, std::move(value));
  } while (is(Tok::Comma) && (consume(), true));
  return expect(Tok::Greater, "',' or '>'");
}

// attr-value ::= INT | FLOAT | STRING | '[' (INT (',' INT)*)? ']'
//   FLOAT also spells 'inf', '-inf', 'nan', '-nan'.
bool Parser::parseAttrValue(const std::string &name, AttrValue &out) {
  switch (tok_.kind) {
  case Tok::Int: out = tok_.intValue; break;
  case Tok::Float: out = tok_.floatValue; break;
  case Tok::String: out = tok_.text; break;
  case Tok::LSquare: {
    std::vector<int64_t> list;
    if (!parseIntList(list))
      return false;
    out = std::move(list);
    return true;
  }
  case Tok::Minus:
  case Tok::Ident: {
    bool negative = is(Tok::Minus);
    if (negative)
      consume();
    if (!isKeyword("inf") && !isKeyword("nan"))
      return is(Tok::Error) ? errorExpected("") : report(tok_, DiagId::err_ir_bad_attr, {name});
    double v = tok_.text == "inf" ? std::numeric_limits<double>::infinity()
                                  : std::numeric_limits<double>::quiet_NaN();
    out = negative ? -v : v;
    break;
  }
  case Tok::Error: return errorExpected("");
  default: return report(tok_, DiagId::err_ir_bad_attr, {name});
  }
  consume();
  return true;
}

// int-list ::= '[' (INT (',' INT)*)? ']'
bool Parser::parseIntList(std::vector<int64_t> &out) {
  consume();
  if (is(Tok::RSquare)) {
    consume();
    return true;
  }
  while (true) {
    if (!is(Tok::Int))
      return errorExpected("an integer");
    out.push_back(tok_.intValue);
    consume();
    if (!is(Tok::Comma))
      break;
    consume();
  }
  return expect(Tok::RSquare, "',' or ']'");
}

// types ::= ':' type (',' type)*
bool Parser::parseResultTypes(std::vector<Type> &types) {
  consume();
  while (true) {
    types.emplace_back();
    if (!parseType(types.back()))
      return false;
    if (!is(Tok::Comma))
      return true;
    consume();
  }
}

// region ::= '{' ('^' '(' (value ':' type (',' value ':' type)*)? ')' ':')? op* '}'
bool Parser::parseRegion(Block &block, unsigned depth) {
  if (depth > kMaxRegionDepth)
    return report(tok_, DiagId::err_ir_nesting_too_deep, {std::to_string(kMaxRegionDepth)});
  consume();
  scopes_.emplace_back();
  if (is(Tok::Caret) && !parseBlockArgs(block))
    return false;
  while (!is(Tok::RBrace))
    if (!parseOp(block, depth))
      return false;
  consume();
  scopes_.pop_back();
  return true;
}

// block-args ::= '^' '(' (value ':' type (',' value ':' type)*)? ')' ':'
bool Parser::parseBlockArgs(Block &block) {
  consume();
  if (!expect(Tok::LParen, "'('"))
    return false;
  if (!is(Tok::RParen)) {
    while (true) {
      if (!is(Tok::ValueId))
        return errorExpected("a block argument '%name'");
      Token nameTok = tok_;
      consume();
      Type t;
      if (!expect(Tok::Colon, "':'") || !parseType(t))
        return false;
      if (!define(nameTok, block.addArgument(std::move(t))))
        return false;
      if (!is(Tok::Comma))
        break;
      consume();
    }
  }
  return expect(Tok::RParen, "',' or ')'") && expect(Tok::Colon, "':'");
}

// Fixed operand/result/region counts from ir/Ops.def (variadic ones: the verifier).
bool Parser::checkCounts(const Token &mnemonicTok, OpKind kind, const Op &op) {
  struct Count {
    int want;
    size_t got;
    const char *what;
  } counts[] = {{tableNumOperands(kind), op.numOperands(), "operands"},
                {tableNumResults(kind), op.numResults(), "results"},
                {tableNumRegions(kind), op.numRegions(), "regions"}};
  for (const Count &c : counts)
    if (c.want >= 0 && static_cast<size_t>(c.want) != c.got)
      return report(mnemonicTok, DiagId::err_ir_op_count,
                    {mnemonicTok.text, std::to_string(c.want), c.what, std::to_string(c.got)});
  return true;
}

} // namespace

std::unique_ptr<Module> parseModule(uint32_t file, const SourceManager &sm, DiagEngine &diags,
                                    SourcePositions *positions) {
  Parser p(file, sm, diags, positions);
  return p.parseModule();
}

} // namespace tc::ir
