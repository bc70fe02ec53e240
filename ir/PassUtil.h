//===- PassUtil.h - Helpers shared by the IR passes (internal) --------===//
//
// Not part of the public interface: only ir/*.cpp passes include it.
//
// Passes never erase an op while other ops may still point at its results:
// they record replacements in a ValueReplacer, rewrite operands as they walk
// (in print order, so every use is visited after its definition), and erase
// the dead ops at the end of a sweep with eraseOps.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <unordered_map>
#include <unordered_set>

namespace tc::ir::passutil {

/// Records "uses of `from` now use `to`" and rewrites operands accordingly.
class ValueReplacer {
public:
  void replace(Value *from, Value *to) { map_[from] = to; }
  /// Rewrites the operands of `op` (not of ops in its regions).
  void apply(Op &op) const;
  void clear() { map_.clear(); }

private:
  Value *resolve(Value *v) const;
  std::unordered_map<Value *, Value *> map_;
};

/// Removes the ops in `dead` from `b` and from every region under it.
void eraseOps(Block &b, const std::unordered_set<const Op *> &dead);

/// The `value` attribute of `v`'s defining op if that op is a `constant`.
const AttrValue *constantValue(const Value *v);

/// Adds the number of uses of each value by ops in `b` (recursively) to `uses`.
void countUses(const Block &b, std::unordered_map<const Value *, unsigned> &uses);

} // namespace tc::ir::passutil
