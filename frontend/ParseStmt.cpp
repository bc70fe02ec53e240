//===- ParseStmt.cpp - Statements of Triton-C ----------------------------===//
//
// A statement parser that fails returns null; parseStatement() then skips to
// the end of the broken statement. Statements that recovered inside (e.g. a
// bad `if` condition) return an EmptyStmt instead, so that the AST never holds
// a null where a statement or expression is required.
//
//===----------------------------------------------------------------------===//
#include "frontend/ParserImpl.h"

namespace tc {

using namespace ast;

namespace {
StmtPtr emptyStmt(SourceLoc loc) {
  return std::make_unique<EmptyStmt>(loc);
}
} // namespace

// statement ::= compound-stmt | if-stmt | for-stmt | while-stmt | do-while-stmt
//             | 'break' ';' | 'continue' ';' | return-stmt | ';'
//             | declaration | expression-stmt
// Returns null after an error, having skipped the rest of the statement.
StmtPtr Parser::parseStatement() {
  DepthGuard guard(*this);
  StmtPtr s = guard.ok ? parseStatementKind() : nullptr;
  if (!s)
    skipStatement();
  return s;
}

// The statement forms of `statement`, chosen by the first token(s).
StmtPtr Parser::parseStatementKind() {
  switch (tok().kind) {
  case TokKind::l_brace: return parseCompound();
  case TokKind::kw_if: return parseIf();
  case TokKind::kw_for: return parseFor();
  case TokKind::kw_while: return parseWhile();
  case TokKind::kw_do: return parseDoWhile();
  case TokKind::kw_break:
  case TokKind::kw_continue: return parseJump();
  case TokKind::kw_return: return parseReturn();
  case TokKind::semi: return emptyStmt(advance().loc);
  case TokKind::kw_else:
    error(DiagId::err_else_without_if, tok());
    advance();
    return nullptr;
  case TokKind::kw_typedef: error(DiagId::err_not_supported, tok(), {"typedef"}); return nullptr;
  default: break;
  }
  if (isTypeStart(tok()) || looksLikeUnknownTypeDecl())
    return parseDeclStmt();
  return parseExprStmt();
}

// compound-stmt ::= '{' statement* '}'
std::unique_ptr<CompoundStmt> Parser::parseCompound() {
  const Token &open = advance();
  auto block = std::make_unique<CompoundStmt>(open.loc);
  while (!at(TokKind::r_brace) && !at(TokKind::eof)) {
    if (diags_.shouldStop()) {
      while (!at(TokKind::eof))
        advance();
      return block;
    }
    size_t before = pos_;
    if (StmtPtr s = parseStatement())
      block->body.push_back(std::move(s));
    if (pos_ == before)
      advance(); // never loop without consuming a token
  }
  block->rbraceLoc = tok().loc;
  expectClosing(TokKind::r_brace, open);
  return block;
}

bool Parser::expectStmtEnd(const char *what) {
  if (expect(TokKind::semi, what))
    return true;
  // A missing ';' before a new line or a '}' needs no skipping.
  return tok().atLineStart || at(TokKind::r_brace);
}

// declaration ::= type-spec declarator (',' declarator)* ';'
// (an identifier in type position is an unknown type name, parsed as int)
StmtPtr Parser::parseDeclStmt() {
  TypeSpec base;
  const Token &first = tok();
  if (isTypeStart(first)) {
    base = *parseTypeSpec();
  } else {
    error(DiagId::err_unknown_type_name, first, {first.text});
    base.loc = advance().loc;
  }
  auto decl = std::make_unique<DeclStmt>(first.loc);
  do {
    auto var = parseDeclarator(base, /*allowInit=*/true);
    if (!var)
      return nullptr;
    decl->vars.push_back(std::move(var));
  } while (consumeIf(TokKind::comma));
  if (!expectStmtEnd("declaration"))
    return nullptr;
  return decl;
}

// expression-stmt ::= expression ';'
StmtPtr Parser::parseExprStmt() {
  const Token &first = tok();
  ExprPtr e = parseExpression();
  if (!e)
    return nullptr;
  auto s = std::make_unique<ExprStmt>(first.loc);
  s->expr = std::move(e);
  if (!expectStmtEnd("expression"))
    return nullptr;
  return s;
}

// paren-condition ::= '(' expression ')'
// On an error, skips past the parenthesised group and returns null.
ExprPtr Parser::parseParenCondition(const char *stmt) {
  if (!at(TokKind::l_paren)) {
    error(DiagId::err_expected_after, tok(), {"'('", stmt});
    return nullptr;
  }
  size_t openIdx = pos_;
  const Token &open = advance();
  ExprPtr e = parseExpression();
  if (!e || !expectClosing(TokKind::r_paren, open)) {
    skipBalancedFrom(openIdx);
    return nullptr;
  }
  return e;
}

// if-stmt ::= 'if' paren-condition statement ('else' statement)?
StmtPtr Parser::parseIf() {
  const Token &kw = advance();
  bool hasParen = at(TokKind::l_paren);
  ExprPtr cond = parseParenCondition("'if'");
  if (!hasParen)
    return nullptr;
  auto s = std::make_unique<IfStmt>(kw.loc);
  s->cond = std::move(cond);
  s->thenStmt = parseStatement();
  if (!s->thenStmt)
    s->thenStmt = emptyStmt(kw.loc);
  if (const Token &elseKw = tok(); consumeIf(TokKind::kw_else)) {
    s->elseStmt = parseStatement();
    if (!s->elseStmt)
      s->elseStmt = emptyStmt(elseKw.loc);
  }
  if (!s->cond)
    return emptyStmt(kw.loc);
  return s;
}

// for-init ::= declaration | expression? ';'
StmtPtr Parser::parseForInit() {
  if (at(TokKind::semi))
    return emptyStmt(advance().loc);
  if (isTypeStart(tok()) || looksLikeUnknownTypeDecl())
    return parseDeclStmt();
  const Token &first = tok();
  ExprPtr e = parseExpression();
  if (!e || !expect(TokKind::semi, "for-loop initializer"))
    return nullptr;
  auto s = std::make_unique<ExprStmt>(first.loc);
  s->expr = std::move(e);
  return s;
}

// for-stmt ::= 'for' '(' for-init expression? ';' expression? ')' statement
StmtPtr Parser::parseFor() {
  const Token &kw = advance();
  if (!at(TokKind::l_paren)) {
    error(DiagId::err_expected_after, tok(), {"'('", "'for'"});
    return nullptr;
  }
  size_t openIdx = pos_;
  const Token &open = advance();
  auto s = std::make_unique<ForStmt>(kw.loc);
  bool ok = true;
  s->init = parseForInit();
  ok = s->init != nullptr;
  if (ok && !at(TokKind::semi))
    ok = (s->cond = parseExpression()) != nullptr;
  if (ok)
    ok = expect(TokKind::semi, "for-loop condition");
  if (ok && !at(TokKind::r_paren))
    ok = (s->step = parseExpression()) != nullptr;
  if (ok)
    ok = expectClosing(TokKind::r_paren, open);
  if (!ok)
    skipBalancedFrom(openIdx);
  if (s->init && s->init->kind == StmtKind::Empty)
    s->init = nullptr;
  s->body = parseStatement();
  if (!s->body)
    s->body = emptyStmt(kw.loc);
  if (!ok)
    return emptyStmt(kw.loc);
  return s;
}

// while-stmt ::= 'while' paren-condition statement
StmtPtr Parser::parseWhile() {
  const Token &kw = advance();
  bool hasParen = at(TokKind::l_paren);
  ExprPtr cond = parseParenCondition("'while'");
  if (!hasParen)
    return nullptr;
  auto s = std::make_unique<WhileStmt>(kw.loc);
  s->cond = std::move(cond);
  s->body = parseStatement();
  if (!s->body)
    s->body = emptyStmt(kw.loc);
  if (!s->cond)
    return emptyStmt(kw.loc);
  return s;
}

// do-while-stmt ::= 'do' statement 'while' paren-condition ';'
StmtPtr Parser::parseDoWhile() {
  const Token &kw = advance();
  auto s = std::make_unique<DoWhileStmt>(kw.loc);
  s->body = parseStatement();
  if (!s->body)
    s->body = emptyStmt(kw.loc);
  if (!at(TokKind::kw_while)) {
    error(DiagId::err_expected_after, tok(), {"'while'", "the body of a do/while loop"});
    return nullptr;
  }
  advance();
  bool hasParen = at(TokKind::l_paren);
  s->cond = parseParenCondition("'while'");
  if (!hasParen)
    return nullptr;
  if (!expectStmtEnd("do/while loop"))
    return nullptr;
  if (!s->cond)
    return emptyStmt(kw.loc);
  return s;
}

// return-stmt ::= 'return' expression? ';'
StmtPtr Parser::parseReturn() {
  const Token &kw = advance();
  auto s = std::make_unique<ReturnStmt>(kw.loc);
  if (!at(TokKind::semi)) {
    s->value = parseExpression();
    if (!s->value)
      return nullptr;
  }
  if (!expectStmtEnd("return statement"))
    return nullptr;
  return s;
}

// jump-stmt ::= 'break' ';' | 'continue' ';'
StmtPtr Parser::parseJump() {
  const Token &kw = advance();
  StmtPtr s;
  if (kw.is(TokKind::kw_break))
    s = std::make_unique<BreakStmt>(kw.loc);
  else
    s = std::make_unique<ContinueStmt>(kw.loc);
  if (!expectStmtEnd(kw.is(TokKind::kw_break) ? "'break'" : "'continue'"))
    return nullptr;
  return s;
}

} // namespace tc
