//===- AsyncSchedule.h - A pipelined loop's asynchronous copies and reads, checked ===//
//
// A loop whose operands stream through shared-memory stages (the values
// pipeline of attention loops, and the matmul loops on cp.async: copies S - 1
// or S - 2 trips ahead, read by ldmatrix or by wgmma) is correct only if every
// read sees the copy of its own trip, and no copy lands in a stage that some
// warp may still read. On a GPU such a race
// shows only when the timing does; the fuzzer cannot rely on it (the planted
// `values-wgmma-refill` ran 34,144 kernels on an H100 without a changed
// value). So the lowering records, as it emits them, the loop's asynchronous
// events (the prologue, one trip with stages and trips relative to its own,
// the exit), and checkAsyncSchedule replays them for every trip count up to
// 2 S + 3 under the weakest timing PTX allows:
//   - a cp.async copy lands at any time between its issue and the
//     cp.async.wait_group that retires its group in the issuing thread;
//   - a wgmma reads its stage at any time between its issue and the
//     wgmma.wait_group that retires its group; an ldmatrix reads at issue;
//   - another warp sees a retired copy only after a barrier that both pass
//     (bar.sync), and a wgmma (async proxy) only with a fence.proxy.async
//     between the retiring wait and that barrier.
// Two warps run the same events, so an event of one warp is ordered before an
// event of another exactly when a barrier lies between them: the check
// compares the barrier counts ("segments") of the two positions. It reports
// the first it finds, checking in this order: a stage index out of range (as
// the events are replayed); a copy or read still in flight after the exit; a
// copy (or the mbarriers' initialisation) before a barrier that follows the
// loop's start, which another warp's earlier use of that memory (another
// loop's stages, a value staged through shared memory) may overlap, and a TMA
// fill without a fence.proxy.async before that barrier (its async-proxy write
// after the generic-proxy use); a
// copy and a read of the same stage not ordered either way; two copies into
// one stage not ordered; a store into the stages' memory (a matmul loop's
// exit stores its fragments there) before every earlier copy and read is
// done; a read whose latest ordered write is not its own trip's copy (another
// trip's, a store's, or none). int8's b, transposed by every thread from the
// stage's tiles into a second region of the stage (StageWrite: complete at
// once, through the generic proxy) and read from there by wgmma, is checked
// the same way region by region: the transposing reads against the copies,
// the wgmma's reads against the copies and the transposed writes.
// The TMA's stages (LowerTma.cpp) are in the model too, with an mbarrier a
// stage:
//   - one thread (thread 0) issues a stage's fill (cp.async.bulk.tensor with
//     mbarrier.arrive.expect_tx, or the cp.async fallback that arrives when
//     it is done); the fill lands at any time after its issue, and its
//     landing completes the stage's next mbarrier phase;
//   - the mbarriers are initialised by thread 0 and used only past a barrier
//     after that;
//   - every thread waits on the stage's mbarrier (try_wait.parity with the
//     parity the lowering computes: AsyncSchedule::tmaParity0 and
//     tmaFlipStage). A wait returns once the
//     number of completed phases has the other parity, so it is exact only
//     when at most one fill of the stage is unobserved (issued, not seen
//     complete by an earlier wait), the parity is that fill's, and no later
//     fill can be issued before every thread's wait (thread 0 may run ahead
//     of the others up to the next barrier). Else the wait may return early
//     or never (a hang); both are reported. A wait makes every fill it
//     observes visible to the waiting thread, async proxy included, and
//     complete for every later event of thread 0 (program order);
//   - the mbarriers are invalidated (thread 0, at the exit) only after every
//     fill is observed and, past a barrier, no thread waits any more; a loop
//     with fills must invalidate them, and nothing uses them after that.
// The lowering notes no barrier or fence inside an `if` or a nested loop of
// the trip (it may not run), and refuses a copy or wait there (Lowerer::
// noteAsync). Shared memory outside the stages is outside the model. The lowering turns a report
// into an internal error, so the kernel fails to compile instead of racing; the fuzzer reports it
// as a gpu-compile failure, also with --compile-only.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tc::codegen {

/// One asynchronous event of a pipelined loop. In a trip, stages and trips are
/// relative to the trip's own (its stage is trip % stages); in the prologue,
/// absolute.
struct AsyncEvent {
  enum class Kind {
    Barrier,     // bar.sync of every thread
    Fence,       // fence.proxy.async.shared::cta
    Copy,        // cp.async of a stage's tiles (every thread its chunks)
    CopyCommit,  // cp.async.commit_group
    CopyWait,    // cp.async.wait_group pending
    CopyWaitAll, // cp.async.wait_all
    Read,        // a streamed `@` reads its stage (async: wgmma; else ldmatrix)
    ReadCommit,  // wgmma.commit_group
    ReadWait,    // wgmma.wait_group pending
    Store,       // every thread stores into the stages' memory (the exit's own use of it)
    StageWrite,  // every thread writes its part of a stage's second region (int8's b
                 // transposed from the stage's tiles), complete at once, generic proxy
    TmaInit,     // thread 0 initialises the stages' mbarriers (with fence.mbarrier_init)
    TmaFill,     // thread 0 fills a stage, completing a phase of its mbarrier when it lands
    TmaWait,     // every thread waits on a stage's mbarrier (parity: AsyncSchedule::tmaParity)
    TmaInval,    // thread 0 invalidates the stages' mbarriers
  };
  AsyncEvent(Kind kind) : kind(kind) {} // no default: a forgotten kind must not pass
  Kind kind;
  int64_t stage = 0;     // Copy, TmaFill, Read, TmaWait: the stage (in a trip: trips on
                         // from the trip's own; Read, TmaWait: 0, its own)
  int64_t dataTrip = 0;  // Copy, TmaFill: the trip whose tiles it copies
  int64_t guardTrip = 0; // Copy, TmaFill: issued only when this trip runs (unless always)
  bool always = false;   // Copy: issued in every trip (a zero-filled copy, src-size 0,
                         // where guardTrip does not run: it still writes its stage)
  bool otherParity = false; // TmaWait: the parity opposite to the trip's round's (tests)
  int region = -1;          // Read: the part of the stage it reads: 0 its copied tiles, 1 what a
                            // StageWrite derives from them, -1 both (ignored for other kinds:
                            // Copy and TmaFill write 0, StageWrite 1, Store both)
  int64_t pending = 0;   // CopyWait, ReadWait: groups left in flight
  bool async = false;    // Read: by wgmma
};

struct AsyncSchedule {
  int64_t stages = 0;
  std::vector<AsyncEvent> prologue, trip, exit;
  // The parity a TMA trip's wait computes, as the lowering computes it: trip
  // 0's is tmaParity0, and it flips into each trip whose stage is
  // tmaFlipStage.
  int64_t tmaParity0 = 0;
  int64_t tmaFlipStage = 0;
  // Whether each stage has a second region (int8's transposed b): then every
  // read of it needs its own trip's StageWrite.
  bool derivedRegion = false;
};

/// The first hazard of `s` over every trip count 0 .. 2 stages + 3, in words
/// ("" when there is none).
std::string checkAsyncSchedule(const AsyncSchedule &s);

} // namespace tc::codegen
