//===- ExecElem.h - The scalar rules as the tile engine uses them ---------===//
//
// The scalar rules of docs/semantics.md live once, in support/ScalarRules.h
// (namespace tc::num), shared with the constant folder; the engine's files
// name them unqualified through the using-directive below. What is the
// engine's own is the lane loop.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "interp/Tile.h"
#include "support/ScalarRules.h"

#include <cstdint>
#include <cstring>
#include <limits>

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

/// For an affine tile `t` of `n` lanes of integer dtype D (pointers: U64):
/// when its lanes, read as integers of D, are exactly first + i * step for
/// every i (no lane wraps around D's range), sets first and step. Then ops
/// whose result is not linear modulo 2^bits (sign extension, comparisons)
/// still see a linear function of the lane.
template <DType D> bool exactLinear(const TileData &t, int64_t n, __int128 &first, __int128 &step) {
  static_assert(kIsInt<D>);
  using T = St<D>;
  Affine a;
  if (!t.affine(a))
    return false;
  first = static_cast<__int128>(static_cast<T>(a.base));
  // The step as a signed number of D's width (any representative mod 2^bits works).
  constexpr unsigned kW = sizeof(T) * 8;
  int64_t st = kW == 64 ? static_cast<int64_t>(a.step)
                        : static_cast<int64_t>(a.step << (64 - kW)) >> (64 - kW);
  step = st;
  __int128 last = first + static_cast<__int128>(n - 1) * step;
  return last >= static_cast<__int128>(std::numeric_limits<T>::min()) &&
         last <= static_cast<__int128>(std::numeric_limits<T>::max());
}

} // namespace tc::interp
