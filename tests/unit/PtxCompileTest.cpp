// PTX -> cubin with ptxas processes (codegen/PtxCompile.h) and the image mode
// of the driver wrapper (codegen/Cuda.h). No GPU is needed: ptxas runs
// without one; the tests skip when no ptxas is found.
#include "codegen/Codegen.h"
#include "codegen/Cuda.h"
#include "codegen/PtxCompile.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace tc;

namespace {

// A kernel that stores 7 through its pointer argument, for `target`.
std::string tinyPtx(const std::string &target) {
  return ".version 8.0\n.target " + target +
         "\n.address_size 64\n"
         ".visible .entry k(.param .u64 p)\n{\n"
         "  .reg .b64 %rd<3>;\n  .reg .b32 %r<2>;\n"
         "  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd2, %rd1;\n"
         "  mov.u32 %r1, 7;\n  st.global.u32 [%rd2], %r1;\n  ret;\n}\n";
}

bool havePtxas() { return !codegen::findPtxas().empty(); }

} // namespace

TEST(PtxCompile, ArchFlagIsTheDevicesExactSm) {
  EXPECT_EQ(codegen::ptxasArchFlag(tinyPtx("sm_90a"), 90), "-arch=sm_90a");
  EXPECT_EQ(codegen::ptxasArchFlag(tinyPtx("sm_90"), 90), "-arch=sm_90");
  // PTX for sm_80 loaded on an sm_90 device: the driver compiles it for sm_90.
  EXPECT_EQ(codegen::ptxasArchFlag(tinyPtx("sm_80"), 90), "-arch=sm_90");
}

TEST(PtxCompile, CubinForSm90aHasTheArchInItsElfHeader) {
  if (!havePtxas())
    GTEST_SKIP() << codegen::ptxasMissing();
  std::string image, log;
  ASSERT_TRUE(codegen::compileCubin(tinyPtx("sm_90a"), 90, -1, image, log)) << log;
  ASSERT_GE(image.size(), 64u);
  EXPECT_EQ(image.substr(0, 4), std::string("\x7f" "ELF"));
  std::optional<codegen::CubinArch> a = codegen::cubinArch(image);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->sm, 90u);
  EXPECT_TRUE(a->archSpecific);

  ASSERT_TRUE(codegen::compileCubin(tinyPtx("sm_90"), 90, -1, image, log)) << log;
  a = codegen::cubinArch(image);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->sm, 90u);
  EXPECT_FALSE(a->archSpecific);

  // sm_80 PTX on an sm_90 device: an sm_90 cubin, as the driver's JIT makes.
  ASSERT_TRUE(codegen::compileCubin(tinyPtx("sm_80"), 90, -1, image, log)) << log;
  a = codegen::cubinArch(image);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->sm, 90u);
}

TEST(PtxCompile, JitLevelsAreGivenToPtxas) {
  if (!havePtxas())
    GTEST_SKIP() << codegen::ptxasMissing();
  // ptxas records its options in the cubin's tool note ("-O 0 -arch sm_90").
  std::string image, log;
  ASSERT_TRUE(codegen::compileCubin(tinyPtx("sm_90"), 90, 0, image, log)) << log;
  EXPECT_NE(image.find("-O 0"), std::string::npos);
  ASSERT_TRUE(codegen::compileCubin(tinyPtx("sm_90"), 90, 4, image, log)) << log;
  EXPECT_NE(image.find("-O 3"), std::string::npos); // the JIT's highest level is ptxas's
  ASSERT_TRUE(codegen::compileCubin(tinyPtx("sm_90"), 90, -1, image, log)) << log;
  EXPECT_EQ(image.find("-O 0"), std::string::npos);
}

TEST(PtxCompile, RejectedPtxGivesPtxasLogAndNoImage) {
  if (!havePtxas())
    GTEST_SKIP() << codegen::ptxasMissing();
  std::string bad = tinyPtx("sm_90");
  bad.replace(bad.find("mov.u32"), 7, "mov.q99");
  std::string image, log;
  EXPECT_FALSE(codegen::compileCubin(bad, 90, -1, image, log));
  EXPECT_TRUE(image.empty());
  EXPECT_NE(log.find("error"), std::string::npos) << log;
}

TEST(PtxCompile, JobsRunConcurrently) {
  if (!havePtxas())
    GTEST_SKIP() << codegen::ptxasMissing();
  std::vector<std::unique_ptr<codegen::PtxasJob>> jobs;
  for (int i = 0; i < 4; ++i) {
    jobs.push_back(std::make_unique<codegen::PtxasJob>());
    std::string error;
    ASSERT_TRUE(jobs.back()->start(tinyPtx(i % 2 ? "sm_90a" : "sm_90"), 90, -1, error)) << error;
    EXPECT_TRUE(jobs.back()->running());
  }
  for (int i = 0; i < 4; ++i) {
    std::string image, log;
    ASSERT_TRUE(jobs[static_cast<size_t>(i)]->wait(image, log)) << log;
    std::optional<codegen::CubinArch> a = codegen::cubinArch(image);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->archSpecific, i % 2 == 1);
  }
  // A job dropped while running is killed and its folder removed (no hang).
  codegen::PtxasJob dropped;
  std::string error;
  ASSERT_TRUE(dropped.start(tinyPtx("sm_90"), 90, -1, error)) << error;
}

TEST(PtxCompile, NotAnElfCudaImage) {
  EXPECT_FALSE(codegen::cubinArch("").has_value());
  EXPECT_FALSE(codegen::cubinArch(std::string(64, 'x')).has_value());
  std::string elf(64, '\0');
  elf.replace(0, 4, "\x7f" "ELF");
  elf[4] = 2;
  elf[18] = 62; // EM_X86_64
  EXPECT_FALSE(codegen::cubinArch(elf).has_value());
}

TEST(PtxCompile, AutoTakesPtxasForBatchesAndArchSpecificPtx) {
  std::string one = tinyPtx("sm_90");
  std::string two = one + ".visible .entry k2(.param .u64 p)\n{\n  ret;\n}\n";
  EXPECT_FALSE(cuda::usesPtxas(cuda::ImageMode::Auto, one));
  EXPECT_TRUE(cuda::usesPtxas(cuda::ImageMode::Auto, two));
  EXPECT_TRUE(cuda::usesPtxas(cuda::ImageMode::Auto, tinyPtx("sm_90a")));
  EXPECT_FALSE(cuda::usesPtxas(cuda::ImageMode::Auto, tinyPtx("sm_80")));
  EXPECT_TRUE(cuda::usesPtxas(cuda::ImageMode::Ptxas, one));
  EXPECT_FALSE(cuda::usesPtxas(cuda::ImageMode::Driver, two));
}

TEST(PtxCompile, ImageModeNames) {
  cuda::ImageMode m = cuda::ImageMode::Driver;
  EXPECT_TRUE(cuda::parseImageMode("ptxas", m));
  EXPECT_EQ(m, cuda::ImageMode::Ptxas);
  EXPECT_TRUE(cuda::parseImageMode("driver", m));
  EXPECT_EQ(m, cuda::ImageMode::Driver);
  EXPECT_TRUE(cuda::parseImageMode("auto", m));
  EXPECT_EQ(m, cuda::ImageMode::Auto);
  EXPECT_FALSE(cuda::parseImageMode("nvptx", m));
  EXPECT_STREQ(cuda::imageModeName(cuda::ImageMode::Ptxas), "ptxas");
  cuda::ImageMode before = cuda::imageMode();
  cuda::setImageMode(cuda::ImageMode::Ptxas);
  EXPECT_EQ(cuda::imageMode(), cuda::ImageMode::Ptxas);
  cuda::setImageMode(before);
}

// On a GPU machine: a module loaded from ptxas's cubin runs as the JIT-ed one
// does, the load says so (cuda::lastLoad), and a dropped Context is taken
// back by the next create when reuse is on.
namespace {

bool haveDevice(std::string &why) { return cuda::available(&why); }

// out[tid.x] = tid.x * 3 (u32), for sm_80 (the driver compiles it for the device).
const char *kTimesThreePtx = R"(
.version 8.0
.target sm_80
.address_size 64
.visible .entry times3(.param .u64 out)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [out];
  cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x;
  mul.lo.u32 %r2, %r1, 3;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd2, %rd2, %rd3;
  st.global.u32 [%rd2], %r2;
  ret;
}
)";

// Runs times3 from `m` on 64 threads; the values it wrote.
std::vector<uint32_t> runTimes3(cuda::Context &ctx, cuda::Module &m) {
  cuda::Buffer out = ctx.alloc(64 * 4);
  ctx.memset(out, 0xFF, 64 * 4);
  uint64_t addr = out.address();
  void *params[] = {&addr};
  ctx.launch(m.function("times3"), {1, 1, 1}, 64, 0, params);
  ctx.synchronize(10.0);
  std::vector<uint32_t> got(64);
  ctx.download(got.data(), out, 64 * 4);
  return got;
}

struct ModeGuard {
  cuda::ImageMode before = cuda::imageMode();
  ~ModeGuard() { cuda::setImageMode(before); }
};

} // namespace

TEST(PtxCompileGpu, CubinModuleRunsAsTheJitOne) {
  std::string why;
  if (!haveDevice(why))
    GTEST_SKIP() << why;
  if (!havePtxas())
    GTEST_SKIP() << codegen::ptxasMissing();
  ModeGuard guard;
  std::unique_ptr<cuda::Context> ctx = cuda::Context::create(0);
  cuda::setImageMode(cuda::ImageMode::Driver);
  std::unique_ptr<cuda::Module> jit = ctx->load(kTimesThreePtx);
  EXPECT_FALSE(cuda::lastLoad().cubin);
  std::vector<uint32_t> want = runTimes3(*ctx, *jit);
  for (uint32_t i = 0; i < 64; ++i)
    ASSERT_EQ(want[i], i * 3);
  cuda::setImageMode(cuda::ImageMode::Ptxas);
  uint64_t seq = cuda::lastLoad().seq;
  std::unique_ptr<cuda::Module> cubin = ctx->load(kTimesThreePtx);
  EXPECT_EQ(cuda::lastLoad().seq, seq + 1);
  EXPECT_TRUE(cuda::lastLoad().cubin);
  EXPECT_FALSE(cuda::lastLoad().jitFallback) << cuda::lastLoad().fallbackWhy;
  EXPECT_GT(cuda::lastLoad().ptxasMs, 0);
  EXPECT_EQ(runTimes3(*ctx, *cubin), want);
  // ptxas's rejection is the JIT's error code, not sticky.
  std::string bad = kTimesThreePtx;
  bad.replace(bad.find("mul.lo.u32"), 10, "mul.lo.bogus");
  try {
    ctx->load(bad);
    FAIL() << "broken PTX loaded";
  } catch (const cuda::Error &e) {
    EXPECT_EQ(e.code(), 218) << e.what(); // CUDA_ERROR_INVALID_PTX
    EXPECT_FALSE(e.sticky());
    EXPECT_NE(std::string(e.what()).find("ptxas"), std::string::npos) << e.what();
  }
}

TEST(PtxCompileGpu, DroppedContextIsReused) {
  std::string why;
  if (!haveDevice(why))
    GTEST_SKIP() << why;
  // Other tests of this process (a GpuOracle) may have turned reuse on and
  // left contexts parked: the counts here are relative to theirs.
  bool before = cuda::contextReuse();
  cuda::setContextReuse(true);
  size_t parked = cuda::parkedContexts();
  {
    std::unique_ptr<cuda::Context> first = cuda::Context::create(0);
    std::unique_ptr<cuda::Module> m = first->load(kTimesThreePtx);
    (void)runTimes3(*first, *m);
    parked = cuda::parkedContexts();
  } // module, then context dropped: parked
  EXPECT_EQ(cuda::parkedContexts(), parked + 1);
  uint64_t made = cuda::contextsCreated();
  {
    std::unique_ptr<cuda::Context> again = cuda::Context::create(0);
    EXPECT_EQ(cuda::contextsCreated(), made); // taken back, not created
    EXPECT_EQ(cuda::parkedContexts(), parked);
    std::unique_ptr<cuda::Module> m = again->load(kTimesThreePtx);
    std::vector<uint32_t> got = runTimes3(*again, *m);
    for (uint32_t i = 0; i < 64; ++i)
      ASSERT_EQ(got[i], i * 3);
    cuda::setContextReuse(false);
  } // destroyed, not parked
  EXPECT_EQ(cuda::parkedContexts(), parked);
  cuda::setContextReuse(before);
}
