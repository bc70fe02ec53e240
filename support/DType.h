//===- DType.h - Element types of Triton-C ---------------------------------===//
//
// The 13 scalar element types of the language and the promotion rule between
// them (docs/semantics.md rule 1). Every library uses this one enum.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tc {

/// Element types, in a fixed order used by tables and tests.
enum class DType : uint8_t {
  Bool,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  F16,
  BF16,
  F32,
  F64,
};
inline constexpr int kNumDTypes = 13;
inline constexpr DType kAllDTypes[kNumDTypes] = {
    DType::Bool, DType::I8,  DType::I16, DType::I32,  DType::I64, DType::U8, DType::U16,
    DType::U32,  DType::U64, DType::F16, DType::BF16, DType::F32, DType::F64};

/// The promotion kinds, ordered: bool < integral < floating.
enum class DKind : uint8_t { Bool, Int, Float };

DKind kindOf(DType t);
inline bool isBool(DType t) { return t == DType::Bool; }
/// Integral types, bool excluded.
bool isInt(DType t);
bool isSignedInt(DType t);
bool isUnsignedInt(DType t);
bool isFloat(DType t);
/// Width in bits (bool: 1).
unsigned bitWidth(DType t);
/// Storage size in bytes (bool: 1).
unsigned byteSize(DType t);

/// IR spelling: i1 i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64.
std::string_view irName(DType t);
std::optional<DType> parseIrName(std::string_view s);
/// Spelling in diagnostics (the language's names): bool int8 .. uint64 half bf16 float double.
std::string_view langName(DType t);
/// Spelling of conformance/FORMAT.md: bool int8 .. uint64 float16 bfloat16 float32 float64.
std::string_view conformanceName(DType t);
std::optional<DType> parseConformanceName(std::string_view s);

/// Rule 1 of docs/semantics.md (tile/tile promotion): higher kind wins; same kind:
/// wider wins; same width, both float, different formats: fp16; same width, different
/// signedness: unsigned.
DType promote(DType a, DType b);

/// The same-signedness integer type of the given width in bits (8..64).
DType intOfWidth(unsigned bits, bool isSigned);

} // namespace tc
