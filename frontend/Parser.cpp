//===- Parser.cpp - Tokens, recovery, top level, types, declarators ------===//
//
// The grammar of Triton-C, top-down (the productions are repeated above the
// functions that parse them; statements are in ParseStmt.cpp, expressions in
// ParseExpr.cpp, literals in ParseLiteral.cpp):
//
//   tu            ::= top-level* eof
//   top-level     ::= function-def | 'typedef' ... ';' | ';'
//   function-def  ::= '__global__'? type-spec pointer? identifier params
//                     (compound-stmt | ';' -> error)
//   params        ::= '(' ('void' | param (',' param)*)? ')'
//   param         ::= type-spec declarator            (no initializer)
//   declaration   ::= type-spec declarator (',' declarator)* ';'
//   declarator    ::= pointer? identifier dims? attributes ('=' assignment-expr)?
//   pointer       ::= '*' qualifier*                  ('**' -> error)
//   dims          ::= '[' assignment-expr (',' assignment-expr)* ']'
//   type-spec     ::= (qualifier | 'void' | 'bool' | 'char' | 'short' | 'int' | 'long'
//                     | 'signed' | 'unsigned' | 'half' | 'bf16' | 'float' | 'double')+
//   attributes    ::= ('__attribute__' '(' '(' (attribute (',' attribute)*)? ')' ')')*
//   attribute     ::= identifier ('(' assignment-expr (',' assignment-expr)* ')')?
//
//===----------------------------------------------------------------------===//
#include "frontend/Parser.h"
#include "frontend/ParserImpl.h"
#include "frontend/StackGuard.h"

#include <algorithm>
#include <cctype>

namespace tc {

using namespace ast;

std::unique_ptr<TranslationUnit> parseTranslationUnit(const std::vector<Token> &tokens,
                                                      DiagEngine &diags) {
  Parser p(tokens, diags);
  return p.parseTranslationUnit();
}

//===----------------------------------------------------------------------===//
// Tokens
//===----------------------------------------------------------------------===//

const Token &Parser::peek(size_t n) const {
  static const Token kEof;
  if (toks_.empty())
    return kEof;
  size_t i = pos_ + n;
  if (i < toks_.size())
    return toks_[i];
  return toks_.back().is(TokKind::eof) ? toks_.back() : kEof;
}

const Token &Parser::prevTok() const {
  return pos_ > 0 ? toks_[pos_ - 1] : tok();
}

const Token &Parser::advance() {
  const Token &t = tok();
  if (!t.is(TokKind::eof) && pos_ < toks_.size())
    ++pos_;
  return t;
}

bool Parser::consumeIf(TokKind k) {
  if (!at(k))
    return false;
  advance();
  return true;
}

namespace {
std::string quoted(TokKind k) {
  return "'" + std::string(tokSpelling(k)) + "'";
}
} // namespace

bool Parser::expect(TokKind k, const char *what) {
  if (consumeIf(k))
    return true;
  if (k == TokKind::semi) {
    std::vector<std::string> args = {quoted(k)};
    if (what)
      args.push_back(what);
    diags_.report(what ? DiagId::err_expected_after : DiagId::err_expected, endOfPrev(), args);
    return false;
  }
  if (what)
    error(DiagId::err_expected_after, tok(), {quoted(k), what});
  else
    error(DiagId::err_expected, tok(), {quoted(k)});
  return false;
}

bool Parser::expectClosing(TokKind k, const Token &open) {
  if (consumeIf(k))
    return true;
  error(DiagId::err_expected, tok(), {quoted(k)});
  diags_.report(DiagId::note_to_match, open.loc, {quoted(open.kind)}, open.length());
  return false;
}

namespace {
/// Just past the macro use at `use` (its name, and a parenthesised argument
/// list on the same line), read from the source text.
SourceLoc endOfMacroUse(const SourceManager &sm, SourceLoc use) {
  std::string_view line = sm.lineText(use.file, use.line);
  size_t i = use.col - 1;
  auto isIdent = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  while (i < line.size() && isIdent(line[i]))
    ++i;
  size_t j = i;
  while (j < line.size() && (line[j] == ' ' || line[j] == '\t'))
    ++j;
  if (j < line.size() && line[j] == '(') {
    int depth = 0;
    for (; j < line.size(); ++j) {
      depth += line[j] == '(' ? 1 : line[j] == ')' ? -1 : 0;
      if (depth == 0) {
        i = j + 1;
        break;
      }
    }
  }
  use.col = static_cast<uint32_t>(i + 1);
  return use;
}
} // namespace

SourceLoc Parser::endOfPrev() const {
  if (pos_ == 0)
    return tok().loc;
  const Token &p = prevTok();
  if (!p.loc.valid())
    return tok().loc;
  if (p.loc.expansion != 0)
    return endOfMacroUse(diags_.sourceManager(), diags_.sourceManager().outermost(p.loc));
  SourceLoc l = p.loc;
  l.col += p.length();
  return l;
}

uint32_t Parser::spanFrom(const Token &first) const {
  const Token &last = prevTok();
  const SourceLoc &a = first.loc, &b = last.loc;
  if (a.file != b.file || a.line != b.line || a.expansion != 0 || b.expansion != 0 || b.col < a.col)
    return first.length();
  return b.col + last.length() - a.col;
}

void Parser::error(DiagId id, const Token &at, std::vector<std::string> args) {
  diags_.report(id, at.loc, std::move(args), at.length());
}

Parser::DepthGuard::DepthGuard(Parser &parser) : p(parser) {
  ok = ++p.depth_ <= kMaxDepth && !stackNearlyExhausted();
  if (!ok)
    p.reportTooDeep(p.tok().loc);
}

//===----------------------------------------------------------------------===//
// Recovery
//===----------------------------------------------------------------------===//

namespace {
bool isOpener(TokKind k) {
  return k == TokKind::l_paren || k == TokKind::l_square || k == TokKind::l_brace;
}
bool isCloser(TokKind k) {
  return k == TokKind::r_paren || k == TokKind::r_square || k == TokKind::r_brace;
}
} // namespace

bool Parser::skipUntil(std::initializer_list<TokKind> stops, bool consume) {
  int depth = 0;
  while (!at(TokKind::eof)) {
    TokKind k = tok().kind;
    if (depth == 0 && std::find(stops.begin(), stops.end(), k) != stops.end()) {
      if (consume)
        advance();
      return true;
    }
    if (isOpener(k)) {
      ++depth;
    } else if (isCloser(k)) {
      if (depth == 0)
        return false;
      --depth;
    }
    advance();
  }
  return false;
}

void Parser::skipBalancedFrom(size_t openIdx) {
  pos_ = openIdx;
  int depth = 0;
  while (!at(TokKind::eof)) {
    TokKind k = tok().kind;
    if (depth > 0 && (k == TokKind::l_brace || k == TokKind::r_brace))
      return; // an unterminated group: stop where a block starts or ends
    if (isOpener(k))
      ++depth;
    advance();
    if (isCloser(k) && --depth <= 0)
      return;
  }
}

void Parser::skipStatement() {
  reportedDepth_ = false;
  int depth = 0;
  while (!at(TokKind::eof)) {
    TokKind k = tok().kind;
    if (depth == 0 && k == TokKind::semi) {
      advance();
      return;
    }
    if (k == TokKind::r_brace && depth == 0)
      return; // closes the enclosing block
    if (isOpener(k))
      ++depth;
    advance();
    if (isCloser(k) && depth > 0 && --depth == 0 && k == TokKind::r_brace)
      return; // a whole block belonged to the broken statement
  }
}

void Parser::skipTopLevel() {
  reportedDepth_ = false;
  int depth = 0;
  while (!at(TokKind::eof)) {
    const Token &t = tok();
    if (depth == 0 && (t.is(TokKind::kw_global) || t.is(TokKind::kw_typedef) ||
                       (t.atLineStart && isTypeStart(t))))
      return;
    if (depth == 0 && t.is(TokKind::semi)) {
      advance();
      return;
    }
    TokKind k = t.kind;
    if (isOpener(k))
      ++depth;
    advance();
    if (isCloser(k) && depth > 0 && --depth == 0 && k == TokKind::r_brace)
      return;
  }
}

//===----------------------------------------------------------------------===//
// Top level
//===----------------------------------------------------------------------===//

// tu ::= top-level* eof
std::unique_ptr<TranslationUnit> Parser::parseTranslationUnit() {
  auto tu = std::make_unique<TranslationUnit>();
  if (!toks_.empty() && toks_.back().loc.valid())
    tu->mainFile = toks_.back().loc.file;
  while (!at(TokKind::eof) && !diags_.shouldStop()) {
    size_t before = pos_;
    parseTopLevel(*tu);
    if (pos_ == before)
      advance(); // never loop without consuming a token
  }
  return tu;
}

// top-level    ::= function-def | 'typedef' ... ';' | ';'
// function-def ::= '__global__'? type-spec pointer? identifier params (compound-stmt | ';')
void Parser::parseTopLevel(TranslationUnit &tu) {
  reportedDepth_ = false;
  if (consumeIf(TokKind::semi))
    return;
  if (at(TokKind::kw_typedef)) {
    error(DiagId::err_not_supported, tok(), {"typedef"});
    skipUntil({TokKind::semi}, /*consume=*/true);
    return;
  }
  bool isKernel = consumeIf(TokKind::kw_global);
  TypeSpec ret;
  if (isTypeStart(tok())) {
    ret = *parseTypeSpec();
  } else if (at(TokKind::identifier) &&
             (peek(1).is(TokKind::identifier) || peek(1).is(TokKind::star))) {
    error(DiagId::err_unknown_type_name, tok(), {tok().text});
    ret.loc = advance().loc;
  } else {
    error(DiagId::err_expected_function_definition, tok());
    skipTopLevel();
    return;
  }
  parsePointer(ret);
  if (auto fn = parseFunction(isKernel, ret))
    tu.functions.push_back(std::move(fn));
}

// function-def (after the return type) ::= identifier params (compound-stmt | ';')
std::unique_ptr<FunctionDecl> Parser::parseFunction(bool isKernel, TypeSpec ret) {
  if (!at(TokKind::identifier)) {
    error(DiagId::err_expected, tok(), {"identifier"});
    skipTopLevel();
    return nullptr;
  }
  const Token &name = advance();
  auto fn = std::make_unique<FunctionDecl>();
  fn->name = name.text;
  fn->loc = name.loc;
  fn->isKernel = isKernel;
  fn->returnType = ret;
  declaredNames_.clear();
  if (!at(TokKind::l_paren)) {
    TokKind k = tok().kind;
    if (k == TokKind::equal || k == TokKind::semi || k == TokKind::l_square ||
        k == TokKind::comma) {
      error(DiagId::err_not_supported, name, {"variables at file scope"});
      skipUntil({TokKind::semi}, /*consume=*/true);
    } else {
      error(DiagId::err_expected_after, tok(), {"'('", "function name"});
      skipTopLevel();
    }
    return nullptr;
  }
  parseParams(*fn);
  if (at(TokKind::semi)) {
    error(DiagId::err_func_decl_without_body, name);
    advance();
    return fn; // kept (body null) so that calls to it resolve
  }
  if (!at(TokKind::l_brace)) {
    error(DiagId::err_expected, tok(), {"function body"});
    skipTopLevel();
    return nullptr;
  }
  fn->body = parseCompound();
  return fn;
}

// params ::= '(' ('void' | param (',' param)*)? ')'
// On an error, skips to the matching ')' and returns false.
bool Parser::parseParams(FunctionDecl &fn) {
  size_t openIdx = pos_;
  const Token &open = advance();
  if (at(TokKind::kw_void) && peek(1).is(TokKind::r_paren)) {
    advance();
    advance();
    return true;
  }
  if (consumeIf(TokKind::r_paren))
    return true;
  while (true) {
    auto param = parseParam();
    if (!param) {
      skipBalancedFrom(openIdx);
      return false;
    }
    fn.params.push_back(std::move(param));
    if (consumeIf(TokKind::comma))
      continue;
    if (expectClosing(TokKind::r_paren, open))
      return true;
    skipBalancedFrom(openIdx);
    return false;
  }
}

// param ::= type-spec declarator   (without initializer)
std::unique_ptr<VarDecl> Parser::parseParam() {
  TypeSpec base;
  if (isTypeStart(tok())) {
    base = *parseTypeSpec();
  } else if (at(TokKind::identifier) &&
             (peek(1).is(TokKind::identifier) || peek(1).is(TokKind::star))) {
    error(DiagId::err_unknown_type_name, tok(), {tok().text});
    base.loc = advance().loc;
  } else {
    error(DiagId::err_expected, tok(), {"a parameter declaration"});
    return nullptr;
  }
  auto var = parseDeclarator(base, /*allowInit=*/false);
  if (var)
    var->isParam = true;
  return var;
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

bool Parser::isTypeStart(const Token &t) const {
  switch (t.kind) {
  case TokKind::kw_void:
  case TokKind::kw_bool:
  case TokKind::kw_char:
  case TokKind::kw_short:
  case TokKind::kw_int:
  case TokKind::kw_long:
  case TokKind::kw_signed:
  case TokKind::kw_unsigned:
  case TokKind::kw_half:
  case TokKind::kw_bf16:
  case TokKind::kw_float:
  case TokKind::kw_double:
  case TokKind::kw_const:
  case TokKind::kw_restrict: return true;
  default: return false;
  }
}

bool Parser::looksLikeUnknownTypeDecl() const {
  if (!at(TokKind::identifier))
    return false;
  if (peek(1).is(TokKind::identifier))
    return true;
  // `T *x = ...`, `T *x[..]`, `T *x;` with T not a variable: a declaration.
  if (!peek(1).is(TokKind::star) || !peek(2).is(TokKind::identifier) ||
      declaredNames_.count(tok().text))
    return false;
  TokKind k = peek(3).kind;
  return k == TokKind::l_square || k == TokKind::equal || k == TokKind::semi ||
         k == TokKind::comma || k == TokKind::kw_attribute;
}

namespace {
/// The type specifier keywords seen so far, grouped as C does.
struct SpecState {
  const Token *sign = nullptr; // signed / unsigned
  const Token *size = nullptr; // short / long (the first)
  bool longLong = false;
  const Token *base = nullptr; // void bool char int half bf16 float double

  std::string sizeSpelling() const { return longLong ? "long long" : size->text; }
  bool baseIs(TokKind k) const { return base && base->is(k); }
  bool baseAllowsSize() const { return !base || base->is(TokKind::kw_int); }
  bool baseAllowsSign() const { return baseAllowsSize() || base->is(TokKind::kw_char); }

  /// Adds `t`; returns the spelling it conflicts with, or "" if it fits.
  std::string add(const Token &t) {
    switch (t.kind) {
    case TokKind::kw_signed:
    case TokKind::kw_unsigned:
      if (sign)
        return sign->text;
      if (!baseAllowsSign())
        return base->text;
      sign = &t;
      return "";
    case TokKind::kw_short:
    case TokKind::kw_long:
      if (!baseAllowsSize())
        return base->text;
      if (size && (t.is(TokKind::kw_short) || size->is(TokKind::kw_short) || longLong))
        return sizeSpelling();
      if (size)
        longLong = true;
      else
        size = &t;
      return "";
    default:
      if (base)
        return base->text;
      if (size && !t.is(TokKind::kw_int))
        return sizeSpelling();
      if (sign && !t.is(TokKind::kw_int) && !t.is(TokKind::kw_char))
        return sign->text;
      base = &t;
      return "";
    }
  }

  /// The dtype of a valid combination (C's mapping: char=int8 ... long=int64).
  TypeSpec result(SourceLoc loc) const {
    TypeSpec ty;
    ty.loc = loc;
    bool isUnsigned = sign && sign->is(TokKind::kw_unsigned);
    if (baseIs(TokKind::kw_void))
      ty.isVoid = true;
    else if (baseIs(TokKind::kw_bool))
      ty.dtype = DType::Bool;
    else if (baseIs(TokKind::kw_half))
      ty.dtype = DType::F16;
    else if (baseIs(TokKind::kw_bf16))
      ty.dtype = DType::BF16;
    else if (baseIs(TokKind::kw_float))
      ty.dtype = DType::F32;
    else if (baseIs(TokKind::kw_double))
      ty.dtype = DType::F64;
    else if (baseIs(TokKind::kw_char))
      ty.dtype = isUnsigned ? DType::U8 : DType::I8;
    else if (size && size->is(TokKind::kw_short))
      ty.dtype = isUnsigned ? DType::U16 : DType::I16;
    else if (size)
      ty.dtype = isUnsigned ? DType::U64 : DType::I64;
    else
      ty.dtype = isUnsigned ? DType::U32 : DType::I32;
    return ty;
  }
};

bool isQualifier(TokKind k) {
  return k == TokKind::kw_const || k == TokKind::kw_restrict;
}
} // namespace

// type-spec ::= (qualifier | 'void' | 'bool' | 'char' | 'short' | 'int' | 'long'
//               | 'signed' | 'unsigned' | 'half' | 'bf16' | 'float' | 'double')+
// Returns nullopt (nothing consumed) if the current token cannot start a type.
std::optional<TypeSpec> Parser::parseTypeSpec() {
  if (!isTypeStart(tok()))
    return std::nullopt;
  const Token &first = tok();
  SpecState st;
  bool any = false;
  while (isTypeStart(tok())) {
    const Token &t = advance();
    if (isQualifier(t.kind))
      continue; // accepted and ignored
    any = true;
    std::string conflict = st.add(t);
    if (!conflict.empty())
      error(DiagId::err_type_combination, t, {t.text, conflict});
  }
  if (!any)
    diags_.report(DiagId::err_expected, tok().loc, {"a type name"}, tok().length());
  return st.result(first.loc);
}

// pointer ::= '*' qualifier*      (a second '*' is an error: pointers to pointers)
// Returns false if no '*' was there.
bool Parser::parsePointer(TypeSpec &ty) {
  if (!at(TokKind::star))
    return false;
  advance();
  ty.isPtr = true;
  while (isQualifier(tok().kind))
    advance();
  if (at(TokKind::star)) {
    error(DiagId::err_not_supported, tok(), {"pointers to pointers"});
    while (at(TokKind::star) || isQualifier(tok().kind))
      advance();
  }
  return true;
}

// type-name ::= type-spec pointer?
std::optional<TypeSpec> Parser::parseTypeName() {
  auto ty = parseTypeSpec();
  if (!ty) {
    if (at(TokKind::identifier))
      error(DiagId::err_unknown_type_name, tok(), {tok().text});
    else
      error(DiagId::err_expected, tok(), {"a type name"});
    return std::nullopt;
  }
  parsePointer(*ty);
  return ty;
}

//===----------------------------------------------------------------------===//
// Declarators and attributes
//===----------------------------------------------------------------------===//

// dims ::= '[' assignment-expr (',' assignment-expr)* ']'
bool Parser::parseDims(std::vector<ExprPtr> &dims) {
  const Token &open = advance();
  while (true) {
    ExprPtr e = parseAssignment();
    if (!e)
      return false;
    dims.push_back(std::move(e));
    if (!consumeIf(TokKind::comma))
      break;
  }
  return expectClosing(TokKind::r_square, open);
}

// attributes ::= ('__attribute__' '(' '(' (attribute (',' attribute)*)? ')' ')')*
bool Parser::parseAttributes(std::vector<Attribute> &attrs) {
  while (at(TokKind::kw_attribute)) {
    advance();
    if (!at(TokKind::l_paren)) {
      error(DiagId::err_expected_after, tok(), {"'('", "'__attribute__'"});
      return false;
    }
    const Token &outer = advance();
    if (!at(TokKind::l_paren)) {
      error(DiagId::err_expected_after, tok(), {"'('", "'__attribute__('"});
      return false;
    }
    const Token &inner = advance();
    if (!at(TokKind::r_paren)) {
      do {
        if (!parseAttribute(attrs))
          return false;
      } while (consumeIf(TokKind::comma));
    }
    if (!expectClosing(TokKind::r_paren, inner) || !expectClosing(TokKind::r_paren, outer))
      return false;
  }
  return true;
}

// attribute ::= identifier ('(' assignment-expr (',' assignment-expr)* ')')?
bool Parser::parseAttribute(std::vector<Attribute> &attrs) {
  const Token &name = tok();
  bool isWord = name.is(TokKind::identifier) || name.kind >= TokKind::kw_void;
  if (!isWord) {
    error(DiagId::err_expected, name, {"an attribute name"});
    return false;
  }
  advance();
  Attribute a;
  a.name = name.text;
  a.loc = name.loc;
  if (at(TokKind::l_paren)) {
    const Token &open = advance();
    do {
      ExprPtr e = parseAssignment();
      if (!e)
        return false;
      a.args.push_back(std::move(e));
    } while (consumeIf(TokKind::comma));
    if (!expectClosing(TokKind::r_paren, open))
      return false;
  }
  attrs.push_back(std::move(a));
  return true;
}

// declarator ::= pointer? identifier dims? attributes ('=' assignment-expr)?
std::unique_ptr<VarDecl> Parser::parseDeclarator(const TypeSpec &base, bool allowInit) {
  auto var = std::make_unique<VarDecl>();
  var->elem = base;
  parsePointer(var->elem);
  if (!at(TokKind::identifier)) {
    error(DiagId::err_expected, tok(), {"identifier"});
    return nullptr;
  }
  const Token &name = advance();
  var->name = name.text;
  var->loc = name.loc;
  declaredNames_.insert(name.text);
  if (at(TokKind::l_square) && !parseDims(var->shape))
    return nullptr;
  if (!parseAttributes(var->attrs))
    return nullptr;
  if (!allowInit || !at(TokKind::equal))
    return var;
  advance();
  if (at(TokKind::l_brace)) {
    error(DiagId::err_not_supported, tok(), {"initializer lists (a scalar initializer splats)"});
    return nullptr;
  }
  var->init = parseAssignment();
  if (!var->init)
    return nullptr;
  return var;
}

} // namespace tc
