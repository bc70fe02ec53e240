//===- DCE.cpp - Dead code elimination ------------------------------------===//
//
// Removes ops whose results are all unused and that have no effect other
// than their results: pure ops, loads (reads only; a dead load that would
// have trapped may go, as IR.h allows), and for/if/while ops whose regions
// contain no writes or side effects. Ops are visited in reverse, regions
// before their op, so whole chains die in one sweep; sweeps repeat until
// nothing changes.
//
//===----------------------------------------------------------------------===//
#include "ir/PassUtil.h"
#include "ir/Passes.h"
#include "support/PlantedBugs.h"

namespace tc::ir {

namespace {

using UseCounts = std::unordered_map<const Value *, unsigned>;

bool hasEffects(const Op &op) {
  if (plantedBug("dce-drops-atomic") && op.kind() == OpKind::AtomicRMW) return false;
  if (hasTrait(op.kind(), MemWrite) || hasTrait(op.kind(), SideEffect))
    return true;
  for (const auto &region : op.regions())
    for (const auto &inner : region->ops())
      if (hasEffects(*inner))
        return true;
  return false;
}

/// Whether `op` may be removed once its results are unused.
bool isRemovable(const Op &op) {
  if (hasTrait(op.kind(), Terminator))
    return false;
  return !hasEffects(op);
}

class DeadCodeEliminator {
public:
  explicit DeadCodeEliminator(Block &body) : body_(body) {}
  /// One sweep; returns whether anything was removed.
  bool sweep();

private:
  void visitBlock(Block &b);
  bool allResultsUnused(const Op &op) const;
  void dropUses(const Op &op);

  Block &body_;
  UseCounts uses_;
  std::unordered_set<const Op *> dead_;
};

bool DeadCodeEliminator::sweep() {
  uses_.clear();
  dead_.clear();
  passutil::countUses(body_, uses_);
  visitBlock(body_);
  passutil::eraseOps(body_, dead_);
  return !dead_.empty();
}

bool DeadCodeEliminator::allResultsUnused(const Op &op) const {
  for (const auto &r : op.results()) {
    auto it = uses_.find(r.get());
    if (it != uses_.end() && it->second > 0)
      return false;
  }
  return true;
}

/// Removes the uses made by `op` and by the live ops inside its regions.
void DeadCodeEliminator::dropUses(const Op &op) {
  for (const Value *v : op.operands())
    if (v && uses_[v] > 0)
      --uses_[v];
  for (const auto &region : op.regions())
    for (const auto &inner : region->ops())
      if (!dead_.count(inner.get()))
        dropUses(*inner);
}

void DeadCodeEliminator::visitBlock(Block &b) {
  auto &ops = b.ops();
  for (size_t i = ops.size(); i-- > 0;) {
    const Op &op = *ops[i];
    for (const auto &region : op.regions())
      visitBlock(*region);
    if (isRemovable(op) && allResultsUnused(op)) {
      dropUses(op);
      dead_.insert(&op);
    }
  }
}

} // namespace

bool eliminateDeadCode(Module &m) {
  bool changed = false;
  for (auto &f : m.functions) {
    DeadCodeEliminator dce(f->body());
    for (int round = 0; round < 100 && dce.sweep(); ++round)
      changed = true;
  }
  return changed;
}

} // namespace tc::ir
