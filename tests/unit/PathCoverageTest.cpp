//===- PathCoverageTest.cpp - codegen::Compiled::paths --------------------===//
//
// The lowering paths the GPU backend reports for a kernel (the fuzzer's path
// coverage table, docs/fuzz.md): a matmul loop of fp16 tiles on wgmma for
// sm_90 and on mma.sync for sm_80 (both pipelined), the CUDA-core `@` with
// "mma" off, 16-byte vector accesses of an aligned copy, an atomic's kind.
// Compiles to PTX only (no GPU, no ptxas).
//
//===----------------------------------------------------------------------===//

#include "codegen/Codegen.h"
#include "frontend/Compiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

using namespace tc;

namespace {

std::unique_ptr<ir::Module> lowerSource(const std::string &source) {
  Compilation c{CompileOptions{}};
  std::ostringstream diags;
  c.diags().setOutput(&diags);
  c.addMainSource("k.tc", source);
  bool ok = c.run(Stage::Lower);
  EXPECT_TRUE(ok) << diags.str() << c.internalError();
  return ok ? c.takeModule() : nullptr;
}

/// The paths of the one kernel of `source` compiled with `opts`.
std::vector<std::string> pathsOf(const std::string &source, const codegen::Options &opts) {
  auto m = lowerSource(source);
  if (!m)
    return {"<no module>"};
  codegen::Result r = codegen::compile(*m, *m->functions.front(), opts);
  EXPECT_TRUE(r.ok()) << r.error;
  if (!r.ok())
    return {"<error> " + r.error};
  EXPECT_EQ(r.compiled->paths.size(), 1u);
  std::vector<std::string> only;
  EXPECT_TRUE(codegen::loweringPaths(*m, *m->functions.front(), opts, only, r.error));
  EXPECT_EQ(only, r.compiled->paths.at(0)) << "loweringPaths and compile disagree";
  return r.compiled->paths.at(0);
}

bool has(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string joined(const std::vector<std::string> &v) {
  std::string out;
  for (const std::string &s : v)
    out += s + " ";
  return out;
}

const char *kMatmulLoop = R"(
__global__ void mm(half *A __aligned(16), half *B __aligned(16), float *C __aligned(16),
                   int K __multipleof(64)) {
  int rm[64] = 0 ... 64;
  int rn[64] = 0 ... 64;
  int rk[32] = 0 ... 32;
  float c[64, 64] = 0;
  half *pa[64, 32] = A + rm[:, newaxis] * K + rk[newaxis, :];
  half *pb[32, 64] = B + rk[:, newaxis] * 64 + rn[newaxis, :];
  for (int k = 0; k < K; k += 32) {
    c += *pa @ *pb;
    pa += 32;
    pb += 32 * 64;
  }
  *(C + rm[:, newaxis] * 64 + rn[newaxis, :]) = c;
}
)";

const char *kCopy = R"(
__global__ void copy(float *X __aligned(16), float *Y __aligned(16)) {
  int off[1024] = get_program_id(0) * 1024 + 0 ... 1024;
  *(Y + off) = *(X + off);
}
)";

const char *kAtomic = R"(
__global__ void count(int *X) {
  int r[128] = 0 ... 128;
  atomic_add(X + r % 4, 1);
}
)";

TEST(PathCoverage, MatmulLoopTakesWgmmaOnSm90) {
  codegen::Options o;
  o.sm = 90;
  std::vector<std::string> p = pathsOf(kMatmulLoop, o);
  EXPECT_TRUE(has(p, "wgmma")) << joined(p);
  EXPECT_FALSE(has(p, "mma.sync")) << joined(p);
  EXPECT_TRUE(has(p, "mma.loop")) << joined(p);
  EXPECT_TRUE(has(p, "pipeline.stages=3")) << joined(p);
  EXPECT_FALSE(has(p, "dot.fma")) << joined(p);
}

TEST(PathCoverage, MatmulLoopTakesMmaSyncOnSm80) {
  codegen::Options o;
  o.sm = 80;
  o.numStages = 2;
  std::vector<std::string> p = pathsOf(kMatmulLoop, o);
  EXPECT_TRUE(has(p, "mma.sync")) << joined(p);
  EXPECT_FALSE(has(p, "wgmma")) << joined(p);
  EXPECT_TRUE(has(p, "pipeline.stages=2")) << joined(p);
}

TEST(PathCoverage, DotOnCudaCoresWithoutTensorCores) {
  codegen::Options o;
  o.tensorCores = false;
  std::vector<std::string> p = pathsOf(kMatmulLoop, o);
  EXPECT_TRUE(has(p, "dot.fma")) << joined(p);
  EXPECT_FALSE(has(p, "mma.sync")) << joined(p);
  EXPECT_FALSE(has(p, "wgmma")) << joined(p);
}

TEST(PathCoverage, AlignedCopyIsVectorised) {
  codegen::Options o;
  std::vector<std::string> p = pathsOf(kCopy, o);
  EXPECT_TRUE(has(p, "vector.load.16B")) << joined(p);
  EXPECT_TRUE(has(p, "vector.store.16B")) << joined(p);
  o.vectorize = false;
  p = pathsOf(kCopy, o);
  EXPECT_FALSE(has(p, "vector.load.16B")) << joined(p);
}

TEST(PathCoverage, AtomicKind) {
  std::vector<std::string> p = pathsOf(kAtomic, codegen::Options{});
  EXPECT_TRUE(has(p, "atomic.add")) << joined(p);
  EXPECT_FALSE(has(p, "wgmma")) << joined(p);
}

} // namespace
