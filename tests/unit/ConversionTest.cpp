// Conversions of the reference semantics (docs/semantics.md rules 6, 7 and
// 13) through support/Numerics.h: every pair of the 13 dtypes on a table of
// edge values, hand-derived named cases, and exhaustive / large-sample sweeps
// of the 16-bit float formats.
//
// Expected values never come from the implementation: they come from the
// IEEE-754 encodings worked out by hand, from exact integer arithmetic in
// __int128, from the host's IEEE conversions (float, double, and GCC's
// _Float16, whose conversions are libgcc's soft-fp), and from an independent
// round-to-nearest-even written below (`refRound`), which scales by a power of
// two and uses nearbyint, so it shares nothing with support/FloatBits.
#include "support/Numerics.h"

#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

using tc::DType;
namespace num = tc::num;
using i128 = __int128;
using u128 = unsigned __int128;

//===-- Independent reference model -----------------------------------------===//

const char *statusName(num::Status s) {
  switch (s) {
  case num::Status::Ok: return "ok";
  case num::Status::DivisionByZero: return "division_by_zero";
  case num::Status::DivisionOverflow: return "division_overflow";
  case num::Status::ShiftOutOfRange: return "shift_out_of_range";
  case num::Status::FloatToIntOutOfRange: return "float_to_int_out_of_range";
  }
  return "?";
}

const char *dtName(DType t) {
  static const char *names[] = {"bool", "i8",  "i16", "i32",  "i64", "u8", "u16",
                                "u32",  "u64", "f16", "bf16", "f32", "f64"};
  return names[static_cast<int>(t)];
}

bool refIsFloat(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64;
}
bool refIsSigned(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}
unsigned refWidth(DType t) {
  switch (t) {
  case DType::Bool: return 1;
  case DType::I8: case DType::U8: return 8;
  case DType::I16: case DType::U16: case DType::F16: case DType::BF16: return 16;
  case DType::I32: case DType::U32: case DType::F32: return 32;
  case DType::I64: case DType::U64: case DType::F64: return 64;
  }
  return 0;
}
uint64_t widthMask(unsigned w) { return w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1; }

// Two's complement wrap of a mathematical integer into dtype t's bits.
uint64_t refWrap(DType t, i128 v) { return static_cast<uint64_t>(static_cast<u128>(v)) & widthMask(refWidth(t)); }

// The mathematical value of integer bits.
i128 refIntValue(DType t, uint64_t bits) {
  unsigned w = refWidth(t);
  bits &= widthMask(w);
  if (refIsSigned(t) && (bits >> (w - 1)) & 1)
    return i128(bits) - (i128(1) << w);
  return i128(bits);
}

struct Format {
  int p;    // significand bits including the hidden bit
  int emin; // exponent of the smallest normal
  int emax; // exponent of the largest finite
};
Format formatOf(DType t) {
  switch (t) {
  case DType::F16: return {11, -14, 15};
  case DType::BF16: return {8, -126, 127};
  case DType::F32: return {24, -126, 127};
  default: return {53, -1022, 1023};
  }
}
double maxFinite(DType t) {
  Format f = formatOf(t);
  return std::ldexp(std::ldexp(1.0, f.p) - 1, f.emax - f.p + 1);
}

// Decodes float bits exactly (host formats; _Float16 for binary16; bf16 is the
// top half of a binary32).
double refDecode(DType t, uint64_t bits) {
  switch (t) {
  case DType::F16: {
    uint16_t b = static_cast<uint16_t>(bits);
    _Float16 h;
    std::memcpy(&h, &b, 2);
    return static_cast<double>(h);
  }
  case DType::BF16: {
    uint32_t b = static_cast<uint32_t>(bits & 0xFFFF) << 16;
    return static_cast<double>(std::bit_cast<float>(b));
  }
  case DType::F32: return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  default: return std::bit_cast<double>(bits);
  }
}

// Encodes a value that is exactly representable in t (or +-inf / NaN).
uint64_t refEncode(DType t, double v) {
  switch (t) {
  case DType::F16: {
    if (std::isnan(v))
      return 0x7E00;
    _Float16 h = static_cast<_Float16>(v);
    uint16_t b;
    std::memcpy(&b, &h, 2);
    return b;
  }
  case DType::BF16: {
    if (std::isnan(v))
      return 0x7FC0;
    uint32_t b = std::bit_cast<uint32_t>(static_cast<float>(v));
    EXPECT_EQ(b & 0xFFFF, 0u) << "test bug: " << v << " is not a bf16 value";
    return b >> 16;
  }
  case DType::F32: return std::bit_cast<uint32_t>(static_cast<float>(v));
  default: return std::bit_cast<uint64_t>(v);
  }
}

bool refIsNaN(DType t, uint64_t bits) {
  switch (t) {
  case DType::F16: return (bits & 0x7C00) == 0x7C00 && (bits & 0x03FF) != 0;
  case DType::BF16: return (bits & 0x7F80) == 0x7F80 && (bits & 0x007F) != 0;
  case DType::F32: return (bits & 0x7F800000) == 0x7F800000 && (bits & 0x007FFFFF) != 0;
  default:
    return (bits & 0x7FF0000000000000ull) == 0x7FF0000000000000ull && (bits & 0x000FFFFFFFFFFFFFull) != 0;
  }
}

// `v` rounded to nearest even into float dtype t: scale by a power of two so
// one unit is the target's ulp at v's exponent (clamped to the subnormal ulp),
// round the scaled value to an integer with nearbyint (RNE), scale back. Every
// step except nearbyint is exact.
double refRound(DType t, double v) {
  if (t == DType::F64 || v == 0 || std::isnan(v) || std::isinf(v))
    return v;
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
  Format f = formatOf(t);
  int e;
  std::frexp(v, &e);
  int lead = e - 1; // exponent of the leading bit
  int q = std::max(lead, f.emin) - (f.p - 1);
  double r = std::ldexp(std::nearbyint(std::ldexp(v, -q)), q);
  if (std::fabs(r) > maxFinite(t))
    return std::copysign(INFINITY, v);
  return r;
}

// Exact integer -> float dtype t, round to nearest even, in integer arithmetic.
double refIntToFloat(i128 v, DType t) {
  if (v == 0)
    return 0.0;
  bool neg = v < 0;
  u128 m = neg ? u128(-v) : u128(v);
  int p = formatOf(t).p;
  int n = 128 - (m >> 64 ? __builtin_clzll(uint64_t(m >> 64)) : 64 + __builtin_clzll(uint64_t(m)));
  double r;
  if (n <= p) {
    r = static_cast<double>(static_cast<uint64_t>(m));
  } else {
    int shift = n - p;
    u128 qv = m >> shift;
    u128 rem = m & ((u128(1) << shift) - 1);
    u128 half = u128(1) << (shift - 1);
    if (rem > half || (rem == half && (qv & 1)))
      ++qv;
    r = std::ldexp(static_cast<double>(static_cast<uint64_t>(qv)), shift);
  }
  if (r > maxFinite(t))
    r = INFINITY;
  return neg ? -r : r;
}

struct Expected {
  num::Status status = num::Status::Ok;
  uint64_t bits = 0;
  bool nan = false; // any NaN of the target is right
};

// The reference semantics of rule 13 (and 7) for one conversion.
Expected refConvert(DType from, uint64_t bits, DType to) {
  Expected e;
  if (refIsFloat(from)) {
    double v = refDecode(from, bits);
    if (to == DType::Bool) {
      e.bits = (v != 0 || std::isnan(v)) ? 1 : 0;
    } else if (refIsFloat(to)) {
      if (std::isnan(v))
        e.nan = true;
      else
        e.bits = refEncode(to, refRound(to, v));
    } else {
      double tr = std::trunc(v);
      unsigned w = refWidth(to);
      double lo = refIsSigned(to) ? -std::ldexp(1.0, w - 1) : 0.0;
      double hiExcl = std::ldexp(1.0, refIsSigned(to) ? w - 1 : w);
      if (std::isnan(v) || tr < lo || tr >= hiExcl)
        e.status = num::Status::FloatToIntOutOfRange;
      else
        e.bits = refWrap(to, static_cast<i128>(tr));
    }
    return e;
  }
  i128 v = refIntValue(from, bits);
  if (to == DType::Bool)
    e.bits = v != 0 ? 1 : 0;
  else if (refIsFloat(to))
    e.bits = refEncode(to, refIntToFloat(v, to));
  else
    e.bits = refWrap(to, v);
  return e;
}

std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

// Checks one conversion against the reference; returns a description of the
// mismatch ("" if none).
std::string checkConvert(DType from, uint64_t bits, DType to) {
  Expected want = refConvert(from, bits, to);
  uint64_t got = 0xDEADBEEF;
  num::Status st = num::convert(from, bits, to, got);
  std::ostringstream os;
  os << dtName(from) << " " << hex(bits) << " -> " << dtName(to) << ": ";
  if (st != want.status) {
    os << "status " << statusName(st) << ", want " << statusName(want.status);
    return os.str();
  }
  if (st != num::Status::Ok)
    return "";
  if (want.nan) {
    if (!refIsNaN(to, got))
      return os.str() + "got " + hex(got) + ", want a NaN";
    return "";
  }
  if (got != want.bits)
    return os.str() + "got " + hex(got) + ", want " + hex(want.bits);
  return "";
}

// Runs checkConvert over many inputs, reporting at most a few mismatches.
class MismatchLog {
public:
  void check(DType from, uint64_t bits, DType to) {
    std::string m = checkConvert(from, bits, to);
    if (m.empty())
      return;
    if (++count_ <= 12)
      text_ += "  " + m + "\n";
  }
  void report(const std::string &what) const {
    EXPECT_EQ(count_, 0u) << what << ": " << count_ << " mismatches, first ones:\n" << text_;
  }

private:
  size_t count_ = 0;
  std::string text_;
};

//===-- Inputs -----------------------------------------------------------===//

std::vector<i128> intCandidates() {
  i128 p2 = 1;
  std::vector<i128> v = {0, 1, 2, 3, 7, -1, -2, -7, 100, 127, 128, 129, -127, -128, -129, 200,
                         255, 256, 257, 258, 259, -255, -256, -257, 300, 1000, 2047, 2048, 2049,
                         2050, 2051, 2053, 4097, 32767, 32768, 32769, -32767, -32768, -32769,
                         65504, 65519, 65520, 65521, 65535, 65536, 65537, -65504, -65520,
                         16777215, 16777216, 16777217, 16777219, -16777217};
  for (int k : {31, 32, 53, 54, 62, 63, 64}) {
    i128 b = p2 << k;
    for (i128 d : {i128(-1), i128(0), i128(1)}) {
      v.push_back(b + d);
      v.push_back(-b + d);
    }
  }
  v.push_back((p2 << 62) + (p2 << 54));
  v.push_back((p2 << 62) + (p2 << 54) + 1);
  v.push_back((p2 << 62) + (p2 << 38));
  v.push_back((p2 << 62) + (p2 << 38) + 1);
  v.push_back((p2 << 63) + 1024);
  v.push_back((p2 << 63) + 3072);
  v.push_back((p2 << 63) + 3073);
  v.push_back(i128(0x0123456789ABCDEFll));
  v.push_back(i128(uint64_t(0xFEDCBA9876543210ull)));
  v.push_back(i128(0x12345678));
  return v;
}

std::vector<double> floatCandidates() {
  double nan = std::numeric_limits<double>::quiet_NaN();
  return {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.25, 0.75, -0.75, 1.5, -1.5, 2.5, -2.5, 0.99, -0.99,
          -0.999999, 127.5, 127.99, 128.0, -128.0, -128.5, -128.99, -129.0, 255.5, 255.9, 256.0,
          256.5, 257.0, 259.0, 32767.9, 32768.0, -32768.9, -32769.0, 65535.9, 65536.0, 65504.0,
          65519.0, 65520.0, 2049.0, 2051.0, 1.0 + 0x1p-8, 1.0 + 0x1p-8 + 0x1p-40, 1.0 + 0x1p-11,
          1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-24, 1.0 + 0x1p-24 + 0x1p-50, 2147483520.0,
          2147483647.0, 2147483647.5, 2147483648.0, -2147483648.0, -2147483648.5, -2147483649.0,
          4294967295.0, 4294967295.5, 4294967296.0, 0x1p53, 0x1p53 + 2, 0x1p63, -0x1p63,
          0x1p63 - 1024, -0x1p63 - 2048, 0x1p64, 0x1p64 - 2048, 1e10, -1e10, 3.3895313892515355e38,
          3.4028234663852886e38, 3.4028235677973366e38, 1e39, 1e300, -1e300, DBL_MAX, 0.1, -0.1,
          1.0 / 3, -1.0 / 3, 0x1p-14, 0x1p-24, 0x1p-25, 1.5 * 0x1p-25, 3 * 0x1p-25, 0x1p-126,
          0x1p-133, 0x1p-134, 3 * 0x1p-134, 0x1p-149, 0x1p-150, 3 * 0x1p-150, 0x1p-1022,
          0x1p-1074, -0x1p-1074, INFINITY, -INFINITY, nan, -nan};
}

// Raw patterns of each float format worth converting as they are.
std::vector<uint64_t> rawFloatPatterns(DType t) {
  switch (t) {
  case DType::F16:
    return {0x0001, 0x03FF, 0x0400, 0x3BFF, 0x3C01, 0x7BFF, 0x7C00, 0xFC00, 0x7E00, 0x7C01,
            0xFE00, 0x8001, 0x83FF, 0xFBFF};
  case DType::BF16:
    return {0x0001, 0x007F, 0x0080, 0x3F81, 0x477F, 0x4780, 0x7F7F, 0x7F80, 0xFF80, 0x7FC0,
            0x7F81, 0xFFC0, 0x8001, 0xFF7F};
  case DType::F32:
    return {0x00000001, 0x007FFFFF, 0x00800000, 0x00008000, 0x00018000, 0x3F808000, 0x3F818000,
            0x3F808001, 0x3F801000, 0x3F801001, 0x7F7FFFFF, 0x7F7F7FFF, 0x7F800000, 0xFF800000,
            0x7FC00000, 0x7F800001, 0xFFFFFFFF, 0x80000001, 0x477FF000, 0x477FEFFF};
  default:
    return {0x0000000000000001ull, 0x000FFFFFFFFFFFFFull, 0x0010000000000000ull,
            0x7FEFFFFFFFFFFFFFull, 0x7FF0000000000000ull, 0xFFF0000000000000ull,
            0x7FF8000000000000ull, 0x7FF0000000000001ull, 0xFFFFFFFFFFFFFFFFull,
            0x8000000000000001ull, 0x3FF0000010000000ull, 0x3FF0000010000001ull};
  }
}

// Source bit patterns for dtype t: the candidates that t can hold (ints
// wrapped, floats rounded) plus raw patterns, without duplicates.
std::vector<uint64_t> sourcePatterns(DType t) {
  std::set<uint64_t> s;
  if (t == DType::Bool) {
    s = {0, 1};
  } else if (refIsFloat(t)) {
    for (double v : floatCandidates())
      s.insert(refEncode(t, refRound(t, v)));
    for (uint64_t b : rawFloatPatterns(t))
      s.insert(b);
  } else {
    for (i128 v : intCandidates())
      s.insert(refWrap(t, v));
  }
  return {s.begin(), s.end()};
}

//===-- Self-checks of the reference model ------------------------------------===//

// The reference rounding agrees with GCC's soft-fp double -> _Float16 and the
// host's double -> float, so it can be trusted for bf16 (which has neither).
TEST(ConversionReference, RefRoundAgreesWithHostConversions) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    double v = std::bit_cast<double>(rng());
    if (std::isnan(v))
      continue;
    // Keep exponents where the narrow formats are interesting.
    int e;
    double m = std::frexp(v, &e);
    double near = std::ldexp(m, e % 40);
    _Float16 h = static_cast<_Float16>(near);
    ASSERT_EQ(static_cast<double>(h), refRound(DType::F16, near)) << near;
    ASSERT_EQ(static_cast<double>(static_cast<float>(v)), refRound(DType::F32, v)) << v;
    double wide = std::ldexp(m, e % 160);
    ASSERT_EQ(static_cast<double>(static_cast<float>(wide)), refRound(DType::F32, wide)) << wide;
  }
  for (int64_t i = -70000; i <= 70000; ++i)
    ASSERT_EQ(refIntToFloat(i, DType::F16), static_cast<double>(static_cast<_Float16>(i)));
}

//===-- Every pair of dtypes ---------------------------------------------------===//

TEST(Conversion, EveryDTypePairOnEdgeValues) {
  for (DType from : tc::kAllDTypes) {
    std::vector<uint64_t> srcs = sourcePatterns(from);
    for (DType to : tc::kAllDTypes) {
      MismatchLog log;
      for (uint64_t b : srcs)
        log.check(from, b, to);
      log.report(std::string(dtName(from)) + " -> " + dtName(to));
    }
  }
}

//===-- Named cases, worked out by hand ----------------------------------------===//

uint64_t f32(float f) { return std::bit_cast<uint32_t>(f); }
uint64_t f64(double d) { return std::bit_cast<uint64_t>(d); }

struct NamedCase {
  const char *what;
  DType from;
  uint64_t bits;
  DType to;
  num::Status status;
  uint64_t want; // ignored unless status is Ok
};

constexpr num::Status kOk = num::Status::Ok;
constexpr num::Status kRange = num::Status::FloatToIntOutOfRange;

// clang-format off
const NamedCase kNamedCases[] = {
    // Integers wrap to narrower types and extend by the source's signedness.
    {"i8 -1 -> u16 sign-extends", DType::I8, 0xFF, DType::U16, kOk, 0xFFFF},
    {"i8 -1 -> i64", DType::I8, 0xFF, DType::I64, kOk, 0xFFFFFFFFFFFFFFFFull},
    {"i8 -1 -> u64", DType::I8, 0xFF, DType::U64, kOk, 0xFFFFFFFFFFFFFFFFull},
    {"u8 255 -> i16 zero-extends", DType::U8, 0xFF, DType::I16, kOk, 0x00FF},
    {"u8 255 -> i8 keeps the bits", DType::U8, 0xFF, DType::I8, kOk, 0xFF},
    {"u32 max -> i64", DType::U32, 0xFFFFFFFF, DType::I64, kOk, 0x00000000FFFFFFFFull},
    {"i32 -1 -> u64", DType::I32, 0xFFFFFFFF, DType::U64, kOk, 0xFFFFFFFFFFFFFFFFull},
    {"i32 300 -> u8 wraps", DType::I32, 300, DType::U8, kOk, 44},
    {"i32 300 -> i8 wraps", DType::I32, 300, DType::I8, kOk, 44},
    {"i32 -129 -> i8 wraps", DType::I32, 0xFFFFFF7F, DType::I8, kOk, 0x7F},
    {"i16 0x1234 -> i8", DType::I16, 0x1234, DType::I8, kOk, 0x34},
    {"i64 2^32+5 -> i32", DType::I64, 0x100000005ull, DType::I32, kOk, 5},
    {"bool 1 -> i64 is 1, not -1", DType::Bool, 1, DType::I64, kOk, 1},
    {"bool 1 -> i8", DType::Bool, 1, DType::I8, kOk, 1},
    {"bool 1 -> f32", DType::Bool, 1, DType::F32, kOk, 0x3F800000},
    {"bool 1 -> f16", DType::Bool, 1, DType::F16, kOk, 0x3C00},
    {"bool 1 -> bf16", DType::Bool, 1, DType::BF16, kOk, 0x3F80},
    {"bool 0 -> f64", DType::Bool, 0, DType::F64, kOk, 0},
    // To bool: != 0.
    {"i32 256 -> bool is 1 (not the low bit)", DType::I32, 0x100, DType::Bool, kOk, 1},
    {"i64 2^32 -> bool", DType::I64, 0x100000000ull, DType::Bool, kOk, 1},
    {"u8 0 -> bool", DType::U8, 0, DType::Bool, kOk, 0},
    {"i8 -128 -> bool", DType::I8, 0x80, DType::Bool, kOk, 1},
    {"f32 NaN -> bool is 1", DType::F32, 0x7FC00000, DType::Bool, kOk, 1},
    {"f32 -0.0 -> bool is 0", DType::F32, 0x80000000, DType::Bool, kOk, 0},
    {"f32 0.5 -> bool is 1 (no truncation)", DType::F32, 0x3F000000, DType::Bool, kOk, 1},
    {"f32 smallest subnormal -> bool", DType::F32, 0x00000001, DType::Bool, kOk, 1},
    {"f16 -0.0 -> bool", DType::F16, 0x8000, DType::Bool, kOk, 0},
    {"f16 NaN -> bool", DType::F16, 0x7E00, DType::Bool, kOk, 1},
    {"bf16 smallest subnormal -> bool", DType::BF16, 0x0001, DType::Bool, kOk, 1},
    {"f64 -inf -> bool", DType::F64, 0xFFF0000000000000ull, DType::Bool, kOk, 1},
    // Float -> int truncates toward zero; NaN or a truncation that does not fit traps.
    {"f32 NaN -> i32", DType::F32, 0x7FC00000, DType::I32, kRange, 0},
    {"f32 -NaN -> u8", DType::F32, 0xFFC00000, DType::U8, kRange, 0},
    {"f32 inf -> i32", DType::F32, 0x7F800000, DType::I32, kRange, 0},
    {"f32 -inf -> i64", DType::F32, 0xFF800000, DType::I64, kRange, 0},
    {"f32 2^31 -> i32", DType::F32, 0x4F000000, DType::I32, kRange, 0},
    {"f32 largest below 2^31 -> i32", DType::F32, 0x4EFFFFFF, DType::I32, kOk, 2147483520},
    {"f32 -2^31 -> i32", DType::F32, 0xCF000000, DType::I32, kOk, 0x80000000},
    {"f32 2^31 -> u32", DType::F32, 0x4F000000, DType::U32, kOk, 0x80000000},
    {"f32 2^32 -> u32", DType::F32, 0x4F800000, DType::U32, kRange, 0},
    {"f32 -1.0 -> u8", DType::F32, 0xBF800000, DType::U8, kRange, 0},
    {"f32 255.9 -> u8", DType::F32, f32(255.9f), DType::U8, kOk, 255},
    {"f32 256.0 -> u8", DType::F32, f32(256.0f), DType::U8, kRange, 0},
    {"f32 -0.5 -> u8 truncates to 0", DType::F32, f32(-0.5f), DType::U8, kOk, 0},
    {"f32 -0.99 -> u32 truncates to 0", DType::F32, f32(-0.99f), DType::U32, kOk, 0},
    {"f32 -0.0 -> u8", DType::F32, 0x80000000, DType::U8, kOk, 0},
    {"f32 127.9 -> i8", DType::F32, f32(127.9f), DType::I8, kOk, 127},
    {"f32 128.0 -> i8", DType::F32, f32(128.0f), DType::I8, kRange, 0},
    {"f32 -128.9 -> i8", DType::F32, f32(-128.9f), DType::I8, kOk, 0x80},
    {"f32 -129.0 -> i8", DType::F32, f32(-129.0f), DType::I8, kRange, 0},
    {"f32 -2.7 -> i32", DType::F32, f32(-2.7f), DType::I32, kOk, 0xFFFFFFFE},
    {"f32 2.7 -> i16", DType::F32, f32(2.7f), DType::I16, kOk, 2},
    {"f64 2^63 -> i64", DType::F64, f64(0x1p63), DType::I64, kRange, 0},
    {"f64 -2^63 -> i64", DType::F64, f64(-0x1p63), DType::I64, kOk, 0x8000000000000000ull},
    {"f64 2^63-1024 -> i64", DType::F64, f64(0x1p63 - 1024), DType::I64, kOk, 0x7FFFFFFFFFFFFC00ull},
    {"f64 2^64-2048 -> u64", DType::F64, f64(0x1p64 - 2048), DType::U64, kOk, 0xFFFFFFFFFFFFF800ull},
    {"f64 2^64 -> u64", DType::F64, f64(0x1p64), DType::U64, kRange, 0},
    {"f64 -0.9 -> u64", DType::F64, f64(-0.9), DType::U64, kOk, 0},
    {"f64 -1.0 -> u64", DType::F64, f64(-1.0), DType::U64, kRange, 0},
    {"f64 2147483647.9 -> i32", DType::F64, f64(2147483647.9), DType::I32, kOk, 0x7FFFFFFF},
    {"f64 -2147483648.9 -> i32", DType::F64, f64(-2147483648.9), DType::I32, kOk, 0x80000000},
    {"f64 -2147483649.0 -> i32", DType::F64, f64(-2147483649.0), DType::I32, kRange, 0},
    {"f64 65535.5 -> u16", DType::F64, f64(65535.5), DType::U16, kOk, 0xFFFF},
    {"f64 NaN -> u64", DType::F64, 0x7FF8000000000000ull, DType::U64, kRange, 0},
    {"f16 inf -> i8", DType::F16, 0x7C00, DType::I8, kRange, 0},
    {"f16 NaN -> i32", DType::F16, 0x7E00, DType::I32, kRange, 0},
    {"f16 65504 -> i32", DType::F16, 0x7BFF, DType::I32, kOk, 65504},
    {"f16 65504 -> i16", DType::F16, 0x7BFF, DType::I16, kRange, 0},
    {"f16 65504 -> u16", DType::F16, 0x7BFF, DType::U16, kOk, 0xFFE0},
    {"f16 -1.5 -> i8", DType::F16, 0xBE00, DType::I8, kOk, 0xFF},
    {"bf16 2^31 -> i32", DType::BF16, 0x4F00, DType::I32, kRange, 0},
    {"bf16 -2^31 -> i32", DType::BF16, 0xCF00, DType::I32, kOk, 0x80000000},
    {"bf16 NaN -> i8", DType::BF16, 0x7FC0, DType::I8, kRange, 0},
    // Int -> float: round to nearest even, in one rounding.
    {"i32 2049 -> f16 ties to even 2048", DType::I32, 2049, DType::F16, kOk, 0x6800},
    {"i32 2050 -> f16", DType::I32, 2050, DType::F16, kOk, 0x6801},
    {"i32 2051 -> f16 ties to even 2052", DType::I32, 2051, DType::F16, kOk, 0x6802},
    {"i32 2053 -> f16 ties to even 2052", DType::I32, 2053, DType::F16, kOk, 0x6802},
    {"i32 65519 -> f16 65504", DType::I32, 65519, DType::F16, kOk, 0x7BFF},
    {"i32 65520 -> f16 inf", DType::I32, 65520, DType::F16, kOk, 0x7C00},
    {"i32 -65520 -> f16 -inf", DType::I32, 0xFFFF0010, DType::F16, kOk, 0xFC00},
    {"i8 -1 -> f32", DType::I8, 0xFF, DType::F32, kOk, 0xBF800000},
    {"u8 255 -> f32", DType::U8, 0xFF, DType::F32, kOk, 0x437F0000},
    {"u32 max -> f32 2^32", DType::U32, 0xFFFFFFFF, DType::F32, kOk, 0x4F800000},
    {"i32 16777217 -> f32 ties to even", DType::I32, 16777217, DType::F32, kOk, 0x4B800000},
    {"i32 16777219 -> f32 ties to even", DType::I32, 16777219, DType::F32, kOk, 0x4B800002},
    {"i32 257 -> bf16 ties to even 256", DType::I32, 257, DType::BF16, kOk, 0x4380},
    {"i32 259 -> bf16 ties to even 260", DType::I32, 259, DType::BF16, kOk, 0x4382},
    {"i64 2^62+2^54 -> bf16 tie", DType::I64, 0x4040000000000000ull, DType::BF16, kOk, 0x5E80},
    {"i64 2^62+2^54+1 -> bf16 one rounding", DType::I64, 0x4040000000000001ull, DType::BF16, kOk, 0x5E81},
    {"i64 2^62+2^38 -> f32 tie", DType::I64, 0x4000004000000000ull, DType::F32, kOk, 0x5E800000},
    {"i64 2^62+2^38+1 -> f32 one rounding", DType::I64, 0x4000004000000001ull, DType::F32, kOk, 0x5E800001},
    {"u64 max -> f32", DType::U64, 0xFFFFFFFFFFFFFFFFull, DType::F32, kOk, 0x5F800000},
    {"u64 max -> f64", DType::U64, 0xFFFFFFFFFFFFFFFFull, DType::F64, kOk, 0x43F0000000000000ull},
    {"u64 max -> f16", DType::U64, 0xFFFFFFFFFFFFFFFFull, DType::F16, kOk, 0x7C00},
    {"u64 max -> bf16", DType::U64, 0xFFFFFFFFFFFFFFFFull, DType::BF16, kOk, 0x5F80},
    {"u64 2^63+1 -> f64", DType::U64, 0x8000000000000001ull, DType::F64, kOk, 0x43E0000000000000ull},
    {"u64 2^63+1024 -> f64 tie", DType::U64, 0x8000000000000400ull, DType::F64, kOk, 0x43E0000000000000ull},
    {"u64 2^63+3072 -> f64 tie", DType::U64, 0x8000000000000C00ull, DType::F64, kOk, 0x43E0000000000002ull},
    {"u64 2^63+3073 -> f64", DType::U64, 0x8000000000000C01ull, DType::F64, kOk, 0x43E0000000000002ull},
    {"i64 min -> f64", DType::I64, 0x8000000000000000ull, DType::F64, kOk, 0xC3E0000000000000ull},
    // Float -> narrower float: round to nearest even; no flush-to-zero; -0, inf kept.
    {"f32 1+2^-11 -> f16 tie", DType::F32, 0x3F801000, DType::F16, kOk, 0x3C00},
    {"f32 1+2^-11+2^-23 -> f16", DType::F32, 0x3F801001, DType::F16, kOk, 0x3C01},
    {"f32 1+3*2^-11 -> f16 tie up to even", DType::F32, 0x3F803000, DType::F16, kOk, 0x3C02},
    {"f32 65520 -> f16 inf", DType::F32, 0x477FF000, DType::F16, kOk, 0x7C00},
    {"f32 just below 65520 -> f16 max", DType::F32, 0x477FEFFF, DType::F16, kOk, 0x7BFF},
    {"f32 2^-24 -> f16 smallest subnormal", DType::F32, 0x33800000, DType::F16, kOk, 0x0001},
    {"f32 2^-25 -> f16 tie to 0", DType::F32, 0x33000000, DType::F16, kOk, 0x0000},
    {"f32 -2^-25 -> f16 -0", DType::F32, 0xB3000000, DType::F16, kOk, 0x8000},
    {"f32 1.5*2^-25 -> f16", DType::F32, 0x33400000, DType::F16, kOk, 0x0001},
    {"f32 3*2^-25 -> f16 tie to 2", DType::F32, 0x33C00000, DType::F16, kOk, 0x0002},
    {"f32 2^-14 -> f16 min normal", DType::F32, 0x38800000, DType::F16, kOk, 0x0400},
    {"f32 -0 -> f16", DType::F32, 0x80000000, DType::F16, kOk, 0x8000},
    {"f32 inf -> f16", DType::F32, 0x7F800000, DType::F16, kOk, 0x7C00},
    {"f32 -inf -> f16", DType::F32, 0xFF800000, DType::F16, kOk, 0xFC00},
    {"f32 1+2^-8 -> bf16 tie to even", DType::F32, 0x3F808000, DType::BF16, kOk, 0x3F80},
    {"f32 1+3*2^-8 -> bf16 tie to even", DType::F32, 0x3F818000, DType::BF16, kOk, 0x3F82},
    {"f32 just above the tie -> bf16", DType::F32, 0x3F808001, DType::BF16, kOk, 0x3F81},
    {"f32 just below the tie -> bf16", DType::F32, 0x3F807FFF, DType::BF16, kOk, 0x3F80},
    {"f32 max -> bf16 inf", DType::F32, 0x7F7FFFFF, DType::BF16, kOk, 0x7F80},
    {"f32 below bf16 overflow -> bf16 max", DType::F32, 0x7F7F7FFF, DType::BF16, kOk, 0x7F7F},
    {"f32 subnormal tie -> bf16 0", DType::F32, 0x00008000, DType::BF16, kOk, 0x0000},
    {"f32 subnormal tie -> bf16 2", DType::F32, 0x00018000, DType::BF16, kOk, 0x0002},
    {"f32 subnormal -> bf16 smallest", DType::F32, 0x00010000, DType::BF16, kOk, 0x0001},
    {"f32 -subnormal tie -> bf16 -0", DType::F32, 0x80008000, DType::BF16, kOk, 0x8000},
    {"f32 -inf -> bf16", DType::F32, 0xFF800000, DType::BF16, kOk, 0xFF80},
    {"f32 -1/3 -> bf16", DType::F32, 0xBEAAAAAB, DType::BF16, kOk, 0xBEAB},
    {"f64 1+2^-24 -> f32 tie", DType::F64, f64(1.0 + 0x1p-24), DType::F32, kOk, 0x3F800000},
    {"f64 1+2^-24+2^-50 -> f32", DType::F64, f64(1.0 + 0x1p-24 + 0x1p-50), DType::F32, kOk, 0x3F800001},
    {"f64 2^-150 -> f32 tie to 0", DType::F64, f64(0x1p-150), DType::F32, kOk, 0},
    {"f64 3*2^-150 -> f32 tie to 2", DType::F64, f64(3 * 0x1p-150), DType::F32, kOk, 2},
    {"f64 2^-149 -> f32 subnormal", DType::F64, f64(0x1p-149), DType::F32, kOk, 1},
    {"f64 f32max+half ulp -> f32 inf", DType::F64, f64(3.4028235677973366e38), DType::F32, kOk, 0x7F800000},
    {"f64 -0 -> f32", DType::F64, 0x8000000000000000ull, DType::F32, kOk, 0x80000000},
    {"f64 1+2^-11+2^-40 -> f16 in one rounding", DType::F64, f64(1.0 + 0x1p-11 + 0x1p-40), DType::F16, kOk, 0x3C01},
    {"f64 1+2^-8+2^-40 -> bf16 in one rounding", DType::F64, f64(1.0 + 0x1p-8 + 0x1p-40), DType::BF16, kOk, 0x3F81},
    {"f64 -0 -> bf16", DType::F64, 0x8000000000000000ull, DType::BF16, kOk, 0x8000},
    {"f64 1e-8 -> f16 underflows to 0", DType::F64, f64(1e-8), DType::F16, kOk, 0x0000},
    {"f64 -1e-8 -> f16 -0", DType::F64, f64(-1e-8), DType::F16, kOk, 0x8000},
    // Widening is exact.
    {"f16 smallest subnormal -> f32", DType::F16, 0x0001, DType::F32, kOk, 0x33800000},
    {"f16 largest subnormal -> f32", DType::F16, 0x03FF, DType::F32, kOk, 0x387FC000},
    {"f16 -0 -> f32", DType::F16, 0x8000, DType::F32, kOk, 0x80000000},
    {"f16 inf -> f32", DType::F16, 0x7C00, DType::F32, kOk, 0x7F800000},
    {"f16 65504 -> f32", DType::F16, 0x7BFF, DType::F32, kOk, 0x477FE000},
    {"f16 -0 -> f64", DType::F16, 0x8000, DType::F64, kOk, 0x8000000000000000ull},
    {"bf16 smallest subnormal -> f32", DType::BF16, 0x0001, DType::F32, kOk, 0x00010000},
    {"bf16 -0 -> f64", DType::BF16, 0x8000, DType::F64, kOk, 0x8000000000000000ull},
    {"f32 smallest subnormal -> f64", DType::F32, 0x00000001, DType::F64, kOk, f64(0x1p-149)},
    // Between the two 16-bit formats.
    {"f16 65504 -> bf16 rounds up to 65536", DType::F16, 0x7BFF, DType::BF16, kOk, 0x4780},
    {"f16 2^-24 -> bf16", DType::F16, 0x0001, DType::BF16, kOk, 0x3380},
    {"bf16 1+2^-7 -> f16", DType::BF16, 0x3F81, DType::F16, kOk, 0x3C08},
    {"bf16 65536 -> f16 inf", DType::BF16, 0x4780, DType::F16, kOk, 0x7C00},
    {"bf16 65280 -> f16", DType::BF16, 0x477F, DType::F16, kOk, 0x7BF8},
    {"bf16 2^-126 -> f16 underflows to 0", DType::BF16, 0x0080, DType::F16, kOk, 0x0000},
};
// clang-format on

// The hand-derived table and the reference model agree (a check of the test itself).
TEST(ConversionReference, NamedCasesAgreeWithTheModel) {
  for (const NamedCase &c : kNamedCases) {
    Expected e = refConvert(c.from, c.bits, c.to);
    EXPECT_STREQ(statusName(e.status), statusName(c.status)) << c.what;
    if (c.status == kOk && !e.nan) {
      EXPECT_EQ(hex(e.bits), hex(c.want)) << c.what;
    }
  }
}

TEST(Conversion, NamedCases) {
  for (const NamedCase &c : kNamedCases) {
    uint64_t got = 0xDEADBEEF;
    num::Status st = num::convert(c.from, c.bits, c.to, got);
    EXPECT_STREQ(statusName(st), statusName(c.status)) << c.what;
    if (c.status == kOk && st == kOk) {
      EXPECT_EQ(hex(got), hex(c.want)) << c.what;
    }
  }
}

TEST(Conversion, NaNStaysNaNBetweenFloatFormats) {
  struct Src {
    DType t;
    uint64_t bits;
  } srcs[] = {{DType::F16, 0x7E00},     {DType::F16, 0x7C01}, {DType::F16, 0xFE00},
              {DType::BF16, 0x7FC0},    {DType::BF16, 0x7F81}, {DType::F32, 0x7FC00000},
              {DType::F32, 0x7F800001}, {DType::F32, 0x7F80FFFF}, {DType::F32, 0xFFC00000},
              {DType::F64, 0x7FF8000000000000ull}, {DType::F64, 0x7FF0000000000001ull}};
  for (const Src &s : srcs)
    for (DType to : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
      uint64_t got = 0;
      ASSERT_EQ(num::convert(s.t, s.bits, to, got), kOk);
      EXPECT_TRUE(refIsNaN(to, got)) << dtName(s.t) << " " << hex(s.bits) << " -> " << dtName(to)
                                     << " gave " << hex(got);
    }
}

//===-- Exhaustive and large-sample sweeps -------------------------------------===//

TEST(Conversion, AllHalfPatternsWidenExactlyAndRoundTrip) {
  MismatchLog log;
  for (uint32_t b = 0; b < 0x10000; ++b)
    for (DType to : {DType::F32, DType::F64, DType::BF16, DType::Bool, DType::I32, DType::U8})
      log.check(DType::F16, b, to);
  log.report("f16 -> {f32, f64, bf16, bool, i32, u8}");

  size_t bad = 0;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    if (refIsNaN(DType::F16, b))
      continue;
    for (DType wide : {DType::F32, DType::F64}) {
      uint64_t w = 0, back = 0;
      num::convert(DType::F16, b, wide, w);
      num::convert(wide, w, DType::F16, back);
      if (back != b && ++bad <= 5)
        ADD_FAILURE() << "f16 " << hex(b) << " -> " << dtName(wide) << " -> f16 gave " << hex(back);
    }
  }
}

TEST(Conversion, AllBF16PatternsWidenAsShiftAndRoundTrip) {
  size_t bad = 0;
  for (uint32_t b = 0; b < 0x10000; ++b) {
    uint64_t w = 0, back = 0;
    ASSERT_EQ(num::convert(DType::BF16, b, DType::F32, w), kOk);
    if (refIsNaN(DType::BF16, b)) {
      if (!refIsNaN(DType::F32, w) && ++bad <= 5)
        ADD_FAILURE() << "bf16 NaN " << hex(b) << " -> f32 gave " << hex(w);
      continue;
    }
    if (w != (uint64_t(b) << 16) && ++bad <= 5)
      ADD_FAILURE() << "bf16 " << hex(b) << " -> f32 gave " << hex(w) << ", want " << hex(uint64_t(b) << 16);
    num::convert(DType::F32, w, DType::BF16, back);
    if (back != b && ++bad <= 5)
      ADD_FAILURE() << "bf16 " << hex(b) << " -> f32 -> bf16 gave " << hex(back);
    num::convert(DType::BF16, b, DType::F64, w);
    num::convert(DType::F64, w, DType::BF16, back);
    if (back != b && ++bad <= 5)
      ADD_FAILURE() << "bf16 " << hex(b) << " -> f64 -> bf16 gave " << hex(back);
  }
  MismatchLog log;
  for (uint32_t b = 0; b < 0x10000; ++b)
    for (DType to : {DType::F16, DType::Bool, DType::I64, DType::U16})
      log.check(DType::BF16, b, to);
  log.report("bf16 -> {f16, bool, i64, u16}");
}

// f32 patterns to sweep: every high half with the low halves that matter for
// rounding to bf16 (ties, just around ties, extremes), plus a prime stride
// over all 2^32 patterns.
std::vector<uint32_t> f32Sample() {
  std::vector<uint32_t> v;
  for (uint32_t hi = 0; hi < 0x10000; ++hi)
    for (uint32_t lo : {0x0000u, 0x0001u, 0x4000u, 0x7FFFu, 0x8000u, 0x8001u, 0xC000u, 0xFFFFu})
      v.push_back(hi << 16 | lo);
  for (uint64_t x = 0; x < (uint64_t(1) << 32); x += 4093)
    v.push_back(static_cast<uint32_t>(x));
  return v;
}

TEST(Conversion, F32ToBF16MatchesTheBitFormula) {
  size_t bad = 0, checked = 0;
  for (uint32_t x : f32Sample()) {
    uint64_t got = 0;
    ASSERT_EQ(num::convert(DType::F32, x, DType::BF16, got), kOk);
    ++checked;
    if (refIsNaN(DType::F32, x)) {
      if (!refIsNaN(DType::BF16, got) && ++bad <= 8)
        ADD_FAILURE() << "f32 NaN " << hex(x) << " -> bf16 gave " << hex(got) << ", want a NaN";
      continue;
    }
    uint64_t want = (uint64_t(x) + 0x7FFF + ((x >> 16) & 1)) >> 16;
    if (got != want && ++bad <= 8)
      ADD_FAILURE() << "f32 " << hex(x) << " -> bf16 gave " << hex(got) << ", want " << hex(want);
  }
  EXPECT_GT(checked, 1000000u);
}

// Against GCC's _Float16 conversion directly (not through refRound).
TEST(Conversion, F32ToF16MatchesSoftFloat) {
  size_t bad = 0;
  for (uint32_t x : f32Sample()) {
    if (refIsNaN(DType::F32, x))
      continue;
    _Float16 h = static_cast<_Float16>(std::bit_cast<float>(x));
    uint16_t want;
    std::memcpy(&want, &h, 2);
    uint64_t got = 0;
    num::convert(DType::F32, x, DType::F16, got);
    if (got != want && ++bad <= 8)
      ADD_FAILURE() << "f32 " << hex(x) << " -> f16 gave " << hex(got) << ", want " << hex(want);
  }
}

TEST(Conversion, F64ToNarrowFloatsOnRandomPatterns) {
  std::mt19937_64 rng(12345);
  MismatchLog log;
  for (int i = 0; i < 100000; ++i) {
    uint64_t r = rng();
    // Exponents near the narrow formats' ranges, and random low mantissa bits.
    int e = static_cast<int>(r % 320) - 160;
    double m = std::ldexp(static_cast<double>(rng() >> 11), -53) + 0.5;
    uint64_t bits = f64(std::ldexp((r >> 40) & 1 ? -m : m, e));
    if ((r >> 41) % 4 == 0) // a tie or near-tie of bf16/f16: few low bits set
      bits &= ~((uint64_t(1) << ((r >> 43) % 44)) - 1);
    for (DType to : {DType::F16, DType::BF16, DType::F32, DType::I32, DType::U64, DType::Bool})
      log.check(DType::F64, bits, to);
  }
  log.report("f64 -> {f16, bf16, f32, i32, u64, bool}");
}

TEST(Conversion, AllSixteenBitIntegersToEveryType) {
  MismatchLog log;
  for (DType from : {DType::I8, DType::U8, DType::Bool}) {
    uint32_t n = from == DType::Bool ? 2 : 0x100;
    for (uint32_t b = 0; b < n; ++b)
      for (DType to : tc::kAllDTypes)
        log.check(from, b, to);
  }
  for (DType from : {DType::I16, DType::U16})
    for (uint32_t b = 0; b < 0x10000; ++b)
      for (DType to : {DType::F16, DType::BF16, DType::F32, DType::I8, DType::U8, DType::Bool})
        log.check(from, b, to);
  log.report("8- and 16-bit integers and bool -> every dtype");
  // Directly against GCC's int -> _Float16 as well.
  for (int32_t v = -32768; v < 32768; ++v) {
    uint64_t got = 0;
    num::convert(DType::I16, refWrap(DType::I16, v), DType::F16, got);
    _Float16 h = static_cast<_Float16>(v);
    uint16_t want;
    std::memcpy(&want, &h, 2);
    ASSERT_EQ(hex(got), hex(want)) << "i16 " << v << " -> f16";
  }
}

TEST(Conversion, WideIntegersOnRandomPatterns) {
  std::mt19937_64 rng(99);
  MismatchLog log;
  for (int i = 0; i < 10000; ++i) {
    uint64_t r = rng();
    r >>= rng() % 64; // all magnitudes
    for (DType from : {DType::I32, DType::U32, DType::I64, DType::U64})
      for (DType to : tc::kAllDTypes)
        log.check(from, r & widthMask(refWidth(from)), to);
  }
  log.report("32/64-bit integers -> every dtype");
  // Host int32 -> float (cvtsi2ss, RNE) directly.
  for (int64_t x = INT32_MIN; x <= INT32_MAX; x += 65537) {
    uint64_t got = 0;
    num::convert(DType::I32, refWrap(DType::I32, x), DType::F32, got);
    ASSERT_EQ(got, f32(static_cast<float>(static_cast<int32_t>(x)))) << x;
  }
}

//===-- The bit-level helpers ---------------------------------------------------===//

TEST(Conversion, IntValueAndWrapInt) {
  EXPECT_TRUE(num::intValue(DType::I8, 0x80) == -128);
  EXPECT_TRUE(num::intValue(DType::U8, 0x80) == 128);
  EXPECT_TRUE(num::intValue(DType::I16, 0xFFFF) == -1);
  EXPECT_TRUE(num::intValue(DType::I32, 0x80000000) == -2147483648ll);
  EXPECT_TRUE(num::intValue(DType::U32, 0xFFFFFFFF) == 4294967295ll);
  EXPECT_TRUE(num::intValue(DType::I64, ~uint64_t(0)) == -1);
  EXPECT_TRUE(num::intValue(DType::U64, ~uint64_t(0)) == (i128(1) << 64) - 1);
  EXPECT_TRUE(num::intValue(DType::Bool, 1) == 1);
  EXPECT_TRUE(num::intValue(DType::Bool, 0) == 0);

  EXPECT_EQ(num::wrapInt(DType::I8, 300), 44u);
  EXPECT_EQ(num::wrapInt(DType::I8, -1), 0xFFu);
  EXPECT_EQ(num::wrapInt(DType::U16, -1), 0xFFFFu);
  EXPECT_EQ(num::wrapInt(DType::I32, -i128(2147483649ll)), 0x7FFFFFFFu);
  EXPECT_EQ(num::wrapInt(DType::I64, (i128(1) << 64) + 5), 5u);
  EXPECT_EQ(num::wrapInt(DType::U64, -1), ~uint64_t(0));
  EXPECT_EQ(num::wrapInt(DType::I64, -(i128(1) << 63)), 0x8000000000000000ull);
  for (DType t : {DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16,
                  DType::U32, DType::U64})
    for (i128 v : intCandidates()) {
      uint64_t b = num::wrapInt(t, v);
      EXPECT_EQ(hex(b), hex(refWrap(t, v))) << dtName(t);
      EXPECT_TRUE(num::intValue(t, b) == refIntValue(t, b)) << dtName(t) << " " << hex(b);
    }
}

TEST(Conversion, FloatValueAndFloatBits) {
  EXPECT_EQ(num::floatValue(DType::F16, 0x0001), 0x1p-24);
  EXPECT_EQ(num::floatValue(DType::F16, 0x7BFF), 65504.0);
  EXPECT_EQ(num::floatValue(DType::BF16, 0x0001), 0x1p-133);
  EXPECT_EQ(num::floatValue(DType::BF16, 0x3F81), 1.0 + 0x1p-7);
  EXPECT_EQ(num::floatValue(DType::F32, 0x3F800001), 1.0 + 0x1p-23);
  EXPECT_TRUE(std::signbit(num::floatValue(DType::F16, 0x8000)));
  EXPECT_TRUE(std::isinf(num::floatValue(DType::BF16, 0xFF80)));
  EXPECT_TRUE(std::isnan(num::floatValue(DType::F16, 0x7C01)));

  EXPECT_EQ(hex(num::floatBits(DType::F16, 2049.0)), "0x6800");
  EXPECT_EQ(hex(num::floatBits(DType::F16, 2051.0)), "0x6802");
  EXPECT_EQ(hex(num::floatBits(DType::F16, 1e-8)), "0x0");
  EXPECT_EQ(hex(num::floatBits(DType::F16, -1e-8)), "0x8000");
  EXPECT_EQ(hex(num::floatBits(DType::F16, 1e6)), "0x7c00");
  EXPECT_EQ(hex(num::floatBits(DType::BF16, 1.0 + 0x1p-8 + 0x1p-40)), "0x3f81");
  EXPECT_EQ(hex(num::floatBits(DType::BF16, 1.0 + 0x1p-8)), "0x3f80");
  EXPECT_EQ(hex(num::floatBits(DType::F32, -0.0)), "0x80000000");
  EXPECT_EQ(hex(num::floatBits(DType::F32, 0x1p-150)), "0x0");
  EXPECT_EQ(hex(num::floatBits(DType::F64, -0.0)), "0x8000000000000000");
  EXPECT_TRUE(refIsNaN(DType::BF16, num::floatBits(DType::BF16, NAN)));
  EXPECT_TRUE(refIsNaN(DType::F16, num::floatBits(DType::F16, NAN)));

  // floatValue is exact on every 16-bit pattern.
  for (uint32_t b = 0; b < 0x10000; ++b)
    for (DType t : {DType::F16, DType::BF16}) {
      double got = num::floatValue(t, b), want = refDecode(t, b);
      if (std::isnan(want))
        ASSERT_TRUE(std::isnan(got)) << dtName(t) << " " << hex(b);
      else
        ASSERT_EQ(f64(got), f64(want)) << dtName(t) << " " << hex(b);
    }
  // floatBits rounds like the reference on random doubles.
  std::mt19937_64 rng(5);
  for (int i = 0; i < 100000; ++i) {
    double m = std::ldexp(static_cast<double>(rng() >> 11), -53) + 0.5;
    double v = std::ldexp(rng() & 1 ? -m : m, static_cast<int>(rng() % 300) - 150);
    for (DType t : {DType::F16, DType::BF16, DType::F32})
      ASSERT_EQ(hex(num::floatBits(t, v)), hex(refEncode(t, refRound(t, v)))) << dtName(t) << " " << v;
  }
}

} // namespace
