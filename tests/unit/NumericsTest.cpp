// Scalar arithmetic of the reference semantics (docs/semantics.md rule 4,
// 5 and 6) through support/Numerics.h: integer wrap-around, truncating division
// and its traps, shifts, umulhi, comparisons; IEEE float arithmetic at every
// float width, fmod, fma, maxNum/minNum, negation and the math functions;
// and a few of the same rules end to end through a kernel.
//
// Expected values are worked out by hand (the tables) or computed
// independently: integers exactly in __int128, f32/f64 with the host's IEEE
// arithmetic, f16 in host float then GCC's soft-fp float -> _Float16, bf16 in
// double then rounded by a local round-to-nearest-even (refRound).
#include "interp/InterpreterBackend.h"
#include "support/Numerics.h"
#include "runtime/Launch.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using tc::DType;
namespace num = tc::num;
using i128 = __int128;
using u128 = unsigned __int128;
using num::Cmp;
using num::Status;

//===-- Reference helpers ----------------------------------------------------===//

const char *dtName(DType t) {
  static const char *names[] = {"bool", "i8",  "i16", "i32",  "i64", "u8", "u16",
                                "u32",  "u64", "f16", "bf16", "f32", "f64"};
  return names[static_cast<int>(t)];
}

const char *statusName(Status s) {
  switch (s) {
  case Status::Ok: return "ok";
  case Status::DivisionByZero: return "division_by_zero";
  case Status::DivisionOverflow: return "division_overflow";
  case Status::ShiftOutOfRange: return "shift_out_of_range";
  case Status::FloatToIntOutOfRange: return "float_to_int_out_of_range";
  }
  return "?";
}

std::string hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

const DType kIntTypes[] = {DType::I8, DType::I16, DType::I32, DType::I64,
                           DType::U8, DType::U16, DType::U32, DType::U64};
const DType kSignedTypes[] = {DType::I8, DType::I16, DType::I32, DType::I64};
const DType kFloatTypes[] = {DType::F16, DType::BF16, DType::F32, DType::F64};

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
uint64_t refWrap(DType t, i128 v) {
  return static_cast<uint64_t>(static_cast<u128>(v)) & widthMask(refWidth(t));
}
// Unsigned 128-bit values wrap the same way (congruent modulo 2^w).
uint64_t refWrapU(DType t, u128 v) { return static_cast<uint64_t>(v) & widthMask(refWidth(t)); }
i128 refValue(DType t, uint64_t bits) {
  unsigned w = refWidth(t);
  bits &= widthMask(w);
  if (refIsSigned(t) && (bits >> (w - 1)) & 1)
    return i128(bits) - (i128(1) << w);
  return i128(bits);
}
i128 refMin(DType t) { return refIsSigned(t) ? -(i128(1) << (refWidth(t) - 1)) : 0; }
i128 refMax(DType t) {
  return refIsSigned(t) ? (i128(1) << (refWidth(t) - 1)) - 1 : (i128(1) << refWidth(t)) - 1;
}

double refDecode(DType t, uint64_t bits) {
  switch (t) {
  case DType::F16: {
    uint16_t b = static_cast<uint16_t>(bits);
    _Float16 h;
    std::memcpy(&h, &b, 2);
    return static_cast<double>(h);
  }
  case DType::BF16:
    return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits & 0xFFFF) << 16));
  case DType::F32: return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  default: return std::bit_cast<double>(bits);
  }
}

bool refIsNaN(DType t, uint64_t bits) { return std::isnan(refDecode(t, bits)); }

// bf16 round to nearest even (p = 8, emin = -126, emax = 127) of a double.
double refRoundBF16(double v) {
  if (v == 0 || std::isnan(v) || std::isinf(v))
    return v;
  int e;
  std::frexp(v, &e);
  int q = std::max(e - 1, -126) - 7;
  double r = std::ldexp(std::nearbyint(std::ldexp(v, -q)), q);
  double maxFinite = std::ldexp(255.0, 127 - 7);
  return std::fabs(r) > maxFinite ? std::copysign(INFINITY, v) : r;
}

uint16_t halfBitsOf(_Float16 h) {
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

// `v` rounded to nearest even into t, as bits of t: f16 by GCC's soft-fp
// double -> _Float16 (one rounding), f32 by the host, bf16 by refRoundBF16.
uint64_t refEncode(DType t, double v) {
  switch (t) {
  case DType::F16: return halfBitsOf(static_cast<_Float16>(v));
  case DType::BF16: {
    double r = refRoundBF16(v);
    if (std::isnan(r))
      return 0x7FC0;
    return std::bit_cast<uint32_t>(static_cast<float>(r)) >> 16;
  }
  case DType::F32: return std::bit_cast<uint32_t>(static_cast<float>(v));
  default: return std::bit_cast<uint64_t>(v);
  }
}

enum class FOp { Add, Sub, Mul, Div };

// The correctly rounded result of a op b in float dtype t, computed without
// the implementation: f64 and f32 with host arithmetic; f16 in host float (the
// exact result rounded to 24 bits, then to 11: innocuous double rounding since
// 24 >= 2 * 11 + 2) and GCC's float -> _Float16; bf16 in double (53 >= 2 * 8 + 2)
// then refRoundBF16.
uint64_t refArith(DType t, FOp op, uint64_t a, uint64_t b) {
  double x = refDecode(t, a), y = refDecode(t, b);
  auto apply = [op](auto p, auto q) {
    switch (op) {
    case FOp::Add: return p + q;
    case FOp::Sub: return p - q;
    case FOp::Mul: return p * q;
    case FOp::Div: return p / q;
    }
    return p;
  };
  switch (t) {
  case DType::F64: return std::bit_cast<uint64_t>(apply(x, y));
  case DType::F32:
  case DType::F16: {
    float r = apply(static_cast<float>(x), static_cast<float>(y));
    return t == DType::F32 ? std::bit_cast<uint32_t>(r) : halfBitsOf(static_cast<_Float16>(r));
  }
  default: return refEncode(DType::BF16, apply(x, y));
  }
}

// Interesting values of each float format (rounded into it) plus random patterns.
std::vector<uint64_t> floatOperands(DType t, size_t randomCount, uint64_t seed) {
  std::vector<double> vals = {0.0, -0.0, 1.0, -1.0, 2.0, 3.0, -3.0, 0.5, 1.5, 0.1, -0.1,
                              1.0 / 3, 7.0, -7.0, 2048.0, 2049.0, 256.0, 65504.0, 1e-5,
                              6e-8, 1e-30, 1e30, 1e300, -1e300, INFINITY, -INFINITY, NAN,
                              0x1p-24, 0x1p-133, 0x1p-149, 0x1p-1074, 1.0 + 0x1p-10,
                              1.0 + 0x1p-7, 1.0 + 0x1p-23, 1.0 + 0x1p-52};
  std::vector<uint64_t> out;
  for (double v : vals) {
    double r = v;
    if (t == DType::F16)
      r = static_cast<double>(static_cast<_Float16>(v));
    else if (t == DType::BF16)
      r = refRoundBF16(v);
    else if (t == DType::F32)
      r = static_cast<float>(v);
    out.push_back(refEncode(t, r));
  }
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < randomCount; ++i)
    out.push_back(rng() & widthMask(refWidth(t)));
  return out;
}

// Compares a float result: NaN matches any NaN, else the bits must be equal.
::testing::AssertionResult sameFloat(DType t, uint64_t got, uint64_t want) {
  if (refIsNaN(t, want)) {
    if (refIsNaN(t, got))
      return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << hex(got) << ", want a NaN";
  }
  if (got == want)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << hex(got) << " (" << refDecode(t, got) << "), want "
                                       << hex(want) << " (" << refDecode(t, want) << ")";
}

//===-- Integers ----------------------------------------------------------------===//

// Edge values of t (as bits) plus random ones.
std::vector<uint64_t> intOperands(DType t, size_t randomCount, uint64_t seed) {
  std::vector<i128> vals = {0, 1, 2, 3, 7, -1, -2, -3, -7, refMin(t), refMin(t) + 1,
                            refMax(t), refMax(t) - 1, refMax(t) / 2, refMin(t) / 2};
  std::vector<uint64_t> out;
  for (i128 v : vals)
    out.push_back(refWrap(t, v));
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < randomCount; ++i)
    out.push_back((rng() >> (rng() % 64)) & widthMask(refWidth(t)));
  return out;
}

struct IntCase {
  const char *what;
  DType t;
  uint64_t a, b, want;
};

// clang-format off
const IntCase kAddCases[] = {
    {"i8 127 + 1 wraps", DType::I8, 127, 1, 0x80},
    {"i8 -128 + -1 wraps", DType::I8, 0x80, 0xFF, 0x7F},
    {"u8 255 + 1 wraps", DType::U8, 255, 1, 0},
    {"i16 32767 + 1", DType::I16, 0x7FFF, 1, 0x8000},
    {"u16 65535 + 2", DType::U16, 0xFFFF, 2, 1},
    {"i32 max + 1", DType::I32, 0x7FFFFFFF, 1, 0x80000000},
    {"u32 max + max", DType::U32, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFE},
    {"i64 max + 1", DType::I64, 0x7FFFFFFFFFFFFFFFull, 1, 0x8000000000000000ull},
    {"u64 max + 1", DType::U64, ~0ull, 1, 0},
};
const IntCase kSubCases[] = {
    {"u8 0 - 1 wraps", DType::U8, 0, 1, 0xFF},
    {"i8 -128 - 1 wraps", DType::I8, 0x80, 1, 0x7F},
    {"u32 0 - 1", DType::U32, 0, 1, 0xFFFFFFFF},
    {"i64 min - 1", DType::I64, 0x8000000000000000ull, 1, 0x7FFFFFFFFFFFFFFFull},
    {"u64 0 - max", DType::U64, 0, ~0ull, 1},
};
const IntCase kMulCases[] = {
    {"i8 16 * 16 wraps to 0", DType::I8, 16, 16, 0},
    {"i8 -128 * -1 wraps", DType::I8, 0x80, 0xFF, 0x80},
    {"i8 100 * 3 = 300 wraps to 44", DType::I8, 100, 3, 44},
    {"u16 300 * 300 wraps", DType::U16, 300, 300, 0x5F90},
    {"i32 65536 * 65536 wraps to 0", DType::I32, 0x10000, 0x10000, 0},
    {"i32 -1 * min", DType::I32, 0xFFFFFFFF, 0x80000000, 0x80000000},
    {"i64 2^32 * 2^32 wraps to 0", DType::I64, 0x100000000ull, 0x100000000ull, 0},
    {"u64 max * max = 1", DType::U64, ~0ull, ~0ull, 1},
    {"i64 -1 * -1", DType::I64, ~0ull, ~0ull, 1},
};
// clang-format on

TEST(IntArith, WrapAroundTables) {
  for (const IntCase &c : kAddCases)
    EXPECT_EQ(hex(num::intAdd(c.t, c.a, c.b)), hex(c.want)) << c.what;
  for (const IntCase &c : kSubCases)
    EXPECT_EQ(hex(num::intSub(c.t, c.a, c.b)), hex(c.want)) << c.what;
  for (const IntCase &c : kMulCases)
    EXPECT_EQ(hex(num::intMul(c.t, c.a, c.b)), hex(c.want)) << c.what;
  EXPECT_EQ(hex(num::intNeg(DType::I8, 0x80)), "0x80");
  EXPECT_EQ(hex(num::intNeg(DType::I16, 0x8000)), "0x8000");
  EXPECT_EQ(hex(num::intNeg(DType::I32, 0x80000000)), "0x80000000");
  EXPECT_EQ(hex(num::intNeg(DType::I64, 0x8000000000000000ull)), "0x8000000000000000");
  EXPECT_EQ(hex(num::intNeg(DType::U8, 1)), "0xff");
  EXPECT_EQ(hex(num::intNeg(DType::U64, 1)), "0xffffffffffffffff");
  EXPECT_EQ(hex(num::intNeg(DType::I32, 5)), "0xfffffffb");
  EXPECT_EQ(hex(num::intNeg(DType::U32, 0)), "0x0");
}

TEST(IntArith, AddSubMulNegAtEveryWidthMatchInt128) {
  for (DType t : kIntTypes) {
    std::vector<uint64_t> ops = intOperands(t, 60, 1 + static_cast<int>(t));
    for (uint64_t a : ops) {
      ASSERT_EQ(hex(num::intNeg(t, a)), hex(refWrap(t, -refValue(t, a)))) << dtName(t) << " -" << hex(a);
      for (uint64_t b : ops) {
        i128 x = refValue(t, a), y = refValue(t, b);
        ASSERT_EQ(hex(num::intAdd(t, a, b)), hex(refWrap(t, x + y))) << dtName(t) << " " << hex(a) << " + " << hex(b);
        ASSERT_EQ(hex(num::intSub(t, a, b)), hex(refWrap(t, x - y))) << dtName(t) << " " << hex(a) << " - " << hex(b);
        ASSERT_EQ(hex(num::intMul(t, a, b)), hex(refWrapU(t, u128(x) * u128(y))))
            << dtName(t) << " " << hex(a) << " * " << hex(b);
      }
    }
  }
}

TEST(IntArith, DivisionTruncatesTowardZero) {
  struct Case {
    int64_t a, b, q, r;
  } cases[] = {{-7, 2, -3, -1}, {7, -2, -3, 1}, {-7, -2, 3, -1}, {7, 2, 3, 1},
               {-1, 2, 0, -1},  {1, -2, 0, 1},  {-6, 3, -2, 0},  {0, -5, 0, 0}};
  for (DType t : kSignedTypes)
    for (const Case &c : cases) {
      uint64_t q = 0, r = 0;
      ASSERT_EQ(num::intDiv(t, refWrap(t, c.a), refWrap(t, c.b), q), Status::Ok);
      ASSERT_EQ(num::intRem(t, refWrap(t, c.a), refWrap(t, c.b), r), Status::Ok);
      EXPECT_EQ(hex(q), hex(refWrap(t, c.q))) << dtName(t) << " " << c.a << " / " << c.b;
      EXPECT_EQ(hex(r), hex(refWrap(t, c.r))) << dtName(t) << " " << c.a << " % " << c.b;
    }
  // Unsigned division sees the bits as non-negative values.
  uint64_t q = 0, r = 0;
  ASSERT_EQ(num::intDiv(DType::U32, 0xFFFFFFF9, 2, q), Status::Ok);
  EXPECT_EQ(hex(q), "0x7ffffffc");
  ASSERT_EQ(num::intRem(DType::U32, 0xFFFFFFF9, 2, r), Status::Ok);
  EXPECT_EQ(hex(r), "0x1");
  ASSERT_EQ(num::intRem(DType::U8, 250, 7, r), Status::Ok);
  EXPECT_EQ(r, 5u);
  ASSERT_EQ(num::intDiv(DType::U8, 0x80, 0xFF, q), Status::Ok) << "u8 128 / 255 is no overflow";
  EXPECT_EQ(q, 0u);
  ASSERT_EQ(num::intRem(DType::U32, 0x80000000, 0xFFFFFFFF, r), Status::Ok);
  EXPECT_EQ(hex(r), "0x80000000");
  ASSERT_EQ(num::intDiv(DType::U64, ~0ull, 3, q), Status::Ok);
  EXPECT_EQ(hex(q), "0x5555555555555555");
  ASSERT_EQ(num::intDiv(DType::U64, 0x8000000000000000ull, ~0ull, q), Status::Ok);
  EXPECT_EQ(q, 0u);
}

TEST(IntArith, DivisionTraps) {
  for (DType t : kIntTypes) {
    for (uint64_t a : {uint64_t(0), uint64_t(1), refWrap(t, -1), refWrap(t, refMin(t))}) {
      uint64_t out = 0;
      EXPECT_STREQ(statusName(num::intDiv(t, a, 0, out)), "division_by_zero") << dtName(t) << " " << hex(a) << " / 0";
      EXPECT_STREQ(statusName(num::intRem(t, a, 0, out)), "division_by_zero") << dtName(t) << " " << hex(a) << " % 0";
    }
  }
  for (DType t : kSignedTypes) {
    uint64_t out = 0, min = refWrap(t, refMin(t)), m1 = refWrap(t, -1);
    EXPECT_STREQ(statusName(num::intDiv(t, min, m1, out)), "division_overflow") << dtName(t) << " MIN / -1";
    EXPECT_STREQ(statusName(num::intRem(t, min, m1, out)), "division_overflow") << dtName(t) << " MIN % -1";
    // Neighbours do not trap.
    EXPECT_EQ(num::intDiv(t, refWrap(t, refMin(t) + 1), m1, out), Status::Ok);
    EXPECT_EQ(hex(out), hex(refWrap(t, refMax(t))));
    EXPECT_EQ(num::intDiv(t, min, 1, out), Status::Ok);
    EXPECT_EQ(hex(out), hex(min));
    EXPECT_EQ(num::intRem(t, min, refWrap(t, -2), out), Status::Ok);
    EXPECT_EQ(out, 0u);
  }
}

TEST(IntArith, DivRemAtEveryWidthMatchInt128) {
  for (DType t : kIntTypes) {
    std::vector<uint64_t> ops = intOperands(t, 60, 100 + static_cast<int>(t));
    for (uint64_t a : ops)
      for (uint64_t b : ops) {
        i128 x = refValue(t, a), y = refValue(t, b);
        const char *want = "ok";
        if (y == 0)
          want = "division_by_zero";
        else if (refIsSigned(t) && x == refMin(t) && y == -1)
          want = "division_overflow";
        uint64_t q = 0, r = 0;
        Status sq = num::intDiv(t, a, b, q), sr = num::intRem(t, a, b, r);
        ASSERT_STREQ(statusName(sq), want) << dtName(t) << " " << hex(a) << " / " << hex(b);
        ASSERT_STREQ(statusName(sr), want) << dtName(t) << " " << hex(a) << " % " << hex(b);
        if (y == 0 || sq != Status::Ok)
          continue;
        // C++ __int128 division truncates toward zero; % takes the dividend's sign.
        ASSERT_EQ(hex(q), hex(refWrap(t, x / y))) << dtName(t) << " " << hex(a) << " / " << hex(b);
        ASSERT_EQ(hex(r), hex(refWrap(t, x % y))) << dtName(t) << " " << hex(a) << " % " << hex(b);
      }
  }
}

TEST(IntArith, ShiftEdges) {
  uint64_t out = 0;
  for (DType t : kIntTypes) {
    unsigned w = refWidth(t);
    // count = width - 1 is fine.
    ASSERT_EQ(num::intShl(t, 1, w - 1, out), Status::Ok) << dtName(t);
    EXPECT_EQ(hex(out), hex(uint64_t(1) << (w - 1))) << dtName(t) << " 1 << (w-1)";
    ASSERT_EQ(num::intShr(t, refWrap(t, refMin(t) == 0 ? refMax(t) : refMin(t)), w - 1, out), Status::Ok);
    EXPECT_EQ(hex(out), hex(refIsSigned(t) ? widthMask(w) : 1)) << dtName(t) << " top bit >> (w-1)";
    // count = width, larger, and negative counts trap.
    for (i128 c : {i128(w), i128(w) + 1, i128(-1), refIsSigned(t) ? refMin(t) : refMax(t)}) {
      if (c < 0 && !refIsSigned(t))
        continue;
      EXPECT_STREQ(statusName(num::intShl(t, 1, refWrap(t, c), out)), "shift_out_of_range")
          << dtName(t) << " 1 << " << static_cast<int64_t>(c);
      EXPECT_STREQ(statusName(num::intShr(t, 1, refWrap(t, c), out)), "shift_out_of_range")
          << dtName(t) << " 1 >> " << static_cast<int64_t>(c);
    }
    // The count is the value of b in t: u8 255 is 255 (traps), i8 0xFF is -1 (traps).
    EXPECT_STREQ(statusName(num::intShl(t, 1, widthMask(w), out)), "shift_out_of_range") << dtName(t);
    // Count 0 is the identity.
    ASSERT_EQ(num::intShl(t, refWrap(t, -7), 0, out), Status::Ok);
    EXPECT_EQ(hex(out), hex(refWrap(t, -7)));
    ASSERT_EQ(num::intShr(t, refWrap(t, -7), 0, out), Status::Ok);
    EXPECT_EQ(hex(out), hex(refWrap(t, -7)));
  }
  // >> on negative signed is arithmetic, on unsigned logical.
  ASSERT_EQ(num::intShr(DType::I32, 0xFFFFFFF8, 1, out), Status::Ok);
  EXPECT_EQ(hex(out), "0xfffffffc");
  ASSERT_EQ(num::intShr(DType::U32, 0xFFFFFFF8, 1, out), Status::Ok);
  EXPECT_EQ(hex(out), "0x7ffffffc");
  ASSERT_EQ(num::intShr(DType::I8, 0x81, 4, out), Status::Ok);
  EXPECT_EQ(hex(out), "0xf8");
  ASSERT_EQ(num::intShr(DType::U8, 0x81, 4, out), Status::Ok);
  EXPECT_EQ(hex(out), "0x8");
  ASSERT_EQ(num::intShr(DType::I16, 0x8000, 15, out), Status::Ok);
  EXPECT_EQ(hex(out), "0xffff");
  ASSERT_EQ(num::intShr(DType::U16, 0x8000, 15, out), Status::Ok);
  EXPECT_EQ(hex(out), "0x1");
  ASSERT_EQ(num::intShr(DType::I64, ~0ull, 63, out), Status::Ok);
  EXPECT_EQ(hex(out), "0xffffffffffffffff");
  ASSERT_EQ(num::intShr(DType::I32, 0xFFFFFFF9, 1, out), Status::Ok); // -7 >> 1 = -4 (floor)
  EXPECT_EQ(hex(out), "0xfffffffc");
  // << wraps (bits shifted out are lost).
  ASSERT_EQ(num::intShl(DType::I8, 0x41, 1, out), Status::Ok);
  EXPECT_EQ(hex(out), "0x82");
  ASSERT_EQ(num::intShl(DType::U8, 0xFF, 4, out), Status::Ok);
  EXPECT_EQ(hex(out), "0xf0");
  ASSERT_EQ(num::intShl(DType::I64, 3, 63, out), Status::Ok);
  EXPECT_EQ(hex(out), "0x8000000000000000");
  ASSERT_EQ(num::intShl(DType::I32, 0xFFFFFFFF, 31, out), Status::Ok);
  EXPECT_EQ(hex(out), "0x80000000");
}

TEST(IntArith, ShiftsMatchInt128) {
  for (DType t : kIntTypes) {
    unsigned w = refWidth(t);
    for (uint64_t a : intOperands(t, 40, 200 + static_cast<int>(t)))
      for (int64_t c = -2; c <= static_cast<int64_t>(w) + 1; ++c) {
        if (c < 0 && !refIsSigned(t))
          continue;
        uint64_t cb = refWrap(t, c), l = 0, r = 0;
        Status sl = num::intShl(t, a, cb, l), sr = num::intShr(t, a, cb, r);
        bool bad = c < 0 || c >= static_cast<int64_t>(w);
        ASSERT_STREQ(statusName(sl), bad ? "shift_out_of_range" : "ok") << dtName(t) << " << " << c;
        ASSERT_STREQ(statusName(sr), bad ? "shift_out_of_range" : "ok") << dtName(t) << " >> " << c;
        if (bad)
          continue;
        i128 x = refValue(t, a);
        ASSERT_EQ(hex(l), hex(refWrapU(t, u128(x) << c))) << dtName(t) << " " << hex(a) << " << " << c;
        // i128 >> is arithmetic (C++20), i.e. floor(x / 2^c); x >= 0 for unsigned.
        ASSERT_EQ(hex(r), hex(refWrap(t, x >> c))) << dtName(t) << " " << hex(a) << " >> " << c;
      }
  }
}

TEST(IntArith, MulHi) {
  EXPECT_EQ(hex(num::intMulHi(DType::U32, 0xFFFFFFFF, 0xFFFFFFFF)), "0xfffffffe");
  EXPECT_EQ(hex(num::intMulHi(DType::I32, 0xFFFFFFFF, 0xFFFFFFFF)), "0x0");       // -1 * -1 = 1
  EXPECT_EQ(hex(num::intMulHi(DType::I32, 0xFFFFFFFF, 1)), "0xffffffff");         // -1 * 1 = -1
  EXPECT_EQ(hex(num::intMulHi(DType::U32, 0xFFFFFFFF, 1)), "0x0");
  EXPECT_EQ(hex(num::intMulHi(DType::I32, 0x80000000, 0x80000000)), "0x40000000");
  EXPECT_EQ(hex(num::intMulHi(DType::U32, 0x80000000, 0x80000000)), "0x40000000");
  EXPECT_EQ(hex(num::intMulHi(DType::U32, 0x12345678, 0x9ABCDEF0)), "0xb00ea4e");
  EXPECT_EQ(hex(num::intMulHi(DType::U64, 0x8000000000000000ull, 4)), "0x2");
  EXPECT_EQ(hex(num::intMulHi(DType::U64, ~0ull, ~0ull)), "0xfffffffffffffffe");
  EXPECT_EQ(hex(num::intMulHi(DType::I64, 0x8000000000000000ull, 0x8000000000000000ull)), "0x4000000000000000");
  EXPECT_EQ(hex(num::intMulHi(DType::I64, ~0ull, 2)), "0xffffffffffffffff");
  EXPECT_EQ(hex(num::intMulHi(DType::I8, 0x80, 0x7F)), "0xc0");   // -16256 >> 8 = -64
  EXPECT_EQ(hex(num::intMulHi(DType::U8, 200, 200)), "0x9c");     // 40000 >> 8 = 156
  EXPECT_EQ(hex(num::intMulHi(DType::I16, 0x7FFF, 0x7FFF)), "0x3fff");
  for (DType t : kIntTypes) {
    unsigned w = refWidth(t);
    std::vector<uint64_t> ops = intOperands(t, 40, 300 + static_cast<int>(t));
    for (uint64_t a : ops)
      for (uint64_t b : ops) {
        uint64_t want;
        if (refIsSigned(t))
          want = refWrap(t, (refValue(t, a) * refValue(t, b)) >> w); // |product| <= 2^126
        else
          want = refWrapU(t, (u128(a) * u128(b)) >> w);
        ASSERT_EQ(hex(num::intMulHi(t, a, b)), hex(want)) << dtName(t) << " umulhi(" << hex(a) << ", " << hex(b) << ")";
      }
  }
}

TEST(IntArith, CompareBySignedness) {
  EXPECT_TRUE(num::compare(DType::I32, Cmp::Lt, 0xFFFFFFFF, 0));
  EXPECT_FALSE(num::compare(DType::U32, Cmp::Lt, 0xFFFFFFFF, 0));
  EXPECT_TRUE(num::compare(DType::I8, Cmp::Lt, 0x80, 0x7F));
  EXPECT_FALSE(num::compare(DType::U8, Cmp::Lt, 0x80, 0x7F));
  EXPECT_TRUE(num::compare(DType::U64, Cmp::Gt, 0x8000000000000000ull, 1));
  EXPECT_FALSE(num::compare(DType::I64, Cmp::Gt, 0x8000000000000000ull, 1));
  EXPECT_TRUE(num::compare(DType::Bool, Cmp::Gt, 1, 0));
  EXPECT_TRUE(num::compare(DType::Bool, Cmp::Ne, 1, 0));
  for (DType t : kIntTypes) {
    std::vector<uint64_t> ops = intOperands(t, 20, 400 + static_cast<int>(t));
    for (uint64_t a : ops)
      for (uint64_t b : ops) {
        i128 x = refValue(t, a), y = refValue(t, b);
        ASSERT_EQ(num::compare(t, Cmp::Eq, a, b), x == y);
        ASSERT_EQ(num::compare(t, Cmp::Ne, a, b), x != y);
        ASSERT_EQ(num::compare(t, Cmp::Lt, a, b), x < y) << dtName(t) << " " << hex(a) << " < " << hex(b);
        ASSERT_EQ(num::compare(t, Cmp::Le, a, b), x <= y);
        ASSERT_EQ(num::compare(t, Cmp::Gt, a, b), x > y);
        ASSERT_EQ(num::compare(t, Cmp::Ge, a, b), x >= y);
      }
  }
}

//===-- Floats --------------------------------------------------------------------===//

struct FloatCase {
  const char *what;
  DType t;
  uint64_t a, b, want;
};

// clang-format off
const FloatCase kFloatAddCases[] = {
    {"f16 2048 + 1 = 2048 (tie to even)", DType::F16, 0x6800, 0x3C00, 0x6800},
    {"f16 2048 + 3 = 2052 (tie to even)", DType::F16, 0x6800, 0x4200, 0x6802},
    {"f16 2050 + 1 = 2052 (tie to even)", DType::F16, 0x6801, 0x3C00, 0x6802},
    {"f16 65504 + 16 = inf", DType::F16, 0x7BFF, 0x4C00, 0x7C00},
    {"f16 65504 + 15 = 65504", DType::F16, 0x7BFF, 0x4B80, 0x7BFF},
    {"f16 -0 + -0 = -0", DType::F16, 0x8000, 0x8000, 0x8000},
    {"f16 -0 + +0 = +0", DType::F16, 0x8000, 0x0000, 0x0000},
    {"f16 subnormal + subnormal", DType::F16, 0x0001, 0x0001, 0x0002},
    {"f16 1 + 2^-11 = 1 (tie)", DType::F16, 0x3C00, 0x1000, 0x3C00},
    {"bf16 256 + 1 = 256 (tie to even)", DType::BF16, 0x4380, 0x3F80, 0x4380},
    {"bf16 256 + 3 = 260 (tie to even)", DType::BF16, 0x4380, 0x4040, 0x4382},
    {"bf16 1 + 2^-8 = 1 (tie)", DType::BF16, 0x3F80, 0x3B80, 0x3F80},
    {"bf16 max + max = inf", DType::BF16, 0x7F7F, 0x7F7F, 0x7F80},
    {"bf16 smallest subnormals", DType::BF16, 0x0001, 0x0001, 0x0002},
    {"f32 1 + 2^-24 = 1 (tie)", DType::F32, 0x3F800000, 0x33800000, 0x3F800000},
    {"f32 inf + -inf = NaN", DType::F32, 0x7F800000, 0xFF800000, 0x7FC00000},
    {"f64 0.1 + 0.2", DType::F64, 0x3FB999999999999Aull, 0x3FC999999999999Aull, 0x3FD3333333333334ull},
};
const FloatCase kFloatSubCases[] = {
    {"f16 1 - 1 = +0", DType::F16, 0x3C00, 0x3C00, 0x0000},
    {"f16 -0 - +0 = -0", DType::F16, 0x8000, 0x0000, 0x8000},
    {"f32 x - x = +0", DType::F32, 0x40490FDB, 0x40490FDB, 0x00000000},
    {"bf16 inf - inf = NaN", DType::BF16, 0x7F80, 0x7F80, 0x7FC0},
};
const FloatCase kFloatMulCases[] = {
    {"f16 2^-24 * 0.5 = 0 (tie to even)", DType::F16, 0x0001, 0x3800, 0x0000},
    {"f16 3*2^-24 * 0.5 = 2*2^-24 (tie to even)", DType::F16, 0x0003, 0x3800, 0x0002},
    {"f16 256 * 256 = inf", DType::F16, 0x5C00, 0x5C00, 0x7C00},
    {"f16 -1 * 0 = -0", DType::F16, 0xBC00, 0x0000, 0x8000},
    {"bf16 (1+2^-7)^2 rounds", DType::BF16, 0x3F81, 0x3F81, 0x3F82},
    {"f32 0 * inf = NaN", DType::F32, 0x00000000, 0x7F800000, 0x7FC00000},
    {"f32 no flush to zero", DType::F32, 0x00800000, 0x3F000000, 0x00400000},
};
const FloatCase kFloatDivCases[] = {
    {"f16 1/3", DType::F16, 0x3C00, 0x4200, 0x3555},
    {"bf16 1/3", DType::BF16, 0x3F80, 0x4040, 0x3EAB},
    {"f32 1/3", DType::F32, 0x3F800000, 0x40400000, 0x3EAAAAAB},
    {"f32 1/0 = inf", DType::F32, 0x3F800000, 0x00000000, 0x7F800000},
    {"f32 -1/0 = -inf", DType::F32, 0xBF800000, 0x00000000, 0xFF800000},
    {"f32 1/-0 = -inf", DType::F32, 0x3F800000, 0x80000000, 0xFF800000},
    {"f32 0/0 = NaN", DType::F32, 0x00000000, 0x00000000, 0x7FC00000},
    {"f16 1/0 = inf", DType::F16, 0x3C00, 0x0000, 0x7C00},
    {"f64 1/3", DType::F64, 0x3FF0000000000000ull, 0x4008000000000000ull, 0x3FD5555555555555ull},
};
// fmod: the result has the dividend's sign and is exact.
const FloatCase kFloatRemCases[] = {
    {"f32 fmod(5.5, 2) = 1.5", DType::F32, 0x40B00000, 0x40000000, 0x3FC00000},
    {"f32 fmod(-5.5, 2) = -1.5", DType::F32, 0xC0B00000, 0x40000000, 0xBFC00000},
    {"f32 fmod(5.5, -2) = 1.5", DType::F32, 0x40B00000, 0xC0000000, 0x3FC00000},
    {"f32 fmod(-5.5, -2) = -1.5", DType::F32, 0xC0B00000, 0xC0000000, 0xBFC00000},
    {"f32 fmod(-4, 2) = -0", DType::F32, 0xC0800000, 0x40000000, 0x80000000},
    {"f32 fmod(1, 0) = NaN", DType::F32, 0x3F800000, 0x00000000, 0x7FC00000},
    {"f32 fmod(inf, 1) = NaN", DType::F32, 0x7F800000, 0x3F800000, 0x7FC00000},
    {"f32 fmod(1, inf) = 1", DType::F32, 0x3F800000, 0x7F800000, 0x3F800000},
    {"f16 fmod(-7, 2) = -1", DType::F16, 0xC700, 0x4000, 0xBC00},
    {"bf16 fmod(7, -2) = 1", DType::BF16, 0x40E0, 0xC000, 0x3F80},
    {"f64 fmod(-0.0, 3) = -0", DType::F64, 0x8000000000000000ull, 0x4008000000000000ull, 0x8000000000000000ull},
};
// clang-format on

TEST(FloatArith, HandTables) {
  for (const FloatCase &c : kFloatAddCases)
    EXPECT_TRUE(sameFloat(c.t, num::floatAdd(c.t, c.a, c.b), c.want)) << c.what;
  for (const FloatCase &c : kFloatSubCases)
    EXPECT_TRUE(sameFloat(c.t, num::floatSub(c.t, c.a, c.b), c.want)) << c.what;
  for (const FloatCase &c : kFloatMulCases)
    EXPECT_TRUE(sameFloat(c.t, num::floatMul(c.t, c.a, c.b), c.want)) << c.what;
  for (const FloatCase &c : kFloatDivCases)
    EXPECT_TRUE(sameFloat(c.t, num::floatDiv(c.t, c.a, c.b), c.want)) << c.what;
  for (const FloatCase &c : kFloatRemCases)
    EXPECT_TRUE(sameFloat(c.t, num::floatRem(c.t, c.a, c.b), c.want)) << c.what;
}

// The hand tables agree with the independent reference (a check of the test).
TEST(FloatArithReference, HandTablesAgreeWithReference) {
  for (const FloatCase &c : kFloatAddCases)
    EXPECT_TRUE(sameFloat(c.t, refArith(c.t, FOp::Add, c.a, c.b), c.want)) << c.what;
  for (const FloatCase &c : kFloatSubCases)
    EXPECT_TRUE(sameFloat(c.t, refArith(c.t, FOp::Sub, c.a, c.b), c.want)) << c.what;
  for (const FloatCase &c : kFloatMulCases)
    EXPECT_TRUE(sameFloat(c.t, refArith(c.t, FOp::Mul, c.a, c.b), c.want)) << c.what;
  for (const FloatCase &c : kFloatDivCases)
    EXPECT_TRUE(sameFloat(c.t, refArith(c.t, FOp::Div, c.a, c.b), c.want)) << c.what;
  for (const FloatCase &c : kFloatRemCases)
    EXPECT_TRUE(sameFloat(c.t, refEncode(c.t, std::fmod(refDecode(c.t, c.a), refDecode(c.t, c.b))), c.want))
        << c.what;
}

TEST(FloatArith, AddSubMulDivRemMatchReference) {
  for (DType t : kFloatTypes) {
    std::vector<uint64_t> ops = floatOperands(t, 150, 500 + static_cast<int>(t));
    size_t bad = 0;
    for (uint64_t a : ops)
      for (uint64_t b : ops) {
        struct {
          const char *name;
          uint64_t got, want;
        } r[] = {
            {"+", num::floatAdd(t, a, b), refArith(t, FOp::Add, a, b)},
            {"-", num::floatSub(t, a, b), refArith(t, FOp::Sub, a, b)},
            {"*", num::floatMul(t, a, b), refArith(t, FOp::Mul, a, b)},
            {"/", num::floatDiv(t, a, b), refArith(t, FOp::Div, a, b)},
            {"fmod", num::floatRem(t, a, b), refEncode(t, std::fmod(refDecode(t, a), refDecode(t, b)))},
        };
        for (const auto &x : r) {
          auto ok = sameFloat(t, x.got, x.want);
          if (!ok && ++bad <= 10)
            ADD_FAILURE() << dtName(t) << " " << hex(a) << " " << x.name << " " << hex(b) << ": " << ok.message();
        }
      }
  }
}

TEST(FloatArith, HalfAdditionExhaustiveAgainstOne) {
  // x + 1 and x * 3 for every f16 x, against GCC's _Float16 via float.
  size_t bad = 0;
  for (uint32_t x = 0; x < 0x10000; ++x)
    for (uint64_t y : {uint64_t(0x3C00), uint64_t(0x4200), uint64_t(0x8001)}) {
      auto a = sameFloat(DType::F16, num::floatAdd(DType::F16, x, y), refArith(DType::F16, FOp::Add, x, y));
      auto m = sameFloat(DType::F16, num::floatMul(DType::F16, x, y), refArith(DType::F16, FOp::Mul, x, y));
      if (!a && ++bad <= 5)
        ADD_FAILURE() << "f16 " << hex(x) << " + " << hex(y) << ": " << a.message();
      if (!m && ++bad <= 5)
        ADD_FAILURE() << "f16 " << hex(x) << " * " << hex(y) << ": " << m.message();
    }
}

TEST(FloatArith, NegFlipsTheSignBit) {
  EXPECT_EQ(hex(num::floatNeg(DType::F32, 0x00000000)), "0x80000000"); // -(+0) = -0
  EXPECT_EQ(hex(num::floatNeg(DType::F32, 0x80000000)), "0x0");
  EXPECT_EQ(hex(num::floatNeg(DType::F32, 0x7FC00000)), "0xffc00000"); // NaN's sign flips
  EXPECT_EQ(hex(num::floatNeg(DType::F32, 0x7F800001)), "0xff800001"); // payload kept
  EXPECT_EQ(hex(num::floatNeg(DType::F64, 0)), "0x8000000000000000");
  EXPECT_EQ(hex(num::floatNeg(DType::F64, 0x7FF8000000000000ull)), "0xfff8000000000000");
  EXPECT_EQ(hex(num::floatNeg(DType::F16, 0x0000)), "0x8000");
  EXPECT_EQ(hex(num::floatNeg(DType::BF16, 0x0000)), "0x8000");
  for (uint32_t x = 0; x < 0x10000; ++x) {
    ASSERT_EQ(num::floatNeg(DType::F16, x), x ^ 0x8000u) << hex(x);
    ASSERT_EQ(num::floatNeg(DType::BF16, x), x ^ 0x8000u) << hex(x);
  }
  std::mt19937_64 rng(3);
  for (int i = 0; i < 10000; ++i) {
    uint64_t x = rng();
    ASSERT_EQ(num::floatNeg(DType::F64, x), x ^ 0x8000000000000000ull);
    ASSERT_EQ(num::floatNeg(DType::F32, x & 0xFFFFFFFF), (x & 0xFFFFFFFF) ^ 0x80000000u);
  }
}

TEST(FloatArith, FmaRoundsOnce) {
  // f32: a = 1 + 2^-12, a*a = 1 + 2^-11 + 2^-24 rounds (tie, even) to 1 + 2^-11;
  // c = -(1 + 2^-11): separately 0, fused 2^-24.
  uint64_t a = 0x3F800800, c = 0xBF801000;
  EXPECT_EQ(hex(num::floatFma(DType::F32, a, a, c)), "0x33800000");
  EXPECT_EQ(hex(num::floatAdd(DType::F32, num::floatMul(DType::F32, a, a), c)), "0x0");
  // f64: a = 1 + 2^-27, a*a = 1 + 2^-26 + 2^-54; fused gives 2^-54.
  uint64_t a64 = std::bit_cast<uint64_t>(1.0 + 0x1p-27), c64 = std::bit_cast<uint64_t>(-(1.0 + 0x1p-26));
  EXPECT_EQ(hex(num::floatFma(DType::F64, a64, a64, c64)), hex(std::bit_cast<uint64_t>(0x1p-54)));
  // f16: a = 1 + 2^-6 (0x3C10), a*a = 1 + 2^-5 + 2^-12 (rounds to 1 + 2^-5);
  // c = -(1 + 2^-5) (0xBC20): fused 2^-12 = 0x0C00.
  EXPECT_EQ(hex(num::floatFma(DType::F16, 0x3C10, 0x3C10, 0xBC20)), "0xc00");
  EXPECT_EQ(hex(num::floatAdd(DType::F16, num::floatMul(DType::F16, 0x3C10, 0x3C10), 0xBC20)), "0x0");
  // bf16: a = 1 + 2^-4 (0x3F88), a*a = 1 + 2^-3 + 2^-8 (rounds, tie to even, to
  // 1 + 2^-3); c = -(1 + 2^-3) (0xBF90): fused 2^-8 = 0x3B80.
  EXPECT_EQ(hex(num::floatFma(DType::BF16, 0x3F88, 0x3F88, 0xBF90)), "0x3b80");
  EXPECT_EQ(hex(num::floatAdd(DType::BF16, num::floatMul(DType::BF16, 0x3F88, 0x3F88), 0xBF90)), "0x0");
  // f16 result rounded once from the exact value: 2048 * 1 + 1 = 2049 -> 2048 (tie).
  EXPECT_EQ(hex(num::floatFma(DType::F16, 0x6800, 0x3C00, 0x3C00)), "0x6800");
  // inf * 0 + x is NaN.
  EXPECT_TRUE(refIsNaN(DType::F32, num::floatFma(DType::F32, 0x7F800000, 0, 0x3F800000)));
  // Random f32 and f64 against the C library's correctly rounded fmaf / fma.
  std::vector<uint64_t> o32 = floatOperands(DType::F32, 40, 600), o64 = floatOperands(DType::F64, 40, 601);
  size_t bad = 0;
  for (uint64_t x : o32)
    for (uint64_t y : o32)
      for (uint64_t z : {o32[2], o32[10], o32[40], o32[60]}) {
        float r = std::fmaf(std::bit_cast<float>(uint32_t(x)), std::bit_cast<float>(uint32_t(y)),
                            std::bit_cast<float>(uint32_t(z)));
        auto ok = sameFloat(DType::F32, num::floatFma(DType::F32, x, y, z), std::bit_cast<uint32_t>(r));
        if (!ok && ++bad <= 5)
          ADD_FAILURE() << "f32 fma(" << hex(x) << ", " << hex(y) << ", " << hex(z) << "): " << ok.message();
      }
  for (uint64_t x : o64)
    for (uint64_t y : o64)
      for (uint64_t z : {o64[2], o64[10], o64[40], o64[60]}) {
        double r = std::fma(std::bit_cast<double>(x), std::bit_cast<double>(y), std::bit_cast<double>(z));
        auto ok = sameFloat(DType::F64, num::floatFma(DType::F64, x, y, z), std::bit_cast<uint64_t>(r));
        if (!ok && ++bad <= 5)
          ADD_FAILURE() << "f64 fma(" << hex(x) << ", " << hex(y) << ", " << hex(z) << "): " << ok.message();
      }
}

// maxNum / minNum reference: the non-NaN operand; max(-0, +0) = +0, min = -0.
uint64_t refMaxMin(DType t, uint64_t a, uint64_t b, bool isMax) {
  double x = refDecode(t, a), y = refDecode(t, b);
  if (std::isnan(x))
    return b;
  if (std::isnan(y))
    return a;
  if (x == 0 && y == 0) {
    bool negA = std::signbit(x);
    if (isMax)
      return negA ? b : a;
    return negA ? a : b;
  }
  if (isMax)
    return x > y ? a : b;
  return x < y ? a : b;
}

TEST(FloatArith, MaxNumMinNum) {
  struct Case {
    const char *what;
    uint64_t a, b, max, min;
  } cases[] = {
      {"NaN, 1", 0x7FC00000, 0x3F800000, 0x3F800000, 0x3F800000},
      {"1, NaN", 0x3F800000, 0x7FC00000, 0x3F800000, 0x3F800000},
      {"-NaN, -1", 0xFFC00000, 0xBF800000, 0xBF800000, 0xBF800000},
      {"NaN, NaN", 0x7FC00000, 0x7FC00000, 0x7FC00000, 0x7FC00000},
      {"-0, +0", 0x80000000, 0x00000000, 0x00000000, 0x80000000},
      {"+0, -0", 0x00000000, 0x80000000, 0x00000000, 0x80000000},
      {"-inf, NaN", 0xFF800000, 0x7FC00000, 0xFF800000, 0xFF800000},
      {"-inf, inf", 0xFF800000, 0x7F800000, 0x7F800000, 0xFF800000},
      {"2, 3", 0x40000000, 0x40400000, 0x40400000, 0x40000000},
      {"-2, -3", 0xC0000000, 0xC0400000, 0xC0000000, 0xC0400000},
      {"subnormal, 0", 0x00000001, 0x00000000, 0x00000001, 0x00000000},
  };
  for (const Case &c : cases) {
    EXPECT_TRUE(sameFloat(DType::F32, num::floatMax(DType::F32, c.a, c.b), c.max)) << "max(" << c.what << ")";
    EXPECT_TRUE(sameFloat(DType::F32, num::floatMin(DType::F32, c.a, c.b), c.min)) << "min(" << c.what << ")";
  }
  EXPECT_EQ(hex(num::floatMax(DType::F16, 0x8000, 0x0000)), "0x0");
  EXPECT_EQ(hex(num::floatMin(DType::F16, 0x0000, 0x8000)), "0x8000");
  EXPECT_EQ(hex(num::floatMax(DType::BF16, 0x7FC0, 0x3F80)), "0x3f80");
  EXPECT_EQ(hex(num::floatMin(DType::F64, 0x7FF8000000000000ull, 0xBFF0000000000000ull)), "0xbff0000000000000");
  EXPECT_EQ(hex(num::floatMax(DType::F64, 0x8000000000000000ull, 0)), "0x0");
  for (DType t : kFloatTypes) {
    std::vector<uint64_t> ops = floatOperands(t, 40, 700 + static_cast<int>(t));
    for (uint64_t a : ops)
      for (uint64_t b : ops) {
        ASSERT_TRUE(sameFloat(t, num::floatMax(t, a, b), refMaxMin(t, a, b, true)))
            << dtName(t) << " max(" << hex(a) << ", " << hex(b) << ")";
        ASSERT_TRUE(sameFloat(t, num::floatMin(t, a, b), refMaxMin(t, a, b, false)))
            << dtName(t) << " min(" << hex(a) << ", " << hex(b) << ")";
      }
  }
}

TEST(FloatArith, ComparisonsWithNaNAreFalseExceptNe) {
  for (DType t : kFloatTypes) {
    uint64_t nan = refEncode(t, NAN), one = refEncode(t, 1.0);
    for (uint64_t x : {one, nan}) {
      EXPECT_FALSE(num::compare(t, Cmp::Eq, nan, x)) << dtName(t);
      EXPECT_FALSE(num::compare(t, Cmp::Lt, nan, x)) << dtName(t);
      EXPECT_FALSE(num::compare(t, Cmp::Le, nan, x)) << dtName(t);
      EXPECT_FALSE(num::compare(t, Cmp::Gt, nan, x)) << dtName(t);
      EXPECT_FALSE(num::compare(t, Cmp::Ge, nan, x)) << dtName(t);
      EXPECT_TRUE(num::compare(t, Cmp::Ne, nan, x)) << dtName(t);
      EXPECT_FALSE(num::compare(t, Cmp::Eq, x, nan)) << dtName(t);
      EXPECT_FALSE(num::compare(t, Cmp::Ge, x, nan)) << dtName(t);
      EXPECT_TRUE(num::compare(t, Cmp::Ne, x, nan)) << dtName(t);
    }
    // -0 == +0.
    uint64_t pz = 0, nz = refEncode(t, -0.0);
    EXPECT_TRUE(num::compare(t, Cmp::Eq, nz, pz)) << dtName(t);
    EXPECT_FALSE(num::compare(t, Cmp::Lt, nz, pz)) << dtName(t);
    EXPECT_TRUE(num::compare(t, Cmp::Le, pz, nz)) << dtName(t);
    EXPECT_FALSE(num::compare(t, Cmp::Ne, nz, pz)) << dtName(t);
    // Floats compare by value, not by bits: -1 < 1, -2 < -1.
    EXPECT_TRUE(num::compare(t, Cmp::Lt, refEncode(t, -2.0), refEncode(t, -1.0))) << dtName(t);
    EXPECT_TRUE(num::compare(t, Cmp::Gt, one, refEncode(t, -1.0))) << dtName(t);
    std::vector<uint64_t> ops = floatOperands(t, 40, 800 + static_cast<int>(t));
    for (uint64_t a : ops)
      for (uint64_t b : ops) {
        double x = refDecode(t, a), y = refDecode(t, b);
        ASSERT_EQ(num::compare(t, Cmp::Eq, a, b), x == y) << dtName(t) << " " << hex(a) << " == " << hex(b);
        ASSERT_EQ(num::compare(t, Cmp::Ne, a, b), x != y) << dtName(t) << " " << hex(a) << " != " << hex(b);
        ASSERT_EQ(num::compare(t, Cmp::Lt, a, b), x < y) << dtName(t) << " " << hex(a) << " < " << hex(b);
        ASSERT_EQ(num::compare(t, Cmp::Le, a, b), x <= y) << dtName(t) << " " << hex(a) << " <= " << hex(b);
        ASSERT_EQ(num::compare(t, Cmp::Gt, a, b), x > y) << dtName(t) << " " << hex(a) << " > " << hex(b);
        ASSERT_EQ(num::compare(t, Cmp::Ge, a, b), x >= y) << dtName(t) << " " << hex(a) << " >= " << hex(b);
      }
  }
}

TEST(FloatMath, ExactAndEdgeCases) {
  using num::MathFn;
  auto f32m = [](MathFn f, float x) {
    return num::floatMath(DType::F32, f, std::bit_cast<uint32_t>(x));
  };
  auto b32 = [](float x) -> uint64_t { return std::bit_cast<uint32_t>(x); };
  EXPECT_EQ(hex(f32m(MathFn::Sqrt, 2.0f)), "0x3fb504f3");
  EXPECT_EQ(hex(f32m(MathFn::Sqrt, 4.0f)), hex(b32(2.0f)));
  EXPECT_EQ(hex(f32m(MathFn::Sqrt, -0.0f)), "0x80000000");
  EXPECT_TRUE(refIsNaN(DType::F32, f32m(MathFn::Sqrt, -1.0f)));
  EXPECT_EQ(hex(f32m(MathFn::Sqrt, INFINITY)), "0x7f800000");
  EXPECT_EQ(hex(f32m(MathFn::Rsqrt, 4.0f)), hex(b32(0.5f)));
  EXPECT_EQ(hex(f32m(MathFn::Rsqrt, 0.25f)), hex(b32(2.0f)));
  EXPECT_EQ(hex(f32m(MathFn::Rsqrt, 0.0f)), "0x7f800000");
  EXPECT_EQ(hex(f32m(MathFn::Rsqrt, INFINITY)), "0x0");
  EXPECT_TRUE(refIsNaN(DType::F32, f32m(MathFn::Rsqrt, -1.0f)));
  EXPECT_EQ(hex(f32m(MathFn::Abs, -0.0f)), "0x0");
  EXPECT_EQ(hex(f32m(MathFn::Abs, -INFINITY)), "0x7f800000");
  EXPECT_EQ(hex(f32m(MathFn::Abs, -3.5f)), hex(b32(3.5f)));
  EXPECT_TRUE(refIsNaN(DType::F32, f32m(MathFn::Abs, -NAN)));
  EXPECT_EQ(hex(f32m(MathFn::Floor, -0.5f)), hex(b32(-1.0f)));
  EXPECT_EQ(hex(f32m(MathFn::Floor, 2.5f)), hex(b32(2.0f)));
  EXPECT_EQ(hex(f32m(MathFn::Floor, -0.0f)), "0x80000000");
  EXPECT_EQ(hex(f32m(MathFn::Ceil, -0.5f)), "0x80000000"); // ceil(-0.5) = -0
  EXPECT_EQ(hex(f32m(MathFn::Ceil, 2.1f)), hex(b32(3.0f)));
  EXPECT_EQ(hex(f32m(MathFn::Exp, 0.0f)), hex(b32(1.0f)));
  EXPECT_EQ(hex(f32m(MathFn::Exp, -INFINITY)), "0x0");
  EXPECT_EQ(hex(f32m(MathFn::Exp, 1.0f)), "0x402df854"); // e rounded to f32
  EXPECT_EQ(hex(f32m(MathFn::Exp, 100.0f)), "0x7f800000"); // overflows f32
  EXPECT_EQ(hex(f32m(MathFn::Exp2, 3.0f)), hex(b32(8.0f)));
  EXPECT_EQ(hex(f32m(MathFn::Exp2, -149.0f)), "0x1"); // no flush to zero
  EXPECT_EQ(hex(f32m(MathFn::Log, 0.0f)), "0xff800000");
  EXPECT_EQ(hex(f32m(MathFn::Log, 1.0f)), "0x0");
  EXPECT_TRUE(refIsNaN(DType::F32, f32m(MathFn::Log, -1.0f)));
  EXPECT_EQ(hex(f32m(MathFn::Log2, 8.0f)), hex(b32(3.0f)));
  EXPECT_EQ(hex(f32m(MathFn::Log2, 0x1p-149f)), hex(b32(-149.0f)));
  EXPECT_EQ(hex(f32m(MathFn::Sin, -0.0f)), "0x80000000");
  EXPECT_EQ(hex(f32m(MathFn::Sin, 0.0f)), "0x0");
  EXPECT_EQ(hex(f32m(MathFn::Cos, 0.0f)), hex(b32(1.0f)));
  EXPECT_TRUE(refIsNaN(DType::F32, f32m(MathFn::Sin, INFINITY)));
  // f16 / bf16 results are rounded to the type.
  EXPECT_EQ(hex(num::floatMath(DType::F16, MathFn::Exp2, 0x4900)), "0x6400");  // 2^10 = 1024
  EXPECT_EQ(hex(num::floatMath(DType::F16, MathFn::Exp2, 0x4C00)), "0x7c00");  // 2^16 overflows f16
  EXPECT_EQ(hex(num::floatMath(DType::BF16, MathFn::Exp2, 0x4180)), "0x4780"); // 2^16 fits bf16
  EXPECT_EQ(hex(num::floatMath(DType::F16, MathFn::Sqrt, 0x4000)), "0x3da8");  // sqrt 2 = 1.41421 -> 1.4140625
  EXPECT_EQ(hex(num::floatMath(DType::BF16, MathFn::Sqrt, 0x4000)), "0x3fb5"); // -> 1.4140625
  EXPECT_EQ(hex(num::floatMath(DType::F16, MathFn::Abs, 0x8001)), "0x1");
  EXPECT_EQ(hex(num::floatMath(DType::F64, MathFn::Sqrt, std::bit_cast<uint64_t>(2.0))),
            hex(std::bit_cast<uint64_t>(std::sqrt(2.0))));
}

// Transcendentals: computed in double (the C library) and rounded once to t.
TEST(FloatMath, ComputedInDoubleAndRoundedOnce) {
  using num::MathFn;
  struct Fn {
    MathFn f;
    double (*ref)(double);
    const char *name;
  } fns[] = {{MathFn::Exp, [](double x) { return std::exp(x); }, "exp"},
             {MathFn::Exp2, [](double x) { return std::exp2(x); }, "exp2"},
             {MathFn::Log, [](double x) { return std::log(x); }, "log"},
             {MathFn::Log2, [](double x) { return std::log2(x); }, "log2"},
             {MathFn::Sqrt, [](double x) { return std::sqrt(x); }, "sqrt"},
             {MathFn::Sin, [](double x) { return std::sin(x); }, "sin"},
             {MathFn::Cos, [](double x) { return std::cos(x); }, "cos"},
             {MathFn::Abs, [](double x) { return std::fabs(x); }, "abs"},
             {MathFn::Floor, [](double x) { return std::floor(x); }, "floor"},
             {MathFn::Ceil, [](double x) { return std::ceil(x); }, "ceil"}};
  size_t bad = 0;
  for (DType t : {DType::F16, DType::BF16, DType::F32}) {
    for (uint64_t x : floatOperands(t, 300, 900 + static_cast<int>(t)))
      for (const Fn &fn : fns) {
        double exact = fn.ref(refDecode(t, x));
        // Round the double result to t independently.
        uint64_t want;
        if (t == DType::F16)
          want = halfBitsOf(static_cast<_Float16>(exact)); // soft-fp double -> f16, one rounding
        else
          want = refEncode(t, exact);                       // host double -> float, refRoundBF16
        auto ok = sameFloat(t, num::floatMath(t, fn.f, x), want);
        if (!ok && ++bad <= 10)
          ADD_FAILURE() << dtName(t) << " " << fn.name << "(" << hex(x) << "): " << ok.message();
      }
  }
}

} // namespace

//===-- The same rules through a kernel ------------------------------------------------===//
//
// The tile engine must apply these scalar rules lane by lane; a few of them,
// end to end through compileKernel and the interpreter backend.

namespace {

// Compiles `src`, binds `arrays` by name and runs one program; returns false
// (with a failure) if it does not compile or does not finish normally.
bool runKernel(const std::string &src, std::map<std::string, tc::HostArray *> arrays) {
  tc::CompileRequest req;
  req.sourceName = "numerics.tc";
  req.sourceText = src;
  tc::CompileOutcome c = tc::compileKernel(req);
  if (!c.ok()) {
    ADD_FAILURE() << c.diagnostics;
    return false;
  }
  tc::LaunchArgs args;
  for (auto &[name, a] : arrays)
    args.setBuffer(name, a);
  tc::RunResult r = tc::createInterpreterBackend()->launch(*c.kernel, {1, 1, 1}, args, {});
  if (r.status != tc::RunResult::Status::Ok) {
    ADD_FAILURE() << (r.trap ? r.trap->render() : r.error);
    return false;
  }
  return true;
}

tc::HostArray bitsArray(DType t, std::vector<uint64_t> bits) {
  tc::HostArray a = tc::HostArray::zeros(t, {static_cast<int64_t>(bits.size())});
  for (size_t i = 0; i < bits.size(); ++i)
    a.setBits(static_cast<int64_t>(i), bits[i]);
  return a;
}

TEST(KernelNumerics, FloatNegMinMax) {
  tc::HostArray x = bitsArray(DType::F32, {0x00000000, 0x7FC00000, 0x80000000, 0x3F800000});
  tc::HostArray out = tc::HostArray::zeros(DType::F32, {12});
  ASSERT_TRUE(runKernel(R"(__global__ void k(float *x, float *out) {
  int r[4] = 0 ... 4;
  float v[4] = *(x + r);
  *(out + r) = -v;
  *(out + 4 + r) = max(v, 1.0f);
  *(out + 8 + r) = min(v, -v);
}
)", {{"x", &x}, {"out", &out}}));
  EXPECT_EQ(hex(out.getBits(0)), "0x80000000"); // -(+0) = -0
  EXPECT_EQ(hex(out.getBits(1)), "0xffc00000"); // neg of NaN flips the sign
  EXPECT_EQ(hex(out.getBits(2)), "0x0");
  EXPECT_EQ(hex(out.getBits(3)), "0xbf800000");
  for (int i = 4; i < 8; ++i)
    EXPECT_EQ(hex(out.getBits(i)), "0x3f800000") << i; // max(NaN, 1) = 1, max(+-0, 1) = 1
  EXPECT_EQ(hex(out.getBits(8)), "0x80000000");  // min(+0, -0) = -0
  EXPECT_TRUE(refIsNaN(DType::F32, out.getBits(9))); // min(NaN, -NaN) = NaN
  EXPECT_EQ(hex(out.getBits(10)), "0x80000000"); // min(-0, +0) = -0
  EXPECT_EQ(hex(out.getBits(11)), "0xbf800000");
}

TEST(KernelNumerics, IntegerDivisionWrapAndShift) {
  tc::HostArray x = bitsArray(DType::I32, {refWrap(DType::I32, -7), 7, refWrap(DType::I32, -7), 0x7FFFFFFF,
                                           2, refWrap(DType::I32, -2), refWrap(DType::I32, -2), 1});
  tc::HostArray out = tc::HostArray::zeros(DType::I32, {18});
  ASSERT_TRUE(runKernel(R"(__global__ void k(int *x, int *out) {
  int r[4] = 0 ... 4;
  int a[4] = *(x + r);
  int b[4] = *(x + 4 + r);
  *(out + r) = a / b;
  *(out + 4 + r) = a % b;
  *(out + 8 + r) = a + b;
  *(out + 12 + r) = a >> 1;
  *(out + 16) = -7 / 2;
  *(out + 17) = -7 % 2;
}
)", {{"x", &x}, {"out", &out}}));
  std::vector<double> want = {-3, -3, 3, 2147483647,              // truncating division
                              -1, 1, -1, 0,                       // % takes the dividend's sign
                              -5, 5, -9, -2147483648.0,           // wrap-around
                              -4, 3, -4, 1073741823,              // arithmetic >>
                              -4, 1};                             // all-constant: floor, Python modulo
  for (int i = 0; i < 18; ++i)
    EXPECT_EQ(out.getDouble(i), want[static_cast<size_t>(i)]) << "out[" << i << "]";
}

TEST(KernelNumerics, NarrowFloatsRoundToNearestEven) {
  tc::HostArray h = bitsArray(DType::F16, {0x6800, 0x6800, 0x7BFF, 0x3C00, 0x3C00, 0x4200, 0x4C00, 0x1000,
                                           0, 0, 0, 0});
  tc::HostArray f = bitsArray(DType::F32, {0x3F808000, 0x3F818000, 0x3F808001, 0xBF808000});
  tc::HostArray b = tc::HostArray::zeros(DType::BF16, {4});
  ASSERT_TRUE(runKernel(R"(__global__ void k(half *h, float *f, bf16 *b) {
  int r[4] = 0 ... 4;
  half x[4] = *(h + r);
  half y[4] = *(h + 4 + r);
  *(h + 8 + r) = x + y;
  float g[4] = *(f + r);
  *(b + r) = (bf16)g;
}
)", {{"h", &h}, {"f", &f}, {"b", &b}}));
  EXPECT_EQ(hex(h.getBits(8)), "0x6800");  // 2048 + 1 = 2048
  EXPECT_EQ(hex(h.getBits(9)), "0x6802");  // 2048 + 3 = 2052
  EXPECT_EQ(hex(h.getBits(10)), "0x7c00"); // 65504 + 16 = inf
  EXPECT_EQ(hex(h.getBits(11)), "0x3c00"); // 1 + 2^-11 = 1
  EXPECT_EQ(hex(b.getBits(0)), "0x3f80");  // ties to even, not truncation
  EXPECT_EQ(hex(b.getBits(1)), "0x3f82");
  EXPECT_EQ(hex(b.getBits(2)), "0x3f81");
  EXPECT_EQ(hex(b.getBits(3)), "0xbf80");
}

} // namespace
