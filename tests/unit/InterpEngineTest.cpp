// Engine tests of the reference interpreter: every op family and dtype
// family through small kernels (tile IR text, or Triton-C source), run with
// createInterpreterBackend(). Expected values are worked out by hand in the
// comments next to them (docs/semantics.md and ir/IR.h give the rules).
#include "interp/InterpreterBackend.h"
#include "ir/IRParser.h"
#include "runtime/Launch.h"
#include "support/Diagnostics.h"
#include "support/FloatBits.h"
#include "support/SourceManager.h"

#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <cstring>
#include <sstream>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

namespace {

using tc::DType;
using tc::HostArray;
using tc::RunResult;
using tc::ScalarValue;
using tc::TrapKind;

std::shared_ptr<tc::CompiledKernel> compileTc(const std::string &src, tc::DefineList defs = {}) {
  tc::CompileRequest req;
  req.sourceName = "k.tc";
  req.sourceText = src;
  req.defines = std::move(defs);
  tc::CompileOutcome out = tc::compileKernel(req);
  EXPECT_TRUE(out.ok()) << out.diagnostics;
  return out.kernel;
}

std::shared_ptr<tc::CompiledKernel> compileTir(const std::string &text) {
  auto sm = std::make_shared<tc::SourceManager>();
  uint32_t file = sm->addBuffer("k.tir", text);
  tc::DiagEngine diags(*sm);
  std::ostringstream err;
  diags.setOutput(&err);
  std::unique_ptr<tc::ir::Module> m = tc::ir::parseModule(file, *sm, diags);
  EXPECT_TRUE(m && !diags.hasErrors()) << err.str();
  if (!m || m->functions.empty())
    return nullptr;
  const tc::ir::Function *fn = m->functions[0].get();
  return std::make_shared<tc::CompiledKernel>(std::move(m), fn, sm, tc::DefineList{});
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

HostArray arrayOf(DType t, const std::vector<double> &values) {
  HostArray a = HostArray::zeros(t, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    a.setDouble(static_cast<int64_t>(i), values[i]);
  return a;
}

HostArray bitsOf(DType t, const std::vector<uint64_t> &bits) {
  HostArray a = HostArray::zeros(t, {static_cast<int64_t>(bits.size())});
  for (size_t i = 0; i < bits.size(); ++i)
    a.setBits(static_cast<int64_t>(i), bits[i]);
  return a;
}

uint64_t f32bits(float f) {
  return std::bit_cast<uint32_t>(f);
}
uint64_t f64bits(double d) {
  return std::bit_cast<uint64_t>(d);
}

std::string irText(DType t) {
  return std::string(tc::irName(t));
}

/// A kernel applying `op` lane by lane to a[0..n) (and b[0..n), c[0..n)) and
/// storing into out[0..n): n is a power of two.
std::string elementwiseKernel(const std::string &op, DType in, DType out, int n, int arity,
                              const std::string &attrs = "") {
  std::string N = std::to_string(n), ti = irText(in), to = irText(out);
  std::string t = "tile<" + N + "x" + ti + ">", pt = "tile<" + N + "x!ptr<" + ti + ">>";
  std::string s = "kernel @k(%a: !ptr<" + ti + ">, %b: !ptr<" + ti + ">, %c: !ptr<" + ti +
                  ">, %out: !ptr<" + to + ">) {\n";
  s += "  %r = range <end = " + N + ", start = 0> : tile<" + N + "xi32>\n";
  const char *names[] = {"a", "b", "c"};
  std::string operands;
  for (int i = 0; i < arity; ++i) {
    std::string v = names[i];
    s += "  %s" + v + " = splat %" + v + " : " + pt + "\n";
    s += "  %p" + v + " = addptr %s" + v + ", %r : " + pt + "\n";
    s += "  %v" + v + " = load %p" + v + " : " + t + "\n";
    operands += (i ? ", %v" : "%v") + v;
  }
  s += "  %res = " + op + " " + operands + attrs + " : tile<" + N + "x" + to + ">\n";
  s += "  %so = splat %out : tile<" + N + "x!ptr<" + to + ">>\n";
  s += "  %po = addptr %so, %r : tile<" + N + "x!ptr<" + to + ">>\n";
  s += "  store %po, %res\n  return\n}\n";
  return s;
}

/// Runs `op` over the bits in a (, b, c); returns the result bits (or the run on a trap).
struct OpRun {
  RunResult result;
  std::vector<uint64_t> bits;
};

OpRun runOp(const std::string &op, DType in, DType out, std::vector<std::vector<uint64_t>> inputs,
            const std::string &attrs = "") {
  size_t n = inputs[0].size();
  auto k = compileTir(
      elementwiseKernel(op, in, out, static_cast<int>(n), static_cast<int>(inputs.size()), attrs));
  OpRun r;
  if (!k)
    return r;
  Launch l;
  std::vector<HostArray> arrays;
  for (size_t i = 0; i < 3; ++i)
    arrays.push_back(bitsOf(in, i < inputs.size() ? inputs[i] : std::vector<uint64_t>(n, 0)));
  HostArray o = HostArray::zeros(out, {static_cast<int64_t>(n)});
  l.args.setBuffer("a", &arrays[0]);
  l.args.setBuffer("b", &arrays[1]);
  l.args.setBuffer("c", &arrays[2]);
  l.args.setBuffer("out", &o);
  r.result = l.run(*k);
  for (size_t i = 0; i < n; ++i)
    r.bits.push_back(o.getBits(static_cast<int64_t>(i)));
  return r;
}

/// Two's complement bits of v in `bytes` bytes.
uint64_t ib(int64_t v, unsigned bytes) {
  return bytes == 8 ? static_cast<uint64_t>(v)
                    : static_cast<uint64_t>(v) & ((1ull << (8 * bytes)) - 1);
}

//===----------------------------------------------------------------------===//
// Integer arithmetic
//===----------------------------------------------------------------------===//

TEST(InterpEngine, IntegerAddSubMulWrap) {
  // int8: 127 + 1 = -128; -128 + -1 = 127; 100 + 27 = 127; 0 + 0 = 0.
  OpRun r = runOp("add", DType::I8, DType::I8, {{127, ib(-128, 1), 100, 0}, {1, ib(-1, 1), 27, 0}});
  EXPECT_EQ(r.result.status, RunResult::Status::Ok);
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{ib(-128, 1), 127, 127, 0}));
  // uint8: 16 * 16 = 256 -> 0; 15 * 17 = 255.  int16: 300 * 300 = 90000 -> 90000 - 65536 = 24464.
  r = runOp("mul", DType::U8, DType::U8, {{16, 15}, {16, 17}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0, 255}));
  r = runOp("mul", DType::I16, DType::I16, {{300, ib(-2, 2)}, {300, 3}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{24464, ib(-6, 2)}));
  // uint32: 0 - 1 = 2^32 - 1.  int64: INT64_MIN - 1 = INT64_MAX.
  r = runOp("sub", DType::U32, DType::U32, {{0, 5}, {1, 3}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0xffffffffu, 2}));
  r = runOp("sub", DType::I64, DType::I64, {{0x8000000000000000ull, 7}, {1, 9}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0x7fffffffffffffffull, ib(-2, 8)}));
  // neg int8 -128 = -128 (wraps); abs int32 INT_MIN = INT_MIN; abs -5 = 5.
  r = runOp("neg", DType::I8, DType::I8, {{ib(-128, 1), 5}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{ib(-128, 1), ib(-5, 1)}));
  r = runOp("abs", DType::I32, DType::I32, {{0x80000000u, ib(-5, 4)}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0x80000000u, 5}));
  // not: ~0 = -1 (int32); bool !1 = 0, !0 = 1.
  r = runOp("not", DType::I32, DType::I32, {{0, 0xf0f0f0f0u}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0xffffffffu, 0x0f0f0f0fu}));
  r = runOp("not", DType::Bool, DType::Bool, {{1, 0}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0, 1}));
}

TEST(InterpEngine, IntegerDivisionTruncates) {
  // C: -7 / 2 = -3, 7 / -2 = -3, -7 / -2 = 3, 7 / 2 = 3.
  OpRun r = runOp("div", DType::I32, DType::I32,
                  {{ib(-7, 4), 7, ib(-7, 4), 7}, {2, ib(-2, 4), ib(-2, 4), 2}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{ib(-3, 4), ib(-3, 4), 3, 3}));
  // %: the dividend's sign: -7 % 2 = -1, 7 % -2 = 1, -7 % -2 = -1, 7 % 2 = 1.
  r = runOp("rem", DType::I32, DType::I32,
            {{ib(-7, 4), 7, ib(-7, 4), 7}, {2, ib(-2, 4), ib(-2, 4), 2}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{ib(-1, 4), 1, ib(-1, 4), 1}));
  // Unsigned: 255 / 2 = 127, 255 % 7 = 3.
  r = runOp("div", DType::U8, DType::U8, {{255, 255}, {2, 7}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{127, 36}));
  r = runOp("rem", DType::U8, DType::U8, {{255, 255}, {2, 7}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{1, 3}));
}

TEST(InterpEngine, IntegerDivisionTraps) {
  OpRun r = runOp("div", DType::I32, DType::I32, {{1, 2, 7, 4}, {1, 1, 0, 0}});
  ASSERT_EQ(r.result.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.result.trap->kind, TrapKind::DivisionByZero);
  EXPECT_EQ(r.result.trap->lane, 2); // the first lane in row-major order
  EXPECT_NE(r.result.trap->message.find("7 / 0"), std::string::npos) << r.result.trap->message;
  // Nothing was stored: the output keeps its zeros.
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0, 0, 0, 0}));
  r = runOp("rem", DType::I8, DType::I8, {{5, 0x80}, {3, 0xff}}); // -128 % -1
  ASSERT_EQ(r.result.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.result.trap->kind, TrapKind::DivisionOverflow);
  EXPECT_EQ(r.result.trap->lane, 1);
  // Unsigned division has no overflow: 0x80 / 0xff = 0.
  r = runOp("div", DType::U8, DType::U8, {{0x80}, {0xff}});
  EXPECT_EQ(r.result.status, RunResult::Status::Ok);
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0}));
}

TEST(InterpEngine, Shifts) {
  // shr is arithmetic on int32 (-8 >> 1 = -4) and logical on uint32.
  OpRun r = runOp("shr", DType::I32, DType::I32, {{ib(-8, 4), 0x80000000u}, {1, 4}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{ib(-4, 4), 0xf8000000u}));
  r = runOp("shr", DType::U32, DType::U32, {{0x80000000u, 0xffffffffu}, {4, 31}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0x08000000u, 1}));
  // shl wraps: int8 1 << 7 = -128; int32 3 << 31 = 0x80000000.
  r = runOp("shl", DType::I8, DType::I8, {{1, 3}, {7, 6}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0x80, 0xc0}));
  // Count == width and count < 0 trap.
  r = runOp("shl", DType::I32, DType::I32, {{1, 1}, {31, 32}});
  ASSERT_EQ(r.result.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.result.trap->kind, TrapKind::ShiftOutOfRange);
  EXPECT_EQ(r.result.trap->lane, 1);
  r = runOp("shr", DType::I16, DType::I16, {{1, 1}, {0xffff, 0}});
  ASSERT_EQ(r.result.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.result.trap->lane, 0);
}

TEST(InterpEngine, MulHiAndBitwise) {
  // uint32: 0xffffffff^2 = 0xfffffffe00000001 -> 0xfffffffe; 0x10000 * 0x10000 = 2^32 -> 1.
  OpRun r =
      runOp("umulhi", DType::U32, DType::U32, {{0xffffffffu, 0x10000}, {0xffffffffu, 0x10000}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0xfffffffeu, 1}));
  // Signed dtypes take the signed product: -1 * -1 = 1 -> 0; INT_MIN * 2 = -2^32 -> -1.
  r = runOp("umulhi", DType::I32, DType::I32, {{0xffffffffu, 0x80000000u}, {0xffffffffu, 2}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0, 0xffffffffu}));
  r = runOp("xor", DType::Bool, DType::Bool, {{1, 1, 0, 0}, {1, 0, 1, 0}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0, 1, 1, 0}));
  r = runOp("min", DType::I8, DType::I8, {{ib(-3, 1), 5}, {2, ib(-9, 1)}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{ib(-3, 1), ib(-9, 1)}));
  r = runOp("max", DType::U16, DType::U16, {{65535, 5}, {2, 9}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{65535, 9}));
}

//===----------------------------------------------------------------------===//
// Floats
//===----------------------------------------------------------------------===//

TEST(InterpEngine, FloatSignsAndNaN) {
  const uint64_t nan = f32bits(NAN), one = f32bits(1.0f);
  // neg flips the sign bit: -(+0) = -0.
  OpRun r = runOp("neg", DType::F32, DType::F32, {{f32bits(0.0f), f32bits(-2.5f)}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0x80000000u, f32bits(2.5f)}));
  // abs clears it.
  r = runOp("abs", DType::F32, DType::F32, {{0x80000000u, f32bits(-2.5f)}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0, f32bits(2.5f)}));
  // maxNum: max(NaN, 1) = 1, max(1, NaN) = 1, max(-0, +0) = +0, max(NaN, NaN) = NaN.
  r = runOp("max", DType::F32, DType::F32, {{nan, one, 0x80000000u, nan}, {one, nan, 0, nan}});
  EXPECT_EQ(r.bits[0], one);
  EXPECT_EQ(r.bits[1], one);
  EXPECT_EQ(r.bits[2], 0u);
  EXPECT_TRUE(std::isnan(std::bit_cast<float>(static_cast<uint32_t>(r.bits[3]))));
  // min(-0, +0) = -0 either way round.
  r = runOp("min", DType::F32, DType::F32, {{0x80000000u, 0}, {0, 0x80000000u}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0x80000000u, 0x80000000u}));
  // Ordered compares except ne.
  r = runOp("cmp_eq", DType::F32, DType::Bool, {{nan, one}, {nan, one}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0, 1}));
  r = runOp("cmp_ne", DType::F32, DType::Bool, {{nan, one}, {nan, one}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{1, 0}));
  r = runOp("cmp_lt", DType::F32, DType::Bool, {{nan, one}, {one, nan}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0, 0}));
  r = runOp("cmp_ge", DType::F16, DType::Bool,
            {{0x3c00, 0x8000}, {0x3c00, 0x0000}}); // 1>=1, -0>=+0
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{1, 1}));
}

TEST(InterpEngine, NarrowFloatArithmeticRoundsToTheType) {
  // half: 2048 + 1 = 2049 is a tie between 2048 and 2050 -> 2048 (even).
  // 2048 + 3 = 2051 -> tie between 2050 and 2052 -> 2052 (0x6802).
  OpRun r = runOp("add", DType::F16, DType::F16, {{0x6800, 0x6800}, {0x3c00, 0x4200}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0x6800, 0x6802}));
  // bf16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7 -> 1 (0x3f80).
  r = runOp("add", DType::BF16, DType::BF16, {{0x3f80}, {0x3b80}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0x3f80}));
  // half: 1 / 3 = 0x3555 (0.33325); fmod(-7.5, 2) = -1.5 (0xbe00).
  r = runOp("div", DType::F16, DType::F16, {{0x3c00}, {0x4200}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0x3555}));
  r = runOp("rem", DType::F16, DType::F16, {{0xc780}, {0x4000}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0xbe00}));
  // f32 fmod(7.5, -2) = 1.5; 1 / 0 = inf.
  r = runOp("rem", DType::F32, DType::F32, {{f32bits(7.5f)}, {f32bits(-2.0f)}});
  EXPECT_EQ(r.bits[0], f32bits(1.5f));
  r = runOp("div", DType::F32, DType::F32, {{f32bits(1.0f)}, {0}});
  EXPECT_EQ(r.bits[0], f32bits(INFINITY));
}

TEST(InterpEngine, FmaRoundsOnce) {
  // f32: (1 + 2^-23)(1 - 2^-23) - 1 = -2^-46 exactly (0xa8800000); mul then add gives 0.
  OpRun r = runOp("fma", DType::F32, DType::F32,
                  {{f32bits(1.0f + 0x1p-23f)}, {f32bits(1.0f - 0x1p-23f)}, {f32bits(-1.0f)}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0xa8800000u}));
  // half: 3 * 683 = 2049, a tie -> 2048 (0x6800); + 2^-24 breaks the tie upwards -> 2050 (0x6801).
  r = runOp("fma", DType::F16, DType::F16, {{0x4200, 0x4200}, {0x6156, 0x6156}, {0x0000, 0x0001}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0x6800, 0x6801}));
  // bf16: 7 * 37 = 259, the midpoint of 258 and 260; - 2^-100 makes it 258 (0x4381).
  // (Summing in double first would lose 2^-100 and round the tie to even: 260.)
  r = runOp("fma", DType::BF16, DType::BF16, {{0x40e0}, {0x4214}, {0x8d80}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0x4381}));
}

TEST(InterpEngine, MathFunctions) {
  // sqrt(2) in f32 is 0x3fb504f3; rsqrt(4) = 0.5; exp(0) = 1; log(-1) = NaN.
  EXPECT_EQ(runOp("sqrt", DType::F32, DType::F32, {{f32bits(2.0f)}}).bits[0], 0x3fb504f3u);
  EXPECT_EQ(runOp("rsqrt", DType::F32, DType::F32, {{f32bits(4.0f)}}).bits[0], f32bits(0.5f));
  EXPECT_EQ(runOp("exp", DType::F64, DType::F64, {{f64bits(0.0)}}).bits[0], f64bits(1.0));
  uint64_t l = runOp("log", DType::F32, DType::F32, {{f32bits(-1.0f)}}).bits[0];
  EXPECT_TRUE(std::isnan(std::bit_cast<float>(static_cast<uint32_t>(l))));
  // floor(-1.5) = -2 and ceil(-1.5) = -1 in half (0xbe00 = -1.5, 0xc000 = -2, 0xbc00 = -1).
  EXPECT_EQ(runOp("floor", DType::F16, DType::F16, {{0xbe00}}).bits[0], 0xc000u);
  EXPECT_EQ(runOp("ceil", DType::F16, DType::F16, {{0xbe00}}).bits[0], 0xbc00u);
  // exp2(10) = 1024 exactly in bf16 (0x4480).
  EXPECT_EQ(runOp("exp2", DType::BF16, DType::BF16, {{0x4120}}).bits[0], 0x4480u);
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

TEST(InterpEngine, CastsConvertAsC) {
  // float -> int8 truncates: 127.9 -> 127, -128.5 -> -128, -0.5 -> 0, 3.99 -> 3.
  OpRun r = runOp("cast", DType::F32, DType::I8,
                  {{f32bits(127.9f), f32bits(-128.5f), f32bits(-0.5f), f32bits(3.99f)}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{127, 0x80, 0, 3}));
  // int32 -> int8 wraps: 300 -> 44; int8 -> uint32 sign-extends: -1 -> 0xffffffff.
  EXPECT_EQ(runOp("cast", DType::I32, DType::I8, {{300}}).bits[0], 44u);
  EXPECT_EQ(runOp("cast", DType::I8, DType::U32, {{0xff}}).bits[0], 0xffffffffu);
  EXPECT_EQ(runOp("cast", DType::U8, DType::I32, {{0xff}}).bits[0], 255u);
  // to bool is != 0 (NaN too); -0.0 is false.
  r = runOp("cast", DType::F32, DType::Bool, {{f32bits(NAN), 0x80000000u, f32bits(0.25f), 0}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{1, 0, 1, 0}));
  r = runOp("cast", DType::I32, DType::Bool, {{0, 5, 0xffffffffu, 0}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0, 1, 1, 0}));
  // f32 -> f16: 65519 -> 65504 (0x7bff), 65520 -> inf (0x7c00).
  r = runOp("cast", DType::F32, DType::F16, {{f32bits(65519.0f), f32bits(65520.0f)}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0x7bff, 0x7c00}));
  // f64 -> f32 ties to even: 1 + 2^-24 -> 1; 1 + 2^-24 + 2^-50 -> 1 + 2^-23.
  r = runOp("cast", DType::F64, DType::F32,
            {{f64bits(1 + 0x1p-24), f64bits(1 + 0x1p-24 + 0x1p-50)}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{f32bits(1.0f), f32bits(1.0f + 0x1p-23f)}));
  // int64 -> bf16 with one rounding: 2^62 + 2^54 + 1 is just above the tie of
  // 2^62 and 2^62 + 2^55 -> 2^62 + 2^55 (0x5e81). A double in between would
  // round to the tie and then to even (2^62).
  r = runOp("cast", DType::I64, DType::BF16, {{(1ull << 62) + (1ull << 54) + 1}});
  EXPECT_EQ(r.bits, (std::vector<uint64_t>{0x5e81}));
  // bitcast keeps the bits.
  EXPECT_EQ(runOp("bitcast", DType::F32, DType::I32, {{f32bits(1.0f)}}).bits[0], 0x3f800000u);
}

TEST(InterpEngine, FloatToIntOutOfRangeTraps) {
  OpRun r = runOp("cast", DType::F32, DType::I8, {{f32bits(1.0f), f32bits(128.0f)}});
  ASSERT_EQ(r.result.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.result.trap->kind, TrapKind::FloatToIntOutOfRange);
  EXPECT_EQ(r.result.trap->lane, 1);
  EXPECT_NE(r.result.trap->message.find("128"), std::string::npos);
  r = runOp("cast", DType::F32, DType::U8, {{f32bits(255.9f), f32bits(-0.9f), f32bits(256.0f), 0}});
  ASSERT_EQ(r.result.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.result.trap->lane, 2); // 255.9 -> 255 and -0.9 -> 0 fit
  r = runOp("cast", DType::F64, DType::I32, {{f64bits(NAN)}});
  ASSERT_EQ(r.result.status, RunResult::Status::Trapped);
  EXPECT_NE(r.result.trap->message.find("nan"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

const char *kReduceSrc = R"(
__global__ void red(T *x, R *out) {
  int r[N] = 0 ... N;
  T v[N] = *(x + r);
  *out = v[OP];
}
)";

/// Reduces x (dtype t, n elements) with OP; returns the stored result's bits.
uint64_t reduce1d(const std::string &op, DType t, const std::string &tname, DType rt,
                  const std::string &rname, std::vector<double> x) {
  auto k = compileTc(kReduceSrc,
                     {{"T", tname}, {"R", rname}, {"N", std::to_string(x.size())}, {"OP", op}});
  if (!k)
    return 0;
  Launch l;
  HostArray in = arrayOf(t, x), out = HostArray::zeros(rt, {1});
  l.args.setBuffer("x", &in);
  l.args.setBuffer("out", &out);
  RunResult res = l.run(*k);
  EXPECT_EQ(res.status, RunResult::Status::Ok) << (res.trap ? res.trap->render() : res.error);
  return out.getBits(0);
}

TEST(InterpEngine, ReduceAddIsAPairwiseTree) {
  // [2^24, 1, 1, 1, 1, 1, 1, 1] in f32: level 1 gives 2^24 (2^24 + 1 ties to
  // even), 2, 2, 2; level 2: 2^24 + 2, 4; root 2^24 + 6. A left-to-right sum
  // would lose every 1 and give 2^24.
  std::vector<double> x = {0x1p24, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(reduce1d("+", DType::F32, "float", DType::F32, "float", x), f32bits(16777222.0f));
  // fp16 accumulates in fp32: [2048, 1, 1, 0] -> 2050 (in fp16 arithmetic 2048 + 1 = 2048).
  EXPECT_EQ(reduce1d("+", DType::F16, "half", DType::F16, "half", {2048, 1, 1, 0}), 0x6801u);
}

TEST(InterpEngine, ReduceAddWidensNarrowIntegers) {
  // int8 100 * 8 = 800 as int32; uint8 200 * 4 = 800 as uint32; bools count.
  EXPECT_EQ(reduce1d("+", DType::I8, "int8", DType::I32, "int", std::vector<double>(8, 100)), 800u);
  EXPECT_EQ(reduce1d("+", DType::U8, "uint8", DType::U32, "uint32", std::vector<double>(4, 200)),
            800u);
  EXPECT_EQ(reduce1d("+", DType::Bool, "bool", DType::U32, "uint32", {1, 1, 1, 0}), 3u);
  // int8 -100 * 4 = -400.
  EXPECT_EQ(reduce1d("+", DType::I8, "int8", DType::I32, "int", std::vector<double>(4, -100)),
            ib(-400, 4));
  // max keeps the type: int8.
  EXPECT_EQ(reduce1d("max", DType::I8, "int8", DType::I8, "int8", {-5, 3, -100, 2}), 3u);
}

TEST(InterpEngine, ReduceMaxMinArg) {
  // NaN loses: max [NaN, 1, NaN, 2] = 2; min [+0, -0] = -0.
  EXPECT_EQ(reduce1d("max", DType::F32, "float", DType::F32, "float", {NAN, 1, NAN, 2}),
            f32bits(2.0f));
  EXPECT_EQ(reduce1d("min", DType::F32, "float", DType::F32, "float", {0.0, -0.0}), 0x80000000u);
  // argmax: the first of the ties wins; NaN never wins; all NaN gives 0.
  EXPECT_EQ(reduce1d("argmax", DType::F32, "float", DType::I32, "int", {1, 3, 3, NAN}), 1u);
  EXPECT_EQ(reduce1d("argmin", DType::F32, "float", DType::I32, "int", {NAN, 2, 1, 1}), 2u);
  EXPECT_EQ(reduce1d("argmax", DType::F32, "float", DType::I32, "int", {NAN, NAN}), 0u);
  EXPECT_EQ(reduce1d("argmin", DType::I16, "short", DType::I32, "int", {4, -7, 9, -7}), 1u);
  // Bitwise: 0b1100 & 0b1010 & 0b1110 & 0b1111 = 0b1000; | = 0b1111;
  // ^: 1100 ^ 1010 = 0110, ^ 1110 = 1000, ^ 1111 = 0111.
  EXPECT_EQ(reduce1d("&", DType::I32, "int", DType::I32, "int", {12, 10, 14, 15}), 8u);
  EXPECT_EQ(reduce1d("|", DType::I32, "int", DType::I32, "int", {12, 10, 14, 15}), 15u);
  EXPECT_EQ(reduce1d("^", DType::I32, "int", DType::I32, "int", {12, 10, 14, 15}), 7u);
}

TEST(InterpEngine, ReduceOverEachAxisOf2D) {
  // m[i][j] = 4i + j (4 x 4): row sums 6, 22, 38, 54; column sums 24, 28, 32, 36.
  auto k = compileTc(R"(
__global__ void red(int *rows, int *cols) {
  int r[4] = 0 ... 4;
  int m[4, 4] = r[:, newaxis] * 4 + r[newaxis, :];
  *(rows + r) = m[:, +];
  *(cols + r) = m[+, :];
}
)");
  Launch l;
  HostArray rows = HostArray::zeros(DType::I32, {4}), cols = HostArray::zeros(DType::I32, {4});
  l.args.setBuffer("rows", &rows);
  l.args.setBuffer("cols", &cols);
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(rows.getDouble(i), 6 + 16 * i);
    EXPECT_EQ(cols.getDouble(i), 24 + 4 * i);
  }
}

//===----------------------------------------------------------------------===//
// dot
//===----------------------------------------------------------------------===//

TEST(InterpEngine, DotHalfToFloat) {
  // [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]], plus c = 1.
  auto k = compileTc(R"(
__global__ void mm(half *pa, half *pb, float *pc) {
  int r[2] = 0 ... 2;
  half a[2, 2] = *(pa + r[:, newaxis] * 2 + r[newaxis, :]);
  half b[2, 2] = *(pb + r[:, newaxis] * 2 + r[newaxis, :]);
  float c[2, 2] = *(pc + r[:, newaxis] * 2 + r[newaxis, :]);
  c += a @ b;
  *(pc + r[:, newaxis] * 2 + r[newaxis, :]) = c;
}
)");
  Launch l;
  HostArray a = arrayOf(DType::F16, {1, 2, 3, 4}), b = arrayOf(DType::F16, {5, 6, 7, 8});
  HostArray c = arrayOf(DType::F32, {1, 1, 1, 1});
  l.args.setBuffer("pa", &a);
  l.args.setBuffer("pb", &b);
  l.args.setBuffer("pc", &c);
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  EXPECT_EQ(c.getDouble(0), 20);
  EXPECT_EQ(c.getDouble(1), 23);
  EXPECT_EQ(c.getDouble(2), 44);
  EXPECT_EQ(c.getDouble(3), 51);
}

const char *kDotSrc = R"(
__global__ void mm(T *pa, T *pb, R *pc) {
  int rm[M] = 0 ... M;
  int rk[K] = 0 ... K;
  int rn[N] = 0 ... N;
  T a[M, K] = *(pa + rm[:, newaxis] * K + rk[newaxis, :]);
  T b[K, N] = *(pb + rk[:, newaxis] * N + rn[newaxis, :]);
  R c[M, N] = *(pc + rm[:, newaxis] * N + rn[newaxis, :]);
  c += a @ b;
  *(pc + rm[:, newaxis] * N + rn[newaxis, :]) = c;
}
)";

TEST(InterpEngine, DotAccumulatesInAscendingK) {
  // One output: 0 + 1*1 + 1e8*1 + (-1e8)*1 + 0*1 in f32, k ascending:
  // (1 + 1e8) rounds to 1e8, then 0, then 0. (Descending k would give 1.)
  auto k = compileTc(kDotSrc, {{"T", "float"}, {"R", "float"}, {"M", "1"}, {"K", "4"}, {"N", "1"}});
  Launch l;
  HostArray a = arrayOf(DType::F32, {1, 1e8, -1e8, 0}), b = arrayOf(DType::F32, {1, 1, 1, 1});
  HostArray c = arrayOf(DType::F32, {0});
  l.args.setBuffer("pa", &a);
  l.args.setBuffer("pb", &b);
  l.args.setBuffer("pc", &c);
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  EXPECT_EQ(c.getBits(0), f32bits(0.0f));
}

TEST(InterpEngine, DotInt8WrapsInInt32) {
  // 4 * 127 * 127 = 64516 added to INT_MAX wraps to INT_MIN + 64515.
  auto k = compileTc(kDotSrc, {{"T", "int8"}, {"R", "int"}, {"M", "1"}, {"K", "4"}, {"N", "2"}});
  Launch l;
  HostArray a = arrayOf(DType::I8, {127, 127, 127, 127});
  HostArray b = arrayOf(DType::I8, {127, -1, 127, -1, 127, -1, 127, -1});
  HostArray c = arrayOf(DType::I32, {2147483647.0, 10});
  l.args.setBuffer("pa", &a);
  l.args.setBuffer("pb", &b);
  l.args.setBuffer("pc", &c);
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  EXPECT_EQ(c.getDouble(0), -2147483648.0 + 64515);
  EXPECT_EQ(c.getDouble(1), 10 - 4 * 127);
}

TEST(InterpEngine, DotBatched) {
  // Two batches of [1x2] @ [2x1]: [1, 2] . [3, 4] = 11 and [5, 6] . [7, 8] = 83.
  auto k = compileTir(R"(
kernel @bmm(%pa: !ptr<f64>, %pb: !ptr<f64>, %pc: !ptr<f64>) {
  %r = range <end = 4, start = 0> : tile<4xi32>
  %sa = splat %pa : tile<4x!ptr<f64>>
  %a4 = addptr %sa, %r : tile<4x!ptr<f64>>
  %la = load %a4 : tile<4xf64>
  %a = reshape %la : tile<2x1x2xf64>
  %sb = splat %pb : tile<4x!ptr<f64>>
  %b4 = addptr %sb, %r : tile<4x!ptr<f64>>
  %lb = load %b4 : tile<4xf64>
  %b = reshape %lb : tile<2x2x1xf64>
  %z = constant <value = 0.0> : tile<2x1x1xf64>
  %c = dot %a, %b, %z : tile<2x1x1xf64>
  %c2 = reshape %c : tile<2xf64>
  %r2 = range <end = 2, start = 0> : tile<2xi32>
  %sc = splat %pc : tile<2x!ptr<f64>>
  %pc2 = addptr %sc, %r2 : tile<2x!ptr<f64>>
  store %pc2, %c2
  return
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray a = arrayOf(DType::F64, {1, 2, 5, 6}), b = arrayOf(DType::F64, {3, 4, 7, 8});
  HostArray c = HostArray::zeros(DType::F64, {2});
  l.args.setBuffer("pa", &a);
  l.args.setBuffer("pb", &b);
  l.args.setBuffer("pc", &c);
  RunResult res = l.run(*k);
  ASSERT_EQ(res.status, RunResult::Status::Ok) << res.error;
  EXPECT_EQ(c.getDouble(0), 11);
  EXPECT_EQ(c.getDouble(1), 83);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

TEST(InterpEngine, TransposeBroadcastExpandDims) {
  // y[j][i] = x[i][j] for a 2 x 4 x: x = 0..7 -> y = [0, 4, 1, 5, 2, 6, 3, 7];
  // then z[i][j] = r[i] * 10 + r[j] (broadcast of [4, 1] and [1, 4]).
  auto k = compileTc(R"(
__global__ void t(int *x, int *y, int *z) {
  int r2[2] = 0 ... 2;
  int r4[4] = 0 ... 4;
  int v[2, 4] = *(x + r2[:, newaxis] * 4 + r4[newaxis, :]);
  int w[4, 2] = ^v;
  *(y + r4[:, newaxis] * 2 + r2[newaxis, :]) = w;
  *(z + r4[:, newaxis] * 4 + r4[newaxis, :]) = r4[:, newaxis] * 10 + r4[newaxis, :];
}
)");
  Launch l;
  HostArray x = arrayOf(DType::I32, {0, 1, 2, 3, 4, 5, 6, 7});
  HostArray y = HostArray::zeros(DType::I32, {8}), z = HostArray::zeros(DType::I32, {16});
  l.args.setBuffer("x", &x);
  l.args.setBuffer("y", &y);
  l.args.setBuffer("z", &z);
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  std::vector<double> want = {0, 4, 1, 5, 2, 6, 3, 7};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(y.getDouble(i), want[static_cast<size_t>(i)]);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(z.getDouble(i), (i / 4) * 10 + i % 4);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

const char *kLoadSrc = R"(
__global__ void ld(float *a, float *out, int stride, int shift) {
  int r[32] = 0 ... 32;
  *(out + r) = *(a + r * stride + shift);
}
)";

TEST(InterpEngine, OutOfBoundsNamesLaneAddressAndNearestBuffer) {
  auto k = compileTc(kLoadSrc);
  Launch l;
  HostArray a = HostArray::zeros(DType::F32, {1000}), out = HostArray::zeros(DType::F32, {32});
  l.args.setBuffer("a", &a);
  l.args.setBuffer("out", &out);
  // Lane 16 reads a[960] (inside), lane 17 a[1020]: 0x10000 + 4080 = 0x10ff0,
  // 80 bytes past the end 0x10000 + 4000 = 0x10fa0.
  l.args.setScalar("stride", ScalarValue::ofInt(DType::I32, 60));
  l.args.setScalar("shift", ScalarValue::ofInt(DType::I32, 0));
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::OutOfBounds);
  EXPECT_EQ(r.trap->lane, 17);
  EXPECT_EQ(r.trap->kernel, "ld");
  EXPECT_EQ(r.trap->line, 4u);
  EXPECT_EQ(r.trap->message, "load of 4 bytes at 0x10ff0 (lane [17]) is outside every buffer; "
                             "nearest: 'a' [0x10000, 0x10fa0), 80 bytes past its end");
  // Before the start: lane 0 reads a[-5] at 0x10000 - 20 = 0xffec.
  l.args.setScalar("stride", ScalarValue::ofInt(DType::I32, 1));
  l.args.setScalar("shift", ScalarValue::ofInt(DType::I32, -5));
  r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->message, "load of 4 bytes at 0xffec (lane [0]) is outside every buffer; "
                             "nearest: 'a' [0x10000, 0x10fa0), 20 bytes before its start");
  // 'out' is placed at 0x10fa0 + 4096 rounded up to 256: 0x12000. a[2043]
  // is 0x10000 + 8172 = 0x11fec: 20 bytes before 'out', 4172 past 'a'.
  l.args.setScalar("stride", ScalarValue::ofInt(DType::I32, 0));
  l.args.setScalar("shift", ScalarValue::ofInt(DType::I32, 2043));
  r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->message, "load of 4 bytes at 0x11fec (lane [0]) is outside every buffer; "
                             "nearest: 'out' [0x12000, 0x12080), 20 bytes before its start");
}

TEST(InterpEngine, MaskedOffLanesAreNeverAccessed) {
  // Lane i points a[i * 1000000]; only lane 0 is active. Masked-off lanes of
  // `m ? *p : v` take v; the store writes only active lanes.
  auto k = compileTc(R"(
__global__ void m(float *a, float *out) {
  int r[8] = 0 ... 8;
  bool on[8] = r < 1;
  float v[8] = on ? *(a + r * 1000000) : 7.0;
  *(out + r) = v;
  *?(on)(out + r * 1000000 + 8) = v;
}
)");
  Launch l;
  HostArray a = arrayOf(DType::F32, {3}), out = HostArray::zeros(DType::F32, {9});
  l.args.setBuffer("a", &a);
  l.args.setBuffer("out", &out);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : "");
  EXPECT_EQ(out.getDouble(0), 3);
  for (int i = 1; i < 8; ++i)
    EXPECT_EQ(out.getDouble(i), 7);
  EXPECT_EQ(out.getDouble(8), 3);
}

TEST(InterpEngine, MisalignedElementAccess) {
  // A pointer moved by 2 bytes through i64: a 4-byte load at 0x10002.
  auto k = compileTir(R"(
kernel @mis(%a: !ptr<f32>) {
  %i = bitcast %a : i64
  %two = constant <value = 2> : i64
  %j = add %i, %two : i64
  %p = bitcast %j : !ptr<f32>
  %v = load %p : f32
  store %a, %v
  return
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray a = HostArray::zeros(DType::F32, {4});
  l.args.setBuffer("a", &a);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::Misaligned);
  EXPECT_EQ(r.trap->lane, -1); // a scalar access names no lane
  EXPECT_EQ(r.trap->message, "load of 4 bytes at 0x10002 is not aligned to 4 bytes");
}

TEST(InterpEngine, TrappingStoreWritesNothingAndLastLaneWins) {
  auto k = compileTc(R"(
__global__ void st(int *a, int n) {
  int r[4] = 0 ... 4;
  *(a + r * n) = r + 1;
}
)");
  Launch l;
  HostArray a = HostArray::zeros(DType::I32, {4});
  l.args.setBuffer("a", &a);
  // n = 0: every lane stores to a[0], in lane order: the last (4) stays.
  l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 0));
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  EXPECT_EQ(a.getDouble(0), 4);
  // n = 2: lanes 0 and 1 are inside, lane 2 is out: nothing is written.
  a = HostArray::zeros(DType::I32, {4});
  l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 2));
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->lane, 2);
  EXPECT_EQ(r.trap->message.substr(0, 30), "store of 4 bytes at 0x10010 (l");
  EXPECT_EQ(a.getDouble(0), 0);
  EXPECT_EQ(a.getDouble(2), 0);
}

TEST(InterpEngine, PartialResultsAreWrittenBackOnATrap) {
  // Program 0 stores, program 1 divides by zero: program 0's store is kept.
  auto k = compileTc(R"(
__global__ void p(int *a, int z) {
  int pid = get_program_id(0);
  *(a + pid) = 10 / (z + 1 - pid);
}
)");
  Launch l;
  HostArray a = HostArray::zeros(DType::I32, {2});
  l.args.setBuffer("a", &a);
  l.args.setScalar("z", ScalarValue::ofInt(DType::I32, 0));
  RunResult r = l.run(*k, {2, 1, 1});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::DivisionByZero);
  EXPECT_EQ(r.trap->programId, (std::array<int64_t, 3>{1, 0, 0}));
  EXPECT_EQ(a.getDouble(0), 10);
}

//===----------------------------------------------------------------------===//
// Poison
//===----------------------------------------------------------------------===//

const char *kPoisonSrc = R"(
__global__ void p(float *a, float *out, int n, int mode) {
  int r[8] = 0 ... 8;
  bool m[8] = r < n;
  float x[8] = *?(m)(a + r);
  float y[8] = 1.0 / x + x;
  if (mode == 0)
    *?(m)(out + r) = y;
  if (mode == 1)
    *(out + r) = y;
  if (mode == 2)
    *(out + r) = m ? y : -1.0;
  if (mode == 3)
    *out = y[+];
}
)";

RunResult runPoison(int mode, HostArray &out) {
  auto k = compileTc(kPoisonSrc);
  Launch l;
  HostArray a = arrayOf(DType::F32, {1, 2, 4, 8, 0, 0, 0, 0});
  out = HostArray::zeros(DType::F32, {8});
  l.args.setBuffer("a", &a);
  l.args.setBuffer("out", &out);
  l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 4));
  l.args.setScalar("mode", ScalarValue::ofInt(DType::I32, mode));
  return l.run(*k);
}

TEST(InterpEngine, PoisonPropagatesAndTrapsWhereItMatters) {
  HostArray out;
  // Masked store with the load's mask: fine. y = 1/x + x: 2, 2.5, 4.25, 8.125.
  ASSERT_EQ(runPoison(0, out).status, RunResult::Status::Ok);
  EXPECT_EQ(out.getDouble(0), 2);
  EXPECT_EQ(out.getDouble(3), 8.125);
  EXPECT_EQ(out.getDouble(4), 0);
  // Unmasked store: lane 4 is poison.
  RunResult r = runPoison(1, out);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::UndefinedValue);
  EXPECT_EQ(r.trap->lane, 4);
  EXPECT_EQ(out.getDouble(0), 0); // nothing stored
  // A select on the mask makes every lane defined.
  ASSERT_EQ(runPoison(2, out).status, RunResult::Status::Ok);
  EXPECT_EQ(out.getDouble(1), 2.5);
  EXPECT_EQ(out.getDouble(5), -1);
  // A reduction over a poison lane is poison.
  r = runPoison(3, out);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::UndefinedValue);
  EXPECT_EQ(r.trap->lane, -1);
}

TEST(InterpEngine, PoisonLanesSkipTrapChecks) {
  // The masked-off lanes hold no value: 1 / x there neither traps nor matters.
  auto k = compileTc(R"(
__global__ void d(int *a, int *out) {
  int r[4] = 0 ... 4;
  bool m[4] = r < 2;
  int x[4] = *?(m)(a + r);
  *?(m)(out + r) = 12 / x;
}
)");
  Launch l;
  HostArray a = arrayOf(DType::I32, {3, 4, 0, 0}), out = HostArray::zeros(DType::I32, {4});
  l.args.setBuffer("a", &a);
  l.args.setBuffer("out", &out);
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  EXPECT_EQ(out.getDouble(0), 4);
  EXPECT_EQ(out.getDouble(1), 3);
}

TEST(InterpEngine, PoisonInABranchConditionTraps) {
  auto k = compileTc(R"(
__global__ void b(float *a, int n) {
  float x = *?(n > 0) a;
  if (x > 0)
    *a = 1.0;
}
)");
  Launch l;
  HostArray a = arrayOf(DType::F32, {5});
  l.args.setBuffer("a", &a);
  l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 0));
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::UndefinedValue);
  l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 1));
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  EXPECT_EQ(a.getDouble(0), 1);
}

//===----------------------------------------------------------------------===//
// Atomics
//===----------------------------------------------------------------------===//

TEST(InterpEngine, AtomicLanesApplyInRowMajorOrder) {
  // Four lanes add 1, 2, 3, 4 to q[0]: old values 0, 1, 3, 6; q[0] = 10.
  auto k = compileTc(R"(
__global__ void at(int *q, int *old) {
  int r[4] = 0 ... 4;
  *(old + r) = atomic_add(q + r * 0, r + 1);
  *(old + 4) = atomic_cas(q + 1, 5, 7);
  *(old + 5) = atomic_cas(q + 1, 5, 9);
  *(old + 6) = atomic_xchg(q + 2, 3);
  *(old + 7) = atomic_max(q + 2, -4);
}
)");
  Launch l;
  HostArray q = arrayOf(DType::I32, {0, 5, 1}), old = HostArray::zeros(DType::I32, {8});
  l.args.setBuffer("q", &q);
  l.args.setBuffer("old", &old);
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  std::vector<double> want = {0, 1, 3, 6, 5, 7, 1, 3};
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(old.getDouble(i), want[static_cast<size_t>(i)]) << i;
  EXPECT_EQ(q.getDouble(0), 10);
  EXPECT_EQ(q.getDouble(1), 7);
  EXPECT_EQ(q.getDouble(2), 3);
}

TEST(InterpEngine, AtomicsAcrossProgramsAndThreads) {
  // 256 programs each add 1 and their id: q[0] = 256, q[1] = 0 + 1 + ... + 255 = 32640.
  auto k = compileTc(R"(
__global__ void cnt(int *q) {
  int pid = get_program_id(0);
  atomic_add(q, 1);
  atomic_add(q + 1, pid);
}
)");
  for (unsigned threads : {1u, 4u}) {
    Launch l;
    l.opts.threads = threads;
    HostArray q = HostArray::zeros(DType::I32, {2});
    l.args.setBuffer("q", &q);
    ASSERT_EQ(l.run(*k, {256, 1, 1}).status, RunResult::Status::Ok);
    EXPECT_EQ(q.getDouble(0), 256);
    EXPECT_EQ(q.getDouble(1), 32640);
  }
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

TEST(InterpEngine, ForOpRunsWhileBelowTheUpperBound) {
  // iv = 0, 3, 6, 9 (< 10): s = 18, and the last iv carried is 9.
  auto k = compileTir(R"(
kernel @f(%p: !ptr<i32>) {
  %z = constant <value = 0> : i32
  %ub = constant <value = 10> : i32
  %st = constant <value = 3> : i32
  %s, %last = for %z, %ub, %st, %z, %z : i32, i32 {
  ^(%iv: i32, %acc: i32, %l: i32):
    %n = add %acc, %iv : i32
    yield %n, %iv
  }
  store %p, %s
  %one = constant <value = 1> : i64
  %p1 = addptr %p, %one : !ptr<i32>
  store %p1, %last
  return
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray p = HostArray::zeros(DType::I32, {2});
  l.args.setBuffer("p", &p);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error;
  EXPECT_EQ(p.getDouble(0), 18);
  EXPECT_EQ(p.getDouble(1), 9);
}

TEST(InterpEngine, LoopsAndBranches) {
  // Collatz steps of 27: 111. Tiles carried through a loop: acc = 0+1+2+3 per lane.
  auto k = compileTc(R"(
__global__ void c(int *out, float *facc) {
  int n = 27;
  int steps = 0;
  while (n != 1) {
    if (n % 2 == 0)
      n = n / 2;
    else
      n = 3 * n + 1;
    steps++;
  }
  *out = steps;
  float acc[4] = 0;
  for (int j = 0; j < 4; j++) {
    if (j == 2)
      continue;
    acc += j;
  }
  int r[4] = 0 ... 4;
  *(facc + r) = acc + r;
}
)");
  Launch l;
  HostArray out = HostArray::zeros(DType::I32, {1}), facc = HostArray::zeros(DType::F32, {4});
  l.args.setBuffer("out", &out);
  l.args.setBuffer("facc", &facc);
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  EXPECT_EQ(out.getDouble(0), 111);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(facc.getDouble(i), 4 + i); // 0 + 1 + 3 (2 skipped) + i
}

TEST(InterpEngine, StepLimitNamesTheLoop) {
  auto k = compileTc(R"(
__global__ void spin(int *out) {
  int i = 0;
  while (i >= 0)
    i = i | 1;
  *out = i;
}
)");
  Launch l;
  HostArray out = HostArray::zeros(DType::I32, {1});
  l.args.setBuffer("out", &out);
  l.opts.maxSteps = 1000;
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::StepLimit);
  EXPECT_EQ(r.steps, 1000u);
  EXPECT_TRUE(r.trap->line == 4 || r.trap->line == 5) << r.trap->line;
}

//===----------------------------------------------------------------------===//
// print, assert, trace
//===----------------------------------------------------------------------===//

TEST(InterpEngine, PrintFormatsLikeNumPy) {
  auto k = compileTc(R"(
__global__ void pr(float *f, bool *b, int n) {
  int r[4] = 0 ... 4;
  int r2[2] = 0 ... 2;
  print("r", r);
  print("m", r2[:, newaxis] * 2 + r2[newaxis, :]);
  print("f", *(f + r));
  print("b", *(b + r2));
  print("two", n, r2);
  print("none");
}
)");
  Launch l;
  HostArray f = arrayOf(DType::F32, {1, 2.5, -0.0, NAN});
  HostArray b = arrayOf(DType::Bool, {1, 0});
  l.args.setBuffer("f", &f);
  l.args.setBuffer("b", &b);
  l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 5));
  ASSERT_EQ(l.run(*k, {1, 2, 1}).status, RunResult::Status::Ok);
  std::string one = "r: array([0, 1, 2, 3], dtype=int32)\n"
                    "@m: array([[0, 1],\n"
                    "       [2, 3]], dtype=int32)\n"
                    "@f: array([ 1., 2.5, -0., nan], dtype=float32)\n"
                    "@b: array([ True, False], dtype=bool)\n"
                    "@two: array(5, dtype=int32), array([0, 1], dtype=int32)\n"
                    "@none\n";
  auto expand = [&](const std::string &prefix) {
    std::string s = prefix + one, out;
    for (char c : s)
      out += c == '@' ? prefix : std::string(1, c);
    return out;
  };
  EXPECT_EQ(l.out.str(), expand("[program (0, 0, 0)] ") + expand("[program (0, 1, 0)] "));
}

TEST(InterpEngine, PrintSummarisesLargeTiles) {
  auto k = compileTc(R"(
__global__ void pr() {
  print("big", 0 ... 2048);
}
)");
  Launch l;
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  EXPECT_EQ(l.out.str(), "[program (0, 0, 0)] big: "
                         "array([   0,    1,    2, ..., 2045, 2046, 2047], shape=(2048,), "
                         "dtype=int32)\n");
}

TEST(InterpEngine, AssertNamesTheMessageAndFirstFalseLane) {
  auto k = compileTc(R"(
__global__ void as(int n) {
  int r[8] = 0 ... 8;
  assert(r < n, "r must stay below n");
}
)");
  Launch l;
  l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 5));
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::AssertionFailed);
  EXPECT_EQ(r.trap->lane, 5);
  EXPECT_NE(r.trap->message.find("r must stay below n"), std::string::npos);
  EXPECT_EQ(r.trap->line, 4u);
  EXPECT_EQ(r.trap->sourceLine, "  assert(r < n, \"r must stay below n\");");
}

TEST(InterpEngine, TraceWritesOneLinePerOp) {
  auto k = compileTc("__global__ void t(int *p) {\n  int x = 3;\n  *p = x * 2;\n}\n");
  Launch l;
  l.opts.trace = true;
  HostArray p = HostArray::zeros(DType::I32, {1});
  l.args.setBuffer("p", &p);
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  std::string s = l.out.str();
  // The source name where a variable holds the value, else the IR number.
  EXPECT_NE(s.find("[program (0, 0, 0)] k.tc:2:11: x = constant : i32 3\n"), std::string::npos)
      << s;
  EXPECT_NE(s.find("%2 = mul : i32 6\n"), std::string::npos) << s;
  EXPECT_NE(s.find(": store\n"), std::string::npos) << s;
}

//===----------------------------------------------------------------------===//
// Grid and threads
//===----------------------------------------------------------------------===//

const char *kGridSrc = R"(
__global__ void g(int *out, int bad) {
  int x = get_program_id(0);
  int y = get_program_id(1);
  int z = get_program_id(2);
  int id = (x * get_num_programs(1) + y) * get_num_programs(2) + z;
  print("id", id);
  *(out + id) = 1000 / (id - bad) + x * 100 + y * 10 + z;
}
)";

TEST(InterpEngine, ProgramsRunRowMajorOverXYZ) {
  auto k = compileTc(kGridSrc);
  Launch l;
  HostArray out = HostArray::zeros(DType::I32, {12});
  l.args.setBuffer("out", &out);
  l.args.setScalar("bad", ScalarValue::ofInt(DType::I32, -1000));
  ASSERT_EQ(l.run(*k, {2, 3, 2}).status, RunResult::Status::Ok);
  // The prints come out in index order: (0,0,0), (0,0,1), (0,1,0), ...
  std::string want;
  for (int i = 0; i < 12; ++i)
    want += "[program (" + std::to_string(i / 6) + ", " + std::to_string(i / 2 % 3) + ", " +
            std::to_string(i % 2) + ")] id: array(" + std::to_string(i) + ", dtype=int32)\n";
  EXPECT_EQ(l.out.str(), want);
  // out[id] = 1000 / (id + 1000) (0 but for id 0) + the pid digits.
  EXPECT_EQ(out.getDouble(0), 1);
  EXPECT_EQ(out.getDouble(11), 121); // (1, 2, 1)
}

TEST(InterpEngine, ThreadCountDoesNotChangeResultsOutputOrTrap) {
  auto k = compileTc(kGridSrc);
  std::string firstOut;
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    Launch l;
    l.opts.threads = threads;
    HostArray out = HostArray::zeros(DType::I32, {200});
    l.args.setBuffer("out", &out);
    l.args.setScalar("bad", ScalarValue::ofInt(DType::I32, -7));
    ASSERT_EQ(l.run(*k, {10, 5, 4}).status, RunResult::Status::Ok);
    if (threads == 1)
      firstOut = l.out.str();
    EXPECT_EQ(l.out.str(), firstOut) << threads;
    EXPECT_EQ(out.getDouble(199), 1000 / 206 + 943); // (9, 4, 3)
  }
  // Only program 37 divides by zero: the trap names it.
  for (unsigned threads : {1u, 4u}) {
    for (int rep = 0; rep < 3; ++rep) {
      Launch l;
      l.opts.threads = threads;
      HostArray out = HostArray::zeros(DType::I32, {200});
      l.args.setBuffer("out", &out);
      l.args.setScalar("bad", ScalarValue::ofInt(DType::I32, 37));
      RunResult r = l.run(*k, {10, 5, 4});
      ASSERT_EQ(r.status, RunResult::Status::Trapped);
      EXPECT_EQ(r.trap->programId, (std::array<int64_t, 3>{1, 4, 1})); // 37 = (1*5 + 4)*4 + 1
      // Output stops with the trapping program's print.
      std::string s = l.out.str();
      EXPECT_EQ(std::count(s.begin(), s.end(), '\n'), 38) << threads;
    }
  }
}

// Without print or trace, threads take programs a few at a time (up to 16)
// and add up their steps once: the same results and step count at any thread
// count, and with two trapping programs far apart the lower one is
// reported and every program below it ran.
const char *kQuietGridSrc = R"(
__global__ void q(int *out, int bad, int bad2) {
  int id = get_program_id(0);
  *(out + id) = 1000 / ((id - bad) * (id - bad2)) + id;
}
)";

TEST(InterpEngine, ProgramsTakenSeveralAtATimeKeepResultsStepsAndTrap) {
  auto k = compileTc(kQuietGridSrc);
  ASSERT_TRUE(k);
  const int64_t n = 2000;
  uint64_t steps1 = 0;
  for (unsigned threads : {1u, 3u, 8u}) {
    Launch l;
    l.opts.threads = threads;
    HostArray out = HostArray::zeros(DType::I32, {n});
    l.args.setBuffer("out", &out);
    l.args.setScalar("bad", ScalarValue::ofInt(DType::I32, -1));
    l.args.setScalar("bad2", ScalarValue::ofInt(DType::I32, -2));
    RunResult r = l.run(*k, {n, 1, 1});
    ASSERT_EQ(r.status, RunResult::Status::Ok);
    if (threads == 1)
      steps1 = r.steps;
    EXPECT_EQ(r.steps, steps1) << threads;
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(out.getDouble(i), static_cast<double>(1000 / ((i + 1) * (i + 2)) + i)) << i;
  }
  for (unsigned threads : {1u, 3u, 8u}) {
    Launch l;
    l.opts.threads = threads;
    HostArray out = HostArray::zeros(DType::I32, {n});
    l.args.setBuffer("out", &out);
    l.args.setScalar("bad", ScalarValue::ofInt(DType::I32, 1203));
    l.args.setScalar("bad2", ScalarValue::ofInt(DType::I32, 517));
    RunResult r = l.run(*k, {n, 1, 1});
    ASSERT_EQ(r.status, RunResult::Status::Trapped);
    EXPECT_EQ(r.trap->programId, (std::array<int64_t, 3>{517, 0, 0})) << threads;
    for (int64_t i = 0; i < 517; ++i)
      ASSERT_EQ(out.getDouble(i), static_cast<double>(1000 / ((i - 1203) * (i - 517)) + i))
          << i << " " << threads;
  }
}

TEST(InterpEngine, OnlyProgramRunsOneProgram) {
  auto k = compileTc(kGridSrc);
  Launch l;
  l.opts.onlyProgram = std::array<int64_t, 3>{1, 2, 0};
  HostArray out = HostArray::zeros(DType::I32, {12});
  l.args.setBuffer("out", &out);
  l.args.setScalar("bad", ScalarValue::ofInt(DType::I32, -1000));
  ASSERT_EQ(l.run(*k, {2, 3, 2}).status, RunResult::Status::Ok);
  EXPECT_EQ(l.out.str(), "[program (1, 2, 0)] id: array(10, dtype=int32)\n");
  for (int i = 0; i < 12; ++i)
    EXPECT_EQ(out.getDouble(i), i == 10 ? 120 : 0);
  l.opts.onlyProgram = std::array<int64_t, 3>{2, 0, 0};
  RunResult r = l.run(*k, {2, 3, 2});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::InvalidLaunch);
}

//===----------------------------------------------------------------------===//
// Launch checks
//===----------------------------------------------------------------------===//

TEST(InterpEngine, LaunchChecksArguments) {
  auto k = compileTc(R"(
__global__ void l(float *x, int8 n, int lda __multipleof(8)) {
  *x = n + lda;
}
)");
  HostArray x = HostArray::zeros(DType::F32, {1}), xi = HostArray::zeros(DType::I32, {1});
  auto launchWith = [&](HostArray *buf, int64_t n, int64_t lda) {
    Launch l;
    l.args.setBuffer("x", buf);
    l.args.setScalar("n", ScalarValue::ofInt(DType::I32, n));
    l.args.setScalar("lda", ScalarValue::ofInt(DType::I64, lda));
    return l.run(*k);
  };
  RunResult r = launchWith(&x, 3, 16);
  ASSERT_EQ(r.status, RunResult::Status::Ok);
  EXPECT_EQ(x.getDouble(0), 19);
  // The buffer's dtype must be the pointee's.
  r = launchWith(&xi, 3, 16);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::InvalidLaunch);
  EXPECT_NE(r.trap->message.find("int32"), std::string::npos);
  EXPECT_NE(r.trap->message.find("float32"), std::string::npos);
  EXPECT_FALSE(r.trap->hasProgram);
  // A scalar must fit the parameter type: 300 is not an int8.
  r = launchWith(&x, 300, 16);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::InvalidLaunch);
  EXPECT_NE(r.trap->message.find("'n'"), std::string::npos);
  // __multipleof(8) is checked: 20 is not a multiple.
  r = launchWith(&x, 3, 20);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::Misaligned);
  EXPECT_NE(r.trap->message.find("20"), std::string::npos);
  // Grid dimensions must be >= 1.
  Launch l;
  l.args.setBuffer("x", &x);
  l.args.setScalar("n", ScalarValue::ofInt(DType::I8, 1));
  l.args.setScalar("lda", ScalarValue::ofInt(DType::I32, 8));
  EXPECT_EQ(l.run(*k, {0, 1, 1}).trap->kind, TrapKind::InvalidLaunch);
  EXPECT_EQ(l.run(*k, {65536, 65536, 1}).trap->kind, TrapKind::InvalidLaunch); // 2^32 programs
}

TEST(InterpEngine, AlignedClaimsAreKeptByTheLayout) {
  // 'a' holds 10 bytes at 0x10000; 'b' follows at 0x1000a + 4096 rounded up
  // to 256 = 0x11100, or, with a larger claim, to the claim (as a GPU
  // allocator gives such a buffer): 0x11200 for 512, 0x11400 for 1024,
  // 0x20000 for 65536. Each launch places its buffers afresh.
  for (const char *align : {"256", "512", "1024", "65536"}) {
    auto k = compileTc(R"(
__global__ void al(int8 *a __aligned(1024), float *b __aligned(A)) {
  *b = *a;
}
)",
                       {{"A", align}});
    HostArray a = HostArray::zeros(DType::I8, {10}), b = HostArray::zeros(DType::F32, {1});
    a.setDouble(0, 7);
    Launch l;
    l.args.setBuffer("a", &a);
    l.args.setBuffer("b", &b);
    RunResult r = l.run(*k);
    EXPECT_EQ(r.status, RunResult::Status::Ok)
        << align << ": " << (r.trap ? r.trap->render() : r.error);
    EXPECT_EQ(b.getDouble(0), 7.0) << align;
  }
  // One array bound to two parameters, the claim on the second: the one
  // region is placed for it.
  auto twice = compileTc(R"(
__global__ void al(int8 *a, float *x, float *y __aligned(4096)) {
  *y = *a + *x;
}
)");
  HostArray a = HostArray::zeros(DType::I8, {10}), x = HostArray::zeros(DType::F32, {1});
  x.setDouble(0, 2);
  Launch l;
  l.args.setBuffer("a", &a);
  l.args.setBuffer("x", &x);
  l.args.setBuffer("y", &x);
  RunResult r = l.run(*twice);
  EXPECT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  EXPECT_EQ(x.getDouble(0), 2.0);
}

TEST(InterpEngine, OneArrayBoundTwiceIsOneBuffer) {
  // Both parameters see the same memory: the store through y is read through x.
  auto k = compileTc(R"(
__global__ void alias(int *x, int *y) {
  *y = 5;
  *(x + 1) = *x + 1;
}
)");
  HostArray a = HostArray::zeros(DType::I32, {2});
  Launch l;
  l.args.setBuffer("x", &a);
  l.args.setBuffer("y", &a);
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  EXPECT_EQ(a.getDouble(0), 5);
  EXPECT_EQ(a.getDouble(1), 6);
}

TEST(InterpEngine, PointerTileSpanningTwoBuffers) {
  // Lanes 0-1 read a, lanes 2-3 read b: each lane is checked against its own buffer.
  auto k = compileTc(R"(
__global__ void two(float *a, float *b, float *out) {
  int r[4] = 0 ... 4;
  float *p[4] = r < 2 ? a + r : b + (r - 2);
  *(out + r) = *p;
  *p = r;
}
)");
  Launch l;
  HostArray a = arrayOf(DType::F32, {1, 2}), b = arrayOf(DType::F32, {3, 4});
  HostArray out = HostArray::zeros(DType::F32, {4});
  l.args.setBuffer("a", &a);
  l.args.setBuffer("b", &b);
  l.args.setBuffer("out", &out);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(out.getDouble(i), i + 1);
  EXPECT_EQ(a.getDouble(1), 1);
  EXPECT_EQ(b.getDouble(0), 2);
  EXPECT_EQ(b.getDouble(1), 3);
}

// Pointer provenance (docs/semantics.md rule 9): an access must lie in a
// buffer of a parameter its pointer is computed from. a and b hold 4 floats:
// a is [0x10000, 0x10010), b starts at 0x10010 + 4096 rounded up to 256 =
// 0x11100 = a + 1088 elements, out at 0x11110 + 4096 -> 0x12200.
const char *kCarriedPointer = R"(
kernel @f(%a: !ptr<f32>, %b: !ptr<f32>, %out: !ptr<f32>, %n: i32, %c: i32) {
  %z = constant <value = 0> : i32
  %ub = constant <value = 2> : i32
  %one = constant <value = 1> : i32
  %cz = cmp_gt %c, %z : i1
  %q = if %cz : !ptr<f32> {
    %q1 = addptr %a, %one : !ptr<f32>
    yield %q1
  } {
    yield %a
  }
  %zf = constant <value = 0.0> : f32
  %p, %s = for %z, %ub, %one, %q, %zf : !ptr<f32>, f32 {
  ^(%iv: i32, %pp: !ptr<f32>, %acc: f32):
    %v = load %pp : f32
    %acc2 = add %acc, %v : f32
    %pn = addptr %pp, %n : !ptr<f32>
    yield %pn, %acc2
  }
  store %out, %s
  %last = load %p : f32
  %o1 = addptr %out, %one : !ptr<f32>
  store %o1, %last
  return
}
)";

TEST(InterpEngine, ProvenanceFollowsForAndIfResults) {
  // The loaded pointer is an if's result, then a for's carried value: both
  // come from 'a' alone (their initial and yielded values).
  auto k = compileTir(kCarriedPointer);
  ASSERT_TRUE(k);
  Launch l;
  HostArray a = arrayOf(DType::F32, {1, 2, 3, 4}), b = arrayOf(DType::F32, {10, 20, 30, 40});
  HostArray out = HostArray::zeros(DType::F32, {2});
  l.args.setBuffer("a", &a);
  l.args.setBuffer("b", &b);
  l.args.setBuffer("out", &out);
  // c = 1, n = 1: a[1] + a[2] = 5, and the loop's last pointer a + 3 reads 4.
  l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 1));
  l.args.setScalar("c", ScalarValue::ofInt(DType::I32, 1));
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  EXPECT_EQ(out.getDouble(0), 5);
  EXPECT_EQ(out.getDouble(1), 4);
  // n = 1087: the second iteration reads a + 1 + 1087 = b[0].
  l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 1087));
  r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::OutOfBounds);
  EXPECT_EQ(r.trap->message, "load of 4 bytes at 0x11100 is inside 'b' [0x11100, 0x11110), but "
                             "the pointer comes from 'a' [0x10000, 0x10010)");
  // c = 0, n = 1088: the same through the if's other branch.
  l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 1088));
  l.args.setScalar("c", ScalarValue::ofInt(DType::I32, 0));
  r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::OutOfBounds);
  EXPECT_EQ(b.getDouble(0), 10);
  EXPECT_EQ(out.getDouble(0), 5); // nothing was stored
}

TEST(InterpEngine, ProvenanceTrapsOnEveryAccessPath) {
  // One source, pointers into 'b' through 'a' on each path of a load or
  // store: contiguous lanes, a 2-D block of rows, scattered lanes, masked
  // lanes (one lane on and in 'b'), a 0-d access. Each traps naming 'b' and
  // 'a' and writes nothing.
  auto k = compileTc(R"(
__global__ void k(float *a, float *b, int n, int mode) {
  int r[4] = 0 ... 4;
  int q[2] = 0 ... 2;
  if (mode == 0) *(b + r) = *(a + n + r);
  if (mode == 1) *(a + n + r) = 1.0;
  if (mode == 2) *(b + q[:, newaxis] * 2 + q[newaxis, :]) = *(a + n + q[:, newaxis] * 2 + q[newaxis, :]);
  if (mode == 3) *(a + n + q[:, newaxis] * 2 + q[newaxis, :]) = 1.0;
  if (mode == 4) *(b + r) = *(a + n + 3 - r);
  if (mode == 5) *(a + n + 3 - r) = 1.0;
  if (mode == 6) *(b + r) = *?(r == 1)(a + n + r);
  if (mode == 7) *?(r == 1)(a + n + r) = 1.0;
  if (mode == 8) *b = *(a + n);
  if (mode == 9) *(a + n) = 1.0;
  if (mode == 10) atomic_xchg(a + n + r, 1.0);
  if (mode == 11) atomic_cas(a + n, 0.0, 1.0);
}
)");
  ASSERT_TRUE(k);
  for (int mode = 0; mode < 12; ++mode) {
    SCOPED_TRACE("mode " + std::to_string(mode));
    Launch l;
    HostArray a = arrayOf(DType::F32, {1, 2, 3, 4}), b = HostArray::zeros(DType::F32, {4});
    l.args.setBuffer("a", &a);
    l.args.setBuffer("b", &b);
    l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 1088));
    l.args.setScalar("mode", ScalarValue::ofInt(DType::I32, mode));
    RunResult r = l.run(*k);
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << r.error;
    EXPECT_EQ(r.trap->kind, TrapKind::OutOfBounds);
    EXPECT_NE(r.trap->message.find("is inside 'b' [0x11100, 0x11110), but the pointer comes from "
                                   "'a' [0x10000, 0x10010)"),
              std::string::npos)
        << r.trap->message;
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(b.getDouble(i), 0);
    // The first active lane in 'b' is the one named.
    if (mode == 4 || mode == 5) {
      EXPECT_EQ(r.trap->lane, 0) << r.trap->message; // a + n + 3 is b[3]
    } else if (mode == 6 || mode == 7) {
      EXPECT_EQ(r.trap->lane, 1) << r.trap->message;
    }
  }
}

TEST(InterpEngine, PointerMadeFromAnIntegerMayReachAnyBuffer) {
  // Through i64 the pointer's parameter is not known: a + 1088 reads b[0].
  auto k = compileTir(R"(
kernel @f(%a: !ptr<f32>, %b: !ptr<f32>) {
  %i = bitcast %a : i64
  %off = constant <value = 4352> : i64
  %j = add %i, %off : i64
  %p = bitcast %j : !ptr<f32>
  %v = load %p : f32
  store %a, %v
  return
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray a = HostArray::zeros(DType::F32, {4}), b = arrayOf(DType::F32, {7, 0, 0, 0});
  l.args.setBuffer("a", &a);
  l.args.setBuffer("b", &b);
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  EXPECT_EQ(a.getDouble(0), 7);
}

TEST(InterpEngine, OneArrayBoundTwiceIsReachedThroughEither) {
  // x and y are one buffer: y + 1 + i, computed from y, reads what x + 1 + i
  // addresses, in a loop advancing the pointer, and stores through x.
  auto k = compileTc(R"(
__global__ void alias(int *x, int *y, int n) {
  int i[2] = 0 ... 2;
  int acc[2] = 0;
  for (int k = 0; k < n; k++) {
    acc += *(y + i);
    y += 2;
  }
  *(x + i) = acc;
}
)");
  ASSERT_TRUE(k);
  HostArray a = arrayOf(DType::I32, {1, 2, 3, 4, 5, 6});
  Launch l;
  l.args.setBuffer("x", &a);
  l.args.setBuffer("y", &a);
  l.args.setScalar("n", ScalarValue::ofInt(DType::I32, 3));
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  EXPECT_EQ(a.getDouble(0), 1 + 3 + 5);
  EXPECT_EQ(a.getDouble(1), 2 + 4 + 6);
}

TEST(InterpEngine, DotPoisonFollowsRowsAndColumns) {
  // a's row 1 is masked off: only row 1 of a @ b is undefined; storing rows 0
  // and 1 through a mask on row 0 works, storing row 1 traps at lane 2 (1, 0).
  auto k = compileTc(R"(
__global__ void dp(float *pa, float *pb, float *pc, int mode) {
  int r[2] = 0 ... 2;
  bool m[2, 2] = r[:, newaxis] < 1;
  float a[2, 2] = *?(m)(pa + r[:, newaxis] * 2 + r[newaxis, :]);
  float b[2, 2] = *(pb + r[:, newaxis] * 2 + r[newaxis, :]);
  float c[2, 2] = a @ b;
  if (mode == 0)
    *?(m)(pc + r[:, newaxis] * 2 + r[newaxis, :]) = c;
  else
    *(pc + r[:, newaxis] * 2 + r[newaxis, :]) = c;
}
)");
  HostArray a = arrayOf(DType::F32, {1, 2, 3, 4}), b = arrayOf(DType::F32, {1, 0, 0, 1});
  HostArray c = HostArray::zeros(DType::F32, {4});
  Launch l;
  l.args.setBuffer("pa", &a);
  l.args.setBuffer("pb", &b);
  l.args.setBuffer("pc", &c);
  l.args.setScalar("mode", ScalarValue::ofInt(DType::I32, 0));
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  EXPECT_EQ(c.getDouble(0), 1);
  EXPECT_EQ(c.getDouble(1), 2);
  l.args.setScalar("mode", ScalarValue::ofInt(DType::I32, 1));
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::UndefinedValue);
  EXPECT_EQ(r.trap->lane, 2);
}

TEST(InterpEngine, PrintUsesShortestDigitsOfTheDtype) {
  // fp16 0.1 is 0.0999755859375: "0.1" reads back to it. 65504 needs 3 digits.
  auto k = compileTc(R"(
__global__ void ph(half *h) {
  int r[4] = 0 ... 4;
  print("h", *(h + r));
}
)");
  Launch l;
  HostArray h = arrayOf(DType::F16, {0.1, 1, 65504, -INFINITY});
  l.args.setBuffer("h", &h);
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  EXPECT_EQ(
      l.out.str(),
      "[program (0, 0, 0)] h: array([     0.1,       1., 6.55e+04,     -inf], dtype=float16)\n");
}

TEST(InterpEngine, ScalarArgumentsConvertToTheParameterType) {
  // A float parameter takes an int (rounded); an int parameter takes an
  // integral float; a non-integral float for an int is an invalid launch.
  auto k = compileTc(R"(
__global__ void sc(float *o, float x, int n) {
  *o = x + n;
}
)");
  HostArray o = HostArray::zeros(DType::F32, {1});
  Launch l;
  l.args.setBuffer("o", &o);
  l.args.setScalar("x", ScalarValue::ofInt(DType::I64, 16777217)); // rounds to 2^24
  l.args.setScalar("n", ScalarValue::ofFloat(DType::F64, 3.0));
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  EXPECT_EQ(o.getDouble(0), 16777216.0 + 4); // 2^24 + 3 rounds to even: 2^24 + 4
  l.args.setScalar("n", ScalarValue::ofFloat(DType::F64, 3.5));
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::InvalidLaunch);
  EXPECT_EQ(r.trap->message, "argument 'n' = 3.5 (float64) does not fit parameter type int32");
}

TEST(InterpEngine, TraceSummarisesTiles) {
  auto k = compileTc("__global__ void t() {\n  int r[8] = 0 ... 8;\n}\n");
  Launch l;
  l.opts.trace = true;
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  EXPECT_NE(l.out.str().find("r = range : tile<8xi32> min=0 max=7 first=[0, 1, 2, 3, ...]\n"),
            std::string::npos)
      << l.out.str();
}

TEST(InterpEngine, TilesTooLargeToHoldAreAnErrorNotACrash) {
  // 2^30 lanes would need 4 GiB: the interpreter refuses the kernel (Status::Error).
  auto k = compileTir(R"(
kernel @big(%p: !ptr<f32>) {
  %z = constant <value = 0.0> : tile<32768x32768xf32>
  return
}
)");
  ASSERT_TRUE(k);
  Launch l;
  HostArray p = HostArray::zeros(DType::F32, {1});
  l.args.setBuffer("p", &p);
  RunResult r = l.run(*k);
  EXPECT_EQ(r.status, RunResult::Status::Error);
  EXPECT_NE(r.error.find("2^24"), std::string::npos) << r.error;
}

TEST(InterpEngine, TwoDimensionalBlockLoads) {
  // A 4 x 4 block with row stride ld of a row-major array x: rows are copied
  // whole when they are inside; with 14 elements and ld = 4 the last row's
  // lanes 14 and 15 are outside, and lane 14 is named.
  auto k = compileTc(R"(
__global__ void blk(float *x, float *out, int ld) {
  int r[4] = 0 ... 4;
  *(out + r[:, newaxis] * 4 + r[newaxis, :]) = *(x + r[:, newaxis] * ld + r[newaxis, :]);
}
)");
  std::vector<double> v(40);
  for (int i = 0; i < 40; ++i)
    v[static_cast<size_t>(i)] = i;
  HostArray x = arrayOf(DType::F32, v), out = HostArray::zeros(DType::F32, {16});
  Launch l;
  l.args.setBuffer("x", &x);
  l.args.setBuffer("out", &out);
  l.args.setScalar("ld", ScalarValue::ofInt(DType::I32, 10));
  ASSERT_EQ(l.run(*k).status, RunResult::Status::Ok);
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(out.getDouble(i), (i / 4) * 10 + i % 4);
  HostArray small = arrayOf(DType::F32, std::vector<double>(v.begin(), v.begin() + 14));
  l.args.setBuffer("x", &small);
  l.args.setScalar("ld", ScalarValue::ofInt(DType::I32, 4));
  RunResult r = l.run(*k);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::OutOfBounds);
  EXPECT_EQ(r.trap->lane, 14);
}

} // namespace

// Launches with threads reuse a pool of threads kept between launches: several
// launches at once from different threads each get every program run once,
// and a forked child (the fuzzer forks its workers) launches with threads on
// a pool of its own (the parent's threads are not in the child).
namespace {
const char *kSquares = R"(__global__ void sq(int *Y) {
  int i[64] = get_program_id(0) * 64 + (0 ... 64);
  *(Y + i) = i * i;
}
)";

bool squaresRun(const tc::CompiledKernel &k, unsigned threads) {
  HostArray y = HostArray::zeros(DType::I32, {64 * 37});
  Launch l;
  l.args.setBuffer("Y", &y);
  l.opts.threads = threads;
  if (l.run(k, {37, 1, 1}).status != RunResult::Status::Ok)
    return false;
  for (int64_t i = 0; i < y.numElements(); ++i)
    if (y.getDouble(i) != static_cast<double>(i * i))
      return false;
  return true;
}
} // namespace

TEST(InterpEngine, ThreadPoolServesConcurrentLaunchesAndForkedChildren) {
  auto k = compileTc(kSquares);
  ASSERT_TRUE(k);
  ASSERT_TRUE(squaresRun(*k, 4));
  std::vector<std::thread> callers;
  std::atomic<int> good{0};
  for (unsigned t = 0; t < 4; ++t)
    callers.emplace_back([&, t] {
      for (int rep = 0; rep < 5; ++rep)
        good += squaresRun(*k, 2 + t);
    });
  for (std::thread &c : callers)
    c.join();
  EXPECT_EQ(good.load(), 20);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    alarm(30); // a child waiting on threads it does not have dies instead of hanging
    _exit(squaresRun(*k, 3) && squaresRun(*k, 5) ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

// Pool threads that just finished a launch take the next one while they
// spin (no sleep in between), and the launching thread waits for them the
// same way: launch after launch, with the thread count changing, at once
// from two callers, every result is whole.
TEST(InterpEngine, BackToBackLaunchesHandOffToSpinningThreads) {
  auto k = compileTc(kSquares);
  ASSERT_TRUE(k);
  int good = 0;
  for (int rep = 0; rep < 200; ++rep)
    good += squaresRun(*k, 2 + rep % 3);
  EXPECT_EQ(good, 200);
  std::atomic<int> both{0};
  std::thread other([&] {
    for (int rep = 0; rep < 50; ++rep)
      both += squaresRun(*k, 3);
  });
  for (int rep = 0; rep < 50; ++rep)
    both += squaresRun(*k, 2);
  other.join();
  EXPECT_EQ(both.load(), 100);
}
