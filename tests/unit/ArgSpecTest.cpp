// `--arg NAME=SPEC` (runtime/ArgSpec.h): parsing, values, generators (exact
// values of arange/full, determinism and ranges of the random kinds), .npy
// inputs and binding to a kernel's parameters.
#include "runtime/ArgSpec.h"
#include "support/ValueBits.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <unistd.h>

using namespace tc;

namespace {

#define EXPECT_CONTAINS(haystack, needle)                                                          \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)                                 \
      << "message: " << (haystack) << "\nwanted: " << (needle)

ArgSpec spec(const std::string &text) {
  std::string error;
  auto s = parseArgSpec(text, error);
  EXPECT_TRUE(s) << text << ": " << error;
  return s.value_or(ArgSpec{});
}

std::string specError(const std::string &text) {
  std::string error;
  EXPECT_FALSE(parseArgSpec(text, error)) << text;
  return error;
}

uint64_t bits(const std::string &text, DType t) {
  std::string error;
  auto b = parseValueBits(text, t, error);
  EXPECT_TRUE(b) << text << ": " << error;
  return b.value_or(0xdeadbeef);
}

std::string bitsError(const std::string &text, DType t) {
  std::string error;
  EXPECT_FALSE(parseValueBits(text, t, error)) << text;
  return error;
}

const ExprEnv kEnv = {{"N", {7, ""}}, {"TM", {4, ""}}};

HostArray buffer(const std::string &text, DType pointee, BufferOptions opts = {}) {
  std::string error;
  auto a = makeBuffer(spec(text), pointee, kEnv, opts, error);
  EXPECT_TRUE(a) << text << ": " << error;
  return a.value_or(HostArray{});
}

std::string bufferError(const std::string &text, DType pointee, BufferOptions opts = {}) {
  std::string error;
  EXPECT_FALSE(makeBuffer(spec(text), pointee, kEnv, opts, error)) << text;
  return error;
}

std::shared_ptr<CompiledKernel> vectorAdd() {
  CompileRequest req;
  req.sourceName = "vector_add.tc";
  req.sourceText = "__global__ void add(int N, float *a, float *b, float *c) {\n"
                   "  int off[SIZE] = get_program_id(0) * SIZE + (0 ... SIZE);\n"
                   "  bool m[SIZE] = off < N;\n"
                   "  *?(m)(c + off) = *?(m)(a + off) + *?(m)(b + off);\n"
                   "}\n";
  req.defines = {{"SIZE", "64"}};
  CompileOutcome out = compileKernel(req);
  EXPECT_TRUE(out.ok()) << out.diagnostics;
  return out.kernel;
}

std::vector<ArgSpec> specs(std::initializer_list<const char *> texts) {
  std::vector<ArgSpec> v;
  for (const char *t : texts)
    v.push_back(spec(t));
  return v;
}

} // namespace

TEST(ArgSpec, ParseScalarsAndFiles) {
  ArgSpec n = spec("N=5000");
  EXPECT_EQ(n.name, "N");
  EXPECT_EQ(n.kind, ArgSpec::Kind::Scalar);
  EXPECT_EQ(n.value, "5000");
  EXPECT_FALSE(n.isBuffer());
  ArgSpec f = spec("b=@data/b.npy");
  EXPECT_EQ(f.kind, ArgSpec::Kind::File);
  EXPECT_EQ(f.path, "data/b.npy");
  EXPECT_EQ(spec(" x = -1.5 ").value, "-1.5");
}

TEST(ArgSpec, ParseBuffers) {
  ArgSpec z = spec("a=zeros:f32[5000]");
  EXPECT_EQ(z.kind, ArgSpec::Kind::Zeros);
  EXPECT_EQ(z.dtype, DType::F32);
  EXPECT_EQ(z.shape, (std::vector<std::string>{"5000"}));
  ArgSpec full = spec("a=full:-0.5:float32[64, 32]");
  EXPECT_EQ(full.kind, ArgSpec::Kind::Full);
  EXPECT_EQ(full.value, "-0.5");
  EXPECT_EQ(full.shape, (std::vector<std::string>{"64", "32"}));
  ArgSpec ri = spec("x=randint:-4:4:i32[cdiv(N, 2), TM]:seed=9");
  EXPECT_EQ(ri.kind, ArgSpec::Kind::Randint);
  EXPECT_EQ(ri.low, "-4");
  EXPECT_EQ(ri.high, "4");
  EXPECT_EQ(ri.shape, (std::vector<std::string>{"cdiv(N, 2)", "TM"}));
  EXPECT_EQ(ri.seed, 9u);
  ArgSpec untyped = spec("a=arange:[N]");
  EXPECT_FALSE(untyped.dtype);
  EXPECT_EQ(spec("a=randn:bfloat16[]").shape.size(), 0u);
  EXPECT_EQ(spec("a=rand:bool[2]").dtype, DType::Bool);
  EXPECT_EQ(spec("a=rand:i1[2]").dtype, DType::Bool);
  EXPECT_EQ(spec("a=rand:half[2]").dtype, DType::F16);
  EXPECT_FALSE(spec("a=randn:f32[3]").seed);
}

TEST(ArgSpec, ParseErrors) {
  EXPECT_CONTAINS(specError("N5000"), "expected NAME=SPEC, got 'N5000'");
  EXPECT_CONTAINS(specError("1x=5"), "'1x' is not a parameter name");
  EXPECT_CONTAINS(specError("N="), "empty value");
  EXPECT_CONTAINS(specError("b=@"), "missing file name after '@'");
  EXPECT_CONTAINS(specError("a=zero:f32[5]"), "unknown buffer kind 'zero'");
  EXPECT_CONTAINS(specError("a=zeros:f33[5]"), "unknown dtype 'f33'");
  EXPECT_CONTAINS(specError("a=zeros:f32[5"), "expected DTYPE[SHAPE]");
  EXPECT_CONTAINS(specError("a=zeros:f32"), "expected DTYPE[SHAPE]");
  EXPECT_CONTAINS(specError("a=zeros:f32[5,]"), "empty dimension");
  EXPECT_CONTAINS(specError("a=zeros:f32[5]:seed=1"), "'zeros' takes no seed");
  EXPECT_CONTAINS(specError("a=randn:f32[5]:sed=1"), "unexpected 'sed=1'");
  EXPECT_CONTAINS(specError("a=randn:f32[5]:seed=-1"), "bad seed '-1'");
  EXPECT_CONTAINS(specError("a=randint:1:f32[5]"), "expected randint:LO:HI:DTYPE[SHAPE][:seed=S]");
  EXPECT_CONTAINS(specError("a=full:f32[5]"), "expected full:VALUE:DTYPE[SHAPE]");
  EXPECT_CONTAINS(specError("a=full::f32[5]"), "empty value");
  EXPECT_CONTAINS(specError("a=zeros:f33[5]"), "--arg a=zeros:f33[5]: ");
}

TEST(ArgSpec, DTypeNames) {
  EXPECT_EQ(parseDTypeName("f32"), DType::F32);
  EXPECT_EQ(parseDTypeName("float32"), DType::F32);
  EXPECT_EQ(parseDTypeName("float"), DType::F32);
  EXPECT_EQ(parseDTypeName("bf16"), DType::BF16);
  EXPECT_EQ(parseDTypeName("bfloat16"), DType::BF16);
  EXPECT_EQ(parseDTypeName("i1"), DType::Bool);
  EXPECT_EQ(parseDTypeName("bool"), DType::Bool);
  EXPECT_EQ(parseDTypeName("uint64"), DType::U64);
  EXPECT_EQ(parseDTypeName("int"), DType::I32);
  EXPECT_FALSE(parseDTypeName("f8"));
}

TEST(ArgSpec, IntegerValues) {
  EXPECT_EQ(bits("5", DType::I32), 5u);
  EXPECT_EQ(bits("-1", DType::I32), 0xffffffffu);
  EXPECT_EQ(bits("-128", DType::I8), 0x80u);
  EXPECT_EQ(bits("255", DType::U8), 255u);
  EXPECT_EQ(bits("+7", DType::U64), 7u);
  EXPECT_EQ(bits("18446744073709551615", DType::U64), ~uint64_t(0));
  EXPECT_EQ(bits("-9223372036854775808", DType::I64), uint64_t(1) << 63);
  EXPECT_EQ(bits("0xffffffff", DType::I32), 0xffffffffu); // raw bits
  EXPECT_CONTAINS(bitsError("2147483648", DType::I32), "'2147483648' does not fit int32");
  EXPECT_CONTAINS(bitsError("256", DType::U8), "does not fit uint8");
  EXPECT_CONTAINS(bitsError("-1", DType::U32), "does not fit uint32");
  EXPECT_CONTAINS(bitsError("1.5", DType::I32), "'1.5' is not an integer (the dtype is int32)");
  EXPECT_CONTAINS(bitsError("", DType::I32), "is not an integer");
  EXPECT_CONTAINS(bitsError("0x123", DType::I8), "do not fit int8 (at most 2 hex digits)");
  EXPECT_CONTAINS(bitsError("0xzz", DType::I8), "bad hexadecimal bits");
}

TEST(ArgSpec, BoolAndFloatValues) {
  EXPECT_EQ(bits("true", DType::Bool), 1u);
  EXPECT_EQ(bits("False", DType::Bool), 0u);
  EXPECT_EQ(bits("1", DType::Bool), 1u);
  EXPECT_CONTAINS(bitsError("2", DType::Bool), "is not a bool");
  EXPECT_EQ(bits("1.5", DType::F32), 0x3fc00000u);
  EXPECT_EQ(bits("0.1", DType::F32), 0x3dcccccdu);
  EXPECT_EQ(bits("5", DType::F32), 0x40a00000u);
  EXPECT_EQ(bits("-2", DType::F64), 0xc000000000000000u);
  EXPECT_EQ(bits("-0.0", DType::F64), 0x8000000000000000u);
  EXPECT_EQ(bits("1.5", DType::F16), 0x3e00u);
  EXPECT_EQ(bits("1.5", DType::BF16), 0x3fc0u);
  EXPECT_EQ(bits("65520", DType::F16), 0x7c00u); // rounds to inf
  EXPECT_EQ(bits("1e40", DType::F32), 0x7f800000u);
  EXPECT_EQ(bits("1e-50", DType::F32), 0u);
  EXPECT_EQ(bits("inf", DType::F32), 0x7f800000u);
  EXPECT_EQ(bits("-inf", DType::F16), 0xfc00u);
  uint64_t nan = bits("nan", DType::F32);
  EXPECT_EQ(nan & 0x7f800000u, 0x7f800000u);
  EXPECT_NE(nan & 0x007fffffu, 0u);
  EXPECT_EQ(bits("0x7fc00001", DType::F32), 0x7fc00001u);
  EXPECT_EQ(bits("0x1", DType::F32), 1u); // smallest subnormal, as raw bits
  EXPECT_CONTAINS(bitsError("0x7fc000000", DType::F32), "at most 8 hex digits");
  EXPECT_CONTAINS(bitsError("one", DType::F32), "'one' is not a number (the dtype is float32)");
  EXPECT_CONTAINS(bitsError("1.5x", DType::F64), "is not a number");
}

TEST(ArgSpec, Scalars) {
  std::string error;
  auto n = makeScalar(spec("N=5000"), DType::I32, error);
  ASSERT_TRUE(n) << error;
  EXPECT_EQ(n->asInt(), 5000);
  auto x = makeScalar(spec("x=0.1"), DType::F32, error);
  ASSERT_TRUE(x) << error;
  EXPECT_EQ(x->bits, 0x3dcccccdu);
  EXPECT_EQ(x->f, double(0.1f));
  EXPECT_FALSE(makeScalar(spec("N=1.5"), DType::I32, error));
  EXPECT_CONTAINS(error, "--arg N=1.5: '1.5' is not an integer");
}

TEST(ArgSpec, ExactGenerators) {
  HostArray z = buffer("a=zeros:f32[N, 2]", DType::F32);
  EXPECT_EQ(z.shape, (std::vector<int64_t>{7, 2}));
  EXPECT_EQ(z.data, std::vector<uint8_t>(56, 0));
  HostArray f = buffer("a=full:2.5:[2,3]", DType::F32);
  EXPECT_EQ(f.dtype, DType::F32);
  EXPECT_EQ(f.shape, (std::vector<int64_t>{2, 3}));
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(f.getBits(i), 0x40200000u);
  HostArray ar = buffer("a=arange:i32[5]", DType::I32);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(ar.getBits(i), uint64_t(i));
  HostArray h = buffer("a=arange:f16[4]", DType::F16);
  EXPECT_EQ(h.getBits(0), 0x0000u);
  EXPECT_EQ(h.getBits(1), 0x3c00u);
  EXPECT_EQ(h.getBits(2), 0x4000u);
  EXPECT_EQ(h.getBits(3), 0x4200u);
  HostArray w = buffer("a=arange:i8[300]", DType::I8);
  EXPECT_EQ(w.getBits(127), 127u);
  EXPECT_EQ(w.getBits(200), 0xc8u); // 200 wraps to -56
  HostArray b = buffer("a=arange:bool[3]", DType::Bool);
  EXPECT_EQ(b.getBits(0), 0u);
  EXPECT_EQ(b.getBits(2), 1u);
  HostArray scalar = buffer("a=full:1:i64[]", DType::I64);
  EXPECT_TRUE(scalar.shape.empty());
  EXPECT_EQ(scalar.numElements(), 1);
  EXPECT_EQ(scalar.getBits(0), 1u);
  HostArray empty = buffer("a=zeros:f32[0]", DType::F32);
  EXPECT_EQ(empty.numElements(), 0);
}

TEST(ArgSpec, BufferErrors) {
  EXPECT_CONTAINS(
      bufferError("a=zeros:f64[4]", DType::F32),
      "--arg a=zeros:f64[4]: dtype float64 does not match the parameter (float*, float32)");
  EXPECT_CONTAINS(bufferError("a=rand:i32[4]", DType::I32), "rand needs a float dtype");
  EXPECT_CONTAINS(bufferError("a=randn:[4]", DType::Bool), "randn needs a float dtype");
  EXPECT_CONTAINS(bufferError("a=zeros:f32[M]", DType::F32),
                  "unknown name 'M'; available: N = 7, TM = 4");
  EXPECT_CONTAINS(bufferError("a=zeros:f32[N - 8]", DType::F32), "dimension 'N - 8' is -1");
  EXPECT_CONTAINS(bufferError("a=zeros:f32[65536, 65536]", DType::F32), "too large");
  EXPECT_CONTAINS(bufferError("a=full:abc:f32[2]", DType::F32), "'abc' is not a number");
  EXPECT_CONTAINS(bufferError("a=full:300:u8[2]", DType::U8), "does not fit uint8");
  EXPECT_CONTAINS(bufferError("a=randint:5:4:i32[2]", DType::I32),
                  "randint bounds [5, 4] are empty");
  EXPECT_CONTAINS(bufferError("a=randint:0:300:i8[2]", DType::I8), "do not fit int8");
  EXPECT_CONTAINS(bufferError("a=randint:-1:1:u8[2]", DType::U8), "do not fit uint8");
}

TEST(ArgSpec, RandomIsDeterministicAndSeeded) {
  HostArray a1 = buffer("a=randn:f32[64]:seed=3", DType::F32);
  HostArray a2 = buffer("a=randn:f32[64]:seed=3", DType::F32);
  HostArray a3 = buffer("a=randn:f32[64]:seed=4", DType::F32);
  EXPECT_EQ(a1.data, a2.data);
  EXPECT_NE(a1.data, a3.data);
  // Without :seed=, the seed comes from --seed and the argument's name.
  HostArray x = buffer("x=rand:f32[16]", DType::F32);
  HostArray y = buffer("y=rand:f32[16]", DType::F32);
  EXPECT_NE(x.data, y.data);
  EXPECT_EQ(x.data, buffer("x=rand:f32[16]", DType::F32).data);
  BufferOptions other;
  other.defaultSeed = 1;
  EXPECT_NE(x.data, buffer("x=rand:f32[16]", DType::F32, other).data);
  EXPECT_EQ(effectiveSeed(spec("x=rand:f32[1]:seed=77"), 5), 77u);
  EXPECT_EQ(effectiveSeed(spec("x=rand:f32[1]"), 5), effectiveSeed(spec("x=randn:f64[9]"), 5));
  EXPECT_NE(effectiveSeed(spec("x=rand:f32[1]"), 5), effectiveSeed(spec("x=rand:f32[1]"), 6));
}

// The streams of ArgSpec.h. SplitMix64 seeded with 1234567 (Rosetta Code's
// "Pseudo-random numbers/Splitmix64" test vector) gives these first outputs;
// rand:f64 is W_0(i) >> 11 times 2^-53 and rand:f32 W_0(i) >> 40 times 2^-24.
TEST(ArgSpec, RandIsSplitMix64) {
  const uint64_t want[] = {6457827717110365317ull, 3203168211198807973ull,
                           9817491932198370423ull, 4593380528125082431ull,
                           16408922859458223821ull};
  HostArray d = buffer("a=rand:f64[5]:seed=1234567", DType::F64);
  HostArray f = buffer("a=rand:f32[5]:seed=1234567", DType::F32);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(d.getDouble(i), std::ldexp(double(want[i] >> 11), -53)) << i;
    EXPECT_EQ(f.getDouble(i), std::ldexp(double(want[i] >> 40), -24)) << i;
  }
}

// Values of the documented formulas (ArgSpec.h) computed by a separate Python
// implementation of them; the randint case rejects (and redraws) elements 2 and 3.
TEST(ArgSpec, RandnAndRandintValues) {
  HostArray n = buffer("a=randn:f64[4]:seed=1234567", DType::F64);
  const double wantN[] = {-0.07549619674682617, 0.7029075622558594, 2.281993865966797,
                          0.5669522285461426};
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(n.getDouble(i), wantN[i]) << i;
  HostArray r = buffer("a=randint:-3:100:i16[8]:seed=8", DType::I16);
  const int64_t wantR[] = {61, 60, 68, 52, 3, 35, 96, 34};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(int16_t(r.getBits(i)), wantR[i]) << i;
  HostArray big = buffer("a=randint:-4611686018427387904:4611686018427387904:i64[6]:seed=5",
                         DType::I64);
  const int64_t wantBig[] = {1504529065952982195,  2327121474584550268,  -2465322806998081373,
                             -3695441669839987550, -2878059887873446174, -2785404087536842443};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(int64_t(big.getBits(i)), wantBig[i]) << i;
}

// Narrow dtypes round the same value once: randn and randint in f16/bf16 are
// the f64 values rounded to nearest even (num::floatBits), rand in f16/bf16 the
// f64 value cut to the dtype's 11/8 significand bits (the same top bits of W_0).
TEST(ArgSpec, NarrowDtypesRoundTheSameValues) {
  const int n = 200000;
  for (const char *kind : {"randn", "randint:-70000:70000", "randint:-9:9"}) {
    HostArray wide = buffer(std::string("a=") + kind + ":f64[" + std::to_string(n) + "]:seed=3",
                            DType::F64);
    for (DType t : {DType::F16, DType::BF16, DType::F32}) {
      HostArray narrow =
          buffer(std::string("a=") + kind + ":[" + std::to_string(n) + "]:seed=3", t);
      for (int i = 0; i < n; ++i)
        ASSERT_EQ(narrow.getBits(i), num::floatBits(t, wide.getDouble(i)))
            << kind << " " << irName(t) << " element " << i << " = " << wide.getDouble(i);
    }
  }
  HostArray wide = buffer("a=rand:f64[100000]:seed=4", DType::F64);
  for (DType t : {DType::F16, DType::BF16, DType::F32}) {
    HostArray narrow = buffer("a=rand:[100000]:seed=4", t);
    int p = t == DType::F16 ? 11 : t == DType::BF16 ? 8 : 24;
    for (int i = 0; i < 100000; ++i)
      ASSERT_EQ(narrow.getDouble(i), std::ldexp(std::floor(std::ldexp(wide.getDouble(i), p)), -p))
          << irName(t) << " element " << i;
  }
}

// Counter-based: an element depends only on its index, not on the buffer's size
// or on how the fill is split between threads (large buffers fill in parallel).
TEST(ArgSpec, RandomValuesIndependentOfSizeAndSplit) {
  struct Kind {
    const char *spec;
    DType t;
  };
  for (Kind k : {Kind{"randn:f32", DType::F32}, Kind{"rand:f16", DType::F16},
                 Kind{"randint:-7:7:i32", DType::I32}}) {
    HostArray big = buffer(std::string("a=") + k.spec + "[3000000]:seed=11", k.t);
    HostArray mid = buffer(std::string("a=") + k.spec + "[2000001]:seed=11", k.t);
    HostArray small = buffer(std::string("a=") + k.spec + "[1000]:seed=11", k.t);
    ASSERT_EQ(big.data.size(), 3000000 * byteSize(k.t));
    EXPECT_TRUE(std::equal(mid.data.begin(), mid.data.end(), big.data.begin())) << k.spec;
    EXPECT_TRUE(std::equal(small.data.begin(), small.data.end(), big.data.begin())) << k.spec;
    EXPECT_NE(big.data, buffer(std::string("a=") + k.spec + "[3000000]:seed=12", k.t).data);
  }
}

TEST(ArgSpec, RandRanges) {
  for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64}) {
    HostArray a = buffer("a=rand:[20000]:seed=1", t);
    double p = t == DType::F16 ? 11 : t == DType::BF16 ? 8 : t == DType::F32 ? 24 : 53;
    double lo = 1, hi = 0;
    for (int64_t i = 0; i < a.numElements(); ++i) {
      double v = a.getDouble(i);
      ASSERT_GE(v, 0.0);
      ASSERT_LT(v, 1.0);
      double scaled = std::ldexp(v, int(p));
      ASSERT_EQ(scaled, std::floor(scaled)) << "not a multiple of 2^-p";
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    EXPECT_LT(lo, 0.01) << irName(t);
    EXPECT_GT(hi, 0.99) << irName(t);
  }
  HostArray n = buffer("a=randn:f64[20000]:seed=2", DType::F64);
  double sum = 0, sq = 0;
  for (int64_t i = 0; i < n.numElements(); ++i) {
    double v = n.getDouble(i);
    ASSERT_LE(std::fabs(v), 6.0);
    sum += v;
    sq += v * v;
  }
  double mean = sum / 20000, var = sq / 20000 - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.05);
  EXPECT_NEAR(var, 1.0, 0.05);
}

TEST(ArgSpec, RandintRangeAndCoverage) {
  HostArray a = buffer("a=randint:-4:4:i32[2000]:seed=5", DType::I32);
  std::set<int64_t> seen;
  for (int64_t i = 0; i < a.numElements(); ++i) {
    int64_t v = int32_t(a.getBits(i));
    ASSERT_GE(v, -4);
    ASSERT_LE(v, 4);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 9u);
  HostArray f = buffer("a=randint:-TM:TM:f32[100]", DType::F32);
  for (int64_t i = 0; i < f.numElements(); ++i) {
    double v = f.getDouble(i);
    ASSERT_EQ(v, std::floor(v));
    ASSERT_LE(std::fabs(v), 4.0);
  }
  HostArray b = buffer("a=randint:0:1:bool[100]", DType::Bool);
  for (int64_t i = 0; i < b.numElements(); ++i)
    ASSERT_LE(b.getBits(i), 1u);
  HostArray full =
      buffer("a=randint:-9223372036854775807-1:9223372036854775807:i64[4]", DType::I64);
  EXPECT_EQ(full.numElements(), 4);
}

TEST(ArgSpec, NpyFiles) {
  auto dir = std::filesystem::temp_directory_path() / ("argspectest-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "b.npy").string(), error;
  std::vector<uint8_t> data = {0, 0, 0xc0, 0x3f, 0, 0, 0x20, 0x40}; // f32 1.5, 2.5
  ASSERT_TRUE(writeNpy(path, DType::F32, {2}, data, {}, error)) << error;
  HostArray b = buffer("b=@" + path, DType::F32);
  EXPECT_EQ(b.shape, (std::vector<int64_t>{2}));
  EXPECT_EQ(b.getDouble(1), 2.5);
  EXPECT_CONTAINS(bufferError("b=@" + path, DType::F64),
                  "holds float32 but the parameter points to float64");
  BufferOptions rel;
  rel.baseDir = dir.string();
  EXPECT_EQ(buffer("b=@b.npy", DType::F32, rel).data, data);
  EXPECT_CONTAINS(bufferError("b=@nope.npy", DType::F32, rel), "nope.npy: cannot open");
  // bf16 written as '<u2' reads back into a bf16 parameter only with --bf16-as-u2.
  std::string bpath = (dir / "h.npy").string();
  ASSERT_TRUE(writeNpy(bpath, DType::BF16, {2}, {0xc0, 0x3f, 0x80, 0xbf}, {}, error)) << error;
  EXPECT_CONTAINS(bufferError("h=@" + bpath, DType::BF16), "read it as bfloat16 with --bf16-as-u2");
  BufferOptions u2;
  u2.bf16FromU2 = true;
  HostArray h = buffer("h=@" + bpath, DType::BF16, u2);
  EXPECT_EQ(h.dtype, DType::BF16);
  EXPECT_EQ(h.getDouble(0), 1.5);
  EXPECT_EQ(h.getDouble(1), -1.0);
  // The option does not turn a uint16 parameter's file into bf16.
  EXPECT_EQ(buffer("h=@" + bpath, DType::U16, u2).dtype, DType::U16);
  std::filesystem::remove_all(dir);
}

TEST(BindArgs, VectorAdd) {
  auto k = vectorAdd();
  ASSERT_TRUE(k);
  BoundArgs bound;
  std::string error;
  ASSERT_TRUE(bindArgs(specs({"c=zeros:f32[N]", "N=100", "a=arange:f32[N]", "b=full:1:f32[N]"}), *k,
                       {}, bound, error))
      << error;
  ASSERT_TRUE(bound.args.scalar("N"));
  EXPECT_EQ(bound.args.scalar("N")->asInt(), 100);
  HostArray *a = bound.args.buffer("a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a, &bound.arrays.at("a"));
  EXPECT_EQ(a->numElements(), 100);
  EXPECT_EQ(a->getDouble(99), 99.0);
  EXPECT_EQ(bound.args.buffer("b")->getDouble(0), 1.0);
  EXPECT_EQ(bound.args.buffer("c")->numElements(), 100);
}

TEST(BindArgs, Errors) {
  auto k = vectorAdd();
  ASSERT_TRUE(k);
  auto bindError = [&](std::initializer_list<const char *> texts) {
    BoundArgs bound;
    std::string error;
    EXPECT_FALSE(bindArgs(specs(texts), *k, {}, bound, error));
    return error;
  };
  std::string missing = bindError({"N=10", "a=zeros:f32[N]", "b=zeros:f32[N]"});
  EXPECT_CONTAINS(missing, "missing --arg for parameter 'c' (float*)");
  EXPECT_CONTAINS(missing, "kernel 'add' takes: int32 N, float* a, float* b, float* c");
  std::string two = bindError({"N=10"});
  EXPECT_CONTAINS(two, "missing --arg for parameter 'a' (float*)\nmissing --arg for parameter 'b'");
  EXPECT_CONTAINS(bindError({"M=10"}),
                  "--arg M: no parameter named 'M'\nnote: kernel 'add' takes:");
  EXPECT_CONTAINS(bindError({"N=1", "N=2"}), "--arg N is given twice");
  EXPECT_CONTAINS(bindError({"N=10", "a=5", "b=zeros:f32[N]", "c=zeros:f32[N]"}),
                  "parameter 'a' (float*) is a pointer; give a buffer, e.g. zeros:f32[N]");
  EXPECT_CONTAINS(
      bindError({"N=zeros:i32[1]", "a=zeros:f32[1]", "b=zeros:f32[1]", "c=zeros:f32[1]"}),
      "parameter 'N' (int32) is a scalar; give a value, e.g. N=64");
  EXPECT_CONTAINS(bindError({"N=x", "a=zeros:f32[1]", "b=zeros:f32[1]", "c=zeros:f32[1]"}),
                  "--arg N=x: 'x' is not an integer");
  EXPECT_CONTAINS(bindError({"N=10", "a=zeros:f32[SIZE * N]", "b=zeros:f32[Q]", "c=zeros:f32[N]"}),
                  "unknown name 'Q'; available: N = 10, SIZE = 64");
}
