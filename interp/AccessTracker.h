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
// the program's own clock ticks; the lanes of one atomic do so one after
// another in row-major order (rule 14), each on its own address. Two
// accesses to one element from different programs, at least one a plain
// store, race unless the earlier one's epoch is covered by the later
// program's clock.
//
// Precision: a store is checked against the last store, the last two
// readers of different programs and, in a kernel with atomics, every older
// reader that those two pushed out of the cell without being ordered before
// the reader that pushed it (kept aside, per element or per uniform block:
// ShadowCell::more; not in a buffer that no plain store of the kernel's text
// reaches, whose readers race with nothing: a store through a pointer
// computed from another parameter's cannot reach it, it traps out_of_bounds
// first, Instr::from; one through a pointer made from an integer counts as
// reaching every buffer). Without
// atomics no program is ordered before another, so two readers of different
// programs are enough (any store by a third program, or by one of them,
// races with one of the two). No race is ever reported that the observed
// execution did not have.
//
// Elements: a buffer's shadow counts it in units of its element size, or of
// the smallest access a memory op whose pointer comes from one of its
// parameters makes (a float buffer stored through a `char *` cast of its
// pointer: bytes), so that two programs writing different bytes of one
// element do not race; reports, coverage and the access map still name the
// buffer's own elements.
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
// Coverage alone (no race check, no access map) is a bitmap, one bit per
// element in lazily allocated chunks, set a 64-element word at a time with
// relaxed atomic ORs (a word already holding the bits is not written), the
// access taken as runs when it is one: no lock, no per-element work.
//
// Logged mode (several threads, a kernel without atomics, print or trace):
// with no atomic there is no happens-before between programs, so a race
// exists exactly when an element one program stored is accessed by another.
// Each thread then appends its accesses as element intervals to its own log
// (no shared state but the coverage bitmap) and after the run the logs are
// swept in address order for an interval of one program that overlaps one of
// another, at least one a store. None (the common case): no race, nothing
// else to do. One (or a log past its size limit): the launch runs again from
// the buffers as they were (the caller keeps a page copy, UndoJournal, of
// what stores reach) with the cells above, which give the same report as
// today. Intervals are conservative (a masked run counts whole), so an
// overlap only costs the second run, never a report.
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

namespace tc::ir {
class Op;
class Value;
} // namespace tc::ir

namespace tc::interp {

class Frame;
struct Instr;
class UndoJournal;

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
  // Older readers kept aside (AccessTracker::recordRead): bit kMoreElement,
  // some for this element; bit kMoreBlock, some for every element of its
  // block (pushed out while the block was uniform).
  uint32_t more = 0;
  static constexpr uint32_t kMoreElement = 1, kMoreBlock = 2;
};

enum class Access : uint8_t { Load, Store, Atomic };

class AccessTracker {
public:
  /// `races`: check for races; `full`: keep every cell (races, access maps),
  /// else only which elements were stored (coverage: one byte per element);
  /// `locked`: several threads run programs (every call takes a lock).
  /// `logThreads` > 0 (with `races` and not `full`): logged mode for that
  /// many threads (see above; logged() says whether it is on).
  /// `units` (per region of the Memory, 0 or missing: its element size):
  /// the bytes of one shadow unit, a divisor of the element size (a buffer
  /// that memory ops reach with narrower pointers, see above).
  AccessTracker(const Memory &mem, bool races, bool full, bool locked, unsigned logThreads = 0,
                const std::vector<unsigned> &units = {});
  ~AccessTracker();

  bool logged() const { return logged_; }
  /// The kernel has atomics (happens-before between programs): readers that
  /// newer ones push out of a cell are kept aside when they may still race
  /// (see Precision above). Off: two readers per cell are enough.
  void setAtomics(bool on) { keepReaders_ = on; }
  /// No plain store of the kernel's text reaches region `index` (of the
  /// Memory's regions): its readers need no keeping aside (setAtomics).
  void setNoPlainStores(size_t index) { keepIn_[index] = 0; }
  /// Copies (UndoJournal::beforeWrite) the bytes a store or atomic is about to
  /// write, from record(), so that a launch can run again from the buffers as
  /// they were. Null: none.
  void setJournal(UndoJournal *j) { journal_ = j; }
  /// Logged mode: no store of the kernel's text reaches region `index` (of
  /// the Memory's regions), so its loads need no log (a store that reaches
  /// it anyway, through a pointer into another buffer, makes the launch run
  /// the element-wise check).
  void setNoStores(size_t index) { mayStore_[index] = 0; }
  /// Logged mode, on every thread that ran programs, after its last one:
  /// sorts its log (prepareCheck() needs this).
  void finishThread();
  /// Logged mode, after every program ran: whether programs' intervals
  /// overlap (at least one a store) or a log overflowed, so that the launch
  /// must run again with the element-wise check, in parts that threads may
  /// check at once: returns the number of parts (0 when overflowed() already
  /// says so, or no log has an interval); the launch must run again when
  /// overflowed() or checkPart(i) for some i.
  size_t prepareCheck(unsigned parts);
  bool overflowed() const { return overflowed_; }
  bool checkPart(size_t part) const;

  /// The memory ops of the kernel; Instr::site indexes this table.
  std::vector<const Instr *> sites;

  /// A pointer parameter as bound to its buffer: its pointer argument's
  /// address, its array's element size and shape. A race report names the
  /// element through the parameter whose pointer made the access, counted
  /// from that parameter's own pointer (two views of one memory at different
  /// origins: the element the kernel's text indexes, not the buffer's).
  struct ParamView {
    std::string name;
    const ir::Value *param = nullptr;
    uint64_t start = 0;
    unsigned elemSize = 1;
    std::vector<int64_t> shape;
  };
  void addParam(ParamView v) { params_.push_back(std::move(v)); }

  /// Records the active lanes (mask lane set, or no mask) of `in`'s access
  /// of `size` bytes at `addr[0..n)`; every active lane has been checked to
  /// lie in a buffer. On a race records a data_race trap in `f` and returns
  /// false. Atomics must call this holding the launch's atomic lock.
  bool record(Frame &f, const Instr &in, const uint64_t *addr, const uint8_t *mask, int64_t n,
              unsigned size, Access kind);

  /// record() of an access whose lanes are the `n` consecutive elements of
  /// `size` bytes from `base`, every lane active (an affine pointer tile: no
  /// address per lane is needed).
  bool recordRange(Frame &f, const Instr &in, uint64_t base, int64_t n, unsigned size,
                   Access kind);

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
    // elemSize: the bytes of one shadow unit (1 << shift), `perElement` of
    // which make one of the buffer's elements; `elements` counts units.
    unsigned elemSize = 1, shift = 0, index = 0, perElement = 1;
    int64_t elements = 0;
    std::vector<std::unique_ptr<Block[]>> pages; // 2^(kPageBits - kBlockBits) blocks each
    // Without `full`: bit e set where element e was stored, in chunks of
    // 2^kChunkBits elements (64-bit words) allocated (zeroed) by the first
    // store that reaches them, so that a huge buffer of which a kernel stored
    // a few elements costs a few chunks, not its size. A missing chunk: no
    // element of it was stored.
    size_t storedSize = 0;
    std::unique_ptr<std::atomic<uint64_t *>[]> chunks;
    size_t numChunks() const { return (storedSize >> kChunkBits) + 1; }
    /// The word holding element e's bit, allocating its chunk if needed
    /// (thread-safe).
    uint64_t *storedWord(uint64_t e);
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
  void recordStores(const Instr &in, const uint64_t *addr, const uint8_t *mask, int64_t n,
                    unsigned size);
  /// Sets the coverage bits of elements [e0, e0 + count) of `s` whose lanes
  /// lane0 + k * laneStep are active.
  void setStored(RegionShadow &s, int64_t e0, int64_t count, const uint8_t *mask, int64_t lane0,
                 int64_t laneStep);
  /// Logged mode's record().
  void recordLogged(Frame &f, const Instr &in, const uint64_t *addr, const uint8_t *mask,
                    int64_t n, unsigned size, Access kind);
  /// Copies what a store or atomic is about to write (journal_).
  void saveBeforeWrite(const std::vector<Run> *runs, const uint64_t *addr, const uint8_t *mask,
                       int64_t n, unsigned size);
  /// One interval of logged mode: elements [first, last] of region `key >>
  /// 48` (first = key's low 48 bits, last likewise), by program progKind >> 1,
  /// a store when progKind & 1.
  struct LogEntry {
    uint64_t key, last;
    uint32_t progKind;
  };
  // Each on cache lines of its own: a thread appends to its log's vector on
  // every logged access, and the logs are allocated one after another.
  struct alignas(64) ThreadLog {
    std::vector<LogEntry> entries;
    uint64_t maxSpan = 0; // the longest interval's last - first (finishThread())
  };
  ThreadLog &threadLog();
  void logRuns(ThreadLog &log, const Run *runs, size_t count, const uint8_t *mask,
               uint32_t progKind);
  void logInterval(ThreadLog &log, unsigned region, int64_t first, int64_t last, uint32_t progKind);
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
  /// Whether a store by the program of `f` is ordered after every reader
  /// `c` holds or keeps aside (element `e` of `s`, or the uniform block
  /// starting there when `block`); else the first reader it races with.
  std::optional<Epoch> unorderedReader(const Frame &f, const RegionShadow &s, int64_t e,
                                       const ShadowCell &c, bool block);
  /// A read by `me` (the program of `f`) of element `e` (or of the uniform
  /// block starting at e) records itself in `c`, keeping aside the reader it
  /// pushes out if that one may still race.
  void recordRead(const Frame &f, const RegionShadow &s, int64_t e, ShadowCell &c, bool block,
                  const Epoch &me);
  /// A store that passed its check: the readers kept aside for element `e`
  /// (or for the whole block) are all ordered before it.
  void forgetKept(const RegionShadow &s, int64_t e, ShadowCell &c, bool block);
  static uint64_t keptKey(const RegionShadow &s, int64_t e, bool block) {
    return uint64_t(s.index) << 48 | static_cast<uint64_t>(block ? e >> kBlockBits : e);
  }
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
  /// "X[64]": element `e` of `s` as `op` reached it (the parameter its
  /// pointer operand comes from, else the first of the region's parameters
  /// whose view holds it, else elementText).
  std::string accessText(const ir::Op &op, const RegionShadow &s, int64_t e) const;
  void acquire(Frame &f, uint64_t addr);
  void release(Frame &f, uint64_t addr);

  const Memory &mem_;
  bool races_, full_, locked_, logged_ = false, keepReaders_ = false;
  // Readers kept aside (ShadowCell::more), by keptKey: per element and per
  // uniform block. Appended to; past `limit` compacted to the newest epoch of
  // each program not ordered before the reader that pushes one out (so an
  // append costs O(1) amortised). Under keptMutex_.
  struct Kept {
    std::vector<Epoch> readers;
    size_t limit = 8;
  };
  std::mutex keptMutex_;
  std::unordered_map<uint64_t, Kept> keptElements_, keptBlocks_;
  std::vector<char> keepIn_; // per region: readers may need keeping (setNoPlainStores)
  UndoJournal *journal_ = nullptr;
  uint64_t id_ = 0; // unique per tracker: finds this tracker's thread logs
  size_t maxLogEntries_ = 0; // per thread
  std::mutex logsMutex_;
  std::vector<std::unique_ptr<ThreadLog>> logs_;
  std::atomic<bool> overflow_{false};
  bool overflowed_ = false;
  std::vector<uint64_t> splitters_; // prepareCheck()'s parts: [splitters_[i], splitters_[i + 1])
  uint64_t maxSpan_ = 0;            // the longest interval's last - first
  std::vector<char> mayStore_; // per region
  std::vector<RegionShadow> shadows_;              // one per region, in the Memory's order
  std::unique_ptr<std::atomic<bool>[]> storedTo_;  // per region: a store was recorded
  std::unordered_map<uint64_t, VectorClock> sync_; // per atomic address; under the atomic lock
  std::vector<OutOfBounds> oob_;
  std::mutex oobMutex_;
  std::vector<ParamView> params_;
  std::array<std::mutex, kStripes> stripes_;
};

/// "Y[5]" for a 1-d buffer, "Y[1, 3] (element 35)" for more dimensions.
std::string elementText(const Region &r, int64_t e);

} // namespace tc::interp
