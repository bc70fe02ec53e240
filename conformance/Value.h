//===- Value.h - Element values of suite files ----------------------------===//
//
// How a value written in a suite becomes the bits of an element, and how an
// element is written back in reports. Accepted spellings (conformance/FORMAT.md):
//   - a JSON number: rounded once to nearest even for float dtypes (from the
//     decimal text, so no double rounding through binary64); for integer dtypes
//     it must be an integer (1e3 is; 1.5 is not) that fits the dtype;
//   - "nan" (the canonical quiet NaN: sign 0, top mantissa bit set), "inf",
//     "-inf", "-0.0" (float dtypes only);
//   - raw bits "0x7fc00000": exactly 2 hex digits per byte of the dtype;
//   - for bool: true, false, 0, 1 (and "0x00" / "0x01").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "conformance/Json.h"
#include "support/DType.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tc::conf {

/// Converts a suite value to the bits of dtype `t`. On failure returns nullopt
/// and sets `error` (a message without the path).
std::optional<uint64_t> elementBits(const Json &v, DType t, std::string &error);

/// Whether `bits`, elementBits' result for `v`, is an infinity that a finite
/// JSON number rounded to (beyond float dtype `t`'s range): worth a warning,
/// since "inf" / "-inf" say it on purpose.
bool roundedToInfinity(const Json &v, DType t, uint64_t bits);

/// Decimal text (a JSON number) rounded once, to nearest even, to float dtype `t`.
uint64_t decimalToFloatBits(const std::string &text, DType t);

/// The exact integer value of decimal text (a JSON number, e.g. "1.5e3").
enum class DecimalInt : uint8_t { Ok, NotInteger, OutOfRange };
DecimalInt decimalToInt(const std::string &text, __int128 &value);

/// Bits of the canonical quiet NaN, +inf and -0.0 of float dtype `t`.
uint64_t quietNaNBits(DType t);
uint64_t infBits(DType t, bool negative);
uint64_t negZeroBits(DType t);

} // namespace tc::conf
