//===- PromotionTableTest.cpp - Rules 1 and 2 of docs/semantics.md ------===//
//
// Independent tests of type promotion. Every expected value below was worked
// out by hand from the spec (Triton's semantics page "Type Promotion" and docs/semantics.md
// rules 1-2, which win where they differ), never taken from the implementation:
//
//   Rule 1 (tile/tile, and runtime scalars = 0-d tiles): the higher kind wins
//   (bool < integral < floating); same kind: the wider wins; same width, both
//   float (fp16 vs bf16): fp16; same width, different signedness: unsigned.
//
//   Rule 2 (tile/compile-time scalar): a constant of kind <= the tile's kind
//   takes no part (the result is the tile's dtype, and an integer constant must
//   fit it; a negative constant meeting an unsigned result is an error);
//   otherwise the constant takes the lowest of int32 < uint32 < int64 < uint64
//   (ints) or fp32 < fp64 (floats) that holds it, and that is the result.
//
//===----------------------------------------------------------------------===//

#include "frontend/AST.h"
#include "frontend/Compiler.h"
#include "support/DType.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace tc;

namespace {

//===----------------------------------------------------------------------===//
// Hand-written tables
//===----------------------------------------------------------------------===//

constexpr DType b1 = DType::Bool;
constexpr DType i8 = DType::I8, i16 = DType::I16, i32 = DType::I32, i64 = DType::I64;
constexpr DType u8 = DType::U8, u16 = DType::U16, u32 = DType::U32, u64 = DType::U64;
constexpr DType f16 = DType::F16, bf = DType::BF16, f32 = DType::F32, f64 = DType::F64;

constexpr int kN = 13;

/// The order of the rows and columns of every table below.
constexpr DType kOrder[kN] = {b1, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf, f32, f64};

/// The language's spelling of each dtype of kOrder (the predefined typedefs
/// int8..uint64 for the integers).
// clang-format off
const char *const kLangName[kN] = {"bool",   "int8",   "int16",  "int32", "int64",
                                   "uint8",  "uint16", "uint32", "uint64", "half",
                                   "bf16",   "float",  "double"};
// clang-format on

/// Rule 1, tile/tile: kPromote[row][col] = promote(kOrder[row], kOrder[col]).
// clang-format off
constexpr DType kPromote[kN][kN] = {
    //          bool  i8   i16  i32  i64  u8   u16  u32  u64  f16  bf16 f32  f64
    /* bool */ {b1,   i8,  i16, i32, i64, u8,  u16, u32, u64, f16, bf,  f32, f64},
    /* i8   */ {i8,   i8,  i16, i32, i64, u8,  u16, u32, u64, f16, bf,  f32, f64},
    /* i16  */ {i16,  i16, i16, i32, i64, i16, u16, u32, u64, f16, bf,  f32, f64},
    /* i32  */ {i32,  i32, i32, i32, i64, i32, i32, u32, u64, f16, bf,  f32, f64},
    /* i64  */ {i64,  i64, i64, i64, i64, i64, i64, i64, u64, f16, bf,  f32, f64},
    /* u8   */ {u8,   u8,  i16, i32, i64, u8,  u16, u32, u64, f16, bf,  f32, f64},
    /* u16  */ {u16,  u16, u16, i32, i64, u16, u16, u32, u64, f16, bf,  f32, f64},
    /* u32  */ {u32,  u32, u32, u32, i64, u32, u32, u32, u64, f16, bf,  f32, f64},
    /* u64  */ {u64,  u64, u64, u64, u64, u64, u64, u64, u64, f16, bf,  f32, f64},
    /* f16  */ {f16,  f16, f16, f16, f16, f16, f16, f16, f16, f16, f16, f32, f64},
    /* bf16 */ {bf,   bf,  bf,  bf,  bf,  bf,  bf,  bf,  bf,  f16, bf,  f32, f64},
    /* f32  */ {f32,  f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f64},
    /* f64  */ {f64,  f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64, f64},
};
// clang-format on

/// The compile-time scalars of the rule-2 table, as written in the source, and
/// as an error message would print their value.
struct Literal {
  const char *spelling;
  const char *value; // for the error cases: the message must mention it
};
constexpr int kNumLits = 10;
const Literal kLits[kNumLits] = {
    {"3", "3"},
    {"(-1)", "-1"},
    {"300", "300"},
    {"70000", "70000"},
    {"2147483648", "2147483648"},                   // 2^31
    {"4294967296", "4294967296"},                   // 2^32
    {"9223372036854775808", "9223372036854775808"}, // 2^63
    {"4.0", "4.0"},
    {"1e300", "1e300"},
    {"true", "true"},
};

/// "compile error" in the rule-2 table.
constexpr std::optional<DType> E = std::nullopt;

/// Rule 2, tile/literal: kLitPromote[tile][literal] = the result dtype, or E.
///
/// int literals (int kind): with the bool tile the literal's kind is higher, so
/// it takes its own lowest type (3..70000 -> int32, 2^31 -> uint32, 2^32 ->
/// int64, 2^63 -> uint64); with an int tile the result is the tile's dtype and
/// the value must fit it; with a float tile the result is the tile's dtype.
/// float literals: with bool and int tiles the result is fp32 (4.0) or fp64
/// (1e300, beyond fp32's range); with a float tile it is the tile's dtype and
/// the value rounds (1e300 -> inf), never an error.
/// `true` (bool kind) is <= every kind: always the tile's dtype.
///
/// Note on the fp16 row: 70000, 2^31, 2^32 and 2^63 are beyond fp16's largest
/// finite value (65504). The result is fp16 by rule 2 and, like the float
/// literals that the brief says round (1e300 with a float tile), an int literal
/// converted to a float type rounds (to +inf here) rather than being an error:
/// "does not fit" is taken to concern integer results only.
// clang-format off
const std::optional<DType> kLitPromote[kN][kNumLits] = {
    //          3    -1   300  70000 2^31 2^32 2^63 4.0  1e300 true
    /* bool */ {i32, i32, i32, i32,  u32, i64, u64, f32, f64,  b1},
    /* i8   */ {i8,  i8,  E,   E,    E,   E,   E,   f32, f64,  i8},
    /* i16  */ {i16, i16, i16, E,    E,   E,   E,   f32, f64,  i16},
    /* i32  */ {i32, i32, i32, i32,  E,   E,   E,   f32, f64,  i32},
    /* i64  */ {i64, i64, i64, i64,  i64, i64, E,   f32, f64,  i64},
    /* u8   */ {u8,  E,   E,   E,    E,   E,   E,   f32, f64,  u8},
    /* u16  */ {u16, E,   u16, E,    E,   E,   E,   f32, f64,  u16},
    /* u32  */ {u32, E,   u32, u32,  u32, E,   E,   f32, f64,  u32},
    /* u64  */ {u64, E,   u64, u64,  u64, u64, u64, f32, f64,  u64},
    /* f16  */ {f16, f16, f16, f16,  f16, f16, f16, f16, f16,  f16},
    /* bf16 */ {bf,  bf,  bf,  bf,   bf,  bf,  bf,  bf,  bf,   bf},
    /* f32  */ {f32, f32, f32, f32,  f32, f32, f32, f32, f32,  f32},
    /* f64  */ {f64, f64, f64, f64,  f64, f64, f64, f64, f64,  f64},
};
// clang-format on

std::string pairName(int i, int j) {
  return std::string("(") + kLangName[i] + ", " + kLangName[j] + ")";
}

std::string nameOf(DType t) {
  for (int i = 0; i < kN; ++i)
    if (kOrder[i] == t)
      return kLangName[i];
  return "?";
}

//===----------------------------------------------------------------------===//
// Compiling a kernel and reading the type of its last expression statement
//===----------------------------------------------------------------------===//

/// What a compilation up to sema gave for the kernel's last statement.
struct Outcome {
  bool ok = false;        // run(Stage::Sema) succeeded
  bool hasErrors = false; // diags().hasErrors()
  std::string diagText;   // every diagnostic, rendered
  std::vector<std::string> errorMessages;
  bool found = false; // the last statement is an expression statement
  ast::ExprKind exprKind = ast::ExprKind::IntLiteral;
  bool typed = false;
  ir::Type type;        // the expression's type
  ir::Type operandType; // BinaryExpr / CallExpr: the promoted operand type
};

/// The expression of the last statement of the first function, or null.
const ast::Expr *lastExprStmt(const Compilation &c) {
  const ast::TranslationUnit *tu = c.ast();
  if (!tu || tu->functions.empty() || !tu->functions[0]->body)
    return nullptr;
  const auto &body = tu->functions[0]->body->body;
  if (body.empty() || body.back()->kind != ast::StmtKind::Expr)
    return nullptr;
  return body.back()->as<ast::ExprStmt>()->expr.get();
}

/// Compiles `src` up to sema (diagnostics kept silent) and reads its last statement.
Outcome compile(const std::string &src) {
  Outcome out;
  auto c = std::make_unique<Compilation>(CompileOptions{});
  c->diags().setOutput(nullptr);
  c->addMainSource("t.tc", src);
  out.ok = c->run(Stage::Sema);
  out.hasErrors = c->diags().hasErrors();
  for (const Diagnostic &d : c->diags().diagnostics()) {
    out.diagText += c->diags().render(d);
    if (d.severity == Severity::Error)
      out.errorMessages.push_back(d.message);
  }
  const ast::Expr *e = lastExprStmt(*c);
  if (!e)
    return out;
  out.found = true;
  out.exprKind = e->kind;
  out.typed = e->typed;
  out.type = e->type;
  if (e->kind == ast::ExprKind::Binary)
    out.operandType = e->as<ast::BinaryExpr>()->operandType;
  if (e->kind == ast::ExprKind::Call)
    out.operandType = e->as<ast::CallExpr>()->operandType;
  return out;
}

/// A kernel loading a 4-element tile `a` of t1 and `b` of t2, then `expr;`.
std::string tileTileKernel(const char *t1, const char *t2, const std::string &expr) {
  return std::string("__global__ void k(") + t1 + "* pa, " + t2 + "* pb) {\n" + "  " + t1 +
         " a[4] = *(pa + (0 ... 4));\n" + "  " + t2 + " b[4] = *(pb + (0 ... 4));\n" + "  " + expr +
         ";\n}\n";
}

/// A kernel with runtime scalar parameters `a` of t1 and `b` of t2, then `expr;`.
std::string scalarScalarKernel(const char *t1, const char *t2, const std::string &expr) {
  return std::string("__global__ void k(") + t1 + " a, " + t2 + " b) {\n  " + expr + ";\n}\n";
}

/// A kernel with a 4-element tile `a` of t1 and a runtime scalar parameter `b` of t2.
std::string tileScalarKernel(const char *t1, const char *t2, const std::string &expr) {
  return std::string("__global__ void k(") + t1 + "* pa, " + t2 + " b) {\n  " + t1 +
         " a[4] = *(pa + (0 ... 4));\n  " + expr + ";\n}\n";
}

/// A kernel with a 4-element tile `a` of t, then `expr;`.
std::string tileKernel(const char *t, const std::string &expr) {
  return std::string("__global__ void k(") + t + "* pa) {\n  " + t +
         " a[4] = *(pa + (0 ... 4));\n  " + expr + ";\n}\n";
}

/// A kernel with a runtime scalar parameter `a` of t, then `expr;`.
std::string scalarKernel(const char *t, const std::string &expr) {
  return std::string("__global__ void k(") + t + " a) {\n  " + expr + ";\n}\n";
}

/// Checks that `o` is a successfully typed expression of `kind` with the given
/// result and operand dtypes and shape. `what` names the case in failures.
void expectTyped(const Outcome &o, ast::ExprKind kind, DType result, std::optional<DType> operand,
                 const ir::Shape &shape, const std::string &what, const std::string &src) {
  SCOPED_TRACE(what + "\nsource:\n" + src + "diagnostics:\n" + o.diagText);
  ASSERT_TRUE(o.ok) << what << ": compilation failed";
  ASSERT_FALSE(o.hasErrors) << what;
  ASSERT_TRUE(o.found) << what << ": no expression statement at the end";
  ASSERT_EQ(o.exprKind, kind) << what;
  ASSERT_TRUE(o.typed) << what;
  EXPECT_EQ(o.type.dtype, result) << what << ": expected " << nameOf(result) << ", got "
                                  << nameOf(o.type.dtype);
  EXPECT_FALSE(o.type.isPtr) << what;
  EXPECT_EQ(o.type.shape, shape) << what;
  if (operand) {
    EXPECT_EQ(o.operandType.dtype, *operand)
        << what << ": operand type expected " << nameOf(*operand) << ", got "
        << nameOf(o.operandType.dtype);
  }
}

/// Checks that `o` failed with an error whose message mentions `value`.
void expectError(const Outcome &o, const std::string &value, const std::string &what,
                 const std::string &src) {
  SCOPED_TRACE(what + "\nsource:\n" + src + "diagnostics:\n" + o.diagText);
  EXPECT_FALSE(o.ok) << what << ": expected a compile error";
  EXPECT_TRUE(o.hasErrors) << what << ": expected a compile error";
  bool mentioned = false;
  for (const std::string &m : o.errorMessages)
    mentioned = mentioned || m.find(value) != std::string::npos;
  EXPECT_TRUE(mentioned) << what << ": no error message mentions the value " << value;
}

//===----------------------------------------------------------------------===//
// Rule 1: the table itself and tc::promote
//===----------------------------------------------------------------------===//

TEST(PromotionTable, OrderIsTheDTypeOrder) {
  for (int i = 0; i < kN; ++i)
    EXPECT_EQ(kOrder[i], kAllDTypes[i]) << i;
}

TEST(PromotionTable, IsSymmetric) {
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j)
      EXPECT_EQ(kPromote[i][j], kPromote[j][i]) << pairName(i, j);
}

TEST(PromotionTable, DiagonalIsIdentity) {
  for (int i = 0; i < kN; ++i)
    EXPECT_EQ(kPromote[i][i], kOrder[i]) << kLangName[i];
}

TEST(PromotionTable, SpecExamples) {
  // Triton's semantics page and docs/semantics.md rule 1.
  EXPECT_EQ(promote(i32, bf), bf);
  EXPECT_EQ(promote(f32, f16), f32);
  EXPECT_EQ(promote(f16, bf), f16);
  EXPECT_EQ(promote(i32, u32), u32);
}

TEST(PromotionTable, MatchesPromote) {
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j)
      EXPECT_EQ(promote(kOrder[i], kOrder[j]), kPromote[i][j])
          << pairName(i, j) << ": expected " << nameOf(kPromote[i][j]) << ", got "
          << nameOf(promote(kOrder[i], kOrder[j]));
}

//===----------------------------------------------------------------------===//
// Rule 1 through the frontend
//===----------------------------------------------------------------------===//

/// `a op b` over every pair of tiles; comparisons give bool.
void checkTileTileOp(const char *op, bool isComparison, bool skipBoolBool) {
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j) {
      if (skipBoolBool && i == 0 && j == 0)
        continue;
      // `a * b;` is wrapped in parentheses: the parser takes a statement
      // `ident * ident;` for a declaration (see BareProductStatement below).
      std::string expr = std::string("a ") + op + " b";
      if (std::string(op) == "*")
        expr = "(" + expr + ")";
      std::string src = tileTileKernel(kLangName[i], kLangName[j], expr);
      DType want = kPromote[i][j];
      expectTyped(compile(src), ast::ExprKind::Binary, isComparison ? b1 : want, want, {4},
                  std::string("tile ") + pairName(i, j) + " op " + op, src);
    }
}

TEST(PromotionFrontend, TileTileAdd) {
  checkTileTileOp("+", false, false);
}

// Arithmetic on two bools is left out of the other operators: only `+` is
// asked of the bool/bool pair.
TEST(PromotionFrontend, TileTileMul) {
  checkTileTileOp("*", false, true);
}
TEST(PromotionFrontend, TileTileSub) {
  checkTileTileOp("-", false, true);
}
TEST(PromotionFrontend, TileTileDiv) {
  checkTileTileOp("/", false, true);
}

TEST(PromotionFrontend, TileTileLess) {
  checkTileTileOp("<", true, false);
}
TEST(PromotionFrontend, TileTileGreaterEqual) {
  checkTileTileOp(">=", true, false);
}
TEST(PromotionFrontend, TileTileEqual) {
  checkTileTileOp("==", true, false);
}
TEST(PromotionFrontend, TileTileNotEqual) {
  checkTileTileOp("!=", true, false);
}

// Runtime scalars (kernel arguments) are 0-d tiles: rule 1, scalar result.
TEST(PromotionFrontend, RuntimeScalarPairs) {
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j) {
      DType want = kPromote[i][j];
      std::string add = scalarScalarKernel(kLangName[i], kLangName[j], "a + b");
      expectTyped(compile(add), ast::ExprKind::Binary, want, want, {},
                  "scalar " + pairName(i, j) + " op +", add);
      std::string lt = scalarScalarKernel(kLangName[i], kLangName[j], "a < b");
      expectTyped(compile(lt), ast::ExprKind::Binary, b1, want, {},
                  "scalar " + pairName(i, j) + " op <", lt);
      if (i == 0 && j == 0)
        continue;
      std::string mul = scalarScalarKernel(kLangName[i], kLangName[j], "(a * b)");
      expectTyped(compile(mul), ast::ExprKind::Binary, want, want, {},
                  "scalar " + pairName(i, j) + " op *", mul);
    }
}

// Not a promotion rule, found while writing these tests: in C a statement
// `a * b;` whose `a` names a variable is an expression statement (a product
// whose value is discarded), not a declaration of `b` with unknown type `a`.
TEST(PromotionFrontend, BareProductStatement) {
  std::string tile = tileTileKernel("int8", "int32", "a * b");
  expectTyped(compile(tile), ast::ExprKind::Binary, i32, i32, {4}, "tile `a * b;`", tile);
  std::string scalar = scalarScalarKernel("uint8", "int16", "a * b");
  expectTyped(compile(scalar), ast::ExprKind::Binary, i16, i16, {}, "scalar `a * b;`", scalar);
}

// A tile and a runtime scalar: rule 1 (not rule 2), the tile's shape.
TEST(PromotionFrontend, TileAndRuntimeScalar) {
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j) {
      DType want = kPromote[i][j];
      std::string ab = tileScalarKernel(kLangName[i], kLangName[j], "a + b");
      expectTyped(compile(ab), ast::ExprKind::Binary, want, want, {4},
                  "tile " + std::string(kLangName[i]) + " + scalar " + kLangName[j], ab);
      std::string ba = tileScalarKernel(kLangName[i], kLangName[j], "b + a");
      expectTyped(compile(ba), ast::ExprKind::Binary, want, want, {4},
                  "scalar " + std::string(kLangName[j]) + " + tile " + kLangName[i], ba);
    }
}

// `where`/`select` and `?:` with a tile condition promote their last two
// operands (Triton's semantics page: "the ternary function tl.where on its last two arguments").
TEST(PromotionFrontend, WhereAndConditional) {
  for (int i = 0; i < kN; ++i)
    for (int j = 0; j < kN; ++j) {
      DType want = kPromote[i][j];
      std::string w = tileTileKernel(kLangName[i], kLangName[j], "where((0 ... 4) < 2, a, b)");
      expectTyped(compile(w), ast::ExprKind::Call, want, std::nullopt, {4},
                  "where " + pairName(i, j), w);
      std::string s = tileTileKernel(kLangName[i], kLangName[j], "select((0 ... 4) < 2, a, b)");
      expectTyped(compile(s), ast::ExprKind::Call, want, std::nullopt, {4},
                  "select " + pairName(i, j), s);
      std::string c = tileTileKernel(kLangName[i], kLangName[j], "((0 ... 4) < 2) ? a : b");
      expectTyped(compile(c), ast::ExprKind::Conditional, want, std::nullopt, {4},
                  "?: " + pairName(i, j), c);
    }
}

// The C spellings of the integer types name the same dtypes (docs/language.md
//: char/short/int/long are int8..int64).
TEST(PromotionFrontend, CSpellings) {
  struct Case {
    const char *t1, *t2;
    DType want;
  } cases[] = {
      {"char", "unsigned char", u8},
      {"short", "unsigned short", u16},
      {"int", "unsigned", u32},
      {"int", "unsigned int", u32},
      {"long", "unsigned long", u64},
      {"char", "short", i16},
      {"unsigned char", "short", i16},
      {"unsigned short", "int", i32},
      {"unsigned int", "long", i64},
      {"long", "half", f16},
      {"int", "bf16", bf},
      {"half", "bf16", f16},
      {"float", "half", f32},
      {"double", "float", f64},
      {"bool", "char", i8},
  };
  for (const Case &k : cases) {
    std::string src = tileTileKernel(k.t1, k.t2, "a + b");
    expectTyped(compile(src), ast::ExprKind::Binary, k.want, k.want, {4},
                std::string("(") + k.t1 + ", " + k.t2 + ")", src);
  }
}

// A local variable is a runtime scalar even when initialised from a constant:
// rule 1 applies, not rule 2.
TEST(PromotionFrontend, LocalVariablesAreRuntimeScalars) {
  struct Case {
    const char *tile, *var, *init;
    DType want;
  } cases[] = {
      {"int8", "int32", "3", i32},    // a literal 3 would give int8
      {"uint8", "int32", "300", i32}, // a literal 300 would be an error
      {"uint8", "int32", "-1", i32},  // a literal -1 would be an error
      {"half", "double", "4.0", f64}, // a literal 4.0 would give fp16
      {"int16", "float", "4.0", f32},
      {"uint16", "int16", "1", u16}, // same width, different signedness
      {"bool", "int8", "1", i8},
  };
  for (const Case &k : cases) {
    std::string src = std::string("__global__ void k(") + k.tile + "* pa) {\n  " + k.tile +
                      " a[4] = *(pa + (0 ... 4));\n  " + k.var + " x = " + k.init +
                      ";\n  a + x;\n}\n";
    expectTyped(compile(src), ast::ExprKind::Binary, k.want, k.want, {4},
                std::string("tile ") + k.tile + " + variable " + k.var, src);
  }
}

//===----------------------------------------------------------------------===//
// Rule 2 through the frontend
//===----------------------------------------------------------------------===//

/// Checks `a + lit` and `lit + a` against the rule-2 table for tile row `i`,
/// with `a` built by `kernel` (a tile or a runtime scalar of shape `shape`).
void checkLiteralRow(int i, std::string (*kernel)(const char *, const std::string &),
                     const ir::Shape &shape, const char *what) {
  for (int l = 0; l < kNumLits; ++l) {
    const Literal &lit = kLits[l];
    std::string exprs[2] = {std::string("a + ") + lit.spelling, std::string(lit.spelling) + " + a"};
    for (const std::string &expr : exprs) {
      std::string src = kernel(kLangName[i], expr);
      std::string name = std::string(what) + " " + kLangName[i] + ": `" + expr + "`";
      std::optional<DType> want = kLitPromote[i][l];
      if (want)
        expectTyped(compile(src), ast::ExprKind::Binary, *want, *want, shape, name, src);
      else
        expectError(compile(src), lit.value, name, src);
    }
  }
}

TEST(PromotionLiteral, TileLiteralTable) {
  for (int i = 0; i < kN; ++i)
    checkLiteralRow(i, tileKernel, {4}, "tile");
}

// A runtime scalar is a 0-d tile: the same rule 2 applies to it.
TEST(PromotionLiteral, RuntimeScalarLiteralTable) {
  for (int i = 0; i < kN; ++i)
    checkLiteralRow(i, scalarKernel, {}, "scalar");
}

TEST(PromotionLiteral, SpecExamples) {
  std::string a = tileKernel("uint8", "a + 3");
  expectTyped(compile(a), ast::ExprKind::Binary, u8, u8, {4}, "(uint8, 3)", a);
  std::string b = tileKernel("int16", "a + 4.0");
  expectTyped(compile(b), ast::ExprKind::Binary, f32, f32, {4}, "(int16, 4.0)", b);
  std::string c = tileKernel("int32", "a + 4.0");
  expectTyped(compile(c), ast::ExprKind::Binary, f32, f32, {4}, "(int32, 4.0)", c);
}

// Comparisons follow the same rule for their operand type and give bool.
TEST(PromotionLiteral, Comparisons) {
  struct Case {
    const char *tile, *expr;
    std::optional<DType> operand;
    const char *value;
  } cases[] = {
      {"uint8", "a < 3", u8, ""},           {"int16", "a < 4.0", f32, ""},
      {"int8", "a == 300", E, "300"},       {"uint32", "a >= (-1)", E, "-1"},
      {"bool", "a != 2147483648", u32, ""}, {"half", "1e300 > a", f16, ""},
      {"int64", "a < 4294967296", i64, ""},
  };
  for (const Case &k : cases) {
    std::string src = tileKernel(k.tile, k.expr);
    std::string name = std::string("tile ") + k.tile + ": `" + k.expr + "`";
    if (k.operand)
      expectTyped(compile(src), ast::ExprKind::Binary, b1, *k.operand, {4}, name, src);
    else
      expectError(compile(src), k.value, name, src);
  }
}

// Macros and constant expressions are compile-time scalars too (rule 2);
// constant arithmetic is exact (no wrap-around at 32 bits).
TEST(PromotionLiteral, MacrosAndConstantExpressions) {
  struct Case {
    const char *tile, *prelude, *expr;
    std::optional<DType> want;
    const char *value;
  } cases[] = {
      {"uint8", "#define K 3\n", "a + K", u8, ""},
      {"uint8", "#define K 300\n", "a + K", E, "300"},
      {"uint8", "#define K (-1)\n", "K + a", E, "-1"},
      {"int16", "#define K 4.0\n", "a * K", f32, ""},
      {"uint8", "", "a + (1 + 2)", u8, ""},
      {"uint8", "", "a + (100 * 3)", E, "300"},
      {"uint8", "", "a - (2 - 3)", E, "-1"},
      {"int32", "", "a + (2147483647 + 1)", E, "2147483648"},
      {"int64", "", "a + (2147483647 + 1)", i64, ""},
      {"bool", "", "a + (2147483647 + 1)", u32, ""},
      {"uint32", "", "a + (4294967296 - 1)", u32, ""},
      {"bool", "", "a + (4294967295 + 1)", i64, ""},
      {"int16", "", "a + (1.0 + 2.0)", f32, ""},
      {"int8", "", "a + (1e200 * 1e100)", f64, ""},
  };
  for (const Case &k : cases) {
    std::string src = std::string(k.prelude) + tileKernel(k.tile, k.expr);
    std::string name = std::string("tile ") + k.tile + ": `" + k.expr + "` " + k.prelude;
    if (k.want)
      expectTyped(compile(src), ast::ExprKind::Binary, *k.want, *k.want, {4}, name, src);
    else
      expectError(compile(src), k.value, name, src);
  }
}

// Literal suffixes are accepted and ignored (frontend/AST.h: literals are
// untyped constants), so they do not change the promotion.
TEST(PromotionLiteral, SuffixesAreIgnored) {
  std::string a = tileKernel("int8", "a + 3u");
  expectTyped(compile(a), ast::ExprKind::Binary, i8, i8, {4}, "(int8, 3u)", a);
  std::string b = tileKernel("half", "a + 4.0f");
  expectTyped(compile(b), ast::ExprKind::Binary, f16, f16, {4}, "(half, 4.0f)", b);
  std::string c = tileKernel("uint16", "a + 300L");
  expectTyped(compile(c), ast::ExprKind::Binary, u16, u16, {4}, "(uint16, 300L)", c);
}

} // namespace
