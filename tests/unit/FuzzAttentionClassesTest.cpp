// The fuzzer's FlashAttention-like kernels and class launches (issue 29,
// item 7; docs/fuzz.md "Attention kernels", "Argument classes"): both appear
// at the default weights; attention kernels are defined and compute the
// clamped online softmax that a plain double-precision loop here computes;
// a class launch reshapes the kernel's buffers, grid and offsets; property
// (g) passes on generated kernels and sees a wrong class.
#include "codegen/Cuda.h"
#include "fuzz/Case.h"
#include "fuzz/Generator.h"
#include "fuzz/GpuOracle.h"
#include "fuzz/Oracle.h"
#include "gpu/GpuBackend.h"
#include "interp/InterpreterBackend.h"
#include "runtime/Specialize.h"
#include "support/SourceManager.h"
#include "FakePtxas.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace tc;
using namespace tc::fuzz;
using tc::fuzz::fake::FakePtxas;

namespace {

uint64_t seedOf(int i) {
  return 4000 + static_cast<uint64_t>(i) * 7919;
}

double scalarOf(const FuzzKernel &k, const std::string &name) {
  for (const ScalarDesc &s : k.scalars)
    if (s.name == name)
      return s.value;
  ADD_FAILURE() << "no scalar " << name;
  return 0;
}

const BufferDesc &bufferOf(const FuzzKernel &k, const std::string &name) {
  for (const BufferDesc &b : k.buffers)
    if (b.name == name)
      return b;
  throw std::runtime_error("no buffer " + name);
}

int64_t defineOf(const FuzzKernel &k, const std::string &name) {
  for (const auto &[n, v] : k.defines)
    if (n == name)
      return std::stoll(v);
  ADD_FAILURE() << "no define " << name;
  return 1;
}

bool has(const FuzzKernel &k, const std::string &feature) {
  return std::count(k.features.begin(), k.features.end(), feature) > 0;
}

} // namespace

TEST(FuzzAttention, AppearAtTheDefaultWeights) {
  std::map<std::string, int> counts;
  const int n = 1000;
  for (int i = 0; i < n; ++i)
    for (const std::string &f : generateKernel({}, seedOf(i)).features)
      ++counts[f];
  // 3% attention kernels and 10% with class launches by default.
  EXPECT_GE(counts["attention"], 10);
  EXPECT_LE(counts["attention"], 60);
  EXPECT_GE(counts["arg_classes"], 60);
  EXPECT_LE(counts["arg_classes"], 150);
  for (const char *f : {"arg_classes.one", "arg_classes.div16", "arg_classes.div8",
                        "arg_classes.other", "arg_classes.unaligned"})
    EXPECT_GT(counts[f], 0) << f;
}

// Each attention kernel's Y and L are what the algorithm gives, computed here
// in double from the inputs: per row i and head h, over the keys j < N by
// blocks of BN, m' = max(m, max_j s_ij), p_ij = 2^max(s_ij - m', -4),
// alpha = 2^max(m - m', -2), l = l alpha + sum p, acc = acc alpha + p v
// (p rounded to the input type), Y = acc / l, L = m' (+ log2 l); with
// small-integer inputs every one of these values is exact in float. A kernel
// with a matmul loop nested in its trip (attention.nested_matmul) adds to Y,
// in float, w = trips x (X @ W)[i mod BM, :], exact integers. A kernel whose
// keys are walked in two loops (attention.causal_loops) masks key j of row i
// where j > i in the blocks from ns = min(BM (i / BM) rounded down to BN, N)
// on: such a key is left out of the max, and its p is 0.
TEST(FuzzAttention, ComputeTheClampedOnlineSoftmax) {
  GenPolicy p;
  p.aim = "attention";
  p.aimSmallInts = 1;
  p.argClasses = 0;
  int checked = 0, nested = 0, causal = 0;
  for (int i = 0; i < 24; ++i) {
    FuzzKernel k = generateKernel(p, seedOf(i));
    ASSERT_TRUE(has(k, "attention") && has(k, "aim.attention")) << describeKernel(k);
    OracleResult r = checkKernel(k);
    ASSERT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message << "\n"
                                                    << describeKernel(k);
    const BufferDesc &q = bufferOf(k, "Q"), &kb = bufferOf(k, "K"), &v = bufferOf(k, "V");
    const BufferDesc &y = bufferOf(k, "Y");
    auto m = static_cast<int64_t>(scalarOf(k, "M")), n = static_cast<int64_t>(scalarOf(k, "N"));
    auto ld = static_cast<int64_t>(scalarOf(k, "ld"));
    EXPECT_EQ(scalarOf(k, "H"), q.shape[0]);
    double scale = scalarOf(k, "scale");
    int64_t bn = defineOf(k, "BN"), hd = defineOf(k, "HD"), heads = q.shape[0];
    bool lse = has(k, "attention.lse");
    HostArray round = HostArray::zeros(q.dtype, {1});
    auto toInput = [&](double x) {
      round.setDouble(0, x);
      return round.getDouble(0);
    };
    HostArray out = HostArray::zeros(y.dtype, {1});
    bool twoLoops = has(k, "attention.causal_loops");
    int64_t bm = defineOf(k, "BM");
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t row = 0; row < m; ++row) {
        int64_t ns = std::min(row / bm * bm / bn * bn, n);
        auto kept = [&](int64_t j, int64_t n0) { return !twoLoops || n0 < ns || j <= row; };
        double mi = -INFINITY, li = 0;
        std::vector<double> acc(static_cast<size_t>(hd), 0);
        for (int64_t n0 = 0; n0 < n; n0 += bn) {
          int64_t end = std::min(n, n0 + bn);
          std::vector<double> s;
          double mij = mi;
          for (int64_t j = n0; j < end; ++j) {
            if (!kept(j, n0)) {
              s.push_back(-INFINITY);
              continue;
            }
            double dot = 0;
            for (int64_t d = 0; d < hd; ++d)
              dot += q.data[static_cast<size_t>((h * m + row) * ld + d)] *
                     kb.data[static_cast<size_t>((h * n + j) * ld + d)];
            s.push_back(dot * scale);
            mij = std::max(mij, dot * scale);
          }
          double alpha = std::exp2(std::max(mi - mij, -2.0)), rowSum = 0;
          for (double &a : acc)
            a *= alpha;
          for (int64_t j = n0; j < end; ++j) {
            if (!kept(j, n0))
              continue;
            double pj = std::exp2(std::max(s[static_cast<size_t>(j - n0)] - mij, -4.0));
            rowSum += pj;
            for (int64_t d = 0; d < hd; ++d)
              acc[static_cast<size_t>(d)] +=
                  toInput(pj) * v.data[static_cast<size_t>((h * n + j) * ld + d)];
          }
          li = li * alpha + rowSum;
          mi = mij;
        }
        std::vector<double> w(static_cast<size_t>(hd), 0);
        if (has(k, "attention.nested_matmul")) {
          const BufferDesc &x = bufferOf(k, "X"), &wb = bufferOf(k, "W");
          auto ki = static_cast<int64_t>(scalarOf(k, "KI"));
          int64_t xrow = row % defineOf(k, "BM"), trips = (n + bn - 1) / bn;
          for (int64_t d = 0; d < hd; ++d)
            for (int64_t c = 0; c < ki; ++c)
              w[static_cast<size_t>(d)] += static_cast<double>(trips) *
                                           x.data[static_cast<size_t>(xrow * ki + c)] *
                                           wb.data[static_cast<size_t>(c * hd + d)];
        }
        for (int64_t d = 0; d < hd; ++d) {
          float y = static_cast<float>(acc[static_cast<size_t>(d)] / li);
          out.setDouble(0, static_cast<float>(y + w[static_cast<size_t>(d)]));
          EXPECT_EQ(r.reference.at("Y").getDouble((h * m + row) * ld + d), out.getDouble(0))
              << "Y[" << h << ", " << row << ", " << d << "]\n"
              << describeKernel(k);
        }
        double want = lse ? static_cast<float>(mi + std::log2(static_cast<float>(li))) : mi;
        EXPECT_NEAR(r.reference.at("L").getDouble(h * m + row), want, lse ? 1e-5 : 0)
            << "L[" << h << ", " << row << "]";
      }
    ++checked;
    nested += has(k, "attention.nested_matmul");
    causal += twoLoops;
  }
  EXPECT_EQ(checked, 24);
  EXPECT_GT(nested, 0);
  EXPECT_GT(causal, 0);
}

// A class launch sets its integers, makes the buffers sized by them again
// (the rest keep their data), follows with the grid and places every buffer
// at its offset (makeBuffers: a prefix of 5s, the origin after it).
TEST(FuzzClasses, ClassLaunchKernelReshapes) {
  FuzzKernel k;
  k.kernelName = "fuzz";
  k.defines = {{"TS", "8"}};
  k.source = "__global__ void fuzz(int32 *X0, int32 *Y, int32 N, int32 K) {\n"
             "  int rm[TS] = get_program_id(0) * TS + 0 ... TS;\n"
             "  bool mask[TS] = rm < N;\n"
             "  int32 x0[TS] = mask ? *(X0 + rm) : 0;\n"
             "  *?(mask) (Y + rm) = x0 * K;\n}\n";
  k.buffers = {{"X0", DType::I32, {3}, {1, 2, 3}, false, {"N"}},
               {"Y", DType::I32, {3}, {3, 3, 3}, true, {"N"}}};
  k.scalars = {{"N", DType::I32, 3}, {"K", DType::I32, 2}};
  k.gridAxes = {{"N", "TS"}};
  k.smallInts = true;
  k.classLaunches = {{{{"N", 24}, {"K", 1}}, 1}, {{{"K", 16}}, 0}};
  FuzzKernel c = classLaunchKernel(k, 0);
  EXPECT_TRUE(c.classLaunches.empty());
  EXPECT_EQ(scalarOf(c, "N"), 24);
  EXPECT_EQ(scalarOf(c, "K"), 1);
  EXPECT_EQ(c.grid[0], 3);
  for (const BufferDesc &b : c.buffers) {
    EXPECT_EQ(b.shape, std::vector<int64_t>{24});
    EXPECT_EQ(b.offset, 1);
    EXPECT_EQ(b.data.size(), 24u);
  }
  EXPECT_EQ(bufferOf(c, "Y").data, std::vector<double>(24, 3));
  for (double x : bufferOf(c, "X0").data)
    EXPECT_TRUE(x >= -4 && x <= 4 && x == std::floor(x)) << x;
  std::map<std::string, HostArray> arrays = makeBuffers(c);
  EXPECT_EQ(arrays.at("X0").numElements(), 25);
  EXPECT_EQ(arrays.at("X0").origin, 4u);
  EXPECT_EQ(arrays.at("Y").getDouble(0), 5);
  EXPECT_EQ(describeClassLaunch(k.classLaunches[0]), "N=24 K=1 offset=1");
  FuzzKernel d = classLaunchKernel(k, 1); // only K: the buffers keep their data
  EXPECT_EQ(bufferOf(d, "X0").data, (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(d.grid[0], 1);
  // Property (g) holds for the kernel: both launches, specialised, agree.
  OracleResult r = checkKernel(k);
  EXPECT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message;
}

// What property (g) compares: a copy of the kernel compiled for the class
// "N divisible by 16" run with N = 24 (what a classifier that looks at too
// few bits does) is refused by the interpreter, which checks the promise;
// the right class runs and agrees.
TEST(FuzzClasses, AWrongClassIsSeen) {
  FuzzKernel k;
  k.kernelName = "fuzz";
  k.defines = {{"TM", "8"}, {"TN", "8"}};
  k.source = "__global__ void fuzz(float *X0, float *Y, int32 M, int32 N) {\n"
             "  int rm[TM] = get_program_id(0) * TM + 0 ... TM;\n"
             "  int rn[TN] = get_program_id(1) * TN + 0 ... TN;\n"
             "  bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);\n"
             "  float *p[TM, TN] = X0 + rm[:, newaxis] * N + rn[newaxis, :];\n"
             "  *?(mask) (Y + rm[:, newaxis] * N + rn[newaxis, :]) = (mask ? *p : 0) * 2;\n}\n";
  k.buffers = {{"X0", DType::F32, {2, 24}, std::vector<double>(48, 1.5), false, {"M", "N"}},
               {"Y", DType::F32, {2, 24}, std::vector<double>(48, 3), true, {"M", "N"}}};
  k.scalars = {{"M", DType::I32, 2}, {"N", DType::I32, 24}};
  k.gridAxes = {{"M", "TM"}, {"N", "TN"}};
  k.grid = {1, 3, 1};
  k.classLaunches = {{{{"M", 1}}, 2}};
  OracleResult ok = checkKernel(k);
  ASSERT_EQ(ok.status, OracleResult::Status::Pass) << ok.property << ": " << ok.message;

  CompileOutcome c = compileFuzzKernel(k);
  ASSERT_TRUE(c.ok()) << c.diagnostics;
  std::map<std::string, HostArray> want = makeBuffers(k), got = makeBuffers(k);
  Specialization right = classArgs(*c.kernel, k, want);
  EXPECT_EQ(right.key(), "spec=DD.."); // N = 24 is neither 1 nor a multiple of 16
  Specialization wrong = right;
  wrong.params[3] = ArgClass::Div16;
  auto run = [&](const Specialization &s, std::map<std::string, HostArray> &buffers) {
    SpecializedKernel sk = specializeKernel(c.kernel->module(), c.kernel->function(), s);
    const ir::Function *fn = sk.function;
    CompiledKernel copy(std::move(sk.module), fn, std::make_shared<SourceManager>(), k.defines);
    LaunchArgs args;
    for (auto &[name, a] : buffers)
      args.setBuffer(name, &a);
    for (const ScalarDesc &s2 : k.scalars)
      args.setScalar(s2.name, ScalarValue::ofInt(DType::I32, static_cast<int64_t>(s2.value)));
    return createInterpreterBackend()->launch(copy, k.grid, args, {});
  };
  EXPECT_EQ(run(right, want).status, RunResult::Status::Ok);
  RunResult bad = run(wrong, got);
  EXPECT_EQ(bad.status, RunResult::Status::Trapped);
  ASSERT_TRUE(bad.trap);
  EXPECT_NE(bad.trap->render().find("multiple"), std::string::npos) << bad.trap->render();
}

// A finding in a class launch becomes that launch's conformance case.
TEST(FuzzClasses, AFindingInAClassLaunchIsItsCase) {
  FuzzKernel k;
  k.kernelName = "fuzz";
  k.defines = {{"TS", "4"}};
  k.source = "__global__ void fuzz(int32 *X0, int32 *Y, int32 N) {\n"
             "  int rm[TS] = get_program_id(0) * TS + 0 ... TS;\n  bool mask[TS] = rm < N;\n"
             "  *?(mask) (Y + rm) = (mask ? *(X0 + rm) : 0) + 1;\n}\n";
  k.buffers = {{"X0", DType::I32, {3}, {1, 0, 2}, false, {"N"}},
               {"Y", DType::I32, {3}, {3, 3, 3}, true, {"N"}}};
  k.scalars = {{"N", DType::I32, 3}};
  k.gridAxes = {{"N", "TS"}};
  k.classLaunches = {{{{"N", 5}}, 1}};
  FuzzKernel c = classLaunchKernel(k, 0);
  OracleResult r = checkKernel(c);
  ASSERT_EQ(r.status, OracleResult::Status::Pass);
  r.status = OracleResult::Status::Fail;
  r.property = "gpu-mismatch";
  r.classLaunch = 0;
  CaseInfo info;
  info.name = "class_case";
  std::string text = conformanceCase(k, r, info);
  EXPECT_NE(text.find("\"value\": 5"), std::string::npos) << text;
  EXPECT_NE(text.find("class launch 0 (N=5 offset=1)"), std::string::npos) << text;
  EXPECT_NE(text.find("\"shape\": [\n            5\n"), std::string::npos) << text;
}

// Class launches are launches the kernels define (a trapping one is skipped
// by property (g), so traps would only waste them): with all kernels given
// class launches, fewer than 5% of the launches trap on the interpreter,
// and every generated kernel passes property (g).
TEST(FuzzClasses, ClassLaunchesAreDefined) {
  GenPolicy p;
  p.argClasses = 1;
  int launches = 0, traps = 0;
  for (int i = 0; i < 150; ++i) {
    FuzzKernel k = generateKernel(p, seedOf(i) + 3);
    ASSERT_FALSE(k.classLaunches.empty() && has(k, "arg_classes"));
    CompileOutcome c = compileFuzzKernel(k);
    ASSERT_TRUE(c.ok()) << c.diagnostics;
    for (size_t l = 0; l < k.classLaunches.size(); ++l) {
      FuzzKernel v = classLaunchKernel(k, l);
      std::map<std::string, HostArray> buffers = makeBuffers(v);
      LaunchArgs args;
      for (auto &[name, a] : buffers)
        args.setBuffer(name, &a);
      for (const ScalarDesc &s : v.scalars)
        args.setScalar(s.name, isFloat(s.dtype)
                                   ? ScalarValue::ofFloat(s.dtype, s.value)
                                   : ScalarValue::ofInt(s.dtype, static_cast<int64_t>(s.value)));
      RunOptions o;
      o.raceCheck = true;
      RunResult r = createInterpreterBackend()->launch(*c.kernel, v.grid, args, o);
      ++launches;
      traps += r.status != RunResult::Status::Ok;
      if (r.status != RunResult::Status::Ok)
        std::cerr << "trap: " << (r.trap ? r.trap->render() : r.error) << "\n"
                  << describeClassLaunch(k.classLaunches[l]) << "\n"
                  << describeKernel(k);
    }
    OracleResult r = checkKernel(k);
    EXPECT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message;
  }
  EXPECT_GT(launches, 150);
  EXPECT_LT(traps * 20, launches);
}

namespace {

// A 2-D kernel whose row stride is N, with class launches that put N in each
// class (32: divisible by 16; 24: a multiple of 8 only; 1) and one with
// pointers 1 element into their allocations.
FuzzKernel stridedKernel() {
  FuzzKernel k;
  k.kernelName = "fuzz";
  k.defines = {{"TM", "8"}, {"TN", "16"}};
  k.source = "__global__ void fuzz(half *X0, float *Y, int32 M, int32 N) {\n"
             "  int rm[TM] = get_program_id(0) * TM + 0 ... TM;\n"
             "  int rn[TN] = get_program_id(1) * TN + 0 ... TN;\n"
             "  bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);\n"
             "  half *p[TM, TN] = X0 + rm[:, newaxis] * N + rn[newaxis, :];\n"
             "  *?(mask) (Y + rm[:, newaxis] * N + rn[newaxis, :]) = (mask ? *p : 0) * 2;\n}\n";
  std::vector<double> x(3 * 20);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<double>(static_cast<int>(i % 9) - 4);
  k.buffers = {{"X0", DType::F16, {3, 20}, x, false, {"M", "N"}},
               {"Y", DType::F32, {3, 20}, std::vector<double>(60, 3), true, {"M", "N"}}};
  k.scalars = {{"M", DType::I32, 3}, {"N", DType::I32, 20}};
  k.gridAxes = {{"M", "TM"}, {"N", "TN"}};
  k.grid = {1, 2, 1};
  k.smallInts = true;
  k.classLaunches = {{{{"N", 32}}, 0}, {{{"N", 24}, {"M", 1}}, 0}, {{{"N", 32}}, 1}};
  return k;
}

} // namespace

// --compile-only: each class launch's specialised copy goes through the GPU
// compile pipeline for sm_90 (and ptxas when there is one), in stage "classes".
TEST(FuzzClasses, CompileOnlyCompilesEachClass) {
  GpuOracleOptions o;
  o.compileOnly = true;
  o.warpsVariantRate = 0; // (counted ptxas runs; the variant: FuzzFastPaths)
  o.emiRate = 0;
  GpuOracle oracle(o);
  OracleResult r = oracle.check(stridedKernel());
  if (r.status == OracleResult::Status::Fail && r.message.find("libdevice") != std::string::npos)
    GTEST_SKIP() << r.message;
  EXPECT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message;
  EXPECT_GT(r.stageMs["classes"], 0);
}


// --compile-only: the class launches' copies go through ptxas as ONE module
// (one run with an entry per class) after the kernel's own run.
TEST(FuzzClasses, CompileOnlyCompilesTheClassesInOneModule) {
  FakePtxas fake(0, false);
  GpuOracleOptions o;
  o.compileOnly = true;
  o.warpsVariantRate = 0; // (counted ptxas runs; the variant: FuzzFastPaths)
  o.emiRate = 0;
  GpuOracle oracle(o);
  FuzzKernel k = stridedKernel();
  OracleResult r = oracle.check(k);
  if (r.status == OracleResult::Status::Fail && r.message.find("libdevice") != std::string::npos)
    GTEST_SKIP() << r.message;
  EXPECT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message;
  EXPECT_EQ(fake.runs(), (std::vector<int>{1, static_cast<int>(k.classLaunches.size())}));
}

// Class launches of one class (N = 32 and N = 16: both divisible by 16) share
// one copy in the module, as they share one compiled kernel on the GPU.
TEST(FuzzClasses, OneCopyPerClassInTheModule) {
  FakePtxas fake(0, false);
  GpuOracleOptions o;
  o.compileOnly = true;
  o.warpsVariantRate = 0; // (counted ptxas runs; the variant: FuzzFastPaths)
  o.emiRate = 0;
  GpuOracle oracle(o);
  FuzzKernel k = stridedKernel();
  k.classLaunches = {{{{"N", 32}}, 0}, {{{"N", 16}}, 0}, {{{"N", 24}, {"M", 1}}, 0}};
  OracleResult r = oracle.check(k);
  if (r.status == OracleResult::Status::Fail && r.message.find("libdevice") != std::string::npos)
    GTEST_SKIP() << r.message;
  EXPECT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message;
  EXPECT_EQ(fake.runs(), (std::vector<int>{1, 2}));
}

// A class module that ptxas refuses: each class is compiled alone, and they
// all pass when each alone is accepted.
TEST(FuzzClasses, ARefusedClassModuleIsCompiledClassByClass) {
  FakePtxas fake(0, true);
  GpuOracleOptions o;
  o.compileOnly = true;
  o.warpsVariantRate = 0; // (counted ptxas runs; the variant: FuzzFastPaths)
  o.emiRate = 0;
  GpuOracle oracle(o);
  FuzzKernel k = stridedKernel();
  OracleResult r = oracle.check(k);
  if (r.status == OracleResult::Status::Fail && r.message.find("libdevice") != std::string::npos)
    GTEST_SKIP() << r.message;
  EXPECT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message;
  EXPECT_EQ(fake.runs(), (std::vector<int>{1, 3, 1, 1, 1}));
}

// The failure is named with its class: the class module refused (run 2),
// then class launch 1 alone (run 4; run 3 is class launch 0).
TEST(FuzzClasses, ARefusedClassIsNamedAfterTheModuleFails) {
  FakePtxas fake(4, true);
  GpuOracleOptions o;
  o.compileOnly = true;
  o.warpsVariantRate = 0; // (counted ptxas runs; the variant: FuzzFastPaths)
  o.emiRate = 0;
  GpuOracle oracle(o);
  FuzzKernel k = stridedKernel();
  OracleResult r = oracle.check(k);
  if (r.status == OracleResult::Status::Fail && r.message.find("libdevice") != std::string::npos)
    GTEST_SKIP() << r.message;
  EXPECT_EQ(r.status, OracleResult::Status::Fail);
  EXPECT_EQ(r.property, "gpu-compile");
  EXPECT_EQ(r.classLaunch, 1);
  EXPECT_NE(r.message.find("class launch 1 "), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("fake ptxas: run refused"), std::string::npos) << r.message;
  EXPECT_EQ(fake.runs(), (std::vector<int>{1, 3, 1, 1}));
}

// On the GPU (skipped without one): the class launches run, each compiled for
// its classes, and agree with their references.
TEST(FuzzClassesGpu, ClassLaunchesAgree) {
  std::string why;
  if (!gpu::cudaAvailable(&why))
    GTEST_SKIP() << why;
  GpuOracleOptions o;
  o.emiRate = 0;
  GpuOracle oracle(o);
  OracleResult r = oracle.check(stridedKernel());
  EXPECT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message;
  EXPECT_GT(r.stageMs["classes"], 0);
  EXPECT_FALSE(oracle.poisoned());
}

// On the GPU (skipped without one): a kernel's class launches are compiled
// into ONE module (GpuBackend::prepareClasses): one load for the kernel and
// one for its classes (stridedKernel has 3 class launches of 3 classes; before,
// one load per class), and the verdict is the one each class compiled alone
// gives (--disable-opt none; prepareClasses is the only difference).
TEST(FuzzClassesGpu, ClassesShareOneModule) {
  std::string why;
  if (!gpu::cudaAvailable(&why))
    GTEST_SKIP() << why;
  FuzzKernel k = stridedKernel();
  std::set<std::string> classes;
  {
    // The classes the launches have, computed here as the oracle does.
    CompileOutcome c = compileFuzzKernel(k);
    ASSERT_TRUE(c.ok()) << c.diagnostics;
    for (size_t i = 0; i < k.classLaunches.size(); ++i) {
      FuzzKernel run = classLaunchKernel(k, i);
      std::map<std::string, HostArray> bufs = makeBuffers(run);
      classes.insert(classArgs(*c.kernel, run, bufs).key());
    }
  }
  ASSERT_GT(classes.size(), 1u);
  GpuOracleOptions o;
  o.emiRate = 0;
  GpuOracle oracle(o);
  oracle.deviceDescription(); // the context first: its loads are not counted
  uint64_t seq = cuda::lastLoad().seq;
  OracleResult r = oracle.check(k);
  EXPECT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message;
  EXPECT_EQ(cuda::lastLoad().seq - seq, 2u) << "one load for the kernel, one for its "
                                            << classes.size() << " classes";
  EXPECT_FALSE(oracle.poisoned());
}
