//===- LowerAnalysis.cpp - AST queries and constant helpers for lowering --===//
//
// Small pure functions over the analysed AST: which jumps leave a statement,
// which variables a statement assigns, reduction result types, and the
// encoding of compile-time constants as IR attribute values.
//
//===----------------------------------------------------------------------===//
#include "frontend/LowerImpl.h"
#include "support/FloatBits.h"

#include <cmath>

namespace tc::lower {

using namespace ast;

namespace {

/// Calls `f` on every direct subexpression of `e` (null children skipped).
template <typename F> void forEachChild(const Expr *e, F &&f) {
  auto visit = [&](const ExprPtr &c) {
    if (c)
      f(c.get());
  };
  switch (e->kind) {
  case ExprKind::IntLiteral:
  case ExprKind::FloatLiteral:
  case ExprKind::BoolLiteral:
  case ExprKind::StringLiteral:
  case ExprKind::Ident: return;
  case ExprKind::Unary: return visit(e->as<UnaryExpr>()->operand);
  case ExprKind::MaskedDeref:
    visit(e->as<MaskedDerefExpr>()->mask);
    return visit(e->as<MaskedDerefExpr>()->pointer);
  case ExprKind::Binary: visit(e->as<BinaryExpr>()->lhs); return visit(e->as<BinaryExpr>()->rhs);
  case ExprKind::Assign: visit(e->as<AssignExpr>()->lhs); return visit(e->as<AssignExpr>()->rhs);
  case ExprKind::Conditional:
    visit(e->as<ConditionalExpr>()->cond);
    visit(e->as<ConditionalExpr>()->thenExpr);
    return visit(e->as<ConditionalExpr>()->elseExpr);
  case ExprKind::Cast:
    for (const ExprPtr &d : e->as<CastExpr>()->shape)
      visit(d);
    return visit(e->as<CastExpr>()->operand);
  case ExprKind::Bitcast:
    for (const ExprPtr &d : e->as<BitcastExpr>()->shape)
      visit(d);
    return visit(e->as<BitcastExpr>()->operand);
  case ExprKind::Range: visit(e->as<RangeExpr>()->begin); return visit(e->as<RangeExpr>()->end);
  case ExprKind::Subscript:
    for (const SubscriptItem &it : e->as<SubscriptExpr>()->items)
      if (it.index)
        visit(it.index);
    return visit(e->as<SubscriptExpr>()->base);
  case ExprKind::Call:
    for (const ExprPtr &a : e->as<CallExpr>()->args)
      visit(a);
    return;
  }
}

/// Calls `fs` on every direct child statement and `fe` on every direct
/// expression of `s`.
template <typename FS, typename FE> void forEachPart(const Stmt *s, FS &&fs, FE &&fe) {
  auto stmt = [&](const StmtPtr &c) {
    if (c)
      fs(c.get());
  };
  auto expr = [&](const ExprPtr &c) {
    if (c)
      fe(c.get());
  };
  switch (s->kind) {
  case StmtKind::Decl:
    for (const auto &v : s->as<DeclStmt>()->vars) {
      for (const ExprPtr &d : v->shape)
        expr(d);
      expr(v->init);
    }
    return;
  case StmtKind::Expr: return expr(s->as<ExprStmt>()->expr);
  case StmtKind::Compound:
    for (const StmtPtr &c : s->as<CompoundStmt>()->body)
      stmt(c);
    return;
  case StmtKind::If:
    expr(s->as<IfStmt>()->cond);
    stmt(s->as<IfStmt>()->thenStmt);
    return stmt(s->as<IfStmt>()->elseStmt);
  case StmtKind::For:
    stmt(s->as<ForStmt>()->init);
    expr(s->as<ForStmt>()->cond);
    expr(s->as<ForStmt>()->step);
    return stmt(s->as<ForStmt>()->body);
  case StmtKind::While: expr(s->as<WhileStmt>()->cond); return stmt(s->as<WhileStmt>()->body);
  case StmtKind::DoWhile: stmt(s->as<DoWhileStmt>()->body); return expr(s->as<DoWhileStmt>()->cond);
  case StmtKind::Return: return expr(s->as<ReturnStmt>()->value);
  case StmtKind::Break:
  case StmtKind::Continue:
  case StmtKind::Empty: return;
  }
}

bool isLoop(const Stmt *s) {
  return s->kind == StmtKind::For || s->kind == StmtKind::While || s->kind == StmtKind::DoWhile;
}

} // namespace

Exits exitsOf(const Stmt *s) {
  Exits ex;
  ex.brk = s->kind == StmtKind::Break;
  ex.cont = s->kind == StmtKind::Continue;
  ex.ret = s->kind == StmtKind::Return;
  if (ex.any())
    return ex;
  bool loop = isLoop(s);
  forEachPart(
      s,
      [&](const Stmt *c) {
        Exits sub = exitsOf(c);
        ex.ret |= sub.ret;
        if (!loop) {
          ex.brk |= sub.brk;
          ex.cont |= sub.cont;
        }
      },
      [](const Expr *) {});
  return ex;
}

void collectAssigned(const Expr *e, std::vector<const VarDecl *> &out) {
  auto identDecl = [](const Expr *x) -> const VarDecl * {
    return x && x->kind == ExprKind::Ident ? x->as<IdentExpr>()->decl : nullptr;
  };
  if (e->kind == ExprKind::Assign) {
    const Expr *lhs = e->as<AssignExpr>()->lhs.get();
    if (lhs && lhs->kind == ExprKind::Subscript) // a slice of a tile variable
      lhs = lhs->as<SubscriptExpr>()->base.get();
    if (const VarDecl *v = identDecl(lhs))
      out.push_back(v);
  } else if (e->kind == ExprKind::Unary) {
    UnaryOp op = e->as<UnaryExpr>()->op;
    bool incDec = op == UnaryOp::PreInc || op == UnaryOp::PreDec || op == UnaryOp::PostInc ||
                  op == UnaryOp::PostDec;
    if (const VarDecl *v = incDec ? identDecl(e->as<UnaryExpr>()->operand.get()) : nullptr)
      out.push_back(v);
  }
  forEachChild(e, [&](const Expr *c) { collectAssigned(c, out); });
}

void collectAssigned(const Stmt *s, std::vector<const VarDecl *> &out) {
  forEachPart(
      s, [&](const Stmt *c) { collectAssigned(c, out); },
      [&](const Expr *e) { collectAssigned(e, out); });
}

bool containsReturn(const Stmt *s) {
  if (s->kind == StmtKind::Return)
    return true;
  bool found = false;
  forEachPart(
      s, [&](const Stmt *c) { found = found || containsReturn(c); }, [](const Expr *) {});
  return found;
}

DType reduceResultDType(ReduceOp op, DType in) {
  switch (op) {
  case ReduceOp::Add:
    if (isBool(in))
      return DType::U32;
    if (isInt(in) && bitWidth(in) < 32)
      return isSignedInt(in) ? DType::I32 : DType::U32;
    return in;
  case ReduceOp::ArgMax:
  case ReduceOp::ArgMin: return DType::I32;
  case ReduceOp::Max:
  case ReduceOp::Min:
  case ReduceOp::And:
  case ReduceOp::Or:
  case ReduceOp::Xor: return in;
  }
  return in;
}

const char *reduceKindName(ReduceOp op) {
  switch (op) {
  case ReduceOp::Add: return "add";
  case ReduceOp::Max: return "max";
  case ReduceOp::Min: return "min";
  case ReduceOp::ArgMax: return "argmax";
  case ReduceOp::ArgMin: return "argmin";
  case ReduceOp::And: return "and";
  case ReduceOp::Or: return "or";
  case ReduceOp::Xor: return "xor";
  }
  return "add";
}

namespace {

/// The integer a constant denotes before wrapping (floats truncate toward zero;
/// NaN and values beyond __int128 saturate, sema rejects them anyway).
__int128 constantAsInteger(const ConstValue &c) {
  switch (c.kind) {
  case ConstValue::Kind::Bool:
  case ConstValue::Kind::Int: return c.i;
  case ConstValue::Kind::Float:
    if (std::isnan(c.f))
      return 0;
    if (c.f >= 1.7e38)
      return static_cast<__int128>(~static_cast<unsigned __int128>(0) >> 1);
    if (c.f <= -1.7e38)
      return -static_cast<__int128>(~static_cast<unsigned __int128>(0) >> 1) - 1;
    return static_cast<__int128>(std::trunc(c.f));
  }
  return 0;
}

} // namespace

int64_t constantIntBits(const ConstValue &c, DType t) {
  if (isBool(t)) {
    bool nonzero = c.kind == ConstValue::Kind::Float ? c.f != 0 : c.i != 0;
    return nonzero ? 1 : 0;
  }
  auto bits = static_cast<uint64_t>(static_cast<unsigned __int128>(constantAsInteger(c)));
  unsigned w = bitWidth(t);
  if (w < 64) {
    uint64_t mask = (uint64_t{1} << w) - 1;
    bits &= mask;
    if (isSignedInt(t) && (bits >> (w - 1)) & 1)
      bits |= ~mask;
  }
  return static_cast<int64_t>(bits);
}

double constantFloatValue(const ConstValue &c, DType t) {
  switch (c.kind) {
  case ConstValue::Kind::Bool: return c.i ? 1.0 : 0.0;
  case ConstValue::Kind::Int: return roundToFloat(static_cast<double>(c.i), t);
  case ConstValue::Kind::Float: return roundToFloat(c.f, t);
  }
  return 0;
}

} // namespace tc::lower
