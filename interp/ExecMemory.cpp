// load, store, atomic_rmw, atomic_cas over the simulated address space.
//
// Every active lane is checked, in row-major lane order, before anything is
// written: its mask lane must be defined, its address defined, inside one
// buffer (out_of_bounds), a buffer of a parameter the pointer may be computed
// from (Instr::from; else out_of_bounds naming both) and aligned to the
// element size (misaligned); a stored value must be defined (undefined_value).
// The first failing lane traps and a trapping store or atomic writes nothing.
// (The fast paths below check the buffer they find once per op, allowed();
// when it is not allowed they leave the lanes to the per-lane path, which
// traps at the first active lane in a buffer its pointer cannot reach.)
// Masked-off lanes are never accessed: a load gives them `other`'s lane, or
// poison without one. Lanes of one store that hit the same address apply in
// row-major order (the last wins). Atomics hold the launch's atomic lock for
// the whole op, so all lanes of one atomic apply together, in row-major
// order, and atomics of different programs are serialised (acquire-release
// through the lock).
#include "interp/Interpreter.h"

#include "interp/ExecElem.h"

#include <algorithm>
#include <cstring>

namespace tc::interp {

namespace {

enum class AtomicKind { Add, Max, Min, Xchg, And, Or, Xor };

/// The operand of `in` holding tile `t`.
unsigned operandOf(const Frame &f, const Instr &in, const TileData *t) {
  for (unsigned k = 0; k < in.in.size(); ++k)
    if (f.get(in.in[k]).get() == t)
      return k;
  return 0;
}

/// Whether an op whose pointer comes from the parameters `from` (Instr::from)
/// may access region `r`.
inline bool allowed(const Region *r, uint64_t from) {
  return (r->params & from) != 0;
}

/// Resolves addresses of one op, caching the last buffer hit.
class Accessor {
public:
  Accessor(Frame &f, const Instr &in, const char *what, unsigned size)
      : f_(f), in_(in), mem_(f.launch.memory), what_(what), size_(size) {}

  /// The host bytes of the element at `addr`, or nullptr after recording a trap.
  uint8_t *at(uint64_t addr, int64_t lane) {
    uint64_t off = addr - base_;
    if (off < span_ && (addr & (size_ - 1)) == 0)
      return host_ + off;
    return slowAt(addr, lane);
  }

private:
  /// Finds the buffer of `addr` (or traps) and checks the alignment.
  uint8_t *slowAt(uint64_t addr, int64_t lane) {
    const Region *r = mem_.find(addr, size_);
    if (!r || !allowed(r, in_.from)) [[unlikely]] {
      if (f_.launch.tracker)
        f_.launch.tracker->noteOutOfBounds(static_cast<int32_t>(f_.index), addr, in_.site);
      std::string at = in_.scalar ? std::string() : laneText(mainType(*in_.op).shape, lane);
      f_.fail(TrapKind::OutOfBounds, in_, lane,
              r ? mem_.describeForeign(what_, addr, size_, at, *r, in_.from)
                : mem_.describeOutOfBounds(what_, addr, size_, at));
      return nullptr;
    }
    if (addr & (size_ - 1)) {
      f_.fail(TrapKind::Misaligned, in_, lane,
              std::string(what_) + " of " + std::to_string(size_) + " bytes at " + hexAddr(addr) +
                  (in_.scalar ? "" : " (" + laneText(mainType(*in_.op).shape, lane) + ")") +
                  " is not aligned to " + std::to_string(size_) + " bytes");
      return nullptr;
    }
    base_ = r->base;
    span_ = r->size - size_ + 1; // find() guarantees r->size >= size_
    host_ = r->host;
    return host_ + (addr - base_);
  }

  Frame &f_;
  const Instr &in_;
  const Memory &mem_;
  const char *what_;
  unsigned size_;
  uint64_t base_ = 0, span_ = 0; // the cached buffer: offsets [0, span_) hold an element
  uint8_t *host_ = nullptr;
};

/// Records the access in the launch's shadow memory, if any (false: a race).
bool track(Frame &f, const Instr &in, const uint64_t *addr, const uint8_t *m, unsigned size,
           Access kind) {
  AccessTracker *t = f.launch.tracker;
  return !t || t->record(f, in, addr, m, in.n, size, kind);
}

/// The optional mask operand at `index` (nullptr when absent).
const TileData *optional(Frame &f, const Instr &in, size_t index) {
  return in.in.size() > index ? f.get(in.in[index]).get() : nullptr;
}

/// Checks every lane of a memory op before it acts; `values` are the operands
/// whose active lanes must be defined (stored values, atomic operands).
bool checkLanes(Frame &f, const Instr &in, const TileData &ptr, const TileData *mask,
                const std::vector<const TileData *> &values, const char *what, unsigned size) {
  Accessor acc(f, in, what, size);
  const uint64_t *addr = ptr.as<uint64_t>();
  const uint8_t *m = mask ? mask->as<uint8_t>() : nullptr;
  const uint8_t *mp = mask ? mask->poison() : nullptr, *pp = ptr.poison();
  if (in.scalar) { // what a program spinning on a flag reads (the step limit's hint)
    f.lastLoad = addr[0];
    f.lastLoadOp = in.op;
  }
  for (int64_t i = 0; i < in.n; ++i) {
    if (mp && mp[i])
      return failUndefined(f, in, i,
                           std::string("the mask of a ") + what + " is undefined" + atLane(in, i),
                           operandOf(f, in, mask));
    if (m && !m[i])
      continue;
    if (pp && pp[i])
      return failUndefined(
          f, in, i, std::string("the address of a ") + what + " is undefined" + atLane(in, i), 0);
    for (const TileData *v : values)
      if (v->isPoison(i))
        return failUndefined(
            f, in, i, std::string("the value of a ") + what + " is undefined" + atLane(in, i),
            operandOf(f, in, v));
    if (!acc.at(addr[i], i))
      return false;
  }
  return true;
}

/// For the active lanes' offsets off = addr - base, the OR of off | (limit -
/// off): bit 63 is set if any offset is >= 2^63 (an address below the base)
/// or exceeds limit; the low bits hold the OR of the offsets (alignment).
/// Fixed-size blocks without branches, so that it vectorises.
template <bool HasMask>
uint64_t laneBounds(const uint64_t *addr, const uint8_t *mask, int64_t n, uint64_t base,
                    uint64_t limit) {
  constexpr int64_t kBlock = 16;
  uint64_t acc[kBlock] = {};
  int64_t full = n - n % kBlock;
  for (int64_t i = 0; i < full; i += kBlock) {
    for (int64_t j = 0; j < kBlock; ++j) {
      uint64_t off = addr[i + j] - base;
      if constexpr (HasMask)
        off &= uint64_t(0) - (mask[i + j] != 0);
      acc[j] |= off | (limit - off);
    }
  }
  uint64_t r = 0;
  for (int64_t j = 0; j < kBlock; ++j)
    r |= acc[j];
  for (int64_t i = full; i < n; ++i) {
    uint64_t off = !HasMask || mask[i] ? addr[i] - base : 0;
    r |= off | (limit - off);
  }
  return r;
}

/// When every active lane (mask lane set, or no mask) of an access of `size`
/// bytes lies in one buffer that pointers from `from` may reach and is
/// aligned, sets `hostBase` so that lane i's bytes are at hostBase + addr[i]
/// and returns true (also when no lane is active). Otherwise the lanes need
/// the per-lane path, which finds the first failing lane.
bool oneBuffer(const Memory &mem, uint64_t from, const uint64_t *addr, const uint8_t *mask,
               int64_t n, unsigned size, uintptr_t &hostBase) {
  int64_t first = 0;
  if (mask) {
    const void *on = std::memchr(mask, 1, static_cast<size_t>(n));
    if (!on)
      return true; // no active lane
    first = static_cast<const uint8_t *>(on) - mask;
  }
  const Region *r = mem.find(addr[first], size);
  if (!r || !allowed(r, from))
    return false;
  // The buffer of the first active lane must hold every active lane.
  uint64_t base = r->base, limit = r->size - size;
  uint64_t bad = mask ? laneBounds<true>(addr, mask, n, base, limit)
                      : laneBounds<false>(addr, mask, n, base, limit);
  if ((bad >> 63) || ((bad | base) & (size - 1)))
    return false;
  hostBase = reinterpret_cast<uintptr_t>(r->host) - base;
  return true;
}

template <typename T> T readAt(uintptr_t hostBase, uint64_t addr) {
  T v;
  std::memcpy(&v, reinterpret_cast<const void *>(hostBase + addr), sizeof(T));
  return v;
}

/// The host bytes of lanes [0, n) when lane i's address is addr[0] + i * size
/// for every lane and all n elements (masked-off lanes too) lie, aligned, in
/// one buffer that pointers from `from` may reach; else nullptr. The common
/// vector access: one memcpy.
template <typename T>
uint8_t *contiguousRange(const Memory &mem, uint64_t from, const uint64_t *addr, int64_t n) {
  constexpr uint64_t kSize = sizeof(T);
  uint64_t a0 = addr[0];
  if ((a0 & (kSize - 1)) || addr[n - 1] != a0 + static_cast<uint64_t>(n - 1) * kSize)
    return nullptr; // (the last lane rules out most other patterns at once)
  constexpr int64_t kBlock = 16;
  uint64_t diff[kBlock] = {};
  int64_t full = n - n % kBlock;
  for (int64_t i = 0; i < full; i += kBlock) {
    uint64_t start = a0 + static_cast<uint64_t>(i) * kSize;
    for (int64_t j = 0; j < kBlock; ++j)
      diff[j] |= addr[i + j] ^ (start + static_cast<uint64_t>(j) * kSize);
  }
  uint64_t d = 0;
  for (int64_t j = 0; j < kBlock; ++j)
    d |= diff[j];
  for (int64_t i = full; i < n; ++i)
    d |= addr[i] ^ (a0 + static_cast<uint64_t>(i) * kSize);
  if (d)
    return nullptr;
  const Region *r = mem.find(a0, static_cast<uint64_t>(n) * kSize);
  return r && allowed(r, from) ? r->host + (a0 - r->base) : nullptr;
}

/// Whether, in every row of `rowLen` lanes, lane j's address is the row's
/// first address + j * sizeof(T) (a tile of rows of a row-major array).
template <typename T> bool rowsContiguous(const uint64_t *addr, int64_t n, int64_t rowLen) {
  constexpr int64_t kBlock = 16;
  uint64_t diff[kBlock] = {};
  for (int64_t i = 0; i < n; i += rowLen) {
    uint64_t start = addr[i];
    if (rowLen % kBlock == 0) {
      for (int64_t j0 = 0; j0 < rowLen; j0 += kBlock)
        for (int64_t j = 0; j < kBlock; ++j)
          diff[j] |= addr[i + j0 + j] ^ (start + static_cast<uint64_t>(j0 + j) * sizeof(T));
    } else {
      for (int64_t j = 1; j < rowLen; ++j)
        diff[0] |= addr[i + j] ^ (start + static_cast<uint64_t>(j) * sizeof(T));
    }
  }
  uint64_t d = 0;
  for (int64_t j = 0; j < kBlock; ++j)
    d |= diff[j];
  return d == 0;
}

/// For contiguous rows of `rowLen` elements: whether every row lies, aligned,
/// in the buffer of the first, one that pointers from `from` may reach; sets
/// hostBase as oneBuffer does.
bool rowsInOneBuffer(const Memory &mem, uint64_t from, const uint64_t *addr, int64_t n,
                     int64_t rowLen, unsigned size, uintptr_t &hostBase) {
  uint64_t rowBytes = static_cast<uint64_t>(rowLen) * size;
  const Region *r = mem.find(addr[0], rowBytes);
  if (!r || !allowed(r, from))
    return false;
  uint64_t base = r->base, limit = r->size - rowBytes, bad = 0;
  for (int64_t i = 0; i < n; i += rowLen) {
    uint64_t off = addr[i] - base;
    bad |= off | (limit - off); // bit 63: below the base or past the limit
  }
  if ((bad >> 63) || ((bad | base) & (size - 1)))
    return false;
  hostBase = reinterpret_cast<uintptr_t>(r->host) - base;
  return true;
}

/// After a masked load filled every lane it read: masked-off lanes take
/// `other` (or 0) and are poison where `other` is (or without one).
template <typename T>
void fillMaskedOff(TileData &r, const uint8_t *m, const TileData *other, int64_t n) {
  if (n <= 0)
    return;
  T *o = r.as<T>();
  const T *ov = other ? other->as<T>() : nullptr;
  mapLanes(o, n, [&](int64_t i) { return m[i] ? o[i] : ov ? ov[i] : T(0); });
  if (std::memchr(m, 0, static_cast<size_t>(n)) && (!ov || other->hasPoison())) {
    uint8_t *rp = r.newPoison();
    for (int64_t i = 0; i < n; ++i)
      rp[i] = !m[i] && (!ov || other->isPoison(i));
    r.normalizePoison();
  }
}

/// A load whose active lanes are known to be valid (no per-lane checks);
/// false when the lanes need the checking path.
template <typename T, bool IsBool>
bool fastLoad(const Memory &mem, uint64_t from, const uint64_t *addr, const uint8_t *m,
              const TileData *other, int64_t rowLen, TileData &r) {
  int64_t n = r.size();
  T *o = r.as<T>();
  uintptr_t hb = 0;
  if (const uint8_t *h = contiguousRange<T>(mem, from, addr, n)) {
    std::memcpy(o, h, static_cast<size_t>(n) * sizeof(T));
  } else if (!m && rowLen > 1 && rowsContiguous<T>(addr, n, rowLen) &&
             rowsInOneBuffer(mem, from, addr, n, rowLen, sizeof(T), hb)) {
    // A 2-D block: row copies.
    for (int64_t i = 0; i < n; i += rowLen)
      std::memcpy(o + i, reinterpret_cast<const void *>(hb + addr[i]),
                  static_cast<size_t>(rowLen) * sizeof(T));
  } else if (oneBuffer(mem, from, addr, m, n, sizeof(T), hb)) {
    if (m)
      mapLanes(o, n, [&](int64_t i) { return m[i] ? readAt<T>(hb, addr[i]) : T(0); });
    else
      mapLanes(o, n, [&](int64_t i) { return readAt<T>(hb, addr[i]); });
  } else {
    return false;
  }
  if constexpr (IsBool)
    mapLanes(o, n, [&](int64_t i) { return static_cast<T>(o[i] != 0); });
  if (m)
    fillMaskedOff<T>(r, m, other, n);
  return true;
}

/// When the lanes of an access are consecutive elements (an affine pointer
/// tile of step sizeof(T), Tile.h) and every lane is active (no mask, or one
/// known true in every lane): the host bytes of the n elements if they lie,
/// aligned, in one buffer that pointers from `from` may reach, else nullptr.
/// Sets `base` to lane 0's address.
template <typename T>
uint8_t *affineRange(const Memory &mem, uint64_t from, const TileData &ptr, const TileData *mask,
                     int64_t n, uint64_t &base) {
  Affine a;
  uint64_t on = 0;
  if (!ptr.affine(a) || (a.step != sizeof(T) && n > 1) || (mask && !(mask->uniform(on) && on)))
    return nullptr;
  if (a.base & (sizeof(T) - 1))
    return nullptr;
  base = a.base;
  const Region *r = mem.find(a.base, static_cast<uint64_t>(n) * sizeof(T));
  return r && allowed(r, from) ? r->host + (a.base - r->base) : nullptr;
}

template <typename T, bool IsBool> bool runLoad(Frame &f, const Instr &in) {
  const TileData &ptr = *f.get(in.in[0]);
  const TileData *mask = optional(f, in, 1), *other = optional(f, in, 2);
  uint64_t a0 = 0;
  if (const uint8_t *h = affineRange<T>(f.launch.memory, in.from, ptr, mask, in.n, a0)) {
    if (in.scalar) { // what a program spinning on a flag reads (the step limit's hint)
      f.lastLoad = a0;
      f.lastLoadOp = in.op;
    }
    TilePtr r;
    if (!IsBool && in.view) { // nothing writes memory before the one use reads it
      r = makeViewTile(in.n, sizeof(T), h);
    } else {
      r = makeTile(in.n, sizeof(T));
      T *o = r->as<T>();
      std::memcpy(o, h, static_cast<size_t>(in.n) * sizeof(T));
      if constexpr (IsBool)
        mapLanes(o, in.n, [&](int64_t i) { return static_cast<T>(o[i] != 0); });
    }
    if (f.launch.tracker &&
        !f.launch.tracker->recordRange(f, in, a0, in.n, sizeof(T), Access::Load))
      return false;
    f.set(in.out[0], std::move(r));
    return true;
  }
  const uint64_t *addr = ptr.as<uint64_t>();
  if (in.scalar) {
    f.lastLoad = addr[0];
    f.lastLoadOp = in.op;
  }
  const uint8_t *m = mask ? mask->as<uint8_t>() : nullptr;
  const uint8_t *mp = mask ? mask->poison() : nullptr, *pp = ptr.poison();
  const T *ov = other ? other->as<T>() : nullptr;
  TilePtr r = makeTile(in.n, sizeof(T));
  T *o = r->as<T>();
  if (!mp && !pp && fastLoad<T, IsBool>(f.launch.memory, in.from, addr, m, other, in.g0, *r)) {
    if (!track(f, in, addr, m, sizeof(T), Access::Load))
      return false;
    f.set(in.out[0], std::move(r));
    return true;
  }
  uint8_t *rp = nullptr;
  Accessor acc(f, in, "load", sizeof(T));
  for (int64_t i = 0; i < in.n; ++i) {
    if (mp && mp[i])
      return failUndefined(f, in, i, "the mask of a load is undefined" + atLane(in, i), 1);
    if (m && !m[i]) {
      bool poison = !ov || other->isPoison(i);
      o[i] = ov ? ov[i] : T(0);
      if (poison) {
        if (!rp)
          rp = r->newPoison();
        rp[i] = 1;
      }
      continue;
    }
    if (pp && pp[i])
      return failUndefined(f, in, i, "the address of a load is undefined" + atLane(in, i), 0);
    const uint8_t *h = acc.at(addr[i], i);
    if (!h)
      return false;
    std::memcpy(&o[i], h, sizeof(T));
    if constexpr (IsBool)
      o[i] = o[i] != 0;
  }
  if (!track(f, in, addr, m, sizeof(T), Access::Load))
    return false;
  f.set(in.out[0], std::move(r));
  return true;
}

/// Before a store or atomic writes (only when the launch guards stores: an
/// undo journal or a read-only buffer): traps invalid_launch at the first
/// active lane whose buffer is read-only, before anything is written, and lets
/// the journal copy the pages about to change. The lanes are already checked
/// to lie inside buffers. A contiguous access (`range`) is one run of bytes.
bool guardStore(Frame &f, const Instr &in, const uint64_t *addr, const uint8_t *m,
                unsigned size, const char *what, bool range = false) {
  const Memory &mem = f.launch.memory;
  UndoJournal *journal = f.launch.journal;
  const Region *r = nullptr;
  if (range && m && std::find(m, m + in.n, uint8_t(1)) == m + in.n)
    return true; // no active lane: nothing is written
  int64_t n = range ? 1 : in.n;
  uint64_t bytes = range ? static_cast<uint64_t>(in.n) * size : size;
  for (int64_t i = 0; i < n; ++i) {
    if (m && !m[i] && !range)
      continue;
    uint64_t a = addr[i];
    if (!r || a - r->base >= r->size || r->size - (a - r->base) < bytes)
      r = mem.find(a, bytes);
    if (!r)
      continue;
    if (r->readOnly)
      return f.fail(TrapKind::InvalidLaunch, in, range ? 0 : i,
                    std::string(what) + " to " + r->label() +
                        ", a read-only array (passed as read-only memory, e.g. a NumPy array "
                        "with writeable=False or a leaf tensor that requires grad); nothing "
                        "was written");
    if (journal)
      journal->beforeWrite(r->host + (a - r->base), bytes);
  }
  return true;
}

template <typename T> bool runStore(Frame &f, const Instr &in) {
  const TileData &ptr = *f.get(in.in[0]), &val = *f.get(in.in[1]);
  const TileData *mask = optional(f, in, 2);
  uint64_t a0 = 0;
  uint8_t *h0 =
      val.hasPoison() ? nullptr : affineRange<T>(f.launch.memory, in.from, ptr, mask, in.n, a0);
  if (h0) {
    if ((f.launch.tracker &&
         !f.launch.tracker->recordRange(f, in, a0, in.n, sizeof(T), Access::Store)) ||
        (f.launch.guardStores && !guardStore(f, in, &a0, nullptr, sizeof(T), "store", true)))
      return false;
    std::memcpy(h0, val.raw(), static_cast<size_t>(in.n) * sizeof(T));
    return true;
  }
  const uint64_t *addr = ptr.as<uint64_t>();
  const uint8_t *m = mask ? mask->as<uint8_t>() : nullptr;
  const T *v = val.as<T>();
  bool clean = !ptr.hasPoison() && !val.hasPoison() && !(mask && mask->hasPoison());
  uintptr_t hb = 0;
  if (uint8_t *h = clean ? contiguousRange<T>(f.launch.memory, in.from, addr, in.n) : nullptr) {
    if (!track(f, in, addr, m, sizeof(T), Access::Store) ||
        (f.launch.guardStores && !guardStore(f, in, addr, m, sizeof(T), "store", true)))
      return false;
    if (!m)
      std::memcpy(h, v, static_cast<size_t>(in.n) * sizeof(T));
    else
      for (int64_t i = 0; i < in.n; ++i)
        if (m[i])
          std::memcpy(h + i * sizeof(T), &v[i], sizeof(T));
    return true;
  }
  if (clean && oneBuffer(f.launch.memory, in.from, addr, m, in.n, sizeof(T), hb)) {
    if (!track(f, in, addr, m, sizeof(T), Access::Store) ||
        (f.launch.guardStores && !guardStore(f, in, addr, m, sizeof(T), "store")))
      return false;
    for (int64_t i = 0; i < in.n; ++i)
      if (!m || m[i])
        std::memcpy(reinterpret_cast<void *>(hb + addr[i]), &v[i], sizeof(T));
    return true;
  }
  if (!checkLanes(f, in, ptr, mask, {&val}, "store", sizeof(T)) ||
      !track(f, in, addr, m, sizeof(T), Access::Store) ||
      (f.launch.guardStores && !guardStore(f, in, addr, m, sizeof(T), "store")))
    return false;
  Accessor acc(f, in, "store", sizeof(T));
  for (int64_t i = 0; i < in.n; ++i)
    if (!m || m[i])
      std::memcpy(acc.at(addr[i], i), &v[i], sizeof(T));
  return true;
}

/// Whether [p, p + bytes) and [q, q + bytes) share a byte but do not start together.
bool partlyOverlaps(const void *p, const void *q, uint64_t bytes) {
  auto a = reinterpret_cast<uintptr_t>(p), b = reinterpret_cast<uintptr_t>(q);
  return a != b && (a < b ? b - a : a - b) < bytes;
}

/// A store fused with the elementwise binary op E just before it (deferredOp,
/// Interpreter.h): E's lanes go straight into the destination when the store
/// takes runStore's first path (consecutive lanes, every lane active, one
/// buffer: checked before anything is recorded or written) and E's operands
/// are poison-free; a view operand (a load's bytes) must not partly overlap
/// the destination (lane i is read before lane i is written, but not before
/// lane j != i is). Else E, then the store, run unfused.
template <typename T> bool runFusedStore(Frame &f, const Instr &in) {
  const Instr &e = (&in)[-1];
  if (f.launch.opts.trace) // E already ran (deferredOp)
    return in.inner(f, in);
  const TileData &x = *f.get(e.in[0]), &y = *f.get(e.in[1]);
  uint64_t a0 = 0;
  uint8_t *h0 = nullptr;
  uint64_t bytes = static_cast<uint64_t>(in.n) * sizeof(T);
  if (!x.hasPoison() && !y.hasPoison())
    h0 = affineRange<T>(f.launch.memory, in.from, *f.get(in.in[0]), optional(f, in, 2), in.n, a0);
  if (h0) {
    for (const TileData *v : {&x, &y})
      if (const void *src = v->viewOf(); src && partlyOverlaps(src, h0, bytes))
        h0 = nullptr;
  }
  if (!h0)
    return e.inner(f, e) && in.inner(f, in);
  if ((f.launch.tracker &&
       !f.launch.tracker->recordRange(f, in, a0, in.n, sizeof(T), Access::Store)) ||
      (f.launch.guardStores && !guardStore(f, in, &a0, nullptr, sizeof(T), "store", true)))
    return false;
  e.into(x, y, h0, in.n);
  return true;
}

/// old (op) v for atomic_rmw on dtype D.
template <DType D> St<D> atomicApply(AtomicKind k, St<D> old, St<D> v) {
  switch (k) {
  case AtomicKind::Add:
    if constexpr (kIsFloat<D>)
      return floatAddT<D>(old, v);
    else if constexpr (kIsBool<D>)
      return static_cast<St<D>>(old | v); // (old + v) != 0
    else
      return wrapAdd<D>(old, v);
  case AtomicKind::Max: return maxT<D>(old, v);
  case AtomicKind::Min: return minT<D>(old, v);
  case AtomicKind::Xchg: return v;
  case AtomicKind::And:
  case AtomicKind::Or:
  case AtomicKind::Xor: {
    uint64_t a = toRaw<D>(old), b = toRaw<D>(v); // floats: on their bits
    uint64_t r = k == AtomicKind::And ? a & b : k == AtomicKind::Or ? a | b : a ^ b;
    return fromRaw<D>(r);
  }
  }
  return v;
}

/// atomic_rmw (ptr, value [, mask]) and atomic_cas (ptr, cmp, value [, mask]).
template <DType D, bool Cas> bool runAtomic(Frame &f, const Instr &in) {
  using T = St<D>;
  const TileData &ptr = *f.get(in.in[0]);
  const TileData &cmp = *f.get(in.in[1]), &val = *f.get(in.in[Cas ? 2 : 1]);
  const TileData *mask = optional(f, in, Cas ? 3 : 2);
  std::lock_guard<std::mutex> lock(f.launch.atomicMutex);
  if (!checkLanes(f, in, ptr, mask, {&cmp, &val}, "atomic", sizeof(T)))
    return false;
  const uint64_t *addr = ptr.as<uint64_t>();
  const uint8_t *m = mask ? mask->as<uint8_t>() : nullptr;
  const T *c = cmp.as<T>(), *v = val.as<T>();
  if (in.scalar) {
    f.lastLoad = addr[0];
    f.lastLoadOp = in.op;
  }
  if (!track(f, in, addr, m, sizeof(T), Access::Atomic) ||
      (f.launch.guardStores && !guardStore(f, in, addr, m, sizeof(T), "atomic")))
    return false;
  TilePtr r = makeTile(in.n, sizeof(T));
  T *o = r->as<T>();
  uint8_t *rp = nullptr;
  Accessor acc(f, in, "atomic", sizeof(T));
  for (int64_t i = 0; i < in.n; ++i) {
    if (m && !m[i]) {
      o[i] = T(0);
      if (!rp)
        rp = r->newPoison();
      rp[i] = 1;
      continue;
    }
    uint8_t *h = acc.at(addr[i], i);
    T old;
    std::memcpy(&old, h, sizeof(T));
    if constexpr (kIsBool<D>)
      old = old != 0;
    T next;
    if constexpr (Cas)
      next = toRaw<D>(old) == toRaw<D>(c[i]) ? v[i] : old; // compares bits
    else
      next = atomicApply<D>(static_cast<AtomicKind>(in.kind), old, v[i]);
    std::memcpy(h, &next, sizeof(T));
    o[i] = old;
  }
  f.set(in.out[0], std::move(r));
  return true;
}

Handler pickLoadStore(bool load, const ir::Type &ptr) {
  if (ptr.dtype == DType::Bool)
    return load ? &runLoad<uint8_t, true> : &runStore<uint8_t>;
  switch (byteSize(ptr.dtype)) {
  case 1: return load ? &runLoad<uint8_t, false> : &runStore<uint8_t>;
  case 2: return load ? &runLoad<uint16_t, false> : &runStore<uint16_t>;
  case 4: return load ? &runLoad<uint32_t, false> : &runStore<uint32_t>;
  case 8: return load ? &runLoad<uint64_t, false> : &runStore<uint64_t>;
  }
  return nullptr;
}

} // namespace

Handler fusedStoreHandler(unsigned elemSize, bool isBool) {
  if (isBool)
    return nullptr; // stores of bools keep their own path
  switch (elemSize) {
  case 1: return &runFusedStore<uint8_t>;
  case 2: return &runFusedStore<uint16_t>;
  case 4: return &runFusedStore<uint32_t>;
  case 8: return &runFusedStore<uint64_t>;
  }
  return nullptr;
}

namespace {

bool parseAtomicKind(const ir::Op &op, AtomicKind &k) {
  static const std::pair<const char *, AtomicKind> kKinds[] = {
      {"add", AtomicKind::Add},   {"max", AtomicKind::Max}, {"min", AtomicKind::Min},
      {"xchg", AtomicKind::Xchg}, {"and", AtomicKind::And}, {"or", AtomicKind::Or},
      {"xor", AtomicKind::Xor}};
  const ir::AttrValue *v = op.attr("kind");
  if (!v || !std::holds_alternative<std::string>(*v))
    return false;
  for (const auto &e : kKinds)
    if (std::get<std::string>(*v) == e.first) {
      k = e.second;
      return true;
    }
  return false;
}

} // namespace

bool prepareMemoryOp(const ir::Op &op, Instr &in, std::string &error) {
  const ir::Type &ptr = op.operand(0)->type();
  if (!ptr.isPtr) {
    error = "'" + std::string(op.name()) + "' needs a pointer operand";
    return false;
  }
  // The main tile is the pointer operand: its lanes are the lanes of the access.
  in.n = ptr.numElements();
  in.g0 = ptr.isScalar() ? 1 : ptr.shape.back(); // lanes per row
  in.scalar = ptr.isScalar();
  in.elemSize = byteSize(ptr.dtype);
  in.dtype = ptr.dtype;
  // The buffers the pointer may reach: those of the parameters it comes from.
  std::vector<const ir::Value *> params;
  in.from = ~uint64_t(0);
  if (pointerSources(op.operand(0), params)) {
    in.from = 0;
    for (const ir::Value *p : params)
      in.from |= paramBit(p->index());
  }
  ir::OpKind k = op.kind();
  size_t minOps = k == ir::OpKind::Load ? 1 : k == ir::OpKind::AtomicCas ? 3 : 2;
  if (op.numOperands() < minOps || op.numOperands() > minOps + (k == ir::OpKind::Load ? 2 : 1)) {
    error = "'" + std::string(op.name()) + "' has a wrong number of operands";
    return false;
  }
  if (k == ir::OpKind::Load || k == ir::OpKind::Store) {
    in.run = pickLoadStore(k == ir::OpKind::Load, ptr);
    return true;
  }
  AtomicKind ak = AtomicKind::Xchg;
  if (k == ir::OpKind::AtomicRMW && !parseAtomicKind(op, ak)) {
    error = "malformed atomic_rmw";
    return false;
  }
  in.kind = static_cast<int>(ak);
  bool cas = k == ir::OpKind::AtomicCas;
  in.run = dispatchDType(ptr.dtype, [cas](auto d) -> Handler {
    constexpr DType D = decltype(d)::value;
    return cas ? &runAtomic<D, true> : &runAtomic<D, false>;
  });
  return true;
}

} // namespace tc::interp
