// codegen/MmaFragment.h: the mma.sync m16n8k16 fragment maps and the #mma
// value layout (which thread and slot hold element (i, j)) against the PTX
// ISA's fragment tables ("Matrix Fragments for mma.m16n8k16 with floating
// point type", written below as the ISA states them, case by case), and the
// layout's derived facts the lowering relies on: every element held exactly
// once, the row slice and its broadcast, the FlashAttention-2 register trick
// (P's accumulator slots as the a operand), and the row reduction's quad
// shuffles giving the reference's pairwise order (interp/ExecReduce.cpp); and
// wgmma.m64nNk16's register A and accumulator tables against the same layout
// (the values pipeline on sm_90a).
#include "codegen/MmaFragment.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

namespace mma = tc::codegen::mma;
using mma::Elem;

// ---- The PTX ISA's tables, as written there ---------------------------------
// groupID = %laneid >> 2, threadID_in_group = %laneid % 4.

Elem isaA(int64_t lane, int64_t i) { // a0..a7 (.f16/.bf16)
  int64_t groupID = lane >> 2, tig = lane % 4;
  int64_t row = ((0 <= i && i < 2) || (4 <= i && i < 6)) ? groupID : groupID + 8;
  int64_t col = i < 4 ? (tig * 2) + (i & 0x1) : (tig * 2) + (i & 0x1) + 8;
  return {row, col};
}

Elem isaB(int64_t lane, int64_t i) { // b0..b3
  int64_t groupID = lane >> 2, tig = lane % 4;
  int64_t row = i < 2 ? (tig * 2) + (i & 0x1) : (tig * 2) + (i & 0x1) + 8;
  return {row, groupID};
}

Elem isaC(int64_t lane, int64_t i) { // c0..c3 / d0..d3 (.f32)
  int64_t groupID = lane >> 2, tig = lane % 4;
  int64_t row = i < 2 ? groupID : groupID + 8;
  return {row, (tig * 2) + (i & 0x1)};
}

TEST(MmaFragment, InstructionFragmentsAreTheIsaTables) {
  for (int64_t lane = 0; lane < 32; ++lane) {
    for (int64_t i = 0; i < 8; ++i)
      EXPECT_EQ(mma::aElem(lane, i), isaA(lane, i)) << "lane " << lane << " a" << i;
    for (int64_t i = 0; i < 4; ++i) {
      EXPECT_EQ(mma::bElem(lane, i), isaB(lane, i)) << "lane " << lane << " b" << i;
      EXPECT_EQ(mma::accElem(lane, i), isaC(lane, i)) << "lane " << lane << " c" << i;
    }
  }
}

TEST(MmaFragment, InstructionFragmentsCoverTheirMatricesOnce) {
  std::set<std::pair<int64_t, int64_t>> a, b, c;
  for (int64_t lane = 0; lane < 32; ++lane) {
    for (int64_t i = 0; i < 8; ++i) {
      Elem e = mma::aElem(lane, i);
      EXPECT_TRUE(e.row < 16 && e.col < 16);
      a.insert({e.row, e.col});
    }
    for (int64_t i = 0; i < 4; ++i) {
      Elem eb = mma::bElem(lane, i), ec = mma::accElem(lane, i);
      EXPECT_TRUE(eb.row < 16 && eb.col < 8 && ec.row < 16 && ec.col < 8);
      b.insert({eb.row, eb.col});
      c.insert({ec.row, ec.col});
    }
  }
  EXPECT_EQ(a.size(), 256u); // 16 x 16, 256 (lane, element) pairs
  EXPECT_EQ(b.size(), 128u); // 16 x 8
  EXPECT_EQ(c.size(), 128u); // 16 x 8
}

const std::vector<mma::ValueShape> kShapes = {
    {128, 64, 8}, {64, 64, 4}, {128, 128, 4}, {64, 16, 4}, {256, 32, 8}, {16, 16, 1}, {32, 64, 2}};

// Each element (r, c) of an [m, n] value in #mma is held by exactly one
// (thread, slot), and that slot is register c{(r%16>=8)*2 + c%2} of
// fragment ((r - warp's first row) / 16, c / 8) of the lane the ISA gives.
TEST(MmaFragment, ValueLayoutHoldsEachElementOnceWhereTheIsaPutsIt) {
  for (const mma::ValueShape &v : kShapes) {
    std::map<std::pair<int64_t, int64_t>, int> seen;
    for (int64_t tid = 0; tid < 32 * v.numWarps; ++tid)
      for (int64_t s = 0; s < v.slots(); ++s) {
        Elem e = mma::valueElem(v, tid, s);
        ASSERT_TRUE(e.row >= 0 && e.row < v.m && e.col >= 0 && e.col < v.n);
        ++seen[{e.row, e.col}];
        // Independently: the warp's rows, the fragment, the ISA's c table.
        int64_t warp = tid / 32, lane = tid % 32;
        int64_t fi = (s / 4) / (v.n / 8), fj = (s / 4) % (v.n / 8);
        Elem isa = isaC(lane, s % 4);
        EXPECT_EQ(e.row, warp * (v.m / v.numWarps) + 16 * fi + isa.row);
        EXPECT_EQ(e.col, 8 * fj + isa.col);
      }
    EXPECT_EQ(seen.size(), static_cast<size_t>(v.m * v.n)) << v.m << "x" << v.n;
    for (const auto &[rc, count] : seen)
      EXPECT_EQ(count, 1) << "(" << rc.first << ", " << rc.second << ")";
  }
}

// The row slice: each row held by the four lanes of one quad of one warp;
// x[:, newaxis] broadcast back to #mma takes, for every slot, the row slice
// slot of the same row in the same thread (so it moves no data).
TEST(MmaFragment, RowSliceAndItsBroadcastStayInTheThread) {
  for (const mma::ValueShape &v : kShapes) {
    std::map<int64_t, std::set<int64_t>> holders;
    for (int64_t tid = 0; tid < 32 * v.numWarps; ++tid) {
      for (int64_t s = 0; s < v.rowSlots(); ++s)
        holders[mma::rowSliceRow(v, tid, s)].insert(tid);
      for (int64_t s = 0; s < v.slots(); ++s)
        EXPECT_EQ(mma::rowSliceRow(v, tid, mma::rowSlotOf(v, s)), mma::valueElem(v, tid, s).row);
    }
    ASSERT_EQ(holders.size(), static_cast<size_t>(v.m));
    for (const auto &[row, tids] : holders) {
      ASSERT_EQ(tids.size(), 4u) << "row " << row;
      int64_t first = *tids.begin();
      EXPECT_EQ(first % 4, 0);
      for (int64_t q = 0; q < 4; ++q)
        EXPECT_TRUE(tids.count(first + q));
    }
  }
}

// P = [m, k] fp16 in #mma as the a operand of P @ V: the slots aSlotOf names,
// in the order the lowering packs them ({a0,a1}, {a2,a3}, {a4,a5}, {a6,a7}),
// hold exactly the elements the ISA's a table asks for at k step `step` and
// fragment row i of this warp's rows.
TEST(MmaFragment, AccumulatorSlotsAreTheNextAFragment) {
  for (const mma::ValueShape &p : kShapes) {
    if (p.n % 16)
      continue;
    for (int64_t tid = 0; tid < 32 * p.numWarps; ++tid)
      for (int64_t step = 0; step < p.n / 16; ++step)
        for (int64_t i = 0; i < p.fragsM(); ++i)
          for (int64_t e = 0; e < 8; ++e) {
            Elem want = isaA(tid % 32, e);
            want.row += (tid / 32) * p.rowsPerWarp() + 16 * i;
            want.col += 16 * step;
            int64_t s = mma::aSlotOf(p, step, i, e);
            ASSERT_TRUE(s >= 0 && s < p.slots());
            EXPECT_EQ(mma::valueElem(p, tid, s), want)
                << p.m << "x" << p.n << " tid " << tid << " step " << step << " a" << e;
          }
  }
}

// The reduction along axis 1 of a #mma value as the lowering runs it
// (LowerMmaValues.cpp): per n8 fragment, its two columns in the thread
// (left = the even column); then shfl.bfly 1 and 2 within the quad, the
// lane with the bit clear giving the left operand; then fragments j and
// j + 2^l in the thread. Done on expressions, it must give every lane of the
// quad the reference's pairwise tree over columns 0..n-1 (adjacent pairs
// first, left operand first; interp/ExecReduce.cpp).
std::string pairwise(int64_t lo, int64_t hi) {
  if (hi - lo == 1)
    return "x" + std::to_string(lo);
  int64_t mid = (lo + hi) / 2;
  return "(" + pairwise(lo, mid) + "+" + pairwise(mid, hi) + ")";
}

TEST(MmaFragment, QuadReductionIsThePairwiseTree) {
  for (int64_t n : {16, 32, 64, 128, 256}) {
    mma::ValueShape v{16, n, 1};
    std::string want = pairwise(0, n);
    for (int64_t h = 0; h < 2; ++h) {
      // part[lane][j] for the quad of group 0 (lanes 0-3), row 8h.
      std::vector<std::vector<std::string>> part(4);
      for (int64_t lane = 0; lane < 4; ++lane)
        for (int64_t j = 0; j < v.fragsN(); ++j) {
          int64_t r = j * 4 + 2 * h;
          Elem l = mma::valueElem(v, lane, r), rt = mma::valueElem(v, lane, r + 1);
          ASSERT_EQ(l.row, 8 * h);
          ASSERT_EQ(rt.col, l.col + 1);
          part[lane].push_back("(x" + std::to_string(l.col) + "+x" + std::to_string(rt.col) + ")");
        }
      for (int64_t mask : {1, 2}) {
        auto before = part;
        for (int64_t lane = 0; lane < 4; ++lane)
          for (size_t j = 0; j < part[lane].size(); ++j) {
            const std::string &mine = before[lane][j], &other = before[lane ^ mask][j];
            bool upper = lane & mask;
            part[lane][j] = "(" + (upper ? other : mine) + "+" + (upper ? mine : other) + ")";
          }
      }
      for (int64_t lane = 0; lane < 4; ++lane) {
        std::vector<std::string> &p = part[lane];
        for (size_t step = 1; step < p.size(); step *= 2)
          for (size_t j = 0; j + step < p.size(); j += 2 * step)
            p[j] = "(" + p[j] + "+" + p[j + step] + ")";
        EXPECT_EQ(p[0], want) << "n " << n << " lane " << lane << " h " << h;
      }
    }
  }
}


// ---- wgmma (the values pipeline on sm_90a, LowerWgmma.cpp's wgmmaValueDot) ----
// The PTX ISA's "Register Fragments" of wgmma .m64nNk16, as written there:
// warp_id_in_warp_group = warp % 4; a0..a7 (.f16/.bf16 register A) and the
// accumulator d0..d(N/2 - 1) of .f32.

Elem isaWgmmaA(int64_t warpInGroup, int64_t lane, int64_t i) {
  int64_t groupID = lane >> 2, tig = lane % 4;
  int64_t row = warpInGroup * 16 + ((i < 2 || (4 <= i && i < 6)) ? groupID : groupID + 8);
  int64_t col = i < 4 ? (tig * 2) + (i & 0x1) : (tig * 2) + (i & 0x1) + 8;
  return {row, col};
}

Elem isaWgmmaD(int64_t warpInGroup, int64_t lane, int64_t i) {
  int64_t groupID = lane >> 2, tig = lane % 4;
  int64_t row = warpInGroup * 16 + (i % 4 < 2 ? groupID : groupID + 8);
  int64_t col = (tig * 2) + (i & 0x1) + 8 * (i >> 2);
  return {row, col};
}

// wgmmaValueDot issues, per fragment row f of a warp, one wgmma whose m64 tile
// is the 16-row blocks f of the warpgroup's 4 warps: warp w's rows of it are
// w * tm + 16 f .. + 15 of the value. Its register A is the warp's m16n8k16 a
// fragment (aElem, as ldmatrix and the register trick give it), and its
// d registers are the #mma slots f * N/2 .. + N/2 - 1 in order: both tables
// then agree with the value layout once the tile's row 16 (w mod 4) + r is
// read as the value's row w * tm + 16 f + r.
TEST(MmaFragment, WgmmaRegisterFragmentsAreTheValueLayoutsWarpRows) {
  for (int64_t warps : {4, 8, 16})
    for (int64_t tm : {16, 32})
      for (int64_t n : {16, 32, 64, 128, 256}) {
        mma::ValueShape v{tm * warps, n, warps};
        if (v.slots() > 256)
          continue;
        for (int64_t tid = 0; tid < 32 * warps; ++tid) {
          int64_t lane = tid & 31, warp = tid >> 5, wg = warp % 4;
          for (int64_t f = 0; f < v.fragsM(); ++f) {
            auto valueRow = [&](int64_t tileRow) {
              EXPECT_EQ(tileRow / 16, wg); // the warp's own 16 rows of the m64 tile
              return warp * tm + 16 * f + tileRow % 16;
            };
            for (int64_t i = 0; i < n / 2; ++i) {
              Elem d = isaWgmmaD(wg, lane, i);
              Elem e = mma::valueElem(v, tid, f * (n / 2) + i);
              ASSERT_EQ(e, (Elem{valueRow(d.row), d.col}))
                  << "warps " << warps << " tm " << tm << " n " << n << " tid " << tid
                  << " slot " << f * (n / 2) + i;
            }
            for (int64_t i = 0; i < 8; ++i) {
              Elem a = isaWgmmaA(wg, lane, i), frag = mma::aElem(lane, i);
              ASSERT_EQ((Elem{warp * tm + 16 * f + frag.row, frag.col}),
                        (Elem{valueRow(a.row), a.col}))
                  << "tid " << tid << " a" << i;
            }
          }
        }
      }
}

} // namespace
