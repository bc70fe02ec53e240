//===- Canonicalize.cpp - Local simplifications ---------------------------===//
//
// Rewrites, each keeping the value computed:
//   cast / bitcast / broadcast / reshape to the operand's own type -> operand
//   broadcast(splat s), expand_dims(splat s), reshape(splat s),
//     trans(splat s)                          -> splat s to the result shape
//   broadcast(broadcast x)                     -> broadcast x
//   reshape(reshape x)                         -> reshape x
//   trans(trans x)                             -> trans x with the composed perm, or x
//   trans with the identity perm               -> operand
//   integers only: x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1, x | 0, x ^ 0,
//     x << 0, x >> 0                           -> x   (floats: -0.0 + 0.0 is +0.0)
//   addptr p, 0                                -> p
//   select with a constant condition           -> the chosen operand
// Replaced ops are erased; operands left unused are for DCE.
//
//===----------------------------------------------------------------------===//
#include "ir/PassUtil.h"
#include "ir/Passes.h"
#include "support/PlantedBugs.h"

namespace tc::ir {

namespace {

using passutil::constantValue;

/// The producing op of `v` if it has kind `k`.
const Op *definedBy(const Value *v, OpKind k) {
  return v && v->definingOp() && v->definingOp()->kind() == k ? v->definingOp() : nullptr;
}

/// Whether `v` is an integer constant equal to `want`.
bool isIntConstant(const Value *v, int64_t want) {
  const AttrValue *a = constantValue(v);
  if (!a || v->type().isPtr || isFloat(v->type().dtype))
    return false;
  const int64_t *i = std::get_if<int64_t>(a);
  return i && *i == want;
}

/// One sweep of rewrites over a function, in print order.
class Canonicalizer {
public:
  bool run(Block &body);

private:
  void visitBlock(Block &b);
  /// The value that replaces op (an existing value or a new op's result), if any.
  Value *rewrite(Block &b, size_t index, Op &op);
  Value *rewriteIdentity(Op &op);
  Value *rewriteChain(Block &b, size_t index, Op &op);
  Value *rewriteTrans(Block &b, size_t index, Op &op);
  Value *rewriteArith(Op &op);
  Value *create(Block &b, size_t index, const Op &at, OpKind kind, Value *operand,
                std::vector<NamedAttr> attrs = {});

  passutil::ValueReplacer replacer_;
  std::unordered_set<const Op *> dead_;
};

bool Canonicalizer::run(Block &body) {
  visitBlock(body);
  passutil::eraseOps(body, dead_);
  return !dead_.empty();
}

void Canonicalizer::visitBlock(Block &b) {
  for (size_t i = 0; i < b.ops().size(); ++i) {
    Op &op = *b.ops()[i];
    replacer_.apply(op);
    for (const auto &region : op.regions())
      visitBlock(*region);
    size_t before = b.ops().size();
    if (Value *v = rewrite(b, i, op)) {
      replacer_.replace(op.result(), v);
      dead_.insert(&op);
    }
    i += b.ops().size() - before; // skip ops inserted before `op`
  }
}

Value *Canonicalizer::create(Block &b, size_t index, const Op &at, OpKind kind, Value *operand,
                             std::vector<NamedAttr> attrs) {
  Builder builder(&b);
  builder.setInsertionPoint(&b, index);
  builder.setLoc(at.loc());
  return builder.create(kind, {at.result()->type()}, {operand}, std::move(attrs))->result();
}

Value *Canonicalizer::rewrite(Block &b, size_t index, Op &op) {
  if (op.numResults() != 1)
    return nullptr;
  for (const Value *v : op.operands())
    if (!v)
      return nullptr;
  if (Value *v = rewriteIdentity(op))
    return v;
  if (Value *v = rewriteChain(b, index, op))
    return v;
  if (Value *v = rewriteTrans(b, index, op))
    return v;
  return rewriteArith(op);
}

// Conversions and shape ops to the operand's own type; select on a constant.
Value *Canonicalizer::rewriteIdentity(Op &op) {
  OpKind k = op.kind();
  bool sameTypeOp =
      k == OpKind::Cast || k == OpKind::Bitcast || k == OpKind::Broadcast || k == OpKind::Reshape;
  if (sameTypeOp && op.operand(0)->type() == op.result()->type())
    return op.operand(0);
  if (k == OpKind::Select && op.numOperands() == 3) {
    const AttrValue *c = constantValue(op.operand(0));
    if (const int64_t *i = c ? std::get_if<int64_t>(c) : nullptr)
      return op.operand(*i ? 1 : 2);
  }
  return nullptr;
}

// Shape ops of a splat become one splat; broadcast/reshape chains collapse.
Value *Canonicalizer::rewriteChain(Block &b, size_t index, Op &op) {
  OpKind k = op.kind();
  bool shapeOp = k == OpKind::Broadcast || k == OpKind::ExpandDims || k == OpKind::Reshape ||
                 k == OpKind::Trans;
  if (!shapeOp || op.numOperands() != 1)
    return nullptr;
  if (const Op *s = definedBy(op.operand(0), OpKind::Splat); s && s->numOperands() == 1)
    return create(b, index, op, OpKind::Splat, s->operand(0));
  if (k == OpKind::Broadcast || k == OpKind::Reshape)
    if (const Op *inner = definedBy(op.operand(0), k); inner && inner->numOperands() == 1) {
      Value *x = inner->operand(0);
      return x->type() == op.result()->type() ? x : create(b, index, op, k, x);
    }
  return nullptr;
}

// trans(trans x) composes; an identity perm disappears.
Value *Canonicalizer::rewriteTrans(Block &b, size_t index, Op &op) {
  if (op.kind() != OpKind::Trans)
    return nullptr;
  const AttrValue *p = op.attr("perm");
  const auto *perm = p ? std::get_if<std::vector<int64_t>>(p) : nullptr;
  if (!perm)
    return nullptr;
  std::vector<int64_t> composed = *perm;
  Value *source = op.operand(0);
  const Op *inner = definedBy(source, OpKind::Trans);
  const AttrValue *ip = inner ? inner->attr("perm") : nullptr;
  const auto *innerPerm = ip ? std::get_if<std::vector<int64_t>>(ip) : nullptr;
  if (innerPerm && innerPerm->size() == perm->size() && inner->numOperands() == 1) {
    // result axis i = inner axis perm[i] = source axis innerPerm[perm[i]].
    for (size_t i = 0; i < perm->size(); ++i) {
      size_t pi = static_cast<size_t>((*perm)[i]);
      if (pi >= innerPerm->size())
        return nullptr;
      composed[i] = (*innerPerm)[pi];
    }
    source = inner->operand(0);
  }
  bool identity = true;
  for (size_t i = 0; i < composed.size(); ++i)
    identity &= composed[i] == static_cast<int64_t>(i);
  if (identity && source->type() == op.result()->type())
    return source;
  if (source == op.operand(0))
    return nullptr;
  return create(b, index, op, OpKind::Trans, source, {{"perm", composed}});
}

// Integer identities (floats excluded: x + 0.0 turns -0.0 into +0.0).
Value *Canonicalizer::rewriteArith(Op &op) {
  const Type &t = op.result()->type();
  if (op.kind() == OpKind::AddPtr && op.numOperands() == 2 && isIntConstant(op.operand(1), 0))
    return op.operand(0);
  if (op.numOperands() != 2 || t.isPtr || isFloat(t.dtype))
    return nullptr;
  Value *a = op.operand(0), *b = op.operand(1);
  OpKind k = op.kind();
  bool zeroOnLeft = k == OpKind::Add || k == OpKind::Or || k == OpKind::Xor;
  bool zeroOnRight = zeroOnLeft || k == OpKind::Sub || k == OpKind::Shl || k == OpKind::Shr;
  bool oneOnLeft = k == OpKind::Mul;
  bool oneOnRight = oneOnLeft || k == OpKind::Div;
  if (plantedBug("canon-rem-one")) oneOnRight |= k == OpKind::Rem;
  if ((zeroOnRight && isIntConstant(b, 0)) || (oneOnRight && isIntConstant(b, 1)))
    return a;
  if ((zeroOnLeft && isIntConstant(a, 0)) || (oneOnLeft && isIntConstant(a, 1)))
    return b;
  return nullptr;
}

} // namespace

bool canonicalize(Module &m) {
  bool changed = false;
  for (auto &f : m.functions) {
    for (int round = 0; round < 100; ++round) {
      Canonicalizer c;
      if (!c.run(f->body()))
        break;
      changed = true;
    }
  }
  return changed;
}

} // namespace tc::ir
