// Option prefetch (codegen/Prefetch.cpp): which loops load one trip ahead,
// the shape of the copy, and that the copy computes the same bits. The copy is
// an ordinary kernel, so the reference interpreter runs it: each kernel below
// runs as written and as transformed on the same inputs, for trip counts 0, 1,
// 2 and many, and the outputs must be equal bit for bit. On a GPU (skipped
// without one) the backend, which compiles the copy, is compared with the
// interpreter's run of the kernel as written.
#include "codegen/Codegen.h"
#include "gpu/GpuBackend.h"
#include "interp/InterpreterBackend.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "support/SourceManager.h"

#include <gtest/gtest.h>

#include <random>

namespace {

using namespace tc;

std::shared_ptr<CompiledKernel> compileText(const std::string &text) {
  CompileRequest req;
  req.sourceName = "prefetch.tc";
  req.sourceText = text;
  CompileOutcome out = compileKernel(req);
  EXPECT_TRUE(out.ok()) << out.diagnostics;
  return out.kernel;
}

unsigned loopsPrefetched(const CompiledKernel &k, codegen::Options o = {}) {
  return codegen::prefetchLoopLoads(k.module(), k.function(), o).loops;
}

// Column sums (bench/kernels/colsum.tc): the recomputed pointer of a masked load.
const char *kColsum = R"(
__global__ void colsum(float *X, float *Y, int M, int N, int stride) {
  int rn[32] = get_program_id(0) * 32 + 0 ... 32;
  int rm[8] = 0 ... 8;
  float acc[8, 32] = 0;
  for (int m0 = 0; m0 < M; m0 += 8) {
    int rows[8] = m0 + rm;
    bool msk[8, 32] = (rows[:, newaxis] < M) & (rn[newaxis, :] < N);
    acc += msk ? *(X + rows[:, newaxis] * stride + rn[newaxis, :]) : 0;
  }
  *?(rn < N)(Y + rn) = acc[+, :];
})";

// A pointer tile carried from trip to trip and advanced at the end, a scalar
// load through a carried scalar pointer, an unmasked load of a loop-invariant
// address, a load whose address depends on a loaded value (not prefetched)
// and a load under an `if` (not prefetched).
const char *kWalk = R"(
__global__ void walk(int *X, int *I, int *Y, int K, int n) {
  int c[16] = 0 ... 16;
  int *p[16] = X + c;
  int *q = I;
  int acc[16] = 0;
  int s = 0;
  for (int t = 0; t < K; t++) {
    int j = *q;
    acc = acc * 3 + (c < n ? *p : 7) + *(X + c) + *(X + j);
    if (t % 2 == 1)
      s += *(I + t);
    p += 16;
    q = q + 1;
  }
  *(Y + c) = acc + s;
})";

// The frontend's loop forms other than a counted `for` up: `while` with a
// condition on two carried values, a count going down (both prefetched), and
// `break` and `continue` (the loads under their `if`s stay), fp16 loads cast
// to float.
const char *kForms = R"(
__global__ void forms(half *X, float *Y, int K) {
  int c[64] = 0 ... 64;
  float a[64] = 0;
  int i = 0;
  while ((i < K) & (i < 9)) {
    a += *(X + i * 64 + c);
    i += 1;
  }
  for (int t = 0; t < K; t++) {
    if (t == 3) continue;
    if (t == 6) break;
    a = a * 0.5f + *(X + t * 64 + c);
  }
  for (int t = K; t > 0; t -= 1)
    a = a - *(X + (t - 1) * 64 + c);
  *(Y + c) = a;
})";

TEST(Prefetch, TransformsLoopsThatWriteNoMemory) {
  auto k = compileText(kColsum);
  ASSERT_TRUE(k);
  codegen::PrefetchedKernel pk = codegen::prefetchLoopLoads(k->module(), k->function(), {});
  ASSERT_EQ(pk.loops, 1u);
  ASSERT_TRUE(pk.module);
  std::vector<ir::VerifyFailure> bad = ir::verifyModule(*pk.module);
  EXPECT_TRUE(bad.empty()) << ir::formatFailures(*pk.module, bad);
  // The loop carries one value more (the prefetched tile), loaded once before it.
  const ir::Op *loop = nullptr, *firstLoad = nullptr;
  for (const auto &op : pk.function->body().ops()) {
    if (op->kind() == ir::OpKind::Load && !loop)
      firstLoad = op.get();
    if (op->kind() == ir::OpKind::While)
      loop = op.get();
  }
  ASSERT_TRUE(loop);
  ASSERT_TRUE(firstLoad);
  EXPECT_EQ(loop->numOperands(), 3u); // acc, m0, the tile
  EXPECT_EQ(loop->operand(2), firstLoad->result());
  // In the after-region the load comes before the accumulation.
  const ir::Block &after = *loop->region(1);
  size_t loadAt = 0, addAt = 0;
  for (size_t i = 0; i < after.ops().size(); ++i) {
    const ir::Op &op = *after.ops()[i];
    if (op.kind() == ir::OpKind::Load)
      loadAt = i;
    if (op.kind() == ir::OpKind::Add && op.result()->type().isTile() &&
        isFloat(op.result()->type().dtype))
      addAt = i;
  }
  EXPECT_LT(loadAt, addAt) << ir::toString(*pk.module);
  // The original is untouched.
  EXPECT_EQ(loopsPrefetched(*k), 1u);
  EXPECT_EQ(ir::toString(k->module()).find("while %"), ir::toString(k->module()).find("while %"));
}

TEST(Prefetch, LeavesOtherLoopsAlone) {
  const char *noPrefetch[] = {
      // a store in the loop: a later trip may read what it writes
      R"(__global__ void k(float *X, int K) {
           int c[16] = 0 ... 16;
           for (int t = 1; t < K; t++) *(X + t * 16 + c) = *(X + (t - 1) * 16 + c) + 1; })",
      // an atomic in the loop
      R"(__global__ void k(float *X, float *Y, int K) {
           int c[16] = 0 ... 16;
           for (int t = 0; t < K; t++) atomic_add(Y + c, *(X + t * 16 + c)); })",
      // an `@` (its own pipeline)
      R"(__global__ void k(half *A, half *B, float *C, int K) {
           int r[16] = 0 ... 16;
           float acc[16, 16] = 0;
           for (int t = 0; t < K; t += 16)
             acc += *(A + r[:, newaxis] * 16 + r[newaxis, :]) @ *(B + r[:, newaxis] * 16 + r[newaxis, :]);
           *(C + r[:, newaxis] * 16 + r[newaxis, :]) = acc; })",
      // an assert: trip i + 1's addresses must not be read before trip i's trap
      R"(__global__ void k(float *X, float *Y, int K) {
           int c[16] = 0 ... 16;
           float a[16] = 0;
           for (int t = 0; t < K; t++) { assert(t < 100); a += *(X + t * 16 + c); }
           *(Y + c) = a; })",
      // the address depends on a division (it could trap for a trip that does not run)
      R"(__global__ void k(float *X, float *Y, int K, int d) {
           int c[16] = 0 ... 16;
           float a[16] = 0;
           for (int t = 0; t < K; t++) a += *(X + (t / d) * 16 + c);
           *(Y + c) = a; })",
      // a float-to-int cast in the address: for a trip that does not run it may trap
      // (interpreter) or be poison (LLVM), which once compiled a kernel to `exit`
      R"(__global__ void k(int *X, int *Y, int K) {
           int c[16] = 0 ... 16;
           int acc[16] = 0;
           float f = 0.5f;
           for (int t = 0; t < K; t++) { acc += *(X + c + (int)f); f = f * 3.0f; }
           *(Y + c) = acc; })",
      // a tile too large to keep twice in registers (128 bytes a thread at most)
      R"(__global__ void k(float *X, float *Y, int K) {
           int c[8192] = 0 ... 8192;
           float a[8192] = 0;
           for (int t = 0; t < K; t++) a += *(X + t * 8192 + c);
           *(Y + c) = a; })",
  };
  for (const char *src : noPrefetch) {
    auto k = compileText(src);
    ASSERT_TRUE(k) << src;
    EXPECT_EQ(loopsPrefetched(*k), 0u) << src;
  }
  // Nested loops: only the inner one.
  auto nested = compileText(R"(__global__ void k(float *X, float *Y, int K) {
      int c[16] = 0 ... 16;
      float a[16] = 0;
      for (int s = 0; s < K; s++) {
        a += *(X + s * 16 + c);
        for (int t = 0; t < K; t++) a += *(X + t * 16 + c);
      }
      *(Y + c) = a; })");
  ASSERT_TRUE(nested);
  EXPECT_EQ(loopsPrefetched(*nested), 1u);
  // Switched off.
  auto k = compileText(kColsum);
  codegen::Options off;
  std::string error;
  ASSERT_TRUE(codegen::disableOptimizations(off, "prefetch", error)) << error;
  EXPECT_FALSE(off.prefetch);
  EXPECT_EQ(loopsPrefetched(*k, off), 0u);
  EXPECT_NE(codegen::describeOptions(off).find("no-prefetch"), std::string::npos);
}

// Runs `k` as written and as transformed on the interpreter with the same
// buffers and scalars; the outputs must agree bit for bit.
void expectSameOnInterpreter(const CompiledKernel &k, std::array<int64_t, 3> grid,
                             const std::map<std::string, HostArray> &buffers,
                             const std::map<std::string, ScalarValue> &scalars,
                             const std::string &what) {
  codegen::PrefetchedKernel pk = codegen::prefetchLoopLoads(k.module(), k.function(), {});
  ASSERT_GT(pk.loops, 0u) << what;
  const ir::Function *fn = pk.function;
  CompiledKernel copy(std::move(pk.module), fn, std::make_shared<SourceManager>(), {});
  auto interp = createInterpreterBackend();
  std::map<std::string, HostArray> want = buffers, got = buffers;
  LaunchArgs a, b;
  for (auto &[name, arr] : want)
    a.setBuffer(name, &arr);
  for (auto &[name, arr] : got)
    b.setBuffer(name, &arr);
  for (const auto &[name, v] : scalars) {
    a.setScalar(name, v);
    b.setScalar(name, v);
  }
  RunResult r1 = interp->launch(k, grid, a, {});
  RunResult r2 = interp->launch(copy, grid, b, {});
  ASSERT_EQ(r1.status, RunResult::Status::Ok) << what << ": " << r1.error;
  ASSERT_EQ(r2.status, RunResult::Status::Ok)
      << what << ": " << r2.error << (r2.trap ? r2.trap->render() : "");
  for (const auto &[name, arr] : want)
    EXPECT_EQ(arr.data, got.at(name).data) << what << ": buffer " << name;
}

HostArray randomArray(DType t, std::vector<int64_t> shape, std::mt19937 &rng, int lo, int hi) {
  HostArray a = HostArray::zeros(t, std::move(shape));
  std::uniform_int_distribution<int> d(lo, hi);
  for (int64_t i = 0; i < a.numElements(); ++i)
    a.setDouble(i, d(rng) * (isFloat(t) ? 0.25 : 1.0));
  return a;
}

TEST(Prefetch, CopyComputesTheSameBitsOnTheInterpreter) {
  std::mt19937 rng(20261206);
  auto colsum = compileText(kColsum);
  ASSERT_TRUE(colsum);
  for (int m : {0, 1, 7, 8, 9, 40}) {
    std::map<std::string, HostArray> bufs = {
        {"X", randomArray(DType::F32, {std::max(m, 1) * 40}, rng, -40, 40)},
        {"Y", HostArray::zeros(DType::F32, {40})}};
    expectSameOnInterpreter(*colsum, {2, 1, 1}, bufs,
                            {{"M", ScalarValue::ofInt(DType::I32, m)},
                             {"N", ScalarValue::ofInt(DType::I32, 40)},
                             {"stride", ScalarValue::ofInt(DType::I32, 40)}},
                            "colsum M=" + std::to_string(m));
  }
  auto walk = compileText(kWalk);
  ASSERT_TRUE(walk);
  EXPECT_EQ(loopsPrefetched(*walk), 1u);
  for (int trips : {0, 1, 2, 5}) {
    HostArray idx = randomArray(DType::I32, {16}, rng, 0, 15);
    std::map<std::string, HostArray> bufs = {{"X", randomArray(DType::I32, {96}, rng, -9, 9)},
                                             {"I", idx},
                                             {"Y", HostArray::zeros(DType::I32, {16})}};
    expectSameOnInterpreter(
        *walk, {1, 1, 1}, bufs,
        {{"K", ScalarValue::ofInt(DType::I32, trips)}, {"n", ScalarValue::ofInt(DType::I32, 11)}},
        "walk K=" + std::to_string(trips));
  }
  // A mask whose lanes are undefined for the trip after the last (w = u, never
  // read by the loop as written): the guard must keep them out (a select, not an and).
  auto undef = compileText(R"(__global__ void k(int *X, int *Y, int K) {
      int c[16] = 0 ... 16;
      int acc[16] = 0;
      int u[16] = *?(c < 0)(X + c);
      int w[16] = c;
      for (int t = 0; t < K; t++) {
        acc += *?(w < 32)(X + w);
        w = (c * 0 + t + 1 < K) ? w + 1 : u;
      }
      *(Y + c) = acc; })");
  ASSERT_TRUE(undef);
  for (int trips : {0, 1, 3}) {
    std::map<std::string, HostArray> bufs = {{"X", randomArray(DType::I32, {32}, rng, -9, 9)},
                                             {"Y", HostArray::zeros(DType::I32, {16})}};
    expectSameOnInterpreter(*undef, {1, 1, 1}, bufs, {{"K", ScalarValue::ofInt(DType::I32, trips)}},
                            "undefined mask K=" + std::to_string(trips));
  }
  auto forms = compileText(kForms);
  ASSERT_TRUE(forms);
  EXPECT_EQ(loopsPrefetched(*forms), 2u);
  for (int trips : {0, 1, 3, 4, 8, 12}) {
    std::map<std::string, HostArray> bufs = {
        {"X", randomArray(DType::F16, {12 * 64}, rng, -30, 30)},
        {"Y", HostArray::zeros(DType::F32, {64})}};
    expectSameOnInterpreter(*forms, {1, 1, 1}, bufs, {{"K", ScalarValue::ofInt(DType::I32, trips)}},
                            "forms K=" + std::to_string(trips));
  }
}

// Which launches get the option (the GPU backend's grid gate): at most 16 warps
// a multiprocessor, counted over all three grid axes, without overflow.
TEST(Prefetch, GridGateCountsWarpsPerMultiprocessor) {
  EXPECT_FALSE(gpu::wideGridForPrefetch({64, 1, 1}, 4, 132));  // column sums: 256 warps
  EXPECT_TRUE(gpu::wideGridForPrefetch({4096, 1, 1}, 8, 132)); // LayerNorm: 32768
  EXPECT_TRUE(gpu::wideGridForPrefetch({4096, 1, 1}, 4, 132)); // cross-entropy: 16384
  EXPECT_FALSE(gpu::wideGridForPrefetch({528, 1, 1}, 4, 132)); // 2112 = 132 x 16
  EXPECT_TRUE(gpu::wideGridForPrefetch({529, 1, 1}, 4, 132));  // one program more
  EXPECT_TRUE(gpu::wideGridForPrefetch({33, 2, 2}, 4, 8));     // 528 > 8 x 16, over 3 axes
  EXPECT_TRUE(gpu::wideGridForPrefetch({1, 1, 1}, 32, 1));     // 32 warps on one SM
  EXPECT_TRUE(gpu::wideGridForPrefetch({INT32_MAX, 65535, 65535}, 32, 132)); // no overflow
  EXPECT_FALSE(gpu::wideGridForPrefetch({4, 1, 1}, 4, 0)); // a count of 0 taken as 1
}

// --- On a GPU ---------------------------------------------------------------

class PrefetchGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!gpu::cudaAvailable(&why))
      GTEST_SKIP() << why;
  }
};

TEST_F(PrefetchGpuTest, BackendAgreesWithTheKernelAsWritten) {
  std::mt19937 rng(7);
  auto colsum = compileText(kColsum);
  auto walk = compileText(kWalk);
  ASSERT_TRUE(colsum && walk);
  auto interp = createInterpreterBackend();
  gpu::GpuOptions o;
  o.diskCache = false;
  auto gpu = gpu::createGpuBackend(o);
  // Column sums of M rows and N columns on cdiv(N, 32) programs of 4 warps. The
  // last case's grid, 8192 programs, has more than 16 warps a multiprocessor:
  // it runs the kernel compiled without the option (gpu::wideGridForPrefetch).
  struct Sums {
    int m, n;
  };
  for (Sums c : {Sums{0, 40}, Sums{1, 40}, Sums{9, 40}, Sums{200, 40}, Sums{3, 8192 * 32}}) {
    HostArray x = randomArray(DType::F32, {std::max(c.m, 1) * c.n}, rng, -40, 40);
    HostArray want = HostArray::zeros(DType::F32, {c.n}), got = want;
    for (auto [backend, out] :
         {std::pair<Backend *, HostArray *>{interp.get(), &want}, {gpu.get(), &got}}) {
      LaunchArgs args;
      args.setBuffer("X", &x);
      args.setBuffer("Y", out);
      args.setScalar("M", ScalarValue::ofInt(DType::I32, c.m));
      args.setScalar("N", ScalarValue::ofInt(DType::I32, c.n));
      args.setScalar("stride", ScalarValue::ofInt(DType::I32, c.n));
      RunResult r = backend->launch(*colsum, {(c.n + 31) / 32, 1, 1}, args, {});
      ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
    }
    EXPECT_EQ(want.data, got.data) << "colsum M=" << c.m << " N=" << c.n;
  }
  for (int trips : {0, 1, 2, 5}) {
    HostArray x = randomArray(DType::I32, {96}, rng, -9, 9);
    HostArray idx = randomArray(DType::I32, {16}, rng, 0, 15);
    HostArray want = HostArray::zeros(DType::I32, {16}), got = want;
    for (auto [backend, out] :
         {std::pair<Backend *, HostArray *>{interp.get(), &want}, {gpu.get(), &got}}) {
      LaunchArgs args;
      args.setBuffer("X", &x);
      args.setBuffer("I", &idx);
      args.setBuffer("Y", out);
      args.setScalar("K", ScalarValue::ofInt(DType::I32, trips));
      args.setScalar("n", ScalarValue::ofInt(DType::I32, 11));
      RunResult r = backend->launch(*walk, {1, 1, 1}, args, {});
      ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
    }
    EXPECT_EQ(want.data, got.data) << "walk K=" << trips;
  }
}

} // namespace
