// Unit tests of the parser (frontend/Parse*.cpp) and the AST dump.
//
// Expressions are checked through a compact S-expression spelling of the tree
// (written by hand from the precedence table of docs/language.md and the
// brief), diagnostics by their kind, message and line:col.
#include "frontend/Parser.h"
#include "frontend/ASTDump.h"
#include "frontend/Preprocessor.h"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

using namespace tc;
using namespace tc::ast;

namespace {

struct Parsed {
  SourceManager sm;
  DiagEngine diags{sm};
  std::ostringstream rendered;
  std::unique_ptr<TranslationUnit> tu;

  /// "line:col: message" of every diagnostic, in order.
  std::vector<std::string> messages() const {
    std::vector<std::string> out;
    for (const Diagnostic &d : diags.diagnostics()) {
      SourceLoc l = sm.outermost(d.loc);
      out.push_back(std::to_string(l.line) + ":" + std::to_string(l.col) + ": " + d.message);
    }
    return out;
  }
  std::string firstMessage() const {
    auto m = messages();
    return m.empty() ? "<no diagnostic>" : m[0];
  }
};

std::unique_ptr<Parsed> parse(const std::string &src,
                              std::vector<std::pair<std::string, std::string>> defines = {}) {
  auto p = std::make_unique<Parsed>();
  p->diags.setOutput(&p->rendered);
  uint32_t file = p->sm.addBuffer("test.tc", src);
  PreprocessorOptions opts;
  opts.defines = std::move(defines);
  std::vector<Token> toks = preprocess(file, opts, p->sm, p->diags);
  p->tu = parseTranslationUnit(toks, p->diags);
  return p;
}

std::string typeStr(const TypeSpec &t) {
  std::string s = t.isVoid ? "void" : std::string(langName(t.dtype));
  return t.isPtr ? s + "*" : s;
}

std::string sx(const Expr *e);

std::string sxList(const std::vector<ExprPtr> &v) {
  std::string s;
  for (const auto &x : v)
    s += " " + sx(x.get());
  return s;
}

const char *binStr(BinaryOp op) {
  switch (op) {
  case BinaryOp::Mul: return "*";
  case BinaryOp::Div: return "/";
  case BinaryOp::Rem: return "%";
  case BinaryOp::Add: return "+";
  case BinaryOp::Sub: return "-";
  case BinaryOp::Shl: return "<<";
  case BinaryOp::Shr: return ">>";
  case BinaryOp::Lt: return "<";
  case BinaryOp::Gt: return ">";
  case BinaryOp::Le: return "<=";
  case BinaryOp::Ge: return ">=";
  case BinaryOp::Eq: return "==";
  case BinaryOp::Ne: return "!=";
  case BinaryOp::BitAnd: return "&";
  case BinaryOp::BitXor: return "^";
  case BinaryOp::BitOr: return "|";
  case BinaryOp::LogicalAnd: return "&&";
  case BinaryOp::LogicalOr: return "||";
  case BinaryOp::MatMul: return "@";
  }
  return "?";
}

const char *unStr(UnaryOp op) {
  switch (op) {
  case UnaryOp::Neg: return "neg";
  case UnaryOp::Plus: return "pos";
  case UnaryOp::BitNot: return "~";
  case UnaryOp::LogicalNot: return "!";
  case UnaryOp::Transpose: return "T";
  case UnaryOp::Deref: return "load";
  case UnaryOp::PreInc: return "pre++";
  case UnaryOp::PreDec: return "pre--";
  case UnaryOp::PostInc: return "post++";
  case UnaryOp::PostDec: return "post--";
  }
  return "?";
}

const char *redStr(ReduceOp op) {
  switch (op) {
  case ReduceOp::Add: return "+";
  case ReduceOp::Max: return "max";
  case ReduceOp::Min: return "min";
  case ReduceOp::ArgMax: return "argmax";
  case ReduceOp::ArgMin: return "argmin";
  case ReduceOp::And: return "&";
  case ReduceOp::Or: return "|";
  case ReduceOp::Xor: return "^";
  }
  return "?";
}

/// (op operands...) for operators, bare names/values for leaves.
std::string sx(const Expr *e) {
  if (!e)
    return "<null>";
  switch (e->kind) {
  case ExprKind::IntLiteral: {
    unsigned __int128 v = e->as<IntLiteralExpr>()->value;
    std::string s;
    do {
      s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
      v /= 10;
    } while (v);
    return s;
  }
  case ExprKind::FloatLiteral: return "f:" + e->as<FloatLiteralExpr>()->spelling;
  case ExprKind::BoolLiteral: return e->as<BoolLiteralExpr>()->value ? "true" : "false";
  case ExprKind::StringLiteral: return "\"" + e->as<StringLiteralExpr>()->value + "\"";
  case ExprKind::Ident: return e->as<IdentExpr>()->name;
  case ExprKind::Unary:
    return std::string("(") + unStr(e->as<UnaryExpr>()->op) + " " +
           sx(e->as<UnaryExpr>()->operand.get()) + ")";
  case ExprKind::MaskedDeref:
    return "(*? " + sx(e->as<MaskedDerefExpr>()->mask.get()) + " " +
           sx(e->as<MaskedDerefExpr>()->pointer.get()) + ")";
  case ExprKind::Binary: {
    auto *b = e->as<BinaryExpr>();
    return std::string("(") + binStr(b->op) + " " + sx(b->lhs.get()) + " " + sx(b->rhs.get()) + ")";
  }
  case ExprKind::Assign: {
    auto *a = e->as<AssignExpr>();
    return std::string("(") + (a->compound ? binStr(*a->compound) : "") + "= " + sx(a->lhs.get()) +
           " " + sx(a->rhs.get()) + ")";
  }
  case ExprKind::Conditional: {
    auto *c = e->as<ConditionalExpr>();
    return "(? " + sx(c->cond.get()) + " " + sx(c->thenExpr.get()) + " " + sx(c->elseExpr.get()) +
           ")";
  }
  case ExprKind::Cast: {
    auto *c = e->as<CastExpr>();
    std::string t = typeStr(c->to);
    if (!c->shape.empty())
      t += "[" + sxList(c->shape).substr(1) + "]";
    return "(cast " + t + " " + sx(c->operand.get()) + ")";
  }
  case ExprKind::Bitcast:
    return "(bitcast " + typeStr(e->as<BitcastExpr>()->to) + " " +
           sx(e->as<BitcastExpr>()->operand.get()) + ")";
  case ExprKind::Range:
    return "(... " + sx(e->as<RangeExpr>()->begin.get()) + " " + sx(e->as<RangeExpr>()->end.get()) +
           ")";
  case ExprKind::Subscript: {
    auto *s = e->as<SubscriptExpr>();
    std::string r = "(sub " + sx(s->base.get());
    for (const SubscriptItem &it : s->items)
      r += it.kind == SubscriptItem::Kind::Slice     ? " :"
           : it.kind == SubscriptItem::Kind::NewAxis ? " newaxis"
           : it.kind == SubscriptItem::Kind::Index   ? " " + sx(it.index.get())
                                                     : std::string(" ") + redStr(it.reduce);
    return r + ")";
  }
  case ExprKind::Call:
    return "(call " + e->as<CallExpr>()->callee + sxList(e->as<CallExpr>()->args) + ")";
  }
  return "?";
}

/// Parses `void f() {\n<text>;\n}` and returns the statement's expression.
struct ExprResult {
  std::unique_ptr<Parsed> p;
  const Expr *expr = nullptr;
};

ExprResult parseExpr(const std::string &text) {
  ExprResult r;
  r.p = parse("void f() {\n" + text + ";\n}\n");
  const auto &fns = r.p->tu->functions;
  if (fns.size() == 1 && fns[0]->body && !fns[0]->body->body.empty() &&
      fns[0]->body->body[0]->kind == StmtKind::Expr)
    r.expr = fns[0]->body->body[0]->as<ExprStmt>()->expr.get();
  return r;
}

/// The S-expression of `text`, or the first diagnostic if there was one.
std::string sxOf(const std::string &text) {
  ExprResult r = parseExpr(text);
  if (r.p->diags.hasErrors())
    return "error: " + r.p->firstMessage();
  return sx(r.expr);
}

/// The first diagnostic of parsing `text` inside a function body (line 2).
std::string errorOf(const std::string &text) {
  auto p = parse("void f() {\n" + text + "\n}\n");
  return p->firstMessage();
}

const Stmt *firstStmt(const Parsed &p) {
  if (p.tu->functions.empty() || !p.tu->functions[0]->body ||
      p.tu->functions[0]->body->body.empty())
    return nullptr;
  return p.tu->functions[0]->body->body[0].get();
}

//===----------------------------------------------------------------------===//
// Precedence and associativity
//===----------------------------------------------------------------------===//

TEST(ParserPrecedence, RangeBindsTighterThanAdditive) {
  EXPECT_EQ(sxOf("a + 0 ... 4"), "(+ a (... 0 4))");
  EXPECT_EQ(sxOf("pm * TM + 0 ... TM"), "(+ (* pm TM) (... 0 TM))");
  EXPECT_EQ(sxOf("-1 ... 3"), "(... (neg 1) 3)");
  EXPECT_EQ(sxOf("(int)a ... b"), "(... (cast int32 a) b)");
}

TEST(ParserPrecedence, RangeIsNonAssociative) {
  EXPECT_EQ(sxOf("0 ... 4 ... 8"),
            "error: 2:9: the range operator '...' is non-associative; add parentheses");
  EXPECT_EQ(sxOf("(0 ... 4) ... 8"), "(... (... 0 4) 8)");
}

TEST(ParserPrecedence, MatMulBindsTighterThanMultiplicative) {
  EXPECT_EQ(sxOf("a @ b * c"), "(* (@ a b) c)");
  EXPECT_EQ(sxOf("a * b @ c"), "(* a (@ b c))");
  EXPECT_EQ(sxOf("a @ b @ c"), "(@ (@ a b) c)");
  EXPECT_EQ(sxOf("a @ 0 ... 4"), "(@ a (... 0 4))");
  EXPECT_EQ(sxOf("c += a @ b"), "(+= c (@ a b))");
}

TEST(ParserPrecedence, FullBinaryLadder) {
  EXPECT_EQ(sxOf("a || b && c | d ^ e & f == g < h << i + j * k @ l"),
            "(|| a (&& b (| c (^ d (& e (== f (< g (<< h (+ i (* j (@ k l)))))))))))");
  EXPECT_EQ(sxOf("a @ b * c + d << e < f == g & h ^ i | j && k || l"),
            "(|| (&& (| (^ (& (== (< (<< (+ (* (@ a b) c) d) e) f) g) h) i) j) k) l)");
}

TEST(ParserPrecedence, LeftAssociativeLevels) {
  EXPECT_EQ(sxOf("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(sxOf("a / b % c * d"), "(* (% (/ a b) c) d)");
  EXPECT_EQ(sxOf("a << b >> c"), "(>> (<< a b) c)");
  EXPECT_EQ(sxOf("a < b >= c"), "(>= (< a b) c)");
  EXPECT_EQ(sxOf("a == b != c"), "(!= (== a b) c)");
  EXPECT_EQ(sxOf("a && b && c"), "(&& (&& a b) c)");
}

TEST(ParserPrecedence, RightAssociativeLevels) {
  EXPECT_EQ(sxOf("a = b = c"), "(= a (= b c))");
  EXPECT_EQ(sxOf("a += b -= c"), "(+= a (-= b c))");
  EXPECT_EQ(sxOf("x = a ? b : c ? d : e"), "(= x (? a b (? c d e)))");
  EXPECT_EQ(sxOf("x = a ? b ? c : d : e"), "(= x (? a (? b c d) e))");
}

TEST(ParserPrecedence, CompoundAssignmentOperators) {
  const char *ops[] = {"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="};
  for (const char *op : ops) {
    std::string o(op);
    EXPECT_EQ(sxOf("x " + o + " y"), "(" + o + " x y)") << op;
  }
}

TEST(ParserPrecedence, MaskedDereference) {
  EXPECT_EQ(sxOf("*?(m) p = v"), "(= (*? m p) v)");
  EXPECT_EQ(sxOf("*?(checky)py = ^(*?(checkx)px)"), "(= (*? checky py) (T (*? checkx px)))");
  EXPECT_EQ(sxOf("x = ^(*?(c)px)"), "(= x (T (*? c px)))");
  // The mask is a full expression, the pointer a unary expression.
  EXPECT_EQ(sxOf("x = *?(a < n && b) p + 1"), "(= x (+ (*? (&& (< a n) b) p) 1))");
  EXPECT_EQ(sxOf("x = *?(m) (p + 1)"), "(= x (*? m (+ p 1)))");
  EXPECT_EQ(sxOf("x = *?(m) p[:, newaxis]"), "(= x (*? m (sub p : newaxis)))");
}

TEST(ParserPrecedence, TransposeVersusXor) {
  EXPECT_EQ(sxOf("x = ^y"), "(= x (T y))");
  EXPECT_EQ(sxOf("a ^ b"), "(^ a b)");
  EXPECT_EQ(sxOf("a ^ ^b"), "(^ a (T b))");
  EXPECT_EQ(sxOf("^a @ ^b"), "(@ (T a) (T b))");
  EXPECT_EQ(sxOf("*py = ^(*px)"), "(= (load py) (T (load px)))");
}

TEST(ParserPrecedence, ConditionalWithLoad) {
  EXPECT_EQ(sxOf("a = c ? *p : 0"), "(= a (? c (load p) 0))");
  EXPECT_EQ(sxOf("a = check ? *pa : 0"), "(= a (? check (load pa) 0))");
  EXPECT_EQ(sxOf("a = x < 0 || y ? -x : x + 1"), "(= a (? (|| (< x 0) y) (neg x) (+ x 1)))");
}

TEST(ParserPrecedence, UnaryOperators) {
  EXPECT_EQ(sxOf("-a * b"), "(* (neg a) b)");
  EXPECT_EQ(sxOf("+a"), "(pos a)");
  EXPECT_EQ(sxOf("!a == ~b"), "(== (! a) (~ b))");
  EXPECT_EQ(sxOf("- -a"), "(neg (neg a))");
  EXPECT_EQ(sxOf("*p++"), "(load (post++ p))");
  EXPECT_EQ(sxOf("++i"), "(pre++ i)");
  EXPECT_EQ(sxOf("--i"), "(pre-- i)");
  EXPECT_EQ(sxOf("i--"), "(post-- i)");
  EXPECT_EQ(sxOf("-x[:, +]"), "(neg (sub x : +))");
  EXPECT_EQ(sxOf("*(c + off) = *(a + off) + *(b + off)"),
            "(= (load (+ c off)) (+ (load (+ a off)) (load (+ b off))))");
}

TEST(ParserPrecedence, CastsVersusParentheses) {
  EXPECT_EQ(sxOf("(float)x"), "(cast float x)");
  EXPECT_EQ(sxOf("(x) + 1"), "(+ x 1)");
  EXPECT_EQ(sxOf("(x + 1) * 2"), "(* (+ x 1) 2)");
  EXPECT_EQ(sxOf("(float)x + 1"), "(+ (cast float x) 1)");
  EXPECT_EQ(sxOf("(float)(x + 1)"), "(cast float (+ x 1))");
  EXPECT_EQ(sxOf("(float*)p"), "(cast float* p)");
  EXPECT_EQ(sxOf("(float[16, 8])x"), "(cast float[16 8] x)");
  EXPECT_EQ(sxOf("(unsigned char)(int)x"), "(cast uint8 (cast int32 x))");
  EXPECT_EQ(sxOf("-(float)x"), "(neg (cast float x))");
  EXPECT_EQ(sxOf("(float)-x"), "(cast float (neg x))");
  EXPECT_EQ(sxOf("(half)x[:, newaxis]"), "(cast half (sub x : newaxis))");
  EXPECT_EQ(sxOf("(const float* restrict)p"), "(cast float* p)");
}

TEST(ParserPrecedence, Bitcast) {
  EXPECT_EQ(sxOf("bitcast<int>(x)"), "(bitcast int32 x)");
  EXPECT_EQ(sxOf("bitcast<unsigned short>(h) + 1"), "(+ (bitcast uint16 h) 1)");
  EXPECT_EQ(sxOf("bitcast<float*>(p)"), "(bitcast float* p)");
  // F32_INFINITY is predefined as bitcast<float>(0x7F800000).
  EXPECT_EQ(sxOf("x = F32_INFINITY"), "(= x (bitcast float 2139095040))");
}

TEST(ParserPrecedence, Subscripts) {
  EXPECT_EQ(sxOf("x[:, newaxis]"), "(sub x : newaxis)");
  EXPECT_EQ(sxOf("z[:, +]"), "(sub z : +)");
  EXPECT_EQ(sxOf("z[max, :]"), "(sub z max :)");
  EXPECT_EQ(sxOf("z[min, argmax, argmin, &, |, ^]"), "(sub z min argmax argmin & | ^)");
  EXPECT_EQ(sxOf("X + rm[:, newaxis] + rn[newaxis, :] * ldx"),
            "(+ (+ X (sub rm : newaxis)) (* (sub rn newaxis :) ldx))");
  EXPECT_EQ(sxOf("u[:, newaxis][:, :, newaxis]"), "(sub (sub u : newaxis) : : newaxis)");
  EXPECT_EQ(sxOf("f(x)[+]"), "(sub (call f x) +)");
}

TEST(ParserPrecedence, Calls) {
  EXPECT_EQ(sxOf("get_program_id(0)"), "(call get_program_id 0)");
  EXPECT_EQ(sxOf("__debug_barrier()"), "(call __debug_barrier)");
  EXPECT_EQ(sxOf("max(a, b + c)"), "(call max a (+ b c))");
  EXPECT_EQ(sxOf("x = atomic_cas(p, 0, 1) == 0"), "(= x (== (call atomic_cas p 0 1) 0))");
  EXPECT_EQ(sxOf("print(\"x=\", x)"), "(call print \"x=\" x)");
}

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

TEST(ParserLiterals, Integers) {
  EXPECT_EQ(sxOf("42"), "42");
  EXPECT_EQ(sxOf("0"), "0");
  EXPECT_EQ(sxOf("0x1F"), "31");
  EXPECT_EQ(sxOf("0XffU"), "255");
  EXPECT_EQ(sxOf("017"), "15");
  EXPECT_EQ(sxOf("0b101"), "5");
  EXPECT_EQ(sxOf("10u"), "10");
  EXPECT_EQ(sxOf("7ull"), "7");
  EXPECT_EQ(sxOf("7LLU"), "7");
  EXPECT_EQ(sxOf("3l"), "3");
  EXPECT_EQ(sxOf("0u"), "0");
  EXPECT_EQ(sxOf("18446744073709551615"), "18446744073709551615");
  EXPECT_EQ(sxOf("0xFFFFFFFFFFFFFFFF"), "18446744073709551615");
}

TEST(ParserLiterals, IntegerErrors) {
  EXPECT_EQ(sxOf("18446744073709551616"), "error: 2:1: integer literal is too large");
  EXPECT_EQ(sxOf("0x10000000000000000"), "error: 2:1: integer literal is too large");
  EXPECT_EQ(sxOf("x = 09"), "error: 2:6: invalid digit '9' in octal constant");
  EXPECT_EQ(sxOf("0b102"), "error: 2:5: invalid digit '2' in binary constant");
  EXPECT_EQ(sxOf("12abc"), "error: 2:3: invalid suffix 'abc' on integer constant");
  EXPECT_EQ(sxOf("1f"), "error: 2:2: invalid suffix 'f' on integer constant");
  EXPECT_EQ(sxOf("1lul"), "error: 2:2: invalid suffix 'lul' on integer constant");
  EXPECT_EQ(sxOf("0x"), "error: 2:1: invalid numeric constant '0x'");
}

TEST(ParserLiterals, Floats) {
  auto value = [](const std::string &text) {
    ExprResult r = parseExpr(text);
    EXPECT_FALSE(r.p->diags.hasErrors()) << text << ": " << r.p->firstMessage();
    EXPECT_TRUE(r.expr && r.expr->kind == ExprKind::FloatLiteral) << text;
    return r.expr && r.expr->kind == ExprKind::FloatLiteral ? r.expr->as<FloatLiteralExpr>()->value
                                                            : -1.0;
  };
  EXPECT_EQ(value("1.5"), 1.5);
  EXPECT_EQ(value("1e-3f"), 1e-3);
  EXPECT_EQ(value("2E3"), 2000.0);
  EXPECT_EQ(value(".5"), 0.5);
  EXPECT_EQ(value("1."), 1.0);
  EXPECT_EQ(value("3.14F"), 3.14);
  EXPECT_EQ(value("0x1.8p1"), 3.0);
  EXPECT_EQ(value("0x10p-4f"), 1.0);
  EXPECT_EQ(value("1e-400"), 0.0); // underflow is not an error
  EXPECT_EQ(sxOf("1.5"), "f:1.5");
}

TEST(ParserLiterals, FloatErrors) {
  EXPECT_EQ(sxOf("1e999"), "error: 2:1: floating literal is too large");
  EXPECT_EQ(sxOf("1.5x"), "error: 2:4: invalid suffix 'x' on floating constant");
  EXPECT_EQ(sxOf("1.5L"), "error: 2:4: invalid suffix 'L' on floating constant");
  EXPECT_EQ(sxOf("1e+"), "error: 2:2: invalid suffix 'e+' on floating constant");
}

TEST(ParserLiterals, BoolsStringsAndChars) {
  EXPECT_EQ(sxOf("true"), "true");
  EXPECT_EQ(sxOf("x = false"), "(= x false)");
  EXPECT_EQ(sxOf("print(\"a\" \"b\")"), "(call print \"ab\")");
  ExprResult r = parseExpr(R"(print("\n\t\x41\101\\\"\0z"))");
  ASSERT_TRUE(r.expr);
  const auto *arg = r.expr->as<CallExpr>()->args[0]->as<StringLiteralExpr>();
  EXPECT_EQ(arg->value, std::string("\n\tAA\\\"\0z", 8));
  EXPECT_EQ(sxOf("'a'"), "97");
  EXPECT_EQ(sxOf("'\\n'"), "10");
  EXPECT_EQ(sxOf("'ab'"), "error: 2:1: invalid character constant 'ab'");
}

TEST(ParserLiterals, UnknownEscapeIsAWarning) {
  ExprResult r = parseExpr(R"(print("a\qb"))");
  EXPECT_FALSE(r.p->diags.hasErrors());
  ASSERT_EQ(r.p->diags.numWarnings(), 1u);
  EXPECT_EQ(r.p->firstMessage(), "2:9: unknown escape sequence '\\q'");
}

//===----------------------------------------------------------------------===//
// Locations
//===----------------------------------------------------------------------===//

TEST(ParserLocations, NodesPointAtTheirOperatorOrFirstToken) {
  //                        1234567890123456789012
  ExprResult r = parseExpr("x = a + (float)b[:, +]");
  ASSERT_TRUE(r.expr);
  const auto *assign = r.expr->as<AssignExpr>();
  EXPECT_EQ(assign->loc.line, 2u);
  EXPECT_EQ(assign->loc.col, 3u);
  EXPECT_EQ(assign->length, 1u);
  EXPECT_EQ(assign->lhs->loc.col, 1u);
  const auto *add = assign->rhs->as<BinaryExpr>();
  EXPECT_EQ(add->loc.col, 7u);
  const auto *cast = add->rhs->as<CastExpr>();
  EXPECT_EQ(cast->loc.col, 9u);
  EXPECT_EQ(cast->length, 7u); // "(float)"
  const auto *sub = cast->operand->as<SubscriptExpr>();
  EXPECT_EQ(sub->loc.col, 17u);
  EXPECT_EQ(sub->length, 6u); // "[:, +]"
  EXPECT_EQ(sub->items[1].loc.col, 21u);
}

TEST(ParserLocations, LengthsOfTokens) {
  ExprResult r = parseExpr("value <<= 0x10 ... 1024");
  ASSERT_TRUE(r.expr);
  const auto *a = r.expr->as<AssignExpr>();
  EXPECT_EQ(a->length, 3u);
  EXPECT_EQ(a->lhs->length, 5u);
  const auto *range = a->rhs->as<RangeExpr>();
  EXPECT_EQ(range->loc.col, 16u);
  EXPECT_EQ(range->length, 3u);
  EXPECT_EQ(range->begin->length, 4u);
  EXPECT_EQ(range->end->length, 4u);
  ExprResult c = parseExpr("get_program_id(0)");
  ASSERT_TRUE(c.expr);
  EXPECT_EQ(c.expr->as<CallExpr>()->calleeLoc.col, 1u);
  EXPECT_EQ(c.expr->length, 14u);
}

//===----------------------------------------------------------------------===//
// Types and declarations
//===----------------------------------------------------------------------===//

TEST(ParserTypes, ScalarTypeMapping) {
  struct Case {
    const char *spelling;
    DType dtype;
  } cases[] = {
      {"bool", DType::Bool},
      {"char", DType::I8},
      {"signed char", DType::I8},
      {"unsigned char", DType::U8},
      {"short", DType::I16},
      {"short int", DType::I16},
      {"unsigned short", DType::U16},
      {"int", DType::I32},
      {"signed", DType::I32},
      {"unsigned", DType::U32},
      {"unsigned int", DType::U32},
      {"long", DType::I64},
      {"long int", DType::I64},
      {"long long", DType::I64},
      {"unsigned long", DType::U64},
      {"unsigned long long int", DType::U64},
      {"long unsigned", DType::U64},
      {"half", DType::F16},
      {"bf16", DType::BF16},
      {"float", DType::F32},
      {"double", DType::F64},
      {"const float", DType::F32},
      {"int8", DType::I8},
      {"int16", DType::I16},
      {"int32", DType::I32},
      {"int64", DType::I64},
      {"uint8", DType::U8},
      {"uint16", DType::U16},
      {"uint32", DType::U32},
      {"uint64", DType::U64},
  };
  for (const Case &c : cases) {
    auto p = parse(std::string("void f() { ") + c.spelling + " x; }");
    ASSERT_FALSE(p->diags.hasErrors()) << c.spelling << ": " << p->firstMessage();
    const Stmt *s = firstStmt(*p);
    ASSERT_TRUE(s && s->kind == StmtKind::Decl) << c.spelling;
    const VarDecl &v = *s->as<DeclStmt>()->vars[0];
    EXPECT_EQ(v.elem.dtype, c.dtype) << c.spelling;
    EXPECT_FALSE(v.elem.isPtr) << c.spelling;
    EXPECT_FALSE(v.elem.isVoid) << c.spelling;
  }
}

TEST(ParserTypes, InvalidCombinations) {
  EXPECT_EQ(errorOf("unsigned float x;"),
            "2:10: cannot combine 'float' with previous 'unsigned' type specifier");
  EXPECT_EQ(errorOf("long double x;"),
            "2:6: cannot combine 'double' with previous 'long' type specifier");
  EXPECT_EQ(errorOf("long long long x;"),
            "2:11: cannot combine 'long' with previous 'long long' type specifier");
  EXPECT_EQ(errorOf("int float x;"),
            "2:5: cannot combine 'float' with previous 'int' type specifier");
  EXPECT_EQ(errorOf("signed unsigned x;"),
            "2:8: cannot combine 'unsigned' with previous 'signed' type specifier");
  EXPECT_EQ(errorOf("short char x;"),
            "2:7: cannot combine 'char' with previous 'short' type specifier");
  EXPECT_EQ(errorOf("const x;"), "2:7: expected a type name");
}

TEST(ParserTypes, PointersPerDeclarator) {
  auto p = parse("void f() { const float * restrict a, b, *c[4]; }");
  ASSERT_FALSE(p->diags.hasErrors()) << p->firstMessage();
  const auto &vars = firstStmt(*p)->as<DeclStmt>()->vars;
  ASSERT_EQ(vars.size(), 3u);
  EXPECT_TRUE(vars[0]->elem.isPtr);
  EXPECT_FALSE(vars[1]->elem.isPtr); // as in C, '*' belongs to the declarator
  EXPECT_TRUE(vars[2]->elem.isPtr);
  EXPECT_EQ(vars[2]->shape.size(), 1u);
  EXPECT_EQ(vars[2]->elem.dtype, DType::F32);
}

TEST(ParserTypes, PointerToPointerIsAnError) {
  EXPECT_EQ(errorOf("float **p;"), "2:8: not supported yet: pointers to pointers");
  auto p = parse("void f(int ** p) {}");
  EXPECT_EQ(p->firstMessage(), "1:13: not supported yet: pointers to pointers");
  EXPECT_EQ(p->diags.numErrors(), 1u);
}

TEST(ParserDecls, TileDeclarationsWithAttributesAndInitialisers) {
  auto p = parse("void f() { float x[16, 8] __multipleof(8) __aligned(16) = 3.14, y = x; }");
  ASSERT_FALSE(p->diags.hasErrors()) << p->firstMessage();
  const auto &vars = firstStmt(*p)->as<DeclStmt>()->vars;
  ASSERT_EQ(vars.size(), 2u);
  const VarDecl &x = *vars[0];
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.loc.col, 18u);
  ASSERT_EQ(x.shape.size(), 2u);
  EXPECT_EQ(sx(x.shape[0].get()), "16");
  EXPECT_EQ(sx(x.shape[1].get()), "8");
  ASSERT_EQ(x.attrs.size(), 2u);
  EXPECT_EQ(x.attrs[0].name, "multipleof");
  EXPECT_EQ(sx(x.attrs[0].args[0].get()), "8");
  EXPECT_EQ(x.attrs[1].name, "aligned");
  EXPECT_EQ(sx(x.init.get()), "f:3.14");
  EXPECT_EQ(vars[1]->name, "y");
  EXPECT_EQ(sx(vars[1]->init.get()), "x");
  EXPECT_TRUE(vars[1]->shape.empty());
}

TEST(ParserDecls, AttributeSyntax) {
  auto p = parse("void f(int a __attribute__((noalias, multipleof(4 * 2), x(1, 2))) "
                 "__attribute__(()) __readonly) {}");
  ASSERT_FALSE(p->diags.hasErrors()) << p->firstMessage();
  const VarDecl &a = *p->tu->functions[0]->params[0];
  ASSERT_EQ(a.attrs.size(), 4u);
  EXPECT_EQ(a.attrs[0].name, "noalias");
  EXPECT_TRUE(a.attrs[0].args.empty());
  EXPECT_EQ(a.attrs[1].name, "multipleof");
  EXPECT_EQ(sx(a.attrs[1].args[0].get()), "(* 4 2)");
  EXPECT_EQ(a.attrs[2].args.size(), 2u);
  EXPECT_EQ(a.attrs[3].name, "readonly");
}

TEST(ParserDecls, FunctionsAndParameters) {
  auto p = parse("__global__ void k(TYPE *X, int ldx __multipleof(8)) { }\n"
                 "float helper(float x[16], const int n) { return x[+]; }\n"
                 "int* g(void) { return 0; }\n"
                 "void h() { return; }\n",
                 {{"TYPE", "half"}});
  ASSERT_FALSE(p->diags.hasErrors()) << p->firstMessage();
  const auto &fns = p->tu->functions;
  ASSERT_EQ(fns.size(), 4u);
  EXPECT_TRUE(fns[0]->isKernel);
  EXPECT_TRUE(fns[0]->returnType.isVoid);
  EXPECT_EQ(fns[0]->name, "k");
  EXPECT_EQ(fns[0]->loc.col, 17u);
  ASSERT_EQ(fns[0]->params.size(), 2u);
  EXPECT_EQ(fns[0]->params[0]->elem.dtype, DType::F16);
  EXPECT_TRUE(fns[0]->params[0]->elem.isPtr);
  EXPECT_TRUE(fns[0]->params[0]->isParam);
  EXPECT_EQ(fns[0]->params[1]->attrs.size(), 1u);
  EXPECT_FALSE(fns[1]->isKernel);
  EXPECT_EQ(fns[1]->returnType.dtype, DType::F32);
  EXPECT_EQ(fns[1]->params[0]->shape.size(), 1u);
  EXPECT_TRUE(fns[2]->returnType.isPtr);
  EXPECT_EQ(fns[2]->returnType.dtype, DType::I32);
  EXPECT_TRUE(fns[2]->params.empty());
  EXPECT_TRUE(fns[3]->params.empty());
}

TEST(ParserDecls, DeclarationWithoutBody) {
  auto p = parse("float g(float x);\nvoid f() { }\n");
  EXPECT_EQ(p->messages(), std::vector<std::string>{"1:7: function declaration without a body"});
  ASSERT_EQ(p->tu->functions.size(), 2u); // kept, with a null body
  EXPECT_EQ(p->tu->functions[0]->body, nullptr);
  EXPECT_NE(p->tu->functions[1]->body, nullptr);
}

TEST(ParserDecls, FileScopeErrors) {
  auto p = parse("typedef float real;\nint x = 3;\nvoid f() {}\n");
  EXPECT_EQ(p->messages(),
            (std::vector<std::string>{"1:1: not supported yet: typedef",
                                      "2:5: not supported yet: variables at file scope"}));
  EXPECT_EQ(p->tu->functions.size(), 1u);
  auto q = parse("x = 3;\n__global__ void k() {}\n");
  EXPECT_EQ(q->firstMessage(), "1:1: expected a function definition");
  EXPECT_EQ(q->tu->functions.size(), 1u);
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

TEST(ParserStmts, EveryStatementForm) {
  auto p = parse(R"(void f(int n) {
  int i = 0, j;
  x = 1;
  { y = 2; }
  if (a) b = 1; else b = 2;
  if (a) { }
  for (int k = 0; k < n; k++) { continue; }
  for (i = 0; ; ) break;
  for (;;) { }
  while (i < n) i += 1;
  do { i -= 1; } while (i > 0);
  return;
  return i + 1;
  ;
}
)");
  ASSERT_FALSE(p->diags.hasErrors()) << p->firstMessage();
  const auto &body = p->tu->functions[0]->body->body;
  std::vector<StmtKind> kinds;
  for (const auto &s : body)
    kinds.push_back(s->kind);
  std::vector<StmtKind> expected = {
      StmtKind::Decl,   StmtKind::Expr,   StmtKind::Compound, StmtKind::If,    StmtKind::If,
      StmtKind::For,    StmtKind::For,    StmtKind::For,      StmtKind::While, StmtKind::DoWhile,
      StmtKind::Return, StmtKind::Return, StmtKind::Empty};
  EXPECT_EQ(kinds, expected);
  EXPECT_EQ(body[0]->as<DeclStmt>()->vars.size(), 2u);
  EXPECT_NE(body[3]->as<IfStmt>()->elseStmt, nullptr);
  EXPECT_EQ(body[4]->as<IfStmt>()->elseStmt, nullptr);
  const auto *for1 = body[5]->as<ForStmt>();
  EXPECT_EQ(for1->init->kind, StmtKind::Decl);
  EXPECT_EQ(sx(for1->cond.get()), "(< k n)");
  EXPECT_EQ(sx(for1->step.get()), "(post++ k)");
  const auto *for2 = body[6]->as<ForStmt>();
  EXPECT_EQ(for2->init->kind, StmtKind::Expr);
  EXPECT_EQ(for2->cond, nullptr);
  EXPECT_EQ(for2->step, nullptr);
  EXPECT_EQ(for2->body->kind, StmtKind::Break);
  const auto *for3 = body[7]->as<ForStmt>();
  EXPECT_EQ(for3->init, nullptr);
  EXPECT_EQ(sx(body[9]->as<DoWhileStmt>()->cond.get()), "(> i 0)");
  EXPECT_EQ(body[10]->as<ReturnStmt>()->value, nullptr);
  EXPECT_EQ(sx(body[11]->as<ReturnStmt>()->value.get()), "(+ i 1)");
  EXPECT_EQ(body[3]->loc.line, 5u);
  EXPECT_EQ(body[3]->loc.col, 3u);
}

TEST(ParserStmts, DanglingElseBindsToTheNearestIf) {
  auto p = parse("void f() { if (a) if (b) x = 1; else x = 2; }");
  ASSERT_FALSE(p->diags.hasErrors());
  const auto *outer = firstStmt(*p)->as<IfStmt>();
  EXPECT_EQ(outer->elseStmt, nullptr);
  EXPECT_NE(outer->thenStmt->as<IfStmt>()->elseStmt, nullptr);
}

TEST(ParserStmts, TheTutorialMatmulLoop) {
  auto p = parse(R"(__global__ void dot(TYPE * A, TYPE * B, TYPE * C, int M, int N, int K,
        int lda __multipleof(8), int ldb __multipleof(8), int ldc __multipleof(8)) {
  int pm = get_program_id(0);
  int pn = get_program_id(1);
  int rm[TM] = pm * TM + 0 ... TM;
  int rn[TN] = pn * TN + 0 ... TN;
  int rk[TK] = 0 ... TK;
  float c[TM, TN] = 0;
  TYPE* pa[TM, TK] = A + rk[newaxis, :] * 1 + rm[:, newaxis] * lda;
  TYPE* pb[TK, TN] = B + rk[:, newaxis] * ldb + rn[newaxis, :] * 1;
  TYPE a[TM, TK] = *pa;
  TYPE b[TK, TN] = *pb;
  for(int k = K; k > 0; k-= TK){
    c += a @ b;
    pa = pa + TK * 1;
    pb = pb + TK * ldb;
    bool check = k > TK;
    a = check ? *pa : 0;
    b = check ? *pb : 0;
  }
  TYPE* pc[TM, TN] = C + rn[newaxis, :] + rm[:, newaxis] * ldc;
  *pc = c;
}
)",
                 {{"TYPE", "half"}, {"TM", "64"}, {"TN", "64"}, {"TK", "16"}});
  ASSERT_FALSE(p->diags.hasErrors()) << p->rendered.str();
  const auto &fn = *p->tu->functions[0];
  EXPECT_EQ(fn.params.size(), 9u);
  EXPECT_EQ(fn.body->body.size(), 13u);
  const auto *loop = fn.body->body[10]->as<ForStmt>();
  EXPECT_EQ(sx(loop->step.get()), "(-= k 16)");
  const auto &loopBody = loop->body->as<CompoundStmt>()->body;
  EXPECT_EQ(sx(loopBody[0]->as<ExprStmt>()->expr.get()), "(+= c (@ a b))");
  EXPECT_EQ(sx(loopBody[4]->as<ExprStmt>()->expr.get()), "(= a (? check (load pa) 0))");
}

//===----------------------------------------------------------------------===//
// Syntax errors: message and location
//===----------------------------------------------------------------------===//

TEST(ParserErrors, MessagesAndLocations) {
  // The missing ';' is reported just after the previous token.
  EXPECT_EQ(errorOf("x = 3\ny = 4;"), "2:6: expected ';' after expression");
  EXPECT_EQ(errorOf("int x = 3 int y;"), "2:10: expected ';' after declaration");
  EXPECT_EQ(errorOf("return 1 }"), "2:9: expected ';' after return statement");
  EXPECT_EQ(errorOf("break }"), "2:6: expected ';' after 'break'");
  EXPECT_EQ(errorOf("int x = ;"), "2:9: expected expression");
  EXPECT_EQ(errorOf("x = (a + b;"), "2:11: expected ')'");
  EXPECT_EQ(errorOf("TYPE x = 1;"), "2:1: unknown type name 'TYPE'");
  EXPECT_EQ(errorOf("TYPE* px[4] = 0;"), "2:1: unknown type name 'TYPE'");
  EXPECT_EQ(errorOf("int = 3;"), "2:5: expected identifier");
  EXPECT_EQ(errorOf("3 = x;"), "2:3: expression is not assignable");
  EXPECT_EQ(errorOf("a + b = c;"), "2:7: expression is not assignable");
  EXPECT_EQ(errorOf("x[:] = c;"), "2:6: expression is not assignable");
  EXPECT_EQ(errorOf("3++;"), "2:2: expression is not assignable");
  EXPECT_EQ(errorOf("x = a[i];"), "<no diagnostic>"); // an integer index selects a slice
  EXPECT_EQ(errorOf("x = a[:, ];"),
            "2:10: tile subscripts take ':', 'newaxis' or a reduction operator");
  EXPECT_EQ(errorOf("x[:, :] = c;"), "2:9: expression is not assignable");
  EXPECT_EQ(errorOf("x = a[];"),
            "2:7: tile subscripts take ':', 'newaxis' or a reduction operator");
  EXPECT_EQ(errorOf("x = a[+1];"),
            "2:7: tile subscripts take ':', 'newaxis' or a reduction operator");
  EXPECT_EQ(errorOf("x = newaxis;"), "2:5: 'newaxis' is only allowed in a tile subscript");
  EXPECT_EQ(errorOf("a = 1, b = 2;"), "2:6: not supported yet: the comma operator");
  EXPECT_EQ(errorOf("x = c ? a;"), "2:10: expected ':'");
  EXPECT_EQ(errorOf("if x > 0 { }"), "2:4: expected '(' after 'if'");
  EXPECT_EQ(errorOf("for i = 0;"), "2:5: expected '(' after 'for'");
  EXPECT_EQ(errorOf("do x = 1; until (x);"),
            "2:11: expected 'while' after the body of a do/while loop");
  EXPECT_EQ(errorOf("else x = 1;"), "2:1: 'else' without a previous 'if'");
  EXPECT_EQ(errorOf("x = 1(2);"), "2:5: called object is not a function name");
  EXPECT_EQ(errorOf("x = a[:](2);"), "2:6: called object is not a function name");
  EXPECT_EQ(errorOf("x = bitcast<foo>(y);"), "2:13: unknown type name 'foo'");
  EXPECT_EQ(errorOf("x = bitcast(y);"), "2:12: expected '<' after 'bitcast'");
  EXPECT_EQ(errorOf("x = *?m p;"), "2:7: expected '(' after '*?'");
  EXPECT_EQ(errorOf("float x[] = 1;"), "2:9: expected expression");
  EXPECT_EQ(errorOf("float x = {1, 2};"),
            "2:11: not supported yet: initializer lists (a scalar initializer splats)");
  EXPECT_EQ(errorOf("x = y z;"), "2:6: expected ';' after expression");
  EXPECT_EQ(errorOf("typedef int t;"), "2:1: not supported yet: typedef");
  EXPECT_EQ(errorOf("int f(int a);"), "2:6: expected ';' after declaration");
}

TEST(ParserErrors, MissingSemicolonAfterAMacro) {
  // Reported just after the macro use, not inside the macro's definition.
  auto p =
      parse("#define N 4\n#define F(a, b) ((a) + (b))\nvoid f() {\n  x = N\n  y = F(1, 2) z;\n}\n");
  EXPECT_EQ(p->messages(), (std::vector<std::string>{"4:8: expected ';' after expression",
                                                     "5:14: expected ';' after expression"}));
}

TEST(ParserErrors, NoteAtTheOpener) {
  auto p = parse("void f() {\n  x = g(a, b;\n}\n");
  EXPECT_EQ(p->messages(),
            (std::vector<std::string>{"2:13: expected ')'", "2:8: to match this '('"}));
  auto q = parse("void f() {\n  x = 1;\n");
  EXPECT_EQ(q->messages(),
            (std::vector<std::string>{"3:1: expected '}'", "1:10: to match this '{'"}));
  auto r = parse("void f() {\n  x = a[:, +;\n}\n");
  EXPECT_EQ(r->messages(),
            (std::vector<std::string>{"2:13: expected ']'", "2:8: to match this '['"}));
}

TEST(ParserErrors, RenderedLikeClang) {
  auto p = parse("void f() {\n  x = (a + b;\n}\n");
  EXPECT_EQ(p->rendered.str(), "test.tc:2:13: error: expected ')'\n"
                               "  x = (a + b;\n"
                               "            ^\n"
                               "test.tc:2:7: note: to match this '('\n"
                               "  x = (a + b;\n"
                               "      ^\n");
}

TEST(ParserErrors, FunctionDeclarationWithoutBody) {
  auto p = parse("__global__ void k(int n);\n");
  EXPECT_EQ(p->messages(), std::vector<std::string>{"1:17: function declaration without a body"});
}

//===----------------------------------------------------------------------===//
// Recovery
//===----------------------------------------------------------------------===//

TEST(ParserRecovery, TwoErrorsInOneFunction) {
  auto p = parse("void f() {\n"
                 "  int x = ;\n"
                 "  y = 1;\n"
                 "  z = (2 + ;\n"
                 "  w = 3;\n"
                 "}\n");
  EXPECT_EQ(p->messages(),
            (std::vector<std::string>{"2:11: expected expression", "4:12: expected expression"}));
  ASSERT_EQ(p->tu->functions.size(), 1u);
  const auto &body = p->tu->functions[0]->body->body;
  ASSERT_EQ(body.size(), 2u); // the two good statements survive
  EXPECT_EQ(sx(body[0]->as<ExprStmt>()->expr.get()), "(= y 1)");
  EXPECT_EQ(sx(body[1]->as<ExprStmt>()->expr.get()), "(= w 3)");
}

TEST(ParserRecovery, ErrorsInSeveralFunctions) {
  auto p = parse("void f() { x = ; }\n"
                 "void g(int a b) { y = 1 + ; }\n"
                 "void h() { z = 1; }\n");
  EXPECT_EQ(p->messages(),
            (std::vector<std::string>{"1:16: expected expression", "2:14: expected ')'",
                                      "2:7: to match this '('", "2:27: expected expression"}));
  ASSERT_EQ(p->tu->functions.size(), 3u);
  EXPECT_EQ(p->tu->functions[2]->name, "h");
  EXPECT_EQ(p->tu->functions[2]->body->body.size(), 1u);
}

TEST(ParserRecovery, BadConditionKeepsTheBody) {
  auto p = parse("void f() {\n"
                 "  if (a +) { x = ; }\n"
                 "  while ((b) c) { y = 2 }\n"
                 "  for (i = 0; i <; i++) { z = ; }\n"
                 "  ok = 1;\n"
                 "}\n");
  EXPECT_EQ(p->messages(),
            (std::vector<std::string>{"2:10: expected expression", "2:18: expected expression",
                                      "3:14: expected ')'", "3:9: to match this '('",
                                      "3:24: expected ';' after expression",
                                      "4:18: expected expression", "4:31: expected expression"}));
  const auto &body = p->tu->functions[0]->body->body;
  ASSERT_EQ(body.size(), 4u);
  EXPECT_EQ(sx(body[3]->as<ExprStmt>()->expr.get()), "(= ok 1)");
}

TEST(ParserRecovery, StrayClosersAndTokens) {
  auto p = parse("void f() {\n  x = 1);\n  ) ] y = 2;\n}\nvoid g() {}\n");
  EXPECT_EQ(p->messages(), (std::vector<std::string>{"2:8: expected ';' after expression",
                                                     "3:3: expected expression"}));
  EXPECT_EQ(p->tu->functions.size(), 2u);
}

TEST(ParserRecovery, UnknownTypeNamesAreParsedAsInt) {
  auto p = parse("__global__ void k(TYPE *X, int n) {\n  TYPE x = *X;\n  n = 1;\n}\n");
  EXPECT_EQ(p->messages(), (std::vector<std::string>{"1:19: unknown type name 'TYPE'",
                                                     "2:3: unknown type name 'TYPE'"}));
  ASSERT_EQ(p->tu->functions.size(), 1u);
  EXPECT_EQ(p->tu->functions[0]->params.size(), 2u);
  EXPECT_EQ(p->tu->functions[0]->body->body.size(), 2u);
}

TEST(ParserStmts, ProductStatementVersusUnknownType) {
  // `a * b;` is a product when `a` is a variable (as in C), a declaration of a
  // pointer with an unknown type name otherwise.
  auto p = parse("void f(int a, int b) { a * b; int c = 1; c * b; }");
  ASSERT_FALSE(p->diags.hasErrors()) << p->firstMessage();
  const auto &body = p->tu->functions[0]->body->body;
  EXPECT_EQ(sx(body[0]->as<ExprStmt>()->expr.get()), "(* a b)");
  EXPECT_EQ(sx(body[2]->as<ExprStmt>()->expr.get()), "(* c b)");
  auto q = parse("void f(int b) { T * b; }\nvoid g() { a * b; }");
  EXPECT_EQ(q->messages(), (std::vector<std::string>{"1:17: unknown type name 'T'",
                                                     "2:12: unknown type name 'a'"}));
}

TEST(ParserRecovery, ErrorLimitStops) {
  std::string src = "void f() {\n";
  for (int i = 0; i < 200; ++i)
    src += "  x = ;\n";
  src += "}\n";
  auto p = parse(src);
  EXPECT_TRUE(p->diags.shouldStop());
  EXPECT_EQ(p->diags.numErrors(), 50u); // then "too many errors emitted", and nothing more
}

//===----------------------------------------------------------------------===//
// Robustness: depth limits, no crash, no hang
//===----------------------------------------------------------------------===//

TEST(ParserStress, TenThousandNestedParentheses) {
  std::string src = "void f() {\n  x = " + std::string(10000, '(') + "1" + std::string(10000, ')') +
                    ";\n  y = 2;\n}\n";
  auto p = parse(src);
  EXPECT_EQ(p->diags.numErrors(), 1u);
  EXPECT_EQ(p->messages()[0].substr(p->messages()[0].find(' ') + 1), "nesting too deep");
  ASSERT_EQ(p->tu->functions.size(), 1u);
  const auto &body = p->tu->functions[0]->body->body;
  ASSERT_EQ(body.size(), 1u);
  EXPECT_EQ(sx(body[0]->as<ExprStmt>()->expr.get()), "(= y 2)");
}

TEST(ParserStress, ModerateNestingIsFine) {
  std::string src = "void f() { x = " + std::string(100, '(') + "1" + std::string(100, ')') +
                    "; { { { { if (a) { while (b) { y = -(-(-(float)(int)z)); } } } } } } }";
  auto p = parse(src);
  EXPECT_FALSE(p->diags.hasErrors()) << p->firstMessage();
}

TEST(ParserStress, OtherDeepConstructs) {
  const std::string deep[] = {
      std::string(10000, '{') + std::string(10000, '}'),
      "x = " + std::string(10000, '-') + "y;",
      "x = " + std::string(5000, '!') + std::string(5000, '~') + "y;",
      [] {
        std::string s = "x";
        for (int i = 0; i < 10000; ++i)
          s += " = x";
        return s + ";";
      }(),
      [] {
        std::string s = "x = y";
        for (int i = 0; i < 10000; ++i)
          s += " + y";
        return s + ";";
      }(),
      [] {
        std::string s = "x = y";
        for (int i = 0; i < 10000; ++i)
          s += "[:]";
        return s + ";";
      }(),
      [] {
        std::string s = "x = ";
        for (int i = 0; i < 10000; ++i)
          s += "a ? b : ";
        return s + "c;";
      }(),
      [] {
        std::string s;
        for (int i = 0; i < 10000; ++i)
          s += "if (a) ";
        return s + "x = 1;";
      }(),
      [] {
        std::string s = "x = ";
        for (int i = 0; i < 10000; ++i)
          s += "(float)";
        return s + "y;";
      }(),
      [] {
        std::string s = "x = ";
        for (int i = 0; i < 10000; ++i)
          s += "*?(m)";
        return s + "p;";
      }(),
      [] {
        std::string s = "x = ";
        for (int i = 0; i < 10000; ++i)
          s += "f(";
        return s + "1" + std::string(10000, ')') + ";";
      }(),
  };
  for (const std::string &body : deep) {
    auto p = parse("void f() {\n" + body + "\n}\nvoid g() { ok = 1; }\n");
    EXPECT_EQ(p->diags.numErrors(), 1u) << body.substr(0, 40);
    EXPECT_EQ(p->messages()[0].substr(p->messages()[0].find(' ') + 1), "nesting too deep")
        << body.substr(0, 40);
    EXPECT_EQ(p->tu->functions.size(), 2u) << body.substr(0, 40);
  }
}

TEST(ParserStress, UnterminatedEverything) {
  const char *srcs[] = {"void f(",
                        "void f() {",
                        "void f() { x = (",
                        "void f() { x = a[",
                        "void f() { if (",
                        "void f() { for (int i = 0;",
                        "__global__",
                        "void f() { x = bitcast<",
                        "void f() { float x[4",
                        "void",
                        "void f() { do",
                        "void f() { x = \"abc",
                        "void f() { *?("};
  for (const char *src : srcs) {
    auto p = parse(src);
    EXPECT_TRUE(p->diags.hasErrors()) << src;
  }
}

// Random token soup must terminate without crashing (and report something).
TEST(ParserStress, RandomTokenSoup) {
  const char *pieces[] = {"(",
                          ")",
                          "[",
                          "]",
                          "{",
                          "}",
                          ",",
                          ";",
                          ":",
                          "?",
                          "...",
                          "+",
                          "-",
                          "*",
                          "/",
                          "^",
                          "@",
                          "=",
                          "+=",
                          "<",
                          ">",
                          "&&",
                          "!",
                          "~",
                          "++",
                          "x",
                          "f",
                          "1",
                          "2.5",
                          "int",
                          "float",
                          "*?(",
                          "if",
                          "else",
                          "for",
                          "while",
                          "do",
                          "return",
                          "break",
                          "newaxis",
                          "max",
                          "bitcast",
                          "__global__",
                          "void",
                          "true",
                          "\"s\"",
                          "__attribute__((",
                          "typedef",
                          "unsigned"};
  std::mt19937 rng(12345);
  for (int round = 0; round < 300; ++round) {
    std::string src = round % 2 ? "void f() { " : "";
    int n = static_cast<int>(rng() % 60);
    for (int i = 0; i < n; ++i)
      src += std::string(pieces[rng() % std::size(pieces)]) + " ";
    auto p = parse(src);
    SUCCEED();
  }
}

// Random edits of the tokens of a real kernel (deleting, duplicating, swapping
// tokens) must terminate without crashing, and the AST of whatever was parsed
// must dump.
TEST(ParserStress, MutatedKernelTokens) {
  SourceManager sm;
  DiagEngine diags(sm);
  diags.setOutput(nullptr);
  uint32_t file = sm.addBuffer("k.tc", R"(
__global__ void dot(half * A, half * B, float * C, int M, int N, int K,
                    int lda __multipleof(8), int ldb __multipleof(8), int ldc __multipleof(8)) {
  int pm = get_program_id(0);
  int rm[64] = pm * 64 + 0 ... 64;
  int rk[16] = 0 ... 16;
  float c[64, 64] = 0;
  half* pa[64, 16] = A + rk[newaxis, :] * 1 + rm[:, newaxis] * lda;
  bool check[64, 16] = rm[:, newaxis] < M;
  for (int k = K; k > 0; k -= 16) {
    half a[64, 16] = check ? *pa : 0;
    c += a @ ^a;
    pa = pa + 16;
    if (k < 32) { break; } else continue;
  }
  *?(check) (C + rm) = (float)c[:, max] + bitcast<float>(0x7F800000);
  do { M--; } while (M > 0);
  print("done\n", M);
  return;
}
float helper(float x[16]) { return x[+]; }
)");
  const std::vector<Token> original = preprocess(file, {}, sm, diags);
  ASSERT_FALSE(diags.hasErrors());
  std::mt19937 rng(2024);
  for (int round = 0; round < 400; ++round) {
    std::vector<Token> toks(original.begin(), original.end() - 1); // without eof
    int edits = 1 + static_cast<int>(rng() % 5);
    for (int e = 0; e < edits && !toks.empty(); ++e) {
      size_t i = rng() % toks.size(), j = rng() % toks.size();
      switch (rng() % 3) {
      case 0: toks.erase(toks.begin() + static_cast<long>(i)); break;
      case 1: toks.insert(toks.begin() + static_cast<long>(i), toks[j]); break;
      default: std::swap(toks[i], toks[j]); break;
      }
    }
    toks.push_back(original.back());
    DiagEngine d(sm);
    d.setOutput(nullptr);
    auto tu = parseTranslationUnit(toks, d);
    std::ostringstream os;
    dumpAST(*tu, sm, os);
    EXPECT_FALSE(os.str().empty());
  }
}

//===----------------------------------------------------------------------===//
// AST dump
//===----------------------------------------------------------------------===//

TEST(ASTDump, UntypedTree) {
  auto p = parse("__global__ void k(float *X, int n __multipleof(8)) {\n"
                 "  float x[4] = (float)n;\n"
                 "  if (n > 0) *?(n < 4) X = x[:, newaxis][+, :];\n"
                 "  for (;;) { break; }\n"
                 "  print(\"a\\n\", -1.5, true);\n"
                 "}\n");
  ASSERT_FALSE(p->diags.hasErrors()) << p->firstMessage();
  std::ostringstream os;
  dumpAST(*p->tu, p->sm, os);
  EXPECT_EQ(os.str(), "TranslationUnit\n"
                      "  FunctionDecl 'k' kernel <1:17> 'void'\n"
                      "    ParamDecl 'X' <1:26> 'float*'\n"
                      "    ParamDecl 'n' <1:33> 'int32'\n"
                      "      Attribute 'multipleof' <1:35>\n"
                      "        IntLiteralExpr 8 <1:48>\n" // the macro argument as written
                      "    CompoundStmt <1:52>\n"
                      "      DeclStmt <2:3>\n"
                      "        VarDecl 'x' <2:9> 'float'\n"
                      "          Shape\n"
                      "            IntLiteralExpr 4 <2:11>\n"
                      "          CastExpr 'float' <2:16>\n"
                      "            IdentExpr 'n' <2:23>\n"
                      "      IfStmt <3:3>\n"
                      "        BinaryExpr '>' <3:9>\n"
                      "          IdentExpr 'n' <3:7>\n"
                      "          IntLiteralExpr 0 <3:11>\n"
                      "        ExprStmt <3:14>\n"
                      "          AssignExpr '=' <3:26>\n"
                      "            MaskedDerefExpr '*?' <3:14>\n"
                      "              BinaryExpr '<' <3:19>\n"
                      "                IdentExpr 'n' <3:17>\n"
                      "                IntLiteralExpr 4 <3:21>\n"
                      "              IdentExpr 'X' <3:24>\n"
                      "            SubscriptExpr '[+, :]' <3:41>\n"
                      "              SubscriptExpr '[:, newaxis]' <3:29>\n"
                      "                IdentExpr 'x' <3:28>\n"
                      "      ForStmt <4:3>\n"
                      "        <<<NULL>>>\n"
                      "        <<<NULL>>>\n"
                      "        <<<NULL>>>\n"
                      "        CompoundStmt <4:12>\n"
                      "          BreakStmt <4:14>\n"
                      "      ExprStmt <5:3>\n"
                      "        CallExpr 'print' <5:3>\n"
                      "          StringLiteralExpr \"a\\n\" <5:9>\n"
                      "          UnaryExpr '-' <5:16>\n"
                      "            FloatLiteralExpr 1.5 <5:17>\n"
                      "          BoolLiteralExpr true <5:22>\n");
}

TEST(ASTDump, TypesAndConstantsAfterSema) {
  auto p = parse("void f() { x = 1; }");
  ASSERT_FALSE(p->diags.hasErrors());
  // Annotate by hand what sema would.
  auto *assign = firstStmt(*p)->as<ExprStmt>()->expr->as<AssignExpr>();
  assign->typed = true;
  assign->type = ir::Type::tile(DType::F32, {32});
  assign->rhs->typed = true;
  assign->rhs->type = ir::Type::scalar(DType::I32);
  assign->rhs->constant = ConstValue::ofInt(1);
  std::ostringstream os;
  dumpAST(*p->tu, p->sm, os);
  EXPECT_NE(os.str().find("AssignExpr '=' <1:14> 'float[32]'\n"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("IntLiteralExpr 1 <1:16> 'int32' = 1\n"), std::string::npos) << os.str();
}

TEST(ASTDump, MacroExpandedLocationsPointAtTheUse) {
  auto p = parse("#define ADD(a, b) ((a) + (b))\nvoid f() {\n  x = ADD(y, 2);\n}\n");
  ASSERT_FALSE(p->diags.hasErrors()) << p->firstMessage();
  std::ostringstream os;
  dumpAST(*p->tu, p->sm, os);
  EXPECT_NE(os.str().find("BinaryExpr '+' <3:7>"), std::string::npos) << os.str();
}

} // namespace
