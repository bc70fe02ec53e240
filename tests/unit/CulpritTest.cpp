//===- CulpritTest.cpp - The culprit search of fuzz/Culprit.h, without GPU ===//
//
// findCulprit takes a predicate "the failure shows with these code generation
// options"; on the GPU it runs the kernel, here a planted "failure" is a
// property of the PTX or the optimised LLVM IR that a known optimisation
// creates, so the search must name that optimisation:
//   - 16-byte loads (`ld.global.v4`) come from the backend's `vectorize`;
//   - `llvm.smin` from a select of a compare comes from one LLVM pass: the
//     bisection must find the limit at which it first appears, and the pass
//     gate (codegen::Options::optBisectLimit) must run exactly that many.
//
//===----------------------------------------------------------------------===//
#include "fuzz/Culprit.h"

#include "codegen/Codegen.h"
#include "runtime/Launch.h"

#include <gtest/gtest.h>

using namespace tc;

namespace {

const char *kSource = R"(
__global__ void k(float *X __aligned(16), float *Y __aligned(16), int32 *A, int32 *B, int32 *Z) {
  int r[TS] = 0 ... TS;
  *(Y + r) = *(X + r) + 1.0;
  int32 a[TS] = *(A + r);
  int32 b[TS] = *(B + r);
  *(Z + r) = select(a < b, a, b);
}
)";

fuzz::FuzzKernel kernel() {
  fuzz::FuzzKernel k;
  k.source = kSource;
  k.kernelName = "k";
  k.defines = {{"TS", "512"}};
  return k;
}

codegen::Compiled compiled(const fuzz::FuzzKernel &k, codegen::Options o) {
  CompileRequest req;
  req.sourceName = "k.tc";
  req.sourceText = k.source;
  req.defines = k.defines;
  CompileOutcome c = compileKernel(req);
  EXPECT_TRUE(c.ok()) << c.diagnostics;
  o.wantLLVM = true;
  codegen::Result r = codegen::compile(c.kernel->module(), c.kernel->function(), o);
  EXPECT_TRUE(r.ok()) << r.error;
  return *r.compiled;
}

codegen::Options base() {
  codegen::Options o;
  o.alignedPointers = true;
  return o;
}

TEST(Culprit, NamesTheBackendOptimisation) {
  fuzz::FuzzKernel k = kernel();
  auto fails = [&](const codegen::Options &o) {
    return compiled(k, o).ptx.find("ld.global.v4") != std::string::npos;
  };
  fuzz::CulpritOptions copts;
  copts.checkPtxas = false;
  fuzz::Culprit c = fuzz::findCulprit(k, base(), fails, copts);
  ASSERT_TRUE(c.reproduced);
  EXPECT_EQ(c.disableOpt, std::vector<std::string>{"vectorize"});
  EXPECT_NE(c.summary().find("--disable-opt vectorize"), std::string::npos) << c.summary();
}

TEST(Culprit, BisectsLlvmPasses) {
  fuzz::FuzzKernel k = kernel();
  auto fails = [&](const codegen::Options &o) {
    return compiled(k, o).llvmIR.find("@llvm.smin") != std::string::npos;
  };
  fuzz::CulpritOptions copts;
  copts.checkPtxas = false;
  fuzz::Culprit c = fuzz::findCulprit(k, base(), fails, copts);
  ASSERT_TRUE(c.reproduced);
  EXPECT_TRUE(c.disableOpt.empty());
  ASSERT_GT(c.passCount, 10);
  ASSERT_GT(c.passIndex, 0) << c.summary();
  EXPECT_FALSE(c.passName.empty());
  // The limit found is the smallest with the property: one less lacks it.
  codegen::Options o = base();
  o.optBisectLimit = c.passIndex;
  EXPECT_TRUE(fails(o));
  o.optBisectLimit = c.passIndex - 1;
  EXPECT_FALSE(fails(o));
  // The gate offers the same passes in the same order each time, and a
  // limit of 0 skips every optional one.
  std::string error;
  EXPECT_EQ(fuzz::gatedPasses(k, base(), error), fuzz::gatedPasses(k, base(), error));
  o.optBisectLimit = 0;
  EXPECT_FALSE(fails(o));
  EXPECT_NE(c.summary().find(c.passName), std::string::npos) << c.summary();
}

TEST(Culprit, NamesTheDriverJitWhenPtxasMadeTheModules) {
  // A failure only ptxas's modules show (docs/upstream/ptxas-wgmma-desc-hi.md):
  // with ptxasModules the search runs the kernel through the driver's JIT too.
  fuzz::FuzzKernel k = kernel();
  auto fails = [](const codegen::Options &o) { return !o.driverJit; };
  fuzz::CulpritOptions copts;
  copts.bisectLlvm = false;
  copts.ptxasModules = true;
  fuzz::Culprit c = fuzz::findCulprit(k, base(), fails, copts);
  ASSERT_TRUE(c.reproduced);
  EXPECT_TRUE(c.driverJitChecked);
  EXPECT_TRUE(c.driverJitClean);
  EXPECT_FALSE(c.ptxasO0Clean);
  EXPECT_NE(c.summary().find("the driver's JIT instead of ptxas's module"), std::string::npos)
      << c.summary();
  // Where the driver's JIT made the modules already, there is nothing to switch.
  copts.ptxasModules = false;
  fuzz::Culprit same = fuzz::findCulprit(k, base(), fails, copts);
  EXPECT_FALSE(same.driverJitChecked);
  EXPECT_EQ(same.summary().find("driver's JIT instead"), std::string::npos) << same.summary();
  // The option is part of the compile cache's key.
  codegen::Options o = base();
  o.driverJit = true;
  EXPECT_NE(codegen::describeOptions(o), codegen::describeOptions(base()));
}

TEST(Culprit, SaysWhenNothingHelps) {
  fuzz::FuzzKernel k = kernel();
  fuzz::CulpritOptions copts;
  copts.checkPtxas = false;
  fuzz::Culprit c = fuzz::findCulprit(
      k, base(), [](const codegen::Options &) { return true; }, copts);
  EXPECT_TRUE(c.reproduced);
  EXPECT_NE(c.summary().find("no optimisation makes it go away"), std::string::npos) << c.summary();
  fuzz::Culprit gone = fuzz::findCulprit(
      k, base(), [](const codegen::Options &) { return false; }, copts);
  EXPECT_FALSE(gone.reproduced);
}

} // namespace
