//===- ConstEval.cpp - Compile-time constants of Triton-C ----------------===//
//
// Constants are the "scalars" of Triton's semantics page: untyped values (bool, arbitrary-width
// integer held in 128 bits, double). Integer division and modulo of constants
// follow Python (floor division, sign of the divisor), as Triton's semantics page says for
// computations whose inputs are all scalars.
//
//===----------------------------------------------------------------------===//
#include "frontend/SemaInternal.h"
#include "support/FloatBits.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace tc::sema {

using ast::BinaryOp;
using ast::ConstValue;
using ast::UnaryOp;
using Kind = ConstValue::Kind;

namespace {
constexpr __int128 kInt128Max = static_cast<__int128>(~static_cast<unsigned __int128>(0) >> 1);
constexpr __int128 kInt128Min = -kInt128Max - 1;

__int128 intMin(DType t) {
  if (isUnsignedInt(t))
    return 0;
  return -(static_cast<__int128>(1) << (bitWidth(t) - 1));
}

__int128 intMax(DType t) {
  unsigned w = bitWidth(t);
  if (isUnsignedInt(t))
    return (static_cast<__int128>(1) << w) - 1;
  return (static_cast<__int128>(1) << (w - 1)) - 1;
}

/// The integer value of a bool or int constant.
__int128 asInt(const ConstValue &v) { return v.i; }

FoldResult ok(ConstValue v) { return FoldResult{v, FoldIssue::None, {}}; }
FoldResult fail(FoldIssue issue) { return FoldResult{std::nullopt, issue, {}}; }

/// Floor division and Python modulo, with C's results for the warnings.
FoldResult foldDivRem(bool isDiv, __int128 a, __int128 b) {
  if (b == 0)
    return fail(FoldIssue::DivByZero);
  if (a == kInt128Min && b == -1)
    return fail(FoldIssue::Overflow);
  __int128 q = a / b, r = a % b; // C: truncation toward zero
  __int128 fq = q, fr = r;
  if (r != 0 && ((r < 0) != (b < 0))) {
    fq = q - 1;
    fr = r + b;
  }
  FoldResult res = ok(ConstValue::ofInt(isDiv ? fq : fr));
  if (fq != q) {
    res.issue = isDiv ? FoldIssue::FloorDiv : FoldIssue::PythonMod;
    res.cResult = ConstValue::ofInt(isDiv ? q : r);
  }
  return res;
}

FoldResult foldShift(bool left, __int128 a, __int128 n) {
  if (n < 0)
    return fail(FoldIssue::NegativeShift);
  if (!left)
    return ok(ConstValue::ofInt(n >= 127 ? (a < 0 ? -1 : 0) : a >> static_cast<int>(n)));
  if (a == 0)
    return ok(ConstValue::ofInt(0));
  if (n >= 127)
    return fail(FoldIssue::Overflow);
  __int128 r;
  if (__builtin_mul_overflow(a, static_cast<__int128>(1) << static_cast<int>(n), &r))
    return fail(FoldIssue::Overflow);
  return ok(ConstValue::ofInt(r));
}

FoldResult foldIntBinary(BinaryOp op, __int128 a, __int128 b) {
  __int128 r = 0;
  switch (op) {
  case BinaryOp::Add:
    if (__builtin_add_overflow(a, b, &r))
      return fail(FoldIssue::Overflow);
    return ok(ConstValue::ofInt(r));
  case BinaryOp::Sub:
    if (__builtin_sub_overflow(a, b, &r))
      return fail(FoldIssue::Overflow);
    return ok(ConstValue::ofInt(r));
  case BinaryOp::Mul:
    if (__builtin_mul_overflow(a, b, &r))
      return fail(FoldIssue::Overflow);
    return ok(ConstValue::ofInt(r));
  case BinaryOp::Div: return foldDivRem(true, a, b);
  case BinaryOp::Rem: return foldDivRem(false, a, b);
  case BinaryOp::Shl: return foldShift(true, a, b);
  case BinaryOp::Shr: return foldShift(false, a, b);
  case BinaryOp::BitAnd: return ok(ConstValue::ofInt(a & b));
  case BinaryOp::BitOr: return ok(ConstValue::ofInt(a | b));
  case BinaryOp::BitXor: return ok(ConstValue::ofInt(a ^ b));
  case BinaryOp::Lt: return ok(ConstValue::ofBool(a < b));
  case BinaryOp::Gt: return ok(ConstValue::ofBool(a > b));
  case BinaryOp::Le: return ok(ConstValue::ofBool(a <= b));
  case BinaryOp::Ge: return ok(ConstValue::ofBool(a >= b));
  case BinaryOp::Eq: return ok(ConstValue::ofBool(a == b));
  case BinaryOp::Ne: return ok(ConstValue::ofBool(a != b));
  case BinaryOp::LogicalAnd: return ok(ConstValue::ofBool(a != 0 && b != 0));
  case BinaryOp::LogicalOr: return ok(ConstValue::ofBool(a != 0 || b != 0));
  case BinaryOp::MatMul: break;
  }
  assert(false && "MatMul is never folded");
  return fail(FoldIssue::Overflow);
}

FoldResult foldFloatBinary(BinaryOp op, double a, double b) {
  switch (op) {
  case BinaryOp::Add: return ok(ConstValue::ofFloat(a + b));
  case BinaryOp::Sub: return ok(ConstValue::ofFloat(a - b));
  case BinaryOp::Mul: return ok(ConstValue::ofFloat(a * b));
  case BinaryOp::Div:
  case BinaryOp::Rem: {
    double r = op == BinaryOp::Div ? a / b : std::fmod(a, b);
    FoldResult res = ok(ConstValue::ofFloat(r));
    if (b == 0)
      res.issue = FoldIssue::FloatDivByZero;
    return res;
  }
  case BinaryOp::Lt: return ok(ConstValue::ofBool(a < b));
  case BinaryOp::Gt: return ok(ConstValue::ofBool(a > b));
  case BinaryOp::Le: return ok(ConstValue::ofBool(a <= b));
  case BinaryOp::Ge: return ok(ConstValue::ofBool(a >= b));
  case BinaryOp::Eq: return ok(ConstValue::ofBool(a == b));
  case BinaryOp::Ne: return ok(ConstValue::ofBool(a != b));
  case BinaryOp::LogicalAnd: return ok(ConstValue::ofBool(a != 0 && b != 0));
  case BinaryOp::LogicalOr: return ok(ConstValue::ofBool(a != 0 || b != 0));
  case BinaryOp::Shl:
  case BinaryOp::Shr:
  case BinaryOp::BitAnd:
  case BinaryOp::BitOr:
  case BinaryOp::BitXor:
  case BinaryOp::MatMul: break;
  }
  assert(false && "operator not valid on float constants");
  return fail(FoldIssue::Overflow);
}

bool isBitwise(BinaryOp op) {
  return op == BinaryOp::BitAnd || op == BinaryOp::BitOr || op == BinaryOp::BitXor;
}
} // namespace

std::string int128Str(__int128 v) {
  if (v == 0)
    return "0";
  bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

std::string constStr(const ConstValue &v) {
  switch (v.kind) {
  case Kind::Bool: return v.i ? "true" : "false";
  case Kind::Int: return int128Str(v.i);
  case Kind::Float: {
    if (std::isnan(v.f))
      return "nan";
    if (std::isinf(v.f))
      return v.f < 0 ? "-inf" : "inf";
    // As Python prints floats: integral values below 1e16 in fixed notation
    // with ".0" (1000000.0), others in the shortest round-trip form (1e+20, 0.1).
    char buf[64];
    bool integral = std::fabs(v.f) < 1e16 && v.f == std::trunc(v.f);
    auto [p, ec] = integral ? std::to_chars(buf, buf + sizeof buf, v.f, std::chars_format::fixed)
                            : std::to_chars(buf, buf + sizeof buf, v.f);
    std::string s(buf, ec == std::errc() ? p : buf);
    return integral ? s + ".0" : s;
  }
  }
  return "?";
}

DKind constKind(const ConstValue &v) {
  switch (v.kind) {
  case Kind::Bool: return DKind::Bool;
  case Kind::Int: return DKind::Int;
  case Kind::Float: return DKind::Float;
  }
  return DKind::Int;
}

std::optional<DType> naturalDType(const ConstValue &v) {
  switch (v.kind) {
  case Kind::Bool: return DType::Bool;
  case Kind::Int:
    for (DType t : {DType::I32, DType::U32, DType::I64, DType::U64})
      if (intFits(v.i, t))
        return t;
    return std::nullopt;
  case Kind::Float:
    if (std::isfinite(v.f) && std::fabs(v.f) > std::numeric_limits<float>::max())
      return DType::F64;
    return DType::F32;
  }
  return std::nullopt;
}

bool intFits(__int128 v, DType t) {
  if (t == DType::Bool)
    return v == 0 || v == 1;
  assert(isInt(t) && "intFits needs an integer dtype");
  return v >= intMin(t) && v <= intMax(t);
}

__int128 wrapInt(__int128 v, DType t) {
  if (t == DType::Bool)
    return v != 0;
  unsigned w = bitWidth(t);
  unsigned __int128 mask = (static_cast<unsigned __int128>(1) << w) - 1;
  unsigned __int128 u = static_cast<unsigned __int128>(v) & mask;
  if (isSignedInt(t) && (u >> (w - 1)) != 0)
    return static_cast<__int128>(u) - (static_cast<__int128>(1) << w);
  return static_cast<__int128>(u);
}

double constToDouble(const ConstValue &v) {
  return v.kind == Kind::Float ? v.f : static_cast<double>(v.i);
}

bool constTruth(const ConstValue &v) { return v.kind == Kind::Float ? v.f != 0 : v.i != 0; }

std::optional<ConstValue> convertConst(const ConstValue &v, DType t) {
  if (t == DType::Bool)
    return ConstValue::ofBool(constTruth(v));
  if (isFloat(t))
    return ConstValue::ofFloat(roundToFloat(constToDouble(v), t));
  if (v.kind != Kind::Float)
    return ConstValue::ofInt(wrapInt(v.i, t));
  // Float -> int: truncate toward zero; NaN and out-of-range values trap (rule 7).
  if (std::isnan(v.f))
    return std::nullopt;
  double tr = std::trunc(v.f);
  // 2^127 bounds the __int128 conversion; the dtype range check follows.
  if (std::fabs(tr) >= 0x1p127)
    return std::nullopt;
  __int128 i = static_cast<__int128>(tr);
  if (!intFits(i, t))
    return std::nullopt;
  return ConstValue::ofInt(i);
}

FoldResult foldBinary(BinaryOp op, const ConstValue &a, const ConstValue &b) {
  assert(op != BinaryOp::MatMul && "MatMul is never folded");
  if (a.kind == Kind::Float || b.kind == Kind::Float)
    return foldFloatBinary(op, constToDouble(a), constToDouble(b));
  if (a.kind == Kind::Bool && b.kind == Kind::Bool && isBitwise(op)) {
    FoldResult r = foldIntBinary(op, asInt(a), asInt(b));
    r.value = ConstValue::ofBool(r.value->i != 0);
    return r;
  }
  return foldIntBinary(op, asInt(a), asInt(b));
}

FoldResult foldUnary(UnaryOp op, const ConstValue &a) {
  switch (op) {
  case UnaryOp::Neg:
    if (a.kind == Kind::Float)
      return ok(ConstValue::ofFloat(-a.f));
    if (a.i == kInt128Min)
      return fail(FoldIssue::Overflow);
    return ok(ConstValue::ofInt(-a.i));
  case UnaryOp::Plus:
    return a.kind == Kind::Float ? ok(a) : ok(ConstValue::ofInt(a.i));
  case UnaryOp::BitNot:
    assert(a.kind != Kind::Float && "caller rejects ~ on floats");
    if (a.kind == Kind::Bool)
      return ok(ConstValue::ofBool(a.i == 0));
    return ok(ConstValue::ofInt(~a.i));
  case UnaryOp::LogicalNot: return ok(ConstValue::ofBool(!constTruth(a)));
  case UnaryOp::Transpose:
  case UnaryOp::Deref:
  case UnaryOp::PreInc:
  case UnaryOp::PreDec:
  case UnaryOp::PostInc:
  case UnaryOp::PostDec: break;
  }
  assert(false && "operator is never folded");
  return fail(FoldIssue::Overflow);
}

FoldResult foldCdiv(const ConstValue &a, const ConstValue &b) {
  // ceil(a / b) == -floor(-a / b)
  if (b.i == 0)
    return fail(FoldIssue::DivByZero);
  if (a.i == kInt128Min)
    return fail(FoldIssue::Overflow);
  FoldResult r = foldDivRem(true, -a.i, b.i);
  if (!r.value)
    return r;
  return ok(ConstValue::ofInt(-r.value->i));
}

ConstValue foldMinMax(bool isMax, const ConstValue &a, const ConstValue &b) {
  auto pick = [&]() -> const ConstValue & {
    if (a.kind == Kind::Float || b.kind == Kind::Float) {
      double x = constToDouble(a), y = constToDouble(b);
      // maxNum/minNum: a NaN operand loses to a number (rule 6).
      if (std::isnan(x))
        return b;
      if (std::isnan(y))
        return a;
      // -0.0 < +0.0 here (rule 6: max(-0.0, +0.0) is +0.0, min is -0.0), as at
      // run time; == would make the second operand win whatever its sign.
      bool aLess = x == 0 && y == 0 && std::signbit(x) != std::signbit(y) ? std::signbit(x) : x < y;
      return aLess == isMax ? b : a;
    }
    return (a.i < b.i) == isMax ? b : a;
  };
  // The result has the operands' common kind (rule 2): max(3, 2.5) is the float
  // constant 3.0, whichever operand wins.
  return widenConst(pick(), a, b);
}

ConstValue widenConst(const ConstValue &v, const ConstValue &a, const ConstValue &b) {
  if (v.kind != Kind::Float && (a.kind == Kind::Float || b.kind == Kind::Float))
    return ConstValue::ofFloat(constToDouble(v));
  return v;
}

} // namespace tc::sema
