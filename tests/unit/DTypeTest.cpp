#include "support/DType.h"

#include <gtest/gtest.h>

using namespace tc;

TEST(DType, NamesRoundTrip) {
  for (DType t : kAllDTypes) {
    EXPECT_EQ(parseIrName(irName(t)), t);
    EXPECT_EQ(parseConformanceName(conformanceName(t)), t);
  }
  EXPECT_EQ(parseIrName("f128"), std::nullopt);
}

TEST(DType, Widths) {
  EXPECT_EQ(bitWidth(DType::Bool), 1u);
  EXPECT_EQ(byteSize(DType::Bool), 1u);
  EXPECT_EQ(bitWidth(DType::BF16), 16u);
  EXPECT_EQ(byteSize(DType::U64), 8u);
}
