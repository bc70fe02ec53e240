//===- LowerTma.cpp - Matmul loop stages filled by the TMA (sm_90a) -------===//
//
// Option "tma" (docs/gpu-perf.md, "TMA"): a wgmma matmul loop (LowerWgmma.cpp)
// whose two streams are plain pointer tiles fills its stages with the Tensor
// Memory Accelerator instead of cp.async:
//
// * Proof. A stream's pointer tile at the loop's start must be, element by
//   element, P + (u + r * ld + c) for its row r and column c: P a pointer
//   parameter (of the tile's element type), ld a positive constant or an
//   integer parameter, u the same for every element. tmaPointerForm derives
//   each index's linear form over the tile's axes through splats, ranges,
//   broadcasts, expand_dims, +, -, neg and products by a constant or a
//   parameter (anything else: no TMA). Such a tile is the box at row
//   u / ld, column u mod ld of the 2-D view P[row * ld + col], which a tensor
//   map describes: the runtime encodes one per stream at launch
//   (codegen::TensorMapParam, cuda::encodeTensorMap), passed as a hidden
//   `.param .align 64 .b8 [128]` (__grid_constant__) after the kernel's own.
// * The kernel's checks. The map addresses the tile exactly when: the
//   arguments qualify (P 16-byte aligned, 0 < ld < 2^31, the row pitch a
//   multiple of 16 bytes below 2^40: the conditions under which the runtime
//   encodes a map, cuda::tensorMapQualifies); the offset from P is not
//   negative, the tile's columns do not pass the end of its first row
//   (u mod ld + cols <= ld, ld < 2^31: 32-bit coordinates) and its rows stay
//   below the view's 2^31 - 1; and
//   no 32-bit offset tile of the pointer's sums wraps (its first element plus
//   its largest and smallest steps stays in range: then every element is the
//   exact value of the form, which is what the map computes in 64 bits).
//   Each trip checks its own tile (uniform values, one branch); a trip that
//   fails is copied with cp.async by every thread, as without the option,
//   from the pointer tile itself, and published through the same mbarrier.
// * Copies. Stage s has an mbarrier (count 1). Thread 0 posts
//   mbarrier.arrive.expect_tx with the stage's bytes and issues one
//   cp.async.bulk.tensor per column block of 128 (64, 32) bytes of each
//   stream (box {block, rows}), written with the map's swizzle: wgmma's
//   canonical layout, the one the cp.async copies write. A trip waits on its
//   stage's mbarrier (parity: the trip's round of the stages) instead of
//   cp.async.wait_group, fence and barrier; the barrier after the products
//   (so that every warpgroup is done with the stage about to be refilled)
//   stays. The mbarriers are set up before the prologue (after a proxy fence:
//   the region's earlier generic accesses come before the TMA's writes) and
//   invalidated after the loop, so that the memory can be reused. A loop whose
//   body writes memory or runs another loop keeps cp.async.
//
//===----------------------------------------------------------------------===//
#include "codegen/Cuda.h"
#include "codegen/LowerMma.h"

namespace tc::codegen::lower {

namespace {

std::optional<TmaCoef> addCoef(TmaCoef a, TmaCoef b) {
  if (a.k == 0)
    return b;
  if (b.k == 0)
    return a;
  if (a.param != b.param)
    return std::nullopt;
  TmaCoef c{0, a.param};
  if (__builtin_add_overflow(a.k, b.k, &c.k))
    return std::nullopt;
  if (c.k == 0)
    c.param = -1;
  return c;
}

std::optional<TmaCoef> mulCoef(TmaCoef a, TmaCoef s) {
  if (a.k == 0 || s.k == 0)
    return TmaCoef{};
  if (a.param >= 0 && s.param >= 0)
    return std::nullopt;
  TmaCoef c{0, a.param >= 0 ? a.param : s.param};
  if (__builtin_mul_overflow(a.k, s.k, &c.k))
    return std::nullopt;
  return c;
}

bool signedIndex(DType d) {
  return d == DType::I32 || d == DType::I64;
}

} // namespace

/// A scalar integer as k * parameter or a constant (nullopt: anything else).
std::optional<TmaCoef> Lowerer::tmaScalar(const ir::Value *v) const {
  const ir::Type &t = v->type();
  if (!t.isScalar() || t.isPtr || !signedIndex(t.dtype))
    return std::nullopt;
  const ir::Op *d = v->definingOp();
  if (!d) {
    for (unsigned i = 0; i < fn_.numParams(); ++i)
      if (fn_.param(i) == v)
        return TmaCoef{1, static_cast<int>(i)};
    return std::nullopt;
  }
  switch (d->kind()) {
  case ir::OpKind::Constant: {
    const ir::AttrValue *a = d->attr("value");
    const auto *i = a ? std::get_if<int64_t>(a) : nullptr;
    if (!i)
      return std::nullopt;
    return *i ? TmaCoef{*i, -1} : TmaCoef{};
  }
  case ir::OpKind::Cast: // a widening (or same-width) signed cast keeps the value
    if (signedIndex(d->operand(0)->type().dtype) &&
        bitWidth(d->operand(0)->type().dtype) <= bitWidth(t.dtype))
      return tmaScalar(d->operand(0));
    return std::nullopt;
  case ir::OpKind::Mul: {
    std::optional<TmaCoef> x = tmaScalar(d->operand(0)), y = tmaScalar(d->operand(1));
    if (!x || !y)
      return std::nullopt;
    std::optional<TmaCoef> p = mulCoef(*x, *y);
    if (t.dtype == DType::I64 || !p)
      return p;
    // A 32-bit product: only of two constants, and only where it does not wrap
    // (a widening cast after it would take the wrapped value).
    if (x->param >= 0 || y->param >= 0 || p->k < INT32_MIN || p->k > INT32_MAX)
      return std::nullopt;
    return p;
  }
  default: return std::nullopt;
  }
}

/// A tile with one value in every element, as tmaScalar.
std::optional<TmaCoef> Lowerer::tmaUniform(const ir::Value *v) const {
  if (v->type().isScalar())
    return tmaScalar(v);
  const ir::Op *d = v->definingOp();
  if (!d)
    return std::nullopt;
  switch (d->kind()) {
  case ir::OpKind::Constant: {
    const ir::AttrValue *a = d->attr("value");
    const auto *i = a ? std::get_if<int64_t>(a) : nullptr;
    if (!i || !signedIndex(v->type().dtype))
      return std::nullopt;
    return *i ? TmaCoef{*i, -1} : TmaCoef{};
  }
  case ir::OpKind::Splat:
  case ir::OpKind::Broadcast:
  case ir::OpKind::ExpandDims: return tmaUniform(d->operand(0));
  default: return std::nullopt;
  }
}

/// The linear form of an integer tile along each of its axes: element (i, j,
/// ...) is u + sum of index * coefficient (u the same for all); nullopt when
/// it is not one (or not provably so).
std::optional<std::vector<TmaCoef>> Lowerer::tmaIndexForm(const ir::Value *v) const {
  const ir::Type &t = v->type();
  size_t rank = t.rank();
  std::vector<TmaCoef> zero(rank);
  if (t.isScalar())
    return zero;
  if (t.isPtr || !signedIndex(t.dtype))
    return std::nullopt;
  const ir::Op *d = v->definingOp();
  if (!d)
    return std::nullopt;
  switch (d->kind()) {
  case ir::OpKind::Constant:
  case ir::OpKind::Splat: return zero;
  case ir::OpKind::Range: {
    if (rank != 1)
      return std::nullopt;
    return std::vector<TmaCoef>{TmaCoef{1, -1}};
  }
  case ir::OpKind::ExpandDims: {
    std::optional<std::vector<TmaCoef>> in = tmaIndexForm(d->operand(0));
    auto axis = static_cast<size_t>(d->intAttr("axis"));
    if (!in || axis > in->size())
      return std::nullopt;
    in->insert(in->begin() + static_cast<ptrdiff_t>(axis), TmaCoef{});
    return in;
  }
  case ir::OpKind::Broadcast: {
    std::optional<std::vector<TmaCoef>> in = tmaIndexForm(d->operand(0));
    const ir::Shape &is = d->operand(0)->type().shape;
    if (!in || is.size() > rank)
      return std::nullopt;
    size_t shift = rank - is.size();
    for (size_t a = shift; a < rank; ++a)
      zero[a] = is[a - shift] == 1 ? TmaCoef{} : (*in)[a - shift];
    return zero;
  }
  case ir::OpKind::Add:
  case ir::OpKind::Sub: {
    std::optional<std::vector<TmaCoef>> x = tmaIndexForm(d->operand(0)),
                                        y = tmaIndexForm(d->operand(1));
    if (!x || !y || x->size() != rank || y->size() != rank)
      return std::nullopt;
    for (size_t a = 0; a < rank; ++a) {
      TmaCoef yc = (*y)[a];
      if (d->kind() == ir::OpKind::Sub) {
        std::optional<TmaCoef> m = mulCoef(yc, TmaCoef{-1, -1});
        if (!m)
          return std::nullopt;
        yc = *m;
      }
      std::optional<TmaCoef> s = addCoef((*x)[a], yc);
      if (!s)
        return std::nullopt;
      zero[a] = *s;
    }
    return zero;
  }
  case ir::OpKind::Neg: {
    std::optional<std::vector<TmaCoef>> x = tmaIndexForm(d->operand(0));
    if (!x || x->size() != rank)
      return std::nullopt;
    for (size_t a = 0; a < rank; ++a) {
      std::optional<TmaCoef> m = mulCoef((*x)[a], TmaCoef{-1, -1});
      if (!m)
        return std::nullopt;
      zero[a] = *m;
    }
    return zero;
  }
  case ir::OpKind::Mul: {
    for (unsigned side = 0; side < 2; ++side) {
      std::optional<TmaCoef> s = tmaUniform(d->operand(side));
      if (!s)
        continue;
      std::optional<std::vector<TmaCoef>> x = tmaIndexForm(d->operand(1 - side));
      if (!x || x->size() != rank)
        return std::nullopt;
      for (size_t a = 0; a < rank; ++a) {
        std::optional<TmaCoef> m = mulCoef((*x)[a], *s);
        if (!m)
          return std::nullopt;
        zero[a] = *m;
      }
      return zero;
    }
    return std::nullopt;
  }
  default: return std::nullopt;
  }
}

/// A pointer tile (or scalar) as parameter `param` plus an index whose form
/// along the tile's axes is `axes`; the 32-bit offset tiles of its sums in
/// `narrow`. False when it is not (provably) one.
bool Lowerer::tmaPointerForm(const ir::Value *v, unsigned &param, std::vector<TmaCoef> &axes,
                             std::vector<TmaNarrow> &narrow) const {
  const ir::Type &t = v->type();
  size_t rank = t.rank();
  const ir::Op *d = v->definingOp();
  if (!d) {
    if (!t.isScalar())
      return false;
    for (unsigned i = 0; i < fn_.numParams(); ++i)
      if (fn_.param(i) == v) {
        param = i;
        axes.clear();
        return true;
      }
    return false;
  }
  switch (d->kind()) {
  case ir::OpKind::Splat:
    if (!tmaPointerForm(d->operand(0), param, axes, narrow))
      return false;
    axes.assign(rank, TmaCoef{});
    return true;
  case ir::OpKind::ExpandDims: {
    if (!tmaPointerForm(d->operand(0), param, axes, narrow))
      return false;
    auto axis = static_cast<size_t>(d->intAttr("axis"));
    if (axis > axes.size())
      return false;
    axes.insert(axes.begin() + static_cast<ptrdiff_t>(axis), TmaCoef{});
    return true;
  }
  case ir::OpKind::Broadcast: {
    std::vector<TmaCoef> in;
    if (!tmaPointerForm(d->operand(0), param, in, narrow))
      return false;
    const ir::Shape &is = d->operand(0)->type().shape;
    if (is.size() > rank || in.size() != is.size())
      return false;
    size_t shift = rank - is.size();
    axes.assign(rank, TmaCoef{});
    for (size_t a = shift; a < rank; ++a)
      axes[a] = is[a - shift] == 1 ? TmaCoef{} : in[a - shift];
    return true;
  }
  case ir::OpKind::AddPtr: {
    const ir::Value *off = d->operand(1);
    if (off->type().isPtr || !signedIndex(off->type().dtype))
      return false;
    std::vector<TmaCoef> base;
    if (!tmaPointerForm(d->operand(0), param, base, narrow))
      return false;
    if (off->type().isScalar()) { // the same for every element
      axes = base.empty() ? std::vector<TmaCoef>(rank) : base;
      return axes.size() == rank;
    }
    std::optional<std::vector<TmaCoef>> o = tmaIndexForm(off);
    if (!o || o->size() != rank)
      return false;
    if (base.empty())
      base.assign(rank, TmaCoef{});
    if (base.size() != rank)
      return false;
    axes.assign(rank, TmaCoef{});
    for (size_t a = 0; a < rank; ++a) {
      std::optional<TmaCoef> s = addCoef(base[a], (*o)[a]);
      if (!s)
        return false;
      axes[a] = *s;
    }
    if (off->type().dtype == DType::I32)
      narrow.push_back({off, *o});
    return true;
  }
  default: return false;
  }
}

/// Takes the TMA for a wgmma loop whose streams qualify (LowerTma.cpp's header).
void Lowerer::planTma(MmaLoop &L) {
  L.tma = false;
  // Two or more warpgroups: with one, the thread that issues the copies holds
  // up the only consumer warpgroup, and the loop ran slower (H100, 2026-12-06,
  // fp16 4096^3 at 128x128x64 on 4 warps: 627 against 655 TFLOP/s with
  // cp.async; on 8 warps at 128x256x64: 715 against 670).
  if (!opts_.tma || opts_.sm != 90 || !L.wgmma || !L.pipelined || L.transposeB ||
      L.numStreams != 2 || opts_.numWarps < 8)
    return;
  // A body that writes memory (a later trip's tile may be what it wrote: the
  // TMA's reads are not ordered after this thread's generic writes without a
  // proxy fence a trip) or runs another loop (one TmaRun, one region of
  // stages) keeps cp.async.
  bool plain = true;
  ir::forEachOp(*L.body, [&](const ir::Op &op, unsigned) {
    plain = plain && !ir::hasTrait(op.kind(), ir::MemWrite) && op.kind() != ir::OpKind::For &&
            op.kind() != ir::OpKind::While;
  });
  if (!plain)
    return;
  for (size_t w = 0; w < 2; ++w) {
    MmaLoop::Stream &s = L.streams[w];
    int64_t in = static_cast<int64_t>(byteSize(s.tile->dtype));
    if (s.mask || s.recomputed || s.transposed || s.keyPerm || s.xorRows || !s.swizzle || in != 2 ||
        s.rows > 256 || (s.cols * in) % s.swizzle)
      return;
    const ir::Value *init = L.loop->operand(static_cast<unsigned>((L.isFor ? 3 : 0) + s.pos));
    unsigned param = 0;
    std::vector<TmaCoef> axes;
    std::vector<TmaNarrow> narrow;
    if (!tmaPointerForm(init, param, axes, narrow) || axes.size() != 2)
      return;
    const ir::Type &pt = fn_.param(param)->type();
    if (!pt.isPtr || pt.dtype != s.tile->dtype || !(axes[1] == TmaCoef{1, -1}))
      return;
    TmaCoef ld = axes[0];
    if (!(ld.param >= 0 ? ld.k == 1 : ld.k > 0))
      return;
    for (const TmaNarrow &n : narrow)
      if (!rematable(n.off))
        return;
    s.tmaPtr = param;
    s.tmaLd = ld;
    s.tmaNarrow = std::move(narrow);
  }
  L.tma = true;
}

/// The loop's tensor maps among the kernel's hidden parameters (the same map
/// once for streams that describe the same view and box).
void Lowerer::registerTensorMaps(MmaLoop &L) {
  for (MmaLoop::Stream &s : L.streams) {
    TensorMapParam m;
    m.ptrParam = s.tmaPtr;
    m.ldParam = s.tmaLd.param;
    m.ldConst = s.tmaLd.param >= 0 ? 0 : s.tmaLd.k;
    m.elemBytes = static_cast<unsigned>(byteSize(s.tile->dtype));
    m.boxCols = static_cast<unsigned>(s.swizzle / static_cast<int64_t>(m.elemBytes));
    m.boxRows = static_cast<unsigned>(s.rows);
    m.swizzle = static_cast<unsigned>(s.swizzle);
    auto same = [&](const TensorMapParam &o) {
      return o.ptrParam == m.ptrParam && o.ldParam == m.ldParam && o.ldConst == m.ldConst &&
             o.elemBytes == m.elemBytes && o.boxCols == m.boxCols && o.boxRows == m.boxRows &&
             o.swizzle == m.swizzle;
    };
    auto it = std::find_if(tensorMaps_.begin(), tensorMaps_.end(), same);
    s.tmaMap = static_cast<int>(it - tensorMaps_.begin());
    if (it == tensorMaps_.end())
      tensorMaps_.push_back(m);
  }
}

llvm::Value *Lowerer::pipeAddress(llvm::Value *off) {
  return b_.CreateAdd(b_.CreatePtrToInt(smem(), b_.getInt64Ty()),
                      b_.CreateZExt(b_.CreateAdd(pipeBase(), off), b_.getInt64Ty()));
}

llvm::Value *Lowerer::mbarAddress(const MmaLoop &L, llvm::Value *stage) {
  return pipeAddress(b_.CreateAdd(b_.getInt32(static_cast<uint32_t>(L.mbarOff)),
                                  b_.CreateMul(stage, b_.getInt32(8))));
}

void Lowerer::asmCall(const std::string &text, const std::string &constraints,
                      const std::vector<llvm::Value *> &args) {
  std::vector<llvm::Type *> types;
  for (llvm::Value *a : args)
    types.push_back(a->getType());
  auto *fty = llvm::FunctionType::get(b_.getVoidTy(), types, false);
  b_.CreateCall(fty, llvm::InlineAsm::get(fty, text, constraints + ",~{memory}", true), args);
}

/// floor(off / ld) and off - that * ld (in [0, ld)), i64; ld > 0.
std::array<llvm::Value *, 2> Lowerer::tmaSplit(llvm::Value *off, llvm::Value *ld) {
  llvm::Value *q = b_.CreateSDiv(off, ld);
  llvm::Value *r = b_.CreateSub(off, b_.CreateMul(q, ld));
  llvm::Value *neg = b_.CreateICmpSLT(r, b_.getInt64(0));
  q = b_.CreateSub(q, b_.CreateZExt(neg, b_.getInt64Ty()));
  r = b_.CreateAdd(r, b_.CreateSelect(neg, ld, b_.getInt64(0)));
  return {q, r};
}

/// The uniform values a TMA loop needs, computed before its prologue: each
/// stream's pitch, its tile's offset from the parameter at the loop's start,
/// the step of a trip split into rows and columns, and whether the arguments
/// let the maps address the tiles at all.
void Lowerer::tmaPrepare(const MmaLoop &L) {
  auto i64 = [&](int64_t x) { return b_.getInt64(static_cast<uint64_t>(x)); };
  auto sext = [&](llvm::Value *x) { return b_.CreateSExtOrTrunc(x, b_.getInt64Ty()); };
  llvm::Value *ok = b_.getTrue();
  // x op y in 64 bits; an overflow clears ok (the map is then never used).
  auto checked = [&](llvm::Intrinsic::ID id, llvm::Value *x, llvm::Value *y) {
    llvm::Value *r = b_.CreateBinaryIntrinsic(id, x, y);
    ok = b_.CreateAnd(ok, b_.CreateNot(b_.CreateExtractValue(r, 1)));
    return b_.CreateExtractValue(r, 0);
  };
  auto mul = [&](llvm::Value *x, llvm::Value *y) {
    return checked(llvm::Intrinsic::smul_with_overflow, x, y);
  };
  auto add = [&](llvm::Value *x, llvm::Value *y) {
    return checked(llvm::Intrinsic::sadd_with_overflow, x, y);
  };
  for (size_t w = 0; w < 2; ++w) {
    const MmaLoop::Stream &s = L.streams[w];
    int64_t in = static_cast<int64_t>(byteSize(s.tile->dtype));
    auto coef = [&](const TmaCoef &c) -> llvm::Value * {
      if (c.param < 0)
        return i64(c.k);
      return mul(sext(get(fn_.param(static_cast<unsigned>(c.param)))[0]), i64(c.k));
    };
    llvm::Value *ld = coef(s.tmaLd);
    llvm::Value *base = b_.CreatePtrToInt(get(fn_.param(s.tmaPtr))[0], b_.getInt64Ty());
    // cuda::tensorMapQualifies, on the device.
    llvm::Value *pitch = b_.CreateMul(ld, i64(in));
    ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateAnd(base, i64(15)), i64(0)));
    ok = b_.CreateAnd(ok, b_.CreateICmpSGT(ld, i64(0)));
    ok = b_.CreateAnd(ok, b_.CreateICmpSLE(ld, i64(INT32_MAX))); // 32-bit column coordinates
    ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateAnd(pitch, i64(15)), i64(0)));
    ok = b_.CreateAnd(ok, b_.CreateICmpULT(pitch, i64(int64_t(1) << 40)));
    // No 32-bit offset tile wraps.
    for (const TmaNarrow &n : s.tmaNarrow) {
      RematMemo memo;
      Slots zeros(n.axes.size(), b_.getInt32(0));
      llvm::Value *lo = sext(rematAt(n.off, zeros, memo)), *hi = lo;
      for (size_t a = 0; a < n.axes.size(); ++a) {
        int64_t extent = n.off->type().shape[a] - 1;
        if (!extent || n.axes[a].k == 0)
          continue;
        llvm::Value *step = mul(coef(n.axes[a]), i64(extent));
        llvm::Value *pos = b_.CreateICmpSGT(step, i64(0));
        hi = add(hi, b_.CreateSelect(pos, step, i64(0)));
        lo = add(lo, b_.CreateSelect(pos, i64(0), step));
      }
      ok = b_.CreateAnd(ok, b_.CreateICmpSLE(hi, i64(INT32_MAX)));
      ok = b_.CreateAnd(ok, b_.CreateICmpSGE(lo, i64(INT32_MIN)));
    }
    RematMemo memo;
    llvm::Value *p0 =
        b_.CreatePtrToInt(rematAt(L.loop->operand(static_cast<unsigned>((L.isFor ? 3 : 0) + s.pos)),
                                  {b_.getInt32(0), b_.getInt32(0)}, memo),
                          b_.getInt64Ty());
    llvm::Value *bytes = b_.CreateSub(p0, base);
    ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateSRem(bytes, i64(in)), i64(0)));
    tma_.ld[w] = b_.CreateSelect(ok, ld, i64(1)); // never a division by 0 (or garbage)
    tma_.off0[w] = b_.CreateSDiv(bytes, i64(in));
  }
  tma_.ok = ok;
  for (size_t w = 0; w < 2; ++w) {
    tma_.ld[w] = b_.CreateSelect(ok, tma_.ld[w], b_.getInt64(1));
    auto [dr, dc] = tmaSplit(offsetAhead(L, w, b_.getInt64(0), 1), tma_.ld[w]);
    tma_.dr[w] = dr;
    tma_.dc[w] = dc;
  }
}

/// Each stream's (row, column) of its tile one trip later.
Slots Lowerer::tmaAdvance(const Slots &rowCol) {
  Slots out;
  for (size_t w = 0; w < 2; ++w) {
    llvm::Value *col = b_.CreateAdd(rowCol[2 * w + 1], tma_.dc[w]);
    llvm::Value *wraps = b_.CreateICmpSGE(col, tma_.ld[w]);
    col = b_.CreateSub(col, b_.CreateSelect(wraps, tma_.ld[w], b_.getInt64(0)));
    llvm::Value *row = b_.CreateAdd(b_.CreateAdd(rowCol[2 * w], tma_.dr[w]),
                                    b_.CreateZExt(wraps, b_.getInt64Ty()));
    out.push_back(row);
    out.push_back(col);
  }
  return out;
}

/// Sets up the stages' mbarriers (count 1) between two barriers: after every
/// earlier reader of the region (another loop's staged rows may lie where they
/// go), before any thread waits on them. Each thread's proxy fence first (all
/// state spaces): its earlier generic accesses, to the region and to global
/// memory (the kernel may have stored what a tile reads), come before the
/// TMA's; thread 0's again after the barrier, for what other threads made
/// visible to it (an atomic's acquire) before the loop.
void Lowerer::tmaInitBarriers(const MmaLoop &L) {
  asmStatement("fence.proxy.async;");
  barrier();
  emitThread0([&]() -> llvm::Value * {
    asmStatement("fence.proxy.async;");
    for (int64_t s = 0; s < L.stages; ++s)
      asmCall("mbarrier.init.shared::cta.b64 [$0], 1;", "l",
              {mbarAddress(L, b_.getInt32(static_cast<uint32_t>(s)))});
    asmStatement("fence.mbarrier_init.release.cluster;");
    return nullptr;
  });
  noteAsync({AsyncEvent::Kind::TmaInit});
  barrier();
}

void Lowerer::tmaInvalBarriers(const MmaLoop &L) {
  barrier(); // no thread waits on them any more
  emitThread0([&]() -> llvm::Value * {
    for (int64_t s = 0; s < L.stages; ++s)
      asmCall("mbarrier.inval.shared::cta.b64 [$0];", "l",
              {mbarAddress(L, b_.getInt32(static_cast<uint32_t>(s)))});
    return nullptr;
  });
  noteAsync({AsyncEvent::Kind::TmaInval});
}

/// Waits until the stage's copies for this trip (its mbarrier's phase of
/// parity `phase`: the trip's round of the stages) are in shared memory.
/// Noted as the trip's own stage's wait (checkAsyncSchedule).
void Lowerer::tmaWait(const MmaLoop &L, llvm::Value *stage, llvm::Value *phase) {
  llvm::Value *bar = mbarAddress(L, stage);
  auto *spin = llvm::BasicBlock::Create(ctx_, "tma.wait", kernel_);
  auto *done = llvm::BasicBlock::Create(ctx_, "tma.ready", kernel_);
  b_.CreateBr(spin);
  b_.SetInsertPoint(spin);
  auto *fty = llvm::FunctionType::get(b_.getInt32Ty(), {b_.getInt64Ty(), b_.getInt32Ty()}, false);
  auto *tryWait = llvm::InlineAsm::get(
      fty,
      "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2;\n\t"
      "selp.u32 $0, 1, 0, p;\n\t}",
      "=r,l,r,~{memory}", true);
  llvm::Value *ready = b_.CreateCall(fty, tryWait, {bar, phase});
  b_.CreateCondBr(b_.CreateICmpNE(ready, b_.getInt32(0)), done, spin);
  b_.SetInsertPoint(done);
  noteAsync({AsyncEvent::Kind::TmaWait});
}

/// Fills stage `stage` with the streams' tiles at (row, column) rowCol (the
/// TMA) or, when a map cannot address them, from the pointer tiles at element
/// offsets `off` past their start (cp.async, every thread); either way the
/// stage's mbarrier completes its phase when the bytes are there. Noted as
/// the fill of the tiles `trips` trips on (the prologue: trip `trips`), into
/// their stage, issued when that trip runs; the fallback's own barrier is
/// not noted (it runs on one path only).
void Lowerer::tmaFill(const MmaLoop &L, llvm::Value *stage, int64_t trips, const Slots &rowCol,
                      const Slots &off) {
  AsyncEvent filled{AsyncEvent::Kind::TmaFill};
  filled.stage = filled.dataTrip = filled.guardTrip = trips;
  noteAsync(filled);
  std::vector<AsyncEvent> *noted = asyncEvents_;
  asyncEvents_ = nullptr;
  auto i64 = [&](int64_t x) { return b_.getInt64(static_cast<uint64_t>(x)); };
  llvm::Value *valid = tma_.ok;
  int64_t bytes = 0;
  for (size_t w = 0; w < 2; ++w) {
    const MmaLoop::Stream &s = L.streams[w];
    bytes += s.rows * s.cols * static_cast<int64_t>(byteSize(s.tile->dtype));
    llvm::Value *row = rowCol[2 * w], *col = rowCol[2 * w + 1];
    valid = b_.CreateAnd(valid, b_.CreateICmpSGE(row, i64(0)));
    if (!plantedBug("tma-row-end")) // the box's columns end within the first row
      valid = b_.CreateAnd(valid, b_.CreateICmpSLE(b_.CreateAdd(col, i64(s.cols)), tma_.ld[w]));
    valid = b_.CreateAnd(valid, b_.CreateICmpSLE(b_.CreateAdd(row, i64(s.rows)),
                                                 i64(static_cast<int64_t>(cuda::kTensorMapRows))));
  }
  // The bytes the boxes below bring, which the transaction count must be
  // (fewer: the phase never completes; more: it completes before they land).
  int64_t boxed = 0;
  for (const MmaLoop::Stream &s : L.streams) {
    int64_t in = static_cast<int64_t>(byteSize(s.tile->dtype)), blockCols = s.swizzle / in;
    boxed += (s.cols + blockCols - 1) / blockCols * blockCols * s.rows * in;
  }
  if (boxed != bytes)
    throw Unsupported("internal: the TMA boxes of the matmul loop at line " +
                      std::to_string(L.loop->loc().line) + " bring " + std::to_string(boxed) +
                      " bytes a stage, its mbarrier expects " + std::to_string(bytes) +
                      " (--disable-opt tma fills the stages with cp.async)");
  llvm::Value *stageOff = b_.CreateMul(stage, b_.getInt32(static_cast<uint32_t>(L.stageBytes)));
  llvm::Value *bar = mbarAddress(L, stage);
  emitGuarded(valid, [&]() -> llvm::Value * {
    emitThread0([&]() -> llvm::Value * {
      asmCall("mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "l,r",
              {bar, b_.getInt32(static_cast<uint32_t>(bytes))});
      for (size_t w = 0; w < 2; ++w) {
        const MmaLoop::Stream &s = L.streams[w];
        int64_t blockCols = s.swizzle / static_cast<int64_t>(byteSize(s.tile->dtype));
        llvm::Value *row = b_.CreateTrunc(rowCol[2 * w], b_.getInt32Ty());
        llvm::Value *col = b_.CreateTrunc(rowCol[2 * w + 1], b_.getInt32Ty());
        for (int64_t k = 0; k * blockCols < s.cols; ++k) {
          llvm::Value *dst = pipeAddress(
              b_.CreateAdd(stageOff, b_.getInt32(static_cast<uint32_t>(static_cast<int64_t>(s.off) +
                                                                       k * s.rows * s.swizzle))));
          asmCall("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::"
                  "bytes [$0], [$1, {$2, $3}], [$4];",
                  "l,l,r,r,l",
                  {dst, tensorMapArgs_[static_cast<size_t>(s.tmaMap)],
                   b_.CreateAdd(col, b_.getInt32(static_cast<uint32_t>(k * blockCols))), row, bar});
        }
      }
      return nullptr;
    });
    return nullptr;
  });
  emitGuarded(b_.CreateNot(valid), [&]() -> llvm::Value * {
    // A rolled loop over this thread's chunks (never unrolled): the slow path
    // must not hold registers the trip's accumulators need.
    auto *global = llvm::PointerType::get(ctx_, 1);
    for (size_t w = 0; w < 2; ++w) {
      const MmaLoop::Stream &s = L.streams[w];
      int64_t in = static_cast<int64_t>(byteSize(s.tile->dtype)), chunk = 16 / in;
      int64_t perRow = s.cols / chunk, total = s.rows * perRow;
      llvm::Type *et = se_.memType(s.tile->dtype);
      const ir::Value *init = L.loop->operand(static_cast<unsigned>((L.isFor ? 3 : 0) + s.pos));
      llvm::BasicBlock *pre = b_.GetInsertBlock();
      auto *body = llvm::BasicBlock::Create(ctx_, "tma.fallback", kernel_);
      auto *done = llvm::BasicBlock::Create(ctx_, "tma.fallback.end", kernel_);
      b_.CreateBr(body);
      b_.SetInsertPoint(body);
      llvm::PHINode *q = b_.CreatePHI(b_.getInt32Ty(), 2);
      q->addIncoming(tid_, pre);
      emitGuarded(
          b_.CreateICmpULT(q, b_.getInt32(static_cast<uint32_t>(total))), [&]() -> llvm::Value * {
            llvm::Value *row = b_.CreateUDiv(q, b_.getInt32(static_cast<uint32_t>(perRow)));
            llvm::Value *col =
                b_.CreateMul(b_.CreateURem(q, b_.getInt32(static_cast<uint32_t>(perRow))),
                             b_.getInt32(static_cast<uint32_t>(chunk)));
            RematMemo memo;
            llvm::Value *src = b_.CreateGEP(et, rematAt(init, {row, col}, memo), off[w]);
            llvm::Value *colBytes = b_.CreateMul(col, b_.getInt32(static_cast<uint32_t>(in)));
            llvm::Value *dst =
                b_.CreateInBoundsGEP(b_.getInt8Ty(), smem(),
                                     b_.CreateAdd(b_.CreateAdd(pipeBase(), stageOff),
                                                  swizzledChunk(L, w, row, colBytes)));
            b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_cg_shared_global_16, {},
                               {dst, b_.CreateAddrSpaceCast(src, global)});
            return nullptr;
          });
      llvm::Value *next = b_.CreateAdd(q, b_.getInt32(static_cast<uint32_t>(T_)));
      q->addIncoming(next, b_.GetInsertBlock());
      llvm::BranchInst *br = b_.CreateCondBr(
          b_.CreateICmpULT(next, b_.getInt32(static_cast<uint32_t>(total))), body, done);
      llvm::MDNode *self = llvm::MDNode::getTemporary(ctx_, {}).release();
      llvm::Metadata *ops[] = {
          self, llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")})};
      llvm::MDNode *loopId = llvm::MDNode::getDistinct(ctx_, ops);
      loopId->replaceOperandWith(0, loopId);
      llvm::MDNode::deleteTemporary(self);
      br->setMetadata(llvm::LLVMContext::MD_loop, loopId);
      b_.SetInsertPoint(done);
    }
    b_.CreateIntrinsic(llvm::Intrinsic::nvvm_cp_async_wait_all, {}, {});
    asmStatement("fence.proxy.async.shared::cta;"); // for wgmma's reads
    barrier();
    emitThread0([&]() -> llvm::Value * {
      asmCall("mbarrier.arrive.shared::cta.b64 _, [$0];", "l", {bar});
      return nullptr;
    });
    return nullptr;
  });
  asyncEvents_ = noted;
}

} // namespace tc::codegen::lower
