#include "support/ValueBits.h"

#include "support/FloatBits.h"

#include <bit>
#include <cassert>

namespace tc::num {

__int128 intValue(DType t, uint64_t bits) {
  unsigned w = bitWidth(t);
  uint64_t mask = w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
  bits &= mask;
  if (isSignedInt(t) && w < 64 && (bits >> (w - 1)) & 1)
    return static_cast<__int128>(bits) - (static_cast<__int128>(1) << w);
  if (isSignedInt(t))
    return static_cast<__int128>(static_cast<int64_t>(bits));
  return static_cast<__int128>(bits);
}

uint64_t wrapInt(DType t, __int128 v) {
  unsigned w = bitWidth(t);
  uint64_t bits = static_cast<uint64_t>(static_cast<unsigned __int128>(v));
  return w >= 64 ? bits : bits & ((uint64_t(1) << w) - 1);
}

double floatValue(DType t, uint64_t bits) {
  if (t == DType::F16)
    return halfBitsToDouble(static_cast<uint16_t>(bits));
  if (t == DType::BF16)
    return bf16BitsToDouble(static_cast<uint16_t>(bits));
  if (t == DType::F32)
    return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  if (t == DType::F64)
    return std::bit_cast<double>(bits);
  assert(false && "floatValue of a non-float dtype");
  return 0;
}

uint64_t floatBits(DType t, double v) {
  if (t == DType::F16)
    return doubleToHalfBits(v);
  if (t == DType::BF16)
    return doubleToBF16Bits(v);
  if (t == DType::F32)
    return std::bit_cast<uint32_t>(static_cast<float>(v));
  if (t == DType::F64)
    return std::bit_cast<uint64_t>(v);
  assert(false && "floatBits of a non-float dtype");
  return 0;
}

} // namespace tc::num
