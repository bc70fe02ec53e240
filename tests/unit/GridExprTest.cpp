// Grid and shape expressions (runtime/GridExpr.h) and evalGrid (runtime/Launch.h).
// Expected values are C's int64 arithmetic worked out by hand.
#include "runtime/GridExpr.h"

#include <gtest/gtest.h>

using namespace tc;

namespace {

const ExprEnv kEnv = {
    {"N", {5000, ""}},
    {"SIZE", {1024, ""}},
    {"TM", {64, ""}},
    {"TYPE", {std::nullopt, "the define's value is 'float'"}},
};

int64_t eval(const std::string &text) {
  std::string error;
  auto v = evalIntExpr(text, kEnv, error);
  EXPECT_TRUE(v) << text << ": " << error;
  return v.value_or(-999);
}

/// The error for `text`; fails the test if it evaluates.
std::string evalError(const std::string &text, const ExprEnv &env = kEnv) {
  std::string error;
  auto v = evalIntExpr(text, env, error);
  EXPECT_FALSE(v) << text << " gave " << v.value_or(0);
  return error;
}

#define EXPECT_CONTAINS(haystack, needle)                                                          \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos)                                 \
      << "message: " << (haystack) << "\nwanted: " << (needle)

std::shared_ptr<CompiledKernel> vectorAdd(const std::string &size) {
  CompileRequest req;
  req.sourceName = "vector_add.tc";
  req.sourceText = "__global__ void add(int N, float *a, float *b, float *c) {\n"
                   "  int off[SIZE] = get_program_id(0) * SIZE + (0 ... SIZE);\n"
                   "  bool m[SIZE] = off < N;\n"
                   "  *?(m)(c + off) = *?(m)(a + off) + *?(m)(b + off);\n"
                   "}\n";
  req.defines = {{"SIZE", size}, {"TYPE", "float"}};
  CompileOutcome out = compileKernel(req);
  EXPECT_TRUE(out.ok()) << out.diagnostics;
  return out.kernel;
}

} // namespace

TEST(GridExpr, LiteralsAndPrecedence) {
  EXPECT_EQ(eval("42"), 42);
  EXPECT_EQ(eval("  7 "), 7);
  EXPECT_EQ(eval("0x10"), 16);
  EXPECT_EQ(eval("64u"), 64);
  EXPECT_EQ(eval("64UL"), 64);
  EXPECT_EQ(eval("2 + 3 * 4"), 14);
  EXPECT_EQ(eval("(2 + 3) * 4"), 20);
  EXPECT_EQ(eval("10 - 4 - 3"), 3); // left-associative
  EXPECT_EQ(eval("64 / 4 / 2"), 8);
  EXPECT_EQ(eval("-3 * -2"), 6);
  EXPECT_EQ(eval("+5"), 5);
  EXPECT_EQ(eval("--5"), 5);
}

TEST(GridExpr, CDivisionSemantics) {
  EXPECT_EQ(eval("7 / 2"), 3);
  EXPECT_EQ(eval("-7 / 2"), -3); // truncation toward zero, not floor
  EXPECT_EQ(eval("7 / -2"), -3);
  EXPECT_EQ(eval("-7 % 2"), -1); // the dividend's sign
  EXPECT_EQ(eval("7 % -2"), 1);
  EXPECT_EQ(eval("-7 % -2"), -1);
}

TEST(GridExpr, Functions) {
  EXPECT_EQ(eval("cdiv(5000, 1024)"), 5);
  EXPECT_EQ(eval("cdiv(4096, 1024)"), 4);
  EXPECT_EQ(eval("cdiv(1, 1024)"), 1);
  EXPECT_EQ(eval("cdiv(0, 1024)"), 0);
  EXPECT_EQ(eval("cdiv(-7, 2)"), -3); // ceil(-3.5)
  EXPECT_EQ(eval("cdiv(7, -2)"), -3); // ceil(-3.5)
  EXPECT_EQ(eval("cdiv(-7, -2)"), 4); // ceil(3.5)
  EXPECT_EQ(eval("min(3, -4)"), -4);
  EXPECT_EQ(eval("max(3, -4)"), 3);
  EXPECT_EQ(eval("max(1, cdiv(N, SIZE) * 2)"), 10);
  EXPECT_EQ(eval("min ( N , TM )"), 64);
}

TEST(GridExpr, Names) {
  EXPECT_EQ(eval("N"), 5000);
  EXPECT_EQ(eval("cdiv(N, SIZE)"), 5);
  EXPECT_EQ(eval("N / TM + N % TM"), 78 + 8); // 5000 = 78 * 64 + 8
}

TEST(GridExpr, Errors) {
  EXPECT_CONTAINS(evalError("1 / 0"), "division by zero in 1 / 0");
  EXPECT_CONTAINS(evalError("5 % (N - N)"), "division by zero");
  EXPECT_CONTAINS(evalError("cdiv(N, 0)"), "division by zero in cdiv(5000, 0)");
  std::string unknown = evalError("cdiv(N, SIZZE)");
  EXPECT_CONTAINS(unknown, "in 'cdiv(N, SIZZE)': unknown name 'SIZZE'");
  EXPECT_CONTAINS(unknown, "available: N = 5000, SIZE = 1024, TM = 64");
  EXPECT_CONTAINS(evalError("X", {}), "unknown name 'X'; no integer names are available here");
  EXPECT_CONTAINS(evalError("TYPE * 2"),
                  "'TYPE' is not an integer (the define's value is 'float')");
  EXPECT_CONTAINS(evalError("foo(1, 2)"), "unknown function 'foo' (available: cdiv, min, max)");
  EXPECT_CONTAINS(evalError("cdiv"), "'cdiv' is a function");
  EXPECT_CONTAINS(evalError("cdiv(1)"), "cdiv() takes two arguments");
  EXPECT_CONTAINS(evalError("max(1, 2, 3)"), "max() takes two arguments");
  EXPECT_CONTAINS(evalError("(1 + 2"), "missing ')'");
  EXPECT_CONTAINS(evalError(""), "empty expression");
  EXPECT_CONTAINS(evalError("1 +"), "unexpected end of expression");
  EXPECT_CONTAINS(evalError("1 2"), "unexpected '2'");
  EXPECT_CONTAINS(evalError("2 ** 3"), "unexpected '*'");
  EXPECT_CONTAINS(evalError("1.5"), "unexpected '.'");
  EXPECT_CONTAINS(evalError("12ab"), "malformed number '12a'");
  EXPECT_CONTAINS(evalError("0x"), "malformed number");
  EXPECT_CONTAINS(evalError("99999999999999999999"), "number too large");
  EXPECT_CONTAINS(evalError("9223372036854775807 + 1"), "integer overflow");
  EXPECT_CONTAINS(evalError("-9223372036854775807 - 2"), "integer overflow");
  EXPECT_CONTAINS(evalError("4611686018427387904 * 2"), "integer overflow");
  EXPECT_CONTAINS(evalError("(-9223372036854775807 - 1) / -1"), "integer overflow");
  EXPECT_EQ(eval("-9223372036854775807 - 1"), INT64_MIN);
}

TEST(GridExpr, DeepNestingIsAnErrorNotACrash) {
  std::string deep = std::string(100000, '(') + "1" + std::string(100000, ')');
  EXPECT_CONTAINS(evalError(deep), "nested too deeply");
  EXPECT_CONTAINS(evalError(std::string(100000, '-') + "1"), "nested too deeply");
  std::string ok = std::string(50, '(') + "1" + std::string(50, ')');
  EXPECT_EQ(eval(ok), 1);
}

TEST(GridExpr, SplitTopLevel) {
  EXPECT_EQ(splitTopLevel("4,2", ','), (std::vector<std::string>{"4", "2"}));
  EXPECT_EQ(splitTopLevel(" cdiv(N, SIZE) , max(1, 2) ", ','),
            (std::vector<std::string>{"cdiv(N, SIZE)", "max(1, 2)"}));
  EXPECT_EQ(splitTopLevel("a:[1:2]:b", ':'), (std::vector<std::string>{"a", "[1:2]", "b"}));
  EXPECT_EQ(parseGridSpec("cdiv(N, SIZE)").dims, (std::vector<std::string>{"cdiv(N, SIZE)"}));
}

TEST(GridExpr, EnvFromDefinesAndScalars) {
  LaunchArgs args;
  args.setScalar("N", ScalarValue::ofInt(DType::I32, 5000));
  args.setScalar("K", ScalarValue::ofInt(DType::U8, 200));
  args.setScalar("flag", ScalarValue::ofInt(DType::Bool, 1));
  args.setScalar("x", ScalarValue::ofFloat(DType::F32, 1.5));
  args.setScalar("big", ScalarValue::ofInt(DType::U64, -1));
  HostArray buf = HostArray::zeros(DType::F32, {4});
  args.setBuffer("a", &buf);
  ExprEnv env =
      makeExprEnv({{"TM", "64"}, {"TN", "(2 * 16)"}, {"TYPE", "float"}, {"D", "1"}}, args);
  EXPECT_EQ(env.at("TM").value, 64);
  EXPECT_EQ(env.at("TN").value, 32);
  EXPECT_EQ(env.at("D").value, 1);
  EXPECT_FALSE(env.at("TYPE").value);
  EXPECT_EQ(env.at("N").value, 5000);
  EXPECT_EQ(env.at("K").value, 200); // unsigned: no sign extension
  EXPECT_EQ(env.at("flag").value, 1);
  EXPECT_FALSE(env.at("x").value);
  EXPECT_EQ(env.at("x").whyNot, "it is a float32 scalar");
  EXPECT_FALSE(env.at("big").value);
  EXPECT_EQ(env.at("a").whyNot, "it is a buffer");
}

TEST(EvalGrid, VectorAdd) {
  auto k = vectorAdd("1024");
  ASSERT_TRUE(k);
  LaunchArgs args;
  args.setScalar("N", ScalarValue::ofInt(DType::I32, 5000));
  GridOutcome g = evalGrid({{"cdiv(N, SIZE)"}}, *k, args);
  ASSERT_TRUE(g.dims) << g.error;
  EXPECT_EQ(*g.dims, (std::array<int64_t, 3>{5, 1, 1}));
  g = evalGrid(parseGridSpec("4, 2"), *k, args);
  ASSERT_TRUE(g.dims) << g.error;
  EXPECT_EQ(*g.dims, (std::array<int64_t, 3>{4, 2, 1}));
  g = evalGrid(parseGridSpec("1,2,3"), *k, args);
  ASSERT_TRUE(g.dims) << g.error;
  EXPECT_EQ(*g.dims, (std::array<int64_t, 3>{1, 2, 3}));
}

TEST(EvalGrid, Errors) {
  auto k = vectorAdd("64");
  ASSERT_TRUE(k);
  LaunchArgs args;
  args.setScalar("N", ScalarValue::ofInt(DType::I32, 0));
  GridOutcome g = evalGrid({}, *k, args);
  EXPECT_FALSE(g.dims);
  EXPECT_EQ(g.error, "a grid has 1 to 3 dimensions, got 0");
  g = evalGrid(parseGridSpec("1,1,1,1"), *k, args);
  EXPECT_EQ(g.error, "a grid has 1 to 3 dimensions, got 4");
  g = evalGrid({{"cdiv(N, SIZE)"}}, *k, args);
  EXPECT_EQ(g.error,
            "grid dimension 0 (x) 'cdiv(N, SIZE)' is 0; every grid dimension must be at least 1");
  g = evalGrid(parseGridSpec("1, -2"), *k, args);
  EXPECT_CONTAINS(g.error, "grid dimension 1 (y) '-2' is -2");
  g = evalGrid({{"cdiv(M, SIZE)"}}, *k, args);
  EXPECT_CONTAINS(g.error, "grid dimension 0 (x): in 'cdiv(M, SIZE)': unknown name 'M'");
  EXPECT_CONTAINS(g.error, "; available: N = 0, SIZE = 64");
  g = evalGrid({{"SIZE / 0"}}, *k, args);
  EXPECT_CONTAINS(g.error, "division by zero in 64 / 0");
}
