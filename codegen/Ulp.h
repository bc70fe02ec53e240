//===- Ulp.h - Accuracy of the GPU's elementwise math ----------------------===//
//
// The conformance runner compares GPU results with the reference interpreter;
// for the transcendentals the GPU calls libdevice, whose documented accuracy
// (CUDA C++ Programming Guide, Mathematical Functions appendix) is a few ULPs.
// docs/gpu-numerics.md lists the table and where each number comes from.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

namespace tc::codegen {

/// The largest difference, in ULPs of dtype `t`, between the GPU's result of
/// elementwise op `k` and the correctly rounded result: 0 for the correctly
/// rounded ops (+ - * / sqrt fma fmod, conversions, min/max, floor/ceil, ...)
/// and for every integer op; the libdevice bound for exp exp2 log log2 sin cos
/// rsqrt in fp32/fp64; 1 for those in fp16/bf16 (computed in fp32, rounded once).
int gpuUlpBound(ir::OpKind k, DType t);

} // namespace tc::codegen
