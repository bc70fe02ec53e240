// reduce and dot: the two ops whose result lanes combine many operand lanes.
//
// Reduction order (docs/semantics.md rule 10), for `add`: a fixed pairwise tree over
// the reduced axis, built bottom-up. Level 0 is the axis' elements x[0..n);
// each level adds neighbours, y[p] = x[2p] + x[2p+1] (left operand first),
// and an odd last element moves up unchanged; the root is the sum. For a
// power-of-two n (every tile axis is one) this is exactly the recursive
// halving sum(x[0:n/2]) + sum(x[n/2:n]). Accumulation types: ints narrower
// than 32 bits in (u)int32 (bool as uint32), wider ints in their own type,
// all wrapping; fp16/bf16 in fp32, rounded once to the input type at the end;
// fp32 in fp32; fp64 in fp64.
// max/min (maxNum/minNum) and and/or/xor give the same value in any order
// (see reduceFold).
// argmax/argmin scan left to right and keep the first strict improvement, so
// ties give the smallest index; NaN lanes never win (all NaN: index 0).
// A result lane is poison when any lane it reduces is poison.
//
// dot (a, b, acc) = acc + a @ b: for every (i, j), c = acc[i, j], then for k
// ascending c = c + a[i, k] * b[k, j], the product rounded to the
// accumulator type (exact for fp16/bf16 inputs, which are widened to fp32;
// int8 products are exact in int32) and then the sum rounded: no fused
// multiply-add. The loop runs i, k, j so that the j loop vectorises while
// each c[i, j] still sees k in ascending order. (Eigen's GEMM blocks over k
// and sums partial products in registers, which changes the rounding, so it
// is not used.) A result lane is poison when acc[i, j], a row lane a[i, :] or
// a column lane b[:, j] is poison.
#include "interp/Interpreter.h"

#include "interp/ExecElem.h"

#include <cstring>
#include <vector>

namespace tc::interp {

namespace {

enum class RedKind { Add, Max, Min, ArgMax, ArgMin, And, Or, Xor };

/// Poison of reduce results: lane (o, j) is poison when any (o, k, j) is.
void reducePoison(TileData &r, const TileData &a, const Instr &in) {
  if (!a.hasPoison())
    return;
  uint8_t *p = r.newPoison();
  const uint8_t *x = a.poison();
  int64_t len = in.g1, inner = in.g2;
  for (int64_t o = 0; o < in.g0; ++o)
    for (int64_t k = 0; k < len; ++k)
      for (int64_t j = 0; j < inner; ++j)
        p[o * inner + j] |= x[(o * len + k) * inner + j];
}

/// An unsigned integer type of a storage type (floats map to themselves).
template <typename S> struct UnsignedOf { using type = std::make_unsigned_t<S>; };
template <> struct UnsignedOf<float> { using type = float; };
template <> struct UnsignedOf<double> { using type = double; };

/// The accumulator of `add` over dtype D (rule 10).
template <DType D> struct AddAcc {
  using A =
      std::conditional_t<kIsHalfLike<D> || D == DType::F32, float,
                         std::conditional_t<D == DType::F64, double,
                                            std::conditional_t<(sizeof(St<D>) < 4), uint32_t,
                                                               typename UnsignedOf<St<D>>::type>>>;
  /// The result's storage: the input type for floats and wide ints, else (u)int32.
  using R = std::conditional_t<
      kIsFloat<D>, St<D>,
      std::conditional_t<(sizeof(St<D>) < 4), std::conditional_t<kIsSigned<D>, int32_t, uint32_t>,
                         St<D>>>;
  static A in(St<D> v) {
    if constexpr (kIsFloat<D>)
      return static_cast<A>(toDouble<D>(v)); // exact
    else
      return static_cast<A>(v); // sign-extends signed inputs, then wraps
  }
  static R out(A v) {
    if constexpr (kIsHalfLike<D>)
      return fromDouble<D>(v);
    else
      return static_cast<R>(v);
  }
};

template <DType D> bool reduceAdd(Frame &f, const Instr &in) {
  using Acc = AddAcc<D>;
  using A = typename Acc::A;
  const TileData &a = *f.get(in.in[0]);
  const St<D> *x = a.as<St<D>>();
  int64_t outer = in.g0, len = in.g1, inner = in.g2;
  TilePtr r = makeTile(outer * inner, sizeof(typename Acc::R));
  auto *o = r->as<typename Acc::R>();
  std::vector<A> scratch(static_cast<size_t>(len * inner));
  A *s = scratch.data();
  for (int64_t b = 0; b < outer; ++b) {
    const St<D> *src = x + b * len * inner;
    mapLanes(s, len * inner, [&](int64_t i) { return Acc::in(src[i]); });
    // Level by level, row p = row 2p + row 2p + 1 (rows of `inner` lanes). A
    // block of results is written only after it is computed, and only over
    // rows already read, so the level can run in place.
    for (int64_t count = len; count > 1; count = count / 2 + (count & 1)) {
      int64_t half = count / 2;
      if (inner == 1) {
        mapLanes(s, half, [&](int64_t p) { return s[2 * p] + s[2 * p + 1]; });
      } else {
        for (int64_t p = 0; p < half; ++p) {
          const A *l = s + 2 * p * inner, *rr = l + inner;
          mapLanes(s + p * inner, inner, [&](int64_t j) { return l[j] + rr[j]; });
        }
      }
      if (count & 1)
        std::memmove(s + half * inner, s + (count - 1) * inner,
                     static_cast<size_t>(inner) * sizeof(A));
    }
    for (int64_t j = 0; j < inner; ++j)
      o[b * inner + j] = Acc::out(s[j]);
  }
  reducePoison(*r, a, in);
  f.set(in.out[0], std::move(r));
  return true;
}

/// One step of a fold of kind K.
template <DType D, RedKind K> St<D> combine(St<D> x, St<D> y) {
  if constexpr (K == RedKind::Max)
    return maxT<D>(x, y);
  else if constexpr (K == RedKind::Min)
    return minT<D>(x, y);
  else if constexpr (K == RedKind::And)
    return static_cast<St<D>>(x & y);
  else if constexpr (K == RedKind::Or)
    return static_cast<St<D>>(x | y);
  else
    return static_cast<St<D>>(x ^ y);
}

/// max, min, and, or, xor. These are associative and commutative on values
/// (maxNum/minNum give the same value in any order; only which NaN comes out
/// when every lane is NaN depends on it), so a long contiguous axis is folded
/// as 16 interleaved partial results, then those in order.
template <DType D, RedKind K> bool reduceFold(Frame &f, const Instr &in) {
  constexpr int64_t kParts = 16;
  const TileData &a = *f.get(in.in[0]);
  const St<D> *x = a.as<St<D>>();
  int64_t outer = in.g0, len = in.g1, inner = in.g2;
  TilePtr r = makeTile(outer * inner, sizeof(St<D>));
  St<D> *o = r->as<St<D>>();
  for (int64_t b = 0; b < outer; ++b) {
    St<D> *acc = o + b * inner;
    const St<D> *src = x + b * len * inner;
    if (inner == 1 && len >= kParts) {
      St<D> part[kParts];
      std::memcpy(part, src, sizeof(part));
      int64_t k = kParts;
      for (; k + kParts <= len; k += kParts)
        for (int64_t j = 0; j < kParts; ++j)
          part[j] = combine<D, K>(part[j], src[k + j]);
      for (; k < len; ++k)
        part[0] = combine<D, K>(part[0], src[k]);
      St<D> v = part[0];
      for (int64_t j = 1; j < kParts; ++j)
        v = combine<D, K>(v, part[j]);
      acc[0] = v;
      continue;
    }
    std::memcpy(acc, src, static_cast<size_t>(inner) * sizeof(St<D>));
    for (int64_t k = 1; k < len; ++k) {
      const St<D> *row = src + k * inner;
      mapLanes(acc, inner, [&](int64_t j) { return combine<D, K>(acc[j], row[j]); });
    }
  }
  reducePoison(*r, a, in);
  f.set(in.out[0], std::move(r));
  return true;
}

template <DType D, bool IsMax> bool reduceArg(Frame &f, const Instr &in) {
  const TileData &a = *f.get(in.in[0]);
  const St<D> *x = a.as<St<D>>();
  int64_t outer = in.g0, len = in.g1, inner = in.g2;
  TilePtr r = makeTile(outer * inner, 4);
  int32_t *o = r->as<int32_t>();
  for (int64_t b = 0; b < outer; ++b) {
    for (int64_t j = 0; j < inner; ++j) {
      int64_t best = -1;
      for (int64_t k = 0; k < len; ++k) {
        St<D> v = x[(b * len + k) * inner + j];
        if constexpr (kIsFloat<D>)
          if (isNaN<D>(v))
            continue;
        if (best < 0)
          best = k;
        else if (compareT<D>(IsMax ? num::Cmp::Gt : num::Cmp::Lt, v,
                             x[(b * len + best) * inner + j]))
          best = k;
      }
      o[b * inner + j] = static_cast<int32_t>(best < 0 ? 0 : best);
    }
  }
  reducePoison(*r, a, in);
  f.set(in.out[0], std::move(r));
  return true;
}

Handler pickReduce(RedKind k, DType t) {
  return dispatchDType(t, [k](auto d) -> Handler {
    constexpr DType D = decltype(d)::value;
    switch (k) {
    case RedKind::Add: return &reduceAdd<D>;
    case RedKind::Max: return &reduceFold<D, RedKind::Max>;
    case RedKind::Min: return &reduceFold<D, RedKind::Min>;
    case RedKind::ArgMax: return &reduceArg<D, true>;
    case RedKind::ArgMin: return &reduceArg<D, false>;
    case RedKind::And:
    case RedKind::Or:
    case RedKind::Xor:
      if constexpr (!kIsFloat<D>) {
        if (k == RedKind::And)
          return &reduceFold<D, RedKind::And>;
        if (k == RedKind::Or)
          return &reduceFold<D, RedKind::Or>;
        return &reduceFold<D, RedKind::Xor>;
      }
      return nullptr;
    }
    return nullptr;
  });
}

//===----------------------------------------------------------------------===//
// dot
//===----------------------------------------------------------------------===//

/// c[i, j] += a[i, k] * b[k, j] for k ascending (see the file comment). The
/// output goes in blocks of kRows x kCols held in a local array across the k
/// loop: the fixed-size inner loops vectorise (even at -O2), the block's
/// independent sums hide the add latency, and each c[i, j] still sees its own
/// additions in ascending k.
template <typename A>
[[gnu::always_inline]] inline void gemmKernel(const A *__restrict a, const A *__restrict b,
                                              A *__restrict c, int64_t m, int64_t kk, int64_t n) {
  constexpr int64_t kRows = 4, kCols = 16;
  int64_t mFull = m - m % kRows, nFull = n - n % kCols;
  for (int64_t i0 = 0; i0 < mFull; i0 += kRows) {
    for (int64_t j0 = 0; j0 < nFull; j0 += kCols) {
      A acc[kRows][kCols];
      for (int64_t i = 0; i < kRows; ++i)
        for (int64_t j = 0; j < kCols; ++j)
          acc[i][j] = c[(i0 + i) * n + j0 + j];
      for (int64_t k = 0; k < kk; ++k) {
        const A *brow = b + k * n + j0;
        for (int64_t i = 0; i < kRows; ++i) {
          A aik = a[(i0 + i) * kk + k];
          for (int64_t j = 0; j < kCols; ++j) {
            A p = aik * brow[j];
            acc[i][j] = acc[i][j] + p;
          }
        }
      }
      for (int64_t i = 0; i < kRows; ++i)
        for (int64_t j = 0; j < kCols; ++j)
          c[(i0 + i) * n + j0 + j] = acc[i][j];
    }
  }
  // The edges: rows past the last full block of rows, columns past the last
  // full block of columns, one element at a time.
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = i < mFull ? nFull : 0; j < n; ++j) {
      A acc = c[i * n + j];
      for (int64_t k = 0; k < kk; ++k) {
        A p = a[i * kk + k] * b[k * n + j];
        acc = acc + p;
      }
      c[i * n + j] = acc;
    }
  }
}

// One entry point per accumulator type. On x86-64 each also has an AVX2
// clone picked at load time: the same IEEE multiplies and adds on wider
// vectors ("avx2" does not enable FMA, so nothing is fused).
#if defined(__x86_64__) && defined(__GNUC__)
#define TC_GEMM_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define TC_GEMM_CLONES
#endif
TC_GEMM_CLONES void gemm(const float *a, const float *b, float *c, int64_t m, int64_t kk,
                         int64_t n) {
  gemmKernel<float>(a, b, c, m, kk, n);
}
TC_GEMM_CLONES void gemm(const double *a, const double *b, double *c, int64_t m, int64_t kk,
                         int64_t n) {
  gemmKernel<double>(a, b, c, m, kk, n);
}
TC_GEMM_CLONES void gemm(const uint32_t *a, const uint32_t *b, uint32_t *c, int64_t m, int64_t kk,
                         int64_t n) {
  gemmKernel<uint32_t>(a, b, c, m, kk, n);
}
#undef TC_GEMM_CLONES

/// The accumulator storage of dot over input dtype D, and the widening of an input.
template <DType D>
using DotAcc = std::conditional_t<D == DType::F64, double,
                                  std::conditional_t<D == DType::I8, uint32_t, float>>;

template <DType D> DotAcc<D> widen(St<D> v) {
  if constexpr (kIsFloat<D>)
    return static_cast<DotAcc<D>>(toDouble<D>(v));
  else
    return static_cast<DotAcc<D>>(static_cast<int32_t>(v)); // int8 sign-extended, then wraps
}

void dotPoison(TileData &r, const TileData &a, const TileData &b, const TileData &acc,
               const Instr &in) {
  if (!a.hasPoison() && !b.hasPoison() && !acc.hasPoison())
    return;
  int64_t m = in.g1, kk = in.g2, n = in.g3;
  uint8_t *p = r.newPoison();
  for (int64_t bt = 0; bt < in.g0; ++bt) {
    std::vector<uint8_t> row(static_cast<size_t>(m), 0), col(static_cast<size_t>(n), 0);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t k = 0; k < kk; ++k)
        row[static_cast<size_t>(i)] |= a.isPoison(bt * m * kk + i * kk + k);
    for (int64_t k = 0; k < kk; ++k)
      for (int64_t j = 0; j < n; ++j)
        col[static_cast<size_t>(j)] |= b.isPoison(bt * kk * n + k * n + j);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        int64_t l = bt * m * n + i * n + j;
        p[l] = acc.isPoison(l) || row[static_cast<size_t>(i)] || col[static_cast<size_t>(j)];
      }
  }
}

template <DType D> bool runDot(Frame &f, const Instr &in) {
  using A = DotAcc<D>;
  const TileData &a = *f.get(in.in[0]), &b = *f.get(in.in[1]), &acc = *f.get(in.in[2]);
  int64_t m = in.g1, kk = in.g2, n = in.g3;
  TilePtr r = copyTile(acc);
  r->setPoison(nullptr);
  std::vector<A> wa, wb;
  const A *pa, *pb;
  if constexpr (std::is_same_v<St<D>, A>) {
    pa = a.as<A>();
    pb = b.as<A>();
  } else {
    const St<D> *xa = a.as<St<D>>(), *xb = b.as<St<D>>();
    wa.resize(static_cast<size_t>(a.size()));
    wb.resize(static_cast<size_t>(b.size()));
    mapLanes(wa.data(), a.size(), [&](int64_t i) { return widen<D>(xa[i]); });
    mapLanes(wb.data(), b.size(), [&](int64_t i) { return widen<D>(xb[i]); });
    pa = wa.data();
    pb = wb.data();
  }
  for (int64_t bt = 0; bt < in.g0; ++bt)
    gemm(pa + bt * m * kk, pb + bt * kk * n, r->as<A>() + bt * m * n, m, kk, n);
  dotPoison(*r, a, b, acc, in);
  f.set(in.out[0], std::move(r));
  return true;
}

} // namespace

bool prepareReduce(const ir::Op &op, Instr &in, std::string &error) {
  const ir::Type &t = op.operand(0)->type();
  const ir::AttrValue *kindAttr = op.attr("kind"), *axisAttr = op.attr("axis");
  if (!kindAttr || !axisAttr || !std::holds_alternative<std::string>(*kindAttr) ||
      !std::holds_alternative<int64_t>(*axisAttr) || t.isPtr) {
    error = "malformed reduce";
    return false;
  }
  static const std::pair<const char *, RedKind> kKinds[] = {
      {"add", RedKind::Add},       {"max", RedKind::Max},       {"min", RedKind::Min},
      {"argmax", RedKind::ArgMax}, {"argmin", RedKind::ArgMin}, {"and", RedKind::And},
      {"or", RedKind::Or},         {"xor", RedKind::Xor}};
  const std::string &kind = std::get<std::string>(*kindAttr);
  int64_t axis = std::get<int64_t>(*axisAttr);
  const RedKind *k = nullptr;
  for (const auto &e : kKinds)
    if (kind == e.first)
      k = &e.second;
  if (!k || axis < 0 || static_cast<size_t>(axis) >= t.rank()) {
    error = "malformed reduce";
    return false;
  }
  in.g0 = in.g1 = in.g2 = 1;
  for (size_t d = 0; d < t.rank(); ++d)
    (static_cast<int64_t>(d) < axis    ? in.g0
     : static_cast<int64_t>(d) == axis ? in.g1
                                       : in.g2) *= t.shape[d];
  in.dtype = t.dtype;
  in.run = pickReduce(*k, t.dtype);
  if (!in.run)
    error = "reduce '" + kind + "' is not defined on " + t.str();
  return in.run != nullptr;
}

bool prepareDot(const ir::Op &op, Instr &in, std::string &error) {
  const ir::Type &a = op.operand(0)->type(), &b = op.operand(1)->type();
  const ir::Type &acc = op.operand(2)->type(), &res = op.result()->type();
  size_t r = a.rank();
  bool ok = !a.isPtr && a.dtype == b.dtype && (r == 2 || r == 3) && b.rank() == r &&
            a.shape[r - 1] == b.shape[r - 2] && (r == 2 || a.shape[0] == b.shape[0]) && acc == res;
  DType want = a.dtype == DType::F64 ? DType::F64 : a.dtype == DType::I8 ? DType::I32 : DType::F32;
  if (!ok || res.dtype != want || res.shape.size() != r) {
    error = "malformed dot";
    return false;
  }
  in.g0 = r == 3 ? a.shape[0] : 1;
  in.g1 = a.shape[r - 2];
  in.g2 = a.shape[r - 1];
  in.g3 = b.shape[r - 1];
  in.dtype = a.dtype;
  switch (a.dtype) {
  case DType::F16: in.run = &runDot<DType::F16>; break;
  case DType::BF16: in.run = &runDot<DType::BF16>; break;
  case DType::F32: in.run = &runDot<DType::F32>; break;
  case DType::F64: in.run = &runDot<DType::F64>; break;
  case DType::I8: in.run = &runDot<DType::I8>; break;
  default:
    error = "dot of " + std::string(irName(a.dtype)) + " operands is not supported";
    return false;
  }
  return true;
}

} // namespace tc::interp
