// The GPU backend against the reference interpreter on the tutorial's kernels
// (exact inputs: small integers in float types, so results must be bitwise
// equal), plus its fault handling: a failed assert is a trap, an illegal
// address is an error naming the kernel and the launch, and the backend keeps
// working afterwards. Without a CUDA device every test skips with the reason.
#include "gpu/GpuBackend.h"
#include "interp/InterpreterBackend.h"
#include "tests/unit/SourceRoot.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

namespace {

using tc::DType;
using tc::HostArray;
using tc::RunResult;
using tc::ScalarValue;

HostArray smallInts(DType t, std::vector<int64_t> shape, unsigned seed) {
  HostArray a = HostArray::zeros(t, std::move(shape));
  std::mt19937 rng(seed);
  for (int64_t i = 0; i < a.numElements(); ++i)
    a.setDouble(i, static_cast<double>(static_cast<int>(rng() % 9) - 4));
  return a;
}

class GpuBackendTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!tc::gpu::cudaAvailable(&why))
      GTEST_SKIP() << why;
    tc::gpu::GpuOptions o;
    o.diskCache = false;
    gpu_ = tc::gpu::createGpuBackend(o);
    interp_ = tc::createInterpreterBackend();
  }

  std::shared_ptr<tc::CompiledKernel> compile(const std::string &file, tc::DefineList defines) {
    tc::CompileRequest req;
    req.path = tc::test::examplePath(file);
    if (req.path.empty()) {
      ADD_FAILURE() << tc::test::sourceRootProblem();
      return nullptr;
    }
    req.defines = std::move(defines);
    auto out = tc::compileKernel(req);
    EXPECT_TRUE(out.ok()) << out.diagnostics;
    return out.kernel;
  }
  std::shared_ptr<tc::CompiledKernel> compileText(const std::string &text) {
    tc::CompileRequest req;
    req.sourceName = "test.tc";
    req.sourceText = text;
    auto out = tc::compileKernel(req);
    EXPECT_TRUE(out.ok()) << out.diagnostics;
    return out.kernel;
  }

  /// Runs on both backends with copies of the buffers and expects equal bytes.
  void expectSame(const tc::CompiledKernel &k, std::array<int64_t, 3> grid,
                  std::map<std::string, HostArray> buffers,
                  std::map<std::string, ScalarValue> scalars) {
    std::map<std::string, HostArray> mine = buffers;
    tc::LaunchArgs a, b;
    for (auto &[n, arr] : buffers)
      a.setBuffer(n, &arr);
    for (auto &[n, arr] : mine)
      b.setBuffer(n, &arr);
    for (auto &[n, v] : scalars) {
      a.setScalar(n, v);
      b.setScalar(n, v);
    }
    RunResult want = interp_->launch(k, grid, a, {});
    ASSERT_EQ(want.status, RunResult::Status::Ok);
    RunResult got = gpu_->launch(k, grid, b, {});
    ASSERT_EQ(got.status, RunResult::Status::Ok) << got.error;
    for (auto &[n, arr] : buffers)
      for (int64_t i = 0; i < arr.numElements(); ++i)
        ASSERT_EQ(arr.getBits(i), mine.at(n).getBits(i)) << "buffer " << n << " element " << i;
  }

  std::unique_ptr<tc::gpu::GpuBackend> gpu_;
  std::unique_ptr<tc::Backend> interp_;
};

ScalarValue i32(int64_t v) { return ScalarValue::ofInt(DType::I32, v); }

TEST_F(GpuBackendTest, VectorAddWithTail) {
  auto k = compile("vector_add.tc", {{"SIZE", "1024"}, {"TYPE", "float"}});
  ASSERT_TRUE(k);
  int64_t n = 5000;
  expectSame(*k, {5, 1, 1},
             {{"a", smallInts(DType::F32, {n}, 1)},
              {"b", smallInts(DType::F32, {n}, 2)},
              {"c", HostArray::zeros(DType::F32, {n})}},
             {{"N", i32(n)}});
}

TEST_F(GpuBackendTest, MatmulHalfAllWarpCounts) {
  auto k = compile("matmul.tc", {{"TM", "64"}, {"TN", "32"}, {"TK", "16"}, {"TYPE", "half"}});
  ASSERT_TRUE(k);
  int64_t m = 128, n = 96, kk = 48; // the tutorial kernel has no masks: multiples of the tiles
  for (unsigned w : {1u, 4u, 8u}) {
    gpu_->setNumWarps(w);
    expectSame(*k, {2, 3, 1},
               {{"A", smallInts(DType::F16, {m, kk}, 3)},
                {"B", smallInts(DType::F16, {kk, n}, 4)},
                {"C", HostArray::zeros(DType::F16, {m, n})}},
               {{"M", i32(m)}, {"N", i32(n)}, {"K", i32(kk)}, {"lda", i32(kk)},
                {"ldb", i32(n)}, {"ldc", i32(n)}});
  }
}

TEST_F(GpuBackendTest, ReductionsAndBroadcasts) {
  auto k = compileText(R"(
__global__ void red(float *X, float *S, int *I, float *M) {
  int r[8] = 0 ... 8;
  int c[32] = 0 ... 32;
  float x[8, 32] = *(X + r[:, newaxis] * 32 + c[newaxis, :]);
  *(S + r) = x[:, +];
  *(I + c) = x[argmax, :];
  *(M + r[:, newaxis] * 32 + c[newaxis, :]) = x - x[:, max][:, newaxis];
})");
  expectSame(*k, {1, 1, 1},
             {{"X", smallInts(DType::F32, {8, 32}, 5)},
              {"S", HostArray::zeros(DType::F32, {8})},
              {"I", HostArray::zeros(DType::I32, {32})},
              {"M", HostArray::zeros(DType::F32, {8, 32})}},
             {});
}

// A kernel fault poisons CUDA for the whole process (the driver refuses new
// contexts afterwards), so each fault runs in a fresh process: gtest's
// "threadsafe" death-test style re-executes the test binary.
void runAssertKernel() {
  tc::CompileRequest req;
  req.sourceName = "test.tc";
  req.sourceText = R"(
__global__ void check(int *X) {
  int x[64] = *(X + (0 ... 64));
  assert(x < 10, "x must stay below 10");
})";
  auto k = tc::compileKernel(req).kernel;
  HostArray x = HostArray::zeros(DType::I32, {64});
  tc::LaunchArgs args;
  args.setBuffer("X", &x);
  auto gpu = tc::gpu::createGpuBackend();
  if (gpu->launch(*k, {1, 1, 1}, args, {}).status !=
      RunResult::Status::Ok)
    std::exit(10); // a passing assert must not trap
  x.setDouble(17, 12);
  RunResult r = gpu->launch(*k, {1, 1, 1}, args, {});
  if (r.status != RunResult::Status::Trapped || r.trap->kind != tc::TrapKind::AssertionFailed)
    std::exit(11);
  RunResult after = gpu->launch(*k, {1, 1, 1}, args, {});
  if (after.status != RunResult::Status::Error ||
      after.error.find("new process") == std::string::npos)
    std::exit(12); // later launches say why they cannot run
  std::exit(0);
}

void runWildKernel() {
  tc::CompileRequest req;
  req.sourceName = "test.tc";
  req.sourceText = R"(
__global__ void wild(float *X, long off) {
  *(X + off) = 1.0;
})";
  auto k = tc::compileKernel(req).kernel;
  HostArray x = HostArray::zeros(DType::F32, {4});
  tc::LaunchArgs args;
  args.setBuffer("X", &x);
  args.setScalar("off", ScalarValue::ofInt(DType::I64, int64_t(1) << 40));
  RunResult r = tc::gpu::createGpuBackend()->launch(*k, {1, 1, 1}, args, {});
  if (r.status != RunResult::Status::Error ||
      r.error.find("kernel 'wild', grid (1, 1, 1)") == std::string::npos)
    std::exit(20);
  std::exit(0);
}

TEST_F(GpuBackendTest, FailedAssertIsATrap) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(runAssertKernel(), ::testing::ExitedWithCode(0), "");
}

TEST_F(GpuBackendTest, IllegalAddressNamesTheLaunch) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(runWildKernel(), ::testing::ExitedWithCode(0), "");
}

TEST_F(GpuBackendTest, LaunchChecksMatchTheInterpreter) {
  auto k = compile("vector_add.tc", {{"SIZE", "1024"}, {"TYPE", "float"}});
  ASSERT_TRUE(k);
  HostArray a = HostArray::zeros(DType::F32, {16});
  tc::LaunchArgs args;
  args.setBuffer("a", &a);
  RunResult r = gpu_->launch(*k, {1, 1, 1}, args, {});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, tc::TrapKind::InvalidLaunch);
}

} // namespace
