// Axis analysis (contiguity, divisibility, constancy) over the tile IR.
#include "codegen/AxisInfo.h"

#include <algorithm>

namespace tc::codegen {
namespace {

int64_t capped(int64_t v) { return std::min(v, kMaxDivisibility); }

/// Bytes per element step of a value: the pointee's size for pointers, else 1.
int64_t unitOf(const ir::Type &t) { return t.isPtr ? byteSize(t.dtype) : 1; }

/// Keeps the invariants: div[d] >= eltDiv, and a contig of 1 makes div[d]
/// (which then holds for every element) a bound for eltDiv too.
void normalize(AxisInfo &a) {
  for (size_t d = 0; d < a.div.size(); ++d)
    if (a.contig[d] == 1)
      a.eltDiv = std::max(a.eltDiv, a.div[d]);
  for (int64_t &x : a.div)
    x = std::max(x, a.eltDiv);
}

/// A value that is the same over each whole axis (a splat of a scalar with eltDiv).
AxisInfo uniform(const ir::Shape &s, int64_t eltDiv) {
  AxisInfo a;
  a.eltDiv = eltDiv;
  a.contig.assign(s.size(), 1);
  a.div.assign(s.size(), eltDiv);
  a.cnst = s;
  return a;
}

/// Divisibility of a's elements at multiples of c along d (blocks of c).
int64_t refine(const AxisInfo &a, size_t d, int64_t c, int64_t unit) {
  return a.contig[d] > c ? std::min(a.div[d], c * unit) : a.div[d];
}

/// Divisibility that holds for every element along d of a value (blocks of 1).
int64_t everyElement(const AxisInfo &a, size_t d) { return a.contig[d] == 1 ? a.div[d] : a.eltDiv; }

bool isIndexType(const ir::Type &t) { return !t.isPtr && isInt(t.dtype) && !isBool(t.dtype); }

} // namespace

int64_t powerOfTwoFactor(int64_t v) {
  if (v == 0)
    return kMaxDivisibility;
  uint64_t u = static_cast<uint64_t>(v);
  return capped(static_cast<int64_t>(u & (~u + 1)));
}

AxisInfo AxisInfo::unknown(const ir::Type &t) {
  AxisInfo a;
  a.eltDiv = unitOf(t);
  a.contig.assign(t.rank(), 1);
  a.cnst.assign(t.rank(), 1);
  a.div.assign(t.rank(), a.eltDiv);
  return a;
}

namespace {

/// Whether v is the integer constant 1 (a scalar or a tile of ones).
bool isConstantOne(const ir::Value *v) {
  const ir::Op *d = v->definingOp();
  if (!d || d->kind() != ir::OpKind::Constant || isFloat(v->type().dtype))
    return false;
  const ir::AttrValue *a = d->attr("value");
  const auto *i = a ? std::get_if<int64_t>(a) : nullptr;
  return i && *i == 1;
}

} // namespace

AxisAnalysis::AxisAnalysis(const ir::Function &fn, bool alignedPointers) {
  for (unsigned i = 0; i < fn.numParams(); ++i) {
    const ir::Value *p = fn.param(i);
    const ir::ParamAttrs &pa = fn.paramAttrs(i);
    AxisInfo a = AxisInfo::unknown(p->type());
    if (p->type().isPtr && alignedPointers)
      a.eltDiv = std::max<int64_t>(a.eltDiv, 16);
    if (p->type().isPtr && pa.aligned > 0)
      a.eltDiv = std::max(a.eltDiv, powerOfTwoFactor(pa.aligned));
    else if (isIndexType(p->type()) && pa.multipleOf > 1)
      a.eltDiv = powerOfTwoFactor(pa.multipleOf);
    infos_[p] = a;
  }
  visitBlock(fn.body());
}

AxisInfo AxisAnalysis::info(const ir::Value *v) const {
  auto it = infos_.find(v);
  return it == infos_.end() ? AxisInfo::unknown(v->type()) : it->second;
}

int64_t AxisAnalysis::runDivisibility(const AxisInfo &a, size_t axis, int64_t run, int64_t unit) {
  return refine(a, axis, run, unit);
}

void AxisAnalysis::visitBlock(const ir::Block &b) {
  for (const auto &op : b.ops())
    visitOp(*op);
}

void AxisAnalysis::visitOp(const ir::Op &op) {
  if (op.kind() == ir::OpKind::For || op.kind() == ir::OpKind::While) {
    visitLoop(op);
    return;
  }
  for (const auto &r : op.regions())
    visitBlock(*r);
  if (op.numResults() == 1) {
    AxisInfo a = compute(op);
    normalize(a);
    infos_[op.result()] = std::move(a);
  }
}

/// Loops are analysed twice: first with every region argument unknown (so the
/// facts about each step are sound whatever the loop carries), then with the
/// carried values' facts worked out from their initial values and steps.
void AxisAnalysis::visitLoop(const ir::Op &op) {
  bool isFor = op.kind() == ir::OpKind::For;
  const ir::Block &head = *op.region(0);
  size_t first = isFor ? 1 : 0, carried = head.numArgs() - first;
  for (const auto &a : head.args())
    infos_.erase(a.get());
  visitLoopRegions(op);
  std::vector<AxisInfo> facts;
  for (size_t i = 0; i < carried; ++i)
    facts.push_back(carriedInfo(op, i));
  for (size_t i = 0; i < carried; ++i)
    infos_[head.arg(static_cast<unsigned>(first + i))] = facts[i];
  if (!isFor && head.terminator()) { // a while body's arguments forwarded from stepped ones
    const ir::Op *c = head.terminator();
    const ir::Block &body = *op.region(1);
    for (size_t j = 0; j < body.numArgs() && j + 1 < c->numOperands(); ++j)
      if (auto it = steppedInit_.find(c->operand(static_cast<unsigned>(j + 1)));
          it != steppedInit_.end() && c->operand(static_cast<unsigned>(j + 1))->ownerBlock() == &head)
        steppedInit_[body.arg(static_cast<unsigned>(j))] = it->second;
  }
  if (isFor) // the induction variable: lb + j * step
    infos_[head.arg(0)] = stepped(op.operand(0), op.operand(2), false);
  visitLoopRegions(op);
  const ir::Op *cond = isFor ? nullptr : head.terminator();
  for (size_t i = 0; i < op.numResults(); ++i)
    infos_[op.result(static_cast<unsigned>(i))] =
        isFor ? facts[i] : info(cond->operand(static_cast<unsigned>(i + 1)));
}

/// The regions of a loop in order; a while's body arguments take the facts of
/// the values its condition forwards.
void AxisAnalysis::visitLoopRegions(const ir::Op &op) {
  visitBlock(*op.region(0));
  if (op.kind() != ir::OpKind::While)
    return;
  const ir::Op *cond = op.region(0)->terminator();
  const ir::Block &body = *op.region(1);
  for (size_t j = 0; j < body.numArgs() && cond && j + 1 < cond->numOperands(); ++j)
    infos_[body.arg(static_cast<unsigned>(j))] = info(cond->operand(static_cast<unsigned>(j + 1)));
  visitBlock(body);
}

/// Facts about carried value i of a loop: its initial value's when every trip
/// yields it unchanged or stepped by a uniform amount, else unknown.
AxisInfo AxisAnalysis::carriedInfo(const ir::Op &op, size_t i) {
  bool isFor = op.kind() == ir::OpKind::For;
  const ir::Block &head = *op.region(0);
  const ir::Value *arg = head.arg(static_cast<unsigned>((isFor ? 1 : 0) + i));
  const ir::Value *init = op.operand(static_cast<unsigned>((isFor ? 3 : 0) + i));
  const ir::Op *cond = isFor ? nullptr : head.terminator();
  const ir::Op *yield = op.region(isFor ? 0 : 1)->terminator();
  if (!yield || yield->numOperands() <= i || (!isFor && !cond))
    return AxisInfo::unknown(arg->type());
  // v is arg itself (for a while: the body argument its condition forwards arg to).
  auto isArg = [&](const ir::Value *v) {
    if (v == arg)
      return true;
    if (isFor || v->ownerBlock() != op.region(1))
      return false;
    unsigned j = v->index() + 1;
    return j < cond->numOperands() && cond->operand(j) == arg;
  };
  const ir::Value *next = yield->operand(static_cast<unsigned>(i));
  steppedInit_.erase(arg);
  if (isArg(next)) {
    if (!arg->type().isScalar())
      steppedInit_[arg] = init;
    return info(init);
  }
  const ir::Op *def = next->definingOp();
  const ir::Type &t = arg->type();
  if (!def || !(t.isPtr || isIndexType(t)))
    return AxisInfo::unknown(t);
  ir::OpKind k = def->kind();
  bool addLikeStep = k == ir::OpKind::AddPtr || k == ir::OpKind::Add || k == ir::OpKind::Sub;
  if (!addLikeStep || def->numOperands() != 2)
    return AxisInfo::unknown(t);
  const ir::Value *step = nullptr;
  if (isArg(def->operand(0)))
    step = def->operand(1);
  else if (k == ir::OpKind::Add && isArg(def->operand(1)))
    step = def->operand(0);
  if (!step)
    return AxisInfo::unknown(t);
  AxisInfo a = stepped(init, step, k == ir::OpKind::AddPtr);
  if (!t.isScalar() && uniformStep(step))
    steppedInit_[arg] = init;
  return a;
}

/// Whether a step is the same over the whole tile (a scalar, or constant along every axis).
bool AxisAnalysis::uniformStep(const ir::Value *step) const {
  AxisInfo s = info(step);
  return s.cnst.empty() || s.cnst == step->type().shape;
}

const ir::Value *AxisAnalysis::steppedFrom(const ir::Value *v) const {
  auto it = steppedInit_.find(v);
  return it == steppedInit_.end() ? nullptr : it->second;
}

/// Facts that hold for init plus any number of steps, each `step` (scaled to
/// bytes when `scale`): init's, provided the step is the same over the whole
/// tile, with divisibilities capped by the step's.
AxisInfo AxisAnalysis::stepped(const ir::Value *init, const ir::Value *step, bool scale) const {
  const ir::Type &t = init->type();
  AxisInfo a = info(init), s = info(step);
  if (!s.cnst.empty() && s.cnst != t.shape)
    return AxisInfo::unknown(t);
  int64_t d = scale ? capped(s.eltDiv * unitOf(t)) : s.eltDiv;
  a.eltDiv = std::min(a.eltDiv, d);
  for (int64_t &x : a.div)
    x = std::min(x, d);
  normalize(a);
  return a;
}

AxisInfo AxisAnalysis::compute(const ir::Op &op) {
  const ir::Type &t = op.result()->type();
  switch (op.kind()) {
  case ir::OpKind::Constant: return constant(op);
  case ir::OpKind::Range: {
    AxisInfo a = AxisInfo::unknown(t);
    a.contig[0] = t.shape[0];
    a.div[0] = powerOfTwoFactor(op.intAttr("start"));
    if (t.shape[0] == 1)
      a.eltDiv = a.div[0];
    return a;
  }
  case ir::OpKind::Splat: return uniform(t.shape, info(op.operand(0)).eltDiv);
  case ir::OpKind::Broadcast: return broadcast(op);
  case ir::OpKind::ExpandDims: return expandDims(op);
  case ir::OpKind::Trans: return trans(op);
  case ir::OpKind::Cast: return cast(op);
  case ir::OpKind::Add:
  case ir::OpKind::AddPtr: return addLike(op, false);
  case ir::OpKind::Sub: return addLike(op, true);
  case ir::OpKind::Mul: return mul(op);
  case ir::OpKind::CmpEq:
  case ir::OpKind::CmpNe:
  case ir::OpKind::CmpLt:
  case ir::OpKind::CmpLe:
  case ir::OpKind::CmpGt:
  case ir::OpKind::CmpGe: return compare(op);
  case ir::OpKind::Neg: return neg(op);
  case ir::OpKind::Bitcast:
  case ir::OpKind::Not:
  case ir::OpKind::Abs:
  case ir::OpKind::Exp:
  case ir::OpKind::Exp2:
  case ir::OpKind::Log:
  case ir::OpKind::Log2:
  case ir::OpKind::Sqrt:
  case ir::OpKind::Rsqrt:
  case ir::OpKind::Sin:
  case ir::OpKind::Cos:
  case ir::OpKind::Floor:
  case ir::OpKind::Ceil:
  case ir::OpKind::Div:
  case ir::OpKind::Rem:
  case ir::OpKind::And:
  case ir::OpKind::Or:
  case ir::OpKind::Xor:
  case ir::OpKind::Shl:
  case ir::OpKind::Shr:
  case ir::OpKind::Min:
  case ir::OpKind::Max:
  case ir::OpKind::UMulHi:
  case ir::OpKind::Fma:
  case ir::OpKind::Select: return elementwiseDefault(op);
  case ir::OpKind::GetProgramId:
  case ir::OpKind::GetNumPrograms:
  case ir::OpKind::ExtractSlice:
  case ir::OpKind::InsertSlice:
  case ir::OpKind::Undef:
  case ir::OpKind::Reshape:
  case ir::OpKind::Reduce:
  case ir::OpKind::Dot:
  case ir::OpKind::Load:
  case ir::OpKind::Store:
  case ir::OpKind::AtomicRMW:
  case ir::OpKind::AtomicCas:
  case ir::OpKind::Print:
  case ir::OpKind::Assert:
  case ir::OpKind::DebugBarrier:
  case ir::OpKind::For:
  case ir::OpKind::If:
  case ir::OpKind::While:
  case ir::OpKind::Yield:
  case ir::OpKind::Condition:
  case ir::OpKind::Return: return AxisInfo::unknown(t);
  }
  return AxisInfo::unknown(t);
}

AxisInfo AxisAnalysis::constant(const ir::Op &op) {
  const ir::Type &t = op.result()->type();
  const ir::AttrValue *v = op.attr("value");
  int64_t d = 1;
  if (isIndexType(t) && v && std::holds_alternative<int64_t>(*v)) {
    // Only the bits of the dtype count (a u8 256 would be 0).
    int64_t bits = std::get<int64_t>(*v);
    unsigned w = bitWidth(t.dtype);
    uint64_t mask = w >= 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
    uint64_t low = static_cast<uint64_t>(bits) & mask;
    d = low == 0 ? kMaxDivisibility : powerOfTwoFactor(static_cast<int64_t>(low));
  }
  return uniform(t.shape, d);
}

AxisInfo AxisAnalysis::broadcast(const ir::Op &op) {
  const ir::Type &t = op.result()->type();
  AxisInfo in = info(op.operand(0));
  const ir::Shape &is = op.operand(0)->type().shape;
  if (is.empty())
    return uniform(t.shape, in.eltDiv);
  AxisInfo a = uniform(t.shape, in.eltDiv);
  size_t shift = t.rank() - is.size();
  for (size_t d = shift; d < t.rank(); ++d) {
    size_t id = d - shift;
    if (is[id] == 1 && t.shape[d] != 1)
      continue; // stretched: the same value along d
    a.contig[d] = in.contig[id];
    a.div[d] = in.div[id];
    a.cnst[d] = in.cnst[id];
  }
  return a;
}

AxisInfo AxisAnalysis::expandDims(const ir::Op &op) {
  AxisInfo a = info(op.operand(0));
  auto axis = static_cast<size_t>(op.intAttr("axis"));
  if (axis > a.contig.size())
    return AxisInfo::unknown(op.result()->type());
  a.contig.insert(a.contig.begin() + static_cast<ptrdiff_t>(axis), 1);
  a.cnst.insert(a.cnst.begin() + static_cast<ptrdiff_t>(axis), 1);
  a.div.insert(a.div.begin() + static_cast<ptrdiff_t>(axis), a.eltDiv);
  return a;
}

AxisInfo AxisAnalysis::trans(const ir::Op &op) {
  AxisInfo in = info(op.operand(0)), a = in;
  const std::vector<int64_t> &perm = op.intsAttr("perm");
  for (size_t d = 0; d < perm.size() && d < a.contig.size(); ++d) {
    auto s = static_cast<size_t>(perm[d]);
    a.contig[d] = in.contig[s];
    a.div[d] = in.div[s];
    a.cnst[d] = in.cnst[s];
  }
  return a;
}

AxisInfo AxisAnalysis::cast(const ir::Op &op) {
  const ir::Type &from = op.operand(0)->type(), &to = op.result()->type();
  // An integer widened (or kept) keeps its values, so all the facts (with no
  // wrap-around inside a block, the analysis's one assumption).
  if (isIndexType(from) && isIndexType(to) && bitWidth(to.dtype) >= bitWidth(from.dtype))
    return info(op.operand(0));
  return elementwiseDefault(op);
}

AxisInfo AxisAnalysis::neg(const ir::Op &op) {
  // -v (two's complement, in the dtype's width) has v's power-of-two factor,
  // so every divisibility that holds for each element survives; a contiguous
  // run goes down, so it is a run no longer and only its elements' common
  // divisibility (eltDiv) is left along that axis. Constancy survives.
  const ir::Type &t = op.result()->type();
  if (!isIndexType(t))
    return elementwiseDefault(op);
  AxisInfo x = info(op.operand(0));
  if (x.contig.size() != t.rank())
    return elementwiseDefault(op);
  AxisInfo a = x;
  for (size_t d = 0; d < t.rank(); ++d) {
    if (x.contig[d] > 1)
      a.div[d] = x.eltDiv;
    a.contig[d] = 1;
  }
  return a;
}

AxisInfo AxisAnalysis::elementwiseDefault(const ir::Op &op) {
  const ir::Type &t = op.result()->type();
  AxisInfo a = AxisInfo::unknown(t);
  for (size_t d = 0; d < t.rank(); ++d) {
    a.cnst[d] = t.shape[d];
    for (const ir::Value *v : op.operands()) {
      AxisInfo o = info(v);
      a.cnst[d] = o.cnst.size() == t.rank() ? std::min(a.cnst[d], o.cnst[d]) : 1;
    }
  }
  return a;
}

AxisInfo AxisAnalysis::addLike(const ir::Op &op, bool sub) {
  const ir::Type &t = op.result()->type();
  AxisInfo x = info(op.operand(0)), y = info(op.operand(1));
  int64_t unit = unitOf(t);
  if (op.kind() == ir::OpKind::AddPtr) { // the offset counts pointees: scale to bytes
    y.eltDiv = capped(y.eltDiv * unit);
    for (int64_t &v : y.div)
      v = capped(v * unit);
  }
  if (x.contig.size() != t.rank() || y.contig.size() != t.rank())
    return AxisInfo::unknown(t);
  AxisInfo a = AxisInfo::unknown(t);
  a.eltDiv = std::min(x.eltDiv, y.eltDiv);
  for (size_t d = 0; d < t.rank(); ++d) {
    int64_t c = std::min(x.contig[d], y.cnst[d]);
    if (!sub)
      c = std::max(c, std::min(y.contig[d], x.cnst[d]));
    a.contig[d] = c;
    a.div[d] = std::min(refine(x, d, c, unit), refine(y, d, c, unit));
    a.cnst[d] = std::min(x.cnst[d], y.cnst[d]);
  }
  return a;
}

AxisInfo AxisAnalysis::mul(const ir::Op &op) {
  const ir::Type &t = op.result()->type();
  // x * 1 is x (the frontend writes `rk * 1`; the IR passes fold it, but the
  // GPU backend also compiles IR that has not been through them).
  for (unsigned i = 0; i < 2; ++i)
    if (isConstantOne(op.operand(1 - i)))
      return info(op.operand(i));
  AxisInfo x = info(op.operand(0)), y = info(op.operand(1));
  if (!isIndexType(t) || x.cnst.size() != t.rank() || y.cnst.size() != t.rank())
    return elementwiseDefault(op);
  AxisInfo a = AxisInfo::unknown(t);
  a.eltDiv = capped(x.eltDiv * y.eltDiv);
  for (size_t d = 0; d < t.rank(); ++d) {
    a.div[d] = a.eltDiv;
    a.cnst[d] = std::min(x.cnst[d], y.cnst[d]);
  }
  return a;
}

AxisInfo AxisAnalysis::compare(const ir::Op &op) {
  AxisInfo a = elementwiseDefault(op);
  const ir::Type &in = op.operand(0)->type();
  ir::OpKind k = op.kind();
  if (!isIndexType(in) || in.rank() != a.cnst.size())
    return a;
  // x < y (and x >= y) with x going up by one over a block of r elements that
  // starts at a multiple of r, and y the same multiple of r over the block:
  // the whole block compares alike. y > x and y <= x are the mirror image.
  bool lhsRuns = k == ir::OpKind::CmpLt || k == ir::OpKind::CmpGe;
  bool rhsRuns = k == ir::OpKind::CmpGt || k == ir::OpKind::CmpLe;
  if (!lhsRuns && !rhsRuns)
    return a;
  AxisInfo x = info(op.operand(lhsRuns ? 0 : 1)), y = info(op.operand(lhsRuns ? 1 : 0));
  for (size_t d = 0; d < in.rank(); ++d) {
    int64_t r = std::min({x.contig[d], y.cnst[d], x.div[d], everyElement(y, d)});
    a.cnst[d] = std::max(a.cnst[d], r);
  }
  return a;
}

} // namespace tc::codegen
