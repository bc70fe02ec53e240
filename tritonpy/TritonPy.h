//===- TritonPy.h - Tile IR to a Triton (Python DSL) module ------------===//
//
// `tritonc --emit=triton` and the triton backend (runtime/TritonBackend.h):
// one kernel of the tile IR printed as a self-contained Python module, a
// `@triton.jit` kernel that computes Triton-C's reference semantics with
// Triton's operations, and a launcher taking torch tensors:
//
//   import vector_add_triton as m
//   m.launch((cdiv(N, 1024),), N, a, b, c)      # torch tensors, Python numbers
//
// Every op is printed with explicit types (constants are typed `tl.full`,
// scalar arguments are converted to their declared type on entry), so Triton's
// own promotion rules never decide a type. Where Triton's operations differ from
// the reference semantics (float `/`, `%`, `-x`, `min`/`max` with NaN and -0.0,
// `exp`, bf16 arithmetic, ...), the translation spells out the reference
// computation; docs/triton.md has the table. What Triton cannot express is
// refused: Result::error starts with kUnsupported and names the construct.
//
// Depends on ir/ only.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <string>
#include <string_view>

namespace tc::tritonpy {

/// The start of every refusal ("not supported by the triton backend yet: ...").
inline constexpr std::string_view kUnsupported = "not supported by the triton backend yet: ";

struct Options {
  std::string sourceName; // for the header comment ("" : not named)
  unsigned numWarps = 4;  // the launcher's default
  /// tl.dot's input_precision for fp32 operands ("ieee": exact products, what
  /// the comparison needs; the culprit step of triton-fuzz tries "tf32x3").
  std::string dotInputPrecision = "ieee";
};

struct Result {
  std::string code;  // the Python module (when ok)
  std::string error; // a refusal: kUnsupported + the construct (+ its source line)
  bool ok() const { return error.empty(); }
};

/// Translates one kernel to a Python module.
Result translate(const ir::Module &m, const ir::Function &fn, const Options &opts = {});

/// The Python dtype names the module's PARAMS use: "i1" "i8" ... "bf16" "f32" "f64"
/// (the IR's names).
std::string_view paramDTypeName(DType t);

} // namespace tc::tritonpy
