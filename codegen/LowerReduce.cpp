//===- LowerReduce.cpp - reduce: registers, warp shuffles, shared memory --===//
//
// A reduction runs the reference's pairwise tree (docs/semantics.md section
// 10, interp/ExecReduce.cpp) over an axis of len = 2^m elements: level l
// combines the positions p and p + 2^l for every p that is a multiple of
// 2^(l+1), the left (smaller) position first. In the flat row-major index
// e = (o * len + p) * inner + j, level l therefore pairs the elements that
// differ only in bit log2(inner) + l of e.
//
// The blocked layout (Lower.h) keeps every bit of e in one place. With N >= T
// elements, v = log2 V' and T = 2^tb threads: bits [0, v) and [v + tb, ...)
// select the slot (registers of one thread), bits [v, v + 5) the lane and
// bits [v + 5, v + tb) the warp; with N < T, bits [0, 5) are lane bits and
// the rest warp bits. So the levels run in their order, in place, as long as
// their bit is
//   * a slot bit: the thread combines its two slots (left: the bit is 0);
//   * a lane bit: shfl.sync.bfly exchanges the partial results of the two
//     lanes and both compute left (+) right (the same value, bit for bit).
// At the first level whose bit is a warp bit (or when the axis is done), the
// partial results, a tile of outer x (len >> levels) x inner, go to shared
// memory (one barrier pair: before, so no one still reads what was there,
// and after), and the rest of the tree runs from there: each thread reads
// the partial results of its output elements and folds them in registers
// when they are few (kMaxFoldReads), else the levels go across the threads,
// neighbours y[p] = y[2p] (+) y[2p+1] into a second buffer (ping-pong, a
// barrier per level). Either way every combine is the reference's, with the
// same operands in the same order, so `+` is bit for bit the interpreter's;
// argmax/argmin carry the index and keep the left operand on ties (the
// scan's first strict improvement). max, min, and, or, xor and integer add
// give the same result for any tree (reduceAnyOrder), so a thread folds all
// of its values of an output element first (also the slot bits above the
// warp bits), then one chain of shuffles, and only the warp bits' partial
// results go through shared memory.
//
//===----------------------------------------------------------------------===//
#include "codegen/Lowerer.h"

#include <bit>

namespace tc::codegen::lower {

namespace {

/// Partial results read per thread up to which the levels left after the
/// warps are folded in registers (more: level by level across the threads).
constexpr int64_t kMaxFoldReads = 64;

enum class BitHome { Slot, Lane, Warp };

/// Where bit `bit` of the flat index of a tile of n elements lives (n, T and
/// vec powers of two): which slot bit, lane bit or warp bit selects it.
std::pair<BitHome, int> placeOfBit(int64_t n, int64_t T, int64_t vec, int bit) {
  if (n < T)
    return bit < 5 ? std::pair{BitHome::Lane, bit} : std::pair{BitHome::Warp, bit - 5};
  int v = log2Ceil(std::min(vec, n / T)), tb = log2Ceil(T);
  if (bit < v)
    return {BitHome::Slot, bit};
  if (bit < v + 5)
    return {BitHome::Lane, bit - v};
  if (bit < v + tb)
    return {BitHome::Warp, bit - v - 5};
  return {BitHome::Slot, v + (bit - v - tb)};
}

} // namespace

/// One reduction: its kind, accumulator type and the (outer, len, inner) view
/// of the operand's n elements.
struct Lowerer::ReduceSpec {
  std::string kind;
  bool isArg = false;
  DType acc = DType::F32;
  int64_t outer = 1, len = 1, inner = 1, n = 1;
  ir::Type accT, idxT;
};

/// Bit for bit exchange of v (any 1- to 64-bit scalar) with lane ^ mask.
llvm::Value *Lowerer::shuffleXor(llvm::Value *v, uint32_t mask) {
  llvm::Type *ty = v->getType();
  unsigned bits = static_cast<unsigned>(ty->getPrimitiveSizeInBits());
  llvm::Type *ity = b_.getIntNTy(bits);
  llvm::Value *x = ty->isIntegerTy() ? v : b_.CreateBitCast(v, ity);
  auto shfl = [&](llvm::Value *w) {
    return b_.CreateIntrinsic(llvm::Intrinsic::nvvm_shfl_sync_bfly_i32, {},
                              {b_.getInt32(0xffffffffu), w, b_.getInt32(mask), b_.getInt32(31)});
  };
  llvm::Value *r;
  if (bits == 64) {
    llvm::Value *lo = shfl(b_.CreateTrunc(x, b_.getInt32Ty()));
    llvm::Value *hi = shfl(b_.CreateTrunc(b_.CreateLShr(x, 32), b_.getInt32Ty()));
    r = b_.CreateOr(b_.CreateZExt(lo, ity), b_.CreateShl(b_.CreateZExt(hi, ity), 32));
  } else {
    if (bits > 32)
      throw Unsupported("internal: a shuffle of a " + std::to_string(bits) + "-bit value");
    r = b_.CreateZExtOrTrunc(shfl(b_.CreateZExtOrTrunc(x, b_.getInt32Ty())), ity);
  }
  return ty->isIntegerTy() ? r : b_.CreateBitCast(r, ty);
}

/// A tree level inside the thread: slot k (slot bit s clear) (+) slot k | 2^s.
void Lowerer::reduceSlotPairs(const ReduceSpec &r, Slots &val, Slots &idx, int s) {
  size_t bit = size_t(1) << s;
  for (size_t k = 0; k < val.size(); ++k) {
    if ((k & bit) || !val[k])
      continue;
    auto [c, ci] = combine(r.kind, r.acc, val[k], r.isArg ? idx[k] : nullptr, val[k | bit],
                           r.isArg ? idx[k | bit] : nullptr);
    val[k] = c;
    if (r.isArg)
      idx[k] = ci;
    val[k | bit] = nullptr;
  }
}

/// A tree level across lanes: lane (lane bit l clear) (+) lane | 2^l, in both.
void Lowerer::reduceLanePairs(const ReduceSpec &r, Slots &val, Slots &idx, int l) {
  uint32_t mask = uint32_t(1) << l;
  llvm::Value *upper = b_.CreateICmpNE(b_.CreateAnd(tid_, b_.getInt32(mask)), b_.getInt32(0));
  auto order = [&](llvm::Value *mine, llvm::Value *other) {
    return std::pair{b_.CreateSelect(upper, other, mine), b_.CreateSelect(upper, mine, other)};
  };
  for (size_t k = 0; k < val.size(); ++k) {
    if (!val[k])
      continue;
    if (!r.isArg) {
      // add, max, min, and, or, xor are commutative as the GPU computes them
      // (IEEE add with the canonical NaN; max and min as IEEE maxNum/minNum
      // with -0 < +0, which PTX's max/min give in either operand order), so
      // each lane combines its own value and the one it receives as they
      // come: the tree's nodes are the reference's, bit for bit, without the
      // two operand-ordering selects (which LLVM folds for add, not for the
      // max.f32 / min.f32 the max and min are emitted as).
      val[k] = combine(r.kind, r.acc, val[k], nullptr, shuffleXor(val[k], mask), nullptr).first;
      continue;
    }
    auto [a, c] = order(val[k], shuffleXor(val[k], mask));
    std::pair<llvm::Value *, llvm::Value *> ix{nullptr, nullptr};
    if (r.isArg)
      ix = order(idx[k], shuffleXor(idx[k], mask));
    auto [v, vi] = combine(r.kind, r.acc, a, ix.first, c, ix.second);
    val[k] = v;
    if (r.isArg)
      idx[k] = vi;
  }
}

/// Whether a reduction's result does not depend on the shape of its tree: its
/// combine is associative and commutative as the GPU computes it (max and min
/// are maxNum/minNum over -0 < +0, NaN only when every operand is NaN; and,
/// or, xor; integer add, which wraps). Not float add (the reference's pairwise
/// tree is its rounding) nor argmax/argmin (ties go to the left operand).
bool reduceAnyOrder(const std::string &kind, DType acc) {
  return kind == "max" || kind == "min" || kind == "and" || kind == "or" || kind == "xor" ||
         (kind == "add" && !isFloat(acc));
}

/// How many levels of the tree over an axis of len (inner elements apart in a
/// tile of n) have their operands in one thread (slot bits) and then in one
/// warp (lane bits), in order, before the first one across warps (planLayouts
/// and reduceInWarp). With anyOrder (reduceAnyOrder), every slot and lane
/// level of the axis, wherever the levels across warps are.
std::pair<int, int> Lowerer::reduceLevelsInWarp(int64_t n, int64_t inner, int64_t len,
                                                bool anyOrder) const {
  if (!isPow2(n) || !isPow2(inner) || !isPow2(T_) || !isPow2(vec_))
    return {0, 0};
  int lb = log2Ceil(inner), levels = log2Ceil(len), slots = 0, lanes = 0;
  for (int done = 0; done < levels; ++done) {
    BitHome home = placeOfBit(n, T_, vec_, lb + done).first;
    if (home == BitHome::Warp) {
      if (anyOrder)
        continue;
      break;
    }
    ++(home == BitHome::Slot ? slots : lanes);
  }
  return {slots, lanes};
}

/// Runs the levels of the tree whose operands are in this thread or this
/// warp, in order, up to the first one across warps; returns the mask of the
/// levels that ran (bit l: level l) and sets laneMask to the lane bits they
/// reduced. Dead slots become null. When the order does not matter
/// (reduceAnyOrder), every slot level of the axis first, then every lane level:
/// the thread folds all its values of a row before the one chain of shuffles
/// (with two runs a thread, a row max took two chains and staged two partial
/// results a warp).
uint64_t Lowerer::reduceInWarp(const ReduceSpec &r, Slots &val, Slots &idx, uint32_t &laneMask) {
  laneMask = 0;
  bool anyOrder = reduceAnyOrder(r.kind, r.acc);
  auto [slots, lanes] = reduceLevelsInWarp(r.n, r.inner, r.len, anyOrder);
  int lb = log2Ceil(r.inner), levels = log2Ceil(r.len);
  uint64_t reduced = 0;
  if (!anyOrder) {
    for (int l = 0; l < slots + lanes; ++l)
      reduced |= uint64_t(1) << l;
  } else {
    for (int l = 0; l < levels; ++l)
      if (placeOfBit(r.n, T_, vec_, lb + l).first != BitHome::Warp)
        reduced |= uint64_t(1) << l;
  }
  for (BitHome pass : {BitHome::Slot, BitHome::Lane}) {
    for (int l = 0; l < levels; ++l) {
      if (!(reduced >> l & 1))
        continue;
      auto [home, at] = placeOfBit(r.n, T_, vec_, lb + l);
      if (anyOrder && home != pass)
        continue;
      if (home == BitHome::Slot) {
        reduceSlotPairs(r, val, idx, at);
      } else {
        reduceLanePairs(r, val, idx, at);
        laneMask |= uint32_t(1) << at;
      }
    }
    if (!anyOrder)
      break; // one pass, in level order
  }
  return reduced;
}

/// Writes the partial results left after the levels in `reduced` (bit l:
/// level l ran) as a row-major tile outer x len2 x inner at byte offsets off /
/// ioff (one writer per partial result), between two barriers; a partial's
/// position is the bits of p of the levels that did not run, in order.
void Lowerer::stagePartials(const ReduceSpec &r, const Slots &val, const Slots &idx,
                            uint64_t reduced, uint32_t laneMask, size_t off, size_t ioff) {
  int lb = log2Ceil(r.inner), m = log2Ceil(r.len);
  int64_t levels = std::popcount(reduced);
  bool low = (reduced & (reduced + 1)) == 0; // levels 0 .. levels - 1
  auto compact = [&](llvm::Value *e) -> llvm::Value * { // (o, p, j) -> (o, p', j)
    if (levels == 0)
      return e;
    llvm::Value *j = b_.CreateAnd(e, b_.getInt32(static_cast<uint32_t>(r.inner - 1)));
    if (low) { // p' = p >> levels
      llvm::Value *hi = b_.CreateLShr(e, b_.getInt32(static_cast<uint32_t>(lb + levels)));
      return b_.CreateOr(b_.CreateShl(hi, b_.getInt32(static_cast<uint32_t>(lb))), j);
    }
    llvm::Value *o = b_.CreateLShr(e, b_.getInt32(static_cast<uint32_t>(lb + m)));
    llvm::Value *p = b_.CreateLShr(e, b_.getInt32(static_cast<uint32_t>(lb)));
    llvm::Value *row = b_.CreateShl(o, b_.getInt32(static_cast<uint32_t>(m - levels)));
    int at = 0;
    for (int l = 0; l < m; ++l) {
      if (reduced >> l & 1)
        continue;
      llvm::Value *bit = b_.CreateAnd(b_.CreateLShr(p, b_.getInt32(static_cast<uint32_t>(l))),
                                      b_.getInt32(1));
      row = b_.CreateOr(row, b_.CreateShl(bit, b_.getInt32(static_cast<uint32_t>(at++))));
    }
    return b_.CreateOr(b_.CreateShl(row, b_.getInt32(static_cast<uint32_t>(lb))), j);
  };
  llvm::Value *writer = ownerOf(r.n);
  if (laneMask)
    writer = andOpt(writer, b_.CreateICmpEQ(b_.CreateAnd(tid_, b_.getInt32(laneMask)),
                                            b_.getInt32(0)));
  barrier();
  emitGuarded(writer, [&]() -> llvm::Value * {
    for (size_t k = 0; k < val.size(); ++k) {
      if (!val[k])
        continue;
      llvm::Value *dst = compact(elemIndex(r.n, static_cast<int64_t>(k)));
      b_.CreateStore(se_.toMemory(val[k], r.acc), stagedAddr(r.accT, off, dst));
      if (r.isArg)
        b_.CreateStore(idx[k], stagedAddr(r.idxT, ioff, dst));
    }
    return nullptr;
  });
  barrier();
}

/// The levels left over a staged outer x len2 x inner tile, across the
/// threads (ping-pong between the buffers, a barrier per level); returns the
/// buffer holding the results (at position 0 of each row).
int Lowerer::reduceLevelsShared(const ReduceSpec &r, int64_t len2, const size_t buf[2],
                                const size_t ibuf[2]) {
  int cur = 0;
  for (int64_t count = len2; count > 1; count /= 2) {
    int64_t half = count / 2;
    forEachAssigned(r.outer * half * r.inner, [&](llvm::Value *q) {
      llvm::Value *j = b_.CreateURem(q, b_.getInt32(static_cast<uint32_t>(r.inner)));
      llvm::Value *rest = b_.CreateUDiv(q, b_.getInt32(static_cast<uint32_t>(r.inner)));
      llvm::Value *p = b_.CreateURem(rest, b_.getInt32(static_cast<uint32_t>(half)));
      llvm::Value *o = b_.CreateUDiv(rest, b_.getInt32(static_cast<uint32_t>(half)));
      llvm::Value *l = stagedPos(r, len2, o, b_.CreateShl(p, 1), j);
      llvm::Value *rr = stagedPos(r, len2, o, b_.CreateOr(b_.CreateShl(p, 1), b_.getInt32(1)), j);
      llvm::Value *dst = stagedPos(r, len2, o, p, j);
      auto [val, ix] = combine(r.kind, r.acc, readStaged(r.accT, buf[cur], l),
                               r.isArg ? readStaged(r.idxT, ibuf[cur], l) : nullptr,
                               readStaged(r.accT, buf[cur], rr),
                               r.isArg ? readStaged(r.idxT, ibuf[cur], rr) : nullptr);
      b_.CreateStore(se_.toMemory(val, r.acc), stagedAddr(r.accT, buf[1 - cur], dst));
      if (r.isArg)
        b_.CreateStore(ix, stagedAddr(r.idxT, ibuf[1 - cur], dst));
    });
    barrier();
    cur = 1 - cur;
  }
  return cur;
}

/// Index of (o, p, j) in a staged outer x len2 x inner tile.
llvm::Value *Lowerer::stagedPos(const ReduceSpec &r, int64_t len2, llvm::Value *o, llvm::Value *p,
                                llvm::Value *j) {
  llvm::Value *row = b_.CreateAdd(b_.CreateMul(o, b_.getInt32(static_cast<uint32_t>(len2))), p);
  return b_.CreateAdd(b_.CreateMul(row, b_.getInt32(static_cast<uint32_t>(r.inner))), j);
}

/// Result element (o, j) from the staged tile: the whole row folded in
/// registers (fold), or the row's first element after reduceLevelsShared.
std::pair<llvm::Value *, llvm::Value *> Lowerer::readReduced(const ReduceSpec &r, int64_t len2,
                                                             bool fold, size_t off, size_t ioff,
                                                             llvm::Value *o, llvm::Value *j) {
  std::vector<std::pair<llvm::Value *, llvm::Value *>> row;
  for (int64_t p = 0; p < (fold ? len2 : 1); ++p) {
    llvm::Value *pos = stagedPos(r, len2, o, b_.getInt32(static_cast<uint32_t>(p)), j);
    row.emplace_back(readStaged(r.accT, off, pos),
                     r.isArg ? readStaged(r.idxT, ioff, pos) : nullptr);
  }
  for (size_t count = row.size(); count > 1; count /= 2)
    for (size_t p = 0; p < count / 2; ++p)
      row[p] = combine(r.kind, r.acc, row[2 * p].first, row[2 * p].second, row[2 * p + 1].first,
                       row[2 * p + 1].second);
  return row[0];
}

void Lowerer::lowerReduce(const ir::Op &op) {
  const ir::Type &in = op.operand(0)->type(), &out = op.result()->type();
  ReduceSpec r;
  r.kind = op.strAttr("kind");
  size_t axis = static_cast<size_t>(op.intAttr("axis"));
  r.len = in.shape[axis];
  r.inner = product(in.shape, axis + 1, in.rank());
  r.outer = product(in.shape, 0, axis);
  r.n = in.numElements();
  if (r.len & (r.len - 1))
    throw Unsupported("a reduction over an axis of " + std::to_string(r.len) +
                      " elements (not a power of two)");
  r.isArg = r.kind == "argmax" || r.kind == "argmin";
  r.acc = r.kind == "add" ? addAccumulator(in.dtype) : in.dtype;
  if (plantedBug("reduce-acc-type")) r.acc = in.dtype;
  r.accT = ir::Type::tile(r.acc, in.shape);
  r.idxT = ir::Type::tile(DType::I32, in.shape);
  const Slots &v = get(op.operand(0));
  Slots val, idx;
  for (size_t k = 0; k < v.size(); ++k) {
    val.push_back(se_.cast(v[k], in.dtype, r.acc));
    if (r.isArg) // the position along the axis
      idx.push_back(axisIndex(b_.CreateUDiv(elemIndex(r.n, static_cast<int64_t>(k)),
                                            b_.getInt32(static_cast<uint32_t>(r.inner))),
                              {r.outer, r.len}, 1));
  }
  uint32_t laneMask = 0;
  uint64_t reduced = reduceInWarp(r, val, idx, laneMask);
  int64_t len2 = r.len >> std::popcount(reduced);
  auto result = [&](const std::pair<llvm::Value *, llvm::Value *> &x) {
    return r.isArg ? x.second : se_.cast(x.first, r.acc, out.dtype);
  };
  if (len2 == 1 && r.outer * r.inner == 1) { // every thread holds the one result
    define(op, {result({val[0], r.isArg ? idx[0] : nullptr})});
    return;
  }
  int64_t nOut = out.isScalar() ? 1 : out.numElements();
  bool fold = len2 * slotsOf(nOut) <= kMaxFoldReads;
  size_t bytes = alignUp(static_cast<size_t>(r.outer * len2 * r.inner) * byteSize(r.acc));
  size_t idxBytes = r.isArg ? alignUp(static_cast<size_t>(r.outer * len2 * r.inner) * 4) : 0;
  size_t buf[2] = {0, bytes + idxBytes}, ibuf[2] = {bytes, 2 * bytes + idxBytes};
  sharedBytes_ = std::max(sharedBytes_, (fold ? 1 : 2) * (bytes + idxBytes));
  stagePartials(r, val, idx, reduced, laneMask, buf[0], ibuf[0]);
  int cur = fold ? 0 : reduceLevelsShared(r, len2, buf, ibuf);
  Slots s;
  for (int64_t k = 0; k < slotsOf(nOut); ++k) {
    llvm::Value *e = out.isScalar() ? b_.getInt32(0) : elemIndex(nOut, k);
    llvm::Value *o = b_.CreateUDiv(e, b_.getInt32(static_cast<uint32_t>(r.inner)));
    llvm::Value *j = b_.CreateURem(e, b_.getInt32(static_cast<uint32_t>(r.inner)));
    s.push_back(result(readReduced(r, len2, fold, buf[cur], ibuf[cur], o, j)));
  }
  define(op, s);
}

} // namespace tc::codegen::lower
