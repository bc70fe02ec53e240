#include "interp/AccessTracker.h"

#include "interp/Interpreter.h"
#include "interp/UndoJournal.h"
#include "runtime/Launch.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <queue>

namespace tc::interp {

namespace {

/// The clock of program `prog` in `vc` (0: none).
uint32_t clockOf(const VectorClock &vc, int32_t prog) {
  auto it = std::lower_bound(
      vc.begin(), vc.end(), prog,
      [](const std::pair<int32_t, uint32_t> &e, int32_t p) { return e.first < p; });
  return it != vc.end() && it->first == prog ? it->second : 0;
}

/// into = into joined with `from` (entry-wise maximum).
void join(VectorClock &into, const VectorClock &from) {
  if (from.empty())
    return;
  VectorClock r;
  r.reserve(into.size() + from.size());
  size_t i = 0, j = 0;
  while (i < into.size() || j < from.size()) {
    if (j == from.size() || (i < into.size() && into[i].first < from[j].first))
      r.push_back(into[i++]);
    else if (i == into.size() || from[j].first < into[i].first)
      r.push_back(from[j++]);
    else {
      r.emplace_back(into[i].first, std::max(into[i].second, from[j].second));
      ++i, ++j;
    }
  }
  into = std::move(r);
}

/// Sets program `prog`'s entry of `vc` to at least `clock`.
void raise(VectorClock &vc, int32_t prog, uint32_t clock) {
  auto it = std::lower_bound(
      vc.begin(), vc.end(), prog,
      [](const std::pair<int32_t, uint32_t> &e, int32_t p) { return e.first < p; });
  if (it != vc.end() && it->first == prog)
    it->second = std::max(it->second, clock);
  else
    vc.insert(it, {prog, clock});
}

std::string programText(const LaunchContext &l, int64_t index) {
  const auto &g = l.grid;
  std::array<int64_t, 3> p{index / (g[1] * g[2]), (index / g[2]) % g[1], index % g[2]};
  if (l.opts.onlyProgram)
    p = *l.opts.onlyProgram;
  return "program (" + std::to_string(p[0]) + ", " + std::to_string(p[1]) + ", " +
         std::to_string(p[2]) + ")";
}

/// Whether epoch `e` happens before the program running in `f`.
bool before(const Frame &f, const Epoch &e) {
  return e.prog < 0 || e.prog == f.index || clockOf(f.vc, e.prog) >= e.clock;
}

} // namespace

namespace {

/// The function parameter (a block argument of the function's body) that
/// pointer value `v` is computed from, through addptr and the shape ops, a
/// loop's initial value or a branch's yield; null when there is none or
/// more than one (a select of two parameters' pointers).
const ir::Value *pointerParam(const ir::Value *v, int depth = 0) {
  while (v && depth++ < 256) {
    if (const ir::Op *op = v->definingOp()) {
      switch (op->kind()) {
      case ir::OpKind::AddPtr:
      case ir::OpKind::Splat:
      case ir::OpKind::Broadcast:
      case ir::OpKind::ExpandDims:
      case ir::OpKind::Reshape:
      case ir::OpKind::Trans:
      case ir::OpKind::Bitcast:
      case ir::OpKind::Cast: v = op->operand(0); continue;
      case ir::OpKind::Select: {
        const ir::Value *a = pointerParam(op->operand(1), depth);
        return a == pointerParam(op->operand(2), depth) ? a : nullptr;
      }
      case ir::OpKind::For: // results: the loop-carried values (inits from operand 3)
        v = 3 + v->index() < op->numOperands() ? op->operand(3 + v->index()) : nullptr;
        continue;
      case ir::OpKind::While:
        v = v->index() < op->numOperands() ? op->operand(v->index()) : nullptr;
        continue;
      case ir::OpKind::If: {
        const ir::Value *a = nullptr;
        for (unsigned r = 0; r < op->numRegions(); ++r) {
          const ir::Op *y = op->region(r)->terminator();
          if (!y || v->index() >= y->numOperands())
            return nullptr;
          const ir::Value *p = pointerParam(y->operand(v->index()), depth);
          if (!p || (a && p != a))
            return nullptr;
          a = p;
        }
        return a;
      }
      default: return nullptr;
      }
    }
    const ir::Block *b = v->ownerBlock();
    const ir::Op *parent = b ? b->parentOp() : nullptr;
    if (!parent)
      return b ? v : nullptr; // a parameter
    if (parent->kind() == ir::OpKind::For && v->index() >= 1 &&
        2 + v->index() < parent->numOperands())
      v = parent->operand(2 + v->index()); // body(iv, iters...): iter i's init
    else if (parent->kind() == ir::OpKind::While && b == parent->region(0) &&
             v->index() < parent->numOperands())
      v = parent->operand(v->index());
    else
      return nullptr;
  }
  return nullptr;
}

/// "Y[5]", "Y[1, 3] (element 35)" for element `e` of `shape` (one dimension
/// or none: "Y[e]").
std::string indexText(const std::string &name, const std::vector<int64_t> &shape, int64_t e) {
  if (shape.size() <= 1)
    return name + "[" + std::to_string(e) + "]";
  std::vector<int64_t> idx(shape.size());
  int64_t rest = e;
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? rest % shape[d] : 0;
    rest = shape[d] ? rest / shape[d] : 0;
  }
  std::string s = name + "[";
  for (size_t d = 0; d < idx.size(); ++d)
    s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "] (element " + std::to_string(e) + ")";
}

std::atomic<uint64_t> gTrackerIds{1};
} // namespace

std::string elementText(const Region &r, int64_t e) {
  return indexText(r.names.empty() ? "?" : r.names[0], r.array->shape, e);
}

namespace {
constexpr uint64_t kElementBits = 48; // a log key: region << 48 | element
} // namespace

AccessTracker::AccessTracker(const Memory &mem, bool races, bool full, bool locked,
                             unsigned logThreads, const std::vector<unsigned> &units)
    : mem_(mem), races_(races), full_(full || races), locked_(locked) {
  id_ = gTrackerIds.fetch_add(1, std::memory_order_relaxed);
  if (races && !full && logThreads > 0 && mem.regions().size() < (size_t(1) << 15)) {
    logged_ = true;
    for (const auto &r : mem.regions())
      logged_ = logged_ && r->size < (uint64_t(1) << kElementBits);
  }
  if (logged_) {
    full_ = false;
    // At most 4 Mi intervals in all (96 MiB), then the exact check instead.
    maxLogEntries_ = std::max<size_t>(size_t(1) << 16, (size_t(1) << 22) / logThreads);
  }
  mayStore_.assign(mem.regions().size(), 1);
  keepIn_.assign(mem.regions().size(), 1);
  for (const auto &r : mem.regions()) {
    RegionShadow s;
    s.region = r.get();
    s.index = static_cast<unsigned>(shadows_.size());
    s.elemSize = byteSize(r->array->dtype);
    if (size_t i = shadows_.size();
        i < units.size() && units[i] > 0 && units[i] < s.elemSize && s.elemSize % units[i] == 0) {
      s.perElement = s.elemSize / units[i];
      s.elemSize = units[i];
    }
    while ((1u << s.shift) < s.elemSize)
      ++s.shift;
    s.elements = static_cast<int64_t>(r->size >> s.shift);
    if (full_)
      s.pages.resize(static_cast<size_t>(((r->size >> s.shift) >> kPageBits) + 1));
    else {
      s.storedSize = static_cast<size_t>(r->size >> s.shift);
      s.chunks = std::make_unique<std::atomic<uint64_t *>[]>(s.numChunks());
    }
    shadows_.push_back(std::move(s));
  }
  storedTo_ = std::make_unique<std::atomic<bool>[]>(shadows_.size());
  for (size_t i = 0; i < shadows_.size(); ++i)
    storedTo_[i].store(false, std::memory_order_relaxed);
}

AccessTracker::RegionShadow::~RegionShadow() {
  if (chunks)
    for (size_t c = 0; c < numChunks(); ++c)
      std::free(chunks[c].load(std::memory_order_relaxed));
}

AccessTracker::~AccessTracker() = default;

uint64_t *AccessTracker::RegionShadow::storedWord(uint64_t e) {
  std::atomic<uint64_t *> &slot = chunks[e >> kChunkBits];
  uint64_t *c = slot.load(std::memory_order_acquire);
  if (!c) {
    // Cache-line aligned: programs that store neighbouring chunks' words
    // never share a line through a chunk's misalignment.
    constexpr size_t kBytes = (size_t(1) << (kChunkBits - 6)) * 8;
    auto *fresh = static_cast<uint64_t *>(std::aligned_alloc(64, kBytes));
    if (!fresh)
      throw std::bad_alloc();
    std::memset(fresh, 0, kBytes);
    if (slot.compare_exchange_strong(c, fresh, std::memory_order_acq_rel))
      c = fresh;
    else
      std::free(fresh); // another thread's chunk won
  }
  return c + ((e & ((uint64_t(1) << kChunkBits) - 1)) >> 6);
}

void AccessTracker::reset() {
  for (RegionShadow &s : shadows_)
    for (auto &p : s.pages)
      p.reset();
  for (RegionShadow &s : shadows_)
    if (s.chunks)
      for (size_t c = 0; c < s.numChunks(); ++c)
        std::free(s.chunks[c].exchange(nullptr));
  sync_.clear();
  keptElements_.clear();
  keptBlocks_.clear();
  oob_.clear();
  {
    std::lock_guard<std::mutex> lock(logsMutex_);
    logs_.clear();
    id_ = gTrackerIds.fetch_add(1, std::memory_order_relaxed); // threads' cached logs are gone
  }
  overflow_.store(false, std::memory_order_relaxed);
  overflowed_ = false;
  for (size_t i = 0; i < shadows_.size(); ++i)
    storedTo_[i].store(false, std::memory_order_relaxed);
}

AccessTracker::RegionShadow *AccessTracker::shadowOf(uint64_t addr) {
  const Region *r = mem_.find(addr, 1);
  if (!r)
    return nullptr;
  for (RegionShadow &s : shadows_)
    if (s.region == r)
      return &s;
  return nullptr;
}

inline AccessTracker::Block &AccessTracker::block(RegionShadow &s, int64_t e) {
  auto &page = s.pages[static_cast<size_t>(e >> kPageBits)];
  if (!page)
    page.reset(new Block[size_t(1) << (kPageBits - kBlockBits)]);
  return page[static_cast<size_t>((e & ((int64_t(1) << kPageBits) - 1)) >> kBlockBits)];
}

ShadowCell &AccessTracker::cell(RegionShadow &s, int64_t e) {
  Block &b = block(s, e);
  if (!b.elems) {
    b.elems.reset(new ShadowCell[kBlock]);
    std::fill(b.elems.get(), b.elems.get() + kBlock, b.cell);
  }
  return b.elems[static_cast<size_t>(e & (kBlock - 1))];
}

const ShadowCell *AccessTracker::cellIfAny(const RegionShadow &s, int64_t e) const {
  size_t p = static_cast<size_t>(e >> kPageBits);
  if (p >= s.pages.size() || !s.pages[p])
    return nullptr;
  const Block &b = s.pages[p][static_cast<size_t>((e & ((int64_t(1) << kPageBits) - 1)) >>
                                                  kBlockBits)];
  return b.elems ? &b.elems[static_cast<size_t>(e & (kBlock - 1))] : &b.cell;
}

void AccessTracker::acquire(Frame &f, uint64_t addr) {
  auto it = sync_.find(addr);
  if (it != sync_.end())
    join(f.vc, it->second);
}

void AccessTracker::release(Frame &f, uint64_t addr) {
  VectorClock &s = sync_[addr];
  join(s, f.vc);
  raise(s, static_cast<int32_t>(f.index), f.clock);
}

namespace {
/// Sets `bits` in the coverage word at `p` (see setStored).
inline void orStored(uint64_t *p, uint64_t bits) {
  std::atomic_ref<uint64_t> w(*p);
  if ((w.load(std::memory_order_relaxed) & bits) == bits)
    return; // no write (no line bouncing)
  // A whole word is a plain store (no locked instruction): bits are only ever
  // set during a launch, so any OR of another thread, before or after it,
  // leaves the word all ones too.
  if (bits == ~uint64_t(0))
    w.store(bits, std::memory_order_relaxed);
  else
    w.fetch_or(bits, std::memory_order_relaxed);
}
} // namespace

void AccessTracker::setStored(RegionShadow &s, int64_t e0, int64_t count, const uint8_t *mask,
                              int64_t lane0, int64_t laneStep) {
  int64_t end = std::min(e0 + count, s.elements);
  // The chunk's words are found once per chunk (64 words), not per word.
  constexpr int64_t kChunkMask = (int64_t(1) << kChunkBits) - 1;
  for (int64_t e = e0; e < end;) {
    int64_t chunkEnd = std::min(end, (e | kChunkMask) + 1);
    uint64_t *words = nullptr;
    if (!mask) { // every element: whole words between a partial first and last
      words = s.storedWord(static_cast<uint64_t>(e & ~kChunkMask));
      int64_t w0 = (e & kChunkMask) >> 6, w1 = ((chunkEnd - 1) & kChunkMask) >> 6;
      for (int64_t w = w0; w <= w1; ++w) {
        unsigned lo = w == w0 ? static_cast<unsigned>(e & 63) : 0;
        unsigned hi = w == w1 ? static_cast<unsigned>((chunkEnd - 1) & 63) : 63; // (inclusive)
        orStored(words + w, (~uint64_t(0) >> (63 - (hi - lo))) << lo);
      }
      e = chunkEnd;
      continue;
    }
    for (; e < chunkEnd;) {
      int64_t wordEnd = std::min(chunkEnd, (e | 63) + 1);
      uint64_t bits = 0;
      const uint8_t *m = mask + lane0 + (e - e0) * laneStep;
      for (int64_t k = e; k < wordEnd; ++k, m += laneStep)
        bits |= uint64_t(*m != 0) << (k & 63);
      if (bits) {
        if (!words)
          words = s.storedWord(static_cast<uint64_t>(e & ~kChunkMask));
        orStored(words + ((e & kChunkMask) >> 6), bits);
      }
      e = wordEnd;
    }
  }
}

void AccessTracker::recordStores(const Instr &in, const uint64_t *addr, const uint8_t *mask,
                                 int64_t n, unsigned size) {
  thread_local std::vector<Run> runs;
  if (runsOf(in, addr, mask, n, size, runs)) { // a run at a time, a word at a time
    for (const Run &r : runs)
      setStored(*r.s, r.e0, r.count, mask, r.lane0, r.laneStep);
    return;
  }
  RegionShadow *s = nullptr;
  for (int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i])
      continue;
    uint64_t a = addr[i];
    if (!(s = shadowNear(s, a)))
      continue;
    uint64_t lo = s->region->base;
    int64_t first = static_cast<int64_t>((a - lo) >> s->shift);
    int64_t last = static_cast<int64_t>((a - lo + size - 1) >> s->shift);
    setStored(*s, first, last - first + 1, nullptr, 0, 0);
  }
}

void AccessTracker::saveBeforeWrite(const std::vector<Run> *runs, const uint64_t *addr,
                                    const uint8_t *mask, int64_t n, unsigned size) {
  if (runs) {
    for (const Run &r : *runs)
      journal_->beforeWrite(r.s->region->host + (static_cast<uint64_t>(r.e0) << r.s->shift),
                            static_cast<size_t>(r.count) << r.s->shift);
    return;
  }
  RegionShadow *s = nullptr;
  for (int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i])
      continue;
    if (!(s = shadowNear(s, addr[i])))
      continue;
    uint64_t off = addr[i] - s->region->base;
    journal_->beforeWrite(s->region->host + off,
                          static_cast<size_t>(std::min<uint64_t>(size, s->region->size - off)));
  }
}

AccessTracker::ThreadLog &AccessTracker::threadLog() {
  thread_local uint64_t cachedId = 0;
  thread_local ThreadLog *cached = nullptr;
  if (cachedId != id_) {
    std::lock_guard<std::mutex> lock(logsMutex_);
    logs_.push_back(std::make_unique<ThreadLog>());
    cached = logs_.back().get();
    cachedId = id_;
  }
  return *cached;
}

void AccessTracker::logInterval(ThreadLog &log, unsigned region, int64_t first, int64_t last,
                                uint32_t progKind) {
  uint64_t r = uint64_t(region) << kElementBits;
  uint64_t key = r | static_cast<uint64_t>(first), lastKey = r | static_cast<uint64_t>(last);
  std::vector<LogEntry> &v = log.entries;
  if (!v.empty()) { // the same program's next piece of one interval: extend it
    LogEntry &b = v.back();
    if (b.progKind == progKind && (b.key >> kElementBits) == region && key >= b.key &&
        key <= b.last + 1) {
      b.last = std::max(b.last, lastKey);
      return;
    }
  }
  if (v.size() >= maxLogEntries_) {
    overflow_.store(true, std::memory_order_relaxed);
    return;
  }
  v.push_back({key, lastKey, progKind});
}

void AccessTracker::recordLogged(Frame &f, const Instr &in, const uint64_t *addr,
                                 const uint8_t *mask, int64_t n, unsigned size, Access kind) {
  if (kind == Access::Atomic) { // (the launcher never logs a kernel with atomics)
    overflow_.store(true, std::memory_order_relaxed);
    return;
  }
  bool store = kind == Access::Store;
  uint32_t pk = static_cast<uint32_t>(f.index) << 1 | uint32_t(store);
  ThreadLog &log = threadLog();
  thread_local std::vector<Run> runs;
  bool byRuns = runsOf(in, addr, mask, n, size, runs);
  if (byRuns) {
    logRuns(log, runs.data(), runs.size(), mask, pk);
  } else {
    RegionShadow *s = nullptr;
    for (int64_t i = 0; i < n; ++i) {
      if (mask && !mask[i])
        continue;
      uint64_t a = addr[i];
      if (!(s = shadowNear(s, a)))
        continue; // (the op's own checks trap on it)
      if (!mayStore_[s->index]) {
        if (!store)
          continue;
        overflow_.store(true, std::memory_order_relaxed); // (as in logRuns)
      }
      uint64_t lo = s->region->base;
      int64_t first = static_cast<int64_t>((a - lo) >> s->shift);
      int64_t last =
          std::min(static_cast<int64_t>((a - lo + size - 1) >> s->shift), s->elements - 1);
      if (store) {
        markStored(*s);
        setStored(*s, first, last - first + 1, nullptr, 0, 0);
      }
      logInterval(log, s->index, first, last, pk);
    }
  }
  if (store && journal_)
    saveBeforeWrite(byRuns ? &runs : nullptr, addr, mask, n, size);
}

void AccessTracker::logRuns(ThreadLog &log, const Run *runs, size_t count, const uint8_t *mask,
                            uint32_t progKind) {
  bool store = progKind & 1;
  for (const Run *r = runs; r != runs + count; ++r) {
    if (!mayStore_[r->s->index]) {
      if (!store)
        continue; // no program stores there: a load cannot race
      // A store the kernel's text does not show (a pointer into another
      // buffer): its loads were not logged, so check element-wise.
      overflow_.store(true, std::memory_order_relaxed);
    }
    if (store) {
      markStored(*r->s);
      setStored(*r->s, r->e0, r->count, mask, r->lane0, r->laneStep);
    }
    logInterval(log, r->s->index, r->e0, r->e0 + r->count - 1, progKind);
  }
}

bool AccessTracker::recordRange(Frame &f, const Instr &in, uint64_t base, int64_t n, unsigned size,
                                Access kind) {
  if (n <= 0)
    return true;
  if (!full_ && kind != Access::Atomic) { // one run, no address per lane
    if (!logged_ && kind == Access::Load)
      return true; // coverage alone records stores only
    RegionShadow *s = shadowOf(base);
    uint64_t off = s ? base - s->region->base : 0;
    if (s && s->elemSize == size && (off & (size - 1)) == 0 &&
        off + static_cast<uint64_t>(n) * size <= s->region->size) {
      Run r{0, 1, n, static_cast<int64_t>(off >> s->shift), s};
      if (!logged_) {
        setStored(*s, r.e0, n, nullptr, 0, 0);
        return true;
      }
      bool store = kind == Access::Store;
      logRuns(threadLog(), &r, 1, nullptr, static_cast<uint32_t>(f.index) << 1 | uint32_t(store));
      if (store && journal_)
        journal_->beforeWrite(s->region->host + off, static_cast<size_t>(n) * size);
      return true;
    }
  }
  thread_local std::vector<uint64_t> addr;
  addr.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    addr[static_cast<size_t>(i)] = base + static_cast<uint64_t>(i) * size;
  return record(f, in, addr.data(), nullptr, n, size, kind);
}

void AccessTracker::finishThread() {
  if (!logged_)
    return;
  ThreadLog &log = threadLog();
  std::sort(log.entries.begin(), log.entries.end(),
            [](const LogEntry &a, const LogEntry &b) { return a.key < b.key; });
  for (const LogEntry &e : log.entries)
    log.maxSpan = std::max(log.maxSpan, e.last - e.key);
}

namespace {
/// The two largest interval ends seen, of two different programs.
struct Top2 {
  uint64_t h1 = 0, h2 = 0;
  int64_t p1 = -1, p2 = -1;
  /// Whether an interval of a program other than `p` reaches `key`.
  bool reaches(int64_t p, uint64_t key) const {
    return p1 != p ? p1 >= 0 && h1 >= key : p2 >= 0 && h2 >= key;
  }
  void add(int64_t p, uint64_t h) {
    if (p == p1) {
      h1 = std::max(h1, h);
    } else if (p1 < 0 || h > h1) {
      h2 = h1, p2 = p1;
      h1 = h, p1 = p;
    } else if (p2 < 0 || h > h2) {
      h2 = h, p2 = p;
    }
  }
};
} // namespace

size_t AccessTracker::prepareCheck(unsigned parts) {
  splitters_.clear();
  maxSpan_ = 0;
  if (!logged_)
    return 0;
  if (overflow_.load(std::memory_order_relaxed)) {
    overflowed_ = true;
    return 0;
  }
  // Parts of the key space with about as many intervals each: quantiles of
  // the largest log (threads take programs in turn, so logs are alike).
  const ThreadLog *largest = nullptr;
  for (const auto &log : logs_) {
    maxSpan_ = std::max(maxSpan_, log->maxSpan); // (finishThread() found each log's)
    if (!largest || log->entries.size() > largest->entries.size())
      largest = log.get();
  }
  if (!largest || largest->entries.empty())
    return 0;
  const std::vector<LogEntry> &v = largest->entries;
  // (A part below ~4096 intervals per log is not worth another thread's wake-up.)
  parts = std::max(1u, std::min<unsigned>(parts, static_cast<unsigned>(v.size() / 4096 + 1)));
  splitters_.push_back(0);
  for (unsigned i = 1; i < parts; ++i) {
    uint64_t k = v[v.size() * i / parts].key;
    if (k > splitters_.back())
      splitters_.push_back(k);
  }
  splitters_.push_back(UINT64_MAX);
  return splitters_.size() - 1;
}

bool AccessTracker::checkPart(size_t part) const {
  // The threads' sorted logs merged in ascending start: an interval overlaps
  // an earlier-starting one exactly when that one's end reaches its start.
  // Part [lo, hi) checks the intervals starting in it against every earlier
  // one that can reach them: those starting at lo - maxSpan_ or later.
  uint64_t lo = splitters_[part], hi = splitters_[part + 1];
  uint64_t from = lo > maxSpan_ ? lo - maxSpan_ : 0;
  struct Cursor {
    const LogEntry *p, *end;
  };
  auto later = [](const Cursor &a, const Cursor &b) { return a.p->key > b.p->key; };
  std::priority_queue<Cursor, std::vector<Cursor>, decltype(later)> heap(later);
  auto byKey = [](const LogEntry &e, uint64_t k) { return e.key < k; };
  for (const auto &log : logs_) {
    const LogEntry *b = log->entries.data(), *e = b + log->entries.size();
    const LogEntry *first = std::lower_bound(b, e, from, byKey);
    const LogEntry *last = hi == UINT64_MAX ? e : std::lower_bound(first, e, hi, byKey);
    if (first != last)
      heap.push({first, last});
  }
  Top2 all, stores;
  while (!heap.empty()) {
    Cursor c = heap.top();
    heap.pop();
    const LogEntry e = *c.p;
    if (++c.p != c.end)
      heap.push(c);
    if (!storedTo_[e.key >> kElementBits].load(std::memory_order_relaxed))
      continue; // no store reached this buffer
    int64_t prog = e.progKind >> 1;
    bool store = e.progKind & 1;
    if (e.key >= lo && (store ? all : stores).reaches(prog, e.key))
      return true;
    all.add(prog, e.last);
    if (store)
      stores.add(prog, e.last);
  }
  return false;
}

namespace {
/// Whether addr[i] == a0 + i * step for every i < n (4 independent chains:
/// this runs once per memory op over every lane).
bool arithmetic(const uint64_t *addr, int64_t n, uint64_t a0, uint64_t step) {
  uint64_t d0 = 0, d1 = 0, d2 = 0, d3 = 0, a = a0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4, a += 4 * step) {
    d0 |= addr[i] ^ a;
    d1 |= addr[i + 1] ^ (a + step);
    d2 |= addr[i + 2] ^ (a + 2 * step);
    d3 |= addr[i + 3] ^ (a + 3 * step);
  }
  for (; i < n; ++i, a += step)
    d0 |= addr[i] ^ a;
  return (d0 | d1 | d2 | d3) == 0;
}
} // namespace

bool AccessTracker::runsOf(const Instr &in, const uint64_t *addr, const uint8_t *mask, int64_t n,
                           unsigned size, std::vector<Run> &runs) {
  runs.clear();
  if (n <= 0)
    return true;
  RegionShadow *s = nullptr;
  // A run of `count` lanes, its masked-off ends left out, in one region.
  auto add = [&](int64_t lane0, int64_t step, int64_t count) {
    if (mask) {
      while (count > 0 && !mask[lane0])
        lane0 += step, --count;
      while (count > 0 && !mask[lane0 + (count - 1) * step])
        --count;
      if (count == 0)
        return true;
    }
    uint64_t a = addr[lane0];
    if (!(s = shadowNear(s, a)) || s->elemSize != size)
      return false;
    uint64_t off = a - s->region->base;
    if ((off & (size - 1)) || off + static_cast<uint64_t>(count) * size > s->region->size)
      return false;
    runs.push_back({lane0, step, count, static_cast<int64_t>(off >> s->shift), s});
    return true;
  };
  const uint64_t sz = size, a0 = addr[0];
  if (addr[n - 1] == a0 + static_cast<uint64_t>(n - 1) * sz && arithmetic(addr, n, a0, sz))
    return add(0, 1, n);
  int64_t cols = in.g0;
  if (cols <= 1 || n % cols != 0 || n == cols)
    return false;
  int64_t rows = n / cols;
  if (addr[cols - 1] == a0 + static_cast<uint64_t>(cols - 1) * sz) { // rows of consecutive lanes
    bool d = true;
    for (int64_t r = 0; r < rows && d; ++r)
      d = arithmetic(addr + r * cols, cols, addr[r * cols], sz);
    if (d) {
      for (int64_t r = 0; r < rows; ++r)
        if (!add(r * cols, 1, cols))
          return false;
      return true;
    }
  }
  if (addr[cols] == a0 + sz) { // columns of consecutive lanes (a transposed tile)
    uint64_t d = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const uint64_t *row = addr + r * cols, step = static_cast<uint64_t>(r) * sz;
      for (int64_t j = 0; j < cols; ++j)
        d |= row[j] ^ (addr[j] + step);
    }
    if (d == 0) {
      for (int64_t j = 0; j < cols; ++j)
        if (!add(j, cols, rows))
          return false;
      return true;
    }
  }
  return false;
}

template <typename Whole, typename Each>
bool AccessTracker::forRun(const Run &r, const uint8_t *mask, Whole &&whole, Each &&each) {
  RegionShadow &s = *r.s;
  int64_t e = r.e0, end = r.e0 + r.count;
  while (e < end) {
    int64_t blockEnd = std::min(end, (e | (kBlock - 1)) + 1);
    int64_t lane = r.lane0 + (e - r.e0) * r.laneStep, step = r.laneStep;
    Block &b = block(s, e);
    bool all = (e & (kBlock - 1)) == 0 && blockEnd - e == kBlock;
    if (all && mask) {
      uint8_t on = 1;
      for (int64_t k = 0; k < kBlock; ++k)
        on &= mask[lane + k * step] != 0;
      all = on;
    }
    if (all && !b.elems) {
      if (!whole(b.cell, e))
        return false;
    } else {
      for (int64_t k = e; k < blockEnd; ++k)
        if ((!mask || mask[lane + (k - e) * step]) && !each(cell(s, k), k))
          return false;
      if (all) { // every element changed alike: one cell again if all are equal
        const ShadowCell *c = b.elems.get();
        // (not while elements have readers kept aside of their own: those are per element)
        bool same = !(c[0].more & ShadowCell::kMoreElement);
        for (int64_t k = 1; k < kBlock && same; ++k)
          same = std::memcmp(&c[k], &c[0], sizeof(ShadowCell)) == 0;
        if (same) {
          b.cell = c[0];
          b.elems.reset();
        }
      }
    }
    e = blockEnd;
  }
  return true;
}

bool AccessTracker::recordRuns(Frame &f, const Instr &in, const std::vector<Run> &runs,
                               const uint8_t *mask, Access kind) {
  const Epoch me{static_cast<int32_t>(f.index), f.clock, in.site};
  if (races_) { // every block checked before any changes
    for (const Run &r : runs) {
      const RegionShadow &s = *r.s;
      auto ok = [&](const ShadowCell &c, int64_t e, bool block) {
        return before(f, c.w) && (kind != Access::Store || !unorderedReader(f, s, e, c, block));
      };
      if (!forRun(
              r, mask, [&](const ShadowCell &c, int64_t e) { return ok(c, e, true); },
              [&](const ShadowCell &c, int64_t e) { return ok(c, e, false); }))
        return false;
    }
  }
  for (const Run &r : runs) {
    RegionShadow &s = *r.s;
    if (kind == Access::Store)
      markStored(s);
    auto update = [&](ShadowCell &c, int64_t e, bool block) {
      if (kind == Access::Store) {
        c.w = me;
        if (c.more)
          forgetKept(s, e, c, block);
      } else {
        recordRead(f, s, e, c, block, me);
      }
      return true;
    };
    forRun(
        r, mask, [&](ShadowCell &c, int64_t e) { return update(c, e, true); },
        [&](ShadowCell &c, int64_t e) { return update(c, e, false); });
  }
  return true;
}

std::optional<Epoch> AccessTracker::unorderedReader(const Frame &f, const RegionShadow &s,
                                                    int64_t e, const ShadowCell &c, bool block) {
  if (!before(f, c.r1))
    return c.r1;
  if (!before(f, c.r2))
    return c.r2;
  if (!c.more)
    return std::nullopt;
  std::lock_guard<std::mutex> lock(keptMutex_);
  auto scan = [&](const std::unordered_map<uint64_t, Kept> &kept,
                  uint64_t key) -> std::optional<Epoch> {
    auto it = kept.find(key);
    if (it != kept.end())
      for (const Epoch &k : it->second.readers)
        if (!before(f, k))
          return k;
    return std::nullopt;
  };
  std::optional<Epoch> r;
  if (!block && (c.more & ShadowCell::kMoreElement))
    r = scan(keptElements_, keptKey(s, e, false));
  if (!r && (c.more & ShadowCell::kMoreBlock))
    r = scan(keptBlocks_, keptKey(s, e, true));
  return r;
}

void AccessTracker::recordRead(const Frame &f, const RegionShadow &s, int64_t e, ShadowCell &c,
                               bool block, const Epoch &me) {
  if (c.r1.prog == me.prog) {
    c.r1 = me;
    return;
  }
  // c.r2 leaves the cell. It needs no keeping when it is ordered before this
  // read (a later store ordered after this read is ordered after it too; one
  // that is not races with this read), nor without atomics (see the header).
  if (keepReaders_ && keepIn_[s.index] && !before(f, c.r2)) {
    std::lock_guard<std::mutex> lock(keptMutex_);
    Kept &k = (block ? keptBlocks_ : keptElements_)[keptKey(s, e, block)];
    std::vector<Epoch> &v = k.readers;
    v.push_back(c.r2);
    c.more |= block ? ShadowCell::kMoreBlock : ShadowCell::kMoreElement;
    if (v.size() >= k.limit) { // the newest of each program, none ordered before this read
      std::sort(v.begin(), v.end(), [](const Epoch &a, const Epoch &b) {
        return a.prog != b.prog ? a.prog < b.prog : a.clock > b.clock;
      });
      size_t n = 0;
      for (size_t i = 0; i < v.size(); ++i)
        if ((i == 0 || v[i].prog != v[i - 1].prog) && !before(f, v[i]))
          v[n++] = v[i];
      v.resize(n);
      k.limit = std::max<size_t>(8, 2 * n);
    }
  }
  c.r2 = c.r1;
  c.r1 = me;
}

void AccessTracker::forgetKept(const RegionShadow &s, int64_t e, ShadowCell &c, bool block) {
  std::lock_guard<std::mutex> lock(keptMutex_);
  if (block) { // a uniform block: its cell is every element's
    keptBlocks_.erase(keptKey(s, e, true));
    c.more = 0;
  } else if (c.more & ShadowCell::kMoreElement) { // (its block's stay: other elements' too)
    keptElements_.erase(keptKey(s, e, false));
    c.more &= ~ShadowCell::kMoreElement;
  }
}

bool AccessTracker::recordLanes(Frame &f, const Instr &in, const uint64_t *addr,
                                const uint8_t *mask, int64_t n, unsigned size, Access kind) {
  // The lanes of one atomic apply one after another in row-major order, each
  // acquire-release on its own address: what lane i does is not ordered by
  // the acquire of a later lane, and a later lane's access is not before lane
  // i's release (so each lane has a clock of its own).
  bool atomic = kind == Access::Atomic;
  RegionShadow *s = nullptr;
  for (int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i])
      continue;
    uint64_t a = addr[i];
    if (atomic)
      acquire(f, a);
    const Epoch me{static_cast<int32_t>(f.index), f.clock, in.site};
    if ((s = shadowNear(s, a))) { // (else the op's own checks trap on it)
      uint64_t lo = s->region->base;
      int64_t first = static_cast<int64_t>((a - lo) >> s->shift);
      int64_t last =
          std::min(static_cast<int64_t>((a - lo + size - 1) >> s->shift), s->elements - 1);
      for (int64_t e = first; e <= last; ++e) {
        ShadowCell &c = cell(*s, e);
        if (races_ && !check(f, in, i, *s, e, c, kind))
          return false;
        if (kind == Access::Store) {
          markStored(*s);
          c.w = me;
          if (c.more)
            forgetKept(*s, e, c, false);
        } else {
          recordRead(f, *s, e, c, false, me);
        }
      }
    }
    if (atomic) {
      release(f, a);
      ++f.clock;
    }
  }
  return true;
}

uint64_t AccessTracker::stripesOf(const std::vector<Run> *runs, const uint64_t *addr,
                                  const uint8_t *mask, int64_t n, unsigned size) {
  uint64_t bits = 0;
  auto span = [&](const RegionShadow &s, int64_t first, int64_t last) {
    for (int64_t p = first >> kPageBits; p <= (last >> kPageBits) && bits != ~uint64_t(0); ++p)
      bits |= uint64_t(1) << stripeOf(s, p << kPageBits);
  };
  if (runs) {
    for (const Run &r : *runs)
      span(*r.s, r.e0, r.e0 + r.count - 1);
    return bits;
  }
  RegionShadow *s = nullptr;
  for (int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i])
      continue;
    if (!(s = shadowNear(s, addr[i])))
      continue;
    uint64_t off = addr[i] - s->region->base;
    span(*s, static_cast<int64_t>(off >> s->shift),
         static_cast<int64_t>((off + size - 1) >> s->shift));
  }
  return bits;
}

bool AccessTracker::record(Frame &f, const Instr &in, const uint64_t *addr, const uint8_t *mask,
                           int64_t n, unsigned size, Access kind) {
  if (logged_) {
    recordLogged(f, in, addr, mask, n, size, kind);
    return true;
  }
  if (!full_) { // coverage only: which elements were stored (a bitmap: no lock needed)
    if (kind == Access::Store)
      recordStores(in, addr, mask, n, size);
    return true;
  }
  thread_local std::vector<Run> runs;
  bool byRuns = kind != Access::Atomic && runsOf(in, addr, mask, n, size, runs);
  uint64_t locked = 0;
  if (locked_) { // the stripes this access touches, in ascending order
    locked = stripesOf(byRuns ? &runs : nullptr, addr, mask, n, size);
    for (uint64_t b = locked; b; b &= b - 1)
      stripes_[static_cast<size_t>(__builtin_ctzll(b))].lock();
  }
  bool ok = (byRuns && recordRuns(f, in, runs, mask, kind)) ||
            recordLanes(f, in, addr, mask, n, size, kind); // lane by lane: the exact report
  for (uint64_t b = locked; b; b &= b - 1)
    stripes_[static_cast<size_t>(__builtin_ctzll(b))].unlock();
  if (ok && journal_ && kind != Access::Load)
    saveBeforeWrite(byRuns ? &runs : nullptr, addr, mask, n, size);
  return ok;
}

bool AccessTracker::check(Frame &f, const Instr &in, int64_t lane, const RegionShadow &s, int64_t e,
                          const ShadowCell &c, Access kind) {
  if (!before(f, c.w))
    return report(f, in, lane, s, e, c.w, kind);
  if (kind != Access::Store)
    return true;
  if (std::optional<Epoch> r = unorderedReader(f, s, e, c, false))
    return report(f, in, lane, s, e, *r, kind);
  return true;
}

bool AccessTracker::report(Frame &f, const Instr &in, int64_t lane, const RegionShadow &s,
                           int64_t e, const Epoch &other, Access kind) {
  const Instr &theirs = *sites[other.site];
  std::string elem = accessText(*in.op, s, e), theirElem = accessText(*theirs.op, s, e);
  const char *what = kind == Access::Store  ? "store to "
                     : kind == Access::Load ? "load of "
                                            : "atomic on ";
  ir::OpKind tk = theirs.op->kind();
  const char *their = tk == ir::OpKind::Store  ? "a store"
                      : tk == ir::OpKind::Load ? "a load"
                                               : "an atomic";
  const char *did = tk == ir::OpKind::Store  ? "stored"
                    : tk == ir::OpKind::Load ? "loaded"
                                             : "accessed (atomically)";
  std::string other_ = programText(f.launch, other.prog);
  f.fail(TrapKind::DataRace, in, lane,
         std::string(what) + elem + " by " + programText(f.launch, f.index) + " races with " +
             their + " by " + other_ +
             ": no atomic orders the two programs (the GPU may run them in either order)");
  Trap::Note note;
  ir::Location loc = theirs.op->loc();
  const ir::Module &m = f.launch.kernel.module();
  if (loc.line != 0 && loc.file < m.files.size()) {
    note.file = m.files[loc.file];
    note.line = loc.line;
    note.col = loc.col;
    note.sourceLine = f.launch.kernel.sourceLine(loc.file, loc.line);
  }
  note.text = other_ + " " + did + " " + theirElem + " here";
  f.trap->notes.push_back(std::move(note));
  return false;
}

std::string AccessTracker::accessText(const ir::Op &op, const RegionShadow &s, int64_t e) const {
  uint64_t addr = s.region->base + (static_cast<uint64_t>(e) << s.shift);
  // (A shadow unit narrower than the view's elements, a byte of a float
  // reached through a `char *`, is named by the element holding it.)
  auto inView = [&](const ParamView &v) {
    return std::find(s.region->names.begin(), s.region->names.end(), v.name) !=
               s.region->names.end() &&
           addr >= v.start;
  };
  auto text = [&](const ParamView &v) {
    return indexText(v.name, v.shape, static_cast<int64_t>((addr - v.start) / v.elemSize));
  };
  const ir::Value *p = op.numOperands() ? pointerParam(op.operand(0)) : nullptr;
  for (const ParamView &v : params_)
    if (p && v.param == p && inView(v))
      return text(v);
  for (const ParamView &v : params_) // the pointer's parameter is not known
    if (inView(v))
      return text(v);
  return elementText(*s.region, e / s.perElement);
}

void AccessTracker::noteOutOfBounds(int32_t prog, uint64_t addr, uint32_t site) {
  std::lock_guard<std::mutex> lock(oobMutex_);
  oob_.push_back({prog, addr, site});
}

AccessTracker::Coverage AccessTracker::coverage(const Region &r) const {
  Coverage c;
  for (const RegionShadow &s : shadows_) {
    if (s.region != &r)
      continue;
    c.elements = s.elements;
    int64_t start = -1;
    // Elements [e0, e1) all stored or all not.
    auto span = [&](int64_t e0, int64_t e1, bool stored) {
      e1 = std::min(e1, c.elements);
      if (e0 >= e1)
        return;
      if (stored) {
        c.stored += e1 - e0;
        if (start >= 0)
          c.unwritten.emplace_back(start, e0 - 1);
        start = -1;
      } else if (start < 0) {
        start = e0;
      }
    };
    constexpr int64_t kPage = int64_t(1) << kPageBits, kChunk = int64_t(1) << kChunkBits;
    bool none = full_ && !storedTo_[s.index].load(std::memory_order_relaxed);
    if (none)
      span(0, c.elements, false); // no store reached this buffer
    for (int64_t e = none ? c.elements : 0; e < c.elements;) {
      if (full_) {
        const auto &page = s.pages[static_cast<size_t>(e >> kPageBits)];
        if (!page) { // no access reached this page
          span(e, e + kPage, false);
          e += kPage;
          continue;
        }
        const Block &b = page[static_cast<size_t>((e & (kPage - 1)) >> kBlockBits)];
        if (!b.elems)
          span(e, e + kBlock, b.cell.w.prog >= 0);
        else
          for (int64_t k = 0; k < kBlock; ++k)
            span(e + k, e + k + 1, b.elems[static_cast<size_t>(k)].w.prog >= 0);
        e += kBlock;
        continue;
      }
      const uint64_t *chunk =
          s.chunks[static_cast<size_t>(e >> kChunkBits)].load(std::memory_order_acquire);
      if (!chunk) {
        span(e, e + kChunk, false); // no store reached this chunk: all of it is unwritten
        e += kChunk;
        continue;
      }
      // e is a multiple of kChunk here. Whole words alike are taken as one
      // run (a chunk of a fully stored buffer is one span), others bit run by bit run.
      constexpr int64_t kWords = kChunk >> 6;
      for (int64_t k = 0; k < kWords;) {
        uint64_t w = chunk[k];
        if (w == 0 || w == ~uint64_t(0)) {
          int64_t k1 = k + 1;
          while (k1 < kWords && chunk[k1] == w)
            ++k1;
          span(e + (k << 6), e + (k1 << 6), w != 0);
          k = k1;
          continue;
        }
        for (int b = 0; b < 64;) { // runs of equal bits
          bool bit = (w >> b) & 1;
          uint64_t rest = (bit ? ~w : w) >> b; // the first bit that differs ends the run
          int len = rest ? __builtin_ctzll(rest) : 64 - b;
          span(e + (k << 6) + b, e + (k << 6) + b + len, bit);
          b += len;
        }
        ++k;
      }
      e += kChunk;
    }
    if (start >= 0)
      c.unwritten.emplace_back(start, c.elements - 1);
    if (s.perElement > 1) { // units narrower than elements: stored if any of its units was
      const int64_t k = s.perElement;
      Coverage units = std::move(c);
      c = Coverage{};
      c.elements = units.elements / k;
      c.stored = c.elements;
      for (const auto &[a, b] : units.unwritten)
        if (int64_t lo = (a + k - 1) / k, hi = (b + 1) / k - 1; lo <= hi) {
          c.unwritten.emplace_back(lo, hi);
          c.stored -= hi - lo + 1;
        }
    }
  }
  return c;
}

std::pair<int32_t, int32_t> AccessTracker::touch(const Region &r, int64_t e) const {
  std::pair<int32_t, int32_t> t{-1, -1};
  for (const RegionShadow &s : shadows_)
    if (s.region == &r) // (units narrower than the element: the first unit touched tells)
      for (int64_t u = e * s.perElement; u < (e + 1) * s.perElement; ++u)
        if (const ShadowCell *c = cellIfAny(s, u)) {
          if (t.first < 0)
            t.first = c->w.prog;
          if (t.second < 0)
            t.second = c->r1.prog;
        }
  return t;
}

} // namespace tc::interp
