// The auto-tuner (gpu/Autotune.h). Without a GPU: the variant space
// (defines x num_warps x num_stages), the
// tuning key, the winner's cache text, the report, and the whole tuning loop
// on a fake GpuBackend that runs the interpreter and reports timings the test
// chooses. With a GPU (else skipped): a real tune of vector add.
#include "gpu/Autotune.h"
#include "interp/InterpreterBackend.h"
#include "runtime/DiskCache.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

using namespace tc;
using namespace tc::gpu;

namespace {

/// c += a + b, so a buffer that saw k launches holds c0 + k * (a + b).
const char *kAccumulate = "__global__ void add(int N, TYPE *a, TYPE *b, TYPE *c) {\n"
                          "  int off[SIZE] = get_program_id(0) * SIZE + (0 ... SIZE);\n"
                          "  bool m[SIZE] = off < N;\n"
                          "  *?(m)(c + off) = *?(m)(c + off) + *?(m)(a + off) + *?(m)(b + off);\n"
                          "}\n";

DefineSpec spec(const std::string &text) {
  std::string error;
  std::optional<DefineSpec> s = parseDefine(text, error);
  EXPECT_TRUE(s) << text << ": " << error;
  return s.value_or(DefineSpec{});
}

/// A request for the accumulating add; num_stages is fixed to {2} unless
/// given, so the expected texts do not depend on codegen::Options' default.
TuneRequest addRequest(std::vector<std::string> defines, std::vector<unsigned> numWarps,
                       std::vector<unsigned> numStages = {2}) {
  TuneRequest req;
  req.base.sourceName = "add.tc";
  req.base.sourceText = kAccumulate;
  for (const std::string &d : defines)
    req.specs.push_back(spec(d));
  req.numWarps = std::move(numWarps);
  req.numStages = std::move(numStages);
  req.grid = {{"cdiv(N, SIZE)"}};
  req.warmup = 1;
  req.iterations = 3;
  return req;
}

/// N floats a[i] = i, b[i] = 2i, c[i] = 100, bound with N.
struct AddArgs {
  static constexpr int64_t kN = 5000;
  HostArray a = HostArray::zeros(DType::F32, {kN}), b = a, c = a;
  LaunchArgs args;

  AddArgs() {
    for (int64_t i = 0; i < kN; ++i) {
      a.setDouble(i, double(i));
      b.setDouble(i, double(2 * i));
      c.setDouble(i, 100);
    }
    args.setScalar("N", ScalarValue::ofInt(DType::I32, kN));
    args.setBuffer("a", &a);
    args.setBuffer("b", &b);
    args.setBuffer("c", &c);
  }
  AddArgs(const AddArgs &) = delete;

  /// Whether c holds 100 + launches * 3i everywhere.
  ::testing::AssertionResult sawLaunches(int launches) const {
    for (int64_t i = 0; i < kN; ++i) {
      double want = 100 + launches * 3.0 * double(i);
      if (c.getDouble(i) != want)
        return ::testing::AssertionFailure()
               << "c[" << i << "] = " << c.getDouble(i) << ", want " << want;
    }
    return ::testing::AssertionSuccess();
  }
};

/// A fresh, empty cache directory for one test.
std::string freshCacheDir(const std::string &name) {
  auto dir = std::filesystem::path(::testing::TempDir()) / ("autotune-test-" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

std::string defineValue(const CompiledKernel &k, const std::string &name) {
  for (const auto &[n, v] : k.defines())
    if (n == name)
      return v;
  return "";
}

/// A GpuBackend that runs the interpreter. bench() reports a median taken from
/// `timings` ("SIZE/num_warps/num_stages" -> ms), fails where `faults` or
/// `gpuCompileErrors` say so, and records which arrays each call touched and
/// the variant of each launch.
class FakeGpu : public GpuBackend {
public:
  std::map<std::string, double> timings;
  std::set<std::string> faults, gpuCompileErrors;
  std::vector<std::string> benched, launched; // "SIZE/num_warps/num_stages" per call
  std::vector<const HostArray *> benchArrays, launchArrays;
  int launches = 0;

  std::string name() const override { return "fake-gpu"; }
  bool available(std::string *) const override { return true; }
  RunResult launch(const CompiledKernel &k, std::array<int64_t, 3> grid, LaunchArgs &args,
                   const RunOptions &opts) override {
    ++launches;
    launched.push_back(variantId(k));
    for (const auto &[n, array] : args.buffers())
      launchArrays.push_back(array);
    return interp_->launch(k, grid, args, opts);
  }
  RunResult bench(const CompiledKernel &k, std::array<int64_t, 3> grid, LaunchArgs &args,
                  const RunOptions &opts, int warmup, int iterations, BenchResult &out) override {
    std::string id = variantId(k);
    benched.push_back(id);
    for (const auto &[n, array] : args.buffers())
      benchArrays.push_back(array);
    RunResult r = interp_->launch(k, grid, args, opts);
    if (faults.count(id)) {
      r.status = RunResult::Status::Error;
      r.error = "kernel 'add' faulted: an illegal memory access was encountered\n(details)";
    }
    out.medianMs = out.minMs = timings.count(id) ? timings.at(id) : 1.0;
    out.ms.assign(iterations, out.medianMs);
    return r;
  }
  bool prepare(const CompiledKernel &k, std::string &error, CompileInfo *, const LaunchArgs *) override {
    if (!gpuCompileErrors.count(variantId(k)))
      return true;
    error = "ptxas: entry function uses too much shared data\nmore";
    return false;
  }
  void setNumWarps(unsigned w) override { numWarps_ = w; }
  unsigned numWarps() const override { return numWarps_; }
  void setNumStages(unsigned s) override { numStages_ = s; }
  unsigned numStages() const override { return numStages_; }
  std::string deviceDescription() override { return "Fake GPU, sm_90"; }
  void setStream(void *) override {}

private:
  std::string variantId(const CompiledKernel &k) const {
    return defineValue(k, "SIZE") + "/" + std::to_string(numWarps_) + "/" +
           std::to_string(numStages_);
  }

  std::unique_ptr<Backend> interp_ = createInterpreterBackend();
  unsigned numWarps_ = 2, numStages_ = 5;
};

std::vector<std::string> describeAll(const std::vector<TuneVariant> &vs) {
  std::vector<std::string> out;
  for (const TuneVariant &v : vs)
    out.push_back(v.describe());
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// Without a GPU
//===----------------------------------------------------------------------===//

TEST(Autotune, VariantsAreDefinesTimesNumWarps) {
  TuneRequest req = addRequest({"SIZE=[256,512,1024]", "TYPE=float"}, {1, 4});
  std::vector<std::string> want = {
      "SIZE=256 num_warps=1 num_stages=2",  "SIZE=256 num_warps=4 num_stages=2",
      "SIZE=512 num_warps=1 num_stages=2",  "SIZE=512 num_warps=4 num_stages=2",
      "SIZE=1024 num_warps=1 num_stages=2", "SIZE=1024 num_warps=4 num_stages=2"};
  EXPECT_EQ(describeAll(detail::enumerateVariants(req)), want);
}

TEST(Autotune, VariantsAreDefinesTimesWarpsTimesStages) {
  TuneRequest req = addRequest({"SIZE=[256,512]", "TYPE=float"}, {4, 8}, {2, 3, 4});
  std::vector<std::string> want = {
      "SIZE=256 num_warps=4 num_stages=2", "SIZE=256 num_warps=4 num_stages=3",
      "SIZE=256 num_warps=4 num_stages=4", "SIZE=256 num_warps=8 num_stages=2",
      "SIZE=256 num_warps=8 num_stages=3", "SIZE=256 num_warps=8 num_stages=4",
      "SIZE=512 num_warps=4 num_stages=2", "SIZE=512 num_warps=4 num_stages=3",
      "SIZE=512 num_warps=4 num_stages=4", "SIZE=512 num_warps=8 num_stages=2",
      "SIZE=512 num_warps=8 num_stages=3", "SIZE=512 num_warps=8 num_stages=4"};
  EXPECT_EQ(describeAll(detail::enumerateVariants(req)), want);
  std::vector<TuneVariant> space = detail::enumerateVariants(req);
  EXPECT_EQ(space[4].numWarps, 8u);
  EXPECT_EQ(space[4].numStages, 3u);
}

TEST(Autotune, VariantsOfOnlyStages) {
  TuneRequest req = addRequest({"SIZE=256", "TYPE=float"}, {4}, {1, 3});
  std::vector<std::string> want = {"num_warps=4 num_stages=1", "num_warps=4 num_stages=3"};
  EXPECT_EQ(describeAll(detail::enumerateVariants(req)), want);
  EXPECT_TRUE(detail::enumerateVariants(addRequest({"SIZE=[1,2]"}, {4}, {})).empty());
}

TEST(Autotune, DefaultStagesAreTheCodegenDefault) {
  unsigned def = codegen::Options{}.numStages;
  EXPECT_EQ(TuneRequest{}.numStages, std::vector<unsigned>{def});
  EXPECT_EQ(TuneVariant{}.numStages, def);
  EXPECT_EQ(TuneVariant{}.describe(), "num_warps=4 num_stages=" + std::to_string(def));
}

TEST(Autotune, VariantsOfTwoListsFirstSlowest) {
  TuneRequest req = addRequest({"TM=[32, 64]", "TYPE=half", "TN=[16]"}, {8});
  std::vector<std::string> want = {"TM=32 TN=16 num_warps=8 num_stages=2",
                                   "TM=64 TN=16 num_warps=8 num_stages=2"};
  EXPECT_EQ(describeAll(detail::enumerateVariants(req)), want);
}

TEST(Autotune, VariantsWithoutLists) {
  TuneRequest req = addRequest({"SIZE=256", "TYPE=float"}, {2, 4, 8});
  std::vector<std::string> want = {"num_warps=2 num_stages=2", "num_warps=4 num_stages=2",
                                   "num_warps=8 num_stages=2"};
  EXPECT_EQ(describeAll(detail::enumerateVariants(req)), want);
  EXPECT_TRUE(detail::enumerateVariants(addRequest({"SIZE=[1,2]"}, {})).empty());
}

TEST(Autotune, CompileDefinesMergeBaseAndSpecs) {
  TuneRequest req = addRequest({"TYPE=float", "SIZE=[256,512]", "DEBUG"}, {4});
  req.base.defines = {{"TYPE", "half"}, {"EXTRA", "3"}};
  TuneVariant v = detail::enumerateVariants(req)[1];
  DefineList want = {{"TYPE", "float"}, {"EXTRA", "3"}, {"SIZE", "512"}, {"DEBUG", "1"}};
  EXPECT_EQ(detail::compileDefines(req, v), want);
}

TEST(Autotune, KeyDependsOnScalarsNotBufferContents) {
  TuneRequest req = addRequest({"SIZE=[256,512]", "TYPE=float"}, {1, 4});
  AddArgs args;
  std::string key = detail::tuneKey(req, args.args, "dev");
  // The whole key (what the disk cache stores and compares), not its hash.
  EXPECT_EQ(key, DiskCache::fullKey({"autotune-v2", key.substr(key.find("{"))})) << key;
  EXPECT_NE(key.find("\"device\":\"dev\""), std::string::npos) << key;
  EXPECT_NE(key.find("get_program_id(0) * SIZE"), std::string::npos) << key;
  EXPECT_EQ(detail::tuneKey(req, args.args, "dev"), key);

  args.c.setDouble(7, -3); // contents only
  args.a.setDouble(0, 42);
  EXPECT_EQ(detail::tuneKey(req, args.args, "dev"), key);

  args.args.setScalar("N", ScalarValue::ofInt(DType::I32, 4999));
  EXPECT_NE(detail::tuneKey(req, args.args, "dev"), key);
  args.args.setScalar("N", ScalarValue::ofInt(DType::I64, 5000)); // same value, other dtype
  EXPECT_NE(detail::tuneKey(req, args.args, "dev"), key);
  args.args.setScalar("N", ScalarValue::ofInt(DType::I32, AddArgs::kN));
  EXPECT_EQ(detail::tuneKey(req, args.args, "dev"), key);
}

TEST(Autotune, KeyDependsOnArgumentClasses) {
  // A pointer's 16-byte alignment (its class, runtime/Specialize.h) and whether
  // the backend specialises are part of the key: a winner timed on specialised
  // code is not taken for a launch that runs other code.
  TuneRequest req = addRequest({"SIZE=[256,512]", "TYPE=float"}, {1, 4});
  AddArgs args;
  std::string key = detail::tuneKey(req, args.args, "dev");
  EXPECT_EQ(detail::tuneKey(req, args.args, "dev", true), key);
  EXPECT_NE(detail::tuneKey(req, args.args, "dev", false), key);
  args.a.origin = 4; // a view one float in: no longer 16-byte aligned
  std::string offset = detail::tuneKey(req, args.args, "dev");
  EXPECT_NE(offset, key);
  args.a.origin = 16; // aligned again: the class is what counts
  EXPECT_EQ(detail::tuneKey(req, args.args, "dev"), key);
}

TEST(Autotune, KeyDependsOnShapesDeviceAndSpace) {
  TuneRequest req = addRequest({"SIZE=[256,512]", "TYPE=float"}, {1, 4});
  AddArgs args;
  std::string key = detail::tuneKey(req, args.args, "dev");
  EXPECT_NE(detail::tuneKey(req, args.args, "other dev"), key);

  HostArray longer = HostArray::zeros(DType::F32, {AddArgs::kN + 1});
  args.args.setBuffer("c", &longer);
  EXPECT_NE(detail::tuneKey(req, args.args, "dev"), key);
  HostArray halfC = HostArray::zeros(DType::F16, {AddArgs::kN});
  args.args.setBuffer("c", &halfC);
  EXPECT_NE(detail::tuneKey(req, args.args, "dev"), key);
  args.args.setBuffer("c", &args.c);
  EXPECT_EQ(detail::tuneKey(req, args.args, "dev"), key);

  TuneRequest other = req;
  other.numWarps = {1, 4, 8};
  EXPECT_NE(detail::tuneKey(other, args.args, "dev"), key);
  other = req;
  other.numStages = {2, 3};
  EXPECT_NE(detail::tuneKey(other, args.args, "dev"), key);
  other.numStages = {3};
  EXPECT_NE(detail::tuneKey(other, args.args, "dev"), key);
  other.numStages = {2};
  EXPECT_EQ(detail::tuneKey(other, args.args, "dev"), key);
  other = req;
  other.specs[0] = spec("SIZE=[256,1024]");
  EXPECT_NE(detail::tuneKey(other, args.args, "dev"), key);
  other = req;
  other.base.sourceText += "\n";
  EXPECT_NE(detail::tuneKey(other, args.args, "dev"), key);
}

TEST(Autotune, WinnerTextRoundTrip) {
  TuneVariant v;
  v.defines = {{"TM", "64"}, {"EXPR", "(a, b) = \"x\" [1]"}, {"EMPTY", ""}};
  v.numWarps = 8;
  v.numStages = 7;
  std::optional<TuneVariant> back = detail::parseVariant(detail::serializeVariant(v));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->defines, v.defines);
  EXPECT_EQ(back->numWarps, 8u);
  EXPECT_EQ(back->numStages, 7u);

  TuneVariant none;
  none.numStages = 1;
  back = detail::parseVariant(detail::serializeVariant(none));
  ASSERT_TRUE(back);
  EXPECT_TRUE(back->defines.empty());
  EXPECT_EQ(back->numWarps, 4u);
  EXPECT_EQ(back->numStages, 1u);

  back = detail::parseVariant(R"({"defines": [["TM", "32"]], "num_warps": 2, "num_stages": 4})");
  ASSERT_TRUE(back);
  EXPECT_EQ(back->describe(), "TM=32 num_warps=2 num_stages=4");
}

TEST(Autotune, WinnerTextWithoutStagesIsAMiss) {
  // What the tuner stored before num_stages was tuned: not guessed, tuned again.
  EXPECT_FALSE(detail::parseVariant(R"({"defines": [["TM", "64"]], "num_warps": 4})"));
  EXPECT_FALSE(detail::parseVariant(R"({"defines": [], "num_warps": 4, "num_stages": -2})"));
  EXPECT_FALSE(detail::parseVariant(R"({"defines": [], "num_warps": 4, "num_stages": "3"})"));
  EXPECT_FALSE(detail::parseVariant(R"({"defines": [], "num_warps": 4, "num_stages": null})"));
}

TEST(Autotune, MalformedWinnerTextIsAMiss) {
  for (const char *text : {"", "not json", "{}", "[]", R"({"defines": [], "num_warps": -1})",
                           R"({"defines": [["TM"]], "num_warps": 4})",
                           R"({"defines": [["TM", 64]], "num_warps": 4})",
                           R"({"defines": {}, "num_warps": 4})", R"({"defines": []})",
                           R"({"defines": [], "num_warps": 4)"})
    EXPECT_FALSE(detail::parseVariant(text)) << text;
}

TEST(Autotune, ReportTable) {
  TuneOutcome o;
  TuneVariant v1{{{"SIZE", "256"}}, 1, 3}, v4{{{"SIZE", "256"}}, 4, 3},
      bad{{{"SIZE", "bogus"}}, 1, 2};
  o.rows = {{v1, 0.5, "", false}, {v4, 0.25, "", true}, {bad, -1, "compile error: boom", false}};
  o.best = v4;
  // The variant column is as wide as the longest variant (35 characters).
  EXPECT_EQ(Autotuner::report(o),
            "variant                             | median ms | note\n"
            "SIZE=256 num_warps=1 num_stages=3   |    0.5000 |\n"
            "SIZE=256 num_warps=4 num_stages=3   |    0.2500 | winner\n"
            "SIZE=bogus num_warps=1 num_stages=2 |         - | compile error: boom\n");
}

TEST(Autotune, ReportErrorAndCache) {
  TuneOutcome o;
  o.rows = {{TuneVariant{{}, 2, 1}, -1, "fault: x", false}};
  o.error = "no variant could run";
  EXPECT_EQ(Autotuner::report(o), "variant                  | median ms | note\n"
                                  "num_warps=2 num_stages=1 |         - | fault: x\n"
                                  "autotune: no variant could run\n");
  TuneOutcome cached;
  cached.fromCache = true;
  cached.best = TuneVariant{{{"TM", "64"}, {"TN", "32"}}, 8, 4};
  EXPECT_EQ(Autotuner::report(cached),
            "autotune: cached winner TM=64 TN=32 num_warps=8 num_stages=4\n");
}

//===----------------------------------------------------------------------===//
// The tuning loop on the fake GPU
//===----------------------------------------------------------------------===//

TEST(Autotune, FakeGpuPicksFastestAndLaunchesOnce) {
  FakeGpu gpu;
  gpu.timings = {{"256/1/2", 0.9}, {"256/4/2", 0.4},   {"512/1/2", 0.1},
                 {"512/4/2", 0.3}, {"1024/1/2", 0.2}, {"1024/4/2", 0.25}};
  gpu.faults = {"512/1/2"};           // the fastest one faults: skipped
  gpu.gpuCompileErrors = {"1024/1/2"}; // the next one does not compile for the GPU
  std::string dir = freshCacheDir("fake");
  Autotuner tuner(gpu, dir);
  TuneRequest req = addRequest({"SIZE=[256,512,bogus,1024]", "TYPE=float"}, {1, 4});
  AddArgs args;
  RunResult result;
  TuneOutcome o = tuner.run(req, args.args, {}, result);

  ASSERT_TRUE(o.error.empty()) << o.error;
  EXPECT_FALSE(o.fromCache);
  EXPECT_EQ(o.best.describe(), "SIZE=1024 num_warps=4 num_stages=2");
  EXPECT_EQ(result.status, RunResult::Status::Ok) << result.error;
  EXPECT_TRUE(args.sawLaunches(1));
  EXPECT_EQ(gpu.launches, 1);
  EXPECT_EQ(gpu.launched, std::vector<std::string>{"1024/4/2"});
  EXPECT_EQ(gpu.numWarps(), 2u) << "num_warps not restored";
  EXPECT_EQ(gpu.numStages(), 5u) << "num_stages not restored";
  for (const HostArray *a : gpu.benchArrays)
    EXPECT_TRUE(a != &args.a && a != &args.b && a != &args.c) << "bench used a user buffer";
  std::set<const HostArray *> launched(gpu.launchArrays.begin(), gpu.launchArrays.end());
  EXPECT_EQ(launched, (std::set<const HostArray *>{&args.a, &args.b, &args.c}));

  ASSERT_EQ(o.rows.size(), 8u);
  std::vector<std::string> notes, winners;
  for (const TuneRow &row : o.rows) {
    notes.push_back(row.note.substr(0, row.note.find(':')));
    if (row.winner)
      winners.push_back(row.variant.describe());
  }
  std::vector<std::string> wantNotes = {"",      "",      "fault",         "",
                                        "compile error", "compile error", "GPU compile error", ""};
  EXPECT_EQ(notes, wantNotes);
  EXPECT_EQ(winners, std::vector<std::string>{"SIZE=1024 num_warps=4 num_stages=2"});
  EXPECT_EQ(o.rows[2].note, "fault: kernel 'add' faulted: an illegal memory access was encountered");
  EXPECT_EQ(o.rows[6].note, "GPU compile error: ptxas: entry function uses too much shared data");
  EXPECT_NE(o.rows[4].note.find("error"), std::string::npos) << o.rows[4].note;
  EXPECT_EQ(o.rows[7].medianMs, 0.25);
  EXPECT_NE(Autotuner::report(o).find("SIZE=1024 num_warps=4 num_stages=2  |    0.2500 | winner\n"),
            std::string::npos)
      << Autotuner::report(o);
}

TEST(Autotune, FakeGpuSecondRunComesFromCache) {
  FakeGpu gpu;
  gpu.timings = {{"256/1/2", 0.3}, {"256/4/2", 0.2}, {"512/1/2", 0.5}, {"512/4/2", 0.4}};
  std::string dir = freshCacheDir("cache");
  TuneRequest req = addRequest({"SIZE=[256,512]", "TYPE=float"}, {1, 4});
  AddArgs args;
  RunResult result;
  Autotuner tuner(gpu, dir);
  TuneOutcome first = tuner.run(req, args.args, {}, result);
  ASSERT_TRUE(first.error.empty()) << first.error;
  EXPECT_EQ(first.best.describe(), "SIZE=256 num_warps=4 num_stages=2");
  EXPECT_EQ(gpu.benched.size(), 4u);

  TuneOutcome second = tuner.run(req, args.args, {}, result); // memory
  EXPECT_TRUE(second.fromCache);
  EXPECT_TRUE(second.rows.empty());
  EXPECT_EQ(second.best.describe(), "SIZE=256 num_warps=4 num_stages=2");
  EXPECT_EQ(Autotuner::report(second),
            "autotune: cached winner SIZE=256 num_warps=4 num_stages=2\n");

  Autotuner fresh(gpu, dir); // disk
  TuneOutcome third = fresh.run(req, args.args, {}, result);
  EXPECT_TRUE(third.fromCache);
  EXPECT_EQ(third.best.describe(), "SIZE=256 num_warps=4 num_stages=2");
  EXPECT_EQ(gpu.benched.size(), 4u) << "a cached key was timed again";
  EXPECT_EQ(result.status, RunResult::Status::Ok);
  EXPECT_TRUE(args.sawLaunches(3));
  EXPECT_EQ(gpu.launches, 3);

  args.args.setScalar("N", ScalarValue::ofInt(DType::I32, 4096)); // another key
  TuneOutcome fourth = fresh.run(req, args.args, {}, result);
  EXPECT_FALSE(fourth.fromCache);
  EXPECT_EQ(gpu.benched.size(), 8u);
}

/// The entry files of an autotune cache directory.
std::vector<std::filesystem::path> cacheEntries(const std::string &dir) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator(dir + "/autotune", ec))
    if (e.path().extension() == ".bin")
      out.push_back(e.path());
  return out;
}

TEST(Autotune, FakeGpuDiskEntryHoldsTheWholeKeyAndAnotherKeyIsNotUsed) {
  FakeGpu gpu;
  gpu.timings = {{"256/1/2", 0.3}, {"256/4/2", 0.2}, {"512/1/2", 0.5}, {"512/4/2", 0.4}};
  std::string dir = freshCacheDir("wholekey");
  TuneRequest req = addRequest({"SIZE=[256,512]", "TYPE=float"}, {1, 4});
  AddArgs args;
  RunResult result;
  {
    Autotuner tuner(gpu, dir);
    ASSERT_TRUE(tuner.run(req, args.args, {}, result).error.empty());
  }
  EXPECT_EQ(gpu.benched.size(), 4u);
  std::vector<std::filesystem::path> entries = cacheEntries(dir);
  ASSERT_EQ(entries.size(), 1u);
  std::string text;
  {
    std::ifstream in(entries[0], std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // The entry stores the key itself (source, device, ...), not only a hash
  // of it: the header line, then the key (its length in the header), then the blob.
  std::istringstream header(text.substr(0, text.find('\n')));
  std::string magic, version;
  size_t keyBytes = 0;
  ASSERT_TRUE(header >> magic >> version >> keyBytes) << text;
  std::string stored = text.substr(text.find('\n') + 1, keyBytes);
  EXPECT_EQ(stored, detail::tuneKey(req, args.args, gpu.deviceDescription(), gpu.specializes()));
  size_t device = stored.find(gpu.deviceDescription());
  ASSERT_NE(device, std::string::npos) << stored;
  ASSERT_NE(stored.find("get_program_id(0) * SIZE"), std::string::npos) << stored;

  // The same file (name, lengths, blob and checksum unchanged) stored for
  // another device, as a hash collision would look: it is not used.
  text[text.find('\n') + 1 + device] = 'C'; // "Cake GPU, sm_90"
  {
    std::ofstream out(entries[0], std::ios::binary | std::ios::trunc);
    out << text;
  }
  Autotuner fresh(gpu, dir);
  TuneOutcome again = fresh.run(req, args.args, {}, result);
  ASSERT_TRUE(again.error.empty()) << again.error;
  EXPECT_FALSE(again.fromCache);
  EXPECT_EQ(gpu.benched.size(), 8u) << "an entry stored for another key was used";
  EXPECT_EQ(again.best.describe(), "SIZE=256 num_warps=4 num_stages=2");
}

TEST(Autotune, FakeGpuNothingRuns) {
  FakeGpu gpu;
  gpu.faults = {"256/4/2"};
  Autotuner tuner(gpu, freshCacheDir("none"));
  TuneRequest req = addRequest({"SIZE=[256,bogus]", "TYPE=float"}, {4, 3});
  AddArgs args;
  RunResult result;
  TuneOutcome o = tuner.run(req, args.args, {}, result);
  EXPECT_NE(o.error.find("no variant could run"), std::string::npos) << o.error;
  EXPECT_EQ(result.status, RunResult::Status::Error);
  EXPECT_NE(result.error.find("autotune: no variant could run"), std::string::npos);
  EXPECT_TRUE(args.sawLaunches(0));
  EXPECT_EQ(gpu.launches, 0);
  ASSERT_EQ(o.rows.size(), 4u);
  EXPECT_EQ(o.rows[1].note, "num_warps must be 1, 2, 4, 8, 16 or 32");
}

TEST(Autotune, FakeGpuTunesStages) {
  FakeGpu gpu;
  gpu.timings = {{"256/4/1", 0.5}, {"256/4/2", 0.3}, {"256/4/3", 0.1}, {"256/4/4", 0.2},
                 {"256/8/1", 0.6}, {"256/8/2", 0.4}, {"256/8/3", 0.7}, {"256/8/4", 0.8}};
  gpu.faults = {"256/4/3"}; // the fastest one faults: skipped
  std::string dir = freshCacheDir("stages");
  TuneRequest req = addRequest({"SIZE=256", "TYPE=float"}, {4, 8}, {1, 2, 3, 4});
  AddArgs args;
  RunResult result;
  Autotuner tuner(gpu, dir);
  TuneOutcome o = tuner.run(req, args.args, {}, result);
  ASSERT_TRUE(o.error.empty()) << o.error;
  EXPECT_EQ(o.best.numWarps, 4u);
  EXPECT_EQ(o.best.numStages, 4u);
  std::vector<std::string> wantBenched = {"256/4/1", "256/4/2", "256/4/3", "256/4/4",
                                          "256/8/1", "256/8/2", "256/8/3", "256/8/4"};
  EXPECT_EQ(gpu.benched, wantBenched) << "every stage count compiled with its own value";
  EXPECT_EQ(gpu.launched, std::vector<std::string>{"256/4/4"});
  EXPECT_EQ(gpu.numStages(), 5u) << "num_stages not restored";
  EXPECT_TRUE(args.sawLaunches(1));
  EXPECT_NE(Autotuner::report(o).find("num_warps=4 num_stages=4 |    0.2000 | winner\n"),
            std::string::npos)
      << Autotuner::report(o);

  Autotuner fresh(gpu, dir); // the disk cache keeps the stages of the winner
  TuneOutcome again = fresh.run(req, args.args, {}, result);
  EXPECT_TRUE(again.fromCache);
  EXPECT_EQ(again.best.numStages, 4u);
  EXPECT_EQ(gpu.launched.back(), "256/4/4");
  EXPECT_EQ(gpu.benched.size(), 8u);

  req.numStages = {1, 2}; // another space: the old winner is not in it
  TuneOutcome other = fresh.run(req, args.args, {}, result);
  EXPECT_FALSE(other.fromCache);
  EXPECT_EQ(other.best.describe(), "num_warps=4 num_stages=2");
}

TEST(Autotune, FakeGpuRejectsBadStages) {
  FakeGpu gpu;
  Autotuner tuner(gpu, freshCacheDir("badstages"));
  TuneRequest req = addRequest({"SIZE=256", "TYPE=float"}, {4}, {0, 9, 2});
  AddArgs args;
  RunResult result;
  TuneOutcome o = tuner.run(req, args.args, {}, result);
  ASSERT_TRUE(o.error.empty()) << o.error;
  ASSERT_EQ(o.rows.size(), 3u);
  EXPECT_EQ(o.rows[0].note, "num_stages must be 1 to 8");
  EXPECT_EQ(o.rows[1].note, "num_stages must be 1 to 8");
  EXPECT_EQ(o.best.numStages, 2u);
  EXPECT_EQ(gpu.benched, std::vector<std::string>{"256/4/2"});
}

//===----------------------------------------------------------------------===//
// On a GPU
//===----------------------------------------------------------------------===//

TEST(Autotune, GpuVectorAdd) {
  std::string why;
  if (!cudaAvailable(&why))
    GTEST_SKIP() << "auto-tuning on the GPU not tested: " << why;
  std::unique_ptr<GpuBackend> gpu = createGpuBackend();
  Autotuner tuner(*gpu, freshCacheDir("gpu"));
  TuneRequest req = addRequest({"SIZE=[256,512,1024]", "TYPE=float"}, {1, 4});
  AddArgs args;
  RunResult result;
  TuneOutcome o = tuner.run(req, args.args, {}, result);
  ASSERT_TRUE(o.error.empty()) << o.error << "\n" << Autotuner::report(o);
  EXPECT_FALSE(o.fromCache);
  ASSERT_EQ(o.rows.size(), 6u);
  for (const TuneRow &row : o.rows)
    EXPECT_GE(row.medianMs, 0) << row.variant.describe() << ": " << row.note;
  EXPECT_EQ(result.status, RunResult::Status::Ok) << result.error;
  EXPECT_TRUE(args.sawLaunches(1));
  std::cout << Autotuner::report(o);

  TuneOutcome again = tuner.run(req, args.args, {}, result);
  EXPECT_TRUE(again.fromCache);
  EXPECT_EQ(again.best.describe(), o.best.describe());
  EXPECT_EQ(result.status, RunResult::Status::Ok) << result.error;
  EXPECT_TRUE(args.sawLaunches(2));
}
