// Batches of the GPU fuzzer (fuzz/GpuOracle.h, codegen::compileBatch): a
// kernel copied into another module prints as the same IR, a batch's PTX
// holds every kernel with the launch interface each has alone and ptxas
// accepts it, and a compile failure planted in one kernel of a batch is
// attributed to that kernel alone. No GPU is needed (--compile-only).
#include "fuzz/Generator.h"
#include "fuzz/GpuOracle.h"
#include "fuzz/Worker.h"

#include "codegen/Codegen.h"
#include "gpu/GpuBackend.h"
#include "ir/Printer.h"

#include "FakePtxas.h"

#include <gtest/gtest.h>

#include <algorithm>

#include <regex>
#include <set>

using namespace tc;
using namespace tc::fuzz;
using tc::fuzz::fake::FakePtxas;

namespace {

// The first `n` kernels of campaign `seed` that compile and run on the interpreter.
std::vector<FuzzKernel> runnableKernels(uint64_t seed, size_t n) {
  std::vector<FuzzKernel> out;
  for (int64_t i = 0; out.size() < n && i < 1000; ++i) {
    FuzzKernel k = generateKernel(GenPolicy{}, kernelSeed(seed, i), 100);
    std::map<std::string, HostArray> ref;
    std::string error;
    if (interpReference(k, 20, ref, error))
      out.push_back(std::move(k));
  }
  return out;
}

} // namespace

TEST(FuzzBatch, CopiedKernelPrintsAsTheSameIR) {
  for (const FuzzKernel &k : runnableKernels(31, 5)) {
    CompileOutcome c = compileFuzzKernel(k);
    ASSERT_TRUE(c.ok()) << c.diagnostics;
    ir::Module copy;
    codegen::copyFunction(copy, c.kernel->module(), c.kernel->function(), c.kernel->name());
    ir::PrintOptions po;
    po.locations = true;
    std::string want = ir::toString(c.kernel->module(), po);
    EXPECT_EQ(ir::toString(copy, po), want) << k.source;
  }
}

TEST(FuzzBatch, OnePtxHoldsEveryKernelAndPtxasAcceptsIt) {
  std::vector<FuzzKernel> ks = runnableKernels(32, 6);
  ASSERT_EQ(ks.size(), 6u);
  std::vector<CompileOutcome> cs;
  std::vector<codegen::BatchKernel> batch;
  for (const FuzzKernel &k : ks) {
    cs.push_back(compileFuzzKernel(k));
    ASSERT_TRUE(cs.back().ok()) << cs.back().diagnostics;
  }
  for (const CompileOutcome &c : cs)
    batch.push_back({&c.kernel->module(), &c.kernel->function()});
  codegen::Options o;
  o.alignedPointers = true;
  codegen::BatchResult r = codegen::compileBatch(batch, o, true);
  if (!r.ok() && r.error.find("libdevice") != std::string::npos)
    GTEST_SKIP() << "built without libdevice: " << r.error;
  ASSERT_TRUE(r.ok()) << r.error;
  const std::string &ptx = r.compiled->ptx;
  std::set<std::string> entries;
  std::regex entry(R"(\.visible \.entry ([A-Za-z_0-9]+)\()");
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), entry), end; it != end; ++it)
    entries.insert((*it)[1]);
  ASSERT_EQ(r.kernels.size(), ks.size());
  EXPECT_EQ(entries.size(), ks.size()) << ptx.substr(0, 2000);
  for (size_t i = 0; i < ks.size(); ++i) {
    std::string name = cs[i].kernel->name() + "_b" + std::to_string(i);
    EXPECT_EQ(r.kernels[i].entry, name);
    EXPECT_TRUE(entries.count(name)) << name;
    // The launch interface is the one the kernel has when compiled alone.
    codegen::Result alone = codegen::compile(cs[i].kernel->module(), cs[i].kernel->function(), o);
    ASSERT_TRUE(alone.ok()) << alone.error;
    EXPECT_EQ(r.kernels[i].numThreads, alone.compiled->numThreads);
    EXPECT_EQ(r.kernels[i].sharedBytes, alone.compiled->sharedBytes) << ks[i].source;
    ASSERT_EQ(r.kernels[i].params.size(), alone.compiled->params.size());
    for (size_t j = 0; j < r.kernels[i].params.size(); ++j) {
      EXPECT_EQ(r.kernels[i].params[j].name, alone.compiled->params[j].name);
      EXPECT_EQ(r.kernels[i].params[j].dtype, alone.compiled->params[j].dtype);
      EXPECT_EQ(r.kernels[i].params[j].isPtr, alone.compiled->params[j].isPtr);
    }
    // The paths of each kernel (from the one lowering of the batch) are the
    // ones its own lowering takes.
    std::vector<std::string> paths;
    std::string error;
    ASSERT_TRUE(codegen::loweringPaths(cs[i].kernel->module(), cs[i].kernel->function(), o, paths,
                                       error))
        << error;
    ASSERT_LT(i, r.compiled->paths.size());
    EXPECT_EQ(r.compiled->paths[i], paths) << ks[i].source;
  }
  // Each kernel lowered once: the module's stages, one "lower" among them.
  EXPECT_EQ(std::count_if(r.compiled->times.begin(), r.compiled->times.end(),
                          [](const codegen::StageTime &t) { return t.stage == "lower"; }),
            1);
  if (codegen::findPtxas().empty()) {
    std::cout << "ptxas check skipped: " << codegen::ptxasMissing() << "\n";
    return;
  }
  std::string log;
  EXPECT_TRUE(codegen::runPtxas(ptx, o.sm, log)) << log;
}

TEST(FuzzBatch, APlantedCompileFailureIsAttributedToItsKernelAlone) {
  std::vector<FuzzKernel> ks = runnableKernels(33, 8);
  ASSERT_EQ(ks.size(), 8u);
  GpuOracleOptions o;
  o.compileOnly = true;
  o.warpsVariantRate = 0; // (counted ptxas runs; the variant: FuzzFastPaths)
  o.emiRate = 0;
  // Each kernel alone, today's path: the verdicts a batch must reproduce.
  std::vector<OracleResult> alone;
  for (const FuzzKernel &k : ks)
    alone.push_back(GpuOracle(o).check(k));
  ks[3].testCompileFailure = true;
  GpuOracle oracle(o);
  std::vector<int> calls(ks.size(), 0);
  std::vector<OracleResult> got(ks.size());
  oracle.checkBatch(ks, [&](size_t i, OracleResult r, double ms) {
    ASSERT_LT(i, ks.size());
    ++calls[i];
    EXPECT_GE(ms, 0);
    got[i] = std::move(r);
  });
  for (size_t i = 0; i < ks.size(); ++i) {
    EXPECT_EQ(calls[i], 1) << i;
    if (i == 3) {
      EXPECT_EQ(got[i].status, OracleResult::Status::Fail);
      EXPECT_EQ(got[i].property, "gpu-compile");
      EXPECT_NE(got[i].message.find("TC_FUZZ_TEST_COMPILE_FAIL_INDEX"), std::string::npos);
    } else {
      EXPECT_EQ(got[i].status, alone[i].status) << i << ": " << got[i].message;
      EXPECT_EQ(got[i].property, alone[i].property) << i;
    }
  }
}

TEST(FuzzBatch, ModuleStagesAreSplitOverTheBatch) {
  std::vector<FuzzKernel> ks = runnableKernels(34, 5);
  ASSERT_EQ(ks.size(), 5u);
  GpuOracleOptions o;
  o.compileOnly = true;
  o.warpsVariantRate = 0; // (counted ptxas runs; the variant: FuzzFastPaths)
  o.emiRate = 0;
  GpuOracle oracle(o);
  std::vector<OracleResult> got(ks.size());
  std::vector<double> ms(ks.size());
  oracle.checkBatch(ks, [&](size_t i, OracleResult r, double m) {
    got[i] = std::move(r);
    ms[i] = m;
  });
  for (size_t i = 0; i < ks.size(); ++i) {
    if (got[i].status != OracleResult::Status::Pass)
      GTEST_SKIP() << "kernel " << i << " does not compile here: " << got[i].message;
    double sum = 0;
    for (const auto &[stage, t] : got[i].stageMs)
      sum += t;
    EXPECT_LE(sum, ms[i] + 0.01) << i; // the stages are parts of the kernel's own time
    EXPECT_GT(got[i].stageMs.at("llvm-opt"), 0);
    EXPECT_GT(got[i].stageMs.at("interp"), 0);
    // One module: its optimisation time is shared evenly.
    EXPECT_DOUBLE_EQ(got[i].stageMs.at("llvm-opt"), got[0].stageMs.at("llvm-opt"));
  }
}

namespace {

// The first `n` kernels of campaign `seed` aimed at `path` (GenPolicy::aim)
// that run on the interpreter, without class launches.
std::vector<FuzzKernel> aimedKernels(uint64_t seed, const std::string &path, size_t n) {
  GenPolicy p;
  p.aim = path;
  std::vector<FuzzKernel> out;
  for (int64_t i = 0; out.size() < n && i < 200; ++i) {
    FuzzKernel k = generateKernel(p, kernelSeed(seed, i), 100);
    k.classLaunches.clear();
    std::map<std::string, HostArray> ref;
    std::string error;
    if (interpReference(k, 20, ref, error))
      out.push_back(std::move(k));
  }
  return out;
}

// Two kernels aimed at mma.sync among three unaimed ones, every verdict
// recorded (ptxas runs as entry counts, verdicts, calls per kernel).
struct AimedBatch {
  std::vector<FuzzKernel> ks;
  std::vector<OracleResult> got;
  std::vector<int> calls;
};

AimedBatch checkAimedBatch(uint64_t seed) {
  AimedBatch b;
  std::vector<FuzzKernel> aimed = aimedKernels(seed, "mma.sync", 2);
  std::vector<FuzzKernel> plain = runnableKernels(seed, 3);
  EXPECT_EQ(aimed.size(), 2u);
  EXPECT_EQ(plain.size(), 3u);
  b.ks = {plain[0], aimed[0], plain[1], aimed[1], plain[2]};
  for (FuzzKernel &k : b.ks)
    k.classLaunches.clear();
  GpuOracleOptions o;
  o.compileOnly = true;
  o.warpsVariantRate = 0; // (counted ptxas runs; the variant: FuzzFastPaths)
  o.emiRate = 0;
  GpuOracle oracle(o);
  b.got.resize(b.ks.size());
  b.calls.assign(b.ks.size(), 0);
  oracle.checkBatch(b.ks, [&](size_t i, OracleResult r, double) {
    ++b.calls[i];
    b.got[i] = std::move(r);
  });
  return b;
}

} // namespace

// --compile-only: the kernels aimed at one fast path share ONE module (one
// ptxas run with their two entries), apart from the unaimed kernels' module
// (three entries), and each verdict is the one the kernel gets alone.
TEST(FuzzBatch, KernelsAimedAtOnePathShareAModuleOfTheirOwn) {
  std::vector<OracleResult> alone;
  {
    AimedBatch probe = checkAimedBatch(37);
    ASSERT_EQ(probe.ks.size(), 5u);
    GpuOracleOptions o;
    o.compileOnly = true;
    o.warpsVariantRate = 0; // (counted ptxas runs; the variant: FuzzFastPaths)
    o.emiRate = 0;
    for (const FuzzKernel &k : probe.ks)
      alone.push_back(GpuOracle(o).check(k));
    for (const OracleResult &r : alone)
      if (r.status == OracleResult::Status::Fail && r.message.find("libdevice") != std::string::npos)
        GTEST_SKIP() << r.message;
  }
  FakePtxas fake(0, false);
  AimedBatch b = checkAimedBatch(37);
  for (size_t i = 0; i < b.ks.size(); ++i) {
    EXPECT_EQ(b.calls[i], 1) << i;
    EXPECT_EQ(b.got[i].status, alone[i].status) << i << ": " << b.got[i].message;
    EXPECT_EQ(b.got[i].property, alone[i].property) << i;
    EXPECT_EQ(b.got[i].paths, alone[i].paths) << i;
  }
  EXPECT_EQ(fake.runs(), (std::vector<int>{2, 3})); // the aimed module first
}

// A module that ptxas refuses is compiled kernel by kernel, the aimed
// kernels' as the others': every kernel still gets its own verdict (here all
// pass, as each alone is accepted), and one refused kernel taints no other.
TEST(FuzzBatch, ARefusedAimedModuleIsCompiledKernelByKernel) {
  {
    FakePtxas fake(0, true);
    AimedBatch b = checkAimedBatch(37);
    for (size_t i = 0; i < b.ks.size(); ++i) {
      if (b.got[i].message.find("libdevice") != std::string::npos)
        GTEST_SKIP() << b.got[i].message;
      EXPECT_EQ(b.calls[i], 1) << i;
      EXPECT_EQ(b.got[i].status, OracleResult::Status::Pass) << i << ": " << b.got[i].message;
    }
    EXPECT_EQ(fake.runs(), (std::vector<int>{2, 1, 1, 3, 1, 1, 1}));
  }
  {
    // Run 3 is the second aimed kernel alone (after the module, the first):
    // it alone fails, with ptxas's message.
    FakePtxas fake(3, true);
    AimedBatch b = checkAimedBatch(37);
    for (size_t i = 0; i < b.ks.size(); ++i) {
      EXPECT_EQ(b.calls[i], 1) << i;
      if (i == 3) {
        EXPECT_EQ(b.got[i].status, OracleResult::Status::Fail);
        EXPECT_EQ(b.got[i].property, "gpu-compile");
        EXPECT_NE(b.got[i].message.find("fake ptxas: run refused"), std::string::npos)
            << b.got[i].message;
      } else {
        EXPECT_EQ(b.got[i].status, OracleResult::Status::Pass) << i << ": " << b.got[i].message;
      }
    }
  }
}

// On a GPU: one module per batch, one cuModuleLoadData, each kernel launched
// from it gives the verdict it gets when compiled and loaded alone, and a
// planted compile failure lands on its kernel alone. Skips without a device.
TEST(FuzzBatchGpu, BatchVerdictsAreTheSingleKernelVerdicts) {
  std::string why;
  if (!gpu::cudaAvailable(&why))
    GTEST_SKIP() << why;
  std::vector<FuzzKernel> ks = runnableKernels(35, 24);
  ASSERT_EQ(ks.size(), 24u);
  GpuOracleOptions o;
  o.emiRate = 0;
  GpuOracle single(o);
  std::vector<OracleResult> alone;
  for (const FuzzKernel &k : ks)
    alone.push_back(single.check(k));
  ASSERT_FALSE(single.poisoned());
  for (bool planted : {false, true}) {
    std::vector<FuzzKernel> batch = ks;
    batch[7].testCompileFailure = planted;
    GpuOracle oracle(o);
    std::vector<int> calls(batch.size(), 0);
    std::vector<OracleResult> got(batch.size());
    oracle.checkBatch(batch, [&](size_t i, OracleResult r, double) {
      ++calls[i];
      got[i] = std::move(r);
    });
    ASSERT_FALSE(oracle.poisoned());
    for (size_t i = 0; i < batch.size(); ++i) {
      EXPECT_EQ(calls[i], 1) << i;
      if (planted && i == 7) {
        EXPECT_EQ(got[i].property, "gpu-compile") << got[i].message;
        continue;
      }
      EXPECT_EQ(got[i].status, alone[i].status) << i << ": " << got[i].message;
      EXPECT_EQ(got[i].property, alone[i].property) << i << ": " << got[i].message;
      if (!planted && got[i].status == OracleResult::Status::Pass) {
        EXPECT_GT(got[i].stageMs.at("jit"), 0) << i; // its share of the module's load
        // The paths come from the batch's compile (not a compile of their
        // own): those of the kernel's own compile for the device (with the
        // ones LLVM's pipeline adds, such as div.shared: not loweringPaths).
        CompileOutcome c = compileFuzzKernel(batch[i]);
        ASSERT_TRUE(c.ok());
        codegen::Options co = o.codegen;
        co.alignedPointers = true;
        codegen::Result own = codegen::compile(c.kernel->module(), c.kernel->function(), co);
        ASSERT_TRUE(own.ok()) << own.error;
        ASSERT_EQ(own.compiled->paths.size(), 1u);
        EXPECT_EQ(got[i].paths, std::optional<std::vector<std::string>>(own.compiled->paths[0]))
            << i;
        EXPECT_EQ(got[i].paths, alone[i].paths) << i;
      }
    }
  }
}

// GPU batches with EMI variants (emiRate 1: every passing kernel's variant is
// in the batch's module, Pending::emiKernel): each kernel gets the verdict it
// gets alone, where its variant is compiled and loaded alone. Skips without a
// device.
TEST(FuzzBatchGpu, EmiVariantsInTheBatchModuleGiveTheSingleKernelVerdicts) {
  std::string why;
  if (!gpu::cudaAvailable(&why))
    GTEST_SKIP() << why;
  std::vector<FuzzKernel> ks = runnableKernels(36, 16);
  ASSERT_EQ(ks.size(), 16u);
  GpuOracleOptions o;
  o.emiRate = 1;
  GpuOracle single(o);
  std::vector<OracleResult> alone;
  for (const FuzzKernel &k : ks)
    alone.push_back(single.check(k));
  ASSERT_FALSE(single.poisoned());
  GpuOracle oracle(o);
  std::vector<int> calls(ks.size(), 0);
  std::vector<OracleResult> got(ks.size());
  oracle.checkBatch(ks, [&](size_t i, OracleResult r, double) {
    ++calls[i];
    got[i] = std::move(r);
  });
  ASSERT_FALSE(oracle.poisoned());
  int passed = 0;
  for (size_t i = 0; i < ks.size(); ++i) {
    EXPECT_EQ(calls[i], 1) << i;
    EXPECT_EQ(got[i].status, alone[i].status) << i << ": " << got[i].message;
    EXPECT_EQ(got[i].property, alone[i].property) << i << ": " << got[i].message;
    passed += got[i].status == OracleResult::Status::Pass;
  }
  EXPECT_GT(passed, 0);
}
