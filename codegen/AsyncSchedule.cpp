//===- AsyncSchedule.cpp - A pipelined loop's asynchronous copies and reads, checked ===//

#include "codegen/AsyncSchedule.h"

#include <algorithm>
#include <limits>

namespace tc::codegen {

namespace {

constexpr size_t kNever = std::numeric_limits<size_t>::max();

/// One issued copy or read of the unrolled loop.
struct Access {
  size_t pos = 0;       // where it is issued
  size_t done = kNever; // where a wait retires it (an ldmatrix: pos)
  int64_t stage = 0;
  int64_t dataTrip = 0; // a copy: the trip whose tiles it copies; a read: its trip
  int64_t issuedIn = 0; // the trip that issues it (-1: the prologue; the trip count: the exit)
  bool async = false;   // a wgmma read
  bool tma = false;     // a TMA fill: issued by thread 0, done where a wait observes it
  bool derived = false; // a StageWrite (region 1), not a copy
  int region = 0;       // the part of the stage (AsyncEvent::region; -1: both)
};

/// A wait on a stage's mbarrier.
struct MbarWait {
  size_t pos = 0;
  int64_t stage = 0;
  int64_t trip = 0;
};

/// Groups committed in order and retired in order (cp.async or wgmma).
struct Groups {
  std::vector<std::vector<size_t>> committed;
  std::vector<size_t> open;
  size_t retired = 0;
  void commit() {
    committed.push_back(open);
    open.clear();
  }
  void wait(size_t pending, size_t pos, std::vector<Access> &acc) {
    size_t upTo = committed.size() > pending ? committed.size() - pending : 0;
    for (; retired < upTo; ++retired)
      for (size_t a : committed[retired])
        acc[a].done = std::min(acc[a].done, pos);
  }
};

std::string tripName(int64_t t, int64_t trips) {
  if (t < 0)
    return "the prologue";
  if (t >= trips)
    return "the loop's exit";
  return "trip " + std::to_string(t);
}

class Unrolled {
public:
  Unrolled(const AsyncSchedule &s, int64_t trips)
      : s_(s), trips_(trips), fills_(static_cast<size_t>(s.stages)),
        observed_(static_cast<size_t>(s.stages)) {}

  std::string run() {
    // What the kernel did with the stages' memory before the loop (another
    // loop's stages and their wgmma reads, values staged through shared
    // memory): done in each warp when the loop starts, seen done by another
    // warp only past a barrier.
    earlier_.pos = earlier_.done = seg_.size();
    seg_.push_back(barriers_);
    for (const AsyncEvent &e : s_.prologue)
      if (std::string h = step(e, -1); !h.empty())
        return h;
    for (int64_t i = 0; i < trips_; ++i)
      for (const AsyncEvent &e : s_.trip)
        if (std::string h = step(e, i); !h.empty())
          return h;
    for (const AsyncEvent &e : s_.exit)
      if (std::string h = step(e, trips_); !h.empty())
        return h;
    return check();
  }

private:
  const AsyncSchedule &s_;
  int64_t trips_;
  std::vector<int> seg_; // barriers before each position
  int barriers_ = 0;
  std::vector<size_t> fences_;
  std::vector<Access> copies_, reads_, stores_; // a store: every stage
  Access earlier_; // the kernel's accesses of the stages' memory before the loop
  Groups copyGroups_, readGroups_;
  std::vector<std::vector<size_t>> fills_; // each stage's TMA fills (into copies_), in order
  std::vector<size_t> observed_;           // each stage's fills seen complete by a wait
  std::vector<MbarWait> waits_;
  std::vector<size_t> invals_, inits_;

  std::string prefix() const {
    return "with " + std::to_string(trips_) + (trips_ == 1 ? " trip" : " trips") + ", ";
  }

  /// The stage of a trip's event: the trip's own (trip % stages) plus the
  /// event's, wrapped once as the lowering does.
  int64_t stageOf(const AsyncEvent &e, int64_t trip) const {
    if (trip < 0 || trip >= trips_)
      return e.stage;
    int64_t st = trip % s_.stages + e.stage;
    return st >= s_.stages ? st - s_.stages : st;
  }

  /// A write into a stage (Copy, TmaFill, StageWrite) issued at `pos` by
  /// `trip` (-1: the prologue; the trip count: the exit).
  Access written(const AsyncEvent &e, int64_t trip, size_t pos) const {
    bool inTrip = trip >= 0 && trip < trips_;
    Access a;
    a.pos = pos;
    a.stage = stageOf(e, trip);
    a.dataTrip = inTrip ? trip + e.dataTrip : e.dataTrip;
    a.issuedIn = trip;
    return a;
  }

  std::string step(const AsyncEvent &e, int64_t trip) {
    size_t pos = seg_.size();
    seg_.push_back(barriers_);
    bool inTrip = trip >= 0 && trip < trips_;
    using K = AsyncEvent::Kind;
    switch (e.kind) {
    case K::Barrier: ++barriers_; break;
    case K::Fence: fences_.push_back(pos); break;
    case K::Copy: {
      int64_t guard = inTrip ? trip + e.guardTrip : e.guardTrip;
      if (guard >= trips_ && !e.always)
        break; // branched around: that trip does not run
      Access a = written(e, trip, pos);
      if (a.stage < 0 || a.stage >= s_.stages)
        return prefix() + tripName(trip, trips_) + " copies into stage " + std::to_string(a.stage) +
               " of " + std::to_string(s_.stages);
      copyGroups_.open.push_back(copies_.size());
      copies_.push_back(a);
      break;
    }
    case K::TmaFill: {
      int64_t guard = inTrip ? trip + e.guardTrip : e.guardTrip;
      if (guard >= trips_)
        break; // branched around: that trip does not run
      Access a = written(e, trip, pos);
      a.tma = true;
      if (!invals_.empty())
        return prefix() + copyName(a) + " uses an invalidated mbarrier";
      if (a.stage < 0 || a.stage >= s_.stages)
        return prefix() + tripName(trip, trips_) + " fills stage " + std::to_string(a.stage) +
               " of " + std::to_string(s_.stages);
      std::vector<size_t> &f = fills_[static_cast<size_t>(a.stage)];
      if (f.size() > observed_[static_cast<size_t>(a.stage)])
        return prefix() + copyName(a) + " may merge into the mbarrier phase of " +
               copyName(copies_[f.back()]) +
               ": no wait on the stage's mbarrier sees that one complete before thread 0 "
               "issues this one";
      f.push_back(copies_.size());
      copies_.push_back(a);
      break;
    }
    case K::TmaWait: {
      int64_t st = stageOf(e, trip);
      if (!invals_.empty())
        return prefix() + tripName(trip, trips_) + "'s wait uses an invalidated mbarrier";
      if (st < 0 || st >= s_.stages)
        return prefix() + tripName(trip, trips_) + " waits on the mbarrier of stage " +
               std::to_string(st) + " of " + std::to_string(s_.stages);
      size_t parity = tmaParity(inTrip ? trip + e.stage : e.stage) ^ (e.otherParity ? 1 : 0);
      const std::vector<size_t> &f = fills_[static_cast<size_t>(st)];
      size_t &seen = observed_[static_cast<size_t>(st)];
      std::string what = tripName(trip, trips_) + "'s wait on the mbarrier of stage " +
                         std::to_string(st) + " (parity " + std::to_string(parity) + ")";
      if (f.size() > seen) { // one fill unobserved (a second would have merged): its phase
        if (parity != (seen & 1))
          return prefix() + what + " returns before " + copyName(copies_[f[seen]]) +
                 " lands: that fill completes phase " + std::to_string(seen) + ", of parity " +
                 std::to_string(seen & 1);
        copies_[f[seen]].done = pos;
        seen = f.size();
      } else if (seen == 0 || parity != ((seen - 1) & 1)) {
        return prefix() + what + " may never return: no fill of the stage is in flight, and " +
               std::to_string(seen) + " phases are complete";
      }
      waits_.push_back({pos, st, trip});
      break;
    }
    case K::StageWrite: {
      Access a = written(e, trip, pos); // complete at once, like a store, into its trip's stage
      a.done = pos;
      a.derived = true;
      a.region = 1;
      if (a.stage < 0 || a.stage >= s_.stages)
        return prefix() + tripName(trip, trips_) + " writes into stage " + std::to_string(a.stage) +
               " of " + std::to_string(s_.stages);
      copies_.push_back(a);
      break;
    }
    case K::TmaInit: inits_.push_back(pos); break;
    case K::TmaInval: invals_.push_back(pos); break;
    case K::CopyCommit: copyGroups_.commit(); break;
    case K::CopyWait: copyGroups_.wait(static_cast<size_t>(e.pending), pos, copies_); break;
    case K::CopyWaitAll:
      copyGroups_.commit();
      copyGroups_.wait(0, pos, copies_);
      break;
    case K::Read: {
      Access a;
      a.pos = pos;
      a.stage = stageOf(e, trip);
      a.dataTrip = trip;
      a.issuedIn = trip;
      a.async = e.async;
      a.region = e.region;
      if (a.stage < 0 || a.stage >= s_.stages)
        return prefix() + tripName(trip, trips_) + " reads stage " + std::to_string(a.stage) +
               " of " + std::to_string(s_.stages);
      if (a.async)
        readGroups_.open.push_back(reads_.size());
      else
        a.done = pos;
      reads_.push_back(a);
      break;
    }
    case K::ReadCommit: readGroups_.commit(); break;
    case K::ReadWait: readGroups_.wait(static_cast<size_t>(e.pending), pos, reads_); break;
    case K::Store: {
      Access a; // every stage, complete when issued
      a.pos = a.done = pos;
      a.issuedIn = trip;
      stores_.push_back(a);
      break;
    }
    }
    return "";
  }

  int seg(size_t pos) const { return seg_[pos]; }

  /// The parity of trip t's TMA wait as the lowering computes it: the first
  /// trip's, flipped into every later trip whose stage is tmaFlipStage.
  size_t tmaParity(int64_t t) const {
    int64_t flips = 0;
    for (int64_t j = 1; j <= t; ++j)
      flips += j % s_.stages == s_.tmaFlipStage;
    return static_cast<size_t>((s_.tmaParity0 + flips) & 1);
  }

  /// The TMA's use of the mbarriers against their initialisation and
  /// invalidation ("" when right).
  std::string mbarrierLifetime() const {
    auto inUse = [&](size_t pos) {
      for (size_t i : inits_)
        if (i < pos && seg(i) < seg(pos))
          return true;
      return false;
    };
    for (const Access &c : copies_)
      if (c.tma && !inUse(c.pos))
        return prefix() + copyName(c) +
               " uses its stage's mbarrier before a barrier after "
               "its initialisation";
    for (const MbarWait &w : waits_)
      if (!inUse(w.pos))
        return prefix() + tripName(w.trip, trips_) + "'s wait uses the mbarrier of stage " +
               std::to_string(w.stage) + " before a barrier after its initialisation";
    bool filled =
        std::any_of(copies_.begin(), copies_.end(), [](const Access &c) { return c.tma; });
    if (filled && invals_.empty())
      return prefix() + "the stages' mbarriers are never invalidated after the loop";
    return ""; // (a use after the invalidation: reported as the events are replayed)
  }

  /// Another warp's read r sees copy c complete: a barrier after c's wait
  /// (and, for wgmma, a proxy fence between that wait and the barrier).
  bool before(const Access &c, const Access &r) const {
    if (c.tma) // each thread waits on the mbarrier itself
      return c.done != kNever && c.done < r.pos;
    if (c.done == kNever || seg(c.done) >= seg(r.pos))
      return false;
    if (!r.async)
      return true;
    return std::any_of(fences_.begin(), fences_.end(),
                       [&](size_t f) { return f > c.done && seg(f) < seg(r.pos); });
  }
  /// Access x is complete before another warp issues y.
  bool doneBefore(const Access &x, const Access &y) const {
    if (x.tma) // observed by every thread's wait, thread 0's (the issuer's) included
      return x.done != kNever && x.done < y.pos;
    return x.done != kNever && seg(x.done) < seg(y.pos);
  }

  static bool overlap(const Access &x, const Access &y) {
    return x.region < 0 || y.region < 0 || x.region == y.region;
  }

  std::string copyName(const Access &c) const {
    if (c.derived)
      return tripName(c.issuedIn, trips_) + "'s transposed write of trip " +
             std::to_string(c.dataTrip) + "'s b into stage " + std::to_string(c.stage);
    return "the copy of trip " + std::to_string(c.dataTrip) + "'s tiles into stage " +
           std::to_string(c.stage) + " (issued in " + tripName(c.issuedIn, trips_) + ")";
  }
  std::string readName(const Access &r) const {
    return tripName(r.issuedIn, trips_) + "'s " +
           (r.async         ? "wgmma"
            : r.region == 0 ? "transposing ld.shared"
                            : "ldmatrix") +
           " read of stage " + std::to_string(r.stage);
  }

  std::string check() const {
    for (const Access &c : copies_)
      if (c.done == kNever)
        return prefix() + copyName(c) + " may still be in flight after the loop";
    for (const Access &c : copies_)
      if (!doneBefore(earlier_, c))
        return prefix() + copyName(c) +
               " may land while another warp still reads or writes that memory as it did "
               "before the loop (another loop's stages, a value staged in shared memory): no "
               "barrier between the loop's start and the copy";
    // A TMA fill writes through the async proxy: the earlier generic-proxy
    // accesses must be fenced (fence.proxy.async) before the barrier that
    // orders them before the fill.
    for (const Access &c : copies_)
      if (c.tma && std::none_of(fences_.begin(), fences_.end(),
                                [&](size_t f) { return seg(f) < seg(c.pos); }))
        return prefix() + copyName(c) +
               " writes through the async proxy after that memory's earlier generic-proxy use "
               "(before the loop) without a fence.proxy.async before the barrier between them";
    for (size_t i : inits_)
      if (seg(i) <= seg(earlier_.pos))
        return prefix() +
               "the stages' mbarriers are initialised while another warp may still use that "
               "memory as it did before the loop: no barrier between the loop's start and the "
               "initialisation";
    if (std::string h = mbarrierLifetime(); !h.empty())
      return h;
    // Thread 0 runs ahead of the others up to the next barrier: a fill it
    // issues there may complete a phase before a slower thread's wait looks.
    for (const MbarWait &w : waits_)
      for (const Access &c : copies_)
        if (c.tma && c.stage == w.stage && c.pos > w.pos && seg(c.pos) == seg(w.pos))
          return prefix() + copyName(c) +
                 " may land before another thread's wait on the "
                 "stage's mbarrier in " +
                 tripName(w.trip, trips_) +
                 " looks (no barrier between them): that wait may return early or never";
    for (size_t v : invals_) {
      for (const Access &c : copies_)
        if (c.tma && c.pos < v && !(c.done != kNever && c.done < v))
          return prefix() + "the mbarriers are invalidated while " + copyName(c) +
                 " may still land";
      for (const MbarWait &w : waits_)
        if (w.pos < v && seg(w.pos) == seg(v))
          return prefix() +
                 "the mbarriers are invalidated while another thread may still wait "
                 "on stage " +
                 std::to_string(w.stage) + "'s in " + tripName(w.trip, trips_) +
                 " (no barrier between)";
    }
    for (const Access &r : reads_)
      if (r.done == kNever)
        return prefix() + readName(r) + " may still be in flight after the loop";
    for (const Access &r : reads_)
      for (const Access &c : copies_) {
        if (c.stage != r.stage || !overlap(c, r) || before(c, r) || doneBefore(r, c))
          continue;
        const char *end = c.derived ? "the write" : "the copy's wait";
        if (r.async && !c.tma && c.done != kNever && seg(c.done) < seg(r.pos))
          return prefix() + readName(r) + " may not see " + copyName(c) +
                 ": no fence.proxy.async between " + end +
                 " and the barrier before the read (the tensor cores read through the async "
                 "proxy)";
        return prefix() + readName(r) + " may overlap " + copyName(c) +
               ": no barrier lies between " + end +
               " and the read, nor between the read's "
               "end and the " +
               (c.derived ? "write" : "copy");
      }
    for (size_t i = 0; i < copies_.size(); ++i)
      for (size_t j = i + 1; j < copies_.size(); ++j) {
        const Access &x = copies_[i], &y = copies_[j];
        if (x.stage == y.stage && overlap(x, y) && !doneBefore(x, y) && !doneBefore(y, x))
          return prefix() + copyName(x) + " and " + copyName(y) +
                 " may land in either order: no barrier orders them";
      }
    for (const Access &st : stores_) {
      for (const Access &c : copies_)
        if (c.pos < st.pos && !doneBefore(c, st))
          return prefix() + tripName(st.issuedIn, trips_) + " stores into the stages while " +
                 copyName(c) + " may still land";
      for (const Access &r : reads_)
        if (r.pos < st.pos && !doneBefore(r, st))
          return prefix() + tripName(st.issuedIn, trips_) + " stores into the stages while " +
                 readName(r) + " may still read";
    }
    for (const Access &r : reads_)
      for (int g : {0, 1}) { // each region it reads
        if ((r.region >= 0 && r.region != g) || (g == 1 && !s_.derivedRegion))
          continue;
        const Access *latest = nullptr;
        for (const Access &c : copies_)
          if (c.region == g && c.stage == r.stage && before(c, r) &&
              (!latest || c.pos > latest->pos))
            latest = &c;
        for (const Access &st : stores_)
          if (seg(st.pos) < seg(r.pos) && (!latest || st.pos > latest->pos))
            return prefix() + readName(r) + " reads what " + tripName(st.issuedIn, trips_) +
                   " stored over the stages, not a copy of its tiles";
        if (!latest)
          return prefix() + readName(r) +
                 (g == 0 ? " reads no completed copy of its tiles" : " reads no transposed b") +
                 (!r.async ? ""
                  : g == 0 ? " (a barrier after the copy's wait, with a proxy fence between)"
                           : " (a barrier after the transposed write, with a proxy fence "
                             "between)");
        if (latest->dataTrip != r.dataTrip)
          return prefix() + readName(r) + " reads " + copyName(*latest) + ", not its own trip's";
      }
    return "";
  }
};

} // namespace

std::string checkAsyncSchedule(const AsyncSchedule &s) {
  if (s.stages < 1)
    return "a pipeline of " + std::to_string(s.stages) + " stages";
  for (int64_t trips = 0; trips <= 2 * s.stages + 3; ++trips)
    if (std::string h = Unrolled(s, trips).run(); !h.empty())
      return h;
  return "";
}

} // namespace tc::codegen
