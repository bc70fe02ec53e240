//===- Fold.cpp - Constant folding ----------------------------------------===//
//
// Replaces ops whose operands are all `constant`s by a `constant`, computing
// exactly what the interpreter computes: each scalar rule of
// docs/semantics.md comes from support/Numerics.h, the same code the
// interpreter's tile engine runs (support/ScalarRules.h). This file only maps
// ops to those rules and decides what may fold.
//
// Never folded: anything that would trap (division by zero, MIN / -1, shift
// counts out of range, float -> int of NaN or out of range), and results
// that are NaN (the text form keeps no NaN payload).
//
// Constants are splats, so elementwise ops fold one scalar; shape ops of a
// constant become a constant of the new shape.
//
//===----------------------------------------------------------------------===//
#include "ir/PassUtil.h"
#include "ir/Passes.h"
#include "support/FloatBits.h"
#include "support/Numerics.h"
#include "support/PlantedBugs.h"
#include "support/ValueBits.h"

#include <cmath>

namespace tc::ir {

namespace {

using passutil::constantValue;

/// A constant operand: ints in their int64 attribute form, floats rounded to the dtype.
struct Scalar {
  DType dtype;
  int64_t i = 0;
  double f = 0;
};

/// Wraps `bits` to integer dtype `t` (sign- or zero-extended to 64 bits).
int64_t wrap(uint64_t bits, DType t) {
  unsigned w = bitWidth(t);
  if (w == 64)
    return static_cast<int64_t>(bits);
  uint64_t mask = (uint64_t(1) << w) - 1;
  bits &= mask;
  if (isSignedInt(t) && (bits >> (w - 1)) & 1)
    bits |= ~mask;
  return static_cast<int64_t>(bits);
}

std::optional<Scalar> scalarOf(const Value *v) {
  const AttrValue *a = constantValue(v);
  if (!a || v->type().isPtr)
    return std::nullopt;
  DType t = v->type().dtype;
  if (isFloat(t)) {
    if (const double *d = std::get_if<double>(a))
      return Scalar{t, 0, roundToFloat(*d, t)};
    return std::nullopt;
  }
  if (const int64_t *i = std::get_if<int64_t>(a))
    return Scalar{t, wrap(static_cast<uint64_t>(*i), t), 0};
  return std::nullopt;
}

/// The attribute holding `s` as a constant of dtype `s.dtype`; none for NaN.
std::optional<AttrValue> attrOf(const Scalar &s) {
  if (!isFloat(s.dtype))
    return AttrValue(wrap(static_cast<uint64_t>(s.i), s.dtype));
  double v = roundToFloat(s.f, s.dtype);
  if (std::isnan(v))
    return std::nullopt;
  return AttrValue(v);
}

uint64_t u(int64_t v) {
  return static_cast<uint64_t>(v);
}

/// `s` as the raw bits of its dtype (zero-extended), the form of support/Numerics.h.
uint64_t bitsOf(const Scalar &s) {
  return isFloat(s.dtype) ? num::floatBits(s.dtype, s.f) : num::wrapInt(s.dtype, s.i);
}

/// The scalar of dtype t whose bits are `bits`.
Scalar scalarOfBits(DType t, uint64_t bits) {
  if (isFloat(t))
    return Scalar{t, 0, num::floatValue(t, bits)};
  return Scalar{t, wrap(bits, t), 0};
}

//===----------------------------------------------------------------------===//
// Ops to the rules of support/Numerics.h
//===----------------------------------------------------------------------===//

/// A rule on raw bits of dtype t; none where it would trap or has no meaning.
using BinRule = std::optional<uint64_t> (*)(DType, uint64_t, uint64_t);
using UnRule = std::optional<uint64_t> (*)(DType, uint64_t);

/// The result of a trapping rule `fn(t, a, b, out)`; none where it traps.
std::optional<uint64_t> untrapped(num::Status (*fn)(DType, uint64_t, uint64_t, uint64_t &), DType t,
                                  uint64_t a, uint64_t b) {
  uint64_t r = 0;
  if (fn(t, a, b, r) != num::Status::Ok)
    return std::nullopt;
  return r;
}

std::optional<uint64_t> addRule(DType t, uint64_t a, uint64_t b) {
  return isFloat(t) ? num::floatAdd(t, a, b) : num::intAdd(t, a, b);
}
std::optional<uint64_t> subRule(DType t, uint64_t a, uint64_t b) {
  if (isFloat(t))
    return num::floatSub(t, a, b);
  if (plantedBug("fold-sub-commute"))
    return num::intSub(t, b, a);
  return num::intSub(t, a, b);
}
std::optional<uint64_t> mulRule(DType t, uint64_t a, uint64_t b) {
  return isFloat(t) ? num::floatMul(t, a, b) : num::intMul(t, a, b);
}
std::optional<uint64_t> divRule(DType t, uint64_t a, uint64_t b) {
  if (isFloat(t))
    return num::floatDiv(t, a, b);
  return untrapped(num::intDiv, t, a, b);
}
std::optional<uint64_t> remRule(DType t, uint64_t a, uint64_t b) {
  if (isFloat(t))
    return num::floatRem(t, a, b);
  return untrapped(num::intRem, t, a, b);
}
std::optional<uint64_t> shlRule(DType t, uint64_t a, uint64_t b) {
  return isFloat(t) ? std::nullopt : untrapped(num::intShl, t, a, b);
}
std::optional<uint64_t> shrRule(DType t, uint64_t a, uint64_t b) {
  return isFloat(t) ? std::nullopt : untrapped(num::intShr, t, a, b);
}
std::optional<uint64_t> mulHiRule(DType t, uint64_t a, uint64_t b) {
  return isFloat(t) ? std::nullopt : std::optional(num::intMulHi(t, a, b));
}
std::optional<uint64_t> bitAndRule(DType t, uint64_t a, uint64_t b) {
  return isFloat(t) ? std::nullopt : std::optional(num::bitAnd(t, a, b));
}
std::optional<uint64_t> bitOrRule(DType t, uint64_t a, uint64_t b) {
  return isFloat(t) ? std::nullopt : std::optional(num::bitOr(t, a, b));
}
std::optional<uint64_t> bitXorRule(DType t, uint64_t a, uint64_t b) {
  return isFloat(t) ? std::nullopt : std::optional(num::bitXor(t, a, b));
}
std::optional<uint64_t> minRule(DType t, uint64_t a, uint64_t b) {
  return num::minOf(t, a, b);
}
std::optional<uint64_t> maxRule(DType t, uint64_t a, uint64_t b) {
  return num::maxOf(t, a, b);
}

std::optional<uint64_t> negRule(DType t, uint64_t a) {
  return isFloat(t) ? num::floatNeg(t, a) : num::intNeg(t, a);
}
std::optional<uint64_t> bitNotRule(DType t, uint64_t a) {
  return isFloat(t) ? std::nullopt : std::optional(num::bitNot(t, a));
}
std::optional<uint64_t> absRule(DType t, uint64_t a) {
  return num::absOf(t, a);
}
template <num::MathFn F> std::optional<uint64_t> mathRule(DType t, uint64_t a) {
  return isFloat(t) ? std::optional(num::floatMath(t, F, a)) : std::nullopt;
}

//===----------------------------------------------------------------------===//
// Folding one op
//===----------------------------------------------------------------------===//

/// Binary elementwise op; bool operands fold only where `boolOk`.
std::optional<Scalar> foldBinary(const Op &op, BinRule rule, bool boolOk) {
  auto a = scalarOf(op.operand(0)), b = scalarOf(op.operand(1));
  if (!a || !b || a->dtype != b->dtype || (isBool(a->dtype) && !boolOk))
    return std::nullopt;
  std::optional<uint64_t> r = rule(a->dtype, bitsOf(*a), bitsOf(*b));
  if (!r)
    return std::nullopt;
  return scalarOfBits(a->dtype, *r);
}

std::optional<Scalar> foldUnary(const Op &op, UnRule rule, bool boolOk) {
  auto a = scalarOf(op.operand(0));
  if (!a || (isBool(a->dtype) && !boolOk))
    return std::nullopt;
  std::optional<uint64_t> r = rule(a->dtype, bitsOf(*a));
  if (!r)
    return std::nullopt;
  return scalarOfBits(a->dtype, *r);
}

std::optional<Scalar> foldCompare(const Op &op, num::Cmp c) {
  auto a = scalarOf(op.operand(0)), b = scalarOf(op.operand(1));
  if (!a || !b || a->dtype != b->dtype)
    return std::nullopt;
  return Scalar{DType::Bool, num::compare(a->dtype, c, bitsOf(*a), bitsOf(*b)), 0};
}

/// C conversion to the result dtype (docs/semantics.md rule 13).
std::optional<Scalar> foldCast(const Op &op) {
  auto a = scalarOf(op.operand(0));
  if (!a || op.result()->type().isPtr)
    return std::nullopt;
  DType to = op.result()->type().dtype;
  uint64_t r;
  if (num::convert(a->dtype, bitsOf(*a), to, r) != num::Status::Ok)
    return std::nullopt;
  return scalarOfBits(to, r);
}

std::optional<Scalar> foldBitcast(const Op &op) {
  auto a = scalarOf(op.operand(0));
  const Type &rt = op.result()->type();
  if (!a || rt.isPtr || bitWidth(a->dtype) != bitWidth(rt.dtype) || isBool(rt.dtype))
    return std::nullopt;
  if (isFloat(a->dtype) && std::isnan(a->f))
    return std::nullopt; // the constant keeps no NaN payload
  return scalarOfBits(rt.dtype, bitsOf(*a));
}

std::optional<Scalar> foldFma(const Op &op) {
  auto a = scalarOf(op.operand(0)), b = scalarOf(op.operand(1)), c = scalarOf(op.operand(2));
  if (!a || !b || !c || !isFloat(a->dtype) || b->dtype != a->dtype || c->dtype != a->dtype)
    return std::nullopt;
  return scalarOfBits(a->dtype, num::floatFma(a->dtype, bitsOf(*a), bitsOf(*b), bitsOf(*c)));
}

std::optional<Scalar> foldSelect(const Op &op) {
  auto c = scalarOf(op.operand(0));
  if (!c)
    return std::nullopt;
  return scalarOf(op.operand(c->i ? 1 : 2));
}

/// A slice of a splat constant is the constant, when the index is a constant
/// inside the axis (an index outside it must still trap).
std::optional<Scalar> foldExtractSlice(const Op &op) {
  auto idx = scalarOf(op.operand(1));
  const AttrValue *axis = op.attr("axis");
  if (!idx || !axis || !std::holds_alternative<int64_t>(*axis))
    return std::nullopt;
  const Shape &shape = op.operand(0)->type().shape;
  int64_t a = std::get<int64_t>(*axis);
  if (a < 0 || static_cast<size_t>(a) >= shape.size())
    return std::nullopt;
  bool negative = isSignedInt(idx->dtype) && idx->i < 0;
  if (negative ||
      static_cast<uint64_t>(idx->i) >= static_cast<uint64_t>(shape[static_cast<size_t>(a)]))
    return std::nullopt;
  return scalarOf(op.operand(0));
}

/// reduce of a splat constant of `n` lanes.
std::optional<Scalar> foldReduce(const Op &op) {
  auto a = scalarOf(op.operand(0));
  const AttrValue *kindAttr = op.attr("kind");
  const AttrValue *axisAttr = op.attr("axis");
  if (!a || !kindAttr || !axisAttr || !std::holds_alternative<std::string>(*kindAttr) ||
      !std::holds_alternative<int64_t>(*axisAttr))
    return std::nullopt;
  const std::string &kind = std::get<std::string>(*kindAttr);
  int64_t axis = std::get<int64_t>(*axisAttr);
  const Shape &shape = op.operand(0)->type().shape;
  if (axis < 0 || static_cast<size_t>(axis) >= shape.size())
    return std::nullopt;
  uint64_t n = static_cast<uint64_t>(shape[static_cast<size_t>(axis)]);
  DType rt = op.result()->type().dtype;
  if (kind == "argmax" || kind == "argmin")
    return isFloat(a->dtype) && std::isnan(a->f) ? std::nullopt
                                                 : std::optional(Scalar{DType::I32, 0, 0});
  if (kind == "max" || kind == "min")
    return a;
  if (isFloat(a->dtype))
    return std::nullopt; // float sums follow the pairwise tree: left to the interpreter
  if (kind == "and" || kind == "or")
    return a;
  if (kind == "xor")
    return Scalar{a->dtype, n % 2 ? a->i : 0, 0};
  if (kind == "add" && !isFloat(rt) && !isBool(rt))
    return Scalar{rt, wrap(u(a->i) * n, rt), 0};
  return std::nullopt;
}

/// The folded value of `op`, if it folds to a constant.
std::optional<Scalar> foldScalar(const Op &op) {
  switch (op.kind()) {
  case OpKind::Add: return foldBinary(op, addRule, false);
  case OpKind::Sub: return foldBinary(op, subRule, false);
  case OpKind::Mul: return foldBinary(op, mulRule, false);
  case OpKind::Div: return foldBinary(op, divRule, false);
  case OpKind::Rem: return foldBinary(op, remRule, false);
  case OpKind::And: return foldBinary(op, bitAndRule, true);
  case OpKind::Or: return foldBinary(op, bitOrRule, true);
  case OpKind::Xor: return foldBinary(op, bitXorRule, true);
  case OpKind::Shl: return foldBinary(op, shlRule, false);
  case OpKind::Shr: return foldBinary(op, shrRule, false);
  case OpKind::Min: return foldBinary(op, minRule, true);
  case OpKind::Max: return foldBinary(op, maxRule, true);
  case OpKind::UMulHi: return foldBinary(op, mulHiRule, false);
  case OpKind::CmpEq: return foldCompare(op, num::Cmp::Eq);
  case OpKind::CmpNe: return foldCompare(op, num::Cmp::Ne);
  case OpKind::CmpLt: return foldCompare(op, num::Cmp::Lt);
  case OpKind::CmpLe: return foldCompare(op, num::Cmp::Le);
  case OpKind::CmpGt: return foldCompare(op, num::Cmp::Gt);
  case OpKind::CmpGe: return foldCompare(op, num::Cmp::Ge);
  case OpKind::Neg: return foldUnary(op, negRule, false);
  case OpKind::Not: return foldUnary(op, bitNotRule, true);
  case OpKind::Abs: return foldUnary(op, absRule, false);
  case OpKind::Exp: return foldUnary(op, mathRule<num::MathFn::Exp>, false);
  case OpKind::Exp2: return foldUnary(op, mathRule<num::MathFn::Exp2>, false);
  case OpKind::Log: return foldUnary(op, mathRule<num::MathFn::Log>, false);
  case OpKind::Log2: return foldUnary(op, mathRule<num::MathFn::Log2>, false);
  case OpKind::Sqrt: return foldUnary(op, mathRule<num::MathFn::Sqrt>, false);
  case OpKind::Rsqrt: return foldUnary(op, mathRule<num::MathFn::Rsqrt>, false);
  case OpKind::Sin: return foldUnary(op, mathRule<num::MathFn::Sin>, false);
  case OpKind::Cos: return foldUnary(op, mathRule<num::MathFn::Cos>, false);
  case OpKind::Floor: return foldUnary(op, mathRule<num::MathFn::Floor>, false);
  case OpKind::Ceil: return foldUnary(op, mathRule<num::MathFn::Ceil>, false);
  case OpKind::Cast: return foldCast(op);
  case OpKind::Bitcast: return foldBitcast(op);
  case OpKind::Fma: return foldFma(op);
  case OpKind::Select: return foldSelect(op);
  case OpKind::Splat:
  case OpKind::Broadcast:
  case OpKind::ExpandDims:
  case OpKind::Reshape:
  case OpKind::Trans: return scalarOf(op.operand(0)); // a splat keeps its value
  case OpKind::ExtractSlice: return foldExtractSlice(op);
  case OpKind::Reduce: return foldReduce(op);
  case OpKind::AddPtr:
  case OpKind::InsertSlice:
  case OpKind::Undef:
  case OpKind::Dot:
  case OpKind::Constant:
  case OpKind::Range:
  case OpKind::GetProgramId:
  case OpKind::GetNumPrograms:
  case OpKind::Load:
  case OpKind::Store:
  case OpKind::AtomicRMW:
  case OpKind::AtomicCas:
  case OpKind::Print:
  case OpKind::Assert:
  case OpKind::DebugBarrier:
  case OpKind::For:
  case OpKind::If:
  case OpKind::While:
  case OpKind::Yield:
  case OpKind::Condition:
  case OpKind::Return: return std::nullopt;
  }
  return std::nullopt;
}

/// Folds ops of one function in print order, so chains fold in one sweep.
class Folder {
public:
  bool run(Block &body);

private:
  void foldBlock(Block &b);
  bool tryFold(Block &b, size_t index);

  passutil::ValueReplacer replacer_;
  std::unordered_set<const Op *> dead_;
};

bool Folder::run(Block &body) {
  foldBlock(body);
  passutil::eraseOps(body, dead_);
  return !dead_.empty();
}

void Folder::foldBlock(Block &b) {
  for (size_t i = 0; i < b.ops().size(); ++i) {
    Op &op = *b.ops()[i];
    replacer_.apply(op);
    for (const auto &region : op.regions())
      foldBlock(*region);
    if (tryFold(b, i))
      ++i; // skip the folded op, now after its constant
  }
}

bool Folder::tryFold(Block &b, size_t index) {
  Op &op = *b.ops()[index];
  if (op.kind() == OpKind::Constant || op.numResults() != 1 || !op.result() ||
      op.result()->type().isPtr)
    return false;
  for (const Value *v : op.operands())
    if (!constantValue(v))
      return false;
  std::optional<Scalar> s = foldScalar(op);
  if (!s || s->dtype != op.result()->type().dtype)
    return false;
  std::optional<AttrValue> value = attrOf(*s);
  if (!value)
    return false;
  Builder builder(&b);
  builder.setInsertionPoint(&b, index);
  builder.setLoc(op.loc());
  Op *c = builder.create(OpKind::Constant, {op.result()->type()}, {}, {{"value", *value}});
  replacer_.replace(op.result(), c->result());
  dead_.insert(&op);
  return true;
}

} // namespace

bool foldConstants(Module &m) {
  bool changed = false;
  for (auto &f : m.functions) {
    Folder folder;
    changed |= folder.run(f->body());
  }
  return changed;
}

} // namespace tc::ir
