//===- AccessTracker.h - Who touched which element: races, coverage -----===//
//
// The shadow memory of a launch (DESIGN.md section 4 rule 15, section 6).
// Every element of every buffer has a shadow cell: the epoch of its last
// plain store and of its last two readers from different programs (a load or
// an atomic), where an epoch is (program index, that program's clock, the
// memory op). Happens-before between programs comes only from atomics, which
// are acquire-release: each program has a vector clock, each address an
// atomic touched has one; an atomic joins the address's clock into the
// program's (acquire) and the program's into the address's (release), then
// the program's own clock ticks. Two accesses to one element from different
// programs, at least one a plain store, race unless the earlier one's epoch
// is covered by the later program's clock.
//
// Precision: a store is checked against the last store and the last two
// readers of different programs, as FastTrack-style detectors do; an older
// reader that a newer one hides is not checked. No race is ever reported that
// the observed execution did not have.
//
// Cost (issue 32): cells are kept per block of kBlock consecutive elements
// while every element of the block has the same cell (a block is "uniform";
// it splits into per-element cells the first time an access treats its
// elements differently, and merges again when they are equal). An access
// whose lanes are consecutive addresses, rows of them or columns of them
// (a tile and its transpose) is checked and recorded one block at a time, in
// two passes: every block is checked before any is changed, and when a check
// fails the access is done again lane by lane in row-major lane order, which
// finds the same race, lane and other program as an element-wise detector.
// Atomics and other lane patterns always go lane by lane. With several
// threads the shadow is locked in stripes of 2^kPageBits elements, each access
// taking the stripes it touches in ascending order (no global lock).
//
// The same cells give the coverage after a launch (which elements no program
// stored: a too-small grid) and the access map (--access-map).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "interp/Memory.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tc::interp {

class Frame;
struct Instr;

/// (program index, clock) pairs, ascending by program; a program's own entry
/// is Frame::clock, not stored here.
using VectorClock = std::vector<std::pair<int32_t, uint32_t>>;

struct Epoch {
  int32_t prog = -1; // row-major program index; -1: none
  uint32_t clock = 0;
  uint32_t site = 0; // index into AccessTracker::sites
};

struct ShadowCell {
  Epoch w;      // last plain store
  Epoch r1, r2; // last reader, and the last reader of another program than r1's
};

enum class Access : uint8_t { Load, Store, Atomic };

class AccessTracker {
public:
  /// `races`: check for races; `full`: keep every cell (races, access maps),
  /// else only which elements were stored (coverage: one byte per element);
  /// `locked`: several threads run programs (every call takes a lock).
  AccessTracker(const Memory &mem, bool races, bool full, bool locked);

  /// The memory ops of the kernel; Instr::site indexes this table.
  std::vector<const Instr *> sites;

  /// Records the active lanes (mask lane set, or no mask) of `in`'s access
  /// of `size` bytes at `addr[0..n)`; every active lane has been checked to
  /// lie in a buffer. On a race records a data_race trap in `f` and returns
  /// false. Atomics must call this holding the launch's atomic lock.
  bool record(Frame &f, const Instr &in, const uint64_t *addr, const uint8_t *mask, int64_t n,
              unsigned size, Access kind);

  /// An active lane of program `prog` tried `addr` outside every buffer.
  void noteOutOfBounds(int32_t prog, uint64_t addr, uint32_t site);

  void setLocked(bool locked) { locked_ = locked; }
  /// Forgets everything (a launch that runs again from its first program).
  void reset();

  /// Elements of region `r` no program stored, as [first, last] ranges, and
  /// how many were stored. Regions nobody stored to give stored == 0.
  struct Coverage {
    int64_t elements = 0, stored = 0;
    std::vector<std::pair<int64_t, int64_t>> unwritten;
  };
  Coverage coverage(const Region &r) const;

  /// The last writer and last reader (program index, -1: none) of element
  /// `e` of region `r`.
  std::pair<int32_t, int32_t> touch(const Region &r, int64_t e) const;

  struct OutOfBounds {
    int32_t prog;
    uint64_t addr;
    uint32_t site;
  };
  const std::vector<OutOfBounds> &outOfBounds() const { return oob_; }

private:
  static constexpr int kPageBits = 12;  // elements per page (and per lock stripe)
  static constexpr int kBlockBits = 4;  // elements per block
  static constexpr int64_t kBlock = int64_t(1) << kBlockBits;
  static constexpr int kStripes = 64;
  /// kBlock elements: one cell for all while `elems` is null, else one each.
  struct Block {
    ShadowCell cell;
    std::unique_ptr<ShadowCell[]> elems;
  };
  struct RegionShadow {
    const Region *region = nullptr;
    unsigned elemSize = 1, shift = 0, index = 0;
    int64_t elements = 0;
    std::vector<std::unique_ptr<Block[]>> pages; // 2^(kPageBits - kBlockBits) blocks each
    // Without `full`: 1 where an element was stored, in chunks of 2^kChunkBits
    // elements allocated (zeroed) by the first store that reaches them, so
    // that a huge buffer of which a kernel stored a few elements costs a few
    // chunks, not its size. A missing chunk: no element of it was stored.
    size_t storedSize = 0;
    std::unique_ptr<std::atomic<uint8_t *>[]> chunks;
    size_t numChunks() const { return (storedSize >> kChunkBits) + 1; }
    /// Element e's byte, allocating its chunk if needed (thread-safe).
    uint8_t *storedAt(uint64_t e);
    bool storedBit(uint64_t e) const {
      uint8_t *c = chunks[e >> kChunkBits].load(std::memory_order_acquire);
      return c && c[e & ((uint64_t(1) << kChunkBits) - 1)];
    }
    RegionShadow() = default;
    RegionShadow(RegionShadow &&) = default;
    RegionShadow &operator=(RegionShadow &&) = default;
    ~RegionShadow();
  };
  /// Lanes lane0 + k * laneStep (k < count) at addresses addr0 + k * size, all
  /// in region `s`, elements e0 + k.
  struct Run {
    int64_t lane0, laneStep, count, e0;
    RegionShadow *s;
  };
  static constexpr int kChunkBits = 12;
  void recordStores(const uint64_t *addr, const uint8_t *mask, int64_t n, unsigned size);
  RegionShadow *shadowOf(uint64_t addr);
  /// The shadow of `a`'s region, reusing `s` while `a` stays in it (the lanes
  /// of one access mostly share a region); null outside every buffer.
  RegionShadow *shadowNear(RegionShadow *s, uint64_t a) {
    return s && a - s->region->base < s->region->size ? s : shadowOf(a);
  }
  [[gnu::always_inline]] Block &block(RegionShadow &s, int64_t e);
  /// Element e's own cell (its block split if it was uniform).
  ShadowCell &cell(RegionShadow &s, int64_t e);
  const ShadowCell *cellIfAny(const RegionShadow &s, int64_t e) const;
  /// The access as runs (false: a lane pattern the runs do not describe).
  bool runsOf(const Instr &in, const uint64_t *addr, const uint8_t *mask, int64_t n,
              unsigned size, std::vector<Run> &runs);
  /// Calls whole(cell) for each uniform block the active lanes of `r` fill and
  /// each(cell) for every other active element; stops at the first false.
  template <typename Whole, typename Each>
  bool forRun(const Run &r, const uint8_t *mask, Whole &&whole, Each &&each);
  bool recordRuns(Frame &f, const Instr &in, const std::vector<Run> &runs, const uint8_t *mask,
                  Access kind);
  bool recordLanes(Frame &f, const Instr &in, const uint64_t *addr, const uint8_t *mask,
                   int64_t n, unsigned size, Access kind);
  /// The lock stripes the access touches (bit i: stripe i).
  uint64_t stripesOf(const std::vector<Run> *runs, const uint64_t *addr, const uint8_t *mask,
                     int64_t n, unsigned size);
  static unsigned stripeOf(const RegionShadow &s, int64_t e) {
    return static_cast<unsigned>((s.index * 7 + static_cast<uint64_t>(e >> kPageBits)) %
                                 kStripes);
  }
  void markStored(const RegionShadow &s) {
    if (!storedTo_[s.index].load(std::memory_order_relaxed))
      storedTo_[s.index].store(true, std::memory_order_relaxed);
  }
  bool check(Frame &f, const Instr &in, int64_t lane, const RegionShadow &s, int64_t e,
             const ShadowCell &c, Access kind);
  bool report(Frame &f, const Instr &in, int64_t lane, const RegionShadow &s, int64_t e,
              const Epoch &other, Access kind);
  void acquire(Frame &f, uint64_t addr);
  void release(Frame &f, uint64_t addr);

  const Memory &mem_;
  bool races_, full_, locked_;
  std::vector<RegionShadow> shadows_;              // one per region, in the Memory's order
  std::unique_ptr<std::atomic<bool>[]> storedTo_;  // per region: a store was recorded
  std::unordered_map<uint64_t, VectorClock> sync_; // per atomic address; under the atomic lock
  std::vector<OutOfBounds> oob_;
  std::mutex oobMutex_;
  std::array<std::mutex, kStripes> stripes_;
};

/// "Y[5]" for a 1-d buffer, "Y[1, 3] (element 35)" for more dimensions.
std::string elementText(const Region &r, int64_t e);

} // namespace tc::interp
