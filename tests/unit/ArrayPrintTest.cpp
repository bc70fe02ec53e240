// `--print` formatting (runtime/ArrayPrint.h). Expected strings are what
// NumPy's str() prints for the same arrays (default print options).
#include "runtime/ArrayPrint.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace tc;

namespace {

HostArray array(DType t, std::vector<int64_t> shape, std::vector<double> values) {
  HostArray a = HostArray::zeros(t, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i)
    a.setDouble(int64_t(i), values[i]);
  return a;
}

HostArray arange(DType t, std::vector<int64_t> shape) {
  HostArray a = HostArray::zeros(t, std::move(shape));
  for (int64_t i = 0; i < a.numElements(); ++i)
    a.setDouble(i, double(i));
  return a;
}

} // namespace

TEST(ArrayPrint, Ints) {
  EXPECT_EQ(formatArray(arange(DType::I32, {5})), "[0 1 2 3 4]");
  EXPECT_EQ(formatArray(array(DType::I8, {3}, {-5, 10, 100})), "[ -5  10 100]");
  EXPECT_EQ(formatArray(arange(DType::I64, {2, 3})), "[[0 1 2]\n [3 4 5]]");
  EXPECT_EQ(formatArray(arange(DType::U8, {2, 2, 2})), "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
  HostArray big = HostArray::zeros(DType::U64, {1});
  big.setBits(0, ~uint64_t(0));
  EXPECT_EQ(formatArray(big), "[18446744073709551615]");
}

TEST(ArrayPrint, Bools) {
  EXPECT_EQ(formatArray(array(DType::Bool, {3}, {1, 0, 1})), "[ True False  True]");
  EXPECT_EQ(formatArray(array(DType::Bool, {2}, {1, 1})), "[True True]");
}

TEST(ArrayPrint, Floats) {
  EXPECT_EQ(formatArray(array(DType::F32, {3}, {0, 1, 2})), "[0. 1. 2.]");
  EXPECT_EQ(formatArray(array(DType::F32, {2}, {1.5, 2.25})), "[1.5  2.25]");
  EXPECT_EQ(formatArray(array(DType::F64, {2}, {-1, 0.5})), "[-1.   0.5]");
  EXPECT_EQ(formatArray(array(DType::F32, {1}, {0.1})), "[0.1]");
  EXPECT_EQ(formatArray(array(DType::F16, {1}, {0.1})), "[0.1]");
  EXPECT_EQ(formatArray(array(DType::BF16, {2}, {0.1, 3})), "[0.1 3. ]");
  EXPECT_EQ(formatArray(array(DType::F32, {3}, {1, NAN, INFINITY})), "[ 1. nan inf]");
  EXPECT_EQ(formatArray(array(DType::F32, {2}, {-INFINITY, -0.0})), "[-inf  -0.]");
  EXPECT_EQ(formatArray(array(DType::F64, {2}, {1e-5, 1})), "[1.e-05 1.e+00]");
  EXPECT_EQ(formatArray(array(DType::F64, {2}, {1e8, 1.5})), "[1.0e+08 1.5e+00]");
  EXPECT_EQ(formatArray(array(DType::F64, {1}, {1.0 / 3})), "[0.33333333]"); // at most 8 digits
  EXPECT_EQ(formatArray(array(DType::F32, {}, {2.5})), "2.5");
  EXPECT_EQ(formatArray(HostArray::zeros(DType::F32, {0})), "[]");
}

TEST(ArrayPrint, WrapsAtSeventyFiveColumns) {
  EXPECT_EQ(formatArray(arange(DType::I32, {30})),
            "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n"
            " 24 25 26 27 28 29]");
}

TEST(ArrayPrint, Summarises) {
  EXPECT_EQ(formatArray(arange(DType::I32, {2000})), "[   0    1    2 ... 1997 1998 1999]");
  EXPECT_EQ(formatArray(arange(DType::I32, {2, 1000})),
            "[[   0    1    2 ...  997  998  999]\n [1000 1001 1002 ... 1997 1998 1999]]");
  EXPECT_EQ(formatArray(arange(DType::I32, {1000, 3})),
            "[[   0    1    2]\n [   3    4    5]\n [   6    7    8]\n ...\n"
            " [2991 2992 2993]\n [2994 2995 2996]\n [2997 2998 2999]]");
  ArrayPrintOptions all;
  all.threshold = -1;
  std::string full = formatArray(arange(DType::I32, {2000}), all);
  EXPECT_EQ(full.find("..."), std::string::npos);
  EXPECT_NE(full.find(" 1000 "), std::string::npos);
}

TEST(ArrayPrint, Elements) {
  HostArray a = array(DType::F32, {4}, {1.5, -0.0, NAN, 0.1});
  EXPECT_EQ(formatElement(a, 0), "1.5");
  EXPECT_EQ(formatElement(a, 1), "-0.");
  EXPECT_EQ(formatElement(a, 2), "nan");
  EXPECT_EQ(formatElement(a, 3), "0.1");
  EXPECT_EQ(formatElement(array(DType::I16, {1}, {-3}), 0), "-3");
  EXPECT_EQ(formatElement(array(DType::Bool, {1}, {1}), 0), "True");
}

// One element (variant and --compare messages) and a 0-d array show every
// digit the value needs: the text reads back as the same bits. Expected
// strings are Python's repr() / NumPy's str() of the same values.
TEST(ArrayPrint, ElementsKeepEveryDigit) {
  HostArray d = HostArray::zeros(DType::F64, {3});
  d.setBits(0, 0x3fd3333333333334); // 0.1 + 0.2
  d.setBits(1, 0x3fd3333333333333); // 0.3
  d.setDouble(2, -9.936469137113522e+252);
  EXPECT_EQ(formatElement(d, 0), "0.30000000000000004");
  EXPECT_EQ(formatElement(d, 1), "0.3");
  EXPECT_EQ(formatElement(d, 2), "-9.936469137113522e+252");
  HostArray f = HostArray::zeros(DType::F32, {1});
  f.setBits(0, 0x3901742e); // float32(0.00012345679); "0.00012346" reads back as another float
  EXPECT_EQ(formatElement(f, 0), "0.00012345679");

  HostArray zd = HostArray::zeros(DType::F64, {});
  zd.setBits(0, 0x3fd3333333333334);
  EXPECT_EQ(formatArray(zd), "0.30000000000000004");
  HostArray zf = HostArray::zeros(DType::F32, {});
  zf.setBits(0, 0x3901742e);
  EXPECT_EQ(formatArray(zf), "0.00012345679");

  // Any finite float32 / float64 reads back (strtof / strtod) as its own bits.
  uint64_t state = 0x9e3779b97f4a7c15;
  auto next = [&] {
    state += 0x9e3779b97f4a7c15;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
    z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
    return z ^ (z >> 31);
  };
  HostArray r32 = HostArray::zeros(DType::F32, {1}), r64 = HostArray::zeros(DType::F64, {1});
  int checked = 0;
  for (int i = 0; i < 20000; ++i) {
    uint64_t b = next();
    // Half of them with a small exponent range (fixed notation, 1e-4 <= |v| < 1e8).
    uint32_t b32 = i % 2 ? uint32_t(b) : (uint32_t(b) & 0x807fffff) | uint32_t(0x71 + b % 40) << 23;
    uint64_t b64 = i % 2 ? b : (b & 0x800fffffffffffff) | uint64_t(0x3f1 + (b >> 52) % 40) << 52;
    r32.setBits(0, b32);
    r64.setBits(0, b64);
    if (std::isfinite(r32.getDouble(0))) {
      std::string s = formatElement(r32, 0);
      float back = std::strtof(s.c_str(), nullptr);
      uint32_t got;
      std::memcpy(&got, &back, 4);
      EXPECT_EQ(got, b32) << s;
      ++checked;
    }
    if (std::isfinite(r64.getDouble(0))) {
      std::string s = formatElement(r64, 0);
      double back = std::strtod(s.c_str(), nullptr);
      uint64_t got;
      std::memcpy(&got, &back, 8);
      EXPECT_EQ(got, b64) << s;
      ++checked;
    }
    if (HasFailure())
      break;
  }
  EXPECT_GT(checked, 39000);
}
