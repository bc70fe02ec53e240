// Values (constant, range, program ids, undef) and shape ops (splat, broadcast,
// expand_dims, reshape, trans, extract_slice, insert_slice). Constants and ranges are built once at
// preparation and copied once per frame (one thread's programs); reshape and expand_dims share
// their operand's tile (row-major order is unchanged).
#include "interp/Interpreter.h"

#include "interp/ExecElem.h"

#include <cstring>

namespace tc::interp {

namespace {

/// Each frame (one thread's programs of a launch) uses its own copy of the
/// constant, made by its first program (threadCopy, Tile.h).
bool runConstant(Frame &f, const Instr &in) {
  Tile &c = f.cached[in.out[0]];
  if (!c) [[unlikely]]
    c = threadCopy(*in.constant);
  f.set(in.out[0], c);
  return true;
}

bool runProgramId(Frame &f, const Instr &in) {
  f.set(in.out[0], makeScalarInt(DType::I32, f.pid[static_cast<size_t>(in.g0)]));
  return true;
}

bool runNumPrograms(Frame &f, const Instr &in) {
  f.set(in.out[0], makeScalarInt(DType::I32, f.launch.grid[static_cast<size_t>(in.g0)]));
  return true;
}

template <typename T> void fill(TileData &t, const void *value) {
  T v;
  std::memcpy(&v, value, sizeof(T));
  mapLanes(t.as<T>(), t.size(), [v](int64_t) { return v; });
}

/// Fills `t` with copies of the element at `value`.
void fillWith(TileData &t, const void *value) {
  switch (t.elemSize()) {
  case 1: return fill<uint8_t>(t, value);
  case 2: return fill<uint16_t>(t, value);
  case 4: return fill<uint32_t>(t, value);
  case 8: return fill<uint64_t>(t, value);
  }
}

/// The bits of a scalar's element (little-endian host: the low bytes).
uint64_t elementBits(const TileData &s) {
  uint64_t bits = 0;
  std::memcpy(&bits, s.raw(), s.elemSize());
  return bits;
}

/// splat: a defined scalar gives a lazy uniform tile (Tile.h), written only
/// if some op reads its lanes.
bool runSplat(Frame &f, const Instr &in) {
  const TileData &s = *f.get(in.in[0]);
  if (!s.hasPoison() && in.elemSize <= 8) {
    f.set(in.out[0], makeAffineTile(in.n, in.elemSize, Affine{elementBits(s), 0}));
    return true;
  }
  TilePtr r = makeTile(in.n, in.elemSize);
  fillWith(*r, s.raw());
  if (s.isPoison(0))
    std::memset(r->newPoison(), 1, static_cast<size_t>(in.n));
  f.set(in.out[0], std::move(r));
  return true;
}

/// broadcast and trans: a strided gather of data and poison.
bool runGather(Frame &f, const Instr &in) {
  const TileData &a = *f.get(in.in[0]);
  uint64_t bits;
  if (a.uniform(bits)) { // every lane the same: so is every gathered lane
    f.set(in.out[0], makeAffineTile(in.n, in.elemSize, Affine{bits, 0}));
    return true;
  }
  TilePtr r = makeTile(in.n, in.elemSize);
  gatherStrided(a.raw(), r->raw(), in.elemSize, in.shape, in.strides);
  if (a.hasPoison())
    gatherStrided(a.poison(), r->newPoison(), 1, in.shape, in.strides);
  f.set(in.out[0], std::move(r));
  return true;
}

bool runShare(Frame &f, const Instr &in) {
  f.set(in.out[0], f.get(in.in[0]));
  return true;
}

/// undef: every lane undefined (a tile variable declared without initialiser);
/// the data is zero so that nothing reads uninitialised host memory.
bool runUndef(Frame &f, const Instr &in) {
  TilePtr r = makeTile(in.n, in.elemSize);
  std::memset(r->raw(), 0, static_cast<size_t>(in.n) * in.elemSize);
  std::memset(r->newPoison(), 1, static_cast<size_t>(in.n));
  f.set(in.out[0], std::move(r));
  return true;
}

/// The slice index of extract_slice / insert_slice (operand 1), checked to lie
/// in [0, d): otherwise an out_of_bounds trap naming the variable, the axis,
/// the index and the bound; an undefined index is undefined_value.
std::optional<int64_t> sliceIndex(Frame &f, const Instr &in) {
  const TileData &t = *f.get(in.in[1]);
  if (t.isPoison(0)) {
    failUndefined(f, in, -1, "the slice index of '" + in.label + "' is undefined", 1);
    return std::nullopt;
  }
  DType d = in.op->operand(1)->type().dtype;
  __int128 i = scalarInt(t, d);
  if (i < 0 || i >= in.g1) {
    std::string idx = isSignedInt(d) ? std::to_string(static_cast<int64_t>(i))
                                     : std::to_string(static_cast<uint64_t>(i));
    f.fail(TrapKind::OutOfBounds, in, -1,
           "slice index " + idx + " is out of range for axis " + std::to_string(in.g3) + " of '" +
               in.label + "' (size " + std::to_string(in.g1) + ": valid indices are 0 to " +
               std::to_string(in.g1 - 1) + ")");
    return std::nullopt;
  }
  return static_cast<int64_t>(i);
}

/// extract_slice: the tile is outer x d x inner (row-major); copy slice i.
bool runExtractSlice(Frame &f, const Instr &in) {
  std::optional<int64_t> i = sliceIndex(f, in);
  if (!i)
    return false;
  const TileData &a = *f.get(in.in[0]);
  TilePtr r = makeTile(in.n, in.elemSize);
  size_t row = static_cast<size_t>(in.g2) * in.elemSize;
  const char *src = static_cast<const char *>(a.raw());
  char *dst = static_cast<char *>(r->raw());
  for (int64_t o = 0; o < in.g0; ++o)
    std::memcpy(dst + static_cast<size_t>(o) * row, src + static_cast<size_t>(o * in.g1 + *i) * row,
                row);
  if (a.hasPoison()) {
    uint8_t *p = r->newPoison();
    for (int64_t o = 0; o < in.g0; ++o)
      std::memcpy(p + o * in.g2, a.poison() + (o * in.g1 + *i) * in.g2, static_cast<size_t>(in.g2));
    r->normalizePoison();
  }
  f.set(in.out[0], std::move(r));
  return true;
}

/// insert_slice: a copy of the tile with slice i replaced by the value.
bool runInsertSlice(Frame &f, const Instr &in) {
  std::optional<int64_t> i = sliceIndex(f, in);
  if (!i)
    return false;
  const TileData &a = *f.get(in.in[0]), &v = *f.get(in.in[2]);
  TilePtr r = copyTile(a);
  size_t row = static_cast<size_t>(in.g2) * in.elemSize;
  const char *src = static_cast<const char *>(v.raw());
  char *dst = static_cast<char *>(r->raw());
  for (int64_t o = 0; o < in.g0; ++o)
    std::memcpy(dst + static_cast<size_t>(o * in.g1 + *i) * row, src + static_cast<size_t>(o) * row,
                row);
  if (a.hasPoison() || v.hasPoison()) {
    uint8_t *p = r->newPoison();
    if (a.hasPoison())
      std::memcpy(p, a.poison(), static_cast<size_t>(in.n));
    for (int64_t o = 0; o < in.g0; ++o) {
      uint8_t *d = p + (o * in.g1 + *i) * in.g2;
      if (v.hasPoison())
        std::memcpy(d, v.poison() + o * in.g2, static_cast<size_t>(in.g2));
      else
        std::memset(d, 0, static_cast<size_t>(in.g2));
    }
    r->normalizePoison();
  }
  f.set(in.out[0], std::move(r));
  return true;
}

/// The tile of a `constant` op.
Tile constantTile(const ir::Op &op, std::string &error) {
  const ir::Type &t = op.result()->type();
  const ir::AttrValue *v = op.attr("value");
  if (!v || t.isPtr) {
    error = "malformed constant";
    return nullptr;
  }
  uint64_t bits = 0;
  if (isFloat(t.dtype)) {
    double d = std::holds_alternative<double>(*v)    ? std::get<double>(*v)
               : std::holds_alternative<int64_t>(*v) ? static_cast<double>(std::get<int64_t>(*v))
                                                     : 0.0;
    bits = num::floatBits(t.dtype, d);
  } else {
    int64_t i = std::holds_alternative<int64_t>(*v)  ? std::get<int64_t>(*v)
                : std::holds_alternative<double>(*v) ? static_cast<int64_t>(std::get<double>(*v))
                                                     : 0;
    bits = t.dtype == DType::Bool ? (i != 0) : num::wrapInt(t.dtype, i);
  }
  TilePtr r = makeTile(t.numElements(), elemSizeOf(t));
  fillWith(*r, &bits); // little-endian host: the low bytes hold the element
  r->setAffine(Affine{bits, 0});
  return r;
}

Tile rangeTile(const ir::Op &op, std::string &error) {
  const ir::AttrValue *s = op.attr("start"), *e = op.attr("end");
  if (!s || !e || !std::holds_alternative<int64_t>(*s) || !std::holds_alternative<int64_t>(*e)) {
    error = "malformed range";
    return nullptr;
  }
  int64_t start = std::get<int64_t>(*s);
  int64_t n = op.result()->type().numElements();
  TilePtr r = makeTile(n, 4);
  int32_t *o = r->as<int32_t>();
  for (int64_t i = 0; i < n; ++i)
    o[i] = static_cast<int32_t>(start + i);
  r->setAffine(Affine{static_cast<uint64_t>(start), 1});
  return r;
}

int64_t intAttrOr(const ir::Op &op, const char *name, int64_t dflt) {
  const ir::AttrValue *v = op.attr(name);
  return v && std::holds_alternative<int64_t>(*v) ? std::get<int64_t>(*v) : dflt;
}

} // namespace

bool prepareValueOp(const ir::Op &op, Instr &in, std::string &error) {
  ir::OpKind k = op.kind();
  if (k == ir::OpKind::Undef) {
    in.run = runUndef;
    return true;
  }
  if (k == ir::OpKind::Constant || k == ir::OpKind::Range) {
    in.constant = k == ir::OpKind::Constant ? constantTile(op, error) : rangeTile(op, error);
    in.run = runConstant;
    return in.constant != nullptr;
  }
  in.g0 = intAttrOr(op, "axis", -1);
  if (in.g0 < 0 || in.g0 > 2) {
    error = "program axis must be 0, 1 or 2";
    return false;
  }
  in.run = k == ir::OpKind::GetProgramId ? runProgramId : runNumPrograms;
  return true;
}

bool prepareShapeOp(const ir::Op &op, Instr &in, std::string &error) {
  const ir::Type &from = op.operand(0)->type(), &to = op.result()->type();
  ir::OpKind k = op.kind();
  if (k == ir::OpKind::Splat) {
    in.run = runSplat;
  } else if (k == ir::OpKind::ExpandDims || k == ir::OpKind::Reshape) {
    in.run = runShare;
  } else if (k == ir::OpKind::Broadcast) {
    if (from.rank() != to.rank()) {
      error = "broadcast changes the rank";
      return false;
    }
    in.shape = to.shape;
    in.strides = rowMajorStrides(from.shape);
    for (size_t d = 0; d < from.rank(); ++d)
      if (from.shape[d] == 1)
        in.strides[d] = 0;
    in.run = runGather;
  } else if (k == ir::OpKind::Trans) {
    const ir::AttrValue *p = op.attr("perm");
    if (!p || !std::holds_alternative<std::vector<int64_t>>(*p) ||
        std::get<std::vector<int64_t>>(*p).size() != from.rank()) {
      error = "malformed trans";
      return false;
    }
    std::vector<int64_t> src = rowMajorStrides(from.shape);
    in.shape = to.shape;
    for (int64_t axis : std::get<std::vector<int64_t>>(*p)) {
      if (axis < 0 || static_cast<size_t>(axis) >= from.rank()) {
        error = "malformed trans";
        return false;
      }
      in.strides.push_back(src[static_cast<size_t>(axis)]);
    }
    in.run = runGather;
  } else if (k == ir::OpKind::ExtractSlice || k == ir::OpKind::InsertSlice) {
    int64_t axis = intAttrOr(op, "axis", -1);
    if (axis < 0 || static_cast<size_t>(axis) >= from.rank()) {
      error = "malformed " + std::string(op.name());
      return false;
    }
    const ir::AttrValue *var = op.attr("var");
    in.label = var && std::holds_alternative<std::string>(*var) ? std::get<std::string>(*var)
                                                                : std::string("the tile");
    in.g0 = 1;
    in.g2 = 1;
    for (size_t d = 0; d < from.rank(); ++d) {
      if (static_cast<int64_t>(d) < axis)
        in.g0 *= from.shape[d];
      else if (static_cast<int64_t>(d) > axis)
        in.g2 *= from.shape[d];
    }
    in.g1 = from.shape[static_cast<size_t>(axis)];
    in.g3 = axis;
    in.elemSize = elemSizeOf(from);
    in.run = k == ir::OpKind::ExtractSlice ? runExtractSlice : runInsertSlice;
  } else {
    error = "not a shape op: " + std::string(op.name());
    return false;
  }
  return true;
}

} // namespace tc::interp
