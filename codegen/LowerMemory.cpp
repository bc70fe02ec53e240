//===- LowerMemory.cpp - Vectorised and coalesced accesses; remat ---------===//
//
// The memory-access optimisations of docs/gpu-perf.md, on top of the simple
// lowering of Lowerer.h (which is what runs with them switched off):
//
// * vectorize: the blocked layout gives each thread runs of up to 16 bytes of
//   consecutive elements (Lowerer::vec_); a load or store whose pointer tile
//   is contiguous over a run (AxisInfo) reads or writes it with one vector
//   access, when the run's address is aligned (proven, else checked at run
//   time) and its mask is the same over the run (proven, else checked at run
//   time); otherwise the run goes element by element as before.
// * remat: a broadcast or trans of pure index arithmetic is recomputed at the
//   coordinates of each result element instead of staged through shared memory.
// * both: an access whose pointer tile is contiguous along another axis than
//   the last is done in the order of that axis (coalesced, vectorised) and
//   exchanged with the blocked layout through shared memory; a load whose only
//   users are trans ops is done directly in each trans's layout (no exchange).
//
//===----------------------------------------------------------------------===//
#include "codegen/Lowerer.h"

#include <algorithm>
#include <array>

namespace tc::codegen::lower {

namespace {

/// Tile ops of one remat'ed expression at most (bounds code size).
constexpr size_t kMaxRematOps = 48;

/// Elementwise ops that are index arithmetic (integer, bool and pointer
/// operands only): cheap to recompute per element.
bool isIndexArithmetic(const ir::Op &op) {
  static constexpr std::array kKinds = {
      ir::OpKind::Add,   ir::OpKind::Sub,   ir::OpKind::Mul,   ir::OpKind::Div,
      ir::OpKind::Rem,   ir::OpKind::And,   ir::OpKind::Or,    ir::OpKind::Xor,
      ir::OpKind::Shl,   ir::OpKind::Shr,   ir::OpKind::Min,   ir::OpKind::Max,
      ir::OpKind::CmpEq, ir::OpKind::CmpNe, ir::OpKind::CmpLt, ir::OpKind::CmpLe,
      ir::OpKind::CmpGt, ir::OpKind::CmpGe, ir::OpKind::Select, ir::OpKind::AddPtr,
      ir::OpKind::Cast,  ir::OpKind::Bitcast, ir::OpKind::Neg, ir::OpKind::Not};
  if (std::find(kKinds.begin(), kKinds.end(), op.kind()) == kKinds.end())
    return false;
  auto intLike = [](const ir::Type &t) { return t.isPtr || !isFloat(t.dtype); };
  if (!intLike(op.result()->type()))
    return false;
  return std::all_of(op.operands().begin(), op.operands().end(),
                     [&](const ir::Value *v) { return intLike(v->type()); });
}

/// Ops whose value a remat'ed expression may contain (besides scalars).
bool isRematKind(const ir::Op &op) {
  ir::OpKind k = op.kind();
  return k == ir::OpKind::Range || k == ir::OpKind::Constant || k == ir::OpKind::Splat ||
         k == ir::OpKind::Broadcast || k == ir::OpKind::ExpandDims || k == ir::OpKind::Trans ||
         isIndexArithmetic(op);
}

/// Whether an op may touch memory or the program's state: a load may not move past it.
bool isBarrierToMotion(const ir::Op &op) {
  return op.numRegions() > 0 || ir::hasTrait(op.kind(), ir::MemWrite) ||
         ir::hasTrait(op.kind(), ir::SideEffect);
}

ir::Shape permuted(const ir::Shape &s, const std::vector<int64_t> &perm) {
  ir::Shape out;
  for (int64_t p : perm)
    out.push_back(s[static_cast<size_t>(p)]);
  return out;
}

std::vector<int64_t> identity(size_t rank) {
  std::vector<int64_t> p(rank);
  for (size_t d = 0; d < rank; ++d)
    p[d] = static_cast<int64_t>(d);
  return p;
}

const ir::Value *operandOrNull(const ir::Op &op, size_t i) {
  return op.numOperands() > i ? op.operand(static_cast<unsigned>(i)) : nullptr;
}

} // namespace

// ---- Set-up -----------------------------------------------------------------

/// Users of every value and the axis analysis (the layouts, run length
/// included, are planLayouts's: LowerLayouts.cpp).
void Lowerer::analyseAccesses() {
  ir::forEachOp(fn_.body(), [&](const ir::Op &op, unsigned) {
    for (const ir::Value *v : op.operands())
      users_[v].push_back(&op);
  });
  axes_ = std::make_unique<AxisAnalysis>(
      fn_, opts_.alignedPointers); // also finds stores to repeated addresses
}

/// A load whose only users are trans ops of its block, with nothing that
/// writes memory in between, and whose access is no less coalesced in the
/// trans's order: each trans loads its operand itself (no staging).
bool Lowerer::fusesIntoTrans(const ir::Op &load) {
  if (!opts_.vectorize || !opts_.remat || plantedBug("missing-barrier"))
    return false;
  const ir::Value *ptr = load.operand(0);
  auto it = users_.find(load.result());
  if (ptr->type().rank() < 2 || it == users_.end() || it->second.empty())
    return false;
  for (size_t i = 0; i < load.numOperands(); ++i)
    if (!rematable(load.operand(static_cast<unsigned>(i))))
      return false;
  AxisInfo a = axes_->info(ptr);
  const auto &ops = load.parentBlock()->ops();
  auto pos = [&](const ir::Op *op) {
    for (size_t i = 0; i < ops.size(); ++i)
      if (ops[i].get() == op)
        return i;
    return ops.size();
  };
  size_t from = pos(&load);
  for (const ir::Op *u : it->second) {
    if (u->kind() != ir::OpKind::Trans || u->parentBlock() != load.parentBlock())
      return false;
    const std::vector<int64_t> &perm = u->intsAttr("perm");
    if (a.contig[static_cast<size_t>(perm.back())] < a.contig.back())
      return false;
    for (size_t i = from + 1; i < pos(u); ++i)
      if (isBarrierToMotion(*ops[i]))
        return false;
  }
  return true;
}

// ---- Remat --------------------------------------------------------------------

/// Whether v can be recomputed at any coordinates from scalars: ranges,
/// constants, splats, broadcasts, expand_dims, trans and index arithmetic.
bool Lowerer::rematable(const ir::Value *root) {
  if (auto it = rematable_.find(root); it != rematable_.end())
    return it->second;
  std::unordered_set<const ir::Value *> seen;
  std::vector<const ir::Value *> todo{root};
  bool ok = true;
  while (ok && !todo.empty()) {
    const ir::Value *v = todo.back();
    todo.pop_back();
    if (v->type().isScalar() || !seen.insert(v).second)
      continue;
    if (const ir::Value *init = steppedInit(v)) { // init + one offset for the tile
      todo.push_back(init);
      continue;
    }
    const ir::Op *op = v->definingOp();
    ok = seen.size() <= kMaxRematOps && op && isRematKind(*op);
    if (ok)
      todo.insert(todo.end(), op->operands().begin(), op->operands().end());
  }
  rematable_[root] = ok;
  return ok;
}

/// The initial value of a loop-carried tile that every trip steps by one
/// amount for the whole tile (AxisAnalysis::steppedFrom), when remat is on.
const ir::Value *Lowerer::steppedInit(const ir::Value *v) const {
  if (!opts_.remat || !axes_ || v->definingOp() || plantedBug("missing-barrier"))
    return nullptr;
  return axes_->steppedFrom(v);
}

/// v's element at `coords` (one i32 index per axis), recomputed.
llvm::Value *Lowerer::rematAt(const ir::Value *v, const Slots &coords, RematMemo &memo) {
  if (v->type().isScalar())
    return get(v)[0];
  notePath("remat");
  auto key = std::make_pair(v, coords);
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  const ir::Type &t = v->type();
  if (const ir::Value *init = steppedInit(v)) {
    // A loop-carried tile stepped uniformly: v = init + D elementwise, D the
    // same for the whole tile, so v at coords is init there plus D, D taken
    // from this thread's slot 0 (its element is the one coordsIn gives).
    RematMemo own;
    llvm::Value *held = get(v)[0];
    llvm::Value *base = rematAt(init, coordsIn(t.shape, identity(t.rank()), 0), own);
    llvm::Value *here = rematAt(init, coords, memo);
    llvm::Value *r;
    if (t.isPtr) {
      llvm::Value *d = b_.CreateSub(b_.CreatePtrToInt(held, b_.getInt64Ty()),
                                    b_.CreatePtrToInt(base, b_.getInt64Ty()));
      r = b_.CreateGEP(b_.getInt8Ty(), here, d);
    } else {
      r = b_.CreateAdd(here, b_.CreateSub(held, base));
    }
    memo[key] = r;
    return r;
  }
  const ir::Op &op = *v->definingOp();
  ir::OpKind k = op.kind();
  llvm::Value *r = nullptr;
  if (k == ir::OpKind::Range) {
    r = b_.CreateAdd(coords[0], b_.getInt32(static_cast<uint32_t>(op.intAttr("start"))));
  } else if (k == ir::OpKind::Constant) {
    r = se_.constant(t.dtype, *op.attr("value"));
  } else if (k == ir::OpKind::Splat) {
    r = get(op.operand(0))[0];
  } else if (k == ir::OpKind::Broadcast) {
    const ir::Shape &in = op.operand(0)->type().shape;
    size_t shift = t.rank() - in.size();
    Slots c;
    for (size_t d = 0; d < in.size(); ++d)
      c.push_back(in[d] == 1 ? b_.getInt32(0) : coords[d + shift]);
    r = rematAt(op.operand(0), c, memo);
  } else if (k == ir::OpKind::ExpandDims) {
    Slots c = coords;
    if (plantedBug("remat-axis")) // the last axis dropped, not the new one
      c.pop_back();
    else
      c.erase(c.begin() + op.intAttr("axis"));
    r = rematAt(op.operand(0), c, memo);
  } else if (k == ir::OpKind::Trans) {
    const std::vector<int64_t> &perm = op.intsAttr("perm");
    Slots c(coords.size());
    for (size_t d = 0; d < perm.size(); ++d)
      c[static_cast<size_t>(perm[d])] = coords[d];
    r = rematAt(op.operand(0), c, memo);
  } else { // index arithmetic: the same scalarOp as lowerElementwise
    Slots x;
    for (const ir::Value *o : op.operands())
      x.push_back(rematAt(o, coords, memo));
    r = scalarOp(op, x);
  }
  memo[key] = r;
  return r;
}

/// Coordinates (in s) of the element in slot k of the blocked layout of the
/// permuted shape (axis d of that shape is axis perm[d] of s).
Slots Lowerer::coordsIn(const ir::Shape &s, const std::vector<int64_t> &perm, int64_t k) {
  ir::Shape sp = permuted(s, perm);
  int64_t n = product(s, 0, s.size());
  Slots c(s.size());
  bool pow2 = n >= T_ && isPow2(T_) && isPow2(vec_);
  for (int64_t x : sp)
    pow2 = pow2 && isPow2(x);
  if (pow2) {
    // Slot k's element is tid * v (bits [log v, log vT)) OR a constant (the
    // other bits; elemIndex). With power-of-two axes each coordinate is the
    // same shift and mask of the two parts, OR-ed: the thread's part is one
    // value for all its slots and the constant folds. (LLVM kept
    // `and (or disjoint tid * v, C), M` apart for each C, so each slot's
    // coordinate, and each compare of it, was its own: a stencil's column
    // masks were computed for every element instead of every column.)
    int64_t v = std::min<int64_t>(vec_, slotsOf(n));
    int64_t base = (k / v) * T_ * v + k % v;
    llvm::Value *t = v == 1 ? tid_ : b_.CreateMul(tid_, b_.getInt32(static_cast<uint32_t>(v)));
    for (size_t d = 0; d < sp.size(); ++d) {
      int ls = log2Ceil(product(sp, d + 1, sp.size()));
      llvm::Value *tv = ls ? b_.CreateLShr(t, b_.getInt32(static_cast<uint32_t>(ls))) : t;
      int64_t bv = base >> ls;
      if (d > 0) {
        tv = b_.CreateAnd(tv, b_.getInt32(static_cast<uint32_t>(sp[d] - 1)));
        bv &= sp[d] - 1;
      }
      c[static_cast<size_t>(perm[d])] =
          bv ? b_.CreateOr(tv, b_.getInt32(static_cast<uint32_t>(bv))) : tv;
    }
    return c;
  }
  llvm::Value *e = elemIndex(n, k);
  for (size_t d = 0; d < sp.size(); ++d)
    c[static_cast<size_t>(perm[d])] = axisIndex(e, sp, d);
  return c;
}

/// Row-major flat index of coords in s (i32).
llvm::Value *Lowerer::flatIndex(const ir::Shape &s, const Slots &coords) {
  llvm::Value *e = b_.getInt32(0);
  for (size_t d = 0; d < s.size(); ++d) {
    auto stride = static_cast<uint32_t>(product(s, d + 1, s.size()));
    e = b_.CreateAdd(e, stride == 1 ? coords[d] : b_.CreateMul(coords[d], b_.getInt32(stride)));
  }
  return e;
}

/// v (of shape s) recomputed in the blocked layout of s permuted by perm.
Slots Lowerer::rematSlots(const ir::Value *v, const ir::Shape &s,
                          const std::vector<int64_t> &perm) {
  RematMemo memo;
  Slots out;
  for (int64_t k = 0; k < slotsOf(product(s, 0, s.size())); ++k)
    out.push_back(rematAt(v, coordsIn(s, perm, k), memo));
  return out;
}

/// A broadcast or trans of index arithmetic, recomputed per element.
bool Lowerer::rematerialize(const ir::Op &op) {
  const ir::Value *r = op.result();
  if (!remat_.count(&op)) // planLayouts's decision (rematDecision)
    return false;
  define(op, rematSlots(r, r->type().shape, identity(r->type().rank())));
  return true;
}

bool Lowerer::lowerTransFast(const ir::Op &op) {
  const ir::Op *src = op.operand(0)->definingOp();
  if (src && deferredLoads_.count(src)) {
    define(op, loadPermuted(*src, op.intsAttr("perm")));
    return true;
  }
  return rematerialize(op);
}

// ---- Access planning ------------------------------------------------------

/// The permutation that moves the pointer tile's most contiguous axis last,
/// when that is not the last axis already (and the last one is not
/// contiguous), and pointer, mask and other can be recomputed in that order.
std::optional<std::vector<int64_t>>
Lowerer::coalescingPerm(const ir::Value *ptr, const ir::Value *mask, const ir::Value *other) {
  const ir::Type &t = ptr->type();
  if (!opts_.vectorize || !opts_.remat || t.rank() < 2 || t.numElements() < T_)
    return std::nullopt;
  AxisInfo a = axes_->info(ptr);
  size_t last = t.rank() - 1, best = last;
  for (size_t d = 0; d < last; ++d)
    if (a.contig[d] > a.contig[best])
      best = d;
  if (best == last || a.contig[best] < 4 || a.contig[last] > 1)
    return std::nullopt;
  if (!rematable(ptr) || (mask && !rematable(mask)) || (other && !rematable(other)))
    return std::nullopt;
  std::vector<int64_t> perm;
  for (size_t d = 0; d < t.rank(); ++d)
    if (d != best)
      perm.push_back(static_cast<int64_t>(d));
  perm.push_back(static_cast<int64_t>(best));
  return perm;
}

/// For ptr = q + c (`addptr`s whose offsets are integer constants, the same
/// for every element): q, with `c` the sum of the offsets in elements; else
/// null.
const ir::Value *Lowerer::constantOffsetBase(const ir::Value *ptr, int64_t &c) {
  const ir::Value *q = ptr;
  c = 0;
  for (const ir::Op *d = q->definingOp(); d && d->kind() == ir::OpKind::AddPtr;
       d = q->definingOp()) {
    const ir::Op *k = d->operand(1)->definingOp();
    if (k && k->kind() == ir::OpKind::Splat)
      k = k->operand(0)->definingOp();
    const ir::AttrValue *val = k && k->kind() == ir::OpKind::Constant ? k->attr("value") : nullptr;
    if (!val || !std::holds_alternative<int64_t>(*val))
      break;
    int64_t off = std::get<int64_t>(*val);
    if (off > (int64_t(1) << 40) || off < -(int64_t(1) << 40))
      break;
    c += off;
    q = d->operand(0);
  }
  return q == ptr ? nullptr : q;
}

/// Runs of the blocked layout of `layout` (whose last axis is the pointer
/// tile's axis `axis`) that one vector access can do.
Lowerer::AccessPlan Lowerer::planAccess(const ir::Value *ptr, const ir::Value *mask,
                                        const ir::Shape &layout, size_t axis) {
  AccessPlan p;
  const ir::Type &pt = ptr->type();
  int64_t n = product(layout, 0, layout.size());
  if (!opts_.vectorize || !axes_ || pt.isScalar() || n < T_)
    return p;
  int64_t es = byteSize(pt.dtype);
  AxisInfo a = axes_->info(ptr);
  int64_t v = std::min({vec_, slotsOf(n), 16 / es, layout.back(), a.contig[axis]});
  if (v < 2 || v * es < 4) // vector accesses of whole 32-bit words
    return p;
  p.aligned = AxisAnalysis::runDivisibility(a, axis, v, es) >= v * es;
  if (!p.aligned) {
    // q + c, c a constant offset (the stencil's p - 1, p + 1) with q's runs
    // aligned: every run starts c elements past an aligned address, so a width
    // that c breaks could never pass the run-time check. Take the widest one
    // that c keeps, aligned at compile time (none: element accesses).
    int64_t c = 0;
    if (const ir::Value *q = constantOffsetBase(ptr, c)) {
      AxisInfo qa = axes_->info(q);
      if (qa.contig.size() == a.contig.size() && qa.contig[axis] >= v &&
          AxisAnalysis::runDivisibility(qa, axis, v, es) >= v * es) {
        while (v > 1 && (c * es) % (v * es) != 0)
          v /= 2;
        if (v < 2 || v * es < 4)
          return p;
        p.aligned = true;
      }
    }
  }
  p.run = v;
  if (mask && !mask->type().isScalar())
    p.maskUniform = axes_->info(mask).cnst[axis] >= v;
  else
    p.maskUniform = true;
  return p;
}

/// The run-time condition for the vector form of the run at k0 (null: none
/// needed): its address is aligned and its mask is true over the whole run.
llvm::Value *Lowerer::runCheck(const Slots &p, const Slots *mask, size_t k0,
                               const AccessPlan &plan, unsigned bytes) {
  llvm::Value *check = nullptr;
  if (!plan.aligned) {
    llvm::Value *addr = b_.CreatePtrToInt(p[k0], b_.getInt64Ty());
    check = b_.CreateICmpEQ(b_.CreateAnd(addr, b_.getInt64(bytes - 1)), b_.getInt64(0));
  }
  if (mask && !plan.maskUniform)
    for (int64_t j = 0; j < plan.run; ++j)
      check = andOpt(check, slot(*mask, k0 + static_cast<size_t>(j)));
  return check;
}

/// thenArm() where cond holds, elseArm() elsewhere (cond null: thenArm only);
/// the slots each produces (the same number) merged.
template <typename A, typename B>
Slots Lowerer::emitChoice(llvm::Value *cond, A thenArm, B elseArm) {
  if (!cond)
    return thenArm();
  auto *thenBB = llvm::BasicBlock::Create(ctx_, "vec", kernel_);
  auto *elseBB = llvm::BasicBlock::Create(ctx_, "vec.lanes", kernel_);
  auto *merge = llvm::BasicBlock::Create(ctx_, "vec.end", kernel_);
  b_.CreateCondBr(cond, thenBB, elseBB);
  b_.SetInsertPoint(thenBB);
  Slots x = thenArm();
  llvm::BasicBlock *thenEnd = b_.GetInsertBlock();
  b_.CreateBr(merge);
  b_.SetInsertPoint(elseBB);
  Slots y = elseArm();
  llvm::BasicBlock *elseEnd = b_.GetInsertBlock();
  b_.CreateBr(merge);
  b_.SetInsertPoint(merge);
  Slots r;
  for (size_t i = 0; i < x.size(); ++i) {
    llvm::PHINode *phi = b_.CreatePHI(x[i]->getType(), 2);
    phi->addIncoming(x[i], thenEnd);
    phi->addIncoming(y[i], elseEnd);
    r.push_back(phi);
  }
  return r;
}

// ---- Loads ----------------------------------------------------------------

bool Lowerer::lowerLoadFast(const ir::Op &op) {
  if (deferredLoads_.count(&op))
    return true; // its trans users load it in their layout
  const ir::Type &pt = op.operand(0)->type();
  if (!axes_ || pt.isScalar())
    return false;
  const ir::Value *ptr = op.operand(0), *mask = operandOrNull(op, 1), *other = operandOrNull(op, 2);
  if (auto it = accessPerm_.find(&op); it != accessPerm_.end()) { // planLayouts: coalescingPerm
    define(op, exchange(loadPermuted(op, it->second), op.result()->type(), it->second, false));
    return true;
  }
  AccessPlan plan = planAccess(ptr, mask, pt.shape, pt.rank() - 1);
  if (plan.run < 2)
    return false;
  define(op, emitLoads(pt.dtype, get(ptr), mask ? &get(mask) : nullptr,
                       other ? &get(other) : nullptr, plan));
  return true;
}

/// The load op's elements in the blocked layout of its shape permuted by perm
/// (pointer, mask and other recomputed there).
Slots Lowerer::loadPermuted(const ir::Op &op, const std::vector<int64_t> &perm) {
  const ir::Type &pt = op.operand(0)->type();
  const ir::Value *ptr = op.operand(0), *mask = operandOrNull(op, 1), *other = operandOrNull(op, 2);
  RematMemo memo;
  Slots p, m, o;
  for (int64_t k = 0; k < slotsOf(pt.numElements()); ++k) {
    Slots c = coordsIn(pt.shape, perm, k);
    p.push_back(rematAt(ptr, c, memo));
    if (mask)
      m.push_back(rematAt(mask, c, memo));
    if (other)
      o.push_back(rematAt(other, c, memo));
  }
  AccessPlan plan = planAccess(ptr, mask, permuted(pt.shape, perm), static_cast<size_t>(perm.back()));
  return emitLoads(pt.dtype, p, mask ? &m : nullptr, other ? &o : nullptr, plan);
}

Slots Lowerer::emitLoads(DType dt, const Slots &p, const Slots *mask, const Slots *other,
                         const AccessPlan &plan) {
  Slots s;
  for (size_t k0 = 0; k0 < p.size(); k0 += static_cast<size_t>(plan.run)) {
    if (plan.run == 1) {
      s.push_back(loadLane(dt, p[k0], mask ? slot(*mask, k0) : nullptr,
                           other ? slot(*other, k0) : nullptr));
      continue;
    }
    Slots r = loadRun(dt, p, mask, other, k0, plan);
    s.insert(s.end(), r.begin(), r.end());
  }
  return s;
}

/// One run of a load: a vector load where proven or checked, else element by element.
Slots Lowerer::loadRun(DType dt, const Slots &p, const Slots *mask, const Slots *other,
                       size_t k0, const AccessPlan &plan) {
  auto v = static_cast<unsigned>(plan.run);
  unsigned bytes = v * byteSize(dt);
  auto lanes = [&]() {
    Slots s;
    for (size_t k = k0; k < k0 + v; ++k)
      s.push_back(loadLane(dt, runLane(dt, p, k0, k), mask ? slot(*mask, k) : nullptr,
                           other ? slot(*other, k) : nullptr));
    return s;
  };
  auto vector = [&]() {
    notePath("vector.load." + std::to_string(bytes) + "B");
    auto *vt = llvm::FixedVectorType::get(se_.memType(dt), v);
    llvm::Value *fallback = llvm::Constant::getNullValue(vt);
    for (unsigned j = 0; other && j < v; ++j)
      fallback = b_.CreateInsertElement(fallback, se_.toMemory(slot(*other, k0 + j), dt), j);
    if (plantedBug("dropped-fallback")) fallback = nullptr;
    llvm::Value *guard = mask && plan.maskUniform ? slot(*mask, k0) : nullptr;
    llvm::Value *x = emitGuarded(
        guard,
        [&]() -> llvm::Value * { return b_.CreateBitCast(vectorLoadAsm(p[k0], bytes / 4), vt); },
        fallback);
    Slots s;
    for (unsigned j = 0; j < v; ++j) {
      unsigned lane = j;
      if (bytes == 16 && j >= v / 2 && plantedBug("vector-width")) // as if 8 bytes wide
        lane = j - v / 2;
      s.push_back(se_.fromMemory(b_.CreateExtractElement(x, lane), dt));
    }
    return s;
  };
  return emitChoice(runCheck(p, mask, k0, plan, bytes), vector, lanes);
}

/// The address of slot k of the run at k0: the run's first address plus k - k0
/// elements (the pointer tile is contiguous over the run), so that only the
/// first pointer of each run has to stay live (a loop-carried pointer tile
/// then costs one register pair per run, not one per slot).
llvm::Value *Lowerer::runLane(DType dt, const Slots &p, size_t k0, size_t k) {
  if (k == k0)
    return p[k0];
  return b_.CreateGEP(se_.memType(dt), p[k0], b_.getInt64(static_cast<int64_t>(k - k0)));
}

/// `ld.global.v<words>.b32` at ptr as a <words x i32>. Written as PTX: LLVM
/// would split a vector load whose lanes are used one by one back into
/// scalar loads.
llvm::Value *Lowerer::vectorLoadAsm(llvm::Value *ptr, unsigned words) {
  std::string regs, cons;
  for (unsigned i = 0; i < words; ++i) {
    regs += (i ? ", $" : "$") + std::to_string(i);
    cons += "=r,";
  }
  std::string text = words == 1 ? "ld.global.b32 $0, [$1];"
                                : "ld.global.v" + std::to_string(words) + ".b32 {" + regs +
                                      "}, [$" + std::to_string(words) + "];";
  std::vector<llvm::Type *> rt(words, b_.getInt32Ty());
  llvm::Type *ret = words == 1 ? rt[0] : llvm::StructType::get(ctx_, rt);
  auto *fty = llvm::FunctionType::get(ret, {ptr->getType()}, false);
  llvm::CallInst *r = b_.CreateCall(llvm::InlineAsm::get(fty, text, cons + "l", false), {ptr});
  r->setOnlyReadsMemory(); // may be merged with an equal load, never moved past a store
  r->setDoesNotThrow();
  if (words == 1)
    return b_.CreateBitCast(r, llvm::FixedVectorType::get(b_.getInt32Ty(), 1));
  llvm::Value *vec = llvm::PoisonValue::get(llvm::FixedVectorType::get(b_.getInt32Ty(), words));
  for (unsigned i = 0; i < words; ++i)
    vec = b_.CreateInsertElement(vec, b_.CreateExtractValue(r, i), i);
  return vec;
}

// ---- Stores -----------------------------------------------------------------

bool Lowerer::lowerStoreFast(const ir::Op &op) {
  const ir::Type &pt = op.operand(0)->type();
  if (!axes_ || pt.isScalar())
    return false;
  const ir::Value *ptr = op.operand(0), *val = op.operand(1), *mask = operandOrNull(op, 2);
  llvm::Value *own = ownerOf(pt.numElements());
  auto permIt = accessPerm_.find(&op); // planLayouts: coalescingPerm
  std::optional<std::vector<int64_t>> perm;
  if (permIt != accessPerm_.end())
    perm = permIt->second;
  if (perm) {
    Slots v = exchange(get(val), val->type(), *perm, true);
    RematMemo memo;
    Slots p, m;
    for (int64_t k = 0; k < slotsOf(pt.numElements()); ++k) {
      Slots c = coordsIn(pt.shape, *perm, k);
      p.push_back(rematAt(ptr, c, memo));
      if (mask)
        m.push_back(rematAt(mask, c, memo));
    }
    AccessPlan plan =
        planAccess(ptr, mask, permuted(pt.shape, *perm), static_cast<size_t>(perm->back()));
    emitStores(pt.dtype, p, v, mask ? &m : nullptr, own, plan);
    return true;
  }
  AccessPlan plan = planAccess(ptr, mask, pt.shape, pt.rank() - 1);
  if (plan.run < 2)
    return false;
  emitStores(pt.dtype, get(ptr), get(val), mask ? &get(mask) : nullptr, own, plan);
  return true;
}

/// Per axis, the length of the blocks over which a store's pointer tile is
/// known to repeat one address (a splat or broadcast pointer), when the mask
/// is the same over them too; empty when there are none. Of each block only
/// the last lane in row-major order writes, the one that the interpreter's
/// "last lane wins" keeps (docs/semantics.md section 17); collisions the axis
/// analysis does not see still race.
std::vector<int64_t> Lowerer::repeatedAddresses(const ir::Op &store) {
  const ir::Type &pt = store.operand(0)->type();
  if (pt.isScalar())
    return {};
  AxisInfo a = axes_->info(store.operand(0));
  const ir::Value *mask = operandOrNull(store, 2);
  std::optional<AxisInfo> m;
  if (mask && !mask->type().isScalar())
    m = axes_->info(mask);
  std::vector<int64_t> r(pt.rank(), 1);
  bool any = false;
  for (size_t d = 0; d < pt.rank(); ++d) {
    int64_t c = std::min(a.cnst[d], pt.shape[d]);
    if (c < 2)
      continue;
    if (m && m->cnst[d] < c)
      return {};
    r[d] = c;
    any = true;
  }
  return any ? r : std::vector<int64_t>{};
}

/// Whether slot k holds the last element (row-major) of its block of
/// repeated addresses (repeatedAddresses) in a tile of shape s.
llvm::Value *Lowerer::lastOfRepeats(const ir::Shape &s, const std::vector<int64_t> &repeats,
                                    size_t k) {
  llvm::Value *e = elemIndex(product(s, 0, s.size()), static_cast<int64_t>(k));
  llvm::Value *last = nullptr;
  for (size_t d = 0; d < s.size(); ++d) {
    if (repeats[d] < 2)
      continue;
    auto c = static_cast<uint32_t>(repeats[d]);
    llvm::Value *at = b_.CreateURem(axisIndex(e, s, d), b_.getInt32(c));
    last = andOpt(last, b_.CreateICmpEQ(at, b_.getInt32(c - 1)));
  }
  return last;
}

void Lowerer::emitStores(DType dt, const Slots &p, const Slots &v, const Slots *mask,
                         llvm::Value *own, const AccessPlan &plan) {
  for (size_t k0 = 0; k0 < p.size(); k0 += static_cast<size_t>(plan.run)) {
    if (plan.run == 1)
      storeLane(dt, p[k0], slot(v, k0), andOpt(own, mask ? slot(*mask, k0) : nullptr));
    else
      storeRun(dt, p, v, mask, own, k0, plan);
  }
}

/// One run of a store: a vector store where proven or checked, else element by element.
void Lowerer::storeRun(DType dt, const Slots &p, const Slots &v, const Slots *mask,
                       llvm::Value *own, size_t k0, const AccessPlan &plan) {
  auto n = static_cast<unsigned>(plan.run);
  unsigned bytes = n * byteSize(dt);
  auto lanes = [&]() {
    for (size_t k = k0; k < k0 + n; ++k)
      storeLane(dt, runLane(dt, p, k0, k), slot(v, k), andOpt(own, mask ? slot(*mask, k) : nullptr));
    return Slots{};
  };
  auto vector = [&]() {
    llvm::Value *guard = andOpt(own, mask && plan.maskUniform ? slot(*mask, k0) : nullptr);
    notePath("vector.store." + std::to_string(bytes) + "B");
    emitGuarded(guard, [&]() -> llvm::Value * {
      auto *vt = llvm::FixedVectorType::get(se_.memType(dt), n);
      llvm::Value *x = llvm::PoisonValue::get(vt);
      for (unsigned j = 0; j < n; ++j)
        x = b_.CreateInsertElement(x, se_.toMemory(slot(v, k0 + j), dt), j);
      b_.CreateAlignedStore(x, p[k0], llvm::Align(bytes));
      return nullptr;
    });
    return Slots{};
  };
  emitChoice(runCheck(p, mask, k0, plan, bytes), vector, lanes);
}

// ---- Layout exchange ------------------------------------------------------

/// Moves a tile of type t between the blocked layout of its shape and the
/// blocked layout of its shape permuted by perm, through shared memory (rows
/// padded by one element against bank conflicts).
Slots Lowerer::exchange(const Slots &s, const ir::Type &t, const std::vector<int64_t> &perm,
                        bool toPermuted) {
  int64_t n = t.numElements(), pad = t.shape.back();
  auto permutedIdx = [&](int64_t k) { return flatIndex(t.shape, coordsIn(t.shape, perm, k)); };
  auto at = [&](bool permutedSide, int64_t k) {
    return permutedSide ? permutedIdx(k) : elemIndex(n, k);
  };
  int64_t used = pad > 1 ? n + n / pad : n;
  sharedBytes_ = std::max(sharedBytes_, static_cast<size_t>(used) * elemBytes(t));
  barrier();
  emitGuarded(ownerOf(n), [&]() -> llvm::Value * {
    for (int64_t k = 0; k < slotsOf(n); ++k) {
      llvm::Value *val = slot(s, static_cast<size_t>(k));
      b_.CreateStore(t.isPtr ? val : se_.toMemory(val, t.dtype),
                     stagedAddr(t, 0, at(!toPermuted, k), pad));
    }
    return nullptr;
  });
  if (!plantedBug("missing-barrier")) barrier();
  Slots r;
  for (int64_t k = 0; k < slotsOf(n); ++k)
    r.push_back(readStaged(t, 0, at(toPermuted, k), pad));
  return r;
}

} // namespace tc::codegen::lower
