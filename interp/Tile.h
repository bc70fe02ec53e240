//===- Tile.h - Tile values of the reference interpreter --------------===//
//
// A tile value is one contiguous buffer of elements in row-major order plus,
// only when some lane may be undefined, a poison mask (one byte per lane, 1:
// undefined; docs/semantics.md rule 8). Its dtype and shape are not stored: they are
// the static IR type of the value that holds it. A scalar is a tile of one
// element. Pointers are 64-bit addresses in the simulated address space.
//
// Element storage: bool is one byte 0/1, fp16/bf16 their 16-bit patterns,
// other dtypes their C types, pointers uint64_t.
//
// A tile is immutable once the op that produced it returns, so values are
// shared freely (`Tile` is a shared pointer to const): reshape, expand_dims
// and pointer casts reuse their operand's tile.
//
// Affine tiles: a tile of integers, pointers or bools may know that lane i
// (row-major) holds the low elemSize bytes of base + i * step, computed
// modulo 2^64 (a splat has step 0, a range step 1). Ops on such tiles can
// then work on (base, step) alone: `p + (off + (0 ... N))` is a contiguous
// run of addresses without looking at 1024 of them, and `x < N` of it is
// true in every lane when it is at the first and the last. An affine tile
// made by such an op is lazy: its elements are written the first time
// raw() or as() asks for them, so a chain of affine ops touches no memory.
// A lazy tile never has poison lanes, and it belongs to the one program that
// made it (shared tiles such as constants are always written out).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Type.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace tc::interp {

/// One byte per lane; 1 marks an undefined (poison) lane.
using PoisonMask = std::vector<uint8_t>;

/// Lane i of an affine tile: the low bytes of base + i * step (mod 2^64).
struct Affine {
  uint64_t base = 0, step = 0;
};

class TileData {
public:
  TileData(int64_t n, unsigned elemSize);
  /// A lazy affine tile (see above): storage is taken when it is first read.
  TileData(int64_t n, unsigned elemSize, Affine a);
  /// A view of `n` elements at `bytes` (not owned, never written through).
  TileData(int64_t n, unsigned elemSize, const void *bytes);
  ~TileData();
  TileData(const TileData &) = delete;
  TileData &operator=(const TileData &) = delete;

  int64_t size() const { return n_; }
  unsigned elemSize() const { return elemSize_; }
  void *raw() {
    if (lazy_) [[unlikely]]
      materialize();
    return data_;
  }
  const void *raw() const {
    if (lazy_) [[unlikely]]
      materialize();
    return data_;
  }
  template <typename T> T *as() { return static_cast<T *>(raw()); }
  template <typename T> const T *as() const { return static_cast<const T *>(raw()); }

  /// Whether every lane is known to be base + i * step (sets `a`).
  bool affine(Affine &a) const {
    if (!affine_ || poison_)
      return false;
    a = aff_;
    return true;
  }
  /// Whether every lane is known to hold the same defined element (sets its bits).
  bool uniform(uint64_t &bits) const {
    if (!affine_ || poison_ || (aff_.step & lowMask()) != 0)
      return false;
    bits = aff_.base & lowMask();
    return true;
  }
  /// Records that the (written, poison-free) elements are affine.
  void setAffine(Affine a) {
    affine_ = true;
    aff_ = a;
  }

  /// The bytes a view tile shows (see above), or nullptr for a tile that owns its storage.
  const void *viewOf() const { return view_ ? data_ : nullptr; }

  bool hasPoison() const { return poison_ != nullptr; }
  /// The poison mask, or nullptr when every lane is defined.
  const uint8_t *poison() const { return poison_ ? poison_->data() : nullptr; }
  const std::shared_ptr<const PoisonMask> &poisonMask() const { return poison_; }
  bool isPoison(int64_t i) const { return poison_ && (*poison_)[static_cast<size_t>(i)]; }
  /// Shares another tile's mask (same lane count).
  void setPoison(std::shared_ptr<const PoisonMask> p) { poison_ = std::move(p); }
  /// Gives this tile a zeroed mask to fill; returns its bytes.
  uint8_t *newPoison();
  /// Drops the mask if no lane is poison.
  void normalizePoison();
  /// The first poison lane, or -1.
  int64_t firstPoison() const;

private:
  /// Writes the elements of a lazy affine tile.
  void materialize() const;
  uint64_t lowMask() const { return elemSize_ >= 8 ? ~uint64_t(0) : (uint64_t(1) << (8 * elemSize_)) - 1; }

  int64_t n_;
  unsigned elemSize_;
  mutable void *data_;
  mutable int sizeClass_ = -1; // of the pooled heap storage; -1: inline
  mutable bool lazy_ = false;  // affine, elements not written yet
  bool affine_ = false;
  bool view_ = false; // data_ is a buffer's bytes (viewOf)
  Affine aff_;
  uint64_t inline_[2];
  std::shared_ptr<const PoisonMask> poison_;
};

using TilePtr = std::shared_ptr<TileData>;
using Tile = std::shared_ptr<const TileData>;

/// A tile of `n` elements of `elemSize` bytes, contents unspecified.
TilePtr makeTile(int64_t n, unsigned elemSize);
/// A lazy affine tile of `n` elements of `elemSize` bytes (1, 2, 4 or 8).
TilePtr makeAffineTile(int64_t n, unsigned elemSize, Affine a);
/// A view tile of `n` elements of `elemSize` bytes at `bytes` (see above).
TilePtr makeViewTile(int64_t n, unsigned elemSize, const void *bytes);
/// Frees the calling thread's spare tile storage beyond a few MiB (pool
/// threads call it after each launch, so that idle threads hold little).
void trimTilePool();
/// A copy of `t` (data and poison).
TilePtr copyTile(const TileData &t);
/// A copy of `t` (data, poison and its affine facts) for one thread's own use:
/// a tile that every thread's programs share (a constant, a parameter) would
/// have each program copy its shared pointer, and the cache line of that one
/// reference count would move between the threads' cores on every copy.
TilePtr threadCopy(const TileData &t);

/// Bytes of one element of a value of type `t` (pointers: 8; bool: 1).
unsigned elemSizeOf(const ir::Type &t);

/// Row-major strides (in elements) of `shape`.
std::vector<int64_t> rowMajorStrides(const ir::Shape &shape);

/// dst[i] = src[offset(i)] for every row-major index i of `outShape`, where
/// offset(i) = sum_d index_d * srcStrides[d] (strides in elements; 0 repeats).
void gatherStrided(const void *src, void *dst, unsigned elemSize, const ir::Shape &outShape,
                   const std::vector<int64_t> &srcStrides);

/// One element of type `elemType` (the dtype or pointer, shape ignored) as text:
/// `True`, `-3`, `1.5`, `2.`, `nan`, `-inf`, `0x10040`.
std::string formatElement(const ir::Type &elemType, const void *p);

/// A value formatted like NumPy's repr: `array([[0, 1],\n       [2, 3]], dtype=int32)`;
/// a scalar is `array(5, dtype=int32)`. Items are right-aligned to one width;
/// floats use the shortest digits that read back to the same value of their
/// dtype (`2.`, `0.1`, `nan`, `-inf`), bools `True`/`False`, pointers hex.
/// More than 1000 elements are summarised with `...` (3 items at each end of
/// each long axis) and then the shape is shown: `array([0, 1, 2, ..., 2047],
/// shape=(2048,), dtype=int32)`. Poison (undefined) lanes print as `--`.
std::string formatValue(const TileData &t, const ir::Type &type);

/// Formats an address for --trace (`X+4`); empty: as formatElement does.
using AddressText = std::function<std::string(uint64_t address)>;

/// A one-line summary for --trace: `min=... max=... first=[...]` (defined lanes
/// only), the value itself for a scalar, and `poison=k/n` when lanes are undefined.
/// Addresses are written by `addr` when given.
std::string summarizeValue(const TileData &t, const ir::Type &type, const AddressText &addr = {});

} // namespace tc::interp
