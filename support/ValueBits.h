//===- ValueBits.h - Element values <-> raw bits of a dtype -----------===//
//
// Values travel as raw bits of their dtype (zero-extended into uint64_t; bool
// is 0/1; fp16/bf16 their 16-bit patterns). These four functions decode and
// encode such bits; the interpreter's numerics (support/Numerics.h) and the host
// API (runtime/) both use them.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/DType.h"

#include <cstdint>

namespace tc::num {

/// Sign-extends (signed dtypes) or zero-extends (unsigned, bool) `bits` of dtype `t` to int64 /
/// uint64 semantics: the mathematical value of an integer as __int128.
__int128 intValue(DType t, uint64_t bits);
/// The bits of `v` wrapped to integer dtype `t` (two's complement truncation).
uint64_t wrapInt(DType t, __int128 v);

/// Float bits of dtype `t` decoded exactly to a double.
double floatValue(DType t, uint64_t bits);
/// `v` rounded to nearest even into float dtype `t` (no flush-to-zero; NaN stays NaN).
uint64_t floatBits(DType t, double v);

} // namespace tc::num
