// The runner: verdicts, variants, argument checks, isolation (crash and
// timeout), skipping, filters and expectations files.
#include "conformance/Runner.h"
#include "interp/InterpreterBackend.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <iostream>
#include <thread>
#include <unistd.h>

using namespace tc;
using namespace tc::conf;

namespace {

// A backend that dies in launch(), after a line on stderr.
class CrashBackend : public Backend {
public:
  std::string name() const override { return "test-crash"; }
  bool available(std::string *) const override { return true; }
  RunResult launch(const CompiledKernel &, std::array<int64_t, 3>, LaunchArgs &,
                   const RunOptions &) override {
    std::cerr << "about to crash" << std::endl;
    std::abort();
  }
};

// A backend whose launch() never returns.
class HangBackend : public Backend {
public:
  std::string name() const override { return "test-hang"; }
  bool available(std::string *) const override { return true; }
  RunResult launch(const CompiledKernel &, std::array<int64_t, 3>, LaunchArgs &,
                   const RunOptions &) override {
    for (;;)
      pause();
  }
};

// A backend that is never available.
class AbsentBackend : public Backend {
public:
  std::string name() const override { return "test-absent"; }
  bool available(std::string *why) const override {
    *why = "no such device";
    return false;
  }
  RunResult launch(const CompiledKernel &, std::array<int64_t, 3>, LaunchArgs &,
                   const RunOptions &) override {
    return {};
  }
};

// The interpreter under another name that does not report traps.
class NoTrapBackend : public Backend {
public:
  std::string name() const override { return "test-notrap"; }
  bool available(std::string *) const override { return true; }
  RunResult launch(const CompiledKernel &k, std::array<int64_t, 3> g, LaunchArgs &a,
                   const RunOptions &o) override {
    return createInterpreterBackend()->launch(k, g, a, o);
  }
};

// Where BatchBackend logs "<kernel> <pid>" lines (set before running; the
// forked workers inherit it).
std::string gBatchLog;

// The interpreter, writing "ran <kernel>" on stderr and logging which process
// ran each kernel. Kernels named for what they do: `boom` aborts, `hang`
// never returns, `quit` exits with status 3, `fault` fails like a GPU fault,
// `slow` sleeps 0.4 s first; each of them writes "<name> output" first.
class BatchBackend : public Backend {
public:
  std::string name() const override { return "test-batch"; }
  bool available(std::string *) const override { return true; }
  RunResult launch(const CompiledKernel &k, std::array<int64_t, 3> g, LaunchArgs &a,
                   const RunOptions &o) override {
    const std::string &kernel = k.name();
    if (!gBatchLog.empty())
      if (FILE *f = std::fopen(gBatchLog.c_str(), "a")) {
        std::fprintf(f, "%s %d\n", kernel.c_str(), static_cast<int>(getpid()));
        std::fclose(f);
      }
    bool special = kernel == "boom" || kernel == "hang" || kernel == "quit" ||
                   kernel == "fault" || kernel == "slow";
    std::cerr << (special ? kernel + " output" : "ran " + kernel) << std::endl;
    if (kernel == "boom")
      std::abort();
    if (kernel == "quit")
      _exit(3);
    while (kernel == "hang")
      pause();
    if (kernel == "fault") {
      RunResult r;
      r.status = RunResult::Status::Error;
      r.error = "an illegal address (the process cannot use the device any more)";
      return r;
    }
    if (kernel == "slow")
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
    return createInterpreterBackend()->launch(k, g, a, o);
  }
};

void registerTestBackends() {
  static bool done = false;
  if (done)
    return;
  done = true;
  registerBackend("test-crash", [] { return std::make_unique<CrashBackend>(); }, true);
  registerBackend("test-hang", [] { return std::make_unique<HangBackend>(); }, true);
  registerBackend("test-absent", [] { return std::make_unique<AbsentBackend>(); }, true);
  registerBackend("test-notrap", [] { return std::make_unique<NoTrapBackend>(); }, false);
  registerBackend("test-batch", [] { return std::make_unique<BatchBackend>(); }, true);
}

// y[i] = x[i] + 1 for i < 4.
const char *kPlusOne = R"("source": "__global__ void k(int *x, int *y) {\n  int i[4] = 0 ... 4;\n  *(y + i) = *(x + i) + 1;\n}\n",
  "grid": [1],
  "args": [{"name": "x", "dtype": "int32", "shape": [4], "data": [1, 2, 3, 4]},
           {"name": "y", "dtype": "int32", "shape": [4], "fill": 0}])";

std::string caseText(const std::string &name, const std::string &expect,
                     const std::string &extra = "", const std::string &body = kPlusOne) {
  return R"({"name": ")" + name + R"(", )" + body + R"(, "expect": )" + expect + extra + "}";
}

LoadResult suiteOf(const std::string &suite, const std::vector<std::string> &cases) {
  std::string all;
  for (const std::string &c : cases)
    all += (all.empty() ? "" : ", ") + c;
  LoadResult r = loadSuiteText(
      R"({"format": "triton-conformance/1", "suite": ")" + suite + R"(", "cases": [)" + all + "]}",
      suite + ".json", ".");
  EXPECT_TRUE(r.ok()) << (r.errors.empty() ? "" : r.errors[0]);
  return r;
}

const std::string kGood = R"({"outputs": {"y": {"data": [2, 3, 4, 5]}}})";
const std::string kWrong = R"({"outputs": {"y": {"data": [2, 3, 9, 5]}}})";

CaseRecord runOne(const std::string &caseJson) {
  LoadResult r = suiteOf("s", {caseJson});
  auto backend = createInterpreterBackend();
  return runCase(*r.suite, r.suite->cases.at(0), *backend, {});
}

RunnerOptions inProcess(const std::string &backend = "interp") {
  RunnerOptions o;
  o.backend = backend;
  o.isolate = false;
  return o;
}

} // namespace

TEST(ConformanceRunner, StatusNames) {
  const char *names[] = {"pass", "fail", "error", "crash", "timeout", "skipped", "xfail", "xpass"};
  for (int i = 0; i < kNumStatuses; ++i) {
    EXPECT_EQ(statusName(kAllStatuses[i]), names[i]);
    EXPECT_EQ(parseStatus(names[i]), kAllStatuses[i]);
  }
  EXPECT_EQ(parseStatus("passed"), std::nullopt);
  EXPECT_TRUE(isFailure(Status::Timeout));
  EXPECT_FALSE(isFailure(Status::XFail));
  EXPECT_FALSE(isFailure(Status::XPass));
}

TEST(ConformanceRunner, PassAndFirstMismatch) {
  CaseRecord ok = runOne(caseText("c", kGood));
  EXPECT_EQ(ok.status, Status::Pass) << ok.error;
  EXPECT_EQ(ok.variants, 1);
  EXPECT_TRUE(ok.source.empty());
  CaseRecord bad = runOne(caseText("c", kWrong));
  EXPECT_EQ(bad.status, Status::Fail);
  ASSERT_TRUE(bad.mismatch);
  EXPECT_EQ(bad.mismatch->output, "y");
  EXPECT_EQ(bad.mismatch->index, 2);
  EXPECT_EQ(bad.mismatch->got, "4");
  EXPECT_EQ(bad.mismatch->want, "9");
  EXPECT_EQ(bad.mismatch->count, 1);
  EXPECT_EQ(bad.error, "output 'y' differs at index 2 (1 of 4 elements; compare exact)");
  EXPECT_FALSE(bad.source.empty());
  EXPECT_EQ(bad.reproduce, "triton-interp --launch s.json --case c");
}

// The interpreter, remembering the num_warps each launch asked for.
class WarpsBackend : public Backend {
public:
  std::vector<std::optional<unsigned>> seen;
  std::string name() const override { return "test-warps"; }
  bool available(std::string *) const override { return true; }
  RunResult launch(const CompiledKernel &k, std::array<int64_t, 3> g, LaunchArgs &a,
                   const RunOptions &o) override {
    seen.push_back(o.numWarps);
    return createInterpreterBackend()->launch(k, g, a, o);
  }
};

TEST(ConformanceRunner, ACaseNumWarpsReachesTheBackend) {
  // A case's num_warps is the launch's (every variant), unless the run set one.
  LoadResult r =
      suiteOf("s", {caseText("eight", kGood, R"(, "num_warps": 8)"), caseText("none", kGood)});
  WarpsBackend b;
  EXPECT_EQ(runCase(*r.suite, r.suite->cases.at(0), b, {}).status, Status::Pass);
  EXPECT_EQ(runCase(*r.suite, r.suite->cases.at(1), b, {}).status, Status::Pass);
  ASSERT_EQ(b.seen.size(), 2u);
  EXPECT_EQ(b.seen[0], std::optional<unsigned>(8));
  EXPECT_EQ(b.seen[1], std::nullopt);
  RunOptions two;
  two.numWarps = 2;
  runCase(*r.suite, r.suite->cases.at(0), b, two);
  EXPECT_EQ(b.seen.back(), std::optional<unsigned>(2));
  // Not a warp count a GPU takes: a load error naming the field.
  LoadResult bad = loadSuiteText(R"({"format": "triton-conformance/1", "suite": "s", "cases": [)" +
                                     caseText("three", kGood, R"(, "num_warps": 3)") + "]}",
                                 "s.json", ".");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.errors.at(0).find("num_warps: must be 1, 2, 4, 8, 16 or 32, found 3"),
            std::string::npos)
      << bad.errors.at(0);
}

TEST(ConformanceRunner, StrayWriteFails) {
  std::string body = R"("source": "__global__ void k(int *x, int *y) {\n  *y = 1;\n  *(x + 3) = 7;\n}\n",
    "grid": [1],
    "args": [{"name": "x", "dtype": "int32", "shape": [4], "data": [1, 2, 3, 4]},
             {"name": "y", "dtype": "int32", "shape": [1], "fill": 0}])";
  CaseRecord r = runOne(caseText("c", R"({"outputs": {"y": {"data": [1]}}})", "", body));
  EXPECT_EQ(r.status, Status::Fail);
  ASSERT_TRUE(r.mismatch);
  EXPECT_EQ(r.mismatch->output, "x");
  EXPECT_EQ(r.mismatch->index, 3);
  EXPECT_EQ(r.mismatch->got, "7");
  EXPECT_EQ(r.mismatch->want, "4");
  EXPECT_EQ(r.error, "buffer 'x' is not an expected output but changed at index 3 (1 of 4 "
                     "elements)");
}

// On the GPU a kernel that calls a math function may be off by its ULP bound
// (checkOutputs' extraUlps), but under "exact" -0.0 still differs from 0.0
// (conformance/FORMAT.md; docs/gpu-numerics.md section 5: "compared bit for bit
// (including the sign of zero)"): a ULP bound excuses rounding, not a sign.
TEST(ConformanceRunner, ExtraUlpsDoNotExcuseTheSignOfZero) {
  // y = -x * exp(0): -0.0, 1, 2, 3 (unary minus flips the sign of zero: docs/semantics.md).
  std::string body =
      R"("source": "__global__ void k(float *x, float *y) {\n  int i[4] = 0 ... 4;\n  float v[4] = *(x + i);\n  *(y + i) = -v * exp(v - v);\n}\n",
    "grid": [1],
    "args": [{"name": "x", "dtype": "float32", "shape": [4], "data": [0, -1, -2, -3]},
             {"name": "y", "dtype": "float32", "shape": [4], "fill": 0}])";
  LoadResult r = suiteOf(
      "s", {caseText("c", R"({"outputs": {"y": {"data": ["-0.0", 1, 2, 3], "compare": "exact"}}})",
                     "", body)});
  const Case &c = r.suite->cases.at(0);
  auto interp = createInterpreterBackend();
  EXPECT_EQ(runCase(*r.suite, c, *interp, {}).status, Status::Pass); // the expected values
  std::unique_ptr<BoundArgs> args = bindArgs(c);
  HostArray &y = *args->buffers[1];
  y.setBits(0, 0x80000000); // -0.0
  y.setBits(1, 0x3f800001); // 1 + 2^-23: one ULP above 1
  y.setDouble(2, 2);
  y.setDouble(3, 3);
  EXPECT_EQ(checkOutputs(c, *args, 0).status, Status::Fail);
  EXPECT_EQ(checkOutputs(c, *args, 3).status, Status::Pass); // within the bound
  y.setBits(1, 0x3f800000);
  y.setBits(0, 0x00000000); // +0.0 where -0.0 is expected
  Verdict v = checkOutputs(c, *args, 3);
  EXPECT_EQ(v.status, Status::Fail);
  ASSERT_TRUE(v.mismatch);
  EXPECT_EQ(v.mismatch->index, 0);
  EXPECT_EQ(v.mismatch->count, 1);
  // An explicit {"ulp": N} keeps its rule: -0.0 and 0.0 are 0 apart.
  LoadResult u = suiteOf(
      "s",
      {caseText("c", R"({"outputs": {"y": {"data": ["-0.0", 1, 2, 3], "compare": {"ulp": 1}}}})",
                "", body)});
  EXPECT_EQ(checkOutputs(u.suite->cases.at(0), *args, 3).status, Status::Pass);
}

namespace {

// The interpreter under the name "gpu" (so the runner allows the GPU's math
// ULPs), whose results are then moved: `moves[name][i]` ULPs up.
class NudgedGpuBackend : public Backend {
public:
  explicit NudgedGpuBackend(std::map<std::string, std::map<int64_t, uint64_t>> moves)
      : moves_(std::move(moves)) {}
  std::string name() const override { return "gpu"; }
  bool available(std::string *) const override { return true; }
  RunResult launch(const CompiledKernel &k, std::array<int64_t, 3> grid, LaunchArgs &args,
                   const RunOptions &opts) override {
    RunResult r = createInterpreterBackend()->launch(k, grid, args, opts);
    for (const auto &[name, at] : moves_)
      for (const auto &[i, ulps] : at)
        args.buffer(name)->setBits(i, args.buffer(name)->getBits(i) + ulps);
    return r;
  }

private:
  std::map<std::string, std::map<int64_t, uint64_t>> moves_;
};

// gpuExtraUlpsByBuffer of a case's kernel.
std::map<std::string, uint64_t> extraUlpsOf(const std::string &text) {
  std::string source; // as a JSON string
  for (char ch : text)
    source += ch == '\n' ? std::string("\\n") : std::string(1, ch);
  LoadResult r =
      suiteOf("s", {caseText("c", R"({"implementation_defined": true})", "",
                             R"("source": ")" + source + R"(", "grid": [1], "args": [])")});
  const Case &c = r.suite->cases.at(0);
  CompileOutcome k = compileKernel(c.compileRequest(c.variants().at(0), *r.suite));
  EXPECT_TRUE(k.ok()) << k.diagnostics;
  return k.ok() ? gpuExtraUlpsByBuffer(k.kernel->function()) : std::map<std::string, uint64_t>{};
}

} // namespace

// docs/gpu-numerics.md: the GPU agrees bit for bit except in the math
// functions, so only buffers that such a result reaches may be off by their
// ULP bound. A kernel that calls exp for y and computes z = x + 1 exactly: a
// GPU one ULP off in z fails the case (it passed when every output of a
// kernel with a math function got the bound), one within exp's bound in y
// passes.
TEST(ConformanceRunner, ExtraUlpsOnlyForBuffersAMathResultReaches) {
  std::string body =
      R"("source": "__global__ void k(float *x, float *y, float *z) {\n  int i[4] = 0 ... 4;\n  float v[4] = *(x + i);\n  *(y + i) = exp(v);\n  *(z + i) = v + 1.0f;\n}\n",
    "grid": [1],
    "args": [{"name": "x", "dtype": "float32", "shape": [4], "data": [0, 1, 2, 3]},
             {"name": "y", "dtype": "float32", "shape": [4], "fill": 0},
             {"name": "z", "dtype": "float32", "shape": [4], "fill": 0}])";
  LoadResult r = suiteOf(
      "s",
      {caseText(
          "c",
          R"({"outputs": {"y": {"data": [1, 2.718281828459045, 7.38905609893065, 20.085536923187668], "compare": "exact"},
                                     "z": {"data": [1, 2, 3, 4], "compare": "exact"}}})",
          "", body)});
  const Case &c = r.suite->cases.at(0);
  auto interp = createInterpreterBackend();
  EXPECT_EQ(runCase(*r.suite, c, *interp, {}).status, Status::Pass); // the expected values
  NudgedGpuBackend exact({});
  EXPECT_EQ(runCase(*r.suite, c, exact, {}).status, Status::Pass);
  NudgedGpuBackend yOff({{"y", {{1, 3}}}}); // exp f32: 2 ULPs + 1 for the reference
  EXPECT_EQ(runCase(*r.suite, c, yOff, {}).status, Status::Pass);
  NudgedGpuBackend yTooFar({{"y", {{1, 4}}}});
  EXPECT_EQ(runCase(*r.suite, c, yTooFar, {}).status, Status::Fail);
  NudgedGpuBackend zOff({{"z", {{2, 1}}}});
  CaseRecord rec = runCase(*r.suite, c, zOff, {});
  EXPECT_EQ(rec.status, Status::Fail);
  ASSERT_TRUE(rec.mismatch);
  EXPECT_EQ(rec.mismatch->output, "z");
  EXPECT_EQ(rec.mismatch->index, 2);
  EXPECT_EQ(rec.error.find("or ulp="), std::string::npos) << rec.error;
}

// The buffers a math result reaches: through ops, memory (a store, then a
// load), loop-carried values and atomics; a pointer whose parameter is not
// known counts as every buffer.
TEST(ConformanceRunner, ExtraUlpsByBufferFollowsTheValues) {
  using M = std::map<std::string, uint64_t>;
  EXPECT_EQ(extraUlpsOf("__global__ void k(float *x, float *y) {\n  int i[4] = 0 ... 4;\n"
                        "  *(y + i) = *(x + i) * 2.0f;\n}\n"),
            M{});
  EXPECT_EQ(extraUlpsOf("__global__ void k(float *x, float *y, float *z) {\n"
                        "  int i[4] = 0 ... 4;\n  *(y + i) = exp(*(x + i));\n"
                        "  *(z + i) = *(y + i) + 1.0f;\n}\n"),
            (M{{"y", 3}, {"z", 3}}));
  EXPECT_EQ(extraUlpsOf("__global__ void k(float *x, float *y, float *z, int n) {\n"
                        "  int i[4] = 0 ... 4;\n  float acc[4] = 0.0f;\n"
                        "  float c[4] = 0.0f;\n"
                        "  for (int j = 0; j < n; j++) {\n    *(z + i) = c;\n"
                        "    c = acc;\n    acc = acc + sin(*(x + i));\n  }\n}\n"),
            (M{{"z", 3}}));
  EXPECT_EQ(extraUlpsOf("__global__ void k(float *x, float *y, float *z, int n) {\n"
                        "  int i[4] = 0 ... 4;\n  float *p[4] = y + i;\n"
                        "  for (int j = 0; j < n; j++)\n    p = p + 4;\n"
                        "  *p = log(*(x + i));\n  *(z + i) = *(x + i);\n}\n"),
            (M{{"y", 2}}));
  EXPECT_EQ(extraUlpsOf("__global__ void k(float *x, float *y, float *z, int n) {\n"
                        "  int i[4] = 0 ... 4;\n  float *p[4] = n > 0 ? y + i : z + i;\n"
                        "  *p = log(*(x + i));\n}\n"),
            (M{{"x", 2}, {"y", 2}, {"z", 2}}));
}

TEST(ConformanceRunner, EveryVariantMustPassAndTheFailingOneIsNamed) {
  // SIZE=4 writes y[0..4) (as expected); SIZE=8 also writes y[4..8).
  std::string body = R"("source": "__global__ void k(int *y) {\n  *(y + (0 ... SIZE)) = 1;\n}\n",
    "defines": {"SIZE": [4, 8], "OTHER": 1},
    "grid": [1],
    "args": [{"name": "y", "dtype": "int32", "shape": [8], "fill": 0}])";
  CaseRecord r =
      runOne(caseText("c", R"({"outputs": {"y": {"data": [1, 1, 1, 1, 0, 0, 0, 0]}}})", "", body));
  EXPECT_EQ(r.status, Status::Fail);
  EXPECT_EQ(r.variant, "SIZE=8");
  EXPECT_EQ(r.variants, 2);
  ASSERT_TRUE(r.mismatch);
  EXPECT_EQ(r.mismatch->index, 4);
  EXPECT_EQ(r.mismatch->count, 4);
}

TEST(ConformanceRunner, CompileErrorExpectations) {
  std::string body = R"("source": "__global__ void k(int *y) {\n  *y = zz;\n}\n", "grid": [1],
    "args": [{"name": "y", "dtype": "int32", "shape": [1], "fill": 0}])";
  EXPECT_EQ(runOne(caseText("c", R"({"compile_error": {"message": "undeclared identifier 'zz'", "line": 2}})",
                            "", body))
                .status,
            Status::Pass);
  CaseRecord wrongLine = runOne(
      caseText("c", R"({"compile_error": {"message": "undeclared", "line": 1}})", "", body));
  EXPECT_EQ(wrongLine.status, Status::Fail);
  EXPECT_EQ(wrongLine.error.rfind("expected a compile error containing 'undeclared' on line 1; "
                                  "the compiler said:\n",
                                  0),
            0u);
  CaseRecord wrongText =
      runOne(caseText("c", R"({"compile_error": {"message": "no such thing"}})", "", body));
  EXPECT_EQ(wrongText.status, Status::Fail);
  CaseRecord compiled = runOne(caseText("c", R"({"compile_error": {"message": "x"}})"));
  EXPECT_EQ(compiled.status, Status::Fail);
  EXPECT_EQ(compiled.error, "compiled without errors; expected a compile error containing 'x'");
  CaseRecord unexpected = runOne(caseText("c", R"({"outputs": {"y": {"data": [0]}}})", "", body));
  EXPECT_EQ(unexpected.status, Status::Error);
  EXPECT_EQ(unexpected.error.rfind("compile error:\n", 0), 0u);
}

TEST(ConformanceRunner, TrapExpectations) {
  std::string body = R"("source": "__global__ void k(int *x, int d) {\n  *x = *x / d;\n}\n",
    "grid": [1],
    "args": [{"name": "x", "dtype": "int32", "shape": [1], "data": [6]},
             {"name": "d", "dtype": "int32", "value": 0}])";
  EXPECT_EQ(runOne(caseText("c", R"({"trap": {"kind": "division_by_zero"}})", "", body)).status,
            Status::Pass);
  CaseRecord other = runOne(caseText("c", R"({"trap": {"kind": "out_of_bounds"}})", "", body));
  EXPECT_EQ(other.status, Status::Fail);
  EXPECT_EQ(other.error.rfind("expected trap out_of_bounds; got:\n", 0), 0u) << other.error;
  EXPECT_NE(other.error.find("trap: division_by_zero"), std::string::npos);
  CaseRecord msg = runOne(
      caseText("c", R"({"trap": {"kind": "division_by_zero", "message": "no such words"}})", "", body));
  EXPECT_EQ(msg.status, Status::Fail);
  CaseRecord none = runOne(caseText("c", R"({"trap": {"kind": "division_by_zero"}})"));
  EXPECT_EQ(none.status, Status::Fail);
  EXPECT_EQ(none.error, "ran to completion; expected trap division_by_zero");
  CaseRecord unexpected = runOne(caseText("c", R"({"outputs": {"x": {"data": [6]}}})", "", body));
  EXPECT_EQ(unexpected.status, Status::Error);
  EXPECT_EQ(unexpected.error.rfind("unexpected trap:\n", 0), 0u);
  EXPECT_EQ(runOne(caseText("c", R"({"implementation_defined": true})", "", body)).status,
            Status::Error);
  EXPECT_EQ(runOne(caseText("c", R"({"implementation_defined": true})")).status, Status::Pass);
}

TEST(ConformanceRunner, ArgumentsAreCheckedAgainstParameters) {
  auto trapOf = [](const std::string &args) -> std::string {
    LoadResult r = suiteOf("s", {R"({"name": "c", "source": "__global__ void k(int n, float *p) { *p = n; }",
        "grid": [1], "args": )" + args + R"(, "expect": {"implementation_defined": true}})"});
    CompileOutcome k = compileKernel(r.suite->cases[0].compileRequest(r.suite->cases[0].variants()[0],
                                                                      *r.suite));
    EXPECT_TRUE(k.ok()) << k.diagnostics;
    std::optional<Trap> t = checkArgs(r.suite->cases[0], *k.kernel);
    if (!t)
      return "ok";
    EXPECT_EQ(t->kind, TrapKind::InvalidLaunch);
    return t->message;
  };
  const std::string n = R"({"name": "n", "dtype": "int32", "value": 1})";
  const std::string p = R"({"name": "p", "dtype": "float32", "shape": [1], "fill": 0})";
  EXPECT_EQ(trapOf("[" + n + ", " + p + "]"), "ok");
  EXPECT_EQ(trapOf("[" + n + "]"),
            "kernel 'k' has 2 parameters (n, p), the case gives 1 arguments");
  EXPECT_EQ(trapOf("[" + p + ", " + n + "]"), "argument 0 is 'p' but parameter 0 is 'n'");
  EXPECT_EQ(trapOf(R"([{"name": "n", "dtype": "int32", "shape": [1], "fill": 0}, )" + p + "]"),
            "argument 0 'n' is a buffer but the parameter is int32");
  EXPECT_EQ(trapOf("[" + n + R"(, {"name": "p", "dtype": "float64", "shape": [1], "fill": 0}])"),
            "buffer 'p' is float64 but parameter 'p' is float32*");
}

TEST(ConformanceRunner, IsolatedWorkersSurviveCrashesAndHangs) {
  registerTestBackends();
  LoadResult s = suiteOf("iso", {caseText("a", kGood), caseText("b", kGood)});
  RunnerOptions o;
  o.backend = "test-crash";
  o.jobs = 2;
  std::vector<CaseRecord> crashed = runSuites({s}, o);
  ASSERT_EQ(crashed.size(), 2u);
  for (const CaseRecord &r : crashed) {
    EXPECT_EQ(r.status, Status::Crash);
    EXPECT_NE(r.error.find("signal 6"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("about to crash"), std::string::npos) << r.error;
    EXPECT_FALSE(r.source.empty());
  }
  EXPECT_EQ(crashed[0].name, "a");
  EXPECT_EQ(crashed[1].name, "b");
  o.backend = "test-hang";
  o.timeout = 0.3;
  auto start = std::chrono::steady_clock::now();
  std::vector<CaseRecord> hung = runSuites({s}, o);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(hung.size(), 2u);
  EXPECT_EQ(hung[0].status, Status::Timeout);
  EXPECT_EQ(hung[1].status, Status::Timeout);
  EXPECT_EQ(hung[0].error, "no result after 0.3 s; the worker was killed");
  EXPECT_LT(took, 5.0);
}

TEST(ConformanceRunner, IsolatedResultsMatchInProcessAndKeepOrder) {
  std::vector<std::string> cases;
  for (int i = 0; i < 6; ++i)
    cases.push_back(caseText("c" + std::to_string(i), i % 2 ? kWrong : kGood));
  LoadResult s = suiteOf("order", cases);
  RunnerOptions o;
  o.jobs = 3;
  std::vector<CaseRecord> iso = runSuites({s}, o);
  std::vector<CaseRecord> in = runSuites({s}, inProcess());
  ASSERT_EQ(iso.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(iso[i].name, "c" + std::to_string(i));
    EXPECT_EQ(iso[i].status, i % 2 ? Status::Fail : Status::Pass);
    EXPECT_EQ(iso[i].status, in[i].status);
    EXPECT_EQ(iso[i].error, in[i].error);
    EXPECT_EQ(iso[i].mismatch.has_value(), in[i].mismatch.has_value());
  }
}

TEST(ConformanceRunner, Skipping) {
  registerTestBackends();
  std::string trapBody = R"("source": "__global__ void k(int *x, int d) {\n  *x = *x / d;\n}\n",
    "grid": [1],
    "args": [{"name": "x", "dtype": "int32", "shape": [1], "data": [6]},
             {"name": "d", "dtype": "int32", "value": 0}])";
  std::string launchBody = R"("source": "__global__ void k(int *x) {\n  *x = 1;\n}\n", "grid": [1],
    "args": [{"name": "x", "dtype": "float32", "shape": [1], "data": [6]}])";
  LoadResult s = suiteOf(
      "skip", {caseText("plain", kGood), caseText("gpu_only", kGood, R"(, "backends": ["gpu"])"),
               caseText("trap", R"({"trap": {"kind": "division_by_zero"}})", "", trapBody),
               caseText("launch", R"({"trap": {"kind": "invalid_launch"}})", "", launchBody)});
  std::vector<CaseRecord> r = runSuites({s}, inProcess("test-notrap"));
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[0].status, Status::Pass);
  EXPECT_EQ(r[1].status, Status::Skipped);
  EXPECT_EQ(r[1].reason, "the case runs on gpu only");
  EXPECT_EQ(r[2].status, Status::Skipped);
  EXPECT_EQ(r[2].reason, "the test-notrap backend cannot detect traps");
  EXPECT_EQ(r[3].status, Status::Pass) << r[3].error; // invalid_launch: the runner checks it
  for (const CaseRecord &rec : runSuites({s}, inProcess("test-absent"))) {
    EXPECT_EQ(rec.status, Status::Skipped);
    EXPECT_EQ(rec.reason, "no such device");
  }
  for (const CaseRecord &rec : runSuites({s}, inProcess("gpu"))) {
    EXPECT_EQ(rec.status, Status::Skipped);
    EXPECT_EQ(rec.reason, "the gpu backend is not part of this build");
  }
}

TEST(ConformanceRunner, Filters) {
  LoadResult a = suiteOf("alpha.one", {caseText("add_int", kGood, R"(, "features": ["op.add", "dtype.int32"])"),
                                       caseText("mul_int", kGood, R"(, "features": ["op.mul"])")});
  LoadResult b = suiteOf("beta", {caseText("add_float", kGood, R"(, "features": ["op.add"])")});
  auto names = [&](RunnerOptions o) {
    std::string out;
    for (const CaseRecord &r : runSuites({a, b}, o))
      out += (out.empty() ? "" : " ") + r.name;
    return out;
  };
  RunnerOptions o = inProcess();
  EXPECT_EQ(names(o), "add_int mul_int add_float");
  o.suiteGlobs = {"alpha.*"};
  EXPECT_EQ(names(o), "add_int mul_int");
  o.suiteGlobs = {};
  o.caseGlobs = {"add_*"};
  EXPECT_EQ(names(o), "add_int add_float");
  o.caseGlobs = {"mul_int", "add_float"};
  EXPECT_EQ(names(o), "mul_int add_float");
  o.caseGlobs = {};
  o.featureGlobs = {"dtype.int32"};
  EXPECT_EQ(names(o), "add_int");
  o.featureGlobs = {"op.*"};
  EXPECT_EQ(names(o), "add_int mul_int add_float");
}

TEST(ConformanceRunner, BrokenFilesAndCasesAreErrors) {
  LoadResult broken = loadSuiteText("{", "broken.json", ".");
  LoadResult partial = loadSuiteText(
      R"({"format": "triton-conformance/1", "suite": "p", "cases": [{"name": "x"}]})", "p.json", ".");
  std::vector<CaseRecord> r = runSuites({broken, partial}, inProcess());
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].status, Status::Error);
  EXPECT_EQ(r[0].name, "<load>");
  EXPECT_EQ(r[0].suite, "broken.json");
  EXPECT_NE(r[0].error.find("malformed JSON"), std::string::npos);
  EXPECT_EQ(r[1].status, Status::Error);
  EXPECT_EQ(r[1].suite, "p");
  EXPECT_EQ(r[1].name, "x");
  EXPECT_NE(r[1].error.find("p.json: cases[0]: missing field 'grid'"), std::string::npos);
}

TEST(ConformanceRunner, KnownFailures) {
  KnownFailures known;
  known.entries = {{"s*", "bad", "interp", "issue 12"}, {"s", "good", "", "was flaky"}};
  LoadResult s = suiteOf("s", {caseText("bad", kWrong), caseText("good", kGood),
                               caseText("other", kWrong)});
  RunnerOptions o = inProcess();
  o.known = &known;
  std::vector<CaseRecord> r = runSuites({s}, o);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].status, Status::XFail);
  EXPECT_EQ(r[0].actual, Status::Fail);
  EXPECT_EQ(r[0].reason, "issue 12");
  EXPECT_EQ(r[1].status, Status::XPass);
  EXPECT_EQ(r[1].reason, "was flaky");
  EXPECT_EQ(r[2].status, Status::Fail);
  EXPECT_EQ(known.match("s", "bad", "gpu"), nullptr);
}

TEST(ConformanceRunner, LoadKnownFailures) {
  char path[] = "/tmp/tc-known-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  auto load = [&](const std::string &text, std::string &err) {
    EXPECT_EQ(ftruncate(fd, 0), 0);
    EXPECT_EQ(pwrite(fd, text.data(), text.size(), 0), static_cast<ssize_t>(text.size()));
    return loadKnownFailures(path, err);
  };
  std::string err;
  std::optional<KnownFailures> k =
      load(R"([{"suite": "a", "case": "b", "backend": "gpu", "reason": "r"}])", err);
  ASSERT_TRUE(k) << err;
  EXPECT_EQ(k->entries[0].caseName, "b");
  EXPECT_EQ(k->entries[0].backend, "gpu");
  EXPECT_FALSE(load(R"({"suite": "a"})", err));
  EXPECT_EQ(err, std::string(path) + ": expected a list of {\"suite\", \"case\", \"backend\", "
                                     "\"reason\"}");
  EXPECT_FALSE(load(R"([{"suite": "a", "case": "b", "bug": 1}])", err));
  EXPECT_EQ(err, std::string(path) + ": [0].bug: expected a string");
  EXPECT_FALSE(load(R"([{"suite": "a", "case": "b", "owner": "me"}])", err));
  EXPECT_EQ(err, std::string(path) + ": [0].owner: unknown field 'owner'");
  EXPECT_FALSE(load(R"([{"case": "b"}])", err));
  EXPECT_EQ(err, std::string(path) + ": [0]: needs 'suite' and 'case'");
  EXPECT_FALSE(load("[", err));
  EXPECT_NE(err.find("malformed JSON"), std::string::npos);
  close(fd);
  unlink(path);
}

TEST(ConformanceRunner, ReproduceCommandQuotes) {
  EXPECT_EQ(reproduceCommand("cases/a.json", "x_1"), "triton-interp --launch cases/a.json --case x_1");
  EXPECT_EQ(reproduceCommand("my cases/a.json", "it's"),
            "triton-interp --launch 'my cases/a.json' --case 'it'\\''s'");
  // On the GPU the case reruns on the GPU (triton-run), with the run's flags.
  EXPECT_EQ(reproduceCommand("a.json", "x", "gpu", {"--num-stages", "2", "--disable-opt", "a b"}),
            "triton-run --launch a.json --case x --num-stages 2 --disable-opt 'a b'");
  EXPECT_EQ(reproduceCommand("a.json", "x", "interp"), "triton-interp --launch a.json --case x");
}

namespace {

// A suite "batch" of cases c0, c1, ... running kPlusOne in kernels named
// `kernels[i]` (all expected to pass).
LoadResult batchSuite(const std::vector<std::string> &kernels) {
  std::vector<std::string> cases;
  std::string body(kPlusOne);
  size_t at = body.find("void k(");
  for (size_t i = 0; i < kernels.size(); ++i) {
    std::string b = body;
    b.replace(at, 7, "void " + kernels[i] + "(");
    cases.push_back(caseText("c" + std::to_string(i), kGood, "", b));
  }
  return suiteOf("batch", cases);
}

// Runs the suite on test-batch with one worker at a time; `pids` gets which
// process ran each kernel (from the log).
std::vector<CaseRecord> runBatched(const LoadResult &s, RunnerOptions o,
                                   std::map<std::string, int> &pids) {
  registerTestBackends();
  char path[] = "/tmp/tc-batch-XXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  close(fd);
  gBatchLog = path;
  o.backend = "test-batch";
  o.jobs = 1;
  std::vector<CaseRecord> r = runSuites({s}, o);
  gBatchLog.clear();
  std::ifstream in(path);
  std::string kernel;
  int pid = 0;
  while (in >> kernel >> pid)
    pids[kernel] = pid;
  unlink(path);
  return r;
}

// Every case but `bad` passed, in order.
void expectOthersPass(const std::vector<CaseRecord> &r, size_t n, size_t bad) {
  ASSERT_EQ(r.size(), n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(r[i].name, "c" + std::to_string(i));
    if (i != bad) {
      EXPECT_EQ(r[i].status, Status::Pass) << r[i].name << ": " << r[i].error;
    }
  }
}

} // namespace

TEST(ConformanceRunner, BatchedWorkerCrashBlamesOnlyThatCase) {
  LoadResult s = batchSuite({"k0", "k1", "boom", "k3", "k4", "k5"});
  RunnerOptions o;
  o.batch = 16;
  std::ostringstream progress;
  o.progress = &progress;
  std::map<std::string, int> pids;
  std::vector<CaseRecord> r = runBatched(s, o, pids);
  expectOthersPass(r, 6, 2);
  EXPECT_EQ(r[2].status, Status::Crash);
  EXPECT_EQ(r[2].error.rfind("the worker died of signal 6 (", 0), 0u) << r[2].error;
  EXPECT_NE(r[2].error.find("\nworker stderr:\nboom output\n"), std::string::npos) << r[2].error;
  EXPECT_EQ(r[2].error.find("ran k1"), std::string::npos) << r[2].error; // an earlier case's
  EXPECT_FALSE(r[2].source.empty());
  // c0 to c2 ran in one worker, c3 to c5 (run again) in another.
  ASSERT_EQ(pids.size(), 6u);
  EXPECT_EQ(pids["k0"], pids["k1"]);
  EXPECT_EQ(pids["k0"], pids["boom"]);
  EXPECT_NE(pids["k3"], pids["k0"]);
  EXPECT_EQ(pids["k3"], pids["k4"]);
  EXPECT_EQ(pids["k3"], pids["k5"]);
  std::string p = progress.str();
  EXPECT_NE(p.find("CRASH: batch/c2 [test-batch]: the worker died of signal 6"),
            std::string::npos) << p;
  EXPECT_NE(p.find("[6/6] 1 failed\n"), std::string::npos) << p;
}

TEST(ConformanceRunner, BatchedWorkerTimeoutBlamesOnlyThatCase) {
  LoadResult s = batchSuite({"k0", "k1", "hang", "k3", "k4", "k5"});
  RunnerOptions o;
  o.batch = 6;
  o.timeout = 1;
  std::map<std::string, int> pids;
  std::vector<CaseRecord> r = runBatched(s, o, pids);
  expectOthersPass(r, 6, 2);
  EXPECT_EQ(r[2].status, Status::Timeout);
  EXPECT_EQ(r[2].error, "no result after 1 s; the worker was killed\nworker stderr:\nhang output\n");
  EXPECT_GE(r[2].time, 1.0);
  EXPECT_NE(pids["k3"], pids["k0"]);
  EXPECT_EQ(pids["k1"], pids["k0"]);
}

TEST(ConformanceRunner, BatchedTimeoutIsPerCase) {
  // Three cases of 0.4 s each in one worker: 1.2 s in all, 1 s allowed each.
  LoadResult s = batchSuite({"slow", "slow", "slow"});
  RunnerOptions o;
  o.timeout = 1;
  std::map<std::string, int> pids;
  std::vector<CaseRecord> r = runBatched(s, o, pids);
  expectOthersPass(r, 3, 3);
}

TEST(ConformanceRunner, BatchedWorkerExitingEarlyBlamesOnlyThatCase) {
  LoadResult s = batchSuite({"k0", "k1", "quit", "k3"});
  std::map<std::string, int> pids;
  std::vector<CaseRecord> r = runBatched(s, RunnerOptions{}, pids);
  expectOthersPass(r, 4, 2);
  EXPECT_EQ(r[2].status, Status::Crash);
  EXPECT_EQ(r[2].error,
            "the worker exited with status 3 without a result\nworker stderr:\nquit output\n");
}

TEST(ConformanceRunner, BatchedWorkerStopsAfterABackendError) {
  // A backend error may leave the process unable to use the backend (a GPU
  // fault): the cases after it run in a new worker.
  LoadResult s = batchSuite({"k0", "fault", "k2", "k3"});
  std::map<std::string, int> pids;
  std::vector<CaseRecord> r = runBatched(s, RunnerOptions{}, pids);
  expectOthersPass(r, 4, 1);
  EXPECT_EQ(r[1].status, Status::Error);
  EXPECT_EQ(r[1].error, "test-batch backend error: an illegal address (the process cannot use "
                        "the device any more)");
  EXPECT_EQ(pids["fault"], pids["k0"]);
  EXPECT_NE(pids["k2"], pids["k0"]);
  EXPECT_EQ(pids["k2"], pids["k3"]);
}

TEST(ConformanceRunner, BatchOfOneRunsEachCaseInItsOwnWorker) {
  LoadResult s = batchSuite({"k0", "k1", "boom", "k3"});
  RunnerOptions o;
  o.batch = 1;
  std::map<std::string, int> pids;
  std::vector<CaseRecord> r = runBatched(s, o, pids);
  expectOthersPass(r, 4, 2);
  EXPECT_EQ(r[2].status, Status::Crash);
  EXPECT_EQ(r[2].error, "the worker died of signal 6 (" + std::string(strsignal(SIGABRT)) +
                            ")\nworker stderr:\nboom output\n");
  EXPECT_NE(pids["k0"], pids["k1"]);
  EXPECT_NE(pids["k1"], pids["boom"]);
  EXPECT_NE(pids["boom"], pids["k3"]);
}

TEST(ConformanceRunner, BatchedResultsMatchUnbatched) {
  std::vector<std::string> cases;
  for (int i = 0; i < 10; ++i)
    cases.push_back(caseText("c" + std::to_string(i), i % 3 ? kGood : kWrong));
  LoadResult s = suiteOf("order", cases);
  for (unsigned jobs : {1u, 3u}) {
    RunnerOptions one, many;
    one.batch = 1;
    one.jobs = many.jobs = jobs;
    many.batch = 4;
    std::vector<CaseRecord> a = runSuites({s}, one), b = runSuites({s}, many);
    ASSERT_EQ(a.size(), 10u);
    ASSERT_EQ(b.size(), 10u);
    for (size_t i = 0; i < 10; ++i) {
      EXPECT_EQ(b[i].name, "c" + std::to_string(i));
      EXPECT_EQ(b[i].status, i % 3 ? Status::Pass : Status::Fail);
      EXPECT_EQ(a[i].status, b[i].status);
      EXPECT_EQ(a[i].error, b[i].error);
    }
  }
}
