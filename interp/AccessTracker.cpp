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
    s.elemSize = byteSize(r->array->dtype);
    while ((1u << s.shift) < s.elemSize)
      ++s.shift;
    if (full_)
      s.pages.resize(static_cast<size_t>(((r->size >> s.shift) >> kPageBits) + 1));
    else {
      s.storedSize = static_cast<size_t>(r->size >> s.shift);
      s.chunks = std::make_unique<std::atomic<uint8_t *>[]>(s.numChunks());
    }
    shadows_.push_back(std::move(s));
  }
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

ShadowCell &AccessTracker::cell(RegionShadow &s, int64_t e) {
  auto &page = s.pages[static_cast<size_t>(e >> kPageBits)];
  if (!page)
    page.reset(new ShadowCell[size_t(1) << kPageBits]);
  return page[static_cast<size_t>(e & ((int64_t(1) << kPageBits) - 1))];
}

const ShadowCell *AccessTracker::cellIfAny(const RegionShadow &s, int64_t e) const {
  size_t p = static_cast<size_t>(e >> kPageBits);
  if (p >= s.pages.size() || !s.pages[p])
    return nullptr;
  return &s.pages[p][static_cast<size_t>(e & ((int64_t(1) << kPageBits) - 1))];
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

bool AccessTracker::record(Frame &f, const Instr &in, const uint64_t *addr, const uint8_t *mask,
                           int64_t n, unsigned size, Access kind) {
  if (!full_) { // coverage only: which elements were stored (bytes: no lock needed)
    if (kind == Access::Store)
      recordStores(addr, mask, n, size);
    return true;
  }
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  if (locked_)
    lock.lock();
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
    int64_t last = static_cast<int64_t>((a - lo + size - 1) >> s->shift);
    for (int64_t e = first; e <= last; ++e) {
      ShadowCell &c = cell(*s, e);
      if (races_ && !check(f, in, i, *s, e, c, kind))
        return false;
      if (kind == Access::Store) {
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
  std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
  if (locked_)
    lock.lock();
  oob_.push_back({prog, addr, site});
}

AccessTracker::Coverage AccessTracker::coverage(const Region &r) const {
  Coverage c;
  for (const RegionShadow &s : shadows_) {
    if (s.region != &r)
      continue;
    c.elements = static_cast<int64_t>(r.size >> s.shift);
    int64_t start = -1;
    for (int64_t e = 0; e < c.elements; ++e) {
      if (!full_ && (e & ((int64_t(1) << kChunkBits) - 1)) == 0 &&
          !s.chunks[static_cast<size_t>(e >> kChunkBits)].load(std::memory_order_acquire)) {
        // No store reached this chunk: all of it is unwritten.
        if (start < 0)
          start = e;
        e = std::min(c.elements, e + (int64_t(1) << kChunkBits)) - 1;
        continue;
      }
      const ShadowCell *cell = full_ ? cellIfAny(s, e) : nullptr;
      bool stored = full_ ? cell && cell->w.prog >= 0 : s.storedBit(static_cast<uint64_t>(e));
      if (stored) {
        ++c.stored;
        if (start >= 0)
          c.unwritten.emplace_back(start, e - 1);
        start = -1;
      } else if (start < 0) {
        start = e;
      }
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
