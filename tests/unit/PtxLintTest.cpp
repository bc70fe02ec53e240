// codegen/PtxLint.h: the patterns of the known ptxas bugs, found by name in PTX.
#include "codegen/PtxLint.h"

#include <gtest/gtest.h>

namespace {

using tc::codegen::findPtxasHazards;

TEST(PtxLint, NegTakenByMinMaxOrShift) {
  // docs/upstream/ptxas-vimnmx3-neg.md: neg.s32 feeding max.s32.
  auto hz = findPtxasHazards("\tshl.b32 \t%r6, %r1, 1;\n"
                             "\tneg.s32 \t%r7, %r6;\n"
                             "\tmax.s32 \t%r8, %r5, %r7;\n");
  ASSERT_EQ(hz.size(), 1u);
  EXPECT_EQ(hz[0].line, 3);
  EXPECT_NE(hz[0].what.find("min/max"), std::string::npos);
  // The shifted operand of a right shift counts; the shift amount does not.
  EXPECT_EQ(findPtxasHazards("neg.s32 %r2, %r1;\nshr.s32 %r3, %r2, 1;\n").size(), 1u);
  EXPECT_TRUE(findPtxasHazards("neg.s32 %r2, %r1;\nshr.s32 %r3, %r4, %r2;\n").empty());
  // The workaround's form: not + add.
  EXPECT_TRUE(findPtxasHazards("not.b32 %r2, %r1;\nadd.s32 %r3, %r2, 1;\n"
                               "max.s32 %r4, %r5, %r3;\n")
                  .empty());
  // A register also defined otherwise (a phi) is not known to be a neg.
  EXPECT_TRUE(findPtxasHazards("neg.s32 %r2, %r1;\nmov.b32 %r2, 5;\nmin.s32 %r4, %r5, %r2;\n")
                  .empty());
  // Nor is one also defined by a vector destination: the high word of a
  // double unpacked by `mov.b64 {lo, hi}` (libdevice's fmod; fuzz seed
  // 2026120641, kernel 1328, with TC_TEST_PTXAS_HAZARDS=1), or an ld.v2.
  EXPECT_TRUE(findPtxasHazards("{\n.reg .b32 %temp;\nmov.b64 \t{%temp, %r29}, %fd5;\n}\n"
                               "shr.u32 \t%r30, %r29, 20;\nneg.s32 \t%r29, %r28;\n")
                  .empty());
  EXPECT_TRUE(findPtxasHazards("ld.global.v2.u32 {%r1, %r2}, [%rd1];\nneg.s32 %r2, %r3;\n"
                               "max.s32 %r4, %r5, %r2;\n")
                  .empty());
}

TEST(PtxLint, SixteenBitNegOrAbs) {
  // docs/upstream/ptxas-neg16-sext.md: neg.s16 read through cvt.s32.s16.
  auto hz = findPtxasHazards("shl.b16 %rs3, %rs1, 9;\nneg.s16 %rs4, %rs3;\n"
                             "cvt.s32.s16 %r6, %rs4;\n");
  ASSERT_EQ(hz.size(), 1u);
  EXPECT_EQ(hz[0].line, 2);
  EXPECT_NE(hz[0].what.find("neg16"), std::string::npos);
  EXPECT_EQ(findPtxasHazards("abs.s16 %rs2, %rs1;\n").size(), 1u);
  EXPECT_EQ(findPtxasHazards("sub.s16 %rs2, 0, %rs1;\n").size(), 1u);
  // The workaround's form, a difference of two registers, and 32-bit negations are fine.
  EXPECT_TRUE(findPtxasHazards("not.b32 %r5, %r6;\ncvt.u16.u32 %rs3, %r5;\n"
                               "add.s16 %rs4, %rs3, 1;\ncvt.s32.s16 %r8, %rs4;\n")
                  .empty());
  EXPECT_TRUE(findPtxasHazards("sub.s16 %rs2, %rs3, %rs1;\nneg.s32 %r2, %r1;\n").empty());
}

TEST(PtxLint, RewriteNarrowNegations) {
  using tc::codegen::rewriteNarrowNegations;
  std::string ptx = "\tshl.b16 \t%rs3, %rs1, 9;\n\tneg.s16 \t%rs4, %rs3;\n"
                    "\tcvt.s32.s16 \t%r6, %rs4;\n\t@%p2 abs.s16 \t%rs7, %rs6;\n"
                    "\tneg.s32 \t%r2, %r1;\n";
  EXPECT_EQ(rewriteNarrowNegations(ptx), 2);
  EXPECT_NE(ptx.find("\tsub.u16 \t%rs4, 0, %rs3;"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("setp.lt.s16 \t%abs_p, %rs6, 0;"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("sub.u16 \t%abs_n, 0, %rs6;"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("@%p2 selp.b16 \t%rs7, %abs_n, %rs6, %abs_p;"), std::string::npos) << ptx;
  EXPECT_NE(ptx.find("\tneg.s32 \t%r2, %r1;\n"), std::string::npos); // 32 bits: left alone
  EXPECT_NE(ptx.find("\tcvt.s32.s16 \t%r6, %rs4;\n"), std::string::npos);
  EXPECT_TRUE(findPtxasHazards(ptx).empty());
  std::string none = "\tneg.s32 \t%r2, %r1;\n";
  EXPECT_EQ(rewriteNarrowNegations(none), 0);
  EXPECT_EQ(none, "\tneg.s32 \t%r2, %r1;\n");
}

TEST(PtxLint, NegBitsTakenByAFloat) {
  // docs/upstream/ptxas-neg-bits-setp.md
  auto hz = findPtxasHazards("neg.s64 %rd3, %rd2;\nmov.b64 %fd1, %rd3;\n"
                             "setp.gt.f64 %p1, %fd1, 0d0000000000000000;\n");
  ASSERT_EQ(hz.size(), 1u);
  EXPECT_EQ(hz[0].line, 2);
  EXPECT_TRUE(findPtxasHazards("neg.s32 %r2, %r1;\nadd.s32 %r3, %r2, %r4;\n").empty());
}

TEST(PtxLint, BoolBitsUsedAsAFloat) {
  // docs/upstream/ptxas-bool-bits-float.md: a phi of 0 and selp 1, 0 moved to a float.
  auto hz = findPtxasHazards("\tmov.b32 \t%r10, 0;\n"
                             "\t@!%p1 bra \t$L__BB0_2;\n"
                             "\tselp.u32 \t%r10, 1, 0, %p4;\n"
                             "$L__BB0_2:\n"
                             "\tmov.b32 \t%f1, %r10;\n"
                             "\tsetp.eq.f32 \t%p9, %f1, 0f3F800000;\n");
  ASSERT_EQ(hz.size(), 2u); // the move, and the compare of the copy
  EXPECT_EQ(hz[0].line, 5);
  EXPECT_EQ(hz[1].line, 6);
  EXPECT_NE(hz[0].what.find("bool"), std::string::npos);
  // A float select of the bits 1 and 0, converted.
  EXPECT_EQ(findPtxasHazards("selp.f32 %f1, 0f00000001, 0f00000000, %p1;\n"
                             "cvt.f64.f32 %fd1, %f1;\n")
                .size(),
            1u);
  // The workaround's form: through an identity prmt.
  EXPECT_TRUE(findPtxasHazards("selp.u32 %r1, 1, 0, %p1;\nprmt.b32 %r2, %r1, 0, 0x3210;\n"
                               "mov.b32 %f1, %r2;\n")
                  .empty());
  // A bool used as an integer, and a counter that starts at 0, are fine.
  EXPECT_TRUE(findPtxasHazards("selp.u32 %r1, 1, 0, %p1;\nadd.s32 %r2, %r1, %r3;\n").empty());
  EXPECT_TRUE(findPtxasHazards("mov.b32 %r1, 0;\nadd.s32 %r1, %r1, 1;\nmov.b32 %f1, %r1;\n")
                  .empty());
  // Through an integer narrowing to a 16-bit float compare, and a widening to a double.
  EXPECT_EQ(findPtxasHazards("selp.u32 %r1, 1, 0, %p1;\ncvt.u16.u32 %rs2, %r1;\n"
                             "setp.eq.f16 %p2, %rs2, %rs4;\n")
                .size(),
            1u);
  EXPECT_EQ(findPtxasHazards("selp.u32 %r1, 1, 0, %p1;\ncvt.u64.u32 %rd3, %r1;\n"
                             "mov.b64 %fd1, %rd3;\n")
                .size(),
            1u);
  // Other constants are no bool.
  EXPECT_TRUE(findPtxasHazards("selp.u32 %r1, 2, 0, %p1;\nmov.b32 %f1, %r1;\n").empty());
}

TEST(PtxLint, ZeroExtendedHighHalfAsMinuend) {
  // docs/upstream/ptxas-imad-hi-sub.md
  const char *bad = "mul.hi.u32 %r2, %r0, 1431655766;\ncvt.u64.u32 %rd1, %r2;\n"
                    "cvt.u64.u32 %rd2, %r1;\nsub.s64 %rd3, %rd1, %rd2;\n";
  auto hz = findPtxasHazards(bad);
  ASSERT_EQ(hz.size(), 1u);
  EXPECT_EQ(hz[0].line, 4);
  // As the subtrahend, or added, it is fine.
  EXPECT_TRUE(findPtxasHazards("mul.hi.u32 %r2, %r0, 3;\ncvt.u64.u32 %rd1, %r2;\n"
                               "sub.s64 %rd3, %rd2, %rd1;\nadd.s64 %rd4, %rd1, %rd2;\n")
                  .empty());
}

TEST(PtxLint, NarrowFloatToInt) {
  // docs/upstream/ptxas-f2i16-remat.md: the backend converts through 32 bits.
  EXPECT_EQ(findPtxasHazards("cvt.rzi.s16.f32 %rs1, %f1;\n").size(), 1u);
  EXPECT_EQ(findPtxasHazards("cvt.rzi.u8.f64 %rs1, %fd1;\n").size(), 1u);
  EXPECT_TRUE(findPtxasHazards("cvt.rzi.s32.f32 %r1, %f1;\ncvt.u16.u32 %rs1, %r1;\n").empty());
}

} // namespace
