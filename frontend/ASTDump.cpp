//===- ASTDump.cpp - Textual dump of the AST (tritonc --emit=ast) --------===//
//
// One node per line, children indented by two spaces:
//   Kind ['operator-or-name'] [details] <line:col> ['type'] [= constant]
// The location is where the node's token was written in a file (through macro
// expansions); `file:` prefixes it outside the main file. Types and constants
// appear once sema has run. The output depends only on the AST (no pointers,
// no hash-map order), so it is deterministic.
//
//===----------------------------------------------------------------------===//
#include "frontend/ASTDump.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <string>

namespace tc {

using namespace ast;

namespace {

std::string int128Str(__int128 v) {
  if (v == 0)
    return "0";
  bool neg = v < 0;
  unsigned __int128 u =
      neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  for (; u; u /= 10)
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
  return neg ? "-" + s : s;
}

/// The shortest %g spelling that reads back as `v`, always with a '.' or an exponent.
std::string doubleStr(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

std::string escaped(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    default:
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02X",
                      static_cast<unsigned>(static_cast<unsigned char>(c)));
        out += buf;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

std::string typeSpecStr(const TypeSpec &t) {
  std::string s = t.isVoid ? "void" : std::string(langName(t.dtype));
  return t.isPtr ? s + "*" : s;
}

const char *unaryStr(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: return "'-'";
  case UnaryOp::Plus: return "'+'";
  case UnaryOp::BitNot: return "'~'";
  case UnaryOp::LogicalNot: return "'!'";
  case UnaryOp::Transpose: return "'^'";
  case UnaryOp::Deref: return "'*'";
  case UnaryOp::PreInc: return "'++' prefix";
  case UnaryOp::PreDec: return "'--' prefix";
  case UnaryOp::PostInc: return "'++' postfix";
  case UnaryOp::PostDec: return "'--' postfix";
  }
  return "'?'";
}

const char *reduceStr(ReduceOp op) {
  switch (op) {
  case ReduceOp::Add: return "+";
  case ReduceOp::Max: return "max";
  case ReduceOp::Min: return "min";
  case ReduceOp::ArgMax: return "argmax";
  case ReduceOp::ArgMin: return "argmin";
  case ReduceOp::And: return "&";
  case ReduceOp::Or: return "|";
  case ReduceOp::Xor: return "^";
  }
  return "?";
}

std::string itemsStr(const std::vector<SubscriptItem> &items) {
  std::string s = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i)
      s += ", ";
    switch (items[i].kind) {
    case SubscriptItem::Kind::Slice: s += ":"; break;
    case SubscriptItem::Kind::NewAxis: s += "newaxis"; break;
    case SubscriptItem::Kind::Reduce: s += reduceStr(items[i].reduce); break;
    case SubscriptItem::Kind::Index: s += "index"; break;
    }
  }
  return s + "]";
}

const char *stmtName(StmtKind k) {
  switch (k) {
  case StmtKind::Decl: return "DeclStmt";
  case StmtKind::Expr: return "ExprStmt";
  case StmtKind::Compound: return "CompoundStmt";
  case StmtKind::If: return "IfStmt";
  case StmtKind::For: return "ForStmt";
  case StmtKind::While: return "WhileStmt";
  case StmtKind::DoWhile: return "DoWhileStmt";
  case StmtKind::Break: return "BreakStmt";
  case StmtKind::Continue: return "ContinueStmt";
  case StmtKind::Return: return "ReturnStmt";
  case StmtKind::Empty: return "EmptyStmt";
  }
  return "Stmt";
}

std::string constStr(const ConstValue &c) {
  switch (c.kind) {
  case ConstValue::Kind::Bool: return c.i ? "true" : "false";
  case ConstValue::Kind::Int: return int128Str(c.i);
  case ConstValue::Kind::Float: return doubleStr(c.f);
  }
  return "?";
}

/// True if sema annotated some expression of `s` (then declarations show
/// their resolved types too).
bool anyTyped(const Expr *e);
bool anyTyped(const Stmt *s);

bool anyTyped(const Expr *e) {
  return e && e->typed;
}

bool anyTyped(const Stmt *s) {
  if (!s)
    return false;
  switch (s->kind) {
  case StmtKind::Decl:
    for (const auto &v : s->as<DeclStmt>()->vars)
      if (anyTyped(v->init.get()) || (!v->shape.empty() && anyTyped(v->shape[0].get())))
        return true;
    return false;
  case StmtKind::Expr: return anyTyped(s->as<ExprStmt>()->expr.get());
  case StmtKind::Compound:
    for (const auto &c : s->as<CompoundStmt>()->body)
      if (anyTyped(c.get()))
        return true;
    return false;
  case StmtKind::If: return anyTyped(s->as<IfStmt>()->cond.get());
  case StmtKind::For:
    return anyTyped(s->as<ForStmt>()->cond.get()) || anyTyped(s->as<ForStmt>()->body.get());
  case StmtKind::While: return anyTyped(s->as<WhileStmt>()->cond.get());
  case StmtKind::DoWhile: return anyTyped(s->as<DoWhileStmt>()->cond.get());
  case StmtKind::Return: return anyTyped(s->as<ReturnStmt>()->value.get());
  case StmtKind::Break:
  case StmtKind::Continue:
  case StmtKind::Empty: return false;
  }
  return false;
}

class Dumper {
public:
  Dumper(const SourceManager &sm, uint32_t mainFile, std::ostream &os)
      : sm_(sm), mainFile_(mainFile), os_(os) {}

  void function(const FunctionDecl &fn);

private:
  void line(const std::string &text) { os_ << std::string(2 * indent_, ' ') << text << '\n'; }
  std::string loc(SourceLoc l) const;
  void expr(const Expr *e);
  std::string exprHead(const Expr &e) const;
  void exprChildren(const Expr &e);
  void stmt(const Stmt *s);
  void stmtChildren(const Stmt &s);
  void var(const VarDecl &v);
  void shape(const std::vector<ExprPtr> &dims);
  void child(const Expr *e) {
    ++indent_;
    expr(e);
    --indent_;
  }
  void child(const Stmt *s) {
    ++indent_;
    stmt(s);
    --indent_;
  }

  const SourceManager &sm_;
  uint32_t mainFile_;
  std::ostream &os_;
  unsigned indent_ = 1;
  bool typed_ = false; // sema ran on the current function
};

std::string Dumper::loc(SourceLoc l) const {
  if (!l.valid())
    return "<invalid>";
  SourceLoc o = sm_.outermost(l);
  std::string s = "<";
  if (o.file != mainFile_ && o.file < sm_.numFiles())
    s += sm_.name(o.file) + ":";
  return s + std::to_string(o.line) + ":" + std::to_string(o.col) + ">";
}

void Dumper::function(const FunctionDecl &fn) {
  typed_ = anyTyped(fn.body.get());
  std::string head = "FunctionDecl '" + fn.name + "'" + (fn.isKernel ? " kernel " : " ") +
                     loc(fn.loc) + " '" + typeSpecStr(fn.returnType) + "'";
  if (typed_ && !fn.isKernel && !fn.returnType.isVoid)
    head += " -> '" + fn.resolvedReturn.langStr() + "'";
  if (!fn.body)
    head += " (no body)";
  line(head);
  ++indent_;
  for (const auto &p : fn.params)
    var(*p);
  if (fn.body)
    stmt(fn.body.get());
  --indent_;
}

void Dumper::var(const VarDecl &v) {
  std::string head = std::string(v.isParam ? "ParamDecl '" : "VarDecl '") + v.name + "' " +
                     loc(v.loc) + " '" + typeSpecStr(v.elem) + "'";
  if (typed_ && !v.elem.isVoid)
    head += " -> '" + v.type.langStr() + "'";
  line(head);
  ++indent_;
  shape(v.shape);
  for (const Attribute &a : v.attrs) {
    line("Attribute '" + a.name + "' " + loc(a.loc));
    for (const auto &arg : a.args)
      child(arg.get());
  }
  if (v.init)
    expr(v.init.get());
  --indent_;
}

void Dumper::shape(const std::vector<ExprPtr> &dims) {
  if (dims.empty())
    return;
  line("Shape");
  for (const auto &d : dims)
    child(d.get());
}

void Dumper::expr(const Expr *e) {
  if (!e) {
    line("<<<NULL>>>");
    return;
  }
  std::string head = exprHead(*e) + " " + loc(e->loc);
  if (e->typed)
    head += " '" + e->type.langStr() + "'";
  if (e->constant)
    head += " = " + constStr(*e->constant);
  line(head);
  ++indent_;
  exprChildren(*e);
  --indent_;
}

std::string Dumper::exprHead(const Expr &e) const {
  switch (e.kind) {
  case ExprKind::IntLiteral:
    return "IntLiteralExpr " + int128Str(static_cast<__int128>(e.as<IntLiteralExpr>()->value));
  case ExprKind::FloatLiteral:
    return "FloatLiteralExpr " + doubleStr(e.as<FloatLiteralExpr>()->value);
  case ExprKind::BoolLiteral:
    return e.as<BoolLiteralExpr>()->value ? "BoolLiteralExpr true" : "BoolLiteralExpr false";
  case ExprKind::StringLiteral:
    return "StringLiteralExpr " + escaped(e.as<StringLiteralExpr>()->value);
  case ExprKind::Ident: return "IdentExpr '" + e.as<IdentExpr>()->name + "'";
  case ExprKind::Unary: return std::string("UnaryExpr ") + unaryStr(e.as<UnaryExpr>()->op);
  case ExprKind::MaskedDeref: return "MaskedDerefExpr '*?'";
  case ExprKind::Binary:
    return "BinaryExpr '" + std::string(binaryOpSpelling(e.as<BinaryExpr>()->op)) + "'";
  case ExprKind::Assign: {
    const auto *a = e.as<AssignExpr>();
    return "AssignExpr '" + std::string(a->compound ? binaryOpSpelling(*a->compound) : "") + "='";
  }
  case ExprKind::Conditional: return "ConditionalExpr '?:'";
  case ExprKind::Cast: return "CastExpr '" + typeSpecStr(e.as<CastExpr>()->to) + "'";
  case ExprKind::Bitcast: return "BitcastExpr '" + typeSpecStr(e.as<BitcastExpr>()->to) + "'";
  case ExprKind::Range: return "RangeExpr '...'";
  case ExprKind::Subscript: return "SubscriptExpr '" + itemsStr(e.as<SubscriptExpr>()->items) + "'";
  case ExprKind::Call: return "CallExpr '" + e.as<CallExpr>()->callee + "'";
  }
  return "Expr";
}

void Dumper::exprChildren(const Expr &e) {
  switch (e.kind) {
  case ExprKind::IntLiteral:
  case ExprKind::FloatLiteral:
  case ExprKind::BoolLiteral:
  case ExprKind::StringLiteral:
  case ExprKind::Ident: return;
  case ExprKind::Unary: expr(e.as<UnaryExpr>()->operand.get()); return;
  case ExprKind::MaskedDeref:
    expr(e.as<MaskedDerefExpr>()->mask.get());
    expr(e.as<MaskedDerefExpr>()->pointer.get());
    return;
  case ExprKind::Binary:
    expr(e.as<BinaryExpr>()->lhs.get());
    expr(e.as<BinaryExpr>()->rhs.get());
    return;
  case ExprKind::Assign:
    expr(e.as<AssignExpr>()->lhs.get());
    expr(e.as<AssignExpr>()->rhs.get());
    return;
  case ExprKind::Conditional: {
    const auto *c = e.as<ConditionalExpr>();
    expr(c->cond.get());
    expr(c->thenExpr.get());
    expr(c->elseExpr.get());
    return;
  }
  case ExprKind::Cast:
    shape(e.as<CastExpr>()->shape);
    expr(e.as<CastExpr>()->operand.get());
    return;
  case ExprKind::Bitcast:
    shape(e.as<BitcastExpr>()->shape);
    expr(e.as<BitcastExpr>()->operand.get());
    return;
  case ExprKind::Range:
    expr(e.as<RangeExpr>()->begin.get());
    expr(e.as<RangeExpr>()->end.get());
    return;
  case ExprKind::Subscript:
    expr(e.as<SubscriptExpr>()->base.get());
    for (const auto &it : e.as<SubscriptExpr>()->items)
      if (it.index)
        expr(it.index.get());
    return;
  case ExprKind::Call:
    for (const auto &a : e.as<CallExpr>()->args)
      expr(a.get());
    return;
  }
}

void Dumper::stmt(const Stmt *s) {
  if (!s) {
    line("<<<NULL>>>");
    return;
  }
  std::string head = std::string(stmtName(s->kind)) + " " + loc(s->loc);
  if (s->kind == StmtKind::If && s->as<IfStmt>()->elseStmt)
    head += " has_else";
  line(head);
  ++indent_;
  stmtChildren(*s);
  --indent_;
}

void Dumper::stmtChildren(const Stmt &s) {
  switch (s.kind) {
  case StmtKind::Decl:
    for (const auto &v : s.as<DeclStmt>()->vars)
      var(*v);
    return;
  case StmtKind::Expr: expr(s.as<ExprStmt>()->expr.get()); return;
  case StmtKind::Compound:
    for (const auto &c : s.as<CompoundStmt>()->body)
      stmt(c.get());
    return;
  case StmtKind::If:
    expr(s.as<IfStmt>()->cond.get());
    stmt(s.as<IfStmt>()->thenStmt.get());
    if (s.as<IfStmt>()->elseStmt)
      stmt(s.as<IfStmt>()->elseStmt.get());
    return;
  case StmtKind::For: {
    const auto *f = s.as<ForStmt>();
    stmt(f->init.get());
    expr(f->cond.get());
    expr(f->step.get());
    stmt(f->body.get());
    return;
  }
  case StmtKind::While:
    expr(s.as<WhileStmt>()->cond.get());
    stmt(s.as<WhileStmt>()->body.get());
    return;
  case StmtKind::DoWhile:
    stmt(s.as<DoWhileStmt>()->body.get());
    expr(s.as<DoWhileStmt>()->cond.get());
    return;
  case StmtKind::Return:
    if (s.as<ReturnStmt>()->value)
      expr(s.as<ReturnStmt>()->value.get());
    return;
  case StmtKind::Break:
  case StmtKind::Continue:
  case StmtKind::Empty: return;
  }
}

} // namespace

void dumpAST(const TranslationUnit &tu, const SourceManager &sm, std::ostream &os) {
  os << "TranslationUnit\n";
  Dumper d(sm, tu.mainFile, os);
  for (const auto &fn : tu.functions)
    d.function(*fn);
}

} // namespace tc
