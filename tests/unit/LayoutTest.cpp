// codegen/Layout.h: the layout kinds, their printing, and assignLayouts on
// small kernels against layouts and costs worked out by hand from the
// lowering's rules (Lower.h, LowerReduce.cpp, LowerDot.cpp, LowerMmaLoop.cpp).
#include "codegen/Layout.h"

#include "frontend/Compiler.h"
#include "ir/Passes.h"

#include <gtest/gtest.h>

#include <sstream>

namespace {

using tc::codegen::Conversion;
using tc::codegen::KernelLayouts;
using tc::codegen::Layout;
using tc::ir::Shape;

/// Every element's thread under the lowering's own rule (Lower.h): a tile of
/// n >= T elements gives thread t runs of V' = min(V, n / T) consecutive
/// elements, run r going to thread r mod T; with n < T, thread t holds
/// element t mod n (the lowest such thread is t = e).
int64_t loweringThread(int64_t e, int64_t n, int64_t T, int64_t vec) {
  if (n < T)
    return e;
  int64_t v = std::min(vec, n / T);
  return (e / v) % T;
}

TEST(Layout, BlockedIsTheLoweringsMapping) {
  const std::vector<Shape> shapes = {{1024},      {64, 64}, {128, 4}, {4, 4096}, {16}, {2, 8},
                                     {8, 16, 32}, {1, 64},  {64, 1},  {256, 2},  {3},  {6, 10}};
  for (const Shape &s : shapes)
    for (int64_t T : {32, 128, 256})
      for (int64_t vec : {1, 4, 8}) {
        Layout l = Layout::blocked(s, T, vec);
        int64_t n = 1;
        for (int64_t x : s)
          n *= x;
        for (int64_t e = 0; e < n; ++e) {
          std::vector<int64_t> c(s.size());
          int64_t rest = e;
          for (size_t d = s.size(); d-- > 0;) {
            c[d] = rest % s[d];
            rest /= s[d];
          }
          ASSERT_EQ(l.threadOf(s, c), loweringThread(e, n, T, vec))
              << l.str() << " element " << e << " T=" << T << " vec=" << vec;
        }
      }
}

TEST(Layout, BlockedParametersByHand) {
  // 64 x 64 over 128 threads, runs of 8: 8 threads per row, 4 rows per warp,
  // the 4 warps down the rows (a CTA tile of 16 x 64, repeated 4 times).
  EXPECT_EQ(Layout::blocked({64, 64}, 128, 8).str(),
            "#blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [4, 1], "
            "order = [1, 0], vec = 8}>");
  // 128 x 4 with runs of 4 (512 / 128): a thread's run is one row.
  EXPECT_EQ(Layout::blocked({128, 4}, 128, 8).str(),
            "#blocked<{sizePerThread = [1, 4], threadsPerWarp = [32, 1], warpsPerCTA = [4, 1], "
            "order = [1, 0], vec = 4}>");
  // 16 elements over 128 threads: replicated, lane t holds element t mod 16.
  EXPECT_EQ(Layout::blocked({16}, 128, 4).str(),
            "#blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], "
            "order = [0], vec = 1}>");
  // Coalesced along axis 0 (perm [1, 0]: axis 0 fastest).
  EXPECT_EQ(Layout::blocked({64, 32}, 128, 4, {1, 0}).str(),
            "#blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], "
            "order = [0, 1], vec = 4}>");
  // Axes that do not split into the run: the flat form.
  EXPECT_EQ(Layout::blocked({6, 10}, 32, 4).str(), "#blocked<{flat, vec = 1, threads = 32}>");
}

TEST(Layout, OtherKindsPrint) {
  Layout b = Layout::blocked({64, 64}, 128, 4);
  EXPECT_EQ(Layout::slice(b, 1).str(), "#slice<{dim = 1, parent = " + b.str() + "}>");
  EXPECT_EQ(Layout::shared({1, 0}, 64, 1).str(), "#shared<{order = [1, 0], pad = 1 per 64}>");
  EXPECT_EQ(Layout::shared({1, 0}, 0, 0, 128, 3).str(),
            "#shared<{order = [1, 0], swizzle = 128B, stages = 3}>");
  Layout m = Layout::mma(2, {16, 8, 16}, {32, 32}, 4);
  EXPECT_EQ(m.str(), "#mma<{versionMajor = 2, instrShape = [16, 8, 16], warpTile = [32, 32], "
                     "warps = 4}>");
  EXPECT_EQ(Layout::dotOperand(1, m, 2).str(),
            "#dot_op<{opIdx = 1, parent = " + m.str() + ", kWidth = 2}>");
}

struct Compiled {
  std::unique_ptr<tc::ir::Module> module;
  KernelLayouts layouts;
};

Compiled layoutsOf(const std::string &src, tc::codegen::Options o = {}) {
  tc::CompileOptions co;
  tc::Compilation c(co);
  Compiled out;
  if (!c.addMainSource("t.tc", src) || !c.run(tc::Stage::Lower)) {
    ADD_FAILURE() << "does not compile:\n" << src;
    return out;
  }
  out.module = c.takeModule();
  EXPECT_TRUE(tc::ir::runPipeline(*out.module, {}));
  std::string error;
  EXPECT_TRUE(
      tc::codegen::assignLayouts(*out.module, *out.module->functions[0], o, out.layouts, error))
      << error;
  return out;
}

/// The conversions at ops of `kind`.
std::vector<Conversion> at(const KernelLayouts &kl, tc::ir::OpKind kind) {
  std::vector<Conversion> out;
  for (const Conversion &c : kl.conversions)
    if (c.op->kind() == kind)
      out.push_back(c);
  return out;
}

/// The layout of the first op of `kind`'s result.
Layout resultOf(const Compiled &c, tc::ir::OpKind kind) {
  const tc::ir::Value *v = nullptr;
  tc::ir::forEachOp(c.module->functions[0]->body(), [&](const tc::ir::Op &op, unsigned) {
    if (!v && op.kind() == kind)
      v = op.result();
  });
  EXPECT_TRUE(v && c.layouts.values.count(v));
  return v && c.layouts.values.count(v) ? c.layouts.values.at(v) : Layout{};
}

TEST(AssignLayouts, BlockedLoadsAndRunLength) {
  // f32 accesses: runs of 16 / 4 = 4 elements; 1024 over 128 threads.
  Compiled c = layoutsOf(R"(__global__ void k(float *X __aligned(16), float *Y __aligned(16)) {
    int i[1024] = 0 ... 1024;
    *(Y + i) = *(X + i) + 1.0f;
  })");
  EXPECT_EQ(c.layouts.vec, 4);
  EXPECT_EQ(resultOf(c, tc::ir::OpKind::Load).str(),
            "#blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], "
            "order = [0], vec = 4}>");
  EXPECT_TRUE(c.layouts.conversions.empty());
  EXPECT_EQ(c.layouts.summary(),
            "summary: conversions outside loops: 0 through shared memory (0 bytes), 0 barriers; "
            "per loop trip: 0 through shared memory (0 bytes), 0 barriers; free or in "
            "registers: 0");
}

TEST(AssignLayouts, SliceOfARowReduction) {
  // 64 x 64 f32, runs of 4: bits 0-1 of the flat index are slot bits, 2-6
  // lane bits, 7-8 warp bits. The 6 levels over axis 1 (bits 0-5): 2 in
  // registers, 4 across lanes; the 64 row results (256 bytes) go through
  // shared memory into the result's blocked layout, between 2 barriers.
  Compiled c = layoutsOf(R"(__global__ void k(float *X __aligned(16), float *Y __aligned(16)) {
    int r[64] = 0 ... 64;
    float x[64, 64] = *(X + r[:, newaxis] * 64 + r[newaxis, :]);
    *(Y + r) = x[:, +];
  })");
  std::vector<Conversion> red = at(c.layouts, tc::ir::OpKind::Reduce);
  ASSERT_EQ(red.size(), 1u);
  Layout parent = Layout::blocked({64, 64}, 128, 4);
  EXPECT_EQ(red[0].from.str(), Layout::slice(parent, 1).str());
  EXPECT_EQ(red[0].to.str(), Layout::blocked({64}, 128, 4).str());
  EXPECT_EQ(red[0].mechanism, Conversion::Mechanism::Shared);
  EXPECT_EQ(red[0].bytes, 256u);
  EXPECT_EQ(red[0].barriers, 2);
  EXPECT_NE(red[0].how.find("2 tree levels in registers, 4 across lanes"), std::string::npos)
      << red[0].how;
}

TEST(AssignLayouts, SharedForABroadcastAndATrans) {
  // A broadcast of loaded values cannot be recomputed: 64 f32 staged (256
  // bytes, 2 barriers). The trans of a tile that is also stored as it is
  // stages 32 x 32 f32 with one pad element per row of 32: 1056 * 4 bytes.
  Compiled c = layoutsOf(R"(__global__ void k(float *X __aligned(16), float *Y __aligned(16)) {
    int r[32] = 0 ... 32;
    float v[32] = *(X + r);
    float t[32, 32] = *(X + r[:, newaxis] * 32 + r[newaxis, :]);
    *(Y + r[:, newaxis] * 32 + r[newaxis, :]) = v[:, newaxis] + t + ^t;
  })");
  std::vector<Conversion> b = at(c.layouts, tc::ir::OpKind::Broadcast);
  std::vector<Conversion> t = at(c.layouts, tc::ir::OpKind::Trans);
  size_t staged = 0;
  for (const Conversion &x : b)
    if (x.mechanism == Conversion::Mechanism::Shared) {
      ++staged;
      EXPECT_EQ(x.bytes, 32u * 4);
      EXPECT_EQ(x.barriers, 2);
    }
  EXPECT_EQ(staged, 1u);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].mechanism, Conversion::Mechanism::Shared);
  EXPECT_EQ(t[0].bytes, (32u * 32 + 32) * 4);
  EXPECT_NE(t[0].how.find("#shared<{order = [1, 0], pad = 1 per 32}>"), std::string::npos);
}

TEST(AssignLayouts, MmaAndDotOperandsOfAnAt) {
  // 64 x 64 x 64 fp16 on 4 warps: warp tiles of 32 x 32 (4 tiles, one per
  // warp); a and b staged with rows padded by 16 bytes (pitch 72: 9216
  // bytes each), acc +0 (no staging), the result back through 64 rows of
  // 72 fp32 (18 KiB).
  Compiled c = layoutsOf(R"(__global__ void k(half *A __aligned(16), half *B __aligned(16),
                                              float *C __aligned(16)) {
    int r[64] = 0 ... 64;
    half a[64, 64] = *(A + r[:, newaxis] * 64 + r[newaxis, :]);
    half b[64, 64] = *(B + r[:, newaxis] * 64 + r[newaxis, :]);
    float d[64, 64] = a @ b;
    *(C + r[:, newaxis] * 64 + r[newaxis, :]) = d;
  })");
  std::vector<Conversion> d = at(c.layouts, tc::ir::OpKind::Dot);
  ASSERT_EQ(d.size(), 4u);
  Layout acc = Layout::mma(2, {16, 8, 16}, {32, 32}, 4);
  EXPECT_EQ(d[0].to.str(), Layout::dotOperand(0, acc, 2).str());
  EXPECT_EQ(d[0].bytes, 9216u);
  EXPECT_EQ(d[1].to.str(), Layout::dotOperand(1, acc, 2).str());
  EXPECT_EQ(d[1].bytes, 9216u);
  EXPECT_EQ(d[2].to.str(), acc.str());
  EXPECT_EQ(d[2].mechanism, Conversion::Mechanism::Free);
  EXPECT_EQ(d[3].from.str(), acc.str());
  EXPECT_EQ(d[3].bytes, 18u * 1024);
  EXPECT_EQ(d[0].barriers + d[1].barriers + d[2].barriers + d[3].barriers, 3);
}

const char *kMatmulLoop = R"(__global__ void k(half *A __aligned(16), half *B __aligned(16),
                                               float *C __aligned(16), int K) {
    int rm[128] = 0 ... 128;
    int rk[32] = 0 ... 32;
    float c[128, 128] = 0;
    half *pa[128, 32] = A + rm[:, newaxis] * 32 + rk[newaxis, :];
    half *pb[32, 128] = B + rk[:, newaxis] * 128 + rm[newaxis, :];
    for (int k = 0; k < K; k += 32) {
      c += *pa @ *pb;
      pa += 32;
      pb += 32 * 128;
    }
    *(C + rm[:, newaxis] * 128 + rm[newaxis, :]) = c;
  })";

TEST(AssignLayouts, MatmulLoopStagesFilledByTheTma) {
  // The same loop with option tma (the default): A + rm * 32 + rk and B + rk * 128 + rm are
  // boxes of 2-D views with constant pitches 32 and 128, so the TMA fills the stages; the
  // prologue's conversion counts the two barriers around the mbarriers' set-up and the one
  // before they are invalidated, a trip one (after the products; the copies need none).
  // On 8 warps (two warpgroups: with one the TMA is not taken).
  tc::codegen::Options o8;
  o8.numWarps = 8;
  Compiled c = layoutsOf(kMatmulLoop, o8);
  std::vector<Conversion> loop = at(c.layouts, tc::ir::OpKind::While);
  ASSERT_EQ(loop.size(), 3u);
  EXPECT_EQ(loop[1].mechanism, Conversion::Mechanism::Tma);
  EXPECT_EQ(loop[1].bytes, 2u * 16 * 1024);
  EXPECT_EQ(loop[1].barriers, 3);
  std::vector<Conversion> loads = at(c.layouts, tc::ir::OpKind::Load);
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(loads[0].to.str(), "#shared<{order = [1, 0], swizzle = 64B, stages = 3}>");
  EXPECT_EQ(loads[0].mechanism, Conversion::Mechanism::Tma);
  EXPECT_EQ(loads[1].mechanism, Conversion::Mechanism::Tma);
  EXPECT_EQ(loads[0].barriers + loads[1].barriers, 1);
  // Two maps, hidden parameters after the kernel's 4: A's view (pitch 32, boxes of 32 x 128)
  // and B's (pitch 128, boxes of 64 x 32).
  tc::codegen::Result r = tc::codegen::compile(*c.module, *c.module->functions[0], o8);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_NE(r.compiled->ptx.find(".param .align 64 .b8 k_param_4[128]"), std::string::npos);
  EXPECT_NE(r.compiled->ptx.find(".param .align 64 .b8 k_param_5[128]"), std::string::npos);
  ASSERT_EQ(r.compiled->tensorMaps.size(), 2u);
  const tc::codegen::TensorMapParam &a = r.compiled->tensorMaps[0];
  const tc::codegen::TensorMapParam &b = r.compiled->tensorMaps[1];
  EXPECT_EQ(a.ptrParam, 0u);
  EXPECT_EQ(a.ldParam, -1);
  EXPECT_EQ(a.ldConst, 32);
  EXPECT_EQ(a.boxCols, 32u);
  EXPECT_EQ(a.boxRows, 128u);
  EXPECT_EQ(a.swizzle, 64u);
  EXPECT_EQ(b.ptrParam, 1u);
  EXPECT_EQ(b.ldConst, 128);
  EXPECT_EQ(b.boxCols, 64u);
  EXPECT_EQ(b.boxRows, 32u);
  EXPECT_EQ(b.swizzle, 128u);
}

TEST(AssignLayouts, MatmulLoopAccumulatorOnWgmma) {
  // (The for loop is a while in the IR.) sm_90, 4 warps (one warpgroup), fp16: wgmma, 16 rows per
  // warp tile and all 128 columns; the carried c is in the accumulator layout; a and b in 3
  // swizzled cp.async stages (a's rows are 64 bytes, b's 256: 128B; one warpgroup: no TMA).
  Compiled c = layoutsOf(kMatmulLoop);
  Layout acc = Layout::mma(3, {16, 128, 16}, {16, 128}, 4);
  EXPECT_EQ(resultOf(c, tc::ir::OpKind::Dot).str(), acc.str());
  std::vector<Conversion> loop = at(c.layouts, tc::ir::OpKind::While);
  ASSERT_EQ(loop.size(), 3u);
  EXPECT_EQ(loop[0].mechanism, Conversion::Mechanism::Free); // c starts as the constant 0
  // The prologue: 2 trips of a (128 x 32 halves, 8 KiB) and b (32 x 128, 8 KiB).
  EXPECT_EQ(loop[1].mechanism, Conversion::Mechanism::CpAsync);
  EXPECT_EQ(loop[1].bytes, 2u * 16 * 1024);
  EXPECT_EQ(loop[1].barriers, 1);
  EXPECT_EQ(loop[2].from.str(), acc.str());
  EXPECT_EQ(loop[2].mechanism, Conversion::Mechanism::Shared);
  std::vector<Conversion> loads = at(c.layouts, tc::ir::OpKind::Load);
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(loads[0].to.str(), "#shared<{order = [1, 0], swizzle = 64B, stages = 3}>");
  EXPECT_EQ(loads[1].to.str(), "#shared<{order = [1, 0], swizzle = 128B, stages = 3}>");
  EXPECT_EQ(loads[0].mechanism, Conversion::Mechanism::CpAsync);
  EXPECT_EQ(loads[0].loopDepth, 1);
}

TEST(AssignLayouts, MatmulLoopAccumulatorOnMmaSync) {
  // sm_80: mma.sync; 128 x 128 on 4 warps: warp tiles of 64 x 64; a and b
  // in 3 cp.async stages with rows padded by 16 bytes, read by ldmatrix.
  tc::codegen::Options o;
  o.sm = 80;
  Compiled c = layoutsOf(kMatmulLoop, o);
  Layout acc = Layout::mma(2, {16, 8, 16}, {64, 64}, 4);
  EXPECT_EQ(resultOf(c, tc::ir::OpKind::Dot).str(), acc.str());
  std::vector<Conversion> loads = at(c.layouts, tc::ir::OpKind::Load);
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(loads[0].to.str(), "#shared<{order = [1, 0], pad = 8 per 32, stages = 3}>");
  std::vector<Conversion> dot = at(c.layouts, tc::ir::OpKind::Dot);
  ASSERT_EQ(dot.size(), 2u);
  EXPECT_EQ(dot[0].to.str(), Layout::dotOperand(0, acc, 2).str());
  EXPECT_EQ(dot[0].mechanism, Conversion::Mechanism::Registers);
}

} // namespace

namespace {

TEST(AssignLayouts, ScalarAtomicSharesItsOldValue) {
  // Thread 0 does a scalar atomic between two barriers and shares the old
  // value (4 bytes) through shared memory; a debug_barrier adds one barrier.
  Compiled c = layoutsOf(R"(__global__ void k(int *X, int *Y) {
    int old = atomic_add(X, 1);
    __debug_barrier();
    *Y = old;
  })");
  std::vector<Conversion> a = at(c.layouts, tc::ir::OpKind::AtomicRMW);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].mechanism, Conversion::Mechanism::Shared);
  EXPECT_EQ(a[0].bytes, 4u);
  EXPECT_EQ(a[0].barriers, 2);
  EXPECT_NE(c.layouts.summary().find("3 barriers; per loop trip"), std::string::npos)
      << c.layouts.summary();
}

} // namespace
