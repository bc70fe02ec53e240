//===- ParseExpr.cpp - Expressions of Triton-C ---------------------------===//
//
// Precedence, from loosest to tightest (the original Triton-C's: `...` and `@`
// bind tighter than `*`):
//
//   expression      ::= assignment-expr                 (',' -> error)
//   assignment-expr ::= conditional-expr (assign-op assignment-expr)?
//   conditional-expr::= binary-expr ('?' expression ':' conditional-expr)?
//   binary-expr     ::= range-expr (binary-op range-expr)*   by precedence:
//                       || < && < | < ^ < & < == != < < > <= >= < << >> < + - < * / % < @
//   range-expr      ::= cast-expr ('...' cast-expr)?    (non-associative)
//   cast-expr       ::= '(' type-name dims? ')' cast-expr | unary-expr
//   unary-expr      ::= ('-' | '+' | '~' | '!' | '^' | '*') cast-expr
//                     | '*' '?' '(' expression ')' cast-expr
//                     | ('++' | '--') unary-expr | postfix-expr
//   postfix-expr    ::= primary-expr ('[' subscript-items ']' | '(' args? ')' | '++' | '--')*
//   primary-expr    ::= identifier | number | char-constant | string-literal+
//                     | 'true' | 'false' | '(' expression ')' | bitcast-expr
//   bitcast-expr    ::= 'bitcast' '<' type-name dims? '>' '(' expression ')'
//
//===----------------------------------------------------------------------===//
#include "frontend/ParserImpl.h"

#include <algorithm>

namespace tc {

using namespace ast;

namespace {
std::optional<BinaryOp> assignOp(TokKind k, bool &isAssign) {
  isAssign = true;
  switch (k) {
  case TokKind::equal: return std::nullopt;
  case TokKind::plusequal: return BinaryOp::Add;
  case TokKind::minusequal: return BinaryOp::Sub;
  case TokKind::starequal: return BinaryOp::Mul;
  case TokKind::slashequal: return BinaryOp::Div;
  case TokKind::percentequal: return BinaryOp::Rem;
  case TokKind::ampequal: return BinaryOp::BitAnd;
  case TokKind::pipeequal: return BinaryOp::BitOr;
  case TokKind::caretequal: return BinaryOp::BitXor;
  case TokKind::lesslessequal: return BinaryOp::Shl;
  case TokKind::greatergreaterequal: return BinaryOp::Shr;
  default: isAssign = false; return std::nullopt;
  }
}

struct BinaryInfo {
  BinaryOp op;
  int prec; // higher binds tighter
};

std::optional<BinaryInfo> binaryInfo(TokKind k) {
  switch (k) {
  case TokKind::pipepipe: return BinaryInfo{BinaryOp::LogicalOr, 1};
  case TokKind::ampamp: return BinaryInfo{BinaryOp::LogicalAnd, 2};
  case TokKind::pipe: return BinaryInfo{BinaryOp::BitOr, 3};
  case TokKind::caret: return BinaryInfo{BinaryOp::BitXor, 4};
  case TokKind::amp: return BinaryInfo{BinaryOp::BitAnd, 5};
  case TokKind::equalequal: return BinaryInfo{BinaryOp::Eq, 6};
  case TokKind::exclaimequal: return BinaryInfo{BinaryOp::Ne, 6};
  case TokKind::less: return BinaryInfo{BinaryOp::Lt, 7};
  case TokKind::greater: return BinaryInfo{BinaryOp::Gt, 7};
  case TokKind::lessequal: return BinaryInfo{BinaryOp::Le, 7};
  case TokKind::greaterequal: return BinaryInfo{BinaryOp::Ge, 7};
  case TokKind::lessless: return BinaryInfo{BinaryOp::Shl, 8};
  case TokKind::greatergreater: return BinaryInfo{BinaryOp::Shr, 8};
  case TokKind::plus: return BinaryInfo{BinaryOp::Add, 9};
  case TokKind::minus: return BinaryInfo{BinaryOp::Sub, 9};
  case TokKind::star: return BinaryInfo{BinaryOp::Mul, 10};
  case TokKind::slash: return BinaryInfo{BinaryOp::Div, 10};
  case TokKind::percent: return BinaryInfo{BinaryOp::Rem, 10};
  case TokKind::at: return BinaryInfo{BinaryOp::MatMul, 11};
  default: return std::nullopt;
  }
}

std::optional<UnaryOp> prefixOp(TokKind k) {
  switch (k) {
  case TokKind::minus: return UnaryOp::Neg;
  case TokKind::plus: return UnaryOp::Plus;
  case TokKind::tilde: return UnaryOp::BitNot;
  case TokKind::exclaim: return UnaryOp::LogicalNot;
  case TokKind::caret: return UnaryOp::Transpose;
  case TokKind::star: return UnaryOp::Deref;
  default: return std::nullopt;
  }
}

std::optional<ReduceOp> reduceOp(const Token &t) {
  switch (t.kind) {
  case TokKind::plus: return ReduceOp::Add;
  case TokKind::amp: return ReduceOp::And;
  case TokKind::pipe: return ReduceOp::Or;
  case TokKind::caret: return ReduceOp::Xor;
  case TokKind::identifier:
    if (t.text == "max")
      return ReduceOp::Max;
    if (t.text == "min")
      return ReduceOp::Min;
    if (t.text == "argmax")
      return ReduceOp::ArgMax;
    if (t.text == "argmin")
      return ReduceOp::ArgMin;
    return std::nullopt;
  default: return std::nullopt;
  }
}
} // namespace

void Parser::reportTooDeep(SourceLoc loc) {
  if (reportedDepth_)
    return;
  diags_.report(DiagId::err_nesting_too_deep, loc);
  reportedDepth_ = true;
}

ExprPtr Parser::finish(ExprPtr e) {
  unsigned d = 0;
  auto see = [&](const ExprPtr &c) {
    if (!c)
      return;
    auto it = exprDepth_.find(c.get());
    d = std::max(d, it == exprDepth_.end() ? 1u : it->second);
  };
  switch (e->kind) {
  case ExprKind::IntLiteral:
  case ExprKind::FloatLiteral:
  case ExprKind::BoolLiteral:
  case ExprKind::StringLiteral:
  case ExprKind::Ident: break;
  case ExprKind::Unary: see(e->as<UnaryExpr>()->operand); break;
  case ExprKind::MaskedDeref:
    see(e->as<MaskedDerefExpr>()->mask);
    see(e->as<MaskedDerefExpr>()->pointer);
    break;
  case ExprKind::Binary:
    see(e->as<BinaryExpr>()->lhs);
    see(e->as<BinaryExpr>()->rhs);
    break;
  case ExprKind::Assign:
    see(e->as<AssignExpr>()->lhs);
    see(e->as<AssignExpr>()->rhs);
    break;
  case ExprKind::Conditional:
    see(e->as<ConditionalExpr>()->cond);
    see(e->as<ConditionalExpr>()->thenExpr);
    see(e->as<ConditionalExpr>()->elseExpr);
    break;
  case ExprKind::Cast:
    for (const ExprPtr &dim : e->as<CastExpr>()->shape)
      see(dim);
    see(e->as<CastExpr>()->operand);
    break;
  case ExprKind::Bitcast:
    for (const ExprPtr &dim : e->as<BitcastExpr>()->shape)
      see(dim);
    see(e->as<BitcastExpr>()->operand);
    break;
  case ExprKind::Range:
    see(e->as<RangeExpr>()->begin);
    see(e->as<RangeExpr>()->end);
    break;
  case ExprKind::Subscript:
    see(e->as<SubscriptExpr>()->base);
    for (const SubscriptItem &it : e->as<SubscriptExpr>()->items)
      if (it.index)
        see(it.index);
    break;
  case ExprKind::Call:
    for (const ExprPtr &arg : e->as<CallExpr>()->args)
      see(arg);
    break;
  }
  if (d + 1 > kMaxTreeDepth) {
    reportTooDeep(e->loc);
    return nullptr;
  }
  exprDepth_[e.get()] = d + 1;
  return e;
}

// expression ::= assignment-expr       (the comma operator is an error)
ExprPtr Parser::parseExpression() {
  ExprPtr e = parseAssignment();
  if (!e || !at(TokKind::comma))
    return e;
  error(DiagId::err_not_supported, tok(), {"the comma operator"});
  while (consumeIf(TokKind::comma))
    if (!parseAssignment())
      return nullptr;
  return e;
}

// The target of an assignment, `++` or `--`: a variable, `*p`, `*?(m) p` or a
// slice `a[i, :]`.
// A subscript with an integer index is a slice (sema checks its base and items).
bool Parser::checkAssignable(const Expr &e, const Token &op) {
  if (e.kind == ExprKind::Ident || e.kind == ExprKind::MaskedDeref ||
      (e.kind == ExprKind::Unary && e.as<UnaryExpr>()->op == UnaryOp::Deref))
    return true;
  if (e.kind == ExprKind::Subscript) {
    const auto &items = e.as<SubscriptExpr>()->items;
    if (std::any_of(items.begin(), items.end(),
                    [](const SubscriptItem &i) { return i.kind == SubscriptItem::Kind::Index; }))
      return true;
  }
  error(DiagId::err_not_assignable, op);
  return false;
}

// assignment-expr ::= conditional-expr (assign-op assignment-expr)?
// assign-op       ::= '=' | '+=' | '-=' | '*=' | '/=' | '%=' | '&=' | '|=' | '^=' | '<<=' | '>>='
ExprPtr Parser::parseAssignment() {
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  ExprPtr lhs = parseConditional();
  if (!lhs)
    return nullptr;
  bool isAssign = false;
  std::optional<BinaryOp> compound = assignOp(tok().kind, isAssign);
  if (!isAssign)
    return lhs;
  const Token &op = advance();
  checkAssignable(*lhs, op); // reported; the assignment is kept for recovery
  ExprPtr rhs = parseAssignment();
  if (!rhs)
    return nullptr;
  auto e = std::make_unique<AssignExpr>(op.loc);
  e->length = op.length();
  e->compound = compound;
  e->lhs = std::move(lhs);
  e->rhs = std::move(rhs);
  return finish(std::move(e));
}

// conditional-expr ::= binary-expr ('?' expression ':' conditional-expr)?
ExprPtr Parser::parseConditional() {
  ExprPtr cond = parseBinary(1);
  if (!cond || !at(TokKind::question))
    return cond;
  const Token &q = advance();
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  ExprPtr thenExpr = parseExpression();
  if (!thenExpr)
    return nullptr;
  if (!at(TokKind::colon)) {
    error(DiagId::err_expected, tok(), {"':'"});
    diags_.report(DiagId::note_to_match, q.loc, {"'?'"});
    return nullptr;
  }
  advance();
  ExprPtr elseExpr = parseConditional();
  if (!elseExpr)
    return nullptr;
  auto e = std::make_unique<ConditionalExpr>(q.loc);
  e->cond = std::move(cond);
  e->thenExpr = std::move(thenExpr);
  e->elseExpr = std::move(elseExpr);
  return finish(std::move(e));
}

// binary-expr ::= range-expr (binary-op range-expr)*   (precedence climbing,
// every level left-associative; the recursion depth is bounded by the levels)
ExprPtr Parser::parseBinary(int minPrec) {
  ExprPtr lhs = parseRange();
  if (!lhs)
    return nullptr;
  while (auto info = binaryInfo(tok().kind)) {
    if (info->prec < minPrec)
      break;
    const Token &op = advance();
    ExprPtr rhs = parseBinary(info->prec + 1);
    if (!rhs)
      return nullptr;
    auto e = std::make_unique<BinaryExpr>(op.loc, info->op, std::move(lhs), std::move(rhs));
    e->length = op.length();
    lhs = finish(std::move(e));
    if (!lhs)
      return nullptr;
  }
  return lhs;
}

// range-expr ::= cast-expr ('...' cast-expr)?
ExprPtr Parser::parseRange() {
  ExprPtr begin = parseCast();
  if (!begin || !at(TokKind::ellipsis))
    return begin;
  const Token &op = advance();
  ExprPtr end = parseCast();
  if (!end)
    return nullptr;
  if (at(TokKind::ellipsis)) {
    error(DiagId::err_range_non_associative, tok());
    return nullptr;
  }
  auto e = std::make_unique<RangeExpr>(op.loc);
  e->length = op.length();
  e->begin = std::move(begin);
  e->end = std::move(end);
  return finish(std::move(e));
}

// cast-expr ::= '(' type-name dims? ')' cast-expr | unary-expr
ExprPtr Parser::parseCast() {
  if (at(TokKind::l_paren) && isTypeStart(peek(1)))
    return parseParenCast();
  return parseUnary();
}

// paren-cast ::= '(' type-name dims? ')' cast-expr
ExprPtr Parser::parseParenCast() {
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  const Token &open = advance();
  auto e = std::make_unique<CastExpr>(open.loc);
  std::optional<TypeSpec> to = parseTypeName();
  if (!to)
    return nullptr;
  e->to = *to;
  if (at(TokKind::l_square) && !parseDims(e->shape))
    return nullptr;
  if (!expectClosing(TokKind::r_paren, open))
    return nullptr;
  e->length = spanFrom(open);
  e->operand = parseCast();
  if (!e->operand)
    return nullptr;
  return finish(std::move(e));
}

// unary-expr ::= ('-' | '+' | '~' | '!' | '^' | '*') cast-expr
//              | masked-deref | ('++' | '--') unary-expr | postfix-expr
ExprPtr Parser::parseUnary() {
  if (at(TokKind::star) && peek(1).is(TokKind::question))
    return parseMaskedDeref();
  std::optional<UnaryOp> op = prefixOp(tok().kind);
  bool incDec = at(TokKind::plusplus) || at(TokKind::minusminus);
  if (!op && !incDec)
    return parsePostfix();
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  const Token &opTok = advance();
  ExprPtr operand = incDec ? parseUnary() : parseCast();
  if (!operand)
    return nullptr;
  if (incDec) {
    checkAssignable(*operand, opTok);
    op = opTok.is(TokKind::plusplus) ? UnaryOp::PreInc : UnaryOp::PreDec;
  }
  auto e = std::make_unique<UnaryExpr>(opTok.loc, *op, std::move(operand));
  e->length = opTok.length();
  return finish(std::move(e));
}

// masked-deref ::= '*' '?' '(' expression ')' cast-expr
ExprPtr Parser::parseMaskedDeref() {
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  const Token &star = advance();
  advance(); // '?'
  auto e = std::make_unique<MaskedDerefExpr>(star.loc);
  e->length = spanFrom(star);
  if (!at(TokKind::l_paren)) {
    error(DiagId::err_expected_after, tok(), {"'('", "'*?'"});
    return nullptr;
  }
  const Token &open = advance();
  e->mask = parseExpression();
  if (!e->mask || !expectClosing(TokKind::r_paren, open))
    return nullptr;
  e->pointer = parseCast();
  if (!e->pointer)
    return nullptr;
  return finish(std::move(e));
}

// postfix-expr ::= primary-expr ('[' subscript-items ']' | '(' args? ')' | '++' | '--')*
ExprPtr Parser::parsePostfix() {
  ExprPtr e = parsePrimary();
  while (e) {
    if (at(TokKind::l_square)) {
      e = parseSubscript(std::move(e));
    } else if (at(TokKind::l_paren)) {
      e = parseCall(std::move(e));
    } else if (at(TokKind::plusplus) || at(TokKind::minusminus)) {
      const Token &op = advance();
      checkAssignable(*e, op);
      UnaryOp k = op.is(TokKind::plusplus) ? UnaryOp::PostInc : UnaryOp::PostDec;
      e = std::make_unique<UnaryExpr>(op.loc, k, std::move(e));
      e->length = op.length();
      e = finish(std::move(e));
    } else {
      break;
    }
  }
  return e;
}

// call ::= identifier '(' (assignment-expr (',' assignment-expr)*)? ')'
ExprPtr Parser::parseCall(ExprPtr callee) {
  const Token &open = tok();
  if (callee->kind != ExprKind::Ident) {
    diags_.report(DiagId::err_not_callable, callee->loc, {}, callee->length);
    return nullptr;
  }
  advance();
  auto *name = callee->as<IdentExpr>();
  auto call = std::make_unique<CallExpr>(name->loc);
  call->callee = name->name;
  call->calleeLoc = name->loc;
  call->length = name->length;
  if (!at(TokKind::r_paren)) {
    do {
      ExprPtr arg = parseAssignment();
      if (!arg)
        return nullptr;
      call->args.push_back(std::move(arg));
    } while (consumeIf(TokKind::comma));
  }
  if (!expectClosing(TokKind::r_paren, open))
    return nullptr;
  return finish(std::move(call));
}

// subscript-item ::= ':' | 'newaxis' | '+' | '&' | '|' | '^' | 'max' | 'min' | 'argmax' | 'argmin'
//                    (each alone between the brackets and commas)
//                  | assignment-expr   (an integer index selecting one slice)
bool Parser::parseSubscriptItem(std::vector<SubscriptItem> &items) {
  const Token &t = tok();
  // Alone: followed by ',' or ']' (or by a token that ends the statement, so
  // that a missing ']' is reported as such).
  TokKind next = peek(1).kind;
  bool alone = next == TokKind::comma || next == TokKind::r_square || next == TokKind::semi ||
               next == TokKind::r_paren || next == TokKind::r_brace || next == TokKind::eof;
  SubscriptItem item;
  item.loc = t.loc;
  if (t.is(TokKind::colon)) {
    item.kind = SubscriptItem::Kind::Slice;
  } else if (t.is(TokKind::kw_newaxis)) {
    item.kind = SubscriptItem::Kind::NewAxis;
  } else if (auto r = reduceOp(t)) {
    item.kind = SubscriptItem::Kind::Reduce;
    item.reduce = *r;
  } else {
    alone = false;
  }
  if (alone) {
    advance();
    items.push_back(std::move(item));
    return true;
  }
  // Anything else is an index expression; the tokens that cannot start one
  // (`]`, `,`, a binary operator alone) keep the subscript-item message.
  if (t.is(TokKind::r_square) || t.is(TokKind::comma) || t.is(TokKind::colon) ||
      t.is(TokKind::kw_newaxis) || reduceOp(t)) {
    error(DiagId::err_bad_subscript_item, t);
    return false;
  }
  // `x[:, None]` (Triton's Python DSL): an index would only say that 'None'
  // is undeclared, so name the Triton-C spelling instead.
  if (t.is(TokKind::identifier) && t.text == "None" &&
      (next == TokKind::comma || next == TokKind::r_square)) {
    error(DiagId::err_bad_subscript_item, t);
    error(DiagId::note_sema_python_habit, t,
          {"Triton-C writes a new axis as 'newaxis', e.g. x[:, newaxis]"});
    return false;
  }
  item.kind = SubscriptItem::Kind::Index;
  item.index = parseAssignment();
  if (!item.index)
    return false;
  items.push_back(std::move(item));
  return true;
}

// subscript ::= '[' subscript-item (',' subscript-item)* ']'
ExprPtr Parser::parseSubscript(ExprPtr base) {
  const Token &open = advance();
  auto e = std::make_unique<SubscriptExpr>(open.loc);
  e->base = std::move(base);
  while (true) {
    if (!parseSubscriptItem(e->items) &&
        !skipUntil({TokKind::comma, TokKind::r_square}, /*consume=*/false))
      return nullptr;
    if (!consumeIf(TokKind::comma))
      break;
  }
  if (!expectClosing(TokKind::r_square, open))
    return nullptr;
  e->length = spanFrom(open);
  return finish(std::move(e));
}

// primary-expr ::= identifier | number | char-constant | string-literal+
//                | 'true' | 'false' | '(' expression ')' | bitcast-expr
ExprPtr Parser::parsePrimary() {
  const Token &t = tok();
  switch (t.kind) {
  case TokKind::identifier: {
    advance();
    auto e = std::make_unique<IdentExpr>(t.loc);
    e->name = t.text;
    e->length = t.length();
    return finish(std::move(e));
  }
  case TokKind::numeric_constant: return parseNumber();
  case TokKind::char_constant: return parseCharConstant();
  case TokKind::string_literal: return parseString();
  case TokKind::kw_true:
  case TokKind::kw_false: {
    advance();
    auto e = std::make_unique<BoolLiteralExpr>(t.loc);
    e->value = t.is(TokKind::kw_true);
    e->length = t.length();
    return finish(std::move(e));
  }
  case TokKind::l_paren: return parseParenExpr();
  case TokKind::kw_bitcast: return parseBitcast();
  case TokKind::kw_newaxis:
    error(DiagId::err_newaxis_outside_subscript, t);
    advance();
    return nullptr;
  default: error(DiagId::err_expected, t, {"expression"}); return nullptr;
  }
}

// paren-expr ::= '(' expression ')'     (parentheses leave no node)
ExprPtr Parser::parseParenExpr() {
  const Token &open = advance();
  ExprPtr e = parseExpression();
  if (!e || !expectClosing(TokKind::r_paren, open))
    return nullptr;
  return e;
}

// bitcast-expr ::= 'bitcast' '<' type-name dims? '>' '(' expression ')'
ExprPtr Parser::parseBitcast() {
  const Token &kw = advance();
  auto e = std::make_unique<BitcastExpr>(kw.loc);
  e->length = kw.length();
  if (!expect(TokKind::less, "'bitcast'"))
    return nullptr;
  std::optional<TypeSpec> to = parseTypeName();
  if (!to || (at(TokKind::l_square) && !parseDims(e->shape)) || !expect(TokKind::greater))
    return nullptr;
  e->to = *to;
  if (!at(TokKind::l_paren)) {
    error(DiagId::err_expected_after, tok(), {"'('", "'bitcast<...>'"});
    return nullptr;
  }
  const Token &open = advance();
  e->operand = parseExpression();
  if (!e->operand || !expectClosing(TokKind::r_paren, open))
    return nullptr;
  return finish(std::move(e));
}

} // namespace tc
