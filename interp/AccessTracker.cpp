#include "interp/AccessTracker.h"

#include "interp/Interpreter.h"
#include "runtime/Launch.h"

#include <algorithm>
#include <atomic>
#include <cstring>

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

std::string elementText(const Region &r, int64_t e) {
  std::string name = r.names.empty() ? "?" : r.names[0];
  const std::vector<int64_t> &shape = r.array->shape;
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

AccessTracker::AccessTracker(const Memory &mem, bool races, bool full, bool locked)
    : mem_(mem), races_(races), full_(full || races), locked_(locked) {
  for (const auto &r : mem.regions()) {
    RegionShadow s;
    s.region = r.get();
    s.index = static_cast<unsigned>(shadows_.size());
    s.elemSize = byteSize(r->array->dtype);
    while ((1u << s.shift) < s.elemSize)
      ++s.shift;
    s.elements = static_cast<int64_t>(r->size >> s.shift);
    if (full_)
      s.pages.resize(static_cast<size_t>(((r->size >> s.shift) >> kPageBits) + 1));
    else {
      s.storedSize = static_cast<size_t>(r->size >> s.shift);
      s.chunks = std::make_unique<std::atomic<uint8_t *>[]>(s.numChunks());
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

uint8_t *AccessTracker::RegionShadow::storedAt(uint64_t e) {
  std::atomic<uint8_t *> &slot = chunks[e >> kChunkBits];
  uint8_t *c = slot.load(std::memory_order_acquire);
  if (!c) {
    auto *fresh = static_cast<uint8_t *>(std::calloc(size_t(1) << kChunkBits, 1));
    if (!fresh)
      throw std::bad_alloc();
    if (slot.compare_exchange_strong(c, fresh, std::memory_order_acq_rel))
      c = fresh;
    else
      std::free(fresh); // another thread's chunk won
  }
  return c + (e & ((uint64_t(1) << kChunkBits) - 1));
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
  oob_.clear();
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

void AccessTracker::recordStores(const uint64_t *addr, const uint8_t *mask, int64_t n,
                                 unsigned size) {
  // The common store: consecutive elements of one buffer, in one pass.
  if (n > 0 && !locked_ && addr[n - 1] == addr[0] + static_cast<uint64_t>(n - 1) * size) {
    uint64_t d = 0;
    for (int64_t i = 0; i < n; ++i)
      d |= addr[i] ^ (addr[0] + static_cast<uint64_t>(i) * size);
    RegionShadow *s = d == 0 ? shadowOf(addr[0]) : nullptr;
    if (s && s->elemSize == size && addr[n - 1] + size <= s->region->base + s->region->size) {
      uint64_t e0 = (addr[0] - s->region->base) >> s->shift;
      constexpr uint64_t kChunk = uint64_t(1) << kChunkBits;
      for (int64_t i = 0; i < n;) { // one run per chunk
        uint64_t e = e0 + static_cast<uint64_t>(i);
        int64_t run = std::min<int64_t>(n - i, static_cast<int64_t>(kChunk - (e & (kChunk - 1))));
        uint8_t *w = s->storedAt(e);
        if (mask)
          for (int64_t j = 0; j < run; ++j)
            w[j] |= mask[i + j];
        else
          std::memset(w, 1, static_cast<size_t>(run));
        i += run;
      }
      return;
    }
  }
  RegionShadow *s = nullptr;
  for (int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i])
      continue;
    uint64_t a = addr[i];
    if (!(s = shadowNear(s, a)))
      continue;
    uint64_t lo = s->region->base;
    uint64_t first = (a - lo) >> s->shift, last = (a - lo + size - 1) >> s->shift;
    for (uint64_t e = first; e <= last && e < s->storedSize; ++e)
      std::atomic_ref<uint8_t>(*s->storedAt(e)).store(1, std::memory_order_relaxed);
  }
}

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
  if (addr[n - 1] == a0 + static_cast<uint64_t>(n - 1) * sz) {
    uint64_t d = 0;
    for (int64_t i = 0; i < n; ++i)
      d |= addr[i] ^ (a0 + static_cast<uint64_t>(i) * sz);
    if (d == 0)
      return add(0, 1, n);
  }
  int64_t cols = in.g0;
  if (cols <= 1 || n % cols != 0 || n == cols)
    return false;
  int64_t rows = n / cols;
  if (addr[cols - 1] == a0 + static_cast<uint64_t>(cols - 1) * sz) { // rows of consecutive lanes
    uint64_t d = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const uint64_t *row = addr + r * cols, start = row[0];
      for (int64_t j = 0; j < cols; ++j)
        d |= row[j] ^ (start + static_cast<uint64_t>(j) * sz);
    }
    if (d == 0) {
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
      if (!whole(b.cell))
        return false;
    } else {
      for (int64_t k = e; k < blockEnd; ++k)
        if ((!mask || mask[lane + (k - e) * step]) && !each(cell(s, k)))
          return false;
      if (all) { // every element changed alike: one cell again if all are equal
        const ShadowCell *c = b.elems.get();
        bool same = true;
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
    auto ok = [&](const ShadowCell &c) {
      return before(f, c.w) &&
             (kind != Access::Store || before(f, c.r1.prog == me.prog ? c.r2 : c.r1));
    };
    for (const Run &r : runs)
      if (!forRun(r, mask, ok, ok))
        return false;
  }
  auto update = [&](ShadowCell &c) {
    if (kind == Access::Store) {
      c.w = me;
    } else if (c.r1.prog == me.prog) {
      c.r1 = me;
    } else {
      c.r2 = c.r1;
      c.r1 = me;
    }
    return true;
  };
  for (const Run &r : runs) {
    if (kind == Access::Store)
      markStored(*r.s);
    forRun(r, mask, update, update);
  }
  return true;
}

bool AccessTracker::recordLanes(Frame &f, const Instr &in, const uint64_t *addr,
                                const uint8_t *mask, int64_t n, unsigned size, Access kind) {
  if (kind == Access::Atomic)
    for (int64_t i = 0; i < n; ++i)
      if (!mask || mask[i])
        acquire(f, addr[i]);
  const Epoch me{static_cast<int32_t>(f.index), f.clock, in.site};
  RegionShadow *s = nullptr;
  for (int64_t i = 0; i < n; ++i) {
    if (mask && !mask[i])
      continue;
    uint64_t a = addr[i];
    if (!(s = shadowNear(s, a)))
      continue; // (the op's own checks trap on it)
    uint64_t lo = s->region->base;
    int64_t first = static_cast<int64_t>((a - lo) >> s->shift);
    int64_t last = std::min(static_cast<int64_t>((a - lo + size - 1) >> s->shift), s->elements - 1);
    for (int64_t e = first; e <= last; ++e) {
      ShadowCell &c = cell(*s, e);
      if (races_ && !check(f, in, i, *s, e, c, kind))
        return false;
      if (kind == Access::Store) {
        markStored(*s);
        c.w = me;
      } else if (c.r1.prog == me.prog) {
        c.r1 = me;
      } else {
        c.r2 = c.r1;
        c.r1 = me;
      }
    }
  }
  if (kind == Access::Atomic) {
    for (int64_t i = 0; i < n; ++i)
      if (!mask || mask[i])
        release(f, addr[i]);
    ++f.clock;
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
  if (!full_) { // coverage only: which elements were stored (bytes: no lock needed)
    if (kind == Access::Store)
      recordStores(addr, mask, n, size);
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
  return ok;
}

bool AccessTracker::check(Frame &f, const Instr &in, int64_t lane, const RegionShadow &s, int64_t e,
                          const ShadowCell &c, Access kind) {
  if (!before(f, c.w))
    return report(f, in, lane, s, e, c.w, kind);
  if (kind != Access::Store)
    return true;
  const Epoch &r = c.r1.prog == f.index ? c.r2 : c.r1;
  if (!before(f, r))
    return report(f, in, lane, s, e, r, kind);
  return true;
}

bool AccessTracker::report(Frame &f, const Instr &in, int64_t lane, const RegionShadow &s,
                           int64_t e, const Epoch &other, Access kind) {
  const Instr &theirs = *sites[other.site];
  std::string elem = elementText(*s.region, e);
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
  note.text = other_ + " " + did + " " + elem + " here";
  f.trap->notes.push_back(std::move(note));
  return false;
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
      if (!s.chunks[static_cast<size_t>(e >> kChunkBits)].load(std::memory_order_acquire)) {
        span(e, e + kChunk, false); // no store reached this chunk: all of it is unwritten
        e += kChunk;
        continue;
      }
      span(e, e + 1, s.storedBit(static_cast<uint64_t>(e)));
      ++e;
    }
    if (start >= 0)
      c.unwritten.emplace_back(start, c.elements - 1);
  }
  return c;
}

std::pair<int32_t, int32_t> AccessTracker::touch(const Region &r, int64_t e) const {
  for (const RegionShadow &s : shadows_)
    if (s.region == &r)
      if (const ShadowCell *c = cellIfAny(s, e))
        return {c->w.prog, c->r1.prog};
  return {-1, -1};
}

} // namespace tc::interp
