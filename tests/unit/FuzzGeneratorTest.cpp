// The differential fuzzer's generator and CPU oracle (fuzz/): generated
// kernels compile and rarely trap, generation is deterministic in the seed,
// the features cover the language, the oracle classifies compile errors and
// traps, and a finding written as a conformance case loads and passes.
#include "codegen/Codegen.h"
#include "conformance/Case.h"
#include "conformance/Runner.h"
#include "fuzz/Case.h"
#include "fuzz/Generator.h"
#include "fuzz/GpuOracle.h"
#include "fuzz/Oracle.h"
#include "interp/InterpreterBackend.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

using namespace tc;
using namespace tc::fuzz;

namespace {

constexpr int kKernels = 200;

uint64_t seedOf(int i) {
  return 1000 + static_cast<uint64_t>(i) * 7919;
}

bool sameKernel(const FuzzKernel &a, const FuzzKernel &b) {
  if (a.source != b.source || a.defines != b.defines || a.grid != b.grid ||
      a.features != b.features || a.buffers.size() != b.buffers.size() ||
      a.scalars.size() != b.scalars.size() || a.smallInts != b.smallInts)
    return false;
  for (size_t i = 0; i < a.buffers.size(); ++i)
    if (a.buffers[i].data != b.buffers[i].data || a.buffers[i].shape != b.buffers[i].shape ||
        a.buffers[i].dtype != b.buffers[i].dtype)
      return false;
  for (size_t i = 0; i < a.scalars.size(); ++i)
    if (a.scalars[i].value != b.scalars[i].value || a.scalars[i].dtype != b.scalars[i].dtype)
      return false;
  return true;
}

// A hand-written kernel in the generator's format (one input, one output).
FuzzKernel handKernel(const std::string &body) {
  FuzzKernel k;
  k.kernelName = "fuzz";
  k.defines = {{"TS", "4"}};
  k.source = "__global__ void fuzz(int32 *X0, int32 *Y, int32 N) {\n"
             "  int rm[TS] = 0 ... TS;\n  bool mask[TS] = rm < N;\n"
             "  int32 x0[TS] = mask ? *(X0 + rm) : 0;\n" +
             body + "}\n";
  k.buffers = {{"X0", DType::I32, {3}, {1, 0, 2}, false}, {"Y", DType::I32, {3}, {3, 3, 3}, true}};
  k.scalars = {{"N", DType::I32, 3}};
  return k;
}

} // namespace

TEST(FuzzGenerator, KernelsCompileAndRarelyTrap) {
  int discards = 0, stored = 0;
  for (int i = 0; i < kKernels; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    OracleResult r = checkKernel(k);
    // Did the kernel write the output (which starts filled with 3, or 1 for bool)?
    if (r.status == OracleResult::Status::Pass) {
      const HostArray &y = r.reference.at("Y");
      for (int64_t e = 0; e < y.numElements(); ++e)
        if (y.getDouble(e) != k.buffers.back().data[static_cast<size_t>(e)]) {
          ++stored;
          break;
        }
    }
    ASSERT_NE(r.status, OracleResult::Status::GeneratorBug)
        << r.property << ": " << r.message << "\n"
        << describeKernel(k);
    EXPECT_NE(r.status, OracleResult::Status::Fail) << r.property << ": " << r.message << "\n"
                                                    << describeKernel(k);
    discards += r.status == OracleResult::Status::Discard;
  }
  EXPECT_LT(discards, kKernels / 5);
  EXPECT_GT(stored, kKernels / 2) << "most kernels should change their output";
}

TEST(FuzzGenerator, DeterministicInTheSeed) {
  for (int i = 0; i < 20; ++i)
    EXPECT_TRUE(sameKernel(generateKernel({}, seedOf(i)), generateKernel({}, seedOf(i))));
  int different = 0;
  for (int i = 0; i < 20; ++i)
    different += generateKernel({}, seedOf(i)).source != generateKernel({}, seedOf(i + 1)).source;
  EXPECT_GE(different, 15);
}

TEST(FuzzGenerator, FeaturesCoverTheLanguage) {
  std::map<std::string, int> counts;
  for (int i = 0; i < kKernels; ++i)
    for (const std::string &f : generateKernel({}, seedOf(i)).features)
      ++counts[f];
  std::vector<std::string> wanted = {"reduce",
                                     "dot",
                                     "load.masked",
                                     "loop",
                                     "if",
                                     "tile.1d",
                                     "tile.2d",
                                     "tile.size1",
                                     "boundary.tail",
                                     "grid.2d",
                                     "broadcast.newaxis",
                                     "mode.small_ints",
                                     "mode.general",
                                     "op.div.int",
                                     "op.shift",
                                     "cast.float_to_int",
                                     "load.poison",
                                     "store.masked"};
  for (DType t : kAllDTypes)
    wanted.push_back("dtype." + std::string(conformanceName(t)));
  for (const std::string &f : wanted)
    EXPECT_GT(counts[f], 0) << "no generated kernel has feature " << f;
}

TEST(FuzzGenerator, KernelsFollowTheGeneratorsShapeRules) {
  for (int i = 0; i < 50; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    ASSERT_FALSE(k.buffers.empty());
    EXPECT_TRUE(k.buffers.back().isOutput);
    for (const BufferDesc &b : k.buffers) {
      int64_t n = 1;
      for (int64_t d : b.shape)
        n *= d;
      EXPECT_EQ(static_cast<int64_t>(b.data.size()), n);
      if (!k.smallInts || b.isOutput)
        continue;
      for (double v : b.data) {
        EXPECT_TRUE(v >= -4 && v <= 4 && v == std::floor(v)) << v;
      }
    }
  }
}

TEST(FuzzOracle, ClassifiesCompileErrorsAndTraps) {
  FuzzKernel bad = handKernel("  *?(mask) (Y + rm) = undeclared;\n");
  EXPECT_EQ(checkKernel(bad).status, OracleResult::Status::GeneratorBug);

  // Division by x0 - x0 == 0 on an active lane traps: a discard, not a failure.
  FuzzKernel trap = handKernel("  *?(mask) (Y + rm) = x0 / (x0 - x0);\n");
  OracleResult r = checkKernel(trap);
  EXPECT_EQ(r.status, OracleResult::Status::Discard) << r.message;
  EXPECT_EQ(r.property, "division_by_zero");

  FuzzKernel good = handKernel("  *?(mask) (Y + rm) = x0 * 2 + 1;\n");
  OracleResult ok = checkKernel(good);
  ASSERT_EQ(ok.status, OracleResult::Status::Pass) << ok.message;
  // Y = 2 * X0 + 1 = [3, 1, 5].
  const HostArray &y = ok.reference.at("Y");
  EXPECT_EQ(y.getDouble(0), 3);
  EXPECT_EQ(y.getDouble(1), 1);
  EXPECT_EQ(y.getDouble(2), 5);
}

TEST(FuzzOracle, FirstDifferenceTreatsNaNsAsEqual) {
  HostArray a = HostArray::zeros(DType::F32, {2}), b = HostArray::zeros(DType::F32, {2});
  a.setBits(0, 0x7fc00000);
  b.setBits(0, 0x7fc00001); // another NaN
  std::map<std::string, HostArray> x{{"A", a}}, y{{"A", b}};
  EXPECT_EQ(firstDifference(x, y), "");
  y.at("A").setDouble(1, -0.0); // -0.0 differs from +0.0 bit for bit
  EXPECT_NE(firstDifference(x, y).find("A[1]"), std::string::npos);
}

TEST(FuzzShrink, KeepsThePredicateAndDoesNotGrow) {
  // The first kernel with a loop; shrink while "it still has a loop".
  for (int i = 0; i < 100; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    if (k.source.find("for (") == std::string::npos)
      continue;
    auto hasLoop = [](const FuzzKernel &c) { return c.source.find("for (") != std::string::npos; };
    FuzzKernel small = shrinkKernel({}, seedOf(i), 100, hasLoop, 10);
    EXPECT_TRUE(hasLoop(small));
    EXPECT_LE(small.source.size(), k.source.size());
    return;
  }
  FAIL() << "no kernel with a loop among 100";
}

TEST(FuzzCase, AFindingLoadsAndPassesAsAConformanceCase) {
  for (int i = 0; i < 10; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    OracleResult r = checkKernel(k);
    if (r.status != OracleResult::Status::Pass)
      continue;
    r.property = "test";
    CaseInfo info;
    info.name = "case" + std::to_string(i);
    info.seed = seedOf(i);
    info.reproduce = "repro";
    std::string text = conformanceCase(k, r, info);
    conf::LoadResult loaded = conf::loadSuiteText(text, "fuzz.json", ".");
    ASSERT_TRUE(loaded.ok()) << (loaded.errors.empty() ? "" : loaded.errors.front()) << "\n"
                             << text;
    auto backend = createInterpreterBackend();
    conf::CaseRecord rec =
        conf::runCase(*loaded.suite, loaded.suite->cases.front(), *backend, RunOptions{});
    EXPECT_EQ(rec.status, conf::Status::Pass) << rec.error << "\n" << text;
  }
}

// A finding's case carries the reference's int64 outputs exactly (FORMAT.md: integers
// compare "exact"): 2^53 + 1 and values near 2^63 do not survive a trip through a double.
// Y = X * 3 + 1 wraps as C does (docs/semantics.md); the values below are worked out by hand.
TEST(FuzzCase, Int64OutputsAreWrittenExactly) {
  FuzzKernel k;
  k.source = "__global__ void f(long *X, long *Y) {\n  int r[4] = 0 ... 4;\n"
             "  *(Y + r) = *(X + r) * 3 + 1;\n}\n";
  k.kernelName = "f";
  k.buffers.push_back({"X", DType::I64, {4}, {0x1p52, 0x1p61, -0x1p62, 0x1p62}, false});
  k.buffers.push_back({"Y", DType::I64, {4}, {0, 0, 0, 0}, true});
  OracleResult r;
  std::string error;
  ASSERT_TRUE(interpReference(k, 20, r.reference, error)) << error;
  r.property = "gpu-mismatch";
  CaseInfo info;
  info.name = "wide";
  std::string text = conformanceCase(k, r, info);
  conf::LoadResult loaded = conf::loadSuiteText(text, "wide.json", ".");
  ASSERT_TRUE(loaded.ok()) << (loaded.errors.empty() ? "" : loaded.errors.front()) << "\n" << text;
  const conf::Case &c = loaded.suite->cases.front();
  ASSERT_EQ(c.expect.outputs.size(), 1u);
  const HostArray &want = c.expect.outputs[0].want;
  const int64_t expected[4] = {13510798882111489,     // 3 * 2^52 + 1 (above 2^53, odd)
                               6917529027641081857,   // 3 * 2^61 + 1
                               4611686018427387905,   // -3 * 2^62 + 1 + 2^64
                               -4611686018427387903}; // 3 * 2^62 + 1 - 2^64
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(static_cast<int64_t>(want.getBits(i)), expected[i]) << "Y[" << i << "]\n" << text;
  auto backend = createInterpreterBackend();
  conf::CaseRecord rec = conf::runCase(*loaded.suite, c, *backend, RunOptions{});
  EXPECT_EQ(rec.status, conf::Status::Pass) << rec.error << "\n" << text;
}

TEST(FuzzCase, TheFailingRunsNumWarpsIsTheCases) {
  // A failure of the num_warps variant: the case runs at the variant's count;
  // a failure of the campaign's own run at its count, written when not 4.
  EXPECT_EQ(findingNumWarps(warpsVariantMessage(8, 4, "agrees") + "gpu differs"),
            std::optional<unsigned>(8));
  EXPECT_EQ(findingNumWarps("with num_warps 16 (num_warps 8 compiles): x"),
            std::optional<unsigned>(16));
  EXPECT_EQ(findingNumWarps("gpu differs from interp in Y[0]"), std::nullopt);
  EXPECT_EQ(findingNumWarps("with num_warps x"), std::nullopt);
  FuzzKernel k = generateKernel({}, seedOf(0));
  OracleResult r = checkKernel(k);
  r.property = "gpu-mismatch";
  CaseInfo info;
  info.name = "w";
  auto warpsOf = [&](const std::string &message, unsigned campaign) -> std::optional<int64_t> {
    r.message = message;
    info.numWarps = campaign;
    conf::LoadResult loaded = conf::loadSuiteText(conformanceCase(k, r, info), "w.json", ".");
    EXPECT_TRUE(loaded.ok());
    return loaded.ok() ? loaded.suite->cases.front().numWarps : std::nullopt;
  };
  EXPECT_EQ(warpsOf(warpsVariantMessage(8, 4, "agrees") + "differs", 4), 8);
  EXPECT_EQ(warpsOf(warpsVariantMessage(4, 8, "agrees") + "differs", 8), 4);
  EXPECT_EQ(warpsOf("gpu differs", 8), 8);
  EXPECT_EQ(warpsOf("gpu differs", 4), std::nullopt);
  // Modules that ptxas made: the description says how to run the case so.
  EXPECT_EQ(conformanceCase(k, r, info).find("TC_CUBIN=ptxas"), std::string::npos);
  info.ptxasModules = true;
  EXPECT_NE(conformanceCase(k, r, info).find("`TC_CUBIN=ptxas triton-conformance run FILE"),
            std::string::npos);
}

TEST(FuzzOracle, TileVariantsOnlyForKernelsThatCannotDependOnTiles) {
  int variants = 0;
  for (int i = 0; i < 50; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    std::optional<FuzzKernel> v = retiled(k);
    bool tileBound = false;
    for (const std::string &f : k.features)
      tileBound =
          tileBound || f == "reduce" || f == "dot" || f == "load.plain" || f == "num_programs";
    EXPECT_EQ(v.has_value(), !tileBound);
    if (!v)
      continue;
    ++variants;
    const std::vector<int64_t> &shape = k.buffers.front().shape;
    for (size_t axis = 0; axis < v->defines.size(); ++axis) {
      int64_t tile = std::stoll(v->defines[axis].second);
      EXPECT_NE(v->defines[axis].second, k.defines[axis].second);
      // Exactly enough programs to cover the axis.
      EXPECT_GE(v->grid[axis] * tile, shape[axis]);
      EXPECT_LT((v->grid[axis] - 1) * tile, shape[axis]);
    }
  }
  EXPECT_GT(variants, 5);
}

// Property (b) has work to do: the pass pipeline changes most generated kernels.
TEST(FuzzOracle, PassesChangeMostKernels) {
  int changed = 0;
  for (int i = 0; i < 50; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    std::string plain = printedIR(k, false), optimized = printedIR(k, true);
    ASSERT_FALSE(plain.empty());
    ASSERT_FALSE(optimized.empty());
    changed += plain != optimized;
  }
  EXPECT_GT(changed, 25);
}

namespace {

bool hasFeature(const FuzzKernel &k, const char *f) {
  return std::find(k.features.begin(), k.features.end(), f) != k.features.end();
}

// The scalar parameter `name` of `k`, or null.
const ScalarDesc *scalarNamed(const FuzzKernel &k, const char *name) {
  for (const ScalarDesc &d : k.scalars)
    if (d.name == name)
      return &d;
  return nullptr;
}

// A policy that turns the new constructs on more often (still UB-free).
GenPolicy boosted() {
  GenPolicy p;
  p.threeD = 0.3;
  p.matmul = 0.2;
  p.atomic = 0.5;
  p.loopPointer = 0.8;
  p.edgeValues = 0.8;
  p.dotAcc = 0.7;
  return p;
}

std::map<std::string, int> featureCounts(const GenPolicy &p, int kernels) {
  std::map<std::string, int> counts;
  for (int i = 0; i < kernels; ++i)
    for (const std::string &f : generateKernel(p, seedOf(i)).features)
      ++counts[f];
  return counts;
}

int64_t elementsOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

} // namespace

// Every construct of issue 6 part 1 appears with the default policy within
// 600 kernels (the campaign's mix), each under its own feature name.
TEST(FuzzGenerator, NewConstructsAppearWithTheDefaultPolicy) {
  std::map<std::string, int> counts = featureCounts({}, 600);
  for (const char *f : {"tile.3d",           "grid.3d",
                        "reduce.axis0",      "reduce.axis1",
                        "reduce.axis2",      "dot.batched",
                        "dot.full",          "dot.acc",
                        "dot.acc.compound",  "dot.trans_a",
                        "dot.trans_b",       "matmul.kloop",
                        "matmul.mixed",      "dot.float16",
                        "dot.bfloat16",      "atomic.collide",
                        "atomic.cas",        "atomic.old",
                        "input.edge",        "input.nan",
                        "input.inf",         "input.neg_zero",
                        "input.subnormal",   "loop.pointer",
                        "helper.statements", "broadcast.newaxis3d",
                        "matmul.unmasked",   "atomic.collide.hot"})
    EXPECT_GT(counts[f], 0) << "no kernel among 600 has feature " << f;
}

// With edge values on, the float scalar S (the one value every thread's elements
// share: `x / S`, the GPU's shared-divisor range check) is sometimes a signed zero
// or a subnormal, and the feature names which; the kernels stay UB-free.
TEST(FuzzGenerator, TheSharedScalarTakesEdgeValues) {
  GenPolicy p = boosted();
  p.scalarParam = 1;
  std::map<std::string, int> seen;
  for (int i = 0; i < 400; ++i) {
    FuzzKernel k = generateKernel(p, seedOf(i));
    auto has = [&](const char *f) { return hasFeature(k, f); };
    if (!has("scalar.edge"))
      continue;
    const ScalarDesc *s = scalarNamed(k, "S");
    ASSERT_NE(s, nullptr) << describeKernel(k);
    ASSERT_TRUE(tc::isFloat(s->dtype)) << describeKernel(k);
    double v = s->value;
    if (has("scalar.zero"))
      EXPECT_TRUE(v == 0 && !std::signbit(v));
    else if (has("scalar.neg_zero"))
      EXPECT_TRUE(v == 0 && std::signbit(v));
    else
      EXPECT_TRUE(has("scalar.subnormal") && v != 0 &&
                  std::fabs(v) < (s->dtype == tc::DType::F16 ? 0x1p-14
                                  : s->dtype == tc::DType::F64 ? 0x1p-1022 : 0x1p-126))
          << v;
    for (const std::string &f : k.features)
      ++seen[f];
    if (seen["scalar.edge"] <= 12) {
      OracleResult r = checkKernel(k);
      EXPECT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message;
    }
  }
  for (const char *f : {"scalar.edge", "scalar.zero", "scalar.neg_zero", "scalar.subnormal"})
    EXPECT_GT(seen[f], 0) << f;
}

// A wide 1-D tile divided by the scalar S (every thread's elements share the
// divisor: the GPU's shared-divisor path), with S a zero or a subnormal half
// the time: the operands on which a shared reciprocal goes wrong (the planted
// bug shared-divisor-range). The kernels pass on the interpreter, and some of
// them take div.shared when compiled for the GPU.
TEST(FuzzGenerator, AWideTileIsDividedByTheScalarWithZeroDivisors) {
  GenPolicy p;
  p.scalarParam = 1;
  p.wideTile = 1;
  p.twoD = 0;
  p.threeD = 0;
  p.matmul = 0;
  p.attention = 0;
  std::map<std::string, int> seen;
  int shared = 0;
  for (int i = 0; i < 300; ++i) {
    FuzzKernel k = generateKernel(p, seedOf(i) + 5);
    auto has = [&](const char *f) { return hasFeature(k, f); };
    for (const std::string &f : k.features)
      ++seen[f];
    if (has("div.by_scalar")) {
      EXPECT_NE(k.source.find(") / S)"), std::string::npos) << describeKernel(k);
    }
    if (!has("scalar.divisor_edge"))
      continue;
    const ScalarDesc *s = scalarNamed(k, "S");
    ASSERT_NE(s, nullptr) << describeKernel(k);
    double v = s->value;
    if (has("scalar.divisor_subnormal")) {
      EXPECT_FALSE(k.smallInts) << describeKernel(k);
      EXPECT_FALSE(has("dot")) << describeKernel(k);
      EXPECT_TRUE(v != 0 && std::fabs(v) < (s->dtype == tc::DType::F16   ? 0x1p-14
                                            : s->dtype == tc::DType::F64 ? 0x1p-1022
                                                                         : 0x1p-126))
          << v;
    } else {
      EXPECT_EQ(v, 0) << describeKernel(k);
      EXPECT_EQ(std::signbit(v), has("scalar.divisor_neg_zero")) << describeKernel(k);
    }
    if (seen["scalar.divisor_edge"] <= 10) {
      OracleResult r = checkKernel(k);
      EXPECT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message;
    }
    if (has("div.by_scalar") && shared < 2) {
      CompileOutcome c = compileFuzzKernel(k);
      ASSERT_TRUE(c.ok()) << c.diagnostics;
      codegen::Options o;
      o.alignedPointers = true;
      codegen::Result r = codegen::compile(c.kernel->module(), c.kernel->function(), o);
      ASSERT_TRUE(r.ok()) << r.error;
      const std::vector<std::string> &paths = r.compiled->paths.front();
      shared += std::find(paths.begin(), paths.end(), "div.shared") != paths.end();
    }
  }
  for (const char *f : {"div.by_scalar", "scalar.divisor_edge", "scalar.divisor_zero",
                        "scalar.divisor_neg_zero", "scalar.divisor_subnormal"})
    EXPECT_GT(seen[f], 0) << f;
  EXPECT_EQ(shared, 2) << "no generated kernel's x / S took the shared-divisor path";

  // With an `@` in the kernel, the zeros only (the tensor cores add in their own order).
  GenPolicy q;
  q.scalarParam = 1;
  q.twoD = 1;
  q.threeD = 0;
  q.dot = 1;
  q.matmul = 0;
  q.attention = 0;
  q.smallInts = 0;
  int withDot = 0;
  for (int i = 0; i < 3000 && withDot < 5; ++i) {
    FuzzKernel k = generateKernel(q, seedOf(i) + 9);
    auto has = [&](const char *f) { return hasFeature(k, f); };
    if (!has("dot") || !has("scalar.divisor_edge"))
      continue;
    ++withDot;
    EXPECT_FALSE(has("scalar.divisor_subnormal")) << describeKernel(k);
  }
  EXPECT_EQ(withDot, 5);
}

// No kernel of the boosted policy traps on the interpreter (UB-free by
// construction, edge values and colliding atomics included), and every
// property holds (threads: the colliding atomics' order does not matter).
TEST(FuzzGenerator, NewConstructsAreDefined) {
  GenPolicy p = boosted();
  std::map<std::string, int> seen;
  for (int i = 0; i < 150; ++i) {
    FuzzKernel k = generateKernel(p, seedOf(i) + 17);
    OracleResult r = checkKernel(k);
    ASSERT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message << "\n"
                                                    << describeKernel(k);
    for (const std::string &f : k.features)
      ++seen[f];
  }
  for (const char *f : {"matmul.kloop", "atomic.collide", "atomic.cas", "input.nan", "tile.3d"})
    EXPECT_GT(seen[f], 0) << f;
}

// A hot colliding atomic sends every lane of every program to element 0 of Y
// (Y starts filled with 3; 1-D tiles are often wide): every other element
// keeps its 3, element 0 is at least 3 after a max and at most 3 after a min,
// and the kernels pass the oracle (threads: the order of the lanes does not
// matter).
TEST(FuzzGenerator, HotCollidingAtomicsMeetOnElementZero) {
  GenPolicy p = boosted();
  p.atomic = 1;
  p.atomicCollide = 1;
  p.atomicHot = 1;
  p.matmul = 0;
  p.attention = 0;
  int checked = 0, narrow = 0, wide = 0;
  for (int i = 0; i < 80; ++i) {
    FuzzKernel k = generateKernel(p, seedOf(i));
    if (!hasFeature(k, "atomic.collide.hot"))
      continue;
    EXPECT_NE(k.source.find(" % 1"), std::string::npos) << describeKernel(k);
    OracleResult r = checkKernel(k);
    ASSERT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message << "\n"
                                                    << describeKernel(k);
    const tc::HostArray &y = r.reference.at("Y");
    for (int64_t e = 1; e < y.numElements(); ++e)
      ASSERT_EQ(y.getDouble(e), 3) << "element " << e << "\n" << describeKernel(k);
    double y0 = y.getDouble(0);
    if (hasFeature(k, "atomic.max")) {
      EXPECT_TRUE(y0 >= 3 || std::isnan(y0)) << describeKernel(k);
    }
    if (hasFeature(k, "atomic.min")) {
      EXPECT_TRUE(y0 <= 3 || std::isnan(y0)) << describeKernel(k);
    }
    narrow += tc::byteSize(y.dtype) <= 2;
    wide += hasFeature(k, "tile.wide");
    ++checked;
  }
  EXPECT_GE(checked, 20);
  EXPECT_GT(wide, 0);   // hundreds of threads of a program on one element
  EXPECT_GT(narrow, 0); // 8/16-bit outputs: the compare-and-swap loops' case
}

// Generated matmul kernels compute C = A x B: checked against a product
// computed here in double (small integers, so every sum is exact).
TEST(FuzzGenerator, MatmulKernelsMultiply) {
  GenPolicy p;
  p.matmul = 1;
  p.dotAcc = 0;
  p.smallInts = 1;
  int checked = 0;
  for (int i = 0; i < 60 && checked < 4; ++i) {
    FuzzKernel k = generateKernel(p, seedOf(i));
    ASSERT_EQ(k.buffers.size(), 3u);
    const BufferDesc &a = k.buffers[0], &b = k.buffers[1], &y = k.buffers[2];
    if (y.dtype != DType::F32 || k.source.find("pY = c;") == std::string::npos)
      continue;
    OracleResult r = checkKernel(k);
    ASSERT_EQ(r.status, OracleResult::Status::Pass) << r.message << "\n" << describeKernel(k);
    int64_t m = y.shape[0], n = y.shape[1];
    int64_t depth = a.dims[0] == "K" ? a.shape[0] : a.shape[1];
    auto at = [](const BufferDesc &buf, const std::string &rowName, int64_t row, int64_t col) {
      // Element (row, col) of the logical operand, whichever way it is stored.
      bool stored = buf.dims[0] == rowName;
      int64_t index = stored ? row * buf.shape[1] + col : col * buf.shape[1] + row;
      return buf.data[static_cast<size_t>(index)];
    };
    for (int64_t i2 = 0; i2 < m; ++i2)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t kk = 0; kk < depth; ++kk)
          want += at(a, "M", i2, kk) * at(b, "K", kk, j);
        EXPECT_EQ(r.reference.at("Y").getDouble(i2 * n + j), want) << describeKernel(k);
      }
    ++checked;
  }
  EXPECT_GE(checked, 2);
}

// Edge values reach the general-mode float inputs and nothing else.
TEST(FuzzGenerator, EdgeValuesOnlyInGeneralModeFloatInputs) {
  GenPolicy p;
  p.edgeValues = 1;
  p.edgeFraction = 0.5;
  int nan = 0, negZero = 0;
  for (int i = 0; i < 40; ++i) {
    FuzzKernel k = generateKernel(p, seedOf(i));
    for (const BufferDesc &b : k.buffers) {
      EXPECT_EQ(static_cast<int64_t>(b.data.size()), elementsOf(b.shape));
      for (double v : b.data) {
        bool edge = std::isnan(v) || std::isinf(v) || (v == 0 && std::signbit(v));
        if (edge) {
          EXPECT_TRUE(!k.smallInts && isFloat(b.dtype) && !b.isOutput) << describeKernel(k);
        }
        nan += std::isnan(v);
        negZero += v == 0 && std::signbit(v);
      }
    }
  }
  EXPECT_GT(nan, 0);
  EXPECT_GT(negZero, 0);
}

// The reducer's bookkeeping: every buffer names the size scalar of each axis
// and every grid axis its size and tile, and the grid covers the sizes.
TEST(FuzzGenerator, KernelsDescribeTheirAxes) {
  GenPolicy p = boosted();
  for (int i = 0; i < 100; ++i) {
    FuzzKernel k = generateKernel(p, seedOf(i));
    std::map<std::string, double> scalars;
    for (const ScalarDesc &s : k.scalars)
      scalars[s.name] = s.value;
    for (const BufferDesc &b : k.buffers) {
      if (b.dims.empty()) // a buffer of fixed size (an attention kernel's X and W)
        continue;
      ASSERT_EQ(b.dims.size(), b.shape.size());
      for (size_t a = 0; a < b.dims.size(); ++a)
        EXPECT_EQ(scalars.at(b.dims[a]), static_cast<double>(b.shape[a])) << describeKernel(k);
    }
    ASSERT_FALSE(k.gridAxes.empty());
    for (size_t a = 0; a < k.gridAxes.size(); ++a) {
      int64_t tile = 0;
      for (const auto &[name, value] : k.defines)
        if (name == k.gridAxes[a].tile)
          tile = std::stoll(value);
      ASSERT_GT(tile, 0);
      EXPECT_GE(k.grid[a] * tile, static_cast<int64_t>(scalars.at(k.gridAxes[a].size)));
    }
  }
}

// Calls of the functions whose GPU result is only ULP-bounded (the text before
// the argument).
const char *const kUlpBoundedCalls[] = {"exp(", "exp2(", "log(",   "log2(",
                                        "sin(", "cos(",  "rsqrt(", "pow("};

// A store's data mask compares two expressions: a comparison is discontinuous,
// so neither may call a function whose GPU result is only ULP-bounded (seed
// 20261402 kernel 209079: `exp(x - 2.0) + 2.0 < (x & 7) + exp(x - 2.0)`).
TEST(FuzzGenerator, DataMasksCompareNoUlpBoundedValues) {
  int masks = 0;
  for (int i = 0; i < 3000; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    for (size_t at = k.source.find("*?(mask && ("); at != std::string::npos;
         at = k.source.find("*?(mask && (", at + 1)) {
      std::string line = k.source.substr(at, k.source.find('\n', at) - at);
      std::string cond = line.substr(0, line.find(") p"));
      ++masks;
      for (const char *f : kUlpBoundedCalls)
        EXPECT_EQ(cond.find(f), std::string::npos) << "seed " << seedOf(i) << ": " << line;
    }
  }
  EXPECT_GT(masks, 50); // the data masks are there
}

// Likewise the condition of every select/where (an operand, or atomic_cas's
// compare value): the text up to the first comma outside parentheses.
TEST(FuzzGenerator, SelectConditionsCompareNoUlpBoundedValues) {
  int selects = 0;
  for (int i = 0; i < 3000; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    for (const char *fn : {"select(", "where("})
      for (size_t at = k.source.find(fn); at != std::string::npos; at = k.source.find(fn, at + 1)) {
        if (at > 0 &&
            (std::isalnum(static_cast<unsigned char>(k.source[at - 1])) || k.source[at - 1] == '_'))
          continue; // part of a longer name
        size_t end = at + std::string(fn).size();
        for (int depth = 0; end < k.source.size(); ++end) {
          char ch = k.source[end];
          if (ch == ',' && depth == 0)
            break;
          depth += ch == '(' ? 1 : ch == ')' ? -1 : 0;
        }
        std::string cond = k.source.substr(at, end - at);
        ++selects;
        for (const char *f : kUlpBoundedCalls)
          EXPECT_EQ(cond.find(f), std::string::npos) << "seed " << seedOf(i) << ": " << cond;
      }
  }
  EXPECT_GT(selects, 100);
}

namespace {

bool isIdentChar(char ch) {
  return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_';
}

// The identifiers of `text` (names, type names and keywords alike).
std::set<std::string> identifiers(const std::string &text) {
  std::set<std::string> names;
  for (size_t i = 0; i < text.size();) {
    if (!isIdentChar(text[i]) || std::isdigit(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < text.size() && isIdentChar(text[end]))
      ++end;
    names.insert(text.substr(i, end - i));
    i = end;
  }
  return names;
}

// Whether `text` calls a function whose GPU result is only ULP-bounded or
// names a variable computed from one.
bool usesUlpBounded(const std::string &text, const std::set<std::string> &tainted) {
  for (const char *f : kUlpBoundedCalls)
    for (size_t at = text.find(f); at != std::string::npos; at = text.find(f, at + 1))
      if (at == 0 || !isIdentChar(text[at - 1]))
        return true;
  for (const std::string &name : identifiers(text))
    if (tainted.count(name))
      return true;
  return false;
}

// The variables of a kernel (without helper functions) whose value depends on
// a ULP-bounded call: an independent reading of the source text, statement by
// statement (`T name[..] = e`, `name = e`), to a fixed point for loops.
std::set<std::string> ulpBoundedNames(const std::string &source) {
  std::vector<std::string> statements(1);
  for (char ch : source) {
    if (ch == ';' || ch == '{' || ch == '}')
      statements.emplace_back();
    else
      statements.back() += ch;
  }
  std::set<std::string> tainted;
  for (bool grew = true; grew;) {
    grew = false;
    for (const std::string &s : statements) {
      size_t eq = std::string::npos;
      for (size_t i = 0; i < s.size(); ++i)
        if (s[i] == '=' && (i == 0 || std::string("=<>!").find(s[i - 1]) == std::string::npos) &&
            (i + 1 == s.size() || s[i + 1] != '=')) {
          eq = i;
          break;
        }
      if (eq == std::string::npos)
        continue;
      std::string lhs = s.substr(0, eq);
      size_t firstChar = lhs.find_first_not_of(" \n\t");
      if (firstChar == std::string::npos || lhs[firstChar] == '*')
        continue; // a store
      lhs = lhs.substr(0, lhs.find('['));
      size_t end = lhs.find_last_not_of(" \t+-*/%&|^");
      size_t begin = end;
      while (begin > 0 && isIdentChar(lhs[begin - 1]))
        --begin;
      std::string name = lhs.substr(begin, end + 1 - begin);
      if (!tainted.count(name) && usesUlpBounded(s.substr(eq + 1), tainted))
        grew = tainted.insert(name).second;
    }
  }
  return tainted;
}

// Whether ulpBoundedNames reads `k`'s flows: not through helpers' parameters
// nor the run-time choice of the slice a double buffer reads.
bool flowsReadable(const FuzzKernel &k) {
  return !hasFeature(k, "helper") && !hasFeature(k, "slices");
}

// The argument text of the call whose name ends at `open` (the '('), up to the
// first top-level comma or the closing parenthesis.
std::string firstArgument(const std::string &text, size_t open) {
  size_t end = open + 1;
  for (int depth = 0; end < text.size(); ++end) {
    char ch = text[end];
    if ((ch == ',' || ch == ')') && depth == 0)
      break;
    depth += ch == '(' || ch == '[' ? 1 : ch == ')' || ch == ']' ? -1 : 0;
  }
  return text.substr(open + 1, end - open - 1);
}

} // namespace

// sin, cos, exp and exp2 amplify an argument's error past the bound the GPU is
// compared with (seed 20261502 kernel 275324: cos(exp(1 - S)), one ULP of
// exp(4.5) moved cos by 6.8e-6), so none takes a value computed from a
// ULP-bounded call, directly or through variables, reductions and loops.
TEST(FuzzGenerator, PeriodicAndExponentialFunctionsTakeNoUlpBoundedValues) {
  int calls = 0, inexactVariables = 0;
  for (int i = 0; i < 12000; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    if (!flowsReadable(k))
      continue;
    std::set<std::string> tainted = ulpBoundedNames(k.source);
    inexactVariables += static_cast<int>(tainted.size());
    for (const char *fn : {"sin(", "cos(", "exp(", "exp2(", "sinf(", "cosf(", "expf(", "exp2f("})
      for (size_t at = k.source.find(fn); at != std::string::npos; at = k.source.find(fn, at + 1)) {
        if (at > 0 && isIdentChar(k.source[at - 1]))
          continue;
        std::string arg = firstArgument(k.source, at + std::string(fn).size() - 1);
        ++calls;
        EXPECT_FALSE(usesUlpBounded(arg, tainted)) << "seed " << seedOf(i) << ": " << fn << arg
                                                   << ")\n" << k.source;
      }
  }
  EXPECT_GT(calls, 200);
  EXPECT_GT(inexactVariables, 300); // the reading finds the flows it checks
}

// No divisor is computed from a ULP-bounded call: near 0 a quotient amplifies
// the divisor's error without bound (seed 80 kernel 19269 under
// --ulp-sensitivity: x / (log2(a) - log2(a)), inf against 4.8e7 with one log2
// a ULP off). The generator makes such a `/` a `*`.
TEST(FuzzGenerator, NoDivisorTakesUlpBoundedValues) {
  int divisions = 0, checked = 0;
  for (int i = 0; i < 12000; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    // Attention's `acc / li[:, newaxis]`: li sums exp2(0) = 1 and more, so the
    // quotient's relative error stays the divisor's.
    if (!flowsReadable(k) || hasFeature(k, "attention"))
      continue;
    std::set<std::string> tainted = ulpBoundedNames(k.source);
    for (size_t at = k.source.find(" / "); at != std::string::npos;
         at = k.source.find(" / ", at + 1)) {
      // `(a / b)`: the divisor runs to the `)` that closes the division.
      size_t end = at + 3;
      for (int depth = 0; end < k.source.size(); ++end) {
        char ch = k.source[end];
        if ((ch == ')' || ch == ']' || ch == ',' || ch == ';') && depth == 0)
          break;
        depth += ch == '(' || ch == '[' ? 1 : ch == ')' || ch == ']' ? -1 : 0;
      }
      std::string divisor = k.source.substr(at + 3, end - at - 3);
      ++divisions;
      checked += !tainted.empty();
      EXPECT_FALSE(usesUlpBounded(divisor, tainted))
          << "seed " << seedOf(i) << ": / " << divisor << "\n" << k.source;
    }
  }
  EXPECT_GT(divisions, 1000);
  EXPECT_GT(checked, 100); // divisions in kernels that have ULP-bounded values
}

// Every conversion of a float to an integer (clamped first: `(T)min(max(e, lo),
// hi)`) truncates: discontinuous, so `e` is computed from no ULP-bounded call.
// That includes a float atomic_add's addend, clamped to [-2, 2] so that the
// sums stay exact (seed 20261502 kernel 140003: exp(S * 0.25) summed,
// cancelled and truncated differently on the GPU), and values summed by `@`
// (seed 20261510 kernel 204120: `log` values through `@` to uint64).
TEST(FuzzGenerator, FloatToIntConversionsTakeNoUlpBoundedValues) {
  int conversions = 0, addends = 0, products = 0;
  for (int i = 0; i < 12000; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    if (!flowsReadable(k))
      continue;
    std::set<std::string> tainted = ulpBoundedNames(k.source);
    const std::string clamp = ")min(max(";
    for (size_t at = k.source.find(clamp); at != std::string::npos;
         at = k.source.find(clamp, at + 1)) {
      size_t open = k.source.rfind('(', at);
      std::string type = k.source.substr(open + 1, at - open - 1);
      if (type.find("int") == std::string::npos)
        continue; // not a conversion
      std::string arg = firstArgument(k.source, at + clamp.size() - 1);
      ++conversions;
      addends += k.source.compare(at + clamp.size() + arg.size(), 9, ", -2), 2)") == 0;
      products += usesUlpBounded(arg, {}) ? 0 : arg.find("ds") != std::string::npos;
      EXPECT_FALSE(usesUlpBounded(arg, tainted)) << "seed " << seedOf(i) << ": (" << type
                                                 << ")min(max(" << arg << "\n" << k.source;
    }
  }
  EXPECT_GT(conversions, 1000);
  EXPECT_GT(addends, 30);
  EXPECT_GT(products, 20);
}

// store.math kernels store one ULP-bounded function of an exact value into Y: the GPU
// oracle's analysis must see that Y is a bounded output (compared in ULPs alone), or the
// draw tests nothing the other kernels do not. The one exception: a float `@` whose sums the
// generator knows to be exact (small values) and the analysis, which sees no values, does not.
TEST(FuzzGenerator, MathStoresAreBoundedOutputs) {
  auto has = [](const FuzzKernel &k, const std::string &f) {
    return std::find(k.features.begin(), k.features.end(), f) != k.features.end();
  };
  int drawn = 0, direct = 0, exp2Max = 0;
  for (int i = 0; i < 2000; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    if (!has(k, "store.math"))
      continue;
    ++drawn;
    exp2Max += has(k, "op.exp2_max");
    CompileOutcome c = compileFuzzKernel(k);
    ASSERT_TRUE(c.ok()) << c.diagnostics << "\n" << k.source;
    bool floatDot = false;
    for (DType t : {DType::F16, DType::BF16, DType::F32, DType::F64})
      floatDot = floatDot || has(k, "dot." + std::string(conformanceName(t)));
    BoundedOutputs bounded = boundedOutputs(c.kernel->function());
    bool isDirect = bounded.count("Y") > 0 && bounded.at("Y") > 0; // the function's ULPs
    direct += isDirect;
    EXPECT_TRUE(isDirect || floatDot) << k.source;
  }
  EXPECT_GT(drawn, 20); // a tenth of the elementwise kernels with a float output, no atomic
  EXPECT_GT(direct, drawn * 9 / 10);
  EXPECT_GT(exp2Max, 3);
}

// A finding's conformance case compares a direct math output in ULPs, as the oracle did:
// under the runner's default tolerance a flushed subnormal would pass, and the case would
// not show the finding.
TEST(FuzzGenerator, MathStoreFindingsCompareInUlps) {
  for (int i = 0; i < 2000; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    if (k.smallInts ||
        std::find(k.features.begin(), k.features.end(), "store.math") == k.features.end())
      continue;
    CompileOutcome c = compileFuzzKernel(k);
    ASSERT_TRUE(c.ok()) << c.diagnostics;
    BoundedOutputs direct = boundedOutputs(c.kernel->function());
    if (!direct.count("Y"))
      continue;
    OracleResult r;
    std::string error;
    ASSERT_TRUE(interpReference(k, 20, r.reference, error)) << error;
    r.property = "gpu-mismatch";
    r.message = "gpu differs";
    CaseInfo info;
    info.name = "m";
    info.exact = false;
    info.ulpOutputs = direct;
    conf::LoadResult loaded = conf::loadSuiteText(conformanceCase(k, r, info), "m.json", ".");
    ASSERT_TRUE(loaded.ok());
    const conf::Expectation &e = loaded.suite->cases.front().expect;
    ASSERT_EQ(e.outputs.size(), 1u);
    EXPECT_EQ(e.outputs[0].name, "Y");
    EXPECT_TRUE(e.outputs[0].compareGiven);
    EXPECT_EQ(e.outputs[0].compare.kind, conf::CompareSpec::Kind::Ulp);
    EXPECT_EQ(e.outputs[0].compare.ulp, direct.at("Y"));
    return;
  }
  FAIL() << "no general-value store.math kernel with a direct Y in 2000 seeds";
}

// Most general-value kernels compute their output without a rounding that could differ
// between the interpreter and the GPU: those are compared bit for bit (bounded outputs of 0
// ULPs), so a contraction, a flushed subnormal or a double rounding on any path shows.
TEST(FuzzGenerator, ManyGeneralKernelsHaveExactOutputs) {
  int general = 0, exact = 0;
  for (int i = 0; i < kKernels; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    bool floatOut = false;
    for (const BufferDesc &b : k.buffers)
      floatOut = floatOut || (b.isOutput && isFloat(b.dtype));
    if (k.smallInts || !floatOut)
      continue;
    ++general;
    CompileOutcome c = compileFuzzKernel(k);
    ASSERT_TRUE(c.ok()) << c.diagnostics;
    BoundedOutputs bounded = boundedOutputs(c.kernel->function());
    exact += bounded.count("Y") && bounded.at("Y") == 0;
  }
  EXPECT_GT(general, 20);
  EXPECT_GT(exact, general / 4) << exact << " of " << general;
}
