// Overlapping host arrays of one launch are one memory (runtime/Overlap.h)
// through the C++ host API: two external HostArrays over parts of one
// storage (the slices x[0:128] and x[64:192]) passed to one launch. On the
// interpreter a race between them is reported and the launch's undo puts the
// storage back; an in-place shift follows the program order; the refusals
// name the parameters; the caller's HostArray objects are left as they were.
// On the GPU (skipped without a CUDA device) the union is one allocation: a
// lane's load through one view sees its own store through the other.
// Expected values are worked out from the kernels' text.
#include "runtime/Overlap.h"
#include "gpu/Autotune.h"
#include "gpu/GpuBackend.h"
#include "interp/InterpreterBackend.h"
#include "runtime/Launch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using tc::DType;
using tc::HostArray;
using tc::RunResult;
using tc::TrapKind;

// Program p loads X[p*64 .. p*64+63] and stores them plus one to Y's elements.
const char *kShift = R"(__global__ void shift(float *X, float *Y) {
  int off[64] = get_program_id(0) * 64 + (0 ... 64);
  *(Y + off) = *(X + off) + 1;
}
)";

// One program, element by element in order: Y[i] = X[i] + 1. With Y one
// element after X in one storage each store feeds the next load.
const char *kRecurrence = R"(__global__ void recur(float *X, float *Y, int N) {
  for (int i = 0; i < N; i += 1)
    *(Y + i) = *(X + i) + 1;
}
)";

std::shared_ptr<tc::CompiledKernel> compileText(const std::string &text) {
  tc::CompileRequest req;
  req.sourceName = "overlap.tc";
  req.sourceText = text;
  tc::CompileOutcome out = tc::compileKernel(req);
  EXPECT_TRUE(out.ok()) << out.diagnostics;
  return out.kernel;
}

/// A float32 view of `count` elements of `storage` from element `first`.
HostArray viewOf(std::vector<float> &storage, size_t first, int64_t count) {
  HostArray v;
  v.dtype = DType::F32;
  v.shape = {count};
  v.external = reinterpret_cast<uint8_t *>(storage.data() + first);
  v.externalBytes = static_cast<size_t>(count) * sizeof(float);
  return v;
}

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(i);
  return v;
}

tc::RunOptions checked(unsigned threads = 1) {
  tc::RunOptions o;
  o.raceCheck = true;
  o.undoOnTrap = true;
  o.threads = threads;
  return o;
}

RunResult interp(const tc::CompiledKernel &k, std::array<int64_t, 3> grid, tc::LaunchArgs &args,
                 const tc::RunOptions &opts) {
  return tc::createInterpreterBackend()->launch(k, grid, args, opts);
}

TEST(Overlap, RaceBetweenOverlappingViewsIsReported) {
  // Program 0 stores x[64:128] through Y; program 1 loads x[64:128] through X.
  auto k = compileText(kShift);
  ASSERT_TRUE(k);
  for (unsigned threads : {1u, 2u}) {
    std::vector<float> x = iota(192);
    const std::vector<float> before = x;
    HostArray X = viewOf(x, 0, 128), Y = viewOf(x, 64, 128);
    tc::LaunchArgs args;
    args.setBuffer("X", &X);
    args.setBuffer("Y", &Y);
    RunResult r = interp(*k, {2, 1, 1}, args, checked(threads));
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << threads << " threads: " << r.error;
    EXPECT_EQ(r.trap->kind, TrapKind::DataRace) << r.trap->render();
    EXPECT_EQ(x, before) << "the undo puts the storage back";
    // Each caller's array has its own bytes as the trap left them.
    ASSERT_TRUE(r.trapState.count(X.bytes()));
    ASSERT_TRUE(r.trapState.count(Y.bytes()));
    EXPECT_EQ(r.trapState.at(X.bytes()).size(), X.byteCount());
    EXPECT_EQ(r.trapState.at(Y.bytes()).size(), Y.byteCount());
    // The caller's objects are as they were.
    EXPECT_EQ(X.shape, std::vector<int64_t>{128});
    EXPECT_EQ(Y.external, reinterpret_cast<uint8_t *>(x.data() + 64));
    EXPECT_EQ(Y.externalBytes, 128 * sizeof(float));
    EXPECT_EQ(Y.origin, 0u);
  }
}

TEST(Overlap, ViewIntoAnOwnedArrayIsOneMemoryToo) {
  // X owns its bytes; Y is an external view of its elements 64..191.
  auto k = compileText(kShift);
  ASSERT_TRUE(k);
  HostArray X = HostArray::zeros(DType::F32, {192});
  HostArray Y;
  Y.dtype = DType::F32;
  Y.shape = {128};
  Y.external = X.data.data() + 64 * sizeof(float);
  Y.externalBytes = 128 * sizeof(float);
  tc::LaunchArgs args;
  args.setBuffer("X", &X);
  args.setBuffer("Y", &Y);
  RunResult r = interp(*k, {2, 1, 1}, args, checked());
  ASSERT_EQ(r.status, RunResult::Status::Trapped) << r.error;
  EXPECT_EQ(r.trap->kind, TrapKind::DataRace) << r.trap->render();
}

TEST(Overlap, InPlaceShiftFollowsProgramOrder) {
  // One program loads X = x[0:64] whole, then stores Y = x[1:65].
  auto k = compileText(kShift);
  ASSERT_TRUE(k);
  std::vector<float> x = iota(65), want = x;
  for (size_t i = 1; i < 65; ++i)
    want[i] = x[i - 1] + 1;
  HostArray X = viewOf(x, 0, 64), Y = viewOf(x, 1, 64);
  tc::LaunchArgs args;
  args.setBuffer("X", &X);
  args.setBuffer("Y", &Y);
  RunResult r = interp(*k, {1, 1, 1}, args, checked());
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  EXPECT_EQ(x, want);
  // Both arrays' bytes were written (they are one memory).
  EXPECT_NE(std::find(r.written.begin(), r.written.end(), X.bytes()), r.written.end());
  EXPECT_NE(std::find(r.written.begin(), r.written.end(), Y.bytes()), r.written.end());
  // The one buffer is the union: 65 elements, of which element 0 was never stored.
  ASSERT_EQ(r.buffers.size(), 1u);
  EXPECT_EQ(r.buffers[0].elements, 65);
  EXPECT_EQ(r.buffers[0].stored, 64);
}

TEST(Overlap, SequentialRecurrenceOnTheInterpreter) {
  // x[i + 1] = x[i] + 1 for i in order: every element becomes x[0] + i.
  auto k = compileText(kRecurrence);
  ASSERT_TRUE(k);
  std::vector<float> x(33, 0.0f);
  x[0] = 5;
  HostArray X = viewOf(x, 0, 32), Y = viewOf(x, 1, 32);
  tc::LaunchArgs args;
  args.setBuffer("X", &X);
  args.setBuffer("Y", &Y);
  args.setScalar("N", tc::ScalarValue::ofInt(DType::I32, 32));
  RunResult r = interp(*k, {1, 1, 1}, args, checked());
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(x[i], 5.0f + static_cast<float>(i)) << i;
}

TEST(Overlap, MixedReadOnlyIsRefusedByName) {
  auto k = compileText(kShift);
  ASSERT_TRUE(k);
  std::vector<float> x = iota(192);
  const std::vector<float> before = x;
  HostArray X = viewOf(x, 0, 128), Y = viewOf(x, 64, 128);
  X.readOnly = true;
  tc::LaunchArgs args;
  args.setBuffer("X", &X);
  args.setBuffer("Y", &Y);
  RunResult r = interp(*k, {1, 1, 1}, args, checked());
  ASSERT_EQ(r.status, RunResult::Status::Trapped) << r.error;
  EXPECT_EQ(r.trap->kind, TrapKind::InvalidLaunch);
  EXPECT_NE(r.trap->message.find("argument 'Y' (float32*) overlaps argument 'X' (float32*) in "
                                 "memory, and one of them is read-only: not supported yet"),
            std::string::npos)
      << r.trap->message;
  EXPECT_EQ(x, before) << "nothing ran";
}

// The same bytes bound as a read-only and a writable array: before, the
// interpreter made them two regions (a store through Y, then a load of that
// element through X in another program, was no race) and the GPU one memory
// (any store through Y trapped as a store to a read-only array). Refused on
// both, as for overlapping views.
TEST(Overlap, SameBytesReadOnlyAndWritableAreRefusedByName) {
  auto k = compileText(R"(__global__ void shift(float *X, float *Y) {
  int off[64] = get_program_id(0) * 64 + (0 ... 64);
  *(Y + off) = *(X + off + 64) + 1;
}
)");
  ASSERT_TRUE(k);
  std::vector<float> x = iota(192);
  const std::vector<float> before = x;
  HostArray X = viewOf(x, 0, 192), Y = viewOf(x, 0, 192);
  X.readOnly = true;
  tc::LaunchArgs args;
  args.setBuffer("X", &X);
  args.setBuffer("Y", &Y);
  for (unsigned threads : {1u, 2u}) {
    RunResult r = interp(*k, {2, 1, 1}, args, checked(threads));
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << r.error;
    EXPECT_EQ(r.trap->kind, TrapKind::InvalidLaunch);
    EXPECT_NE(r.trap->message.find("argument 'Y' (float32*) overlaps argument 'X' (float32*) in "
                                   "memory, and one of them is read-only: not supported yet"),
              std::string::npos)
        << r.trap->message;
    EXPECT_EQ(x, before) << "nothing ran";
  }
  // Without the race check too (the refusal is no race report).
  RunResult r = interp(*k, {1, 1, 1}, args, tc::RunOptions{});
  ASSERT_EQ(r.status, RunResult::Status::Trapped) << r.error;
  EXPECT_EQ(r.trap->kind, TrapKind::InvalidLaunch);
  EXPECT_EQ(x, before);
  // In place (the Python package's binding): refused, nothing changed.
  tc::LaunchArgs in = args;
  std::optional<std::string> refused = tc::mergeOverlappingHostArrays(*k, in);
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("one of them is read-only: not supported yet"), std::string::npos);
  EXPECT_EQ(X.external, reinterpret_cast<uint8_t *>(x.data()));
  // Both read-only, or both writable: one array bound twice, as before.
  Y.readOnly = true;
  EXPECT_FALSE(tc::mergeOverlappingHostArrays(*k, in));
}

TEST(Overlap, PartialElementOffsetIsRefusedByName) {
  auto k = compileText(R"(__global__ void f(short *X, int *Y) {
  *Y = *X;
}
)");
  ASSERT_TRUE(k);
  std::vector<uint8_t> raw(16, 0);
  HostArray X, Y;
  X.dtype = DType::I16; // bytes 2..9
  X.shape = {4};
  X.external = raw.data() + 2;
  X.externalBytes = 8;
  Y.dtype = DType::I32; // bytes 0..7: X starts inside Y's element 0... and the union
  Y.shape = {2};        // (bytes 0..9) is no whole number of Y's elements
  Y.external = raw.data();
  Y.externalBytes = 8;
  tc::LaunchArgs args;
  args.setBuffer("X", &X);
  args.setBuffer("Y", &Y);
  RunResult r = interp(*k, {1, 1, 1}, args, checked());
  ASSERT_EQ(r.status, RunResult::Status::Trapped) << r.error;
  EXPECT_EQ(r.trap->kind, TrapKind::InvalidLaunch);
  EXPECT_NE(r.trap->message.find("overlaps"), std::string::npos) << r.trap->message;
  EXPECT_NE(r.trap->message.find("not a whole number of its elements: not supported yet"),
            std::string::npos)
      << r.trap->message;
  EXPECT_NE(r.trap->message.find("argument 'Y' (int32*)"), std::string::npos) << r.trap->message;
}

TEST(Overlap, MergeInPlaceMakesOneUnionWithOffsets) {
  // A = x[0:10], B = x[8:20], C = x[18:30] (A and C do not meet, but B joins
  // them), D = y, apart; the same bytes bound twice stay as they are.
  auto k = compileText(R"(__global__ void f(float *A, float *B, float *C, float *D, float *E) {
  *D = *A + *B + *C + *E;
}
)");
  ASSERT_TRUE(k);
  std::vector<float> x(30), y(4);
  HostArray A = viewOf(x, 0, 10), B = viewOf(x, 8, 12), C = viewOf(x, 18, 12), D = viewOf(y, 0, 4);
  C.origin = 4; // C's pointer argument is its element 1
  tc::LaunchArgs args;
  args.setBuffer("A", &A);
  args.setBuffer("B", &B);
  args.setBuffer("C", &C);
  args.setBuffer("D", &D);
  args.setBuffer("E", &D);
  ASSERT_FALSE(tc::checkLaunchArguments(*k, args));
  std::optional<std::string> refused = tc::mergeOverlappingHostArrays(*k, args);
  ASSERT_FALSE(refused) << *refused;
  for (HostArray *h : {&A, &B, &C}) {
    EXPECT_EQ(h->external, reinterpret_cast<uint8_t *>(x.data()));
    EXPECT_EQ(h->externalBytes, 30 * sizeof(float));
    EXPECT_EQ(h->shape, std::vector<int64_t>{30});
  }
  EXPECT_EQ(A.origin, 0u);
  EXPECT_EQ(B.origin, 8 * sizeof(float));
  EXPECT_EQ(C.origin, 19 * sizeof(float));
  EXPECT_EQ(D.external, reinterpret_cast<uint8_t *>(y.data()));
  EXPECT_EQ(D.shape, std::vector<int64_t>{4});
  EXPECT_EQ(D.origin, 0u);
}

TEST(Overlap, NoOverlapLaunchesTheCallersArguments) {
  auto k = compileText(kShift);
  ASSERT_TRUE(k);
  std::vector<float> x = iota(128), y(128);
  HostArray X = viewOf(x, 0, 128), Y = viewOf(y, 0, 128);
  tc::LaunchArgs args;
  args.setBuffer("X", &X);
  args.setBuffer("Y", &Y);
  tc::OverlappingViews views;
  ASSERT_FALSE(views.prepare(*k, args));
  EXPECT_EQ(&views.launchArgs(), &args);
  RunResult r = interp(*k, {2, 1, 1}, args, checked());
  ASSERT_EQ(r.status, RunResult::Status::Ok);
  for (size_t i = 0; i < 128; ++i)
    EXPECT_EQ(y[i], x[i] + 1) << i;
}

// Each lane stores Y[i] and then loads X[i + 64], the same element when
// X = x[0:128] and Y = x[64:192] are one memory: Z gets back its own values.
// Separate copies of X and Y would give Z = x[64:128] as it was.
const char *kStoreThenLoad = R"(__global__ void sl(float *X, float *Y, float *Z) {
  int off[64] = 0 ... 64;
  *(Y + off) = *(Z + off);
  *(Z + off) = *(X + off + 64);
}
)";

void storeThenLoad(tc::Backend &backend) {
  auto k = compileText(kStoreThenLoad);
  ASSERT_TRUE(k);
  std::vector<float> x = iota(192), z(64), want = x;
  for (size_t i = 0; i < 64; ++i) {
    z[i] = 1000.0f + static_cast<float>(i);
    want[64 + i] = z[i];
  }
  const std::vector<float> zWant = z;
  HostArray X = viewOf(x, 0, 128), Y = viewOf(x, 64, 128), Z = viewOf(z, 0, 64);
  tc::LaunchArgs args;
  args.setBuffer("X", &X);
  args.setBuffer("Y", &Y);
  args.setBuffer("Z", &Z);
  RunResult r = backend.launch(*k, {1, 1, 1}, args, checked());
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  EXPECT_EQ(x, want);
  EXPECT_EQ(z, zWant);
  // Refusals are the same on every backend.
  X.readOnly = true;
  r = backend.launch(*k, {1, 1, 1}, args, checked());
  ASSERT_EQ(r.status, RunResult::Status::Trapped) << r.error;
  EXPECT_EQ(r.trap->kind, TrapKind::InvalidLaunch);
  EXPECT_NE(r.trap->message.find("read-only: not supported yet"), std::string::npos)
      << r.trap->message;
}

TEST(Overlap, StoreThenLoadThroughTheOtherViewOnTheInterpreter) {
  storeThenLoad(*tc::createInterpreterBackend());
}

TEST(Overlap, StoreThenLoadThroughTheOtherViewOnTheGpu) {
  std::string why;
  if (!tc::gpu::cudaAvailable(&why))
    GTEST_SKIP() << why;
  tc::gpu::GpuOptions o;
  o.diskCache = false;
  auto gpu = tc::gpu::createGpuBackend(o);
  storeThenLoad(*gpu);
}

/// A GpuBackend that runs the interpreter (bench() too) and records, per
/// bench() call, where the arrays it got start.
class InterpretingGpu : public tc::gpu::GpuBackend {
public:
  std::vector<std::map<std::string, const uint8_t *>> benched;

  std::string name() const override { return "interpreting-gpu"; }
  bool available(std::string *) const override { return true; }
  RunResult launch(const tc::CompiledKernel &k, std::array<int64_t, 3> grid, tc::LaunchArgs &args,
                   const tc::RunOptions &opts) override {
    return interp_->launch(k, grid, args, opts);
  }
  RunResult bench(const tc::CompiledKernel &k, std::array<int64_t, 3> grid, tc::LaunchArgs &args,
                  const tc::RunOptions &opts, int, int iterations,
                  tc::gpu::BenchResult &out) override {
    std::map<std::string, const uint8_t *> starts;
    for (const auto &[n, a] : args.buffers())
      starts[n] = a->bytes() + a->origin;
    benched.push_back(starts);
    RunResult r = interp_->launch(k, grid, args, opts);
    out.medianMs = out.minMs = 1.0;
    out.ms.assign(static_cast<size_t>(iterations), 1.0);
    return r;
  }
  bool prepare(const tc::CompiledKernel &, std::string &, tc::gpu::CompileInfo *,
               const tc::LaunchArgs *) override {
    return true;
  }
  void setNumWarps(unsigned w) override { numWarps_ = w; }
  unsigned numWarps() const override { return numWarps_; }
  void setNumStages(unsigned s) override { numStages_ = s; }
  unsigned numStages() const override { return numStages_; }
  std::string deviceDescription() override { return "interpreting GPU"; }
  void setStream(void *) override {}

private:
  std::unique_ptr<tc::Backend> interp_ = tc::createInterpreterBackend();
  unsigned numWarps_ = 4, numStages_ = 2;
};

// The auto-tuner times each variant on copies of the arguments: with views of
// the caller's memory (external arrays, as the Python package passes them) the
// copies must be copies of the bytes (before: the descriptors were copied, so
// every timing run wrote into the caller's memory), one copy of the union of
// overlapping views, each view at its own place in it.
/// Tunes three variants of an in-place add over x[0:128] and x[64:192] on
/// `gpu` (x gets iota(192)); the caller's x must hold one launch's result.
void tuneShiftOverViews(tc::gpu::GpuBackend &gpu, const std::string &cacheName,
                        std::vector<float> &x) {
  const char *text = R"(__global__ void bump(float *X, float *Y) {
  int off[SIZE] = 0 ... SIZE;
  *(X + off + 64) = *(Y + off) + 1;
}
)";
  x = iota(192);
  const std::vector<float> before = x;
  HostArray xa = viewOf(x, 0, 128), ya = viewOf(x, 64, 128);
  tc::LaunchArgs args;
  args.setBuffer("X", &xa);
  args.setBuffer("Y", &ya);
  tc::gpu::TuneRequest req;
  req.base.sourceName = "bump.tc";
  req.base.sourceText = text;
  std::string error;
  std::optional<tc::DefineSpec> size = tc::parseDefine("SIZE=64", error);
  ASSERT_TRUE(size) << error;
  req.specs.push_back(*size);
  req.numWarps = {1, 2, 4};
  req.numStages = {2};
  req.grid = {{"1"}};
  req.warmup = 0;
  req.iterations = 1;
  auto dir = std::filesystem::path(::testing::TempDir()) / cacheName;
  std::filesystem::remove_all(dir);
  tc::gpu::Autotuner tuner(gpu, dir.string());
  RunResult result;
  tc::gpu::TuneOutcome o = tuner.run(req, args, {}, result);
  ASSERT_TRUE(o.error.empty()) << o.error;
  ASSERT_EQ(result.status, RunResult::Status::Ok) << result.error;
  // One real launch on the caller's memory: each lane adds one to its element
  // x[64 + i] (read through Y, written through X), NumPy's x[64:128] += 1.
  std::vector<float> want = before;
  for (size_t i = 64; i < 128; ++i)
    want[i] = before[i] + 1;
  EXPECT_EQ(x, want);
}

TEST(Overlap, AutotuneTimesOnCopiesOfTheUnion) {
  InterpretingGpu gpu;
  std::vector<float> x;
  tuneShiftOverViews(gpu, "overlap-autotune-test", x);
  ASSERT_EQ(gpu.benched.size(), 3u);
  for (const auto &starts : gpu.benched) {
    const uint8_t *px = starts.at("X"), *py = starts.at("Y");
    EXPECT_EQ(py - px, 256) << "the copies of X and Y are not one memory";
    const uint8_t *lo = reinterpret_cast<const uint8_t *>(x.data());
    EXPECT_TRUE(px >= lo + x.size() * sizeof(float) || px + 768 <= lo)
        << "a timing run used the caller's memory";
  }
}

TEST(Overlap, AutotuneTimesOnCopiesOfTheUnionOnTheGpu) {
  std::string why;
  if (!tc::gpu::cudaAvailable(&why))
    GTEST_SKIP() << why;
  tc::gpu::GpuOptions o;
  o.diskCache = false;
  auto gpu = tc::gpu::createGpuBackend(o);
  std::vector<float> x;
  tuneShiftOverViews(*gpu, "overlap-autotune-gpu-test", x);
}

// A race report names the element through the parameter whose pointer made
// the access, counted from that parameter's own pointer: Y = x[64:192] (the
// first parameter), X = x[0:128]. Program 0 stores Y[0, 64) = x[64, 128);
// program 1 loads X[64, 128), the same bytes. Sequentially, program 1's load
// of X[64] (x[64]) finds program 0's store of Y[0]; before, both were named
// "Y[64]" (the first parameter's name, the element counted from the start of
// the union), which is x[128].
TEST(Overlap, RaceReportNamesTheAccessingParameterAndItsOwnIndex) {
  auto k = compileText(R"(__global__ void shift(float *Y, float *X) {
  int off[64] = get_program_id(0) * 64 + (0 ... 64);
  *(Y + off) = *(X + off) + 1;
}
)");
  ASSERT_TRUE(k);
  for (unsigned threads : {1u, 2u}) {
    std::vector<float> x = iota(192);
    HostArray Y = viewOf(x, 64, 128), X = viewOf(x, 0, 128);
    tc::LaunchArgs args;
    args.setBuffer("Y", &Y);
    args.setBuffer("X", &X);
    RunResult r = interp(*k, {2, 1, 1}, args, checked(threads));
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << r.error;
    ASSERT_EQ(r.trap->kind, TrapKind::DataRace) << r.trap->render();
    const std::string &m = r.trap->message;
    ASSERT_EQ(r.trap->notes.size(), 1u) << r.trap->render();
    const std::string &note = r.trap->notes[0].text;
    // Two threads may run program 1's load first; then program 0's store is
    // the access that finds the race, and the names swap sides.
    bool loadFound =
        m.find("load of X[64] by program (1, 0, 0) races with a store by program (0, 0, 0)") !=
            std::string::npos &&
        note == "program (0, 0, 0) stored Y[0] here";
    bool storeFound =
        m.find("store to Y[0] by program (0, 0, 0) races with a load by program (1, 0, 0)") !=
            std::string::npos &&
        note == "program (1, 0, 0) loaded X[64] here";
    EXPECT_TRUE(threads == 1 ? loadFound : loadFound || storeFound)
        << threads << " threads: " << r.trap->render();
    EXPECT_EQ(m.find("[128]"), std::string::npos) << m;
  }
}

// The same with the views in the other parameter order (X first): the load's
// name was right by chance before, the note's "stored X[64]" was not.
TEST(Overlap, RaceReportNoteNamesTheOtherAccessThroughItsOwnParameter) {
  auto k = compileText(kShift);
  ASSERT_TRUE(k);
  std::vector<float> x = iota(192);
  HostArray X = viewOf(x, 0, 128), Y = viewOf(x, 64, 128);
  tc::LaunchArgs args;
  args.setBuffer("X", &X);
  args.setBuffer("Y", &Y);
  RunResult r = interp(*k, {2, 1, 1}, args, checked());
  ASSERT_EQ(r.status, RunResult::Status::Trapped) << r.error;
  ASSERT_EQ(r.trap->kind, TrapKind::DataRace) << r.trap->render();
  EXPECT_NE(r.trap->message.find("load of X[64] by program (1, 0, 0) races with a store by "
                                 "program (0, 0, 0)"),
            std::string::npos)
      << r.trap->message;
  ASSERT_EQ(r.trap->notes.size(), 1u);
  EXPECT_EQ(r.trap->notes[0].text, "program (0, 0, 0) stored Y[0] here");
}

// Views of different element sizes over one memory: the race check keeps the
// memory in units of one element size, so program 0 storing the int16 Y[0]
// and program 1 storing Y[1] (the two halves of the float32 X[0]; different
// bytes, no race) would be reported as a race on X[0]. Refused by name while
// the race check is on (never a false report); a real race across the two
// sizes is refused the same way, not passed as race-free; without the race
// check the launch runs.
TEST(Overlap, ViewsOfDifferentElementSizesAreRefusedWithTheRaceCheck) {
  auto k = compileText(R"(__global__ void k2(float *X, short *Y, int real) {
  int p = get_program_id(0);
  if (real != 0 && p == 0)
    *X = 1.0;
  else
    *(Y + p) = (short)(p + 7);
}
)");
  ASSERT_TRUE(k);
  for (int real : {0, 1}) {
    for (unsigned threads : {1u, 2u}) {
      std::vector<float> buf(64, 0.0f);
      HostArray X = viewOf(buf, 0, 64), Y;
      Y.dtype = DType::I16;
      Y.shape = {100};
      Y.external = reinterpret_cast<uint8_t *>(buf.data());
      Y.externalBytes = 100 * sizeof(int16_t);
      tc::LaunchArgs args;
      args.setBuffer("X", &X);
      args.setBuffer("Y", &Y);
      args.setScalar("real", tc::ScalarValue::ofInt(DType::I32, real));
      RunResult r = interp(*k, {2, 1, 1}, args, checked(threads));
      ASSERT_EQ(r.status, RunResult::Status::Trapped) << real << " " << threads << ": " << r.error;
      EXPECT_EQ(r.trap->kind, TrapKind::InvalidLaunch) << r.trap->render();
      EXPECT_NE(r.trap->message.find(
                    "argument 'Y' (int16*) and argument 'X' (float32*) are views of one memory "
                    "with different element sizes: not supported yet with the race check on; "
                    "pass race_check=False / --no-race-check"),
                std::string::npos)
          << r.trap->message;
      EXPECT_EQ(buf, std::vector<float>(64, 0.0f)) << "nothing ran";
      if (real)
        continue;
      tc::RunOptions plain;
      plain.threads = threads;
      plain.raceCheck = false;
      r = interp(*k, {2, 1, 1}, args, plain);
      ASSERT_EQ(r.status, RunResult::Status::Ok) << r.error << (r.trap ? r.trap->render() : "");
      int16_t halves[2];
      std::memcpy(halves, buf.data(), sizeof halves);
      EXPECT_EQ(halves[0], 7);
      EXPECT_EQ(halves[1], 8);
    }
  }
}

} // namespace
