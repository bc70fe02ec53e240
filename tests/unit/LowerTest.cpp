//===- LowerTest.cpp - AST -> tile IR lowering ----------------------------===//
//
// 1. Every tutorial kernel in examples/ (with the -D values its header
//    comment gives) lowers to a module that passes ir::verifyModule.
// 2. Lowering is deterministic (two runs print the same text).
// 3. A set of small kernels covering every construct verifies.
// 4. The pure helpers (constant encoding, reduction types, jump and
//    assignment analysis) against hand-worked values.
// 5. Lowering reports (never crashes on) constructs it cannot lower.
//
//===----------------------------------------------------------------------===//

#include "frontend/Lower.h"
#include "frontend/Compiler.h"
#include "frontend/Defines.h"
#include "frontend/LowerImpl.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "tests/unit/SourceRoot.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace tc;
namespace fs = std::filesystem;

namespace {

/// The repository root (tests/unit/SourceRoot.h).
fs::path sourceRoot() {
  return tc::test::sourceRoot();
}

std::string readFile(const fs::path &p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The -D sets of an example: one per `//   tritonc examples/<name>.tc -D...`
/// line of its header (list-valued defines expanded); none if no such line.
std::vector<DefineList> headerVariants(const fs::path &file) {
  std::vector<DefineList> variants;
  std::istringstream in(readFile(file));
  std::string line;
  std::string marker = "tritonc examples/" + file.filename().string();
  while (std::getline(in, line)) {
    if (!line.starts_with("//") || line.find(marker) == std::string::npos)
      continue;
    // A command may continue on the next comment line after a backslash.
    std::string next;
    while (!line.empty() && line.back() == '\\' && std::getline(in, next) && next.starts_with("//"))
      line = line.substr(0, line.size() - 1) + " " + next.substr(2);
    std::vector<DefineSpec> specs;
    std::istringstream words(line.substr(line.find(marker) + marker.size()));
    std::string w;
    bool ok = true;
    while (words >> w) {
      if (!w.starts_with("-D"))
        continue;
      std::string error;
      auto spec = parseDefine(w.substr(2), error);
      ok = ok && spec.has_value();
      if (spec)
        specs.push_back(*spec);
    }
    if (!ok)
      continue;
    for (DefineList &v : expandDefines(specs))
      variants.push_back(std::move(v));
  }
  return variants;
}

struct Lowered {
  std::unique_ptr<Compilation> comp;
  bool ok = false;
  std::string diagnostics;
};

/// Compiles `source` through lowering (which also runs the verifier).
Lowered lowerSource(const std::string &name, const std::string &source, DefineList defines = {}) {
  Lowered r;
  CompileOptions opts;
  opts.defines = std::move(defines);
  r.comp = std::make_unique<Compilation>(opts);
  std::ostringstream diag;
  r.comp->diags().setOutput(&diag);
  r.comp->addMainSource(name, source);
  r.ok = r.comp->run(Stage::Lower);
  r.diagnostics = diag.str();
  return r;
}

std::string printNoLocs(const ir::Module &m) {
  ir::PrintOptions opts;
  opts.locations = false;
  return ir::toString(m, opts);
}

//===----------------------------------------------------------------------===//
// 1. Tutorial kernels
//===----------------------------------------------------------------------===//

TEST(LowerExamples, EveryTutorialKernelVerifies) {
  ASSERT_FALSE(sourceRoot().empty()) << tc::test::sourceRootProblem();
  fs::path dir = sourceRoot() / "examples";
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  std::vector<fs::path> files;
  for (const auto &entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".tc")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  for (const fs::path &file : files) {
    std::vector<DefineList> variants = headerVariants(file);
    if (variants.empty()) // no command line in the header: no defines needed
      variants.push_back({});
    for (const DefineList &defines : variants) {
      std::string what = file.filename().string();
      for (const auto &[k, v] : defines)
        what += " -D" + k + "=" + v;
      Lowered r = lowerSource(file.string(), readFile(file), defines);
      ASSERT_TRUE(r.ok) << what << "\n" << r.diagnostics;
      const ir::Module *m = r.comp->module();
      ASSERT_NE(m, nullptr) << what;
      EXPECT_FALSE(m->functions.empty()) << what;
      auto failures = ir::verifyModule(*m);
      EXPECT_TRUE(failures.empty()) << what << "\n" << ir::formatFailures(*m, failures);
    }
  }
}

//===----------------------------------------------------------------------===//
// 2. Determinism
//===----------------------------------------------------------------------===//

TEST(LowerExamples, LoweringIsDeterministic) {
  ASSERT_FALSE(sourceRoot().empty()) << tc::test::sourceRootProblem();
  fs::path file = sourceRoot() / "examples" / "matmul_prefetch.tc";
  ASSERT_TRUE(fs::exists(file)) << file;
  DefineList d = {{"TM", "32"}, {"TN", "32"}, {"TK", "16"}, {"TYPE", "half"}};
  Lowered a = lowerSource(file.string(), readFile(file), d);
  Lowered b = lowerSource(file.string(), readFile(file), d);
  ASSERT_TRUE(a.ok && b.ok) << a.diagnostics << b.diagnostics;
  EXPECT_EQ(ir::toString(*a.comp->module()), ir::toString(*b.comp->module()));
}

//===----------------------------------------------------------------------===//
// 3. Small kernels covering every construct
//===----------------------------------------------------------------------===//

const std::map<std::string, std::string> &constructKernels() {
  static const std::map<std::string, std::string> kernels = {
      {"nested_loops_with_jumps", R"(
__global__ void k(int *p, int n) {
  int acc = 0;
  for (int a = 0; a < n; a++) {
    for (int b = 0; b < a; b++) {
      if (b == 3) break;
      if (acc > 1000) return;
      if (b == 1) continue;
      acc += b;
    }
    int v;
    v = a * 2;
    acc += v;
  }
  *p = acc;
})"},
      {"do_while_undefined_tile", R"(
__global__ void k(float *p, int n) {
  float t[4];
  int i = n;
  do { t = i; i -= (int)t[max]; } while (i > 0);
  *p = i;
})"},
      {"pointer_select_and_cond_assign", R"(
__global__ void k(int *q, int n) {
  int *pp;
  if (n > 0) pp = q; else pp = q + 1;
  int i = 0;
  while (i++ < n) *pp = i;
})"},
      {"undefined_pointer_carried", R"(
__global__ void k(int *q, int n) {
  int *pp;
  for (int i = 0; i < n; i++) { pp = q + i; *pp = i; }
})"},
      {"logical_in_conditions", R"(
__global__ void k(int *q, int n) {
  int i = 0;
  while (i < n && *q != i || i == 2) { i++; if (i > 5 && n) break; }
  *q = i;
})"},
      {"masked_and_atomics", R"(
__global__ void k(float *p, int *lock, int n) {
  int r[32] = 0 ... 32;
  bool m[32] = r < n;
  float x[32] = m ? *(p + r) : 0;
  while (atomic_cas(lock, 0, 1) == 1) {}
  *?(m) (p + r) = x * 2;
  atomic_xchg(lock, 0);
})"},
      {"helpers_nested", R"(
float sq(float x) { return x * x; }
float norm(float *p, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += sq(*(p + i));
  return sqrt(s);
}
__global__ void k(float *p, int n) { *p = norm(p, n) + sq(norm(p, 2)); })"},
      {"reductions_and_dot", R"(
__global__ void k(half *a, half *b, float *c) {
  int r[16] = 0 ... 16;
  half x[16, 16] = *(a + r[:, newaxis] * 16 + r[newaxis, :]);
  half y[16, 16] = *(b + r[:, newaxis] * 16 + r[newaxis, :]);
  float acc[16, 16] = 0;
  for (int k = 0; k < 4; k++) acc += x @ ^y;
  float rows[16] = acc[:, +];
  int am[16] = acc[:, argmax];
  *(c + r) = rows + am + acc[max, max];
})"},
      {"early_return_only", R"(
__global__ void k(int *p, int n) {
  if (n > 0) return;
})"},
  };
  return kernels;
}

TEST(LowerConstructs, EveryKernelVerifies) {
  for (const auto &[name, src] : constructKernels()) {
    Lowered r = lowerSource(name + ".tc", src);
    ASSERT_TRUE(r.ok) << name << "\n" << r.diagnostics;
    auto failures = ir::verifyModule(*r.comp->module());
    EXPECT_TRUE(failures.empty()) << name << "\n"
                                  << ir::formatFailures(*r.comp->module(), failures);
  }
}

TEST(LowerConstructs, UndefinedPointerIsABitcastNotAConstant) {
  // Pointer-typed constants do not exist; an undefined pointer carried into a
  // loop starts as the bitcast of an i64 zero.
  Lowered r = lowerSource("p.tc", constructKernels().at("undefined_pointer_carried"));
  ASSERT_TRUE(r.ok) << r.diagnostics;
  std::string text = printNoLocs(*r.comp->module());
  EXPECT_NE(text.find("= constant <value = 0> : i64\n"), std::string::npos) << text;
  EXPECT_NE(text.find("= bitcast %"), std::string::npos) << text;
}

TEST(LowerConstructs, KernelOrderAndNamesFollowTheSource) {
  Lowered r = lowerSource("two.tc", R"(
int helper(int x) { return x + 1; }
__global__ void second(int *p) { *p = helper(1); }
__global__ void first(int *p) { *p = 2; })");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  const ir::Module &m = *r.comp->module();
  ASSERT_EQ(m.functions.size(), 2u);
  EXPECT_EQ(m.functions[0]->name(), "second");
  EXPECT_EQ(m.functions[1]->name(), "first");
  EXPECT_EQ(m.lookup("helper"), nullptr);
}

TEST(LowerConstructs, ParamAttributes) {
  Lowered r = lowerSource("attrs.tc", R"(
__global__ void k(float *a __noalias __readonly __aligned(16), float *b __writeonly,
                  int ld __multipleof(8)) { *b = *a + ld; })");
  ASSERT_TRUE(r.ok) << r.diagnostics;
  const ir::Function &f = *r.comp->module()->functions[0];
  ASSERT_EQ(f.numParams(), 3u);
  ir::ParamAttrs a;
  a.noalias = true;
  a.readonly = true;
  a.aligned = 16;
  EXPECT_EQ(f.paramAttrs(0), a);
  ir::ParamAttrs b;
  b.writeonly = true;
  EXPECT_EQ(f.paramAttrs(1), b);
  ir::ParamAttrs ld;
  ld.multipleOf = 8;
  EXPECT_EQ(f.paramAttrs(2), ld);
  EXPECT_EQ(f.paramName(2), "ld");
  EXPECT_EQ(f.param(2)->type(), ir::Type::scalar(DType::I32));
}

//===----------------------------------------------------------------------===//
// 4. Pure helpers
//===----------------------------------------------------------------------===//

using ast::ConstValue;

TEST(LowerHelpers, ConstantIntBitsWrapAndExtend) {
  using lower::constantIntBits;
  // 300 = 0x12C: low byte 0x2C = 44 in both int8 and uint8.
  EXPECT_EQ(constantIntBits(ConstValue::ofInt(300), DType::I8), 44);
  EXPECT_EQ(constantIntBits(ConstValue::ofInt(300), DType::U8), 44);
  // 200 = 0xC8: -56 as int8, 200 as uint8.
  EXPECT_EQ(constantIntBits(ConstValue::ofInt(200), DType::I8), -56);
  EXPECT_EQ(constantIntBits(ConstValue::ofInt(200), DType::U8), 200);
  // -1 as uint16 is 65535; as uint32 4294967295; as uint64 all ones (-1 as i64 bits).
  EXPECT_EQ(constantIntBits(ConstValue::ofInt(-1), DType::U16), 65535);
  EXPECT_EQ(constantIntBits(ConstValue::ofInt(-1), DType::U32), 4294967295LL);
  EXPECT_EQ(constantIntBits(ConstValue::ofInt(-1), DType::U64), -1);
  // 2^32 + 5 wraps to 5 in 32 bits.
  EXPECT_EQ(constantIntBits(ConstValue::ofInt((__int128{1} << 32) + 5), DType::I32), 5);
  // 2^31 is INT32_MIN as int32.
  EXPECT_EQ(constantIntBits(ConstValue::ofInt(__int128{1} << 31), DType::I32), -2147483648LL);
  // Bools and floats.
  EXPECT_EQ(constantIntBits(ConstValue::ofBool(true), DType::I64), 1);
  EXPECT_EQ(constantIntBits(ConstValue::ofInt(7), DType::Bool), 1);
  EXPECT_EQ(constantIntBits(ConstValue::ofInt(0), DType::Bool), 0);
  EXPECT_EQ(constantIntBits(ConstValue::ofFloat(0.25), DType::Bool), 1);
  EXPECT_EQ(constantIntBits(ConstValue::ofFloat(-2.9), DType::I32), -2);
  EXPECT_EQ(constantIntBits(ConstValue::ofFloat(2.9), DType::U8), 2);
}

TEST(LowerHelpers, ConstantFloatValueRoundsOnce) {
  using lower::constantFloatValue;
  EXPECT_EQ(constantFloatValue(ConstValue::ofFloat(0.1), DType::F64), 0.1);
  EXPECT_EQ(constantFloatValue(ConstValue::ofFloat(0.1), DType::F32), static_cast<double>(0.1f));
  // 0.1 in binary16: 0x2E66 = 1638 / 16384.
  EXPECT_EQ(constantFloatValue(ConstValue::ofFloat(0.1), DType::F16), 1638.0 / 16384.0);
  // 0.1 in bfloat16: 0x3DCD = 205 / 2048.
  EXPECT_EQ(constantFloatValue(ConstValue::ofFloat(0.1), DType::BF16), 205.0 / 2048.0);
  // 2049 is not representable in f16 (11-bit significand): ties to even -> 2048.
  EXPECT_EQ(constantFloatValue(ConstValue::ofInt(2049), DType::F16), 2048.0);
  EXPECT_EQ(constantFloatValue(ConstValue::ofInt(2051), DType::F16), 2052.0);
  EXPECT_EQ(constantFloatValue(ConstValue::ofBool(true), DType::F32), 1.0);
}

TEST(LowerHelpers, ReduceResultTypesFollowRule10) {
  using ast::ReduceOp;
  using lower::reduceResultDType;
  EXPECT_EQ(reduceResultDType(ReduceOp::Add, DType::I8), DType::I32);
  EXPECT_EQ(reduceResultDType(ReduceOp::Add, DType::I16), DType::I32);
  EXPECT_EQ(reduceResultDType(ReduceOp::Add, DType::U8), DType::U32);
  EXPECT_EQ(reduceResultDType(ReduceOp::Add, DType::Bool), DType::U32);
  EXPECT_EQ(reduceResultDType(ReduceOp::Add, DType::I32), DType::I32);
  EXPECT_EQ(reduceResultDType(ReduceOp::Add, DType::U64), DType::U64);
  EXPECT_EQ(reduceResultDType(ReduceOp::Add, DType::F16), DType::F16);
  EXPECT_EQ(reduceResultDType(ReduceOp::Add, DType::BF16), DType::BF16);
  EXPECT_EQ(reduceResultDType(ReduceOp::Max, DType::I8), DType::I8);
  EXPECT_EQ(reduceResultDType(ReduceOp::Min, DType::F16), DType::F16);
  EXPECT_EQ(reduceResultDType(ReduceOp::ArgMax, DType::F64), DType::I32);
  EXPECT_EQ(reduceResultDType(ReduceOp::ArgMin, DType::U8), DType::I32);
  EXPECT_EQ(reduceResultDType(ReduceOp::And, DType::U16), DType::U16);
  EXPECT_EQ(reduceResultDType(ReduceOp::Xor, DType::Bool), DType::Bool);
  EXPECT_STREQ(lower::reduceKindName(ReduceOp::ArgMin), "argmin");
  EXPECT_STREQ(lower::reduceKindName(ReduceOp::Xor), "xor");
}

/// The body statements of the first function of an analysed source.
const std::vector<ast::StmtPtr> &bodyOf(const Compilation &c, size_t fn = 0) {
  return c.ast()->functions[fn]->body->body;
}

TEST(LowerHelpers, ExitsAndAssignedVariables) {
  auto comp = std::make_unique<Compilation>(CompileOptions{});
  comp->addMainSource("x.tc", R"(
__global__ void k(int n) {
  int a = 0;
  int b = 0;
  while (n > 0) { if (a > 2) break; b++; if (b) continue; a = b; }
  if (n) { a += 1; return; }
  for (int i = 0; i < n; i++) { while (1) { break; } }
})");
  ASSERT_TRUE(comp->run(Stage::Sema));
  const auto &stmts = bodyOf(*comp);
  ASSERT_EQ(stmts.size(), 5u);
  const ast::Stmt *whileStmt = stmts[2].get();
  const ast::Stmt *ifStmt = stmts[3].get();
  const ast::Stmt *forStmt = stmts[4].get();

  // A loop swallows its own break/continue; return escapes everything.
  lower::Exits w = lower::exitsOf(whileStmt);
  EXPECT_FALSE(w.brk || w.cont || w.ret);
  lower::Exits body = lower::exitsOf(whileStmt->as<ast::WhileStmt>()->body.get());
  EXPECT_TRUE(body.brk);
  EXPECT_TRUE(body.cont);
  EXPECT_FALSE(body.ret);
  lower::Exits i = lower::exitsOf(ifStmt);
  EXPECT_TRUE(i.ret);
  EXPECT_FALSE(i.brk || i.cont);
  EXPECT_FALSE(lower::exitsOf(forStmt).any());
  EXPECT_TRUE(lower::containsReturn(ifStmt));
  EXPECT_FALSE(lower::containsReturn(forStmt));

  // Variables assigned in the while: b (b++) and a (a = b).
  std::vector<const ast::VarDecl *> assigned;
  lower::collectAssigned(whileStmt, assigned);
  const ast::VarDecl *a = stmts[0]->as<ast::DeclStmt>()->vars[0].get();
  const ast::VarDecl *b = stmts[1]->as<ast::DeclStmt>()->vars[0].get();
  EXPECT_NE(std::find(assigned.begin(), assigned.end(), a), assigned.end());
  EXPECT_NE(std::find(assigned.begin(), assigned.end(), b), assigned.end());
  // The for assigns only its own i.
  assigned.clear();
  lower::collectAssigned(forStmt, assigned);
  for (const ast::VarDecl *v : assigned)
    EXPECT_EQ(v->name, "i");
}

//===----------------------------------------------------------------------===//
// Hand-built ASTs (what sema would produce), for paths sema does not reach yet
//===----------------------------------------------------------------------===//

template <typename T> std::unique_ptr<T> typed(std::unique_ptr<T> e, ir::Type t) {
  e->type = std::move(t);
  e->typed = true;
  return e;
}

std::unique_ptr<ast::IdentExpr> ident(ast::VarDecl *d) {
  auto e = std::make_unique<ast::IdentExpr>(SourceLoc{});
  e->name = d->name;
  e->decl = d;
  return typed(std::move(e), d->type);
}

std::unique_ptr<ast::IntLiteralExpr> intLit(int v) {
  auto e = std::make_unique<ast::IntLiteralExpr>(SourceLoc{});
  e->value = static_cast<unsigned>(v);
  e->constant = ConstValue::ofInt(v);
  return typed(std::move(e), ir::Type::scalar(DType::I32));
}

std::unique_ptr<ast::VarDecl> param(const char *name, ir::Type t) {
  auto v = std::make_unique<ast::VarDecl>();
  v->name = name;
  v->isParam = true;
  v->type = std::move(t);
  return v;
}

std::unique_ptr<ast::ReturnStmt> returnStmt(ast::ExprPtr value) {
  auto r = std::make_unique<ast::ReturnStmt>(SourceLoc{});
  r->value = std::move(value);
  return r;
}

TEST(LowerHandBuilt, HelperWithEarlyValueReturn) {
  // int g(int n) { if (n) return 1; return 2; }
  // __global__ void k(int *p, int n) { *p = g(n); }
  auto g = std::make_unique<ast::FunctionDecl>();
  g->name = "g";
  g->returnType.dtype = DType::I32;
  g->resolvedReturn = ir::Type::scalar(DType::I32);
  g->params.push_back(param("n", ir::Type::scalar(DType::I32)));
  g->body = std::make_unique<ast::CompoundStmt>(SourceLoc{});
  auto ifs = std::make_unique<ast::IfStmt>(SourceLoc{});
  ifs->cond = ident(g->params[0].get());
  ifs->thenStmt = returnStmt(intLit(1));
  g->body->body.push_back(std::move(ifs));
  g->body->body.push_back(returnStmt(intLit(2)));

  auto k = std::make_unique<ast::FunctionDecl>();
  k->name = "k";
  k->isKernel = true;
  k->returnType.isVoid = true;
  k->params.push_back(param("p", ir::Type::ptr(DType::I32)));
  k->params.push_back(param("n", ir::Type::scalar(DType::I32)));
  auto call = std::make_unique<ast::CallExpr>(SourceLoc{});
  call->callee = "g";
  call->function = g.get();
  call->args.push_back(ident(k->params[1].get()));
  auto deref =
      std::make_unique<ast::UnaryExpr>(SourceLoc{}, ast::UnaryOp::Deref, ident(k->params[0].get()));
  auto assign = std::make_unique<ast::AssignExpr>(SourceLoc{});
  assign->lhs = typed(std::move(deref), ir::Type::scalar(DType::I32));
  assign->rhs = typed(std::move(call), ir::Type::scalar(DType::I32));
  auto stmt = std::make_unique<ast::ExprStmt>(SourceLoc{});
  stmt->expr = typed(std::move(assign), ir::Type::scalar(DType::I32));
  k->body = std::make_unique<ast::CompoundStmt>(SourceLoc{});
  k->body->body.push_back(std::move(stmt));

  ast::TranslationUnit tu;
  tu.functions.push_back(std::move(g));
  tu.functions.push_back(std::move(k));
  SourceManager sm;
  DiagEngine diags(sm);
  std::unique_ptr<ir::Module> m = lowerToIR(tu, sm, diags);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(ir::verifyModule(*m).empty()) << ir::formatFailures(*m, ir::verifyModule(*m));
  // The helper's return flag and result variable (in that order) are merged
  // like variables; the first branch leaves the result undefined (zero).
  EXPECT_EQ(printNoLocs(*m), "kernel @k(%p: !ptr<i32>, %n: i32) {\n"
                             "  %0 = constant <value = 0> : i1\n"
                             "  %1 = constant <value = 0> : i32\n"
                             "  %2 = cmp_ne %n, %1 : i1\n"
                             "  %3, %4 = if %2 : i1, i32 {\n"
                             "    %5 = constant <value = 1> : i32\n"
                             "    %6 = constant <value = 1> : i1\n"
                             "    yield %6, %5\n"
                             "  } {\n"
                             "    %7 = constant <value = 0> : i32\n"
                             "    yield %0, %7\n"
                             "  }\n"
                             "  %8 = constant <value = 1> : i1\n"
                             "  %9 = xor %3, %8 : i1\n"
                             "  %10, %11 = if %9 : i1, i32 {\n"
                             "    %12 = constant <value = 2> : i32\n"
                             "    %13 = constant <value = 1> : i1\n"
                             "    yield %13, %12\n"
                             "  } {\n"
                             "    yield %3, %4\n"
                             "  }\n"
                             "  store %p, %11\n"
                             "  return\n"
                             "}\n");
}

//===----------------------------------------------------------------------===//
// 5. Constructs lowering cannot handle are reported, not crashed on
//===----------------------------------------------------------------------===//

TEST(LowerErrors, UnsupportedExpressionIsADiagnostic) {
  // A hand-built kernel whose body is the statement `"text";` (sema would
  // reject it; lowering must still report rather than crash).
  SourceManager sm;
  uint32_t file = sm.addBuffer("hand.tc", "__global__ void k() { \"text\"; }\n");
  DiagEngine diags(sm);
  std::ostringstream out;
  diags.setOutput(&out);

  ast::TranslationUnit tu;
  auto fn = std::make_unique<ast::FunctionDecl>();
  fn->name = "k";
  fn->isKernel = true;
  fn->loc = SourceLoc{file, 1, 17, 0};
  fn->body = std::make_unique<ast::CompoundStmt>(SourceLoc{file, 1, 21, 0});
  auto str = std::make_unique<ast::StringLiteralExpr>(SourceLoc{file, 1, 23, 0});
  str->value = "text";
  str->typed = true;
  auto stmt = std::make_unique<ast::ExprStmt>(SourceLoc{file, 1, 23, 0});
  stmt->expr = std::move(str);
  fn->body->body.push_back(std::move(stmt));
  tu.functions.push_back(std::move(fn));

  std::unique_ptr<ir::Module> m = lowerToIR(tu, sm, diags);
  EXPECT_EQ(m, nullptr);
  ASSERT_EQ(diags.numErrors(), 1u);
  EXPECT_EQ(diags.diagnostics()[0].id, DiagId::err_lower_unsupported);
  EXPECT_EQ(diags.diagnostics()[0].loc.col, 23u);
}

TEST(LowerErrors, HandBuiltKernelLowersWithoutSema) {
  // A minimal analysed AST built by hand: `__global__ void k(int n) { int x = n; }`
  // lowers to a function with one parameter and a body that only returns.
  SourceManager sm;
  uint32_t file = sm.addBuffer("hand.tc", "__global__ void k(int n) { int x = n; }\n");
  DiagEngine diags(sm);
  ast::TranslationUnit tu;
  auto fn = std::make_unique<ast::FunctionDecl>();
  fn->name = "k";
  fn->isKernel = true;
  fn->loc = SourceLoc{file, 1, 17, 0};
  auto param = std::make_unique<ast::VarDecl>();
  param->name = "n";
  param->isParam = true;
  param->type = ir::Type::scalar(DType::I32);
  auto use = std::make_unique<ast::IdentExpr>(SourceLoc{file, 1, 36, 0});
  use->name = "n";
  use->decl = param.get();
  use->type = param->type;
  use->typed = true;
  auto local = std::make_unique<ast::VarDecl>();
  local->name = "x";
  local->type = ir::Type::scalar(DType::I64); // the init is converted: one cast
  local->init = std::move(use);
  fn->params.push_back(std::move(param));
  fn->body = std::make_unique<ast::CompoundStmt>(SourceLoc{file, 1, 26, 0});
  fn->body->rbraceLoc = SourceLoc{file, 1, 39, 0};
  auto decl = std::make_unique<ast::DeclStmt>(SourceLoc{file, 1, 28, 0});
  decl->vars.push_back(std::move(local));
  fn->body->body.push_back(std::move(decl));
  tu.functions.push_back(std::move(fn));

  std::unique_ptr<ir::Module> m = lowerToIR(tu, sm, diags);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(ir::verifyModule(*m).empty());
  EXPECT_EQ(printNoLocs(*m), "kernel @k(%n: i32) {\n"
                             "  %0 = cast %n : i64\n"
                             "  return\n"
                             "}\n");
  ASSERT_EQ(m->files.size(), 1u);
  EXPECT_EQ(m->files[0], "hand.tc");
  EXPECT_EQ(m->functions[0]->body().ops().back()->loc(), (ir::Location{0, 1, 39}));
}

} // namespace
