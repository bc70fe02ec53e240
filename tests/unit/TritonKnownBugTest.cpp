// Known Triton bugs set aside by version (fuzz/TritonOracle.h, tritonKnownBug):
// the errors below are what the triton worker answers for the two reproducers
// of docs/upstream/ (triton-fp64-dot-narrow-operand.py,
// triton-coalesce-dead-while.py), compiled for sm_90 with Triton 3.6.0 and the
// worker's capture of the compiler's stderr (python/triton_c/triton_worker.py);
// each is a known bug on 3.6.0 and not on 3.9.0, and other compile errors stay
// failures. Below them, the two bugs of Triton's interpreter, recognised by the
// kernel's shape (tritonKernelFacts) and, for the error, its diagnostic.
#include "fuzz/TritonOracle.h"
#include "runtime/Launch.h"
#include "runtime/TritonBackend.h"

#include <cmath>
#include <map>

#include <gtest/gtest.h>

#include <string>

using namespace tc::fuzz;
using tc::HostArray;
using tc::kMatmulDropsNan;

namespace {

const std::string kHead = "Triton: RuntimeError: PassManager::run failed\n"
                          "Triton's compiler printed:\n";

const std::string kFp64Dot =
    kHead +
    "python: /project/third_party/nvidia/lib/TritonNVIDIAGPUToLLVM/DotOpToLLVM/MMAv2.cpp:116: "
    "ValueTableV2 (anonymous namespace)::getValuesFromDotOperandLayoutStruct(const "
    "LLVMTypeConverter *, Location, ConversionPatternRewriter &, Value, int, int, int, "
    "RankedTensorType, const NumRegisters &): Assertion `(bitwidth != 64 || largeK == false) && "
    "\"Currently fp64 don't support largeK MMA\"' failed.\n"
    "/tmp/tc-triton-worker-x/tc_kernel_0.py:17:0: error: Failures have been detected while "
    "processing an MLIR pass pipeline\n"
    "/tmp/tc-triton-worker-x/tc_kernel_0.py:17:0: note: Pipeline failed while executing "
    "[`ConvertTritonGPUToLLVM` on 'builtin.module' operation]: reproducer generated at "
    "`std::errs, please share the reproducer above with Triton project.`";

const std::string kCoalesce =
    kHead +
    "python: /root/.triton/llvm/llvm-f6ded0be-almalinux-x64/include/llvm/ADT/SmallVector.h:293: "
    "reference llvm::SmallVectorTemplateCommon<unsigned int>::operator[](size_type) [T = "
    "unsigned int]: Assertion `idx < size()' failed.\n"
    "/tmp/tc-triton-worker-x/tc_kernel_1.py:17:0: error: Failures have been detected while "
    "processing an MLIR pass pipeline\n"
    "/tmp/tc-triton-worker-x/tc_kernel_1.py:17:0: note: Pipeline failed while executing "
    "[`TritonGPUCoalesce` on 'builtin.module' operation]: reproducer generated at "
    "`std::errs, please share the reproducer above with Triton project.`";

const std::string kDesc = "Triton 3.6.0 on NVIDIA H200, torch 2.11.0, Python 3.12.3";

} // namespace

TEST(TritonKnownBug, Fp64DotNarrowOperandOnTriton36) {
  TritonKnownBug b = tritonKnownBug(kFp64Dot, kDesc);
  EXPECT_EQ(b.name, "fp64-dot-narrow-operand");
  EXPECT_EQ(b.fixedIn, "3.9.0");
  EXPECT_EQ(b.doc, "docs/upstream/triton-fp64-dot-narrow-operand.md");
  EXPECT_EQ(tritonKnownBug(kFp64Dot, "3.6.0").name, "fp64-dot-narrow-operand");
  EXPECT_EQ(tritonKnownBug(kFp64Dot, "3.8.1").name, "fp64-dot-narrow-operand");
}

TEST(TritonKnownBug, CoalesceDeadWhileOnTriton36) {
  TritonKnownBug b = tritonKnownBug(kCoalesce, kDesc);
  EXPECT_EQ(b.name, "coalesce-dead-while");
  EXPECT_EQ(b.doc, "docs/upstream/triton-coalesce-dead-while.md");
}

TEST(TritonKnownBug, NotOnAVersionWithTheFix) {
  for (const char *v : {"Triton 3.9.0 on NVIDIA H200", "3.9.0", "3.10.0", "4.0.0"}) {
    EXPECT_EQ(tritonKnownBug(kFp64Dot, v).name, "") << v;
    EXPECT_EQ(tritonKnownBug(kCoalesce, v).name, "") << v;
  }
  // No version (the worker did not say): reported.
  EXPECT_EQ(tritonKnownBug(kFp64Dot, "").name, "");
  EXPECT_EQ(tritonKnownBug(kCoalesce, "Triton ? on the GPU").name, "");
}

TEST(TritonKnownBug, OtherErrorsStayFailures) {
  // Python's exception alone (no compiler diagnostic captured): not recognised.
  EXPECT_EQ(tritonKnownBug("Triton: RuntimeError: PassManager::run failed", kDesc).name, "");
  // The same assertion text in another pass, another assertion in the same pass.
  std::string otherPass = kCoalesce;
  otherPass.replace(otherPass.find("TritonGPUCoalesce"), 17, "TritonGPURemoveLayoutConversions");
  EXPECT_EQ(tritonKnownBug(otherPass, kDesc).name, "");
  std::string otherAssert = kFp64Dot;
  otherAssert.replace(otherAssert.find("Currently fp64"), 14, "Unexpected MMA");
  EXPECT_EQ(tritonKnownBug(otherAssert, kDesc).name, "");
  // A different compile error, a launch error.
  EXPECT_EQ(tritonKnownBug("Triton: triton.compiler.errors.CompilationError: at 3:4:\n"
                           "ValueError: Unsupported dtype fp64 for tl.dot",
                           kDesc)
                .name,
            "");
  EXPECT_EQ(tritonKnownBug("Triton: RuntimeError: Triton Error [CUDA]: an illegal memory "
                           "access was encountered",
                           kDesc)
                .name,
            "");
}

namespace {

TritonKernelFacts factsOf(const std::string &src) {
  tc::CompileRequest req;
  req.sourceName = "k.tc";
  req.sourceText = src;
  tc::CompileOutcome c = tc::compileKernel(req);
  EXPECT_TRUE(c.ok()) << c.diagnostics;
  return c.ok() ? tritonKernelFacts(c.kernel->function()) : TritonKernelFacts{};
}

// Seed 20261205, kernel 347, reduced: the value of the atomic is a [1, 1]
// column stretched over the tile.
const char *kAtomicColumn = R"(
__global__ void k(uint32 *Y, int32 M, int32 N) {
  int rm[1] = 0;
  int rn[8] = 0;
  bool mask[1, 8] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);
  int16 r1[1] = 0;
  uint32 *p[1, 8] = Y + rm[:, newaxis] % 4 * N + rn[newaxis, :] % 4;
  atomic_add(p, (uint32)(r1[:, newaxis]), mask);
}
)";

// Seed 20261205, kernel 4, reduced: a scalar float comparison splat into a mask.
const char *kScalarCompareMask = R"(
__global__ void k(half *Y, int32 N, half S) {
  int rm[1] = 0;
  bool mask[1] = rm < N;
  half *pY[1] = Y + rm;
  *?(mask && (S)) pY = 0;
}
)";

const std::string kInterp36 = "Triton 3.6.0 interpreter (TRITON_INTERPRET=1), torch 1.13.0a0, "
                              "Python 3.11.2";
const std::string kInterp39 = "Triton 3.9.0 interpreter (TRITON_INTERPRET=1), torch 1.13.0a0, "
                              "Python 3.11.2";
const std::string kUfunc =
    "Triton: triton.runtime.errors.InterpreterError: TypeError(\"ufunc 'bitwise_and' not "
    "supported for the input types, and the inputs could not be safely coerced to any "
    "supported types according to the casting rule ''safe''\")";

} // namespace

TEST(TritonInterpKnownBug, FactsOfTheKernelShapes) {
  TritonKernelFacts a = factsOf(kAtomicColumn);
  EXPECT_TRUE(a.atomicBroadcastValue);
  EXPECT_FALSE(a.scalarCompareSplat);
  TritonKernelFacts m = factsOf(kScalarCompareMask);
  EXPECT_FALSE(m.atomicBroadcastValue);
  EXPECT_TRUE(m.scalarCompareSplat);
  // Seed 20261206, kernel 3586: (bool)(S), a half, or-ed with a tile comparison
  // (`S.to(tl.float32) != 0` broadcast, then `|`: "ufunc 'bitwise_or'").
  TritonKernelFacts c = factsOf(R"(
__global__ void k(half *Y, half S) {
  int r[4] = 0 ... 4;
  half y[4] = *(Y + r);
  *(Y + r) = (half)((bool)(S) | (y > 1));
}
)");
  EXPECT_TRUE(c.scalarCompareSplat);
  // A full tile as the value (no broadcast) and a tile comparison: neither.
  TritonKernelFacts n = factsOf(R"(
__global__ void k(uint32 *Y, int32 N) {
  int r[8] = 0 ... 8;
  atomic_add(Y + r, (uint32)(r), r < N);
}
)");
  EXPECT_FALSE(n.atomicBroadcastValue);
  EXPECT_FALSE(n.scalarCompareSplat);
  // In a loop body (facts are collected through regions).
  TritonKernelFacts l = factsOf(R"(
__global__ void k(uint32 *Y, int32 M, int32 N) {
  int rm[1] = 0;
  int rn[8] = 0 ... 8;
  bool mask[1, 8] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);
  uint32 *p[1, 8] = Y + rm[:, newaxis] * N + rn[newaxis, :];
  for (int i = 0; i < N; i++) {
    int16 r1[1] = i;
    atomic_xor(p, (uint32)(r1[:, newaxis]), mask);
  }
}
)");
  EXPECT_TRUE(l.atomicBroadcastValue);
}

TEST(TritonInterpKnownBug, AtomicBroadcastValueIsAMismatchOn36Only) {
  TritonKernelFacts f;
  f.atomicBroadcastValue = true;
  TritonKnownBug b = tritonInterpKnownBug("", kInterp36, f);
  EXPECT_EQ(b.name, "interp-atomic-broadcast-value");
  EXPECT_EQ(b.fixedIn, "3.9.0");
  EXPECT_EQ(b.doc, "docs/upstream/triton-interp-atomic-broadcast-value.md");
  EXPECT_EQ(tritonInterpKnownBug("", kInterp39, f).name, ""); // fixed there
  // An error on such a kernel is not this bug (it gives wrong values, no error).
  EXPECT_EQ(tritonInterpKnownBug(kUfunc, kInterp36, f).name, "");
  // Triton on the GPU, an unknown version: not recognised.
  EXPECT_EQ(tritonInterpKnownBug("", "Triton 3.6.0 on NVIDIA H200, torch 2.11.0", f).name, "");
  EXPECT_EQ(tritonInterpKnownBug("", "Triton ? interpreter (TRITON_INTERPRET=1)", f).name, "");
  // A mismatch of a kernel without the shape stays a failure.
  EXPECT_EQ(tritonInterpKnownBug("", kInterp36, TritonKernelFacts{}).name, "");
}

TEST(TritonInterpKnownBug, CompareResultDtypeNeedsTheErrorAndTheShape) {
  TritonKernelFacts f;
  f.scalarCompareSplat = true;
  TritonKnownBug b = tritonInterpKnownBug(kUfunc, kInterp36, f);
  EXPECT_EQ(b.name, "interp-compare-result-dtype");
  EXPECT_EQ(b.fixedIn, ""); // still in 3.9.0
  EXPECT_EQ(b.doc, "docs/upstream/triton-interp-compare-result-dtype.md");
  EXPECT_EQ(tritonInterpKnownBug(kUfunc, kInterp39, f).name, "interp-compare-result-dtype");
  EXPECT_EQ(tritonInterpKnownBug("Triton: triton.runtime.errors.InterpreterError: "
                                 "ValueError('mask has unsupported dtype')",
                                 kInterp39, f)
                .name,
            "interp-compare-result-dtype");
  // The same error without a scalar comparison splat to a tile: a failure.
  EXPECT_EQ(tritonInterpKnownBug(kUfunc, kInterp36, TritonKernelFacts{}).name, "");
  // Another error, or a wrong value, of a kernel with the shape: a failure.
  EXPECT_EQ(tritonInterpKnownBug("Triton: triton.runtime.errors.InterpreterError: "
                                 "IndexError('index 8 is out of bounds')",
                                 kInterp36, f)
                .name,
            "");
  EXPECT_EQ(tritonInterpKnownBug("", kInterp36, f).name, "");
}

// Triton's interpreter's tl.dot on a NumPy whose BLAS skips zero multiplicands
// (seed 20261205, kernel 7564: a column of NaN times zeros summed to 6.11e4).
TEST(TritonDotNanDivergence, OnlyNonFiniteReferenceValuesOfDotKernelsOnSuchAWorker) {
  const std::string dropping = kInterp36 + ", " + kMatmulDropsNan;
  TritonKernelFacts dot;
  dot.dot = true;
  HostArray y = HostArray::zeros(tc::DType::F32, {4});
  y.setDouble(0, std::nan(""));
  y.setDouble(1, -INFINITY);
  y.setDouble(2, 1.5);
  std::map<std::string, HostArray> want{{"Y", y}};
  ElementSet nonFinite{{"Y", 0}, {"Y", 1}};
  EXPECT_TRUE(tritonDotNanDivergence(dot, dropping, want, nonFinite));
  // A finite reference value among the differences: a finding.
  EXPECT_FALSE(tritonDotNanDivergence(dot, dropping, want, {{"Y", 0}, {"Y", 2}}));
  // No `@`, a worker whose NumPy keeps NaN, Triton on the GPU: findings.
  EXPECT_FALSE(tritonDotNanDivergence(TritonKernelFacts{}, dropping, want, nonFinite));
  EXPECT_FALSE(tritonDotNanDivergence(dot, kInterp36, want, nonFinite));
  EXPECT_FALSE(tritonDotNanDivergence(
      dot, std::string("Triton 3.6.0 on NVIDIA H200, torch 2.11.0, ") + kMatmulDropsNan, want,
      nonFinite));
  // Nothing differs, or an integer buffer: not this.
  EXPECT_FALSE(tritonDotNanDivergence(dot, dropping, want, {}));
  std::map<std::string, HostArray> ints{{"Y", HostArray::zeros(tc::DType::I32, {4})}};
  EXPECT_FALSE(tritonDotNanDivergence(dot, dropping, ints, {{"Y", 0}}));
}
