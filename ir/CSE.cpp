//===- CSE.cpp - Common subexpression elimination -------------------------===//
//
// Pure ops without regions that have the same kind, operands (in any order
// for commutative ops), attributes and result types compute the same value;
// a later one is replaced by the earlier one when the earlier one dominates
// it: it is in the same block before it, or in an enclosing block. A scoped
// table (one scope per block) keeps that rule. Loads, atomics and anything
// with side effects are never merged.
//
//===----------------------------------------------------------------------===//
#include "ir/PassUtil.h"
#include "ir/Passes.h"
#include "support/PlantedBugs.h"

#include <algorithm>
#include <cstring>
#include <functional>

namespace tc::ir {

namespace {

/// A string that is equal for two ops exactly when they compute the same value.
/// Operand identities are value addresses: they only decide equality, never order.
std::string opKey(const Op &op) {
  std::vector<uintptr_t> operands;
  for (const Value *v : op.operands())
    operands.push_back(reinterpret_cast<uintptr_t>(v));
  if (hasTrait(op.kind(), Commutative))
    std::sort(operands.begin(), operands.end());
  std::string key = std::to_string(static_cast<int>(op.kind()));
  for (uintptr_t p : operands)
    key += "," + std::to_string(p);
  if (!plantedBug("cse-ignores-attrs")) // the loop below is the if's body
  for (const NamedAttr &a : op.attrs()) {
    key += ";" + a.name + "=" + std::to_string(a.value.index()) + ":";
    if (const auto *i = std::get_if<int64_t>(&a.value)) {
      key += std::to_string(*i);
    } else if (const auto *d = std::get_if<double>(&a.value)) {
      uint64_t bits; // bit patterns keep 0.0 and -0.0 apart
      std::memcpy(&bits, d, sizeof bits);
      key += std::to_string(bits);
    } else if (const auto *s = std::get_if<std::string>(&a.value)) {
      key += std::to_string(s->size()) + ":" + *s;
    } else {
      for (int64_t x : std::get<std::vector<int64_t>>(a.value))
        key += std::to_string(x) + " ";
    }
  }
  for (const auto &r : op.results())
    if (!plantedBug("cse-ignores-dtype")) key += "|" + r->type().str();
  return key;
}

bool isCandidate(const Op &op) {
  return hasTrait(op.kind(), Pure) && op.numRegions() == 0 && op.numResults() > 0;
}

class CommonSubexpressionEliminator {
public:
  bool run(Block &body);

private:
  void visitBlock(Block &b);
  Op *lookup(const std::string &key) const;

  std::vector<std::unordered_map<std::string, Op *>> scopes_;
  passutil::ValueReplacer replacer_;
  std::unordered_set<const Op *> dead_;
};

Op *CommonSubexpressionEliminator::lookup(const std::string &key) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto found = it->find(key);
    if (found != it->end())
      return found->second;
  }
  return nullptr;
}

void CommonSubexpressionEliminator::visitBlock(Block &b) {
  scopes_.emplace_back();
  for (auto &opPtr : b.ops()) {
    Op &op = *opPtr;
    replacer_.apply(op);
    for (const auto &region : op.regions())
      visitBlock(*region);
    if (!isCandidate(op))
      continue;
    std::string key = opKey(op);
    if (Op *existing = lookup(key)) {
      for (size_t i = 0; i < op.numResults(); ++i)
        replacer_.replace(op.result(static_cast<unsigned>(i)),
                          existing->result(static_cast<unsigned>(i)));
      dead_.insert(&op);
    } else {
      scopes_.back().emplace(std::move(key), &op);
    }
  }
  scopes_.pop_back();
}

bool CommonSubexpressionEliminator::run(Block &body) {
  visitBlock(body);
  passutil::eraseOps(body, dead_);
  return !dead_.empty();
}

} // namespace

bool eliminateCommonSubexpressions(Module &m) {
  bool changed = false;
  for (auto &f : m.functions) {
    CommonSubexpressionEliminator cse;
    changed |= cse.run(f->body());
  }
  return changed;
}

} // namespace tc::ir
