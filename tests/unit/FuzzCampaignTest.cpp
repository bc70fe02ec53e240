// The fuzz campaign's machinery (fuzz/Journal.h, fuzz/Campaign.h,
// fuzz/Worker.h, fuzz/GpuOracle.h's comparison): journal lines round-trip and
// torn ones are skipped, counts are rebuilt from records, a campaign folder
// refuses other arguments, shard arithmetic, the progress line, kernels as
// JSON, and the GPU comparison rules (exact for small-int kernels, the dtype's
// tolerance otherwise, ULPs for transcendental functions, inputs unchanged).
// No GPU is needed.
#include "fuzz/Campaign.h"
#include "fuzz/GpuOracle.h"
#include "fuzz/Journal.h"
#include "fuzz/Worker.h"
#include "conformance/Runner.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace tc;
using namespace tc::fuzz;

namespace {

// A scratch folder removed at the end of the test.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string t = (fs::temp_directory_path() / "fuzz-campaign-test-XXXXXX").string();
    path = ::mkdtemp(t.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

KernelRecord record(int64_t index, const std::string &status, const std::string &property) {
  KernelRecord r;
  r.index = index;
  r.status = status;
  r.property = property;
  r.features = {"dot", "mode.small_ints"};
  r.genMs = 2;
  r.checkMs = 10;
  r.elapsed = 0.5 * static_cast<double>(index);
  return r;
}

KernelRecord failing(int64_t index, const std::string &sig) {
  KernelRecord r = record(index, "fail", "gpu-mismatch");
  Finding f;
  f.signature = sig;
  f.property = "gpu-mismatch";
  f.campaignSeed = 9;
  f.index = index;
  f.message = "Y[3]: got 1, want 2";
  f.caseFile = "cases/x.json";
  f.reproduce = "triton-fuzz --seed 9 --replay " + std::to_string(index) + " --print";
  f.features = {"dot"};
  r.finding = f;
  r.rawSignature = "raw-" + sig;
  return r;
}

TEST(FuzzJournal, RecordRoundTripsThroughOneLine) {
  KernelRecord r = failing(7, "gpu-mismatch|f32|dot");
  r.message = "quote \" and newline \n inside";
  r.restarts = 2;
  std::string line = recordToLine(r);
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1); // one line, whatever the message holds
  std::optional<KernelRecord> back = recordFromLine(line);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->index, 7);
  EXPECT_EQ(back->status, "fail");
  EXPECT_EQ(back->message, r.message);
  EXPECT_EQ(back->restarts, 2);
  EXPECT_EQ(back->rawSignature, "raw-gpu-mismatch|f32|dot");
  ASSERT_TRUE(back->finding);
  EXPECT_EQ(back->finding->signature, "gpu-mismatch|f32|dot");
  EXPECT_EQ(back->finding->caseFile, "cases/x.json");
  EXPECT_EQ(back->finding->features, std::vector<std::string>{"dot"});
}

TEST(FuzzJournal, TornAndDuplicateLinesAreSkipped) {
  TempDir dir;
  std::string path = (dir.path / "journal.jsonl").string();
  {
    Journal j;
    std::string error;
    ASSERT_TRUE(j.open(path, error)) << error;
    ASSERT_TRUE(j.append(record(0, "pass", ""), error));
    ASSERT_TRUE(j.append(record(1, "discard", "out_of_bounds"), error));
  }
  std::string full = recordToLine(record(2, "pass", ""));
  std::ofstream(path, std::ios::app) << full.substr(0, full.size() / 2); // kill -9 mid-write
  int64_t skipped = 0;
  std::vector<KernelRecord> rs = readJournal(path, &skipped);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(skipped, 1);
  // Appending after the torn line starts a new line: the record is not lost.
  {
    Journal j;
    std::string error;
    ASSERT_TRUE(j.open(path, error));
    ASSERT_TRUE(j.append(record(2, "pass", ""), error));
    ASSERT_TRUE(j.append(record(1, "pass", ""), error)); // a second record of index 1
  }
  rs = readJournal(path, &skipped);
  ASSERT_EQ(rs.size(), 3u);
  EXPECT_EQ(rs[2].index, 2);
  EXPECT_EQ(rs[1].status, "discard"); // the first record of an index counts
  EXPECT_EQ(skipped, 2);
}

TEST(FuzzJournal, SummaryCountsAreRebuiltFromRecords) {
  CampaignSummary s;
  addRecord(s, record(0, "pass", ""));
  addRecord(s, record(1, "discard", "out_of_bounds"));
  addRecord(s, record(2, "discard", "out_of_bounds"));
  addRecord(s, record(3, "generator-bug", "compile"));
  KernelRecord f = failing(4, "sigA");
  f.restarts = 1;
  addRecord(s, f);
  addRecord(s, failing(5, "sigA"));
  addRecord(s, failing(6, "sigB"));
  EXPECT_EQ(s.kernels, 7);
  EXPECT_EQ(s.passed, 1);
  EXPECT_EQ(s.discards, 2);
  EXPECT_EQ(s.discardsByKind["out_of_bounds"], 2);
  EXPECT_EQ(s.generatorBugs, 1);
  EXPECT_EQ(s.failures, 3);
  EXPECT_EQ(s.failuresByProperty["gpu-mismatch"], 3);
  EXPECT_EQ(s.features["dot"], 7);
  EXPECT_EQ(s.workerRestarts, 1);
  EXPECT_DOUBLE_EQ(s.generationSeconds, 7 * 0.002);
  ASSERT_EQ(s.findings.size(), 3u);
  EXPECT_EQ(signatureCount(s), 2);
}

// The per-stage breakdown: each record's stages are summed, generation is
// "gen", and what a check spent outside its timed stages is "other" (or
// "check" for a record without stages, as an older journal's).
TEST(FuzzJournal, StageTimesAddUp) {
  KernelRecord a = record(0, "pass", ""); // gen 2 ms, check 10 ms
  a.stageMs = {{"interp", 1}, {"llvm-opt", 4}, {"jit", 3.5}};
  KernelRecord b = record(1, "pass", "");
  b.stageMs = {{"llvm-opt", 5}, {"jit", 5}};
  KernelRecord old = record(2, "pass", "");
  // The stages survive the journal line.
  std::optional<KernelRecord> back = recordFromLine(recordToLine(a));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->stageMs, a.stageMs);
  CampaignSummary s;
  addRecord(s, *back);
  addRecord(s, b);
  addRecord(s, old);
  EXPECT_DOUBLE_EQ(s.stageSeconds["gen"], 0.006);
  EXPECT_DOUBLE_EQ(s.stageSeconds["interp"], 0.001);
  EXPECT_DOUBLE_EQ(s.stageSeconds["llvm-opt"], 0.009);
  EXPECT_DOUBLE_EQ(s.stageSeconds["jit"], 0.0085);
  EXPECT_DOUBLE_EQ(s.stageSeconds["other"], 0.0015); // 10 - 8.5, then 10 - 10
  EXPECT_DOUBLE_EQ(s.stageSeconds["check"], 0.010);
  // 36 ms in all over 3 kernels: check 10 (27.8%), llvm-opt 9 (25%), jit 8.5
  // (23.6%), gen 6 (16.7%), other 1.5 (4.2%), interp 1 (2.8%).
  EXPECT_EQ(stageTimesLine(s),
            "stage times: check 28% llvm-opt 25% jit 24% gen 17% other 4% interp 3% (ms per "
            "kernel, summed over workers: 3.33 check, 3.00 llvm-opt, 2.83 jit, 2.00 gen, 0.50 "
            "other, 0.33 interp)");
  EXPECT_EQ(stageTimesLine(CampaignSummary{}), "");
}

TEST(FuzzJournal, CampaignFolderRefusesOtherArguments) {
  TempDir dir;
  CampaignArgs a;
  a.seed = 20261121;
  a.shardIndex = 3;
  a.shardCount = 64;
  CampaignState st;
  std::string error;
  ASSERT_TRUE(openCampaign(dir.path.string(), a, st, error)) << error;
  EXPECT_FALSE(st.started.empty());
  std::string started = st.started;
  st.device = "NVIDIA H100";
  ASSERT_TRUE(saveState(dir.path.string(), st, error));
  CampaignState again;
  ASSERT_TRUE(openCampaign(dir.path.string(), a, again, error)) << error; // same: resume
  EXPECT_EQ(again.started, started);
  EXPECT_EQ(again.device, "NVIDIA H100");
  CampaignArgs other = a;
  other.shardIndex = 4;
  EXPECT_FALSE(openCampaign(dir.path.string(), other, again, error));
  EXPECT_NE(error.find("shard \"3/64\" (now \"4/64\")"), std::string::npos) << error;
  other = a;
  other.mode = "cpu-only";
  EXPECT_FALSE(openCampaign(dir.path.string(), other, again, error));
  EXPECT_NE(error.find("mode"), std::string::npos) << error;
}

TEST(FuzzCampaign, ShardParsing) {
  std::string error;
  std::optional<Shard> s = parseShard("3/64", error);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->index, 3);
  EXPECT_EQ(s->count, 64);
  for (const char *bad : {"64/64", "-1/4", "3", "3/0", "a/4", "1/4x", ""})
    EXPECT_FALSE(parseShard(bad, error)) << bad;
  EXPECT_NE(error.find("0 <= K < N"), std::string::npos);
}

TEST(FuzzCampaign, ShardIndicesAscendSkippingDone) {
  IndexSequence seq({1, 4}, 20, {5, 13});
  std::vector<int64_t> got;
  while (std::optional<int64_t> i = seq.next())
    got.push_back(*i);
  EXPECT_EQ(got, (std::vector<int64_t>{1, 9, 17}));
  EXPECT_TRUE(seq.exhausted());
  // Shards partition the indices below the limit.
  std::set<int64_t> all;
  for (int k = 0; k < 3; ++k) {
    IndexSequence part({k, 3}, 10, {});
    while (std::optional<int64_t> i = part.next())
      EXPECT_TRUE(all.insert(*i).second);
  }
  EXPECT_EQ(all.size(), 10u);
  IndexSequence unlimited({0, 1}, 0, {0, 1, 2});
  EXPECT_EQ(unlimited.next(), 3);
  EXPECT_FALSE(unlimited.exhausted());
}

TEST(FuzzCampaign, ProgressLine) {
  CampaignSummary s;
  for (int i = 0; i < 8; ++i)
    addRecord(s, record(i, "pass", ""));
  addRecord(s, record(8, "discard", "out_of_bounds"));
  addRecord(s, failing(9, "sigA"));
  EXPECT_EQ(progressLine(s, 4, 120, 16, 2),
            "[4.0s / 120.0s] kernels 10 (2.5/s), discards 10.0%, failures 1 (1 signatures), "
            "workers 16 (restarts 2), remaining 116.0s");
}

TEST(FuzzCampaign, ReproduceCommandNamesTheFlagsUsed) {
  CampaignOptions o;
  o.check.seed = 42;
  o.reproduceFlags = " --disable-opt mma";
  EXPECT_EQ(reproduceCommand(o, 17), "triton-fuzz --seed 42 --replay 17 --print --disable-opt mma");
}

TEST(FuzzCampaign, CrashKeyIgnoresAddressesAndLines) {
  std::string a = "warming up\nLLVM ERROR: Cannot select: 0x5637e58940: bf16 = bitcast "
                  "0x5637e587f0, fuzz.tc:10:21\nIn function: fuzz\n";
  std::string b = "LLVM ERROR: Cannot select: 0x55b177f9a3c0: bf16 = bitcast 0x55b1778, "
                  "fuzz.tc:35:61\nIn function: fuzz\n";
  EXPECT_EQ(crashKey(a), crashKey(b));
  EXPECT_EQ(crashKey(a), "LLVM ERROR: Cannot select: #: bfN = bitcast #, fuzz.tc:N:N");
  EXPECT_NE(crashKey(a), crashKey("LLVM ERROR: Cannot select: 0x1: f16 = bitcast 0x2\n"));
  EXPECT_EQ(crashKey("no error line here\n"), "");
}

TEST(FuzzWorker, KernelSeedsAreDistinctAndStable) {
  EXPECT_EQ(kernelSeed(1, 0), kernelSeed(1, 0));
  EXPECT_NE(kernelSeed(1, 0), kernelSeed(1, 1));
  EXPECT_NE(kernelSeed(1, 0), kernelSeed(2, 0));
}

TEST(FuzzWorker, KernelJsonIsExact) {
  for (uint64_t seed : {1u, 2u, 3u, 4u}) {
    FuzzKernel k = generateKernel({}, kernelSeed(seed, 0), 100);
    if (!k.buffers.empty() && !k.buffers[0].data.empty())
      k.buffers[0].data[0] = 0.1; // not exact in decimal with few digits
    FuzzKernel back = kernelFromJson(nlohmann::json::parse(kernelToJson(k).dump()));
    EXPECT_EQ(back.source, k.source);
    EXPECT_EQ(back.defines, k.defines);
    EXPECT_EQ(back.grid, k.grid);
    EXPECT_EQ(back.features, k.features);
    EXPECT_EQ(back.smallInts, k.smallInts);
    ASSERT_EQ(back.buffers.size(), k.buffers.size());
    for (size_t i = 0; i < k.buffers.size(); ++i) {
      EXPECT_EQ(back.buffers[i].data, k.buffers[i].data);
      EXPECT_EQ(back.buffers[i].dtype, k.buffers[i].dtype);
      EXPECT_EQ(back.buffers[i].shape, k.buffers[i].shape);
      EXPECT_EQ(back.buffers[i].isOutput, k.buffers[i].isOutput);
    }
    ASSERT_EQ(back.scalars.size(), k.scalars.size());
    for (size_t i = 0; i < k.scalars.size(); ++i)
      EXPECT_EQ(back.scalars[i].value, k.scalars[i].value);
  }
}

// A kernel with one float input X and one float output Y of 4 elements.
FuzzKernel twoBuffers(bool smallInts) {
  FuzzKernel k;
  k.smallInts = smallInts;
  k.buffers.push_back({"X", DType::F32, {4}, {1, 2, 3, 4}, false});
  k.buffers.push_back({"Y", DType::F32, {4}, {0, 0, 0, 0}, true});
  return k;
}

TEST(FuzzGpuOracle, SmallIntKernelsCompareExactly) {
  FuzzKernel k = twoBuffers(true);
  std::map<std::string, HostArray> want = makeBuffers(k), got = makeBuffers(k);
  EXPECT_EQ(compareWithReference(k, want, got, 0), "");
  got.at("Y").setDouble(2, std::nextafter(0.0f, 1.0f)); // the smallest float: not exact
  std::string diff = compareWithReference(k, want, got, 0);
  EXPECT_NE(diff.find("Y[2]"), std::string::npos) << diff;
  EXPECT_NE(diff.find("want 0"), std::string::npos) << diff;
  EXPECT_NE(diff.find("1 of 4 elements"), std::string::npos) << diff;
}

TEST(FuzzGpuOracle, GeneralKernelsUseTheDtypeTolerance) {
  FuzzKernel k = twoBuffers(false);
  std::map<std::string, HostArray> want = makeBuffers(k), got = makeBuffers(k);
  want.at("Y").setDouble(0, 1000);
  got.at("Y").setDouble(0, 1000.001); // within float32's rtol 1.3e-6 * 1000
  EXPECT_EQ(compareWithReference(k, want, got, 0), "");
  got.at("Y").setDouble(0, 1000.01); // 1e-5 relative: outside
  EXPECT_NE(compareWithReference(k, want, got, 0), "");
  got.at("Y").setDouble(0, 1001);
  EXPECT_NE(compareWithReference(k, want, got, 4), ""); // ULPs loosen, they do not replace
}

TEST(FuzzGpuOracle, DoubleOutputsOfAFloatProductCarryFloatRounding) {
  // Seed 2026120680 kernel 52216: `double *pY = c` where c accumulates `a @ b` of f16 tiles in
  // f32 over 24 trips of k 16 (dotToleranceScale 16 * 8 = 128). The tensor cores' order gave
  // -8.711883544921875 where the interpreter's gave -8.7142333984375: within f32's tolerance
  // (rtol 1.3e-6, atol 1e-5, both scaled), not within f64's (1e-7). An f64 `@` keeps f64's.
  FuzzKernel k;
  k.features = {"dot", "dot.float16"};
  k.buffers.push_back({"Y", DType::F64, {1}, {0}, true});
  std::map<std::string, HostArray> want = makeBuffers(k), got = makeBuffers(k);
  want.at("Y").setDouble(0, -8.7142333984375);
  got.at("Y").setDouble(0, -8.711883544921875);
  EXPECT_EQ(compareWithReference(k, want, got, 0, 128), "");
  EXPECT_NE(compareWithReference(k, want, got, 0, 0), ""); // no `@`: f64's tolerance
  got.at("Y").setDouble(0, -8.5);                          // far outside f32's scaled tolerance too
  EXPECT_NE(compareWithReference(k, want, got, 0, 128), "");
  got.at("Y").setDouble(0, -8.711883544921875);
  k.features = {"dot", "dot.float64"};
  EXPECT_NE(compareWithReference(k, want, got, 0, 128), "");
}

TEST(FuzzGpuOracle, TranscendentalKernelsMayBeOffByTheirUlpBound) {
  FuzzKernel k = twoBuffers(true);
  std::map<std::string, HostArray> want = makeBuffers(k), got = makeBuffers(k);
  float w = 1000.0f, g = w;
  for (int i = 0; i < 3; ++i)
    g = std::nextafter(g, 2000.0f);
  want.at("Y").setDouble(0, w);
  got.at("Y").setDouble(0, g); // 3 ULPs away
  EXPECT_NE(compareWithReference(k, want, got, 0), "");
  EXPECT_EQ(compareWithReference(k, want, got, 4), "");
  EXPECT_NE(compareWithReference(k, want, got, 2), "");
}

TEST(FuzzGpuOracle, InputsMustComeBackUnchanged) {
  FuzzKernel k = twoBuffers(false);
  std::map<std::string, HostArray> want = makeBuffers(k), got = makeBuffers(k);
  got.at("X").setDouble(1,
                        std::nextafter(2.0f, 3.0f)); // one ULP, but an input must not change at all
  std::string diff = compareWithReference(k, want, got, 8);
  EXPECT_NE(diff.find("X[1]"), std::string::npos) << diff;
  EXPECT_NE(diff.find("unchanged"), std::string::npos) << diff;
}

TEST(FuzzGpuOracle, InterpReferenceRunsTheKernel) {
  FuzzKernel k;
  k.source = "__global__ void f(float *Y) { *Y = 2.5; }";
  k.kernelName = "f";
  k.buffers.push_back({"Y", DType::F32, {1}, {0}, true});
  std::map<std::string, HostArray> out;
  std::string error;
  ASSERT_TRUE(interpReference(k, 5, out, error)) << error;
  EXPECT_EQ(out.at("Y").getDouble(0), 2.5);
  k.source = "__global__ void f(float *Y) { syntax error }";
  EXPECT_FALSE(interpReference(k, 5, out, error));
  EXPECT_NE(error.find("does not compile"), std::string::npos);
}

// A reduction step can leave two programs storing one element: the reducer
// asks interpReference with raceCheck, which reports it as the runner does.
TEST(FuzzGpuOracle, InterpReferenceReportsRacesWhenAsked) {
  FuzzKernel k;
  k.source = "__global__ void f(float *Y) { *Y = 2.5; }";
  k.kernelName = "f";
  k.grid = {2, 1, 1};
  k.buffers.push_back({"Y", DType::F32, {1}, {0}, true});
  std::map<std::string, HostArray> out;
  std::string error;
  ASSERT_TRUE(interpReference(k, 5, out, error)) << error;
  EXPECT_FALSE(interpReference(k, 5, out, error, /*raceCheck=*/true));
  EXPECT_NE(error.find("data_race"), std::string::npos) << error;
  k.grid = {1, 1, 1};
  EXPECT_TRUE(interpReference(k, 5, out, error, /*raceCheck=*/true)) << error;
}

} // namespace

// docs/fuzz.md: kernels with `@` are compared with a tolerance scaled by K.
TEST(FuzzGpuOracle, DotKernelsGetAToleranceScaledByK) {
  CompileRequest req;
  req.sourceName = "dot.tc";
  req.sourceText = "__global__ void k(float *Y) {\n"
                   "  float a[16, 32] = 1;\n  float b[32, 16] = 1;\n"
                   "  float c[16, 16] = a @ b;\n"
                   "  for (int i = 0; i < 2; i++) { c = c + a @ b; }\n"
                   "  *(Y + (0 ... 16)[:, newaxis] * 16 + (0 ... 16)[newaxis, :]) = c;\n}\n";
  CompileOutcome c = compileKernel(req);
  ASSERT_TRUE(c.ok()) << c.diagnostics;
  // K = 32 outside the loop, 32 inside (weighted 8): 32 + 256.
  EXPECT_EQ(dotToleranceScale(c.kernel->function()), 288.0);
  // A `+` reduction over 16 elements of the result multiplies it by 16.
  CompileRequest sum = req;
  sum.sourceText = "__global__ void k(float *Y) {\n"
                   "  float a[16, 32] = 1;\n  float b[32, 16] = 1;\n"
                   "  float c[16] = (a @ b)[+, :];\n"
                   "  *(Y + (0 ... 16)) = c;\n}\n";
  CompileOutcome cs = compileKernel(sum);
  ASSERT_TRUE(cs.ok()) << cs.diagnostics;
  EXPECT_EQ(dotToleranceScale(cs.kernel->function()), 32.0 * 16);
  FuzzKernel k = twoBuffers(false);
  std::map<std::string, HostArray> want = makeBuffers(k), got = makeBuffers(k);
  want.at("Y").setDouble(0, 1000);
  got.at("Y").setDouble(0, 1000.01); // 1e-5 relative: outside float32's own rtol
  EXPECT_NE(compareWithReference(k, want, got, 0), "");
  EXPECT_EQ(compareWithReference(k, want, got, 0, 288.0), "");
  got.at("Y").setDouble(0, 1010); // 1e-2 relative: outside 288 * 1.3e-6 (and atol 288 * 64e-5)
  EXPECT_NE(compareWithReference(k, want, got, 0, 288.0), "");
  k.smallInts = true; // exact inputs: exact, whatever the scale
  got.at("Y").setDouble(0, 1000.01);
  EXPECT_NE(compareWithReference(k, want, got, 0, 288.0), "");
}

// A ULP-bounded sum that a subtraction shrinks: its error is relative to the
// terms, about the size of the inputs, not to the small result (seed 20261402
// kernel 206233: 1.4e-6 off in 0.0858, the terms about 2.6).
TEST(FuzzGpuOracle, MathToleranceScalesWithTheInputs) {
  FuzzKernel k = twoBuffers(false);
  k.buffers[0].data = {8, -3, 0.5, 1};
  k.buffers[1].dtype = DType::F64; // f64's own tolerance is far below these errors
  std::map<std::string, HostArray> want = makeBuffers(k), got = makeBuffers(k);
  const double tol = 4.0 * 2 * std::ldexp(1.0, -23); // log2f: 1 ULP, + 1, x 4
  want.at("Y").setDouble(0, 0.0858306884765625);
  got.at("Y").setDouble(0, 0.08583211898803711); // 1.4e-6 off: 1.7e-5 relative
  EXPECT_EQ(compareWithReference(k, want, got, 0, 0, tol), ""); // within tol * 8
  got.at("Y").setDouble(0, 0.0859);                             // 6.9e-5 off: beyond
  EXPECT_NE(compareWithReference(k, want, got, 0, 0, tol), "");
  k.buffers[0].data = {1, -1, 0.5, 1}; // inputs of magnitude 1: tol itself
  want = makeBuffers(k);
  got = makeBuffers(k);
  want.at("Y").setDouble(0, 0.0858306884765625);
  got.at("Y").setDouble(0, 0.08583211898803711);
  EXPECT_NE(compareWithReference(k, want, got, 0, 0, tol), "");
}

// An f32 `sin` converted to f64 may be off by f32 ULPs in the f64 output.
TEST(FuzzGpuOracle, MathResultsAreComparedInTheirOwnPrecision) {
  CompileRequest req;
  req.sourceName = "sin.tc";
  req.sourceText = "__global__ void k(double *Y) {\n  float x[4] = 1;\n"
                   "  *(Y + (0 ... 4)) = (double)sin(x);\n}\n";
  CompileOutcome c = compileKernel(req);
  ASSERT_TRUE(c.ok()) << c.diagnostics;
  double tol = mathRelativeTolerance(c.kernel->function());
  EXPECT_EQ(tol, 4.0 * 3 * std::ldexp(1.0, -23)); // sinf: 2 ULPs, + 1, f32 epsilon, x 4
  FuzzKernel k;
  k.smallInts = true;
  k.buffers.push_back({"Y", DType::F64, {1}, {0}, true});
  std::map<std::string, HostArray> want = makeBuffers(k), got = makeBuffers(k);
  want.at("Y").setDouble(0, 0.8414709568023682); // sinf(1) as f64
  got.at("Y").setDouble(0, 0.8414710164070129);  // one f32 ULP above
  EXPECT_NE(compareWithReference(k, want, got, 3), ""); // f64 ULPs: far apart
  EXPECT_EQ(compareWithReference(k, want, got, 3, 0, tol), "");
  got.at("Y").setDouble(0, 0.84148); // 1e-5 relative: beyond 12 f32 ULPs
  EXPECT_NE(compareWithReference(k, want, got, 3, 0, tol), "");
}

namespace {

// A one-element kernel `fuzz(double *Y, int32 N, bf16 S)` that stores `value`
// (an expression of S and kc, a float tile of 1).
FuzzKernel oneValueKernel(const std::string &value, double s) {
  FuzzKernel k;
  k.kernelName = "fuzz";
  k.defines = {{"TS", "1"}};
  k.source = "__global__ void fuzz(double *Y, int32 N, bf16 S) {\n"
             "  int rm[TS] = 0;\n  bool mask[TS] = rm < N;\n  double *pY[TS] = Y + rm;\n"
             "  float kc[TS] = 1;\n  *?(mask) pY = " +
             value + ";\n}\n";
  k.buffers.push_back({"Y", DType::F64, {1}, {3}, true});
  k.scalars = {{"N", DType::I32, 1}, {"S", DType::BF16, s}};
  return k;
}

std::string sensitivityOf(const FuzzKernel &k) {
  std::map<std::string, HostArray> want;
  std::string error;
  EXPECT_TRUE(interpReference(k, 20, want, error)) << error;
  UlpSensitivity u = ulpSensitivity(k, want, 20);
  EXPECT_EQ(u.first.empty(), u.elements.empty() && !u.trapped);
  EXPECT_TRUE(u.first.empty() || u.covers({})); // an empty set is covered
  if (!u.first.empty()) { // the element of the one-element output, nothing else
    EXPECT_EQ(u.elements, (ElementSet{{"Y", 0}}));
    EXPECT_TRUE(u.covers({{"Y", 0}}));
    EXPECT_FALSE(u.covers({{"Y", 0}, {"Y", 1}}));
  }
  return u.first;
}

} // namespace

// Property (f) and the GPU oracle's discard: a kernel whose result a GPU one
// ULP off in its math would move past the comparison's tolerance is found on
// the interpreter (seed 20261502 kernel 275324: cos(exp(4.5)), a GPU 1 ULP
// high in exp, cos 6.8e-6 off); exp alone, exact results (sin(0) = 0, which a
// GPU returns exactly) and kernels without such math are not.
TEST(FuzzGpuOracle, UlpSensitiveKernelsAreFoundOnTheInterpreter) {
  std::string s = sensitivityOf(oneValueKernel("cos(exp(kc - S))", -3.5));
  EXPECT_NE(s.find("Y[0]"), std::string::npos) << s;
  EXPECT_EQ(sensitivityOf(oneValueKernel("exp(kc - S)", -3.5)), "");
  EXPECT_EQ(sensitivityOf(oneValueKernel("rsqrt(sin(kc * 0))", -3.5)), "");
  EXPECT_EQ(sensitivityOf(oneValueKernel("kc - S", -3.5)), "");
  // Seed 20261502 kernel 140003: exp(S * 0.25) summed over 4 lanes, cancelled
  // to just above -2 and truncated: -1 on the interpreter, -2 on a GPU 1 ULP off.
  FuzzKernel atomic;
  atomic.kernelName = "fuzz";
  atomic.defines = {{"TM", "1"}, {"TN", "4"}};
  atomic.source =
      "__global__ void fuzz(double *Y, int32 M, int32 N, int8 S) {\n"
      "  int rm[TM] = 0;\n  int rn[TN] = 0;\n"
      "  bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);\n"
      "  int64 x0[TM, TN] = 0;\n  uint64 x1[TM, TN] = 0;\n"
      "  float v0[TM, TN] = exp(((S) * 0.25));\n  float r1[TM] = v0[:, +];\n"
      "  float v5[TM, TN] = (-((S + r1[:, newaxis])));\n"
      "  double *pc6[TM, TN] = Y + rm[:, newaxis] % 4 * N + rn[newaxis, :] % 4;\n"
      "  atomic_add(pc6, (double)((int32)min(max((double)((v5 + (((r1[:, newaxis] + "
      "rm[:, newaxis]) + (x0 * v0)) - ((x1 == x1) | 4)))), -2), 2)), mask);\n}\n";
  atomic.buffers.push_back({"Y", DType::F64, {1, 1}, {3}, true});
  atomic.scalars = {{"M", DType::I32, 1}, {"N", DType::I32, 1}, {"S", DType::I8, -3}};
  s = sensitivityOf(atomic);
  EXPECT_NE(s.find("Y[0]"), std::string::npos) << s;
  // The interpreter itself is back to exact math after the check.
  FuzzKernel k = oneValueKernel("exp(kc - S)", -3.5);
  std::map<std::string, HostArray> want;
  std::string error;
  ASSERT_TRUE(interpReference(k, 20, want, error)) << error;
  EXPECT_EQ(want.at("Y").getDouble(0), static_cast<double>(static_cast<float>(std::exp(4.5))));
}

// Seed 20262001 kernel 91517 (an H100): Y = (v - (r + v)) + r with v an exp2
// result near 95832 and r the column's max, another exp2 result near 116351.
// The reference gives 0; a GPU whose exp2 is one ULP high in v and exact in r
// gives 2^-7 (one ULP of v). All results up or all down keep the difference
// v - r and so the 0, as do +1 and -1 together: the oracle must try more
// patterns before it reports a correct GPU.
TEST(FuzzGpuOracle, UlpSensitivityTriesPatternsUntilTheGpuDifferenceIsCovered) {
  FuzzKernel k;
  k.kernelName = "fuzz";
  k.defines = {{"TM", "16"}, {"TN", "2"}};
  k.grid = {1, 4, 1};
  // The reduced case as the campaign wrote it: the ULP patterns are drawn
  // from a hash of the source, and this source's first draw missed.
  k.source =
      "float h0(int16 p0[TM, TN], float p1[TM, TN]) {\n"
      "  float t[TM, TN] = exp2(p1);\n"
      "  return t;\n"
      "}\n"
      "int16 h3(int16 p0[TM, TN], float p1[TM, TN]) {\n"
      "  return p0;\n"
      "}\n"
      "__global__ void fuzz(int16 *X0, float *X1, float *Y, int32 M, int32 N, int32 C) {\n"
      "  int pm = 0;\n"
      "  int pn = get_program_id(1);\n"
      "  int rm[TM] = pm * TM + 0 ... TM;\n"
      "  int rn[TN] = pn * TN + 0 ... TN;\n"
      "  bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);\n"
      "  int16 *pX0[TM, TN] = X0 + rm[:, newaxis] * N + rn[newaxis, :];\n"
      "  int16 x0[TM, TN] = mask ? *pX0 : 0;\n"
      "  float *pX1[TM, TN] = X1 + rm[:, newaxis] * N + rn[newaxis, :];\n"
      "  float x1[TM, TN] = mask ? *pX1 : 0;\n"
      "  float *pY[TM, TN] = Y + rm[:, newaxis] * N + rn[newaxis, :];\n"
      "  float v1[TM, TN] = h0(x0, ((x1 - x0) % (x1 * x1)));\n"
      "  float r2[TN] = v1[max, :];\n"
      "  float w8[TM, TN] = 1;\n"
      "  if (C > 0) {\n"
      "    w8 = ((v1) - (r2[newaxis, :] + v1));\n"
      "  }\n"
      "  *?(mask) pY = (w8 + r2[newaxis, :]);\n"
      "}\n";
  std::vector<double> x0(80, 0), x1(80, 0);
  const int at[] = {45, 46, 47, 48, 49, 75, 76, 77, 78, 79};
  const double v0[] = {-18, -59, -21, 18, -30, 92, -77, 45, 38, -88};
  const double v1[] = {-1.5341796875, -7.06640625,   -4.171875,     -4.0234375,
                       -4.181640625,  -3.919921875,  -6.3681640625, -2.2353515625,
                       -0.1181640625, 5.0498046875};
  for (int i = 0; i < 10; ++i) {
    x0[at[i]] = v0[i];
    x1[at[i]] = v1[i];
  }
  k.buffers.push_back({"X0", DType::I16, {10, 8}, x0, false});
  k.buffers.push_back({"X1", DType::F32, {10, 8}, x1, false});
  k.buffers.push_back({"Y", DType::F32, {10, 8}, std::vector<double>(80, 3.0), true});
  k.scalars = {{"M", DType::I32, 10}, {"N", DType::I32, 8}, {"C", DType::I32, 1}};
  std::map<std::string, HostArray> want;
  std::string error;
  ASSERT_TRUE(interpReference(k, 20, want, error)) << error;
  // Y[9, 7]: v = exp2(fmod(93.0498046875, 25.500526...)), r = exp2(16.828125) (row 5).
  ASSERT_EQ(want.at("Y").getDouble(79), 0.0);
  std::map<std::string, HostArray> got = want;
  got.at("Y").setDouble(79, 0.0078125); // what the H100 stored
  CompileOutcome c = compileFuzzKernel(k);
  ASSERT_TRUE(c.ok()) << c.diagnostics;
  const ir::Function &fn = c.kernel->function();
  double tol = mathRelativeTolerance(fn);
  EXPECT_NE(compareWithReference(k, want, got, conf::gpuExtraUlps(fn), 0, tol), "");
  ElementSet gpuDiff = differingElements(k, want, got, conf::gpuExtraUlps(fn), 0, tol);
  ASSERT_EQ(gpuDiff, (ElementSet{{"Y", 79}}));
  UlpSensitivity u = ulpSensitivity(k, want, 20, &gpuDiff);
  EXPECT_TRUE(u.covers(gpuDiff)) << u.first;
  // A difference no ULP pattern explains is still reported: Y[45] (row 5,
  // col 5, exp2 of about 2.34 minus itself) cannot move by 0.5.
  got.at("Y").setDouble(45, 0.5);
  ElementSet wrong = differingElements(k, want, got, conf::gpuExtraUlps(fn), 0, tol);
  EXPECT_FALSE(ulpSensitivity(k, want, 20, &wrong).covers(wrong));
}

namespace {

// boundedOutputs of a kernel `k(float *X, float *Y, half *H, double *D, float *Z)` with `body`.
BoundedOutputs directOf(const std::string &body) {
  CompileRequest req;
  req.sourceName = "direct.tc";
  req.sourceText = "__global__ void k(float *X, float *Y, half *H, double *D, float *Z) {\n"
                   "  int r[8] = 0 ... 8;\n  float x[8] = *(X + r);\n" +
                   body + "}\n";
  CompileOutcome c = compileKernel(req);
  EXPECT_TRUE(c.ok()) << c.diagnostics;
  return c.ok() ? boundedOutputs(c.kernel->function()) : BoundedOutputs{};
}

} // namespace

// An output written only with exactly computed values is compared bit for bit, one written
// with a ULP-bounded function of such values in that function's ULPs; anything that may
// round differently on the two sides before the function, a store whose address or mask
// may, or an atomic keeps the tolerance.
TEST(FuzzGpuOracle, BoundedOutputsAreStoresOfExactValuesOrOfOneFunctionOfThem) {
  using M = BoundedOutputs;
  // exp2f: 2 ULPs on the GPU, + 1 for the interpreter; the bound of exp2-range's form.
  EXPECT_EQ(directOf("  *(Y + r) = exp2(max(x * 2.0f - 130.0f, -127.0f));\n"), (M{{"Y", 3}}));
  // Through a narrowing cast: one ULP of half, + 1; sqrt, fma, loads, loops are exact.
  EXPECT_EQ(directOf("  float a[8] = 0;\n  for (int i = 0; i < 3; i++)\n"
                     "    a = fma(a, x, sqrt(x));\n  *(H + r) = (half)sin(a);\n"),
            (M{{"H", 2}}));
  // Masked, with an exact mask; a max reduction is exact.
  EXPECT_EQ(directOf("  float m = x[max];\n  *?(x < m) (Y + r) = log2(x);\n"), (M{{"Y", 2}}));
  // Exact values themselves: bit for bit (a widening cast is exact too).
  EXPECT_EQ(directOf("  *(Y + r) = x * 3.0f + x / 7.0f;\n  *(D + r) = (double)x;\n"),
            (M{{"D", 0}, {"Y", 0}}));
  // Stores of both kinds: the function's ULPs.
  EXPECT_EQ(directOf("  *(Y + r) = exp(x);\n  *(Y + r + 8) = x;\n"), (M{{"Y", 3}}));
  // Not bounded: a later operation, a widening cast, a function of a function, a float sum,
  // a value read back from an output, a mask from a function, an atomic.
  EXPECT_EQ(directOf("  *(Y + r) = exp2(x) - 1.0f;\n"), M{});
  EXPECT_EQ(directOf("  *(D + r) = (double)exp(x);\n"), M{});
  EXPECT_EQ(directOf("  *(Y + r) = exp2(sin(x));\n"), M{});
  EXPECT_EQ(directOf("  float s = x[+];\n  *(Y + r) = exp(x - s);\n  *(Z + r) = x - s;\n"), M{});
  EXPECT_EQ(directOf("  *(Z + r) = x;\n  float z[8] = *(Z + r);\n  *(Y + r) = exp(z);\n"),
            (M{{"Z", 0}}));
  EXPECT_EQ(directOf("  *?(exp(x) < 2.0f) (Y + r) = x;\n"), M{});
  // A store under an `if` or in a loop: bounded when the condition and trip count are exact.
  EXPECT_EQ(directOf("  float m = x[max];\n  if (m > 1.0f) {\n    *(Y + r) = x;\n  }\n"),
            (M{{"Y", 0}}));
  EXPECT_EQ(directOf("  float e = exp(x[max]);\n  if (e > 7.0f) {\n    *(Y + r) = x;\n  }\n"), M{});
  EXPECT_EQ(directOf("  float s = x[+];\n  for (int i = 0; i < (int)s; i++)\n"
                     "    *(Y + r) = x + (float)i;\n"),
            M{});
  // A bitcast of a float reads its NaN's payload, which is the backend's own; of an integer, exact.
  EXPECT_EQ(directOf("  *(Z + r) = bitcast<float>((int)x);\n"
                     "  *(H + r) = bitcast<half>((short)x);\n"
                     "  *(Y + r) = bitcast<float>(bitcast<int>(x + x));\n"),
            (M{{"H", 0}, {"Z", 0}}));
  EXPECT_EQ(directOf("  *(Y + r) = cos(x);\n  atomic_add(Y + r, x);\n"), M{});
  // An integer `@` sums exactly in any order; a float one in the backend's order.
  const std::string tiles =
      "  int q[16] = 0 ... 16;\n  float *pY[16, 16] = Y + q[:, newaxis] * 16 + "
      "q[newaxis, :];\n  float u[16, 16] = *(X + q[:, newaxis] * 16 + q[newaxis, :]);\n";
  EXPECT_EQ(directOf(tiles + "  int8 a[16, 16] = (int8)u;\n  *pY = exp((float)(a @ a));\n"),
            (M{{"Y", 3}}));
  EXPECT_EQ(directOf(tiles + "  half a[16, 16] = (half)u;\n  *pY = exp(a @ a);\n"), M{});
  // Each buffer on its own: Y a function's, Z exact, H not bounded.
  EXPECT_EQ(directOf("  *(Y + r) = rsqrt(x);\n  *(Z + r) = x + 1.0f;\n"
                     "  *(H + r) = (half)(x + sin(x));\n"),
            (M{{"Y", 3}, {"Z", 0}}));
}

// docs/gpu-numerics.md: a bf16 `exp` may be 1 bf16 ULP off on the GPU. Converted to half
// (exactly), one bf16 ULP is 8 half ULPs, so "(half)exp(bf16)" is not a bounded output of
// 2 half ULPs: a GPU within its documented bound must pass the comparison.
TEST(FuzzGpuOracle, ABf16FunctionConvertedToHalfIsNotBoundedInHalfUlps) {
  FuzzKernel k;
  k.source = "__global__ void f(bf16 *X, half *Y) {\n  int r[4] = 0 ... 4;\n"
             "  *(Y + r) = (half)exp(*(X + r));\n}\n";
  k.kernelName = "f";
  k.buffers.push_back({"X", DType::BF16, {4}, {1, 0.5, 2, -1}, false});
  k.buffers.push_back({"Y", DType::F16, {4}, {0, 0, 0, 0}, true});
  std::map<std::string, HostArray> want;
  std::string error;
  ASSERT_TRUE(interpReference(k, 20, want, error)) << error;
  ASSERT_EQ(want.at("Y").getDouble(0), 2.71875); // exp(1) rounded to bf16 (0x402e)
  std::map<std::string, HostArray> got = want;
  got.at("Y").setDouble(0, 2.734375); // the next bf16 up (0x402f): 1 bf16 ULP, 8 half ULPs
  CompileOutcome c = compileFuzzKernel(k);
  ASSERT_TRUE(c.ok()) << c.diagnostics;
  const ir::Function &fn = c.kernel->function();
  BoundedOutputs direct = boundedOutputs(fn);
  EXPECT_EQ(compareWithReference(k, want, got, conf::gpuExtraUlps(fn), dotToleranceScale(fn),
                                 mathRelativeTolerance(fn), &direct),
            "");
  // half's own function (and half -> bf16, which only drops bits) keep their bound.
  EXPECT_EQ(directOf("  half h[8] = (half)x;\n  *(H + r) = exp(h);\n"), (BoundedOutputs{{"H", 2}}));
}

// The planted exp2-range-bound: 2^-127 flushed to 0 passes the math tolerance's absolute part
// and fails a bounded output's ULP comparison; a one-ULP error fails an exact output's.
TEST(FuzzGpuOracle, BoundedOutputsSeeAFlushedSubnormal) {
  FuzzKernel k = twoBuffers(false);
  std::map<std::string, HostArray> want = makeBuffers(k), got = makeBuffers(k);
  want.at("Y").setDouble(1, std::ldexp(1.0, -127));
  double tol = 4.0 * 3 * std::ldexp(1.0, -23); // mathRelativeTolerance of an f32 exp2
  EXPECT_EQ(compareWithReference(k, want, got, 3, 0, tol), "");
  BoundedOutputs direct{{"Y", 3}};
  std::string diff = compareWithReference(k, want, got, 3, 0, tol, &direct);
  EXPECT_NE(diff.find("Y[1]"), std::string::npos) << diff;
  EXPECT_NE(diff.find("a math function's output"), std::string::npos) << diff;
  got.at("Y").setDouble(1, std::ldexp(1.0, -127) + 3 * std::ldexp(1.0, -149)); // 3 ULPs: within
  EXPECT_EQ(compareWithReference(k, want, got, 3, 0, tol, &direct), "");
  got.at("Y").setDouble(1, std::ldexp(1.0, -127) + 4 * std::ldexp(1.0, -149));
  EXPECT_NE(compareWithReference(k, want, got, 3, 0, tol, &direct), "");
  // An exactly computed output: one ULP is a mismatch, which the tolerance passes (a
  // contraction into an fma, a double rounding).
  want.at("Y").setDouble(2, 1000);
  got.at("Y").setDouble(1, std::ldexp(1.0, -127));
  got.at("Y").setDouble(2, std::nextafter(1000.0f, 2000.0f));
  EXPECT_EQ(compareWithReference(k, want, got, 0), "");
  BoundedOutputs exact{{"Y", 0}};
  diff = compareWithReference(k, want, got, 0, 0, 0, &exact);
  EXPECT_NE(diff.find("Y[2]"), std::string::npos) << diff;
  EXPECT_NE(diff.find("an exactly computed output"), std::string::npos) << diff;
  // X is an input, compared bit for bit whatever the map says.
  BoundedOutputs onX{{"X", 3}};
  got.at("X").setDouble(0, std::nextafter(1.0f, 2.0f));
  EXPECT_NE(compareWithReference(k, want, got, 3, 0, tol, &onX), "");
}
