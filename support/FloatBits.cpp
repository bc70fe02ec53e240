#include "support/FloatBits.h"

#include <bit>
#include <cassert>
#include <cmath>

namespace tc {

namespace {
struct Format {
  int mantBits, bias, minExp, maxExp;
};
constexpr Format kHalf{10, 15, -14, 15};
constexpr Format kBF16{7, 127, -126, 127};

uint16_t roundDouble(double v, Format f) {
  uint64_t bits = std::bit_cast<uint64_t>(v);
  uint16_t sign = static_cast<uint16_t>((bits >> 63) << 15);
  int exp = static_cast<int>((bits >> 52) & 0x7ff);
  uint64_t mant = bits & ((uint64_t(1) << 52) - 1);
  uint16_t expAllOnes = static_cast<uint16_t>(((1 << (15 - f.mantBits)) - 1) << f.mantBits);
  if (exp == 0x7ff) {
    if (mant == 0)
      return sign | expAllOnes; // infinity
    uint16_t payload = static_cast<uint16_t>(mant >> (52 - f.mantBits));
    return sign | expAllOnes | payload | static_cast<uint16_t>(1 << (f.mantBits - 1));
  }
  if (exp == 0)
    return sign; // double subnormals and zero are far below either format's range
  int e = exp - 1023;
  uint64_t sig = mant | (uint64_t(1) << 52);
  int shift = 52 - f.mantBits + (e < f.minExp ? f.minExp - e : 0);
  if (shift >= 54)
    return sign; // below half of the smallest subnormal
  uint64_t q = sig >> shift;
  uint64_t rem = sig & ((uint64_t(1) << shift) - 1);
  uint64_t half = uint64_t(1) << (shift - 1);
  if (rem > half || (rem == half && (q & 1)))
    ++q;
  if (e < f.minExp) // subnormal (q == 1 << mantBits is the smallest normal: same encoding)
    return sign | static_cast<uint16_t>(q);
  if (q == (uint64_t(1) << (f.mantBits + 1))) {
    q >>= 1;
    ++e;
  }
  if (e > f.maxExp)
    return sign | expAllOnes;
  uint64_t m = q & ((uint64_t(1) << f.mantBits) - 1);
  return sign | static_cast<uint16_t>((uint64_t(e + f.bias) << f.mantBits) | m);
}

double decode(uint16_t bits, Format f) {
  bool neg = bits >> 15;
  int expField = (bits >> f.mantBits) & ((1 << (15 - f.mantBits)) - 1);
  int mant = bits & ((1 << f.mantBits) - 1);
  int expMax = (1 << (15 - f.mantBits)) - 1;
  double r;
  if (expField == expMax) {
    r = mant ? std::nan("") : INFINITY;
  } else if (expField == 0) {
    r = std::ldexp(static_cast<double>(mant), f.minExp - f.mantBits);
  } else {
    r = std::ldexp(static_cast<double>(mant | (1 << f.mantBits)), expField - f.bias - f.mantBits);
  }
  return neg ? -r : r;
}
} // namespace

uint16_t doubleToHalfBits(double v) { return roundDouble(v, kHalf); }
uint16_t doubleToBF16Bits(double v) { return roundDouble(v, kBF16); }
double halfBitsToDouble(uint16_t bits) { return decode(bits, kHalf); }
double bf16BitsToDouble(uint16_t bits) { return decode(bits, kBF16); }

double roundToFloat(double v, DType t) {
  switch (t) {
  case DType::F16: return halfBitsToDouble(doubleToHalfBits(v));
  case DType::BF16: return bf16BitsToDouble(doubleToBF16Bits(v));
  case DType::F32: return static_cast<double>(static_cast<float>(v)); // IEEE cast: RNE
  case DType::F64: return v;
  default: break;
  }
  assert(false && "roundToFloat of a non-float dtype");
  return v;
}

} // namespace tc
