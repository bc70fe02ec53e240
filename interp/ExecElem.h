//===- ExecElem.h - The scalar rules as the tile engine uses them ---------===//
//
// The scalar rules of docs/semantics.md live once, in support/ScalarRules.h
// (namespace tc::num), shared with the constant folder; the engine's files
// name them unqualified through the using-directive below. What is the
// engine's own is the lane loop.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/ScalarRules.h"

#include <cstdint>
#include <cstring>

namespace tc::interp {

using namespace tc::num; // St<D>, the typed rules, dispatchDType, fromRaw/toRaw

/// out[i] = f(i) for i in [0, n). The lanes go in blocks of 16 computed into a
/// local array first: with a fixed trip count and no possible aliasing, GCC
/// vectorises the block even under -O2's cheap cost model.
template <typename T, typename F>
[[gnu::always_inline]] inline void mapLanes(T *out, int64_t n, F &&f) {
  constexpr int64_t kBlock = 16;
  int64_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    T t[kBlock];
    for (int64_t j = 0; j < kBlock; ++j)
      t[j] = f(i + j);
    std::memcpy(out + i, t, sizeof(t));
  }
  for (; i < n; ++i)
    out[i] = f(i);
}

} // namespace tc::interp
