// Tests of the C preprocessor (frontend/Preprocessor.h). Expected outputs are
// worked out by hand from the C standard (6.10); the 6.10.3.5 examples are
// copied from the standard with their published results.
#include "frontend/Preprocessor.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

using namespace tc;

namespace {

struct PP {
  SourceManager sm;
  DiagEngine diags{sm};
  PreprocessorOptions opts;
  std::vector<Token> toks;
  uint32_t mainFile = 0;

  PP() { diags.setOutput(nullptr); }

  /// Preprocesses `src` and renders the result without the final newline.
  std::string run(const std::string &src, const std::string &name = "test.tc") {
    mainFile = sm.addBuffer(name, src);
    return finish();
  }
  std::string runFile(const std::string &path) {
    std::string error;
    std::optional<uint32_t> f = sm.loadFile(path, error);
    EXPECT_TRUE(f.has_value()) << error;
    mainFile = f.value_or(0);
    return finish();
  }
  std::string finish() {
    toks = preprocess(mainFile, opts, sm, diags);
    std::string s = renderTokens(toks);
    if (!s.empty() && s.back() == '\n')
      s.pop_back();
    return s;
  }
  std::vector<DiagId> ids() const {
    std::vector<DiagId> r;
    for (const Diagnostic &d : diags.diagnostics())
      r.push_back(d.id);
    return r;
  }
  const Diagnostic &diag(size_t i) const { return diags.diagnostics().at(i); }
  /// The first output token spelled `text`.
  const Token &tok(const std::string &text) const {
    for (const Token &t : toks)
      if (t.text == text)
        return t;
    static Token none;
    ADD_FAILURE() << "no token " << text;
    return none;
  }
};

/// Preprocesses `src`, expecting no diagnostic.
std::string expand(const std::string &src) {
  PP p;
  std::string out = p.run(src);
  for (const Diagnostic &d : p.diags.diagnostics())
    ADD_FAILURE() << "unexpected diagnostic: " << p.diags.render(d);
  return out;
}

/// The diagnostic kinds of preprocessing `src`.
std::vector<DiagId> diagsOf(const std::string &src) {
  PP p;
  p.run(src);
  return p.ids();
}

using Ids = std::vector<DiagId>;

// --- basics -----------------------------------------------------------------

TEST(Preprocessor, PassesTokensThroughAndClassifiesKeywords) {
  PP p;
  EXPECT_EQ(p.run("__global__ void k(float *X) { int x = 1; }"),
            "__global__ void k(float *X) { int x = 1; }");
  ASSERT_FALSE(p.toks.empty());
  EXPECT_EQ(p.toks[0].kind, TokKind::kw_global);
  EXPECT_EQ(p.toks[1].kind, TokKind::kw_void);
  EXPECT_EQ(p.toks[2].kind, TokKind::identifier);
  EXPECT_EQ(p.tok("float").kind, TokKind::kw_float);
  EXPECT_EQ(p.toks.back().kind, TokKind::eof);
}

TEST(Preprocessor, KeywordsFromMacrosAreClassifiedToo) {
  PP p;
  p.opts.defines = {{"TYPE", "half"}};
  EXPECT_EQ(p.run("TYPE x;"), "half x;");
  EXPECT_EQ(p.toks[0].kind, TokKind::kw_half);
}

TEST(Preprocessor, EmptyFileGivesEof) {
  PP p;
  EXPECT_EQ(p.run(""), "");
  ASSERT_EQ(p.toks.size(), 1u);
  EXPECT_EQ(p.toks[0].kind, TokKind::eof);
}

TEST(Preprocessor, ObjectLikeMacros) {
  EXPECT_EQ(expand("#define N 128\n#define M N * 2\nint x = M;"), "int x = 128 * 2;");
  EXPECT_EQ(expand("#define EMPTY\na EMPTY b"), "a b");
  EXPECT_EQ(expand("#define N 1\n#undef N\nN"), "N");
}

TEST(Preprocessor, FunctionLikeMacros) {
  EXPECT_EQ(expand("#define ADD(a, b) ((a) + (b))\nADD(1, 2)"), "((1) + (2))");
  EXPECT_EQ(expand("#define ADD(a,b) ((a)+(b))\nADD(ADD(1,2),3)"), "((((1)+(2)))+(3))");
  EXPECT_EQ(expand("#define ADD(a,b) ((a)+(b))\nADD(f(1,2), (3,4))"), "((f(1,2))+((3,4)))");
  EXPECT_EQ(expand("#define F(x) [x]\nF()"), "[]");
  EXPECT_EQ(expand("#define Z() z\nZ()"), "z");
  EXPECT_EQ(expand("#define T(a,b) a|b\nT(,)"), "|");
  // Not followed by '(': not an invocation.
  EXPECT_EQ(expand("#define F(x) [x]\nF + F"), "F + F");
  // White space and newlines may separate the name from '('.
  EXPECT_EQ(expand("#define F(x) [x]\nF (1) F\n(2)"), "[1] [2]");
  // A space before '(' in the definition makes it object-like.
  EXPECT_EQ(expand("#define O (x) x\nO"), "(x) x");
}

TEST(Preprocessor, ArgumentsAreExpandedBeforeSubstitution) {
  EXPECT_EQ(expand("#define N 4\n#define SQ(x) ((x)*(x))\nSQ(N)"), "((4)*(4))");
  EXPECT_EQ(expand("#define ID(x) x\n#define N 4\nID(ID(ID(N)))"), "4");
}

TEST(Preprocessor, VariadicMacros) {
  EXPECT_EQ(expand("#define V(fmt, ...) p(fmt, __VA_ARGS__)\nV(\"a\", 1, (2, 3))"),
            "p(\"a\", 1, (2, 3))");
  EXPECT_EQ(expand("#define V(fmt, ...) p(fmt, __VA_ARGS__)\nV(\"a\")"), "p(\"a\",)");
  EXPECT_EQ(expand("#define V(...) [__VA_ARGS__]\nV()"), "[]");
  EXPECT_EQ(expand("#define N(args...) f(args)\nN(1, 2)"), "f(1, 2)");
  // GNU `, ## __VA_ARGS__` drops the comma when there are no variable arguments.
  EXPECT_EQ(expand("#define W(fmt, ...) p(fmt, ## __VA_ARGS__)\nW(\"a\") W(\"b\", 1)"),
            "p(\"a\") p(\"b\", 1)");
}

TEST(Preprocessor, Stringize) {
  EXPECT_EQ(expand("#define S(x) #x\nS(  a   +  b  )"), "\"a + b\"");
  EXPECT_EQ(expand("#define S(x) #x\nS(\"q\\n\")"), R"("\"q\\n\"")");
  EXPECT_EQ(expand("#define S(x) #x\nS('\"')"), R"("'\"'")");
  EXPECT_EQ(expand("#define S(x) #x\nS()"), "\"\"");
  EXPECT_EQ(expand("#define S(x) #x\nS(a\n b)"), "\"a b\"");
  // The argument is not macro-expanded; through another macro it is.
  EXPECT_EQ(expand("#define S(x) #x\n#define XS(x) S(x)\n#define N 4\nS(N) XS(N)"), "\"N\" \"4\"");
  // In an object-like macro '#' is an ordinary token.
  EXPECT_EQ(expand("#define H # x\nH"), "# x");
}

TEST(Preprocessor, Paste) {
  EXPECT_EQ(expand("#define CAT(a,b) a##b\nCAT(x,1) CAT(,y) CAT(z,) [CAT(,)]"), "x1 y z []");
  PP p;
  EXPECT_EQ(p.run("#define CAT(a,b) a ## b\nCAT(+,=)"), "+=");
  EXPECT_EQ(p.toks[0].kind, TokKind::plusequal);
  // The pasted identifier is rescanned.
  EXPECT_EQ(expand("#define CAT(a,b) a##b\n#define XY 42\nCAT(X,Y)"), "42");
  // Operands of ## are not expanded first.
  EXPECT_EQ(expand("#define CAT(a,b) a##b\n#define N 4\nCAT(N,N)"), "NN");
  EXPECT_EQ(expand("#define T(a,b,c) a ## b ## c\nT(1,2,3) T(,,4)"), "123 4");
  EXPECT_EQ(expand("#define P x ## y\nP"), "xy");
}

TEST(Preprocessor, InvalidPasteIsAnError) {
  PP p;
  p.run("#define CAT(a,b) a##b\nCAT(+,-)\nCAT(/,/)");
  EXPECT_EQ(p.ids(), (Ids{DiagId::err_pp_invalid_paste, DiagId::err_pp_invalid_paste}));
  EXPECT_EQ(p.diag(0).message, "pasting formed '+-', an invalid preprocessing token");
  EXPECT_EQ(p.diag(1).message, "pasting formed '//', an invalid preprocessing token");
  EXPECT_EQ(p.sm.outermost(p.diag(0).loc).line, 2u);
}

// --- recursion: the hide-set / painted-blue rule --------------------------

TEST(Preprocessor, SelfReferenceIsNotExpandedAgain) {
  PP p;
  EXPECT_EQ(p.run("#define A A\nA"), "A");
  EXPECT_TRUE(p.toks[0].noExpand);
  EXPECT_EQ(expand("#define A 1 + A\nA"), "1 + A");
  EXPECT_EQ(expand("#define f1 g1\n#define g1 f1\nf1 g1"), "f1 g1");
  EXPECT_EQ(expand("#define a b\n#define b c\n#define c a\na b c"), "a b c");
  EXPECT_EQ(expand("#define foo(x) bar x\nfoo(foo) (2)"), "bar foo (2)");
  // A painted token stays painted when it is an argument later.
  EXPECT_EQ(expand("#define ID(x) x\n#define g ID(g)\ng"), "g");
}

// C 6.10.3.4 p4 example: either result is allowed; ours is 2*9*g.
TEST(Preprocessor, RescanMayContinuePastTheMacroEnd) {
  EXPECT_EQ(expand("#define f(a) a*g\n#define g(a) f(a)\nf(2)(9)"), "2*9*g");
}

// C 6.10.3.5 EXAMPLE 3.
TEST(Preprocessor, StandardExample3) {
  std::string src = R"(#define x 3
#define f(a) f(x * (a))
#undef x
#define x 2
#define g f
#define z z[0]
#define h g(~
#define m(a) a(w)
#define w 0,1
#define t(a) a
#define p() int
#define q(x) x
#define r(x,y) x ## y
#define str(x) # x
f(y+1) + f(f(z)) % t(t(g)(0) + t)(1);
g(x+(3,4)-w) | h 5) & m
(f)^m(m);
p() i[q()] = { q(1), r(2,3), r(4,), r(,5), r(,) };
char c[2][6] = { str(hello), str() };)";
  EXPECT_EQ(expand(src), "f(2 * (y+1)) + f(2 * (f(2 * (z[0])))) % f(2 * (0)) + t(1);\n"
                         "f(2 * (2+(3,4)-0,1)) | f(2 * (~ 5)) & f(2 * (0,1))^m(0,1);\n"
                         "int i[] = { 1, 23, 4, 5, };\n"
                         "char c[2][6] = { \"hello\", \"\" };");
}

// C 6.10.3.5 EXAMPLE 4 (without the #include line).
TEST(Preprocessor, StandardExample4) {
  std::string src = R"(#define str(s) # s
#define xstr(s) str(s)
#define debug(s, t) printf("x" # s "= %d, x" # t "= %s", \
 x ## s, x ## t)
#define INCFILE(n) vers ## n
#define glue(a, b) a ## b
#define xglue(a, b) glue(a, b)
#define HIGHLOW "hello"
#define LOW LOW ", world"
debug(1, 2);
fputs(str(strncmp("abc\0d", "abc", '\4') // this goes away
 == 0) str(: @\n), s);
xstr(INCFILE(2).h)
glue(HIGH, LOW);
xglue(HIGH, LOW))";
  EXPECT_EQ(expand(src), "printf(\"x\" \"1\" \"= %d, x\" \"2\" \"= %s\", x1, x2);\n"
                         R"(fputs("strncmp(\"abc\\0d\", \"abc\", '\\4') == 0" ": @\n", s);)"
                         "\n\"vers2.h\"\n"
                         "\"hello\";\n"
                         "\"hello\" \", world\"");
}

// C 6.10.3.5 EXAMPLE 5: placemarkers.
TEST(Preprocessor, StandardExample5) {
  std::string src = "#define t(x,y,z) x ## y ## z\n"
                    "int j[] = { t(1,2,3), t(,4,5), t(6,,7), t(8,9,),\n"
                    " t(10,,), t(,11,), t(,,12), t(,,) };";
  EXPECT_EQ(expand(src), "int j[] = { 123, 45, 67, 89,\n10, 11, 12, };");
}

// C 6.10.3.5 EXAMPLE 7: variable arguments.
TEST(Preprocessor, StandardExample7) {
  std::string src = R"(#define debug(...) fprintf(stderr, __VA_ARGS__)
#define showlist(...) puts(#__VA_ARGS__)
#define report(test, ...) ((test)?puts(#test):\
 printf(__VA_ARGS__))
debug("Flag");
debug("X = %d\n", x);
showlist(The first, second, and third items.);
report(x>y, "x is %d but y is %d", x, y);)";
  EXPECT_EQ(expand(src), "fprintf(stderr, \"Flag\");\n"
                         "fprintf(stderr, \"X = %d\\n\", x);\n"
                         "puts(\"The first, second, and third items.\");\n"
                         "((x>y)?puts(\"x>y\"): printf(\"x is %d but y is %d\", x, y));");
}

// --- #define errors and redefinition ----------------------------------------

TEST(Preprocessor, RedefinitionWarnsWithANote) {
  PP p;
  EXPECT_EQ(p.run("#define A 1\n#define A 2\nA"), "2");
  ASSERT_EQ(p.ids(), (Ids{DiagId::warn_pp_macro_redefined, DiagId::note_pp_previous_definition}));
  EXPECT_EQ(p.diag(0).loc.line, 2u);
  EXPECT_EQ(p.diag(0).loc.col, 9u);
  EXPECT_EQ(p.diag(1).loc.line, 1u);
  EXPECT_EQ(p.diag(1).loc.col, 9u);
  // The same definition (white space amounts aside) is fine.
  EXPECT_EQ(diagsOf("#define A 1 +  2\n#define A 1 + 2\n#define F(x) x\n#define F(x)  x"), Ids{});
  EXPECT_EQ(diagsOf("#define A 1+2\n#define A 1 + 2"),
            (Ids{DiagId::warn_pp_macro_redefined, DiagId::note_pp_previous_definition}));
  EXPECT_EQ(diagsOf("#define F(x) x\n#define F(y) y"),
            (Ids{DiagId::warn_pp_macro_redefined, DiagId::note_pp_previous_definition}));
}

TEST(Preprocessor, DefineErrors) {
  EXPECT_EQ(diagsOf("#define"), Ids{DiagId::err_pp_macro_name_missing});
  EXPECT_EQ(diagsOf("#define 1 2"), Ids{DiagId::err_pp_macro_name_not_identifier});
  EXPECT_EQ(diagsOf("#define defined 1"), Ids{DiagId::err_pp_defined_as_macro_name});
  EXPECT_EQ(diagsOf("#define F(x #x"), Ids{DiagId::err_pp_invalid_macro_param});
  EXPECT_EQ(diagsOf("#define F(x"), Ids{DiagId::err_pp_missing_rparen_in_params});
  EXPECT_EQ(diagsOf("#define F(x,"), Ids{DiagId::err_pp_missing_rparen_in_params});
  EXPECT_EQ(diagsOf("#define F(1) x"), Ids{DiagId::err_pp_invalid_macro_param});
  EXPECT_EQ(diagsOf("#define F(..., x) x"), Ids{DiagId::err_pp_invalid_macro_param});
  EXPECT_EQ(diagsOf("#define F(x, x) x"), Ids{DiagId::err_pp_duplicate_macro_param});
  EXPECT_EQ(diagsOf("#define F(x) #y"), Ids{DiagId::err_pp_stringize_not_param});
  EXPECT_EQ(diagsOf("#define F(x) x #"), Ids{DiagId::err_pp_stringize_not_param});
  EXPECT_EQ(diagsOf("#define F(x) ## x"), Ids{DiagId::err_pp_hashhash_at_edge});
  EXPECT_EQ(diagsOf("#define F x ##"), Ids{DiagId::err_pp_hashhash_at_edge});
  EXPECT_EQ(diagsOf("#define F(x) __VA_ARGS__"), Ids{DiagId::err_pp_va_args_not_variadic});
  EXPECT_EQ(diagsOf("#define F __VA_ARGS__"), Ids{DiagId::err_pp_va_args_not_variadic});
  EXPECT_EQ(diagsOf("#define F(__VA_ARGS__) 1"), Ids{DiagId::err_pp_va_args_not_variadic});
  // A rejected definition defines nothing.
  EXPECT_EQ(PP().run("#define F(x) #y\nF(1)"), "F(1)");
}

TEST(Preprocessor, MacroCallErrors) {
  PP p;
  EXPECT_EQ(p.run("#define F(a, b) a b\nF(1)\nF(1, 2, 3)\nok"), "ok");
  ASSERT_EQ(p.ids(), (Ids{DiagId::err_pp_too_few_macro_args, DiagId::note_pp_macro_defined_here,
                          DiagId::err_pp_too_many_macro_args, DiagId::note_pp_macro_defined_here}));
  EXPECT_EQ(p.diag(0).message,
            "too few arguments provided to function-like macro 'F' (expected 2, got 1)");
  EXPECT_EQ(p.diag(0).loc.line, 2u);
  EXPECT_EQ(p.diag(1).loc.line, 1u);
  EXPECT_EQ(diagsOf("#define Z() z\nZ(1)"),
            (Ids{DiagId::err_pp_too_many_macro_args, DiagId::note_pp_macro_defined_here}));
  EXPECT_EQ(diagsOf("#define F(x) x\nF(1, (2"), Ids{DiagId::err_pp_unterminated_macro_call});
  EXPECT_EQ(diagsOf("#define F(x) x\nF(1,\n#define G\n)"),
            (Ids{DiagId::err_pp_directive_in_macro_args}));
}

// --- locations of expanded tokens ----------------------------------------

TEST(Preprocessor, ExpansionLocations) {
  PP p;
  EXPECT_EQ(p.run("#define ONE 1\n#define ADD(a, b) a + b + ONE\nADD(x, y)"), "x + y + 1");
  ASSERT_EQ(p.toks.size(), 6u);
  // Argument tokens keep their own location.
  const Token &x = p.toks[0], &plus = p.toks[1], &y = p.toks[2], &one = p.toks[4];
  EXPECT_EQ(x.loc.line, 3u);
  EXPECT_EQ(x.loc.col, 5u);
  EXPECT_EQ(y.loc.col, 8u);
  // Body tokens: spelled in the definition, inside the expansion of ADD at 3:1.
  EXPECT_EQ(plus.loc.line, 2u);
  EXPECT_EQ(plus.loc.col, 21u);
  ASSERT_NE(plus.loc.expansion, 0u);
  const MacroExpansion &add = p.sm.expansion(plus.loc.expansion);
  EXPECT_EQ(add.macro, "ADD");
  EXPECT_EQ(add.definition.line, 2u);
  EXPECT_EQ(add.definition.col, 9u);
  EXPECT_EQ(add.use.line, 3u);
  EXPECT_EQ(add.use.col, 1u);
  EXPECT_EQ(add.use.expansion, 0u);
  // Nested: 1 comes from ONE, used at 2:27 inside ADD's expansion.
  EXPECT_EQ(one.loc.line, 1u);
  EXPECT_EQ(one.loc.col, 13u);
  const MacroExpansion &oneExp = p.sm.expansion(one.loc.expansion);
  EXPECT_EQ(oneExp.macro, "ONE");
  EXPECT_EQ(oneExp.use.line, 2u);
  EXPECT_EQ(oneExp.use.col, 27u);
  EXPECT_EQ(oneExp.use.expansion, plus.loc.expansion);
  SourceLoc outer = p.sm.outermost(one.loc);
  EXPECT_EQ(outer.line, 3u);
  EXPECT_EQ(outer.col, 1u);
}

TEST(Preprocessor, PastedAndStringizedTokensAreAtTheOperator) {
  PP p;
  // '##' is at column 16, '#' at column 21.
  EXPECT_EQ(p.run("#define F(a) a ## b #a\nF(x)"), "xb \"x\"");
  const Token &xb = p.toks[0], &str = p.toks[1];
  EXPECT_EQ(xb.loc.line, 1u);
  EXPECT_EQ(xb.loc.col, 16u);
  EXPECT_NE(xb.loc.expansion, 0u);
  EXPECT_EQ(str.loc.col, 21u);
  EXPECT_EQ(str.loc.expansion, xb.loc.expansion);
}

TEST(Preprocessor, DiagnosticInAMacroRendersExpansionNotes) {
  PP p;
  p.run("#define BAD(x) (x $)\nint y = BAD(1);");
  ASSERT_EQ(p.ids(), Ids{DiagId::err_lex_stray_char});
  std::string r = p.diags.render(p.diag(0));
  EXPECT_EQ(r, "test.tc:2:9: error: stray '$' in program\n"
               "int y = BAD(1);\n"
               "        ^\n"
               "test.tc:1:19: note: expanded from macro 'BAD'\n"
               "#define BAD(x) (x $)\n"
               "                  ^\n");
}

// --- #if -----------------------------------------------------------------

/// Whether `#if expr` takes its group, expecting no diagnostic.
bool ifTrue(const std::string &expr, const std::string &defs = "") {
  PP p;
  std::string out = p.run(defs + "#if " + expr + "\nyes\n#else\nno\n#endif\n");
  EXPECT_TRUE(p.diags.diagnostics().empty())
      << expr << ": " << (p.diags.diagnostics().empty() ? "" : p.diag(0).message);
  EXPECT_TRUE(out == "yes" || out == "no") << out;
  return out == "yes";
}

TEST(Preprocessor, IfArithmetic) {
  // Each value worked out by hand with C's rules.
  EXPECT_TRUE(ifTrue("1 + 2 * 3 == 7"));
  EXPECT_TRUE(ifTrue("(1 + 2) * 3 == 9"));
  EXPECT_TRUE(ifTrue("1 - 2 - 3 == -4")); // left associative
  EXPECT_TRUE(ifTrue("100 / 10 / 5 == 2"));
  EXPECT_TRUE(ifTrue("10 / 3 == 3"));
  EXPECT_TRUE(ifTrue("-7 / 2 == -3")); // truncates toward zero
  EXPECT_TRUE(ifTrue("-7 % 2 == -1"));
  EXPECT_TRUE(ifTrue("7 % -2 == 1"));
  EXPECT_TRUE(ifTrue("1 << 4 == 16"));
  EXPECT_TRUE(ifTrue("256 >> 4 == 16"));
  EXPECT_TRUE(ifTrue("-16 >> 2 == -4")); // arithmetic shift of a signed value
  EXPECT_TRUE(ifTrue("0x10 == 16 && 0XfF == 255 && 010 == 8 && 0b101 == 5"));
  EXPECT_TRUE(ifTrue("10u == 10 && 255L == 255 && 1ull == 1 && 7LU == 7"));
  EXPECT_TRUE(ifTrue("'A' == 65 && '\\n' == 10 && '\\x41' == 65 && '\\101' == 65"));
  EXPECT_TRUE(ifTrue("'\\0' == 0 && '\\\\' == 92 && '\\'' == 39"));
  EXPECT_TRUE(ifTrue("'\\377' == -1")); // char is signed
  EXPECT_TRUE(ifTrue("'ab' == 24930")); // 97 * 256 + 98
  EXPECT_TRUE(ifTrue("-1 < 0"));
  EXPECT_FALSE(ifTrue("-1 < 0u")); // -1 converts to UINTMAX_MAX
  EXPECT_TRUE(ifTrue("-1 > 0u"));
  EXPECT_TRUE(ifTrue("18446744073709551615 == -1")); // too big for intmax_t: unsigned
  EXPECT_TRUE(ifTrue("~0 == -1 && ~0u == 18446744073709551615u"));
  EXPECT_TRUE(ifTrue("!0 == 1 && !5 == 0"));
  EXPECT_TRUE(ifTrue("-(-3) == 3 && +3 == 3 && - - 3 == 3"));
  EXPECT_FALSE(ifTrue("3 & 5 == 1")); // == binds tighter: 3 & 0
  EXPECT_TRUE(ifTrue("(3 & 5) == 1 && (3 | 5) == 7 && (3 ^ 5) == 6"));
  EXPECT_TRUE(ifTrue("2 > 1 > 0"));  // (2 > 1) > 0
  EXPECT_FALSE(ifTrue("3 > 2 > 1")); // (3 > 2) > 1 is 1 > 1
  EXPECT_TRUE(ifTrue("1 <= 1 && 1 >= 1 && 1 != 2 && !(1 < 1)"));
  EXPECT_TRUE(ifTrue("(1 ? 2 : 3) == 2 && (0 ? 2 : 3) == 3"));
  EXPECT_TRUE(ifTrue("0 ? 0 : 1 ? 5 : 6")); // right associative: 0 ? 0 : (1 ? 5 : 6)
  EXPECT_TRUE(ifTrue("(0 || 0) == 0 && (0 || 7) == 1 && (2 && 3) == 1"));
  EXPECT_TRUE(ifTrue("-9223372036854775807 - 1 < 0"));
  EXPECT_FALSE(ifTrue("0"));
  EXPECT_TRUE(ifTrue("(((1)))"));
}

TEST(Preprocessor, IfIdentifiersAndDefined) {
  EXPECT_FALSE(ifTrue("UNKNOWN"));
  EXPECT_TRUE(ifTrue("UNKNOWN == 0"));
  EXPECT_TRUE(ifTrue("true && !false"));
  EXPECT_TRUE(
      ifTrue("defined(FOO) && defined FOO && !defined(BAR) && !defined BAR", "#define FOO\n"));
  EXPECT_TRUE(ifTrue("N * 2 == 16", "#define N 8\n"));
  // The operand of `defined` is not expanded.
  EXPECT_TRUE(ifTrue("defined(A)", "#define A B\n"));
  EXPECT_TRUE(ifTrue("SQ(3) == 9", "#define SQ(x) ((x)*(x))\n"));
  // `defined` produced by a macro (as compilers do); its operand is not expanded.
  EXPECT_TRUE(ifTrue("HAS_FOO", "#define FOO\n#define HAS_FOO defined(FOO)\n"));
  EXPECT_TRUE(ifTrue("HAS_FOO", "#define FOO\n#define HAS_FOO defined FOO\n"));
  EXPECT_TRUE(ifTrue("defined FOO && defined(FOO)", "#define FOO\n"));
}

TEST(Preprocessor, IfShortCircuitsErrors) {
  EXPECT_FALSE(ifTrue("0 && 1 / 0"));
  EXPECT_TRUE(ifTrue("1 || 1 % 0"));
  EXPECT_TRUE(ifTrue("0 ? 1 / 0 : 2"));
  EXPECT_TRUE(ifTrue("1 ? 2 : 1 / 0"));
}

TEST(Preprocessor, IfErrors) {
  EXPECT_EQ(diagsOf("#if 1 / 0\n#endif"), Ids{DiagId::err_pp_division_by_zero});
  EXPECT_EQ(diagsOf("#if 1 % (2 - 2)\n#endif"), Ids{DiagId::err_pp_remainder_by_zero});
  EXPECT_EQ(diagsOf("#if\n#endif"), Ids{DiagId::err_pp_expected_value_in_expr});
  EXPECT_EQ(diagsOf("#if 1 +\n#endif"), Ids{DiagId::err_pp_expected_value_in_expr});
  EXPECT_EQ(diagsOf("#if (1\n#endif"), Ids{DiagId::err_pp_expected_rparen_in_expr});
  EXPECT_EQ(diagsOf("#if 1 ? 2\n#endif"), Ids{DiagId::err_pp_expected_colon_in_expr});
  EXPECT_EQ(diagsOf("#if 1 2\n#endif"), Ids{DiagId::err_pp_missing_binary_op});
  EXPECT_EQ(diagsOf("#if 1.0\n#endif"), Ids{DiagId::err_pp_float_in_expr});
  EXPECT_EQ(diagsOf("#if 08\n#endif"), Ids{DiagId::err_pp_invalid_integer});
  EXPECT_EQ(diagsOf("#if 1x\n#endif"), Ids{DiagId::err_pp_invalid_integer});
  EXPECT_EQ(diagsOf("#if 99999999999999999999\n#endif"), Ids{DiagId::err_pp_integer_too_large});
  EXPECT_EQ(diagsOf("#if \"s\"\n#endif"), Ids{DiagId::err_pp_invalid_token_in_expr});
  EXPECT_EQ(diagsOf("#if ''\n#endif"), Ids{DiagId::err_pp_invalid_char_constant});
  EXPECT_EQ(diagsOf("#if * 2\n#endif"), Ids{DiagId::err_pp_expected_value_in_expr});
  EXPECT_EQ(diagsOf("#if defined\n#endif"), Ids{DiagId::err_pp_defined_requires_identifier});
  EXPECT_EQ(diagsOf("#if defined(1)\n#endif"), Ids{DiagId::err_pp_defined_requires_identifier});
  EXPECT_EQ(diagsOf("#if defined(X\n#endif"), Ids{DiagId::err_pp_defined_missing_rparen});
  EXPECT_EQ(diagsOf("#if $\n#endif"), Ids{DiagId::err_pp_invalid_token_in_expr});
  // An error counts as false.
  EXPECT_EQ(PP().run("#if 1 / 0\nyes\n#else\nno\n#endif"), "no");
  // Location of the division by zero: the operator.
  PP p;
  p.run("#if 4 / (1 - 1)\n#endif");
  EXPECT_EQ(p.diag(0).loc.col, 7u);
}

TEST(Preprocessor, IfNestingIsBounded) {
  std::string deep = "#if " + std::string(1000, '(') + "1" + std::string(1000, ')') + "\n#endif";
  EXPECT_EQ(diagsOf(deep), Ids{DiagId::err_pp_expr_too_deep});
  std::string unary = "#if ";
  for (int i = 0; i < 1000; ++i)
    unary += "- ";
  unary += "1\n#endif";
  EXPECT_EQ(diagsOf(unary), Ids{DiagId::err_pp_expr_too_deep});
}

// --- conditional groups ------------------------------------------------------

TEST(Preprocessor, ConditionalGroups) {
  std::string src =
      "#define TWO 2\n"
      "#if TWO == 1\none\n#elif TWO == 2\ntwo\n#elif 1 / 0\nbad\n#else\nelse\n#endif\n"
      "#ifdef TWO\nd\n#endif\n#ifndef TWO\nnd\n#else\nnotnd\n#endif\n"
      "#if 0\n#if garbage (((\n#error no\n#else\n#endif\nskipped\n#elif 1\nelif\n#endif";
  EXPECT_EQ(expand(src), "two\nd\nnotnd\nelif");
  EXPECT_EQ(expand("#if 0\nA\n#elif 0\nB\n#else\nC\n#endif"), "C");
  EXPECT_EQ(expand("#if 1\n#if 0\nA\n#else\nB\n#endif\n#else\nC\n#endif"), "B");
  // Directives in skipped groups are not checked beyond nesting.
  EXPECT_EQ(expand("#if 0\n#foo\n#include <x>\n#define 1\n$ 'unterminated\n#endif\nok"), "ok");
}

TEST(Preprocessor, UnbalancedConditionals) {
  PP p;
  p.run("x\n#if 1\n#ifdef X\n");
  ASSERT_EQ(p.ids(), (Ids{DiagId::err_pp_unterminated_conditional,
                          DiagId::err_pp_unterminated_conditional}));
  EXPECT_EQ(p.diag(0).loc.line, 2u);
  EXPECT_EQ(p.diag(0).loc.col, 2u);
  EXPECT_EQ(p.diag(1).loc.line, 3u);
  EXPECT_EQ(diagsOf("#endif"), Ids{DiagId::err_pp_directive_without_if});
  EXPECT_EQ(diagsOf("#else"), Ids{DiagId::err_pp_directive_without_if});
  EXPECT_EQ(diagsOf("#elif 1"), Ids{DiagId::err_pp_directive_without_if});
  EXPECT_EQ(diagsOf("#if 1\n#else\n#else\n#endif"),
            (Ids{DiagId::err_pp_else_after_else, DiagId::note_pp_previous_else}));
  EXPECT_EQ(diagsOf("#if 0\n#else\n#else\n#endif"),
            (Ids{DiagId::err_pp_else_after_else, DiagId::note_pp_previous_else}));
  EXPECT_EQ(diagsOf("#if 1\n#else\n#elif 1\n#endif"),
            (Ids{DiagId::err_pp_elif_after_else, DiagId::note_pp_previous_else}));
  EXPECT_EQ(diagsOf("#if 0\n#else\n#elif 1\n#endif"),
            (Ids{DiagId::err_pp_elif_after_else, DiagId::note_pp_previous_else}));
  EXPECT_EQ(diagsOf("#ifdef\n#endif"), Ids{DiagId::err_pp_macro_name_missing});
  EXPECT_EQ(diagsOf("#ifndef 3\n#endif"), Ids{DiagId::err_pp_macro_name_not_identifier});
  EXPECT_EQ(diagsOf("#ifdef A B\n#endif C"),
            (Ids{DiagId::warn_pp_extra_tokens, DiagId::warn_pp_extra_tokens}));
}

// --- other directives ----------------------------------------------------

TEST(Preprocessor, ErrorWarningPragmaLineNull) {
  PP p;
  EXPECT_EQ(p.run("#error this is   bad\n#warning careful now\n#pragma unroll 4\n#\n# \nok"), "ok");
  ASSERT_EQ(p.ids(), (Ids{DiagId::err_pp_error_directive, DiagId::warn_pp_warning_directive}));
  EXPECT_EQ(p.diag(0).message, "this is bad");
  EXPECT_EQ(p.diag(0).loc.line, 1u);
  EXPECT_EQ(p.diag(1).message, "careful now");
  EXPECT_EQ(diagsOf("#line 5"), Ids{DiagId::err_not_supported});
  EXPECT_EQ(diagsOf("#foo bar"), Ids{DiagId::err_pp_invalid_directive});
  EXPECT_EQ(diagsOf("# 1 \"file\""), Ids{DiagId::err_pp_invalid_directive});
  EXPECT_EQ(diagsOf("#undef"), Ids{DiagId::err_pp_macro_name_missing});
  EXPECT_EQ(diagsOf("#undef X Y"), Ids{DiagId::warn_pp_extra_tokens});
  EXPECT_EQ(diagsOf("#undef 1"), Ids{DiagId::err_pp_macro_name_not_identifier});
  // '#' not at the start of a line is an ordinary token.
  EXPECT_EQ(expand("a # define"), "a # define");
}

TEST(Preprocessor, FileAndLine) {
  PP p;
  std::string src = "#define L __LINE__\n"
                    "#define F(x) x\n"
                    "__LINE__ L\n" // 3 3
                    "F(\n"
                    "  __LINE__) F(L)\n" // 5 5
                    "__FILE__";
  EXPECT_EQ(p.run(src, "dir/k.tc"), "3 3\n5 5\n\"dir/k.tc\"");
  EXPECT_EQ(p.toks[0].kind, TokKind::numeric_constant);
  EXPECT_EQ(p.toks.back().kind, TokKind::eof);
  EXPECT_EQ(p.toks[4].kind, TokKind::string_literal);
  EXPECT_TRUE(ifTrue("__LINE__ == 1"));
}

TEST(Preprocessor, PredefinedMacros) {
  EXPECT_EQ(expand("int8 int16 int32 int64"), "char short int long");
  EXPECT_EQ(expand("uint8 uint16 uint32 uint64"),
            "unsigned char unsigned short unsigned int unsigned long");
  EXPECT_EQ(expand("float *X __multipleof(16) __aligned(8) __noalias __readonly __writeonly"),
            "float *X __attribute__((multipleof(16))) __attribute__((aligned(8))) "
            "__attribute__((noalias)) __attribute__((readonly)) __attribute__((writeonly))");
  EXPECT_EQ(expand("F32_INFINITY F16_INFINITY"),
            "bitcast<float>(0x7F800000) bitcast<half>((short)0x7C00)");
  EXPECT_TRUE(ifTrue("__TRITON_C__ == 1"));
  PP p;
  p.run("int32");
  EXPECT_EQ(p.toks[0].kind, TokKind::kw_int);
  EXPECT_EQ(p.sm.name(p.toks[0].loc.file), "<built-in>");
  EXPECT_EQ(p.sm.expansion(p.toks[0].loc.expansion).macro, "int32");
  // They can be redefined (with the usual warning) and undefined.
  EXPECT_EQ(diagsOf("#define int8 signed char"),
            (Ids{DiagId::warn_pp_macro_redefined, DiagId::note_pp_previous_definition}));
  EXPECT_EQ(expand("#undef int8\nint8"), "int8");
}

// --- command line ------------------------------------------------------------

TEST(Preprocessor, CommandLineDefines) {
  PP p;
  p.opts.defines = {{"TYPE", "float"}, {"N", "4"}, {"F(x)", "x+1"}, {"E", ""}};
  EXPECT_EQ(p.run("TYPE N F(2) [E]"), "float 4 2+1 []");
  EXPECT_TRUE(p.diags.diagnostics().empty());
  EXPECT_EQ(p.sm.name(p.toks[0].loc.file), "<command line>");
}

TEST(Preprocessor, CommandLineOrderAndUndefines) {
  PP p;
  p.opts.defines = {{"A", "1"}, {"B", "2"}, {"A", "3"}};
  p.opts.undefines = {"B", "NOT_DEFINED"};
  EXPECT_EQ(p.run("A B"), "3 B");
  ASSERT_EQ(p.ids(), (Ids{DiagId::warn_pp_macro_redefined, DiagId::note_pp_previous_definition}));
  EXPECT_EQ(p.sm.name(p.diag(0).loc.file), "<command line>");
}

TEST(Preprocessor, CommandLineErrors) {
  PP p;
  p.opts.defines = {{"1X", "1"}, {"A B", "1"}, {"", "1"}, {"OK", "1 / 0"}, {"V", "1 $"}};
  p.opts.undefines = {"2"};
  EXPECT_EQ(p.run("#if OK\n#endif\nV"), "1 $");
  ASSERT_EQ(p.ids(),
            (Ids{DiagId::err_pp_macro_name_not_identifier, DiagId::err_pp_macro_name_not_identifier,
                 DiagId::err_pp_macro_name_not_identifier, DiagId::err_pp_macro_name_not_identifier,
                 DiagId::err_pp_division_by_zero, DiagId::err_lex_stray_char}));
  for (size_t i = 0; i < 6; ++i)
    EXPECT_EQ(p.sm.name(p.diag(i).loc.file), "<command line>") << i;
  EXPECT_EQ(p.diag(0).loc.col, 9u);
  // The division is at "#define OK 1 / 0" column 14, used at test.tc:1.
  EXPECT_EQ(p.diag(4).loc.col, 14u);
  EXPECT_EQ(p.sm.name(p.sm.outermost(p.diag(4).loc).file), "test.tc");
}

// --- #include ------------------------------------------------------------

class IncludeTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tc_pp_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
            "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "sub");
    std::filesystem::create_directories(dir_ / "inc");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string &name, const std::string &text) {
    std::filesystem::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::filesystem::path dir_;
};

TEST_F(IncludeTest, GuardsRelativePathsAndIncludeDirs) {
  write("a.h", "#ifndef A_H\n#define A_H\n#define A 1\nint a;\n#endif\n");
  write("sub/b.h", "#include \"c.h\"\n#define B C\n");
  write("sub/c.h", "#define C 3\n");
  write("inc/d.h", "int d;\n");
  write("once.h", "#pragma once\nint once;\n");
  std::string main = write("main.tc", "#include \"a.h\"\n#include \"a.h\"\n#include "
                                      "\"sub/b.h\"\n#include \"d.h\"\n#include \"once.h\"\n"
                                      "#include \"once.h\"\nx = A + B;\n");
  PP p;
  p.opts.includeDirs = {(dir_ / "inc").string()};
  EXPECT_EQ(p.runFile(main), "int a;\nint d;\nint once;\nx = 1 + 3;");
  EXPECT_TRUE(p.diags.diagnostics().empty());
  EXPECT_EQ(p.sm.name(p.tok("d").loc.file), (dir_ / "inc" / "d.h").string());
}

TEST_F(IncludeTest, IncludeThroughAMacro) {
  write("x.h", "int x;\n");
  std::string main = write("main.tc", "#define HDR \"x.h\"\n#include HDR\n");
  PP p;
  EXPECT_EQ(p.runFile(main), "int x;");
  EXPECT_TRUE(p.diags.diagnostics().empty());
}

TEST_F(IncludeTest, MissingFileIsAnErrorAtTheDirective) {
  std::string main = write("main.tc", "a\n#include \"nope.h\"\nb\n");
  PP p;
  EXPECT_EQ(p.runFile(main), "a\nb");
  ASSERT_EQ(p.ids(), Ids{DiagId::err_pp_file_not_found});
  EXPECT_EQ(p.diag(0).message, "'nope.h' file not found");
  EXPECT_EQ(p.diag(0).loc.line, 2u);
  EXPECT_EQ(p.diag(0).loc.col, 10u);
}

TEST_F(IncludeTest, RecursionHitsTheDepthLimit) {
  std::string self = write("self.h", "#include \"self.h\"\n#include \"self.h\"\nx\n");
  PP p;
  p.diags.setErrorLimit(0);
  p.runFile(self);
  EXPECT_EQ(p.ids(), Ids{DiagId::err_pp_include_too_deep});
  EXPECT_EQ(p.toks.back().kind, TokKind::eof);
}

TEST_F(IncludeTest, ConditionalsDoNotCrossFiles) {
  write("open.h", "#if 1\n");
  write("close.h", "#endif\n");
  std::string main = write("main.tc", "#include \"open.h\"\n#include \"close.h\"\n");
  PP p;
  p.runFile(main);
  EXPECT_EQ(p.ids(),
            (Ids{DiagId::err_pp_unterminated_conditional, DiagId::err_pp_directive_without_if}));
}

TEST(Preprocessor, IncludeErrors) {
  PP p;
  p.run("#include <stdio.h>\n#include\n#include foo\n#include \"\"");
  ASSERT_EQ(p.ids(), (Ids{DiagId::err_not_supported, DiagId::err_pp_include_expects_filename,
                          DiagId::err_pp_include_expects_filename, DiagId::err_pp_file_not_found}));
  EXPECT_EQ(p.diag(0).message, "not supported yet: #include <...>; use #include \"...\"");
  EXPECT_EQ(p.diag(0).loc.col, 10u);
}

// --- limits and robustness ---------------------------------------------------

TEST(Preprocessor, ArgumentNestingIsBounded) {
  std::string src = "#define F(x) x\n";
  for (int i = 0; i < 300; ++i)
    src += "F(";
  src += "1";
  src += std::string(300, ')');
  PP p;
  p.run(src);
  EXPECT_EQ(p.ids(), Ids{DiagId::err_pp_expansion_too_deep});
  // 150 levels are fine.
  std::string ok = "#define F(x) x\n" + [] {
    std::string s;
    for (int i = 0; i < 150; ++i)
      s += "F(";
    return s;
  }() + "1" + std::string(150, ')');
  EXPECT_EQ(expand(ok), "1");
}

TEST(Preprocessor, ExponentialExpansionIsBounded) {
  // e3 expands to 10 * 1000 * 1000 uses of z (which expands to nothing): more
  // work than the limit (2^21 tokens and expansions) allows.
  std::string src = "#define z\n#define e1";
  for (int i = 0; i < 1000; ++i)
    src += " z";
  src += "\n#define e2";
  for (int i = 0; i < 1000; ++i)
    src += " e1";
  src += "\n#define e3 e2 e2 e2 e2 e2 e2 e2 e2 e2 e2\ne3 done";
  PP p;
  p.run(src);
  EXPECT_EQ(p.ids(), Ids{DiagId::err_pp_expansion_too_large});
}

TEST(Preprocessor, StopsAtTheErrorLimit) {
  PP p;
  p.diags.setErrorLimit(5);
  std::string src;
  for (int i = 0; i < 100; ++i)
    src += "#error e\n$\n";
  p.run(src);
  EXPECT_TRUE(p.diags.shouldStop());
  EXPECT_EQ(p.diags.numErrors(), 5u);
  EXPECT_EQ(p.toks.back().kind, TokKind::eof);
}

TEST(Preprocessor, LexicalErrorsOnlyWhenTheTokenIsUsed) {
  // Stray characters in skipped groups, in unused macros and in stringized
  // arguments are no errors; in the output they are.
  EXPECT_EQ(expand("#if 0\n$ 'x\n#endif\n#define D $\n#define S(x) #x\nS($)"), "\"$\"");
  EXPECT_EQ(diagsOf("a $ \"open\n"),
            (Ids{DiagId::err_lex_stray_char, DiagId::err_lex_unterminated_string}));
  EXPECT_EQ(diagsOf("/* open"), Ids{DiagId::err_lex_unterminated_comment});
}

TEST(Preprocessor, Performance100kTokens) {
  std::string src = "#define ADD(a, b) ((a) + (b))\n#define N 128\n";
  for (int i = 0; i < 10000; ++i)
    src += "int32 x" + std::to_string(i) + " = ADD(N, " + std::to_string(i) + ");\n";
  PP p;
  auto start = std::chrono::steady_clock::now();
  p.run(src);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(p.diags.diagnostics().empty());
  // `int x0 = ((128) + (0));` is 13 tokens.
  EXPECT_EQ(p.toks.size(), 10000u * 13 + 1);
  // Well under a second in a release build; generous for debug/sanitizer builds.
  EXPECT_LT(secs, 5.0);
}

// --- rendering ---------------------------------------------------------------

TEST(Preprocessor, RenderKeepsLinesAndSpaces) {
  EXPECT_EQ(expand("a\n  b c(d)\n\n\ne"), "a\nb c(d)\ne");
  // An expansion stays on the line of its use, even when its arguments span lines.
  EXPECT_EQ(expand("#define F(x) [ x ]\nF(1 +\n 2) after\nnext"), "[ 1 + 2 ] after\nnext");
  // A macro expanding to nothing at the start of a line keeps the line break.
  EXPECT_EQ(expand("#define E\na\nE b\nc E"), "a\nb\nc");
  EXPECT_EQ(renderTokens({}), "");
}

} // namespace
