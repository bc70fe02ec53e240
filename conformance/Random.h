//===- Random.h - Deterministic random buffer contents -------------------===//
//
// `"random": {"seed": S, "dist": ...}` fills a buffer with values that are the
// same on every platform and standard library: the only source is
// std::mt19937_64 (its output sequence is fixed by the C++ standard), and the
// transforms below use integer arithmetic and correctly rounded IEEE
// operations only (no std:: distributions, whose algorithms differ between
// standard libraries, and no libm functions). One generator per buffer, seeded
// with S; elements are drawn in row-major order.
//
//   x = the next 64-bit output;  u(x) = (x >> 11) * 2^-53, in [0, 1)
//   uniform(low, high):  low + (high - low) * u(x)                 (default 0, 1)
//   normal(mean, std):   mean + std * (u(x1) + ... + u(x12) - 6)   (default 0, 1)
//        the Irwin-Hall approximation: mean 0, variance 1, bounded to
//        [-6, 6], sums of the 12 53-bit integers taken exactly
//   int(low, high):      low + (x mod r), r = high - low + 1, drawing again
//        while x >= floor((2^64 - 1) / r) * r (no modulo bias); low and high
//        are integers that fit the dtype (float dtypes: |value| <= 2^53)
// Each value is computed in binary64 (int: exactly) and then converted to the
// buffer's dtype by round-to-nearest-even (ints: exact; must fit).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Launch.h"

#include <cstdint>

namespace tc::conf {

struct RandomSpec {
  enum class Dist : uint8_t { Uniform, Normal, Int };
  uint64_t seed = 0;
  Dist dist = Dist::Uniform;
  double low = 0, high = 1;      // uniform
  double mean = 0, stddev = 1;   // normal
  int64_t intLow = 0, intHigh = 0; // int (inclusive)
};

/// Fills every element of `array` (dtype and shape already set) from `spec`.
void fillRandom(HostArray &array, const RandomSpec &spec);

} // namespace tc::conf
