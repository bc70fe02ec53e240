//===- SemaTypes.cpp - Promotion, broadcasting and conversions -----------===//
//
// docs/semantics.md:
// - rule 1 (tile/tile): tc::promote on the dtypes of runtime operands (kernel
//   arguments and variables are 0-d tiles);
// - rule 2 (tile/constant): a constant of a kind <= the other side's kind takes
//   no part and must fit the result (an error otherwise); a constant of a
//   higher kind takes the lowest of int32 < uint32 < int64 < uint64 (ints) or
//   f32 < f64 (floats) that holds it, and both sides promote to that;
// - rule 3: NumPy broadcasting;
// - rule 13: conversions on assignment (C's: ints wrap, with a warning when a
//   constant changes value).
//
//===----------------------------------------------------------------------===//
#include "frontend/SemaInternal.h"
#include "support/FloatBits.h"

#include <cmath>

namespace tc::sema {

using namespace ast;
using CKind = ConstValue::Kind;

std::optional<ir::Shape> Sema::broadcast(const ir::Shape &a, const ir::Shape &b, const Expr *at) {
  int axis = 0;
  std::optional<ir::Shape> r = ir::broadcastShapes(a, b, &axis);
  if (r)
    return r;
  size_t rank = std::max(a.size(), b.size());
  auto dimAt = [&](const ir::Shape &s) {
    size_t pad = rank - s.size();
    return static_cast<size_t>(axis) < pad ? int64_t(1) : s[static_cast<size_t>(axis) - pad];
  };
  reportAt(DiagId::err_sema_incompatible_shapes, at,
           {ir::shapeStr(a), ir::shapeStr(b), std::to_string(axis), std::to_string(dimAt(a)),
            std::to_string(dimAt(b))});
  return std::nullopt;
}

bool Sema::checkMaterializable(Expr *e) {
  if (!e->typed || !e->constant || naturalDType(*e->constant))
    return true;
  reportAt(DiagId::err_sema_const_no_fit, e,
           {constStr(*e->constant), e->constant->i < 0 ? "int64" : "uint64"});
  e->typed = false;
  return false;
}

// Rule 2's check: a constant meeting dtype `t` (its kind <= t's kind) must fit.
// Floats never "do not fit": they round, with a warning on overflow to infinity.
bool Sema::checkConstFitsStrict(Expr *c, DType t) {
  const ConstValue &v = *c->constant;
  if (v.kind == CKind::Bool)
    return true;
  if (isFloat(t)) {
    double d = constToDouble(v);
    if (std::isfinite(d) && std::isinf(roundToFloat(d, t)))
      reportAt(DiagId::warn_sema_const_float_overflow, c, {constStr(v), std::string(langName(t))});
    return true;
  }
  assert(v.kind == CKind::Int && isInt(t) && "kind ordering guarantees an int constant");
  if (isUnsignedInt(t) && v.i < 0) {
    reportAt(DiagId::err_sema_const_negative_unsigned, c, {constStr(v), std::string(langName(t))});
    return false;
  }
  if (!intFits(v.i, t)) {
    reportAt(DiagId::err_sema_const_no_fit, c, {constStr(v), std::string(langName(t))});
    return false;
  }
  return true;
}

std::optional<DType> Sema::promoteOperands(const std::vector<Expr *> &ops) {
  std::optional<DType> t;
  for (Expr *op : ops)
    if (!op->constant)
      t = t ? promote(*t, op->type.dtype) : op->type.dtype;
  // Constants of a higher kind raise the result (rule 2); with no runtime
  // operand at all, the constants' natural types promote by rule 1.
  for (Expr *op : ops) {
    if (!op->constant || (t && constKind(*op->constant) <= kindOf(*t)))
      continue;
    std::optional<DType> d = naturalDType(*op->constant);
    if (!d) {
      checkMaterializable(op);
      return std::nullopt;
    }
    t = t ? promote(*t, *d) : *d;
  }
  bool ok = true;
  for (Expr *op : ops)
    if (op->constant)
      ok = checkConstFitsStrict(op, *t) && ok;
  if (!ok)
    return std::nullopt;
  return t;
}

// Rule 13 for a constant converted to `t` (initialisation, assignment, store,
// argument): C's conversion, with a warning when it changes the value, except
// float -> int out of range (an error: a trap at run time, rule 7). Unlike rule 2
// for operators, a constant that does not fit is not an error here: C wraps.
bool Sema::checkConstConversion(Expr *c, DType t) {
  const ConstValue &v = *c->constant;
  std::optional<ConstValue> r = convertConst(v, t);
  std::string tn(langName(t));
  if (!r) {
    reportAt(DiagId::err_sema_const_float_to_int, c, {constStr(v), tn});
    return false;
  }
  if (t == DType::Bool)
    return true;
  if (isFloat(t)) {
    double d = constToDouble(v);
    if (std::isfinite(d) && std::isinf(r->f))
      reportAt(DiagId::warn_sema_const_float_overflow, c, {constStr(v), tn});
    return true;
  }
  bool changed = v.kind == CKind::Float ? static_cast<double>(r->i) != v.f : r->i != v.i;
  // As clang: a negative value that fits the signed type of the same width
  // (`uint32 mask = -1;`) is the usual way to spell a bit pattern; no warning.
  if (changed && v.kind == CKind::Int && isUnsignedInt(t) && v.i < 0 &&
      intFits(v.i, intOfWidth(bitWidth(t), /*isSigned=*/true)))
    changed = false;
  if (changed)
    reportAt(DiagId::warn_sema_const_conversion, c, {constStr(v), tn, constStr(*r)});
  return true;
}

bool Sema::checkTypeConvertible(const ir::Type &src, const ir::Type &dest, const Expr *at) {
  if (src.isPtr != dest.isPtr || (dest.isPtr && src.dtype != dest.dtype)) {
    reportAt(DiagId::err_sema_cannot_convert, at, {src.langStr(), dest.langStr()});
    return false;
  }
  std::optional<ir::Shape> b = ir::broadcastShapes(src.shape, dest.shape);
  if (!b || *b != dest.shape) {
    reportAt(DiagId::err_sema_cannot_broadcast_to, at,
             {src.langStr(), dest.langStr(), ir::shapeStr(src.shape), ir::shapeStr(dest.shape)});
    return false;
  }
  return true;
}

bool Sema::checkConvertible(Expr *src, const ir::Type &dest) {
  if (!src->typed || !checkTypeConvertible(src->type, dest, src))
    return false;
  if (src->constant)
    return checkConstConversion(src, dest.dtype);
  return true;
}

// A numeric condition of ?:, select/where or assert becomes `e != 0` (a typed
// BinaryExpr the lowering sees like any comparison); bool stays as it is.
bool Sema::convertToBool(ExprPtr &e, const char *what) {
  if (!e || !e->typed)
    return false;
  if (e->type.isPtr) {
    reportAt(DiagId::err_sema_bad_condition, e.get(), {what, typeStr(e.get())});
    return false;
  }
  if (e->type.dtype == DType::Bool)
    return checkMaterializable(e.get());
  SourceLoc loc = e->loc;
  uint32_t len = e->length;
  auto zero = std::make_unique<IntLiteralExpr>(loc);
  zero->spelling = "0";
  zero->length = len;
  auto ne = std::make_unique<BinaryExpr>(loc, BinaryOp::Ne, std::move(e), std::move(zero));
  ne->length = len;
  e = std::move(ne);
  return checkExpr(e.get());
}

} // namespace tc::sema
