//===- PassUtil.cpp - Helpers shared by the IR passes ---------------------===//
#include "ir/PassUtil.h"

#include <algorithm>

namespace tc::ir::passutil {

Value *ValueReplacer::resolve(Value *v) const {
  // Chains (a -> b -> c) are short; bound the walk anyway.
  for (int guard = 0; guard < 1000; ++guard) {
    auto it = map_.find(v);
    if (it == map_.end())
      return v;
    v = it->second;
  }
  return v;
}

void ValueReplacer::apply(Op &op) const {
  if (map_.empty())
    return;
  for (size_t i = 0; i < op.numOperands(); ++i) {
    Value *v = op.operand(static_cast<unsigned>(i));
    if (v)
      op.setOperand(static_cast<unsigned>(i), resolve(v));
  }
}

void eraseOps(Block &b, const std::unordered_set<const Op *> &dead) {
  if (dead.empty())
    return;
  auto &ops = b.ops();
  ops.erase(std::remove_if(ops.begin(), ops.end(),
                           [&](const std::unique_ptr<Op> &op) { return dead.count(op.get()); }),
            ops.end());
  for (auto &op : ops)
    for (const auto &region : op->regions())
      eraseOps(*region, dead);
}

const AttrValue *constantValue(const Value *v) {
  if (!v || !v->definingOp() || v->definingOp()->kind() != OpKind::Constant)
    return nullptr;
  return v->definingOp()->attr("value");
}

void countUses(const Block &b, std::unordered_map<const Value *, unsigned> &uses) {
  for (const auto &op : b.ops()) {
    for (const Value *v : op->operands())
      if (v)
        ++uses[v];
    for (const auto &region : op->regions())
      countUses(*region, uses);
  }
}

} // namespace tc::ir::passutil
