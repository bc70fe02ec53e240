// The tutorial's kernels (examples/*.tc) run on the reference interpreter and
// compared against plain C++ loops in double precision written here: vector
// add (N not a multiple of SIZE), transpose, masked transpose (M, N not
// multiples of the tiles), matmul plain / prefetch / remat over several tile
// sizes, matmul_trans for all four AT/BT combinations. Inputs are small
// integers stored in floats, so every result is exact, and general values
// compared with a K-scaled tolerance (docs/fuzz.md). Buffers are sized
// exactly, so any wrongly masked access traps, and padding between rows
// (leading dimensions) is filled with a sentinel that must survive.
#include "interp/InterpreterBackend.h"
#include "runtime/Launch.h"
#include "tests/unit/SourceRoot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using tc::DType;
using tc::HostArray;
using tc::RunResult;
using tc::ScalarValue;

constexpr double kSentinel = -77.0; // in every dtype used here (int8 too)

DType dtypeOf(const std::string &type) {
  if (type == "float") return DType::F32;
  if (type == "half") return DType::F16;
  if (type == "bf16") return DType::BF16;
  if (type == "double") return DType::F64;
  if (type == "int8") return DType::I8;
  return DType::I32; // "int"
}

// `v` rounded to nearest even into float dtype t, independently of the
// implementation: the host for f32, GCC's soft-fp for f16, nearbyint on a
// scaled value for bf16.
double roundTo(DType t, double v) {
  switch (t) {
  case DType::F32: return static_cast<float>(v);
  case DType::F16: return static_cast<double>(static_cast<_Float16>(v));
  case DType::BF16: {
    if (v == 0 || std::isnan(v) || std::isinf(v))
      return v;
    int e;
    std::frexp(v, &e);
    int q = std::max(e - 1, -126) - 7;
    double r = std::ldexp(std::nearbyint(std::ldexp(v, -q)), q);
    return std::fabs(r) > std::ldexp(255.0, 120) ? std::copysign(INFINITY, v) : r;
  }
  default: return v;
  }
}

std::shared_ptr<tc::CompiledKernel> compileExample(const std::string &name, tc::DefineList defines) {
  tc::CompileRequest req;
  req.path = tc::test::examplePath(name);
  if (req.path.empty()) {
    ADD_FAILURE() << tc::test::sourceRootProblem();
    return nullptr;
  }
  req.defines = std::move(defines);
  tc::CompileOutcome out = tc::compileKernel(req);
  EXPECT_TRUE(out.ok()) << name << ":\n" << out.diagnostics;
  return out.kernel;
}

std::string describe(const RunResult &r) {
  switch (r.status) {
  case RunResult::Status::Ok: return "ok";
  case RunResult::Status::Error: return "error: " + r.error;
  case RunResult::Status::Trapped: return "trap:\n" + (r.trap ? r.trap->render() : "(no trap)");
  }
  return "?";
}

RunResult launch(const tc::CompiledKernel &k, std::array<int64_t, 3> grid, tc::LaunchArgs &args,
                 unsigned threads = 1) {
  tc::RunOptions opts;
  opts.threads = threads;
  return tc::createInterpreterBackend()->launch(k, grid, args, opts);
}

// Fills `a` with integers in [lo, hi] or uniform values in [-1, 1).
void fill(HostArray &a, std::mt19937_64 &rng, bool smallInts, int lo = -3, int hi = 3) {
  std::uniform_int_distribution<int> ints(lo, hi);
  std::uniform_real_distribution<double> reals(-1.0, 1.0);
  for (int64_t i = 0; i < a.numElements(); ++i)
    a.setDouble(i, smallInts ? ints(rng) : reals(rng));
}

HostArray sentinels(DType t, int64_t n) {
  HostArray a = HostArray::zeros(t, {n});
  for (int64_t i = 0; i < n; ++i)
    a.setDouble(i, kSentinel);
  return a;
}

//===-- Vector addition ----------------------------------------------------------===//

struct AddCase {
  std::string type;
  int size;
  int64_t n;
  bool smallInts;
};

void runVectorAdd(const AddCase &c, unsigned threads) {
  SCOPED_TRACE("TYPE=" + c.type + " SIZE=" + std::to_string(c.size) + " N=" + std::to_string(c.n));
  auto k = compileExample("vector_add.tc", {{"SIZE", std::to_string(c.size)}, {"TYPE", c.type}});
  ASSERT_TRUE(k);
  DType t = dtypeOf(c.type);
  std::mt19937_64 rng(static_cast<uint64_t>(c.n * 31 + c.size));
  HostArray a = HostArray::zeros(t, {c.n}), b = HostArray::zeros(t, {c.n});
  HostArray out = HostArray::zeros(t, {c.n}); // exactly N: a wrong mask traps
  bool isInt = t == DType::I32;
  fill(a, rng, c.smallInts || isInt, isInt ? -1000000000 : -3, isInt ? 1000000000 : 3);
  fill(b, rng, c.smallInts || isInt, isInt ? -1000000000 : -3, isInt ? 1000000000 : 3);
  tc::LaunchArgs args;
  args.setScalar("N", ScalarValue::ofInt(DType::I32, c.n));
  args.setBuffer("a", &a);
  args.setBuffer("b", &b);
  args.setBuffer("c", &out);
  tc::GridOutcome grid = tc::evalGrid({{"cdiv(N, SIZE)"}}, *k, args);
  ASSERT_TRUE(grid.dims) << grid.error;
  EXPECT_EQ((*grid.dims)[0], (c.n + c.size - 1) / c.size);
  RunResult r = launch(*k, *grid.dims, args, threads);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << describe(r);
  for (int64_t i = 0; i < c.n; ++i) {
    double want;
    if (isInt) { // int32 wrap-around
      int64_t s = static_cast<int64_t>(a.getDouble(i)) + static_cast<int64_t>(b.getDouble(i));
      want = static_cast<double>(static_cast<int32_t>(static_cast<uint32_t>(s)));
    } else {
      want = roundTo(t, a.getDouble(i) + b.getDouble(i)); // one IEEE add, correctly rounded
    }
    ASSERT_EQ(out.getDouble(i), want) << "c[" << i << "] = " << a.getDouble(i) << " + " << b.getDouble(i);
  }
}

TEST(SeedKernels, VectorAddMasksTheTail) {
  for (std::string type : {"float", "half", "bf16", "double", "int"})
    for (int size : {32, 128, 1024})
      for (int64_t n : {1, 1000, 1024, 4099})
        for (bool smallInts : {true, false})
          runVectorAdd({type, size, n, smallInts}, 1);
}

TEST(SeedKernels, VectorAddWithThreads) {
  runVectorAdd({"float", 64, 5000, false}, 4);
  runVectorAdd({"half", 32, 777, false}, 3);
}

TEST(SeedKernels, VectorAddFixed) {
  auto k = compileExample("vector_add_fixed.tc", {});
  ASSERT_TRUE(k);
  const int64_t n = 32 * 13;
  std::mt19937_64 rng(4);
  HostArray a = HostArray::zeros(DType::F32, {n}), b = a, c = a;
  fill(a, rng, false);
  fill(b, rng, false);
  tc::LaunchArgs args;
  args.setScalar("N", ScalarValue::ofInt(DType::I32, n));
  args.setBuffer("a", &a);
  args.setBuffer("b", &b);
  args.setBuffer("c", &c);
  RunResult r = launch(*k, {n / 32, 1, 1}, args);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << describe(r);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(c.getDouble(i), roundTo(DType::F32, a.getDouble(i) + b.getDouble(i))) << i;
}

//===-- Transposition ------------------------------------------------------------===//

struct TransposeCase {
  std::string file, type;
  int tm, tn;
  int64_t m, n, ldx, ldy;
};

// X(m, n) is X[m + n * ldx] (N rows of ldx); Y(m, n) is Y[m * ldy + n].
void runTranspose(const TransposeCase &c) {
  SCOPED_TRACE(c.file + " TYPE=" + c.type + " TM=" + std::to_string(c.tm) + " TN=" + std::to_string(c.tn) +
               " M=" + std::to_string(c.m) + " N=" + std::to_string(c.n) + " ldx=" + std::to_string(c.ldx) +
               " ldy=" + std::to_string(c.ldy));
  auto k = compileExample(c.file, {{"TM", std::to_string(c.tm)}, {"TN", std::to_string(c.tn)}, {"TYPE", c.type}});
  ASSERT_TRUE(k);
  DType t = dtypeOf(c.type);
  // X ends right after its last element, so an unmasked read past it traps.
  int64_t xSize = (c.n - 1) * c.ldx + c.m, ySize = (c.m - 1) * c.ldy + c.n;
  HostArray x = HostArray::zeros(t, {xSize}), y = sentinels(t, ySize);
  std::mt19937_64 rng(static_cast<uint64_t>(c.m * 1000 + c.n));
  fill(x, rng, t == DType::I8, -100, 100);
  tc::LaunchArgs args;
  args.setBuffer("X", &x);
  args.setBuffer("Y", &y);
  args.setScalar("M", ScalarValue::ofInt(DType::I32, c.m));
  args.setScalar("N", ScalarValue::ofInt(DType::I32, c.n));
  args.setScalar("ldx", ScalarValue::ofInt(DType::I32, c.ldx));
  args.setScalar("ldy", ScalarValue::ofInt(DType::I32, c.ldy));
  std::array<int64_t, 3> grid{(c.m + c.tm - 1) / c.tm, (c.n + c.tn - 1) / c.tn, 1};
  RunResult r = launch(*k, grid, args);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << describe(r);
  for (int64_t i = 0; i < ySize; ++i) {
    int64_t m = i / c.ldy, n = i % c.ldy;
    double want = n < c.n ? x.getDouble(m + n * c.ldx) : kSentinel;
    ASSERT_EQ(y.getDouble(i), want) << "Y[" << m << ", " << n << "]";
  }
}

TEST(SeedKernels, Transpose) {
  for (std::string type : {"float", "half", "int8"}) {
    runTranspose({"transpose.tc", type, 16, 16, 32, 48, 40, 56});
    runTranspose({"transpose.tc", type, 32, 16, 64, 16, 64, 16});
    runTranspose({"transpose.tc", type, 16, 64, 16, 128, 24, 136});
  }
}

TEST(SeedKernels, TransposeMaskedWithRaggedEdges) {
  for (std::string type : {"float", "half", "int8"}) {
    runTranspose({"transpose_masked.tc", type, 16, 16, 37, 50, 37, 50});  // tight
    runTranspose({"transpose_masked.tc", type, 32, 16, 5, 70, 9, 73});   // padded rows
    runTranspose({"transpose_masked.tc", type, 16, 32, 33, 1, 33, 1});   // one column
    runTranspose({"transpose_masked.tc", type, 16, 16, 32, 32, 32, 32}); // exact multiples
  }
}

//===-- Matrix multiplication ------------------------------------------------------===//

struct MatmulCase {
  std::string file, type;
  int tm, tn, tk;
  int64_t m, n, k;
  bool at = false, bt = false; // matmul_trans only
  bool smallInts = true;
  int64_t pad = 8; // extra elements per row of A, B, C (a multiple of 8)
};

std::string describeCase(const MatmulCase &c) {
  std::ostringstream os;
  os << c.file << " TYPE=" << c.type << " TM=" << c.tm << " TN=" << c.tn << " TK=" << c.tk << " M=" << c.m
     << " N=" << c.n << " K=" << c.k;
  if (c.file == "matmul_trans.tc")
    os << " AT=" << c.at << " BT=" << c.bt;
  os << (c.smallInts ? " small ints" : " general") << " pad=" << c.pad;
  return os.str();
}

void runMatmul(const MatmulCase &c) {
  SCOPED_TRACE(describeCase(c));
  tc::DefineList defs = {{"TM", std::to_string(c.tm)}, {"TN", std::to_string(c.tn)},
                         {"TK", std::to_string(c.tk)}, {"TYPE", c.type}};
  if (c.file == "matmul_trans.tc") {
    defs.push_back({"AT", c.at ? "1" : "0"});
    defs.push_back({"BT", c.bt ? "1" : "0"});
  }
  auto k = compileExample(c.file, defs);
  ASSERT_TRUE(k);
  DType t = dtypeOf(c.type);
  // Storage: A is M x K (AT: K x M), B is K x N (BT: N x K), C is M x N, each
  // row padded by `pad`; the buffers end right after the last element.
  int64_t aRows = c.at ? c.k : c.m, aCols = c.at ? c.m : c.k;
  int64_t bRows = c.bt ? c.n : c.k, bCols = c.bt ? c.k : c.n;
  int64_t lda = aCols + c.pad, ldb = bCols + c.pad, ldc = c.n + c.pad;
  HostArray a = HostArray::zeros(t, {(aRows - 1) * lda + aCols});
  HostArray b = HostArray::zeros(t, {(bRows - 1) * ldb + bCols});
  HostArray out = sentinels(t, (c.m - 1) * ldc + c.n);
  std::mt19937_64 rng(static_cast<uint64_t>(c.m * 7 + c.n * 11 + c.k * 13 + c.tm + c.at * 2 + c.bt));
  fill(a, rng, c.smallInts, -3, 3);
  fill(b, rng, c.smallInts, -3, 3);
  auto A = [&](int64_t m, int64_t kk) { return a.getDouble(c.at ? kk * lda + m : m * lda + kk); };
  auto B = [&](int64_t kk, int64_t n) { return b.getDouble(c.bt ? n * ldb + kk : kk * ldb + n); };

  tc::LaunchArgs args;
  args.setBuffer("A", &a);
  args.setBuffer("B", &b);
  args.setBuffer("C", &out);
  for (auto [name, v] : {std::pair<const char *, int64_t>{"M", c.m}, {"N", c.n}, {"K", c.k}, {"lda", lda},
                         {"ldb", ldb}, {"ldc", ldc}})
    args.setScalar(name, ScalarValue::ofInt(DType::I32, v));
  RunResult r = launch(*k, {c.m / c.tm, c.n / c.tn, 1}, args);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << describe(r);

  size_t bad = 0;
  for (int64_t i = 0; i < out.numElements(); ++i) {
    int64_t m = i / ldc, n = i % ldc;
    double got = out.getDouble(i);
    if (n >= c.n) {
      if (got != kSentinel && ++bad <= 5)
        ADD_FAILURE() << "padding C[" << m << ", " << n << "] was written: " << got;
      continue;
    }
    double sum = 0, mag = 0;
    for (int64_t kk = 0; kk < c.k; ++kk) {
      sum += A(m, kk) * B(kk, n); // exact for small integers
      mag += std::fabs(A(m, kk) * B(kk, n));
    }
    if (c.smallInts) {
      if (got != sum && ++bad <= 5)
        ADD_FAILURE() << "C[" << m << ", " << n << "] = " << got << ", want exactly " << sum;
      continue;
    }
    // fp32 accumulation: |error| <= K * 2^-24 * sum |a b| (x2 for the products),
    // then one rounding into the output type.
    double tol = 2.0 * static_cast<double>(c.k + 1) * 0x1p-24 * mag + std::fabs(sum - roundTo(t, sum)) +
                 (t == DType::F16 ? 0x1p-11 : t == DType::BF16 ? 0x1p-8 : 0x1p-24) * std::fabs(sum) + 1e-30;
    if (!(std::fabs(got - sum) <= tol) && ++bad <= 5)
      ADD_FAILURE() << "C[" << m << ", " << n << "] = " << got << ", want " << sum << " +- " << tol;
  }
}

struct Tiles {
  int tm, tn, tk;
};
const Tiles kTiles[] = {{16, 16, 8}, {32, 16, 16}, {16, 32, 32}, {64, 64, 32}};

TEST(SeedKernels, MatmulPlainPrefetchRemat) {
  for (std::string file : {"matmul.tc", "matmul_prefetch.tc", "matmul_remat.tc"})
    for (const Tiles &tl : kTiles)
      for (std::string type : {"float", "half"}) {
        // Tight rows (pad 0): the prefetching kernels' masked-off loads of the
        // last iteration point past the end of A and B.
        bool big = tl.tm >= 64; // keep the 64 x 64 x 32 tiles to few programs
        runMatmul({file, type, tl.tm, tl.tn, tl.tk, (big ? 1 : 2) * tl.tm, (big ? 1 : 3) * tl.tn,
                   (big ? 2 : 3) * tl.tk, false, false, true, 0});
        runMatmul({file, type, tl.tm, tl.tn, tl.tk, tl.tm, 2 * tl.tn, (big ? 2 : 4) * tl.tk, false, false,
                   true, 8});
      }
}

TEST(SeedKernels, MatmulGeneralValues) {
  for (std::string file : {"matmul.tc", "matmul_prefetch.tc"})
    for (std::string type : {"float", "half", "bf16"})
      runMatmul({file, type, 32, 16, 16, 64, 32, 64, false, false, false, 8});
}

TEST(SeedKernels, MatmulOtherTypes) {
  // bf16 and int8 results stay exact for small K: |sum| <= 9 K.
  runMatmul({"matmul.tc", "bf16", 16, 16, 8, 32, 32, 8, false, false, true, 8});
  runMatmul({"matmul_prefetch.tc", "int8", 16, 16, 8, 32, 16, 8, false, false, true, 0});
  runMatmul({"matmul.tc", "double", 16, 32, 8, 32, 32, 24, false, false, true, 8});
}

TEST(SeedKernels, MatmulTransAllFourLayouts) {
  for (bool at : {false, true})
    for (bool bt : {false, true})
      for (std::string type : {"float", "half"}) {
        runMatmul({"matmul_trans.tc", type, 16, 16, 8, 32, 48, 24, at, bt, true, 0});
        runMatmul({"matmul_trans.tc", type, 32, 16, 16, 64, 16, 48, at, bt, true, 8});
        runMatmul({"matmul_trans.tc", type, 64, 64, 32, 64, 128, 64, at, bt, false, 8});
      }
}

} // namespace
