//===- Fold.cpp - Constant folding ----------------------------------------===//
//
// Replaces ops whose operands are all `constant`s by a `constant`, computing
// exactly what the interpreter computes (docs/semantics.md): integers wrap,
// division truncates, `>>` is arithmetic for signed types, floats are computed
// in double and rounded once to the dtype (exact for + - * / sqrt and fmod,
// since double has more than 2p+2 bits for every narrower format).
//
// Never folded: anything that would trap (division by zero, MIN / -1, shift
// counts out of range, float -> int of NaN or out of range), results that
// are NaN (the text form keeps no NaN payload), min/max of +0.0 and -0.0,
// fma on 16-bit floats (no single rounding available), conversions of
// integers beyond 2^53 to fp16/bf16 (double rounding), and umulhi.
//
// Constants are splats, so elementwise ops fold one scalar; shape ops of a
// constant become a constant of the new shape.
//
//===----------------------------------------------------------------------===//
#include "ir/PassUtil.h"
#include "ir/Passes.h"
#include "support/FloatBits.h"
#include "support/PlantedBugs.h"

#include <cmath>
#include <cstring>
#include <functional>

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

std::optional<Scalar> intResult(DType t, std::optional<uint64_t> bits) {
  if (!bits)
    return std::nullopt;
  return Scalar{t, wrap(*bits, t), 0};
}

std::optional<Scalar> floatResult(DType t, std::optional<double> v) {
  if (!v)
    return std::nullopt;
  return Scalar{t, 0, roundToFloat(*v, t)};
}

//===----------------------------------------------------------------------===//
// Scalar semantics
//===----------------------------------------------------------------------===//

using IntBinFn = std::optional<uint64_t> (*)(DType, int64_t, int64_t);
using FloatBinFn = std::optional<double> (*)(double, double);
using IntUnFn = std::optional<uint64_t> (*)(DType, int64_t);
using FloatUnFn = std::optional<double> (*)(double);

uint64_t u(int64_t v) {
  return static_cast<uint64_t>(v);
}
int64_t minOf(DType t) {
  return isSignedInt(t) ? wrap(uint64_t(1) << (bitWidth(t) - 1), t) : 0;
}

std::optional<uint64_t> intAdd(DType, int64_t a, int64_t b) {
  return u(a) + u(b);
}
std::optional<uint64_t> intSub(DType, int64_t a, int64_t b) {
  if (plantedBug("fold-sub-commute"))
    return u(b) - u(a);
  return u(a) - u(b);
}
std::optional<uint64_t> intMul(DType, int64_t a, int64_t b) {
  return u(a) * u(b);
}
std::optional<uint64_t> intAnd(DType, int64_t a, int64_t b) {
  return u(a) & u(b);
}
std::optional<uint64_t> intOr(DType, int64_t a, int64_t b) {
  return u(a) | u(b);
}
std::optional<uint64_t> intXor(DType, int64_t a, int64_t b) {
  return u(a) ^ u(b);
}

std::optional<uint64_t> intDiv(DType t, int64_t a, int64_t b) {
  if (b == 0 || (isSignedInt(t) && a == minOf(t) && b == -1))
    return std::nullopt;
  return isSignedInt(t) ? u(a / b) : u(a) / u(b);
}

std::optional<uint64_t> intRem(DType t, int64_t a, int64_t b) {
  if (b == 0 || (isSignedInt(t) && a == minOf(t) && b == -1))
    return std::nullopt;
  return isSignedInt(t) ? u(a % b) : u(a) % u(b);
}

bool shiftOk(DType t, int64_t count) {
  return isSignedInt(t) ? count >= 0 && count < static_cast<int64_t>(bitWidth(t))
                        : u(count) < bitWidth(t);
}

std::optional<uint64_t> intShl(DType t, int64_t a, int64_t b) {
  if (!shiftOk(t, b))
    return std::nullopt;
  return u(a) << b;
}

std::optional<uint64_t> intShr(DType t, int64_t a, int64_t b) {
  if (!shiftOk(t, b))
    return std::nullopt;
  return isSignedInt(t) ? u(a >> b) : u(a) >> b;
}

bool intLess(DType t, int64_t a, int64_t b) {
  return isSignedInt(t) ? a < b : u(a) < u(b);
}
std::optional<uint64_t> intMin(DType t, int64_t a, int64_t b) {
  return u(intLess(t, b, a) ? b : a);
}
std::optional<uint64_t> intMax(DType t, int64_t a, int64_t b) {
  return u(intLess(t, a, b) ? b : a);
}

std::optional<double> fAdd(double a, double b) {
  return a + b;
}
std::optional<double> fSub(double a, double b) {
  return a - b;
}
std::optional<double> fMul(double a, double b) {
  return a * b;
}
std::optional<double> fDiv(double a, double b) {
  return a / b;
}
std::optional<double> fRem(double a, double b) {
  return std::fmod(a, b);
}

/// maxNum-style min/max: NaN loses; +0.0 vs -0.0 is left unfolded.
std::optional<double> fMinMax(double a, double b, bool isMax) {
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  if (a == b && std::signbit(a) != std::signbit(b))
    return std::nullopt;
  return (isMax ? a < b : b < a) ? b : a;
}
std::optional<double> fMin(double a, double b) {
  return fMinMax(a, b, false);
}
std::optional<double> fMax(double a, double b) {
  return fMinMax(a, b, true);
}

std::optional<uint64_t> intNeg(DType, int64_t a) {
  return uint64_t(0) - u(a);
}
std::optional<uint64_t> intNot(DType, int64_t a) {
  return ~u(a);
}
std::optional<uint64_t> intAbs(DType t, int64_t a) {
  return isSignedInt(t) && a < 0 ? uint64_t(0) - u(a) : u(a);
}

std::optional<double> fNeg(double a) {
  return -a;
}
std::optional<double> fAbs(double a) {
  return std::fabs(a);
}
std::optional<double> fExp(double a) {
  return std::exp(a);
}
std::optional<double> fExp2(double a) {
  return std::exp2(a);
}
std::optional<double> fLog(double a) {
  return std::log(a);
}
std::optional<double> fLog2(double a) {
  return std::log2(a);
}
std::optional<double> fSqrt(double a) {
  return std::sqrt(a);
}
std::optional<double> fRsqrt(double a) {
  return 1.0 / std::sqrt(a);
}
std::optional<double> fSin(double a) {
  return std::sin(a);
}
std::optional<double> fCos(double a) {
  return std::cos(a);
}
std::optional<double> fFloor(double a) {
  return std::floor(a);
}
std::optional<double> fCeil(double a) {
  return std::ceil(a);
}

//===----------------------------------------------------------------------===//
// Folding one op
//===----------------------------------------------------------------------===//

/// Binary elementwise op; `intFn`/`floatFn` may be null where the dtype class has no meaning.
std::optional<Scalar> foldBinary(const Op &op, IntBinFn intFn, FloatBinFn floatFn, bool boolOk) {
  auto a = scalarOf(op.operand(0)), b = scalarOf(op.operand(1));
  if (!a || !b || a->dtype != b->dtype)
    return std::nullopt;
  DType t = a->dtype;
  if (isFloat(t))
    return floatFn ? floatResult(t, floatFn(a->f, b->f)) : std::nullopt;
  if (isBool(t) && !boolOk)
    return std::nullopt;
  return intFn ? intResult(t, intFn(t, a->i, b->i)) : std::nullopt;
}

std::optional<Scalar> foldUnary(const Op &op, IntUnFn intFn, FloatUnFn floatFn, bool boolOk) {
  auto a = scalarOf(op.operand(0));
  if (!a)
    return std::nullopt;
  DType t = a->dtype;
  if (isFloat(t))
    return floatFn ? floatResult(t, floatFn(a->f)) : std::nullopt;
  if (isBool(t) && !boolOk)
    return std::nullopt;
  return intFn ? intResult(t, intFn(t, a->i)) : std::nullopt;
}

template <typename Pred> std::optional<Scalar> foldCompare(const Op &op, Pred pred) {
  auto a = scalarOf(op.operand(0)), b = scalarOf(op.operand(1));
  if (!a || !b || a->dtype != b->dtype)
    return std::nullopt;
  bool r;
  if (isFloat(a->dtype))
    r = pred(a->f, b->f);
  else if (isSignedInt(a->dtype))
    r = pred(a->i, b->i);
  else
    r = pred(u(a->i), u(b->i));
  return Scalar{DType::Bool, r, 0};
}

/// C conversion of `a` to dtype `to` (docs/semantics.md rule 13).
std::optional<Scalar> convert(const Scalar &a, DType to) {
  DType from = a.dtype;
  if (isBool(to))
    return Scalar{to, isFloat(from) ? a.f != 0 : a.i != 0, 0};
  if (!isFloat(from)) {
    if (!isFloat(to))
      return Scalar{to, wrap(u(a.i), to), 0};
    bool isUnsignedBig = isUnsignedInt(from) && a.i < 0;
    bool beyond53 = isUnsignedBig || a.i > (int64_t(1) << 53) || a.i < -(int64_t(1) << 53);
    if (to == DType::F32)
      return Scalar{to, 0, isUnsignedBig ? double(float(u(a.i))) : double(float(a.i))};
    if (to == DType::F64)
      return Scalar{to, 0, isUnsignedBig ? double(u(a.i)) : double(a.i)};
    if (beyond53)
      return std::nullopt; // int -> double would round before the 16-bit rounding
    return Scalar{to, 0, roundToFloat(double(a.i), to)};
  }
  if (isFloat(to))
    return Scalar{to, 0, roundToFloat(a.f, to)};
  if (std::isnan(a.f))
    return std::nullopt;
  double t = std::trunc(a.f);
  unsigned w = bitWidth(to);
  if (isSignedInt(to)) {
    double lim = std::ldexp(1.0, static_cast<int>(w) - 1);
    if (t < -lim || t >= lim)
      return std::nullopt;
    return Scalar{to, static_cast<int64_t>(t), 0};
  }
  if (t < 0 || t >= std::ldexp(1.0, static_cast<int>(w)))
    return std::nullopt;
  return Scalar{to, wrap(static_cast<uint64_t>(t), to), 0};
}

std::optional<Scalar> foldCast(const Op &op) {
  auto a = scalarOf(op.operand(0));
  if (!a || op.result()->type().isPtr)
    return std::nullopt;
  return convert(*a, op.result()->type().dtype);
}

/// The bits of a float value of dtype t (t's width).
uint64_t floatBits(double v, DType t) {
  if (t == DType::F16)
    return doubleToHalfBits(v);
  if (t == DType::BF16)
    return doubleToBF16Bits(v);
  if (t == DType::F32) {
    float f = static_cast<float>(v);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  }
  uint64_t b;
  std::memcpy(&b, &v, 8);
  return b;
}

double floatFromBits(uint64_t bits, DType t) {
  if (t == DType::F16)
    return halfBitsToDouble(static_cast<uint16_t>(bits));
  if (t == DType::BF16)
    return bf16BitsToDouble(static_cast<uint16_t>(bits));
  if (t == DType::F32) {
    uint32_t b = static_cast<uint32_t>(bits);
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

std::optional<Scalar> foldBitcast(const Op &op) {
  auto a = scalarOf(op.operand(0));
  const Type &rt = op.result()->type();
  if (!a || rt.isPtr || bitWidth(a->dtype) != bitWidth(rt.dtype) || isBool(rt.dtype))
    return std::nullopt;
  if (isFloat(a->dtype) && std::isnan(a->f))
    return std::nullopt;
  uint64_t bits = isFloat(a->dtype) ? floatBits(a->f, a->dtype) : u(a->i);
  if (!isFloat(rt.dtype))
    return Scalar{rt.dtype, wrap(bits, rt.dtype), 0};
  return Scalar{rt.dtype, 0, floatFromBits(bits, rt.dtype)};
}

std::optional<Scalar> foldFma(const Op &op) {
  auto a = scalarOf(op.operand(0)), b = scalarOf(op.operand(1)), c = scalarOf(op.operand(2));
  if (!a || !b || !c)
    return std::nullopt;
  DType t = a->dtype;
  if (t == DType::F32)
    return Scalar{t, 0, std::fmaf(float(a->f), float(b->f), float(c->f))};
  if (t == DType::F64)
    return Scalar{t, 0, std::fma(a->f, b->f, c->f)};
  return std::nullopt;
}

std::optional<Scalar> foldSelect(const Op &op) {
  auto c = scalarOf(op.operand(0));
  if (!c)
    return std::nullopt;
  return scalarOf(op.operand(c->i ? 1 : 2));
}

/// reduce of a splat constant of `n` lanes.
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
  case OpKind::Add: return foldBinary(op, intAdd, fAdd, false);
  case OpKind::Sub: return foldBinary(op, intSub, fSub, false);
  case OpKind::Mul: return foldBinary(op, intMul, fMul, false);
  case OpKind::Div: return foldBinary(op, intDiv, fDiv, false);
  case OpKind::Rem: return foldBinary(op, intRem, fRem, false);
  case OpKind::And: return foldBinary(op, intAnd, nullptr, true);
  case OpKind::Or: return foldBinary(op, intOr, nullptr, true);
  case OpKind::Xor: return foldBinary(op, intXor, nullptr, true);
  case OpKind::Shl: return foldBinary(op, intShl, nullptr, false);
  case OpKind::Shr: return foldBinary(op, intShr, nullptr, false);
  case OpKind::Min: return foldBinary(op, intMin, fMin, true);
  case OpKind::Max: return foldBinary(op, intMax, fMax, true);
  case OpKind::CmpEq: return foldCompare(op, std::equal_to<>());
  case OpKind::CmpNe: return foldCompare(op, std::not_equal_to<>());
  case OpKind::CmpLt: return foldCompare(op, std::less<>());
  case OpKind::CmpLe: return foldCompare(op, std::less_equal<>());
  case OpKind::CmpGt: return foldCompare(op, std::greater<>());
  case OpKind::CmpGe: return foldCompare(op, std::greater_equal<>());
  case OpKind::Neg: return foldUnary(op, intNeg, fNeg, false);
  case OpKind::Not: return foldUnary(op, intNot, nullptr, true);
  case OpKind::Abs: return foldUnary(op, intAbs, fAbs, false);
  case OpKind::Exp: return foldUnary(op, nullptr, fExp, false);
  case OpKind::Exp2: return foldUnary(op, nullptr, fExp2, false);
  case OpKind::Log: return foldUnary(op, nullptr, fLog, false);
  case OpKind::Log2: return foldUnary(op, nullptr, fLog2, false);
  case OpKind::Sqrt: return foldUnary(op, nullptr, fSqrt, false);
  case OpKind::Rsqrt: return foldUnary(op, nullptr, fRsqrt, false);
  case OpKind::Sin: return foldUnary(op, nullptr, fSin, false);
  case OpKind::Cos: return foldUnary(op, nullptr, fCos, false);
  case OpKind::Floor: return foldUnary(op, nullptr, fFloor, false);
  case OpKind::Ceil: return foldUnary(op, nullptr, fCeil, false);
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
  case OpKind::UMulHi:
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
