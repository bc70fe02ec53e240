// The IR passes: before/after modules written by hand, and the semantics of
// constant folding (docs/semantics.md) checked value by value.
#include "ir/IRParser.h"
#include "ir/Passes.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <sstream>

using namespace tc;
using namespace tc::ir;

namespace {

std::unique_ptr<Module> parseText(const std::string &text) {
  SourceManager sm;
  DiagEngine diags(sm);
  std::ostringstream err;
  diags.setOutput(&err);
  auto m = parseModule(sm.addBuffer("p.tir", text), sm, diags);
  EXPECT_TRUE(m) << err.str() << text;
  if (m) {
    EXPECT_TRUE(verifyModule(*m).empty()) << formatFailures(*m, verifyModule(*m)) << text;
  }
  return m;
}

/// Runs `pass` on `text` and returns the printed result (checked by the verifier).
std::string runPass(const std::string &text, bool (*pass)(Module &), bool expectChange = true) {
  auto m = parseText(text);
  if (!m)
    return "<parse error>";
  EXPECT_EQ(pass(*m), expectChange) << text;
  EXPECT_TRUE(verifyModule(*m).empty()) << formatFailures(*m, verifyModule(*m));
  return toString(*m, PrintOptions{false});
}

/// Same alternative and same bits (so -0.0 differs from 0.0 and NaN from NaN).
bool sameAttr(const AttrValue &a, const AttrValue &b) {
  if (a.index() != b.index())
    return false;
  if (const double *x = std::get_if<double>(&a)) {
    double y = std::get<double>(b);
    return std::memcmp(x, &y, sizeof y) == 0;
  }
  return a == b;
}

std::string attrText(const std::optional<AttrValue> &v) {
  if (!v)
    return "not folded";
  std::ostringstream os;
  if (const int64_t *i = std::get_if<int64_t>(&*v))
    os << "int " << *i;
  else if (const double *d = std::get_if<double>(&*v))
    os << "float " << *d << (std::signbit(*d) ? " (sign bit set)" : "");
  return os.str();
}

struct FoldCase {
  const char *consts; // "name=value:type;..."
  const char *expr;   // the op, with operands %a %b %c
  const char *type;   // its result type
  std::optional<AttrValue> want;
};

/// Folds `kernel { consts; %r = expr : type; print %r }` and returns the value
/// printed, if it became a constant.
std::optional<AttrValue> foldOne(const FoldCase &c) {
  std::string text = "kernel @k() {\n";
  std::string consts = c.consts;
  size_t pos = 0;
  while (pos < consts.size()) {
    size_t end = consts.find(';', pos);
    if (end == std::string::npos)
      end = consts.size();
    std::string item = consts.substr(pos, end - pos);
    size_t eq = item.find('='), colon = item.rfind(':');
    text += "  %" + item.substr(0, eq) +
            " = constant <value = " + item.substr(eq + 1, colon - eq - 1) +
            "> : " + item.substr(colon + 1) + "\n";
    pos = end + 1;
  }
  text += "  %r = " + std::string(c.expr) + " : " + c.type +
          "\n  print %r <label = \"\">\n  return\n}\n";
  auto m = parseText(text);
  if (!m)
    return AttrValue(std::string("<parse error>"));
  foldConstants(*m);
  EXPECT_TRUE(verifyModule(*m).empty()) << formatFailures(*m, verifyModule(*m));
  const Op &print = *m->functions[0]->body().ops()[m->functions[0]->body().ops().size() - 2];
  const Op *def = print.operand(0)->definingOp();
  if (def->kind() != OpKind::Constant)
    return std::nullopt;
  return *def->attr("value");
}

void checkFolds(const std::vector<FoldCase> &cases) {
  for (const FoldCase &c : cases) {
    std::optional<AttrValue> got = foldOne(c);
    bool ok = got.has_value() == c.want.has_value() && (!got || sameAttr(*got, *c.want));
    EXPECT_TRUE(ok) << c.consts << " | " << c.expr << " : " << c.type << "\n  got " << attrText(got)
                    << ", want " << attrText(c.want);
  }
}

AttrValue I(int64_t v) {
  return AttrValue(v);
}
AttrValue F(double v) {
  return AttrValue(v);
}
const std::optional<AttrValue> kNone = std::nullopt;
const double kInf = INFINITY;

} // namespace

TEST(IRFold, IntegerArithmeticWrapsAndTruncates) {
  checkFolds({
      {"a=7:i32;b=-2:i32", "div %a, %b", "i32", I(-3)},
      {"a=7:i32;b=-2:i32", "rem %a, %b", "i32", I(1)},
      {"a=-7:i32;b=2:i32", "div %a, %b", "i32", I(-3)},
      {"a=-7:i32;b=2:i32", "rem %a, %b", "i32", I(-1)},
      {"a=127:i8;b=1:i8", "add %a, %b", "i8", I(-128)},
      {"a=250:u8;b=10:u8", "add %a, %b", "u8", I(4)},
      {"a=3:u8;b=5:u8", "sub %a, %b", "u8", I(254)},
      {"a=-2147483648:i32;b=1:i32", "sub %a, %b", "i32", I(2147483647)},
      {"a=65536:i32", "mul %a, %a", "i32", I(0)},
      {"a=-1:u64;b=1:u64", "add %a, %b", "u64", I(0)},
      {"a=-1:u64;b=2:u64", "div %a, %b", "u64", I(INT64_MAX)},
      {"a=4294967295:u32;b=2:u32", "div %a, %b", "u32", I(2147483647)},
      {"a=-128:i8", "neg %a", "i8", I(-128)},
      {"a=-128:i8", "abs %a", "i8", I(-128)},
      {"a=-5:i32", "abs %a", "i32", I(5)},
      {"a=5:u8", "neg %a", "u8", I(251)},
      {"a=0:i32", "not %a", "i32", I(-1)},
      {"a=0:u16", "not %a", "u16", I(65535)},
      {"a=1:i1", "not %a", "i1", I(0)},
      {"a=6:i32;b=3:i32", "and %a, %b", "i32", I(2)},
      {"a=6:i32;b=3:i32", "or %a, %b", "i32", I(7)},
      {"a=6:i32;b=3:i32", "xor %a, %b", "i32", I(5)},
      {"a=1:i1;b=0:i1", "xor %a, %b", "i1", I(1)},
      {"a=-3:i32;b=5:i32", "min %a, %b", "i32", I(-3)},
      {"a=-3:i32;b=5:i32", "max %a, %b", "i32", I(5)},
      {"a=200:u8;b=100:u8", "min %a, %b", "u8", I(100)},
      {"a=-1:u64;b=1:u64", "max %a, %b", "u64", I(-1)},
  });
}

TEST(IRFold, Shifts) {
  checkFolds({
      {"a=-16:i8;b=2:i8", "shr %a, %b", "i8", I(-4)}, // arithmetic
      {"a=240:u8;b=2:u8", "shr %a, %b", "u8", I(60)}, // logical
      {"a=1:i32;b=31:i32", "shl %a, %b", "i32", I(INT32_MIN)},
      {"a=255:u8;b=7:u8", "shl %a, %b", "u8", I(128)},
      {"a=-1:i64;b=63:i64", "shr %a, %b", "i64", I(-1)},
      {"a=1:i32;b=32:i32", "shl %a, %b", "i32", kNone},
      {"a=1:i32;b=-1:i32", "shr %a, %b", "i32", kNone},
      {"a=1:u8;b=8:u8", "shr %a, %b", "u8", kNone},
      {"a=1:i64;b=64:i64", "shl %a, %b", "i64", kNone},
  });
}

TEST(IRFold, TrappingOpsAreNotFolded) {
  checkFolds({
      {"a=1:i32;b=0:i32", "div %a, %b", "i32", kNone},
      {"a=1:u32;b=0:u32", "rem %a, %b", "u32", kNone},
      {"a=-2147483648:i32;b=-1:i32", "div %a, %b", "i32", kNone},
      {"a=-2147483648:i32;b=-1:i32", "rem %a, %b", "i32", kNone},
      {"a=-128:i8;b=-1:i8", "div %a, %b", "i8", kNone},
      {"a=-9223372036854775808:i64;b=-1:i64", "div %a, %b", "i64", kNone},
      // Unsigned: no overflow case; 128 / 255 is 0.
      {"a=128:u8;b=255:u8", "div %a, %b", "u8", I(0)},
      // -2147483648 / 1 and / -2 are fine.
      {"a=-2147483648:i32;b=-2:i32", "div %a, %b", "i32", I(1073741824)},
  });
}

TEST(IRFold, MulHiIsTheHighHalfOfTheDoubleWidthProduct) {
  checkFolds({
      {"a=3:i32;b=5:i32", "umulhi %a, %b", "i32", I(0)},
      // (2^32 - 1)^2 = 2^64 - 2^33 + 1: high half 2^32 - 2.
      {"a=4294967295:u32;b=4294967295:u32", "umulhi %a, %b", "u32", I(4294967294)},
      // -2^31 * 2 = -2^32: high half -1 (signed).
      {"a=-2147483648:i32;b=2:i32", "umulhi %a, %b", "i32", I(-1)},
  });
}

TEST(IRFold, Compares) {
  checkFolds({
      {"a=-1:i32;b=1:i32", "cmp_lt %a, %b", "i1", I(1)},
      {"a=4294967295:u32;b=1:u32", "cmp_lt %a, %b", "i1", I(0)},
      {"a=-1:u64;b=1:u64", "cmp_gt %a, %b", "i1", I(1)},
      {"a=3:i8;b=3:i8", "cmp_le %a, %b", "i1", I(1)},
      {"a=3:i8;b=3:i8", "cmp_ne %a, %b", "i1", I(0)},
      {"a=nan:f32", "cmp_ne %a, %a", "i1", I(1)}, // unordered
      {"a=nan:f32", "cmp_eq %a, %a", "i1", I(0)},
      {"a=nan:f32;b=1.0:f32", "cmp_lt %a, %b", "i1", I(0)},
      {"a=nan:f32;b=1.0:f32", "cmp_ge %a, %b", "i1", I(0)},
      {"a=-0.0:f32;b=0.0:f32", "cmp_eq %a, %b", "i1", I(1)},
      {"a=1.5:f16;b=2.5:f16", "cmp_lt %a, %b", "i1", I(1)},
  });
}

TEST(IRFold, FloatsRoundOnceToTheirType) {
  checkFolds({
      {"a=1.0:f32;b=0.0:f32", "div %a, %b", "f32", F(kInf)},
      {"a=0.0:f32;b=0.0:f32", "div %a, %b", "f32", kNone}, // NaN is never materialised
      {"a=0.0:f32", "neg %a", "f32", F(-0.0)},
      {"a=-0.0:f32;b=0.0:f32", "add %a, %b", "f32", F(0.0)},
      {"a=-0.0:f32;b=-0.0:f32", "add %a, %b", "f32", F(-0.0)},
      {"a=16777216.0:f32;b=1.0:f32", "add %a, %b", "f32", F(16777216.0)},
      {"a=16777216.0:f64;b=1.0:f64", "add %a, %b", "f64", F(16777217.0)},
      {"a=1.0:f32;b=3.0:f32", "div %a, %b", "f32", F(static_cast<double>(1.0f / 3.0f))},
      // fp16: 1 + 2^-11 is a tie between 1 and 1 + 2^-10: even (1.0) wins.
      {"a=1.0:f16;b=0.00048828125:f16", "add %a, %b", "f16", F(1.0)},
      {"a=1.0:f16;b=0.0009765625:f16", "add %a, %b", "f16", F(1.0009765625)},
      // bf16: 1 + 2^-8 is a tie between 1 and 1 + 2^-7.
      {"a=1.0:bf16;b=0.00390625:bf16", "add %a, %b", "bf16", F(1.0)},
      {"a=65504.0:f16", "add %a, %a", "f16", F(kInf)},
      {"a=-7.5:f32;b=2.0:f32", "rem %a, %b", "f32", F(-1.5)},
      // min(-0, +0) is -0 and max is +0, in either order.
      {"a=-0.0:f32;b=0.0:f32", "min %a, %b", "f32", F(-0.0)},
      {"a=0.0:f32;b=-0.0:f32", "min %a, %b", "f32", F(-0.0)},
      {"a=-0.0:f32;b=0.0:f32", "max %a, %b", "f32", F(0.0)},
      {"a=0.0:f32;b=-0.0:f32", "max %a, %b", "f32", F(0.0)},
      {"a=nan:f32;b=1.0:f32", "min %a, %b", "f32", F(1.0)},
      {"a=2.0:f32;b=nan:f32", "max %a, %b", "f32", F(2.0)},
      {"a=nan:f32", "max %a, %a", "f32", kNone},
      {"a=-2.0:f32;b=3.0:f32", "min %a, %b", "f32", F(-2.0)},
      {"a=2.0:f32;b=3.0:f32;c=1.0:f32", "fma %a, %b, %c", "f32", F(7.0)},
      {"a=2.0:f16;b=3.0:f16;c=1.0:f16", "fma %a, %b, %c", "f16", F(7.0)},
      // (1 + 2^-10)^2 - 1 = 2^-9 + 2^-20 exactly: the tie between 2^-9 and 2^-9 + 2^-19
      // (f16's ulp there), rounded once: even wins.
      {"a=1.0009765625:f16;c=-1.0:f16", "fma %a, %a, %c", "f16", F(0.001953125)},
      {"a=4.0:f32", "sqrt %a", "f32", F(2.0)},
      {"a=-1.0:f32", "sqrt %a", "f32", kNone},
      {"a=4.0:f32", "rsqrt %a", "f32", F(0.5)},
      {"a=-2.5:f32", "floor %a", "f32", F(-3.0)},
      {"a=-2.5:f32", "ceil %a", "f32", F(-2.0)},
      {"a=-2.5:f32", "abs %a", "f32", F(2.5)},
      {"a=0.0:f32", "exp %a", "f32", F(1.0)},
      {"a=3.0:f32", "exp2 %a", "f32", F(8.0)},
      {"a=1.0:f32", "log %a", "f32", F(0.0)},
      {"a=0.25:f32", "log2 %a", "f32", F(-2.0)},
      {"a=0.0:f32", "sin %a", "f32", F(0.0)},
      {"a=0.0:f32", "cos %a", "f32", F(1.0)},
  });
}

TEST(IRFold, Casts) {
  checkFolds({
      {"a=-1:i32", "cast %a", "u8", I(255)},
      {"a=255:u8", "cast %a", "i32", I(255)},
      {"a=-1:i8", "cast %a", "u32", I(4294967295)},
      {"a=-1:i8", "cast %a", "u64", I(-1)},
      {"a=300:i32", "cast %a", "i8", I(44)},
      {"a=5:i32", "cast %a", "i1", I(1)},
      {"a=0.5:f32", "cast %a", "i1", I(1)},
      {"a=-0.0:f32", "cast %a", "i1", I(0)},
      {"a=nan:f32", "cast %a", "i1", I(1)},
      {"a=1:i1", "cast %a", "f32", F(1.0)},
      {"a=-3.75:f32", "cast %a", "i32", I(-3)},
      {"a=255.875:f32", "cast %a", "u8", I(255)},
      {"a=-0.5:f32", "cast %a", "u32", I(0)},
      {"a=2147483520.0:f32", "cast %a", "i32", I(2147483520)},
      {"a=-2147483648.0:f32", "cast %a", "i32", I(INT32_MIN)},
      {"a=nan:f32", "cast %a", "i32", kNone},
      {"a=3000000000.0:f32", "cast %a", "i32", kNone},
      {"a=2147483648.0:f64", "cast %a", "i32", kNone},
      {"a=-1.0:f32", "cast %a", "u32", kNone},
      {"a=256.0:f32", "cast %a", "u8", kNone},
      {"a=inf:f64", "cast %a", "i64", kNone},
      {"a=2.5:f64", "cast %a", "f16", F(2.5)},
      // 0.1 is first rounded to f32 (the constant's type), then to fp16 (0x2E66).
      {"a=0.1:f32", "cast %a", "f16", F(0.0999755859375)},
      {"a=1e30:f64", "cast %a", "f32", F(static_cast<double>(1e30f))},
      {"a=1e30:f64", "cast %a", "f16", F(kInf)},
      {"a=16777217:i32", "cast %a", "f32", F(16777216.0)},
      {"a=-1:u64", "cast %a", "f32", F(18446744073709551616.0)},
      {"a=-1:u64", "cast %a", "f64", F(18446744073709551616.0)},
      {"a=9007199254740993:i64", "cast %a", "f32", F(9007199254740992.0)},
      // 2^62 + 2^54 + 1 is above the bf16 midpoint 2^62 + 2^54: up, with one rounding
      // (through f64 first it would be the tie, then 2^62).
      {"a=4629700416936869889:i64", "cast %a", "bf16", F(4647714815446351872.0)},
      {"a=100000:i32", "cast %a", "f16", F(kInf)},
      {"a=-0.0:f32", "cast %a", "f64", F(-0.0)},
      {"a=1.0:f32", "bitcast %a", "i32", I(1065353216)},
      {"a=15360:i16", "bitcast %a", "f16", F(1.0)},
      {"a=255:u8", "bitcast %a", "i8", I(-1)},
      {"a=-1:i32", "bitcast %a", "f32", kNone}, // a NaN
      {"a=-0.0:f64", "bitcast %a", "i64", I(INT64_MIN)},
  });
}

TEST(IRFold, SelectShapeOpsAndReductions) {
  checkFolds({
      {"c=1:i1;a=1:i32;b=2:i32", "select %c, %a, %b", "i32", I(1)},
      {"c=0:i1;a=1:i32;b=2:i32", "select %c, %a, %b", "i32", I(2)},
      {"a=3:i32", "splat %a", "tile<4xi32>", I(3)},
      {"a=3:tile<1x4xi32>", "broadcast %a", "tile<2x4xi32>", I(3)},
      {"a=3:tile<4xi32>", "expand_dims %a <axis = 0>", "tile<1x4xi32>", I(3)},
      {"a=3:tile<2x4xi32>", "reshape %a", "tile<8xi32>", I(3)},
      {"a=3:tile<2x4xi32>", "trans %a <perm = [1, 0]>", "tile<4x2xi32>", I(3)},
      {"a=100:tile<8xi8>", "reduce %a <axis = 0, kind = \"add\">", "i32", I(800)},
      {"a=200:tile<4xu8>", "reduce %a <axis = 0, kind = \"add\">", "u32", I(800)},
      {"a=1:tile<4xi1>", "reduce %a <axis = 0, kind = \"add\">", "u32", I(4)},
      {"a=-2147483648:tile<4xi32>", "reduce %a <axis = 0, kind = \"add\">", "i32", I(0)},
      {"a=5:tile<2x4xi32>", "reduce %a <axis = 1, kind = \"xor\">", "tile<2xi32>", I(0)},
      {"a=5:tile<1x4xi32>", "reduce %a <axis = 0, kind = \"xor\">", "tile<4xi32>", I(5)},
      {"a=-7:tile<4xi8>", "reduce %a <axis = 0, kind = \"min\">", "i8", I(-7)},
      {"a=1.5:tile<4xf32>", "reduce %a <axis = 0, kind = \"max\">", "f32", F(1.5)},
      {"a=1.5:tile<4xf32>", "reduce %a <axis = 0, kind = \"argmax\">", "i32", I(0)},
      {"a=1.5:tile<4xf32>", "reduce %a <axis = 0, kind = \"add\">", "f32", kNone},
  });
}

TEST(IRFold, ChainsAndRegionsInOneRun) {
  const char *in = R"(kernel @k(%p: !ptr<i32>) {
  %a = constant <value = 1> : i32
  %b = constant <value = 2> : i32
  %s = add %a, %b : i32
  %t = mul %s, %s : i32
  %u = splat %t : tile<4xi32>
  %n = for %a, %b, %a, %t : i32 {
  ^(%i: i32, %x: i32):
    %y = sub %t, %a : i32
    %z = add %x, %y : i32
    yield %z
  }
  store %p, %n
  return
}
)";
  EXPECT_EQ(runPass(in, foldConstants), R"(kernel @k(%p: !ptr<i32>) {
  %0 = constant <value = 1> : i32
  %1 = constant <value = 2> : i32
  %2 = constant <value = 3> : i32
  %3 = constant <value = 9> : i32
  %4 = constant <value = 9> : tile<4xi32>
  %5 = for %0, %1, %0, %3 : i32 {
  ^(%6: i32, %7: i32):
    %8 = constant <value = 8> : i32
    %9 = add %7, %8 : i32
    yield %9
  }
  store %p, %5
  return
}
)");
  // The default pipeline then drops what became dead.
  auto m = parseText(in);
  ASSERT_TRUE(m);
  EXPECT_TRUE(runPipeline(*m, PipelineOptions{}));
  EXPECT_EQ(toString(*m, PrintOptions{false}), R"(kernel @k(%p: !ptr<i32>) {
  %0 = constant <value = 1> : i32
  %1 = constant <value = 2> : i32
  %2 = constant <value = 9> : i32
  %3 = for %0, %1, %0, %2 : i32 {
  ^(%4: i32, %5: i32):
    %6 = constant <value = 8> : i32
    %7 = add %5, %6 : i32
    yield %7
  }
  store %p, %3
  return
}
)");
  // Nothing left to fold.
  EXPECT_FALSE(foldConstants(*m));
}

TEST(IRDCE, RemovesDeadPureOpsAndKeepsEffects) {
  const char *valid = R"(kernel @k(%p: !ptr<f32>, %n: i32) {
  %a = constant <value = 1.0> : f32
  %b = add %a, %a : f32
  %c = mul %b, %b : f32
  %l = load %p : f32
  %v = load %p : f32
  store %p, %v
  %o = atomic_rmw %p, %a <kind = "add"> : f32
  %r = for %n, %n, %n, %a : f32 {
  ^(%i: i32, %x: f32):
    %y = add %x, %a : f32
    yield %y
  }
  for %n, %n, %n {
  ^(%j: i32):
    %d = mul %j, %j : i32
    print %j <label = "j">
    yield
  }
  %cond = cmp_lt %n, %n : i1
  %w = if %cond : i1 {
    yield %cond
  } {
    debug_barrier
    yield %cond
  }
  return
}
)";
  EXPECT_EQ(runPass(valid, eliminateDeadCode), R"(kernel @k(%p: !ptr<f32>, %n: i32) {
  %0 = constant <value = 1.0> : f32
  %1 = load %p : f32
  store %p, %1
  %2 = atomic_rmw %p, %0 <kind = "add"> : f32
  for %n, %n, %n {
  ^(%3: i32):
    print %3 <label = "j">
    yield
  }
  %4 = cmp_lt %n, %n : i1
  %5 = if %4 : i1 {
    yield %4
  } {
    debug_barrier
    yield %4
  }
  return
}
)");
  EXPECT_EQ(runPass("kernel @k() {\n  return\n}\n", eliminateDeadCode, false),
            "kernel @k() {\n  return\n}\n");
}

TEST(IRDCE, UsesInsideRemovedRegionsAreDropped) {
  // %a is used only inside a loop that dies: both go.
  EXPECT_EQ(runPass(R"(kernel @k(%n: i32) {
  %a = constant <value = 3> : i32
  %b = add %a, %n : i32
  while %b {
  ^(%x: i32):
    %c = cmp_lt %x, %a : i1
    condition %c
  } {
    yield %a
  }
  return
}
)",
                    eliminateDeadCode),
            "kernel @k(%n: i32) {\n  return\n}\n");
}

TEST(IRCSE, MergesIdenticalPureOpsInScope) {
  const char *in = R"(kernel @k(%a: i32, %b: i32, %c: i1, %p: !ptr<i32>) {
  %0 = add %a, %b : i32
  %1 = add %b, %a : i32
  %2 = sub %a, %b : i32
  %3 = sub %b, %a : i32
  %4 = get_program_id <axis = 0> : i32
  %5 = get_program_id <axis = 1> : i32
  %6 = get_program_id <axis = 0> : i32
  %7 = constant <value = 0.0> : f32
  %8 = constant <value = -0.0> : f32
  %9 = constant <value = 1> : i32
  %10 = constant <value = 1> : i64
  %11 = constant <value = 1> : i32
  %12 = load %p : i32
  %13 = load %p : i32
  if %c {
    %14 = add %a, %b : i32
    %15 = mul %a, %b : i32
    print %14, %15 <label = "">
    yield
  } {
    %16 = mul %a, %b : i32
    print %16 <label = "">
    yield
  }
  %17 = mul %a, %b : i32
  print %1, %3, %5, %6, %8, %10, %11, %12, %13, %17 <label = "">
  return
}
)";
  EXPECT_EQ(runPass(in, eliminateCommonSubexpressions),
            R"(kernel @k(%a: i32, %b: i32, %c: i1, %p: !ptr<i32>) {
  %0 = add %a, %b : i32
  %1 = sub %a, %b : i32
  %2 = sub %b, %a : i32
  %3 = get_program_id <axis = 0> : i32
  %4 = get_program_id <axis = 1> : i32
  %5 = constant <value = 0.0> : f32
  %6 = constant <value = -0.0> : f32
  %7 = constant <value = 1> : i32
  %8 = constant <value = 1> : i64
  %9 = load %p : i32
  %10 = load %p : i32
  if %c {
    %11 = mul %a, %b : i32
    print %0, %11 <label = "">
    yield
  } {
    %12 = mul %a, %b : i32
    print %12 <label = "">
    yield
  }
  %13 = mul %a, %b : i32
  print %0, %2, %4, %3, %6, %8, %7, %9, %10, %13 <label = "">
  return
}
)");
}

TEST(IRCSE, ChainsMergeAndEffectsDoNot) {
  EXPECT_EQ(runPass(R"(kernel @k(%a: f32, %p: !ptr<f32>) {
  %x = mul %a, %a : f32
  %y = add %x, %a : f32
  %x2 = mul %a, %a : f32
  %y2 = add %x2, %a : f32
  %r1 = atomic_rmw %p, %y <kind = "add"> : f32
  %r2 = atomic_rmw %p, %y2 <kind = "add"> : f32
  print %r1, %r2 <label = "">
  print %r1, %r2 <label = "">
  return
}
)",
                    eliminateCommonSubexpressions),
            R"(kernel @k(%a: f32, %p: !ptr<f32>) {
  %0 = mul %a, %a : f32
  %1 = add %0, %a : f32
  %2 = atomic_rmw %p, %1 <kind = "add"> : f32
  %3 = atomic_rmw %p, %1 <kind = "add"> : f32
  print %2, %3 <label = "">
  print %2, %3 <label = "">
  return
}
)");
}

TEST(IRCanonicalize, Patterns) {
  const char *in =
      R"(kernel @k(%x: i32, %t: tile<4x8xf32>, %f: tile<4x8xf32>, %u: tile<2x4x8xi32>) {
  %z = constant <value = 0> : i32
  %one = constant <value = 1> : i32
  %fz = constant <value = 0.0> : tile<4x8xf32>
  %true = constant <value = 1> : tile<4x8xi1>
  %a = add %x, %z : i32
  %b = mul %one, %a : i32
  %c = cast %b : i32
  %s = splat %c : tile<4xi32>
  %e = expand_dims %s <axis = 1> : tile<4x1xi32>
  %br = broadcast %e : tile<4x8xi32>
  %same = broadcast %t : tile<4x8xf32>
  %tt = trans %same <perm = [1, 0]> : tile<8x4xf32>
  %back = trans %tt <perm = [1, 0]> : tile<4x8xf32>
  %fa = add %back, %fz : tile<4x8xf32>
  %sel = select %true, %fa, %f : tile<4x8xf32>
  %t1 = trans %u <perm = [1, 2, 0]> : tile<4x8x2xi32>
  %t2 = trans %t1 <perm = [2, 0, 1]> : tile<2x4x8xi32>
  %t3 = trans %t1 <perm = [1, 0, 2]> : tile<8x4x2xi32>
  print %br, %sel, %t2, %t3 <label = "">
  return
}
)";
  EXPECT_EQ(runPass(in, canonicalize),
            R"(kernel @k(%x: i32, %t: tile<4x8xf32>, %f: tile<4x8xf32>, %u: tile<2x4x8xi32>) {
  %0 = constant <value = 0> : i32
  %1 = constant <value = 1> : i32
  %2 = constant <value = 0.0> : tile<4x8xf32>
  %3 = constant <value = 1> : tile<4x8xi1>
  %4 = splat %x : tile<4xi32>
  %5 = splat %x : tile<4x1xi32>
  %6 = splat %x : tile<4x8xi32>
  %7 = trans %t <perm = [1, 0]> : tile<8x4xf32>
  %8 = add %t, %2 : tile<4x8xf32>
  %9 = trans %u <perm = [1, 2, 0]> : tile<4x8x2xi32>
  %10 = trans %u <perm = [2, 1, 0]> : tile<8x4x2xi32>
  print %6, %8, %u, %10 <label = "">
  return
}
)");
}

TEST(IRCanonicalize, MoreIdentities) {
  EXPECT_EQ(
      runPass(
          R"(kernel @k(%a: tile<1x1x8xi32>, %v: tile<1x8xi32>, %p: tile<8x!ptr<f32>>, %n: i64, %c: tile<8xi1>) {
  %b1 = broadcast %a : tile<1x4x8xi32>
  %b2 = broadcast %b1 : tile<2x4x8xi32>
  %r1 = reshape %v : tile<8xi32>
  %r2 = reshape %r1 : tile<2x4xi32>
  %r3 = reshape %r2 : tile<1x8xi32>
  %z = constant <value = 0> : tile<8xi32>
  %q = addptr %p, %z : tile<8x!ptr<f32>>
  %s = sub %r1, %z : tile<8xi32>
  %sh = shl %s, %z : tile<8xi32>
  %o = or %z, %sh : tile<8xi32>
  %one = constant <value = 1> : i64
  %d = div %n, %one : i64
  %f = constant <value = 0> : tile<8xi1>
  %sel = select %f, %s, %o : tile<8xi32>
  %m = mul %n, %n : i64
  print %b2, %r3, %q, %d, %sel, %m, %c <label = "">
  return
}
)",
          canonicalize),
      R"(kernel @k(%a: tile<1x1x8xi32>, %v: tile<1x8xi32>, %p: tile<8x!ptr<f32>>, %n: i64, %c: tile<8xi1>) {
  %0 = broadcast %a : tile<1x4x8xi32>
  %1 = broadcast %a : tile<2x4x8xi32>
  %2 = reshape %v : tile<8xi32>
  %3 = reshape %v : tile<2x4xi32>
  %4 = constant <value = 0> : tile<8xi32>
  %5 = constant <value = 1> : i64
  %6 = constant <value = 0> : tile<8xi1>
  %7 = mul %n, %n : i64
  print %1, %v, %p, %n, %2, %7, %c <label = "">
  return
}
)");
  // Float x + 0.0 and x * 1.0 are kept (x = -0.0: -0.0 + 0.0 is +0.0).
  const char *floats = "kernel @k(%a: f32) {\n"
                       "  %0 = constant <value = 0.0> : f32\n"
                       "  %1 = add %a, %0 : f32\n"
                       "  print %1 <label = \"\">\n"
                       "  return\n"
                       "}\n";
  EXPECT_EQ(runPass(floats, canonicalize, false), floats);
}

TEST(IRPipeline, NamesOrderAndErrors) {
  EXPECT_EQ(passNames(), (std::vector<std::string>{"canonicalize", "fold", "cse", "dce"}));
  const char *in = "kernel @k() {\n"
                   "  %a = constant <value = 2> : i32\n"
                   "  %b = add %a, %a : i32\n"
                   "  print %b <label = \"\">\n"
                   "  return\n"
                   "}\n";
  auto m = parseText(in);
  ASSERT_TRUE(m);
  std::ostringstream out;
  PipelineOptions opts;
  opts.out = &out;
  opts.passes = {"fold", "nope"};
  EXPECT_FALSE(runPipeline(*m, opts));
  EXPECT_EQ(out.str(), "error: unknown pass 'nope' (known passes: canonicalize, fold, cse, dce)\n");
  // Nothing ran.
  EXPECT_EQ(m->functions[0]->body().ops().size(), 4u);

  out.str("");
  opts.passes = {"fold", "dce"};
  opts.printAfterAll = true;
  opts.verifyEach = true;
  EXPECT_TRUE(runPipeline(*m, opts));
  EXPECT_EQ(out.str(), "// -----// IR Dump After fold //----- //\n"
                       "kernel @k() {\n"
                       "  %0 = constant <value = 2> : i32\n"
                       "  %1 = constant <value = 4> : i32\n"
                       "  print %1 <label = \"\">\n"
                       "  return\n"
                       "}\n"
                       "// -----// IR Dump After dce //----- //\n"
                       "kernel @k() {\n"
                       "  %0 = constant <value = 4> : i32\n"
                       "  print %0 <label = \"\">\n"
                       "  return\n"
                       "}\n");
}

TEST(IRPipeline, VerifyEachReportsFailures) {
  Module m;
  Function *f = m.addFunction("k", Location{});
  Builder(&f->body())
      .create(OpKind::GetProgramId, {Type::scalar(DType::I32)}, {}, {{"axis", int64_t(5)}});
  std::ostringstream out;
  PipelineOptions opts;
  opts.out = &out;
  opts.verifyEach = true;
  opts.passes = {"cse"};
  EXPECT_FALSE(runPipeline(m, opts));
  EXPECT_EQ(out.str(), "error: verification failed after pass 'cse'\n"
                       "error: verifier: axis 5 is not 0, 1 or 2\n"
                       "  in function @k: %0 = get_program_id <axis = 5> : i32\n"
                       "error: verifier: function body must end in 'return'\n"
                       "  in function @k: %0 = get_program_id <axis = 5> : i32\n");
}
