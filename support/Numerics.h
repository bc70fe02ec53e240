//===- Numerics.h - Scalar semantics on raw bits ----------------------------===//
//
// Small pure functions, one per rule of docs/semantics.md: the rules the
// interpreter lifts over tiles (support/ScalarRules.h), on one scalar, for the
// constant folder and the tools. Values travel as raw bits of their dtype
// (zero-extended into uint64_t; bool is 0/1; fp16/bf16 their 16-bit patterns)
// so every function is defined for every dtype without host-type shortcuts.
// Each function is unit-tested against independently derived tables.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/DType.h"
#include "support/ValueBits.h"

#include <cstdint>

namespace tc::num {

/// Outcome of an operation that may trap.
enum class Status : uint8_t { Ok, DivisionByZero, DivisionOverflow, ShiftOutOfRange, FloatToIntOutOfRange };

/// Converts `bits` of dtype `from` to dtype `to` as C does (rule 13): ints wrap
/// or extend by the source's signedness; to float: round to nearest even; float
/// to int: truncate toward zero, and NaN or a value that does not fit is
/// FloatToIntOutOfRange; to bool: != 0 (NaN != 0 is true).
Status convert(DType from, uint64_t bits, DType to, uint64_t &out);

/// Integer arithmetic of dtype `t` (wrap-around).
uint64_t intAdd(DType t, uint64_t a, uint64_t b);
uint64_t intSub(DType t, uint64_t a, uint64_t b);
uint64_t intMul(DType t, uint64_t a, uint64_t b);
uint64_t intNeg(DType t, uint64_t a);
/// Truncating division; DivisionByZero; DivisionOverflow for MIN / -1 of signed types.
Status intDiv(DType t, uint64_t a, uint64_t b, uint64_t &out);
/// Remainder with the dividend's sign; same traps as intDiv (MIN % -1 traps too).
Status intRem(DType t, uint64_t a, uint64_t b, uint64_t &out);
/// Shifts; the count is the value of `b` in dtype t; count < 0 or >= width traps.
/// shr is arithmetic for signed dtypes, logical for unsigned.
Status intShl(DType t, uint64_t a, uint64_t b, uint64_t &out);
Status intShr(DType t, uint64_t a, uint64_t b, uint64_t &out);
/// High half of the double-width product (as unsigned for unsigned dtypes, signed for signed).
uint64_t intMulHi(DType t, uint64_t a, uint64_t b);

/// Bitwise and, or, xor, not of an integer or bool dtype (not of bool is logical).
uint64_t bitAnd(DType t, uint64_t a, uint64_t b);
uint64_t bitOr(DType t, uint64_t a, uint64_t b);
uint64_t bitXor(DType t, uint64_t a, uint64_t b);
uint64_t bitNot(DType t, uint64_t a);
/// abs of a non-bool dtype: integers wrap (abs(MIN) == MIN), floats clear the sign bit.
uint64_t absOf(DType t, uint64_t a);
/// min / max of any dtype: integers and bool by value, floats as floatMin / floatMax.
uint64_t minOf(DType t, uint64_t a, uint64_t b);
uint64_t maxOf(DType t, uint64_t a, uint64_t b);

/// Float arithmetic of dtype `t`, correctly rounded (fp16/bf16 computed exactly in
/// double then rounded once).
uint64_t floatAdd(DType t, uint64_t a, uint64_t b);
uint64_t floatSub(DType t, uint64_t a, uint64_t b);
uint64_t floatMul(DType t, uint64_t a, uint64_t b);
uint64_t floatDiv(DType t, uint64_t a, uint64_t b);
/// C fmod.
uint64_t floatRem(DType t, uint64_t a, uint64_t b);
/// Flips the sign bit (-(+0.0) is -0.0; NaN's sign flips too).
uint64_t floatNeg(DType t, uint64_t a);
/// a * b + c rounded once.
uint64_t floatFma(DType t, uint64_t a, uint64_t b, uint64_t c);
/// maxNum / minNum: the non-NaN operand; NaN only if both are NaN. max(-0.0, +0.0)
/// is +0.0 and min is -0.0.
uint64_t floatMax(DType t, uint64_t a, uint64_t b);
uint64_t floatMin(DType t, uint64_t a, uint64_t b);

/// Comparisons of two values of dtype t (ints by value, floats ordered except ne:
/// any comparison with NaN is false, except != which is true).
enum class Cmp : uint8_t { Eq, Ne, Lt, Le, Gt, Ge };
bool compare(DType t, Cmp c, uint64_t a, uint64_t b);

/// Transcendental and rounding functions on float dtype t: computed in double
/// and rounded once to t.
enum class MathFn : uint8_t { Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Sin, Cos, Abs, Floor, Ceil };
uint64_t floatMath(DType t, MathFn f, uint64_t a);

} // namespace tc::num
