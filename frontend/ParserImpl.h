//===- ParserImpl.h - The parser's private state (not a public header) ---===//
//
// The recursive-descent parser of Triton-C, split over Parser.cpp (tokens,
// recovery, top level, types, declarators), ParseStmt.cpp, ParseExpr.cpp and
// ParseLiteral.cpp. Conventions:
// - A parse function that fails has already reported its error and returns
//   null; its callers return null at once without reporting more, and the
//   nearest statement or top-level declaration resynchronises.
// - Every loop consumes a token per iteration or stops.
// - Recursion is bounded: DepthGuard counts nested statements and
//   expressions and reports "nesting too deep" past kMaxDepth.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/AST.h"
#include "frontend/Token.h"
#include "support/Diagnostics.h"

#include <initializer_list>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tc {

class Parser {
public:
  Parser(const std::vector<Token> &tokens, DiagEngine &diags) : toks_(tokens), diags_(diags) {}

  /// tu ::= top-level* eof
  std::unique_ptr<ast::TranslationUnit> parseTranslationUnit();

  /// The most nested statements plus expressions the parser accepts.
  static constexpr unsigned kMaxDepth = 256;
  /// The deepest expression tree the parser builds (left-associative chains
  /// such as `a + a + ... + a` are parsed by a loop but make deep trees, which
  /// later phases walk recursively).
  static constexpr unsigned kMaxTreeDepth = 1024;

private:
  // --- tokens (Parser.cpp) ---
  const Token &tok() const { return peek(0); }
  const Token &peek(size_t n) const;
  const Token &prevTok() const;
  bool at(TokKind k) const { return tok().is(k); }
  const Token &advance();
  bool consumeIf(TokKind k);
  /// Consumes a `k` or reports "expected 'k'" (with "after `what`" if given).
  bool expect(TokKind k, const char *what = nullptr);
  /// Consumes the closer `k` matching `open`, or reports it with a note at the opener.
  bool expectClosing(TokKind k, const Token &open);
  /// The location just past the previous token (where a missing ';' belongs).
  SourceLoc endOfPrev() const;
  /// Columns from the start of `first` to the end of the previous token, if both
  /// are on one line of one file (outside macros); else the length of `first`.
  uint32_t spanFrom(const Token &first) const;
  void error(DiagId id, const Token &at, std::vector<std::string> args = {});

  // --- recovery ---
  /// Skips to one of `stops` at nesting depth 0 (balanced (), [], {} are skipped
  /// whole); consumes it if `consume`. Stops (returning false) before an
  /// unmatched closer that is not in `stops`, and at eof.
  bool skipUntil(std::initializer_list<TokKind> stops, bool consume);
  /// Rewinds to the opener at `openIdx` and skips its balanced group (stopping
  /// early at a '{' or '}' inside it, for an unterminated group).
  void skipBalancedFrom(size_t openIdx);
  /// Skips the rest of a statement: to ';' (consumed), through a balanced block,
  /// or to the '}' that closes the enclosing block (not consumed).
  void skipStatement();
  /// Skips to the start of the next top-level declaration.
  void skipTopLevel();

  // --- depth limit ---
  struct DepthGuard {
    Parser &p;
    bool ok;
    explicit DepthGuard(Parser &parser);
    ~DepthGuard() { --p.depth_; }
  };

  // --- top level, types and declarators (Parser.cpp) ---
  void parseTopLevel(ast::TranslationUnit &tu);
  std::unique_ptr<ast::FunctionDecl> parseFunction(bool isKernel, ast::TypeSpec ret);
  bool parseParams(ast::FunctionDecl &fn);
  std::unique_ptr<ast::VarDecl> parseParam();
  bool isTypeStart(const Token &t) const;
  bool looksLikeUnknownTypeDecl() const;
  std::optional<ast::TypeSpec> parseTypeSpec();
  bool parsePointer(ast::TypeSpec &ty);
  std::optional<ast::TypeSpec> parseTypeName();
  bool parseDims(std::vector<ast::ExprPtr> &dims);
  bool parseAttributes(std::vector<ast::Attribute> &attrs);
  bool parseAttribute(std::vector<ast::Attribute> &attrs);
  std::unique_ptr<ast::VarDecl> parseDeclarator(const ast::TypeSpec &base, bool allowInit);

  // --- statements (ParseStmt.cpp) ---
  ast::StmtPtr parseStatement();
  ast::StmtPtr parseStatementKind();
  /// Expects the ';' ending a statement; true if the statement can be kept.
  bool expectStmtEnd(const char *what);
  std::unique_ptr<ast::CompoundStmt> parseCompound();
  ast::StmtPtr parseDeclStmt();
  ast::StmtPtr parseExprStmt();
  ast::StmtPtr parseIf();
  ast::StmtPtr parseFor();
  ast::StmtPtr parseForInit();
  ast::StmtPtr parseWhile();
  ast::StmtPtr parseDoWhile();
  ast::StmtPtr parseReturn();
  ast::StmtPtr parseJump();
  ast::ExprPtr parseParenCondition(const char *stmt);

  // --- expressions (ParseExpr.cpp) ---
  ast::ExprPtr parseExpression();
  ast::ExprPtr parseAssignment();
  ast::ExprPtr parseConditional();
  ast::ExprPtr parseBinary(int minPrec);
  ast::ExprPtr parseRange();
  ast::ExprPtr parseCast();
  ast::ExprPtr parseParenCast();
  ast::ExprPtr parseUnary();
  ast::ExprPtr parseMaskedDeref();
  ast::ExprPtr parsePostfix();
  ast::ExprPtr parseCall(ast::ExprPtr callee);
  ast::ExprPtr parseSubscript(ast::ExprPtr base);
  bool parseSubscriptItem(std::vector<ast::SubscriptItem> &items);
  ast::ExprPtr parsePrimary();
  ast::ExprPtr parseParenExpr();
  ast::ExprPtr parseBitcast();
  bool checkAssignable(const ast::Expr &e, const Token &op);
  /// Records the tree depth of a new node (its children are finished); past
  /// kMaxTreeDepth reports "nesting too deep" and returns null.
  ast::ExprPtr finish(ast::ExprPtr e);

  // --- literals (ParseLiteral.cpp) ---
  ast::ExprPtr parseNumber();
  ast::ExprPtr parseIntLiteral(const Token &t, std::string_view digits, unsigned base,
                               std::string_view suffix);
  ast::ExprPtr parseFloatLiteral(const Token &t);
  ast::ExprPtr parseString();
  ast::ExprPtr parseCharConstant();
  /// Unescapes the body of a string or character literal (without quotes).
  std::string unescape(std::string_view body, const Token &t);

  const std::vector<Token> &toks_;
  DiagEngine &diags_;
  size_t pos_ = 0;
  unsigned depth_ = 0;
  bool reportedDepth_ = false;
  /// Names of the parameters and variables declared so far in the current
  /// function (flat, ignoring scopes): `a * b;` is a product when `a` is one of
  /// them, else a declaration with an unknown type name `a`.
  std::unordered_set<std::string> declaredNames_;
  /// Tree depth of every finished expression node (looked up, never iterated).
  std::unordered_map<const ast::Expr *, unsigned> exprDepth_;
  void reportTooDeep(SourceLoc loc);
};

} // namespace tc
