// Races between programs (DESIGN.md section 4 rule 15, trap data_race), the
// elements no program stored (RunResult::buffers) and the access map page,
// through the public host API. Expected programs, elements and lines are
// worked out from the kernel text: which program's tile covers which element.
#include "interp/AccessMap.h"
#include "interp/InterpreterBackend.h"
#include "runtime/Launch.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace {

using tc::DType;
using tc::HostArray;
using tc::RunResult;
using tc::TrapKind;

tc::RunOptions checked();

struct Launch {
  std::shared_ptr<tc::CompiledKernel> kernel;
  std::map<std::string, HostArray> arrays;
  tc::LaunchArgs args;

  explicit Launch(const std::string &text) {
    tc::CompileRequest req;
    req.sourceName = "race.tc";
    req.sourceText = text;
    tc::CompileOutcome out = tc::compileKernel(req);
    EXPECT_TRUE(out.ok()) << out.diagnostics;
    kernel = out.kernel;
  }
  HostArray &buffer(const std::string &name, DType t, std::vector<int64_t> shape) {
    HostArray &a = arrays[name] = HostArray::zeros(t, std::move(shape));
    for (int64_t i = 0; i < a.numElements(); ++i)
      a.setDouble(i, static_cast<double>(i % 17));
    args.setBuffer(name, &a);
    return a;
  }
  void scalar(const std::string &name, int64_t v) {
    args.setScalar(name, tc::ScalarValue::ofInt(DType::I32, v));
  }
  RunResult run(std::array<int64_t, 3> grid, tc::RunOptions opts = checked()) {
    if (!kernel) {
      RunResult r;
      r.status = RunResult::Status::Error;
      r.error = "did not compile";
      return r;
    }
    return tc::createInterpreterBackend()->launch(*kernel, grid, args, opts);
  }
};

tc::RunOptions checked() {
  tc::RunOptions o;
  o.raceCheck = true;
  return o;
}

bool has(const std::string &hay, const std::string &needle) {
  return hay.find(needle) != std::string::npos;
}

// Overlapping output tiles: the stride is BLOCK / 2, so program 1's tile
// starts at element 32, which program 0 stored (its tile is 0..63).
const char *kOverlap = R"(__global__ void scale(float *X, float *Y, int N) {
  int off[64] = get_program_id(0) * 32 + (0 ... 64);
  bool m[64] = off < N;
  float x[64] = *?(m)(X + off);
  *?(m)(Y + off) = x * 2;
}
)";

TEST(Race, OverlappingOutputTilesTrap) {
  Launch l(kOverlap);
  l.buffer("X", DType::F32, {256});
  l.buffer("Y", DType::F32, {256});
  l.scalar("N", 256);
  RunResult r = l.run({8, 1, 1});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  ASSERT_EQ(r.trap->kind, TrapKind::DataRace);
  const tc::Trap &t = *r.trap;
  EXPECT_EQ(t.programId, (std::array<int64_t, 3>{1, 0, 0}));
  EXPECT_EQ(t.line, 5u); // the store
  EXPECT_EQ(t.lane, 0);  // lane 0 of program 1 is element 32
  EXPECT_TRUE(has(t.message, "store to Y[32] by program (1, 0, 0)")) << t.message;
  EXPECT_TRUE(has(t.message, "a store by program (0, 0, 0)")) << t.message;
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_EQ(t.notes[0].line, 5u);
  EXPECT_TRUE(has(t.notes[0].text, "program (0, 0, 0) stored Y[32]")) << t.notes[0].text;
  std::string text = t.render();
  EXPECT_TRUE(has(text, "trap: data_race:")) << text;
  EXPECT_TRUE(has(text, "race.tc:5:")) << text;
  // A trapping store writes nothing: program 1's Y is untouched, program 0's done.
  EXPECT_EQ(l.arrays["Y"].getDouble(0), 0.0);
  EXPECT_EQ(l.arrays["Y"].getDouble(32), 2.0 * (32 % 17));
  EXPECT_EQ(l.arrays["Y"].getDouble(64), 64 % 17); // never stored
}

TEST(Race, SameReportForAnyThreadCount) {
  std::string first;
  std::vector<double> firstY;
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    Launch l(kOverlap);
    l.buffer("X", DType::F32, {256});
    l.buffer("Y", DType::F32, {256});
    l.scalar("N", 256);
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({8, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Trapped);
    std::vector<double> y;
    for (int64_t i = 0; i < 256; ++i)
      y.push_back(l.arrays["Y"].getDouble(i));
    if (threads == 1) {
      first = r.trap->render();
      firstY = y;
    } else {
      EXPECT_EQ(r.trap->render(), first) << threads << " threads";
      EXPECT_EQ(y, firstY) << threads << " threads";
    }
  }
}

TEST(Race, OnByDefaultOffWhenAskedAndForASingleProgram) {
  Launch l(kOverlap);
  l.buffer("X", DType::F32, {256});
  l.buffer("Y", DType::F32, {256});
  l.scalar("N", 256);
  RunResult d = l.run({8, 1, 1}, tc::RunOptions{}); // on by default (issue 32)
  ASSERT_EQ(d.status, RunResult::Status::Trapped);
  EXPECT_EQ(d.trap->kind, TrapKind::DataRace);
  tc::RunOptions off;
  off.raceCheck = false;
  EXPECT_EQ(l.run({8, 1, 1}, off).status, RunResult::Status::Ok);
  tc::RunOptions o = checked();
  o.raceCheck = true;
  o.onlyProgram = std::array<int64_t, 3>{1, 0, 0};
  EXPECT_EQ(l.run({8, 1, 1}, o).status, RunResult::Status::Ok);
}

// The shadow keeps one cell per block of 16 elements until accesses treat a
// block's elements differently: tiles of 64 lanes at every stride S put the
// overlap at every alignment to the blocks. Program 0 stores Y[S, S + 64)
// and program 1 Y[0, 64): program 1's first racing lane is lane S (element
// S), for S < 64; from S = 64 on the tiles are disjoint and every stored
// element counts.
TEST(Race, OverlapAtAnyAlignmentToTheShadowBlocks) {
  for (int s : {1, 5, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 80}) {
    Launch l("__global__ void k(float *Y) {\n"
             "  int off[64] = (1 - get_program_id(0)) * " +
             std::to_string(s) +
             " + (0 ... 64);\n"
             "  *(Y + off) = 1.0;\n"
             "}\n");
    l.buffer("Y", DType::F32, {160});
    for (unsigned threads : {1u, 2u}) {
      tc::RunOptions o = checked();
      o.threads = threads;
      RunResult r = l.run({2, 1, 1}, o);
      if (s >= 64) {
        ASSERT_EQ(r.status, RunResult::Status::Ok) << s << (r.trap ? r.trap->render() : r.error);
        ASSERT_EQ(r.buffers.size(), 1u);
        EXPECT_EQ(r.buffers[0].stored, 128) << s;
        std::vector<std::pair<int64_t, int64_t>> gaps;
        if (s > 64)
          gaps.emplace_back(64, s - 1);
        gaps.emplace_back(s + 64, 159);
        EXPECT_EQ(r.buffers[0].unwritten, gaps) << s;
        continue;
      }
      ASSERT_EQ(r.status, RunResult::Status::Trapped) << s;
      ASSERT_EQ(r.trap->kind, TrapKind::DataRace) << s;
      EXPECT_EQ(r.trap->programId, (std::array<int64_t, 3>{1, 0, 0})) << s;
      EXPECT_EQ(r.trap->lane, s) << s << " threads " << threads;
      EXPECT_TRUE(has(r.trap->message, "store to Y[" + std::to_string(s) +
                                           "] by program (1, 0, 0) races with a store by "
                                           "program (0, 0, 0)"))
          << r.trap->message;
    }
  }
}

// A transposed tile (lane (i, j) at Y[r[j], c[i]]: columns of consecutive
// addresses). Program 0 stores rows 4..11 of Y, program 1 rows 0..7: program
// 1's first racing lane in row-major lane order is (0, 4), Y[4, 0].
TEST(Race, TransposedTileStore) {
  Launch l(R"(__global__ void t(float *Y) {
  int r[8] = (1 - get_program_id(0)) * 4 + (0 ... 8);
  int c[8] = 0 ... 8;
  *(Y + r[newaxis, :] * 8 + c[:, newaxis]) = 1.0;
}
)");
  l.buffer("Y", DType::F32, {12, 8});
  for (unsigned threads : {1u, 2u}) {
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({2, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Trapped);
    ASSERT_EQ(r.trap->kind, TrapKind::DataRace);
    EXPECT_EQ(r.trap->lane, 4);
    EXPECT_TRUE(has(r.trap->message, "store to Y[4, 0] (element 32) by program (1, 0, 0) races "
                                     "with a store by program (0, 0, 0)"))
        << r.trap->message;
  }
  // Disjoint transposed tiles: no race, every element stored.
  Launch ok(R"(__global__ void t(float *Y) {
  int r[8] = get_program_id(0) * 8 + (0 ... 8);
  int c[8] = 0 ... 8;
  *(Y + r[newaxis, :] * 8 + c[:, newaxis]) = 1.0;
}
)");
  ok.buffer("Y", DType::F32, {16, 8});
  RunResult r = ok.run({2, 1, 1});
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  EXPECT_EQ(r.buffers[0].stored, 128);
}

// Masked-off lanes are no accesses, also inside a block the access covers:
// programs 0 and 1 store the even and the odd elements (no race); a third
// program storing the even ones again races with program 0 at lane 0. The
// same with a transposed tile (lane (i, j) at Y[r[j], c[i]]), the mask on
// the columns.
TEST(Race, MaskedOffLanesAreNotAccesses) {
  for (const char *src : {R"(__global__ void k(float *Y) {
  int i[64] = 0 ... 64;
  bool m[64] = i % 2 == get_program_id(0) % 2;
  *?(m)(Y + i) = 1.0;
}
)",
                          R"(__global__ void k(float *Y) {
  int r[8] = 0 ... 8;
  int c[8] = 0 ... 8;
  bool m[8, 8] = (c % 2 == get_program_id(0) % 2)[:, newaxis] + r[newaxis, :] * 0;
  *?(m)(Y + r[newaxis, :] * 8 + c[:, newaxis]) = 1.0;
}
)"}) {
    Launch l(src);
    l.buffer("Y", DType::F32, {64});
    RunResult ok = l.run({2, 1, 1});
    ASSERT_EQ(ok.status, RunResult::Status::Ok) << (ok.trap ? ok.trap->render() : ok.error);
    EXPECT_EQ(ok.buffers[0].stored, 64);
    RunResult r = l.run({3, 1, 1});
    ASSERT_EQ(r.status, RunResult::Status::Trapped);
    ASSERT_EQ(r.trap->kind, TrapKind::DataRace);
    EXPECT_EQ(r.trap->lane, 0);
    EXPECT_TRUE(has(r.trap->message, "store to Y[0] by program (2, 0, 0) races with a store by "
                                     "program (0, 0, 0)"))
        << r.trap->message;
  }
}

// Every program loads X[0, 64) (readers, no race); only program 3 stores it
// (the others' mask is off). Its store is checked against the last reader of
// another program: program 2 (program 3's own load is the newest reader).
TEST(Race, StoreAfterSharedLoadsNamesTheLastOtherReader) {
  Launch l(R"(__global__ void k(float *X, float *Y) {
  int pid = get_program_id(0);
  int i[64] = 0 ... 64;
  float x[64] = *(X + i);
  *(Y + pid * 64 + i) = x;
  bool m[64] = i + pid * 64 >= 192;
  *?(m)(X + i) = x * 2;
}
)");
  l.buffer("X", DType::F32, {64});
  l.buffer("Y", DType::F32, {256});
  RunResult r = l.run({4, 1, 1});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  ASSERT_EQ(r.trap->kind, TrapKind::DataRace);
  EXPECT_EQ(r.trap->lane, 0);
  EXPECT_TRUE(has(r.trap->message, "store to X[0] by program (3, 0, 0) races with a load by "
                                   "program (2, 0, 0)"))
      << r.trap->message;
}

// Program i reads element (i + 1) * 16, the first element of program i + 1's
// tile, which program i + 1 stores: a load and a store of different programs.
const char *kReadNeighbour = R"(__global__ void smooth(float *Y) {
  int i[16] = get_program_id(0) * 16 + (0 ... 16);
  float next = *(Y + get_program_id(0) * 16 + 16);
  *(Y + i) = *(Y + i) + next;
}
)";

TEST(Race, LoadOfWhatAnotherProgramStores) {
  Launch l(kReadNeighbour);
  l.buffer("Y", DType::F32, {64});
  RunResult r = l.run({3, 1, 1});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  ASSERT_EQ(r.trap->kind, TrapKind::DataRace);
  // Program 0 loaded Y[16]; program 1 then stores it (line 4, lane 0).
  EXPECT_EQ(r.trap->programId, (std::array<int64_t, 3>{1, 0, 0}));
  EXPECT_EQ(r.trap->line, 4u);
  EXPECT_TRUE(has(r.trap->message, "store to Y[16] by program (1, 0, 0) races with a load by "
                                   "program (0, 0, 0)"))
      << r.trap->message;
  ASSERT_EQ(r.trap->notes.size(), 1u);
  EXPECT_EQ(r.trap->notes[0].line, 3u);
}

// 2-d buffer: the element is named by its indices and its flat index.
TEST(Race, ElementOfA2dBufferByIndices) {
  Launch l(R"(__global__ void rows(float *Y) {
  int r[2] = get_program_id(0) + (0 ... 2);
  int c[8] = 0 ... 8;
  *(Y + r[:, newaxis] * 8 + c[newaxis, :]) = 1.0;
}
)");
  l.buffer("Y", DType::F32, {4, 8});
  RunResult r = l.run({3, 1, 1});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  // Program 1 stores rows 1 and 2; row 1 is program 0's too.
  EXPECT_TRUE(has(r.trap->message, "Y[1, 0] (element 8)")) << r.trap->message;
}

// Colliding atomics: every program adds into the same 4 bins; no plain store.
TEST(Race, CollidingAtomicsAreNotRaces) {
  Launch l(R"(__global__ void hist(int *X, int *H) {
  int i[32] = get_program_id(0) * 32 + (0 ... 32);
  int x[32] = *(X + i);
  atomic_add(H + x % 4, 1);
}
)");
  l.buffer("X", DType::I32, {256});
  HostArray &h = l.buffer("H", DType::I32, {4});
  for (int i = 0; i < 4; ++i)
    h.setDouble(i, 0);
  for (unsigned threads : {1u, 4u}) {
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({8, 1, 1}, o);
    EXPECT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  }
}

// A lock around a read-modify-write of one shared sum: ordered by the lock's
// acquire (atomic_cas) and release (atomic_xchg), so no race, for any thread
// count; without the lock the same accesses race.
const char *kLocked = R"(__global__ void total(float *X, float *S, int *lock) {
  float x = *(X + get_program_id(0));
  for (int spin = 1; spin == 1; spin = atomic_cas(lock, 0, 1))
    ;
  *S = *S + x;
  atomic_xchg(lock, 0);
}
)";

TEST(Race, LockedReadModifyWriteIsNotARace) {
  for (unsigned threads : {1u, 2u, 4u}) {
    Launch l(kLocked);
    l.buffer("X", DType::F32, {16});
    HostArray &s = l.buffer("S", DType::F32, {1});
    s.setDouble(0, 0);
    HostArray &lock = l.buffer("lock", DType::I32, {1});
    lock.setDouble(0, 0);
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({16, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
    double want = 0;
    for (int i = 0; i < 16; ++i)
      want += i % 17;
    EXPECT_EQ(l.arrays["S"].getDouble(0), want);
  }
}

TEST(Race, UnlockedReadModifyWriteRaces) {
  Launch l(R"(__global__ void total(float *X, float *S) {
  float x = *(X + get_program_id(0));
  *S = *S + x;
}
)");
  l.buffer("X", DType::F32, {16});
  l.buffer("S", DType::F32, {1});
  RunResult r = l.run({16, 1, 1});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::DataRace);
  // Program 1 loads S[0], which program 0 stored.
  EXPECT_TRUE(has(r.trap->message, "load of S[0] by program (1, 0, 0) races with a store by "
                                   "program (0, 0, 0)"))
      << r.trap->message;
}

// A plain store after the lock is released is not covered by it.
TEST(Race, StoreOutsideTheLockRaces) {
  Launch l(R"(__global__ void total(float *X, float *S, int *lock) {
  float x = *(X + get_program_id(0));
  for (int spin = 1; spin == 1; spin = atomic_cas(lock, 0, 1))
    ;
  float s = *S;
  atomic_xchg(lock, 0);
  *S = s + x;
}
)");
  l.buffer("X", DType::F32, {4});
  l.buffer("S", DType::F32, {1});
  HostArray &lock = l.buffer("lock", DType::I32, {1});
  lock.setDouble(0, 0);
  RunResult r = l.run({4, 1, 1});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::DataRace);
  EXPECT_EQ(r.trap->line, 5u); // program 1's load of S under the lock vs program 0's store
}

// Program 0 loads X[0] (plain: no atomic orders it); programs 1 and 2 add to
// X[0] atomically, then program 2 stores X[0]. Program 2's atomic acquires
// program 1's, so its store is ordered after program 1's access but after
// nothing of program 0: the store races with program 0's load (rule 15),
// which the two atomics, newer readers of X[0], pushed out of its cell.
TEST(Race, StoreRacesWithAReaderThatNewerOnesPushedOut) {
  for (unsigned threads : {1u, 3u}) {
    Launch l(R"(__global__ void k(int *X, int *D) {
  int pid = get_program_id(0);
  if (pid == 0) *D = *X;
  if (pid >= 1) atomic_add(X, 1);
  if (pid == 2) *X = 7;
}
)");
    l.buffer("X", DType::I32, {1});
    l.buffer("D", DType::I32, {1});
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({3, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << threads << " threads";
    EXPECT_EQ(r.trap->kind, TrapKind::DataRace);
    EXPECT_EQ(r.trap->line, 5u);
    EXPECT_TRUE(has(r.trap->message, "store to X[0] by program (2, 0, 0) races with a load by "
                                     "program (0, 0, 0)"))
        << r.trap->message;
  }
}

// Programs 0 and 1 load X[0]; program 1 then releases F, and program 2
// acquires F and stores X[0]: ordered after program 1's load, not after
// program 0's, the older of the element's two readers.
TEST(Race, StoreRacesWithTheOlderOfTwoReaders) {
  for (unsigned threads : {1u, 3u}) {
    Launch l(R"(__global__ void k(int *X, int *D, int *F) {
  int pid = get_program_id(0);
  if (pid <= 1) *(D + pid) = *X;
  if (pid == 1) atomic_xchg(F, 1);
  if (pid == 2) { atomic_add(F, 0); *X = 7; }
}
)");
    l.buffer("X", DType::I32, {1});
    l.buffer("D", DType::I32, {2});
    HostArray &f = l.buffer("F", DType::I32, {1});
    f.setDouble(0, 0);
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({3, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << threads << " threads";
    EXPECT_EQ(r.trap->kind, TrapKind::DataRace);
    EXPECT_TRUE(has(r.trap->message, "store to X[0] by program (2, 0, 0) races with a load by "
                                     "program (0, 0, 0)"))
        << r.trap->message;
  }
}

// The same for tiles that fill a shadow block (16 elements, one cell while
// they are accessed alike): programs 0 and 1 load X[0, 16), program 1 then
// releases F; program 2 acquires F, loads X[0, 16) (pushing program 0's load
// out of the block's cell) and stores it: a race with program 0's load.
TEST(Race, TileStoreRacesWithATileReaderPushedOutOfItsBlock) {
  Launch l(R"(__global__ void k(int *X, int *D, int *F) {
  int pid = get_program_id(0);
  int i[16] = 0 ... 16;
  if (pid == 2) atomic_add(F, 0);
  int x[16] = *(X + i);
  *(D + pid * 16 + i) = x;
  if (pid == 1) atomic_xchg(F, 1);
  if (pid == 2) *(X + i) = x + 1;
}
)");
  l.buffer("X", DType::I32, {16});
  l.buffer("D", DType::I32, {48});
  HostArray &f = l.buffer("F", DType::I32, {1});
  f.setDouble(0, 0);
  RunResult r = l.run({3, 1, 1});
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::DataRace);
  EXPECT_EQ(r.trap->lane, 0);
  EXPECT_TRUE(has(r.trap->message, "store to X[0] by program (2, 0, 0) races with a load by "
                                   "program (0, 0, 0)"))
      << r.trap->message;
}

// Twelve programs load X[0]; programs 1..11 then add to F, and program 12
// waits until all eleven did before it stores X[0]: ordered after their
// loads, not after program 0's, which ten newer readers pushed out of the
// cell (past the point where the readers kept aside are compacted).
TEST(Race, StoreRacesWithTheOneUnorderedReaderOfMany) {
  for (unsigned threads : {1u, 4u}) {
    Launch l(R"(__global__ void k(int *X, int *D, int *F, int n) {
  int pid = get_program_id(0);
  if (pid < n) {
    *(D + pid) = *X;
    if (pid > 0) atomic_add(F, 1);
  } else {
    while (atomic_add(F, 0) < n - 1) {}
    *X = 7;
  }
}
)");
    l.buffer("X", DType::I32, {1});
    l.buffer("D", DType::I32, {12});
    HostArray &f = l.buffer("F", DType::I32, {1});
    f.setDouble(0, 0);
    l.scalar("n", 12);
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({13, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << threads << " threads";
    EXPECT_EQ(r.trap->kind, TrapKind::DataRace);
    EXPECT_TRUE(has(r.trap->message, "store to X[0] by program (12, 0, 0) races with a load by "
                                     "program (0, 0, 0)"))
        << r.trap->message;
  }
}

// Program 0 stores X[0], then releases F. Program 1 runs one atomic_add of two
// lanes, one on X[0] and one on F. Lanes apply in row-major order: with X[0]
// in lane 0, the acquire of F (lane 1) comes after the access of X[0], so
// nothing orders program 0's plain store before it (a race); with F in lane
// 0 the acquire comes first and orders them.
TEST(Race, LanesOfOneAtomicAcquireInRowMajorOrder) {
  for (int lane : {0, 1}) {
    Launch l(R"(__global__ void k(int *X, int *F, int lane) {
  int p = get_program_id(0);
  if (p == 0) { *X = 5; atomic_xchg(F, 1); }
  if (p == 1) {
    int l[2] = 0 ... 2;
    int *q[2] = l == lane ? X : F;
    atomic_add(q, 1);
  }
}
)");
    l.buffer("X", DType::I32, {1});
    HostArray &f = l.buffer("F", DType::I32, {1});
    f.setDouble(0, 0);
    l.scalar("lane", lane);
    RunResult r = l.run({2, 1, 1});
    if (lane == 1) {
      EXPECT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
      continue;
    }
    ASSERT_EQ(r.status, RunResult::Status::Trapped);
    EXPECT_EQ(r.trap->kind, TrapKind::DataRace);
    EXPECT_EQ(r.trap->lane, 0);
    EXPECT_TRUE(has(r.trap->message, "atomic on X[0] by program (1, 0, 0) races with a store by "
                                     "program (0, 0, 0)"))
        << r.trap->message;
  }
}

// Program p stores byte p of the float X[0] through a `char *`: four programs,
// four different bytes, no race (memory is written byte by byte on the GPU
// too), and X[1] is never written. When programs 2 and 3 both store byte 6
// (of X[1]) they race, and the report names the float holding the byte.
TEST(Race, DifferentBytesOfOneElementDoNotRace) {
  const char *kBytes = R"(__global__ void k(float *X, int same) {
  int p = get_program_id(0);
  char *b = (char *)X;
  if (same) *(b + 4 + (p == 3 ? 2 : p)) = (char)1;
  else *(b + p) = (char)(p + 1);
}
)";
  for (unsigned threads : {1u, 3u}) {
    Launch l(kBytes);
    HostArray &x = l.buffer("X", DType::F32, {2});
    x.setBits(0, 0);
    l.scalar("same", 0);
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({4, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
    EXPECT_EQ(x.getBits(0), 0x04030201u);
    ASSERT_EQ(r.buffers.size(), 1u);
    EXPECT_EQ(r.buffers[0].elements, 2);
    EXPECT_EQ(r.buffers[0].stored, 1);
    EXPECT_EQ(r.buffers[0].unwritten, (std::vector<std::pair<int64_t, int64_t>>{{1, 1}}));

    Launch same(kBytes);
    same.buffer("X", DType::F32, {2});
    same.scalar("same", 1);
    r = same.run({4, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Trapped);
    EXPECT_EQ(r.trap->kind, TrapKind::DataRace);
    EXPECT_TRUE(has(r.trap->message, "store to X[1] by program (3, 0, 0) races with a store by "
                                     "program (2, 0, 0)"))
        << r.trap->message;
  }
}

// Program 0 works a while, then stores X and releases F; program 1 reads F
// atomically and then loads X, whatever it read. In program order program 1's
// atomic acquires program 0's release, which orders the two; with two threads
// program 1 runs at once and loads X before program 0 stores it: a race the
// threads' run saw (a GPU may run it so), which the run again in program
// order (for the report every thread count gives) must not hide.
TEST(Race, RaceTheThreadsSawIsReportedWhenProgramOrderHidesIt) {
  Launch l(R"(__global__ void k(int *X, int *F, int *D) {
  int pid = get_program_id(0);
  if (pid == 0) {
    int s = 0;
    for (int i = 0; i < 2000000; i++) s = s + 1;
    *X = s;
    atomic_xchg(F, 1);
  }
  if (pid == 1) { int f = atomic_add(F, 0); *D = *X + f; }
}
)");
  HostArray &x = l.buffer("X", DType::I32, {1});
  HostArray &f = l.buffer("F", DType::I32, {1});
  HostArray &d = l.buffer("D", DType::I32, {1});
  x.setDouble(0, 3);
  f.setDouble(0, 0);
  d.setDouble(0, 4);
  tc::RunOptions o = checked();
  o.threads = 2;
  RunResult r = l.run({2, 1, 1}, o);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::DataRace);
  EXPECT_TRUE(has(r.trap->message, "store to X[0] by program (0, 0, 0) races with a load by "
                                   "program (1, 0, 0)"))
      << r.trap->message;
  // The buffers as they were before the launch.
  EXPECT_EQ(x.getDouble(0), 3);
  EXPECT_EQ(f.getDouble(0), 0);
  EXPECT_EQ(d.getDouble(0), 4);
}

// Program 1 releases F and then stores X; program 0 waits for F and then
// loads X: the store comes after the release, so nothing orders it with the
// load (a race whichever ran first). In program order program 0 waits for
// program 1 forever: the run again in program order is given up, and the
// threads' report stands with a note, the buffers as they were before the
// launch. (The time limit only turns a regression into a failure, not a hang.)
TEST(Race, ProgramOrderRunThatWaitsForALaterProgramIsGivenUp) {
  Launch l(R"(__global__ void k(int *F, int *X, int *D) {
  if (get_program_id(0) == 0) {
    while (atomic_add(F, 0) == 0) {}
    *D = *X;
  } else {
    atomic_xchg(F, 1);
    *X = 5;
  }
}
)");
  HostArray &f = l.buffer("F", DType::I32, {1});
  HostArray &x = l.buffer("X", DType::I32, {1});
  HostArray &d = l.buffer("D", DType::I32, {1});
  f.setDouble(0, 0);
  x.setDouble(0, 3);
  d.setDouble(0, 4);
  tc::RunOptions o = checked();
  o.threads = 2;
  o.maxSeconds = 60;
  RunResult r = l.run({2, 1, 1}, o);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  ASSERT_EQ(r.trap->kind, TrapKind::DataRace) << r.trap->render();
  EXPECT_FALSE(r.interrupted);
  EXPECT_TRUE(has(r.trap->message, "X[0]")) << r.trap->message;
  ASSERT_FALSE(r.trap->notes.empty());
  const tc::Trap::Note &n = r.trap->notes.back();
  EXPECT_EQ(n.line, 3u) << n.text; // the atomic it spins on
  EXPECT_TRUE(has(n.text, "the launch was not run again in program order: program (0, 0, 0) "
                          "waits here for a later one (it kept reading 'F' element 0)"))
      << n.text;
  EXPECT_EQ(f.getDouble(0), 0);
  EXPECT_EQ(x.getDouble(0), 3);
  EXPECT_EQ(d.getDouble(0), 4);
}

// Program 0 spins on a plain load of F, which program 1 sets with a plain
// store: the store races with the load. Where the threads find it at the
// store (not done), program 0, below the trap and so let run on, would wait
// forever (triton-interp --threads 2 hung): it is given up after a bounded
// number of ops. In program order it waits for program 1 too: it is set aside
// there and program 1 runs, so the report is the same whichever program the
// threads ran first, and the same for any thread count. (The time limit only
// turns a regression into a failure, not a hang.)
TEST(Race, SpinOnAPlainFlagThatARacingStoreSetsEnds) {
  const char *k = R"(__global__ void k(int *F, int *D) {
  if (get_program_id(0) == 0) {
    while (*F == 0) {}
    *D = 7;
  } else {
    *F = 1;
  }
}
)";
  std::string first;
  for (unsigned threads : {2u, 4u, 2u}) {
    Launch l(k);
    HostArray &f = l.buffer("F", DType::I32, {1});
    HostArray &d = l.buffer("D", DType::I32, {1});
    f.setDouble(0, 0);
    d.setDouble(0, 4);
    tc::RunOptions o = checked();
    o.threads = threads;
    o.maxSeconds = 60;
    RunResult r = l.run({2, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << threads << " threads";
    ASSERT_EQ(r.trap->kind, TrapKind::DataRace) << r.trap->render();
    EXPECT_FALSE(r.interrupted);
    EXPECT_TRUE(has(r.trap->message, "store to F[0] by program (1, 0, 0) races with a load by "
                                     "program (0, 0, 0)"))
        << r.trap->message;
    EXPECT_EQ(r.trap->line, 6u);
    ASSERT_FALSE(r.trap->notes.empty());
    const tc::Trap::Note &n = r.trap->notes.back();
    EXPECT_EQ(n.line, 3u) << n.text; // the load it spins on
    EXPECT_TRUE(has(n.text, "in program order, program (0, 0, 0) waits here for a later one (it "
                            "kept reading 'F' element 0): it was stopped there, and the programs "
                            "after it ran"))
        << n.text;
    EXPECT_EQ(d.getDouble(0), 4); // program 0 never got past its loop
    if (first.empty())
      first = r.trap->render();
    else
      EXPECT_EQ(r.trap->render(), first) << threads << " threads";
  }
}

// Program 1 traps (out of bounds) before it sets the flag that program 0
// spins on with atomics: program 0, below the trap, would wait forever. It is
// given up after a bounded number of ops, and the trap (no race: no run again
// in program order) stands with a note saying where program 0 was. With one
// thread program 0 spins until the step limit, as before.
TEST(Race, ProgramBelowATrapThatWaitsForTheTrappingOneIsGivenUp) {
  const char *k = R"(__global__ void k(int *F, int *X, int *D) {
  if (get_program_id(0) == 0) {
    while (atomic_add(F, 0) == 0) {}
    *D = 7;
  } else {
    *D = *(X + 5);
    atomic_xchg(F, 1);
  }
}
)";
  for (unsigned threads : {2u, 4u}) {
    Launch l(k);
    HostArray &f = l.buffer("F", DType::I32, {1});
    l.buffer("X", DType::I32, {2});
    l.buffer("D", DType::I32, {1});
    f.setDouble(0, 0);
    tc::RunOptions o = checked();
    o.threads = threads;
    o.maxSeconds = 60;
    RunResult r = l.run({2, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << threads << " threads";
    ASSERT_EQ(r.trap->kind, TrapKind::OutOfBounds) << r.trap->render();
    EXPECT_EQ(r.trap->programId[0], 1);
    EXPECT_EQ(r.trap->line, 6u);
    ASSERT_FALSE(r.trap->notes.empty());
    const tc::Trap::Note &n = r.trap->notes.back();
    EXPECT_EQ(n.line, 3u) << n.text;
    EXPECT_TRUE(has(n.text, "program (0, 0, 0) was still running here, and was given up"))
        << n.text;
    EXPECT_TRUE(has(n.text, "it kept reading 'F' element 0, which this kernel writes")) << n.text;
  }
  Launch l(k);
  l.buffer("F", DType::I32, {1}).setDouble(0, 0);
  l.buffer("X", DType::I32, {2});
  l.buffer("D", DType::I32, {1});
  tc::RunOptions o = checked();
  o.maxSteps = 100000;
  RunResult r = l.run({2, 1, 1}, o);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::StepLimit) << r.trap->render();
  EXPECT_EQ(r.trap->programId[0], 0);
}

//===-- logged mode: intervals per thread, checked after the run ---------------------===//

// Program p stores Y[4095p, 4095p + 4096): neighbours share one element, the
// last of a 4096-element coverage chunk (element 4095) and of a 64-element
// word. Program 1's lane 0 stores Y[4095], which program 0 stored: the
// report, and the buffer as the trap left it, are the same for every thread
// count (the logged run finds the overlap, puts the buffer back and runs the
// element-wise check).
TEST(Race, OneElementOverlapAtAChunkBoundary) {
  const char *k = R"(__global__ void k(float *X, float *Y) {
  int off[4096] = get_program_id(0) * 4095 + (0 ... 4096);
  *(Y + off) = *(X + off) * 2;
}
)";
  std::string first;
  std::vector<double> firstY;
  for (unsigned threads : {1u, 2u, 4u}) {
    Launch l(k);
    l.buffer("X", DType::F32, {12288});
    l.buffer("Y", DType::F32, {12288});
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({3, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << threads;
    ASSERT_EQ(r.trap->kind, TrapKind::DataRace);
    EXPECT_EQ(r.trap->programId, (std::array<int64_t, 3>{1, 0, 0}));
    EXPECT_EQ(r.trap->lane, 0);
    EXPECT_TRUE(has(r.trap->message, "store to Y[4095] by program (1, 0, 0) races with a store "
                                     "by program (0, 0, 0)"))
        << r.trap->message;
    std::vector<double> y;
    for (int64_t i = 0; i < 12288; ++i)
      y.push_back(l.arrays["Y"].getDouble(i));
    // Program 0 stored [0, 4096); program 1 trapped before its store.
    EXPECT_EQ(y[4095], 2.0 * (4095 % 17));
    EXPECT_EQ(y[4096], 4096 % 17);
    if (threads == 1) {
      first = r.trap->render();
      firstY = y;
    } else {
      EXPECT_EQ(r.trap->render(), first) << threads << " threads";
      EXPECT_EQ(y, firstY) << threads << " threads";
    }
  }
}

// Neighbours that meet at a chunk boundary without sharing an element, each
// updating its own tile in place and loading a neighbour's X (loads never
// race): no report, every element stored once.
TEST(Race, DisjointNeighboursAtAChunkBoundaryAreNotRaces) {
  Launch l(R"(__global__ void k(float *X, float *Y) {
  int off[4096] = get_program_id(0) * 4096 + (0 ... 4096);
  *(Y + off) = *(Y + off) * 2 + *(X + off + 1);
}
)");
  for (unsigned threads : {1u, 2u, 4u}) {
    l.buffer("X", DType::F32, {3 * 4096 + 1});
    l.buffer("Y", DType::F32, {3 * 4096});
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({3, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
    for (int64_t i = 0; i < 3 * 4096; ++i)
      ASSERT_EQ(l.arrays["Y"].getDouble(i), 2.0 * (i % 17) + (i + 1) % 17) << i;
    ASSERT_EQ(r.buffers.size(), 2u);
    EXPECT_EQ(r.buffers[1].stored, 3 * 4096);
    EXPECT_TRUE(r.buffers[1].unwritten.empty());
  }
}

// Two programs store the even and the odd elements of one range through
// masks: their intervals overlap, their elements do not. The overlap only
// makes the launch run again with the element-wise check, which finds no race.
TEST(Race, InterleavedMaskedProgramsAreNotRaces) {
  Launch l(R"(__global__ void k(float *X, float *Y) {
  int i[64] = 0 ... 64;
  bool m[64] = i % 2 == get_program_id(0);
  *?(m)(Y + i) = *?(m)(X + i);
}
)");
  for (unsigned threads : {1u, 2u}) {
    l.buffer("X", DType::F32, {64});
    HostArray &y = l.buffer("Y", DType::F32, {64});
    for (int64_t i = 0; i < 64; ++i)
      y.setDouble(i, -1);
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({2, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
    for (int64_t i = 0; i < 64; ++i)
      EXPECT_EQ(l.arrays["Y"].getDouble(i), i % 17) << i;
    EXPECT_EQ(r.buffers[1].stored, 64);
  }
}

// In place with overlapping tiles: program 1 loads Y[32], which program 0
// stored. The run that finds the overlap has already doubled every tile, so
// the buffer must be put back before the element-wise run: Y[0, 64) is
// 2y + 1 once, the rest untouched, for every thread count.
TEST(Race, InPlaceOverlapRunsAgainFromTheBuffersAsTheyWere) {
  const char *k = R"(__global__ void k(float *Y) {
  int off[64] = get_program_id(0) * 32 + (0 ... 64);
  *(Y + off) = *(Y + off) * 2 + 1;
}
)";
  std::string first;
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    Launch l(k);
    l.buffer("Y", DType::F32, {256});
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({7, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << threads;
    ASSERT_EQ(r.trap->kind, TrapKind::DataRace);
    EXPECT_TRUE(has(r.trap->message, "load of Y[32] by program (1, 0, 0) races with a store by "
                                     "program (0, 0, 0)"))
        << r.trap->message;
    for (int64_t i = 0; i < 256; ++i)
      ASSERT_EQ(l.arrays["Y"].getDouble(i), i < 64 ? 2.0 * (i % 17) + 1 : i % 17)
          << i << ", " << threads << " threads";
    if (threads == 1)
      first = r.trap->render();
    else
      EXPECT_EQ(r.trap->render(), first) << threads << " threads";
  }
}

// Program 0 stores to Y through a pointer from X (the layout puts Y 1088
// floats past X: X at 0x10000, 256 bytes, a 4 KiB gap, Y at 0x11100), which
// the kernel's text does not show; program 1 loads Y[0, 64). The race check
// trusts the text (Y is never stored to, so its loads need no keeping): the
// store must not land in Y. It traps out_of_bounds (pointer provenance)
// before anything is written or recorded, at any thread count.
TEST(Race, StoreThroughAPointerIntoAnotherBuffer) {
  Launch l(R"(__global__ void k(float *X, float *Y, int d) {
  int i[64] = 0 ... 64;
  if (get_program_id(0) == 0) {
    *(X + d + i) = 1.0;
  } else {
    *(X + i) = *(Y + i);
  }
}
)");
  for (unsigned threads : {1u, 2u}) {
    l.buffer("X", DType::F32, {64});
    l.buffer("Y", DType::F32, {64});
    l.scalar("d", 1088);
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({2, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << threads;
    ASSERT_EQ(r.trap->kind, TrapKind::OutOfBounds) << r.trap->message;
    EXPECT_EQ(r.trap->programId, (std::array<int64_t, 3>{0, 0, 0}));
    EXPECT_EQ(r.trap->message, "store of 4 bytes at 0x11100 (lane [0]) is inside 'Y' [0x11100, "
                               "0x11200), but the pointer comes from 'X' [0x10000, 0x10100)");
    EXPECT_EQ(l.arrays["Y"].getDouble(5), 5.0); // nothing was stored to Y
  }
}

//===-- logged mode against the element-wise check (review of issue 32) -------------===//

// Runs `l` (arrays set up by `setup`) at 1, 2, 3 and 8 threads in logged mode
// and once with the access map on (which always uses the element-wise
// cells): the status, the report, every buffer's bytes and its coverage must
// be the same in every run. Returns the element-wise run's result.
RunResult sameAsElementWise(const char *text, std::array<int64_t, 3> grid,
                            const std::function<void(Launch &)> &setup) {
  auto bytesOf = [](Launch &l) {
    std::map<std::string, std::vector<uint8_t>> b;
    for (auto &[name, a] : l.arrays)
      b[name].assign(a.bytes(), a.bytes() + a.byteCount());
    return b;
  };
  auto text2 = [](const RunResult &r) {
    return r.trap ? r.trap->render() : r.status == RunResult::Status::Ok ? "ok" : r.error;
  };
  Launch ref(text);
  setup(ref);
  tc::RunOptions o = checked();
  o.accessMap = true;
  RunResult want = ref.run(grid, o);
  auto wantBytes = bytesOf(ref);
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    Launch l(text);
    setup(l);
    tc::RunOptions lo = checked();
    lo.threads = threads;
    RunResult r = l.run(grid, lo);
    EXPECT_EQ(r.status, want.status) << threads << " threads";
    EXPECT_EQ(text2(r), text2(want)) << threads << " threads";
    EXPECT_TRUE(bytesOf(l) == wantBytes) << threads << " threads";
    EXPECT_EQ(r.buffers.size(), want.buffers.size());
    for (size_t i = 0; i < std::min(r.buffers.size(), want.buffers.size()); ++i) {
      EXPECT_EQ(r.buffers[i].stored, want.buffers[i].stored) << i << ", " << threads;
      EXPECT_EQ(r.buffers[i].unwritten, want.buffers[i].unwritten) << i << ", " << threads;
    }
  }
  return want;
}

// One array passed as both X and Y: program 0 loads X[1, 65), program 1
// stores Y[64, 128); element 64 is loaded by one and stored by the other.
TEST(RaceLogged, OneArrayPassedTwiceRaces) {
  const char *k = R"(__global__ void k(float *X, float *Y) {
  int off[64] = get_program_id(0) * 64 + (0 ... 64);
  *(Y + off) = *(X + off + 1) * 2;
}
)";
  RunResult r = sameAsElementWise(k, {4, 1, 1}, [](Launch &l) {
    HostArray &a = l.buffer("X", DType::F32, {257});
    l.args.setBuffer("Y", &a);
  });
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  ASSERT_EQ(r.trap->kind, TrapKind::DataRace);
  EXPECT_EQ(r.trap->programId, (std::array<int64_t, 3>{1, 0, 0}));
  EXPECT_TRUE(has(r.trap->message, "[64] by program (1, 0, 0) races with a load by program "
                                   "(0, 0, 0)"))
      << r.trap->message;
}

// A store-store race made inside a loop: program p stores [63p, 63p + 64) in
// four steps of 16, so program 1's first step meets program 0's last at 63.
TEST(RaceLogged, StoreStoreRaceInsideALoop) {
  const char *k = R"(__global__ void k(float *Y) {
  int pid = get_program_id(0);
  for (int j = 0; j < 64; j += 16) {
    int off[16] = pid * 63 + j + (0 ... 16);
    *(Y + off) = 1.0 + pid;
  }
}
)";
  RunResult r =
      sameAsElementWise(k, {3, 1, 1}, [](Launch &l) { l.buffer("Y", DType::F32, {200}); });
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  ASSERT_EQ(r.trap->kind, TrapKind::DataRace);
  EXPECT_EQ(r.trap->programId, (std::array<int64_t, 3>{1, 0, 0}));
  EXPECT_EQ(r.trap->lane, 0);
  EXPECT_TRUE(has(r.trap->message, "store to Y[63] by program (1, 0, 0) races with a store by "
                                   "program (0, 0, 0)"))
      << r.trap->message;
}

// Masked stores whose active lanes first meet inside the tiles: program 0
// stores the odd elements of [0, 64), program 1 those with i % 3 == 2; both
// store element 5 (program 1's lane 5).
TEST(RaceLogged, MaskedStoresMeetingInTheMiddle) {
  const char *k = R"(__global__ void k(float *Y) {
  int i[64] = 0 ... 64;
  bool m[64] = (i + 1) % (2 + get_program_id(0)) == 0;
  *?(m)(Y + i) = 7.0;
}
)";
  RunResult r = sameAsElementWise(k, {2, 1, 1}, [](Launch &l) { l.buffer("Y", DType::F32, {64}); });
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  ASSERT_EQ(r.trap->kind, TrapKind::DataRace);
  EXPECT_EQ(r.trap->lane, 5);
  EXPECT_TRUE(has(r.trap->message, "store to Y[5] by program (1, 0, 0) races with a store by "
                                   "program (0, 0, 0)"))
      << r.trap->message;
}

// Coverage in logged mode for 1-, 2- and 8-byte elements and buffers of 130
// elements (not a multiple of a 64-element word): program p stores
// [64p, 64p + 64) of A (unmasked: one run) and of B, C, D (lane 63 masked
// off); the grid of 2 leaves 128 and 129. No race.
TEST(RaceLogged, CoverageOfSmallElementsAtWordBoundaries) {
  const char *k = R"(__global__ void k(char *A, char *B, short *C, long *D) {
  int i[64] = 0 ... 64;
  int off[64] = get_program_id(0) * 64 + i;
  bool m[64] = i != 63;
  *(A + off) = (char)5;
  *?(m)(B + off) = (char)6;
  *?(m)(C + off) = (short)7;
  *?(m)(D + off) = (long)8;
}
)";
  RunResult r = sameAsElementWise(k, {2, 1, 1}, [](Launch &l) {
    l.buffer("A", DType::I8, {130});
    l.buffer("B", DType::I8, {130});
    l.buffer("C", DType::I16, {130});
    l.buffer("D", DType::I64, {130});
  });
  ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
  ASSERT_EQ(r.buffers.size(), 4u);
  using Ranges = std::vector<std::pair<int64_t, int64_t>>;
  EXPECT_EQ(r.buffers[0].stored, 128);
  EXPECT_EQ(r.buffers[0].unwritten, (Ranges{{128, 129}}));
  for (int b = 1; b < 4; ++b) {
    EXPECT_EQ(r.buffers[b].stored, 126) << b;
    EXPECT_EQ(r.buffers[b].unwritten, (Ranges{{63, 63}, {127, 129}})) << b;
  }
  // Coverage alone (no race check) gives the same.
  for (unsigned threads : {1u, 2u}) {
    Launch l(k);
    l.buffer("A", DType::I8, {130});
    l.buffer("B", DType::I8, {130});
    l.buffer("C", DType::I16, {130});
    l.buffer("D", DType::I64, {130});
    tc::RunOptions o;
    o.raceCheck = false;
    o.threads = threads;
    RunResult c = l.run({2, 1, 1}, o);
    ASSERT_EQ(c.status, RunResult::Status::Ok);
    EXPECT_EQ(c.buffers[0].unwritten, (Ranges{{128, 129}}));
    for (int b = 1; b < 4; ++b)
      EXPECT_EQ(c.buffers[b].unwritten, (Ranges{{63, 63}, {127, 129}})) << b;
  }
}

// Two views of one storage at different offsets (as Python passes a slice:
// the whole storage with an origin): X from element 0, Y from element 64.
// Program 0 stores Y[0, 64), storage [64, 128); program 1 loads X[64, 128),
// the same elements: a race on storage element 64. The report names each
// access through the parameter whose pointer made it, counted from that
// parameter's own pointer, as the kernel's text indexes it: the load of
// X[64], the store of Y[0] (before, both were named by the buffer's first
// parameter with the element counted from the storage's start, so Y's store
// read "X[64]", an element Y's text never indexed).
TEST(RaceLogged, ViewsOfOneStorageAtDifferentOffsets) {
  const char *k = R"(__global__ void k(float *X, float *Y) {
  int off[64] = get_program_id(0) * 64 + (0 ... 64);
  *(Y + off) = *(X + off) + 1;
}
)";
  RunResult r = sameAsElementWise(k, {2, 1, 1}, [](Launch &l) {
    HostArray &st = l.buffer("S", DType::F32, {256});
    l.args = tc::LaunchArgs();
    for (const char *name : {"X", "Y"}) {
      HostArray &v = l.arrays[name];
      v.dtype = DType::F32;
      v.shape = {256};
      v.external = st.bytes();
      v.externalBytes = st.byteCount();
      v.origin = std::string(name) == "Y" ? 64 * 4 : 0;
      l.args.setBuffer(name, &v);
    }
  });
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  ASSERT_EQ(r.trap->kind, TrapKind::DataRace);
  EXPECT_EQ(r.trap->programId, (std::array<int64_t, 3>{1, 0, 0}));
  EXPECT_EQ(r.trap->lane, 0);
  EXPECT_TRUE(has(r.trap->message, "load of X[64] by program (1, 0, 0) races with a store by "
                                   "program (0, 0, 0)"))
      << r.trap->message;
  ASSERT_EQ(r.trap->notes.size(), 1u);
  EXPECT_EQ(r.trap->notes[0].text, "program (0, 0, 0) stored Y[0] here");
}

// A log past its size limit (64 threads: 65536 intervals each). Program 0
// stores every other element of Y[0, 133120): 66560 intervals that cannot
// merge, so the last ones are not logged; program 63 stores the very last,
// Y[133118]. The race is found only because the overflow makes the launch
// run the element-wise check; 1 thread (a limit of 4 Mi) logs it all.
TEST(RaceLogged, LogPastItsLimitRunsTheElementWiseCheck) {
  const char *k = R"(__global__ void k(float *Y, int last) {
  int pid = get_program_id(0);
  if (pid == 0) {
    for (int j = 0; j < 65; j += 1) {
      int off[1024] = (j * 1024 + (0 ... 1024)) * 2;
      *(Y + off) = 1.0;
    }
  }
  if (pid == 63) {
    *(Y + last) = 2.0;
  }
}
)";
  for (unsigned threads : {64u, 1u}) {
    Launch l(k);
    l.buffer("Y", DType::F32, {133120});
    l.scalar("last", 133118);
    tc::RunOptions o = checked();
    o.threads = threads;
    RunResult r = l.run({64, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Trapped) << threads;
    ASSERT_EQ(r.trap->kind, TrapKind::DataRace);
    EXPECT_EQ(r.trap->programId, (std::array<int64_t, 3>{63, 0, 0}));
    EXPECT_TRUE(has(r.trap->message, "store to Y[133118] by program (63, 0, 0) races with a "
                                     "store by program (0, 0, 0)"))
        << r.trap->message;
    EXPECT_EQ(l.arrays["Y"].getDouble(133118), 1.0) << threads; // program 63 did not store
    EXPECT_EQ(l.arrays["Y"].getDouble(133119), 133119 % 17) << threads;
  }
}

//===-- coverage and the access map -------------------------------------------------===//

const char *kCopy = R"(__global__ void copy(float *X, float *Y, int N) {
  int off[8] = get_program_id(0) * 8 + (0 ... 8);
  bool m[8] = off < N;
  *?(m)(Y + off) = *?(m)(X + off);
}
)";

TEST(Coverage, TooSmallGridLeavesATail) {
  Launch l(kCopy);
  l.buffer("X", DType::F32, {100});
  l.buffer("Y", DType::F32, {100});
  l.scalar("N", 100);
  RunResult r = l.run({12, 1, 1}); // 96 elements: 96..99 never stored
  ASSERT_EQ(r.status, RunResult::Status::Ok);
  ASSERT_EQ(r.buffers.size(), 2u);
  const tc::BufferAccess &y = r.buffers[1];
  EXPECT_EQ(y.name, "Y");
  EXPECT_EQ(y.elements, 100);
  EXPECT_EQ(y.stored, 96);
  ASSERT_EQ(y.unwritten.size(), 1u);
  EXPECT_EQ(y.unwritten[0], (std::pair<int64_t, int64_t>{96, 99}));
  EXPECT_EQ(tc::describeUnwritten(y), "Y: 4 of 100 elements never written (96..99)");
  EXPECT_EQ(tc::describeUnwritten(r.buffers[0]), ""); // X: only loaded
  EXPECT_EQ(r.buffers[0].stored, 0);
  EXPECT_EQ(r.buffers[0].unwritten, (std::vector<std::pair<int64_t, int64_t>>{{0, 99}}));
  // The same from the cheap coverage (no race check, no access map).
  tc::RunOptions cheap;
  cheap.raceCheck = false;
  RunResult light = l.run({12, 1, 1}, cheap);
  ASSERT_EQ(light.buffers.size(), 2u);
  EXPECT_EQ(light.buffers[1].stored, 96);
  EXPECT_EQ(light.buffers[1].unwritten, y.unwritten);
  EXPECT_EQ(light.buffers[0].stored, 0);
  EXPECT_EQ(light.buffers[0].unwritten, r.buffers[0].unwritten);
  // The full grid covers everything.
  RunResult full = l.run({13, 1, 1});
  EXPECT_EQ(full.buffers[1].stored, 100);
  EXPECT_EQ(tc::describeUnwritten(full.buffers[1]), "");
}

// The never-written ranges are read from the coverage bitmap a run of
// words or a run of bits at a time: runs that start and end inside a
// 64-element word, fill whole words, cross words and the 4096-element
// chunks, and end at the buffer's last element, the same with the bitmap
// alone, the logged race check (1 and 3 threads) and the element-wise cells
// (the access map). Expected ranges: the zero runs of M, found here.
const char *kWhereSet = R"(__global__ void setWhere(int *M, int *Y) {
  int i[256] = get_program_id(0) * 256 + (0 ... 256);
  int k[256] = *(M + i);
  *?(k != 0)(Y + i) = k;
}
)";

TEST(Coverage, RunsOfBitsAcrossWordsAndChunks) {
  const int64_t n = 36 * 256; // 9216: three chunks, the last one partly
  Launch l(kWhereSet);
  HostArray &m = l.buffer("M", DType::I32, {n});
  l.buffer("Y", DType::I32, {n});
  // Alternating runs of stored (M != 0) and skipped elements of these lengths.
  const int64_t lengths[] = {1, 2, 3, 61, 64, 64, 65, 130, 7, 500, 1, 4096, 33, 128, 2000};
  int64_t e = 0;
  bool stored = true;
  for (size_t r = 0; e < n; ++r, stored = !stored)
    for (int64_t k = 0; k < lengths[r % std::size(lengths)] && e < n; ++k, ++e)
      m.setDouble(e, stored ? 1 + e % 5 : 0);
  m.setDouble(n - 1, 0); // the last element never stored
  std::vector<std::pair<int64_t, int64_t>> gaps;
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (m.getDouble(i) != 0) {
      ++count;
      continue;
    }
    if (!gaps.empty() && gaps.back().second == i - 1)
      gaps.back().second = i;
    else
      gaps.emplace_back(i, i);
  }
  ASSERT_GT(gaps.size(), 10u);
  tc::RunOptions bitmap;
  bitmap.raceCheck = false;
  tc::RunOptions logged1 = checked(), logged3 = checked(), cells = checked();
  logged3.threads = 3;
  cells.accessMap = true;
  for (const tc::RunOptions &o : {bitmap, logged1, logged3, cells}) {
    RunResult r = l.run({36, 1, 1}, o);
    ASSERT_EQ(r.status, RunResult::Status::Ok) << (r.trap ? r.trap->render() : r.error);
    ASSERT_EQ(r.buffers.size(), 2u);
    EXPECT_EQ(r.buffers[1].stored, count) << o.threads << o.raceCheck << o.accessMap;
    EXPECT_EQ(r.buffers[1].unwritten, gaps) << o.threads << o.raceCheck << o.accessMap;
    EXPECT_EQ(r.buffers[0].stored, 0);
  }
}

TEST(Coverage, SeveralGapsAreListed) {
  tc::BufferAccess b;
  b.name = "Z";
  b.elements = 20;
  b.stored = 14;
  b.unwritten = {{0, 0}, {5, 6}, {10, 10}, {12, 12}, {18, 19}};
  EXPECT_EQ(tc::describeUnwritten(b, 4),
            "Z: 6 of 20 elements never written (0, 5..6, 10, 12, ...)");
}

TEST(AccessMap, PageHoldsEveryBufferAndItsPrograms) {
  Launch l(kCopy);
  l.buffer("X", DType::F32, {20});
  l.buffer("Y", DType::F32, {20});
  l.scalar("N", 20);
  tc::RunOptions o = checked();
  o.accessMap = true;
  RunResult r = l.run({2, 1, 1}, o);
  ASSERT_EQ(r.status, RunResult::Status::Ok);
  const tc::BufferAccess &y = r.buffers[1];
  ASSERT_EQ(y.writer.size(), 20u);
  for (int e = 0; e < 20; ++e)
    EXPECT_EQ(y.writer[static_cast<size_t>(e)], e < 8 ? 0 : e < 16 ? 1 : -1) << e;
  EXPECT_EQ(r.buffers[0].reader[9], 1);
  tc::AccessMapLaunch m{"copy", "copy.tc <with <tags>>", {2, 1, 1}, r.buffers};
  std::string page = tc::renderAccessMap(m);
  EXPECT_TRUE(page.starts_with("<!DOCTYPE html>"));
  EXPECT_TRUE(has(page, "</html>"));
  // Self-contained: no external resources.
  EXPECT_FALSE(has(page, "src=")) << "no external scripts";
  EXPECT_FALSE(has(page, "href=")) << "no external styles";
  EXPECT_TRUE(has(page, "&lt;with &lt;tags&gt;&gt;"));
  // One section and two canvases per buffer.
  EXPECT_TRUE(has(page, "<section class=\"buffer\" id=\"buffer-X\">"));
  EXPECT_TRUE(has(page, "<section class=\"buffer\" id=\"buffer-Y\">"));
  for (const char *c : {"c0writer", "c0reader", "c1writer", "c1reader"})
    EXPECT_TRUE(has(page, std::string("<canvas id=\"") + c + "\">")) << c;
  // The data: Y stored by program 0 (8 elements), 1 (8), none (4), as runs.
  EXPECT_TRUE(has(page, "\"name\":\"Y\",\"shape\":[20],\"elements\":20,\"stored\":16,"
                        "\"unwritten\":[[16,19]],\"writer\":[0,8,1,8,-1,4]"))
      << page;
  EXPECT_TRUE(has(page, "Y: 4 of 20 elements never written (16..19)"));
}

TEST(AccessMap, OutOfBoundsAttemptIsMarked) {
  Launch l(R"(__global__ void copy(float *X, float *Y) {
  int off[8] = get_program_id(0) * 8 + (0 ... 8);
  *(Y + off) = *(X + off);
}
)");
  l.buffer("X", DType::F32, {24});
  l.buffer("Y", DType::F32, {20});
  tc::RunOptions o = checked();
  o.accessMap = true;
  RunResult r = l.run({3, 1, 1}, o);
  ASSERT_EQ(r.status, RunResult::Status::Trapped);
  EXPECT_EQ(r.trap->kind, TrapKind::OutOfBounds);
  const tc::BufferAccess &y = r.buffers[1];
  ASSERT_EQ(y.outOfBounds.size(), 1u);
  EXPECT_EQ(y.outOfBounds[0].program, 2);
  EXPECT_EQ(y.outOfBounds[0].element, 20); // lane 4 of program 2: the first past the end
  EXPECT_EQ(y.outOfBounds[0].line, 3u);
  tc::AccessMapLaunch m{"copy", "", {3, 1, 1}, r.buffers};
  EXPECT_TRUE(has(tc::renderAccessMap(m), "\"oob\":[[2,20,3]]"));
}

} // namespace
