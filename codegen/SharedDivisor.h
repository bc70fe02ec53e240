//===- SharedDivisor.h - fp32 divisions by one divisor --------------------===//
#pragma once

#include <set>
#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace tc::codegen {

/// Option "shared-divisor" (docs/gpu-numerics.md, "Divisions by one
/// divisor"): rewrites the fp32 divisions of a basic block that share a
/// divisor (`acc / l[:, newaxis]`, `num / den`) into the reciprocal of the
/// divisor, computed once and correctly rounded (`rcp.rn.f32`), and per
/// quotient a product and two fused corrections, q0 = a * y,
/// r = fma(-q0, b, a), q = fma(r, y, q0) (Markstein's correction: the
/// correctly rounded a / b while a and b lie in [2^-63, 2^63) in
/// magnitude). The block checks that range for every operand and, if one is
/// outside it (a zero, a subnormal, an infinity, a NaN, a huge or tiny value),
/// takes a slow path with the original `div.rn.f32` of every quotient of the
/// group. The results are the bits `div.rn.f32` gives, in 3 instructions a
/// quotient instead of about 10, with no serial reciprocal per quotient.
/// Runs after the optimiser (which would not know the intrinsics' exactness).
/// Returns the names of the functions it rewrote.
std::set<std::string> shareDivisors(llvm::Module &m);

/// The fast path's arithmetic on the host (the bits the GPU computes there:
/// rcp.rn, mul.rn and fma.rn are IEEE operations), for tests: q for a / b,
/// or false when a or b is outside the fast path's range.
bool sharedDivisorQuotient(float a, float b, float &q);

} // namespace tc::codegen
