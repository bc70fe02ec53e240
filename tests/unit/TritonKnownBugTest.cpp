// Known Triton bugs set aside by version (fuzz/TritonOracle.h, tritonKnownBug):
// the errors below are what the triton worker answers for the two reproducers
// of docs/upstream/ (triton-fp64-dot-narrow-operand.py,
// triton-coalesce-dead-while.py), compiled for sm_90 with Triton 3.6.0 and the
// worker's capture of the compiler's stderr (python/triton_c/triton_worker.py);
// each is a known bug on 3.6.0 and not on 3.9.0, and other compile errors stay
// failures.
#include "fuzz/TritonOracle.h"

#include <gtest/gtest.h>

#include <string>

using namespace tc::fuzz;

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
