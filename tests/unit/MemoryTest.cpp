// The simulated address space of interp/Memory.h: layout, lookups, the
// out-of-bounds messages, aliasing, and that regions are the host bytes. Addresses are worked out
// from the documented layout: the first buffer at 0x10000, each next one at
// the previous end + 4096 rounded up to a multiple of 256.
#include "interp/Memory.h"

#include "runtime/Launch.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

using tc::DType;
using tc::HostArray;
using tc::interp::Memory;

TEST(Memory, LayoutIsDeterministicWithGuardGaps) {
  HostArray a = HostArray::zeros(DType::F32, {1000}); // 4000 bytes
  HostArray b = HostArray::zeros(DType::I8, {10});
  HostArray c = HostArray::zeros(DType::F64, {0}); // empty
  HostArray d = HostArray::zeros(DType::I16, {3});
  Memory m;
  EXPECT_EQ(m.place("a", &a, 0), 0x10000u);
  // 0x10000 + 4000 = 0x10fa0; + 4096 = 0x11fa0; rounded up to 256: 0x12000.
  EXPECT_EQ(m.place("b", &b, 1), 0x12000u);
  // 0x1200a + 4096 = 0x1300a -> 0x13100.
  EXPECT_EQ(m.place("c", &c, 2), 0x13100u);
  // 0x13100 + 0 + 4096 = 0x14100 (already a multiple of 256).
  EXPECT_EQ(m.place("d", &d, 3), 0x14100u);
  for (const auto &r : m.regions())
    EXPECT_EQ(r->base % 256, 0u);
}

TEST(Memory, ClaimedAlignmentPlacesAFreshRegion) {
  HostArray a = HostArray::zeros(DType::F32, {4}); // [0x10000, 0x10010)
  HostArray b = HostArray::zeros(DType::F32, {4});
  HostArray c = HostArray::zeros(DType::F32, {4});
  HostArray d = HostArray::zeros(DType::F32, {4});
  Memory m;
  EXPECT_EQ(m.place("a", &a, 0, 4096), 0x10000u); // already a multiple
  // 0x10010 + 4096 = 0x11010: 0x11100 for 256 (or less), 0x11400 for 1024.
  EXPECT_EQ(m.place("b", &b, 1, 1024), 0x11400u);
  EXPECT_EQ(m.place("b2", &b, 2, 65536), 0x11400u); // b's region is placed already
  // The next one packs as before: 0x11410 + 4096 -> 0x12500.
  EXPECT_EQ(m.place("c", &c, 3, 128), 0x12500u);
  // A claim the region would not fit below Memory::kAddressLimit with is not
  // kept (the launch then traps misaligned): 0x12510 + 4096 -> 0x13600.
  EXPECT_EQ(m.place("d", &d, 4, uint64_t(1) << 48), 0x13600u);
  HostArray e = HostArray::zeros(DType::F32, {4});
  EXPECT_EQ(m.place("e", &e, 5, uint64_t(1) << 47), uint64_t(1) << 47);
  EXPECT_EQ(tc::interp::lcmOrZero(256, 1024), 1024u);
  EXPECT_EQ(tc::interp::lcmOrZero(256, 12), 768u);
  EXPECT_EQ(tc::interp::lcmOrZero(uint64_t(1) << 63, 3), 0u);
}

TEST(Memory, FindNeedsTheWholeAccessInsideOneBuffer) {
  HostArray a = HostArray::zeros(DType::I32, {4}); // [0x10000, 0x10010)
  Memory m;
  m.place("a", &a, 0);
  EXPECT_NE(m.find(0x10000, 4), nullptr);
  EXPECT_NE(m.find(0x1000c, 4), nullptr);
  EXPECT_EQ(m.find(0x1000d, 4), nullptr); // runs 1 byte past the end
  EXPECT_EQ(m.find(0x10010, 1), nullptr);
  EXPECT_EQ(m.find(0xffff, 1), nullptr);
  EXPECT_EQ(m.find(0, 4), nullptr);
  EXPECT_EQ(m.find(~uint64_t(0) - 1, 4), nullptr); // no wrap-around
  EXPECT_NE(m.find(0x10008, 8), nullptr);
}

TEST(Memory, OutOfBoundsMessages) {
  HostArray a = HostArray::zeros(DType::F32, {1000}); // [0x10000, 0x10fa0)
  HostArray b = HostArray::zeros(DType::F32, {8});    // [0x12000, 0x12020)
  Memory m;
  m.place("a", &a, 0);
  m.place("b", &b, 1);
  EXPECT_EQ(m.describeOutOfBounds("load", 0x10ff0, 4, "lane [17]"),
            "load of 4 bytes at 0x10ff0 (lane [17]) is outside every buffer; nearest: 'a' "
            "[0x10000, 0x10fa0), 80 bytes past its end");
  EXPECT_EQ(m.describeOutOfBounds("store", 0x11ffc, 4, ""),
            "store of 4 bytes at 0x11ffc is outside every buffer; nearest: 'b' "
            "[0x12000, 0x12020), 4 bytes before its start");
  EXPECT_EQ(
      m.describeOutOfBounds("atomic", 0x12021, 1, "lane [1, 0] (flat 4)"),
      "atomic of 1 byte at 0x12021 (lane [1, 0] (flat 4)) is outside every buffer; nearest: 'b' "
      "[0x12000, 0x12020), 1 byte past its end");
  // An 8-byte access at the last 4 bytes of 'a'.
  EXPECT_EQ(m.describeOutOfBounds("load", 0x10f9c, 8, "lane [3]"),
            "load of 8 bytes at 0x10f9c (lane [3]) runs past the end of 'a' [0x10000, 0x10fa0)");
  Memory empty;
  EXPECT_EQ(empty.describeOutOfBounds("load", 0x10, 4, ""),
            "load of 4 bytes at 0x10 is outside every buffer (the launch has no buffers)");
}

TEST(Memory, OneArrayBoundTwiceSharesARegion) {
  HostArray a = HostArray::zeros(DType::I32, {2});
  HostArray b = HostArray::zeros(DType::I32, {2});
  Memory m;
  EXPECT_EQ(m.place("x", &a, 0), 0x10000u);
  EXPECT_EQ(m.place("y", &b, 1), 0x11100u); // 0x10008 + 4096 = 0x11008 -> 0x11100
  EXPECT_EQ(m.place("z", &a, 2), 0x10000u);
  ASSERT_EQ(m.regions().size(), 2u);
  EXPECT_EQ(m.regions()[0]->label(), "'x' (also 'z')");
  EXPECT_EQ(m.describeOutOfBounds("load", 0x10008, 4, ""),
            "load of 4 bytes at 0x10008 is outside every buffer; nearest: 'x' (also 'z') "
            "[0x10000, 0x10008), 0 bytes past its end");
  // The region answers for both parameters (pointer provenance: Region::params).
  EXPECT_EQ(m.regions()[0]->params, tc::interp::paramBit(0) | tc::interp::paramBit(2));
  EXPECT_EQ(m.regions()[1]->params, tc::interp::paramBit(1));
}

// An access inside one buffer through a pointer computed from another's
// parameter: the message names both (Memory::describeForeign).
TEST(Memory, ForeignBufferMessages) {
  HostArray x = HostArray::zeros(DType::F32, {4}); // [0x10000, 0x10010)
  HostArray y = HostArray::zeros(DType::F32, {4}); // [0x11100, 0x11110)
  HostArray z = HostArray::zeros(DType::F32, {4}); // [0x12200, 0x12210)
  Memory m;
  m.place("X", &x, 0);
  m.place("Y", &y, 1);
  m.place("Z", &z, 2);
  m.place("W", &x, 3);
  using tc::interp::paramBit;
  const tc::interp::Region &ry = *m.regions()[1];
  EXPECT_EQ(m.describeForeign("load", 0x11100, 4, "lane [0]", ry, paramBit(0)),
            "load of 4 bytes at 0x11100 (lane [0]) is inside 'Y' [0x11100, 0x11110), but the "
            "pointer comes from 'X' (also 'W') [0x10000, 0x10010)");
  EXPECT_EQ(m.describeForeign("store", 0x11104, 4, "", ry, paramBit(0) | paramBit(2)),
            "store of 4 bytes at 0x11104 is inside 'Y' [0x11100, 0x11110), but the pointer "
            "comes from 'X' (also 'W') [0x10000, 0x10010) or 'Z' [0x12200, 0x12210)");
  // Parameters from 63 on share a bit.
  EXPECT_EQ(paramBit(62), uint64_t(1) << 62);
  EXPECT_EQ(paramBit(63), paramBit(200));
}

TEST(Memory, RegionsAreTheHostArraysBytes) {
  HostArray a = HostArray::zeros(DType::I16, {3});
  a.setDouble(1, -7);
  Memory m;
  uint64_t base = m.place("a", &a, 0);
  const tc::interp::Region *r = m.find(base, 6);
  ASSERT_NE(r, nullptr);
  int16_t v;
  std::memcpy(&v, r->host + 2, 2);
  EXPECT_EQ(v, -7);
  v = 1234;
  std::memcpy(r->host + 4, &v, 2); // a store at base + 4 lands in a[2]
  EXPECT_EQ(a.getDouble(2), 1234);
}

} // namespace
