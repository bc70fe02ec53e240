// codegen/Cuda: the driver wrapper. Without a device only the "no CUDA device"
// error is checked and the rest is skipped; on a GPU machine: memory round
// trips, a hand-written PTX kernel, JIT errors with the driver's log, events,
// the synchronize timeout, and a faulting kernel (sticky; in a child process,
// since the driver then refuses new contexts in the whole process).
#include "codegen/Cuda.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

namespace {

namespace cuda = tc::cuda;

/// out[ctaid.x * ntid.x + tid.x] = tid.x (u32).
const char *kWriteTidPtx = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .entry write_tid(.param .u64 out)
{
  .reg .b32 %r<5>;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.u32 %r4, %r2, %r3, %r1;
  mul.wide.u32 %rd3, %r4, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r1;
  ret;
}
)";

/// Busy-waits `ns` nanoseconds of %globaltimer.
const char *kSpinPtx = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .entry spin(.param .u64 ns)
{
  .reg .pred %p;
  .reg .b64 %rd<5>;
  ld.param.u64 %rd1, [ns];
  mov.u64 %rd2, %globaltimer;
LOOP:
  mov.u64 %rd3, %globaltimer;
  sub.u64 %rd4, %rd3, %rd2;
  setp.lt.u64 %p, %rd4, %rd1;
  @%p bra LOOP;
  ret;
}
)";

/// Stores to address 8 (never mapped): CUDA_ERROR_ILLEGAL_ADDRESS.
const char *kFaultPtx = R"(
.version 8.0
.target sm_80
.address_size 64

.visible .entry fault()
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  mov.u64 %rd1, 8;
  mov.u32 %r1, 1;
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

TEST(CudaTest, NoDeviceIsAClearError) {
  std::string why;
  if (cuda::available(&why)) {
    EXPECT_EQ(why, "");
    EXPECT_GT(cuda::deviceCount(), 0);
    GTEST_SKIP() << "a CUDA device is present; the no-device path is not reachable";
  }
  EXPECT_EQ(why.rfind("no CUDA device", 0), 0u) << why;
  EXPECT_EQ(cuda::deviceCount(), 0);
  try {
    cuda::Context::create(0);
    FAIL() << "Context::create succeeded without a device";
  } catch (const cuda::Error &e) {
    EXPECT_EQ(std::string(e.what()).rfind("no CUDA device", 0), 0u) << e.what();
    EXPECT_FALSE(e.sticky());
  }
}

/// Tests that need a device: each gets a fresh context, or is skipped.
class CudaDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!cuda::available(&why))
      GTEST_SKIP() << why;
    ctx_ = cuda::Context::create(0);
  }

  /// Downloads `n` u32 values from `b`.
  std::vector<uint32_t> read(const cuda::Buffer &b, size_t n) {
    std::vector<uint32_t> out(n);
    ctx_->download(out.data(), b, n * sizeof(uint32_t));
    return out;
  }

  std::unique_ptr<cuda::Context> ctx_;
};

TEST_F(CudaDeviceTest, DeviceProperties) {
  EXPECT_FALSE(ctx_->deviceName().empty());
  EXPECT_GE(ctx_->computeCapability(), 50); // sm_50 or newer
  EXPECT_GT(ctx_->multiprocessorCount(), 0);
  EXPECT_GE(ctx_->maxSharedPerBlockOptin(), 48u * 1024);
  EXPECT_THROW(cuda::Context::create(cuda::deviceCount()), cuda::Error);
}

TEST_F(CudaDeviceTest, UploadDownloadMemset) {
  std::vector<uint32_t> host(1000);
  std::iota(host.begin(), host.end(), 7u);
  cuda::Buffer b = ctx_->alloc(host.size() * 4);
  EXPECT_NE(b.address(), 0u);
  EXPECT_EQ(b.size(), host.size() * 4);
  ctx_->upload(b, host.data(), host.size() * 4);
  EXPECT_EQ(read(b, host.size()), host);

  ctx_->memset(b, 0xAB, 40); // the first 10 words only
  std::vector<uint32_t> want = host;
  for (size_t i = 0; i < 10; ++i)
    want[i] = 0xABABABABu;
  EXPECT_EQ(read(b, host.size()), want);

  cuda::Buffer empty = ctx_->alloc(0);
  EXPECT_NE(empty.address(), 0u);
  EXPECT_EQ(empty.size(), 256u);

  cuda::Buffer moved = std::move(b);
  EXPECT_EQ(b.address(), 0u);
  EXPECT_EQ(read(moved, host.size()), want);
}

TEST_F(CudaDeviceTest, LaunchHandWrittenPtx) {
  std::unique_ptr<cuda::Module> m = ctx_->load(kWriteTidPtx);
  void *fn = m->function("write_tid");
  const unsigned blocks = 3, threads = 128;
  cuda::Buffer out = ctx_->alloc(blocks * threads * 4);
  ctx_->memset(out, 0xFF, blocks * threads * 4);
  uint64_t addr = out.address();
  void *params[] = {&addr};
  ctx_->launch(fn, {blocks, 1, 1}, threads, 0, params);
  ctx_->synchronize();
  std::vector<uint32_t> got = read(out, blocks * threads);
  for (unsigned i = 0; i < blocks * threads; ++i)
    ASSERT_EQ(got[i], i % threads) << "index " << i;

  // More than 48 KiB of dynamic shared memory needs the opt-in attribute.
  size_t shared = 64 * 1024;
  if (ctx_->maxSharedPerBlockOptin() >= shared) {
    ctx_->memset(out, 0xFF, blocks * threads * 4);
    ctx_->launch(fn, {blocks, 1, 1}, threads, shared, params);
    ctx_->synchronize(10.0);
    EXPECT_EQ(read(out, blocks * threads), got);
  }
}

TEST_F(CudaDeviceTest, PtxSyntaxErrorCarriesTheJitLog) {
  std::string bad = kWriteTidPtx;
  bad.replace(bad.find("mad.lo.u32"), 10, "mad.lo.bogus");
  try {
    ctx_->load(bad);
    FAIL() << "broken PTX loaded";
  } catch (const cuda::Error &e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("cuModuleLoadData failed: CUDA_ERROR_INVALID_PTX (", 0), 0u) << msg;
    EXPECT_NE(msg.find("JIT error log:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("error"), std::string::npos) << msg;
    EXPECT_FALSE(e.sticky());
  }
}

TEST_F(CudaDeviceTest, MissingKernelName) {
  std::unique_ptr<cuda::Module> m = ctx_->load(kWriteTidPtx);
  try {
    m->function("no_such_kernel");
    FAIL() << "found a kernel that does not exist";
  } catch (const cuda::Error &e) {
    std::string msg = e.what();
    EXPECT_EQ(msg.rfind("cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND", 0), 0u) << msg;
    EXPECT_NE(msg.find("no_such_kernel"), std::string::npos) << msg;
    EXPECT_FALSE(e.sticky());
  }
}

TEST_F(CudaDeviceTest, EventsTimeAKernel) {
  std::unique_ptr<cuda::Module> m = ctx_->load(kSpinPtx);
  void *fn = m->function("spin");
  void *start = ctx_->eventCreate();
  void *end = ctx_->eventCreate();
  uint64_t ns = 2'000'000; // 2 ms
  void *params[] = {&ns};
  ctx_->eventRecord(start);
  ctx_->launch(fn, {1, 1, 1}, 32, 0, params);
  ctx_->eventRecord(end);
  float ms = ctx_->eventElapsedMs(start, end);
  EXPECT_GE(ms, 0.0f);
  EXPECT_GE(ms, 1.5f); // the kernel spins 2 ms of %globaltimer
  ctx_->eventDestroy(start);
  ctx_->eventDestroy(end);
}

/// In a child process (SynchronizeTimesOut): a 300 ms kernel waited for with
/// a 20 ms timeout is a sticky timeout error; exits 0 when it is, else 1.
[[noreturn]] void timeoutThenWaitItOut(cuda::Context &ctx) {
  bool ok = true;
  std::unique_ptr<cuda::Module> m = ctx.load(kSpinPtx);
  void *fn = m->function("spin");
  uint64_t ns = 300'000'000; // 300 ms, bounded so the context can be destroyed
  void *params[] = {&ns};
  ctx.launch(fn, {1, 1, 1}, 32, 0, params);
  try {
    ctx.synchronize(0.02);
    std::fprintf(stderr, "a 300 ms kernel finished within 20 ms\n");
    ok = false;
  } catch (const cuda::Error &e) {
    if (std::string(e.what()) != "kernel did not finish within 0.02 s" ||
        e.code() != cuda::kErrorLaunchTimeout || !e.sticky()) {
      std::fprintf(stderr, "unexpected timeout error: %s (code %d)\n", e.what(), e.code());
      ok = false;
    }
  }
  // The kernel is bounded, so here (unlike after a real hang) the context can
  // wait it out and be torn down normally.
  ctx.synchronize();
  std::fflush(stderr);
  std::_Exit(ok ? 0 : 1);
}

TEST_F(CudaDeviceTest, SynchronizeTimesOut) {
  // A timeout is sticky for the whole process (no context is parked for
  // reuse after it: the kernel may never end), so it runs in a child, and the
  // tests after this one keep reuse (PtxCompileGpu.DroppedContextIsReused).
  // "threadsafe" re-executes the test binary: the child initialises CUDA afresh.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(timeoutThenWaitItOut(*ctx_), ::testing::ExitedWithCode(0), "");
}

TEST_F(CudaDeviceTest, SynchronizeWithTimeoutReturnsWhenDone) {
  std::unique_ptr<cuda::Module> m = ctx_->load(kSpinPtx);
  void *fn = m->function("spin");
  uint64_t ns = 5'000'000; // 5 ms
  void *params[] = {&ns};
  ctx_->launch(fn, {1, 1, 1}, 32, 0, params);
  EXPECT_NO_THROW(ctx_->synchronize(30.0));
}

/// Runs the faulting kernel and checks the Error, then that the process can
/// make no new context; exits 0 when all is as expected, else 1 (with the
/// reason on stderr). Runs in a fresh child process: it poisons its process.
[[noreturn]] void faultThenRecreate() {
  bool ok = true;
  try {
    std::unique_ptr<cuda::Context> ctx = cuda::Context::create(0);
    std::unique_ptr<cuda::Module> m = ctx->load(kFaultPtx);
    ctx->launch(m->function("fault"), {1, 1, 1}, 1, 0, nullptr);
    ctx->synchronize();
    std::fprintf(stderr, "a store to address 8 did not fault\n");
    ok = false;
  } catch (const cuda::Error &e) {
    std::string msg = e.what();
    if (e.code() != cuda::kErrorIllegalAddress || !e.sticky() ||
        msg.rfind("cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (", 0) != 0) {
      std::fprintf(stderr, "unexpected fault error: %s\n", msg.c_str());
      ok = false;
    }
  }
  try {
    cuda::Context::create(0);
    std::fprintf(stderr, "a new context was created after the fault\n");
    ok = false;
  } catch (const cuda::Error &e) {
    std::string msg = e.what();
    if (!e.sticky() || msg.find("only a new process can use the GPU again") == std::string::npos) {
      std::fprintf(stderr, "unexpected create error: %s\n", msg.c_str());
      ok = false;
    }
  }
  std::fflush(stderr);
  std::_Exit(ok ? 0 : 1);
}

TEST(CudaFaultTest, FaultIsStickyAndPoisonsTheProcess) {
  std::string why;
  if (!cuda::available(&why))
    GTEST_SKIP() << why;
  // "threadsafe" re-executes the test binary, so the child initialises CUDA
  // afresh (a forked child of an initialised process cannot use it).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(faultThenRecreate(), ::testing::ExitedWithCode(0), "");
}

} // namespace
