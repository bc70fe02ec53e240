// Numerics.h on raw bits: each function picks the element dtype once and runs
// the typed rule of support/ScalarRules.h, the same code the tile engine runs.
#include "support/Numerics.h"

#include "support/ScalarRules.h"

#include <cassert>

namespace tc::num {

template <DType D> using DC = std::integral_constant<DType, D>;

Status convert(DType from, uint64_t bits, DType to, uint64_t &out) {
  return dispatchDType(from, [&](auto f) {
    constexpr DType F = decltype(f)::value;
    return dispatchDType(to, [&](auto t) {
      constexpr DType T = decltype(t)::value;
      St<T> r{};
      Status s = convertT<F, T>(fromRaw<F>(bits), r);
      out = s == Status::Ok ? toRaw<T>(r) : 0;
      return s;
    });
  });
}

/// Runs an integer rule over the value of `t`; bool runs as a 1-bit integer.
template <typename Fn> uint64_t intOp(DType t, Fn &&fn) {
  return dispatchDType(t, [&](auto d) -> uint64_t {
    constexpr DType D = decltype(d)::value;
    if constexpr (kIsInt<D>)
      return fn(d);
    assert(false && "integer operation on a non-integer dtype");
    return 0;
  });
}

/// Runs a rule defined on integers and bool over the value of `t`.
template <typename Fn> uint64_t intOpOrBool(DType t, Fn &&fn) {
  return dispatchDType(t, [&](auto d) -> uint64_t {
    constexpr DType D = decltype(d)::value;
    if constexpr (!kIsFloat<D>)
      return fn(d);
    assert(false && "bitwise operation on a float dtype");
    return 0;
  });
}

uint64_t intAdd(DType t, uint64_t a, uint64_t b) {
  if (t == DType::Bool)
    return wrapInt(t, intValue(t, a) + intValue(t, b));
  return intOp(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return toRaw<D>(wrapAdd<D>(fromRaw<D>(a), fromRaw<D>(b)));
  });
}

uint64_t intSub(DType t, uint64_t a, uint64_t b) {
  if (t == DType::Bool)
    return wrapInt(t, intValue(t, a) - intValue(t, b));
  return intOp(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return toRaw<D>(wrapSub<D>(fromRaw<D>(a), fromRaw<D>(b)));
  });
}

uint64_t intMul(DType t, uint64_t a, uint64_t b) {
  if (t == DType::Bool)
    return wrapInt(t, intValue(t, a) * intValue(t, b));
  return intOp(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return toRaw<D>(wrapMul<D>(fromRaw<D>(a), fromRaw<D>(b)));
  });
}

uint64_t intNeg(DType t, uint64_t a) {
  if (t == DType::Bool)
    return wrapInt(t, -intValue(t, a));
  return intOp(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return toRaw<D>(wrapNeg<D>(fromRaw<D>(a)));
  });
}

/// Runs a trapping integer rule `fn(a, b, out)` of dtype t.
template <typename Fn> Status intTrapOp(DType t, uint64_t a, uint64_t b, uint64_t &out, Fn &&fn) {
  Status s = Status::Ok;
  out = intOp(t, [&](auto d) -> uint64_t {
    constexpr DType D = decltype(d)::value;
    St<D> r{};
    s = fn(d, fromRaw<D>(a), fromRaw<D>(b), r);
    return s == Status::Ok ? toRaw<D>(r) : 0;
  });
  return s;
}

Status intDiv(DType t, uint64_t a, uint64_t b, uint64_t &out) {
  return intTrapOp(t, a, b, out, [](auto d, auto x, auto y, auto &r) {
    return intDivT<decltype(d)::value>(x, y, r);
  });
}

Status intRem(DType t, uint64_t a, uint64_t b, uint64_t &out) {
  return intTrapOp(t, a, b, out, [](auto d, auto x, auto y, auto &r) {
    return intRemT<decltype(d)::value>(x, y, r);
  });
}

Status intShl(DType t, uint64_t a, uint64_t b, uint64_t &out) {
  return intTrapOp(t, a, b, out, [](auto d, auto x, auto y, auto &r) {
    return intShlT<decltype(d)::value>(x, y, r);
  });
}

Status intShr(DType t, uint64_t a, uint64_t b, uint64_t &out) {
  return intTrapOp(t, a, b, out, [](auto d, auto x, auto y, auto &r) {
    return intShrT<decltype(d)::value>(x, y, r);
  });
}

uint64_t intMulHi(DType t, uint64_t a, uint64_t b) {
  return intOp(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return toRaw<D>(intMulHiT<D>(fromRaw<D>(a), fromRaw<D>(b)));
  });
}

/// Runs rule `fn(d)` of any dtype and returns its result's bits.
template <typename Fn> uint64_t anyOp(DType t, Fn &&fn) {
  return dispatchDType(t, [&](auto d) -> uint64_t { return toRaw<decltype(d)::value>(fn(d)); });
}

uint64_t bitAnd(DType t, uint64_t a, uint64_t b) {
  return intOpOrBool(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return toRaw<D>(static_cast<St<D>>(fromRaw<D>(a) & fromRaw<D>(b)));
  });
}

uint64_t bitOr(DType t, uint64_t a, uint64_t b) {
  return intOpOrBool(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return toRaw<D>(static_cast<St<D>>(fromRaw<D>(a) | fromRaw<D>(b)));
  });
}

uint64_t bitXor(DType t, uint64_t a, uint64_t b) {
  return intOpOrBool(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return toRaw<D>(static_cast<St<D>>(fromRaw<D>(a) ^ fromRaw<D>(b)));
  });
}

uint64_t bitNot(DType t, uint64_t a) {
  return intOpOrBool(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return toRaw<D>(notT<D>(fromRaw<D>(a)));
  });
}

uint64_t absOf(DType t, uint64_t a) {
  assert(t != DType::Bool && "abs of bool");
  return anyOp(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return absT<D>(fromRaw<D>(a));
  });
}

uint64_t minOf(DType t, uint64_t a, uint64_t b) {
  return anyOp(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return minT<D>(fromRaw<D>(a), fromRaw<D>(b));
  });
}

uint64_t maxOf(DType t, uint64_t a, uint64_t b) {
  return anyOp(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return maxT<D>(fromRaw<D>(a), fromRaw<D>(b));
  });
}

/// Runs a float rule over dtype t.
template <typename Fn> uint64_t floatOp(DType t, Fn &&fn) {
  return dispatchDType(t, [&](auto d) -> uint64_t {
    constexpr DType D = decltype(d)::value;
    if constexpr (kIsFloat<D>)
      return toRaw<D>(fn(d));
    assert(false && "float operation on a non-float dtype");
    return 0;
  });
}

#define TC_FLOAT_BINARY(NAME, RULE)                                                                \
  uint64_t NAME(DType t, uint64_t a, uint64_t b) {                                                 \
    return floatOp(t, [&](auto d) {                                                                \
      constexpr DType D = decltype(d)::value;                                                      \
      return RULE<D>(fromRaw<D>(a), fromRaw<D>(b));                                                \
    });                                                                                            \
  }
TC_FLOAT_BINARY(floatAdd, floatAddT)
TC_FLOAT_BINARY(floatSub, floatSubT)
TC_FLOAT_BINARY(floatMul, floatMulT)
TC_FLOAT_BINARY(floatDiv, floatDivT)
TC_FLOAT_BINARY(floatRem, floatRemT)
TC_FLOAT_BINARY(floatMax, floatMaxT)
TC_FLOAT_BINARY(floatMin, floatMinT)
#undef TC_FLOAT_BINARY

uint64_t floatNeg(DType t, uint64_t a) {
  return floatOp(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return floatNegT<D>(fromRaw<D>(a));
  });
}

uint64_t floatFma(DType t, uint64_t a, uint64_t b, uint64_t c) {
  return floatOp(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return floatFmaT<D>(fromRaw<D>(a), fromRaw<D>(b), fromRaw<D>(c));
  });
}

bool compare(DType t, Cmp c, uint64_t a, uint64_t b) {
  return dispatchDType(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return compareT<D>(c, fromRaw<D>(a), fromRaw<D>(b));
  });
}

uint64_t floatMath(DType t, MathFn f, uint64_t a) {
  return floatOp(t, [&](auto d) {
    constexpr DType D = decltype(d)::value;
    return floatMathT<D>(f, fromRaw<D>(a));
  });
}

} // namespace tc::num
