// Which names a source mentions, and the unused -D warnings built from them.
#include "support/SourceWords.h"

#include <gtest/gtest.h>

using namespace tc;

namespace {
std::set<std::string> words(std::string_view text) {
  std::set<std::string> out;
  addIdentifiers(text, out);
  return out;
}
} // namespace

TEST(SourceWords, CodeAndDirectivesCountCommentsAndLiteralsDoNot) {
  auto w = words("#ifdef A\n#if defined(B) && C > 1\n#define M(x) (x * D)\n#endif\n"
                 "int y = E; // F\n/* G\n H */ char *s = \"I\\\" J\"; int c = 'K';\n");
  for (const char *n : {"ifdef", "A", "defined", "B", "C", "M", "x", "D", "y", "E", "s", "c"})
    EXPECT_TRUE(w.count(n)) << n;
  for (const char *n : {"F", "G", "H", "I", "J", "K"})
    EXPECT_FALSE(w.count(n)) << n;
}

TEST(SourceWords, NumbersAreNoNames) {
  auto w = words("0x1F 1e-5f 2.5e+3 .5f 10u N1");
  EXPECT_EQ(w, (std::set<std::string>{"N1"}));
}

TEST(SourceWords, UnusedDefinesGetAWarningAndASuggestion) {
  std::set<std::string> used{"BLOCK", "N", "float"};
  auto w = unusedDefineWarnings({"BLOKC=128", "N=4", "BLOCK=[1,2]", "ZZZZZZ", "ZZZZZZ=2"}, used);
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0], "-DBLOKC=128 is not used by the source; did you mean -DBLOCK?");
  EXPECT_EQ(w[1], "-DZZZZZZ is not used by the source"); // once per name
}
