// Tests of the raw lexer (frontend/Lexer.h): token kinds, pp-numbers,
// literals, comments, line splices, flags, locations and lexical errors.
#include "frontend/Lexer.h"

#include <gtest/gtest.h>

#include <random>

using namespace tc;

namespace {

struct Lexed {
  SourceManager sm;
  DiagEngine diags{sm};
  std::vector<Token> toks;

  explicit Lexed(const std::string &text) {
    diags.setOutput(nullptr);
    diags.setErrorLimit(0);
    toks = lexFile(sm.addBuffer("test.tc", text), sm, diags);
  }
  std::vector<TokKind> kinds() const {
    std::vector<TokKind> r;
    for (const Token &t : toks)
      r.push_back(t.kind);
    return r;
  }
  std::vector<std::string> texts() const {
    std::vector<std::string> r;
    for (const Token &t : toks)
      if (t.isNot(TokKind::eof))
        r.push_back(t.text);
    return r;
  }
  std::vector<DiagId> diagIds() const {
    std::vector<DiagId> r;
    for (const Diagnostic &d : diags.diagnostics())
      r.push_back(d.id);
    return r;
  }
};

using K = TokKind;
using Strings = std::vector<std::string>;

TEST(Lexer, EmptyInputIsJustEof) {
  Lexed l("");
  ASSERT_EQ(l.toks.size(), 1u);
  EXPECT_EQ(l.toks[0].kind, K::eof);
  EXPECT_EQ(l.toks[0].loc.line, 1u);
  EXPECT_EQ(l.toks[0].loc.col, 1u);
}

TEST(Lexer, IdentifiersAreNotKeywordsYet) {
  Lexed l("int x_1 _y __global__");
  EXPECT_EQ(l.kinds(),
            (std::vector<K>{K::identifier, K::identifier, K::identifier, K::identifier, K::eof}));
  EXPECT_EQ(l.texts(), (Strings{"int", "x_1", "_y", "__global__"}));
}

TEST(Lexer, PunctuatorsUseMaximalMunch) {
  Lexed l("a>>=b<<c->d...e##f#g@h<=>=!=&&||++--+=-=*=/=%=&=|=^=<<=");
  EXPECT_EQ(l.texts(), (Strings{"a",  ">>=", "b",  "<<", "c",  "->", "d",  "...", "e",  "##", "f",
                                "#",  "g",   "@",  "h",  "<=", ">=", "!=", "&&",  "||", "++", "--",
                                "+=", "-=",  "*=", "/=", "%=", "&=", "|=", "^=",  "<<="}));
  EXPECT_EQ(l.toks[1].kind, K::greatergreaterequal);
  EXPECT_EQ(l.toks[9].kind, K::hashhash);
  EXPECT_EQ(l.toks[11].kind, K::hash);
  EXPECT_EQ(l.toks[13].kind, K::at);
  EXPECT_TRUE(l.diags.diagnostics().empty());
}

TEST(Lexer, EveryPunctuatorSpellingLexesToItsKind) {
  for (int k = 0; k <= static_cast<int>(K::hashhash); ++k) {
    auto kind = static_cast<K>(k);
    std::string_view s = tokSpelling(kind);
    if (s.empty())
      continue;
    Lexed l{std::string(s)};
    ASSERT_EQ(l.toks.size(), 2u) << s;
    EXPECT_EQ(l.toks[0].kind, kind) << s;
  }
}

TEST(Lexer, RangeDotsEndANumber) {
  Lexed l("0...4 x[0 ... 16]");
  EXPECT_EQ(l.texts(), (Strings{"0", "...", "4", "x", "[", "0", "...", "16", "]"}));
  EXPECT_EQ(l.toks[0].kind, K::numeric_constant);
  EXPECT_EQ(l.toks[1].kind, K::ellipsis);
  EXPECT_EQ(l.toks[2].kind, K::numeric_constant);
}

TEST(Lexer, PPNumbers) {
  Lexed l("1.5e+3f 0x1p-3 .5 1..2 123abc 0x7F800000 1E-5 10u 4.f");
  EXPECT_EQ(l.texts(), (Strings{"1.5e+3f", "0x1p-3", ".5", "1..2", "123abc", "0x7F800000", "1E-5",
                                "10u", "4.f"}));
  for (size_t i = 0; i + 1 < l.toks.size(); ++i)
    EXPECT_EQ(l.toks[i].kind, K::numeric_constant) << l.toks[i].text;
}

TEST(Lexer, APeriodNotFollowedByADigitIsAPeriod) {
  Lexed l("a.b .x");
  EXPECT_EQ(l.kinds(), (std::vector<K>{K::identifier, K::period, K::identifier, K::period,
                                       K::identifier, K::eof}));
}

TEST(Lexer, StringAndCharLiteralsWithEscapes) {
  Lexed l(R"("a\"b\\" 'x' '\'' '\n' "" "/* not a comment */")");
  EXPECT_EQ(l.texts(), (Strings{R"("a\"b\\")", "'x'", R"('\'')", R"('\n')", R"("")",
                                R"("/* not a comment */")"}));
  EXPECT_EQ(l.kinds(),
            (std::vector<K>{K::string_literal, K::char_constant, K::char_constant, K::char_constant,
                            K::string_literal, K::string_literal, K::eof}));
  EXPECT_TRUE(l.diags.diagnostics().empty());
}

TEST(Lexer, CommentsAreDropped) {
  Lexed l("a // line comment\nb /* block\n comment */ c /**/d");
  EXPECT_EQ(l.texts(), (Strings{"a", "b", "c", "d"}));
  EXPECT_EQ(l.toks[2].loc.line, 3u);
  EXPECT_EQ(l.toks[2].loc.col, 13u);
  EXPECT_TRUE(l.toks[2].leadingSpace);
  EXPECT_FALSE(l.toks[2].atLineStart); // the comment's newline is not a line start
  EXPECT_TRUE(l.toks[3].leadingSpace); // a comment counts as white space
}

TEST(Lexer, LineSplices) {
  Lexed l("ab\\\ncd x // comment \\\n still comment\ny \"s\\\nt\"");
  EXPECT_EQ(l.texts(), (Strings{"abcd", "x", "y", "\"st\""}));
  EXPECT_EQ(l.toks[0].loc.line, 1u);
  EXPECT_EQ(l.toks[1].loc.line, 2u); // "cd x": x is at line 2, column 4
  EXPECT_EQ(l.toks[1].loc.col, 4u);
  EXPECT_EQ(l.toks[2].loc.line, 4u);
  EXPECT_TRUE(l.toks[2].atLineStart);
}

TEST(Lexer, SpliceWithCRLF) {
  Lexed l("a\\\r\nb\r\nc");
  EXPECT_EQ(l.texts(), (Strings{"ab", "c"}));
  EXPECT_EQ(l.toks[1].loc.line, 3u);
  EXPECT_EQ(l.toks[1].loc.col, 1u);
  EXPECT_TRUE(l.toks[1].atLineStart);
}

TEST(Lexer, FlagsAndLocations) {
  Lexed l("#define X 1\n  foo(bar)\n");
  ASSERT_EQ(l.toks.size(), 9u);
  EXPECT_TRUE(l.toks[0].atLineStart);
  EXPECT_FALSE(l.toks[0].leadingSpace);
  EXPECT_FALSE(l.toks[1].atLineStart);
  EXPECT_FALSE(l.toks[1].leadingSpace); // `#define`: no space after '#'
  EXPECT_TRUE(l.toks[2].leadingSpace);
  const Token &foo = l.toks[4];
  EXPECT_EQ(foo.text, "foo");
  EXPECT_TRUE(foo.atLineStart);
  EXPECT_EQ(foo.loc.line, 2u);
  EXPECT_EQ(foo.loc.col, 3u);
  EXPECT_FALSE(l.toks[5].leadingSpace); // '(' right after foo
  EXPECT_EQ(l.toks[6].loc.col, 7u);
  EXPECT_EQ(l.toks.back().kind, K::eof);
  EXPECT_EQ(l.toks.back().loc.line, 3u);
}

TEST(Lexer, ColumnsCountBytes) {
  Lexed l("\tx \"\xC3\xA9\" y");
  EXPECT_EQ(l.toks[0].loc.col, 2u);
  EXPECT_EQ(l.toks[2].loc.col, 9u); // the string holds two bytes of UTF-8
}

TEST(Lexer, UnterminatedBlockCommentIsReportedAtItsStart) {
  Lexed l("a\n  /* never\nclosed");
  EXPECT_EQ(l.texts(), (Strings{"a"}));
  ASSERT_EQ(l.diagIds(), (std::vector<DiagId>{DiagId::err_lex_unterminated_comment}));
  EXPECT_EQ(l.diags.diagnostics()[0].loc.line, 2u);
  EXPECT_EQ(l.diags.diagnostics()[0].loc.col, 3u);
}

TEST(Lexer, UnterminatedStringAndCharLiterals) {
  Lexed l("x = \"abc\ny = 'q\nz");
  EXPECT_EQ(l.diagIds(), (std::vector<DiagId>{DiagId::err_lex_unterminated_string,
                                              DiagId::err_lex_unterminated_char}));
  EXPECT_EQ(l.diags.diagnostics()[0].loc.col, 5u);
  EXPECT_EQ(l.diags.diagnostics()[1].loc.line, 2u);
  // Lexing goes on with the next line.
  EXPECT_EQ(l.texts(), (Strings{"x", "=", "\"abc", "y", "=", "'q", "z"}));
  EXPECT_TRUE(l.toks[3].atLineStart);
}

TEST(Lexer, StrayCharactersAreReportedAndSkipped) {
  Lexed l("a $ b ` c \xC3\xA9 d \\ e");
  EXPECT_EQ(l.diagIds(),
            (std::vector<DiagId>{DiagId::err_lex_stray_char, DiagId::err_lex_stray_char,
                                 DiagId::err_lex_stray_char, DiagId::err_lex_stray_char}));
  EXPECT_EQ(l.diags.diagnostics()[0].message, "stray '$' in program");
  EXPECT_EQ(l.diags.diagnostics()[1].message, "stray '`' in program");
  EXPECT_EQ(l.diags.diagnostics()[2].message, "stray '\xC3\xA9' in program"); // one, not two
  EXPECT_EQ(l.diags.diagnostics()[3].message, "stray '\\' in program");
  EXPECT_EQ(l.diags.diagnostics()[2].loc.col, 11u);
  Strings idents;
  for (const Token &t : l.toks)
    if (t.is(K::identifier))
      idents.push_back(t.text);
  EXPECT_EQ(idents, (Strings{"a", "b", "c", "d", "e"}));
}

TEST(Lexer, NulAndControlBytes) {
  Lexed l(std::string("a\0b\x01", 4) + "\r\n\v\fc");
  EXPECT_EQ(l.diagIds(),
            (std::vector<DiagId>{DiagId::err_lex_stray_char, DiagId::err_lex_stray_char}));
  EXPECT_EQ(l.diags.diagnostics()[0].message, "stray '\\x00' in program");
  EXPECT_EQ(l.toks[l.toks.size() - 2].text, "c");
}

TEST(Lexer, BackslashAtEndOfFile) {
  Lexed l("a \\");
  EXPECT_EQ(l.diagIds(), (std::vector<DiagId>{DiagId::err_lex_stray_char}));
  Lexed m("a\\\n");
  EXPECT_EQ(m.texts(), (Strings{"a"}));
  EXPECT_TRUE(m.diags.diagnostics().empty());
}

TEST(Lexer, NeverHangsOrCrashesOnAnyByte) {
  std::string all;
  for (int b = 0; b < 256; ++b)
    all += static_cast<char>(b);
  Lexed l(all);
  EXPECT_EQ(l.toks.back().kind, K::eof);
  std::mt19937 rng(1234);
  for (int i = 0; i < 200; ++i) {
    std::string s;
    for (int n = 0; n < 64; ++n)
      s += static_cast<char>(rng() % 256);
    Lexed r(s);
    EXPECT_EQ(r.toks.back().kind, K::eof);
  }
}

} // namespace
