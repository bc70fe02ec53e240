//===- ScalarEmit.h - One lane of an elementwise op, as LLVM IR ----------===//
//
// Internal to codegen/ (LLVM headers allowed here only). The lowering keeps a
// tile as one LLVM value per element a thread owns and calls this emitter
// once per element, so this file is where the language's scalar semantics
// (docs/semantics.md sections 4-7, 13) meet the NVPTX target:
//
//   register types: bool i1; int8..int64 / uint8..uint64 iN; fp16 `half`;
//   bf16 `bfloat`; fp32 `float`; fp64 `double`; pointers `ptr addrspace(1)`.
//   memory types:   the same, except bool is i8 (0 or 1).
//
// Arithmetic wraps; signed `>>` is ashr, unsigned lshr; int `/` `%` are
// sdiv/udiv, srem/urem (trap cases are undefined on the GPU: no check is
// emitted); float + - * / sqrt correctly rounded in the operand type, no
// contraction into FMA; `%` on floats is fmod; min/max are maxNum/minNum with
// max(-0, +0) = +0 and min(-0, +0) = -0; comparisons ordered except `!=`;
// unary `-` flips the sign bit; conversions to narrower floats round to
// nearest even (including f64 -> bf16 and f64 -> f16 with one rounding);
// float -> int truncates toward zero; to bool is `!= 0`. Transcendentals
// call libdevice (__nv_expf, __nv_exp, ...) in fp32 for fp16/bf16/fp32 and in
// fp64 for fp64; the ULP bounds are documented in docs/gpu-numerics.md.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <llvm/IR/IRBuilder.h>

namespace tc::codegen {

class ScalarEmitter {
public:
  ScalarEmitter(llvm::IRBuilder<> &b, llvm::Module &m) : b_(b), m_(m) {}

  /// Register and memory types of a dtype (see above).
  llvm::Type *regType(DType t) const;
  llvm::Type *memType(DType t) const;
  /// The register type of an element of `t` (pointer tiles: ptr addrspace(1)).
  llvm::Type *regType(const ir::Type &t) const;

  /// A constant op's value ({value} attribute: int64 bits or double) in `t`.
  llvm::Value *constant(DType t, const ir::AttrValue &value);

  /// C conversion (cast op, rule 13) and bit reinterpretation (equal widths).
  llvm::Value *cast(llvm::Value *v, DType from, DType to);
  llvm::Value *bitcast(llvm::Value *v, DType from, DType to);

  /// Unary ops: Neg Not Abs Exp Exp2 Log Log2 Sqrt Rsqrt Sin Cos Floor Ceil.
  llvm::Value *unary(ir::OpKind k, DType t, llvm::Value *a);
  /// Binary ops on operands of dtype `t`: Add .. CmpGe (compares give i1),
  /// UMulHi. (AddPtr is done by the lowering.)
  llvm::Value *binary(ir::OpKind k, DType t, llvm::Value *a, llvm::Value *b);
  /// fma(a, b, c) rounded once in `t` (fp16/bf16 included).
  llvm::Value *fma(DType t, llvm::Value *a, llvm::Value *b, llvm::Value *c);
  /// exp2 of an fp32/fp16/bf16 operand that is never NaN nor below -126
  /// (notBelowMinus126): `ex2.approx.ftz.f32` alone, which for such operands
  /// is what libdevice's exp2f (unary Exp2) computes, bit for bit.
  llvm::Value *exp2Normal(DType t, llvm::Value *a);

  /// Memory <-> register (bool: i8 <-> i1).
  llvm::Value *fromMemory(llvm::Value *v, DType t);
  llvm::Value *toMemory(llvm::Value *v, DType t);

private:
  llvm::Value *callLibdevice(const char *f32Name, const char *f64Name, DType t, llvm::Value *a);
  llvm::IRBuilder<> &b_;
  llvm::Module &m_;
};

/// Whether every element of the float value v is provably >= -126 and never
/// NaN (option exp2-range): v is max(x, y) with either operand such a value,
/// a float constant >= -126, or a splat, broadcast, expand_dims or
/// float-to-float cast of one (max is maxNum: a NaN x gives y).
bool notBelowMinus126(const ir::Value *v);

/// A 32/64-bit integer -> fp16/f32/f64 cast is emitted as a call of the pure
/// function named here ("tc.cvt.rn.f16.s32", ...) so that LLVM's optimiser
/// cannot fold it (InstCombine forgets fp16's range, ScalarEmit.cpp);
/// restoreIntToFloat turns every such call back into the plain `sitofp` /
/// `uitofp` after the optimiser (constant operands fold there).
std::string intToFloatCallName(bool isSigned, llvm::Type *from, llvm::Type *to);
void restoreIntToFloat(llvm::Module &m);

} // namespace tc::codegen
