//===- FloatBits.h - Software conversions to fp16 / bf16 ---------------===//
//
// Round-to-nearest-even conversions from double to the 16-bit float formats,
// done in integer arithmetic (no host conversion that might truncate), and
// exact conversions back. Shared by constant folding, the interpreter and the
// conformance runner.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/DType.h"

#include <cstdint>

namespace tc {

/// IEEE binary16 bits of `v` rounded to nearest, ties to even (overflow: inf;
/// NaN stays NaN, quieted, sign and top payload bits kept).
uint16_t doubleToHalfBits(double v);
/// bfloat16 bits of `v`, same rounding.
uint16_t doubleToBF16Bits(double v);
double halfBitsToDouble(uint16_t bits);
double bf16BitsToDouble(uint16_t bits);

/// `v` rounded to float dtype `t` (F16, BF16, F32, F64), returned as a double
/// holding exactly the rounded value.
double roundToFloat(double v, DType t);

} // namespace tc
