// checkAsyncSchedule (codegen/AsyncSchedule.h): the pipelines' schedules as
// the lowering emits them (values pipeline, matmul loops on cp.async, on the
// TMA, int8's transposed b) pass; each way of getting one wrong that a GPU
// shows only by chance (a stage refilled too early, a wait one group short, no
// proxy fence, no barrier, no wait at the exit, an mbarrier wait of the wrong
// parity or too late, ...) is reported; and the compiled attention and matmul
// kernels pass at every stage count and warp count.

#include "codegen/AsyncSchedule.h"
#include "SourceRoot.h"
#include "codegen/Codegen.h"
#include "frontend/Compiler.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <tuple>

using namespace tc;
using codegen::AsyncEvent;
using codegen::AsyncSchedule;
using codegen::checkAsyncSchedule;
using K = AsyncEvent::Kind;

namespace {

AsyncEvent ev(K kind, int64_t n = 0) {
  AsyncEvent e{kind};
  if (kind == K::Copy)
    e.stage = e.dataTrip = e.guardTrip = n;
  if (kind == K::CopyWait || kind == K::ReadWait)
    e.pending = n;
  return e;
}
AsyncEvent wgmmaRead() {
  AsyncEvent e{K::Read};
  e.async = true;
  return e;
}

/// A schedule of `stages` stages whose prologue copies the first `ahead`
/// trips' tiles, after a barrier (the trip and exit to be filled in).
AsyncSchedule withPrologue(int64_t stages, int64_t ahead) {
  AsyncSchedule s;
  s.stages = stages;
  s.prologue.push_back(ev(K::Barrier));
  for (int64_t j = 0; j < ahead; ++j) {
    s.prologue.push_back(ev(K::Copy, j));
    s.prologue.push_back(ev(K::CopyCommit));
  }
  return s;
}

/// The mma.sync form: copies `ahead` trips ahead, each trip waits for its
/// own group (wait_group ahead - 1), syncs, refills, then ldmatrix reads.
AsyncSchedule ldmatrixPipe(int64_t stages, int64_t ahead, int64_t pending) {
  AsyncSchedule s = withPrologue(stages, ahead);
  s.trip = {ev(K::CopyWait, pending), ev(K::Barrier), ev(K::Copy, ahead),
            ev(K::CopyCommit),        ev(K::Read),    ev(K::Read)};
  s.exit = {ev(K::CopyWaitAll)};
  return s;
}

/// The wgmma form with P @ V's wait deferred to the next trip (Q @ K^T's
/// wait_group 0 covers it): stages = ahead + 2.
AsyncSchedule wgmmaDeferred(int64_t stages, int64_t ahead, bool fence = true) {
  AsyncSchedule s = withPrologue(stages, ahead);
  s.trip.push_back(ev(K::CopyWait, ahead - 1));
  if (fence)
    s.trip.push_back(ev(K::Fence));
  for (AsyncEvent e : {ev(K::Barrier), ev(K::Copy, ahead), ev(K::CopyCommit), wgmmaRead(),
                       ev(K::ReadCommit), ev(K::ReadWait, 0), wgmmaRead(), ev(K::ReadCommit)})
    s.trip.push_back(e);
  s.exit = {ev(K::CopyWaitAll), ev(K::ReadWait, 0)};
  return s;
}

std::unique_ptr<ir::Module> lowerSource(const std::string &source) {
  Compilation c{CompileOptions{}};
  std::ostringstream diags;
  c.diags().setOutput(&diags);
  c.addMainSource("attention.tc", source);
  bool ok = c.run(Stage::Lower);
  EXPECT_TRUE(ok) << diags.str() << c.internalError();
  return ok ? c.takeModule() : nullptr;
}

/// examples/<name> with `defines` (#define lines) before it.
std::string exampleWith(const std::string &name, const std::string &defines) {
  std::string path = test::examplePath(name);
  EXPECT_FALSE(path.empty()) << test::sourceRootProblem();
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return defines + ss.str();
}

/// src compiled as the GPU backend compiles (pointers 16-byte aligned: whole
/// allocations) for sm_<sm>, `stages` stages and `warps` warps.
codegen::Result compileExample(const std::string &src, unsigned sm, unsigned stages,
                               unsigned warps) {
  auto m = lowerSource(src);
  if (!m)
    return codegen::Result{std::nullopt, "the source does not compile"};
  codegen::Options o;
  o.alignedPointers = true;
  o.sm = sm;
  o.numStages = stages;
  o.numWarps = warps;
  return codegen::compile(*m, *m->functions.front(), o);
}

} // namespace

TEST(AsyncSchedule, TheLoweringsSchedulesPass) {
  for (int64_t stages : {2, 3, 4, 5})
    EXPECT_EQ(checkAsyncSchedule(ldmatrixPipe(stages, stages - 1, stages - 2)), "") << stages;
  for (int64_t stages : {3, 4, 5})
    EXPECT_EQ(checkAsyncSchedule(wgmmaDeferred(stages, stages - 2)), "") << stages;
  // Less ahead than the stages allow is slower, not wrong.
  EXPECT_EQ(checkAsyncSchedule(ldmatrixPipe(4, 2, 1)), "");
  EXPECT_EQ(checkAsyncSchedule(wgmmaDeferred(5, 2)), "");
}

TEST(AsyncSchedule, AStageRefilledWhileAnotherWarpgroupReadsIt) {
  // values-wgmma-refill: the deferred P @ V of trip i - 1 may still read the
  // stage trip i's copies go into.
  std::string h = checkAsyncSchedule(wgmmaDeferred(4, 3));
  EXPECT_NE(h.find("wgmma read of stage"), std::string::npos) << h;
  EXPECT_NE(h.find("may overlap the copy of trip"), std::string::npos) << h;
  // The same distance without the deferral is fine: every read waited for.
  AsyncSchedule s = wgmmaDeferred(4, 3);
  s.trip.push_back(ev(K::ReadWait, 0));
  EXPECT_EQ(checkAsyncSchedule(s), "");
}

TEST(AsyncSchedule, AWaitOneGroupShort) {
  // values-pipeline-wait: wait_group S - 1 leaves the trip's own copies in flight.
  std::string h = checkAsyncSchedule(ldmatrixPipe(3, 2, 2));
  EXPECT_NE(h.find("ldmatrix read of stage"), std::string::npos) << h;
  h = checkAsyncSchedule(wgmmaDeferred(4, 2));
  EXPECT_EQ(h, "");
  AsyncSchedule s = wgmmaDeferred(4, 2);
  s.trip[0].pending = 2;
  EXPECT_NE(checkAsyncSchedule(s), "");
}

TEST(AsyncSchedule, NoProxyFenceBeforeTheTensorCoresRead) {
  std::string h = checkAsyncSchedule(wgmmaDeferred(4, 2, /*fence=*/false));
  EXPECT_NE(h.find("no fence.proxy.async"), std::string::npos) << h;
}

TEST(AsyncSchedule, NoBarrierInTheTrip) {
  AsyncSchedule s = ldmatrixPipe(3, 2, 1);
  s.trip.erase(s.trip.begin() + 1);
  EXPECT_NE(checkAsyncSchedule(s), "");
}

// The stages' memory was in use before the loop (another loop's stages, read
// by wgmma until each warpgroup's own wait; a value staged through shared
// memory): a copy of the prologue before any barrier may land while another
// warp still uses it.
TEST(AsyncSchedule, NoBarrierAtTheLoopsStart) {
  AsyncSchedule s = wgmmaDeferred(4, 2);
  s.prologue.erase(s.prologue.begin());
  std::string h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("the copy of trip 0's tiles into stage 0 (issued in the prologue) may land "
                   "while another warp still reads or writes that memory as it did before the "
                   "loop"),
            std::string::npos)
      << h;
  // The barrier after the first copy is too late for it.
  s.prologue.insert(s.prologue.begin() + 2, ev(K::Barrier));
  EXPECT_NE(checkAsyncSchedule(s), "");
  // With it first, the schedule passes again.
  EXPECT_EQ(checkAsyncSchedule(wgmmaDeferred(4, 2)), "");
}

TEST(AsyncSchedule, InFlightAfterTheLoop) {
  // Copies for trips past the last are not issued, so the mma.sync form has
  // none in flight at the exit even without its wait_all.
  AsyncSchedule s = ldmatrixPipe(3, 2, 1);
  s.exit.clear();
  EXPECT_EQ(checkAsyncSchedule(s), "");
  // The deferred P @ V of the last trip is, without the exit's wait.
  s = wgmmaDeferred(4, 2);
  s.exit.pop_back();
  std::string h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("wgmma read of stage"), std::string::npos) << h;
  EXPECT_NE(h.find("in flight after the loop"), std::string::npos) << h;
  // So is a copy issued without a guard and never waited for.
  s = ldmatrixPipe(3, 2, 1);
  s.exit.clear();
  s.trip[2].guardTrip = 0;
  h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("in flight after the loop"), std::string::npos) << h;
  // And the predicated copies (without option copy-guard): issued in every
  // trip, zero-filled past the end; the exit's wait_all retires them.
  s = ldmatrixPipe(3, 2, 1);
  s.trip[2].always = true;
  EXPECT_EQ(checkAsyncSchedule(s), "");
  s.exit.clear();
  h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("the copy of trip 2's tiles into stage 2 (issued in trip 0) may still be in "
                   "flight after the loop"),
            std::string::npos)
      << h;
}

TEST(AsyncSchedule, StagesAndTripsMismatched) {
  // A stage index past the last.
  AsyncSchedule s = ldmatrixPipe(3, 2, 1);
  s.trip[2].stage = 6;
  std::string h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("copies into stage 3 of 3"), std::string::npos) << h;
  // Copies one trip ahead, waited for at once: trip i + 2's tiles go into
  // the stage trip i + 1 reads, every access ordered, the content wrong.
  s = ldmatrixPipe(3, 1, 0);
  s.trip[2].dataTrip = 2;
  h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("not its own trip's"), std::string::npos) << h;
  // Copies switched off a trip early: the last trip reads a stage nobody filled.
  s = ldmatrixPipe(3, 2, 1);
  s.trip[2].guardTrip = 3;
  h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("reads no completed copy"), std::string::npos) << h;
  EXPECT_NE(checkAsyncSchedule(AsyncSchedule{}), "");
}

TEST(AsyncSchedule, TheExitStoresIntoTheStagesAfterEverything) {
  // A matmul loop's exit stages the fragments over the stages' memory: after
  // the last wgmma's wait, the copies' wait_all and a barrier.
  AsyncSchedule s = withPrologue(3, 2);
  s.trip = {ev(K::CopyWait, 1), ev(K::Fence),   ev(K::Barrier), wgmmaRead(),      ev(K::ReadCommit),
            ev(K::ReadWait, 1), ev(K::Barrier), ev(K::Copy, 2), ev(K::CopyCommit)};
  s.exit = {ev(K::ReadWait, 0), ev(K::CopyWaitAll), ev(K::Barrier), ev(K::Store)};
  EXPECT_EQ(checkAsyncSchedule(s), "");
  AsyncSchedule early = s; // the store before the barrier
  early.exit = {ev(K::ReadWait, 0), ev(K::CopyWaitAll), ev(K::Store)};
  std::string h = checkAsyncSchedule(early);
  EXPECT_NE(h.find("stores into the stages while"), std::string::npos) << h;
  AsyncSchedule noWait = s; // the last trip's products never waited for
  noWait.exit.erase(noWait.exit.begin());
  EXPECT_NE(checkAsyncSchedule(noWait), "");
  AsyncSchedule mid = withPrologue(3, 2); // a store inside the trip: later trips read it
  mid.trip = {ev(K::CopyWait, 1), ev(K::Barrier), ev(K::Copy, 2), ev(K::CopyCommit), ev(K::Read),
              ev(K::CopyWaitAll), ev(K::Barrier), ev(K::Store),   ev(K::Barrier)};
  mid.exit = {ev(K::CopyWaitAll)};
  h = checkAsyncSchedule(mid);
  EXPECT_NE(h.find("stored over the stages"), std::string::npos) << h;
  AsyncSchedule refill = s; // wgmma-stage: the copies into the stage being read
  refill.trip[7] = ev(K::Copy, 3);
  refill.stages = 3;
  h = checkAsyncSchedule(refill);
  EXPECT_NE(h, "") << h;
}

/// The TMA form of a wgmma matmul loop (LowerTma.cpp) with the products' wait
/// deferred (3 or more stages, `ahead` = stages - 1 trips ahead): thread 0
/// sets up the mbarriers between two barriers, thread 0's fills of the first
/// trips; a trip waits on its stage's mbarrier, issues its wgmma (wait_group 1
/// retires the trip before's), a barrier, then the refill of the stage the
/// trip before read; the exit invalidates the mbarriers past a barrier.
AsyncSchedule tmaPipe(int64_t stages, int64_t ahead) {
  AsyncSchedule s;
  s.stages = stages;
  s.prologue = {ev(K::Fence), ev(K::Barrier), ev(K::TmaInit), ev(K::Barrier)};
  auto fill = [](int64_t n) {
    AsyncEvent e{K::TmaFill};
    e.stage = e.dataTrip = e.guardTrip = n;
    return e;
  };
  for (int64_t j = 0; j < ahead; ++j)
    s.prologue.push_back(fill(j));
  s.trip = {ev(K::TmaWait),     wgmmaRead(),    ev(K::ReadCommit),
            ev(K::ReadWait, 1), ev(K::Barrier), fill(ahead)};
  s.exit = {ev(K::Barrier),     ev(K::TmaInval), ev(K::ReadWait, 0),
            ev(K::CopyWaitAll), ev(K::Barrier),  ev(K::Store)};
  return s;
}

TEST(AsyncSchedule, TheTmaFormPasses) {
  for (int64_t stages : {3, 4, 5})
    EXPECT_EQ(checkAsyncSchedule(tmaPipe(stages, stages - 1)), "") << stages;
  // Two stages: the products wait for themselves, the barrier before the refill.
  AsyncSchedule two = tmaPipe(2, 1);
  two.trip = {ev(K::TmaWait), ev(K::Barrier),    two.trip[5],
              wgmmaRead(),    ev(K::ReadCommit), ev(K::ReadWait, 0)};
  EXPECT_EQ(checkAsyncSchedule(two), "");
  // A second wait on the same phase returns at once: slower, not wrong.
  AsyncSchedule again = tmaPipe(3, 2);
  again.trip.insert(again.trip.begin() + 1, ev(K::TmaWait));
  EXPECT_EQ(checkAsyncSchedule(again), "");
}

TEST(AsyncSchedule, TheTmaRefillWithoutTheBarrier) {
  // tma-refill-barrier: thread 0 refills the stage trip i - 1 read right after its own
  // wgmma.wait_group 1; a slower thread may not have waited on that stage yet, or its
  // warpgroup's wgmma may still read it.
  AsyncSchedule s = tmaPipe(3, 2);
  s.trip.erase(s.trip.begin() + 4);
  std::string h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("may land before another thread's wait on the stage's mbarrier"),
            std::string::npos)
      << h;
  // Refilled one trip too early (into the stage the trip's own wgmma may still read).
  s = tmaPipe(3, 3);
  h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("trip 0's wgmma read of stage 0 may overlap the copy of trip 3's tiles"),
            std::string::npos)
      << h;
}

TEST(AsyncSchedule, TheTmaWaitsParity) {
  // The other parity: with the fill in flight the wait returns at once.
  AsyncSchedule s = tmaPipe(3, 2);
  s.trip[0].otherParity = true;
  std::string h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("returns before the copy of trip 0's tiles into stage 0"), std::string::npos)
      << h;
  // The lowering's parity starting at 1, or flipping into the wrong stage's trips.
  s = tmaPipe(3, 2);
  s.tmaParity0 = 1;
  h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("with 1 trip, trip 0's wait on the mbarrier of stage 0 (parity 1) returns "
                   "before"),
            std::string::npos)
      << h;
  s = tmaPipe(3, 2);
  s.tmaFlipStage = 1;
  h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("trip 1's wait on the mbarrier of stage 1 (parity 1) returns before"),
            std::string::npos)
      << h;
  // With nothing in flight (a second wait in the trip) it never returns.
  s = tmaPipe(3, 2);
  AsyncEvent other{K::TmaWait};
  other.otherParity = true;
  s.trip.insert(s.trip.begin() + 1, other);
  h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("may never return"), std::string::npos) << h;
}

TEST(AsyncSchedule, TheTmaFillsMergeOrGoUnseen) {
  // Two fills of a stage with no wait between them in thread 0: one mbarrier phase.
  AsyncSchedule s = tmaPipe(3, 2);
  AsyncEvent twice{K::TmaFill};
  s.prologue.push_back(twice); // trip 0's tiles into stage 0 again
  std::string h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("may merge into the mbarrier phase of"), std::string::npos) << h;
  // No wait at all: nobody sees a fill land, so none is known to have landed by the exit.
  s = tmaPipe(3, 2);
  s.trip.erase(s.trip.begin());
  h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("may still be in flight after the loop"), std::string::npos) << h;
  // A fill for a trip past the last, unguarded: never observed, still landing after the loop.
  s = tmaPipe(3, 2);
  s.trip[5].guardTrip = 0;
  h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("may still be in flight after the loop"), std::string::npos) << h;
}

TEST(AsyncSchedule, TheTmaMbarriersLifetime) {
  // Filled before the barrier after their initialisation (another thread's wait may
  // come first), or before it at all.
  AsyncSchedule s = tmaPipe(3, 2);
  s.prologue.erase(s.prologue.begin() + 3);
  std::string h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("uses its stage's mbarrier before a barrier after its initialisation"),
            std::string::npos)
      << h;
  s = tmaPipe(3, 2);
  s.prologue.erase(s.prologue.begin() + 2);
  h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("before a barrier after its initialisation"), std::string::npos) << h;
  // Never invalidated (their memory is used again after the loop), or used after it.
  s = tmaPipe(3, 2);
  s.exit.erase(s.exit.begin() + 1);
  h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("never invalidated"), std::string::npos) << h;
  s = tmaPipe(3, 2);
  s.exit.push_back(ev(K::TmaWait));
  h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("uses an invalidated mbarrier"), std::string::npos) << h;
}

TEST(AsyncSchedule, TheTmaMbarriersInitialisedBeforeABarrier) {
  AsyncSchedule s = tmaPipe(3, 2);
  s.prologue.erase(s.prologue.begin() + 1); // fence, init, barrier, fills
  std::string h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("the stages' mbarriers are initialised while another warp may still use"),
            std::string::npos)
      << h;
}

TEST(AsyncSchedule, TheTmaFillsWithoutTheProxyFenceFirst) {
  AsyncSchedule s = tmaPipe(3, 2);
  s.prologue.erase(s.prologue.begin()); // barrier, init, barrier, fills
  std::string h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("writes through the async proxy after that memory's earlier generic-proxy "
                   "use (before the loop) without a fence.proxy.async"),
            std::string::npos)
      << h;
  // The fence after the first barrier still comes before the barrier before the fills.
  s.prologue.insert(s.prologue.begin() + 1, ev(K::Fence));
  EXPECT_EQ(checkAsyncSchedule(s), "");
}

TEST(AsyncSchedule, TheTmaMbarriersInvalidatedTooEarly) {
  // Without the barrier before it another thread may still spin on the last trip's wait.
  AsyncSchedule s = tmaPipe(3, 2);
  s.trip.erase(s.trip.begin() + 4); // (no barrier in the trip either: one segment)
  s.trip.pop_back();                // (and no refill: only the prologue's fills)
  s.exit.erase(s.exit.begin());
  std::string h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("the mbarriers are invalidated while another thread may still wait"),
            std::string::npos)
      << h;
}

/// An int8 wgmma matmul loop (3 stages, 2 ahead): every thread transposes the
/// trip's b from the stage's copied tiles (region 0) into the stage's second
/// region (a StageWrite), fences for the tensor cores, syncs; wgmma reads both
/// regions.
AsyncSchedule int8Pipe(bool fence = true, bool barrier = true) {
  AsyncSchedule s = withPrologue(3, 2);
  s.derivedRegion = true;
  AsyncEvent transposeRead{K::Read};
  transposeRead.region = 0;
  s.trip = {ev(K::CopyWait, 1), ev(K::Fence), ev(K::Barrier), transposeRead, ev(K::StageWrite)};
  if (fence)
    s.trip.push_back(ev(K::Fence));
  if (barrier)
    s.trip.push_back(ev(K::Barrier));
  for (AsyncEvent e : {wgmmaRead(), ev(K::ReadCommit), ev(K::ReadWait, 1), ev(K::Barrier),
                       ev(K::Copy, 2), ev(K::CopyCommit)})
    s.trip.push_back(e);
  s.exit = {ev(K::ReadWait, 0), ev(K::CopyWaitAll), ev(K::Barrier), ev(K::Store)};
  return s;
}

TEST(AsyncSchedule, TheInt8TransposedB) {
  EXPECT_EQ(checkAsyncSchedule(int8Pipe()), "");
  // int8-transpose-fence: generic-proxy writes the tensor cores read without the fence.
  std::string h = checkAsyncSchedule(int8Pipe(/*fence=*/false));
  EXPECT_NE(h.find("trip 0's wgmma read of stage 0 may not see trip 0's transposed write of "
                   "trip 0's b into stage 0: no fence.proxy.async"),
            std::string::npos)
      << h;
  // No barrier after the transposition: another warp's wgmma may read it half written.
  h = checkAsyncSchedule(int8Pipe(true, /*barrier=*/false));
  EXPECT_NE(h.find("may overlap trip 0's transposed write"), std::string::npos) << h;
  // The transposing reads and the writes are different regions: no false report between
  // them in one segment; but a transposition reading a copy still in flight is one.
  AsyncSchedule early = int8Pipe();
  early.trip[0].pending = 2;
  h = checkAsyncSchedule(early);
  EXPECT_NE(h.find("trip 0's transposing ld.shared read of stage 0"), std::string::npos) << h;
  // A transposition the lowering forgot to note: wgmma reads a region nobody wrote.
  AsyncSchedule forgot = int8Pipe();
  forgot.trip.erase(forgot.trip.begin() + 4);
  h = checkAsyncSchedule(forgot);
  EXPECT_NE(h.find("reads no transposed b (a barrier after the transposed write"),
            std::string::npos)
      << h;
}

TEST(AsyncSchedule, AReadWithoutAnyCopy) {
  // A lowering that forgot to note its copies: every read reads nothing.
  AsyncSchedule s;
  s.stages = 3;
  s.prologue = {ev(K::Barrier)};
  s.trip = {ev(K::CopyWait, 1), ev(K::Barrier), ev(K::Read)};
  s.exit = {ev(K::CopyWaitAll)};
  std::string h = checkAsyncSchedule(s);
  EXPECT_NE(h.find("trip 0's ldmatrix read of stage 0 reads no completed copy of its tiles"),
            std::string::npos)
      << h;
}

// The lowering's own schedules: the attention kernel (values pipeline on
// wgmma with the deferred wait on sm_90, on mma.sync on sm_80) at each
// stage and warp count compiles (a hazard would be an internal error).
TEST(AsyncSchedule, AttentionCompilesAtEveryStageCount) {
  for (int64_t d : {64, 128})
    for (unsigned sm : {80u, 90u})
      for (unsigned stages : {2u, 3u, 4u, 5u})
        for (unsigned warps : {4u, 8u}) {
          codegen::Result r = compileExample(
              exampleWith("attention.tc", "#define BLOCK_M 128\n#define BLOCK_N " +
                                              std::to_string(d == 64 ? 64 : 32) +
                                              "\n#define HEAD_DIM " + std::to_string(d) + "\n"),
              sm, stages, warps);
          EXPECT_TRUE(r.ok()) << "D=" << d << " sm_" << sm << " stages " << stages << " warps "
                              << warps << ": " << r.error;
          if (r.ok()) {
            EXPECT_NE(r.compiled->ptx.find("cp.async.wait_group"), std::string::npos);
          }
        }
}

// Causal attention's two loops (examples/attention_causal.tc): the second
// loop's stages are the first's memory, each loop's schedule checked with
// the other's use of it before its start.
TEST(AsyncSchedule, CausalAttentionsTwoLoopsCompile) {
  for (int64_t d : {64, 128})
    for (unsigned sm : {80u, 90u})
      for (unsigned stages : {2u, 3u, 4u})
        for (unsigned warps : {4u, 8u}) {
          codegen::Result r =
              compileExample(exampleWith("attention_causal.tc",
                                         "#define BLOCK_M 128\n#define BLOCK_N " +
                                             std::to_string(d == 64 ? 64 : 32) +
                                             "\n#define HEAD_DIM " + std::to_string(d) + "\n"),
                             sm, stages, warps);
          EXPECT_TRUE(r.ok()) << "D=" << d << " sm_" << sm << " stages " << stages << " warps "
                              << warps << ": " << r.error;
        }
}

// An `if` in the trip whose column sum goes through shared memory (barriers
// that may not run: the check does not count on them) keeps the pipeline.
TEST(AsyncSchedule, AttentionWithAnIfInItsTripCompiles) {
  std::string src =
      exampleWith("attention.tc", "#define BLOCK_M 128\n#define BLOCK_N 64\n#define HEAD_DIM 64\n");
  std::string at = "    m_i = m_ij;\n";
  size_t pos = src.find(at);
  ASSERT_NE(pos, std::string::npos);
  src.insert(pos + at.size(), "    if (start_n > N_CTX / 2) {\n"
                              "      float cs[HEAD_DIM] = acc[+, :];\n"
                              "      acc = acc + cs[newaxis, :] * 0.0f;\n"
                              "    }\n");
  for (unsigned sm : {80u, 90u})
    for (unsigned warps : {4u, 8u}) {
      codegen::Result r = compileExample(src, sm, 3, warps);
      ASSERT_TRUE(r.ok()) << "sm_" << sm << " warps " << warps << ": " << r.error;
      EXPECT_NE(r.compiled->ptx.find("cp.async.wait_group"), std::string::npos);
    }
}

// The matmul loops on cp.async (mma.sync on sm_80; wgmma on sm_90 at 4 warps,
// with wgmma.wait_group 1 from 3 stages) and on the TMA (8 warps on sm_90):
// every tile shape, warp and stage count compiles.
TEST(AsyncSchedule, MatmulLoopsCompileAtEveryStageCount) {
  int checked = 0, tma = 0;
  for (auto [tm, tn, tk] : {std::tuple{64, 64, 32}, {128, 128, 64}, {128, 256, 64}})
    for (unsigned sm : {80u, 90u})
      for (unsigned stages : {2u, 3u, 4u, 5u})
        for (unsigned warps : {4u, 8u}) {
          codegen::Result r = compileExample(
              exampleWith("matmul.tc", "#define TM " + std::to_string(tm) + "\n#define TN " +
                                           std::to_string(tn) + "\n#define TK " +
                                           std::to_string(tk) + "\n#define TYPE half\n"),
              sm, stages, warps);
          EXPECT_TRUE(r.ok()) << tm << "x" << tn << "x" << tk << " sm_" << sm << " stages "
                              << stages << " warps " << warps << ": " << r.error;
          if (r.ok() && r.compiled->ptx.find("cp.async.wait_group") != std::string::npos)
            ++checked;
          if (r.ok() && r.compiled->ptx.find("cp.async.bulk.tensor") != std::string::npos)
            ++tma;
        }
  EXPECT_GE(checked, 24); // the cp.async forms were among them
  EXPECT_GE(tma, 8);      // and the TMA's
}
