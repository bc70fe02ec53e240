//===- ScalarEmit.cpp - One lane of an elementwise op, as LLVM IR ---------===//
//
// How each rule of docs/semantics.md (sections 4-7, 13) becomes NVPTX code,
// and why it rounds once (docs/gpu-numerics.md has the long version):
//
//  - Float + - * / and compares are emitted in the operand type with no
//    fast-math flags. NVPTX selects add.rn/sub.rn/mul.rn (the .rn stops ptxas
//    from fusing a mul and an add into an fma) and div.rn/sqrt.rn; fp16 on
//    sm_53+ and bf16 on sm_90 are native, otherwise LLVM computes in f32 and
//    rounds once, which is exact for fp16/bf16 (f32 has >= 2p + 2 bits).
//  - fma is llvm.fma in every float type: fma.rn.f16 / fma.rn.bf16 (sm_80+)
//    round once in hardware, like fma.rn.f32/f64.
//  - Narrowing float conversions are one fptrunc (cvt.rn.*; LLVM expands
//    f64 -> bf16 on sm_80 with round-to-odd to f32). fp16 <-> bf16 goes
//    through f32 exactly. bf16 widens through its bits (widenBF16: LLVM's
//    InstCombine would narrow f64/f32 arithmetic on it to half).
//  - 32/64-bit integer -> fp16/f32/f64: one cvt.rn, hidden from the optimiser
//    (opaqueIntToFloat: InstCombine forgets fp16's range when it folds such
//    casts) and restored after it.
//  - Integer -> bf16: LLVM's sm_80 lowering of a 32/64-bit integer to bf16
//    rounds to f32 first (two roundings), so the integer is first rounded to
//    odd at 24 significant bits, which makes the f32 step exact.
//  - Transcendentals call libdevice in f32 (fp16/bf16/f32) or f64; fp16/bf16
//    round the f32 result once.
//
//===----------------------------------------------------------------------===//
#include "codegen/ScalarEmit.h"
#include "support/PlantedBugs.h"

#include <llvm/ADT/APFloat.h>
#include <llvm/ADT/APSInt.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/InlineAsm.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/IntrinsicsNVPTX.h>
#include <llvm/IR/Module.h>

#include <cassert>
#include <variant>

namespace tc::codegen {

namespace {

using llvm::Value;

/// The unary and binary ops the emitter implements, split out of ir::OpKind
/// once so that the per-type switches below stay complete and short.
enum class Un { Neg, Not, Abs, Exp, Exp2, Log, Log2, Sqrt, Rsqrt, Sin, Cos, Floor, Ceil, None };
enum class Bin {
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  And,
  Or,
  Xor,
  Shl,
  Shr,
  Min,
  Max,
  MulHi,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  None
};

struct OpClass {
  Un un = Un::None;
  Bin bin = Bin::None;
};

/// Sorts an op kind into the emitter's unary / binary classes.
OpClass classify(ir::OpKind k) {
  using K = ir::OpKind;
  switch (k) {
  case K::Neg: return {Un::Neg, Bin::None};
  case K::Not: return {Un::Not, Bin::None};
  case K::Abs: return {Un::Abs, Bin::None};
  case K::Exp: return {Un::Exp, Bin::None};
  case K::Exp2: return {Un::Exp2, Bin::None};
  case K::Log: return {Un::Log, Bin::None};
  case K::Log2: return {Un::Log2, Bin::None};
  case K::Sqrt: return {Un::Sqrt, Bin::None};
  case K::Rsqrt: return {Un::Rsqrt, Bin::None};
  case K::Sin: return {Un::Sin, Bin::None};
  case K::Cos: return {Un::Cos, Bin::None};
  case K::Floor: return {Un::Floor, Bin::None};
  case K::Ceil: return {Un::Ceil, Bin::None};
  case K::Add: return {Un::None, Bin::Add};
  case K::Sub: return {Un::None, Bin::Sub};
  case K::Mul: return {Un::None, Bin::Mul};
  case K::Div: return {Un::None, Bin::Div};
  case K::Rem: return {Un::None, Bin::Rem};
  case K::And: return {Un::None, Bin::And};
  case K::Or: return {Un::None, Bin::Or};
  case K::Xor: return {Un::None, Bin::Xor};
  case K::Shl: return {Un::None, Bin::Shl};
  case K::Shr: return {Un::None, Bin::Shr};
  case K::Min: return {Un::None, Bin::Min};
  case K::Max: return {Un::None, Bin::Max};
  case K::UMulHi: return {Un::None, Bin::MulHi};
  case K::CmpEq: return {Un::None, Bin::Eq};
  case K::CmpNe: return {Un::None, Bin::Ne};
  case K::CmpLt: return {Un::None, Bin::Lt};
  case K::CmpLe: return {Un::None, Bin::Le};
  case K::CmpGt: return {Un::None, Bin::Gt};
  case K::CmpGe: return {Un::None, Bin::Ge};
  case K::Constant:
  case K::Range:
  case K::GetProgramId:
  case K::GetNumPrograms:
  case K::Splat:
  case K::Broadcast:
  case K::ExpandDims:
  case K::Reshape:
  case K::ExtractSlice:
  case K::InsertSlice:
  case K::Undef:
  case K::Trans:
  case K::Cast:
  case K::Bitcast:
  case K::AddPtr:
  case K::Fma:
  case K::Select:
  case K::Reduce:
  case K::Dot:
  case K::Load:
  case K::Store:
  case K::AtomicRMW:
  case K::AtomicCas:
  case K::Print:
  case K::Assert:
  case K::DebugBarrier:
  case K::For:
  case K::If:
  case K::While:
  case K::Yield:
  case K::Condition:
  case K::Return: return {};
  }
  return {};
}

/// Clears the builder's fast-math flags and fpmath tag for the emitter's ops
/// (no contraction, no approximations) and restores them on exit.
class StrictFp {
public:
  explicit StrictFp(llvm::IRBuilderBase &b) : guard_(b) {
    b.clearFastMathFlags();
    b.setDefaultFPMathTag(nullptr);
    b.setIsFPConstrained(false);
  }

private:
  llvm::IRBuilderBase::FastMathFlagGuard guard_;
};

bool isHalfLike(DType t) {
  return t == DType::F16 || t == DType::BF16;
}

/// The APFloat semantics of a float dtype.
const llvm::fltSemantics &semanticsOf(DType t) {
  switch (t) {
  case DType::F16: return llvm::APFloat::IEEEhalf();
  case DType::BF16: return llvm::APFloat::BFloat();
  case DType::F32: return llvm::APFloat::IEEEsingle();
  case DType::F64: return llvm::APFloat::IEEEdouble();
  case DType::Bool:
  case DType::I8:
  case DType::I16:
  case DType::I32:
  case DType::I64:
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64: break;
  }
  assert(false && "semanticsOf a non-float dtype");
  return llvm::APFloat::IEEEdouble();
}

/// The register type of a dtype in context `c`.
llvm::Type *scalarType(llvm::LLVMContext &c, DType t) {
  switch (t) {
  case DType::Bool: return llvm::Type::getInt1Ty(c);
  case DType::I8:
  case DType::U8: return llvm::Type::getInt8Ty(c);
  case DType::I16:
  case DType::U16: return llvm::Type::getInt16Ty(c);
  case DType::I32:
  case DType::U32: return llvm::Type::getInt32Ty(c);
  case DType::I64:
  case DType::U64: return llvm::Type::getInt64Ty(c);
  case DType::F16: return llvm::Type::getHalfTy(c);
  case DType::BF16: return llvm::Type::getBFloatTy(c);
  case DType::F32: return llvm::Type::getFloatTy(c);
  case DType::F64: return llvm::Type::getDoubleTy(c);
  }
  return llvm::Type::getInt32Ty(c);
}

/// A poison value for a bad request (an internal bug; asserts in debug builds).
Value *unsupported(llvm::Type *ty, const char *what) {
  assert(false && "ScalarEmitter: op not defined on this dtype");
  (void)what;
  return llvm::PoisonValue::get(ty);
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

/// `mag` (an unsigned integer) rounded to odd at `keep` significant bits: the
/// bits below are dropped and, when any was set, the lowest kept bit is set.
/// A later rounding to <= keep - 2 bits is then correct (it cannot see a
/// false tie), and converting the result to a float of >= keep bits is exact.
Value *roundToOddBits(llvm::IRBuilder<> &b, Value *mag, unsigned keep) {
  auto *ty = llvm::cast<llvm::IntegerType>(mag->getType());
  unsigned width = ty->getBitWidth();
  Value *lz = b.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, mag, b.getFalse());
  // Bits beyond `keep`: max(width - keep - lz, 0).
  Value *shift = b.CreateBinaryIntrinsic(llvm::Intrinsic::usub_sat,
                                         llvm::ConstantInt::get(ty, width - keep), lz);
  Value *unit = b.CreateShl(llvm::ConstantInt::get(ty, 1), shift);
  Value *low = b.CreateSub(unit, llvm::ConstantInt::get(ty, 1));
  Value *inexact = b.CreateICmpNE(b.CreateAnd(mag, low), llvm::ConstantInt::get(ty, 0));
  Value *kept = b.CreateAnd(mag, b.CreateNot(low));
  return b.CreateOr(kept, b.CreateSelect(inexact, unit, llvm::ConstantInt::get(ty, 0)));
}

/// A 32- or 64-bit integer to bf16 with one rounding (see the file comment).
Value *wideIntToBF16(llvm::IRBuilder<> &b, Value *v, bool isSigned) {
  llvm::Type *f32 = b.getFloatTy();
  Value *neg = nullptr, *mag = v;
  if (isSigned) {
    neg = b.CreateICmpSLT(v, llvm::ConstantInt::get(v->getType(), 0));
    mag = b.CreateSelect(neg, b.CreateNeg(v), v); // MIN's magnitude is MIN's bits, unsigned
  }
  Value *f = b.CreateUIToFP(roundToOddBits(b, mag, 24), f32); // exact: <= 24 significant bits
  if (neg)
    f = b.CreateSelect(neg, b.CreateFNeg(f), f);
  return b.CreateFPTrunc(f, b.getBFloatTy());
}

/// A 32- or 64-bit integer to fp16, f32 or f64, as a call of a pure function
/// that restoreIntToFloat (Target.cpp) turns back into the plain cast after
/// the optimiser. LLVM 19's InstCombine takes an integer cast as exact when
/// the integer has no more significant bits than the float's mantissa,
/// forgetting fp16's range (65504): `fpext (sitofp (x << 24) to half) to
/// float` became `sitofp to float` (finite where fp16 overflows to inf) and
/// `fptosi` of it `x << 24`; it also forms such casts to half from `fptrunc
/// (sitofp ... to float)`. So no cast of a wide integer is there for it to
/// fold (docs/upstream/llvm-instcombine-int-half-range.md).
Value *opaqueIntToFloat(llvm::IRBuilder<> &b, Value *v, bool isSigned, llvm::Type *to) {
  llvm::Module *m = b.GetInsertBlock()->getModule();
  std::string name = intToFloatCallName(isSigned, v->getType(), to);
  llvm::Function *f = m->getFunction(name);
  if (!f) {
    f = llvm::Function::Create(llvm::FunctionType::get(to, {v->getType()}, false),
                               llvm::Function::ExternalLinkage, name, m);
    f->setDoesNotAccessMemory();
    f->setDoesNotThrow();
    f->setWillReturn();
    f->addFnAttr(llvm::Attribute::Speculatable);
    f->addFnAttr(llvm::Attribute::NoSync);
    f->addFnAttr(llvm::Attribute::NoFree);
  }
  return b.CreateCall(f, {v});
}

/// Integer (or bool) to float, rounded once to nearest even.
Value *intToFloat(llvm::IRBuilder<> &b, Value *v, DType from, DType to) {
  bool isSigned = isSignedInt(from);
  if (to == DType::BF16 && bitWidth(from) > 24)
    return wideIntToBF16(b, v, isSigned);
  // Every other pair is one cvt.rn, or an exact cvt to f32 then one rounding
  // (to fp16 from >= 2^24 overflows to inf either way). Narrower integers fit
  // fp16's range, and constants fold here to the same value.
  if (bitWidth(from) >= 32 && to != DType::BF16 && !llvm::isa<llvm::Constant>(v))
    return opaqueIntToFloat(b, v, isSigned, scalarType(b.getContext(), to));
  llvm::Type *ty = scalarType(b.getContext(), to);
  return isSigned ? b.CreateSIToFP(v, ty) : b.CreateUIToFP(v, ty);
}

/// bf16 `v` widened exactly to f32 or f64, through its bits (a bf16 is the
/// upper half of the f32 of the same value) rather than an `fpext`. LLVM 19's
/// InstCombine narrows `fptrunc (fsub (fpext a), (fpext b)) to half` (also
/// fadd, fmul, fdiv) into `fsub half (fptrunc a), (fptrunc b)` when a and b
/// are bf16, because it compares mantissa widths only: a bf16 beyond half's
/// range became inf, and `v4 - (double)v4` with v4 = 2^32 gave NaN where 0 is
/// right (GPU campaign seed 20261401 kernel 101762;
/// docs/upstream/llvm-instcombine-bf16-half.md). It does not look through
/// the bits, so the subtraction stays in f64 (or f32) and rounds once.
Value *widenBF16(llvm::IRBuilder<> &b, Value *v, llvm::Type *to) {
  Value *bits = b.CreateZExt(b.CreateBitCast(v, b.getInt16Ty()), b.getInt32Ty());
  Value *f = b.CreateBitCast(b.CreateShl(bits, 16), b.getFloatTy());
  return to->isFloatTy() ? f : b.CreateFPExt(f, to);
}

/// Float to float, rounded once to nearest even when narrowing.
Value *floatToFloat(llvm::IRBuilder<> &b, Value *v, DType from, DType to) {
  llvm::Type *ty = scalarType(b.getContext(), to);
  if (from == DType::BF16 && bitWidth(to) > 16)
    return widenBF16(b, v, ty);
  if (bitWidth(from) < bitWidth(to))
    return b.CreateFPExt(v, ty);
  if (bitWidth(from) == bitWidth(to)) // fp16 <-> bf16: exact to f32, then one rounding
    return b.CreateFPTrunc(b.CreateFPExt(v, b.getFloatTy()), ty);
  if (plantedBug("bf16-truncate") && from == DType::F32 && to == DType::BF16) return b.CreateBitCast(b.CreateTrunc(b.CreateLShr(b.CreateBitCast(v, b.getInt32Ty()), 16), b.getInt16Ty()), ty);
  return b.CreateFPTrunc(v, ty);
}

/// fp16 <-> bf16 bits. LLVM 19's NVPTX cannot select a bitcast between the
/// two ("Cannot select: bf16 = bitcast f16" once the operand comes from
/// another block), and folds a chain through i16 back into one, so the bits
/// cross an i16 `mov.b16` that the optimisers do not see through.
Value *halfLikeBitcast(llvm::IRBuilder<> &b, Value *v, llvm::Type *to) {
  auto *fty = llvm::FunctionType::get(b.getInt16Ty(), {b.getInt16Ty()}, false);
  auto *mov = llvm::InlineAsm::get(fty, "mov.b16 $0, $1;", "=h,h", false);
  llvm::CallInst *bits = b.CreateCall(mov, {b.CreateBitCast(v, b.getInt16Ty())});
  bits->setDoesNotAccessMemory();
  bits->setDoesNotThrow();
  return b.CreateBitCast(bits, to);
}

/// C conversion between two different non-bool dtypes, or from bool.
Value *convertValue(llvm::IRBuilder<> &b, Value *v, DType from, DType to) {
  llvm::Type *ty = scalarType(b.getContext(), to);
  bool fromFloat = isFloat(from), toFloat = isFloat(to);
  if (!fromFloat && !toFloat) // ints wrap or extend by the source's signedness
    return b.CreateIntCast(v, ty, isSignedInt(from));
  if (!fromFloat)
    return intToFloat(b, v, from, to);
  if (!toFloat && plantedBug("float-to-int-round")) v = b.CreateUnaryIntrinsic(llvm::Intrinsic::rint, v);
  if (!toFloat) // truncates toward zero; out of range is undefined on the GPU
    return isSignedInt(to) ? b.CreateFPToSI(v, ty) : b.CreateFPToUI(v, ty);
  return floatToFloat(b, v, from, to);
}

//===----------------------------------------------------------------------===//
// Library calls
//===----------------------------------------------------------------------===//

/// Declares libdevice function `name` of `arity` arguments of type `ty`
/// (linked into the module later) as a pure function.
llvm::FunctionCallee libdeviceFunction(llvm::Module &m, const char *name, llvm::Type *ty,
                                       unsigned arity) {
  llvm::LLVMContext &c = m.getContext();
  llvm::SmallVector<llvm::Type *, 2> params(arity, ty);
  auto *fty = llvm::FunctionType::get(ty, params, false);
  llvm::AttrBuilder attrs(c);
  attrs.addAttribute(llvm::Attribute::NoUnwind);
  attrs.addAttribute(llvm::Attribute::WillReturn);
  attrs.addMemoryAttr(llvm::MemoryEffects::none());
  return m.getOrInsertFunction(
      name, fty, llvm::AttributeList::get(c, llvm::AttributeList::FunctionIndex, attrs));
}

/// fmod via libdevice; fp16/bf16 through f32 (fmod is exact in every format).
Value *floatRem(llvm::IRBuilder<> &b, llvm::Module &m, DType t, Value *x, Value *y) {
  if (t == DType::F64)
    return b.CreateCall(libdeviceFunction(m, "__nv_fmod", b.getDoubleTy(), 2), {x, y});
  llvm::Type *f32 = b.getFloatTy();
  bool narrow = isHalfLike(t);
  Value *xf = narrow ? b.CreateFPExt(x, f32) : x;
  Value *yf = narrow ? b.CreateFPExt(y, f32) : y;
  Value *r = b.CreateCall(libdeviceFunction(m, "__nv_fmodf", f32, 2), {xf, yf});
  return narrow ? b.CreateFPTrunc(r, x->getType()) : r;
}

//===----------------------------------------------------------------------===//
// Floats
//===----------------------------------------------------------------------===//

/// maxNum / minNum with the signed-zero rule. fp32 and fp64 at run time: PTX
/// max/min, one instruction, which is that rule exactly (NaN loses, NaN only if
/// both are; -0.0 < +0.0: measured on an H200 for every pair of +-0, NaN, +-1,
/// both operand orders) as inline PTX: llvm.maxnum may give either zero, and
/// InstCombine turns llvm.nvvm.fmax into llvm.maxnum. Otherwise (constants, so that they fold to the
/// same value; fp16/bf16): llvm.maxnum (NaN loses) and, where the operands
/// compare equal, the AND (max: +0 wins) or OR (min: -0 wins) of their bits,
/// which is the operand itself for any other value.
Value *floatMinMax(llvm::IRBuilder<> &b, bool isMax, Value *x, Value *y) {
  llvm::Type *fty = x->getType();
  bool constants = llvm::isa<llvm::Constant>(x) && llvm::isa<llvm::Constant>(y);
  if (!constants && (fty->isFloatTy() || fty->isDoubleTy())) {
    bool f32 = fty->isFloatTy();
    std::string text = std::string(isMax ? "max" : "min") + (f32 ? ".f32" : ".f64") + " $0, $1, $2;";
    auto *asmTy = llvm::FunctionType::get(fty, {fty, fty}, false);
    return b.CreateCall(llvm::InlineAsm::get(asmTy, text, f32 ? "=f,f,f" : "=d,d,d", false), {x, y});
  }
  llvm::Type *ity = b.getIntNTy(fty->getPrimitiveSizeInBits().getFixedValue());
  Value *r = isMax ? b.CreateMaxNum(x, y) : b.CreateMinNum(x, y);
  Value *xi = b.CreateBitCast(x, ity), *yi = b.CreateBitCast(y, ity);
  Value *zeros = b.CreateBitCast(isMax ? b.CreateAnd(xi, yi) : b.CreateOr(xi, yi), fty);
  return b.CreateSelect(b.CreateFCmpOEQ(x, y), zeros, r);
}

/// sqrt correctly rounded: sqrt.rn in f32/f64; fp16/bf16 through f32 (exact
/// double rounding: 24 >= 2p + 2).
Value *floatSqrt(llvm::IRBuilder<> &b, DType t, Value *a) {
  if (!isHalfLike(t))
    return b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, a);
  Value *r = b.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, b.CreateFPExt(a, b.getFloatTy()));
  return b.CreateFPTrunc(r, a->getType());
}

llvm::CmpInst::Predicate floatPredicate(Bin op) {
  switch (op) {
  case Bin::Eq: return llvm::CmpInst::FCMP_OEQ;
  case Bin::Ne: return llvm::CmpInst::FCMP_UNE; // NaN != x is true
  case Bin::Lt: return llvm::CmpInst::FCMP_OLT;
  case Bin::Le: return llvm::CmpInst::FCMP_OLE;
  case Bin::Gt: return llvm::CmpInst::FCMP_OGT;
  case Bin::Ge: return llvm::CmpInst::FCMP_OGE;
  case Bin::Add:
  case Bin::Sub:
  case Bin::Mul:
  case Bin::Div:
  case Bin::Rem:
  case Bin::And:
  case Bin::Or:
  case Bin::Xor:
  case Bin::Shl:
  case Bin::Shr:
  case Bin::Min:
  case Bin::Max:
  case Bin::MulHi:
  case Bin::None: break;
  }
  assert(false && "not a comparison");
  return llvm::CmpInst::FCMP_FALSE;
}

llvm::CmpInst::Predicate intPredicate(Bin op, bool isSigned) {
  using P = llvm::CmpInst::Predicate;
  switch (op) {
  case Bin::Eq: return P::ICMP_EQ;
  case Bin::Ne: return P::ICMP_NE;
  case Bin::Lt: return isSigned ? P::ICMP_SLT : P::ICMP_ULT;
  case Bin::Le: return isSigned ? P::ICMP_SLE : P::ICMP_ULE;
  case Bin::Gt: return isSigned ? P::ICMP_SGT : P::ICMP_UGT;
  case Bin::Ge: return isSigned ? P::ICMP_SGE : P::ICMP_UGE;
  case Bin::Add:
  case Bin::Sub:
  case Bin::Mul:
  case Bin::Div:
  case Bin::Rem:
  case Bin::And:
  case Bin::Or:
  case Bin::Xor:
  case Bin::Shl:
  case Bin::Shr:
  case Bin::Min:
  case Bin::Max:
  case Bin::MulHi:
  case Bin::None: break;
  }
  assert(false && "not a comparison");
  return P::ICMP_EQ;
}

/// Binary ops on floats of dtype t.
Value *floatBinary(llvm::IRBuilder<> &b, llvm::Module &m, Bin op, DType t, Value *x, Value *y) {
  if (plantedBug("fdiv-approx") && op == Bin::Div && t == DType::F32) return b.CreateFMul(x, b.CreateFDiv(llvm::ConstantFP::get(x->getType(), 1.0), y));
  switch (op) {
  case Bin::Add: return b.CreateFAdd(x, y);
  case Bin::Sub: return b.CreateFSub(x, y);
  case Bin::Mul: return b.CreateFMul(x, y);
  case Bin::Div: return b.CreateFDiv(x, y);
  case Bin::Rem: return floatRem(b, m, t, x, y);
  case Bin::Min: return floatMinMax(b, false, x, y);
  case Bin::Max: return floatMinMax(b, true, x, y);
  case Bin::Eq:
  case Bin::Ne:
  case Bin::Lt:
  case Bin::Le:
  case Bin::Gt:
  case Bin::Ge: return b.CreateFCmp(floatPredicate(op), x, y);
  case Bin::And:
  case Bin::Or:
  case Bin::Xor:
  case Bin::Shl:
  case Bin::Shr:
  case Bin::MulHi:
  case Bin::None: break;
  }
  return unsupported(x->getType(), "float binary");
}

//===----------------------------------------------------------------------===//
// Integers and bools
//===----------------------------------------------------------------------===//

/// High half of the double-width product: signed for signed dtypes (as the
/// interpreter's umulhi), unsigned otherwise. 64-bit factors go through
/// `mul.hi.s64`/`mul.hi.u64` (the NVVM intrinsics), not an i128 product:
/// LLVM 19's loop strength reduction rewrites `zext(a / b) * c` in i128 as
/// `zext(a) / zext(b) * c`, and the NVPTX backend has no i128 division (it
/// aborts with `Undefined external symbol ""`; seed 20261601 kernel 248931,
/// docs/upstream/llvm-nvptx-lsr-i128-udiv.md).
Value *mulHi(llvm::IRBuilder<> &b, DType t, Value *x, Value *y) {
  unsigned w = x->getType()->getIntegerBitWidth();
  bool s = isSignedInt(t);
  if (plantedBug("umulhi-sign")) s = !s;
  // Two constants take the wide product below, which the builder folds (the
  // intrinsic does not fold).
  if (w == 64 && !(llvm::isa<llvm::Constant>(x) && llvm::isa<llvm::Constant>(y)))
    return b.CreateIntrinsic(x->getType(),
                             s ? llvm::Intrinsic::nvvm_mulhi_ll : llvm::Intrinsic::nvvm_mulhi_ull,
                             {x, y});
  llvm::Type *wide = b.getIntNTy(2 * w);
  Value *xw = s ? b.CreateSExt(x, wide) : b.CreateZExt(x, wide);
  Value *yw = s ? b.CreateSExt(y, wide) : b.CreateZExt(y, wide);
  return b.CreateTrunc(b.CreateLShr(b.CreateMul(xw, yw), w), x->getType());
}

/// min/max of integers by value; bools as 0 < 1.
Value *intMinMax(llvm::IRBuilder<> &b, bool isMax, DType t, Value *x, Value *y) {
  if (t == DType::Bool)
    return isMax ? b.CreateOr(x, y) : b.CreateAnd(x, y);
  llvm::Intrinsic::ID id = isSignedInt(t) ? (isMax ? llvm::Intrinsic::smax : llvm::Intrinsic::smin)
                                          : (isMax ? llvm::Intrinsic::umax : llvm::Intrinsic::umin);
  return b.CreateBinaryIntrinsic(id, x, y);
}

/// Binary ops on integers and bools of dtype t (arithmetic wraps; the trap
/// cases of / % << >> are undefined on the GPU and get no check).
Value *intBinary(llvm::IRBuilder<> &b, Bin op, DType t, Value *x, Value *y) {
  bool s = isSignedInt(t);
  if (plantedBug("shift-logical") && op == Bin::Shr) return b.CreateLShr(x, y);
  if (plantedBug("int-div-unsigned") && op == Bin::Div) return b.CreateUDiv(x, y);
  switch (op) {
  case Bin::Add: return b.CreateAdd(x, y);
  case Bin::Sub: return b.CreateSub(x, y);
  case Bin::Mul: return b.CreateMul(x, y);
  case Bin::Div: return s ? b.CreateSDiv(x, y) : b.CreateUDiv(x, y);
  case Bin::Rem: return s ? b.CreateSRem(x, y) : b.CreateURem(x, y);
  case Bin::And: return b.CreateAnd(x, y);
  case Bin::Or: return b.CreateOr(x, y);
  case Bin::Xor: return b.CreateXor(x, y);
  case Bin::Shl: return b.CreateShl(x, y);
  case Bin::Shr: return s ? b.CreateAShr(x, y) : b.CreateLShr(x, y);
  case Bin::Min: return intMinMax(b, false, t, x, y);
  case Bin::Max: return intMinMax(b, true, t, x, y);
  case Bin::MulHi: return mulHi(b, t, x, y);
  case Bin::Eq:
  case Bin::Ne:
  case Bin::Lt:
  case Bin::Le:
  case Bin::Gt:
  case Bin::Ge: return b.CreateICmp(intPredicate(op, s), x, y);
  case Bin::None: break;
  }
  return unsupported(x->getType(), "integer binary");
}

/// Unary ops on integers and bools (bool's `~` is logical not; -b is b).
Value *intUnary(llvm::IRBuilder<> &b, Un op, DType t, Value *a) {
  switch (op) {
  case Un::Neg: return b.CreateNeg(a); // wraps: -MIN == MIN
  case Un::Not: return b.CreateNot(a);
  case Un::Abs:
    return isSignedInt(t) ? b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, a, b.getFalse()) : a;
  case Un::Exp:
  case Un::Exp2:
  case Un::Log:
  case Un::Log2:
  case Un::Sqrt:
  case Un::Rsqrt:
  case Un::Sin:
  case Un::Cos:
  case Un::Floor:
  case Un::Ceil:
  case Un::None: break;
  }
  return unsupported(a->getType(), "integer unary");
}

/// An int64 attribute value in dtype t (ints wrap; floats round to nearest even).
llvm::Constant *intConstant(llvm::LLVMContext &c, DType t, int64_t v) {
  if (t == DType::Bool)
    return llvm::ConstantInt::getBool(c, v != 0);
  if (isFloat(t)) {
    llvm::APFloat f(semanticsOf(t));
    f.convertFromAPInt(llvm::APInt(64, static_cast<uint64_t>(v), true), true,
                       llvm::APFloat::rmNearestTiesToEven);
    return llvm::ConstantFP::get(c, f);
  }
  llvm::APInt bits(64, static_cast<uint64_t>(v));
  return llvm::ConstantInt::get(c, bits.zextOrTrunc(bitWidth(t)));
}

/// A double attribute value in dtype t, rounded to nearest even (as a cast from
/// double); ints truncate toward zero.
llvm::Constant *floatConstant(llvm::LLVMContext &c, DType t, double v) {
  if (t == DType::Bool)
    return llvm::ConstantInt::getBool(c, v != 0);
  llvm::APFloat f(v);
  if (!isFloat(t)) {
    llvm::APSInt r(bitWidth(t), !isSignedInt(t));
    bool exact = false;
    f.convertToInteger(r, llvm::APFloat::rmTowardZero, &exact);
    return llvm::ConstantInt::get(c, r);
  }
  bool losesInfo = false;
  f.convert(semanticsOf(t), llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return llvm::ConstantFP::get(c, f);
}

} // namespace

std::string intToFloatCallName(bool isSigned, llvm::Type *from, llvm::Type *to) {
  const char *f = to->isHalfTy() ? "f16" : to->isFloatTy() ? "f32" : "f64";
  return std::string("tc.cvt.rn.") + f + "." + (isSigned ? "s" : "u") +
         std::to_string(from->getIntegerBitWidth());
}

void restoreIntToFloat(llvm::Module &m) {
  std::vector<llvm::Function *> stand;
  for (llvm::Function &f : m)
    if (f.isDeclaration() && f.getName().starts_with("tc.cvt.rn."))
      stand.push_back(&f);
  for (llvm::Function *f : stand) {
    llvm::FunctionType *ty = f->getFunctionType();
    bool isSigned = intToFloatCallName(true, ty->getParamType(0), ty->getReturnType()) ==
                    f->getName();
    std::vector<llvm::CallInst *> calls;
    for (llvm::User *u : f->users())
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(u); call && call->getCalledFunction() == f)
        calls.push_back(call);
    for (llvm::CallInst *call : calls) {
      llvm::IRBuilder<> b(call);
      b.SetCurrentDebugLocation(call->getDebugLoc());
      llvm::Value *v = call->getArgOperand(0);
      llvm::Value *cast = isSigned ? b.CreateSIToFP(v, ty->getReturnType())
                                   : b.CreateUIToFP(v, ty->getReturnType());
      cast->takeName(call);
      call->replaceAllUsesWith(cast);
      call->eraseFromParent();
    }
    if (f->use_empty())
      f->eraseFromParent();
  }
}


//===----------------------------------------------------------------------===//
// ScalarEmitter
//===----------------------------------------------------------------------===//

llvm::Type *ScalarEmitter::regType(DType t) const {
  return scalarType(m_.getContext(), t);
}

llvm::Type *ScalarEmitter::memType(DType t) const {
  return t == DType::Bool ? llvm::Type::getInt8Ty(m_.getContext()) : regType(t);
}

llvm::Type *ScalarEmitter::regType(const ir::Type &t) const {
  return t.isPtr ? llvm::PointerType::get(m_.getContext(), 1) : regType(t.dtype);
}

llvm::Value *ScalarEmitter::constant(DType t, const ir::AttrValue &value) {
  llvm::LLVMContext &c = m_.getContext();
  if (const int64_t *i = std::get_if<int64_t>(&value))
    return intConstant(c, t, *i);
  if (const double *d = std::get_if<double>(&value))
    return floatConstant(c, t, *d);
  return unsupported(regType(t), "constant attribute");
}

llvm::Value *ScalarEmitter::cast(llvm::Value *v, DType from, DType to) {
  StrictFp strict(b_);
  if (from == to)
    return v;
  if (to == DType::Bool) { // != 0; NaN != 0 is true
    if (isFloat(from))
      return b_.CreateFCmpUNE(v, llvm::ConstantFP::getZero(v->getType()));
    return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  return convertValue(b_, v, from, to);
}

llvm::Value *ScalarEmitter::bitcast(llvm::Value *v, DType from, DType to) {
  assert(bitWidth(from) == bitWidth(to) || v->getType()->isPointerTy());
  if (v->getType()->isPointerTy()) // a pointer's bits are its 64-bit address
    v = b_.CreatePtrToInt(v, b_.getInt64Ty());
  if (isHalfLike(from) && isHalfLike(to) && from != to)
    return halfLikeBitcast(b_, v, regType(to));
  return b_.CreateBitCast(v, regType(to)); // no instruction when the types are equal
}

llvm::Value *ScalarEmitter::unary(ir::OpKind k, DType t, llvm::Value *a) {
  StrictFp strict(b_);
  Un op = classify(k).un;
  if (!isFloat(t))
    return intUnary(b_, op, t, a);
  switch (op) {
  case Un::Neg: return b_.CreateFNeg(a); // flips the sign bit
  case Un::Abs: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, a);
  case Un::Exp: return callLibdevice("__nv_expf", "__nv_exp", t, a);
  case Un::Exp2: return callLibdevice("__nv_exp2f", "__nv_exp2", t, a);
  case Un::Log: return callLibdevice("__nv_logf", "__nv_log", t, a);
  case Un::Log2: return callLibdevice("__nv_log2f", "__nv_log2", t, a);
  case Un::Sqrt: return floatSqrt(b_, t, a);
  case Un::Rsqrt: return callLibdevice("__nv_rsqrtf", "__nv_rsqrt", t, a);
  case Un::Sin: return callLibdevice("__nv_sinf", "__nv_sin", t, a);
  case Un::Cos: return callLibdevice("__nv_cosf", "__nv_cos", t, a);
  case Un::Floor: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, a);
  case Un::Ceil: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, a);
  case Un::Not:
  case Un::None: break;
  }
  return unsupported(a->getType(), "float unary");
}

llvm::Value *ScalarEmitter::binary(ir::OpKind k, DType t, llvm::Value *a, llvm::Value *b) {
  StrictFp strict(b_);
  Bin op = classify(k).bin;
  if (a->getType()->isPointerTy()) // pointers compare as unsigned addresses
    return b_.CreateICmp(intPredicate(op, false), a, b);
  if (isFloat(t))
    return floatBinary(b_, m_, op, t, a, b);
  return intBinary(b_, op, t, a, b);
}

llvm::Value *ScalarEmitter::fma(DType t, llvm::Value *a, llvm::Value *b, llvm::Value *c) {
  StrictFp strict(b_);
  assert(isFloat(t) && "fma on a non-float dtype");
  // fma.rn.{f16,bf16,f32,f64}: one rounding in hardware on sm_80+.
  return b_.CreateIntrinsic(llvm::Intrinsic::fma, {a->getType()}, {a, b, c});
}

llvm::Value *ScalarEmitter::fromMemory(llvm::Value *v, DType t) {
  if (t != DType::Bool)
    return v;
  return b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
}

llvm::Value *ScalarEmitter::toMemory(llvm::Value *v, DType t) {
  if (t != DType::Bool)
    return v;
  return b_.CreateZExt(v, memType(t));
}

llvm::Value *ScalarEmitter::exp2Normal(DType t, llvm::Value *a) {
  StrictFp strict(b_);
  assert(t == DType::F32 || isHalfLike(t));
  Value *x = t == DType::F32 ? a : b_.CreateFPExt(a, b_.getFloatTy()); // exact
  Value *r = b_.CreateIntrinsic(llvm::Intrinsic::nvvm_ex2_approx_ftz_f, {}, {x});
  return t == DType::F32 ? r : b_.CreateFPTrunc(r, a->getType()); // one rounding
}

bool notBelowMinus126(const ir::Value *v) {
  // Planted bug exp2-range-bound: constants down to -127 pass, whose exp2 is
  // subnormal (2^-127), which the FTZ instruction flushes to zero.
  const double bound = plantedBug("exp2-range-bound") ? -127.0 : -126.0;
  const ir::Op *d = v->definingOp();
  if (!d || !isFloat(v->type().dtype))
    return false;
  switch (d->kind()) {
  case ir::OpKind::Constant: {
    const ir::AttrValue *a = d->attr("value");
    if (const double *x = a ? std::get_if<double>(a) : nullptr)
      return *x >= bound; // (false for NaN) rounding to the dtype keeps it: -126 is exact
    if (const int64_t *i = a ? std::get_if<int64_t>(a) : nullptr)
      return *i >= bound;
    return false;
  }
  case ir::OpKind::Max: return notBelowMinus126(d->operand(0)) || notBelowMinus126(d->operand(1));
  case ir::OpKind::Splat:
  case ir::OpKind::Broadcast:
  case ir::OpKind::ExpandDims: return notBelowMinus126(d->operand(0));
  case ir::OpKind::Cast: // float to float: rounding is monotone and -126 exact in each
    return isFloat(d->operand(0)->type().dtype) && notBelowMinus126(d->operand(0));
  default: return false;
  }
}

llvm::Value *ScalarEmitter::callLibdevice(const char *f32Name, const char *f64Name, DType t,
                                          llvm::Value *a) {
  if (t == DType::F64)
    return b_.CreateCall(libdeviceFunction(m_, f64Name, b_.getDoubleTy(), 1), {a});
  llvm::Type *f32 = b_.getFloatTy();
  Value *x = t == DType::F32 ? a : b_.CreateFPExt(a, f32); // exact
  Value *r = b_.CreateCall(libdeviceFunction(m_, f32Name, f32, 1), {x});
  return t == DType::F32 ? r : b_.CreateFPTrunc(r, a->getType()); // one rounding
}

} // namespace tc::codegen
