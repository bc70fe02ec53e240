//===- SemaExpr.cpp - Types of expressions -------------------------------===//
//
// Operators (docs/semantics.md rules 1-3, 10, 11), casts, ranges and
// subscripts. Operators whose operands are all constants are folded (see
// ConstEval.cpp); otherwise constants take part in promotion by rule 2.
//
// Shifts: both operands are promoted like any other binary operator and the
// result has the promoted type (Triton's choice; C would use the left
// operand's promoted type). So `int8_tile << int32_var` is int32.
//
//===----------------------------------------------------------------------===//
#include "frontend/SemaInternal.h"
#include "frontend/StackGuard.h"
#include "support/EditDistance.h"

namespace tc::sema {

using namespace ast;
using CKind = ConstValue::Kind;

namespace {
bool isComparison(BinaryOp op) {
  return op == BinaryOp::Lt || op == BinaryOp::Gt || op == BinaryOp::Le || op == BinaryOp::Ge ||
         op == BinaryOp::Eq || op == BinaryOp::Ne;
}
bool isLogical(BinaryOp op) {
  return op == BinaryOp::LogicalAnd || op == BinaryOp::LogicalOr;
}
bool isBitwiseOrShift(BinaryOp op) {
  return op == BinaryOp::BitAnd || op == BinaryOp::BitOr || op == BinaryOp::BitXor ||
         op == BinaryOp::Shl || op == BinaryOp::Shr;
}
bool isShift(BinaryOp op) {
  return op == BinaryOp::Shl || op == BinaryOp::Shr;
}
bool isPow2(__int128 v) {
  return v > 0 && (v & (v - 1)) == 0;
}

/// Rule 10: the result dtype of a reduction, or nullopt if it does not apply.
std::optional<DType> reduceResult(ReduceOp op, DType t) {
  switch (op) {
  case ReduceOp::Add:
    if (t == DType::Bool || t == DType::U8 || t == DType::U16)
      return DType::U32;
    if (t == DType::I8 || t == DType::I16)
      return DType::I32;
    return t;
  case ReduceOp::Max:
  case ReduceOp::Min: return t;
  case ReduceOp::ArgMax:
  case ReduceOp::ArgMin: return DType::I32;
  case ReduceOp::And:
  case ReduceOp::Or:
  case ReduceOp::Xor:
    if (isFloat(t))
      return std::nullopt;
    return t;
  }
  return std::nullopt;
}
} // namespace

std::string_view unaryOpSpelling(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: return "-";
  case UnaryOp::Plus: return "+";
  case UnaryOp::BitNot: return "~";
  case UnaryOp::LogicalNot: return "!";
  case UnaryOp::Transpose: return "^";
  case UnaryOp::Deref: return "*";
  case UnaryOp::PreInc:
  case UnaryOp::PostInc: return "++";
  case UnaryOp::PreDec:
  case UnaryOp::PostDec: return "--";
  }
  return "?";
}

std::string_view reduceOpSpelling(ReduceOp op) {
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

// The thread's stack is nearly used up (StackGuard.h): one error, then every
// deeper step gives up.
bool Sema::stackExhausted(SourceLoc loc) {
  if (!stackNearlyExhausted())
    return false;
  if (!reportedStack_)
    report(DiagId::err_nesting_too_deep, loc);
  reportedStack_ = true;
  hadError_ = true;
  return true;
}

bool Sema::checkExpr(Expr *e) {
  if (!e || stackExhausted(e->loc))
    return false;
  if (e->typed) // already analysed (a condition re-wrapped by convertToBool)
    return true;
  switch (e->kind) {
  case ExprKind::IntLiteral:
  case ExprKind::FloatLiteral:
  case ExprKind::BoolLiteral: return checkLiteral(e);
  case ExprKind::StringLiteral: reportAt(DiagId::err_sema_string_misuse, e); return false;
  case ExprKind::Ident: return checkIdent(e->as<IdentExpr>(), /*isRead=*/true);
  case ExprKind::Unary: return checkUnary(e->as<UnaryExpr>());
  case ExprKind::MaskedDeref: return checkMaskedDeref(e->as<MaskedDerefExpr>());
  case ExprKind::Binary: return checkBinary(e->as<BinaryExpr>());
  case ExprKind::Assign: return checkAssign(e->as<AssignExpr>());
  case ExprKind::Conditional: return checkConditional(e->as<ConditionalExpr>());
  case ExprKind::Cast: return checkCast(e->as<CastExpr>());
  case ExprKind::Bitcast: return checkBitcast(e->as<BitcastExpr>());
  case ExprKind::Range: return checkRange(e->as<RangeExpr>());
  case ExprKind::Subscript: return checkSubscript(e->as<SubscriptExpr>());
  case ExprKind::Call: return checkCall(e->as<CallExpr>());
  }
  return false;
}

bool Sema::checkValue(Expr *e) {
  if (!checkExpr(e))
    return false;
  if (!isVoidCall(e))
    return true;
  const auto *c = e->as<CallExpr>();
  report(DiagId::err_sema_void_value, c->calleeLoc, {c->callee},
         static_cast<uint32_t>(c->callee.size()));
  e->typed = false;
  return false;
}

bool Sema::setConstant(Expr *e, const ConstValue &v) {
  e->constant = v;
  std::optional<DType> t = naturalDType(v);
  // Integers beyond 64 bits may appear inside constant expressions; where one
  // is used as a value, checkMaterializable or a conversion reports it.
  e->type = ir::Type::scalar(t ? *t : (v.i < 0 ? DType::I64 : DType::U64));
  e->typed = true;
  return true;
}

bool Sema::checkLiteral(Expr *e) {
  switch (e->kind) {
  case ExprKind::IntLiteral: {
    auto *lit = e->as<IntLiteralExpr>();
    if (lit->value > static_cast<unsigned __int128>(UINT64_MAX)) {
      reportAt(DiagId::err_sema_literal_too_large, e, {lit->spelling});
      return false;
    }
    return setConstant(e, ConstValue::ofInt(static_cast<__int128>(lit->value)));
  }
  case ExprKind::FloatLiteral:
    return setConstant(e, ConstValue::ofFloat(e->as<FloatLiteralExpr>()->value));
  case ExprKind::BoolLiteral:
    return setConstant(e, ConstValue::ofBool(e->as<BoolLiteralExpr>()->value));
  default: break;
  }
  return false;
}

bool Sema::checkIdent(IdentExpr *e, bool isRead) {
  VarDecl *d = lookup(e->name);
  if (!d) {
    std::vector<std::string> names;
    for (const auto &scope : fn_->scopes)
      for (const auto &[name, decl] : scope)
        names.push_back(name);
    reportAt(DiagId::err_sema_undeclared, e, {e->name, didYouMean(e->name, names)});
    return false;
  }
  e->decl = d;
  if (invalidDecls_.count(d))
    return false;
  if (isRead)
    noteRead(e);
  e->type = d->type;
  e->typed = true;
  return true;
}

//===----------------------------------------------------------------------===//
// Unary operators, loads
//===----------------------------------------------------------------------===//

bool Sema::checkUnary(UnaryExpr *e) {
  switch (e->op) {
  case UnaryOp::PreInc:
  case UnaryOp::PreDec:
  case UnaryOp::PostInc:
  case UnaryOp::PostDec: return checkIncDec(e);
  case UnaryOp::Deref: return checkDeref(e);
  default: break;
  }
  if (!checkValue(e->operand.get()))
    return false;
  Expr *o = e->operand.get();
  const ir::Type &t = o->type;
  bool bad = t.isPtr && e->op != UnaryOp::Transpose; // ^ also transposes pointer tiles
  if (e->op == UnaryOp::Neg && !o->constant && t.dtype == DType::Bool)
    bad = true;
  if (e->op == UnaryOp::BitNot && isFloat(t.dtype))
    bad = true;
  if (bad) {
    reportAt(DiagId::err_sema_invalid_unary, o, {typeStr(o), std::string(unaryOpSpelling(e->op))});
    return false;
  }
  if (e->op == UnaryOp::Transpose) {
    if (t.isScalar()) {
      reportAt(DiagId::err_sema_transpose_scalar, o, {typeStr(o)});
      return false;
    }
    e->type = t.withShape(ir::Shape(t.shape.rbegin(), t.shape.rend()));
    e->typed = true;
    return true;
  }
  if (o->constant) {
    FoldResult r = foldUnary(e->op, *o->constant);
    if (!r.value) {
      reportAt(DiagId::err_sema_const_overflow, e);
      return false;
    }
    return setConstant(e, *r.value);
  }
  e->type = e->op == UnaryOp::LogicalNot ? t.withDType(DType::Bool) : t;
  e->typed = true;
  return true;
}

// ++x, x--: scalar integer or floating-point variables; a read and an assignment.
bool Sema::checkIncDec(UnaryExpr *e) {
  Expr *o = e->operand.get();
  if (!o)
    return false;
  if (o->kind != ExprKind::Ident) {
    if (checkExpr(o))
      reportAt(DiagId::err_sema_not_assignable, o);
    return false;
  }
  auto *id = o->as<IdentExpr>();
  if (!checkIdent(id, /*isRead=*/true))
    return false;
  const ir::Type &t = id->type;
  if (t.isPtr || t.isTile() || t.dtype == DType::Bool) {
    reportAt(DiagId::err_sema_incdec, o, {std::string(unaryOpSpelling(e->op)), typeStr(o)});
    return false;
  }
  noteAssigned(id->decl);
  e->type = t;
  e->typed = true;
  return true;
}

// `*p`: the pointee dtype in the pointer's shape (a load, or a store target).
bool Sema::checkDeref(UnaryExpr *e) {
  Expr *o = e->operand.get();
  if (!checkValue(o))
    return false;
  if (!o->type.isPtr) {
    reportAt(DiagId::err_sema_deref_non_ptr, o, {typeStr(o)});
    return false;
  }
  e->type = ir::Type::tile(o->type.dtype, o->type.shape);
  e->typed = true;
  return true;
}

// A mask: bool, broadcastable to the pointer's shape.
bool Sema::checkMask(ExprPtr &mask, const ir::Shape &ptrShape) {
  Expr *m = mask.get();
  if (!checkValue(m))
    return false;
  if (m->type.isPtr || m->type.dtype != DType::Bool) {
    reportAt(DiagId::err_sema_mask_not_bool, m, {typeStr(m)});
    return false;
  }
  std::optional<ir::Shape> b = ir::broadcastShapes(m->type.shape, ptrShape);
  if (!b || *b != ptrShape) {
    reportAt(DiagId::err_sema_mask_shape, m, {ir::shapeStr(m->type.shape), ir::shapeStr(ptrShape)});
    return false;
  }
  return true;
}

bool Sema::checkMaskedDeref(MaskedDerefExpr *e) {
  Expr *p = e->pointer.get();
  bool ok = checkValue(p);
  if (ok && !p->type.isPtr) {
    reportAt(DiagId::err_sema_deref_non_ptr, p, {typeStr(p)});
    ok = false;
  }
  if (!ok) {
    checkValue(e->mask.get());
    return false;
  }
  if (!checkMask(e->mask, p->type.shape))
    return false;
  e->type = ir::Type::tile(p->type.dtype, p->type.shape);
  e->typed = true;
  return true;
}

//===----------------------------------------------------------------------===//
// Binary operators
//===----------------------------------------------------------------------===//

bool Sema::checkBinary(BinaryExpr *e) {
  bool l = checkValue(e->lhs.get());
  std::optional<FlowState> afterLhs;
  if (isLogical(e->op)) // the rhs may not run: its assignments do not count
    afterLhs = fn_->flow;
  bool r = checkValue(e->rhs.get());
  if (afterLhs)
    fn_->flow = std::move(*afterLhs);
  if (!l || !r)
    return false;
  if (e->lhs->constant && e->rhs->constant && e->op != BinaryOp::MatMul)
    return foldBinaryExpr(e);
  std::optional<BinaryTyping> t = typeBinary(e->op, e->lhs.get(), e->rhs.get(), e);
  if (!t)
    return false;
  e->type = t->type;
  e->operandType = t->operandType;
  e->typed = true;
  return true;
}

bool Sema::reportFoldIssue(const FoldResult &r, const Expr *at, BinaryOp op) {
  const char *what = op == BinaryOp::Rem ? "remainder" : "division";
  switch (r.issue) {
  case FoldIssue::None: return true;
  case FoldIssue::Overflow: reportAt(DiagId::err_sema_const_overflow, at); return false;
  case FoldIssue::DivByZero: reportAt(DiagId::err_sema_const_div_zero, at, {what}); return false;
  case FoldIssue::NegativeShift: return false; // reported by the caller with the count
  case FoldIssue::FloorDiv:
    reportAt(DiagId::warn_sema_const_floor_div, at, {constStr(r.cResult)});
    return true;
  case FoldIssue::PythonMod:
    reportAt(DiagId::warn_sema_const_python_mod, at, {constStr(r.cResult)});
    return true;
  case FoldIssue::FloatDivByZero:
    reportAt(DiagId::warn_sema_const_float_div_zero, at, {what, constStr(*r.value)});
    return true;
  }
  return false;
}

bool Sema::foldBinaryExpr(BinaryExpr *e) {
  Expr *l = e->lhs.get(), *r = e->rhs.get();
  if (isBitwiseOrShift(e->op) &&
      (l->constant->kind == CKind::Float || r->constant->kind == CKind::Float)) {
    reportAt(DiagId::err_sema_invalid_operands, e, {typeStr(l), typeStr(r)});
    return false;
  }
  FoldResult res = foldBinary(e->op, *l->constant, *r->constant);
  if (res.issue == FoldIssue::NegativeShift) {
    reportAt(DiagId::err_sema_const_negative_shift, r, {constStr(*r->constant)});
    return false;
  }
  if (!reportFoldIssue(res, e, e->op))
    return false;
  setConstant(e, *res.value);
  e->operandType = e->type;
  return true;
}

std::optional<BinaryTyping> Sema::typeBinary(BinaryOp op, Expr *l, Expr *r, const Expr *at) {
  if (op == BinaryOp::MatMul)
    return typeMatMul(l, r, at);
  if (l->type.isPtr || r->type.isPtr)
    return typePointerBinary(op, l, r, at);
  if (isLogical(op)) { // operands become bool (x != 0)
    std::optional<ir::Shape> s = broadcast(l->type.shape, r->type.shape, at);
    if (!s)
      return std::nullopt;
    ir::Type b = ir::Type::tile(DType::Bool, *s);
    return BinaryTyping{b, b};
  }
  if (isBitwiseOrShift(op) && (isFloat(l->type.dtype) || isFloat(r->type.dtype))) {
    reportAt(DiagId::err_sema_invalid_operands, at, {typeStr(l), typeStr(r)});
    return std::nullopt;
  }
  std::optional<DType> d = promoteOperands({l, r});
  if (!d)
    return std::nullopt;
  if (isShift(op) && *d == DType::Bool) {
    reportAt(DiagId::err_sema_invalid_operands, at, {typeStr(l), typeStr(r)});
    return std::nullopt;
  }
  std::optional<ir::Shape> s = broadcast(l->type.shape, r->type.shape, at);
  if (!s)
    return std::nullopt;
  ir::Type operand = ir::Type::tile(*d, *s);
  ir::Type result = isComparison(op) ? operand.withDType(DType::Bool) : operand;
  return BinaryTyping{result, operand};
}

// p + i, i + p, p - i (integer offsets, no promotion), and comparisons of
// pointers to the same pointee; nothing else applies to pointers.
std::optional<BinaryTyping> Sema::typePointerBinary(BinaryOp op, Expr *l, Expr *r, const Expr *at) {
  bool lp = l->type.isPtr, rp = r->type.isPtr;
  std::string ls = typeStr(l), rs = typeStr(r);
  if (op == BinaryOp::Add || op == BinaryOp::Sub) {
    if (lp && rp) {
      reportAt(op == BinaryOp::Add ? DiagId::err_sema_ptr_add_ptr : DiagId::err_sema_ptr_diff, at,
               {ls, rs});
      return std::nullopt;
    }
    if (op == BinaryOp::Sub && rp) {
      reportAt(DiagId::err_sema_int_minus_ptr, at, {ls, rs});
      return std::nullopt;
    }
    Expr *ptr = lp ? l : r, *off = lp ? r : l;
    if (!isInt(off->type.dtype)) {
      reportAt(DiagId::err_sema_ptr_offset, off, {typeStr(off)});
      return std::nullopt;
    }
    if (!checkMaterializable(off))
      return std::nullopt;
    std::optional<ir::Shape> s = broadcast(l->type.shape, r->type.shape, at);
    if (!s)
      return std::nullopt;
    return BinaryTyping{ir::Type::ptrTile(ptr->type.dtype, *s),
                        ir::Type::tile(off->type.dtype, *s)};
  }
  if (isComparison(op)) {
    if (!lp || !rp || l->type.dtype != r->type.dtype) {
      reportAt(DiagId::err_sema_ptr_compare, at, {ls, rs});
      return std::nullopt;
    }
    std::optional<ir::Shape> s = broadcast(l->type.shape, r->type.shape, at);
    if (!s)
      return std::nullopt;
    return BinaryTyping{ir::Type::tile(DType::Bool, *s), ir::Type::ptrTile(l->type.dtype, *s)};
  }
  reportAt(DiagId::err_sema_ptr_operator, at, {std::string(binaryOpSpelling(op)), ls, rs});
  return std::nullopt;
}

// a @ b (rule 11): [M, K] @ [K, N] -> [M, N], or batched with the batch axis
// trailing, as in the original (lib/lang/ast.cc): [M, K, B] @ [K, N, B] -> [M, N, B];
// operands are cast to promote(a, b); the result is f32 for f16/bf16/f32,
// i32 for i8, f64 for f64; other dtypes are errors.
std::optional<BinaryTyping> Sema::typeMatMul(Expr *l, Expr *r, const Expr *at) {
  const ir::Type &a = l->type, &b = r->type;
  if (a.isPtr || b.isPtr) {
    reportAt(DiagId::err_sema_ptr_operator, at, {"@", typeStr(l), typeStr(r)});
    return std::nullopt;
  }
  size_t rank = a.rank();
  if ((rank != 2 && rank != 3) || b.rank() != rank) {
    reportAt(DiagId::err_sema_matmul_rank, at, {typeStr(l), typeStr(r)});
    return std::nullopt;
  }
  if (a.shape[1] != b.shape[0]) {
    reportAt(DiagId::err_sema_matmul_inner, at,
             {typeStr(l), typeStr(r), std::to_string(a.shape[1]), std::to_string(b.shape[0])});
    return std::nullopt;
  }
  if (rank == 3 && a.shape[2] != b.shape[2]) {
    reportAt(DiagId::err_sema_matmul_batch, at, {typeStr(l), typeStr(r)});
    return std::nullopt;
  }
  DType d = promote(a.dtype, b.dtype);
  std::optional<DType> res;
  if (d == DType::F16 || d == DType::BF16 || d == DType::F32)
    res = DType::F32;
  else if (d == DType::I8)
    res = DType::I32;
  else if (d == DType::F64)
    res = DType::F64;
  if (!res) {
    reportAt(DiagId::err_sema_matmul_dtype, at, {std::string(langName(d))});
    return std::nullopt;
  }
  ir::Shape s =
      rank == 2 ? ir::Shape{a.shape[0], b.shape[1]} : ir::Shape{a.shape[0], b.shape[1], a.shape[2]};
  return BinaryTyping{ir::Type::tile(*res, s), ir::Type::tile(d, s)};
}

//===----------------------------------------------------------------------===//
// Assignment
//===----------------------------------------------------------------------===//

// The destination of an assignment: a variable, `*p` or `*?(m) p`.
std::optional<ir::Type> Sema::checkLValue(Expr *lhs, bool isRead) {
  if (!lhs)
    return std::nullopt;
  switch (lhs->kind) {
  case ExprKind::Ident:
    if (!checkIdent(lhs->as<IdentExpr>(), isRead))
      return std::nullopt;
    return lhs->type;
  case ExprKind::MaskedDeref:
    if (!checkMaskedDeref(lhs->as<MaskedDerefExpr>()))
      return std::nullopt;
    return lhs->type;
  case ExprKind::Subscript: return checkSliceLValue(lhs->as<SubscriptExpr>());
  case ExprKind::Unary:
    if (lhs->as<UnaryExpr>()->op == UnaryOp::Deref) {
      if (!checkDeref(lhs->as<UnaryExpr>()))
        return std::nullopt;
      return lhs->type;
    }
    break;
  default: break;
  }
  if (checkExpr(lhs))
    reportAt(DiagId::err_sema_not_assignable, lhs);
  return std::nullopt;
}

// `lhs = rhs`: rhs converted to the destination (rule 13). `lhs op= rhs`:
// `lhs op rhs` computed with the usual promotion (operandType), then
// converted back to the destination, whose shape never changes.
bool Sema::checkAssign(AssignExpr *e) {
  std::optional<ir::Type> dest = checkLValue(e->lhs.get(), /*isRead=*/e->compound.has_value());
  bool rok = checkValue(e->rhs.get());
  const Expr *target = e->lhs.get();
  if (target && target->kind == ExprKind::Subscript) // a slice: the variable stays assigned
    target = target->as<SubscriptExpr>()->base.get();
  const VarDecl *var =
      target && target->kind == ExprKind::Ident ? target->as<IdentExpr>()->decl : nullptr;
  if (var)
    noteAssigned(var);
  if (!dest || !rok)
    return false;
  if (!e->compound) {
    if (!checkConvertible(e->rhs.get(), *dest))
      return false;
  } else {
    std::optional<BinaryTyping> t = typeBinary(*e->compound, e->lhs.get(), e->rhs.get(), e);
    if (!t || !checkTypeConvertible(t->type, *dest, e))
      return false;
    e->operandType = t->operandType;
  }
  e->type = *dest;
  e->typed = true;
  return true;
}

//===----------------------------------------------------------------------===//
// ?:, casts, ranges, subscripts
//===----------------------------------------------------------------------===//

// c ? a : b: c becomes bool (`c != 0` for numbers); the branches promote like
// a binary operator and broadcast with c. `c ? *p : v` is a masked load.
bool Sema::checkConditional(ConditionalExpr *e) {
  bool c = checkValue(e->cond.get()) && convertToBool(e->cond, "?:");
  FlowState before = fn_->flow;
  bool t = checkValue(e->thenExpr.get());
  FlowState afterThen = fn_->flow;
  fn_->flow = before;
  bool f = checkValue(e->elseExpr.get());
  fn_->flow.join(afterThen);
  if (!c || !t || !f)
    return false;
  Expr *cond = e->cond.get(), *a = e->thenExpr.get(), *b = e->elseExpr.get();
  std::optional<ir::Shape> s = broadcast(cond->type.shape, a->type.shape, e);
  if (s)
    s = broadcast(*s, b->type.shape, e);
  if (!s)
    return false;
  if (a->type.isPtr || b->type.isPtr) {
    if (!a->type.isPtr || !b->type.isPtr || a->type.dtype != b->type.dtype) {
      reportAt(DiagId::err_sema_incompatible_branches, e, {typeStr(a), typeStr(b)});
      return false;
    }
    e->type = ir::Type::ptrTile(a->type.dtype, *s);
    e->typed = true;
    return true;
  }
  if (cond->constant && a->constant && b->constant)
    return setConstant(e, widenConst(constTruth(*cond->constant) ? *a->constant : *b->constant,
                                     *a->constant, *b->constant));
  std::optional<DType> d = promoteOperands({a, b});
  if (!d)
    return false;
  e->isMaskedLoad = a->kind == ExprKind::Unary && a->as<UnaryExpr>()->op == UnaryOp::Deref;
  e->type = ir::Type::tile(*d, *s);
  e->typed = true;
  return true;
}

// (T)e and (T[shape])e: numbers convert to numbers, pointers to pointers; the
// shape form broadcasts like an initialiser. A cast makes a typed value, not a
// constant: `(int8)5 + 1000` is an int8 tile meeting the constant 1000.
bool Sema::checkCast(CastExpr *e) {
  std::optional<ir::Shape> shape = evalShape(e->shape);
  bool ok = checkValue(e->operand.get()) && shape;
  Expr *o = e->operand.get();
  ir::Type dest{e->to.dtype, e->to.isPtr, shape && !e->shape.empty() ? *shape : ir::Shape{}};
  std::string destName = e->to.isVoid ? "void" : dest.langStr();
  if (ok && (e->to.isVoid || o->type.isPtr != e->to.isPtr)) {
    reportAt(DiagId::err_sema_cast_invalid, e, {typeStr(o), destName});
    return false;
  }
  if (!ok)
    return false;
  if (e->shape.empty())
    dest.shape = o->type.shape;
  else if (!checkTypeConvertible(dest.isPtr ? o->type.withDType(dest.dtype) : o->type, dest, o))
    return false;
  if (o->constant && !dest.isPtr && !convertConst(*o->constant, dest.dtype)) {
    reportAt(DiagId::err_sema_const_float_to_int, o,
             {constStr(*o->constant), std::string(langName(dest.dtype))});
    return false;
  }
  e->type = dest;
  e->typed = true;
  return true;
}

// bitcast<T>(e): reinterprets the bits of a number of the same width;
// bitcast<T[d0, ...]>(e) (the original's tile-typed form) also broadcasts the
// operand to that shape, as the cast (T[d0, ...])e does.
bool Sema::checkBitcast(BitcastExpr *e) {
  Expr *o = e->operand.get();
  std::optional<ir::Shape> shape = evalShape(e->shape);
  if (!checkValue(o) || !shape || !checkMaterializable(o))
    return false;
  if (e->to.isVoid || e->to.isPtr || o->type.isPtr) {
    std::string to = e->to.isVoid ? "void" : ir::Type{e->to.dtype, e->to.isPtr, {}}.langStr();
    reportAt(DiagId::err_sema_cast_invalid, e, {typeStr(o), to});
    return false;
  }
  unsigned from = bitWidth(o->type.dtype), to = bitWidth(e->to.dtype);
  if (from != to) {
    reportAt(DiagId::err_sema_bitcast_width, e,
             {std::string(langName(o->type.dtype)), std::to_string(from),
              std::string(langName(e->to.dtype)), std::to_string(to)});
    return false;
  }
  ir::Shape dest = e->shape.empty() ? o->type.shape : *shape;
  if (!checkTypeConvertible(o->type, ir::Type::tile(o->type.dtype, dest), o))
    return false;
  e->type = ir::Type::tile(e->to.dtype, dest);
  e->typed = true;
  return true;
}

// a ... b: constant ints, b > a, b - a a power of two (at most 2^20), in int32.
bool Sema::checkRange(RangeExpr *e) {
  bool okA = checkValue(e->begin.get()), okB = checkValue(e->end.get());
  if (!okA || !okB)
    return false;
  for (Expr *bound : {e->begin.get(), e->end.get()}) {
    if (!bound->constant || bound->constant->kind != CKind::Int) {
      reportAt(DiagId::err_sema_range_not_const, bound);
      return false;
    }
  }
  __int128 a = e->begin->constant->i, b = e->end->constant->i;
  std::string as = int128Str(a), bs = int128Str(b);
  if (b <= a) {
    reportAt(DiagId::err_sema_range_empty, e, {as, bs});
    return false;
  }
  __int128 n = b - a;
  if (n > kMaxTileElements) {
    reportAt(DiagId::err_sema_tile_too_large, e, {int128Str(n)});
    return false;
  }
  if (!isPow2(n)) {
    reportAt(DiagId::err_sema_range_pow2, e, {as, bs, int128Str(n)});
    return false;
  }
  if (!intFits(a, DType::I32) || !intFits(b - 1, DType::I32)) {
    reportAt(DiagId::err_sema_range_int32, e, {as, bs});
    return false;
  }
  e->start = static_cast<int64_t>(a);
  e->stop = static_cast<int64_t>(b);
  e->type = ir::Type::tile(DType::I32, {static_cast<int64_t>(n)});
  e->typed = true;
  return true;
}

// `a[i, :] = v` (or `op=`): the base is a tile variable, whose unassigned
// lanes stay undefined (it need not be assigned before: a tile declared
// without initialiser is filled slice by slice); items are ':' and indices.
std::optional<ir::Type> Sema::checkSliceLValue(SubscriptExpr *e) {
  Expr *b = e->base.get();
  if (!b || b->kind != ExprKind::Ident) {
    if (b)
      checkExpr(b);
    reportAt(DiagId::err_sema_slice_assign_base, e);
    return std::nullopt;
  }
  for (const SubscriptItem &it : e->items)
    if (it.kind == SubscriptItem::Kind::NewAxis || it.kind == SubscriptItem::Kind::Reduce) {
      report(DiagId::err_sema_slice_assign_item, it.loc,
             {it.kind == SubscriptItem::Kind::NewAxis ? std::string("newaxis")
                                                      : std::string(reduceOpSpelling(it.reduce))});
      return std::nullopt;
    }
  auto *id = b->as<IdentExpr>();
  if (!checkIdent(id, /*isRead=*/false))
    return std::nullopt;
  if (!checkSubscriptItems(e))
    return std::nullopt;
  id->decl->sliceAssigned = true;
  return e->type;
}

// x[:, newaxis], x[+, :], x[i, :]: one non-newaxis item per axis; reductions
// (rule 10) of one kind per subscript (argmax/argmin over one axis); an
// integer index selects a slice and removes its axis.
bool Sema::checkSubscript(SubscriptExpr *e) {
  Expr *b = e->base.get();
  if (!checkValue(b) || !checkMaterializable(b))
    return false;
  return checkSubscriptItems(e);
}

bool Sema::checkSubscriptItems(SubscriptExpr *e) {
  Expr *b = e->base.get();
  bool indicesOk = true;
  for (SubscriptItem &it : e->items) {
    if (it.kind != SubscriptItem::Kind::Index)
      continue;
    Expr *x = it.index.get();
    if (!checkValue(x)) {
      indicesOk = false;
      continue;
    }
    if (!x->type.isScalar() || x->type.isPtr || !isInt(x->type.dtype)) {
      reportAt(DiagId::err_sema_slice_index_type, x, {typeStr(x)});
      indicesOk = false;
    }
  }
  if (!indicesOk)
    return false;
  size_t axisItems = 0;
  for (const SubscriptItem &it : e->items)
    axisItems += it.kind != SubscriptItem::Kind::NewAxis;
  if (axisItems != b->type.rank()) {
    reportAt(DiagId::err_sema_subscript_rank, e,
             {std::to_string(axisItems), axisItems == 1 ? "" : "s", typeStr(b),
              std::to_string(b->type.rank())});
    return false;
  }
  std::optional<DType> d = subscriptDType(e);
  if (!d)
    return false;
  ir::Shape out;
  size_t axis = 0;
  for (const SubscriptItem &it : e->items) {
    switch (it.kind) {
    case SubscriptItem::Kind::NewAxis: out.push_back(1); break;
    case SubscriptItem::Kind::Slice: out.push_back(b->type.shape[axis++]); break;
    case SubscriptItem::Kind::Reduce: ++axis; break;
    case SubscriptItem::Kind::Index: {
      const Expr *x = it.index.get();
      int64_t dim = b->type.shape[axis];
      if (x->constant && x->constant->kind == ConstValue::Kind::Int &&
          (x->constant->i < 0 || x->constant->i >= dim)) {
        std::string name = b->kind == ExprKind::Ident ? b->as<IdentExpr>()->name : "the tile";
        reportAt(DiagId::warn_sema_slice_index_range, x,
                 {int128Str(x->constant->i), std::to_string(dim), std::to_string(axis), name});
      }
      ++axis;
      break;
    }
    }
  }
  e->type = ir::Type{*d, b->type.isPtr, out};
  e->typed = true;
  return true;
}

// The element dtype of a subscript: the base's, or its reduction's (rule 10).
std::optional<DType> Sema::subscriptDType(const SubscriptExpr *e) {
  const Expr *b = e->base.get();
  std::optional<ReduceOp> op;
  size_t reduceItems = 0;
  for (const SubscriptItem &it : e->items) {
    if (it.kind != SubscriptItem::Kind::Reduce)
      continue;
    if (op && *op != it.reduce) {
      reportAt(DiagId::err_not_supported, e, {"different reductions in one subscript"});
      return std::nullopt;
    }
    op = it.reduce;
    ++reduceItems;
  }
  if (!op)
    return b->type.dtype;
  if (reduceItems > 1 && (*op == ReduceOp::ArgMax || *op == ReduceOp::ArgMin)) {
    reportAt(DiagId::err_not_supported, e,
             {std::string(reduceOpSpelling(*op)) + " over more than one axis"});
    return std::nullopt;
  }
  std::optional<DType> r = b->type.isPtr ? std::nullopt : reduceResult(*op, b->type.dtype);
  if (!r)
    reportAt(DiagId::err_sema_reduce_dtype, e, {std::string(reduceOpSpelling(*op)), typeStr(b)});
  return r;
}

} // namespace tc::sema
