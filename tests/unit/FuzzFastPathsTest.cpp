//===- FuzzFastPathsTest.cpp - Reaching and repeating the GPU's fast paths -===//
//
// Issue 33 (docs/fuzz.md, "Fast paths"):
// 1. Kernels aimed at a fast path (GenPolicy::aim) carry the feature
//    "aim.PATH", compile, and mostly take PATH (the lowering's own report,
//    codegen::Compiled::paths, for sm_90 with aligned pointers, as the GPU
//    backend compiles the fuzzer's buffers).
// 2. PathWeights: no steering with a zero floor, every kernel with a focus;
//    aims from priors at the start, from the journal's measured rates later;
//    a path the unaimed kernels already reach gets none; a path the kernels
//    aimed at another path give it (wgmma -> pipeline) gets none; the aims
//    drawn follow the rates.
// 3. The repeat oracle's choices: which paths are timing-sensitive, and the
//    stage variant (another stage count, for the share asked, by kernel hash).
//
//===----------------------------------------------------------------------===//
#include "FakePtxas.h"
#include "codegen/Codegen.h"
#include "fuzz/Generator.h"
#include "fuzz/GpuOracle.h"
#include "fuzz/Oracle.h"
#include "fuzz/PathWeights.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

using namespace tc;
using namespace tc::fuzz;

namespace {

bool hasFeature(const FuzzKernel &k, const std::string &f) {
  return std::find(k.features.begin(), k.features.end(), f) != k.features.end();
}

TEST(FuzzFastPaths, AimedKernelsTakeTheirPath) {
  codegen::Options o;
  o.sm = 90;
  o.alignedPointers = true;
  for (const std::string &aim : aimablePaths()) {
    GenPolicy p;
    p.aim = aim;
    int took = 0, n = 8;
    for (int i = 0; i < n; ++i) {
      FuzzKernel k = generateKernel(p, 9000 + static_cast<uint64_t>(i));
      EXPECT_TRUE(hasFeature(k, "aim." + aim)) << aim;
      // The mma.values aims are attention kernels, the others matmul loops.
      EXPECT_TRUE(hasFeature(k, isValuesAim(aim) ? "attention" : "matmul.kloop")) << aim;
      CompileOutcome c = compileFuzzKernel(k);
      ASSERT_TRUE(c.ok()) << c.diagnostics << "\n" << describeKernel(k);
      std::vector<std::string> paths;
      std::string error;
      ASSERT_TRUE(codegen::loweringPaths(c.kernel->module(), c.kernel->function(), o, paths, error))
          << error << "\n"
          << describeKernel(k);
      took += tookPath(paths, aim) ? 1 : 0;
    }
    // Most do (mma.loop: half of them masked, still a matmul loop); the
    // others are forms next to it (int8: mma.sync without the pipeline).
    EXPECT_GE(took, n * 5 / 8) << aim;
  }
}

// Masked matmul loops whose N and K are multiples of 16 (aim mma.loop,
// matmul.aligned_tails) stream their masked operands through cp.async (option
// masked-stream): the lowering says mma.loop.masked_stream for most of them,
// and never for a kernel with unmasked loads.
TEST(FuzzFastPaths, AlignedTailsTakeTheMaskedStream) {
  codegen::Options o;
  o.sm = 90;
  o.alignedPointers = true;
  GenPolicy p;
  p.aim = "mma.loop";
  int aligned = 0, streamed = 0, wg = 0;
  for (uint64_t i = 0; i < 64 && aligned < 12; ++i) {
    FuzzKernel k = generateKernel(p, 4200 + i);
    CompileOutcome c = compileFuzzKernel(k);
    ASSERT_TRUE(c.ok()) << c.diagnostics << "\n" << describeKernel(k);
    std::vector<std::string> paths;
    std::string error;
    ASSERT_TRUE(codegen::loweringPaths(c.kernel->module(), c.kernel->function(), o, paths, error))
        << error;
    bool took = std::find(paths.begin(), paths.end(), "mma.loop.masked_stream") != paths.end();
    if (hasFeature(k, "matmul.unmasked")) {
      EXPECT_FALSE(took) << describeKernel(k);
    }
    if (!hasFeature(k, "matmul.aligned_tails"))
      continue;
    ++aligned;
    streamed += took ? 1 : 0;
    wg += took && std::find(paths.begin(), paths.end(), "wgmma") != paths.end() ? 1 : 0;
  }
  ASSERT_GE(aligned, 8);
  EXPECT_GE(streamed, aligned * 5 / 8);
  EXPECT_GE(wg, 1);
}

// int8 loops aimed at wgmma (TK a multiple of 32): on wgmma too, b
// transposed in shared memory every trip (option int8-wgmma), as the lowering
// reports; fp16 and bf16 ones never say wgmma.int8.
TEST(FuzzFastPaths, Int8LoopsTakeWgmma) {
  codegen::Options o;
  o.sm = 90;
  o.alignedPointers = true;
  GenPolicy p;
  p.aim = "wgmma";
  int int8 = 0, took = 0;
  for (uint64_t i = 0; i < 96 && int8 < 8; ++i) {
    FuzzKernel k = generateKernel(p, 5200 + i);
    CompileOutcome c = compileFuzzKernel(k);
    ASSERT_TRUE(c.ok()) << c.diagnostics << "\n" << describeKernel(k);
    std::vector<std::string> paths;
    std::string error;
    ASSERT_TRUE(codegen::loweringPaths(c.kernel->module(), c.kernel->function(), o, paths, error))
        << error;
    bool isInt8 = std::find(paths.begin(), paths.end(), "wgmma.int8") != paths.end();
    if (!hasFeature(k, "matmul.int8_wgmma")) {
      EXPECT_FALSE(isInt8) << describeKernel(k);
      continue;
    }
    ++int8;
    took += isInt8 && tookPath(paths, "wgmma") ? 1 : 0;
  }
  ASSERT_GE(int8, 4);
  EXPECT_GE(took, int8 * 5 / 8);
}

// On 8 warps (the GPU oracle's num_warps variant, --num-warps 8 campaigns)
// the loops of 64-row tiles aimed at wgmma split n between the two
// warpgroups instead of falling back to mma.sync.
TEST(FuzzFastPaths, SixtyFourRowLoopsOnEightWarpsSplitN) {
  codegen::Options o;
  o.sm = 90;
  o.alignedPointers = true;
  o.numWarps = 8;
  GenPolicy p;
  p.aim = "wgmma";
  int split = 0, wgmma = 0;
  for (uint64_t i = 0; i < 64; ++i) {
    FuzzKernel k = generateKernel(p, 7300 + i);
    CompileOutcome c = compileFuzzKernel(k);
    ASSERT_TRUE(c.ok()) << c.diagnostics << "\n" << describeKernel(k);
    std::vector<std::string> paths;
    std::string error;
    if (!codegen::loweringPaths(c.kernel->module(), c.kernel->function(), o, paths, error))
      continue; // a shape 8 warps do not take
    bool isSplit = std::find(paths.begin(), paths.end(), "wgmma.split_n") != paths.end();
    split += isSplit ? 1 : 0;
    wgmma += tookPath(paths, "wgmma") ? 1 : 0;
    if (isSplit) {
      EXPECT_TRUE(tookPath(paths, "wgmma")) << describeKernel(k);
    }
  }
  EXPECT_GE(split, 8) << "of " << wgmma << " kernels on wgmma";
}

// The paths a kernel's lowering takes for sm_90 with aligned pointers (as
// --compile-only and the GPU backend compile the fuzzer's kernels).
std::vector<std::string> pathsOf(const FuzzKernel &k) {
  codegen::Options o;
  o.sm = 90;
  o.alignedPointers = true;
  CompileOutcome c = compileFuzzKernel(k);
  EXPECT_TRUE(c.ok()) << c.diagnostics << "\n" << describeKernel(k);
  std::vector<std::string> paths;
  std::string error;
  if (c.ok()) {
    EXPECT_TRUE(codegen::loweringPaths(c.kernel->module(), c.kernel->function(), o, paths, error))
        << error << "\n"
        << describeKernel(k);
  }
  return paths;
}

// Attention kernels as a default campaign makes them (the usual mix of
// forms, not aimed): a share of them takes mma.values and its values
// pipeline, so the share of the campaign's kernels on them cannot silently
// drop to zero (issue 29, item 7); others keep the fallback forms.
TEST(FuzzFastPaths, AttentionKernelsTakeTheValuesPaths) {
  GenPolicy p;
  p.aim = "attention";
  int values = 0, pipeline = 0, neither = 0, keyPerm = 0, wgmma = 0, lateQ = 0, n = 24;
  for (int i = 0; i < n; ++i) {
    FuzzKernel k = generateKernel(p, 4100 + static_cast<uint64_t>(i));
    ASSERT_TRUE(hasFeature(k, "attention"));
    std::vector<std::string> paths = pathsOf(k);
    values += tookPath(paths, "mma.values") ? 1 : 0;
    pipeline += tookPath(paths, "mma.values.pipeline") ? 1 : 0;
    neither += tookPath(paths, "mma.values") ? 0 : 1;
    // Keys permuted (option key-perm) only where K^T streams (its `@` on the
    // values pipeline), and for all such kernels: their S has a row sum.
    bool perm = std::count(paths.begin(), paths.end(), "mma.values.key_perm") > 0;
    keyPerm += perm ? 1 : 0;
    // Q stored in the loop's prologue (option late-q) only where a wgmma `@`
    // reads it from shared memory (not where q @ K^T stays on mma.sync with Q
    // in registers, as for `q @ ^kt`, whose K^T is not streamed, while p @ v
    // runs on wgmma) and Q is defined in the loop's block.
    bool late = std::count(paths.begin(), paths.end(), "mma.values.wgmma.late_q") > 0;
    bool wg = std::count(paths.begin(), paths.end(), "mma.values.wgmma") > 0;
    wgmma += wg ? 1 : 0;
    lateQ += late ? 1 : 0;
    if (late) {
      EXPECT_TRUE(wg) << describeKernel(k);
    }
    if (perm) {
      EXPECT_TRUE(tookPath(paths, "mma.values.pipeline")) << describeKernel(k);
    }
    // The values form is what the path needs (BM = 64 on 4 warps).
    if (!hasFeature(k, "attention.values_form")) {
      EXPECT_FALSE(tookPath(paths, "mma.values.pipeline")) << describeKernel(k);
    }
  }
  // Half of them in the form (GenPolicy::attentionValues), 85% of those with
  // aligned rows: expect about 12 and 10 of 24.
  EXPECT_GE(values, n / 4);
  EXPECT_GE(pipeline, n / 6);
  EXPECT_GE(neither, n / 4);
  EXPECT_GE(keyPerm, pipeline / 2);
  EXPECT_GE(wgmma, 2);
  EXPECT_GE(lateQ, 1);
}

// Wide 1-D tiles (GenPolicy::wideTile): 512 to 2048 elements, several slots a
// GPU thread, so that a sliced buffer is read and written in registers
// (slice.registers), a path no smaller generated tile reaches.
TEST(FuzzFastPaths, WideTilesSliceInRegisters) {
  GenPolicy p;
  p.wideTile = 1.0;
  p.threeD = 0;
  int sliced = 0, inRegisters = 0, n = 40;
  for (int i = 0; i < n; ++i) {
    FuzzKernel k = generateKernel(p, 7300 + static_cast<uint64_t>(i));
    if (!hasFeature(k, "tile.1d") || hasFeature(k, "matmul.kloop") || hasFeature(k, "attention"))
      continue;
    ASSERT_TRUE(hasFeature(k, "tile.wide")) << describeKernel(k);
    auto ts = std::find_if(k.defines.begin(), k.defines.end(),
                           [](const auto &d) { return d.first == "TS"; });
    ASSERT_NE(ts, k.defines.end()) << describeKernel(k);
    int64_t tile = std::stoll(ts->second);
    EXPECT_TRUE(tile == 512 || tile == 1024 || tile == 2048) << tile;
    if (!hasFeature(k, "slices"))
      continue;
    ++sliced;
    std::vector<std::string> paths = pathsOf(k);
    inRegisters += std::count(paths.begin(), paths.end(), "slice.registers") > 0 ? 1 : 0;
  }
  // Half of the wide kernels slice (about 20 of 40 less the 2-D ones); of
  // those, every one whose element type's vector width fits its slots.
  EXPECT_GE(sliced, 4);
  EXPECT_GE(inRegisters, sliced / 2) << sliced;
}

// A campaign on 8 warps draws 128 x 256 wgmma tiles (matmul.wide_n): two
// warpgroups, m64n256 each, on 3 stages; one on 4 warps never does.
TEST(FuzzFastPaths, WideNTilesOnEightWarps) {
  GenPolicy p;
  p.aim = "wgmma";
  for (uint64_t s = 0; s < 300; ++s)
    EXPECT_FALSE(hasFeature(generateKernel(p, 8800 + s), "matmul.wide_n"));
  p.numWarps = 8;
  int found = 0;
  for (uint64_t s = 0; s < 600 && found < 2; ++s) {
    FuzzKernel k = generateKernel(p, 8800 + s);
    if (!hasFeature(k, "matmul.wide_n"))
      continue;
    ++found;
    int64_t tk = 0;
    for (const auto &[name, value] : k.defines)
      if (name == "TK")
        tk = std::stoll(value);
    EXPECT_LE(tk, 64) << describeKernel(k);
    CompileOutcome c = compileFuzzKernel(k);
    ASSERT_TRUE(c.ok()) << c.diagnostics;
    codegen::Options o;
    o.sm = 90;
    o.alignedPointers = true;
    o.numWarps = 8;
    codegen::Result r = codegen::compile(c.kernel->module(), c.kernel->function(), o);
    ASSERT_TRUE(r.ok()) << r.error << "\n" << describeKernel(k);
    const std::vector<std::string> &paths = r.compiled->paths.at(0);
    EXPECT_TRUE(std::count(paths.begin(), paths.end(), "wgmma")) << describeKernel(k);
    EXPECT_TRUE(std::count(paths.begin(), paths.end(), "pipeline.stages=3")) << describeKernel(k);
    EXPECT_NE(r.compiled->ptx.find("wgmma.mma_async.sync.aligned.m64n256k16"), std::string::npos)
        << describeKernel(k);
  }
  EXPECT_EQ(found, 2);
}

// pipeline.stages=2 with the campaign's default num_stages (3): the kernels
// aimed at the pipeline whose wgmma tile's 3 stages do not fit.
TEST(FuzzFastPaths, TwoStageTilesTakeTwoStages) {
  GenPolicy p;
  p.aim = "pipeline";
  int found = 0;
  for (uint64_t s = 0; s < 400 && found < 2; ++s) {
    FuzzKernel k = generateKernel(p, 7700 + s);
    if (!hasFeature(k, "matmul.two_stages"))
      continue;
    ++found;
    std::vector<std::string> paths = pathsOf(k);
    EXPECT_TRUE(std::count(paths.begin(), paths.end(), "pipeline.stages=2")) << describeKernel(k);
    EXPECT_TRUE(std::count(paths.begin(), paths.end(), "wgmma")) << describeKernel(k);
  }
  EXPECT_EQ(found, 2);
  // The same for the values pipeline: attention kernels with 128 x 128 K^T
  // and V tiles.
  p.aim = "mma.values.pipeline";
  found = 0;
  for (uint64_t s = 0; s < 400 && found < 2; ++s) {
    FuzzKernel k = generateKernel(p, 7700 + s);
    if (!hasFeature(k, "attention.two_stages"))
      continue;
    ++found;
    std::vector<std::string> paths = pathsOf(k);
    std::string all;
    for (const std::string &q : paths)
      all += q + " ";
    EXPECT_TRUE(std::count(paths.begin(), paths.end(), "mma.values.pipeline.stages=2"))
        << all << "\n"
        << describeKernel(k);
  }
  EXPECT_EQ(found, 2);
}

// Persistent programs (grid.persistent): a 1-D grid whose programs walk the
// tiles, the matmul loop nested in the tile loop. The grid does not follow the
// sizes (no gridAxes), some programs run several tiles, the nested loop still
// takes the aimed path, and the interpreter's Y is the exact product (small
// integers, the accumulator from 0, `pY = c`), computed here (with A's rows
// `lda` apart and an offset first where the kernel has them: matmul.pitch).
TEST(FuzzFastPaths, PersistentProgramsNestTheMatmulLoop) {
  GenPolicy p;
  p.aim = "wgmma";
  p.dotAcc = 0;
  p.smallInts = 1;
  p.aimSmallInts = 1; // (aimed kernels draw their mode from this one)
  int found = 0, several = 0, took = 0, checked = 0, checkedPitched = 0;
  for (uint64_t s = 0; s < 4000 && (found < 24 || checked < 2 || checkedPitched < 1); ++s) {
    FuzzKernel k = generateKernel(p, 8100 + s);
    if (!hasFeature(k, "grid.persistent"))
      continue;
    ++found;
    EXPECT_TRUE(k.gridAxes.empty()) << describeKernel(k);
    EXPECT_EQ(k.grid[1], 1);
    EXPECT_EQ(k.grid[2], 1);
    EXPECT_NE(k.source.find("tile += get_num_programs(0)"), std::string::npos);
    const BufferDesc &a = k.buffers[0], &b = k.buffers[1], &y = k.buffers[2];
    // A's element (i, kk) is at off + i * lda + kk: lda K unless A's rows are pitched
    // (matmul.pitch: a parameter lda, sometimes an offset `A + off` first).
    int64_t m = y.shape[0], n = y.shape[1], depth = 0, lda = 0, ldb = 0;
    for (const ScalarDesc &d : k.scalars) {
      if (d.name == "K")
        depth = static_cast<int64_t>(d.value);
      if (d.name == "lda")
        lda = static_cast<int64_t>(d.value);
      if (d.name == "ldb")
        ldb = static_cast<int64_t>(d.value);
    }
    lda = lda ? lda : depth;
    ldb = ldb ? ldb : n;
    // B's element (kk, j) at offB + kk * ldb + j likewise.
    auto offsetOf = [&](const std::string &decl) -> int64_t {
      size_t at = k.source.find(decl);
      if (at == std::string::npos || !std::isdigit(k.source[at + decl.size()]))
        return 0;
      return std::stoll(k.source.substr(at + decl.size()));
    };
    int64_t off = offsetOf("*pa[TM, TK] = A + "), offB = offsetOf("*pb[TK, TN] = B + ");
    EXPECT_EQ(off > 0 || offB > 0, hasFeature(k, "matmul.offset")) << describeKernel(k);
    int64_t tm = 0, tn = 0;
    for (const auto &[name, value] : k.defines) {
      if (name == "TM")
        tm = std::stoll(value);
      if (name == "TN")
        tn = std::stoll(value);
    }
    ASSERT_GT(tm * tn, 0);
    several += k.grid[0] < ((m + tm - 1) / tm) * ((n + tn - 1) / tn) ? 1 : 0;
    took += tookPath(pathsOf(k), "wgmma") ? 1 : 0;
    if (!k.smallInts || y.dtype != DType::F32 || k.source.find("pY = c;") == std::string::npos)
      continue;
    OracleResult r = checkKernel(k);
    ASSERT_EQ(r.status, OracleResult::Status::Pass) << r.message << "\n" << describeKernel(k);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0;
        for (int64_t kk = 0; kk < depth; ++kk)
          want += a.data[static_cast<size_t>(off + i * lda + kk)] *
                  b.data[static_cast<size_t>(offB + kk * ldb + j)];
        ASSERT_EQ(r.reference.at("Y").getDouble(i * n + j), want) << describeKernel(k);
      }
    ++checked;
    checkedPitched += lda != depth || off > 0 || ldb != n || offB > 0 ? 1 : 0;
  }
  ASSERT_GE(found, 8);
  EXPECT_GE(several, 2);
  EXPECT_GE(took, found * 5 / 8);
  EXPECT_GE(checked, 2);
  EXPECT_GE(checkedPitched, 1); // A's rows pitched (matmul.pitch), the product still exact
}

// A fifth of the aimed matmul kernels store the accumulator itself into the
// operands' type (`*pY = c` into half, bf16 or int8): the lowering casts it on
// the fragments (option epilogue-cast), so the fuzzer tests that path.
TEST(FuzzFastPaths, NarrowStoresTakeTheEpilogueCast) {
  GenPolicy p;
  p.aim = "wgmma";
  int found = 0, took = 0;
  for (uint64_t s = 0; s < 200 && found < 12; ++s) {
    FuzzKernel k = generateKernel(p, 9300 + s);
    if (!hasFeature(k, "matmul.narrow_store"))
      continue;
    ++found;
    EXPECT_EQ(k.buffers[2].dtype, k.buffers[0].dtype) << describeKernel(k);
    took += tookPath(pathsOf(k), "mma.loop.epilogue_cast") ? 1 : 0;
  }
  ASSERT_GE(found, 8);
  EXPECT_GE(took, found * 3 / 4);
}

TEST(FuzzFastPaths, PitchedOperandsReachTheTmaAndItsFallback) {
  // A's rows `lda` apart, B's `ldb` apart, or both (parameters; padded or overlapping rows,
  // sometimes an offset first): every such kernel passes the CPU properties, its class
  // launches included (each buffer holds every element the tiles read: the interpreter
  // traps on any other), and on 8 warps the wgmma loops among them take the TMA,
  // overlapping rows included (their trips that cross a row's end take the cp.async
  // fallback on a GPU).
  codegen::Options o;
  o.sm = 90;
  o.alignedPointers = true;
  o.numWarps = 8;
  GenPolicy p;
  p.aim = "wgmma";
  p.numWarps = 8;
  p.argClasses = 1; // every kernel launched again with other argument classes
  int pitched = 0, pitchedB = 0, overlapping = 0, wgmma = 0, tma = 0, overlappingTma = 0,
      otherPitches = 0;
  for (uint64_t s = 0; s < 200 && (pitched < 14 || pitchedB < 6); ++s) {
    FuzzKernel k = generateKernel(p, 9700 + s);
    bool a = hasFeature(k, "matmul.pitch"), b = hasFeature(k, "matmul.pitch_b");
    if (!a && !b)
      continue;
    ++pitched;
    pitchedB += b ? 1 : 0;
    std::map<std::string, int64_t> scalars;
    for (const ScalarDesc &d : k.scalars)
      scalars[d.name] = static_cast<int64_t>(d.value);
    ASSERT_EQ(scalars.count("lda"), a ? 1u : 0u) << describeKernel(k);
    ASSERT_EQ(scalars.count("ldb"), b ? 1u : 0u) << describeKernel(k);
    // The operand's rows (its buffer's second axis) are its pitch; they overlap when the
    // pitch is below its columns (K for A, N for B).
    bool overlaps = (a && scalars["lda"] < scalars["K"]) || (b && scalars["ldb"] < scalars["N"]);
    EXPECT_EQ(overlaps, hasFeature(k, "matmul.overlapping_rows")) << describeKernel(k);
    overlapping += overlaps ? 1 : 0;
    EXPECT_EQ(k.buffers[0].shape[1], a ? scalars["lda"] : scalars["K"]);
    EXPECT_EQ(k.buffers[1].shape[1], b ? scalars["ldb"] : scalars["N"]);
    // A class launch keeps the sizes the pitched buffers are sized for and gives a pitch
    // only smaller values, multiples of the largest power of two (up to 16) that divides
    // it (its __multipleof claim).
    for (const ClassLaunch &launch : k.classLaunches)
      for (const auto &[name, v] : launch.ints) {
        EXPECT_TRUE(name != "K" && (!a || name != "M") && (!b || name != "N")) << describeKernel(k);
        if (name != "lda" && name != "ldb")
          continue;
        ++otherPitches;
        int64_t ld = scalars[name], claim = std::min<int64_t>(ld & -ld, 16);
        EXPECT_GT(v, 0);
        EXPECT_LT(v, ld);
        EXPECT_EQ(v % claim, 0) << v << " of " << ld;
      }
    OracleResult r = checkKernel(k);
    EXPECT_EQ(r.status, OracleResult::Status::Pass) << r.message << "\n" << describeKernel(k);
    // (checkKernel skips a class launch that traps: each one alone must not.)
    for (size_t i = 0; i < k.classLaunches.size(); ++i) {
      FuzzKernel launch = classLaunchKernel(k, i);
      launch.classLaunches.clear();
      OracleResult lr = checkKernel(launch);
      EXPECT_EQ(lr.status, OracleResult::Status::Pass) << lr.message << "\n"
                                                       << describeKernel(launch);
    }
    CompileOutcome c = compileFuzzKernel(k);
    ASSERT_TRUE(c.ok()) << c.diagnostics << "\n" << describeKernel(k);
    std::vector<std::string> paths;
    std::string error;
    if (!codegen::loweringPaths(c.kernel->module(), c.kernel->function(), o, paths, error) ||
        !tookPath(paths, "wgmma") || !tookPath(paths, "mma.loop"))
      continue;
    ++wgmma;
    bool took = tookPath(paths, "mma.loop.tma");
    tma += took ? 1 : 0;
    overlappingTma += took && overlaps ? 1 : 0;
  }
  ASSERT_GE(pitched, 14);
  ASSERT_GE(pitchedB, 6);
  EXPECT_GE(overlapping, 3);
  EXPECT_GE(otherPitches, 4);
  ASSERT_GE(wgmma, 8);
  EXPECT_GE(tma, wgmma / 2) << "of " << wgmma;
  EXPECT_GE(overlappingTma, 2);
}

TEST(FuzzFastPaths, TookPath) {
  EXPECT_TRUE(tookPath({"mma.loop", "pipeline.stages=3", "wgmma"}, "pipeline"));
  EXPECT_TRUE(tookPath({"mma.loop", "pipeline.stages=2", "wgmma"}, "wgmma"));
  EXPECT_FALSE(tookPath({"mma.loop", "mma.sync", "pipeline.off"}, "pipeline"));
  EXPECT_FALSE(tookPath({"dot.fma", "remat"}, "mma.sync"));
  EXPECT_TRUE(tookPath({"mma.sync", "mma.values", "mma.values.pipeline.stages=2"},
                       "mma.values.pipeline"));
  EXPECT_TRUE(tookPath({"mma.sync", "mma.values", "mma.values.pipeline.stages=3"}, "mma.values"));
  EXPECT_FALSE(tookPath({"mma.sync", "mma.values"}, "mma.values.pipeline"));
  EXPECT_FALSE(tookPath({"mma.values.pipeline.stages=3"}, "pipeline"));
  EXPECT_EQ(aimOf({"aim.mma.values.pipeline", "attention"}), "mma.values.pipeline");
  EXPECT_EQ(aimOf({"aim.mma.loop", "dot"}), "mma.loop");
  EXPECT_EQ(aimOf({"dot", "loop"}), "");
}

TEST(FuzzFastPaths, NoSteeringAndFocus) {
  PathWeights none(0, "");
  EXPECT_TRUE(none.aimRates().empty());
  EXPECT_EQ(none.aimFor(1, 5), "");
  PathWeights focus(0.07, "mma.sync");
  EXPECT_EQ(focus.aimRates(), (std::map<std::string, double>{{"mma.sync", 1.0}}));
  for (int64_t i = 0; i < 20; ++i)
    EXPECT_EQ(focus.aimFor(3, i), "mma.sync");
}

// Sum of the rates, and each below the cap.
double total(const std::map<std::string, double> &rates) {
  double t = 0;
  for (const auto &[p, r] : rates) {
    EXPECT_GT(r, 0) << p;
    t += r;
  }
  EXPECT_LE(t, 0.5 + 1e-9);
  return t;
}

TEST(FuzzFastPaths, WeightsFromPriorsThenMeasurements) {
  PathWeights w(0.1, "");
  // Nothing measured: every path from its priors. wgmma first (0.1 / 0.9);
  // its aims give pipeline and mma.loop 0.9 of theirs, enough.
  std::map<std::string, double> r = w.aimRates();
  EXPECT_NEAR(r.at("wgmma"), 0.1 / 0.9, 1e-9);
  EXPECT_FALSE(r.count("pipeline"));
  EXPECT_FALSE(r.count("mma.loop"));
  EXPECT_NEAR(r.at("mma.sync"), 0.1 / 0.9, 1e-9);
  // The values pipeline from its prior; its aims give mma.values 0.95 of theirs.
  EXPECT_NEAR(r.at("mma.values.pipeline"), 0.1 / 0.9, 1e-9);
  EXPECT_FALSE(r.count("mma.values"));
  total(r);
  // Measured: 400 unaimed kernels, 40 of them (10%) on mma.sync, none on the
  // other paths; 30 aimed at wgmma, all on wgmma, pipeline and mma.loop.
  for (int i = 0; i < 400; ++i)
    w.add({"dot"}, i < 40 ? std::vector<std::string>{"mma.sync"} : std::vector<std::string>{});
  for (int i = 0; i < 30; ++i)
    w.add({"aim.wgmma"}, std::vector<std::string>{"mma.loop", "pipeline.stages=3", "wgmma"});
  w.add({"discarded"}, std::nullopt); // not compiled: not counted
  EXPECT_EQ(w.compiled(), 430);
  r = w.aimRates();
  // wgmma: (0.1 - 0) / (1 - 0); mma.sync: 10% * (1 - 0.1) = 9% < 10%, so
  // (0.1 - 0.09) / (0.9 - 0.1) from its prior hit rate.
  EXPECT_NEAR(r.at("wgmma"), 0.1, 1e-9);
  EXPECT_NEAR(r.at("mma.sync"), 0.01 / 0.8, 1e-9);
  EXPECT_FALSE(r.count("pipeline"));
  EXPECT_FALSE(r.count("mma.loop"));
  // The aims drawn follow the rates (a hash of seed and index).
  std::map<std::string, int> drawn;
  for (int64_t i = 0; i < 20000; ++i)
    ++drawn[w.aimFor(77, i)];
  EXPECT_NEAR(drawn["wgmma"] / 20000.0, 0.1, 0.01);
  EXPECT_NEAR(drawn["mma.sync"] / 20000.0, 0.0125, 0.005);
  EXPECT_NEAR(r.at("mma.values.pipeline"), 0.1 / 0.9, 1e-9); // none measured: its prior
  EXPECT_NEAR(drawn["mma.values.pipeline"] / 20000.0, 0.1 / 0.9, 0.01);
  EXPECT_EQ(drawn.size(), 4u); // "", wgmma, mma.sync, mma.values.pipeline
  // Unaimed kernels that reach every path by themselves: no aims.
  PathWeights rich(0.1, "");
  for (int i = 0; i < 300; ++i)
    rich.add({}, std::vector<std::string>{"mma.loop", "mma.sync", "mma.values",
                                          "mma.values.pipeline.stages=3", "pipeline.stages=2",
                                          "wgmma"});
  EXPECT_TRUE(rich.aimRates().empty());
}

TEST(FuzzFastPaths, PtxasRepair) {
  // ptxas 13.0's note on PTX that reads wgmma accumulators before their wait.
  std::string log = "ptxas info    : (C7517) warpgroup.wait is injected in around line 235 by "
                    "compiler to allow use of registers defined by GMMA in function 'mm'\n";
  EXPECT_EQ(ptxasRepair("ptxas info : Used 42 registers\n" + log), log.substr(0, log.size() - 1));
  EXPECT_EQ(ptxasRepair("ptxas info    : Used 42 registers, used 1 barriers\n"), "");
  EXPECT_EQ(ptxasRepair(""), "");
}

TEST(FuzzFastPaths, RepeatChoices) {
  EXPECT_TRUE(timingSensitive({"mma.loop", "pipeline.stages=3", "wgmma"}));
  EXPECT_TRUE(timingSensitive({"mma.loop", "mma.sync", "pipeline.off"}));
  EXPECT_TRUE(timingSensitive({"pipeline.stages=2"}));
  EXPECT_TRUE(timingSensitive({"mma.sync", "mma.values", "mma.values.pipeline.stages=3"}));
  EXPECT_FALSE(timingSensitive({"mma.sync", "mma.values"}));
  EXPECT_FALSE(timingSensitive({"mma.sync", "remat", "vector.load.16B"}));
  EXPECT_FALSE(timingSensitive({}));
  // 8/16-bit atomic loops repeat too (a lost update needs another thread's swap in
  // between), without the other stage count (no stages to vary).
  EXPECT_TRUE(timingSensitive({"atomic.min", "atomic.partword"}));
  EXPECT_FALSE(stagedPath({"atomic.min", "atomic.partword"}));
  EXPECT_FALSE(timingSensitive({"atomic.min", "atomic.or"}));
  EXPECT_TRUE(stagedPath({"mma.loop", "pipeline.stages=3", "wgmma"}));
  GpuOracleOptions o;
  o.codegen.numStages = 3;
  o.stageVariantRate = 0;
  FuzzKernel k = generateKernel(GenPolicy{}, 5);
  EXPECT_FALSE(stageVariant(k, o));
  o.stageVariantRate = 1;
  std::set<unsigned> seen;
  int chosen = 0;
  for (uint64_t s = 0; s < 200; ++s) {
    FuzzKernel ks = generateKernel(GenPolicy{}, s);
    o.stageVariantRate = 1;
    std::optional<unsigned> v = stageVariant(ks, o);
    ASSERT_TRUE(v);
    EXPECT_NE(*v, 3u);
    EXPECT_TRUE(*v == 2 || *v == 4) << *v;
    EXPECT_EQ(stageVariant(ks, o), v); // a kernel always gets the same
    seen.insert(*v);
    o.stageVariantRate = 0.25;
    chosen += stageVariant(ks, o) ? 1 : 0;
  }
  EXPECT_EQ(seen.size(), 2u);
  EXPECT_GT(chosen, 25);
  EXPECT_LT(chosen, 75);
  o.codegen.numStages = 1; // --disable-opt pipeline: nothing to vary
  o.stageVariantRate = 1;
  EXPECT_FALSE(stageVariant(k, o));
}

// The num_warps variant: 8 against the campaign's 4 (4 against 8), for a share
// of the kernels chosen by their hash, always the same ones, and not the
// kernels that stageVariant chose.
TEST(FuzzFastPaths, WarpsVariantChoices) {
  GpuOracleOptions o;
  o.warpsVariantRate = 0;
  EXPECT_FALSE(warpsVariant(generateKernel(GenPolicy{}, 5), o));
  int chosen = 0, both = 0, staged = 0;
  for (uint64_t s = 0; s < 600; ++s) {
    FuzzKernel k = generateKernel(GenPolicy{}, s);
    o.warpsVariantRate = 1;
    o.codegen.numWarps = 4;
    EXPECT_EQ(warpsVariant(k, o), std::optional<unsigned>(8));
    o.codegen.numWarps = 8;
    EXPECT_EQ(warpsVariant(k, o), std::optional<unsigned>(4));
    o.codegen.numWarps = 4;
    o.warpsVariantRate = 0.25;
    o.stageVariantRate = 0.25;
    bool w = warpsVariant(k, o).has_value(), st = stageVariant(k, o).has_value();
    EXPECT_EQ(warpsVariant(k, o).has_value(), w); // a kernel always gets the same
    chosen += w;
    staged += st;
    both += w && st;
  }
  EXPECT_GT(chosen, 100); // about 150
  EXPECT_LT(chosen, 200);
  EXPECT_LT(both, chosen / 2); // independent draws: about a quarter of them
  EXPECT_GT(both, 0);
  (void)staged;
}

// --compile-only compiles a chosen kernel at num_warps 8 as well (a second
// ptxas run); a refusal there fails the kernel, naming the count.
TEST(FuzzFastPaths, CompileOnlyCompilesTheWarpsVariant) {
  FuzzKernel k = generateKernel(GenPolicy{}, 11);
  k.classLaunches.clear();
  GpuOracleOptions o;
  o.compileOnly = true;
  o.emiRate = 0;
  for (double rate : {0.0, 1.0}) {
    fake::FakePtxas fake(0, false);
    o.warpsVariantRate = rate;
    GpuOracle oracle(o);
    OracleResult r = oracle.check(k);
    if (r.status == OracleResult::Status::Fail && r.message.find("libdevice") != std::string::npos)
      GTEST_SKIP() << r.message;
    EXPECT_EQ(r.status, OracleResult::Status::Pass) << r.property << ": " << r.message;
    EXPECT_EQ(fake.runs().size(), rate > 0 ? 2u : 1u);
    EXPECT_EQ(r.stageMs.count("warps"), rate > 0 ? 1u : 0u);
  }
  fake::FakePtxas refusing(2, false); // the second run: the variant's
  o.warpsVariantRate = 1;
  GpuOracle oracle(o);
  OracleResult r = oracle.check(k);
  EXPECT_EQ(r.status, OracleResult::Status::Fail);
  EXPECT_EQ(r.property, "gpu-compile");
  EXPECT_NE(r.message.find("with num_warps 8 (num_warps 4 compiles): ptxas rejects"),
            std::string::npos)
      << r.message;
}

} // namespace

TEST(FuzzFastPaths, AimedMatmulLoopsTakeTheTma) {
  // Option tma: a wgmma matmul loop of two or more warpgroups whose streams are P + u + r * ld +
  // c tiles fills its stages with the TMA; on 8 warps (the num_warps variant, --num-warps 8
  // campaigns) the generator's aimed matmul kernels must reach it often, or a campaign would
  // not test it; on 4 warps (one warpgroup) it is never taken.
  codegen::Options o;
  o.sm = 90;
  o.alignedPointers = true;
  GenPolicy p;
  p.aim = "wgmma";
  int wgmma = 0, tma = 0, four = 0;
  for (uint64_t s = 0; s < 60; ++s) {
    FuzzKernel k = generateKernel(p, 9600 + s);
    CompileOutcome c = compileFuzzKernel(k);
    ASSERT_TRUE(c.ok()) << c.diagnostics << "\n" << describeKernel(k);
    std::vector<std::string> paths;
    std::string error;
    o.numWarps = 4;
    if (codegen::loweringPaths(c.kernel->module(), c.kernel->function(), o, paths, error))
      four += tookPath(paths, "mma.loop.tma") ? 1 : 0;
    o.numWarps = 8;
    paths.clear();
    if (!codegen::loweringPaths(c.kernel->module(), c.kernel->function(), o, paths, error) ||
        !tookPath(paths, "wgmma") || !tookPath(paths, "mma.loop"))
      continue;
    ++wgmma;
    tma += tookPath(paths, "mma.loop.tma") ? 1 : 0;
  }
  ASSERT_GE(wgmma, 10);
  EXPECT_GE(tma, wgmma / 2) << "of " << wgmma;
  EXPECT_EQ(four, 0);
}
