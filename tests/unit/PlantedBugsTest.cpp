//===- PlantedBugsTest.cpp - The planted bugs of support/PlantedBugs.h ----===//
//
// 1. (every build) plantedBugList() is well-formed: unique names, where in
//    {gpu, ir}, a description, at least 10 GPU and 4 IR bugs.
// 2. (TC_PLANTED_BUGS builds) each bug is live: with $TC_PLANT_BUG naming it,
//    an IR bug changes what the default pass pipeline makes of a small kernel
//    and a GPU bug changes the PTX of a small kernel; the bug is part of
//    codegen::compilerVersion() (the kernel cache key); an unknown name plants
//    nothing.
//
//===----------------------------------------------------------------------===//
#include "support/PlantedBugs.h"

#include "codegen/Codegen.h"
#include "frontend/Compiler.h"
#include "ir/IRParser.h"
#include "ir/Passes.h"
#include "ir/Printer.h"
#include "runtime/Specialize.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <sstream>

using namespace tc;

namespace {

TEST(PlantedBugs, ListIsWellFormed) {
  std::set<std::string> names;
  std::map<std::string, int> perWhere;
  for (const PlantedBugInfo &b : plantedBugList()) {
    ASSERT_NE(b.name, nullptr);
    ASSERT_NE(b.where, nullptr);
    ASSERT_NE(b.description, nullptr);
    std::string name = b.name, where = b.where;
    EXPECT_TRUE(names.insert(name).second) << "duplicate name " << name;
    EXPECT_TRUE(where == "gpu" || where == "ir") << name << ": where = " << where;
    EXPECT_GT(std::strlen(b.description), 10u) << name;
    EXPECT_EQ(std::string(b.description).find('\n'), std::string::npos) << name;
    // A name is what $TC_PLANT_BUG and a shell script pass around.
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-"), std::string::npos)
        << name;
    ++perWhere[where];
  }
  EXPECT_GE(perWhere["gpu"], 10);
  EXPECT_GE(perWhere["ir"], 4);
}

#ifdef TC_PLANTED_BUGS

/// Sets $TC_PLANT_BUG for one scope and restores the previous value.
class PlantBug {
public:
  explicit PlantBug(const char *name) {
    if (const char *old = std::getenv("TC_PLANT_BUG"))
      old_ = old;
    if (name)
      setenv("TC_PLANT_BUG", name, 1);
    else
      unsetenv("TC_PLANT_BUG");
  }
  ~PlantBug() {
    if (old_)
      setenv("TC_PLANT_BUG", old_->c_str(), 1);
    else
      unsetenv("TC_PLANT_BUG");
  }

private:
  std::optional<std::string> old_;
};

/// The tile IR of a Triton-C source ("" and a test failure if it does not compile).
std::unique_ptr<ir::Module> lowerSource(const std::string &source) {
  Compilation c{CompileOptions{}};
  std::ostringstream diags;
  c.diags().setOutput(&diags);
  c.addMainSource("k.tc", source);
  bool ok = c.run(Stage::Lower);
  EXPECT_TRUE(ok) << diags.str() << c.internalError();
  return ok ? c.takeModule() : nullptr;
}

std::unique_ptr<ir::Module> parseIR(const std::string &text) {
  SourceManager sm;
  DiagEngine diags(sm);
  std::ostringstream err;
  diags.setOutput(&err);
  auto m = ir::parseModule(sm.addBuffer("k.tir", text), sm, diags);
  EXPECT_TRUE(m) << err.str();
  return m;
}

/// The default pipeline's output for a module (with the verifier after each
/// pass; its complaints are part of the output).
std::string pipelineOutput(std::unique_ptr<ir::Module> m) {
  if (!m)
    return "<no module>";
  std::ostringstream log;
  ir::PipelineOptions po;
  po.verifyEach = true;
  po.out = &log;
  bool ok = ir::runPipeline(*m, po);
  return (ok ? "" : "pipeline failed: " + log.str()) + ir::toString(*m, ir::PrintOptions{false});
}

/// PTX of the one kernel of a Triton-C source ("<error>" if it does not compile).
std::string ptxOf(const std::string &source, codegen::Options o = {}, bool expectOk = true) {
  auto m = lowerSource(source);
  if (!m)
    return "<no module>";
  codegen::Result r = codegen::compile(*m, *m->functions.front(), o);
  if (expectOk) {
    EXPECT_TRUE(r.ok()) << r.error;
  }
  return r.ok() ? r.compiled->ptx : "<error> " + r.error;
}

// Kernels whose code each bug changes (see plantedBugList() for what each bug does).

// canon-rem-one (x % 1), dce-drops-atomic (an atomic whose result is unused),
// cse-ignores-dtype (constants 1 : i32 and 1 : i8), cse-ignores-attrs (7 and 1).
const char *kIrKernel = R"(
__global__ void k(int *P, int8 *Q, int v) {
  int off[32] = 0 ... 32;
  int x[32] = *(P + off);
  atomic_add(P + off, x % 1);
  *(Q + off) = (int8)(x + 7) + (int8)1;
  *(P + off) = x * 7 + 1;
}
)";

// fold-sub-commute: the frontend folds literal arithmetic itself, so the
// constant subtraction is written as IR.
const char *kFoldKernel = R"(kernel @k(%p: !ptr<i32>) {
  %0 = constant <value = 5> : i32
  %1 = constant <value = 3> : i32
  %2 = sub %0, %1 : i32
  store %p, %2
  return
}
)";

// Elementwise ops, casts, a masked load with a fallback and atomics.
const char *kGpuScalarKernel = R"(
__global__ void k(float *X, int *I, int *U, bf16 *Bf, float *F, int *Old, int v) {
  int off[32] = 0 ... 32;
  bool m[32] = off < v;
  float x[32] = m ? *(X + off) : 5.0;
  int i[32] = *(I + off);
  *(Bf + off) = (bf16)(x * 3.0);
  *(I + off) = (int)x + (i >> 3) + (i / 3) + umulhi(i, v);
  *(F + off) = x / (float)v;
  atomic_max(U + off, i);
  int old = atomic_add(Old, v);
  *(Old + 1) = old;
}
)";

// `@`, argmax, a fp16 sum and a broadcast through shared memory.
const char *kGpuTileKernel = R"(
__global__ void k(half *A, half *B, float *C, int *Ix, half *S) {
  int r[16] = 0 ... 16;
  half a[16, 16] = *(A + r[:, newaxis] * 16 + r[newaxis, :]);
  half b[16, 16] = *(B + r[:, newaxis] * 16 + r[newaxis, :]);
  float c[16, 16] = a @ b;
  *(C + r[:, newaxis] * 16 + r[newaxis, :]) = c;
  half row[16] = *(A + r);
  *(Ix + r) = a[:, argmax];
  *S = (half)row[+];
  half t[16, 16] = row[:, newaxis] + row[newaxis, :];
  *(S + r[:, newaxis] * 16 + r[newaxis, :]) = t;
}
)";

/// A matmul loop that takes the wgmma path on sm_90 (aligned operands, 64
/// rows per program, 3 stages by default).
const char *kWgmmaKernel = R"(
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

/// The loop with A's rows lda apart, on 8 warps (tma-row-end): the TMA fills
/// its stages, each trip checking that its tile ends within its first row.
const char *kTmaKernel = R"(
__global__ void mm(half *A __aligned(16), half *B __aligned(16), float *C __aligned(16),
                   int K __multipleof(64), int lda __multipleof(8)) {
  int rm[128] = 0 ... 128;
  int rn[64] = 0 ... 64;
  int rk[32] = 0 ... 32;
  float c[128, 64] = 0;
  half *pa[128, 32] = A + rm[:, newaxis] * lda + rk[newaxis, :];
  half *pb[32, 64] = B + rk[:, newaxis] * 64 + rn[newaxis, :];
  for (int k = 0; k < K; k += 32) {
    c += *pa @ *pb;
    pa += 32;
    pb += 32 * 64;
  }
  *(C + rm[:, newaxis] * 64 + rn[newaxis, :]) = c;
}
)";

/// The same loop on int8 (int8-transpose): a streams as above, b is
/// transposed in shared memory every trip for wgmma's K-major 8-bit form.
const char *kInt8WgmmaKernel = R"(
__global__ void mm(char *A __aligned(16), char *B __aligned(16), int *C __aligned(16),
                   int K __multipleof(64)) {
  int rm[64] = 0 ... 64;
  int rn[64] = 0 ... 64;
  int rk[64] = 0 ... 64;
  int c[64, 64] = 0;
  char *pa[64, 64] = A + rm[:, newaxis] * K + rk[newaxis, :];
  char *pb[64, 64] = B + rk[:, newaxis] * 64 + rn[newaxis, :];
  for (int k = 0; k < K; k += 64) {
    c += *pa @ *pb;
    pa += 64;
    pb += 64 * 64;
  }
  *(C + rm[:, newaxis] * 64 + rn[newaxis, :]) = c;
}
)";

/// The attention loop below with its keys masked at the tail (key-perm-cols:
/// the mask is recomputed at each slot's column, which key-perm permutes).
const char *kAttentionMaskedKernel = R"(
__global__ void att(half *Q __aligned(16), half *K __aligned(16), half *V __aligned(16),
                    float *O __aligned(16), int N __multipleof(32), int valid) {
  int rm[64] = 0 ... 64;
  int rn[32] = 0 ... 32;
  int rd[64] = 0 ... 64;
  half q[64, 64] = *(Q + rm[:, newaxis] * 64 + rd[newaxis, :]);
  half *kp[64, 32] = K + rd[:, newaxis] + rn[newaxis, :] * 64;
  half *vp[32, 64] = V + rn[:, newaxis] * 64 + rd[newaxis, :];
  float m_i[64] = -F32_INFINITY;
  float l_i[64] = 1.0f;
  float acc[64, 64] = 0;
  for (int s = 0; s < N; s += 32) {
    float qk[64, 32] = q @ *kp;
    qk = (s + rn)[newaxis, :] < valid ? qk : -F32_INFINITY;
    float m_ij[64] = max(m_i, qk[:, max]);
    float p[64, 32] = exp2(qk - m_ij[:, newaxis]);
    float alpha[64] = exp2(m_i - m_ij);
    l_i = l_i * alpha + p[:, +];
    acc = acc * alpha[:, newaxis];
    acc += (half)p @ *vp;
    m_i = m_ij;
    kp += 32 * 64;
    vp += 32 * 64;
  }
  *(O + rm[:, newaxis] * 64 + rd[newaxis, :]) = acc / l_i[:, newaxis];
}
)";

/// A loop without `@` that loads through a pointer carried from trip to trip
/// (option prefetch; prefetch-carried) and reads through it after the loop
/// (option exit-values; exit-value-step).
const char *kWalkKernel = R"(
__global__ void walk(float *X, float *Y, int K) {
  int c[64] = 0 ... 64;
  float *p[64] = X + c;
  float acc[64] = 0;
  for (int t = 0; t < K; t++) {
    acc += *p;
    p += 64;
  }
  *(Y + c) = acc + *p;
})";

/// An attention loop on #mma (mma-values) whose K^T and V loads take the
/// values pipeline (aligned pointers; values-pipeline-wait), and whose P @ V
/// takes P from registers (mma-values-operand); on sm_90 (the default) its
/// `@` run on wgmma (values-wgmma-wait), P @ V's wait deferred to the next
/// trip (values-wgmma-refill).
const char *kAttentionKernel = R"(
__global__ void att(half *Q __aligned(16), half *K __aligned(16), half *V __aligned(16),
                    float *O __aligned(16), int N __multipleof(32)) {
  int rm[64] = 0 ... 64;
  int rn[32] = 0 ... 32;
  int rd[64] = 0 ... 64;
  half q[64, 64] = *(Q + rm[:, newaxis] * 64 + rd[newaxis, :]);
  half *kp[64, 32] = K + rd[:, newaxis] + rn[newaxis, :] * 64;
  half *vp[32, 64] = V + rn[:, newaxis] * 64 + rd[newaxis, :];
  float m_i[64] = -F32_INFINITY;
  float l_i[64] = 1.0f;
  float acc[64, 64] = 0;
  for (int s = 0; s < N; s += 32) {
    float qk[64, 32] = q @ *kp;
    float m_ij[64] = max(m_i, qk[:, max]);
    float p[64, 32] = exp2(qk - m_ij[:, newaxis]);
    float alpha[64] = exp2(m_i - m_ij);
    l_i = l_i * alpha + p[:, +];
    acc = acc * alpha[:, newaxis];
    acc += (half)p @ *vp;
    m_i = m_ij;
    kp += 32 * 64;
    vp += 32 * 64;
  }
  *(O + rm[:, newaxis] * 64 + rd[newaxis, :]) = acc / l_i[:, newaxis];
}
)";

/// kAttentionKernel's loop with a matmul loop in its trip (nested-pipelines):
/// the outer loop is not pipelined, the inner one is.
const char *kNestedKernel = R"(
__global__ void att(half *Q __aligned(16), half *K __aligned(16), half *V __aligned(16),
                    half *X __aligned(16), half *W __aligned(16), float *O __aligned(16),
                    int N __multipleof(32), int KI __multipleof(32)) {
  int rm[64] = 0 ... 64;
  int rn[32] = 0 ... 32;
  int rd[64] = 0 ... 64;
  int rk[32] = 0 ... 32;
  half q[64, 64] = *(Q + rm[:, newaxis] * 64 + rd[newaxis, :]);
  half *kp[64, 32] = K + rd[:, newaxis] + rn[newaxis, :] * 64;
  half *vp[32, 64] = V + rn[:, newaxis] * 64 + rd[newaxis, :];
  float m_i[64] = -F32_INFINITY;
  float l_i[64] = 1.0f;
  float acc[64, 64] = 0;
  for (int s = 0; s < N; s += 32) {
    float qk[64, 32] = q @ *kp;
    float m_ij[64] = max(m_i, qk[:, max]);
    float p[64, 32] = exp2(qk - m_ij[:, newaxis]);
    float alpha[64] = exp2(m_i - m_ij);
    l_i = l_i * alpha + p[:, +];
    acc = acc * alpha[:, newaxis];
    float e[64, 64] = 0;
    half *px[64, 32] = X + rm[:, newaxis] * KI + rk[newaxis, :];
    half *pw[32, 64] = W + rk[:, newaxis] * 64 + rd[newaxis, :];
    for (int k = 0; k < KI; k += 32) {
      e += *px @ *pw;
      px += 32;
      pw += 32 * 64;
    }
    acc += e + (half)p @ *vp;
    m_i = m_ij;
    kp += 32 * 64;
    vp += 32 * 64;
  }
  *(O + rm[:, newaxis] * 64 + rd[newaxis, :]) = acc / l_i[:, newaxis];
}
)";

/// 16-byte vector accesses (four floats per thread on 4 warps; vector-width).
const char *kVectorKernel = R"(
__global__ void v(float *X __aligned(16), float *Y __aligned(16)) {
  int off[512] = 0 ... 512;
  *(Y + off) = *(X + off) + 1.0;
}
)";

// exp2 of a max with a bound below -126 (exp2-range-bound takes it as never
// subnormal).
const char *kExp2MaxKernel = R"(
__global__ void e(float *X, float *Y) {
  int i[128] = 0 ... 128;
  *(Y + i) = exp2(max(*(X + i), -126.5));
}
)";

// A product and a sum that the reference rounds one after the other (fp-contract fuses them).
const char *kMulAddKernel = R"(
__global__ void m(float *X, float *Y) {
  int i[128] = 0 ... 128;
  float x[128] = *(X + i);
  *(Y + i) = x * x + 1.0;
}
)";

// An int16 atomic_min at a 4-byte-aligned address (the compare-and-swap loop on its word).
const char *kPartwordAtomicKernel = R"(
__global__ void k(short *R, short *V) {
  short v = *V;
  atomic_min(R, v);
}
)";

/// The kernel that shows each bug.
std::string kernelFor(const std::string &name) {
  static const std::map<std::string, std::string> kernels = {
      {"fold-sub-commute", kFoldKernel},
      {"mask-off-by-one", kGpuScalarKernel},
      {"dropped-fallback", kGpuScalarKernel},
      {"atomic-max-unsigned", kGpuScalarKernel},
      {"atomic-old-value", kGpuScalarKernel},
      {"atomic-partword-stale", kPartwordAtomicKernel},
      {"bf16-truncate", kGpuScalarKernel},
      {"float-to-int-round", kGpuScalarKernel},
      {"fdiv-approx", kGpuScalarKernel},
      {"umulhi-sign", kGpuScalarKernel},
      {"shift-logical", kGpuScalarKernel},
      {"int-div-unsigned", kGpuScalarKernel},
      {"missing-barrier", kGpuTileKernel},
      {"argmax-tie", kGpuTileKernel},
      {"reduce-acc-type", kGpuTileKernel},
      {"dot-acc-type", kGpuTileKernel},
      {"wgmma-swizzle", kWgmmaKernel},
      {"wgmma-wait", kWgmmaKernel},
      {"wgmma-stage", kWgmmaKernel},
      {"desc-step", kWgmmaKernel},
      {"int8-transpose", kInt8WgmmaKernel},
      {"pipeline-wait-group", kWgmmaKernel},
      {"tma-row-end", kTmaKernel},
      {"tma-refill-barrier", kTmaKernel},
      {"int8-transpose-fence", kInt8WgmmaKernel},
      {"exp2-range-bound", kExp2MaxKernel},
      {"fp-contract", kMulAddKernel},
      {"prefetch-carried", kWalkKernel},
      {"exit-value-step", kWalkKernel},
      {"values-pipeline-wait", kAttentionKernel},
      {"mma-values-operand", kAttentionKernel},
      {"key-perm-cols", kAttentionMaskedKernel},
      {"values-wgmma-wait", kAttentionKernel},
      {"values-wgmma-refill", kAttentionKernel},
      {"stages-start-barrier", kAttentionKernel},
      {"nested-pipelines", kNestedKernel},
      {"shared-divisor-range", kAttentionKernel},
      {"mma-fragment", kGpuTileKernel},
      {"vector-width", kVectorKernel},
      {"remat-axis", kGpuTileKernel},
  };
  auto it = kernels.find(name);
  return it != kernels.end() ? it->second : kIrKernel;
}

/// What the compiler makes of bug `name`'s kernel with `planted` active
/// (spec-div8: the classes of a launch's integers, runtime/Specialize.h).
std::string outputFor(const PlantedBugInfo &b, const char *planted) {
  PlantBug env(planted);
  if (std::string(b.name) == "spec-div8") {
    std::string classes;
    for (int64_t v : {1, 8, 16, 24, 40, 48})
      classes += classChar(classifyInteger(v));
    for (uint64_t v : {8u, 24u})
      classes += classChar(classifyUnsigned(v));
    return classes;
  }
  std::string src = kernelFor(b.name);
  codegen::Options o;
  if (std::string(b.name) == "tma-row-end" || std::string(b.name) == "tma-refill-barrier")
    o.numWarps = 8; // the TMA takes loops of two or more warpgroups
  if (std::string(b.where) == "gpu") // a planted bug may be refused (the stages' race check)
    return ptxOf(src, o, planted == nullptr);
  return pipelineOutput(src.starts_with("kernel @") ? parseIR(src) : lowerSource(src));
}

TEST(PlantedBugs, EachBugChangesTheCompilerOutput) {
  for (const PlantedBugInfo &b : plantedBugList()) {
    std::string clean = outputFor(b, nullptr);
    std::string planted = outputFor(b, b.name);
    EXPECT_NE(clean, planted) << b.name << " (" << b.where << ") changes nothing";
  }
}

// Spot checks that the changes are the described ones.
TEST(PlantedBugs, ChangesAreTheDescribedOnes) {
  auto ir = [](const char *bug) {
    PlantBug env(bug);
    return pipelineOutput(parseIR(kFoldKernel));
  };
  EXPECT_NE(ir(nullptr).find("constant <value = 2> : i32"), std::string::npos);
  EXPECT_NE(ir("fold-sub-commute").find("constant <value = -2> : i32"), std::string::npos);
  auto ptx = [](const char *bug) {
    PlantBug env(bug);
    return ptxOf(kGpuScalarKernel);
  };
  std::string clean = ptx(nullptr);
  // i >> 3 is the only arithmetic shift (i / 3 becomes a multiply and shr.u32).
  EXPECT_NE(clean.find("shr.s32"), std::string::npos);
  EXPECT_EQ(ptx("shift-logical").find("shr.s32"), std::string::npos);
  EXPECT_NE(clean.find("cvt.rzi.s32.f32"), std::string::npos);
  EXPECT_EQ(clean.find("cvt.rni"), std::string::npos);
  EXPECT_NE(ptx("float-to-int-round").find("cvt.rni"), std::string::npos);
  EXPECT_EQ(clean.find("rcp.rn.f32"), std::string::npos);
  EXPECT_NE(ptx("fdiv-approx").find("rcp.rn.f32"), std::string::npos);
  for (const char *bug : {static_cast<const char *>(nullptr), "fp-contract"}) {
    PlantBug env(bug);
    std::string mulAdd = ptxOf(kMulAddKernel);
    EXPECT_EQ(mulAdd.find("fma.rn.f32") != std::string::npos, bug != nullptr) << mulAdd;
  }
  // values-wgmma-refill: with P @ V's wait deferred the attention loop's copies go 2 trips
  // ahead into 4 stages (cp.async.wait_group 1: the stage trip i - 2 read); planted, 3
  // trips ahead (the stage trip i - 1's P @ V may still read), which the stages' race
  // check (codegen/AsyncSchedule.h) refuses to compile; so it does values-pipeline-wait's
  // wait one group short.
  auto att = [](const char *bug) {
    PlantBug env(bug);
    return ptxOf(kAttentionKernel, {}, bug == nullptr);
  };
  std::string attClean = att(nullptr), attRefill = att("values-wgmma-refill");
  EXPECT_NE(attClean.find("cp.async.wait_group 1;"), std::string::npos);
  EXPECT_EQ(attClean.find("cp.async.wait_group 2;"), std::string::npos);
  EXPECT_NE(attRefill.find("would race"), std::string::npos) << attRefill;
  EXPECT_NE(attRefill.find("wgmma read of stage"), std::string::npos) << attRefill;
  std::string attWait = att("values-pipeline-wait");
  EXPECT_NE(attWait.find("would race"), std::string::npos) << attWait;
  // nested-pipelines: the attention loop would take its values pipeline around the inner
  // matmul loop's; the stages' claim (Lowerer::StagesClaim) refuses to lower the inner loop
  // in the outer one's trip. Clean, only the inner loop has cp.async stages.
  std::string nestedClean = ptxOf(kNestedKernel);
  EXPECT_NE(nestedClean.find("cp.async.cg"), std::string::npos);
  std::string nestedPlanted;
  {
    PlantBug env("nested-pipelines");
    nestedPlanted = ptxOf(kNestedKernel, {}, false);
  }
  EXPECT_NE(nestedPlanted.find("internal error in the GPU backend: the loop at line 25 would "
                               "overwrite the cp.async stages of the pipelined loop at line 15"),
            std::string::npos)
      << nestedPlanted;
  // tma-refill-barrier: the TMA's stages are in the race check's model; without the barrier
  // after the products' wait, thread 0's refill of the stage trip i - 1 read may land before
  // a slower thread has even waited on that stage's mbarrier (or while its wgmma reads it).
  codegen::Options eight;
  eight.numWarps = 8;
  std::string tmaClean = ptxOf(kTmaKernel, eight);
  EXPECT_NE(tmaClean.find("cp.async.bulk.tensor"), std::string::npos);
  std::string tmaPlanted;
  {
    PlantBug env("tma-refill-barrier");
    tmaPlanted = ptxOf(kTmaKernel, eight, false);
  }
  EXPECT_NE(tmaPlanted.find("the TMA stages of the matmul loop at line"), std::string::npos)
      << tmaPlanted;
  EXPECT_NE(tmaPlanted.find("would race: with 4 trips, the copy of trip 3's tiles into stage 0 "
                            "(issued in trip 1)"),
            std::string::npos)
      << tmaPlanted;
  // stages-start-barrier: the race check takes the stages' memory as used by other warps
  // before the loop, so the prologue's copies need a barrier first.
  std::string startPlanted;
  {
    PlantBug env("stages-start-barrier");
    startPlanted = ptxOf(kAttentionKernel, {}, false);
  }
  EXPECT_NE(startPlanted.find("may land while another warp still reads or writes that memory as "
                              "it did before the loop"),
            std::string::npos)
      << startPlanted;
  // int8-transpose-fence: the transposed b is in the stages' race check's model (a second
  // region of each stage, written through the generic proxy).
  std::string int8Clean = ptxOf(kInt8WgmmaKernel);
  EXPECT_NE(int8Clean.find("wgmma.mma_async.sync.aligned.m64n"), std::string::npos);
  std::string int8Planted;
  {
    PlantBug env("int8-transpose-fence");
    int8Planted = ptxOf(kInt8WgmmaKernel, {}, false);
  }
  EXPECT_NE(int8Planted.find("transposed write of trip 0's b into stage 0: no fence.proxy.async"),
            std::string::npos)
      << int8Planted;
  for (const char *bug : {static_cast<const char *>(nullptr), "spec-div8"}) {
    PlantBug env(bug);
    EXPECT_EQ(classifyInteger(24), bug ? ArgClass::Div16 : ArgClass::Any);
    EXPECT_EQ(classifyInteger(32), ArgClass::Div16);
    EXPECT_EQ(classifyInteger(12), ArgClass::Any);
  }
}

TEST(PlantedBugs, ActiveBugIsPartOfTheCompilerVersion) {
  std::string clean;
  {
    PlantBug env(nullptr);
    EXPECT_EQ(activePlantedBug(), "");
    clean = codegen::compilerVersion();
    EXPECT_EQ(clean.find("planted:"), std::string::npos);
  }
  {
    PlantBug env("shift-logical");
    EXPECT_EQ(activePlantedBug(), "shift-logical");
    EXPECT_TRUE(plantedBug("shift-logical"));
    EXPECT_FALSE(plantedBug("int-div-unsigned"));
    EXPECT_EQ(codegen::compilerVersion(), clean + " planted:shift-logical");
  }
  {
    PlantBug env("no-such-bug"); // warns once on stderr and plants nothing
    EXPECT_EQ(activePlantedBug(), "");
    EXPECT_FALSE(plantedBug("shift-logical"));
    EXPECT_EQ(codegen::compilerVersion(), clean);
  }
}

#endif // TC_PLANTED_BUGS

} // namespace
