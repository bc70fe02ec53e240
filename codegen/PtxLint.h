// Finds, in PTX text, the patterns that ptxas (CUDA 13.0, sm_90) is known to
// miscompile and that the backend's ptxas workarounds (codegen/Target.cpp)
// should have rewritten. A developer's check: with TC_TEST_PTXAS_HAZARDS=1 a
// compile that leaves one fails, so `triton-fuzz --compile-only` finds and
// reduces the kernels where a workaround misses a form of its pattern, without
// a GPU (docs/fuzz.md).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tc::codegen {

struct PtxHazard {
  int line = 0;     // 1-based line in the PTX
  std::string what; // which known ptxas bug the pattern meets
  std::string text; // the instruction that uses the value
};

/// Every use, in `ptx`, of (1) the result of a `neg.s16/s32/s64` by an
/// integer min/max, a right shift, or a move into a float register
/// (docs/upstream/ptxas-vimnmx3-neg.md, ptxas-lea-hi-neg.md,
/// ptxas-neg-bits-setp.md); (2) a register whose every definition is a
/// `selp` of 1 and 0 (or of the float bits 1 and 0) or the constant 0 or 1,
/// by a move into a float register, a float conversion or a float compare
/// (ptxas-bool-bits-float.md); (3) a `mul.hi.u32/s32` zero-extended to 64
/// bits as the minuend of a `sub.s64` (ptxas-imad-hi-sub.md); (4) any
/// `cvt.rzi` from a float to an 8- or 16-bit integer (ptxas-f2i16-remat.md:
/// the backend converts through 32 bits); (5) any `neg.s16`, `abs.s16` or
/// `sub.s16 d, 0, x` (ptxas-neg16-sext.md). Registers are
/// matched by name; a register also defined otherwise does not count.
std::vector<PtxHazard> findPtxasHazards(std::string_view ptx);

/// Rewrites, in place, every `neg.s16 d, a` as `sub.u16 d, 0, a` and every
/// `abs.s16 d, a` as a scoped block of `setp.lt.s16`, `sub.u16` and `selp`
/// (a guard predicate kept on the instruction that writes d). ptxas (CUDA
/// 13.0, also the driver 580 JIT, sm_90, -O1 and up) takes a signed 16-bit
/// negation as one that cannot wrap: where its result is read as a signed
/// 16-bit value (`cvt.s32.s16`, `setp.lt.s16`, `div.s16`, `mul.wide.s16`,
/// `shr.s16`) it sign-extends the operand first and negates in 32 bits, so
/// -(-32768) came out +32768 (docs/upstream/ptxas-neg16-sext.md). The
/// unsigned subtraction wraps by definition and ptxas keeps it so. NVPTX
/// writes these for i8/i16 `0 - x` and `abs`, and forms them itself (`x * 7
/// & 7` as `-x & 7`), so the PTX is the place to catch all of them. Returns
/// the number of instructions rewritten.
int rewriteNarrowNegations(std::string &ptx);

} // namespace tc::codegen
