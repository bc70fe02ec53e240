// Elementwise ops: unary, binary, compares, addptr, fma, select, cast, bitcast.
// Each op is one loop template instantiated per dtype; the handler is chosen
// once at preparation. Poison: a result lane is poison when an operand lane
// is (select: the condition's lane or the chosen operand's lane). Trapping
// ops (integer div/rem, shifts, float->int casts) skip poison lanes.
#include "interp/Interpreter.h"

#include "interp/ExecElem.h"

#include <bit>
#include <cstring>

namespace tc::interp {

namespace {

template <DType D> std::string fmt(St<D> v) {
  return formatElement(ir::Type::scalar(D), &v);
}

TrapKind trapOf(num::Status s) {
  switch (s) {
  case num::Status::DivisionByZero: return TrapKind::DivisionByZero;
  case num::Status::DivisionOverflow: return TrapKind::DivisionOverflow;
  case num::Status::ShiftOutOfRange: return TrapKind::ShiftOutOfRange;
  case num::Status::FloatToIntOutOfRange: return TrapKind::FloatToIntOutOfRange;
  case num::Status::Ok: break;
  }
  return TrapKind::InvalidLaunch;
}

//===----------------------------------------------------------------------===//
// Scalar rules as functors (ok<D>: the dtypes the rule is defined for)
//===----------------------------------------------------------------------===//

/// Whether every lane of `t` holds the same defined element of dtype D (sets it).
template <DType D> bool uniformElement(const TileData &t, St<D> &v) {
  uint64_t bits;
  if (!t.uniform(bits))
    return false;
  std::memcpy(&v, &bits, sizeof(v)); // little-endian host: the low bytes
  return true;
}

/// How an integer rule maps affine operands (Tile.h) to an affine result:
/// add, sub and mul (one operand uniform) are ring operations modulo 2^64,
/// so they commute with keeping the low bits; the bitwise ops need both
/// operands uniform. None: the rule has no affine form.
enum class AffineOp { None, Add, Sub, Mul, And, Or, Xor };

template <typename F, typename = void> struct AffineOf {
  static constexpr AffineOp value = AffineOp::None;
};
template <typename F> struct AffineOf<F, std::void_t<decltype(F::kAffine)>> {
  static constexpr AffineOp value = F::kAffine;
};

/// The affine form of `x op y` for integer tiles of `elemSize` bytes, if any.
bool affineBinary(AffineOp op, const TileData &x, const TileData &y, Affine &r) {
  Affine a, b;
  if (op == AffineOp::None || !x.affine(a) || !y.affine(b))
    return false;
  uint64_t ua = 0, ub = 0;
  bool ka = x.uniform(ua), kb = y.uniform(ub);
  switch (op) {
  case AffineOp::Add: r = {a.base + b.base, a.step + b.step}; return true;
  case AffineOp::Sub: r = {a.base - b.base, a.step - b.step}; return true;
  case AffineOp::Mul:
    if (kb)
      r = {a.base * ub, a.step * ub};
    else if (ka)
      r = {ua * b.base, ua * b.step};
    else
      return false;
    return true;
  case AffineOp::And: r = {ua & ub, 0}; return ka && kb;
  case AffineOp::Or: r = {ua | ub, 0}; return ka && kb;
  case AffineOp::Xor: r = {ua ^ ub, 0}; return ka && kb;
  case AffineOp::None: break;
  }
  return false;
}

struct NegF {
  template <DType D> static constexpr bool ok = !kIsBool<D>;
  template <DType D> static St<D> apply(St<D> a) {
    if constexpr (kIsFloat<D>)
      return floatNegT<D>(a);
    else
      return wrapNeg<D>(a);
  }
};
struct NotF {
  template <DType D> static constexpr bool ok = !kIsFloat<D>;
  template <DType D> static St<D> apply(St<D> a) { return notT<D>(a); }
};
/// Integers wrap: abs(INT_MIN) == INT_MIN. Floats clear the sign bit.
struct AbsF {
  template <DType D> static constexpr bool ok = !kIsBool<D>;
  template <DType D> static St<D> apply(St<D> a) { return absT<D>(a); }
};
template <num::MathFn Fn> struct MathF {
  static constexpr bool kMath = true;
  template <DType D> static constexpr bool ok = kIsFloat<D>;
  template <DType D> static St<D> apply(St<D> a) { return floatMathT<D>(Fn, a); }
  template <DType D> static St<D> applyPlain(St<D> a) { return floatMathPlainT<D>(Fn, a); }
};

struct AddF {
  static constexpr AffineOp kAffine = AffineOp::Add;
  template <DType D> static constexpr bool ok = !kIsBool<D>;
  template <DType D> static St<D> apply(St<D> a, St<D> b) {
    if constexpr (kIsFloat<D>)
      return floatAddT<D>(a, b);
    else
      return wrapAdd<D>(a, b);
  }
};
struct SubF {
  static constexpr AffineOp kAffine = AffineOp::Sub;
  template <DType D> static constexpr bool ok = !kIsBool<D>;
  template <DType D> static St<D> apply(St<D> a, St<D> b) {
    if constexpr (kIsFloat<D>)
      return floatSubT<D>(a, b);
    else
      return wrapSub<D>(a, b);
  }
};
struct MulF {
  static constexpr AffineOp kAffine = AffineOp::Mul;
  template <DType D> static constexpr bool ok = !kIsBool<D>;
  template <DType D> static St<D> apply(St<D> a, St<D> b) {
    if constexpr (kIsFloat<D>)
      return floatMulT<D>(a, b);
    else
      return wrapMul<D>(a, b);
  }
};
struct FDivF {
  template <DType D> static constexpr bool ok = kIsFloat<D>;
  template <DType D> static St<D> apply(St<D> a, St<D> b) { return floatDivT<D>(a, b); }
};
struct FRemF {
  template <DType D> static constexpr bool ok = kIsFloat<D>;
  template <DType D> static St<D> apply(St<D> a, St<D> b) { return floatRemT<D>(a, b); }
};
struct AndF {
  static constexpr AffineOp kAffine = AffineOp::And;
  template <DType D> static constexpr bool ok = !kIsFloat<D>;
  template <DType D> static St<D> apply(St<D> a, St<D> b) { return static_cast<St<D>>(a & b); }
};
struct OrF {
  static constexpr AffineOp kAffine = AffineOp::Or;
  template <DType D> static constexpr bool ok = !kIsFloat<D>;
  template <DType D> static St<D> apply(St<D> a, St<D> b) { return static_cast<St<D>>(a | b); }
};
struct XorF {
  static constexpr AffineOp kAffine = AffineOp::Xor;
  template <DType D> static constexpr bool ok = !kIsFloat<D>;
  template <DType D> static St<D> apply(St<D> a, St<D> b) { return static_cast<St<D>>(a ^ b); }
};
struct MinF {
  template <DType D> static constexpr bool ok = true;
  template <DType D> static St<D> apply(St<D> a, St<D> b) { return minT<D>(a, b); }
};
struct MaxF {
  template <DType D> static constexpr bool ok = true;
  template <DType D> static St<D> apply(St<D> a, St<D> b) { return maxT<D>(a, b); }
};
struct MulHiF {
  template <DType D> static constexpr bool ok = kIsInt<D>;
  template <DType D> static St<D> apply(St<D> a, St<D> b) { return intMulHiT<D>(a, b); }
};

// Trapping integer rules: apply(a, b, out) -> Status; message(a, b) names the values.
struct IDivF {
  template <DType D> static constexpr bool ok = kIsInt<D>;
  template <DType D> static num::Status apply(St<D> a, St<D> b, St<D> &o) {
    return intDivT<D>(a, b, o);
  }
  template <DType D> static std::string message(St<D> a, St<D> b, num::Status s) {
    std::string what = s == num::Status::DivisionByZero ? "integer division by zero"
                                                        : "integer division overflows";
    return what + ": " + fmt<D>(a) + " / " + fmt<D>(b) + " (" + std::string(conformanceName(D)) +
           ")";
  }
};
struct IRemF {
  template <DType D> static constexpr bool ok = kIsInt<D>;
  template <DType D> static num::Status apply(St<D> a, St<D> b, St<D> &o) {
    return intRemT<D>(a, b, o);
  }
  template <DType D> static std::string message(St<D> a, St<D> b, num::Status s) {
    std::string what = s == num::Status::DivisionByZero ? "integer remainder by zero"
                                                        : "integer remainder overflows";
    return what + ": " + fmt<D>(a) + " % " + fmt<D>(b) + " (" + std::string(conformanceName(D)) +
           ")";
  }
};
template <DType D> std::string shiftMessage(St<D> a, St<D> b, const char *op) {
  return "shift count " + fmt<D>(b) + " is out of range for " + std::string(conformanceName(D)) +
         " (0 to " + std::to_string(kBits<D> - 1) + "): " + fmt<D>(a) + " " + op + " " + fmt<D>(b);
}
struct ShlF {
  template <DType D> static constexpr bool ok = kIsInt<D>;
  template <DType D> static num::Status apply(St<D> a, St<D> b, St<D> &o) {
    return intShlT<D>(a, b, o);
  }
  template <DType D> static std::string message(St<D> a, St<D> b, num::Status) {
    return shiftMessage<D>(a, b, "<<");
  }
};
struct ShrF {
  template <DType D> static constexpr bool ok = kIsInt<D>;
  template <DType D> static num::Status apply(St<D> a, St<D> b, St<D> &o) {
    return intShrT<D>(a, b, o);
  }
  template <DType D> static std::string message(St<D> a, St<D> b, num::Status) {
    return shiftMessage<D>(a, b, ">>");
  }
};

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

template <DType D, typename F> bool unaryLoop(Frame &f, const Instr &in) {
  const TileData &a = *f.get(in.in[0]);
  TilePtr r = makeTile(in.n, sizeof(St<D>));
  const St<D> *x = a.as<St<D>>();
  St<D> *o = r->as<St<D>>();
  bool plain = false;
  if constexpr (requires { F::kMath; })
    plain = tlsMathNudge == nullptr; // checked once for the tile, not per lane
  if constexpr (requires { F::kMath; }) {
    if (plain)
      mapLanes(o, in.n, [&](int64_t i) { return F::template applyPlain<D>(x[i]); });
  }
  if (!plain)
    mapLanes(o, in.n, [&](int64_t i) { return F::template apply<D>(x[i]); });
  mergePoison(*r, a);
  f.set(in.out[0], std::move(r));
  return true;
}

template <DType D, typename F> bool binaryLoop(Frame &f, const Instr &in) {
  const TileData &a = *f.get(in.in[0]), &b = *f.get(in.in[1]);
  if constexpr (kIsInt<D> && AffineOf<F>::value != AffineOp::None) {
    Affine ar;
    if (affineBinary(AffineOf<F>::value, a, b, ar)) {
      f.set(in.out[0], makeAffineTile(in.n, sizeof(St<D>), ar));
      return true;
    }
  }
  TilePtr r = makeTile(in.n, sizeof(St<D>));
  St<D> *o = r->as<St<D>>();
  St<D> u;
  if (uniformElement<D>(b, u)) { // a splat: not written out
    const St<D> *x = a.as<St<D>>();
    mapLanes(o, in.n, [&](int64_t i) { return F::template apply<D>(x[i], u); });
  } else if (uniformElement<D>(a, u)) {
    const St<D> *y = b.as<St<D>>();
    mapLanes(o, in.n, [&](int64_t i) { return F::template apply<D>(u, y[i]); });
  } else {
    const St<D> *x = a.as<St<D>>(), *y = b.as<St<D>>();
    mapLanes(o, in.n, [&](int64_t i) { return F::template apply<D>(x[i], y[i]); });
  }
  mergePoison(*r, a, b);
  f.set(in.out[0], std::move(r));
  return true;
}

/// binaryLoop's lanes written to `out` (IntoFn): the same values, no tile.
template <DType D, typename F>
void binaryInto(const TileData &a, const TileData &b, void *out, int64_t n) {
  St<D> *o = static_cast<St<D> *>(out);
  St<D> u;
  if (uniformElement<D>(b, u)) {
    const St<D> *x = a.as<St<D>>();
    mapLanes(o, n, [&](int64_t i) { return F::template apply<D>(x[i], u); });
  } else if (uniformElement<D>(a, u)) {
    const St<D> *y = b.as<St<D>>();
    mapLanes(o, n, [&](int64_t i) { return F::template apply<D>(u, y[i]); });
  } else {
    const St<D> *x = a.as<St<D>>(), *y = b.as<St<D>>();
    mapLanes(o, n, [&](int64_t i) { return F::template apply<D>(x[i], y[i]); });
  }
}

template <DType D, typename F> bool binaryTrapLoop(Frame &f, const Instr &in) {
  const TileData &a = *f.get(in.in[0]), &b = *f.get(in.in[1]);
  TilePtr r = makeTile(in.n, sizeof(St<D>));
  mergePoison(*r, a, b);
  const St<D> *x = a.as<St<D>>(), *y = b.as<St<D>>();
  St<D> *o = r->as<St<D>>();
  const uint8_t *p = r->poison();
  for (int64_t i = 0; i < in.n; ++i) {
    if (p && p[i]) {
      o[i] = 0;
      continue;
    }
    num::Status s = F::template apply<D>(x[i], y[i], o[i]);
    if (s != num::Status::Ok)
      return f.fail(trapOf(s), in, i, F::template message<D>(x[i], y[i], s));
  }
  f.set(in.out[0], std::move(r));
  return true;
}

/// Whether `a C b` has one value in every lane (sets it), found from the
/// operands' affine forms alone: both uniform, or integers whose difference
/// is a linear function of the lane that has the same sign at both ends.
template <DType D, num::Cmp C>
bool compareUniform(const TileData &a, const TileData &b, int64_t n, bool &result) {
  uint64_t ua, ub;
  if (a.uniform(ua) && b.uniform(ub)) {
    St<D> x, y;
    std::memcpy(&x, &ua, sizeof(x)); // little-endian host: the low bytes
    std::memcpy(&y, &ub, sizeof(y));
    result = compareT<D>(C, x, y);
    return true;
  }
  if constexpr (kIsInt<D>) {
    __int128 a0, as, b0, bs;
    if (!exactLinear<D>(a, n, a0, as) || !exactLinear<D>(b, n, b0, bs))
      return false;
    __int128 d0 = a0 - b0, d1 = d0 + static_cast<__int128>(n - 1) * (as - bs);
    auto holds = [](__int128 d) {
      switch (C) {
      case num::Cmp::Eq: return d == 0;
      case num::Cmp::Ne: return d != 0;
      case num::Cmp::Lt: return d < 0;
      case num::Cmp::Le: return d <= 0;
      case num::Cmp::Gt: return d > 0;
      case num::Cmp::Ge: return d >= 0;
      }
      return false;
    };
    // d is linear in the lane: its sign is monotone, so a predicate on the
    // sign that holds (or fails) at both ends does so in between; == and !=
    // need d constant or of one strict sign at both ends.
    bool eqLike = C == num::Cmp::Eq || C == num::Cmp::Ne;
    if (holds(d0) != holds(d1))
      return false;
    if (eqLike && d0 != d1 && !((d0 < 0 && d1 < 0) || (d0 > 0 && d1 > 0)))
      return false;
    result = holds(d0);
    return true;
  }
  return false;
}

template <DType D, num::Cmp C> bool compareLoop(Frame &f, const Instr &in) {
  const TileData &a = *f.get(in.in[0]), &b = *f.get(in.in[1]);
  bool uniform = false;
  if (compareUniform<D, C>(a, b, in.n, uniform)) {
    f.set(in.out[0], makeAffineTile(in.n, 1, Affine{uniform ? 1u : 0u, 0}));
    return true;
  }
  TilePtr r = makeTile(in.n, 1);
  const St<D> *x = a.as<St<D>>(), *y = b.as<St<D>>();
  uint8_t *o = r->as<uint8_t>();
  mapLanes(o, in.n, [&](int64_t i) -> uint8_t { return compareT<D>(C, x[i], y[i]); });
  mergePoison(*r, a, b);
  f.set(in.out[0], std::move(r));
  return true;
}

/// addptr: address + offset * sizeof(pointee), wrapping at 2^64; the offset
/// extends by its own signedness. in.g0 holds log2 of the pointee size.
template <DType D> bool addPtrLoop(Frame &f, const Instr &in) {
  const TileData &p = *f.get(in.in[0]), &off = *f.get(in.in[1]);
  Affine pa;
  __int128 o0, os;
  if (p.affine(pa) && exactLinear<D>(off, in.n, o0, os)) {
    uint64_t scale = uint64_t(1) << in.g0; // the offset's lanes extend exactly: linear mod 2^64
    f.set(in.out[0], makeAffineTile(in.n, 8,
                                    Affine{pa.base + static_cast<uint64_t>(o0) * scale,
                                           pa.step + static_cast<uint64_t>(os) * scale}));
    return true;
  }
  TilePtr r = makeTile(in.n, 8);
  const uint64_t *a = p.as<uint64_t>();
  const St<D> *x = off.as<St<D>>();
  uint64_t *o = r->as<uint64_t>();
  unsigned shift = static_cast<unsigned>(in.g0);
  mapLanes(o, in.n, [&](int64_t i) {
    return a[i] + (static_cast<uint64_t>(static_cast<int64_t>(x[i])) << shift);
  });
  mergePoison(*r, p, off);
  f.set(in.out[0], std::move(r));
  return true;
}

template <DType D> bool fmaLoop(Frame &f, const Instr &in) {
  const TileData &a = *f.get(in.in[0]), &b = *f.get(in.in[1]), &c = *f.get(in.in[2]);
  TilePtr r = makeTile(in.n, sizeof(St<D>));
  const St<D> *x = a.as<St<D>>(), *y = b.as<St<D>>(), *z = c.as<St<D>>();
  St<D> *o = r->as<St<D>>();
  mapLanes(o, in.n, [&](int64_t i) { return floatFmaT<D>(x[i], y[i], z[i]); });
  mergePoison(*r, a, b, c);
  f.set(in.out[0], std::move(r));
  return true;
}

/// select (cond, a, b) on raw elements of type T.
template <typename T> bool selectLoop(Frame &f, const Instr &in) {
  const TileData &c = *f.get(in.in[0]), &a = *f.get(in.in[1]), &b = *f.get(in.in[2]);
  uint64_t cond;
  if (c.uniform(cond)) { // a defined condition, the same in every lane: the chosen operand
    f.set(in.out[0], f.get(in.in[cond ? 1 : 2]));
    return true;
  }
  TilePtr r = makeTile(in.n, sizeof(T));
  const uint8_t *m = c.as<uint8_t>();
  const T *x = a.as<T>(), *y = b.as<T>();
  T *o = r->as<T>();
  mapLanes(o, in.n, [&](int64_t i) { return m[i] ? x[i] : y[i]; });
  if (c.hasPoison() || a.hasPoison() || b.hasPoison()) {
    uint8_t *p = r->newPoison();
    for (int64_t i = 0; i < in.n; ++i)
      p[i] = c.isPoison(i) || (m[i] ? a.isPoison(i) : b.isPoison(i));
    r->normalizePoison();
  }
  f.set(in.out[0], std::move(r));
  return true;
}

template <DType F, DType T> bool castLoop(Frame &f, const Instr &in) {
  const TileData &a = *f.get(in.in[0]);
  if constexpr (kIsInt<F> && kIsInt<T>) { // exact lanes first + i * step: keep the low bits
    __int128 x0, xs;
    if (exactLinear<F>(a, in.n, x0, xs)) {
      f.set(in.out[0], makeAffineTile(in.n, sizeof(St<T>),
                                      Affine{static_cast<uint64_t>(x0), static_cast<uint64_t>(xs)}));
      return true;
    }
  }
  TilePtr r = makeTile(in.n, sizeof(St<T>));
  const St<F> *x = a.as<St<F>>();
  St<T> *o = r->as<St<T>>();
  if constexpr (kIsFloat<F> && kIsInt<T>) { // the only conversions that trap
    const uint8_t *p = a.poison();
    for (int64_t i = 0; i < in.n; ++i) {
      if (p && p[i]) {
        o[i] = 0;
        continue;
      }
      if (convertT<F, T>(x[i], o[i]) != num::Status::Ok)
        return f.fail(TrapKind::FloatToIntOutOfRange, in, i,
                      "cannot convert " + fmt<F>(x[i]) + " (" + std::string(conformanceName(F)) +
                          ") to " + std::string(conformanceName(T)) +
                          (isNaN<F>(x[i]) ? "" : ": the value is out of range"));
    }
  } else {
    mapLanes(o, in.n, [&](int64_t i) {
      St<T> v{};
      convertT<F, T>(x[i], v);
      return v;
    });
  }
  mergePoison(*r, a);
  f.set(in.out[0], std::move(r));
  return true;
}

/// Shares the operand's tile (reshape, expand_dims, pointer casts).
bool shareLoop(Frame &f, const Instr &in) {
  f.set(in.out[0], f.get(in.in[0]));
  return true;
}

/// bitcast: the same bytes under another type.
bool bitcastLoop(Frame &f, const Instr &in) {
  f.set(in.out[0], copyTile(*f.get(in.in[0])));
  return true;
}

//===----------------------------------------------------------------------===//
// Handler choice
//===----------------------------------------------------------------------===//

template <typename F> Handler pickUnary(DType t) {
  return dispatchDType(t, [](auto d) -> Handler {
    constexpr DType D = decltype(d)::value;
    if constexpr (F::template ok<D>)
      return &unaryLoop<D, F>;
    return nullptr;
  });
}

template <typename F> Handler pickBinary(DType t) {
  return dispatchDType(t, [](auto d) -> Handler {
    constexpr DType D = decltype(d)::value;
    if constexpr (F::template ok<D>)
      return &binaryLoop<D, F>;
    return nullptr;
  });
}

template <typename F> IntoFn pickInto(DType t) {
  return dispatchDType(t, [](auto d) -> IntoFn {
    constexpr DType D = decltype(d)::value;
    if constexpr (F::template ok<D>)
      return &binaryInto<D, F>;
    return nullptr;
  });
}

/// The IntoFn of a binary op that never traps (the ops binaryLoop runs).
IntoFn selectInto(ir::OpKind k, const ir::Type &t) {
  using K = ir::OpKind;
  DType d = t.dtype;
  if (t.isPtr)
    return nullptr;
  switch (k) {
  case K::Add: return pickInto<AddF>(d);
  case K::Sub: return pickInto<SubF>(d);
  case K::Mul: return pickInto<MulF>(d);
  case K::Div: return isFloat(d) ? pickInto<FDivF>(d) : nullptr;
  case K::Rem: return isFloat(d) ? pickInto<FRemF>(d) : nullptr;
  case K::And: return pickInto<AndF>(d);
  case K::Or: return pickInto<OrF>(d);
  case K::Xor: return pickInto<XorF>(d);
  case K::Min: return pickInto<MinF>(d);
  case K::Max: return pickInto<MaxF>(d);
  case K::UMulHi: return pickInto<MulHiF>(d);
  default: return nullptr;
  }
}

template <typename F> Handler pickTrap(DType t) {
  return dispatchDType(t, [](auto d) -> Handler {
    constexpr DType D = decltype(d)::value;
    if constexpr (F::template ok<D>)
      return &binaryTrapLoop<D, F>;
    return nullptr;
  });
}

template <num::Cmp C> Handler pickCompare(DType t) {
  return dispatchDType(t, [](auto d) -> Handler { return &compareLoop<decltype(d)::value, C>; });
}

Handler pickAddPtr(DType offset) {
  return dispatchDType(offset, [](auto d) -> Handler {
    constexpr DType D = decltype(d)::value;
    if constexpr (kIsInt<D>)
      return &addPtrLoop<D>;
    return nullptr;
  });
}

Handler pickFma(DType t) {
  return dispatchDType(t, [](auto d) -> Handler {
    constexpr DType D = decltype(d)::value;
    if constexpr (kIsFloat<D>)
      return &fmaLoop<D>;
    return nullptr;
  });
}

Handler pickSelect(unsigned elemSize) {
  switch (elemSize) {
  case 1: return &selectLoop<uint8_t>;
  case 2: return &selectLoop<uint16_t>;
  case 4: return &selectLoop<uint32_t>;
  case 8: return &selectLoop<uint64_t>;
  }
  return nullptr;
}

/// The handler of an elementwise op whose operands have element type `t`.
Handler selectElementwise(ir::OpKind k, const ir::Type &t) {
  using K = ir::OpKind;
  DType d = t.dtype;
  bool fl = isFloat(d);
  if (t.isPtr && k != K::Select && k != K::CmpEq && k != K::CmpNe && k != K::CmpLt &&
      k != K::CmpLe && k != K::CmpGt && k != K::CmpGe)
    return nullptr;
  DType cd = t.isPtr ? DType::U64 : d; // pointers compare as addresses
  switch (k) {
  case K::Neg: return pickUnary<NegF>(d);
  case K::Not: return pickUnary<NotF>(d);
  case K::Abs: return pickUnary<AbsF>(d);
  case K::Exp: return pickUnary<MathF<num::MathFn::Exp>>(d);
  case K::Exp2: return pickUnary<MathF<num::MathFn::Exp2>>(d);
  case K::Log: return pickUnary<MathF<num::MathFn::Log>>(d);
  case K::Log2: return pickUnary<MathF<num::MathFn::Log2>>(d);
  case K::Sqrt: return pickUnary<MathF<num::MathFn::Sqrt>>(d);
  case K::Rsqrt: return pickUnary<MathF<num::MathFn::Rsqrt>>(d);
  case K::Sin: return pickUnary<MathF<num::MathFn::Sin>>(d);
  case K::Cos: return pickUnary<MathF<num::MathFn::Cos>>(d);
  case K::Floor: return pickUnary<MathF<num::MathFn::Floor>>(d);
  case K::Ceil: return pickUnary<MathF<num::MathFn::Ceil>>(d);
  case K::Add: return pickBinary<AddF>(d);
  case K::Sub: return pickBinary<SubF>(d);
  case K::Mul: return pickBinary<MulF>(d);
  case K::Div: return fl ? pickBinary<FDivF>(d) : pickTrap<IDivF>(d);
  case K::Rem: return fl ? pickBinary<FRemF>(d) : pickTrap<IRemF>(d);
  case K::And: return pickBinary<AndF>(d);
  case K::Or: return pickBinary<OrF>(d);
  case K::Xor: return pickBinary<XorF>(d);
  case K::Shl: return pickTrap<ShlF>(d);
  case K::Shr: return pickTrap<ShrF>(d);
  case K::Min: return pickBinary<MinF>(d);
  case K::Max: return pickBinary<MaxF>(d);
  case K::UMulHi: return pickBinary<MulHiF>(d);
  case K::CmpEq: return pickCompare<num::Cmp::Eq>(cd);
  case K::CmpNe: return pickCompare<num::Cmp::Ne>(cd);
  case K::CmpLt: return pickCompare<num::Cmp::Lt>(cd);
  case K::CmpLe: return pickCompare<num::Cmp::Le>(cd);
  case K::CmpGt: return pickCompare<num::Cmp::Gt>(cd);
  case K::CmpGe: return pickCompare<num::Cmp::Ge>(cd);
  case K::Fma: return pickFma(d);
  case K::Select: return pickSelect(elemSizeOf(t));
  case K::AddPtr: // chosen by the offset's dtype in prepareElementwise
  case K::Constant:
  case K::Range:
  case K::GetProgramId:
  case K::GetNumPrograms:
  case K::Splat:
  case K::Broadcast:
  case K::ExpandDims:
  case K::Reshape:
  case K::Trans:
  case K::ExtractSlice:
  case K::InsertSlice:
  case K::Undef:
  case K::Cast:
  case K::Bitcast:
  case K::Reduce:
  case K::Dot:
  case K::Load:
  case K::Store:
  case K::AtomicRMW:
  case K::AtomicCas:
  case K::Print:
  case K::Assert:
  case K::DebugBarrier:
  case K::For:
  case K::If:
  case K::While:
  case K::Yield:
  case K::Condition:
  case K::Return: return nullptr;
  }
  return nullptr;
}

} // namespace

bool prepareElementwise(const ir::Op &op, Instr &in, std::string &error) {
  if (op.kind() == ir::OpKind::AddPtr) {
    in.g0 = std::countr_zero(byteSize(op.result()->type().dtype)); // sizes are powers of two
    in.run = pickAddPtr(op.operand(1)->type().dtype);
  } else {
    const ir::Type &t = op.operand(op.kind() == ir::OpKind::Select ? 1 : 0)->type();
    in.run = selectElementwise(op.kind(), t);
    if (in.run && op.numOperands() == 2 && op.result()->type() == t)
      in.into = selectInto(op.kind(), t);
  }
  if (!in.run)
    error = "'" + std::string(op.name()) + "' is not defined on " + op.operand(0)->type().str();
  return in.run != nullptr;
}

bool deferredOp(Frame &f, const Instr &in) {
  // --trace prints this op's value right after it: computed here, not fused.
  return !f.launch.opts.trace || in.inner(f, in);
}

bool prepareCast(const ir::Op &op, Instr &in, std::string &error) {
  const ir::Type &from = op.operand(0)->type(), &to = op.result()->type();
  if (op.kind() == ir::OpKind::Bitcast) {
    if (elemSizeOf(from) != elemSizeOf(to) || from.shape != to.shape) {
      error = "bitcast from " + from.str() + " to " + to.str() + " changes the size";
      return false;
    }
    in.run = from.dtype == to.dtype && from.isPtr == to.isPtr ? shareLoop : bitcastLoop;
    return true;
  }
  if (from.isPtr || to.isPtr) {
    in.run = from.isPtr && to.isPtr ? shareLoop : nullptr;
  } else {
    in.run = dispatchDType(from.dtype, [&](auto f) {
      return dispatchDType(to.dtype, [](auto t) -> Handler {
        return &castLoop<decltype(f)::value, decltype(t)::value>;
      });
    });
  }
  if (!in.run)
    error = "cannot cast " + from.str() + " to " + to.str();
  return in.run != nullptr;
}

} // namespace tc::interp
