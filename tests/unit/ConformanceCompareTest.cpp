// Element values (parsing and printing), comparisons, and random contents.
#include "conformance/Compare.h"
#include "conformance/Json.h"
#include "conformance/Random.h"
#include "conformance/Value.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

using namespace tc;
using namespace tc::conf;

namespace {

uint64_t f32(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
uint64_t f64(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

// Bits of a suite value written as JSON text, or the error.
std::string bitsOf(const std::string &json, DType t) {
  std::string err;
  std::optional<Json> j = parseJson(json, err);
  if (!j)
    return "parse error: " + err;
  std::optional<uint64_t> b = elementBits(*j, t, err);
  if (!b)
    return "error: " + err;
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(*b));
  return buf;
}

HostArray arrayOf(DType t, std::vector<uint64_t> bits) {
  HostArray a = HostArray::zeros(t, {static_cast<int64_t>(bits.size())});
  for (size_t i = 0; i < bits.size(); ++i)
    a.setBits(static_cast<int64_t>(i), bits[i]);
  return a;
}

} // namespace

TEST(ConformanceValue, FloatsRoundOnceToNearestEven) {
  EXPECT_EQ(bitsOf("0.1", DType::F32), "0x3dcccccd");
  EXPECT_EQ(bitsOf("0.1", DType::F64), "0x3fb999999999999a");
  EXPECT_EQ(bitsOf("0.1", DType::F16), "0x2e66"); // 1638 * 2^-14
  EXPECT_EQ(bitsOf("0.1", DType::BF16), "0x3dcd");
  // 1 + 2^-11 is the fp16 midpoint between 1 and 1 + 2^-10; a hair above it
  // must round up, although binary64 cannot hold the hair (double rounding
  // through a double would give 1.0).
  EXPECT_EQ(bitsOf("1.00048828125", DType::F16), "0x3c00"); // the exact tie: to even
  EXPECT_EQ(bitsOf("1.00048828125000000000001", DType::F16), "0x3c01");
  EXPECT_EQ(bitsOf("1.00048828124999999999999", DType::F16), "0x3c00");
  // Same for fp32: 1 + 2^-24 is the midpoint after 1.
  EXPECT_EQ(bitsOf("1.000000059604644775390625", DType::F32), "0x3f800000");
  EXPECT_EQ(bitsOf("1.000000059604644775390625000001", DType::F32), "0x3f800001");
  EXPECT_EQ(bitsOf("65520", DType::F16), "0x7c00");  // rounds to inf
  EXPECT_EQ(bitsOf("65519.99", DType::F16), "0x7bff");
  EXPECT_EQ(bitsOf("3.5e38", DType::F32), "0x7f800000"); // past FLT_MAX + half an ulp
  EXPECT_EQ(bitsOf("1e400", DType::F32),
            "parse error: 1:5: malformed JSON: number overflow parsing '1e400'; write \"inf\" or "
            "\"-inf\" for infinities");
  EXPECT_EQ(bitsOf("-1e-400", DType::F32), "0x80000000");
  EXPECT_EQ(bitsOf("-0.0", DType::F32), "0x80000000"); // the JSON number -0.0
  EXPECT_EQ(bitsOf("16777217", DType::F32), "0x4b800000"); // 2^24 + 1: tie to even
  EXPECT_EQ(bitsOf("3", DType::BF16), "0x4040");
}

TEST(ConformanceValue, SpecialStrings) {
  EXPECT_EQ(bitsOf("\"nan\"", DType::F32), "0x7fc00000");
  EXPECT_EQ(bitsOf("\"nan\"", DType::F16), "0x7e00");
  EXPECT_EQ(bitsOf("\"nan\"", DType::BF16), "0x7fc0");
  EXPECT_EQ(bitsOf("\"nan\"", DType::F64), "0x7ff8000000000000");
  EXPECT_EQ(bitsOf("\"inf\"", DType::F16), "0x7c00");
  EXPECT_EQ(bitsOf("\"-inf\"", DType::BF16), "0xff80");
  EXPECT_EQ(bitsOf("\"-0.0\"", DType::F64), "0x8000000000000000");
  EXPECT_EQ(bitsOf("\"0x7FC00001\"", DType::F32), "0x7fc00001");
  EXPECT_EQ(bitsOf("\"0xffff\"", DType::U16), "0xffff");
  EXPECT_EQ(bitsOf("\"0x01\"", DType::Bool), "0x1");
  EXPECT_EQ(bitsOf("\"0x02\"", DType::Bool), "error: raw bits '0x02' are not a bool (0x00 or 0x01)");
  EXPECT_EQ(bitsOf("\"0x7fc000000\"", DType::F32),
            "error: raw bits '0x7fc000000' must have exactly 8 hex digits for float32");
  EXPECT_EQ(bitsOf("\"0xzz\"", DType::I8),
            "error: raw bits '0xzz' must have exactly 2 hex digits for int8");
  EXPECT_EQ(bitsOf("\"inf\"", DType::I32), "error: 'inf' is not a value of int32");
  EXPECT_EQ(bitsOf("\"1.5\"", DType::F32),
            "error: '1.5' is not a value (numbers, \"nan\", \"inf\", \"-inf\", \"-0.0\" or raw "
            "bits \"0x...\")");
}

TEST(ConformanceValue, IntegersMustFit) {
  EXPECT_EQ(bitsOf("127", DType::I8), "0x7f");
  EXPECT_EQ(bitsOf("-128", DType::I8), "0x80");
  EXPECT_EQ(bitsOf("-129", DType::I8), "error: -129 does not fit int8 [-128, 127]");
  EXPECT_EQ(bitsOf("256", DType::U8), "error: 256 does not fit uint8 [0, 255]");
  EXPECT_EQ(bitsOf("-1", DType::U32), "error: -1 does not fit uint32 [0, 4294967295]");
  EXPECT_EQ(bitsOf("18446744073709551615", DType::U64), "0xffffffffffffffff");
  EXPECT_EQ(bitsOf("-9223372036854775808", DType::I64), "0x8000000000000000");
  EXPECT_EQ(bitsOf("9223372036854775808", DType::I64),
            "error: 9223372036854775808 does not fit int64 [-9223372036854775808, "
            "9223372036854775807]");
  EXPECT_EQ(bitsOf("1e2", DType::I32), "0x64");
  EXPECT_EQ(bitsOf("2.50e1", DType::I16), "0x19");
  EXPECT_EQ(bitsOf("-0.0", DType::I32), "0x0");
  EXPECT_EQ(bitsOf("1.5", DType::I32), "error: 1.5 is not an integer (dtype int32)");
  EXPECT_EQ(bitsOf("1e-3", DType::I32), "error: 1e-3 is not an integer (dtype int32)");
  EXPECT_EQ(bitsOf("1e30", DType::I64),
            "error: 1e30 does not fit int64 [-9223372036854775808, 9223372036854775807]");
  EXPECT_EQ(bitsOf("true", DType::Bool), "0x1");
  EXPECT_EQ(bitsOf("false", DType::Bool), "0x0");
  EXPECT_EQ(bitsOf("1", DType::Bool), "0x1");
}

TEST(ConformanceValue, DecimalToInt) {
  __int128 v = 0;
  EXPECT_EQ(decimalToInt("12.3400e2", v), DecimalInt::Ok);
  EXPECT_EQ(static_cast<int64_t>(v), 1234);
  EXPECT_EQ(decimalToInt("1.2345e3", v), DecimalInt::NotInteger);
  EXPECT_EQ(decimalToInt("-0.000", v), DecimalInt::Ok);
  EXPECT_EQ(static_cast<int64_t>(v), 0);
  EXPECT_EQ(decimalToInt("1e31", v), DecimalInt::OutOfRange);
  EXPECT_EQ(decimalToInt("1e999999999", v), DecimalInt::OutOfRange);
}

TEST(ConformanceCompare, DefaultsPerDType) {
  EXPECT_EQ(defaultCompare(DType::I32).kind, CompareSpec::Kind::Exact);
  EXPECT_EQ(defaultCompare(DType::Bool).kind, CompareSpec::Kind::Exact);
  CompareSpec f16 = defaultCompare(DType::F16), bf16 = defaultCompare(DType::BF16);
  CompareSpec fp32 = defaultCompare(DType::F32), fp64 = defaultCompare(DType::F64);
  EXPECT_EQ(f16.rtol, 1e-3);
  EXPECT_EQ(f16.atol, 1e-5);
  EXPECT_EQ(bf16.rtol, 1.6e-2);
  EXPECT_EQ(bf16.atol, 1e-5);
  EXPECT_EQ(fp32.rtol, 1.3e-6);
  EXPECT_EQ(fp32.atol, 1e-5);
  EXPECT_EQ(fp64.rtol, 1e-7);
  EXPECT_EQ(fp64.atol, 1e-7);
}

TEST(ConformanceCompare, ExactTreatsAllNaNsAlikeAndSignedZerosApart) {
  CompareSpec exact = CompareSpec::exact();
  EXPECT_TRUE(elementsMatch(DType::F32, 0x7fc00000, 0xffc00001, exact)); // NaN payloads
  EXPECT_TRUE(elementsMatch(DType::F16, 0x7e00, 0x7c01, exact));         // quiet vs signalling
  EXPECT_FALSE(elementsMatch(DType::F32, f32(0.0f), f32(-0.0f), exact));
  EXPECT_FALSE(elementsMatch(DType::F32, 0x7fc00000, f32(1.0f), exact));
  EXPECT_FALSE(elementsMatch(DType::F32, f32(1.0f), 0x7fc00000, exact));
  EXPECT_TRUE(elementsMatch(DType::F32, f32(1.0f), f32(1.0f), exact));
  EXPECT_FALSE(elementsMatch(DType::F32, 0x3f800001, f32(1.0f), exact));
}

TEST(ConformanceCompare, Tolerance) {
  CompareSpec tol = CompareSpec::tolerance(0.5, 0.25); // bound for want 2: 0.25 + 1 = 1.25
  EXPECT_TRUE(elementsMatch(DType::F64, f64(3.25), f64(2.0), tol)); // exactly on the bound
  EXPECT_FALSE(elementsMatch(DType::F64, f64(3.25 + 0x1p-50), f64(2.0), tol));
  EXPECT_TRUE(elementsMatch(DType::F64, f64(0.75), f64(2.0), tol));
  EXPECT_FALSE(elementsMatch(DType::F64, f64(0.75 - 0x1p-50), f64(2.0), tol));
  // Relative to want, not got: want 0 leaves atol only.
  EXPECT_TRUE(elementsMatch(DType::F64, f64(0.25), f64(0.0), tol));
  EXPECT_FALSE(elementsMatch(DType::F64, f64(0.3), f64(0.0), tol));
  CompareSpec zero = CompareSpec::tolerance(0, 0);
  EXPECT_TRUE(elementsMatch(DType::F32, f32(-0.0f), f32(0.0f), zero)); // signed zeros are equal
  EXPECT_TRUE(elementsMatch(DType::F32, 0x7f800000, 0x7f800000, zero));
  EXPECT_FALSE(elementsMatch(DType::F32, 0x7f800000, 0xff800000, zero));
  CompareSpec huge = CompareSpec::tolerance(1e300, 1e300);
  EXPECT_FALSE(elementsMatch(DType::F32, 0x7f800000, 0x7f7fffff, huge)); // inf vs max finite
  EXPECT_FALSE(elementsMatch(DType::F32, 0x7f7fffff, 0x7f800000, huge));
  EXPECT_FALSE(elementsMatch(DType::F32, 0x7fc00000, f32(1.0f), huge)); // NaN only matches NaN
  EXPECT_FALSE(elementsMatch(DType::F32, f32(1.0f), 0x7fc00000, huge));
  EXPECT_TRUE(elementsMatch(DType::F32, 0x7fc00000, 0xffc00000, zero));
  // fp16 values are decoded exactly: 1 and 1 + 2^-10 differ by 2^-10.
  EXPECT_TRUE(elementsMatch(DType::F16, 0x3c01, 0x3c00, CompareSpec::tolerance(0, 0x1p-10)));
  EXPECT_FALSE(elementsMatch(DType::F16, 0x3c01, 0x3c00, CompareSpec::tolerance(0, 0x1p-11)));
}

TEST(ConformanceCompare, Ulp) {
  EXPECT_EQ(ulpDistance(DType::F32, f32(1.0f), 0x3f800001), 1u);
  EXPECT_EQ(ulpDistance(DType::F32, f32(-0.0f), f32(0.0f)), 0u);
  EXPECT_EQ(ulpDistance(DType::F32, 0x00000001, 0x80000001), 2u); // across zero
  EXPECT_EQ(ulpDistance(DType::F16, 0x3c00, 0x3bff), 1u);         // 1.0 and the one below
  EXPECT_EQ(ulpDistance(DType::BF16, 0xbf80, 0xbf82), 2u);
  EXPECT_EQ(ulpDistance(DType::F64, f64(1.0), f64(-1.0)), 2 * 0x3ff0000000000000ull);
  CompareSpec one = CompareSpec::ulps(1);
  EXPECT_TRUE(elementsMatch(DType::F32, 0x3f800001, f32(1.0f), one));
  EXPECT_FALSE(elementsMatch(DType::F32, 0x3f800002, f32(1.0f), one));
  EXPECT_TRUE(elementsMatch(DType::F32, 0x80000000, 0x00000001, one));
  EXPECT_FALSE(elementsMatch(DType::F32, 0x7f800000, 0x7f7fffff, one)); // infinities must be equal
  EXPECT_TRUE(elementsMatch(DType::F32, 0xff800000, 0xff800000, CompareSpec::ulps(0)));
  EXPECT_FALSE(elementsMatch(DType::F32, 0x7fc00000, 0x7f800000, CompareSpec::ulps(1000)));
}

// The GPU's extra ULPs (math functions, docs/gpu-numerics.md): like {"ulp": N}, except
// that a zero of the other sign is never within them.
TEST(ConformanceCompare, WithinExtraUlps) {
  EXPECT_TRUE(withinExtraUlps(DType::F32, 0x3f800002, f32(1.0f), 2));
  EXPECT_FALSE(withinExtraUlps(DType::F32, 0x3f800003, f32(1.0f), 2));
  EXPECT_FALSE(withinExtraUlps(DType::F32, 0x3f800001, f32(1.0f), 0));
  EXPECT_FALSE(withinExtraUlps(DType::F32, f32(0.0f), f32(-0.0f), 3));
  EXPECT_FALSE(withinExtraUlps(DType::F32, f32(-0.0f), f32(0.0f), 3));
  EXPECT_FALSE(withinExtraUlps(DType::F16, 0x8000, 0x0000, 1));
  EXPECT_FALSE(withinExtraUlps(DType::BF16, 0x0000, 0x8000, 1));
  EXPECT_FALSE(withinExtraUlps(DType::F64, f64(-0.0), f64(0.0), 2));
  EXPECT_TRUE(withinExtraUlps(DType::F32, f32(-0.0f), f32(-0.0f), 3));
  EXPECT_TRUE(withinExtraUlps(DType::F32, 0x80000001, f32(0.0f), 1));   // a subnormal: rounding
  EXPECT_TRUE(withinExtraUlps(DType::F32, 0x7fc00000, 0xffc00001, 1));  // NaN matches NaN
  EXPECT_FALSE(withinExtraUlps(DType::F32, 0x7f800000, 0x7f7fffff, 3)); // infinities equal
  EXPECT_FALSE(withinExtraUlps(DType::I32, 1, 2, 5));
}

TEST(ConformanceCompare, IntegersAreAlwaysExact) {
  CompareSpec loose = CompareSpec::tolerance(1, 1);
  EXPECT_FALSE(elementsMatch(DType::I32, 1, 2, loose));
  EXPECT_TRUE(elementsMatch(DType::I32, 5, 5, loose));
  EXPECT_FALSE(elementsMatch(DType::Bool, 0, 1, CompareSpec::ulps(5)));
}

TEST(ConformanceCompare, AtolThatAgrees) {
  // |0.0105f - 0.01f| = 5.0000008e-4 against rtol 1e-3 of 0.01 (1e-5): an
  // atol of 4.9000008e-4 is needed; 5.0e-4 (two digits, rounded up) is
  // suggested and makes the buffers agree, 4.9e-4 does not.
  HostArray want = arrayOf(DType::F32, {f32(1.0f), f32(0.01f), f32(-3.0f)});
  HostArray got = arrayOf(DType::F32, {f32(1.0f), f32(0.0105f), f32(-3.001f)});
  CompareSpec spec = CompareSpec::tolerance(1e-3, 1e-5);
  ASSERT_TRUE(compareArrays(got, want, spec));
  std::optional<double> atol = atolThatAgrees(got, want, spec);
  ASSERT_TRUE(atol);
  EXPECT_NEAR(*atol, 5.0e-4, 1e-12);
  EXPECT_FALSE(compareArrays(got, want, CompareSpec::tolerance(1e-3, *atol)));
  EXPECT_TRUE(compareArrays(got, want, CompareSpec::tolerance(1e-3, 4.9e-4)));
  // A NaN or an infinity that differs: no atol helps.
  HostArray nan = arrayOf(DType::F32, {f32(1.0f), 0x7fc00000, f32(-3.0f)});
  EXPECT_FALSE(atolThatAgrees(nan, want, spec));
  HostArray inf = arrayOf(DType::F32, {f32(1.0f), f32(0.0105f), 0xff800000});
  EXPECT_FALSE(atolThatAgrees(inf, want, spec));
  // Exact and ULP specs, and integers, are not about an atol.
  EXPECT_FALSE(atolThatAgrees(got, want, CompareSpec::exact()));
  EXPECT_FALSE(atolThatAgrees(got, want, CompareSpec::ulps(2)));
  HostArray i1 = arrayOf(DType::I32, {1}), i2 = arrayOf(DType::I32, {2});
  EXPECT_FALSE(atolThatAgrees(i1, i2, spec));
}

TEST(ConformanceCompare, FirstMismatchIndexCountAndText) {
  HostArray want = arrayOf(DType::F32, {f32(1.0f), f32(2.0f), f32(3.0f), f32(4.0f)});
  HostArray got = arrayOf(DType::F32, {f32(1.0f), f32(2.5f), f32(3.0f), f32(-0.0f)});
  std::optional<Mismatch> m = compareArrays(got, want, CompareSpec::exact());
  ASSERT_TRUE(m);
  EXPECT_EQ(m->index, 1);
  EXPECT_EQ(m->count, 2);
  EXPECT_EQ(m->got, "2.5 (0x40200000)");
  EXPECT_EQ(m->want, "2 (0x40000000)");
  EXPECT_FALSE(compareArrays(want, want, CompareSpec::exact()));
  HostArray other = HostArray::zeros(DType::F32, {2, 2});
  std::optional<Mismatch> shape = compareArrays(other, want, CompareSpec::exact());
  ASSERT_TRUE(shape);
  EXPECT_EQ(shape->index, -1);
  EXPECT_EQ(shape->got, "float32[2, 2]");
  EXPECT_EQ(shape->want, "float32[4]");
  // compareBits counts NaN payload changes.
  HostArray n1 = arrayOf(DType::F32, {0x7fc00000}), n2 = arrayOf(DType::F32, {0x7fc00001});
  EXPECT_FALSE(compareArrays(n1, n2, CompareSpec::exact()));
  EXPECT_TRUE(compareBits(n1, n2));
}

TEST(ConformanceCompare, FormatElement) {
  EXPECT_EQ(formatElement(DType::F32, f32(0.1f)), "0.1 (0x3dcccccd)");
  EXPECT_EQ(formatElement(DType::F32, f32(-0.0f)), "-0.0 (0x80000000)");
  EXPECT_EQ(formatElement(DType::F32, 0xffc00000), "nan (0xffc00000)");
  EXPECT_EQ(formatElement(DType::F32, 0xff800000), "-inf (0xff800000)");
  EXPECT_EQ(formatElement(DType::F16, 0x2e66), "0.1 (0x2e66)");
  EXPECT_EQ(formatElement(DType::F16, 0x3555), "0.3333 (0x3555)");
  EXPECT_EQ(formatElement(DType::F64, f64(1e300)), "1e+300 (0x7e37e43c8800759c)");
  EXPECT_EQ(formatElement(DType::I8, 0x80), "-128");
  EXPECT_EQ(formatElement(DType::U64, ~0ull), "18446744073709551615");
  EXPECT_EQ(formatElement(DType::I64, 0x8000000000000000ull), "-9223372036854775808");
  EXPECT_EQ(formatElement(DType::Bool, 1), "1");
}

TEST(ConformanceRandom, UniformFollowsTheDocumentedFormula) {
  RandomSpec spec;
  spec.seed = 7;
  spec.dist = RandomSpec::Dist::Uniform;
  spec.low = -1;
  spec.high = 1;
  HostArray a = HostArray::zeros(DType::F32, {100});
  fillRandom(a, spec);
  std::mt19937_64 gen(7);
  for (int i = 0; i < 100; ++i) {
    double u = static_cast<double>(gen() >> 11) * 0x1p-53;
    EXPECT_EQ(a.getBits(i), f32(static_cast<float>(-1 + 2 * u))) << i;
    EXPECT_GE(a.getDouble(i), -1.0);
    EXPECT_LE(a.getDouble(i), 1.0);
  }
  HostArray b = HostArray::zeros(DType::F32, {100});
  fillRandom(b, spec);
  EXPECT_EQ(a.data, b.data); // deterministic
  spec.seed = 8;
  fillRandom(b, spec);
  EXPECT_NE(a.data, b.data);
}

TEST(ConformanceRandom, NormalIsIrwinHall) {
  RandomSpec spec;
  spec.seed = 1;
  spec.dist = RandomSpec::Dist::Normal;
  spec.mean = 10;
  spec.stddev = 2;
  HostArray a = HostArray::zeros(DType::F64, {2000});
  fillRandom(a, spec);
  std::mt19937_64 gen(1);
  uint64_t sum = 0;
  for (int k = 0; k < 12; ++k)
    sum += gen() >> 11;
  EXPECT_EQ(a.getDouble(0), 10 + 2 * (static_cast<double>(sum) * 0x1p-53 - 6.0));
  double mean = 0, var = 0;
  for (int i = 0; i < 2000; ++i) {
    double v = a.getDouble(i);
    EXPECT_GE(v, 10 - 12.0);
    EXPECT_LE(v, 10 + 12.0);
    mean += v / 2000;
  }
  for (int i = 0; i < 2000; ++i)
    var += (a.getDouble(i) - mean) * (a.getDouble(i) - mean) / 2000;
  EXPECT_NEAR(mean, 10, 0.2);
  EXPECT_NEAR(var, 4, 0.5);
}

TEST(ConformanceRandom, IntCoversTheInclusiveRange) {
  RandomSpec spec;
  spec.seed = 3;
  spec.dist = RandomSpec::Dist::Int;
  spec.intLow = -4;
  spec.intHigh = 4;
  HostArray a = HostArray::zeros(DType::I8, {1000});
  fillRandom(a, spec);
  int seen[9] = {};
  for (int i = 0; i < 1000; ++i) {
    double v = a.getDouble(i);
    ASSERT_GE(v, -4);
    ASSERT_LE(v, 4);
    ++seen[static_cast<int>(v) + 4];
  }
  for (int s : seen)
    EXPECT_GT(s, 50);
  // The first draw by the documented formula: low + x mod 9 (x below the rejection bound).
  std::mt19937_64 gen(3);
  uint64_t x = gen();
  uint64_t limit = (~0ull / 9) * 9;
  while (x >= limit)
    x = gen();
  EXPECT_EQ(a.getDouble(0), -4 + static_cast<double>(x % 9));
  // Small integers into a float buffer stay exact.
  HostArray f = HostArray::zeros(DType::F16, {50});
  fillRandom(f, spec);
  for (int i = 0; i < 50; ++i)
    EXPECT_EQ(f.getDouble(i), std::round(f.getDouble(i)));
}

TEST(ConformanceJson, RawNumbersKeepTheirText) {
  std::string err;
  std::optional<Json> j = parseJson(R"({"a": 1.50, "b": -7, "c": 18446744073709551615, "d": 1e300})", err);
  ASSERT_TRUE(j) << err;
  EXPECT_EQ(numberText((*j)["a"]), "1.50");
  EXPECT_EQ(numberText((*j)["b"]), "-7");
  EXPECT_EQ(numberText((*j)["c"]), "18446744073709551615");
  EXPECT_EQ(numberText((*j)["d"]), "1e300");
  EXPECT_TRUE(isNumber((*j)["a"]));
  EXPECT_EQ(intValue((*j)["b"]), -7);
  EXPECT_EQ(intValue((*j)["a"]), std::nullopt);
  EXPECT_EQ(uintValue((*j)["c"]), 18446744073709551615ull);
  EXPECT_EQ(shortText(*j), R"({"a": 1.50, "b": -7, "c": 18446744073709551615, "d": 1e300})");
}

// --rtol/--atol (triton-conformance run, triton-interp, triton-run): each part
// given replaces the dtype's default one; integers stay exact.
TEST(ConformanceCompare, ToleranceOverride) {
  ToleranceOverride o;
  o.rtol = 0.5;
  CompareSpec f16 = defaultCompare(DType::F16, o);
  EXPECT_EQ(f16.kind, CompareSpec::Kind::Tolerance);
  EXPECT_EQ(f16.rtol, 0.5);
  EXPECT_EQ(f16.atol, 1e-5); // float16's default atol
  EXPECT_EQ(defaultCompare(DType::I32, o).kind, CompareSpec::Kind::Exact);
  o.atol = 0;
  EXPECT_EQ(defaultCompare(DType::F64, o).atol, 0.0);
  EXPECT_EQ(o.flags(), "--rtol 0.5 --atol 0");
  EXPECT_EQ(ToleranceOverride{}.flags(), "");
  EXPECT_FALSE(ToleranceOverride{}.any());
  // float16 1 and 1.5 (0x3c00, 0x3e00) are 0.5 apart: within rtol 0.5 of 1.5, not of the default.
  EXPECT_TRUE(elementsMatch(DType::F16, 0x3c00, 0x3e00, f16));
  EXPECT_FALSE(elementsMatch(DType::F16, 0x3c00, 0x3e00, defaultCompare(DType::F16)));
}

TEST(ConformanceCompare, ToleranceValues) {
  double v = -1;
  for (const char *good : {"0", "1e-3", "0.25", "1", "3E2", "0x1p-4"}) {
    EXPECT_EQ(toleranceValueProblem(good, v), "") << good;
    EXPECT_EQ(v, std::strtod(good, nullptr)) << good;
  }
  EXPECT_EQ(toleranceValueProblem("-0", v), "");
  EXPECT_FALSE(std::signbit(v));
  for (const char *bad : {"", " 1", "1 ", "abc", "1e-3x", "nan", "inf", "-inf", "1e999"})
    EXPECT_NE(toleranceValueProblem(bad, v).find("is not a finite number"), std::string::npos)
        << "'" << bad << "'";
  EXPECT_EQ(toleranceValueProblem("-0.5", v), "'-0.5' is negative (a tolerance is >= 0)");
}
