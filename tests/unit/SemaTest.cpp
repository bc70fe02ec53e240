// Unit tests of semantic analysis (frontend/Sema*.cpp, ConstEval.cpp).
//
// Expected values come from docs/semantics.md, Triton's semantics page and
// the sema brief, worked out by hand (e.g. 7 / -2 floors to -4 where C gives -3).
// The full 13x13 promotion table is tested separately (PromotionTableTest).
#include "frontend/Sema.h"
#include "frontend/Parser.h"
#include "frontend/Preprocessor.h"
#include "frontend/SemaInternal.h"
#include "support/FloatBits.h"
#include "tests/unit/SourceRoot.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

using namespace tc;
using namespace tc::ast;
using namespace tc::sema;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

struct Analysed {
  SourceManager sm;
  DiagEngine diags{sm};
  std::ostringstream rendered;
  std::unique_ptr<TranslationUnit> tu;
  bool parsed = false;
  bool ok = false;

  std::vector<std::string> messages(Severity sev) const {
    std::vector<std::string> out;
    for (const Diagnostic &d : diags.diagnostics())
      if (d.severity == sev)
        out.push_back(d.message);
    return out;
  }
  std::vector<std::string> errors() const { return messages(Severity::Error); }
  std::vector<std::string> warnings() const { return messages(Severity::Warning); }
  bool has(DiagId id) const {
    for (const Diagnostic &d : diags.diagnostics())
      if (d.id == id)
        return true;
    return false;
  }
  std::string all() const { return rendered.str(); }
};

std::unique_ptr<Analysed> analyzeSource(const std::string &src,
                                        std::vector<std::pair<std::string, std::string>> defs = {}) {
  auto a = std::make_unique<Analysed>();
  a->diags.setOutput(&a->rendered);
  uint32_t file = a->sm.addBuffer("test.tc", src);
  PreprocessorOptions opts;
  opts.defines = std::move(defs);
  std::vector<Token> toks = preprocess(file, opts, a->sm, a->diags);
  a->tu = parseTranslationUnit(toks, a->diags);
  a->parsed = !a->diags.hasErrors();
  if (a->parsed)
    a->ok = analyze(*a->tu, a->diags);
  return a;
}

/// A kernel with common operands in scope, then `body`.
const char *kPrelude = R"(__global__ void k(float *p, half *ph, int8 *pi8, uint8 *pu8, int16 *pi16,
                   bool *pb, int *pi, int n, uint32 un, int64 l, float x) {
  int off[16] = 0 ... 16;
  float v[16] = *(p + off);
  half h[16] = *(ph + off);
  int8 i8[16] = *(pi8 + off);
  uint8 u8[16] = *(pu8 + off);
  int16 i16[16] = *(pi16 + off);
  bool m[16] = *(pb + off);
  int iv[16] = *(pi + off);
  float g[16, 8] = 0;
  half hm[16, 16] = 0;
)";

std::unique_ptr<Analysed> analyzeBody(const std::string &body) {
  return analyzeSource(std::string(kPrelude) + body + "\n}\n");
}

void forEachStmt(Stmt *s, const std::function<void(Stmt *)> &fn);

void forEachStmt(Stmt *s, const std::function<void(Stmt *)> &fn) {
  if (!s)
    return;
  fn(s);
  switch (s->kind) {
  case StmtKind::Compound:
    for (auto &c : s->as<CompoundStmt>()->body)
      forEachStmt(c.get(), fn);
    break;
  case StmtKind::If:
    forEachStmt(s->as<IfStmt>()->thenStmt.get(), fn);
    forEachStmt(s->as<IfStmt>()->elseStmt.get(), fn);
    break;
  case StmtKind::For:
    forEachStmt(s->as<ForStmt>()->init.get(), fn);
    forEachStmt(s->as<ForStmt>()->body.get(), fn);
    break;
  case StmtKind::While: forEachStmt(s->as<WhileStmt>()->body.get(), fn); break;
  case StmtKind::DoWhile: forEachStmt(s->as<DoWhileStmt>()->body.get(), fn); break;
  default: break;
  }
}

VarDecl *findVar(TranslationUnit &tu, const std::string &name) {
  VarDecl *found = nullptr;
  for (auto &f : tu.functions) {
    for (auto &p : f->params)
      if (p->name == name)
        found = p.get();
    forEachStmt(f->body.get(), [&](Stmt *s) {
      if (s->kind == StmtKind::Decl)
        for (auto &v : s->as<DeclStmt>()->vars)
          if (v->name == name)
            found = v.get();
    });
  }
  return found;
}

/// The initialiser of variable `name` (which must exist).
Expr *initOf(Analysed &a, const std::string &name) {
  VarDecl *v = findVar(*a.tu, name);
  EXPECT_NE(v, nullptr) << name;
  return v ? v->init.get() : nullptr;
}

FunctionDecl *findFunction(TranslationUnit &tu, const std::string &name) {
  for (auto &f : tu.functions)
    if (f->name == name)
      return f.get();
  return nullptr;
}

/// Calls `fn` on every expression of the unit (pre-order).
void forEachExpr(Expr *e, const std::function<void(Expr *)> &fn) {
  if (!e)
    return;
  fn(e);
  switch (e->kind) {
  case ExprKind::IntLiteral:
  case ExprKind::FloatLiteral:
  case ExprKind::BoolLiteral:
  case ExprKind::StringLiteral:
  case ExprKind::Ident: break;
  case ExprKind::Unary: forEachExpr(e->as<UnaryExpr>()->operand.get(), fn); break;
  case ExprKind::MaskedDeref:
    forEachExpr(e->as<MaskedDerefExpr>()->mask.get(), fn);
    forEachExpr(e->as<MaskedDerefExpr>()->pointer.get(), fn);
    break;
  case ExprKind::Binary:
    forEachExpr(e->as<BinaryExpr>()->lhs.get(), fn);
    forEachExpr(e->as<BinaryExpr>()->rhs.get(), fn);
    break;
  case ExprKind::Assign:
    forEachExpr(e->as<AssignExpr>()->lhs.get(), fn);
    forEachExpr(e->as<AssignExpr>()->rhs.get(), fn);
    break;
  case ExprKind::Conditional:
    forEachExpr(e->as<ConditionalExpr>()->cond.get(), fn);
    forEachExpr(e->as<ConditionalExpr>()->thenExpr.get(), fn);
    forEachExpr(e->as<ConditionalExpr>()->elseExpr.get(), fn);
    break;
  case ExprKind::Cast:
    for (auto &d : e->as<CastExpr>()->shape)
      forEachExpr(d.get(), fn);
    forEachExpr(e->as<CastExpr>()->operand.get(), fn);
    break;
  case ExprKind::Bitcast: forEachExpr(e->as<BitcastExpr>()->operand.get(), fn); break;
  case ExprKind::Range:
    forEachExpr(e->as<RangeExpr>()->begin.get(), fn);
    forEachExpr(e->as<RangeExpr>()->end.get(), fn);
    break;
  case ExprKind::Subscript: forEachExpr(e->as<SubscriptExpr>()->base.get(), fn); break;
  case ExprKind::Call:
    for (auto &a : e->as<CallExpr>()->args)
      forEachExpr(a.get(), fn);
    break;
  }
}

void forEachExprInUnit(TranslationUnit &tu, const std::function<void(Expr *)> &fn) {
  auto var = [&](VarDecl &v) {
    for (auto &d : v.shape)
      forEachExpr(d.get(), fn);
    for (auto &at : v.attrs)
      for (auto &arg : at.args)
        forEachExpr(arg.get(), fn);
    forEachExpr(v.init.get(), fn);
  };
  for (auto &f : tu.functions) {
    for (auto &p : f->params)
      var(*p);
    forEachStmt(f->body.get(), [&](Stmt *s) {
      switch (s->kind) {
      case StmtKind::Decl:
        for (auto &v : s->as<DeclStmt>()->vars)
          var(*v);
        break;
      case StmtKind::Expr: forEachExpr(s->as<ExprStmt>()->expr.get(), fn); break;
      case StmtKind::If: forEachExpr(s->as<IfStmt>()->cond.get(), fn); break;
      case StmtKind::For:
        forEachExpr(s->as<ForStmt>()->cond.get(), fn);
        forEachExpr(s->as<ForStmt>()->step.get(), fn);
        break;
      case StmtKind::While: forEachExpr(s->as<WhileStmt>()->cond.get(), fn); break;
      case StmtKind::DoWhile: forEachExpr(s->as<DoWhileStmt>()->cond.get(), fn); break;
      case StmtKind::Return: forEachExpr(s->as<ReturnStmt>()->value.get(), fn); break;
      default: break;
      }
    });
  }
}

/// The repository root (tests/unit/SourceRoot.h).
std::string sourceRoot() {
  return tc::test::sourceRoot();
}

ir::Type T(DType d, ir::Shape s = {}) { return ir::Type::tile(d, std::move(s)); }
ir::Type P(DType d, ir::Shape s = {}) { return ir::Type::ptrTile(d, std::move(s)); }

ConstValue I(__int128 v) { return ConstValue::ofInt(v); }
ConstValue F(double v) { return ConstValue::ofFloat(v); }
ConstValue B(bool v) { return ConstValue::ofBool(v); }
__int128 pow2(int n) { return static_cast<__int128>(1) << n; }

//===----------------------------------------------------------------------===//
// ConstEval: folding (rule 4 for constants: floor division, Python modulo)
//===----------------------------------------------------------------------===//

TEST(ConstEval, FloorDivisionAndItsWarning) {
  FoldResult r = foldBinary(BinaryOp::Div, I(7), I(-2));
  ASSERT_TRUE(r.value);
  EXPECT_EQ(r.value->i, -4); // floor(-3.5)
  EXPECT_EQ(r.issue, FoldIssue::FloorDiv);
  EXPECT_EQ(r.cResult.i, -3); // C truncates
  r = foldBinary(BinaryOp::Div, I(-7), I(2));
  EXPECT_EQ(r.value->i, -4);
  EXPECT_EQ(r.issue, FoldIssue::FloorDiv);
  r = foldBinary(BinaryOp::Div, I(7), I(2));
  EXPECT_EQ(r.value->i, 3);
  EXPECT_EQ(r.issue, FoldIssue::None);
  r = foldBinary(BinaryOp::Div, I(-8), I(2)); // exact: no difference from C
  EXPECT_EQ(r.value->i, -4);
  EXPECT_EQ(r.issue, FoldIssue::None);
  r = foldBinary(BinaryOp::Div, I(-7), I(-2)); // same signs: same as C
  EXPECT_EQ(r.value->i, 3);
  EXPECT_EQ(r.issue, FoldIssue::None);
}

TEST(ConstEval, PythonModuloAndItsWarning) {
  FoldResult r = foldBinary(BinaryOp::Rem, I(7), I(-2));
  EXPECT_EQ(r.value->i, -1); // sign of the divisor
  EXPECT_EQ(r.issue, FoldIssue::PythonMod);
  EXPECT_EQ(r.cResult.i, 1); // C: sign of the dividend
  r = foldBinary(BinaryOp::Rem, I(-7), I(2));
  EXPECT_EQ(r.value->i, 1);
  EXPECT_EQ(r.cResult.i, -1);
  r = foldBinary(BinaryOp::Rem, I(6), I(-3));
  EXPECT_EQ(r.value->i, 0);
  EXPECT_EQ(r.issue, FoldIssue::None);
  r = foldBinary(BinaryOp::Rem, I(7), I(3));
  EXPECT_EQ(r.value->i, 1);
  EXPECT_EQ(r.issue, FoldIssue::None);
}

TEST(ConstEval, DivisionByZeroAndOverflow) {
  EXPECT_EQ(foldBinary(BinaryOp::Div, I(1), I(0)).issue, FoldIssue::DivByZero);
  EXPECT_FALSE(foldBinary(BinaryOp::Div, I(1), I(0)).value);
  EXPECT_EQ(foldBinary(BinaryOp::Rem, I(1), I(0)).issue, FoldIssue::DivByZero);
  __int128 min128 = -pow2(126) * 2;
  EXPECT_EQ(foldBinary(BinaryOp::Div, I(min128), I(-1)).issue, FoldIssue::Overflow);
  EXPECT_EQ(foldBinary(BinaryOp::Add, I(pow2(126)), I(pow2(126))).issue, FoldIssue::Overflow);
  EXPECT_EQ(foldBinary(BinaryOp::Mul, I(pow2(64)), I(pow2(64))).issue, FoldIssue::Overflow);
  EXPECT_EQ(foldBinary(BinaryOp::Sub, I(min128), I(1)).issue, FoldIssue::Overflow);
  EXPECT_EQ(foldUnary(UnaryOp::Neg, I(min128)).issue, FoldIssue::Overflow);
  // Beyond 64 bits is fine inside 128.
  FoldResult r = foldBinary(BinaryOp::Mul, I(pow2(40)), I(pow2(40)));
  EXPECT_EQ(r.value->i, pow2(80));
}

TEST(ConstEval, Shifts) {
  EXPECT_EQ(foldBinary(BinaryOp::Shl, I(1), I(40)).value->i, pow2(40));
  EXPECT_EQ(foldBinary(BinaryOp::Shl, I(-1), I(3)).value->i, -8);
  EXPECT_EQ(foldBinary(BinaryOp::Shl, I(1), I(126)).value->i, pow2(126));
  EXPECT_EQ(foldBinary(BinaryOp::Shl, I(1), I(127)).issue, FoldIssue::Overflow);
  EXPECT_EQ(foldBinary(BinaryOp::Shl, I(0), I(1000)).value->i, 0);
  EXPECT_EQ(foldBinary(BinaryOp::Shr, I(-9), I(1)).value->i, -5); // arithmetic (floor)
  EXPECT_EQ(foldBinary(BinaryOp::Shr, I(-9), I(500)).value->i, -1);
  EXPECT_EQ(foldBinary(BinaryOp::Shr, I(9), I(500)).value->i, 0);
  EXPECT_EQ(foldBinary(BinaryOp::Shl, I(1), I(-1)).issue, FoldIssue::NegativeShift);
  EXPECT_EQ(foldBinary(BinaryOp::Shr, I(1), I(-1)).issue, FoldIssue::NegativeShift);
}

TEST(ConstEval, BoolsAndBitwise) {
  FoldResult r = foldBinary(BinaryOp::Add, B(true), B(true));
  EXPECT_EQ(r.value->kind, ConstValue::Kind::Int); // arithmetic on bools gives ints
  EXPECT_EQ(r.value->i, 2);
  r = foldBinary(BinaryOp::BitAnd, B(true), B(false));
  EXPECT_EQ(r.value->kind, ConstValue::Kind::Bool);
  EXPECT_EQ(r.value->i, 0);
  r = foldBinary(BinaryOp::BitXor, B(true), B(false));
  EXPECT_EQ(r.value->kind, ConstValue::Kind::Bool);
  EXPECT_EQ(r.value->i, 1);
  EXPECT_EQ(foldBinary(BinaryOp::BitAnd, I(12), I(10)).value->i, 8);
  EXPECT_EQ(foldBinary(BinaryOp::BitOr, I(-16), I(3)).value->i, -13);
  EXPECT_EQ(foldBinary(BinaryOp::BitXor, I(5), I(-1)).value->i, -6);
  EXPECT_EQ(foldUnary(UnaryOp::BitNot, I(5)).value->i, -6);
  FoldResult n = foldUnary(UnaryOp::BitNot, B(true)); // logical not on bools
  EXPECT_EQ(n.value->kind, ConstValue::Kind::Bool);
  EXPECT_EQ(n.value->i, 0);
  EXPECT_EQ(foldUnary(UnaryOp::Neg, B(true)).value->i, -1);
  EXPECT_EQ(foldUnary(UnaryOp::LogicalNot, I(0)).value->i, 1);
  EXPECT_EQ(foldUnary(UnaryOp::LogicalNot, F(NAN)).value->i, 0); // NaN is true
  EXPECT_EQ(foldBinary(BinaryOp::LogicalAnd, I(2), F(0.5)).value->i, 1);
  EXPECT_EQ(foldBinary(BinaryOp::LogicalOr, I(0), I(0)).value->i, 0);
}

TEST(ConstEval, FloatsFoldInDouble) {
  FoldResult r = foldBinary(BinaryOp::Mul, F(1.5), I(2));
  EXPECT_EQ(r.value->kind, ConstValue::Kind::Float);
  EXPECT_EQ(r.value->f, 3.0);
  EXPECT_EQ(foldBinary(BinaryOp::Div, I(1), F(4)).value->f, 0.25);
  EXPECT_EQ(foldBinary(BinaryOp::Rem, F(5.5), I(2)).value->f, 1.5);
  EXPECT_EQ(foldBinary(BinaryOp::Rem, F(-5.5), I(2)).value->f, -1.5); // fmod, rule 6
  r = foldBinary(BinaryOp::Div, F(1), I(0));
  EXPECT_EQ(r.issue, FoldIssue::FloatDivByZero);
  EXPECT_TRUE(std::isinf(r.value->f));
  r = foldBinary(BinaryOp::Rem, F(1), F(0));
  EXPECT_EQ(r.issue, FoldIssue::FloatDivByZero);
  EXPECT_TRUE(std::isnan(r.value->f));
  EXPECT_EQ(foldBinary(BinaryOp::Lt, I(1), F(1.5)).value->i, 1);
  EXPECT_EQ(foldBinary(BinaryOp::Ne, F(NAN), F(NAN)).value->i, 1);
  EXPECT_EQ(foldBinary(BinaryOp::Eq, F(NAN), F(NAN)).value->i, 0);
  // Untyped ints compare by value (no C signedness surprise).
  EXPECT_EQ(foldBinary(BinaryOp::Lt, I(-1), I(4294967295)).value->i, 1);
}

TEST(ConstEval, CdivAndMinMax) {
  EXPECT_EQ(foldCdiv(I(100), I(16)).value->i, 7);
  EXPECT_EQ(foldCdiv(I(96), I(16)).value->i, 6);
  EXPECT_EQ(foldCdiv(I(-100), I(16)).value->i, -6); // ceil(-6.25)
  EXPECT_EQ(foldCdiv(I(100), I(-16)).value->i, -6);
  EXPECT_EQ(foldCdiv(I(1), I(0)).issue, FoldIssue::DivByZero);
  ConstValue mx = foldMinMax(true, I(1), F(2.5));
  EXPECT_EQ(mx.kind, ConstValue::Kind::Float);
  EXPECT_EQ(mx.f, 2.5);
  ConstValue mn = foldMinMax(false, I(3), I(-4));
  EXPECT_EQ(mn.i, -4);
  EXPECT_EQ(foldMinMax(false, F(NAN), F(1.0)).f, 1.0); // the non-NaN operand (rule 6)
  EXPECT_EQ(foldMinMax(true, F(2.0), F(NAN)).f, 2.0);
}

TEST(ConstEval, NaturalTypes) {
  EXPECT_EQ(naturalDType(I(0)), DType::I32);
  EXPECT_EQ(naturalDType(I(2147483647)), DType::I32);
  EXPECT_EQ(naturalDType(I(-2147483648LL)), DType::I32);
  EXPECT_EQ(naturalDType(I(2147483648LL)), DType::U32);
  EXPECT_EQ(naturalDType(I(4294967295LL)), DType::U32);
  EXPECT_EQ(naturalDType(I(4294967296LL)), DType::I64);
  EXPECT_EQ(naturalDType(I(-2147483649LL)), DType::I64);
  EXPECT_EQ(naturalDType(I(pow2(63))), DType::U64);
  EXPECT_EQ(naturalDType(I(pow2(64) - 1)), DType::U64);
  EXPECT_EQ(naturalDType(I(pow2(64))), std::nullopt);
  EXPECT_EQ(naturalDType(I(-pow2(63) - 1)), std::nullopt);
  EXPECT_EQ(naturalDType(F(1.5)), DType::F32);
  EXPECT_EQ(naturalDType(F(1e300)), DType::F64);
  EXPECT_EQ(naturalDType(F(INFINITY)), DType::F32);
  EXPECT_EQ(naturalDType(B(true)), DType::Bool);
}

TEST(ConstEval, RangesWrapAndConvert) {
  EXPECT_TRUE(intFits(127, DType::I8));
  EXPECT_FALSE(intFits(128, DType::I8));
  EXPECT_TRUE(intFits(-128, DType::I8));
  EXPECT_FALSE(intFits(-1, DType::U64));
  EXPECT_TRUE(intFits(pow2(64) - 1, DType::U64));
  EXPECT_EQ(wrapInt(200, DType::I8), -56);
  EXPECT_EQ(wrapInt(256, DType::U8), 0);
  EXPECT_EQ(wrapInt(-1, DType::U32), 4294967295LL);
  EXPECT_EQ(wrapInt(pow2(70), DType::I64), 0);
  EXPECT_EQ(wrapInt(pow2(63), DType::I64), -pow2(63));
  EXPECT_EQ(convertConst(F(2.7), DType::I32)->i, 2); // truncation toward zero
  EXPECT_EQ(convertConst(F(-2.7), DType::I32)->i, -2);
  EXPECT_FALSE(convertConst(F(1e10), DType::I32)); // rule 7: would trap
  EXPECT_FALSE(convertConst(F(NAN), DType::I8));
  EXPECT_FALSE(convertConst(F(-1.0), DType::U8));
  EXPECT_EQ(convertConst(F(-0.5), DType::U8)->i, 0); // truncates to 0: fits
  EXPECT_EQ(convertConst(I(300), DType::F32)->f, 300.0);
  EXPECT_EQ(convertConst(F(0.1), DType::F16)->f, roundToFloat(0.1, DType::F16));
  EXPECT_EQ(convertConst(I(5), DType::Bool)->i, 1);
  EXPECT_EQ(convertConst(F(0.0), DType::Bool)->i, 0);
  EXPECT_EQ(constStr(F(2.0)), "2.0");
  EXPECT_EQ(constStr(F(1e20)), "1e+20");
  EXPECT_EQ(constStr(I(-pow2(100))), "-1267650600228229401496703205376");
}

//===----------------------------------------------------------------------===//
// Rules 1-3: promotion and broadcasting through the analyser
//===----------------------------------------------------------------------===//

TEST(SemaPromotion, TileWithConstant) {
  auto a = analyzeBody(R"(
  uint8 r1[16] = u8 + 3;
  float r2[16] = i16 + 4.0;
  half r3[16] = h * 2.5;
  int r4[16] = m + 1;
  uint32 r5[16] = m + 3000000000;
  double r6[16] = i8 + 1e300;
  int64 r7 = l * 2;
)");
  ASSERT_TRUE(a->ok) << a->all();
  EXPECT_EQ(initOf(*a, "r1")->type, T(DType::U8, {16}));
  EXPECT_EQ(initOf(*a, "r2")->type, T(DType::F32, {16}));
  EXPECT_EQ(initOf(*a, "r3")->type, T(DType::F16, {16}));
  EXPECT_EQ(initOf(*a, "r4")->type, T(DType::I32, {16}));
  EXPECT_EQ(initOf(*a, "r5")->type, T(DType::U32, {16}));
  EXPECT_EQ(initOf(*a, "r6")->type, T(DType::F64, {16}));
  EXPECT_EQ(initOf(*a, "r7")->type, T(DType::I64));
  auto *b = initOf(*a, "r1")->as<BinaryExpr>();
  EXPECT_EQ(b->operandType, T(DType::U8, {16}));
  EXPECT_EQ(b->rhs->type, T(DType::I32)); // the constant keeps its natural type
  EXPECT_TRUE(b->rhs->constant);
}

TEST(SemaPromotion, RuntimeScalarsAreZeroDTiles) {
  auto a = analyzeBody(R"(
  bf16 b[16] = 0;
  bf16 r1[16] = n + b;
  uint32 r2 = n + un;
  int r3[16] = i16 * n;
  half r4[16] = h + b;
  float r5 = x + n;
  int64 r6 = n + l;
)");
  ASSERT_TRUE(a->ok) << a->all();
  EXPECT_EQ(initOf(*a, "r1")->type, T(DType::BF16, {16}));
  EXPECT_EQ(initOf(*a, "r2")->type, T(DType::U32));
  EXPECT_EQ(initOf(*a, "r3")->type, T(DType::I32, {16}));
  EXPECT_EQ(initOf(*a, "r4")->type, T(DType::F16, {16}));
  EXPECT_EQ(initOf(*a, "r5")->type, T(DType::F32));
  EXPECT_EQ(initOf(*a, "r6")->type, T(DType::I64));
}

TEST(SemaPromotion, ComparisonsLogicalAndShifts) {
  auto a = analyzeBody(R"(
  bool c1[16] = u8 < 3;
  bool c2[16] = m && n;
  int s1[16] = i16 << n;
  int8 s2[16] = i8 >> 1;
)");
  ASSERT_TRUE(a->ok) << a->all();
  auto *c1 = initOf(*a, "c1")->as<BinaryExpr>();
  EXPECT_EQ(c1->type, T(DType::Bool, {16}));
  EXPECT_EQ(c1->operandType, T(DType::U8, {16}));
  auto *c2 = initOf(*a, "c2")->as<BinaryExpr>();
  EXPECT_EQ(c2->type, T(DType::Bool, {16}));
  EXPECT_EQ(c2->operandType, T(DType::Bool, {16}));
  // Shifts: the promoted type of both operands.
  EXPECT_EQ(initOf(*a, "s1")->type, T(DType::I32, {16}));
  EXPECT_EQ(initOf(*a, "s2")->type, T(DType::I8, {16}));
}

TEST(SemaPromotion, ConstantsThatDoNotFit) {
  struct Case {
    const char *expr, *message;
  } cases[] = {
      {"u8 + 300", "constant 300 does not fit in uint8"},
      {"u8 - 1 + -1", "negative constant -1 cannot meet unsigned type uint8"},
      {"i8 * 128", "constant 128 does not fit in int8"},
      {"un + (0 - 5)", "negative constant -5 cannot meet unsigned type uint32"},
      {"n + 2147483648", "constant 2147483648 does not fit in int32"},
      {"l + 9223372036854775808", "constant 9223372036854775808 does not fit in int64"},
      {"m + (1 << 64)", "constant 18446744073709551616 does not fit in uint64"},
      {"l + (0 - (1 << 64))", "constant -18446744073709551616 does not fit in int64"},
      {"u8 < 256", "constant 256 does not fit in uint8"},
  };
  for (const Case &c : cases) {
    auto a = analyzeBody(std::string("  ") + c.expr + ";");
    ASSERT_EQ(a->errors().size(), 1u) << c.expr << "\n" << a->all();
    EXPECT_EQ(a->errors()[0], c.message) << c.expr;
    EXPECT_FALSE(a->ok);
  }
}

TEST(SemaPromotion, FloatConstantsRoundWithAWarning) {
  auto a = analyzeBody("  half r[16] = h + 70000.0;\n  half s[16] = h + 1.0;");
  EXPECT_TRUE(a->ok) << a->all();
  ASSERT_EQ(a->warnings().size(), 1u) << a->all();
  EXPECT_EQ(a->warnings()[0], "constant 70000.0 overflows half and becomes infinity");
}

TEST(SemaPromotion, BroadcastingAndItsError) {
  auto a = analyzeBody("  float r[16, 8] = v[:, newaxis] + g;\n  float s[16, 16] = v[:, newaxis] * v[newaxis, :];");
  ASSERT_TRUE(a->ok) << a->all();
  EXPECT_EQ(initOf(*a, "r")->type, T(DType::F32, {16, 8}));
  EXPECT_EQ(initOf(*a, "s")->type, T(DType::F32, {16, 16}));
  auto b = analyzeBody("  float h2[8, 8] = 0;\n  g + h2;");
  ASSERT_EQ(b->errors().size(), 1u) << b->all();
  EXPECT_EQ(b->errors()[0], "incompatible shapes [16, 8] and [8, 8] (axis 0: 16 vs 8)");
  auto c = analyzeBody("  (g * v);");
  ASSERT_EQ(c->errors().size(), 1u) << c->all();
  EXPECT_EQ(c->errors()[0], "incompatible shapes [16, 8] and [16] (axis 1: 8 vs 16)");
}

TEST(SemaPromotion, ConstantFoldingAnnotatesAndWarns) {
  auto a = analyzeBody(R"(
  int q = 7 / -2;
  int r = 7 % -2;
  int64 big = (1 << 70) >> 40;
  int c = -2147483648;
  float f = 3 * 0.5;
  bool b = !(1 < 2);
)");
  ASSERT_TRUE(a->ok) << a->all();
  EXPECT_EQ(initOf(*a, "q")->constant->i, -4);
  EXPECT_EQ(initOf(*a, "r")->constant->i, -1);
  EXPECT_EQ(initOf(*a, "big")->constant->i, pow2(30));
  EXPECT_EQ(initOf(*a, "big")->type, T(DType::I32));
  EXPECT_EQ(initOf(*a, "c")->constant->i, -2147483648LL);
  EXPECT_EQ(initOf(*a, "c")->type, T(DType::I32));
  EXPECT_EQ(initOf(*a, "f")->constant->f, 1.5);
  EXPECT_EQ(initOf(*a, "f")->type, T(DType::F32));
  EXPECT_EQ(initOf(*a, "b")->constant->kind, ConstValue::Kind::Bool);
  EXPECT_EQ(initOf(*a, "b")->constant->i, 0);
  ASSERT_EQ(a->warnings().size(), 2u);
  EXPECT_EQ(a->warnings()[0], "constant division rounds toward negative infinity (C would give -3)");
  EXPECT_EQ(a->warnings()[1], "constant remainder takes the sign of the divisor (C would give 1)");
}

TEST(SemaPromotion, CastsMakeTypedValuesNotConstants) {
  // (int8)5 is an int8 value: 1000 meets it by rule 2 and does not fit.
  auto a = analyzeBody("  (int8)5 + 1000;");
  ASSERT_EQ(a->errors().size(), 1u) << a->all();
  EXPECT_EQ(a->errors()[0], "constant 1000 does not fit in int8");
  auto b = analyzeBody("  int8 r = (int8)5 + 100;\n  float f = (float)1 / 3;");
  ASSERT_TRUE(b->ok) << b->all();
  EXPECT_FALSE(initOf(*b, "r")->constant);
  EXPECT_EQ(initOf(*b, "r")->type, T(DType::I8));
  EXPECT_EQ(initOf(*b, "f")->type, T(DType::F32)); // not the constant 1 / 3 == 0
}

TEST(SemaPromotion, ConditionalBranches) {
  auto a = analyzeBody(R"(
  float r1 = n ? 1 : 2.5;
  int r2 = 1 ? 7 : 2.5;
  half r3[16] = m ? h : 0;
  float r4[16] = m ? x : 1;
)");
  ASSERT_TRUE(a->ok) << a->all();
  auto *r1 = initOf(*a, "r1")->as<ConditionalExpr>();
  EXPECT_EQ(r1->type, T(DType::F32));
  EXPECT_FALSE(r1->isMaskedLoad);
  ASSERT_EQ(r1->cond->kind, ExprKind::Binary); // `n != 0` was inserted
  EXPECT_EQ(r1->cond->type, T(DType::Bool));
  // All constant: folded, in the branches' common kind (a float: 2.5 is one).
  ASSERT_TRUE(initOf(*a, "r2")->constant);
  EXPECT_EQ(initOf(*a, "r2")->constant->kind, ConstValue::Kind::Float);
  EXPECT_EQ(initOf(*a, "r2")->constant->f, 7.0);
  EXPECT_EQ(initOf(*a, "r3")->type, T(DType::F16, {16}));
  EXPECT_EQ(initOf(*a, "r4")->type, T(DType::F32, {16})); // shape from the condition
}

//===----------------------------------------------------------------------===//
// Rule 5: operand rules; rule 6: tiles; builtins (rule 2 of the brief)
//===----------------------------------------------------------------------===//

struct ErrorCase {
  const char *code, *message;
};

void expectFirstError(const ErrorCase &c) {
  auto a = analyzeBody(std::string("  ") + c.code);
  EXPECT_FALSE(a->ok) << c.code;
  ASSERT_FALSE(a->errors().empty()) << c.code << "\n" << a->all();
  EXPECT_EQ(a->errors()[0], c.message) << c.code;
  EXPECT_EQ(a->errors().size(), 1u) << c.code << " (cascade?)\n" << a->all();
}

TEST(SemaOperators, Errors) {
  const ErrorCase cases[] = {
      {"x & 1;", "invalid operands to binary expression ('float' and 'int32')"},
      {"1.5 | 2;", "invalid operands to binary expression ('float' and 'int32')"},
      {"iv >> v;", "invalid operands to binary expression ('int32[16]' and 'float[16]')"},
      {"m << m;", "invalid operands to binary expression ('bool[16]' and 'bool[16]')"},
      {"~v;", "invalid argument type 'float[16]' to unary expression '~'"},
      {"-m;", "invalid argument type 'bool[16]' to unary expression '-'"},
      {"-p;", "invalid argument type 'float*' to unary expression '-'"},
      {"p + p;", "cannot add two pointers ('float*' and 'float*')"},
      {"1 - p;", "cannot subtract a pointer from a number ('int32' - 'float*')"},
      {"p - p;", "subtracting two pointers is not supported ('float*' - 'float*')"},
      {"p + x;", "pointer offset must be an integer, got 'float'"},
      {"p + m;", "pointer offset must be an integer, got 'bool[16]'"},
      {"p / 2;", "operator '/' does not apply to pointers ('float*' and 'int32')"},
      {"p && n;", "operator '&&' does not apply to pointers ('float*' and 'int32')"},
      {"p < ph;", "comparison of incompatible types 'float*' and 'half*'"},
      {"p != n;", "comparison of incompatible types 'float*' and 'int32'"},
      {"p + (1 << 64);", "constant 18446744073709551616 does not fit in uint64"},
      {"v @ v;", "'@' needs 2-D tiles (or 3-D for a batched product), got 'float[16]' and 'float[16]'"},
      {"g @ g;", "'@' inner dimensions differ: 'float[16, 8]' @ 'float[16, 8]' (8 vs 16)"},
      {"int a[16, 16] = 0; a @ a;",
       "'@' does not support 'int32' operands (allowed: int8, half, bf16, float, double)"},
      {"uint8 a[16, 16] = 0; a @ a;",
       "'@' does not support 'uint8' operands (allowed: int8, half, bf16, float, double)"},
      {"float a[4, 4, 2] = 0; float b[4, 4, 4] = 0; a @ b;",
       "'@' batch dimensions differ: 'float[4, 4, 2]' @ 'float[4, 4, 4]'"},
      {"^n;", "'^' (transpose) needs a tile, got 'int32'"},
      {"*n;", "cannot dereference a value of non-pointer type 'int32'"},
      {"*?(m) v;", "cannot dereference a value of non-pointer type 'float[16]'"},
      {"*?(iv) (p + off);", "mask must be bool, got 'int32[16]'; compare it, e.g. 'm != 0'"},
      {"*?(m) (p + (0 ... 8));", "mask of shape [16] does not broadcast to the pointer shape [8]"},
      {"*?(m) p;", "mask of shape [16] does not broadcast to the pointer shape []"},
      {"n ? p : 1;", "incompatible operand types ('float*' and 'int32') in '?:'"},
      {"n ? p : ph;", "incompatible operand types ('float*' and 'half*') in '?:'"},
      {"p ? 1 : 2;", "condition in '?:' must be a number or bool, got 'float*'"},
      {"v++;", "'++' needs a scalar integer or floating-point variable, got 'float[16]'"},
      {"bool b = true; b--;", "'--' needs a scalar integer or floating-point variable, got 'bool'"},
      {"p++;", "'++' needs a scalar integer or floating-point variable, got 'float*'"},
      {"float w[8] = v;", "cannot convert 'float[16]' to 'float[8]': shape [16] does not broadcast to [8]"},
      {"float s = v;", "cannot convert 'float[16]' to 'float': shape [16] does not broadcast to []"},
      {"v += v[:, newaxis];", "cannot convert 'float[16, 16]' to 'float[16]': shape [16, 16] does not broadcast to [16]"},
      {"n += p;", "cannot convert 'float*' to 'int32'"},
      {"ph = p;", "cannot convert 'float*' to 'half*'"},
      {"*p = v;", "cannot convert 'float[16]' to 'float': shape [16] does not broadcast to []"},
      {"*(p + off) = p;", "cannot convert 'float*' to 'float[16]'"},
      {"u8 += 256;", "constant 256 does not fit in uint8"},
      {"int c = 1e10;", "constant 10000000000.0 is out of range for int32"},
  };
  for (const ErrorCase &c : cases)
    expectFirstError(c);
}

TEST(SemaTiles, Errors) {
  const ErrorCase cases[] = {
      {"int t[12];", "tile dimension 12 is not a power of two"},
      {"int t[0];", "tile dimension 0 is not positive"},
      {"int t[-4];", "tile dimension -4 is not positive"},
      {"int t[n];", "tile dimension must be a constant integer"},
      {"int t[4.0];", "tile dimension must be a constant integer"},
      {"int t[true];", "tile dimension must be a constant integer"},
      {"int t[2048, 1024];", "tile has 2097152 elements; the limit is 1048576"},
      {"int t[1 << 40];", "tile has 1099511627776 elements; the limit is 1048576"},
      {"int t[16] = 0 ... n;", "the bounds of '...' must be constant integers"},
      {"int t[16] = 0.0 ... 16;", "the bounds of '...' must be constant integers"},
      {"int t[16] = 16 ... 0;", "range 16 ... 0 is empty; the end must be greater than the start"},
      {"int t[16] = 0 ... 24;", "range 0 ... 24 has 24 elements, not a power of two"},
      {"int t[16] = 2147483640 ... 2147483656;", "range 2147483640 ... 2147483656 does not fit in int32"},
      {"int t[16] = 0 ... 2097152;", "tile has 2097152 elements; the limit is 1048576"},
      {"int t[16] = (0 ... 8);", "cannot convert 'int32[8]' to 'int32[16]': shape [8] does not broadcast to [16]"},
      {"v[:, :];", "subscript has 2 axis items but 'float[16]' has rank 1"},
      {"g[newaxis];", "subscript has 0 axis items but 'float[16, 8]' has rank 2"},
      {"n[:];", "subscript has 1 axis item but 'int32' has rank 0"},
      {"v[&];", "reduction '&' does not apply to 'float[16]'"},
      {"(p + off)[max];", "reduction 'max' does not apply to 'float*[16]'"},
      {"g[+, max];", "not supported yet: different reductions in one subscript"},
      {"g[argmax, argmax];", "not supported yet: argmax over more than one axis"},
      {"(float)p;", "cannot cast 'float*' to 'float'"},
      {"(int *)n;", "cannot cast 'int32' to 'int32*'"},
      {"(int)1e10;", "constant 10000000000.0 is out of range for int32"},
      {"(float[8])v;", "cannot convert 'float[16]' to 'float[8]': shape [16] does not broadcast to [8]"},
      {"(float[12])v;", "tile dimension 12 is not a power of two"},
      {"bitcast<int16>(v);", "bitcast from 'float' (32 bits) to 'int16' (16 bits): the widths differ"},
      {"bitcast<half>(1);", "bitcast from 'int32' (32 bits) to 'half' (16 bits): the widths differ"},
      {"bitcast<float>(p);", "cannot cast 'float*' to 'float'"},
      {"bitcast<float>(1 << 64);", "constant 18446744073709551616 does not fit in uint64"},
  };
  for (const ErrorCase &c : cases)
    expectFirstError(c);
}

TEST(SemaBuiltins, Errors) {
  const ErrorCase cases[] = {
      {"get_program_id(3);", "'get_program_id' needs a constant axis 0, 1 or 2"},
      {"get_program_id(-1);", "'get_program_id' needs a constant axis 0, 1 or 2"},
      {"get_num_programs(n);", "'get_num_programs' needs a constant axis 0, 1 or 2"},
      {"get_program_id(0, 1);", "'get_program_id' expects 1 argument, got 2"},
      {"exp(n);", "'exp' needs a floating-point argument, got 'int32'; cast it, e.g. 'exp((float)x)'"},
      {"log2(1);", "'log2' needs a floating-point argument, got 'int32'; cast it, e.g. 'log2((float)x)'"},
      {"rsqrt(m);", "'rsqrt' needs a floating-point argument, got 'bool[16]'; cast it, e.g. 'rsqrt((float)x)'"},
      {"floor(p);", "invalid argument of type 'float*' to 'floor': expects a floating-point number"},
      {"abs(m);", "invalid argument of type 'bool[16]' to 'abs': expects a number"},
      {"fma(iv, iv, 1);", "'fma' needs a floating-point argument, got 'int32'; cast it, e.g. 'fma((float)x)'"},
      {"max(v);", "'max' expects 2 arguments, got 1"},
      {"min(p, p);", "invalid argument of type 'float*' to 'min': expects numbers"},
      {"max(v, 0 ... 8);", "incompatible shapes [16] and [8] (axis 0: 16 vs 8)"},
      {"min(u8, -1);", "negative constant -1 cannot meet unsigned type uint8"},
      {"umulhi(i16, i16);", "invalid argument of type 'int16' to 'umulhi': expects 32- or 64-bit integers"},
      {"umulhi(v, 2);", "invalid argument of type 'float' to 'umulhi': expects 32- or 64-bit integers"},
      {"cdiv(x, 2);", "invalid argument of type 'float' to 'cdiv': expects integers"},
      {"cdiv(7, 0);", "division by zero in constant expression"},
      {"select(m, p, 1);", "invalid argument of type 'int32' to 'select': both values must be "
                           "numbers or pointers to the same type"},
      {"where(p, 1, 2);", "condition in 'where' must be a number or bool, got 'float*'"},
      {"select(m, v, 0 ... 8);", "incompatible shapes [16] and [8] (axis 0: 16 vs 8)"},
      {"atomic_add(n, 1);", "invalid argument of type 'int32' to 'atomic_add': the first argument must be a pointer"},
      {"atomic_or(p, 1);", "invalid argument of type 'float*' to 'atomic_or': expects a pointer to integers"},
      {"atomic_min(pb, true);", "invalid argument of type 'bool*' to 'atomic_min': expects a pointer to numbers"},
      {"atomic_add(p, v);", "cannot convert 'float[16]' to 'float': shape [16] does not broadcast to []"},
      {"atomic_add(p + off, 1, iv);", "mask must be bool, got 'int32[16]'; compare it, e.g. 'm != 0'"},
      {"atomic_add(p + (0 ... 8), 1, m);", "mask of shape [16] does not broadcast to the pointer shape [8]"},
      {"atomic_cas(pi, 1);", "'atomic_cas' expects 3 or 4 arguments, got 2"},
      {"atomic_cas(pi, 1, 2, m, m);", "'atomic_cas' expects 3 or 4 arguments, got 5"},
      {"atomic_xchg(p);", "'atomic_xchg' expects 2 or 3 arguments, got 1"},
      {"atomic_add(pi, 1e20);", "constant 1e+20 is out of range for int32"},
      {"__debug_barrier(1);", "'__debug_barrier' expects 0 arguments, got 1"},
      {"print(v);", "'print' needs a string literal label as its first argument"},
      {"print();", "'print' expects at least 1 argument, got 0"},
      {"print(\"a\", \"b\");", "a string literal can only be an argument of 'print' or 'assert'"},
      {"print(\"big\", 1 << 64);", "constant 18446744073709551616 does not fit in uint64"},
      {"assert(n, 3);", "the message of 'assert' must be a string literal"},
      {"assert(p);", "condition in 'assert' must be a number or bool, got 'float*'"},
      {"assert(n, \"a\", \"b\");", "'assert' expects 1 or 2 arguments, got 3"},
      {"int s = \"str\";", "a string literal can only be an argument of 'print' or 'assert'"},
      {"int b = __debug_barrier();", "'__debug_barrier' returns void; its value cannot be used"},
      {"int b = print(\"x\") + 1;", "'print' returns void; its value cannot be used"},
  };
  for (const ErrorCase &c : cases)
    expectFirstError(c);
}

TEST(SemaBuiltins, Types) {
  auto a = analyzeBody(R"(
  int pid = get_program_id(1);
  float e[16] = exp2(v);
  half s[16] = sqrt(h);
  int ab = abs(n);
  int ab2 = abs(-5);
  float mx[16] = max(v, 0);
  int mn = min(64, 16);
  int cd = cdiv(100, 16);
  int cd2 = cdiv(n, 16);
  uint32 hi = umulhi(n, un);
  float f[16] = fma(h, 2, x);
  float sl[16] = select(m, v, 0);
  half wh[16] = where(iv, h, 1);
  float *sp[16] = select(m, p + off, p);
  float old[16] = atomic_add(p + off, 1, m);
  int prev = atomic_cas(pi, 0, 1);
  int8 o8[16] = atomic_xor(pi8 + off, 1);
  print("v", v, n, 3);
  assert(iv, "nonzero");
  __debug_barrier();
)");
  ASSERT_TRUE(a->ok) << a->all();
  EXPECT_EQ(initOf(*a, "pid")->type, T(DType::I32));
  EXPECT_EQ(initOf(*a, "pid")->as<CallExpr>()->builtin, Builtin::GetProgramId);
  EXPECT_EQ(initOf(*a, "e")->type, T(DType::F32, {16}));
  EXPECT_EQ(initOf(*a, "e")->as<CallExpr>()->builtin, Builtin::Exp2);
  EXPECT_EQ(initOf(*a, "s")->type, T(DType::F16, {16}));
  EXPECT_EQ(initOf(*a, "ab")->type, T(DType::I32));
  EXPECT_EQ(initOf(*a, "ab2")->constant->i, 5);
  EXPECT_EQ(initOf(*a, "mx")->type, T(DType::F32, {16}));
  EXPECT_EQ(initOf(*a, "mx")->as<CallExpr>()->operandType, T(DType::F32, {16}));
  EXPECT_EQ(initOf(*a, "mn")->constant->i, 16);
  EXPECT_EQ(initOf(*a, "cd")->constant->i, 7);
  EXPECT_FALSE(initOf(*a, "cd2")->constant);
  EXPECT_EQ(initOf(*a, "cd2")->type, T(DType::I32));
  EXPECT_EQ(initOf(*a, "hi")->type, T(DType::U32));
  EXPECT_EQ(initOf(*a, "f")->type, T(DType::F32, {16})); // promote(half, float var)
  EXPECT_EQ(initOf(*a, "sl")->type, T(DType::F32, {16}));
  EXPECT_EQ(initOf(*a, "wh")->type, T(DType::F16, {16}));
  EXPECT_EQ(initOf(*a, "sp")->type, P(DType::F32, {16}));
  EXPECT_EQ(initOf(*a, "old")->type, T(DType::F32, {16}));
  EXPECT_EQ(initOf(*a, "old")->as<CallExpr>()->builtin, Builtin::AtomicAdd);
  EXPECT_EQ(initOf(*a, "prev")->type, T(DType::I32));
  EXPECT_EQ(initOf(*a, "o8")->type, T(DType::I8, {16}));
  // where(iv, ...) got `iv != 0` as its condition.
  Expr *cond = initOf(*a, "wh")->as<CallExpr>()->args[0].get();
  ASSERT_EQ(cond->kind, ExprKind::Binary);
  EXPECT_EQ(cond->as<BinaryExpr>()->op, BinaryOp::Ne);
  EXPECT_EQ(cond->type, T(DType::Bool, {16}));
}

//===----------------------------------------------------------------------===//
// Rule 10 reductions, rule 11 @, transposes, loads, casts
//===----------------------------------------------------------------------===//

TEST(SemaTiles, Types) {
  auto a = analyzeSource(R"(
__global__ void k(float *p, half *ph, int8 *pi8, uint16 *pu16, bool *pb, bf16 *pbf, int n) {
  int off[16] = 2 ... 18;
  half h[16, 16] = *(ph + off[:, newaxis] * 16 + off[newaxis, :]);
  int8 a8[16, 16] = *(pi8 + off[:, newaxis] * 16 + off[newaxis, :]);
  uint16 u16[16] = *(pu16 + off);
  bool bb[16] = *(pb + off);
  bf16 bf[16, 16] = *(pbf + off[:, newaxis] * 16 + off[newaxis, :]);
  float v[16] = *?(off < n) (p + off);
  float r0 = v[+];
  half r1[16] = h[:, +];
  int r2[16] = a8[+, :];
  uint32 r3 = u16[+];
  uint32 r4 = bb[+];
  int8 r5[16] = a8[max, :];
  int r6 = v[argmax];
  int r7 = a8[+, +];
  bool r8 = bb[|];
  int8 r9[16] = a8[:, ^];
  half r10[16, 1] = h[:, newaxis, min];
  float d1[16, 16] = h @ h;
  int d2[16, 16] = a8 @ a8;
  float d3[16, 16] = bf @ h;
  float d4[16, 16] = bf @ bf;
  half t[16, 16] = ^h;
  float c1[8, 16] = (float[8, 16])v;
  half c2[16] = (half)v;
  int16 bc[16, 16] = bitcast<int16>(h);
  float fl = bitcast<float>(0x7F800000);
  float mv[16] = off < n ? *(p + off) : 0;
}
)");
  ASSERT_TRUE(a->ok) << a->all();
  EXPECT_EQ(initOf(*a, "r0")->type, T(DType::F32));
  EXPECT_EQ(initOf(*a, "r1")->type, T(DType::F16, {16}));  // fp16 + keeps the input type
  EXPECT_EQ(initOf(*a, "r2")->type, T(DType::I32, {16}));  // narrow signed -> int32
  EXPECT_EQ(initOf(*a, "r3")->type, T(DType::U32));        // narrow unsigned -> uint32
  EXPECT_EQ(initOf(*a, "r4")->type, T(DType::U32));        // bool -> uint32
  EXPECT_EQ(initOf(*a, "r5")->type, T(DType::I8, {16}));   // max keeps the type
  EXPECT_EQ(initOf(*a, "r6")->type, T(DType::I32));        // argmax -> int32
  EXPECT_EQ(initOf(*a, "r7")->type, T(DType::I32));        // every axis: a scalar
  EXPECT_EQ(initOf(*a, "r8")->type, T(DType::Bool));
  EXPECT_EQ(initOf(*a, "r9")->type, T(DType::I8, {16}));
  EXPECT_EQ(initOf(*a, "r10")->type, T(DType::F16, {16, 1}));
  auto *d1 = initOf(*a, "d1")->as<BinaryExpr>();
  EXPECT_EQ(d1->type, T(DType::F32, {16, 16}));
  EXPECT_EQ(d1->operandType.dtype, DType::F16);
  auto *d2 = initOf(*a, "d2")->as<BinaryExpr>();
  EXPECT_EQ(d2->type, T(DType::I32, {16, 16}));
  EXPECT_EQ(d2->operandType.dtype, DType::I8);
  auto *d3 = initOf(*a, "d3")->as<BinaryExpr>();
  EXPECT_EQ(d3->type, T(DType::F32, {16, 16}));
  EXPECT_EQ(d3->operandType.dtype, DType::F16); // (bf16, fp16) -> fp16
  EXPECT_EQ(initOf(*a, "d4")->as<BinaryExpr>()->operandType.dtype, DType::BF16);
  EXPECT_EQ(initOf(*a, "t")->type, T(DType::F16, {16, 16}));
  EXPECT_EQ(initOf(*a, "c1")->type, T(DType::F32, {8, 16}));
  EXPECT_EQ(initOf(*a, "c2")->type, T(DType::F16, {16}));
  EXPECT_EQ(initOf(*a, "bc")->type, T(DType::I16, {16, 16}));
  EXPECT_EQ(initOf(*a, "fl")->type, T(DType::F32));
  auto *range = findVar(*a->tu, "off")->init->as<RangeExpr>();
  EXPECT_EQ(range->start, 2);
  EXPECT_EQ(range->stop, 18);
  EXPECT_EQ(range->type, T(DType::I32, {16}));
  auto *mv = initOf(*a, "mv")->as<ConditionalExpr>();
  EXPECT_TRUE(mv->isMaskedLoad);
  EXPECT_EQ(mv->type, T(DType::F32, {16}));
  EXPECT_EQ(initOf(*a, "v")->type, T(DType::F32, {16}));
}

TEST(SemaTiles, TransposeReversesAxes) {
  auto a = analyzeBody("  float b[2, 4, 8] = 0;\n  float t[8, 4, 2] = ^b;\n  int *tp[16] = ^(pi + off);");
  ASSERT_TRUE(a->ok) << a->all();
  EXPECT_EQ(initOf(*a, "t")->type, T(DType::F32, {8, 4, 2}));
  EXPECT_EQ(initOf(*a, "tp")->type, P(DType::I32, {16}));
}

// The batch axis trails, as in the original: [M, K, B] @ [K, N, B] -> [M, N, B].
TEST(SemaTiles, BatchedMatMul) {
  auto a = analyzeBody(
      "  half a3[16, 32, 2] = 0;\n  half b3[32, 8, 2] = 0;\n  float c3[16, 8, 2] = a3 @ b3;");
  ASSERT_TRUE(a->ok) << a->all();
  EXPECT_EQ(initOf(*a, "c3")->type, T(DType::F32, {16, 8, 2}));
}

//===----------------------------------------------------------------------===//
// Rule 9: assignments; annotations of the contract
//===----------------------------------------------------------------------===//

TEST(SemaAssign, ConversionsAndCompound) {
  auto a = analyzeBody(R"(
  float c[16, 16] = 0;
  c += hm @ hm;
  float *q[16] = p + off;
  q += 2;
  p = p + l;
  x = 2;
  n++;
  --x;
  u8 *= 2;
  i8 = i8 + n;
)");
  ASSERT_TRUE(a->ok) << a->all();
  std::vector<AssignExpr *> assigns;
  forEachExprInUnit(*a->tu, [&](Expr *e) {
    if (e->kind == ExprKind::Assign)
      assigns.push_back(e->as<AssignExpr>());
  });
  ASSERT_EQ(assigns.size(), 6u);
  // c += hm @ hm: computed in float[16, 16], stored in c.
  EXPECT_EQ(assigns[0]->operandType, T(DType::F32, {16, 16}));
  EXPECT_EQ(assigns[0]->type, T(DType::F32, {16, 16}));
  // q += 2: pointer arithmetic; operandType holds the offset's dtype.
  EXPECT_EQ(assigns[1]->operandType, T(DType::I32, {16}));
  EXPECT_EQ(assigns[1]->type, P(DType::F32, {16}));
  // p = p + l: the offset keeps its int64.
  auto *add = assigns[2]->rhs->as<BinaryExpr>();
  EXPECT_EQ(add->operandType.dtype, DType::I64);
  EXPECT_EQ(add->type, P(DType::F32));
  // u8 *= 2 stays uint8; i8 = i8 + n computes in int32 and converts back.
  EXPECT_EQ(assigns[4]->operandType, T(DType::U8, {16}));
  EXPECT_EQ(assigns[5]->rhs->type, T(DType::I32, {16}));
  EXPECT_EQ(assigns[5]->type, T(DType::I8, {16}));
}

TEST(SemaAssign, ConstantConversionWarnings) {
  auto a = analyzeBody(R"(
  int8 a = 200;
  uint32 mask = -1;
  uint8 b = -1;
  uint8 c = -129;
  int d = 2.5;
  int e = 3.0;
  half f = 1e6;
  bool gg = 7;
)");
  EXPECT_TRUE(a->ok) << a->all();
  std::vector<std::string> want = {
      "implicit conversion of constant 200 to int8 changes its value to -56",
      "implicit conversion of constant -129 to uint8 changes its value to 127",
      "implicit conversion of constant 2.5 to int32 changes its value to 2",
      "constant 1000000.0 overflows half and becomes infinity",
  };
  EXPECT_EQ(a->warnings(), want);
}

TEST(SemaAnnotations, NamesCallsAttributesAndTypes) {
  auto a = analyzeSource(R"(
float twice(float y) { return y * 2; }
__global__ void k(float *p __aligned(16) __noalias, int n __multipleof(8)) {
  float v = twice(n);
  int n2 = n;
  { int n = 3; n2 = n; }
}
)");
  ASSERT_TRUE(a->ok) << a->all();
  FunctionDecl *k = findFunction(*a->tu, "k");
  EXPECT_EQ(k->params[0]->attrs[0].value, 16);
  EXPECT_EQ(k->params[0]->attrs[1].value, 0);
  EXPECT_EQ(k->params[1]->attrs[0].value, 8);
  EXPECT_EQ(k->params[0]->type, P(DType::F32));
  auto *call = initOf(*a, "v")->as<CallExpr>();
  EXPECT_EQ(call->builtin, Builtin::None);
  EXPECT_EQ(call->function, findFunction(*a->tu, "twice"));
  EXPECT_EQ(call->type, T(DType::F32));
  EXPECT_EQ(findFunction(*a->tu, "twice")->resolvedReturn, T(DType::F32));
  // `n` in k's scope is the parameter; the inner block's `n` shadows it.
  auto *id = initOf(*a, "n2")->as<IdentExpr>();
  EXPECT_EQ(id->decl, k->params[1].get());
  std::vector<IdentExpr *> ns;
  forEachExprInUnit(*a->tu, [&](Expr *e) {
    if (e->kind == ExprKind::Ident && e->as<IdentExpr>()->name == "n")
      ns.push_back(e->as<IdentExpr>());
  });
  ASSERT_EQ(ns.size(), 3u);
  EXPECT_EQ(ns[0]->decl, k->params[1].get()); // twice(n)
  EXPECT_NE(ns[2]->decl, k->params[1].get()); // n2 = n inside the block
  EXPECT_EQ(ns[2]->decl->name, "n");
  EXPECT_FALSE(ns[2]->decl->isParam);
}

TEST(SemaAnnotations, HelperReturnsATileShape) {
  auto a = analyzeSource(R"(
__global__ void k(float *p) {
  float r[1, 16] = row(2.0);
  *(p + (0 ... 16)) = r[+, :];
}
float row(float s) {
  float t[16] = 1;
  return t[newaxis, :] * s;
}
)");
  ASSERT_TRUE(a->ok) << a->all();
  EXPECT_EQ(findFunction(*a->tu, "row")->resolvedReturn, T(DType::F32, {1, 16}));
  EXPECT_EQ(initOf(*a, "r")->type, T(DType::F32, {1, 16}));
}

// The contract: after a successful analysis every expression is typed.
TEST(SemaAnnotations, EveryExpressionOfTheExamplesIsTyped) {
  const char *files[] = {"vector_add.tc",   "vector_add_fixed.tc", "transpose.tc",
                         "transpose_masked.tc", "matmul.tc",       "matmul_prefetch.tc",
                         "matmul_remat.tc", "matmul_trans.tc"};
  ASSERT_FALSE(sourceRoot().empty()) << tc::test::sourceRootProblem();
  for (const char *name : files) {
    std::ifstream in(sourceRoot() + "/examples/" + name);
    ASSERT_TRUE(in) << sourceRoot() + "/examples/" + name;
    std::stringstream ss;
    ss << in.rdbuf();
    auto a = analyzeSource(ss.str(), {{"TM", "32"}, {"TN", "64"}, {"TK", "16"}, {"TYPE", "half"},
                                      {"SIZE", "128"}, {"AT", "1"}, {"BT", "1"}});
    ASSERT_TRUE(a->ok) << name << "\n" << a->all();
    EXPECT_TRUE(a->warnings().empty()) << name << "\n" << a->all();
    int count = 0;
    forEachExprInUnit(*a->tu, [&](Expr *e) {
      ++count;
      EXPECT_TRUE(e->typed) << name << ":" << e->loc.line << ":" << e->loc.col;
    });
    EXPECT_GT(count, 10) << name;
  }
}

//===----------------------------------------------------------------------===//
// Rules 1, 7: names, functions, control flow
//===----------------------------------------------------------------------===//

TEST(SemaNames, Errors) {
  struct Case {
    const char *src, *message;
  } cases[] = {
      {"__global__ void k() { y = 1; }", "use of undeclared identifier 'y'"},
      {"__global__ void k() { int a; int a; }", "redefinition of 'a'"},
      {"__global__ void k(int a) { int a; }", "redefinition of 'a'"},
      {"__global__ void k(int a, float a) { }", "redefinition of 'a'"},
      {"__global__ void k() { { int a = 1; } a = 2; }", "use of undeclared identifier 'a'"},
      {"__global__ void k() { for (int i = 0; i < 2; i++) {} i = 1; }", "use of undeclared identifier 'i'"},
      {"__global__ void k() { f(); }", "call to undeclared function 'f'"},
      {"__global__ void k() {} __global__ void k() {}", "redefinition of 'k'"},
      {"float max(float a, float b) { return a; } __global__ void k() {}",
       "cannot define a function named 'max': it is a builtin"},
      {"__global__ float k() { return 1; }", "kernel 'k' must return void"},
      {"__global__ void j() {} __global__ void k() { j(); }",
       "kernel 'j' cannot be called; only helper functions can"},
      {"int f(int n) { return f(n); } __global__ void k() {}",
       "recursive calls are not supported (helpers are inlined)"},
      {"int f(int n) { return g(n); } int g(int n) { return h(n); } int h(int n) { return f(n); }",
       "recursive calls are not supported (helpers are inlined)"},
      {"float f(float x) { return x; } __global__ void k() { f(1, 2); }", "'f' expects 1 argument, got 2"},
      {"float f(float x[16]) { return x; } __global__ void k(float *p) { float s = f(p); }",
       "cannot convert 'float*' to 'float[16]'"},
      {"__global__ void k(float x[16]) {}", "kernel parameter 'x' cannot be a tile; pass a pointer"},
      {"__global__ void k(void *p) {}", "'p' cannot point to 'void'; pointers point to scalar element types"},
      {"void f() {} __global__ void k() { int a = f(); }", "'f' returns void; its value cannot be used"},
  };
  for (const Case &c : cases) {
    auto a = analyzeSource(c.src);
    ASSERT_TRUE(a->parsed) << c.src << "\n" << a->all();
    EXPECT_FALSE(a->ok) << c.src;
    ASSERT_FALSE(a->errors().empty()) << c.src;
    EXPECT_EQ(a->errors()[0], c.message) << c.src;
    EXPECT_EQ(a->errors().size(), 1u) << c.src << "\n" << a->all();
  }
}

TEST(SemaNames, RedefinitionHasANote) {
  auto a = analyzeSource("__global__ void k() {\n  int a = 1;\n  float a = 2;\n}\n");
  const auto &d = a->diags.diagnostics();
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].id, DiagId::err_sema_redefinition);
  EXPECT_EQ(d[0].loc.line, 3u);
  EXPECT_EQ(d[1].id, DiagId::note_sema_previous_definition);
  EXPECT_EQ(d[1].loc.line, 2u);
}

TEST(SemaNames, HelpersInAnyOrderAndIndirectCallsAreFine) {
  auto a = analyzeSource(R"(
__global__ void k(float *p) { *p = outer(2.0); }
float outer(float x) { return inner(x) + inner(x); }
float inner(float x) { return x * x; }
)");
  EXPECT_TRUE(a->ok) << a->all();
}

TEST(SemaControl, Errors) {
  const ErrorCase cases[] = {
      {"if (v > 0) {}", "tile condition in 'if'; use a mask with *?(mask) or select()"},
      {"while (m) {}", "tile condition in 'while'; use a mask with *?(mask) or select()"},
      {"for (; iv;) {}", "tile condition in 'for'; use a mask with *?(mask) or select()"},
      {"do {} while (v);", "tile condition in 'do'; use a mask with *?(mask) or select()"},
      {"if (p) {}", "condition in 'if' must be a number or bool, got 'float*'"},
      {"if (\"s\") {}", "a string literal can only be an argument of 'print' or 'assert'"},
      {"if (__debug_barrier()) {}", "'__debug_barrier' returns void; its value cannot be used"},
      {"break;", "'break' statement not in a loop"},
      {"if (n) continue;", "'continue' statement not in a loop"},
      {"return 1;", "kernel 'k' cannot return a value"},
  };
  for (const ErrorCase &c : cases)
    expectFirstError(c);
}

TEST(SemaControl, ScalarConditionsAreFine) {
  auto a = analyzeBody(R"(
  if (n) {} else {}
  while (x) { break; }
  for (int i = 0; i < n; i++) { if (i == 2) continue; }
  do { n--; } while (n > 0 && l);
  if (v[+] > 0) {}
  if (1) {}
)");
  EXPECT_TRUE(a->ok) << a->all();
}

TEST(SemaControl, HelperReturns) {
  struct Case {
    const char *src, *message;
  } cases[] = {
      // (with no __global__ function, the first void function is the kernel)
      {"void f(int n) { return n; }", "kernel 'f' cannot return a value"},
      {"__global__ void k() {} void f(int n) { return n; }",
       "void function 'f' should not return a value"},
      {"int f(int n) { return; }", "non-void function 'f' should return a value"},
      {"int f(int n) { n = 1; }", "not supported yet: helper 'f' must end with a 'return' statement"},
      {"int f(int n) { if (n) return 1; return 2; }",
       "not supported yet: 'return' before the end of helper 'f' (helpers are inlined)"},
      {"int f(int n) { return 1; n = 2; }",
       "not supported yet: 'return' before the end of helper 'f' (helpers are inlined)"},
      {"float *f(float *p) { return 1; }", "cannot convert 'int32' to 'float*'"},
  };
  for (const Case &c : cases) {
    auto a = analyzeSource(c.src);
    ASSERT_TRUE(a->parsed) << c.src << "\n" << a->all();
    ASSERT_FALSE(a->errors().empty()) << c.src;
    EXPECT_EQ(a->errors()[0], c.message) << c.src;
  }
  auto b = analyzeSource("float f(float x[16], int n) { if (n) return x; return 1.0; }");
  std::vector<std::string> want = {
      "not supported yet: 'return' before the end of helper 'f' (helpers are inlined)",
      "returns of 'f' disagree: shape [] here, [16] before"};
  EXPECT_EQ(b->errors(), want);
  EXPECT_TRUE(b->has(DiagId::note_sema_previous_return));
  // A void helper may return early; a kernel too.
  auto c = analyzeSource("void f(int n) { if (n) return; n = 1; } __global__ void k(int n) { if (n) return; f(n); }");
  EXPECT_TRUE(c->ok) << c->all();
}

//===----------------------------------------------------------------------===//
// Rule 8: definite assignment (docs/semantics.md rule 12)
//===----------------------------------------------------------------------===//

TEST(SemaDefiniteAssignment, MayBeUsedBeforeAssigned) {
  const char *bad[] = {
      "int a; int b = a;",
      "int a; a += 1;",
      "int a; a++;",
      "int a; if (n) a = 1; *p = a;",
      "int a; if (n) {} else a = 1; *p = a;",
      "int a; for (int i = 0; i < 1; i++) a = i; *p = a;",
      "int a; while (n) { a = 1; break; } *p = a;",
      "int a; do { a = 1; } while (n); *p = a;",
      "int a; for (;;) { a = 1; break; } *p = a;",
      "int a; n && (a = 1) > 0; *p = a;",
      "int a; n || (a = 1) > 0; *p = a;",
      "int a; int b = n ? (a = 1) : 2; *p = a;",
      "int a; for (int i = 0; i < n; i++) { if (i) *p = a; a = i; }",
      "int a; while (a < 3) { a = 1; }",
      "int a = a + 1;",
      "float t[16]; *(p + off) = t;",
      "float t[16]; t[+];",
      "int a; if (n) { a = 1; } else { if (x) a = 2; } *p = a;",
      // Only the body assigns: not definitely assigned after the loop (seed rule).
      "int a; for (;;) { if (n) { a = 1; break; } } *p = a;",
  };
  for (const char *code : bad) {
    auto a = analyzeBody(std::string("  ") + code);
    ASSERT_EQ(a->errors().size(), 1u) << code << "\n" << a->all();
    EXPECT_TRUE(a->has(DiagId::err_sema_use_before_assign)) << code;
    EXPECT_TRUE(a->has(DiagId::note_sema_declared_here)) << code;
  }
  const char *good[] = {
      "int a; a = 1; *p = a;",
      "int a; if (n) a = 1; else a = 2; *p = a;",
      "int a; if (n) { a = 1; } else { return; } *p = a;",
      "int a; while (1) { a = 1; } *p = a;",
      "int a; do { a = 1; } while (a < 3);",
      "for (int i = 0; i < n; i++) { int a; if (i) continue; a = 1; *p = a; }",
      "int a; a = n > 0 ? 1 : 2; *p = a;",
      "int a; int b = (a = 3) + a;",
      "int a; if (n) { a = 1; *p = a; }",
      "float t[16]; t = 0; *(p + off) = t;",
      "int a; return; *p = a;",
      "x = x + 1;",
  };
  for (const char *code : good) {
    auto a = analyzeBody(std::string("  ") + code);
    EXPECT_TRUE(a->ok) << code << "\n" << a->all();
  }
}

TEST(SemaDefiniteAssignment, ReportedOncePerVariableWithANote) {
  auto a = analyzeSource("__global__ void k(int *p) {\n  int a;\n  *p = a;\n  *p = a + a;\n}\n");
  const auto &d = a->diags.diagnostics();
  ASSERT_EQ(d.size(), 2u) << a->all();
  EXPECT_EQ(d[0].message, "'a' may be used before it is assigned");
  EXPECT_EQ(d[0].loc.line, 3u);
  EXPECT_EQ(d[1].message, "'a' declared here");
  EXPECT_EQ(d[1].loc.line, 2u);
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

TEST(SemaAttributes, ValuesErrorsAndWarnings) {
  auto a = analyzeSource(R"(__global__ void k(float *p __aligned(12), int n __multipleof(0),
    float x __multipleof(4), int s __aligned(8), float *q __attribute__((fancy)),
    float *r __attribute__((readonly(1)))) {
  int z __multipleof(4) = 1;
})");
  std::vector<std::string> errors = {
      "attribute 'aligned' needs one positive power-of-two constant argument",
      "attribute 'multipleof' needs one positive constant integer argument",
      "attribute 'readonly' needs no arguments",
  };
  std::vector<std::string> warnings = {
      "attribute 'multipleof' ignored: it applies to integer and pointer parameters",
      "attribute 'aligned' ignored: it applies to pointer parameters",
      "unknown attribute 'fancy' ignored",
      "attribute 'multipleof' ignored: it applies to parameters only",
  };
  EXPECT_EQ(a->errors(), errors);
  EXPECT_EQ(a->warnings(), warnings);
}

//===----------------------------------------------------------------------===//
// Robustness: partial ASTs and recovery
//===----------------------------------------------------------------------===//

const char *kRichKernel = R"(
float helper(float x[16], int n) { return x * n; }
__global__ void k(float *p __aligned(16), half *ph, int n __multipleof(8), int *pi) {
  int off[16] = 0 ... 16;
  bool m[16] = off < n;
  float v[16] = m ? *(p + off) : 0;
  half h[16, 16] = *(ph + off[:, newaxis] * 16 + off[newaxis, :]);
  float c[16, 16] = h @ ^h;
  for (int i = 0; i < n; i++) {
    if (i % 2 == 0) continue;
    c += (float)i;
    v = helper(v, i) + max(v, 1.0) + c[:, +];
  }
  int acc;
  while (n > 0) { acc = n; n--; break; }
  float w = select(n > 0, v[max], -1.0);
  *?(m) (p + off) = v + bitcast<float>(0x7F800000) + atomic_add(pi + off, 1, m);
  print("w", w);
  assert(w >= 0, "negative");
}
)";

// Deleting any one token yields an AST (maybe partial) sema must survive.
TEST(SemaRobustness, EveryOneTokenDeletion) {
  SourceManager sm;
  DiagEngine diags(sm);
  diags.setOutput(nullptr);
  uint32_t file = sm.addBuffer("rich.tc", kRichKernel);
  std::vector<Token> toks = preprocess(file, {}, sm, diags);
  ASSERT_FALSE(diags.hasErrors());
  for (size_t i = 0; i + 1 < toks.size(); ++i) {
    std::vector<Token> cut = toks;
    cut.erase(cut.begin() + static_cast<std::ptrdiff_t>(i));
    DiagEngine d(sm);
    d.setOutput(nullptr);
    d.setErrorLimit(0);
    auto tu = parseTranslationUnit(cut, d);
    ASSERT_NE(tu, nullptr);
    analyze(*tu, d); // must not crash, whatever it reports
  }
}

// Random token swaps and duplications, deterministic seed.
TEST(SemaRobustness, RandomTokenMutations) {
  SourceManager sm;
  DiagEngine diags(sm);
  diags.setOutput(nullptr);
  uint32_t file = sm.addBuffer("rich.tc", kRichKernel);
  std::vector<Token> toks = preprocess(file, {}, sm, diags);
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 400; ++iter) {
    std::vector<Token> mut = toks;
    int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      size_t a = rng() % (mut.size() - 1), b = rng() % (mut.size() - 1);
      if (rng() % 2)
        std::swap(mut[a], mut[b]);
      else
        mut.insert(mut.begin() + static_cast<std::ptrdiff_t>(a), mut[b]);
    }
    DiagEngine d(sm);
    d.setOutput(nullptr);
    d.setErrorLimit(0);
    auto tu = parseTranslationUnit(mut, d);
    ASSERT_NE(tu, nullptr);
    analyze(*tu, d);
  }
}

// Hand-built ASTs: null children, body-less functions, non-assignable targets.
TEST(SemaRobustness, HandBuiltPartialAst) {
  SourceManager sm;
  uint32_t file = sm.addBuffer("h.tc", "x\n");
  DiagEngine diags(sm);
  std::ostringstream out;
  diags.setOutput(&out);
  SourceLoc loc{file, 1, 1, 0};
  TranslationUnit tu;

  auto decl = std::make_unique<FunctionDecl>();
  decl->name = "later";
  decl->loc = loc;
  decl->returnType.dtype = DType::F32;
  tu.functions.push_back(std::move(decl)); // a declaration without a body

  auto k = std::make_unique<FunctionDecl>();
  k->name = "k";
  k->isKernel = true;
  k->returnType.isVoid = true;
  k->loc = loc;
  k->body = std::make_unique<CompoundStmt>(loc);
  auto add = [&](ExprPtr e) {
    auto s = std::make_unique<ExprStmt>(loc);
    s->expr = std::move(e);
    k->body->body.push_back(std::move(s));
  };
  // later(): declared, never defined.
  auto call = std::make_unique<CallExpr>(loc);
  call->callee = "later";
  call->calleeLoc = loc;
  add(std::move(call));
  // (1 + 2) = 3: not assignable.
  auto lit = [&](int v) {
    auto l = std::make_unique<IntLiteralExpr>(loc);
    l->value = static_cast<unsigned __int128>(v);
    return l;
  };
  auto assign = std::make_unique<AssignExpr>(loc);
  assign->lhs = std::make_unique<BinaryExpr>(loc, BinaryOp::Add, lit(1), lit(2));
  assign->rhs = lit(3);
  add(std::move(assign));
  // A literal beyond 64 bits (the parser rejects these; sema does too).
  auto huge = lit(0);
  huge->value = static_cast<unsigned __int128>(1) << 64;
  huge->spelling = "18446744073709551616";
  add(std::move(huge));
  // ++5: not assignable.
  add(std::make_unique<UnaryExpr>(loc, UnaryOp::PreInc, lit(5)));
  // Null children everywhere.
  add(std::make_unique<BinaryExpr>(loc, BinaryOp::Add, nullptr, lit(1)));
  add(std::make_unique<UnaryExpr>(loc, UnaryOp::Neg, nullptr));
  add(std::make_unique<ConditionalExpr>(loc));
  add(std::make_unique<MaskedDerefExpr>(loc));
  add(std::make_unique<CastExpr>(loc));
  add(std::make_unique<BitcastExpr>(loc));
  add(std::make_unique<RangeExpr>(loc));
  add(std::make_unique<SubscriptExpr>(loc));
  add(std::make_unique<AssignExpr>(loc));
  auto maxCall = std::make_unique<CallExpr>(loc);
  maxCall->callee = "max";
  maxCall->args.push_back(nullptr);
  maxCall->args.push_back(lit(1));
  add(std::move(maxCall));
  auto atomic = std::make_unique<CallExpr>(loc);
  atomic->callee = "atomic_cas";
  for (int i = 0; i < 3; ++i)
    atomic->args.push_back(nullptr);
  add(std::move(atomic));
  k->body->body.push_back(nullptr);
  k->body->body.push_back(std::make_unique<IfStmt>(loc));
  k->body->body.push_back(std::make_unique<ForStmt>(loc));
  k->body->body.push_back(std::make_unique<WhileStmt>(loc));
  k->body->body.push_back(std::make_unique<DoWhileStmt>(loc));
  k->body->body.push_back(std::make_unique<ReturnStmt>(loc));
  tu.functions.push_back(std::move(k));
  tu.functions.push_back(nullptr);

  EXPECT_FALSE(analyze(tu, diags));
  std::vector<std::string> errors;
  for (const Diagnostic &d : diags.diagnostics())
    if (d.severity == Severity::Error)
      errors.push_back(d.message);
  std::vector<std::string> want = {
      "function 'later' is declared but never defined", "expression is not assignable",
      "integer literal 18446744073709551616 does not fit in any integer type",
      "expression is not assignable"};
  EXPECT_EQ(errors, want) << out.str();
}

} // namespace
