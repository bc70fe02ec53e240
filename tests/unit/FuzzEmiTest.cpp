// EMI variants (fuzz/Emi.h): every variant of a generated kernel compiles and
// computes exactly the plain kernel's outputs on the interpreter (before and
// after the pass pipeline), variants are deterministic in (kernel, seed), all
// kinds of dead and live code are drawn, the sampling follows the rate, and a
// variant whose dead code is made to run (the test hook) is an EMI finding.
#include "fuzz/Emi.h"
#include "fuzz/GpuOracle.h"
#include "fuzz/Oracle.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <set>

using namespace tc;
using namespace tc::fuzz;

namespace {

constexpr int kKernels = 120;

FuzzKernel kernelAt(int i) {
  return generateKernel(GenPolicy{}, 5000 + static_cast<uint64_t>(i) * 104729, 100);
}

// Sets an environment variable for the scope.
struct ScopedEnv {
  ScopedEnv(const char *name, const char *value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  const char *name_;
};

TEST(FuzzEmi, VariantsAreWellFormedAndEquivalent) {
  std::map<std::string, int> kinds;
  int variants = 0;
  for (int i = 0; i < kKernels; ++i) {
    FuzzKernel k = kernelAt(i);
    std::map<std::string, HostArray> plain;
    std::string error;
    if (!interpReference(k, 20, plain, error))
      continue; // a discard
    std::optional<FuzzKernel> v = emiVariant(k, 7);
    if (!v)
      continue;
    ++variants;
    ASSERT_NE(v->source.find("(int32 *EMI, "), std::string::npos) << v->source;
    ASSERT_EQ(v->buffers.front().name, "EMI");
    EXPECT_EQ(v->buffers.front().data, (std::vector<double>{0, 0, 1, 0}));
    ASSERT_EQ(v->buffers.size(), k.buffers.size() + 1);
    for (const std::string &f : v->features)
      if (f.rfind("emi", 0) == 0)
        ++kinds[f];
    OracleResult out;
    EXPECT_TRUE(checkEmi(k, plain, 20, out))
        << "kernel " << i << ": " << out.property << ": " << out.message;
  }
  EXPECT_GE(variants, kKernels * 9 / 10);
  for (const char *kind : {"emi", "emi.dead_if", "emi.dead_return", "emi.zero_trip_loop",
                           "emi.dead_barrier", "emi.dead_store", "emi.live", "emi.live_barrier"})
    EXPECT_GT(kinds[kind], 0) << kind << " never drawn";
}

TEST(FuzzEmi, DeterministicInKernelAndSeed) {
  int differ = 0;
  for (int i = 0; i < 40; ++i) {
    FuzzKernel k = kernelAt(i);
    std::optional<FuzzKernel> a = emiVariant(k, 3), b = emiVariant(k, 3), c = emiVariant(k, 4);
    ASSERT_EQ(a.has_value(), b.has_value());
    if (!a)
      continue;
    EXPECT_EQ(a->source, b->source);
    EXPECT_EQ(a->features, b->features);
    differ += c && c->source != a->source;
  }
  EXPECT_GT(differ, 20); // another seed gives other dead code
}

TEST(FuzzEmi, SelectionFollowsTheRate) {
  FuzzKernel k;
  int chosen = 0;
  for (int i = 0; i < 4000; ++i) {
    k.source = "kernel " + std::to_string(i);
    EXPECT_EQ(emiSelected(k, 0.25), emiSelected(k, 0.25));
    chosen += emiSelected(k, 0.25);
    EXPECT_FALSE(emiSelected(k, 0));
    EXPECT_TRUE(emiSelected(k, 1));
  }
  EXPECT_GT(chosen, 850);
  EXPECT_LT(chosen, 1150);
}

TEST(FuzzEmi, DeadCodeThatRunsIsAFinding) {
  // The hook fills EMI with {1, 1, 0, 0}: the dead code runs, the live code does not.
  ScopedEnv hook("TC_FUZZ_TEST_EMI_TAKEN", "1");
  OracleOptions opts;
  opts.emiRate = 1;
  int found = 0;
  for (int i = 0; i < 30; ++i) {
    OracleResult r = checkKernel(kernelAt(i), opts);
    EXPECT_NE(r.status, OracleResult::Status::GeneratorBug) << r.property << ": " << r.message;
    if (r.status == OracleResult::Status::Fail) {
      EXPECT_EQ(r.property, "emi-mismatch") << r.message;
      EXPECT_NE(r.message.find("the EMI variant"), std::string::npos) << r.message;
      ++found;
    }
  }
  EXPECT_GE(found, 15);
}

TEST(FuzzEmi, RateZeroChecksNoVariant) {
  ScopedEnv hook("TC_FUZZ_TEST_EMI_TAKEN", "1");
  OracleOptions opts;
  opts.emiRate = 0;
  for (int i = 0; i < 10; ++i)
    EXPECT_NE(checkKernel(kernelAt(i), opts).property, "emi-mismatch");
}

} // namespace
