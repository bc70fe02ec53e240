// The fuzzer's reducer (fuzz/Reducer.h): planted predicates are kept while
// the kernel gets smaller (statements, tiles, sizes, data), candidates stay
// consistent and well-defined, the time budget holds, and failure signatures
// group kernels by their ops.
#include "fuzz/Generator.h"
#include "fuzz/Oracle.h"
#include "fuzz/Reducer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>

using namespace tc;
using namespace tc::fuzz;

namespace {

uint64_t seedOf(int i) { return 5000 + static_cast<uint64_t>(i) * 104729; }

bool passes(const FuzzKernel &k) { return checkKernel(k).status == OracleResult::Status::Pass; }

size_t lineCount(const FuzzKernel &k) { return static_cast<size_t>(std::count(k.source.begin(), k.source.end(), '\n')); }

int64_t tileProduct(const FuzzKernel &k) {
  int64_t p = 1;
  for (const auto &[name, value] : k.defines)
    p *= std::stoll(value);
  return p;
}

// Buffers hold prod(shape) values, sizes match the scalars, the grid covers them.
void expectConsistent(const FuzzKernel &k) {
  std::map<std::string, double> scalars;
  for (const ScalarDesc &s : k.scalars)
    scalars[s.name] = s.value;
  for (const BufferDesc &b : k.buffers) {
    int64_t n = 1;
    for (int64_t d : b.shape)
      n *= d;
    EXPECT_EQ(static_cast<int64_t>(b.data.size()), n) << b.name;
    for (size_t a = 0; a < b.dims.size(); ++a)
      if (scalars.count(b.dims[a])) {
        EXPECT_EQ(scalars[b.dims[a]], static_cast<double>(b.shape[a])) << b.name;
      }
  }
}

// The first generated kernel (default policy) for which `want` holds.
FuzzKernel firstKernel(const std::function<bool(const FuzzKernel &)> &want) {
  for (int i = 0; i < 300; ++i) {
    FuzzKernel k = generateKernel({}, seedOf(i));
    if (want(k))
      return k;
  }
  ADD_FAILURE() << "no kernel found";
  return generateKernel({}, seedOf(0));
}

const BufferDesc *inputX0(const FuzzKernel &k) {
  for (const BufferDesc &b : k.buffers)
    if (b.name == "X0")
      return &b;
  return nullptr;
}

// A hand-written kernel in the generator's format: Y = BODY(x0), 1-D.
FuzzKernel handKernel(const std::string &value, int n = 16) {
  FuzzKernel k;
  k.kernelName = "fuzz";
  k.defines = {{"TS", "8"}};
  k.source = "__global__ void fuzz(int32 *X0, int32 *Y, int32 N) {\n"
             "  int pm = get_program_id(0);\n"
             "  int rm[TS] = pm * TS + 0 ... TS;\n  bool mask[TS] = rm < N;\n"
             "  int32 *pX0[TS] = X0 + rm;\n  int32 *pY[TS] = Y + rm;\n"
             "  int32 x0[TS] = mask ? *pX0 : 0;\n"
             "  *?(mask) pY = " + value + ";\n}\n";
  std::vector<double> data, fill(static_cast<size_t>(n), 3);
  for (int i = 0; i < n; ++i)
    data.push_back(i % 5 + 1);
  k.buffers = {{"X0", DType::I32, {n}, data, false, {"N"}}, {"Y", DType::I32, {n}, fill, true, {"N"}}};
  k.scalars = {{"N", DType::I32, static_cast<double>(n)}};
  k.grid = {(n + 7) / 8, 1, 1};
  k.gridAxes = {{"N", "TS"}};
  return k;
}

} // namespace

// "The source contains max(" (and the kernel stays well-defined): the
// reducer deletes the statements that do not matter.
TEST(FuzzReducer, KeepsAPlantedSourcePredicateWhileDeletingStatements) {
  auto planted = [](const FuzzKernel &k) {
    return k.source.find("max(") != std::string::npos && passes(k);
  };
  FuzzKernel k = firstKernel([&](const FuzzKernel &c) { return lineCount(c) > 14 && planted(c); });
  ReduceStats stats;
  FuzzKernel r = reduceKernel(k, planted, 20, &stats);
  EXPECT_TRUE(planted(r));
  EXPECT_LT(lineCount(r), lineCount(k)) << r.source;
  EXPECT_LT(r.source.size(), k.source.size());
  EXPECT_GT(stats.accepted, 0);
  EXPECT_GE(stats.candidates, stats.accepted);
  expectConsistent(r);
}

// "The optimised IR still has a reduction": tiles are halved and sizes cut
// (the grid following), and the result still runs without a trap.
TEST(FuzzReducer, ShrinksTilesAndSizesWithTheGrid) {
  auto planted = [](const FuzzKernel &k) {
    return passes(k) && failureSignature(k, "p").find("reduce.") != std::string::npos;
  };
  FuzzKernel k = firstKernel([&](const FuzzKernel &c) {
    return tileProduct(c) >= 8 && c.buffers.front().data.size() >= 8 && planted(c);
  });
  FuzzKernel r = reduceKernel(k, planted, 20);
  EXPECT_TRUE(planted(r));
  EXPECT_LT(tileProduct(r), tileProduct(k)) << describeKernel(r);
  EXPECT_LT(r.buffers.front().data.size(), k.buffers.front().data.size());
  EXPECT_LE(lineCount(r), lineCount(k));
  expectConsistent(r);
}

// "Input element 3 is not zero": every other element becomes 0 (the failing
// element's neighbourhood is what is left), and unused parameters go.
TEST(FuzzReducer, ReducesDataToTheElementThatMatters) {
  FuzzKernel k = handKernel("x0 * 2 + 1");
  auto planted = [](const FuzzKernel &c) {
    const BufferDesc *x = inputX0(c);
    return x && x->data.size() > 3 && x->data[3] != 0 && passes(c);
  };
  ASSERT_TRUE(planted(k));
  FuzzKernel r = reduceKernel(k, planted, 20);
  ASSERT_NE(inputX0(r), nullptr);
  const std::vector<double> &d = inputX0(r)->data;
  EXPECT_EQ(std::count_if(d.begin(), d.end(), [](double v) { return v != 0; }), 1);
  EXPECT_NE(d[3], 0);
  EXPECT_LE(d.size(), k.buffers.front().data.size());
  expectConsistent(r);
}

// A predicate that takes 20 ms and always holds: the reducer stops within its
// budget (plus one predicate call).
TEST(FuzzReducer, RespectsTheTimeBudget) {
  FuzzKernel k = generateKernel({}, seedOf(3));
  auto slow = [](const FuzzKernel &) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return true;
  };
  ReduceStats stats;
  auto start = std::chrono::steady_clock::now();
  reduceKernel(k, slow, 0.3, &stats);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took, 0.3 + 0.2);
  EXPECT_GT(stats.candidates, 0);
  EXPECT_LE(stats.seconds, took);
}

// Nothing to keep: the kernel comes back unchanged.
TEST(FuzzReducer, ReturnsTheKernelWhenNoCandidateFails) {
  FuzzKernel k = handKernel("x0 + 1");
  ReduceStats stats;
  FuzzKernel r = reduceKernel(k, [](const FuzzKernel &) { return false; }, 5, &stats);
  EXPECT_EQ(r.source, k.source);
  EXPECT_EQ(r.buffers.front().data, k.buffers.front().data);
  EXPECT_EQ(stats.accepted, 0);
  EXPECT_GT(stats.candidates, 0);
}

// Same ops (other constants): same signature; other ops, property or output
// dtype: another one.
TEST(FuzzReducer, SignaturesGroupKernelsByOps) {
  std::string a = failureSignature(handKernel("x0 * 2 + 1"), "passes");
  EXPECT_EQ(a, failureSignature(handKernel("x0 * 3 + 5"), "passes"));
  EXPECT_NE(a, failureSignature(handKernel("max(x0, 1) + 1"), "passes"));
  EXPECT_NE(a, failureSignature(handKernel("x0 * 2 + 1"), "threads"));
  EXPECT_EQ(a.rfind("passes|i32|", 0), 0u) << a;
  EXPECT_NE(a.find("mul"), std::string::npos) << a;
  EXPECT_NE(a.find("store"), std::string::npos) << a;
  FuzzKernel other = handKernel("x0 * 2 + 1");
  other.buffers.back().dtype = DType::F32;
  other.source.replace(other.source.find("int32 *Y"), 8, "float *Y");
  other.source.replace(other.source.find("int32 *pY"), 9, "float *pY");
  EXPECT_NE(a, failureSignature(other, "passes"));
  EXPECT_NE(failureSignature(handKernel("x0 +"), "passes").find("no-ir"), std::string::npos);
}
