#include "interp/Tile.h"

#include "interp/ExecElem.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstring>

namespace tc::interp {

namespace {

/// Storage of tiles: buffers of 2^c bytes kept per thread for reuse, so that
/// the tiles a program makes and drops do not go back and forth to malloc
/// (which returns the top of the heap to the system and faults it back in).
class BufferPool {
public:
  static constexpr int kMinClass = 5, kNumClasses = 40;
  static constexpr uint64_t kMaxHeld = uint64_t(64) << 20;

  ~BufferPool() {
    alive_ = false;
    for (auto &list : free_)
      for (uint64_t *p : list)
        delete[] p;
  }
  /// The size class holding `bytes` (2^class >= bytes).
  static int classOf(uint64_t bytes) {
    int c = kMinClass;
    while ((uint64_t(1) << c) < bytes)
      ++c;
    return c;
  }
  uint64_t *take(int c) {
    if (!free_[c].empty()) {
      uint64_t *p = free_[c].back();
      free_[c].pop_back();
      held_ -= uint64_t(1) << c;
      return p;
    }
    return new uint64_t[(uint64_t(1) << c) / 8];
  }
  void give(uint64_t *p, int c) {
    if (held_ + (uint64_t(1) << c) > kMaxHeld) {
      delete[] p;
      return;
    }
    free_[c].push_back(p);
    held_ += uint64_t(1) << c;
  }
  /// Frees spare buffers, the largest first, until at most `keep` bytes are held.
  void trim(uint64_t keep) {
    for (int c = kNumClasses - 1; c >= 0 && held_ > keep; --c)
      while (!free_[c].empty() && held_ > keep) {
        delete[] free_[c].back();
        free_[c].pop_back();
        held_ -= uint64_t(1) << c;
      }
  }
  /// False once this thread's pool is destroyed (thread exit).
  static bool alive() { return alive_; }

private:
  std::vector<uint64_t *> free_[kNumClasses];
  uint64_t held_ = 0;
  static thread_local bool alive_;
};

thread_local bool BufferPool::alive_ = true;
thread_local BufferPool tPool;

/// Blocks of one size (the shared_ptr control block with its TileData) kept
/// per thread, so that the tiles of each op are not a malloc and a free. A
/// block freed by another thread joins that thread's list.
class NodePool {
public:
  static constexpr size_t kMaxHeld = 4096;
  ~NodePool() {
    alive_ = false;
    for (void *p : free_)
      ::operator delete(p);
  }
  void *take(size_t bytes) {
    if (bytes != size_ || free_.empty())
      return ::operator new(bytes);
    void *p = free_.back();
    free_.pop_back();
    return p;
  }
  void give(void *p, size_t bytes) {
    if (size_ == 0)
      size_ = bytes;
    if (bytes != size_ || free_.size() >= kMaxHeld) {
      ::operator delete(p);
      return;
    }
    free_.push_back(p);
  }
  static bool alive() { return alive_; }

private:
  size_t size_ = 0; // the one block size held (that of allocate_shared<TileData>)
  std::vector<void *> free_;
  static thread_local bool alive_;
};

thread_local bool NodePool::alive_ = true;
thread_local NodePool tNodes;

template <typename T> struct NodeAllocator {
  using value_type = T;
  NodeAllocator() = default;
  template <typename U> NodeAllocator(const NodeAllocator<U> &) {}
  T *allocate(size_t n) { return static_cast<T *>(tNodes.take(n * sizeof(T))); }
  void deallocate(T *p, size_t n) {
    if (NodePool::alive())
      tNodes.give(p, n * sizeof(T));
    else
      ::operator delete(p);
  }
  template <typename U> bool operator==(const NodeAllocator<U> &) const { return true; }
  template <typename U> bool operator!=(const NodeAllocator<U> &) const { return false; }
};

} // namespace

TileData::TileData(int64_t n, unsigned elemSize) : n_(n), elemSize_(elemSize), inline_{0, 0} {
  uint64_t bytes = static_cast<uint64_t>(n) * elemSize;
  if (bytes <= sizeof(inline_)) {
    data_ = inline_;
  } else {
    sizeClass_ = BufferPool::classOf(bytes);
    data_ = tPool.take(sizeClass_);
  }
}

TileData::TileData(int64_t n, unsigned elemSize, Affine a)
    : n_(n), elemSize_(elemSize), data_(inline_), lazy_(true), affine_(true), aff_(a),
      inline_{0, 0} {}

TileData::TileData(int64_t n, unsigned elemSize, const void *bytes)
    : n_(n), elemSize_(elemSize), data_(const_cast<void *>(bytes)), view_(true), inline_{0, 0} {}

namespace {
template <typename T> void writeAffine(T *o, int64_t n, Affine a) {
  mapLanes(o, n, [a](int64_t i) { return static_cast<T>(a.base + static_cast<uint64_t>(i) * a.step); });
}
} // namespace

void TileData::materialize() const {
  uint64_t bytes = static_cast<uint64_t>(n_) * elemSize_;
  if (bytes > sizeof(inline_)) {
    sizeClass_ = BufferPool::classOf(bytes);
    data_ = tPool.take(sizeClass_);
  }
  switch (elemSize_) {
  case 1: writeAffine(static_cast<uint8_t *>(data_), n_, aff_); break;
  case 2: writeAffine(static_cast<uint16_t *>(data_), n_, aff_); break;
  case 4: writeAffine(static_cast<uint32_t *>(data_), n_, aff_); break;
  case 8: writeAffine(static_cast<uint64_t *>(data_), n_, aff_); break;
  }
  lazy_ = false;
}

TileData::~TileData() {
  if (sizeClass_ < 0)
    return;
  if (BufferPool::alive())
    tPool.give(static_cast<uint64_t *>(data_), sizeClass_);
  else
    delete[] static_cast<uint64_t *>(data_);
}

uint8_t *TileData::newPoison() {
  auto mask = std::make_shared<PoisonMask>(static_cast<size_t>(n_), 0);
  uint8_t *bytes = mask->data();
  poison_ = std::move(mask);
  return bytes;
}

void TileData::normalizePoison() {
  if (poison_ && firstPoison() < 0)
    poison_.reset();
}

int64_t TileData::firstPoison() const {
  if (!poison_)
    return -1;
  const uint8_t *p = poison_->data();
  const void *hit = std::memchr(p, 1, static_cast<size_t>(n_));
  return hit ? static_cast<const uint8_t *>(hit) - p : -1;
}

void trimTilePool() {
  if (BufferPool::alive())
    tPool.trim(uint64_t(8) << 20);
}

TilePtr makeTile(int64_t n, unsigned elemSize) {
  return std::allocate_shared<TileData>(NodeAllocator<TileData>(), n, elemSize);
}

TilePtr makeAffineTile(int64_t n, unsigned elemSize, Affine a) {
  return std::allocate_shared<TileData>(NodeAllocator<TileData>(), n, elemSize, a);
}

TilePtr makeViewTile(int64_t n, unsigned elemSize, const void *bytes) {
  return std::allocate_shared<TileData>(NodeAllocator<TileData>(), n, elemSize, bytes);
}

TilePtr copyTile(const TileData &t) {
  TilePtr c = makeTile(t.size(), t.elemSize());
  std::memcpy(c->raw(), t.raw(), static_cast<size_t>(t.size()) * t.elemSize());
  c->setPoison(t.poisonMask());
  return c;
}

TilePtr threadCopy(const TileData &t) {
  TilePtr c = copyTile(t);
  Affine a;
  if (t.affine(a))
    c->setAffine(a);
  return c;
}

unsigned elemSizeOf(const ir::Type &t) {
  return t.isPtr ? 8 : byteSize(t.dtype);
}

std::vector<int64_t> rowMajorStrides(const ir::Shape &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * shape[i];
  return s;
}

//===----------------------------------------------------------------------===//
// Strided gather
//===----------------------------------------------------------------------===//

namespace {

template <typename T>
void gatherT(const T *src, T *dst, const ir::Shape &shape, const std::vector<int64_t> &strides) {
  size_t rank = shape.size();
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  int64_t inner = shape[rank - 1], is = strides[rank - 1];
  int64_t outer = 1;
  for (size_t d = 0; d + 1 < rank; ++d)
    outer *= shape[d];
  std::vector<int64_t> idx(rank, 0);
  int64_t off = 0;
  for (int64_t o = 0; o < outer; ++o) {
    const T *s = src + off;
    if (is == 1) {
      std::memcpy(dst, s, static_cast<size_t>(inner) * sizeof(T));
    } else if (is == 0) {
      std::fill(dst, dst + inner, s[0]);
    } else {
      for (int64_t j = 0; j < inner; ++j)
        dst[j] = s[j * is];
    }
    dst += inner;
    for (size_t d = rank - 1; d-- > 0;) { // odometer over the outer axes
      off += strides[d];
      if (++idx[d] < shape[d])
        break;
      off -= strides[d] * shape[d];
      idx[d] = 0;
    }
  }
}

} // namespace

void gatherStrided(const void *src, void *dst, unsigned elemSize, const ir::Shape &outShape,
                   const std::vector<int64_t> &srcStrides) {
  switch (elemSize) {
  case 1:
    return gatherT(static_cast<const uint8_t *>(src), static_cast<uint8_t *>(dst), outShape,
                   srcStrides);
  case 2:
    return gatherT(static_cast<const uint16_t *>(src), static_cast<uint16_t *>(dst), outShape,
                   srcStrides);
  case 4:
    return gatherT(static_cast<const uint32_t *>(src), static_cast<uint32_t *>(dst), outShape,
                   srcStrides);
  case 8:
    return gatherT(static_cast<const uint64_t *>(src), static_cast<uint64_t *>(dst), outShape,
                   srcStrides);
  }
  assert(false && "element size is not 1, 2, 4 or 8");
}

//===----------------------------------------------------------------------===//
// Formatting
//===----------------------------------------------------------------------===//

namespace {

/// The shortest decimal text that reads back as `v` in dtype D.
template <DType D> std::string shortestFloat(St<D> v) {
  double d = toDouble<D>(v);
  if (d != d)
    return "nan";
  if (std::isinf(d))
    return d < 0 ? "-inf" : "inf";
  char buf[64];
  std::to_chars_result r{};
  if constexpr (D == DType::F32) {
    r = std::to_chars(buf, buf + sizeof(buf), v);
  } else if constexpr (D == DType::F64) {
    r = std::to_chars(buf, buf + sizeof(buf), v);
  } else {
    for (int prec = 1; prec <= 17; ++prec) {
      r = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::general, prec);
      double back = 0;
      std::from_chars(buf, r.ptr, back);
      if (fromDouble<D>(back) == v)
        break;
    }
  }
  std::string s(buf, r.ptr);
  if (s.find_first_of(".e") == std::string::npos)
    s += '.'; // NumPy's spelling of an integral float: `2.`
  return s;
}

template <DType D> std::string formatElemT(const void *p) {
  St<D> v;
  std::memcpy(&v, p, sizeof(v));
  if constexpr (kIsBool<D>)
    return v ? "True" : "False";
  else if constexpr (kIsFloat<D>)
    return shortestFloat<D>(v);
  else
    return std::to_string(v);
}

std::string hexAddress(uint64_t a) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), a, 16);
  return "0x" + std::string(buf, r.ptr);
}

std::string dtypeName(const ir::Type &t) {
  std::string name(conformanceName(t.dtype));
  return t.isPtr ? "ptr<" + name + ">" : name;
}

/// NumPy-like nested-list printer with summarisation and right-aligned items.
class ArrayPrinter {
public:
  ArrayPrinter(const TileData &t, const ir::Type &type)
      : t_(t), type_(type), elem_(type.element()), strides_(rowMajorStrides(type.shape)) {
    summarise_ = t.size() > 1000;
  }

  std::string print() {
    if (type_.shape.empty())
      return "array(" + item(0) + ", dtype=" + dtypeName(type_) + ")";
    collectWidth(0, 0);
    std::string body = block(0, 0, 7); // 7 == strlen("array([")
    std::string shape;
    if (summarise_) { // the nesting no longer shows it (NumPy >= 2.2 does the same)
      shape = ", shape=(";
      for (size_t d = 0; d < type_.shape.size(); ++d)
        shape += (d ? ", " : "") + std::to_string(type_.shape[d]);
      shape += type_.shape.size() == 1 ? ",)" : ")";
    }
    return "array(" + body + shape + ", dtype=" + dtypeName(type_) + ")";
  }

private:
  static constexpr int64_t kEdge = 3;
  static constexpr size_t kLineWidth = 75;

  bool elided(size_t axis) const { return summarise_ && type_.shape[axis] > 2 * kEdge; }

  /// The indices shown along `axis` (-1 marks the `...`).
  std::vector<int64_t> shown(size_t axis) const {
    std::vector<int64_t> idx;
    int64_t n = type_.shape[axis];
    if (!elided(axis)) {
      for (int64_t i = 0; i < n; ++i)
        idx.push_back(i);
      return idx;
    }
    for (int64_t i = 0; i < kEdge; ++i)
      idx.push_back(i);
    idx.push_back(-1);
    for (int64_t i = n - kEdge; i < n; ++i)
      idx.push_back(i);
    return idx;
  }

  std::string item(int64_t flat) const {
    if (t_.isPoison(flat))
      return "--";
    const char *p = static_cast<const char *>(t_.raw()) + flat * t_.elemSize();
    return formatElement(elem_, p);
  }

  void collectWidth(size_t axis, int64_t base) {
    for (int64_t i : shown(axis)) {
      if (i < 0)
        continue;
      int64_t off = base + i * strides_[axis];
      if (axis + 1 == type_.shape.size())
        width_ = std::max(width_, item(off).size());
      else
        collectWidth(axis + 1, off);
    }
  }

  std::string padded(std::string s) const {
    return std::string(width_ > s.size() ? width_ - s.size() : 0, ' ') + s;
  }

  /// The bracketed text of the sub-array at `base` along `axis`; `col` is the
  /// column just after its opening bracket.
  std::string block(size_t axis, int64_t base, size_t col) {
    size_t rank = type_.shape.size();
    std::string s = "[";
    if (axis + 1 == rank) {
      size_t lineLen = col;
      bool first = true;
      for (int64_t i : shown(axis)) {
        std::string it = i < 0 ? std::string("...") : padded(item(base + i));
        if (!first) {
          s += ',';
          if (lineLen + 2 + it.size() + 1 > kLineWidth) {
            s += '\n' + std::string(col, ' ');
            lineLen = col;
          } else {
            s += ' ';
            lineLen += 2;
          }
        }
        s += it;
        lineLen += it.size();
        first = false;
      }
      return s + "]";
    }
    std::string sep = "," + std::string(rank - axis - 1, '\n') + std::string(col, ' ');
    bool first = true;
    for (int64_t i : shown(axis)) {
      if (!first)
        s += sep;
      s += i < 0 ? "..." : block(axis + 1, base + i * strides_[axis], col + 1);
      first = false;
    }
    return s + "]";
  }

  const TileData &t_;
  const ir::Type &type_;
  ir::Type elem_;
  std::vector<int64_t> strides_;
  bool summarise_ = false;
  size_t width_ = 0;
};

} // namespace

std::string formatElement(const ir::Type &elemType, const void *p) {
  if (elemType.isPtr) {
    uint64_t a;
    std::memcpy(&a, p, sizeof(a));
    return hexAddress(a);
  }
  return dispatchDType(elemType.dtype, [&](auto d) { return formatElemT<decltype(d)::value>(p); });
}

std::string formatValue(const TileData &t, const ir::Type &type) {
  return ArrayPrinter(t, type).print();
}

namespace {

/// min/max/first of the defined lanes of a tile; NaN lanes (isNan) are left
/// out of min and max unless every defined lane is NaN.
template <typename T, typename Less, typename IsNan>
std::string summarizeT(const TileData &t, const ir::Type &type, Less less, IsNan isNan,
                       const AddressText &addr) {
  const T *v = t.as<T>();
  const uint8_t *poison = t.poison();
  ir::Type elem = type.element();
  auto formatElement = [&](const ir::Type &e, const T *p) {
    if constexpr (std::is_same_v<T, uint64_t>)
      if (e.isPtr && addr)
        return addr(*p);
    return interp::formatElement(e, p);
  };
  int64_t lo = -1, hi = -1, defined = 0, anyLane = -1;
  std::string first;
  for (int64_t i = 0; i < t.size(); ++i) {
    if (poison && poison[i])
      continue;
    if (defined < 4)
      first += (defined ? ", " : "") + formatElement(elem, &v[i]);
    ++defined;
    anyLane = i;
    if (isNan(v[i]))
      continue;
    if (lo < 0 || less(v[i], v[lo]))
      lo = i;
    if (hi < 0 || less(v[hi], v[i]))
      hi = i;
  }
  if (lo < 0)
    lo = hi = anyLane;
  std::string s;
  if (defined == 0)
    s = "all lanes poison";
  else
    s = "min=" + formatElement(elem, &v[lo]) + " max=" + formatElement(elem, &v[hi]) + " first=[" +
        first + (defined > 4 ? ", ...]" : "]");
  if (poison)
    s += " poison=" + std::to_string(t.size() - defined) + "/" + std::to_string(t.size());
  return s;
}

} // namespace

std::string summarizeValue(const TileData &t, const ir::Type &type, const AddressText &addr) {
  if (type.shape.empty()) {
    if (t.isPoison(0))
      return "--";
    if (type.isPtr && addr)
      return addr(*t.as<uint64_t>());
    return formatElement(type.element(), t.raw());
  }
  if (type.isPtr)
    return summarizeT<uint64_t>(
        t, type, [](uint64_t a, uint64_t b) { return a < b; }, [](uint64_t) { return false; },
        addr);
  return dispatchDType(type.dtype, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return summarizeT<St<D>>(
        t, type, [](St<D> a, St<D> b) { return compareT<D>(num::Cmp::Lt, a, b); },
        [](St<D> a) {
          if constexpr (kIsFloat<D>)
            return isNaN<D>(a);
          else
            return false;
        },
        addr);
  });
}

} // namespace tc::interp
