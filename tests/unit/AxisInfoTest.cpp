// codegen/AxisInfo: contiguity, divisibility and constancy worked out by hand
// for the access patterns of the tutorial kernels.
#include "codegen/AxisInfo.h"
#include "ir/IRParser.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>
#include <sstream>

using namespace tc;
using namespace tc::codegen;

namespace {

struct Parsed {
  std::unique_ptr<ir::Module> module;
  const ir::Function *fn = nullptr;
};

Parsed parse(const std::string &text) {
  SourceManager sm;
  DiagEngine diags(sm);
  std::ostringstream err;
  diags.setOutput(&err);
  Parsed p;
  p.module = ir::parseModule(sm.addBuffer("a.tir", text), sm, diags);
  EXPECT_TRUE(p.module) << err.str();
  if (p.module) {
    EXPECT_TRUE(ir::verifyModule(*p.module).empty());
    p.fn = p.module->functions[0].get();
  }
  return p;
}

/// The value defined by the op at position `i` of the kernel body.
const ir::Value *resultOf(const Parsed &p, size_t i) { return p.fn->body().ops()[i]->result(); }

using V = std::vector<int64_t>;

TEST(AxisInfo, PowerOfTwoFactor) {
  EXPECT_EQ(powerOfTwoFactor(12), 4);
  EXPECT_EQ(powerOfTwoFactor(-8), 8);
  EXPECT_EQ(powerOfTwoFactor(7), 1);
  EXPECT_EQ(powerOfTwoFactor(0), kMaxDivisibility);
}

// Vector add: off = pid * 1024 + (0 ... 1024), pointer a + off with a only
// known to be f32-aligned, and with __aligned(16).
TEST(AxisInfo, VectorAddOffsetsAndPointers) {
  Parsed p = parse(R"(kernel @add(%a: !ptr<f32>, %b: !ptr<f32> <aligned = 16>, %N: i32) {
  %0 = get_program_id <axis = 0> : i32
  %1 = constant <value = 1024> : i32
  %2 = mul %0, %1 : i32
  %3 = splat %2 : tile<1024xi32>
  %4 = range <end = 1024, start = 0> : tile<1024xi32>
  %5 = add %3, %4 : tile<1024xi32>
  %6 = splat %a : tile<1024x!ptr<f32>>
  %7 = addptr %6, %5 : tile<1024x!ptr<f32>>
  %8 = splat %b : tile<1024x!ptr<f32>>
  %9 = addptr %8, %5 : tile<1024x!ptr<f32>>
  %10 = splat %N : tile<1024xi32>
  %11 = cmp_lt %5, %10 : tile<1024xi1>
  return
}
)");
  ASSERT_TRUE(p.fn);
  AxisAnalysis an(*p.fn);
  AxisInfo off = an.info(resultOf(p, 5));
  EXPECT_EQ(off.contig, V{1024});
  EXPECT_EQ(off.div, V{1024}); // pid * 1024 + 0
  EXPECT_EQ(off.cnst, V{1});
  EXPECT_EQ(off.eltDiv, 1);
  AxisInfo pa = an.info(resultOf(p, 7));
  EXPECT_EQ(pa.contig, V{1024});
  EXPECT_EQ(pa.div, V{4}); // only the natural alignment of a float*
  AxisInfo pb = an.info(resultOf(p, 9));
  EXPECT_EQ(pb.div, V{16}); // min(16, 1024 * 4)
  // Runs of 4 starting at multiples of 4 elements: 16 bytes apart from b.
  EXPECT_EQ(AxisAnalysis::runDivisibility(pb, 0, 4, 4), 16);
  EXPECT_EQ(AxisAnalysis::runDivisibility(pb, 0, 2, 4), 8);
  // off < N with N of unknown divisibility: not constant over any block.
  EXPECT_EQ(an.info(resultOf(p, 11)).cnst, V{1});
}

// Row softmax mask: cols < N is constant over blocks that N's divisibility allows.
TEST(AxisInfo, MaskConstancyFromDivisibility) {
  Parsed p = parse(R"(kernel @k(%N: i32 <multipleof = 16>, %M: i32) {
  %0 = range <end = 256, start = 0> : tile<256xi32>
  %1 = splat %N : tile<256xi32>
  %2 = cmp_lt %0, %1 : tile<256xi1>
  %3 = cmp_ge %0, %1 : tile<256xi1>
  %4 = cmp_le %0, %1 : tile<256xi1>
  %5 = cmp_gt %1, %0 : tile<256xi1>
  %6 = splat %M : tile<256xi32>
  %7 = cmp_lt %0, %6 : tile<256xi1>
  %8 = and %2, %3 : tile<256xi1>
  return
}
)");
  ASSERT_TRUE(p.fn);
  AxisAnalysis an(*p.fn);
  EXPECT_EQ(an.info(resultOf(p, 2)).cnst, V{16});
  EXPECT_EQ(an.info(resultOf(p, 3)).cnst, V{16});
  // cols <= N changes inside a block of 16 (at cols == N).
  EXPECT_EQ(an.info(resultOf(p, 4)).cnst, V{1});
  EXPECT_EQ(an.info(resultOf(p, 5)).cnst, V{16}); // N > cols is cols < N
  EXPECT_EQ(an.info(resultOf(p, 7)).cnst, V{1});
  EXPECT_EQ(an.info(resultOf(p, 8)).cnst, V{16});
}

// Transpose: X + rm[:, newaxis] + rn[newaxis, :] * ldx is contiguous along
// axis 0 only; its alignment is X's (16) since ldx is a multiple of 8.
TEST(AxisInfo, TransposePointersAreContiguousAlongAxis0) {
  Parsed p = parse(R"(kernel @t(%X: !ptr<f32> <aligned = 16>, %ldx: i32 <multipleof = 8>) {
  %0 = get_program_id <axis = 0> : i32
  %1 = constant <value = 64> : i32
  %2 = mul %0, %1 : i32
  %3 = splat %2 : tile<64xi32>
  %4 = range <end = 64, start = 0> : tile<64xi32>
  %5 = add %3, %4 : tile<64xi32>
  %6 = expand_dims %5 <axis = 1> : tile<64x1xi32>
  %7 = splat %X : tile<64x1x!ptr<f32>>
  %8 = addptr %7, %6 : tile<64x1x!ptr<f32>>
  %9 = expand_dims %5 <axis = 0> : tile<1x64xi32>
  %10 = splat %ldx : tile<1x64xi32>
  %11 = mul %9, %10 : tile<1x64xi32>
  %12 = broadcast %11 : tile<64x64xi32>
  %13 = broadcast %8 : tile<64x64x!ptr<f32>>
  %14 = addptr %13, %12 : tile<64x64x!ptr<f32>>
  %15 = trans %14 <perm = [1, 0]> : tile<64x64x!ptr<f32>>
  return
}
)");
  ASSERT_TRUE(p.fn);
  AxisAnalysis an(*p.fn);
  AxisInfo m = an.info(resultOf(p, 11)); // rn * ldx: every element a multiple of 8
  EXPECT_EQ(m.contig, (V{1, 1}));
  EXPECT_EQ(m.eltDiv, 8);
  EXPECT_EQ(m.cnst, (V{1, 1}));
  AxisInfo px = an.info(resultOf(p, 14));
  EXPECT_EQ(px.contig, (V{64, 1}));
  EXPECT_EQ(px.div[0], 16);
  EXPECT_EQ(px.eltDiv, 4); // X + rm: rm is any integer
  EXPECT_EQ(px.cnst, (V{1, 1}));
  AxisInfo tx = an.info(resultOf(p, 15));
  EXPECT_EQ(tx.contig, (V{1, 64}));
  EXPECT_EQ(tx.div[1], 16);
}

// What is not contiguous: differences, products, ranges that start odd, and
// narrowing casts; constants of every kind are constant.
TEST(AxisInfo, WhatBreaksContiguity) {
  Parsed p = parse(R"(kernel @k(%s: i32) {
  %0 = range <end = 32, start = 0> : tile<32xi32>
  %1 = splat %s : tile<32xi32>
  %2 = sub %1, %0 : tile<32xi32>
  %3 = sub %0, %1 : tile<32xi32>
  %4 = constant <value = 2> : tile<32xi32>
  %5 = mul %0, %4 : tile<32xi32>
  %6 = range <end = 35, start = 3> : tile<32xi32>
  %7 = add %0, %0 : tile<32xi32>
  %8 = cast %0 : tile<32xi64>
  %9 = cast %0 : tile<32xi8>
  %10 = constant <value = 12> : tile<32xi32>
  return
}
)");
  ASSERT_TRUE(p.fn);
  AxisAnalysis an(*p.fn);
  EXPECT_EQ(an.info(resultOf(p, 2)).contig, V{1});  // s - i goes down
  EXPECT_EQ(an.info(resultOf(p, 3)).contig, V{32}); // i - s goes up
  EXPECT_EQ(an.info(resultOf(p, 3)).div, V{1});     // s unknown
  AxisInfo twice = an.info(resultOf(p, 5));
  EXPECT_EQ(twice.contig, V{1});
  EXPECT_EQ(twice.eltDiv, 2);
  AxisInfo odd = an.info(resultOf(p, 6));
  EXPECT_EQ(odd.contig, V{32});
  EXPECT_EQ(odd.div, V{1});
  EXPECT_EQ(an.info(resultOf(p, 7)).contig, V{1}); // steps of 2
  EXPECT_EQ(an.info(resultOf(p, 8)).contig, V{32});
  EXPECT_EQ(an.info(resultOf(p, 9)).contig, V{1});
  AxisInfo c = an.info(resultOf(p, 10));
  EXPECT_EQ(c.cnst, V{32});
  EXPECT_EQ(c.eltDiv, 4);
}

// A contiguous block shorter than the operand's keeps only the divisibility
// its own starts have: (0 ... 64) + c with c constant over blocks of 4.
TEST(AxisInfo, ShorterBlocksRefineDivisibility) {
  Parsed p = parse(R"(kernel @k(%P: !ptr<f32> <aligned = 256>) {
  %0 = range <end = 64, start = 0> : tile<64xi32>
  %1 = range <end = 16, start = 0> : tile<16xi32>
  %2 = expand_dims %1 <axis = 1> : tile<16x1xi32>
  %3 = broadcast %2 : tile<16x4xi32>
  %4 = reshape %3 : tile<64xi32>
  %5 = splat %P : tile<64x!ptr<f32>>
  %6 = addptr %5, %0 : tile<64x!ptr<f32>>
  return
}
)");
  ASSERT_TRUE(p.fn);
  AxisAnalysis an(*p.fn);
  AxisInfo ptr = an.info(resultOf(p, 6));
  EXPECT_EQ(ptr.contig, V{64});
  EXPECT_EQ(ptr.div, V{256});
  // Blocks of 4 floats from a 256-aligned start: 16 bytes; of 1: 4 bytes.
  EXPECT_EQ(AxisAnalysis::runDivisibility(ptr, 0, 4, 4), 16);
  EXPECT_EQ(AxisAnalysis::runDivisibility(ptr, 0, 64, 4), 256);
  // A reshape forgets what it does not model.
  EXPECT_EQ(an.info(resultOf(p, 4)).contig, V{1});
}

} // namespace

// p - stride is addptr(p, neg(splat stride)) (the frontend's form): the
// negated offset keeps stride's divisibility, so rows above stay 16-byte
// aligned runs; a negated range is no run any more.
TEST(AxisInfo, NegKeepsDivisibility) {
  Parsed p = parse(R"(kernel @k(%X: !ptr<f32> <aligned = 16>, %s: i32 <multipleof = 16>) {
  %0 = range <end = 64, start = 0> : tile<64xi32>
  %1 = splat %X : tile<64x!ptr<f32>>
  %2 = addptr %1, %0 : tile<64x!ptr<f32>>
  %3 = splat %s : tile<64xi32>
  %4 = neg %3 : tile<64xi32>
  %5 = addptr %2, %4 : tile<64x!ptr<f32>>
  %6 = neg %0 : tile<64xi32>
  %7 = constant <value = 8> : tile<64xi32>
  %8 = mul %0, %7 : tile<64xi32>
  %9 = neg %8 : tile<64xi32>
  return
}
)");
  ASSERT_TRUE(p.fn);
  AxisAnalysis an(*p.fn);
  AxisInfo ns = an.info(resultOf(p, 4));
  EXPECT_EQ(ns.eltDiv, 16);
  EXPECT_EQ(ns.div, V{16});
  EXPECT_EQ(ns.cnst, V{64});
  AxisInfo ps = an.info(resultOf(p, 5));
  EXPECT_EQ(ps.contig, V{64});
  EXPECT_EQ(ps.div, V{16}); // min(16, 16 * 4 bytes)
  EXPECT_EQ(AxisAnalysis::runDivisibility(ps, 0, 4, 4), 16);
  AxisInfo nr = an.info(resultOf(p, 6)); // -(0 ... 64): goes down
  EXPECT_EQ(nr.contig, V{1});
  EXPECT_EQ(nr.div, V{1});
  AxisInfo n8 = an.info(resultOf(p, 9)); // -(8 * (0 ... 64)): each element a multiple of 8
  EXPECT_EQ(n8.contig, V{1});
  EXPECT_EQ(n8.div, V{8});
  EXPECT_EQ(n8.eltDiv, 8);
}
