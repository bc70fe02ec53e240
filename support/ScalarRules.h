//===- ScalarRules.h - Typed scalar semantics, the one copy ------------------===//
//
// The one implementation of every scalar rule of docs/semantics.md, written
// as inline templates over the element dtype D so that the interpreter's tile
// engine can run them in tight loops (dtype dispatch once per op, never per
// element) and support/Numerics.cpp can expose them on raw bits to the
// constant folder (ir/Fold.cpp), the conformance tools and the tests.
//
// Storage types: bool is a byte holding 0/1, fp16/bf16 are their 16-bit
// patterns, f32/f64 are float/double, integers are the fixed-width C types.
//
// Float arithmetic:
//  - f32 and f64 use the host's IEEE operations (correctly rounded, RNE, no
//    flush-to-zero). Multiplies and adds are separate statements and the
//    project builds without FMA contraction (no -mfma / -march), so a * b + c
//    is rounded twice unless fma() is asked for.
//  - f16 and bf16 decode exactly to double, compute there, and round once.
//    For + - * / and sqrt this double rounding is innocuous (53 >= 2p + 2 for
//    p = 11 and p = 8). fma is not covered by that theorem: the product a * b
//    is exact in double, but a * b + c may not be (bf16's exponent range is
//    f32's), so the sum is computed with round-to-odd (TwoSum, then the last
//    bit forced to 1 when inexact), which makes the final rounding to 16 bits
//    correct (53 >= p + 2).
//  - Transcendentals are computed in double by <cmath> and rounded once.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/DType.h"
#include "support/FloatBits.h"
#include "support/Numerics.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace tc::num {

template <DType D> struct Elem;
template <> struct Elem<DType::Bool> { using S = uint8_t; };
template <> struct Elem<DType::I8> { using S = int8_t; };
template <> struct Elem<DType::I16> { using S = int16_t; };
template <> struct Elem<DType::I32> { using S = int32_t; };
template <> struct Elem<DType::I64> { using S = int64_t; };
template <> struct Elem<DType::U8> { using S = uint8_t; };
template <> struct Elem<DType::U16> { using S = uint16_t; };
template <> struct Elem<DType::U32> { using S = uint32_t; };
template <> struct Elem<DType::U64> { using S = uint64_t; };
template <> struct Elem<DType::F16> { using S = uint16_t; };
template <> struct Elem<DType::BF16> { using S = uint16_t; };
template <> struct Elem<DType::F32> { using S = float; };
template <> struct Elem<DType::F64> { using S = double; };

/// The storage type of one element of dtype D.
template <DType D> using St = typename Elem<D>::S;

template <DType D>
inline constexpr bool kIsFloat =
    D == DType::F16 || D == DType::BF16 || D == DType::F32 || D == DType::F64;
template <DType D> inline constexpr bool kIsBool = D == DType::Bool;
template <DType D> inline constexpr bool kIsInt = !kIsFloat<D> && !kIsBool<D>;
template <DType D>
inline constexpr bool kIsSigned =
    D == DType::I8 || D == DType::I16 || D == DType::I32 || D == DType::I64;
/// Narrow floats stored as 16-bit patterns.
template <DType D> inline constexpr bool kIsHalfLike = D == DType::F16 || D == DType::BF16;
template <DType D> inline constexpr unsigned kBits = kIsBool<D> ? 1 : sizeof(St<D>) * 8;

/// An unsigned type at least 32 bits wide holding St<D>'s bits (no integer
/// promotion to signed int during arithmetic).
template <DType D>
using Wide = std::conditional_t<(sizeof(St<D>) < 4), uint32_t, std::make_unsigned_t<St<D>>>;

//===----------------------------------------------------------------------===//
// fp16 / bf16 <-> float, exact
//===----------------------------------------------------------------------===//

/// fp16 bits to float, exactly (NaN payloads kept). Branch-free: the
/// exponent and mantissa shifted into a float's fields and scaled by 2^112
/// rebias normals and subnormals alike (a power-of-two scaling is exact);
/// inf and NaN get the all-ones exponent.
inline float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t em = static_cast<uint32_t>(h & 0x7fffu) << 13;
  uint32_t finite = std::bit_cast<uint32_t>(std::bit_cast<float>(em) * 0x1p112f);
  uint32_t special = 0u - static_cast<uint32_t>(em >= (0x7c00u << 13)); // inf, NaN: all ones
  uint32_t bits = (finite & ~special) | ((em | 0x7f800000u) & special); // a mask, not a branch
  return std::bit_cast<float>(bits | sign);
}

/// bf16 bits to float, exactly.
inline float bf16ToFloat(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

/// float to fp16 bits, rounded to nearest even, with the results of
/// support/FloatBits.h's doubleToHalfBits (checked over every float): NaN is
/// quieted keeping its sign and top payload bits; overflow gives inf.
/// (F. Giesen's float_to_half_fast3_rtne: subnormal results come from one
/// RNE float addition of a magic number, normal ones from integer rounding.)
inline uint16_t floatToHalf(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  u &= 0x7fffffffu;
  uint32_t o;
  if (u >= 0x47800000u) { // >= 2^16: inf, NaN, or rounds to inf
    o = u > 0x7f800000u ? 0x7e00u | ((u >> 13) & 0x3ffu) : 0x7c00u;
  } else if (u < 0x38800000u) { // < 2^-14: a subnormal or zero result
    constexpr uint32_t kMagic = ((127 - 15) + (23 - 10) + 1) << 23;
    o = std::bit_cast<uint32_t>(std::bit_cast<float>(u) + std::bit_cast<float>(kMagic)) - kMagic;
  } else {
    uint32_t odd = (u >> 13) & 1;
    u += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + odd;
    o = u >> 13;
  }
  return static_cast<uint16_t>(o | sign);
}

/// float to bf16 bits, rounded to nearest even (NaN quieted, payload top kept).
inline uint16_t floatToBF16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1)) >> 16);
}

//===----------------------------------------------------------------------===//
// Decoding and encoding floats
//===----------------------------------------------------------------------===//

/// A float element decoded exactly to double.
template <DType D> inline double toDouble(St<D> v) {
  static_assert(kIsFloat<D>);
  if constexpr (D == DType::F16)
    return halfToFloat(v);
  else if constexpr (D == DType::BF16)
    return bf16ToFloat(v);
  else
    return static_cast<double>(v);
}

/// `d` rounded to nearest even into float dtype D.
template <DType D> inline St<D> fromDouble(double d) {
  static_assert(kIsFloat<D>);
  if constexpr (D == DType::F16)
    return doubleToHalfBits(d);
  else if constexpr (D == DType::BF16)
    return doubleToBF16Bits(d);
  else
    return static_cast<St<D>>(d);
}

/// The value of a float element in the type used for comparisons (exact).
template <DType D> inline auto toCmp(St<D> v) {
  if constexpr (D == DType::F16)
    return halfToFloat(v);
  else if constexpr (D == DType::BF16)
    return bf16ToFloat(v);
  else
    return v;
}

/// The unsigned integer of the same width as a float element.
template <DType D>
using FloatBitsT = std::conditional_t<sizeof(St<D>) == 2, uint16_t,
                                      std::conditional_t<sizeof(St<D>) == 4, uint32_t, uint64_t>>;

template <DType D> inline FloatBitsT<D> bitsOf(St<D> v) {
  return std::bit_cast<FloatBitsT<D>>(v);
}
template <DType D> inline St<D> ofBits(FloatBitsT<D> b) {
  return std::bit_cast<St<D>>(b);
}
template <DType D>
inline constexpr FloatBitsT<D> kSignBit = FloatBitsT<D>(FloatBitsT<D>(1)
                                                        << (sizeof(St<D>) * 8 - 1));

template <DType D> inline bool isNaN(St<D> v) {
  auto c = toCmp<D>(v);
  return c != c;
}

//===----------------------------------------------------------------------===//
// Integer arithmetic (wrap-around)
//===----------------------------------------------------------------------===//

template <DType D> inline St<D> wrapAdd(St<D> a, St<D> b) {
  return static_cast<St<D>>(static_cast<Wide<D>>(a) + static_cast<Wide<D>>(b));
}
template <DType D> inline St<D> wrapSub(St<D> a, St<D> b) {
  return static_cast<St<D>>(static_cast<Wide<D>>(a) - static_cast<Wide<D>>(b));
}
template <DType D> inline St<D> wrapMul(St<D> a, St<D> b) {
  return static_cast<St<D>>(static_cast<Wide<D>>(a) * static_cast<Wide<D>>(b));
}
template <DType D> inline St<D> wrapNeg(St<D> a) {
  return static_cast<St<D>>(Wide<D>(0) - static_cast<Wide<D>>(a));
}

/// Truncating division with the traps of rule 4.
template <DType D> inline num::Status intDivT(St<D> a, St<D> b, St<D> &out) {
  if (b == 0)
    return num::Status::DivisionByZero;
  if constexpr (kIsSigned<D>)
    if (a == std::numeric_limits<St<D>>::min() && b == St<D>(-1))
      return num::Status::DivisionOverflow;
  out = static_cast<St<D>>(a / b);
  return num::Status::Ok;
}

/// Remainder with the dividend's sign; MIN % -1 traps like MIN / -1.
template <DType D> inline num::Status intRemT(St<D> a, St<D> b, St<D> &out) {
  if (b == 0)
    return num::Status::DivisionByZero;
  if constexpr (kIsSigned<D>)
    if (a == std::numeric_limits<St<D>>::min() && b == St<D>(-1))
      return num::Status::DivisionOverflow;
  out = static_cast<St<D>>(a % b);
  return num::Status::Ok;
}

/// Whether shift count `b` (a value of dtype D) is within [0, width).
template <DType D> inline bool shiftInRange(St<D> b) {
  if constexpr (kIsSigned<D>)
    if (b < 0)
      return false;
  return static_cast<uint64_t>(b) < kBits<D>;
}

template <DType D> inline num::Status intShlT(St<D> a, St<D> b, St<D> &out) {
  if (!shiftInRange<D>(b))
    return num::Status::ShiftOutOfRange;
  out = static_cast<St<D>>(static_cast<Wide<D>>(a) << static_cast<unsigned>(b));
  return num::Status::Ok;
}

/// Arithmetic for signed D (C++20 >> on negative values is arithmetic), logical for unsigned.
template <DType D> inline num::Status intShrT(St<D> a, St<D> b, St<D> &out) {
  if (!shiftInRange<D>(b))
    return num::Status::ShiftOutOfRange;
  out = static_cast<St<D>>(a >> static_cast<unsigned>(b));
  return num::Status::Ok;
}

/// Bitwise complement; logical not for bool.
template <DType D> inline St<D> notT(St<D> a) {
  if constexpr (kIsBool<D>)
    return static_cast<St<D>>(!a);
  else
    return static_cast<St<D>>(~a);
}

/// High half of the double-width product, signed for signed D.
template <DType D> inline St<D> intMulHiT(St<D> a, St<D> b) {
  if constexpr (sizeof(St<D>) == 8) {
    if constexpr (kIsSigned<D>)
      return static_cast<St<D>>((static_cast<__int128>(a) * b) >> 64);
    else
      return static_cast<St<D>>((static_cast<unsigned __int128>(a) * b) >> 64);
  } else {
    if constexpr (kIsSigned<D>)
      return static_cast<St<D>>((static_cast<int64_t>(a) * b) >> kBits<D>);
    else
      return static_cast<St<D>>((static_cast<uint64_t>(a) * b) >> kBits<D>);
  }
}

//===----------------------------------------------------------------------===//
// Float arithmetic
//===----------------------------------------------------------------------===//

template <DType D> inline St<D> floatAddT(St<D> a, St<D> b) {
  if constexpr (kIsHalfLike<D>)
    return fromDouble<D>(toDouble<D>(a) + toDouble<D>(b));
  else
    return a + b;
}
template <DType D> inline St<D> floatSubT(St<D> a, St<D> b) {
  if constexpr (kIsHalfLike<D>)
    return fromDouble<D>(toDouble<D>(a) - toDouble<D>(b));
  else
    return a - b;
}
template <DType D> inline St<D> floatMulT(St<D> a, St<D> b) {
  if constexpr (kIsHalfLike<D>)
    return fromDouble<D>(toDouble<D>(a) * toDouble<D>(b));
  else
    return a * b;
}
template <DType D> inline St<D> floatDivT(St<D> a, St<D> b) {
  if constexpr (kIsHalfLike<D>)
    return fromDouble<D>(toDouble<D>(a) / toDouble<D>(b));
  else
    return a / b;
}
/// C fmod; exact in every format, so computing it in double loses nothing.
template <DType D> inline St<D> floatRemT(St<D> a, St<D> b) {
  if constexpr (kIsHalfLike<D>)
    return fromDouble<D>(std::fmod(toDouble<D>(a), toDouble<D>(b)));
  else
    return std::fmod(a, b);
}
/// Flips the sign bit (NaN included).
template <DType D> inline St<D> floatNegT(St<D> a) {
  return ofBits<D>(static_cast<FloatBitsT<D>>(bitsOf<D>(a) ^ kSignBit<D>));
}
/// Clears the sign bit (NaN included).
template <DType D> inline St<D> floatAbsT(St<D> a) {
  return ofBits<D>(static_cast<FloatBitsT<D>>(bitsOf<D>(a) & ~kSignBit<D>));
}

/// x + y rounded to double with round-to-odd: the result's last bit is forced
/// to 1 when the sum is inexact, so a later rounding to <= 51 bits is correct.
inline double addRoundToOdd(double x, double y) {
  double s = x + y;
  if (!std::isfinite(s))
    return s;
  double bv = s - x; // TwoSum: err = (x - (s - bv)) + (y - bv) exactly
  double err = (x - (s - bv)) + (y - bv);
  if (err == 0)
    return s;
  uint64_t bits = std::bit_cast<uint64_t>(s);
  if ((bits & 1) == 0) { // even: step one ulp toward the exact value
    bool towardZero = (err < 0) != (s < 0);
    bits = towardZero ? bits - 1 : bits + 1;
  }
  return std::bit_cast<double>(bits);
}

/// a * b + c rounded once.
template <DType D> inline St<D> floatFmaT(St<D> a, St<D> b, St<D> c) {
  if constexpr (D == DType::F32)
    return std::fmaf(a, b, c);
  else if constexpr (D == DType::F64)
    return std::fma(a, b, c);
  else // the product of two 16-bit floats is exact in double
    return fromDouble<D>(addRoundToOdd(toDouble<D>(a) * toDouble<D>(b), toDouble<D>(c)));
}

/// maxNum: the non-NaN operand (NaN only if both are); max(-0, +0) is +0.
/// Returns one operand unchanged, or for equal operands the AND of their bits
/// (which is the operand itself unless they are zeros of different signs).
/// Written with selects only, so that loops over it need no branches.
template <DType D> inline St<D> floatMaxT(St<D> a, St<D> b) {
  auto x = toCmp<D>(a), y = toCmp<D>(b);
  St<D> r = y > x ? b : a; // false when either is NaN
  r = x == y ? ofBits<D>(static_cast<FloatBitsT<D>>(bitsOf<D>(a) & bitsOf<D>(b))) : r;
  return x != x ? b : r;
}
/// minNum: the non-NaN operand; min(-0, +0) is -0 (the OR of the bits).
template <DType D> inline St<D> floatMinT(St<D> a, St<D> b) {
  auto x = toCmp<D>(a), y = toCmp<D>(b);
  St<D> r = y < x ? b : a;
  r = x == y ? ofBits<D>(static_cast<FloatBitsT<D>>(bitsOf<D>(a) | bitsOf<D>(b))) : r;
  return x != x ? b : r;
}

/// A test hook of the fuzzer's "ulp-stable" property (docs/fuzz.md): while a
/// MathNudge is installed on a thread, every math result there whose GPU
/// counterpart is only ULP-bounded (`bound` > 0) moves by one ULP: up
/// (`direction` 1), down (-1), or by -1, 0 or +1 ULPs chosen by a generator
/// seeded with `state` (`direction` 0): a GPU that is one ULP off. With
/// `direction` 0, a result moves down with probability 1/`spread`, up with
/// 1/`spread`, and stays otherwise (3: each a third; 16: a few results off,
/// the rest exact, as when one lane's result is off and another's is not). No
/// effect on NaN, inf or a result that would become one, nor on results the
/// GPU's functions return exactly: 0, small integers and powers of two
/// (sin(0), cos(0), exp(0), log2(8), exp2(3), rsqrt(4)).
struct MathNudge {
  uint64_t state = 0;
  int (*bound)(MathFn, DType) = nullptr;
  int direction = 0;
  uint64_t moved = 0; // results moved so far
  uint64_t spread = 3; // with direction 0: one in `spread` down, one up (at least 3)
};
inline thread_local MathNudge *tlsMathNudge = nullptr;

template <DType D> St<D> nudgedMath(MathFn f, St<D> r) {
  MathNudge &n = *tlsMathNudge;
  if (!n.bound || n.bound(f, D) <= 0)
    return r;
  n.state += 0x9e3779b97f4a7c15ull; // splitmix64
  uint64_t z = n.state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  double x = toDouble<D>(r);
  uint64_t spread = std::max<uint64_t>(n.spread, 3), pick = (z ^ (z >> 31)) % spread;
  int step = n.direction != 0 ? (x < 0 ? -n.direction : n.direction) // in magnitude
             : pick == 0      ? -1
             : pick == spread - 1 ? 1
                                  : 0;
  int exponent = 0;
  bool exact = x == 0 || (std::fabs(x) <= 1024 && x == std::trunc(x)) ||
               (std::isfinite(x) && std::frexp(std::fabs(x), &exponent) == 0.5);
  if (step == 0 || !std::isfinite(x) || exact)
    return r;
  FloatBitsT<D> bits = bitsOf<D>(r);
  FloatBitsT<D> sign = bits & kSignBit<D>;
  auto magnitude = static_cast<FloatBitsT<D>>(bits & ~kSignBit<D>);
  St<D> moved = ofBits<D>(static_cast<FloatBitsT<D>>(
      sign | static_cast<FloatBitsT<D>>(step > 0 ? magnitude + 1 : magnitude - 1)));
  if (!std::isfinite(toDouble<D>(moved)))
    return r;
  ++n.moved;
  return moved;
}

/// Transcendental and rounding functions, computed in double and rounded once.
/// floatMathT without the nudge (for a caller that has checked tlsMathNudge
/// once for a whole tile).
template <DType D> inline St<D> floatMathPlainT(num::MathFn f, St<D> a);

template <DType D> inline St<D> floatMathT(num::MathFn f, St<D> a) {
  if (tlsMathNudge) [[unlikely]]
    return f == num::MathFn::Abs ? floatAbsT<D>(a) : nudgedMath<D>(f, floatMathPlainT<D>(f, a));
  return floatMathPlainT<D>(f, a);
}

template <DType D> inline St<D> floatMathPlainT(num::MathFn f, St<D> a) {
  if (f == num::MathFn::Abs)
    return floatAbsT<D>(a);
  double x = toDouble<D>(a), r = 0;
  switch (f) {
  case num::MathFn::Exp: r = std::exp(x); break;
  case num::MathFn::Exp2: r = std::exp2(x); break;
  case num::MathFn::Log: r = std::log(x); break;
  case num::MathFn::Log2: r = std::log2(x); break;
  case num::MathFn::Sqrt: r = std::sqrt(x); break;
  case num::MathFn::Rsqrt: r = 1.0 / std::sqrt(x); break;
  case num::MathFn::Sin: r = std::sin(x); break;
  case num::MathFn::Cos: r = std::cos(x); break;
  case num::MathFn::Abs: r = std::fabs(x); break;
  case num::MathFn::Floor: r = std::floor(x); break;
  case num::MathFn::Ceil: r = std::ceil(x); break;
  }
  return fromDouble<D>(r);
}

/// abs: integers wrap (abs(INT_MIN) == INT_MIN); floats clear the sign bit.
template <DType D> inline St<D> absT(St<D> a) {
  if constexpr (kIsFloat<D>)
    return floatAbsT<D>(a);
  else if constexpr (kIsSigned<D>)
    return a < 0 ? wrapNeg<D>(a) : a;
  else
    return a;
}

//===----------------------------------------------------------------------===//
// Comparisons, min/max on any dtype
//===----------------------------------------------------------------------===//

/// Ordered comparisons except ne; integers and bools by value.
template <DType D> inline bool compareT(num::Cmp c, St<D> a, St<D> b) {
  auto x = [&] {
    if constexpr (kIsFloat<D>)
      return toCmp<D>(a);
    else
      return a;
  }();
  auto y = [&] {
    if constexpr (kIsFloat<D>)
      return toCmp<D>(b);
    else
      return b;
  }();
  switch (c) {
  case num::Cmp::Eq: return x == y;
  case num::Cmp::Ne: return x != y;
  case num::Cmp::Lt: return x < y;
  case num::Cmp::Le: return x <= y;
  case num::Cmp::Gt: return x > y;
  case num::Cmp::Ge: return x >= y;
  }
  return false;
}

template <DType D> inline St<D> maxT(St<D> a, St<D> b) {
  if constexpr (kIsFloat<D>)
    return floatMaxT<D>(a, b);
  else
    return a < b ? b : a;
}
template <DType D> inline St<D> minT(St<D> a, St<D> b) {
  if constexpr (kIsFloat<D>)
    return floatMinT<D>(a, b);
  else
    return b < a ? b : a;
}

//===----------------------------------------------------------------------===//
// Conversions (rule 13)
//===----------------------------------------------------------------------===//

/// An integer of up to 64 bits (value `v`) rounded to nearest even into float
/// dtype D, with one rounding: values beyond 2^53 are first rounded to odd.
template <DType D> inline St<D> intToFloat(__int128 v) {
  if constexpr (D == DType::F32 || D == DType::F64) {
    // The host conversions from 64-bit integers round once.
    if (v < 0)
      return static_cast<St<D>>(static_cast<int64_t>(v));
    return static_cast<St<D>>(static_cast<uint64_t>(v));
  } else {
    bool neg = v < 0;
    uint64_t mag = static_cast<uint64_t>(neg ? -v : v); // |v| <= 2^64 - 1 for <= 64-bit sources
    double d;
    if (mag <= (uint64_t(1) << 53)) {
      d = static_cast<double>(mag);
    } else {
      int shift = (64 - std::countl_zero(mag)) - 53;
      uint64_t kept = mag >> shift;
      if (mag & ((uint64_t(1) << shift) - 1))
        kept |= 1; // sticky: round to odd
      d = std::ldexp(static_cast<double>(kept), shift);
    }
    return fromDouble<D>(neg ? -d : d);
  }
}

/// The mathematical value of an integer or bool element.
template <DType D> inline __int128 intOf(St<D> v) {
  return static_cast<__int128>(v);
}

/// Converts one element from dtype F to dtype T as C does; float to int traps
/// on NaN or a truncated value that does not fit.
template <DType F, DType T> inline num::Status convertT(St<F> in, St<T> &out) {
  if constexpr (F == T) {
    out = in;
  } else if constexpr (kIsBool<T>) {
    if constexpr (kIsFloat<F>)
      out = toCmp<F>(in) != 0; // NaN != 0
    else
      out = in != 0;
  } else if constexpr (!kIsFloat<F> && !kIsFloat<T>) {
    out = static_cast<St<T>>(in); // C++20: modular; extends by the source's signedness
  } else if constexpr (!kIsFloat<F>) {
    out = intToFloat<T>(intOf<F>(in));
  } else if constexpr (kIsFloat<T>) {
    if constexpr (F == DType::F64 && T == DType::F32)
      out = static_cast<float>(in);
    else if constexpr (F == DType::F32 && T == DType::F16)
      out = floatToHalf(in);
    else if constexpr (F == DType::F32 && T == DType::BF16)
      out = floatToBF16(in);
    else
      out = fromDouble<T>(toDouble<F>(in));
  } else {
    double d = toDouble<F>(in);
    if (d != d)
      return num::Status::FloatToIntOutOfRange;
    double t = std::trunc(d);
    double lo = kIsSigned<T> ? -std::ldexp(1.0, kBits<T> - 1) : 0.0;
    double hi = std::ldexp(1.0, kIsSigned<T> ? kBits<T> - 1 : kBits<T>); // exclusive
    if (!(t >= lo && t < hi))
      return num::Status::FloatToIntOutOfRange;
    out = static_cast<St<T>>(t);
  }
  return num::Status::Ok;
}

//===----------------------------------------------------------------------===//
// Dispatch helpers
//===----------------------------------------------------------------------===//

/// Calls f(std::integral_constant<DType, D>{}) for the runtime dtype t.
template <typename Fn> decltype(auto) dispatchDType(DType t, Fn &&f) {
  switch (t) {
  case DType::Bool: return f(std::integral_constant<DType, DType::Bool>{});
  case DType::I8: return f(std::integral_constant<DType, DType::I8>{});
  case DType::I16: return f(std::integral_constant<DType, DType::I16>{});
  case DType::I32: return f(std::integral_constant<DType, DType::I32>{});
  case DType::I64: return f(std::integral_constant<DType, DType::I64>{});
  case DType::U8: return f(std::integral_constant<DType, DType::U8>{});
  case DType::U16: return f(std::integral_constant<DType, DType::U16>{});
  case DType::U32: return f(std::integral_constant<DType, DType::U32>{});
  case DType::U64: return f(std::integral_constant<DType, DType::U64>{});
  case DType::F16: return f(std::integral_constant<DType, DType::F16>{});
  case DType::BF16: return f(std::integral_constant<DType, DType::BF16>{});
  case DType::F32: return f(std::integral_constant<DType, DType::F32>{});
  case DType::F64: return f(std::integral_constant<DType, DType::F64>{});
  }
  return f(std::integral_constant<DType, DType::I32>{});
}

/// Element bits (zero-extended) to a storage value and back.
template <DType D> inline St<D> fromRaw(uint64_t bits) {
  if constexpr (kIsBool<D>)
    return static_cast<uint8_t>(bits & 1);
  else if constexpr (kIsFloat<D>)
    return ofBits<D>(static_cast<FloatBitsT<D>>(bits));
  else
    return static_cast<St<D>>(bits);
}
template <DType D> inline uint64_t toRaw(St<D> v) {
  if constexpr (kIsFloat<D>)
    return bitsOf<D>(v);
  else
    return static_cast<uint64_t>(static_cast<std::make_unsigned_t<St<D>>>(v));
}

} // namespace tc::num
