// The text form of the tile IR: printer output written by hand from the
// grammar, print -> parse -> print identity, and every parser diagnostic.
#include "ir/IRParser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>
#include <random>
#include <sstream>

using namespace tc;
using namespace tc::ir;

namespace {

/// Parses `text`; diagnostics are kept in `diags` and rendered into `err`.
struct ParseResult {
  SourceManager sm;
  DiagEngine diags{sm};
  std::ostringstream err;
  std::unique_ptr<Module> module;
};

std::unique_ptr<ParseResult> parse(const std::string &text) {
  auto r = std::make_unique<ParseResult>();
  r->diags.setOutput(&r->err);
  uint32_t file = r->sm.addBuffer("t.tir", text);
  r->module = parseModule(file, r->sm, r->diags);
  return r;
}

/// print(parse(text)), failing the test on a parse error.
std::string reprint(const std::string &text) {
  auto r = parse(text);
  EXPECT_TRUE(r->module) << r->err.str();
  return r->module ? toString(*r->module) : "";
}

const Type kI32 = Type::scalar(DType::I32);

} // namespace

// The example of the format's specification, built with the Builder.
TEST(IRPrinter, SpecExample) {
  Module m;
  uint32_t file = m.fileIndex("add.tc");
  Function *f = m.addFunction("add", Location{file, 2, 17});
  Value *n = f->addParam("N", kI32);
  ParamAttrs attrs;
  attrs.multipleOf = 16;
  f->addParam("a", Type::ptr(DType::F32), attrs);
  Builder b(&f->body());
  b.setLoc(Location{file, 3, 12});
  Value *pid = b.create(OpKind::GetProgramId, {kI32}, {}, {{"axis", int64_t(0)}})->result();
  b.setLoc(Location{file, 4, 30});
  b.create(OpKind::Range, {Type::tile(DType::I32, {32})}, {},
           {{"start", int64_t(0)}, {"end", int64_t(32)}});
  b.setLoc(Location{});
  Value *zero = b.constantInt(kI32, 0);
  Value *acc = b.constantFloat(Type::tile(DType::F32, {32}), 0.0);
  b.setLoc(Location{file, 5, 3});
  Op *forOp = b.create(OpKind::For, {kI32, acc->type()}, {zero, n, pid, pid, acc}, {}, 1);
  Block *body = forOp->region(0);
  body->addArgument(kI32);
  Value *x = body->addArgument(kI32);
  Value *y = body->addArgument(acc->type());
  Builder inner(body);
  inner.setLoc(Location{file, 7, 3});
  inner.create(OpKind::Yield, {}, {x, y});
  b.setLoc(Location{file, 9, 1});
  b.create(OpKind::Return, {}, {});

  const char *expected =
      R"(kernel @add(%N: i32, %a: !ptr<f32> <multipleof = 16>) loc("add.tc":2:17) {
  %0 = get_program_id <axis = 0> : i32 loc("add.tc":3:12)
  %1 = range <end = 32, start = 0> : tile<32xi32> loc("add.tc":4:30)
  %2 = constant <value = 0> : i32
  %3 = constant <value = 0.0> : tile<32xf32>
  %4, %5 = for %2, %N, %0, %0, %3 : i32, tile<32xf32> {
  ^(%6: i32, %7: i32, %8: tile<32xf32>):
    yield %7, %8 loc("add.tc":7:3)
  } loc("add.tc":5:3)
  return loc("add.tc":9:1)
}
)";
  EXPECT_EQ(toString(m), expected);
  EXPECT_TRUE(verifyModule(m).empty()) << formatFailures(m, verifyModule(m));
  EXPECT_EQ(reprint(expected), expected);

  const char *noLocs = R"(kernel @add(%N: i32, %a: !ptr<f32> <multipleof = 16>) {
  %0 = get_program_id <axis = 0> : i32
  %1 = range <end = 32, start = 0> : tile<32xi32>
  %2 = constant <value = 0> : i32
  %3 = constant <value = 0.0> : tile<32xf32>
  %4, %5 = for %2, %N, %0, %0, %3 : i32, tile<32xf32> {
  ^(%6: i32, %7: i32, %8: tile<32xf32>):
    yield %7, %8
  }
  return
}
)";
  EXPECT_EQ(toString(m, PrintOptions{false}), noLocs);
  EXPECT_EQ(opToString(*forOp), "%4, %5 = for %2, %N, %0, %0, %3 : i32, tile<32xf32> {...}");
  EXPECT_EQ(opToString(*body->ops()[0]), "yield %7, %8");
}

TEST(IRPrinter, AttributeValues) {
  Module m;
  Function *f = m.addFunction("k", Location{});
  Builder b(&f->body());
  auto c = [&](DType t, AttrValue v) {
    return b.create(OpKind::Constant, {Type::scalar(t)}, {}, {{"value", std::move(v)}});
  };
  c(DType::F32, 1.0);
  c(DType::F32, 0.5);
  c(DType::F64, 1e20);
  c(DType::F64, -0.0);
  c(DType::F64, std::numeric_limits<double>::infinity());
  c(DType::F64, -std::numeric_limits<double>::infinity());
  c(DType::F64, std::numeric_limits<double>::quiet_NaN());
  c(DType::F64, 0.1);
  c(DType::F64, 5e-324);
  c(DType::I32, int64_t(-5));
  c(DType::U64, int64_t(-1)); // 2^64 - 1 as its two's complement
  Op *p = b.create(OpKind::Print, {}, {}, {{"label", std::string("a\"b\\c\nd\te\x01\x7f")}});
  p->setAttr("list", std::vector<int64_t>{3, -1, 0});
  p->setAttr("empty", std::vector<int64_t>{});
  b.create(OpKind::Return, {}, {});
  const char *expected = R"(kernel @k() {
  %0 = constant <value = 1.0> : f32
  %1 = constant <value = 0.5> : f32
  %2 = constant <value = 1e+20> : f64
  %3 = constant <value = -0.0> : f64
  %4 = constant <value = inf> : f64
  %5 = constant <value = -inf> : f64
  %6 = constant <value = nan> : f64
  %7 = constant <value = 0.1> : f64
  %8 = constant <value = 5e-324> : f64
  %9 = constant <value = -5> : i32
  %10 = constant <value = -1> : u64
  print <empty = [], label = "a\"b\\c\nd\te\01\7F", list = [3, -1, 0]>
  return
}
)";
  EXPECT_EQ(toString(m), expected);
  auto r = parse(expected);
  ASSERT_TRUE(r->module) << r->err.str();
  EXPECT_EQ(toString(*r->module), expected);
  // The parsed values are the exact doubles and strings.
  const auto &ops = r->module->functions[0]->body().ops();
  EXPECT_TRUE(std::signbit(ops[3]->floatAttr("value")));
  EXPECT_TRUE(std::isnan(ops[6]->floatAttr("value")));
  EXPECT_EQ(ops[8]->floatAttr("value"), 5e-324);
  EXPECT_EQ(ops[11]->strAttr("label"), "a\"b\\c\nd\te\x01\x7f");
}

TEST(IRPrinter, ParamNamesAreUniqueAndNotNumeric) {
  Module m;
  Function *f = m.addFunction("k", Location{});
  f->addParam("x", kI32);
  f->addParam("x_1", kI32);
  f->addParam("x", kI32);
  f->addParam("", kI32);
  f->addParam("7", kI32);
  f->addParam("a.b", kI32);
  ParamAttrs all;
  all.multipleOf = 8;
  all.aligned = 16;
  all.noalias = all.readonly = all.writeonly = true;
  f->addParam("p", Type::ptr(DType::F16), all);
  Builder(&f->body()).create(OpKind::Return, {}, {});
  const char *expected =
      "kernel @k(%x: i32, %x_1: i32, %x_2: i32, %arg3: i32, %_7: i32, %a_b: i32, "
      "%p: !ptr<f16> <multipleof = 8, aligned = 16, noalias, readonly, writeonly>) {\n"
      "  return\n"
      "}\n";
  EXPECT_EQ(toString(m), expected);
  EXPECT_EQ(reprint(expected), expected);
  auto r = parse(expected);
  ASSERT_TRUE(r->module);
  EXPECT_EQ(r->module->functions[0]->paramAttrs(6), all);
  EXPECT_EQ(r->module->functions[0]->paramName(4), "_7");
}

// A module using every op of Ops.def (named values, comments, free layout).
static const char *kEveryOp = R"(
// Every op kind once at least.
kernel @every(%X: !ptr<f32> <multipleof = 16, aligned = 16>, %n: i32, %I: !ptr<i32>)
    loc("every.tc":1:1) {
  %c1 = constant <value = 1> : i32 loc("every.tc":2:3)
  %f = constant <value = 2.5> : f32
  %r = range <end = 32, start = 0> : tile<32xi32>
  %pid = get_program_id <axis = 0> : i32
  %np = get_num_programs <axis = 2> : i32
  %s = splat %f : tile<32xf32>
  %e = expand_dims %s <axis = 1> : tile<32x1xf32>
  %b = broadcast %e : tile<32x16xf32>
  %rs = reshape %b : tile<16x32xf32>
  %t = trans %rs <perm = [1, 0]> : tile<32x16xf32>
  %ca = cast %r : tile<32xf32>
  %bc = bitcast %r : tile<32xf32>
  %u1 = neg %s : tile<32xf32>
  %u2 = not %r : tile<32xi32>
  %u3 = abs %s : tile<32xf32>
  %u4 = exp %s : tile<32xf32>
  %u5 = exp2 %s : tile<32xf32>
  %u6 = log %s : tile<32xf32>
  %u7 = log2 %s : tile<32xf32>
  %u8 = sqrt %s : tile<32xf32>
  %u9 = rsqrt %s : tile<32xf32>
  %u10 = sin %s : tile<32xf32>
  %u11 = cos %s : tile<32xf32>
  %u12 = floor %s : tile<32xf32>
  %u13 = ceil %s : tile<32xf32>
  %b1 = add %r, %r : tile<32xi32>
  %b2 = sub %r, %r : tile<32xi32>
  %b3 = mul %r, %r : tile<32xi32>
  %b4 = div %r, %r : tile<32xi32>
  %b5 = rem %r, %r : tile<32xi32>
  %b6 = and %r, %r : tile<32xi32>
  %b7 = or %r, %r : tile<32xi32>
  %b8 = xor %r, %r : tile<32xi32>
  %b9 = shl %r, %r : tile<32xi32>
  %b10 = shr %r, %r : tile<32xi32>
  %b11 = min %s, %s : tile<32xf32>
  %b12 = max %r, %r : tile<32xi32>
  %b13 = umulhi %r, %r : tile<32xi32>
  %m = cmp_eq %r, %r : tile<32xi1>
  %k2 = cmp_ne %s, %s : tile<32xi1>
  %k3 = cmp_lt %r, %r : tile<32xi1>
  %k4 = cmp_le %r, %r : tile<32xi1>
  %k5 = cmp_gt %r, %r : tile<32xi1>
  %k6 = cmp_ge %r, %r : tile<32xi1>
  %ps = splat %X : tile<32x!ptr<f32>>
  %p = addptr %ps, %r : tile<32x!ptr<f32>>
  %fm = fma %s, %s, %s : tile<32xf32>
  %sel = select %m, %s, %u1 : tile<32xf32>
  %red = reduce %t <axis = 1, kind = "add"> : tile<32xf32>
  %h = constant <value = 1.0> : tile<16x16xf16>
  %acc = constant <value = 0.0> : tile<16x16xf32>
  %d = dot %h, %h, %acc : tile<16x16xf32>
  %l1 = load %p : tile<32xf32>
  %l2 = load %p, %m : tile<32xf32>
  %l3 = load %p, %m, %s : tile<32xf32>
  store %p, %l3
  store %p, %l2, %m
  %a1 = atomic_rmw %p, %s, %m <kind = "add"> : tile<32xf32>
  %ip = splat %I : tile<32x!ptr<i32>>
  %a2 = atomic_cas %ip, %r, %r : tile<32xi32>
  print %s, %n <label = "x = ">
  assert %m <message = "all good">
  debug_barrier
  %c0 = constant <value = 0> : i32
  %sum = for %c0, %n, %c1, %s : tile<32xf32> {
  ^(%iv: i32, %it: tile<32xf32>):
    %nx = add %it, %s : tile<32xf32>
    yield %nx
  } loc("every.tc":40:3)
  %cond = cmp_lt %pid, %n : i1
  %pick = if %cond : i32 {
    yield %c1
  } {
    %z = sub %c1, %c1 : i32
    yield %z
  }
  %w = while %c0 : i32 {
  ^(%wa: i32):
    %go = cmp_lt %wa, %n : i1
    condition %go, %wa
  } {
  ^(%wb: i32):
    %wn = add %wb, %c1 : i32
    yield %wn
  }
  %ud = undef <var = "a"> : tile<2x32xf32>
  %is = insert_slice %ud, %c1, %s <axis = 0, var = "a"> : tile<2x32xf32>
  %xs = extract_slice %is, %c1 <axis = 0, var = "a"> : tile<32xf32>
  return loc("every.tc":50:1)
}
kernel @second() {
  return
}
)";

TEST(IRParser, EveryOpRoundTrips) {
  auto r = parse(kEveryOp);
  ASSERT_TRUE(r->module) << r->err.str();
  const Module &m = *r->module;
  EXPECT_TRUE(verifyModule(m).empty()) << formatFailures(m, verifyModule(m));
  // Every op kind occurs.
  std::vector<bool> seen(kNumOpKinds, false);
  std::vector<const Block *> work{&m.functions[0]->body()};
  while (!work.empty()) {
    const Block *b = work.back();
    work.pop_back();
    for (const auto &op : b->ops()) {
      seen[static_cast<size_t>(op->kind())] = true;
      for (const auto &region : op->regions())
        work.push_back(region.get());
    }
  }
  for (int i = 0; i < kNumOpKinds; ++i)
    EXPECT_TRUE(seen[static_cast<size_t>(i)]) << mnemonic(static_cast<OpKind>(i));

  std::string once = toString(m);
  EXPECT_EQ(reprint(once), once);
  std::string noLocs = toString(m, PrintOptions{false});
  EXPECT_EQ(noLocs.find("loc("), std::string::npos);
  EXPECT_EQ(toString(*parse(noLocs)->module, PrintOptions{false}), noLocs);
  // A few lines of the canonical form, worked out by hand.
  EXPECT_NE(once.find("kernel @every(%X: !ptr<f32> <multipleof = 16, aligned = 16>, %n: i32, "
                      "%I: !ptr<i32>) loc(\"every.tc\":1:1) {\n"
                      "  %0 = constant <value = 1> : i32 loc(\"every.tc\":2:3)\n"),
            std::string::npos)
      << once;
  EXPECT_NE(once.find("  store %45, %54\n"), std::string::npos) << once;
  EXPECT_NE(once.find("  %59 = for %58, %n, %0, %5 : tile<32xf32> {\n"
                      "  ^(%60: i32, %61: tile<32xf32>):\n"
                      "    %62 = add %61, %5 : tile<32xf32>\n"
                      "    yield %62\n"
                      "  } loc(\"every.tc\":40:3)\n"),
            std::string::npos)
      << once;
  EXPECT_NE(once.find("  %64 = if %63 : i32 {\n"
                      "    yield %0\n"
                      "  } {\n"
                      "    %65 = sub %0, %0 : i32\n"
                      "    yield %65\n"
                      "  }\n"),
            std::string::npos)
      << once;
  EXPECT_EQ(m.files, std::vector<std::string>{"every.tc"});
}

namespace {

/// Builds a random, valid module from a seed: straight-line arithmetic on a few
/// types, odd constants, and nested for/if regions.
class RandomModule {
public:
  explicit RandomModule(unsigned seed) : rng_(seed) {}
  std::unique_ptr<Module> build();

private:
  void fill(Builder &b, std::vector<Value *> &pool, int depth);
  Value *pick(std::vector<Value *> &pool, const Type &t);
  Value *constant(Builder &b, const Type &t);
  int roll(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::mt19937 rng_;
  std::vector<Type> types_ = {Type::scalar(DType::I32), Type::tile(DType::F32, {8}),
                              Type::tile(DType::I64, {4, 2}), Type::scalar(DType::F16),
                              Type::tile(DType::U8, {16})};
};

Value *RandomModule::constant(Builder &b, const Type &t) {
  static const double kFloats[] = {
      0.0, -0.0, 1.5, 1e-7, 3.0e38, -65504.0, std::numeric_limits<double>::infinity(), 0.1, 5e-324};
  static const int64_t kInts[] = {0, 1, -1, 255, INT32_MIN, INT64_MIN, INT64_MAX, 42};
  if (isFloat(t.dtype))
    return b.constantFloat(t, kFloats[roll(9)]);
  return b.constantInt(t, kInts[roll(8)]);
}

Value *RandomModule::pick(std::vector<Value *> &pool, const Type &t) {
  std::vector<Value *> ok;
  for (Value *v : pool)
    if (v->type() == t)
      ok.push_back(v);
  return ok.empty() ? nullptr : ok[static_cast<size_t>(roll(static_cast<int>(ok.size())))];
}

void RandomModule::fill(Builder &b, std::vector<Value *> &pool, int depth) {
  static const OpKind kBinary[] = {OpKind::Add, OpKind::Mul, OpKind::Sub,
                                   OpKind::Min, OpKind::Max, OpKind::CmpLt};
  int n = 3 + roll(8);
  for (int i = 0; i < n; ++i) {
    b.setLoc(roll(2) ? Location{0, static_cast<uint32_t>(1 + roll(99)),
                                static_cast<uint32_t>(1 + roll(80))}
                     : Location{});
    const Type &t = types_[static_cast<size_t>(roll(static_cast<int>(types_.size())))];
    Value *a = pick(pool, t);
    int choice = roll(10);
    if (!a || choice < 3) {
      pool.push_back(constant(b, t));
    } else if (choice < 7) {
      Value *c = pick(pool, t);
      pool.push_back(b.binary(kBinary[roll(6)], a, c));
    } else if (choice < 8 && depth < 3 && t.isScalar()) {
      Op *ifOp = b.create(OpKind::If, {t}, {b.binary(OpKind::CmpEq, a, a)}, {}, 2);
      for (unsigned r = 0; r < 2; ++r) {
        Builder inner(ifOp->region(r));
        std::vector<Value *> innerPool = pool;
        fill(inner, innerPool, depth + 1);
        inner.create(OpKind::Yield, {}, {pick(innerPool, t)});
      }
      pool.push_back(ifOp->result());
    } else if (choice < 9 && depth < 3) {
      Value *lb = pick(pool, types_[0]);
      if (!lb)
        continue;
      Op *forOp = b.create(OpKind::For, {t}, {lb, lb, lb, a}, {}, 1);
      Block *body = forOp->region(0);
      std::vector<Value *> innerPool = pool;
      innerPool.push_back(body->addArgument(types_[0]));
      innerPool.push_back(body->addArgument(t));
      Builder inner(body);
      fill(inner, innerPool, depth + 1);
      inner.create(OpKind::Yield, {}, {pick(innerPool, t)});
      pool.push_back(forOp->result());
    } else {
      b.create(OpKind::Print, {}, {a}, {{"label", std::string("v\t\"") + char('a' + roll(26))}});
    }
  }
}

std::unique_ptr<Module> RandomModule::build() {
  auto m = std::make_unique<Module>();
  m->fileIndex("r\"and.tc");
  int numFns = 1 + roll(3);
  for (int i = 0; i < numFns; ++i) {
    Function *f = m->addFunction("f" + std::to_string(i), Location{0, 1, 1});
    std::vector<Value *> pool;
    for (const Type &t : types_)
      if (roll(2))
        pool.push_back(f->addParam(roll(2) ? "p" : "", t));
    Builder b(&f->body());
    fill(b, pool, 0);
    b.setLoc(Location{});
    b.create(OpKind::Return, {}, {});
  }
  return m;
}

} // namespace

TEST(IRParser, RandomModulesRoundTrip) {
  for (unsigned seed = 0; seed < 200; ++seed) {
    std::unique_ptr<Module> m = RandomModule(seed).build();
    ASSERT_TRUE(verifyModule(*m).empty()) << seed << "\n" << formatFailures(*m, verifyModule(*m));
    std::string once = toString(*m);
    auto r = parse(once);
    ASSERT_TRUE(r->module) << seed << "\n" << r->err.str() << once;
    EXPECT_EQ(toString(*r->module), once) << seed;
    EXPECT_TRUE(verifyModule(*r->module).empty()) << seed;
  }
}

TEST(IRParser, AcceptsFreeLayoutAndComments) {
  const char *text = "// header\nkernel @k(%a: i32) { // trailing\n"
                     "  %x = add %a, %a : i32\n"
                     "  %y, %z = if %c : i32, i32 { yield %x, %x } { yield %a, %a }\n"
                     "  return }\n";
  // %c is undefined: the error names it.
  auto bad = parse(text);
  EXPECT_FALSE(bad->module);
  const char *good = "kernel @k(%a: i32) { // trailing\n"
                     "  %x = add %a, %a : i32\n"
                     "  %c = cmp_eq %a, %x : i1\n"
                     "  %y, %z = if %c : i32, i32 { yield %x, %x } { yield %a, %a }\n"
                     "  return }\n";
  EXPECT_EQ(reprint(good), "kernel @k(%a: i32) {\n"
                           "  %0 = add %a, %a : i32\n"
                           "  %1 = cmp_eq %a, %0 : i1\n"
                           "  %2, %3 = if %1 : i32, i32 {\n"
                           "    yield %0, %0\n"
                           "  } {\n"
                           "    yield %a, %a\n"
                           "  }\n"
                           "  return\n"
                           "}\n");
}

TEST(IRParser, LocationsAreInterned) {
  auto r = parse("kernel @k() loc(\"b.tc\":1:2) {\n"
                 "  %0 = constant <value = 1> : i32 loc(\"a.tc\":3:4)\n"
                 "  return loc(\"b.tc\":5:6)\n}\n");
  ASSERT_TRUE(r->module) << r->err.str();
  EXPECT_EQ(r->module->files, (std::vector<std::string>{"b.tc", "a.tc"}));
  const Function &f = *r->module->functions[0];
  EXPECT_EQ(f.loc(), (Location{0, 1, 2}));
  EXPECT_EQ(f.body().ops()[0]->loc(), (Location{1, 3, 4}));
  EXPECT_EQ(f.body().ops()[1]->loc(), (Location{0, 5, 6}));
}

//===----------------------------------------------------------------------===//
// Parser diagnostics: one case per error path, at the IR text's line:col.
//===----------------------------------------------------------------------===//

namespace {
struct ErrorCase {
  const char *text;
  const char *message;
  uint32_t line, col;
};
} // namespace

TEST(IRParser, Diagnostics) {
  const ErrorCase cases[] = {
      {"func @k() {}", "expected 'kernel'", 1, 1},
      {"kernel k() {}", "expected a kernel name '@name'", 1, 8},
      {"kernel @() {}", "expected a kernel name after '@'", 1, 8},
      {"kernel @k {}", "expected '('", 1, 11},
      {"kernel @k(%a i32) {}", "expected ':'", 1, 14},
      {"kernel @k(a: i32) {}", "expected a parameter '%name'", 1, 11},
      {"kernel @k(%a: i32 %b: i32) {}", "expected ',' or ')'", 1, 19},
      {"kernel @k(%a: i33) {\n}", "invalid type 'i33'", 1, 15},
      {"kernel @k(%a: tile<0xf32>) {}", "invalid type 'tile<0xf32>'", 1, 15},
      {"kernel @k(%a: tile<4x!ptr<f32>) {}", "invalid type 'tile<4x!ptr<f32>'", 1, 15},
      {"kernel @k(%a: tile<65536x65536xf32>) {}",
       "tile type 'tile<65536x65536xf32>' has more than 2147483648 elements", 1, 15},
      {"kernel @k(%a: tile<99999999999999999999xf32>) {}",
       "invalid type 'tile<99999999999999999999xf32>'", 1, 15},
      {"kernel @k(%a: ) {}", "expected a type", 1, 15},
      {"kernel @k(%a: i32 <bogus>) {}", "unknown parameter attribute 'bogus'", 1, 20},
      {"kernel @k(%a: i32 <multipleof = 0>) {}",
       "parameter attribute 'multipleof' must be a positive integer", 1, 33},
      {"kernel @k(%a: i32 <aligned>) {}", "expected '='", 1, 27},
      {"kernel @k(%a: i32 <noalias, noalias>) {}", "duplicate attribute 'noalias'", 1, 29},
      {"kernel @k(%a: i32, %a: i32) {}", "redefinition of value '%a'", 1, 20},
      {"kernel @k() {}\nkernel @k() {}", "redefinition of kernel '@k'", 2, 8},
      {"kernel @k() {\n  %0 = frob : i32\n}", "unknown op 'frob'", 2, 8},
      {"kernel @k() {\n  %0 = add %1, %1 : i32\n}", "use of undefined value '%1'", 2, 12},
      {"kernel @k() {\n  %0 = constant <value = 1> : i32\n  %0 = constant <value = 1> : i32\n}",
       "redefinition of value '%0'", 3, 3},
      {"kernel @k() {\n  %0 = constant <value = 1> : i32, i32\n}",
       "op 'constant' names 1 results but lists 2 result types", 2, 8},
      {"kernel @k() {\n  %0 = constant <value = 1>\n}",
       "op 'constant' names 1 results but lists 0 result types", 2, 8},
      {"kernel @k(%a: i32) {\n  %0 = add %a : i32\n}", "op 'add' takes 2 operands, got 1", 2, 8},
      {"kernel @k(%a: i1) {\n  if %a\n}", "op 'if' takes 2 regions, got 0", 2, 3},
      {"kernel @k() {\n  %0 = constant <value = 1, value = 2> : i32\n}",
       "duplicate attribute 'value'", 2, 29},
      {"kernel @k() {\n  %0 = constant <value = foo> : i32\n}",
       "invalid value for attribute 'value'", 2, 26},
      {"kernel @k() {\n  %0 = constant <value = > : i32\n}", "invalid value for attribute 'value'",
       2, 26},
      {"kernel @k() {\n  %0 = constant <value = [1, x]> : i32\n}", "expected an integer", 2, 30},
      {"kernel @k() {\n  %0 = constant <value = 1 : i32\n}", "expected ',' or '>'", 2, 28},
      {"kernel @k() {\n  %0 = constant <value = 99999999999999999999> : i32\n}",
       "integer literal '99999999999999999999' out of range", 2, 26},
      {"kernel @k() {\n  %0 = constant <value = 1e999> : f32\n}",
       "floating-point literal '1e999' out of range", 2, 26},
      {"kernel @k() {\n  print <label = \"abc>\n}", "unterminated string", 2, 18},
      {"kernel @k() {\n  print <label = \"a\\qb\">\n}", "invalid escape sequence in string", 2, 18},
      {"kernel @k() {\n  return $\n}", "invalid character '$' in IR", 2, 10},
      {"kernel @k() {\n  return loc(\"f\":1)\n}", "expected ':'", 2, 19},
      {"kernel @k() {\n  return loc(f:1:2)\n}", "expected a file name string", 2, 14},
      {"kernel @k() {\n  return loc(\"f\":1:99999999999)\n}",
       "integer literal '99999999999' out of range", 2, 20},
      {"kernel @k() {\n  %0 = \n}", "expected an op mnemonic", 3, 1},
      {"kernel @k() {\n  %0 %1 = \n}", "expected '=' after the result names", 2, 6},
      {"kernel @k() {\n  return\n", "expected an op", 3, 1},
      {"kernel @k(%c: i1) {\n  if %c {\n  ^(%x i32):\n  } {\n  }\n}", "expected ':'", 3, 8},
      {"kernel @k() {\n  % = add\n}", "expected a value name after '%'", 2, 3},
  };
  for (const ErrorCase &c : cases) {
    auto r = parse(c.text);
    EXPECT_FALSE(r->module) << c.text;
    ASSERT_FALSE(r->diags.diagnostics().empty()) << c.text;
    const Diagnostic &d = r->diags.diagnostics()[0];
    EXPECT_EQ(d.message, c.message) << c.text;
    EXPECT_EQ(d.loc.line, c.line) << c.text;
    EXPECT_EQ(d.loc.col, c.col) << c.text;
    EXPECT_EQ(r->diags.numErrors(), 1u) << c.text;
  }
}

TEST(IRParser, RendersWithCaret) {
  auto r = parse("kernel @k() {\n  %0 = frob : i32\n}\n");
  EXPECT_EQ(r->err.str(), "t.tir:2:8: error: unknown op 'frob'\n"
                          "  %0 = frob : i32\n"
                          "       ^~~~\n");
}

TEST(IRParser, ValuesAreScopedToRegions) {
  // %x is defined inside the then-region and is not visible after it.
  auto r = parse("kernel @k(%c: i1) {\n"
                 "  if %c {\n"
                 "    %x = constant <value = 1> : i32\n"
                 "    yield\n"
                 "  } {\n"
                 "    yield\n"
                 "  }\n"
                 "  print %x <label = \"\">\n"
                 "  return\n"
                 "}\n");
  EXPECT_FALSE(r->module);
  ASSERT_EQ(r->diags.diagnostics().size(), 1u);
  EXPECT_EQ(r->diags.diagnostics()[0].message, "use of undefined value '%x'");
  EXPECT_EQ(r->diags.diagnostics()[0].loc.line, 8u);
  // A region cannot use the results of its own op.
  auto self = parse("kernel @k(%c: i1) {\n"
                    "  %r = if %c : i1 {\n"
                    "    yield %r\n"
                    "  } {\n"
                    "    yield %c\n"
                    "  }\n"
                    "  return\n"
                    "}\n");
  EXPECT_FALSE(self->module);
}

TEST(IRParser, DeepNestingIsAnErrorNotACrash) {
  std::string text = "kernel @k(%c: i1) {\n";
  for (int i = 0; i < 10000; ++i)
    text += "if %c {\n";
  auto r = parse(text);
  EXPECT_FALSE(r->module);
  ASSERT_FALSE(r->diags.diagnostics().empty());
  EXPECT_EQ(r->diags.diagnostics()[0].message, "regions nested too deeply (limit 128)");
}

TEST(IRParser, GarbageNeverCrashes) {
  // Every prefix of a valid module, and byte-level mutations of it, parse or fail cleanly.
  std::string text = kEveryOp;
  for (size_t n = 0; n < text.size(); n += 7)
    parse(text.substr(0, n));
  std::mt19937 rng(1);
  const char kBytes[] = "%@<>{}()[]:,=^-\"\\x0123456789 \n\tabc!";
  for (int i = 0; i < 300; ++i) {
    std::string t = text;
    for (int j = 0; j < 5; ++j)
      t[rng() % t.size()] = kBytes[rng() % (sizeof(kBytes) - 1)];
    auto r = parse(t);
    if (r->module)
      verifyModule(*r->module); // may fail, must not crash
  }
}
