// The interpreter's fused paths (interp/Interpreter.h, "Fusion"): a load
// whose one use is an elementwise op reached before any store returns a view
// of the buffer instead of a copy, and an elementwise binary op whose one use
// is the store right after it writes its lanes straight into the destination.
// A splat of a kernel parameter is made once per frame (one thread's
// programs) and shared by its later programs (cachedOp).
// These tests drive the cases where the fused path must step aside (a partial
// mask, poison operands, a destination that partly overlaps a loaded source,
// a store between a load and its use) or must keep the unfused behaviour
// (a trap in the fused store writes nothing, the step limit, --trace, a race
// report, a read-only destination), each against values worked out by hand.
#include "interp/InterpreterBackend.h"
#include "runtime/Launch.h"

#include <gtest/gtest.h>

#include <sstream>

namespace {

using tc::DType;
using tc::HostArray;
using tc::RunResult;
using tc::ScalarValue;
using tc::TrapKind;

std::shared_ptr<tc::CompiledKernel> compileTc(const std::string &src) {
  tc::CompileRequest req;
  req.sourceName = "k.tc";
  req.sourceText = src;
  tc::CompileOutcome out = tc::compileKernel(req);
  EXPECT_TRUE(out.ok()) << out.diagnostics;
  return out.kernel;
}

struct Launch {
  tc::LaunchArgs args;
  tc::RunOptions opts;
  std::ostringstream out;
  Launch() { opts.out = &out; }
  RunResult run(const tc::CompiledKernel &k, std::array<int64_t, 3> grid = {1, 1, 1}) {
    auto backend = tc::createInterpreterBackend();
    return backend->launch(k, grid, args, opts);
  }
};

HostArray iota(DType t, int64_t n, int64_t from = 0) {
  HostArray a = HostArray::zeros(t, {n});
  for (int64_t i = 0; i < n; ++i)
    a.setDouble(i, static_cast<double>(from + i));
  return a;
}

// The vector add of examples/vector_add.tc with 8-lane programs.
const char *kAdd = R"(
__global__ void add(int N, float *a, float *b, float *c) {
  int off[8] = get_program_id(0) * 8 + (0 ... 8);
  bool check[8] = off < N;
  *?(check)(c + off) = *?(check)(a + off) + *?(check)(b + off);
}
)";

TEST(InterpFusion, VectorAddWithAPartialLastProgram) {
  // n = 20 over three programs of 8: programs 0 and 1 take the fused path,
  // program 2's mask is true in lanes 0-3 only (the unfused path), and
  // c[20..23] is never written.
  auto k = compileTc(kAdd);
  ASSERT_TRUE(k);
  for (bool race : {false, true}) {
    Launch l;
    l.opts.raceCheck = race;
    HostArray a = iota(DType::F32, 24, 1), b = iota(DType::F32, 24, 100);
    HostArray c = HostArray::zeros(DType::F32, {24});
    c.setDouble(21, -5);
    l.args.setScalar("N", ScalarValue::ofInt(DType::I32, 20));
    l.args.setBuffer("a", &a);
    l.args.setBuffer("b", &b);
    l.args.setBuffer("c", &c);
    RunResult r = l.run(*k, {3, 1, 1});
    ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
    for (int i = 0; i < 24; ++i)
      EXPECT_EQ(c.getDouble(i), i < 20 ? (1 + i) + (100 + i) : i == 21 ? -5 : 0) << "lane " << i;
  }
}

TEST(InterpFusion, InPlaceAddIntoALoadedSource) {
  // a = a + b: the destination is exactly the first operand's bytes.
  auto k = compileTc(R"(
__global__ void f(float *a, float *b) {
  int r[16] = 0 ... 16;
  *(a + r) = *(a + r) + *(b + r);
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray a = iota(DType::F32, 16, 1), b = iota(DType::F32, 16, 1000);
  l.args.setBuffer("a", &a);
  l.args.setBuffer("b", &b);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(a.getDouble(i), (1 + i) + (1000 + i)) << "lane " << i;
}

TEST(InterpFusion, DestinationThatPartlyOverlapsASourceSeesTheOldValues) {
  // x[32 + s + i] = x[32 + i] + 1000 * (i + 1) for i in 0..63: every lane
  // reads x as it was before the store (loads first, then the store), whether
  // the destination starts after the source (s = 1, 17) or before it (s = -3).
  // (64 lanes: more than one block of the lane loops.)
  for (int s : {1, 17, -3}) {
    auto k = compileTc(R"(
__global__ void f(int *x, int s) {
  int r[64] = 0 ... 64;
  *(x + 32 + s + r) = *(x + 32 + r) + (r + 1) * 1000;
}
)");
    ASSERT_TRUE(k);
    Launch l;
    HostArray x = iota(DType::I32, 128);
    l.args.setBuffer("x", &x);
    l.args.setScalar("s", ScalarValue::ofInt(DType::I32, s));
    RunResult r = l.run(*k);
    ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
    for (int e = 0; e < 128; ++e) {
      int i = e - 32 - s; // the lane that stored element e, if any
      int want = i >= 0 && i < 64 ? (32 + i) + (i + 1) * 1000 : e;
      EXPECT_EQ(x.getDouble(e), want) << "s = " << s << ", element " << e;
    }
  }
}

TEST(InterpFusion, StoreBetweenALoadAndItsUseIsSeenNot) {
  // v is loaded, then x is overwritten, then v is used: v holds the old
  // values (the load's view is not used when a store comes first).
  auto k = compileTc(R"(
__global__ void f(float *x, float *y) {
  int r[8] = 0 ... 8;
  float v[8] = *(x + r);
  *(x + r) = 0;
  *(y + r) = v * 3;
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray x = iota(DType::F32, 8, 1), y = HostArray::zeros(DType::F32, {8});
  l.args.setBuffer("x", &x);
  l.args.setBuffer("y", &y);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(x.getDouble(i), 0) << "lane " << i;
    EXPECT_EQ(y.getDouble(i), 3 * (1 + i)) << "lane " << i;
  }
}

TEST(InterpFusion, LoopBodyFusesAndAccumulates) {
  // A fused load-add-store inside a for loop: y += x four times.
  auto k = compileTc(R"(
__global__ void f(float *x, float *y) {
  int r[8] = 0 ... 8;
  for (int t = 0; t < 4; t++) {
    *(y + r) = *(y + r) + *(x + r);
  }
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray x = iota(DType::F32, 8, 1), y = iota(DType::F32, 8, 10);
  l.args.setBuffer("x", &x);
  l.args.setBuffer("y", &y);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(y.getDouble(i), (10 + i) + 4 * (1 + i)) << "lane " << i;
}

TEST(InterpFusion, StorePastTheEndTrapsAndWritesNothing) {
  // c has 12 elements; the store reaches c[8..15]: out_of_bounds at lane 4
  // (c + 12), and no lane is written (c[8..11] stay -1).
  auto k = compileTc(kAdd);
  ASSERT_TRUE(k);
  Launch l;
  HostArray a = iota(DType::F32, 16), b = iota(DType::F32, 16);
  HostArray c = HostArray::zeros(DType::F32, {12});
  for (int i = 0; i < 12; ++i)
    c.setDouble(i, -1);
  l.args.setScalar("N", ScalarValue::ofInt(DType::I32, 16));
  l.args.setBuffer("a", &a);
  l.args.setBuffer("b", &b);
  l.args.setBuffer("c", &c);
  RunResult r = l.run(*k, {2, 1, 1});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::OutOfBounds);
  EXPECT_EQ(r.trap->programId, (std::array<int64_t, 3>{1, 0, 0}));
  EXPECT_EQ(r.trap->lane, 4);
  EXPECT_EQ(r.trap->line, 5u);
  EXPECT_NE(r.trap->message.find("store of 4 bytes"), std::string::npos) << r.trap->message;
  for (int i = 8; i < 12; ++i)
    EXPECT_EQ(c.getDouble(i), -1) << "element " << i;
}

TEST(InterpFusion, PoisonOperandTrapsAtTheStore) {
  // v is undefined where m is false (lanes 5-7, no `other`); v + w stored
  // without a mask traps undefined_value at lane 5, before anything is written.
  auto k = compileTc(R"(
__global__ void f(float *x, float *w, float *y) {
  int r[8] = 0 ... 8;
  bool m[8] = r < 5;
  float v[8] = *?(m)(x + r);
  *(y + r) = v + *(w + r);
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray x = iota(DType::F32, 8), w = iota(DType::F32, 8), y = HostArray::zeros(DType::F32, {8});
  l.args.setBuffer("x", &x);
  l.args.setBuffer("w", &w);
  l.args.setBuffer("y", &y);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::UndefinedValue);
  EXPECT_EQ(r.trap->lane, 5);
  EXPECT_NE(r.trap->message.find("the value of a store is undefined"), std::string::npos)
      << r.trap->message;
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(y.getDouble(i), 0) << "lane " << i;
}

TEST(InterpFusion, PoisonOperandUnderTheSameMaskIsStored) {
  // The same value stored under m: the defined lanes 0-4 are written.
  auto k = compileTc(R"(
__global__ void f(float *x, float *w, float *y) {
  int r[8] = 0 ... 8;
  bool m[8] = r < 5;
  float v[8] = *?(m)(x + r);
  *?(m)(y + r) = v + *(w + r);
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray x = iota(DType::F32, 8, 1), w = iota(DType::F32, 8, 10);
  HostArray y = HostArray::zeros(DType::F32, {8});
  l.args.setBuffer("x", &x);
  l.args.setBuffer("w", &w);
  l.args.setBuffer("y", &y);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(y.getDouble(i), i < 5 ? (1 + i) + (10 + i) : 0) << "lane " << i;
}

TEST(InterpFusion, StepLimitAtTheFusedStoreWritesNothing) {
  // A step limit that stops the program at the fused store (its last op but
  // the return): the store writes nothing, and the trap names its line.
  auto k = compileTc(R"(
__global__ void f(float *x, float *y) {
  int r[8] = 0 ... 8;
  *(y + r) = *(x + r) * *(x + r + 8);
}
)");
  ASSERT_TRUE(k);
  Launch full;
  HostArray x = iota(DType::F32, 16), y = HostArray::zeros(DType::F32, {8});
  full.args.setBuffer("x", &x);
  full.args.setBuffer("y", &y);
  RunResult ok = full.run(*k);
  ASSERT_EQ(ok.status, RunResult::Status::Ok) << ok.error;
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(y.getDouble(i), i * (i + 8)) << "lane " << i;
  // Find the smallest limit that lets the program finish; one less must stop
  // it at its last op (the return), two less at the store.
  uint64_t enough = 0;
  for (uint64_t s = 1; s < 64 && !enough; ++s) {
    Launch l;
    HostArray y2 = HostArray::zeros(DType::F32, {8});
    l.args.setBuffer("x", &x);
    l.args.setBuffer("y", &y2);
    l.opts.maxSteps = s;
    if (l.run(*k).status == RunResult::Status::Ok)
      enough = s;
  }
  ASSERT_GT(enough, 2u);
  Launch l;
  HostArray y3 = HostArray::zeros(DType::F32, {8});
  l.args.setBuffer("x", &x);
  l.args.setBuffer("y", &y3);
  l.opts.maxSteps = enough - 2;
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::StepLimit);
  EXPECT_EQ(r.trap->line, 4u);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(y3.getDouble(i), 0) << "lane " << i;
}

TEST(InterpFusion, TraceShowsTheFusedOpsValue) {
  auto k = compileTc(R"(
__global__ void f(float *x, float *y) {
  int r[4] = 0 ... 4;
  *(y + r) = *(x + r) + 0.5;
}
)");
  ASSERT_TRUE(k);
  Launch l;
  l.opts.trace = true;
  HostArray x = iota(DType::F32, 4, 1), y = HostArray::zeros(DType::F32, {4});
  l.args.setBuffer("x", &x);
  l.args.setBuffer("y", &y);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
  std::string text = l.out.str();
  EXPECT_NE(text.find("= add : tile<4xf32> min=1.5 max=4.5 first=[1.5, 2.5, 3.5, 4.5]"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("store"), std::string::npos) << text;
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(y.getDouble(i), 1.5 + i) << "lane " << i;
}

TEST(InterpFusion, OverlappingFusedStoresRace) {
  // Program 1's tile starts at element 4, inside program 0's: a data race
  // at program 1's lane 0, whose store writes nothing.
  auto k = compileTc(R"(
__global__ void f(float *x, float *y) {
  int off[8] = get_program_id(0) * 4 + (0 ... 8);
  *(y + off) = *(x + off) + 1;
}
)");
  ASSERT_TRUE(k);
  for (int threads : {1, 2}) {
    Launch l;
    l.opts.raceCheck = true;
    l.opts.threads = threads;
    HostArray x = iota(DType::F32, 12), y = HostArray::zeros(DType::F32, {12});
    l.args.setBuffer("x", &x);
    l.args.setBuffer("y", &y);
    RunResult r = l.run(*k, {2, 1, 1});
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << "threads " << threads;
    EXPECT_EQ(r.trap->kind, TrapKind::DataRace);
    EXPECT_NE(r.trap->message.find("store to y[4]"), std::string::npos) << r.trap->message;
  }
}

TEST(InterpFusion, ReadOnlyDestinationTrapsBeforeWriting) {
  auto k = compileTc(R"(
__global__ void f(float *x, float *y) {
  int r[8] = 0 ... 8;
  *(y + r) = *(x + r) - 1;
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray x = iota(DType::F32, 8), y = iota(DType::F32, 8, 50);
  y.readOnly = true;
  l.args.setBuffer("x", &x);
  l.args.setBuffer("y", &y);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::InvalidLaunch);
  EXPECT_NE(r.trap->message.find("a read-only array"), std::string::npos) << r.trap->message;
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(y.getDouble(i), 50 + i) << "lane " << i;
}

TEST(InterpFusion, IntegerOpsWithAffineOperandsAndAllDtypes) {
  // x * r stored for i8 (wrapping), i16, i64 and f64: the fused op reads the
  // affine operand's lanes; y = x * r + ... per dtype, as the unfused op does.
  auto k8 = compileTc(R"(
__global__ void f(char *x, char *y) {
  int r[16] = 0 ... 16;
  *(y + r) = *(x + r) * (char)r;
}
)");
  ASSERT_TRUE(k8);
  Launch l;
  HostArray x = iota(DType::I8, 16, 20), y = HostArray::zeros(DType::I8, {16});
  l.args.setBuffer("x", &x);
  l.args.setBuffer("y", &y);
  RunResult r = l.run(*k8);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(y.getDouble(i), static_cast<int8_t>((20 + i) * i)) << "lane " << i;
  auto k64 = compileTc(R"(
__global__ void f(long *x, long *y) {
  int r[16] = 0 ... 16;
  *(y + r) = *(x + r) - (long)r;
}
)");
  ASSERT_TRUE(k64);
  Launch l2;
  HostArray x2 = iota(DType::I64, 16, 7), y2 = HostArray::zeros(DType::I64, {16});
  l2.args.setBuffer("x", &x2);
  l2.args.setBuffer("y", &y2);
  RunResult r2 = l2.run(*k64);
  ASSERT_EQ(r2.status, RunResult::Status::Ok) << r2.error;
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(y2.getDouble(i), 7) << "lane " << i;
}

TEST(InterpFusion, SplatsOfParametersSharedAcrossPrograms) {
  // s, x and the splat of n are the same in every program: four programs of 8
  // on 1 and 2 threads, with the splat of s read as an affine tile (s * r) and
  // written out (s + v), and x's splat both as pointers and compared.
  auto k = compileTc(R"(
__global__ void f(float *x, float *y, int *z, int n, int s) {
  int pid = get_program_id(0);
  int off[8] = pid * 8 + (0 ... 8);
  bool m[8] = off < n;
  float v[8] = *?(m)(x + off);
  *?(m)(y + off) = v + s;
  *?(m)(z + off) = s * (0 ... 8) + (x + off > x + 12);
}
)");
  ASSERT_TRUE(k);
  for (unsigned threads : {1u, 2u}) {
    Launch l;
    l.opts.threads = threads;
    HostArray x = iota(DType::F32, 32, 1), y = HostArray::zeros(DType::F32, {32});
    HostArray z = HostArray::zeros(DType::I32, {32});
    l.args.setBuffer("x", &x);
    l.args.setBuffer("y", &y);
    l.args.setBuffer("z", &z);
    l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 30));
    l.args.setScalar("s", ScalarValue::ofInt(DType::I32, 5));
    RunResult r = l.run(*k, {4, 1, 1});
    ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
    for (int i = 0; i < 32; ++i) {
      EXPECT_EQ(y.getDouble(i), i < 30 ? 1 + i + 5 : 0) << "threads " << threads << ", " << i;
      EXPECT_EQ(z.getDouble(i), i < 30 ? 5 * (i % 8) + (i > 12) : 0)
          << "threads " << threads << ", " << i;
    }
  }
}

TEST(InterpFusion, ConstantsAndParametersCopiedPerThread) {
  // Each thread's frame copies the constants, ranges and parameters once
  // (threadCopy) and its later programs share the copy: six programs on 1, 2
  // and 3 threads, a constant inside a loop's body, a range as affine
  // offsets, and the same kernel launched again with other scalars (a copy
  // never outlives its launch). Expected: y[i] = x[i] * 2.5 + s + 3 * t for
  // i < n (t counted to 3 in the loop, a constant 3 added each time), z[i] =
  // (i % 8) * s + 7.
  auto k = compileTc(R"(
__global__ void f(float *x, float *y, int *z, int n, int s) {
  int pid = get_program_id(0);
  int off[8] = pid * 8 + (0 ... 8);
  bool m[8] = off < n;
  float v[8] = *?(m)(x + off);
  float acc[8] = v * 2.5f + s;
  for (int t = 0; t < 3; t += 1)
    acc = acc + 3;
  *?(m)(y + off) = acc;
  *?(m)(z + off) = (0 ... 8) * s + 7;
}
)");
  ASSERT_TRUE(k);
  for (unsigned threads : {1u, 2u, 3u})
    for (int launch = 0; launch < 2; ++launch) {
      int n = launch == 0 ? 45 : 30, s = launch == 0 ? 5 : -2;
      Launch l;
      l.opts.threads = threads;
      HostArray x = iota(DType::F32, 48, 1), y = HostArray::zeros(DType::F32, {48});
      HostArray z = HostArray::zeros(DType::I32, {48});
      l.args.setBuffer("x", &x);
      l.args.setBuffer("y", &y);
      l.args.setBuffer("z", &z);
      l.args.setScalar("n", ScalarValue::ofInt(DType::I32, n));
      l.args.setScalar("s", ScalarValue::ofInt(DType::I32, s));
      RunResult r = l.run(*k, {6, 1, 1});
      ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
      for (int i = 0; i < 48; ++i) {
        double want = i < n ? (1.0 + i) * 2.5 + s + 9 : 0;
        EXPECT_EQ(y.getDouble(i), want) << "threads " << threads << ", launch " << launch << ", " << i;
        EXPECT_EQ(z.getDouble(i), i < n ? (i % 8) * s + 7 : 0)
            << "threads " << threads << ", launch " << launch << ", " << i;
      }
    }
}

} // namespace
