//===- LowerExpr.cpp - AST to tile IR: expressions and assignments --------===//
//
// Every expression lowers to a value of its sema type. Operands are converted
// to the type sema computed for the operator (cast, then splat / expand_dims /
// broadcast); compile-time constants are emitted as one `constant` op directly
// in the type the context needs.
//
//===----------------------------------------------------------------------===//
#include "frontend/LowerImpl.h"
#include "frontend/StackGuard.h"

#include <algorithm>

namespace tc::lower {

using namespace ast;
using ir::OpKind;
using ir::Shape;
using ir::Type;
using ir::Value;

namespace {

Type boolOf(const Shape &shape) {
  return Type{DType::Bool, false, shape};
}

} // namespace

//===----------------------------------------------------------------------===//
// Op creation and conversions
//===----------------------------------------------------------------------===//

ir::Op *FunctionLowerer::emitOp(OpKind k, std::vector<Type> results, std::vector<Value *> operands,
                                std::vector<ir::NamedAttr> attrs, unsigned numRegions) {
  if (++numOps_ > kMaxOpsPerKernel && !tooLarge_) {
    tooLarge_ = true;
    diags_.report(DiagId::err_lower_too_large, kernel_ ? kernel_->loc : SourceLoc{},
                  {kernel_ ? kernel_->name : std::string("?"), std::to_string(kMaxOpsPerKernel)});
  }
  return builder_.create(k, std::move(results), std::move(operands), std::move(attrs), numRegions);
}

Value *FunctionLowerer::emit(OpKind k, std::optional<Type> result, std::vector<Value *> operands,
                             std::vector<ir::NamedAttr> attrs) {
  std::vector<Type> results;
  if (result)
    results.push_back(std::move(*result));
  ir::Op *op = emitOp(k, std::move(results), std::move(operands), std::move(attrs));
  return op->numResults() ? op->result(0) : nullptr;
}

Value *FunctionLowerer::unsupported(SourceLoc loc, const std::string &what, const Type &t) {
  if (loc.valid())
    diags_.report(DiagId::err_lower_unsupported, loc, {what});
  else
    diags_.reportNoLoc(DiagId::err_lower_unsupported, {what});
  return zeroOf(t);
}

Value *FunctionLowerer::emitConstant(const ConstValue &c, const Type &t) {
  if (t.isPtr) {
    // There are no pointer constants: an address is the bitcast of an i64.
    Value *bits = emitConstant(c, Type{DType::I64, false, t.shape});
    return emit(OpKind::Bitcast, t, {bits});
  }
  if (isFloat(t.dtype))
    return emit(OpKind::Constant, t, {}, {{"value", constantFloatValue(c, t.dtype)}});
  return emit(OpKind::Constant, t, {}, {{"value", constantIntBits(c, t.dtype)}});
}

Value *FunctionLowerer::zeroOf(const Type &t) {
  return emitConstant(ConstValue::ofInt(0), t);
}

Value *FunctionLowerer::constBool(bool b, const Shape &shape) {
  return emitConstant(ConstValue::ofBool(b), boolOf(shape));
}

Value *FunctionLowerer::toBool(Value *v) {
  if (v->type().dtype == DType::Bool && !v->type().isPtr)
    return v;
  return emit(OpKind::CmpNe, boolOf(v->type().shape), {v, zeroOf(v->type())});
}

Value *FunctionLowerer::convert(Value *v, const Type &t) {
  if (!v)
    return unsupported({}, "a call that returns nothing, used as a value", t);
  if (v->type() == t)
    return v;
  if (v->type().isPtr != t.isPtr)
    return unsupported({}, "a conversion from " + v->type().str() + " to " + t.str(), t);
  Value *r = v;
  if (r->type().dtype != t.dtype)
    r = emit(OpKind::Cast, r->type().withDType(t.dtype), {r});
  if (r->type().shape == t.shape)
    return r;
  if (r->type().isScalar())
    return emit(OpKind::Splat, t, {r});
  auto shape = ir::broadcastShapes(r->type().shape, t.shape);
  if (r->type().rank() > t.rank() || !shape || *shape != t.shape)
    return unsupported({}, "a broadcast from " + r->type().str() + " to " + t.str(), t);
  while (r->type().rank() < t.rank()) {
    Shape s = r->type().shape;
    s.insert(s.begin(), 1);
    r = emit(OpKind::ExpandDims, r->type().withShape(s), {r}, {{"axis", int64_t{0}}});
  }
  if (r->type().shape != t.shape)
    r = emit(OpKind::Broadcast, t, {r});
  return r;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Value *FunctionLowerer::lowerAs(const Expr *e, const Type &t) {
  if (e->constant) {
    LocScope ls(*this, e->loc);
    return emitConstant(*e->constant, t);
  }
  return convert(lowerExpr(e), t);
}

Value *FunctionLowerer::lowerCond(const Expr *e) {
  LocScope ls(*this, e->loc);
  if (e->constant)
    return emitConstant(*e->constant, boolOf({}));
  return toBool(lowerExpr(e));
}

Value *FunctionLowerer::lowerExpr(const Expr *e) {
  if (Value *v = lowerExprOrVoid(e))
    return v;
  return unsupported(e->loc, "a call that returns nothing, used as a value", e->type);
}

// The thread's stack is nearly used up (StackGuard.h): one error, then every
// deeper step gives up (sema checks the same, so this is a second line).
bool FunctionLowerer::stackExhausted(SourceLoc loc) {
  if (!stackNearlyExhausted())
    return false;
  if (!reportedStack_)
    diags_.report(DiagId::err_nesting_too_deep, loc);
  reportedStack_ = true;
  return true;
}

Value *FunctionLowerer::lowerExprOrVoid(const Expr *e) {
  if (stackExhausted(e->loc))
    return zeroOf(e->type);
  LocScope ls(*this, e->loc);
  if (e->constant)
    return emitConstant(*e->constant, e->type);
  switch (e->kind) {
  case ExprKind::IntLiteral:
  case ExprKind::FloatLiteral:
  case ExprKind::BoolLiteral: return lowerLiteral(e);
  case ExprKind::StringLiteral:
    return unsupported(e->loc, "a string literal outside print and assert", e->type);
  case ExprKind::Ident: {
    const VarDecl *d = e->as<IdentExpr>()->decl;
    if (!d)
      return unsupported(e->loc, "an unresolved name", e->type);
    return valueOf(d);
  }
  case ExprKind::Unary: return lowerUnary(e->as<UnaryExpr>());
  case ExprKind::MaskedDeref: return lowerMaskedDeref(e->as<MaskedDerefExpr>());
  case ExprKind::Binary: return lowerBinary(e->as<BinaryExpr>());
  case ExprKind::Assign: return lowerAssign(e->as<AssignExpr>());
  case ExprKind::Conditional: return lowerConditional(e->as<ConditionalExpr>());
  case ExprKind::Cast: return lowerAs(e->as<CastExpr>()->operand.get(), e->type);
  case ExprKind::Bitcast: {
    const Expr *op = e->as<BitcastExpr>()->operand.get();
    // An integer constant operand is materialised as the integer of the
    // target's width (bitcast<float>(0x7F800000)); a float constant keeps its
    // own type, so its bits are reinterpreted.
    unsigned bits = e->type.isPtr ? 64 : bitWidth(e->type.dtype);
    bool intWidth = bits == 8 || bits == 16 || bits == 32 || bits == 64;
    bool intConst = op->constant && op->constant->kind == ConstValue::Kind::Int;
    Value *v = intConst && intWidth ? lowerAs(op, op->type.withDType(intOfWidth(bits, true)))
                                    : lowerExpr(op);
    if (v && v->type().shape != e->type.shape) // bitcast<T[d0, ...]>: broadcast first
      v = convert(v, v->type().withShape(e->type.shape));
    Type to{e->type.dtype, e->type.isPtr, v->type().shape};
    if (v->type() == to)
      return v;
    return emit(OpKind::Bitcast, to, {v});
  }
  case ExprKind::Range: {
    const RangeExpr *r = e->as<RangeExpr>();
    return emit(OpKind::Range, Type::tile(DType::I32, {r->stop - r->start}), {},
                {{"end", r->stop}, {"start", r->start}});
  }
  case ExprKind::Subscript: return lowerSubscript(e->as<SubscriptExpr>());
  case ExprKind::Call: return lowerCall(e->as<CallExpr>());
  }
  return unsupported(e->loc, "this expression", e->type);
}

Value *FunctionLowerer::lowerLiteral(const Expr *e) {
  // Sema sets `constant` on every literal; this is the fallback.
  switch (e->kind) {
  case ExprKind::IntLiteral:
    return emitConstant(ConstValue::ofInt(static_cast<__int128>(e->as<IntLiteralExpr>()->value)),
                        e->type);
  case ExprKind::FloatLiteral:
    return emitConstant(ConstValue::ofFloat(e->as<FloatLiteralExpr>()->value), e->type);
  case ExprKind::BoolLiteral:
    return emitConstant(ConstValue::ofBool(e->as<BoolLiteralExpr>()->value), e->type);
  default: return unsupported(e->loc, "this literal", e->type);
  }
}

Value *FunctionLowerer::lowerUnary(const UnaryExpr *e) {
  const Expr *operand = e->operand.get();
  switch (e->op) {
  case UnaryOp::Plus: return lowerAs(operand, e->type);
  case UnaryOp::Neg: {
    Value *v = lowerAs(operand, e->type);
    if (v->type().dtype != DType::Bool)
      return emit(OpKind::Neg, v->type(), {v});
    // No i1 negation: negate in int32, convert back (`!= 0`).
    Value *w = convert(v, v->type().withDType(DType::I32));
    return convert(emit(OpKind::Neg, w->type(), {w}), v->type());
  }
  case UnaryOp::BitNot: {
    Value *v = lowerAs(operand, e->type);
    return emit(OpKind::Not, v->type(), {v});
  }
  case UnaryOp::LogicalNot: {
    Value *v = lowerExpr(operand);
    if (v->type().dtype == DType::Bool && !v->type().isPtr)
      return emit(OpKind::Xor, v->type(), {v, constBool(true, v->type().shape)});
    return emit(OpKind::CmpEq, boolOf(v->type().shape), {v, zeroOf(v->type())});
  }
  case UnaryOp::Transpose: {
    Value *v = lowerExpr(operand);
    if (v->type().rank() < 2)
      return v;
    std::vector<int64_t> perm;
    Shape shape;
    for (size_t i = v->type().rank(); i-- > 0;) {
      perm.push_back(static_cast<int64_t>(i));
      shape.push_back(v->type().shape[i]);
    }
    return emit(OpKind::Trans, v->type().withShape(shape), {v}, {{"perm", perm}});
  }
  case UnaryOp::Deref: {
    Value *p = lowerExpr(operand);
    if (!p->type().isPtr)
      return unsupported(e->loc, "a dereference of a non-pointer", e->type);
    return emit(OpKind::Load, Type{p->type().dtype, false, p->type().shape}, {p});
  }
  case UnaryOp::PreInc:
  case UnaryOp::PreDec:
  case UnaryOp::PostInc:
  case UnaryOp::PostDec: return lowerIncDec(e);
  }
  return unsupported(e->loc, "this unary operator", e->type);
}

Value *FunctionLowerer::lowerIncDec(const UnaryExpr *e) {
  LValue lv = lowerLValue(e->operand.get());
  Value *old = readLValue(lv);
  bool inc = e->op == UnaryOp::PreInc || e->op == UnaryOp::PostInc;
  Value *updated;
  if (old->type().isPtr) {
    Value *step =
        emitConstant(ConstValue::ofInt(inc ? 1 : -1), Type{DType::I32, false, old->type().shape});
    updated = emit(OpKind::AddPtr, old->type(), {old, step});
  } else {
    Value *one = emitConstant(ConstValue::ofInt(1), old->type());
    updated = arith(inc ? BinaryOp::Add : BinaryOp::Sub, old, one, e->loc);
  }
  updated = writeLValue(lv, updated);
  bool pre = e->op == UnaryOp::PreInc || e->op == UnaryOp::PreDec;
  return pre ? updated : old;
}

Value *FunctionLowerer::lowerMaskedDeref(const MaskedDerefExpr *e) {
  const Shape &shape = e->type.shape;
  Value *mask = lowerAs(e->mask.get(), boolOf(shape));
  Value *p = lowerExpr(e->pointer.get());
  if (!p->type().isPtr)
    return unsupported(e->loc, "a dereference of a non-pointer", e->type);
  p = convert(p, Type{p->type().dtype, true, shape});
  return emit(OpKind::Load, Type{p->type().dtype, false, shape}, {p, mask});
}

namespace {

/// Arithmetic and shifts have no i1 form: on bools they compute in int32.
bool needsIntForBool(BinaryOp op) {
  switch (op) {
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Rem:
  case BinaryOp::Add:
  case BinaryOp::Sub:
  case BinaryOp::Shl:
  case BinaryOp::Shr: return true;
  default: return false;
  }
}

} // namespace

Value *FunctionLowerer::arith(BinaryOp op, Value *a, Value *b, SourceLoc loc) {
  if (a->type().dtype == DType::Bool && !a->type().isPtr && needsIntForBool(op)) {
    // As C does: both operands to int, compute, convert back (`!= 0`).
    Type wide = a->type().withDType(DType::I32);
    Value *wa = convert(a, wide);
    Value *wb = convert(b, wide);
    return convert(arith(op, wa, wb, loc), a->type());
  }
  auto bin = [&](OpKind k) { return emit(k, a->type(), {a, b}); };
  auto cmp = [&](OpKind k) { return emit(k, boolOf(a->type().shape), {a, b}); };
  switch (op) {
  case BinaryOp::Mul: return bin(OpKind::Mul);
  case BinaryOp::Div: return bin(OpKind::Div);
  case BinaryOp::Rem: return bin(OpKind::Rem);
  case BinaryOp::Add: return bin(OpKind::Add);
  case BinaryOp::Sub: return bin(OpKind::Sub);
  case BinaryOp::Shl: return bin(OpKind::Shl);
  case BinaryOp::Shr: return bin(OpKind::Shr);
  case BinaryOp::BitAnd: return bin(OpKind::And);
  case BinaryOp::BitXor: return bin(OpKind::Xor);
  case BinaryOp::BitOr: return bin(OpKind::Or);
  case BinaryOp::Lt: return cmp(OpKind::CmpLt);
  case BinaryOp::Gt: return cmp(OpKind::CmpGt);
  case BinaryOp::Le: return cmp(OpKind::CmpLe);
  case BinaryOp::Ge: return cmp(OpKind::CmpGe);
  case BinaryOp::Eq: return cmp(OpKind::CmpEq);
  case BinaryOp::Ne: return cmp(OpKind::CmpNe);
  case BinaryOp::LogicalAnd:
  case BinaryOp::LogicalOr:
  case BinaryOp::MatMul: break;
  }
  return unsupported(loc, "this compound operator", a->type());
}

Value *FunctionLowerer::lowerBinary(const BinaryExpr *e) {
  switch (e->op) {
  case BinaryOp::LogicalAnd:
  case BinaryOp::LogicalOr: return lowerLogical(e);
  case BinaryOp::MatMul: return lowerMatMul(e, nullptr);
  case BinaryOp::Add:
  case BinaryOp::Sub:
    if (e->type.isPtr)
      return lowerPointerArith(e);
    break;
  default: break;
  }
  Type t{e->operandType.dtype, e->operandType.isPtr, e->type.shape};
  Value *a = lowerAs(e->lhs.get(), t);
  Value *b = lowerAs(e->rhs.get(), t);
  return arith(e->op, a, b, e->loc);
}

Value *FunctionLowerer::lowerLogical(const BinaryExpr *e) {
  const Shape &shape = e->type.shape;
  auto asBool = [&](const Expr *x) -> Value * {
    if (x->constant)
      return lowerAs(x, boolOf(shape));
    Value *v = lowerExpr(x);
    LocScope ls(*this, x->loc);
    return convert(toBool(v), boolOf(shape));
  };
  bool isAnd = e->op == BinaryOp::LogicalAnd;
  if (!shape.empty()) {
    Value *a = asBool(e->lhs.get());
    Value *b = asBool(e->rhs.get());
    return emit(isAnd ? OpKind::And : OpKind::Or, boolOf(shape), {a, b});
  }
  // Scalars short-circuit: the right operand runs only when it decides.
  Value *a = asBool(e->lhs.get());
  auto rhs = [&] { return asBool(e->rhs.get()); };
  auto decided = [&] { return constBool(!isAnd); };
  return isAnd ? emitIf(a, boolOf({}), rhs, decided) : emitIf(a, boolOf({}), decided, rhs);
}

// `p - i` moves back by i's value: the offset is widened to 64 bits (as its
// signedness says) before it is negated, so that `p - u` with an unsigned or
// narrow u (7 as uint8_t, whose negation in 8 bits is 249) does not move
// forward, and `p - c` with a char c = -128 moves 128 forward.
Value *FunctionLowerer::negatedOffset(Value *i) {
  Value *w = convert(i, i->type().withDType(DType::I64));
  return emit(OpKind::Neg, w->type(), {w});
}

Value *FunctionLowerer::lowerPointerArith(const BinaryExpr *e) {
  bool ptrLeft = e->lhs->type.isPtr;
  if (ptrLeft && e->rhs->type.isPtr)
    return unsupported(e->loc, "a difference of pointers", e->type);
  const Expr *pe = ptrLeft ? e->lhs.get() : e->rhs.get();
  const Expr *ie = ptrLeft ? e->rhs.get() : e->lhs.get();
  Value *p = lowerExpr(pe);
  Value *i = lowerAs(ie, Type{e->operandType.dtype, false, e->type.shape});
  p = convert(p, e->type);
  if (e->op == BinaryOp::Sub)
    i = negatedOffset(i);
  return emit(OpKind::AddPtr, e->type, {p, i});
}

// The IR's `dot` takes the batch axis first ([B, M, K] x [B, K, N]); the
// language's trails ([M, K, B] @ [K, N, B] -> [M, N, B]), so a 3-D product
// moves it to the front and the result's back with `trans`.
Value *FunctionLowerer::lowerMatMul(const BinaryExpr *e, Value *acc) {
  DType t = e->operandType.dtype;
  Value *a = lowerAs(e->lhs.get(), Type{t, false, e->lhs->type.shape});
  Value *b = lowerAs(e->rhs.get(), Type{t, false, e->rhs->type.shape});
  if (!acc)
    acc = zeroOf(e->type);
  if (e->type.rank() != 3)
    return emit(OpKind::Dot, e->type, {a, b, acc});
  auto permute = [&](Value *v, std::vector<int64_t> perm) {
    const Shape &s = v->type().shape;
    Shape to{s[perm[0]], s[perm[1]], s[perm[2]]};
    return emit(OpKind::Trans, v->type().withShape(to), {v}, {{"perm", perm}});
  };
  Value *acc0 = permute(acc, {2, 0, 1});
  Value *d = emit(OpKind::Dot, acc0->type(), {permute(a, {2, 0, 1}), permute(b, {2, 0, 1}), acc0});
  return permute(d, {1, 2, 0});
}

Value *FunctionLowerer::lowerConditional(const ConditionalExpr *e) {
  const Expr *thenE = e->thenExpr.get();
  if (e->isMaskedLoad && thenE->kind == ExprKind::Unary &&
      thenE->as<UnaryExpr>()->op == UnaryOp::Deref)
    return lowerMaskedLoad(e);
  if (e->cond->type.isTile()) {
    Value *c = lowerAs(e->cond.get(), boolOf(e->type.shape));
    Value *a = lowerAs(thenE, e->type);
    Value *b = lowerAs(e->elseExpr.get(), e->type);
    return emit(OpKind::Select, e->type, {c, a, b});
  }
  Value *c = lowerCond(e->cond.get());
  return emitIf(
      c, e->type, [&] { return lowerAs(thenE, e->type); },
      [&] { return lowerAs(e->elseExpr.get(), e->type); });
}

Value *FunctionLowerer::lowerMaskedLoad(const ConditionalExpr *e) {
  const Shape &shape = e->type.shape;
  Value *mask = lowerAs(e->cond.get(), boolOf(shape));
  const Expr *thenE = e->thenExpr.get();
  Value *p;
  {
    LocScope ls(*this, thenE->loc);
    p = lowerExpr(thenE->as<UnaryExpr>()->operand.get());
  }
  if (!p->type().isPtr)
    return unsupported(thenE->loc, "a dereference of a non-pointer", e->type);
  p = convert(p, Type{p->type().dtype, true, shape});
  DType pointee = p->type().dtype;
  if (pointee == e->type.dtype) {
    Value *other = lowerAs(e->elseExpr.get(), e->type);
    return emit(OpKind::Load, e->type, {p, mask, other});
  }
  // The fallback's type is wider than the pointee: load, convert, then pick.
  Value *loaded = emit(OpKind::Load, Type{pointee, false, shape}, {p, mask});
  Value *other = lowerAs(e->elseExpr.get(), e->type);
  return emit(OpKind::Select, e->type, {mask, convert(loaded, e->type), other});
}

Value *FunctionLowerer::extractSlice(Value *tile, int64_t axis, Value *index,
                                     const std::string &var) {
  Shape s = tile->type().shape;
  s.erase(s.begin() + axis);
  return emit(OpKind::ExtractSlice, tile->type().withShape(s), {tile, index},
              {{"axis", axis}, {"var", var}});
}

Value *FunctionLowerer::insertSlice(Value *tile, int64_t axis, Value *index, Value *value,
                                    const std::string &var) {
  return emit(OpKind::InsertSlice, tile->type(), {tile, index, value},
              {{"axis", axis}, {"var", var}});
}

// Integer indices first (each removes its axis of the base, highest first so
// the others keep their numbers), then newaxis and reductions over what is left.
Value *FunctionLowerer::lowerSubscript(const SubscriptExpr *e) {
  Value *v = lowerExpr(e->base.get());
  std::string var = e->base->kind == ExprKind::Ident ? e->base->as<IdentExpr>()->name : "";
  std::vector<std::pair<int64_t, Value *>> indices;
  {
    int64_t baseAxis = 0;
    for (const SubscriptItem &item : e->items) {
      if (item.kind == SubscriptItem::Kind::Index)
        indices.emplace_back(baseAxis, lowerExpr(item.index.get()));
      baseAxis += item.kind != SubscriptItem::Kind::NewAxis;
    }
  }
  for (auto it = indices.rbegin(); it != indices.rend(); ++it)
    v = extractSlice(v, it->first, it->second, var);
  std::vector<std::pair<int64_t, ReduceOp>> reductions;
  int64_t axis = 0;
  for (const SubscriptItem &item : e->items) {
    if (item.kind == SubscriptItem::Kind::Index)
      continue; // its axis is gone
    if (item.kind == SubscriptItem::Kind::NewAxis) {
      Shape s = v->type().shape;
      s.insert(s.begin() + axis, 1);
      if (v->type().isScalar())
        v = emit(OpKind::Splat, v->type().withShape(s), {v});
      else
        v = emit(OpKind::ExpandDims, v->type().withShape(s), {v}, {{"axis", axis}});
    } else if (item.kind == SubscriptItem::Kind::Reduce) {
      reductions.emplace_back(axis, item.reduce);
    }
    ++axis;
  }
  // A half/bf16 `+` over several axes accumulates in fp32 and rounds once
  // (rule 10), not after each axis: widen first, round in the convert below.
  DType elem = v->type().dtype;
  if ((elem == DType::F16 || elem == DType::BF16) && reductions.size() > 1 &&
      std::all_of(reductions.begin(), reductions.end(),
                  [](const auto &r) { return r.second == ReduceOp::Add; }))
    v = convert(v, v->type().withDType(DType::F32));
  // Highest axis first, so the remaining axis numbers stay valid.
  for (auto it = reductions.rbegin(); it != reductions.rend(); ++it) {
    auto [ax, op] = *it;
    if (ax >= static_cast<int64_t>(v->type().rank()))
      return unsupported(e->loc, "a reduction over a missing axis", e->type);
    Shape s = v->type().shape;
    s.erase(s.begin() + ax);
    Type t{reduceResultDType(op, v->type().dtype), false, s};
    v = emit(OpKind::Reduce, t, {v}, {{"axis", ax}, {"kind", std::string(reduceKindName(op))}});
  }
  return convert(v, e->type);
}

//===----------------------------------------------------------------------===//
// Assignments
//===----------------------------------------------------------------------===//

FunctionLowerer::LValue FunctionLowerer::lowerLValue(const Expr *e) {
  LValue lv;
  lv.type = e->type;
  if (e->kind == ExprKind::Ident && e->as<IdentExpr>()->decl) {
    lv.var = e->as<IdentExpr>()->decl;
    lv.type = lv.var->type;
    return lv;
  }
  LocScope ls(*this, e->loc);
  if (e->kind == ExprKind::Subscript) {
    const SubscriptExpr *s = e->as<SubscriptExpr>();
    if (s->base->kind == ExprKind::Ident && s->base->as<IdentExpr>()->decl) {
      lv.var = s->base->as<IdentExpr>()->decl;
      int64_t axis = 0;
      for (const SubscriptItem &item : s->items) {
        if (item.kind == SubscriptItem::Kind::Index)
          lv.slices.emplace_back(axis, lowerExpr(item.index.get()));
        ++axis;
      }
      return lv; // lv.type: the slice's type (e->type)
    }
  }
  if (e->kind == ExprKind::Unary && e->as<UnaryExpr>()->op == UnaryOp::Deref) {
    Value *p = lowerExpr(e->as<UnaryExpr>()->operand.get());
    if (p->type().isPtr) {
      lv.ptr = p;
      lv.type = Type{p->type().dtype, false, p->type().shape};
      return lv;
    }
  } else if (e->kind == ExprKind::MaskedDeref) {
    const MaskedDerefExpr *m = e->as<MaskedDerefExpr>();
    const Shape &shape = e->type.shape;
    lv.mask = lowerAs(m->mask.get(), boolOf(shape));
    Value *p = lowerExpr(m->pointer.get());
    if (p->type().isPtr) {
      lv.ptr = convert(p, Type{p->type().dtype, true, shape});
      lv.type = Type{p->type().dtype, false, shape};
      return lv;
    }
  }
  unsupported(e->loc, "an assignment to this expression", e->type);
  return lv;
}

Value *FunctionLowerer::readLValue(const LValue &lv) {
  if (lv.var && !lv.slices.empty()) {
    Value *v = valueOf(lv.var);
    for (auto it = lv.slices.rbegin(); it != lv.slices.rend(); ++it)
      v = extractSlice(v, it->first, it->second, lv.var->name);
    return v;
  }
  if (lv.var)
    return valueOf(lv.var);
  if (!lv.ptr)
    return zeroOf(lv.type);
  std::vector<Value *> ops{lv.ptr};
  if (lv.mask)
    ops.push_back(lv.mask);
  return emit(OpKind::Load, lv.type, ops);
}

Value *FunctionLowerer::writeLValue(const LValue &lv, Value *v) {
  v = convert(v, lv.type);
  if (lv.var && !lv.slices.empty()) {
    // Extract down to the innermost slice, then insert back outwards; axis
    // numbers shrink by the indexed axes before them.
    std::vector<Value *> tiles{valueOf(lv.var)};
    std::vector<int64_t> axes;
    for (size_t k = 0; k < lv.slices.size(); ++k) {
      axes.push_back(lv.slices[k].first - static_cast<int64_t>(k));
      if (k + 1 < lv.slices.size())
        tiles.push_back(extractSlice(tiles.back(), axes.back(), lv.slices[k].second, lv.var->name));
    }
    Value *inner = v;
    for (size_t k = lv.slices.size(); k-- > 0;)
      inner = insertSlice(tiles[k], axes[k], lv.slices[k].second, inner, lv.var->name);
    bind(lv.var, inner);
  } else if (lv.var) {
    bind(lv.var, v);
  } else if (lv.ptr) {
    std::vector<Value *> ops{lv.ptr, v};
    if (lv.mask)
      ops.push_back(lv.mask);
    emitOp(OpKind::Store, {}, ops);
  }
  return v;
}

Value *FunctionLowerer::lowerAssign(const AssignExpr *e) {
  LValue lv = lowerLValue(e->lhs.get());
  const Expr *rhs = e->rhs.get();
  if (!e->compound)
    return writeLValue(lv, lowerAs(rhs, lv.type));
  BinaryOp op = *e->compound;
  Value *old = readLValue(lv);
  // `c += a @ b` accumulates into c.
  if (op == BinaryOp::Add && rhs->kind == ExprKind::Binary && !rhs->constant &&
      rhs->as<BinaryExpr>()->op == BinaryOp::MatMul && rhs->type == lv.type)
    return writeLValue(lv, lowerMatMul(rhs->as<BinaryExpr>(), old));
  if (lv.type.isPtr && (op == BinaryOp::Add || op == BinaryOp::Sub)) {
    Value *off = lowerAs(rhs, Type{rhs->type.dtype, false, lv.type.shape});
    if (op == BinaryOp::Sub)
      off = negatedOffset(off);
    return writeLValue(lv, emit(OpKind::AddPtr, old->type(), {old, off}));
  }
  Shape shape = ir::broadcastShapes(lv.type.shape, rhs->type.shape).value_or(lv.type.shape);
  Type t{e->operandType.dtype, false, shape};
  Value *a = convert(old, t);
  Value *b = lowerAs(rhs, t);
  return writeLValue(lv, arith(op, a, b, e->loc));
}

} // namespace tc::lower
