// The documented accuracy of the GPU's elementwise ops (docs/gpu-numerics.md).
#include "codegen/Ulp.h"

namespace tc::codegen {

namespace {

/// libdevice's maximum ULP error for op k in fp32 (f64: false) or fp64
/// (CUDA C++ Programming Guide, Mathematical Functions appendix, full range);
/// 0 for ops that are correctly rounded or not computed by libdevice.
int libdeviceUlp(ir::OpKind k, bool f64) {
  using K = ir::OpKind;
  switch (k) {
  case K::Exp: return f64 ? 1 : 2;   // exp / expf
  case K::Exp2: return f64 ? 1 : 2;  // exp2 / exp2f
  case K::Log: return 1;             // log / logf
  case K::Log2: return 1;            // log2 / log2f
  case K::Sin: return 2;             // sin / sinf
  case K::Cos: return 2;             // cos / cosf
  case K::Rsqrt: return f64 ? 1 : 2; // rsqrt / rsqrtf
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
  case K::Neg:
  case K::Not:
  case K::Abs:
  case K::Sqrt:
  case K::Floor:
  case K::Ceil:
  case K::Add:
  case K::Sub:
  case K::Mul:
  case K::Div:
  case K::Rem:
  case K::And:
  case K::Or:
  case K::Xor:
  case K::Shl:
  case K::Shr:
  case K::Min:
  case K::Max:
  case K::UMulHi:
  case K::CmpEq:
  case K::CmpNe:
  case K::CmpLt:
  case K::CmpLe:
  case K::CmpGt:
  case K::CmpGe:
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
  case K::Return: return 0;
  }
  return 0;
}

} // namespace

int gpuUlpBound(ir::OpKind k, DType t) {
  switch (t) {
  case DType::F32: return libdeviceUlp(k, false);
  case DType::F64: return libdeviceUlp(k, true);
  case DType::F16:
  case DType::BF16: // an fp32 result within a few fp32 ULPs, rounded once: at most 1 ULP off
    return libdeviceUlp(k, false) > 0 ? 1 : 0;
  case DType::Bool:
  case DType::I8:
  case DType::I16:
  case DType::I32:
  case DType::I64:
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64: return 0;
  }
  return 0;
}

} // namespace tc::codegen
