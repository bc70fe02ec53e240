// Round-to-nearest-even conversions to fp16 / bf16, checked against values
// worked out by hand from the IEEE-754 encodings.
#include "support/FloatBits.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace tc;

TEST(FloatBits, HalfExactValues) {
  EXPECT_EQ(doubleToHalfBits(1.0), 0x3C00);
  EXPECT_EQ(doubleToHalfBits(-2.0), 0xC000);
  EXPECT_EQ(doubleToHalfBits(65504.0), 0x7BFF);         // largest finite
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.0, -14)), 0x0400); // smallest normal
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.0, -24)), 0x0001); // smallest subnormal
  EXPECT_EQ(doubleToHalfBits(0.0), 0x0000);
  EXPECT_EQ(doubleToHalfBits(-0.0), 0x8000);
  EXPECT_EQ(doubleToHalfBits(INFINITY), 0x7C00);
  EXPECT_EQ(doubleToHalfBits(-INFINITY), 0xFC00);
  EXPECT_EQ(doubleToHalfBits(NAN) & 0x7E00, 0x7E00);
}

TEST(FloatBits, HalfTiesToEven) {
  // 1 + 2^-11 is halfway between 1 (0x3C00, even) and 1 + 2^-10 (0x3C01): even wins.
  EXPECT_EQ(doubleToHalfBits(1.0 + std::ldexp(1.0, -11)), 0x3C00);
  // 1 + 3*2^-11 is halfway between 0x3C01 (odd) and 0x3C02 (even).
  EXPECT_EQ(doubleToHalfBits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3C02);
  // Just above the halfway point rounds up.
  EXPECT_EQ(doubleToHalfBits(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)), 0x3C01);
  // 65520 is halfway between 65504 and 65536 (overflow): ties to even = inf.
  EXPECT_EQ(doubleToHalfBits(65520.0), 0x7C00);
  EXPECT_EQ(doubleToHalfBits(65519.0), 0x7BFF);
  // Half of the smallest subnormal rounds to zero (even); a bit more rounds up.
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.0, -25)), 0x0000);
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.5, -25)), 0x0001);
  // 1.5 * 2^-24 is halfway between subnormals 1 and 2: even (2).
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.5, -24)), 0x0002);
  // Rounding a subnormal up into the smallest normal.
  EXPECT_EQ(doubleToHalfBits(std::ldexp(1.0, -14) - std::ldexp(1.0, -26)), 0x0400);
}

TEST(FloatBits, BF16) {
  EXPECT_EQ(doubleToBF16Bits(1.0), 0x3F80);
  // 1 + 2^-8 is halfway between 0x3F80 (even) and 0x3F81: even.
  EXPECT_EQ(doubleToBF16Bits(1.0 + std::ldexp(1.0, -8)), 0x3F80);
  EXPECT_EQ(doubleToBF16Bits(1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82);
  // Truncation would give 0x3F80 here; RNE gives 0x3F81.
  EXPECT_EQ(doubleToBF16Bits(1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -20)), 0x3F81);
  EXPECT_EQ(doubleToBF16Bits(std::ldexp(1.0, -133)), 0x0001); // smallest subnormal
  EXPECT_EQ(doubleToBF16Bits(1e39), 0x7F80);                  // beyond the range of bf16: inf
  EXPECT_EQ(doubleToBF16Bits(-0.0), 0x8000);
}

TEST(FloatBits, DecodeRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    uint16_t bits = static_cast<uint16_t>(b);
    double h = halfBitsToDouble(bits);
    if (!std::isnan(h)) {
      EXPECT_EQ(doubleToHalfBits(h), bits) << b;
    }
    double f = bf16BitsToDouble(bits);
    if (!std::isnan(f)) {
      EXPECT_EQ(doubleToBF16Bits(f), bits) << b;
    }
  }
}

TEST(FloatBits, RoundToFloat) {
  EXPECT_EQ(roundToFloat(0.1, DType::F64), 0.1);
  EXPECT_EQ(roundToFloat(0.1, DType::F32), static_cast<double>(0.1f));
  EXPECT_EQ(roundToFloat(1.0 + std::ldexp(1.0, -11), DType::F16), 1.0);
}
