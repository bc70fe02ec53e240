// .npy reading and writing: round trips of every dtype, hand-made files of
// every supported flavour (versions, byte orders), every error path, and a
// small fuzz loop that must never crash.
#include "support/Npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <unistd.h>

using namespace tc;

namespace {

/// A .npy file with the given version and raw header text (not padded).
std::string makeFile(unsigned major, const std::string &header, const std::string &data) {
  std::string f = "\x93NUMPY";
  f += static_cast<char>(major);
  f += '\0';
  uint32_t len = static_cast<uint32_t>(header.size());
  for (unsigned i = 0; i < (major == 1 ? 2u : 4u); ++i)
    f += static_cast<char>((len >> (8 * i)) & 0xff);
  return f + header + data;
}

std::string bytes(std::initializer_list<int> bs) {
  std::string s;
  for (int b : bs)
    s += static_cast<char>(b);
  return s;
}

std::optional<NpyArray> parse(const std::string &file, std::string &error,
                              NpyReadOptions opts = {}) {
  return parseNpy(file, "t.npy", opts, error);
}

/// Expects `file` to be rejected with a message naming t.npy and containing `what`.
void expectError(const std::string &file, const std::string &what, NpyReadOptions opts = {}) {
  std::string error;
  EXPECT_FALSE(parse(file, error, opts).has_value()) << what;
  EXPECT_EQ(error.rfind("t.npy: ", 0), 0u) << error;
  EXPECT_NE(error.find(what), std::string::npos) << "message: " << error << "\nwanted: " << what;
}

std::vector<uint8_t> patternBytes(size_t n) {
  std::vector<uint8_t> d(n);
  for (size_t i = 0; i < n; ++i)
    d[i] = static_cast<uint8_t>(i * 37 + 11);
  return d;
}

} // namespace

TEST(Npy, HeaderIsNumPysLayout) {
  std::string f = encodeNpy(DType::F32, {2, 3}, std::vector<uint8_t>(24, 0));
  ASSERT_EQ(f.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  unsigned len = static_cast<uint8_t>(f[8]) | (static_cast<uint8_t>(f[9]) << 8);
  EXPECT_EQ((10 + len) % 64, 0u);
  std::string header = f.substr(10, len);
  EXPECT_EQ(header.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", 0), 0u);
  EXPECT_EQ(header.back(), '\n');
  EXPECT_EQ(f.size(), 10 + len + 24);
}

TEST(Npy, ShapeRepr) {
  std::string one = encodeNpy(DType::I32, {5}, std::vector<uint8_t>(20, 0));
  EXPECT_NE(one.find("'shape': (5,), }"), std::string::npos);
  std::string zero = encodeNpy(DType::I32, {}, std::vector<uint8_t>(4, 0));
  EXPECT_NE(zero.find("'shape': (), }"), std::string::npos);
}

TEST(Npy, DescrOfEveryDType) {
  EXPECT_EQ(npyDescr(DType::Bool), "|b1");
  EXPECT_EQ(npyDescr(DType::I8), "|i1");
  EXPECT_EQ(npyDescr(DType::I16), "<i2");
  EXPECT_EQ(npyDescr(DType::I32), "<i4");
  EXPECT_EQ(npyDescr(DType::I64), "<i8");
  EXPECT_EQ(npyDescr(DType::U8), "|u1");
  EXPECT_EQ(npyDescr(DType::U16), "<u2");
  EXPECT_EQ(npyDescr(DType::U32), "<u4");
  EXPECT_EQ(npyDescr(DType::U64), "<u8");
  EXPECT_EQ(npyDescr(DType::F16), "<f2");
  EXPECT_EQ(npyDescr(DType::BF16), "<u2");
  EXPECT_EQ(npyDescr(DType::BF16, {NpyBf16Descr::Name}), "bfloat16");
  EXPECT_EQ(npyDescr(DType::F32), "<f4");
  EXPECT_EQ(npyDescr(DType::F64), "<f8");
}

TEST(Npy, RoundTripEveryDType) {
  for (DType t : kAllDTypes) {
    std::vector<int64_t> shape{3, 5};
    std::vector<uint8_t> data = patternBytes(15 * byteSize(t));
    if (t == DType::Bool)
      for (size_t i = 0; i < data.size(); ++i)
        data[i] = i % 3 == 0;
    NpyReadOptions ro;
    ro.bf16FromU2 = t == DType::BF16; // bf16 is written as '<u2'
    std::string error;
    auto back = parse(encodeNpy(t, shape, data), error, ro);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(back->dtype, t) << irName(t);
    EXPECT_EQ(back->shape, shape);
    EXPECT_EQ(back->data, data) << irName(t);
  }
}

TEST(Npy, Bf16Conventions) {
  std::vector<uint8_t> data = {0xc0, 0x3f, 0x80, 0xbf}; // bf16 1.5, -1.0
  std::string error;
  // '<u2' reads as uint16 unless asked to read it as bf16.
  auto asU16 = parse(encodeNpy(DType::BF16, {2}, data), error);
  ASSERT_TRUE(asU16) << error;
  EXPECT_EQ(asU16->dtype, DType::U16);
  // The descr 'bfloat16' (ml_dtypes' name) is unambiguous.
  auto named = parse(encodeNpy(DType::BF16, {2}, data, {NpyBf16Descr::Name}), error);
  ASSERT_TRUE(named) << error;
  EXPECT_EQ(named->dtype, DType::BF16);
  EXPECT_EQ(named->data, data);
  // '<V2' is what np.save writes for ml_dtypes.bfloat16: ambiguous without the option.
  std::string v2 = makeFile(1, "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }\n",
                            std::string(data.begin(), data.end()));
  expectError(v2, "ambiguous dtype '<V2'");
  expectError(v2, "--bf16-as-u2");
  NpyReadOptions ro;
  ro.bf16FromU2 = true;
  auto v2bf = parse(v2, error, ro);
  ASSERT_TRUE(v2bf) << error;
  EXPECT_EQ(v2bf->dtype, DType::BF16);
  EXPECT_EQ(v2bf->data, data);
}

TEST(Npy, ZeroDimAndEmptyArrays) {
  std::string error;
  auto scalar = parse(encodeNpy(DType::F64, {}, std::vector<uint8_t>(8, 0)), error);
  ASSERT_TRUE(scalar) << error;
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->data.size(), 8u);
  auto empty = parse(encodeNpy(DType::F32, {0, 4}, {}), error);
  ASSERT_TRUE(empty) << error;
  EXPECT_EQ(empty->shape, (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(empty->data.empty());
}

TEST(Npy, BigEndianIsSwapped) {
  std::string error;
  auto i4 = parse(makeFile(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
                           bytes({0, 0, 1, 2, 0xff, 0xff, 0xff, 0xfe})),
                  error);
  ASSERT_TRUE(i4) << error;
  EXPECT_EQ(i4->dtype, DType::I32);
  // 0x00000102 = 258 and 0xfffffffe = -2, stored little-endian.
  EXPECT_EQ(i4->data, (std::vector<uint8_t>{2, 1, 0, 0, 0xfe, 0xff, 0xff, 0xff}));
  auto f8 = parse(makeFile(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }",
                           bytes({0x3f, 0xf8, 0, 0, 0, 0, 0, 0})), // 1.5
                  error);
  ASSERT_TRUE(f8) << error;
  double v;
  std::memcpy(&v, f8->data.data(), 8);
  EXPECT_EQ(v, 1.5);
  auto u1 =
      parse(makeFile(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }", bytes({200})),
            error);
  ASSERT_TRUE(u1) << error;
  EXPECT_EQ(u1->data[0], 200);
}

// Fortran order (np.save of a column-major array, e.g. `a.T`): the data
// lists the first axis fastest; the array read is the same logical array in
// row-major order. Expected values: element (i, j, k) = 100 i + 10 j + k,
// placed by hand at column-major offset i + 2 (j + 3 k).
TEST(Npy, FortranOrderIsReorderedToRowMajor) {
  std::string error;
  // 2 x 3 int16, big-endian: [[1, 2, 3], [4, 5, 6]] stored 1 4 2 5 3 6.
  auto m = parse(makeFile(1, "{'descr': '>i2', 'fortran_order': True, 'shape': (2, 3), }",
                          bytes({0, 1, 0, 4, 0, 2, 0, 5, 0, 3, 0, 6})),
                 error);
  ASSERT_TRUE(m) << error;
  EXPECT_EQ(m->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(m->data, (std::vector<uint8_t>{1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0}));
  // 2 x 3 x 4 int32.
  std::vector<int32_t> col(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        col[static_cast<size_t>(i + 2 * (j + 3 * k))] = 100 * i + 10 * j + k;
  std::string raw(reinterpret_cast<const char *>(col.data()), col.size() * 4);
  auto t = parse(makeFile(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }", raw),
                 error);
  ASSERT_TRUE(t) << error;
  ASSERT_EQ(t->data.size(), 96u);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        int32_t v;
        std::memcpy(&v, t->data.data() + 4 * ((i * 3 + j) * 4 + k), 4);
        EXPECT_EQ(v, 100 * i + 10 * j + k) << i << "," << j << "," << k;
      }
  // One axis, a 0-d array and an empty one: the same bytes in both orders.
  auto v = parse(
      makeFile(1, "{'descr': '|u1', 'fortran_order': True, 'shape': (3,), }", bytes({7, 8, 9})),
      error);
  ASSERT_TRUE(v) << error;
  EXPECT_EQ(v->data, (std::vector<uint8_t>{7, 8, 9}));
  auto z = parse(
      makeFile(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (), }", std::string(4, '\0')),
      error);
  ASSERT_TRUE(z) << error;
  auto e =
      parse(makeFile(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (0, 5), }", ""), error);
  ASSERT_TRUE(e) << error;
  EXPECT_TRUE(e->data.empty());
  // A truncated Fortran-order file is still an error.
  expectError(
      makeFile(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", raw.substr(0, 20)),
      "truncated data");
}

TEST(Npy, VersionsTwoAndThreeAndLenientHeaders) {
  std::string error;
  std::string h = "{'descr': '<i2', 'fortran_order': False, 'shape': (1,), }";
  for (unsigned major : {2u, 3u}) {
    auto a = parse(makeFile(major, h, bytes({7, 0})), error);
    ASSERT_TRUE(a) << error;
    EXPECT_EQ(a->dtype, DType::I16);
    EXPECT_EQ(a->data, (std::vector<uint8_t>{7, 0}));
  }
  // Key order, double quotes, no trailing comma, Python 2 long suffixes, native '=' order.
  auto b =
      parse(makeFile(1, "{\"shape\": (2L, 1L), \"fortran_order\": False, \"descr\": \"=u2\"}  \n",
                     bytes({1, 0, 2, 0})),
            error);
  ASSERT_TRUE(b) << error;
  EXPECT_EQ(b->dtype, DType::U16);
  EXPECT_EQ(b->shape, (std::vector<int64_t>{2, 1}));
}

TEST(Npy, BoolBytesAreNormalised) {
  std::string error;
  auto b = parse(
      makeFile(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", bytes({0, 1, 7})),
      error);
  ASSERT_TRUE(b) << error;
  EXPECT_EQ(b->dtype, DType::Bool);
  EXPECT_EQ(b->data, (std::vector<uint8_t>{0, 1, 1}));
}

TEST(Npy, ErrorPaths) {
  std::string h = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  std::string data(8, '\0');
  expectError("", "bad magic");
  expectError("PK\x03\x04 this is a zip", "bad magic");
  expectError(std::string("\x93NUMPY", 6), "truncated header");
  expectError(std::string("\x93NUMPY\x01\x00\x50", 9), "truncated header");
  expectError(makeFile(1, h, data).substr(0, 30), "truncated header");
  expectError(makeFile(4, h, data), "unsupported format version 4.0");
  expectError(makeFile(1, h, data.substr(0, 5)),
              "truncated data (8 bytes expected for shape (2,), 5 present)");
  expectError(makeFile(1, h, data + "xy"), "2 unexpected bytes after the data");
  expectError(makeFile(1, "['descr', '<f4']", data), "bad header: the header is not a dict");
  expectError(makeFile(1, "{'descr': '<f4', 'shape': (2,), }", data),
              "missing key 'fortran_order'");
  expectError(
      makeFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': (1,)}", data),
      "unexpected key 'x'");
  expectError(
      makeFile(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", data),
      "duplicate key 'descr'");
  expectError(makeFile(1, "{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", data),
              "bad header");
  expectError(makeFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", data),
              "expected ',' or '}'");
  expectError(makeFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", data),
              "non-negative integers");
  expectError(makeFile(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", data),
              "bad header");
  expectError(makeFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': 2}", data),
              "bad header");
  expectError(makeFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", data),
              "unexpected text after the header dict");
  expectError(makeFile(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", data),
              "unsupported dtype '<c8' (complex)");
  expectError(makeFile(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", data),
              "unsupported dtype '|O'");
  expectError(makeFile(1, "{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", data),
              "unsupported dtype '<U3' (strings)");
  expectError(makeFile(1, "{'descr': '<f16', 'fortran_order': False, 'shape': (1,), }", data),
              "unsupported dtype '<f16'");
  expectError(
      makeFile(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", data),
      "structured dtypes");
  expectError(
      makeFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }",
               data),
      "too large");
  expectError(
      makeFile(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
               data),
      "too large");
}

TEST(Npy, FilesOnDisk) {
  auto dir = std::filesystem::temp_directory_path() / ("npytest-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string path = (dir / "a.npy").string();
  std::vector<uint8_t> data = patternBytes(6 * 8);
  std::string error;
  ASSERT_TRUE(writeNpy(path, DType::F64, {2, 3}, data, {}, error)) << error;
  auto back = readNpy(path, {}, error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->data, data);
  EXPECT_FALSE(readNpy((dir / "missing.npy").string(), {}, error));
  EXPECT_NE(error.find("missing.npy: cannot open"), std::string::npos) << error;
  EXPECT_FALSE(readNpy(dir.string(), {}, error));
  EXPECT_NE(error.find("is a directory"), std::string::npos) << error;
  EXPECT_FALSE(writeNpy((dir / "no/such/dir/x.npy").string(), DType::F64, {1}, data, {}, error));
  EXPECT_NE(error.find("cannot write"), std::string::npos) << error;
  std::filesystem::remove_all(dir);
}

// Mutated and truncated valid files, and random headers: never a crash.
TEST(Npy, FuzzNeverCrashes) {
  std::mt19937_64 rng(42);
  std::vector<std::string> seeds = {
      encodeNpy(DType::F32, {2, 3}, std::vector<uint8_t>(24, 1)),
      encodeNpy(DType::Bool, {4}, std::vector<uint8_t>(4, 1)),
      makeFile(3, "{'descr': '>i8', 'fortran_order': False, 'shape': (1,), }", std::string(8, 'x')),
  };
  const std::string alphabet = "{}()[]',:\" <>|=TrueFalsdcrhpo0123456789Lbifu";
  int accepted = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string f = seeds[rng() % seeds.size()];
    int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t pos = rng() % (f.size() + 1);
      switch (rng() % 4) {
      case 0: // overwrite with a header-ish character
        if (pos < f.size())
          f[pos] = alphabet[rng() % alphabet.size()];
        break;
      case 1: // random byte
        if (pos < f.size())
          f[pos] = static_cast<char>(rng());
        break;
      case 2: // truncate
        f.resize(pos);
        break;
      default: // insert
        f.insert(pos, 1, alphabet[rng() % alphabet.size()]);
        break;
      }
    }
    std::string error;
    auto a = parseNpy(f, "fuzz.npy", {}, error);
    if (a) {
      ++accepted;
      uint64_t n = 1;
      for (int64_t d : a->shape)
        n *= uint64_t(d);
      EXPECT_EQ(a->data.size(), n * byteSize(a->dtype));
    } else {
      EXPECT_EQ(error.rfind("fuzz.npy: ", 0), 0u);
    }
  }
  EXPECT_GT(accepted, 0); // some mutations (e.g. in the padding) keep a file valid
}
