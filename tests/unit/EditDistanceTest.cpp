// Edit distances worked out by hand, and the did-you-mean choice.
#include "support/EditDistance.h"

#include <gtest/gtest.h>

using tc::closestName;
using tc::editDistance;

TEST(EditDistance, KnownDistances) {
  EXPECT_EQ(editDistance("", ""), 0u);
  EXPECT_EQ(editDistance("abc", ""), 3u);
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u); // k->s, e->i, +g
  EXPECT_EQ(editDistance("BLOKC", "BLOCK"), 1u);    // one swap of neighbours
  EXPECT_EQ(editDistance("offsets", "ofsets"), 1u);
  EXPECT_EQ(editDistance("abcdef", "uvwxyz", 2), 3u); // stops above the limit
}

TEST(EditDistance, ClosestName) {
  std::vector<std::string> names = {"offsets", "acc", "N", "X"};
  EXPECT_EQ(closestName("ofsets", names), "offsets");
  EXPECT_EQ(closestName("n", names), "N");  // case first, before 'X' (also 1 edit)
  EXPECT_EQ(closestName("zzz", names), ""); // 3 edits from 'acc': too far for 3 letters
  EXPECT_EQ(closestName("acc", names), ""); // itself is no suggestion
  EXPECT_EQ(closestName("get_program_idx", {"get_program_id", "get_num_programs"}),
            "get_program_id");
}
