// Every trap kind of runtime/Trap.h (docs/semantics.md, "Traps are a closed
// set"), triggered by a real kernel through the public host API
// (compileKernel + LaunchArgs + createInterpreterBackend()->launch): the kind,
// the message's values, the kernel, the program id, the source line, column
// and line text, and the lane. Also the cases that must NOT trap: masked
// stores of masked loads, `m ? *p : v`, masked-off lanes far out of bounds.
//
// Expected locations are worked out from the kernel text (the column of the
// operator, `*` for loads, `=` for stores) and cross-checked against the IR
// op's location; expected addresses follow Memory.h's documented layout (the
// first buffer at 0x10000).
#include "runtime/Trap.h"
#include "interp/InterpreterBackend.h"
#include "ir/IR.h"
#include "runtime/Launch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace {

using tc::DType;
using tc::HostArray;
using tc::RunResult;
using tc::ScalarValue;
using tc::Trap;
using tc::TrapKind;

constexpr uint64_t kFirstBase = 0x10000; // Memory.h: the first buffer's address

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool contains(const std::string &hay, const std::string &needle) {
  return lower(hay).find(lower(needle)) != std::string::npos;
}

std::string hexAddr(uint64_t a) {
  std::ostringstream os;
  os << "0x" << std::hex << a;
  return os.str();
}

// A kernel source with helpers to find where things are in it.
struct Source {
  std::string text;

  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    std::istringstream is(text);
    for (std::string l; std::getline(is, l);)
      out.push_back(l);
    return out;
  }
  // 1-based line holding `needle` (which must occur on exactly one line).
  uint32_t line(const std::string &needle) const {
    auto ls = lines();
    uint32_t found = 0;
    for (size_t i = 0; i < ls.size(); ++i)
      if (ls[i].find(needle) != std::string::npos) {
        EXPECT_EQ(found, 0u) << "test bug: '" << needle << "' occurs twice";
        found = static_cast<uint32_t>(i + 1);
      }
    EXPECT_NE(found, 0u) << "test bug: '" << needle << "' not found";
    return found;
  }
  // 1-based column of `needle` on its line, plus `offset`.
  uint32_t col(const std::string &needle, size_t offset = 0) const {
    auto ls = lines();
    uint32_t l = line(needle);
    return l ? static_cast<uint32_t>(ls[l - 1].find(needle) + 1 + offset) : 0;
  }
  std::string lineText(uint32_t l) const {
    auto ls = lines();
    return l >= 1 && l <= ls.size() ? ls[l - 1] : "";
  }
};

std::shared_ptr<tc::CompiledKernel> compile(const Source &src) {
  tc::CompileRequest req;
  req.sourceName = "trap.tc";
  req.sourceText = src.text;
  tc::CompileOutcome out = tc::compileKernel(req);
  EXPECT_TRUE(out.ok()) << out.diagnostics;
  return out.kernel;
}

void collectOps(const tc::ir::Block &b, tc::ir::OpKind kind, std::vector<const tc::ir::Op *> &out) {
  for (const auto &op : b.ops()) {
    if (op->kind() == kind)
      out.push_back(op.get());
    for (const auto &r : op->regions())
      collectOps(*r, kind, out);
  }
}

// The ops of `kind` in the kernel, in program order (regions included).
std::vector<const tc::ir::Op *> opsOf(const tc::CompiledKernel &k, tc::ir::OpKind kind) {
  std::vector<const tc::ir::Op *> out;
  collectOps(k.function().body(), kind, out);
  return out;
}

// One launch: the kernel, its arrays (owned here) and scalars.
struct Launch {
  Source src;
  std::shared_ptr<tc::CompiledKernel> kernel;
  std::map<std::string, HostArray> arrays;
  tc::LaunchArgs args;

  explicit Launch(std::string text) : src{std::move(text)}, kernel(compile(src)) {}

  HostArray &buffer(const std::string &name, DType t, std::vector<double> values) {
    HostArray &a = arrays[name] = HostArray::zeros(t, {static_cast<int64_t>(values.size())});
    for (size_t i = 0; i < values.size(); ++i)
      a.setDouble(static_cast<int64_t>(i), values[i]);
    args.setBuffer(name, &a);
    return a;
  }
  HostArray &filled(const std::string &name, DType t, int64_t n, double v) {
    return buffer(name, t, std::vector<double>(static_cast<size_t>(n), v));
  }
  void scalar(const std::string &name, DType t, int64_t v) {
    args.setScalar(name, ScalarValue::ofInt(t, v));
  }

  RunResult run(std::array<int64_t, 3> grid = {1, 1, 1}, tc::RunOptions opts = {}) {
    if (!kernel) {
      RunResult r;
      r.status = RunResult::Status::Error;
      r.error = "did not compile";
      return r;
    }
    return tc::createInterpreterBackend()->launch(*kernel, grid, args, opts);
  }
};

std::string describe(const RunResult &r) {
  switch (r.status) {
  case RunResult::Status::Ok: return "ok";
  case RunResult::Status::Error: return "error: " + r.error;
  case RunResult::Status::Trapped: return "trap:\n" + (r.trap ? r.trap->render() : "(no trap)");
  }
  return "?";
}

// The trap of `r`, asserting it is one of `kind`.
::testing::AssertionResult trapped(const RunResult &r, TrapKind kind) {
  if (r.status != RunResult::Status::Trapped || !r.trap)
    return ::testing::AssertionFailure()
           << "expected a " << tc::trapKindName(kind) << " trap, got " << describe(r);
  if (r.trap->kind != kind)
    return ::testing::AssertionFailure()
           << "expected a " << tc::trapKindName(kind) << " trap, got " << describe(r);
  return ::testing::AssertionSuccess();
}

// What a program-time trap must say about where it happened.
struct Where {
  std::string kernel = "k";
  std::array<int64_t, 3> program{0, 0, 0};
  uint32_t line = 0, col = 0; // col 0: do not check
  int64_t lane = -1;          // -1: do not check
};

void expectWhere(const Launch &l, const Trap &t, const Where &w, const tc::ir::Op *op) {
  EXPECT_EQ(t.kernel, w.kernel);
  EXPECT_TRUE(t.hasProgram);
  EXPECT_EQ(t.programId, w.program);
  EXPECT_TRUE(t.file.find("trap.tc") != std::string::npos) << t.file;
  EXPECT_EQ(t.line, w.line) << t.render();
  if (w.col != 0) {
    EXPECT_EQ(t.col, w.col) << t.render();
  }
  EXPECT_EQ(t.sourceLine, l.src.lineText(w.line));
  if (w.lane >= 0) {
    EXPECT_EQ(t.lane, w.lane) << t.render();
  }
  if (op) { // the trap is reported at the op that trapped
    EXPECT_EQ(t.line, op->loc().line) << "the op is at " << op->loc().line << ":" << op->loc().col;
    EXPECT_EQ(t.col, op->loc().col) << "the op is at " << op->loc().line << ":" << op->loc().col;
  }
  EXPECT_FALSE(t.message.empty());
  std::string rendered = t.render();
  EXPECT_TRUE(contains(rendered, std::string("trap: ") + std::string(tc::trapKindName(t.kind))))
      << rendered;
}

const tc::ir::Op *onlyOp(const Launch &l, tc::ir::OpKind kind) {
  if (!l.kernel)
    return nullptr;
  auto ops = opsOf(*l.kernel, kind);
  EXPECT_EQ(ops.size(), 1u) << "test bug: expected one " << tc::ir::mnemonic(kind) << " op";
  return ops.empty() ? nullptr : ops.front();
}

std::vector<double> iota(int64_t n, double start = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = start + static_cast<double>(i);
  return v;
}

//===-- out_of_bounds ------------------------------------------------------------===//

const char *kLoadPastEnd = R"(__global__ void k(float *a, float *b) {
  int pid = get_program_id(0);
  int r[16] = pid * 16 + (0 ... 16);
  float x[16] = *(a + r);
  *(b + r) = x;
}
)";

TEST(Trap, OutOfBoundsLoadPastTheEnd) {
  for (unsigned threads : {1u, 4u}) {
    Launch l(kLoadPastEnd);
    l.buffer("a", DType::F32, iota(40)); // programs 0 and 1 fit; program 2 reads a[32..47]
    l.filled("b", DType::F32, 48, 0);
    tc::RunOptions opts;
    opts.threads = threads;
    RunResult r = l.run({3, 1, 1}, opts);
    ASSERT_TRUE(trapped(r, TrapKind::OutOfBounds));
    const Trap &t = *r.trap;
    // Program 2, lane 8 is a[40]: 40 * 4 bytes past a's start.
    expectWhere(l, t, {"k", {2, 0, 0}, l.src.line("*(a + r)"), l.src.col("*(a + r)"), 8},
                onlyOp(l, tc::ir::OpKind::Load));
    EXPECT_TRUE(contains(t.message, hexAddr(kFirstBase + 160))) << t.message;
    EXPECT_TRUE(contains(t.message, "'a'")) << t.message;
    EXPECT_TRUE(contains(t.render(), "program (2, 0, 0), lane [8] of a [16] tile\n")) << t.render();
  }
}

TEST(Trap, OutOfBoundsStoreBeforeTheStart) {
  Launch l(R"(__global__ void k(float *b, float *a) {
  int r[8] = 0 ... 8;
  *(b + r - 1) = *(a + r);
}
)");
  l.filled("b", DType::F32, 8, 0);
  l.buffer("a", DType::F32, iota(8));
  RunResult r = l.run();
  ASSERT_TRUE(trapped(r, TrapKind::OutOfBounds));
  // Lane 0 stores to b - 1: 4 bytes before b (the first buffer).
  expectWhere(l, *r.trap, {"k", {0, 0, 0}, l.src.line("*(b + r - 1)"), l.src.col("= *(a"), 0},
              onlyOp(l, tc::ir::OpKind::Store));
  EXPECT_TRUE(contains(r.trap->message, hexAddr(kFirstBase - 4))) << r.trap->message;
  EXPECT_TRUE(contains(r.trap->message, "'b'")) << r.trap->message;
}

TEST(Trap, OutOfBoundsLaneIsRowMajorIn2D) {
  Launch l(R"(__global__ void k(float *a, float *b) {
  int rm[4] = 0 ... 4;
  int rn[8] = 0 ... 8;
  float *p[4, 8] = a + rm[:, newaxis] * 8 + rn[newaxis, :];
  float x[4, 8] = *p;
  *(b + rm[:, newaxis] * 8 + rn[newaxis, :]) = x;
}
)");
  l.buffer("a", DType::F32, iota(19)); // element (2, 3) = lane 19 is the first one outside
  l.filled("b", DType::F32, 32, 0);
  RunResult r = l.run();
  ASSERT_TRUE(trapped(r, TrapKind::OutOfBounds));
  expectWhere(l, *r.trap, {"k", {0, 0, 0}, l.src.line("= *p;"), l.src.col("*p;"), 19},
              onlyOp(l, tc::ir::OpKind::Load));
  EXPECT_TRUE(contains(r.trap->message, hexAddr(kFirstBase + 19 * 4))) << r.trap->message;
  EXPECT_TRUE(contains(r.trap->message, "'a'")) << r.trap->message;
  // Lane 19 of a [4, 8] tile is row 2, column 3: named both ways.
  EXPECT_TRUE(contains(r.trap->message, "(lane [2, 3] (flat 19))")) << r.trap->message;
  EXPECT_TRUE(contains(r.trap->render(), "lane [2, 3] (flat 19) of a [4, 8] tile\n"))
      << r.trap->render();
}

TEST(Trap, LaneText) {
  EXPECT_EQ(tc::laneText({16, 32}, 160), "lane [5, 0] (flat 160)");
  EXPECT_EQ(tc::laneText({2, 3, 4}, 23), "lane [1, 2, 3] (flat 23)");
  EXPECT_EQ(tc::laneText({16}, 7), "lane [7]");
  EXPECT_EQ(tc::laneText({}, 7), "lane 7"); // shape unknown
  EXPECT_EQ(tc::shapeText({16, 32}), "[16, 32]");
  Trap t;
  t.kernel = "k";
  t.hasProgram = true;
  t.lane = 37;
  t.laneShape = {4, 16};
  EXPECT_TRUE(contains(t.render(), "note: in kernel 'k', program (0, 0, 0), lane [2, 5] (flat 37) "
                                   "of a [4, 16] tile\n"))
      << t.render();
}

TEST(Trap, OutOfBoundsScalarLoad) {
  Launch l(R"(__global__ void k(int *a, int *b, int i) {
  int v = *(a + i);
  *b = v;
}
)");
  l.buffer("a", DType::I32, iota(4));
  l.filled("b", DType::I32, 1, 0);
  l.scalar("i", DType::I32, 4);
  RunResult r = l.run();
  ASSERT_TRUE(trapped(r, TrapKind::OutOfBounds));
  expectWhere(l, *r.trap, {"k", {0, 0, 0}, l.src.line("*(a + i)"), l.src.col("*(a + i)"), -1},
              onlyOp(l, tc::ir::OpKind::Load));
  EXPECT_TRUE(contains(r.trap->message, hexAddr(kFirstBase + 16))) << r.trap->message;
  // In bounds: i = 3 loads a[3].
  Launch ok(l.src.text);
  ok.buffer("a", DType::I32, iota(4));
  HostArray &b = ok.filled("b", DType::I32, 1, 0);
  ok.scalar("i", DType::I32, 3);
  RunResult r2 = ok.run();
  ASSERT_EQ(r2.status, RunResult::Status::Ok) << describe(r2);
  EXPECT_EQ(b.getDouble(0), 3.0);
}

// Masked-off lanes are never accessed, so they cannot be out of bounds.
TEST(Trap, MaskedOffLanesAreNeverAccessed) {
  Launch l(R"(__global__ void k(float *a, float *b) {
  int r[8] = 0 ... 8;
  bool m[8] = r < 1;
  float x[8] = *?(m) (a + r * 1000000 - r * 3000000);
  float y[8] = m ? *(a + r * 1000000) : 5.0f;
  *?(m) (b + r * 7000000) = x + y;
  *?(r == 1) (b + r) = y;
  *?(r > 7) (a + r - 99999999) = y;
}
)");
  l.buffer("a", DType::F32, {2.0});
  HostArray &b = l.filled("b", DType::F32, 2, -1);
  RunResult r = l.run();
  ASSERT_EQ(r.status, RunResult::Status::Ok) << describe(r);
  EXPECT_EQ(b.getDouble(0), 4.0); // x[0] + y[0] = a[0] + a[0]
  EXPECT_EQ(b.getDouble(1), 5.0); // y[1] is the fallback
}

//===-- misaligned -------------------------------------------------------------------===//

const char *kMultipleOf = R"(__global__ void k(float *a __aligned(64), int ld __multipleof(8)) {
  *(a + ld) = 1.0f;
}
)";

TEST(Trap, MisalignedScalarClaim) {
  Launch l(kMultipleOf);
  l.filled("a", DType::F32, 32, 0);
  l.scalar("ld", DType::I32, 12);
  RunResult r = l.run();
  ASSERT_TRUE(trapped(r, TrapKind::Misaligned));
  EXPECT_FALSE(r.trap->hasProgram) << "a launch-time trap";
  EXPECT_TRUE(contains(r.trap->message, "ld")) << r.trap->message;
  EXPECT_TRUE(contains(r.trap->message, "12")) << r.trap->message;
  EXPECT_TRUE(contains(r.trap->message, "8")) << r.trap->message;
}

TEST(Trap, KeptClaimsDoNotTrap) {
  // ld = 16 is a multiple of 8; buffers are placed at 256-byte aligned
  // addresses (Memory.h), so __aligned(64) holds.
  Launch l(kMultipleOf);
  HostArray &a = l.filled("a", DType::F32, 32, 0);
  l.scalar("ld", DType::I32, 16);
  RunResult r = l.run();
  ASSERT_EQ(r.status, RunResult::Status::Ok) << describe(r);
  EXPECT_EQ(a.getDouble(16), 1.0);
  EXPECT_EQ(a.getDouble(15), 0.0);
  // 0 and negative multiples are multiples too.
  Launch z(kMultipleOf);
  z.filled("a", DType::F32, 32, 0);
  z.scalar("ld", DType::I32, 0);
  RunResult r0 = z.run();
  EXPECT_EQ(r0.status, RunResult::Status::Ok) << describe(r0);
}

//===-- division_by_zero / division_overflow --------------------------------------===//

TEST(Trap, DivisionByZeroOnOneLane) {
  for (const char *op : {"/", "%"}) {
    std::string text = std::string(R"(__global__ void k(int *out, int n, int d) {
  int r[8] = 0 ... 8;
  int q[8] = n )") + op +
                       R"( (r - d);
  *(out + r) = q;
}
)";
    Launch l(text);
    l.filled("out", DType::I32, 8, 0);
    l.scalar("n", DType::I32, 100);
    l.scalar("d", DType::I32, 3);
    RunResult r = l.run();
    ASSERT_TRUE(trapped(r, TrapKind::DivisionByZero)) << op;
    expectWhere(l, *r.trap,
                {"k", {0, 0, 0}, l.src.line("(r - d)"), l.src.col(std::string(op) + " (r - d)"), 3},
                onlyOp(l, op[0] == '/' ? tc::ir::OpKind::Div : tc::ir::OpKind::Rem));
    EXPECT_TRUE(contains(r.trap->message, "100")) << r.trap->message;
  }
}

TEST(Trap, DivisionByZeroScalarInSecondProgram) {
  Launch l(R"(__global__ void k(int *out, int n) {
  int pid = get_program_id(1);
  int q = n / (1 - pid);
  *(out + pid) = q;
}
)");
  HostArray &out = l.filled("out", DType::I32, 3, 0);
  l.scalar("n", DType::I32, 77);
  RunResult r = l.run({1, 3, 1});
  ASSERT_TRUE(trapped(r, TrapKind::DivisionByZero));
  expectWhere(l, *r.trap,
              {"k", {0, 1, 0}, l.src.line("n / (1 - pid)"), l.src.col("/ (1 - pid)"), -1},
              onlyOp(l, tc::ir::OpKind::Div));
  EXPECT_TRUE(contains(r.trap->message, "77")) << r.trap->message;
  (void)out;
}

TEST(Trap, DivisionOverflowIntMinByMinusOne) {
  for (const char *op : {"/", "%"}) {
    // Divisors 2r - 9 = -9, -7, -5, -3, -1, 1, 3, 5: lane 4 is -1, none is 0.
    std::string text = std::string(R"(__global__ void k(int *out, int n) {
  int r[8] = 0 ... 8;
  int q[8] = n )") + op +
                       R"( (2 * r - 9);
  *(out + r) = q;
}
)";
    Launch l(text);
    l.filled("out", DType::I32, 8, 0);
    l.scalar("n", DType::I32, std::numeric_limits<int32_t>::min());
    RunResult r = l.run();
    ASSERT_TRUE(trapped(r, TrapKind::DivisionOverflow)) << op;
    expectWhere(
        l, *r.trap,
        {"k", {0, 0, 0}, l.src.line("(2 * r - 9)"), l.src.col(std::string(op) + " (2 * r - 9)"), 4},
        onlyOp(l, op[0] == '/' ? tc::ir::OpKind::Div : tc::ir::OpKind::Rem));
    EXPECT_TRUE(contains(r.trap->message, "-2147483648")) << r.trap->message;
    EXPECT_TRUE(contains(r.trap->message, "-1")) << r.trap->message;
  }
}

TEST(Trap, DivisionOverflowInt8AndInt64) {
  Launch l(R"(__global__ void k(int8 *out, int8 x, int8 y) {
  int8 z = x / y;
  *out = z;
}
)");
  l.filled("out", DType::I8, 1, 0);
  l.scalar("x", DType::I8, -128);
  l.scalar("y", DType::I8, -1);
  RunResult r = l.run();
  ASSERT_TRUE(trapped(r, TrapKind::DivisionOverflow));
  expectWhere(l, *r.trap, {"k", {0, 0, 0}, l.src.line("x / y"), l.src.col("/ y"), -1},
              onlyOp(l, tc::ir::OpKind::Div));
  EXPECT_TRUE(contains(r.trap->message, "-128")) << r.trap->message;

  Launch w(R"(__global__ void k(long *out, long x, long y) {
  *out = x % y;
}
)");
  w.filled("out", DType::I64, 1, 0);
  w.scalar("x", DType::I64, std::numeric_limits<int64_t>::min());
  w.scalar("y", DType::I64, -1);
  RunResult r2 = w.run();
  ASSERT_TRUE(trapped(r2, TrapKind::DivisionOverflow));
  EXPECT_TRUE(contains(r2.trap->message, "-9223372036854775808")) << r2.trap->message;
  // Unsigned: 0x80 / 0xFF is 0, no trap.
  Launch u(R"(__global__ void k(uint8 *out, uint8 x, uint8 y) {
  *out = x / y;
}
)");
  HostArray &o = u.filled("out", DType::U8, 1, 7);
  u.scalar("x", DType::U8, 128);
  u.scalar("y", DType::U8, 255);
  RunResult r3 = u.run();
  ASSERT_EQ(r3.status, RunResult::Status::Ok) << describe(r3);
  EXPECT_EQ(o.getDouble(0), 0.0);
}

//===-- shift_out_of_range -------------------------------------------------------------===//

TEST(Trap, ShiftCountEqualToWidth) {
  Launch l(R"(__global__ void k(int *out, int n) {
  int r[8] = 0 ... 8;
  int s[8] = n << (r * 5);
  *(out + r) = s;
}
)");
  l.filled("out", DType::I32, 8, 0);
  l.scalar("n", DType::I32, 1);
  RunResult r = l.run();
  // Counts 0, 5, ..., 30, 35: lane 7 (35 >= 32) traps.
  ASSERT_TRUE(trapped(r, TrapKind::ShiftOutOfRange));
  expectWhere(l, *r.trap, {"k", {0, 0, 0}, l.src.line("n << (r * 5)"), l.src.col("<< (r * 5)"), 7},
              onlyOp(l, tc::ir::OpKind::Shl));
  EXPECT_TRUE(contains(r.trap->message, "35")) << r.trap->message;
}

TEST(Trap, ShiftCountNegative) {
  Launch l(R"(__global__ void k(int *out, int n) {
  int r[8] = 0 ... 8;
  int s[8] = n >> (r - 1);
  *(out + r) = s;
}
)");
  l.filled("out", DType::I32, 8, 0);
  l.scalar("n", DType::I32, -64);
  RunResult r = l.run();
  ASSERT_TRUE(trapped(r, TrapKind::ShiftOutOfRange));
  expectWhere(l, *r.trap, {"k", {0, 0, 0}, l.src.line("n >> (r - 1)"), l.src.col(">> (r - 1)"), 0},
              onlyOp(l, tc::ir::OpKind::Shr));
  EXPECT_TRUE(contains(r.trap->message, "-1")) << r.trap->message;
}

TEST(Trap, ShiftCountWidthMinusOneIsFine) {
  Launch l(R"(__global__ void k(int *out, int n) {
  int r[8] = 0 ... 8;
  *(out + r) = n >> (r + 24);
  *(out + 8 + r) = 1 << (r + 24);
}
)");
  HostArray &out = l.filled("out", DType::I32, 16, 0);
  l.scalar("n", DType::I32, std::numeric_limits<int32_t>::min());
  RunResult r = l.run();
  ASSERT_EQ(r.status, RunResult::Status::Ok) << describe(r);
  for (int i = 0; i < 8; ++i) {
    // INT_MIN >> c is arithmetic: -2^(31 - c).
    EXPECT_EQ(out.getDouble(i), -std::ldexp(1.0, 31 - (i + 24))) << i;
    EXPECT_EQ(out.getDouble(8 + i), i == 7 ? -2147483648.0 : std::ldexp(1.0, i + 24)) << i;
  }
}

//===-- float_to_int_out_of_range ---------------------------------------------------------===//

TEST(Trap, FloatToIntOutOfRange) {
  Launch l(R"(__global__ void k(float *a, uint8 *out) {
  int r[8] = 0 ... 8;
  float f[8] = *(a + r);
  uint8 u[8] = (uint8)f;
  *(out + r) = u;
}
)");
  l.buffer("a", DType::F32, {0.0, 1.5, 255.9, -0.5, 300.5, 2.0, 3.0, -7.0});
  l.filled("out", DType::U8, 8, 0);
  RunResult r = l.run();
  // Lane 3 (-0.5) truncates to 0 and fits; lane 4 (300.5) does not.
  ASSERT_TRUE(trapped(r, TrapKind::FloatToIntOutOfRange));
  expectWhere(l, *r.trap, {"k", {0, 0, 0}, l.src.line("(uint8)f"), l.src.col("(uint8)f"), 4},
              onlyOp(l, tc::ir::OpKind::Cast));
  EXPECT_TRUE(contains(r.trap->message, "300.5")) << r.trap->message;
}

TEST(Trap, FloatToIntNaNOnAssignment) {
  Launch l(R"(__global__ void k(float *a, int *out) {
  int r[8] = 0 ... 8;
  float f[8] = *(a + r);
  int i[8] = f;
  *(out + r) = i;
}
)");
  l.buffer("a", DType::F32, {0.0, 1.5, NAN, -2.7, 0.0, 0.0, 0.0, 0.0});
  l.filled("out", DType::I32, 8, 0);
  RunResult r = l.run();
  ASSERT_TRUE(trapped(r, TrapKind::FloatToIntOutOfRange));
  expectWhere(l, *r.trap, {"k", {0, 0, 0}, l.src.line("int i[8] = f;"), 0, 2}, nullptr);
  // Where exactly an implicit conversion is located is the lowering's choice: the cast op's.
  const tc::ir::Op *cast = onlyOp(l, tc::ir::OpKind::Cast);
  ASSERT_TRUE(cast);
  EXPECT_EQ(r.trap->col, cast->loc().col);
  EXPECT_TRUE(contains(r.trap->message, "nan")) << r.trap->message;
}

TEST(Trap, FloatToIntInRangeConverts) {
  Launch l(R"(__global__ void k(float *a, uint8 *out, int *o2) {
  int r[8] = 0 ... 8;
  float f[8] = *(a + r);
  *(out + r) = (uint8)f;
  *(o2 + r) = (int)f;
}
)");
  l.buffer("a", DType::F32, {0.0, 1.5, 255.9, -0.5, -0.99, 2.0, 254.5, 0.25});
  HostArray &out = l.filled("out", DType::U8, 8, 9);
  HostArray &o2 = l.filled("o2", DType::I32, 8, 9);
  RunResult r = l.run();
  ASSERT_EQ(r.status, RunResult::Status::Ok) << describe(r);
  std::vector<double> want = {0, 1, 255, 0, 0, 2, 254, 0};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(out.getDouble(i), want[i]) << i;
    EXPECT_EQ(o2.getDouble(i), want[i]) << i; // truncation toward zero
  }
}

//===-- undefined_value ------------------------------------------------------------------===//

const char *kPoisonStore = R"(__global__ void k(float *a, float *b, int n) {
  int r[8] = 0 ... 8;
  float v[8] = *?(r < n) (a + r);
  float w[8] = v * 2.0f + 1.0f;
  STORE
}
)";

std::string withStore(const std::string &store) {
  std::string s = kPoisonStore;
  s.replace(s.find("STORE"), 5, store);
  return s;
}

TEST(Trap, UndefinedValueReachesAnUnmaskedStore) {
  Launch l(withStore("*(b + r) = w;"));
  l.buffer("a", DType::F32, iota(8));
  l.filled("b", DType::F32, 8, -7);
  l.scalar("n", DType::I32, 5);
  RunResult r = l.run();
  // Lanes 5..7 of v are poison; w inherits it; the store's lane 5 traps.
  ASSERT_TRUE(trapped(r, TrapKind::UndefinedValue));
  expectWhere(l, *r.trap, {"k", {0, 0, 0}, l.src.line("*(b + r) = w;"), l.src.col("= w;"), 5},
              onlyOp(l, tc::ir::OpKind::Store));
}

TEST(Trap, MaskedStoreWithTheSameMaskIsDefined) {
  Launch l(withStore("*?(r < n) (b + r) = w;"));
  l.buffer("a", DType::F32, iota(8));
  HostArray &b = l.filled("b", DType::F32, 8, -7);
  l.scalar("n", DType::I32, 5);
  RunResult r = l.run();
  ASSERT_EQ(r.status, RunResult::Status::Ok) << describe(r);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(b.getDouble(i), i < 5 ? 2.0 * i + 1 : -7.0) << i;
}

TEST(Trap, LoadWithFallbackIsDefined) {
  Launch l(R"(__global__ void k(float *a, float *b, int n) {
  int r[8] = 0 ... 8;
  float v[8] = r < n ? *(a + r) : 0;
  *(b + r) = v * 2.0f + 1.0f;
}
)");
  l.buffer("a", DType::F32, iota(5)); // only 5 elements: lanes 5..7 are not read
  HostArray &b = l.filled("b", DType::F32, 8, -7);
  l.scalar("n", DType::I32, 5);
  RunResult r = l.run();
  ASSERT_EQ(r.status, RunResult::Status::Ok) << describe(r);
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(b.getDouble(i), i < 5 ? 2.0 * i + 1 : 1.0) << i;
}

TEST(Trap, UndefinedValueReachesAnAtomic) {
  Launch l(withStore("float old[8] = atomic_add(b + r, w);"));
  l.buffer("a", DType::F32, iota(8));
  l.filled("b", DType::F32, 8, 0);
  l.scalar("n", DType::I32, 6);
  RunResult r = l.run();
  ASSERT_TRUE(trapped(r, TrapKind::UndefinedValue));
  EXPECT_EQ(r.trap->line, l.src.line("atomic_add"));
  EXPECT_EQ(r.trap->lane, 6);
}

TEST(Trap, UndefinedValueReachesABranch) {
  Launch l(R"(__global__ void k(float *a, float *b, int n) {
  float s = *?(n > 5) a;
  if (s > 0) {
    *b = 1.0f;
  }
}
)");
  l.buffer("a", DType::F32, {3.0});
  HostArray &b = l.filled("b", DType::F32, 1, 0);
  l.scalar("n", DType::I32, 2);
  RunResult r = l.run();
  ASSERT_TRUE(trapped(r, TrapKind::UndefinedValue));
  EXPECT_EQ(r.trap->line, l.src.line("if (s > 0)"));
  EXPECT_TRUE(r.trap->hasProgram);
  // With the mask on, the load is defined and the branch is taken.
  Launch ok(l.src.text);
  ok.buffer("a", DType::F32, {3.0});
  HostArray &b2 = ok.filled("b", DType::F32, 1, 0);
  ok.scalar("n", DType::I32, 9);
  RunResult r2 = ok.run();
  ASSERT_EQ(r2.status, RunResult::Status::Ok) << describe(r2);
  EXPECT_EQ(b2.getDouble(0), 1.0);
  (void)b;
}

TEST(Trap, UndefinedValueReachesALoopCondition) {
  Launch l(R"(__global__ void k(int *a, int *b, int n) {
  int lim = *?(n > 5) a;
  int i = 0;
  while (i < lim) {
    i = i + 1;
  }
  *b = i;
}
)");
  l.buffer("a", DType::I32, {3.0});
  l.filled("b", DType::I32, 1, 0);
  l.scalar("n", DType::I32, 0);
  RunResult r = l.run();
  ASSERT_TRUE(trapped(r, TrapKind::UndefinedValue));
  EXPECT_EQ(r.trap->line, l.src.line("while (i < lim)"));
}

// Printing a tile with undefined lanes shows them as `--` with a count and
// does not trap (that is when people print); the store after it still traps.
TEST(Trap, UndefinedValueInAPrintShowsDashes) {
  Launch l(withStore("print(\"w\", w); *(b + r) = w;"));
  l.buffer("a", DType::F32, iota(8));
  l.filled("b", DType::F32, 8, 0);
  l.scalar("n", DType::I32, 3);
  std::ostringstream out;
  tc::RunOptions opts;
  opts.out = &out;
  RunResult r = l.run({1, 1, 1}, opts);
  ASSERT_TRUE(trapped(r, TrapKind::UndefinedValue));
  EXPECT_TRUE(contains(r.trap->message, "value of a store")) << r.trap->message; // not the print
  EXPECT_TRUE(contains(out.str(), "--")) << out.str();
  EXPECT_TRUE(contains(out.str(), "5 of 8 lanes undefined: masked off")) << out.str();
}

//===-- assertion_failed -------------------------------------------------------------------===//

const char *kAssert = R"(__global__ void k(int *out, int n) {
  int r[8] = 0 ... 8;
  assert(r < n, "r must be below n");
  *(out + r) = r;
}
)";

TEST(Trap, AssertionFailedNamesTheMessageAndLane) {
  Launch l(kAssert);
  l.filled("out", DType::I32, 8, 0);
  l.scalar("n", DType::I32, 5);
  RunResult r = l.run({2, 1, 1});
  ASSERT_TRUE(trapped(r, TrapKind::AssertionFailed));
  expectWhere(l, *r.trap, {"k", {0, 0, 0}, l.src.line("assert("), l.src.col("assert("), 5},
              onlyOp(l, tc::ir::OpKind::Assert));
  EXPECT_TRUE(contains(r.trap->message, "r must be below n")) << r.trap->message;
  EXPECT_TRUE(contains(r.trap->message, "(lane [5] is false)")) << r.trap->message;

  Launch ok(kAssert);
  HostArray &out = ok.filled("out", DType::I32, 8, 0);
  ok.scalar("n", DType::I32, 8);
  RunResult r2 = ok.run();
  ASSERT_EQ(r2.status, RunResult::Status::Ok) << describe(r2);
  EXPECT_EQ(out.getDouble(7), 7.0);
}

//===-- step_limit ---------------------------------------------------------------------===//

const char *kSpin = R"(__global__ void k(int *out, int n) {
  int i = 0;
  while (n > 0) {
    i = i + 1;
  }
  *out = i;
}
)";

TEST(Trap, StepLimitStopsAnInfiniteLoop) {
  Launch l(kSpin);
  l.filled("out", DType::I32, 1, 0);
  l.scalar("n", DType::I32, 1);
  tc::RunOptions opts;
  opts.maxSteps = 10000;
  RunResult r = l.run({1, 1, 1}, opts);
  ASSERT_TRUE(trapped(r, TrapKind::StepLimit));
  EXPECT_TRUE(r.trap->hasProgram);
  EXPECT_EQ(r.trap->programId, (std::array<int64_t, 3>{0, 0, 0}));
  EXPECT_EQ(r.trap->kernel, "k");
  EXPECT_TRUE(contains(r.trap->message, "10000")) << r.trap->message;
  EXPECT_GE(r.trap->line, l.src.line("while (n > 0)"));
  EXPECT_LE(r.trap->line, l.src.line("i = i + 1;"));
}

TEST(Trap, WallClockLimitStopsAnInfiniteLoop) {
  Launch l(kSpin);
  l.filled("out", DType::I32, 1, 0);
  l.scalar("n", DType::I32, 1);
  tc::RunOptions opts;
  opts.maxSeconds = 0.3;
  RunResult r = l.run({1, 1, 1}, opts);
  ASSERT_TRUE(trapped(r, TrapKind::StepLimit));
  EXPECT_LT(r.seconds, 30.0);
}

TEST(Trap, FiniteLoopUnderTheLimitRuns) {
  Launch l(kSpin);
  HostArray &out = l.filled("out", DType::I32, 1, 5);
  l.scalar("n", DType::I32, 0);
  tc::RunOptions opts;
  opts.maxSteps = 10000;
  RunResult r = l.run({1, 1, 1}, opts);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << describe(r);
  EXPECT_EQ(out.getDouble(0), 0.0);
}

//===-- invalid_launch ------------------------------------------------------------------===//

const char *kAdd = R"(__global__ void k(int N, float *a, float *b, float *c) {
  int off[32] = get_program_id(0) * 32 + (0 ... 32);
  bool m[32] = off < N;
  *?(m) (c + off) = *?(m) (a + off) + *?(m) (b + off);
}
)";

struct AddLaunch : Launch {
  AddLaunch() : Launch(kAdd) {
    buffer("a", DType::F32, iota(40));
    buffer("b", DType::F32, iota(40));
    filled("c", DType::F32, 40, 0);
    scalar("N", DType::I32, 40);
  }
};

::testing::AssertionResult launchTrap(const RunResult &r, const std::string &mention) {
  auto t = trapped(r, TrapKind::InvalidLaunch);
  if (!t)
    return t;
  if (r.trap->hasProgram)
    return ::testing::AssertionFailure() << "an invalid launch has no program id";
  if (!contains(r.trap->message, mention))
    return ::testing::AssertionFailure()
           << "message does not mention '" << mention << "': " << r.trap->message;
  return ::testing::AssertionSuccess();
}

TEST(Trap, InvalidLaunchReference) {
  AddLaunch l;
  RunResult r = l.run({2, 1, 1});
  ASSERT_EQ(r.status, RunResult::Status::Ok) << describe(r);
  EXPECT_EQ(l.arrays["c"].getDouble(39), 78.0);
}

TEST(Trap, InvalidLaunchMissingArgument) {
  AddLaunch l;
  tc::LaunchArgs args;
  args.setBuffer("a", &l.arrays["a"]);
  args.setBuffer("b", &l.arrays["b"]);
  args.setBuffer("c", &l.arrays["c"]);
  l.args = args; // no N
  EXPECT_TRUE(launchTrap(l.run({2, 1, 1}), "N"));
  tc::LaunchArgs noBuffer;
  noBuffer.setBuffer("a", &l.arrays["a"]);
  noBuffer.setBuffer("c", &l.arrays["c"]);
  noBuffer.setScalar("N", ScalarValue::ofInt(DType::I32, 40));
  l.args = noBuffer; // no b
  EXPECT_TRUE(launchTrap(l.run({2, 1, 1}), "b"));
}

TEST(Trap, InvalidLaunchExtraArgument) {
  AddLaunch l;
  l.scalar("bogus", DType::I32, 1);
  EXPECT_TRUE(launchTrap(l.run({2, 1, 1}), "bogus"));
}

TEST(Trap, InvalidLaunchBufferDTypeDiffersFromPointee) {
  AddLaunch l;
  l.filled("b", DType::F16, 40, 1); // float *b bound to half data
  EXPECT_TRUE(launchTrap(l.run({2, 1, 1}), "b"));
  AddLaunch i;
  i.filled("a", DType::I32, 40, 1);
  EXPECT_TRUE(launchTrap(i.run({2, 1, 1}), "a"));
}

TEST(Trap, InvalidLaunchKindMismatch) {
  AddLaunch l;
  l.filled("N", DType::I32, 1, 40); // a buffer for a scalar parameter
  EXPECT_TRUE(launchTrap(l.run({2, 1, 1}), "N"));
  AddLaunch s;
  tc::LaunchArgs args;
  args.setScalar("a", ScalarValue::ofInt(DType::I64, 0)); // a scalar for a pointer
  args.setBuffer("b", &s.arrays["b"]);
  args.setBuffer("c", &s.arrays["c"]);
  args.setScalar("N", ScalarValue::ofInt(DType::I32, 40));
  s.args = args;
  EXPECT_TRUE(launchTrap(s.run({2, 1, 1}), "a"));
}

TEST(Trap, InvalidLaunchGridDimensionZeroOrNegative) {
  for (std::array<int64_t, 3> grid :
       {std::array<int64_t, 3>{0, 1, 1}, std::array<int64_t, 3>{2, 0, 1},
        std::array<int64_t, 3>{2, 1, 0}, std::array<int64_t, 3>{-1, 1, 1}}) {
    AddLaunch l;
    EXPECT_TRUE(launchTrap(l.run(grid), "grid")) << grid[0] << "," << grid[1] << "," << grid[2];
  }
}

// Every trap kind has a name and parses back (the closed set of conformance/FORMAT.md).
TEST(Trap, KindNamesRoundTrip) {
  const char *names[] = {"out_of_bounds",     "misaligned",         "division_by_zero",
                         "division_overflow", "shift_out_of_range", "float_to_int_out_of_range",
                         "undefined_value",   "data_race",          "assertion_failed",
                         "step_limit",        "invalid_launch"};
  for (int i = 0; i < tc::kNumTrapKinds; ++i) {
    TrapKind k = static_cast<TrapKind>(i);
    EXPECT_EQ(tc::trapKindName(k), names[i]);
    EXPECT_EQ(tc::parseTrapKind(names[i]), k);
  }
  EXPECT_FALSE(tc::parseTrapKind("segfault").has_value());
}

} // namespace
