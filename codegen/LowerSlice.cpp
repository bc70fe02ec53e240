//===- LowerSlice.cpp - extract_slice, insert_slice, undef ----------------===//
//
// `a[i, :, :]` of a [d, M, K] tile (the original's double buffers). The slice
// index is a run-time scalar, so an array indexed by it would live in local
// memory; instead:
//
// * thread-local (no memory at all): when each thread's slots of the slice
//   are, for every i, slots of the same thread in the tile (the axis's inner
//   extent is a multiple of the threads' run, T * vec), a read of slice i is
//   a select over the d candidate slots and a write is one select per slot of
//   the tile (`idx == i' ? value : old`). The double-buffered matmul tiles
//   take this path;
// * otherwise (small inner extents, a scalar result), through shared memory
//   like a trans: the tile (for a write: the value) is staged and each thread
//   reads the elements it needs.
//
// An index outside [0, d) is a trap in the interpreter and undefined on the
// GPU (docs/gpu.md): here it reads slice 0 and writes nothing / slice 0,
// never an address outside the staged tile.
//
// undef (a tile variable declared without initialiser) is zero on the GPU.
//
//===----------------------------------------------------------------------===//
#include "codegen/Lowerer.h"

namespace tc::codegen::lower {

namespace {

struct SliceGeom {
  int64_t outer = 1, dim = 1, inner = 1;
};

SliceGeom geometry(const ir::Shape &s, int64_t axis) {
  SliceGeom g;
  for (size_t d = 0; d < s.size(); ++d) {
    if (static_cast<int64_t>(d) < axis)
      g.outer *= s[d];
    else if (static_cast<int64_t>(d) > axis)
      g.inner *= s[d];
    else
      g.dim = s[d];
  }
  return g;
}

} // namespace

bool Lowerer::sliceIsLocal(int64_t whole, int64_t slice, int64_t inner) const {
  if (whole < T_ || slice < T_)
    return false;
  int64_t vw = std::min<int64_t>(vec_, slotsOf(whole)),
          vs = std::min<int64_t>(vec_, slotsOf(slice));
  return vw == vs && inner % (T_ * vs) == 0;
}

llvm::Value *Lowerer::sliceIndexIs(const ir::Op &op, int64_t i) {
  llvm::Value *idx = get(op.operand(1))[0];
  return b_.CreateICmpEQ(idx, llvm::ConstantInt::get(idx->getType(), static_cast<uint64_t>(i)));
}

/// The slice index as i32, 0 when outside [0, dim) (no staged read escapes).
llvm::Value *Lowerer::sliceIndexClamped(const ir::Op &op, int64_t dim) {
  llvm::Value *idx = get(op.operand(1))[0];
  llvm::Type *t = idx->getType();
  llvm::Value *in = b_.CreateICmpULT(idx, llvm::ConstantInt::get(t, static_cast<uint64_t>(dim)));
  llvm::Value *c = b_.CreateSelect(in, idx, llvm::ConstantInt::get(t, 0));
  return b_.CreateZExtOrTrunc(c, b_.getInt32Ty());
}

void Lowerer::lowerExtractSlice(const ir::Op &op) {
  const ir::Type &in = op.operand(0)->type(), &out = op.result()->type();
  SliceGeom g = geometry(in.shape, op.intAttr("axis"));
  const Slots &v = get(op.operand(0));
  if (!out.isScalar() && sliceIsLocal(in.numElements(), out.numElements(), g.inner)) {
    notePath("slice.registers");
    int64_t perRow = g.inner / T_; // slots of one thread in one row of `inner`
    int64_t n = slotsOf(out);
    Slots s;
    for (int64_t k = 0; k < n; ++k) {
      int64_t row = k / perRow, col = k % perRow;
      auto src = [&](int64_t i) {
        return v[static_cast<size_t>((row * g.dim + i) * perRow + col)];
      };
      llvm::Value *x = src(0);
      for (int64_t i = 1; i < g.dim; ++i)
        x = b_.CreateSelect(sliceIndexIs(op, i), src(i), x);
      s.push_back(x);
    }
    define(op, s);
    return;
  }
  notePath("slice.shared");
  llvm::Value *idx = sliceIndexClamped(op, g.dim);
  lowerGather(op, [&](llvm::Value *e) {
    // e = o * inner + r  ->  (o * dim + idx) * inner + r
    llvm::Value *inner = b_.getInt32(static_cast<uint32_t>(g.inner));
    llvm::Value *o = b_.CreateUDiv(e, inner), *r = b_.CreateURem(e, inner);
    llvm::Value *row =
        b_.CreateAdd(b_.CreateMul(o, b_.getInt32(static_cast<uint32_t>(g.dim))), idx);
    return b_.CreateAdd(b_.CreateMul(row, inner), r);
  });
}

void Lowerer::lowerInsertSlice(const ir::Op &op) {
  const ir::Type &in = op.operand(0)->type(), &vt = op.operand(2)->type();
  SliceGeom g = geometry(in.shape, op.intAttr("axis"));
  const Slots &old = get(op.operand(0));
  const Slots &val = get(op.operand(2));
  int64_t n = slotsOf(in);
  if (!vt.isScalar() && sliceIsLocal(in.numElements(), vt.numElements(), g.inner)) {
    notePath("slice.registers");
    int64_t perRow = g.inner / T_;
    Slots s(old.begin(), old.end());
    for (int64_t k = 0; k < n; ++k) {
      int64_t col = k % perRow, rowInTile = k / perRow; // rowInTile = o * dim + i
      int64_t o = rowInTile / g.dim, i = rowInTile % g.dim;
      llvm::Value *nv = val[static_cast<size_t>(o * perRow + col)];
      s[static_cast<size_t>(k)] =
          b_.CreateSelect(sliceIndexIs(op, i), nv, old[static_cast<size_t>(k)]);
    }
    define(op, s);
    return;
  }
  // Through shared memory: stage the value; each element of the tile in slice
  // idx reads its element of the value, the others keep theirs.
  notePath("slice.shared");
  llvm::Value *idx = get(op.operand(1))[0];
  llvm::Value *inRange =
      b_.CreateICmpULT(idx, llvm::ConstantInt::get(idx->getType(), static_cast<uint64_t>(g.dim)));
  llvm::Value *idx32 = sliceIndexClamped(op, g.dim);
  barrier();
  stage(val, vt, 0);
  barrier();
  int64_t total = in.numElements();
  Slots s;
  llvm::Value *inner = b_.getInt32(static_cast<uint32_t>(g.inner));
  llvm::Value *dim = b_.getInt32(static_cast<uint32_t>(g.dim));
  for (int64_t k = 0; k < n; ++k) {
    llvm::Value *e = in.isScalar() ? b_.getInt32(0) : elemIndex(total, k);
    llvm::Value *r = b_.CreateURem(e, inner), *q = b_.CreateUDiv(e, inner);
    llvm::Value *o = b_.CreateUDiv(q, dim), *i = b_.CreateURem(q, dim);
    llvm::Value *hit = b_.CreateAnd(inRange, b_.CreateICmpEQ(i, idx32));
    llvm::Value *src = b_.CreateAdd(b_.CreateMul(o, inner), r);
    // Elements outside the slice read element 0 of the value (discarded).
    llvm::Value *safe = vt.isScalar() ? b_.getInt32(0) : b_.CreateSelect(hit, src, b_.getInt32(0));
    llvm::Value *x = readStaged(vt, 0, safe);
    s.push_back(b_.CreateSelect(hit, x, old[static_cast<size_t>(k)]));
  }
  define(op, s);
}

void Lowerer::lowerUndef(const ir::Op &op) {
  const ir::Type &t = op.result()->type();
  define(op, {llvm::Constant::getNullValue(se_.regType(t))});
}

} // namespace tc::codegen::lower
