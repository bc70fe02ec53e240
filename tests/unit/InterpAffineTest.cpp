// The interpreter's affine tiles (interp/Tile.h): splats, ranges and the
// integer and pointer arithmetic on them are kept as base + lane * step and
// written out only when read; a compare of them that has one value in every
// lane makes a uniform mask; a load or store through consecutive addresses
// with every lane active is one copy. These tests drive the edges where the
// affine form must NOT be used (lanes that wrap around their dtype before a
// sign extension or a compare, compares whose value changes across the tile,
// poison) and check each result against values worked out by hand.
#include "interp/InterpreterBackend.h"
#include "ir/IRParser.h"
#include "runtime/Launch.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <gtest/gtest.h>

#include <sstream>

namespace {

using tc::DType;
using tc::HostArray;
using tc::RunResult;
using tc::ScalarValue;
using tc::TrapKind;

std::shared_ptr<tc::CompiledKernel> compileTir(const std::string &text) {
  auto sm = std::make_shared<tc::SourceManager>();
  uint32_t file = sm->addBuffer("k.tir", text);
  tc::DiagEngine diags(*sm);
  std::ostringstream err;
  diags.setOutput(&err);
  std::unique_ptr<tc::ir::Module> m = tc::ir::parseModule(file, *sm, diags);
  EXPECT_TRUE(m && !diags.hasErrors()) << err.str();
  if (!m || m->functions.empty())
    return nullptr;
  const tc::ir::Function *fn = m->functions[0].get();
  return std::make_shared<tc::CompiledKernel>(std::move(m), fn, sm, tc::DefineList{});
}

std::shared_ptr<tc::CompiledKernel> compileTc(const std::string &src, tc::DefineList defs = {}) {
  tc::CompileRequest req;
  req.sourceName = "k.tc";
  req.sourceText = src;
  req.defines = std::move(defs);
  tc::CompileOutcome out = tc::compileKernel(req);
  EXPECT_TRUE(out.ok()) << out.diagnostics;
  return out.kernel;
}

struct Launch {
  tc::LaunchArgs args;
  tc::RunOptions opts;
  std::ostringstream out;
  Launch() { opts.out = &out; }
  RunResult run(const tc::CompiledKernel &k, std::array<int64_t, 3> grid = {1, 1, 1}) {
    auto backend = tc::createInterpreterBackend();
    return backend->launch(k, grid, args, opts);
  }
};

HostArray iota(DType t, int64_t n, int64_t from = 0) {
  HostArray a = HostArray::zeros(t, {n});
  for (int64_t i = 0; i < n; ++i)
    a.setDouble(i, static_cast<double>(from + i));
  return a;
}

TEST(InterpAffine, I8OffsetsThatWrapAreSignExtendedPerLane) {
  // off = (120 ... 136) cast to i8: lanes 120..127 then -128..-121 (wrapping),
  // so p + off reads a[200 + 120 .. 200 + 127] then a[200 - 128 .. 200 - 121]:
  // not one run of addresses, whatever the affine form of the i32 range says.
  auto k = compileTir(R"(
kernel @k(%a: !ptr<i32>, %out: !ptr<i32>) {
  %r = range <end = 136, start = 120> : tile<16xi32>
  %o8 = cast %r : tile<16xi8>
  %c = constant <value = 200> : i32
  %pa = addptr %a, %c : !ptr<i32>
  %s = splat %pa : tile<16x!ptr<i32>>
  %p = addptr %s, %o8 : tile<16x!ptr<i32>>
  %v = load %p : tile<16xi32>
  %i = range <end = 16, start = 0> : tile<16xi32>
  %so = splat %out : tile<16x!ptr<i32>>
  %q = addptr %so, %i : tile<16x!ptr<i32>>
  store %q, %v
  return
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray a = iota(DType::I32, 400), out = HostArray::zeros(DType::I32, {16});
  l.args.setBuffer("a", &a);
  l.args.setBuffer("out", &out);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
  for (int i = 0; i < 16; ++i) {
    int off = 120 + i < 128 ? 120 + i : 120 + i - 256;
    EXPECT_EQ(out.getDouble(i), 200 + off) << "lane " << i;
  }
}

TEST(InterpAffine, MaskThatChangesInsideTheTileIsNotUniform) {
  // Three programs of 8 over n = 20: the last one's mask (16 ... 24) < 20 is
  // true in lanes 0-3 only; its masked-off lanes take `other` (-1) and are
  // not stored. cmp_eq (0 ... 8) == 5 is true in lane 5 only: both ends
  // false, but the difference changes sign in between.
  auto k = compileTc(R"(
__global__ void k(int n, int *x, int *y, int *e) {
  int pid = get_program_id(0);
  int off[8] = pid * 8 + (0 ... 8);
  bool m[8] = off < n;
  int v[8] = m ? *(x + off) : -1;
  *?(m)(y + off) = v + 1;
  int r[8] = 0 ... 8;
  *(e + pid * 8 + r) = r == 5;
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray x = iota(DType::I32, 20, 100), y = HostArray::zeros(DType::I32, {24});
  HostArray e = HostArray::zeros(DType::I32, {24});
  l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 20));
  l.args.setBuffer("x", &x);
  l.args.setBuffer("y", &y);
  l.args.setBuffer("e", &e);
  RunResult r = l.run(*k, {3, 1, 1});
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
  for (int i = 0; i < 24; ++i) {
    EXPECT_EQ(y.getDouble(i), i < 20 ? 101 + i : 0) << "lane " << i;
    EXPECT_EQ(e.getDouble(i), i % 8 == 5 ? 1 : 0) << "lane " << i;
  }
}

TEST(InterpAffine, CompareOfLanesThatWrapIsPerLane) {
  // r = 2147483644 + (0 ... 8) wraps in i32 after lane 3: lanes 0-3 are
  // near INT_MAX, lanes 4-7 near INT_MIN, so r > 0 holds in lanes 0-3 only
  // (both ends of the modular form would say otherwise).
  auto k = compileTc(R"(
__global__ void k(int *out, int big) {
  int r[8] = big + (0 ... 8);
  *(out + (0 ... 8)) = r > 0;
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray out = HostArray::zeros(DType::I32, {8});
  l.args.setBuffer("out", &out);
  l.args.setScalar("big", ScalarValue::ofInt(DType::I32, 2147483644));
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(out.getDouble(i), i < 4 ? 1 : 0) << "lane " << i;
}

TEST(InterpAffine, AllFalseMaskGivesOtherAndStoresNothing) {
  // (0 ... 8) < 0 is false in every lane: the load reads nothing (x is far
  // too small to hold the addresses) and gives `other`; the store writes nothing.
  auto k = compileTc(R"(
__global__ void k(int *x, int *y, int *z) {
  int r[8] = 0 ... 8;
  bool m[8] = r < 0;
  int v[8] = m ? *(x + r * 1000) : 7;
  *?(m)(y + r) = v;
  *(z + r) = v;
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray x = HostArray::zeros(DType::I32, {1}), y = HostArray::zeros(DType::I32, {8});
  HostArray z = HostArray::zeros(DType::I32, {8});
  l.args.setBuffer("x", &x);
  l.args.setBuffer("y", &y);
  l.args.setBuffer("z", &z);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(y.getDouble(i), 0);
    EXPECT_EQ(z.getDouble(i), 7);
  }
}

TEST(InterpAffine, ConsecutiveAccessPastTheEndTrapsAtTheFirstBadLane) {
  // The addresses x + 0 .. x + 7 are consecutive but x has 5 elements: the
  // load traps at lane 5 with the usual message, as the per-lane path says.
  auto k = compileTc(R"(
__global__ void k(float *x, float *y) {
  int r[8] = 0 ... 8;
  *(y + r) = *(x + r);
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray x = HostArray::zeros(DType::F32, {5}), y = HostArray::zeros(DType::F32, {8});
  l.args.setBuffer("x", &x);
  l.args.setBuffer("y", &y);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::OutOfBounds);
  EXPECT_EQ(r.trap->lane, 5);
  EXPECT_NE(r.trap->message.find("load of 4 bytes"), std::string::npos) << r.trap->message;
  EXPECT_NE(r.trap->message.find("(lane [5])"), std::string::npos) << r.trap->message;
}

TEST(InterpAffine, StoreOfConsecutiveLanesAndLazyValuesReadLater) {
  // A splat, a range times a splat, and their sum stored through consecutive
  // addresses; then a reduce and a print read the lazily kept tiles.
  // s = 3 + 5 * (0 ... 16): 3, 8, ..., 78; sum = 16 * 3 + 5 * 120 = 648.
  auto k = compileTc(R"(
__global__ void k(int *y, int *total) {
  int r[16] = 0 ... 16;
  int s[16] = 3 + 5 * r;
  *(y + r) = s;
  *total = s[+];
  print("s", s);
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray y = HostArray::zeros(DType::I32, {16}), total = HostArray::zeros(DType::I32, {1});
  l.args.setBuffer("y", &y);
  l.args.setBuffer("total", &total);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(y.getDouble(i), 3 + 5 * i);
  EXPECT_EQ(total.getDouble(0), 648);
  EXPECT_NE(l.out.str().find("3,  8, 13"), std::string::npos) << l.out.str();
}

TEST(InterpAffine, SplatOfAnUndefinedScalarStaysUndefined) {
  // A masked-off scalar load without `other` is undefined; its splat is
  // undefined in every lane, and storing it traps undefined_value at lane 0.
  auto k = compileTc(R"(
__global__ void k(int *x, int *y) {
  bool off = 0 > 1;
  int v = *?(off)x;
  int t[4] = v;
  *(y + (0 ... 4)) = t;
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray x = HostArray::zeros(DType::I32, {1}), y = HostArray::zeros(DType::I32, {4});
  l.args.setBuffer("x", &x);
  l.args.setBuffer("y", &y);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::UndefinedValue);
  EXPECT_EQ(r.trap->lane, 0);
}

TEST(InterpAffine, LanesThatWrapInEveryWidth) {
  // Each row of `out` worked out lane by lane (i = 0 .. 7):
  // row 0: (int)(short)(32764 + i): 32764 .. 32767, then -32768 .. -32765;
  // row 1: (uint8)(250 + i) < 253: lanes 250 251 252 253 254 255 0 1 -> 1 1 1 0 0 0 1 1;
  // row 2: (long)i * 2^62 + 3 == 3: lanes 0 and 4 (4 * 2^62 wraps to 0);
  // row 3: the same < 5 as i64: 3, 2^62+3, -2^63+3, -2^62+3, ... -> 1 0 1 1 1 0 1 1;
  // row 4: x[(uint32)(5 - i)] with the offset's lanes 5 .. 0 then 2^32 - 1,
  //        2^32 - 2: only lanes 0-5 are read (masked), x[k] = 100 + k.
  auto k = compileTc(R"(
__global__ void k(int *out, int *x) {
  int i[8] = 0 ... 8;
  *(out + i) = (int)(int16)(32764 + i);
  *(out + 8 + i) = (int)((uint8)(250 + i) < (uint8)253);
  long w[8] = (long)i * 4611686018427387904 + 3;
  *(out + 16 + i) = (int)(w == 3);
  *(out + 24 + i) = (int)(w < 5);
  uint32 u[8] = (uint32)(5 - i);
  bool m[8] = i < 6;
  *(out + 32 + i) = m ? *(x + u) : -1;
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray out = HostArray::zeros(DType::I32, {40}), x = iota(DType::I32, 8, 100);
  l.args.setBuffer("out", &out);
  l.args.setBuffer("x", &x);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error << (r.trap ? r.trap->render() : "");
  const int want[40] = {32764, 32765, 32766, 32767, -32768, -32767, -32766, -32765, //
                        1,     1,     1,     0,     0,      0,      1,      1,      //
                        1,     0,     0,     0,     1,      0,      0,      0,      //
                        1,     0,     1,     1,     1,      0,      1,      1,      //
                        105,   104,   103,   102,   101,    100,    -1,     -1};
  for (int i = 0; i < 40; ++i)
    EXPECT_EQ(out.getDouble(i), want[i]) << "element " << i;
}

TEST(InterpAffine, UnsignedOffsetThatWrapsTrapsAtItsLane) {
  // (uint32)(5 - i) is 2^32 - 1 at lane 6: x + that is far past x's end, so
  // the unmasked load traps out of bounds at lane 6 (lanes 0-5 are in x).
  auto k = compileTc(R"(
__global__ void k(int *out, int *x) {
  int i[8] = 0 ... 8;
  uint32 u[8] = (uint32)(5 - i);
  *(out + i) = *(x + u);
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray out = HostArray::zeros(DType::I32, {8}), x = iota(DType::I32, 8, 100);
  l.args.setBuffer("out", &out);
  l.args.setBuffer("x", &x);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::OutOfBounds);
  EXPECT_EQ(r.trap->lane, 6);
  EXPECT_NE(r.trap->message.find("(lane [6])"), std::string::npos) << r.trap->message;
}

TEST(InterpAffine, NegativeOffsetsFromAnInteriorPointer) {
  // p = x + 50; p + (i - 8) are x[42 .. 50), consecutive: stored to y, then
  // y is read back through a store-then-load in the same program.
  auto k = compileTc(R"(
__global__ void k(int *x, int *y) {
  int i[8] = 0 ... 8;
  int *p = x + 50;
  *(y + i) = *(p + (i - 8));
  *(y + 8 + i) = *(y + i) + 1;
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray x = iota(DType::I32, 64, 0), y = HostArray::zeros(DType::I32, {16});
  l.args.setBuffer("x", &x);
  l.args.setBuffer("y", &y);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error << (r.trap ? r.trap->render() : "");
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(y.getDouble(i), 42 + i) << i;
    EXPECT_EQ(y.getDouble(8 + i), 43 + i) << i;
  }
}

} // namespace
