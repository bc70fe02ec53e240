// Argument specialisation (runtime/Specialize.h): the classes, their keys, the
// text form tritonc takes, the specialised copy of a kernel, and the GPU
// backend's variant key (what its caches and launchDevice look kernels up by).
// The GPU tests at the end (one kernel object launched with arguments of
// different classes, each result checked) skip without a CUDA device.
#include "runtime/Specialize.h"
#include "gpu/GpuBackend.h"
#include "interp/InterpreterBackend.h"
#include "ir/Printer.h"
#include "support/SourceManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

namespace {

using namespace tc;

std::shared_ptr<CompiledKernel> compileText(const std::string &text) {
  CompileRequest req;
  req.sourceName = "spec.tc";
  req.sourceText = text;
  CompileOutcome out = compileKernel(req);
  EXPECT_TRUE(out.ok()) << out.diagnostics;
  return out.kernel;
}

const char *kStrided = R"(
__global__ void k(float *X, float *Y, int n, int stride, float s, bool f, uint64 u, int8 b) {
  int i[128] = 0 ... 128;
  bool m[128] = i < n;
  *?(m)(Y + i * stride) = *?(m)(X + i * stride) * s;
})";

TEST(Specialize, ClassifiesIntegersAndPointers) {
  EXPECT_EQ(classifyInteger(1), ArgClass::One);
  EXPECT_EQ(classifyInteger(0), ArgClass::Div16); // 0 is a multiple of 16
  EXPECT_EQ(classifyInteger(16), ArgClass::Div16);
  EXPECT_EQ(classifyInteger(1024), ArgClass::Div16);
  EXPECT_EQ(classifyInteger(-32), ArgClass::Div16);
  EXPECT_EQ(classifyInteger(1000), ArgClass::Any);
  EXPECT_EQ(classifyInteger(8), ArgClass::Any);
  EXPECT_EQ(classifyInteger(-1), ArgClass::Any);
  EXPECT_EQ(classifyInteger(2), ArgClass::Any);
  EXPECT_EQ(classifyUnsigned(~uint64_t(0) - 15), ArgClass::Div16); // 2^64 - 16
  EXPECT_EQ(classifyUnsigned(~uint64_t(0)), ArgClass::Any);
  EXPECT_EQ(classifyPointer(0x7f0000001000), ArgClass::Div16);
  EXPECT_EQ(classifyPointer(0x7f0000001004), ArgClass::Any);
  EXPECT_EQ(classifyPointer(0x7f0000001008), ArgClass::Any); // 8 is not enough
}

TEST(Specialize, ClassifiesRawBitsInTheParametersWidth) {
  auto k = compileText(kStrided);
  ASSERT_TRUE(k);
  const ir::Function &fn = k->function();
  float s = 2.0f;
  uint32_t sbits;
  std::memcpy(&sbits, &s, 4);
  // X aligned, Y 4 bytes off, n = -16 as i32 bits, stride 1, s = 2.0 (16.0's
  // bits are not an integer's: floats are never classified), f true, u 2^63,
  // b = -128 as i8 bits (a multiple of 16).
  uint64_t values[] = {0x1000, 0x2004, 0xfffffff0, 1, sbits, 1, uint64_t(1) << 63, 0x80};
  Specialization sp = classifyValues(fn, values);
  std::vector<ArgClass> want = {ArgClass::Div16, ArgClass::Any, ArgClass::Div16, ArgClass::One,
                                ArgClass::Any,   ArgClass::Any, ArgClass::Div16, ArgClass::Div16};
  EXPECT_EQ(sp.params, want);
  EXPECT_EQ(sp.key(), "spec=D.D1..DD");
  EXPECT_EQ(describeSpecialization(fn, sp), "X=16,n=16,stride=1,u=16,b=16");
  EXPECT_FALSE(sp.generic());
  // The i32 bits of 1000 and the high bits of a wider word are ignored.
  values[2] = (uint64_t(0xdead) << 32) | 1000;
  EXPECT_EQ(classifyValues(fn, values).params[2], ArgClass::Any);
  values[2] = (uint64_t(0xdead) << 32) | 1;
  EXPECT_EQ(classifyValues(fn, values).params[2], ArgClass::One);
}

TEST(Specialize, KeysDifferForEveryClassChange) {
  auto k = compileText(kStrided);
  ASSERT_TRUE(k);
  const ir::Function &fn = k->function();
  uint64_t base[] = {0x1000, 0x2000, 1024, 1, 0, 0, 0, 0};
  std::string key = classifyValues(fn, base).key();
  // Same class, other values: the same key (one compile serves both).
  uint64_t same[] = {0x8000, 0x9010, 2048, 1, 7, 0, 32, 16};
  EXPECT_EQ(classifyValues(fn, same).key(), key);
  // Each argument moved to another class changes the key.
  for (unsigned i : {0u, 1u, 2u, 3u}) {
    uint64_t other[8];
    std::memcpy(other, base, sizeof base);
    other[i] += 4;
    EXPECT_NE(classifyValues(fn, other).key(), key) << "parameter " << i;
  }
}

TEST(Specialize, ClassifiesLaunchArguments) {
  auto k = compileText(kStrided);
  ASSERT_TRUE(k);
  HostArray x = HostArray::zeros(DType::F32, {128}), y = x;
  y.origin = 8; // a view two floats in
  LaunchArgs args;
  args.setBuffer("X", &x);
  args.setBuffer("Y", &y);
  args.setScalar("n", ScalarValue::ofInt(DType::I32, 1000));
  args.setScalar("stride", ScalarValue::ofInt(DType::I32, 1));
  args.setScalar("s", ScalarValue::ofFloat(DType::F32, 16));
  args.setScalar("f", ScalarValue::ofInt(DType::Bool, 0));
  args.setScalar("u", ScalarValue::ofInt(DType::U64, 48));
  args.setScalar("b", ScalarValue::ofInt(DType::I8, 3));
  auto address = [](const std::string &, const HostArray &a) { return 0x10000 + a.origin; };
  EXPECT_EQ(classifyArgs(k->function(), args, address).key(), "spec=D..1..D.");
}

TEST(Specialize, ParsesTritoncText) {
  auto k = compileText(kStrided);
  ASSERT_TRUE(k);
  const ir::Function &fn = k->function();
  std::string error;
  auto sp = parseSpecialization("n=16,stride=1,X=16", fn, error);
  ASSERT_TRUE(sp) << error;
  EXPECT_EQ(sp->key(), "spec=D.D1....");
  EXPECT_EQ(describeSpecialization(fn, *sp), "X=16,n=16,stride=1");
  sp = parseSpecialization("", fn, error);
  ASSERT_TRUE(sp);
  EXPECT_TRUE(sp->generic());
  struct Bad {
    const char *text, *error;
  } bad[] = {
      {"q=16", "kernel 'k' has no parameter 'q' (integer and pointer parameters: X, Y, n, "
               "stride, u, b)"},
      {"X=1", "'X=1': a pointer's class is 16 (16-byte aligned)"},
      {"n=8", "'n=8': an integer's class is 16 (divisible by 16) or 1 (equal to 1)"},
      {"s=16", "'s' is not an integer or pointer parameter (integer and pointer parameters: X, "
               "Y, n, stride, u, b)"},
      {"f=1", "'f' is not an integer or pointer parameter (integer and pointer parameters: X, "
              "Y, n, stride, u, b)"},
      {"n=16,n=1", "'n' given twice"},
      {"n", "'n': expected NAME=16 or NAME=1"},
      {"=16", "'=16': expected NAME=16 or NAME=1"},
  };
  for (const Bad &b : bad) {
    error.clear();
    EXPECT_FALSE(parseSpecialization(b.text, fn, error)) << b.text;
    EXPECT_EQ(error, b.error) << b.text;
  }
}

TEST(Specialize, OneContradictsAMultipleofClaim) {
  auto k = compileText("__global__ void k(float *X, int ld __multipleof(8)) { *X = ld; }");
  ASSERT_TRUE(k);
  std::string error;
  EXPECT_FALSE(parseSpecialization("ld=1", k->function(), error));
  EXPECT_EQ(error, "'ld=1': 'ld' is declared __multipleof(8): a launch with 1 traps");
  EXPECT_TRUE(parseSpecialization("ld=16", k->function(), error)) << error;
}

TEST(Specialize, CopyCarriesTheFactsAsPromises) {
  auto k = compileText(R"(
__global__ void k(float *X __aligned(32), float *Y, int n __multipleof(3), int stride, int m) {
  int i[128] = 0 ... 128;
  bool msk[128] = i < n + m;
  *?(msk)(Y + i * stride) = *?(msk)(X + i * stride);
})");
  ASSERT_TRUE(k);
  const ir::Function &fn = k->function();
  std::string before = ir::toString(k->module());
  std::string error;
  auto sp = parseSpecialization("X=16,Y=16,n=16,stride=1", fn, error);
  ASSERT_TRUE(sp) << error;
  SpecializedKernel sk = specializeKernel(k->module(), fn, *sp);
  ASSERT_TRUE(sk.module && sk.function);
  const ir::Function &c = *sk.function;
  EXPECT_EQ(c.name(), "k");
  ASSERT_EQ(c.numParams(), fn.numParams()); // the launch ABI is unchanged
  for (unsigned i = 0; i < fn.numParams(); ++i) {
    EXPECT_EQ(c.paramName(i), fn.paramName(i));
    EXPECT_EQ(c.param(i)->type(), fn.param(i)->type());
  }
  EXPECT_EQ(c.paramAttrs(0).aligned, 32); // a stronger promise stays
  EXPECT_EQ(c.paramAttrs(1).aligned, 16);
  EXPECT_EQ(c.paramAttrs(2).multipleOf, 48); // lcm(3, 16)
  EXPECT_EQ(c.paramAttrs(3).multipleOf, 1);
  EXPECT_EQ(c.paramAttrs(4).multipleOf, 1);
  // stride = 1: the parameter is no longer used (its uses are the constant 1,
  // folded away), the others still are.
  std::string text = ir::toString(*sk.module);
  EXPECT_EQ(text.find("%stride", text.find('{')), std::string::npos) << text;
  EXPECT_NE(text.find("%m", text.find('{')), std::string::npos) << text;
  EXPECT_NE(text.find("%n", text.find('{')), std::string::npos) << text;
  // The kernel itself is unchanged.
  EXPECT_EQ(ir::toString(k->module()), before);
  EXPECT_EQ(fn.paramAttrs(1).aligned, 0);
}

// The specialised copy computes what the kernel computes, for arguments of
// its class: both run on the interpreter (it takes any verified IR), with the
// constant 1 in a stride, a loop bound, a shift and a divisor.
TEST(Specialize, CopyRunsLikeTheKernelOnArgumentsOfItsClass) {
  auto k = compileText(R"(
__global__ void k(float *X, float *Y, int n, int stride, int steps, int sh) {
  int i[64] = 0 ... 64;
  bool m[64] = i < n;
  float acc[64] = 0;
  for (int t = 0; t < steps; t = t + 1)
    acc = acc + *?(m)(X + i * stride + t);
  *?(m)(Y + i) = acc + (n >> sh) + n / stride;
})");
  ASSERT_TRUE(k);
  auto interp = createInterpreterBackend();
  struct Case {
    int n, stride, steps, sh;
    const char *key;
  } cases[] = {
      {64, 1, 1, 1, "spec=DDD111"}, {50, 1, 3, 1, "spec=DD.1.1"}, {48, 2, 16, 16, "spec=DDD.DD"},
      {33, 3, 1, 2, "spec=DD..1."}, {1, 1, 1, 1, "spec=DD1111"},
  };
  for (const Case &c : cases) {
    HostArray x = HostArray::zeros(DType::F32, {256});
    for (int64_t j = 0; j < 256; ++j)
      x.setDouble(j, double(j % 13) - 6);
    HostArray want = HostArray::zeros(DType::F32, {64}), got = want;
    LaunchArgs a, b;
    a.setBuffer("X", &x);
    b.setBuffer("X", &x);
    a.setBuffer("Y", &want);
    b.setBuffer("Y", &got);
    for (LaunchArgs *args : {&a, &b}) {
      args->setScalar("n", ScalarValue::ofInt(DType::I32, c.n));
      args->setScalar("stride", ScalarValue::ofInt(DType::I32, c.stride));
      args->setScalar("steps", ScalarValue::ofInt(DType::I32, c.steps));
      args->setScalar("sh", ScalarValue::ofInt(DType::I32, c.sh));
    }
    Specialization sp = classifyArgs(k->function(), a, [](const std::string &, const HostArray &h) {
      return 0x10000 + h.origin;
    });
    EXPECT_EQ(sp.key(), c.key);
    SpecializedKernel sk = specializeKernel(k->module(), k->function(), sp);
    const ir::Function *fn = sk.function;
    CompiledKernel copy(std::move(sk.module), fn, std::make_shared<SourceManager>(), {});
    RunResult r1 = interp->launch(*k, {1, 1, 1}, a, {});
    RunResult r2 = interp->launch(copy, {1, 1, 1}, b, {});
    ASSERT_EQ(r1.status, RunResult::Status::Ok) << r1.error;
    ASSERT_EQ(r2.status, RunResult::Status::Ok) << r2.error << (r2.trap ? r2.trap->render() : "");
    EXPECT_EQ(want.data, got.data) << c.key;
    EXPECT_NE(want.getDouble(0), 0.0) << c.key; // the kernel did store
  }
}

TEST(Specialize, GenericCopyIsTheKernel) {
  auto k = compileText(kStrided);
  ASSERT_TRUE(k);
  Specialization none;
  none.params.assign(k->function().numParams(), ArgClass::Any);
  SpecializedKernel sk = specializeKernel(k->module(), k->function(), none);
  EXPECT_EQ(ir::toString(*sk.module), ir::toString(k->module()));
}

// The GPU backend's variant key (launchVariant: launchDevice's cache key, and
// the compile caches'), computed without a device.
TEST(Specialize, BackendVariantKeyFollowsTheClasses) {
  auto k = compileText(kStrided);
  ASSERT_TRUE(k);
  gpu::GpuOptions o;
  o.diskCache = false;
  auto on = gpu::createGpuBackend(o);
  EXPECT_TRUE(on->specializes());
  uint64_t values[] = {0x1000, 0x2000, 1024, 1, 0, 0, 0, 0};
  // (u = 0 and b = 0 are multiples of 16: the last two are D)
  EXPECT_EQ(on->launchVariant(*k, values), "spec=DDD1..DD");
  values[2] = 1000; // n = 1000: another kernel
  EXPECT_EQ(on->launchVariant(*k, values), "spec=DD.1..DD");
  values[3] = 2; // stride 2
  EXPECT_EQ(on->launchVariant(*k, values), "spec=DD....DD");
  values[1] = 0x2004; // Y a view one float in
  EXPECT_EQ(on->launchVariant(*k, values), "spec=D.....DD");
  EXPECT_EQ(on->launchVariant(*k, values), classifyValues(k->function(), values).key());
  // --disable-opt specialize: one kernel for every launch with aligned pointers.
  std::string error;
  ASSERT_TRUE(codegen::disableOptimizations(o.codegen, "specialize", error)) << error;
  auto off = gpu::createGpuBackend(o);
  EXPECT_FALSE(off->specializes());
  EXPECT_EQ(off->launchVariant(*k, values), "unaligned");
  values[1] = 0x2000;
  EXPECT_EQ(off->launchVariant(*k, values), "aligned");
  values[2] = 1024;
  EXPECT_EQ(off->launchVariant(*k, values), "aligned");
}

TEST(Specialize, IsAnOptimisationName) {
  const auto &names = codegen::optimizationNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "specialize"), names.end());
  codegen::Options o;
  EXPECT_TRUE(o.specialize);
  std::string error;
  ASSERT_TRUE(codegen::disableOptimizations(o, "all", error));
  EXPECT_FALSE(o.specialize);
}

// --- On a GPU ---------------------------------------------------------------

class SpecializeGpuTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string why;
    if (!gpu::cudaAvailable(&why))
      GTEST_SKIP() << why;
  }
};

const char *kAdd = R"(
__global__ void add(int N, float *a, float *b, float *c) {
  int off[1024] = get_program_id(0) * 1024 + (0 ... 1024);
  bool check[1024] = off < N;
  *?(check)(c + off) = *?(check)(a + off) + *?(check)(b + off);
})";

/// One launch of vector add with N elements (buffers of 2048, c starting at
/// -1) on `backend`; expects c[i] = a[i] + b[i] for i < N and -1 after.
void expectAdd(Backend &backend, const CompiledKernel &k, int64_t n, uint64_t cOrigin = 0) {
  HostArray a = HostArray::zeros(DType::F32, {2048}), b = a, c = a;
  for (int64_t i = 0; i < 2048; ++i) {
    a.setDouble(i, double(i));
    b.setDouble(i, double(3 * i % 17));
    c.setDouble(i, -1);
  }
  c.origin = cOrigin;
  LaunchArgs args;
  args.setScalar("N", ScalarValue::ofInt(DType::I32, n));
  args.setBuffer("a", &a);
  args.setBuffer("b", &b);
  args.setBuffer("c", &c);
  int64_t first = static_cast<int64_t>(cOrigin / 4);
  RunResult r = backend.launch(k, {(n + 1023) / 1024, 1, 1}, args, {});
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
  for (int64_t i = 0; i < 2048; ++i) {
    double want =
        i >= first && i - first < n ? double(i - first) + double(3 * (i - first) % 17) : -1.0;
    ASSERT_EQ(c.getDouble(i), want) << "N = " << n << ", element " << i;
  }
}

TEST_F(SpecializeGpuTest, OneKernelObjectAcrossClasses) {
  auto k = compileText(kAdd);
  ASSERT_TRUE(k);
  gpu::GpuOptions o;
  o.diskCache = false;
  auto gpu = gpu::createGpuBackend(o);
  // N = 1024 (divisible by 16: no tail checks), then 1001 (the tail needs
  // them; N = 1024's kernel would also store elements 1001..1003, which the
  // check sees), then 1 (equal to 1), then 1024 again, then c a view one
  // float in (an unaligned pointer): each must be right, so none ran another's code.
  for (int64_t n : {1024, 1001, 1, 1024, 2048, 1000, 1002})
    expectAdd(*gpu, *k, n);
  expectAdd(*gpu, *k, 1001, 4);
  expectAdd(*gpu, *k, 1024, 4);
  expectAdd(*gpu, *k, 1024);
}

TEST_F(SpecializeGpuTest, PreparedWithoutArgumentsServesEveryClass) {
  auto k = compileText(kAdd);
  ASSERT_TRUE(k);
  gpu::GpuOptions o;
  o.diskCache = false;
  auto gpu = gpu::createGpuBackend(o);
  std::string error;
  ASSERT_TRUE(gpu->prepare(*k, error, nullptr)) << error; // the generic kernel
  expectAdd(*gpu, *k, 1001);
  expectAdd(*gpu, *k, 1024);
  expectAdd(*gpu, *k, 1001, 4);
}

TEST_F(SpecializeGpuTest, SwitchedOffStillRight) {
  auto k = compileText(kAdd);
  ASSERT_TRUE(k);
  gpu::GpuOptions o;
  o.diskCache = false;
  o.codegen.specialize = false;
  auto gpu = gpu::createGpuBackend(o);
  for (int64_t n : {1024, 1001, 1})
    expectAdd(*gpu, *k, n);
}

TEST_F(SpecializeGpuTest, DiskCacheKeysOnTheClass) {
  // Two backends sharing one disk cache: the second finds N=1024's kernel on
  // disk, and must not take it for N=1001.
  auto k = compileText(kAdd);
  ASSERT_TRUE(k);
  char tmpl[] = "/tmp/tc-spec-cache-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  gpu::GpuOptions o;
  o.cacheDir = tmpl;
  expectAdd(*gpu::createGpuBackend(o), *k, 1024);
  auto second = gpu::createGpuBackend(o);
  expectAdd(*second, *k, 1001); // N = 1024's kernel would store 1001..1003 too
  expectAdd(*second, *k, 1024);
  std::filesystem::remove_all(tmpl);
}

TEST_F(SpecializeGpuTest, MultipleofPromiseStillTraps) {
  auto k = compileText(R"(
__global__ void add(int N __multipleof(16), float *a, float *b, float *c) {
  int off[1024] = get_program_id(0) * 1024 + (0 ... 1024);
  bool check[1024] = off < N;
  *?(check)(c + off) = *?(check)(a + off) + *?(check)(b + off);
})");
  ASSERT_TRUE(k);
  gpu::GpuOptions o;
  o.diskCache = false;
  auto gpu = gpu::createGpuBackend(o);
  expectAdd(*gpu, *k, 1024);
  HostArray a = HostArray::zeros(DType::F32, {1024}), b = a, c = a;
  LaunchArgs args;
  args.setScalar("N", ScalarValue::ofInt(DType::I32, 1000));
  args.setBuffer("a", &a);
  args.setBuffer("b", &b);
  args.setBuffer("c", &c);
  RunResult r = gpu->launch(*k, {1, 1, 1}, args, {});
  ASSERT_EQ(r.status, RunResult::Status::Trapped) << r.error;
  ASSERT_TRUE(r.trap);
  EXPECT_EQ(r.trap->kind, TrapKind::Misaligned) << r.trap->render();
}

} // namespace
