//===- MmaFragment.h - Which lane and register of mma.sync hold an element -===//
//
// The element-to-thread maps of mma.sync m16n8k16 (fp16/bf16 in, fp32
// accumulate) and of tile values kept in its accumulator registers (#mma, the
// option "mma-values", codegen/LowerMmaValues.cpp), as plain integer
// functions: no LLVM, so a CPU test (tests/unit/MmaFragmentTest.cpp) checks
// them against the PTX ISA's fragment tables, and the lowering's emitted
// index arithmetic can be read against them. lane = 4 * group + quad position
// ("groupID", "threadID_in_group" in the ISA).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

namespace tc::codegen::mma {

/// A position in a tile: row, column (for an a fragment: row, k; b: k, column).
struct Elem {
  int64_t row = 0, col = 0;
  bool operator==(const Elem &o) const { return row == o.row && col == o.col; }
};

/// Accumulator (c/d) register r (0-3) of a m16n8 fragment: c0 c1 on row
/// `group`, c2 c3 eight rows below, two adjacent columns each.
constexpr Elem accElem(int64_t lane, int64_t r) {
  return {(lane >> 2) + 8 * (r >> 1), 2 * (lane & 3) + (r & 1)};
}

/// a element e (0-7, two per 32-bit register) of m16n8k16: registers
/// {a0,a1} (rows 0-7, k 0-7), {a2,a3} (rows 8-15, k 0-7), {a4,a5} (rows 0-7,
/// k 8-15), {a6,a7} (rows 8-15, k 8-15): ldmatrix.x4's four matrices in order.
constexpr Elem aElem(int64_t lane, int64_t e) {
  return {(lane >> 2) + 8 * ((e >> 1) & 1), 2 * (lane & 3) + (e & 1) + 8 * (e >> 2)};
}

/// b element e (0-3) of m16n8k16: {b0,b1} k 0-7, {b2,b3} k 8-15 of column `group`.
constexpr Elem bElem(int64_t lane, int64_t e) {
  return {2 * (lane & 3) + (e & 1) + 8 * (e >> 1), lane >> 2};
}

/// A tile value of m rows (and n columns) in #mma over numWarps warps: warp w
/// owns rows [w * m / numWarps, (w + 1) * m / numWarps) and every column, as
/// (m / numWarps / 16) x (n / 8) accumulator fragments, row-major, four slots each.
struct ValueShape {
  int64_t m = 0, n = 0, numWarps = 0;
  constexpr int64_t rowsPerWarp() const { return m / numWarps; }
  constexpr int64_t fragsM() const { return rowsPerWarp() / 16; }
  constexpr int64_t fragsN() const { return n / 8; }
  constexpr int64_t slots() const { return fragsM() * fragsN() * 4; }
  constexpr int64_t rowSlots() const { return fragsM() * 2; } // of the row slice
};

/// Slot s of thread tid of an [m, n] value in #mma: fragment (i, j) =
/// (s / 4 / fragsN, s / 4 % fragsN), its register s % 4.
constexpr Elem valueElem(const ValueShape &v, int64_t tid, int64_t s) {
  int64_t lane = tid & 31, warp = tid >> 5;
  int64_t frag = s / 4, i = frag / v.fragsN(), j = frag % v.fragsN();
  Elem e = accElem(lane, s % 4);
  return {warp * v.rowsPerWarp() + 16 * i + e.row, 8 * j + e.col};
}

/// Slot s (= 2i + h) of thread tid of an [m] (or [m, 1]) value in the row
/// slice of #mma: the row of fragment row i's registers c{2h}, c{2h+1}; the
/// four lanes of a quad hold it alike.
constexpr int64_t rowSliceRow(const ValueShape &v, int64_t tid, int64_t s) {
  return (tid >> 5) * v.rowsPerWarp() + 16 * (s >> 1) + 8 * (s & 1) + ((tid & 31) >> 2);
}

/// The row-slice slot a #mma slot's row is in (x[:, newaxis] broadcast).
constexpr int64_t rowSlotOf(const ValueShape &v, int64_t s) {
  return (s / 4 / v.fragsN()) * 2 + (s % 4) / 2;
}

/// The register trick (FlashAttention-2): the a fragment of k step `step`,
/// fragment row i of `@` whose a operand is a [m, k] fp16 value in #mma.
/// Element e of it is slot aSlotOf(...) of the same thread: accumulator
/// fragments j = 2 * step (k 0-7) and 2 * step + 1 (k 8-15).
constexpr int64_t aSlotOf(const ValueShape &a, int64_t step, int64_t i, int64_t e) {
  int64_t j = 2 * step + (e >> 2);
  return (i * a.fragsN() + j) * 4 + 2 * ((e >> 1) & 1) + (e & 1);
}

} // namespace tc::codegen::mma
