#include "support/DType.h"

#include <cassert>

namespace tc {

DKind kindOf(DType t) {
  if (t == DType::Bool)
    return DKind::Bool;
  return isFloat(t) ? DKind::Float : DKind::Int;
}

bool isSignedInt(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64;
}

bool isUnsignedInt(DType t) {
  return t == DType::U8 || t == DType::U16 || t == DType::U32 || t == DType::U64;
}

bool isInt(DType t) { return isSignedInt(t) || isUnsignedInt(t); }

bool isFloat(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 || t == DType::F64;
}

unsigned bitWidth(DType t) {
  switch (t) {
  case DType::Bool: return 1;
  case DType::I8:
  case DType::U8: return 8;
  case DType::I16:
  case DType::U16:
  case DType::F16:
  case DType::BF16: return 16;
  case DType::I32:
  case DType::U32:
  case DType::F32: return 32;
  case DType::I64:
  case DType::U64:
  case DType::F64: return 64;
  }
  assert(false && "unknown dtype");
  return 0;
}

unsigned byteSize(DType t) { return t == DType::Bool ? 1 : bitWidth(t) / 8; }

namespace {
struct Names {
  std::string_view ir, lang, conf;
};
Names namesOf(DType t) {
  switch (t) {
  case DType::Bool: return {"i1", "bool", "bool"};
  case DType::I8: return {"i8", "int8", "int8"};
  case DType::I16: return {"i16", "int16", "int16"};
  case DType::I32: return {"i32", "int32", "int32"};
  case DType::I64: return {"i64", "int64", "int64"};
  case DType::U8: return {"u8", "uint8", "uint8"};
  case DType::U16: return {"u16", "uint16", "uint16"};
  case DType::U32: return {"u32", "uint32", "uint32"};
  case DType::U64: return {"u64", "uint64", "uint64"};
  case DType::F16: return {"f16", "half", "float16"};
  case DType::BF16: return {"bf16", "bf16", "bfloat16"};
  case DType::F32: return {"f32", "float", "float32"};
  case DType::F64: return {"f64", "double", "float64"};
  }
  assert(false && "unknown dtype");
  return {};
}
} // namespace

std::string_view irName(DType t) { return namesOf(t).ir; }
std::string_view langName(DType t) { return namesOf(t).lang; }
std::string_view conformanceName(DType t) { return namesOf(t).conf; }

std::optional<DType> parseIrName(std::string_view s) {
  for (DType t : kAllDTypes)
    if (namesOf(t).ir == s)
      return t;
  return std::nullopt;
}

std::optional<DType> parseConformanceName(std::string_view s) {
  for (DType t : kAllDTypes)
    if (namesOf(t).conf == s)
      return t;
  return std::nullopt;
}

DType promote(DType a, DType b) {
  if (a == b)
    return a;
  if (kindOf(a) != kindOf(b))
    return kindOf(a) > kindOf(b) ? a : b;
  if (bitWidth(a) != bitWidth(b))
    return bitWidth(a) > bitWidth(b) ? a : b;
  if (isFloat(a)) // same width, fp16 vs bf16
    return DType::F16;
  return isUnsignedInt(a) ? a : b; // same width, different signedness
}

DType intOfWidth(unsigned bits, bool isSigned) {
  switch (bits) {
  case 8: return isSigned ? DType::I8 : DType::U8;
  case 16: return isSigned ? DType::I16 : DType::U16;
  case 32: return isSigned ? DType::I32 : DType::U32;
  case 64: return isSigned ? DType::I64 : DType::U64;
  default: break;
  }
  assert(false && "no integer type of that width");
  return DType::I32;
}

} // namespace tc
