//===- Generator.cpp - Random well-typed, UB-free Triton-C kernels -------===//
#include "fuzz/Generator.h"

#include "runtime/Launch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <tuple>

namespace tc::fuzz {
namespace {

// The __multipleof claim the generator declares for a size or pitch of value
// v: the largest power of two up to 16 that divides it (a true claim).
int64_t multipleOfClaim(int64_t v) {
  int64_t claim = 1;
  while (claim < 16 && v % (2 * claim) == 0)
    claim *= 2;
  return claim;
}

/// An expression: its text and element type (its shape broadcasts to the tile).
struct Val {
  std::string text;
  DType type = DType::I32;
  // Computed from a function whose GPU result is only within ULP bounds of the
  // reference's (exp, log, sin, ...: docs/gpu-numerics.md). Such a value must not
  // reach an operation that is discontinuous (%, comparisons, bit ops,
  // floor/ceil, conversions to integers, argmax), or a legitimate one-ULP
  // difference would become an arbitrary one: the GPU comparison would report it.
  bool inexact = false;
};

// Sets `slot` to `value` when it goes out of scope (after the return value is built).
struct SetOnExit {
  bool &slot;
  bool value;
  ~SetOnExit() { slot = value; }
};

std::string lang(DType t) {
  return std::string(langName(t));
}
std::string conf(DType t) {
  return std::string(conformanceName(t));
}
bool isIntegral(DType t) {
  return isInt(t);
}

std::string join(const std::vector<std::string> &parts, const std::string &sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i)
    out += (i ? sep : "") + parts[i];
  return out;
}

// The value range inputs and constants stay in, per mode (see docs/fuzz.md).
double randomValue(DType t, bool smallInts, std::mt19937_64 &rng) {
  auto pick = [&](int lo, int hi) {
    return lo + static_cast<int>(rng() % static_cast<uint64_t>(hi - lo + 1));
  };
  if (isBool(t))
    return pick(0, 1);
  if (smallInts)
    return isUnsignedInt(t) ? pick(0, 4) : pick(-4, 4);
  if (isFloat(t))
    return pick(-8192, 8192) / 1024.0;
  return isUnsignedInt(t) ? pick(0, 200) : pick(-100, 100);
}

// IEEE edge values for general-mode float inputs: NaN, +inf, -inf, -0.0 and
// two subnormals of `t` (a quarter and three quarters of the smallest normal).
constexpr int kEdgeKinds = 6;
const char *const kEdgeNames[kEdgeKinds] = {"nan",      "inf",       "inf",
                                            "neg_zero", "subnormal", "subnormal"};
double edgeValue(DType t, int which) {
  switch (which) {
  case 0: return std::numeric_limits<double>::quiet_NaN();
  case 1: return std::numeric_limits<double>::infinity();
  case 2: return -std::numeric_limits<double>::infinity();
  case 3: return -0.0;
  }
  int minExp = t == DType::F16 ? -14 : t == DType::F64 ? -1022 : -126;
  return std::ldexp(which == 4 ? 0.25 : -0.75, minExp);
}

// The largest integer below which every integer is exact in float type `t`.
double exactIntLimit(DType t) {
  int mantissa = t == DType::F16 ? 11 : t == DType::BF16 ? 8 : t == DType::F32 ? 24 : 53;
  return std::ldexp(1.0, mantissa);
}

// `v` rounded to dtype `t` as the host array stores it (so JSON data is exact).
std::vector<double> exactValues(DType t, std::vector<double> vals) {
  HostArray a = HostArray::zeros(t, {static_cast<int64_t>(vals.size())});
  for (size_t i = 0; i < vals.size(); ++i) {
    a.setDouble(static_cast<int64_t>(i), vals[i]);
    vals[i] = a.getDouble(static_cast<int64_t>(i));
  }
  return vals;
}

// The result type of `@` on operands promoted to `t` (docs/semantics.md rule 11).
DType dotResult(DType t) {
  return t == DType::I8 ? DType::I32 : t == DType::F64 ? DType::F64 : DType::F32;
}

int log2Of(int v) {
  int e = 0;
  while ((1 << (e + 1)) <= v)
    ++e;
  return e;
}

/// How the result reaches the output.
enum class AtomicKind { None, Own, Collide, Cas };

/// Builds one kernel; every choice is drawn with `*gen` inside rc::gen::exec so
/// that RapidCheck can shrink it.
class Builder {
public:
  explicit Builder(const GenPolicy &p) : p_(p) {}
  FuzzKernel build();

private:
  const GenPolicy &p_;
  int rank_ = 1;
  bool poison_ = false, unmasked_ = false, smallInts_ = false, edges_ = false;
  uint64_t dataSeed_ = 0; // addBuffers' seed of the input data (also the scalar S's edge draw)
  bool divByS_ = false;   // a float `/` has the scalar S as its divisor
  AtomicKind atomic_ = AtomicKind::None;
  bool hotAtomic_ = false; // a colliding atomic with every lane on element 0 (atomic.collide.hot)
  bool storeOld_ = false; // atomics: the old values go to the output Z
  int shapeDraw_ = 0;     // build()'s shape draw (0..999; also picks math stores)
  std::vector<std::string> tileNames_, sizeNames_, rangeNames_; // per axis
  std::vector<int64_t> tile_, size_;                            // per axis
  std::vector<std::string> params_;
  std::vector<Val> tiles_;                  // full-shape variables
  std::vector<Val> leaves_;                 // scalars and broadcast reductions
  std::vector<Val> exprs_;                  // earlier expressions, repeated verbatim (CSE)
  std::vector<Val> loads_;                  // each input's load, repeated inside loops
  std::vector<Val> inputs_;                 // each input's name and dtype
  std::vector<std::string> reducedScalars_; // 1-D reductions (for data-dependent `if`)
  bool recording_ = true;                   // whether expr() remembers its results in exprs_
  bool lastInexact_ = false;                // Val::inexact of the last binary()/unary() result
  bool inHelper_ = false;            // generating a helper's body: only its parameters are in scope
  std::vector<std::string> helpers_; // helper functions, emitted before the kernel
  std::vector<std::string> body_;
  std::string pad_ = "  "; // line()'s indentation
  std::set<std::string> features_;
  int nextId_ = 0;

  bool coin(double prob);
  int range(int lo, int hi) { return *rc::gen::inRange(lo, hi + 1); }
  DType pickType();
  std::string shape() const { return "[" + join(tileNames_, ", ") + "]"; }
  std::string fresh(const char *prefix) { return prefix + std::to_string(nextId_++); }
  void useType(DType t) { features_.insert("dtype." + conf(t)); }
  void line(const std::string &text) { body_.push_back(pad_ + text); }
  void declare(const std::string &name, const Val &v);
  void setAxes(int rank);
  std::string index(int axis) const;
  std::string stride(int axis) const;
  std::string offsets(const std::vector<std::string> &indices) const;
  std::string boundsMask(const std::vector<std::string> &indices) const;
  std::vector<std::string> indices(const std::string &suffix = "") const;
  std::vector<std::string> subscript(int axis, const std::string &at,
                                     const std::string &rest) const;

  Val castTo(const Val &v, DType to);
  /// Whether a product of `@` into `acc` is only within a tolerance of the
  /// reference's (general float inputs: the tensor cores' order of additions).
  bool dotInexact(DType acc) const { return !smallInts_ && isFloat(acc); }
  Val smallExact(const Val &v);
  Val leaf();
  Val constantFor(const Val &a);
  Val expr(int depth);
  Val binary(int depth);
  Val helperCall(int depth);
  Val unary(int depth);

  int64_t extent(int64_t tile);
  int64_t programs(int64_t size, int64_t tile);
  void chooseShape(FuzzKernel &k);
  void fillInput(BufferDesc &b, std::mt19937_64 &rng);
  void addBuffers(FuzzKernel &k, DType outType);
  void addScalars(FuzzKernel &k, bool hasLoop, bool hasIf, bool hasScalar);
  void sharedQuotient();
  void divisorEdge(FuzzKernel &k);
  void prologue(const FuzzKernel &k);
  void planAtomic(DType outType);
  void epilogue(DType outType);
  Val exp2OfMax(const Val &a);
  std::optional<Val> mathStore(DType outType);
  void atomicStore(const Val &result, DType outType, const std::string &storeMask);
  void collidingAtomic(const Val &result, DType outType, const std::string &maskArg);
  void reduction();
  void dot();
  void product(DType acc, const std::string &name, const std::string &dims, const std::string &prod,
               const std::string &rangeInit);
  void fullDot(DType t, DType acc, const std::string &a, bool aInexact);
  void loop();
  Val walkingPointer(std::vector<std::string> &after);
  void ifStatement();
  void sliceBuffer();
  void matmulKernel(FuzzKernel &k);
  void matmulOperand(FuzzKernel &k, const std::string &name, DType t, bool transposed,
                     const std::string &rows, const std::string &cols,
                     std::vector<int64_t> pitchedShape = {});
  void matmulLoop(bool transA, bool transB, DType ta, DType tb, bool masked, bool fused = false,
                  const std::string &pitchB = "N");
  void aimedMatmul(FuzzKernel &k, const std::string &aim);
  struct PitchedOperand {
    std::vector<int64_t> shape; // the buffer's (empty: rows `cols` apart, sized by scalars)
    std::string pitch;          // the pitch's name in the source (the size when not pitched)
    std::string offset;         // " + OFF", or empty
  };
  PitchedOperand pitchedOperand(FuzzKernel &k, const std::string &name, DType t, int64_t rows,
                                int64_t cols, const std::vector<std::string> &keep);
  void attentionKernel(FuzzKernel &k);
  void planClassLaunches(FuzzKernel &k);
  // Class launches: sizes that must stay multiples of their tile (plain
  // loads, __multipleof claims), each size scalar's tile, and the values a
  // scalar may take instead of the generic ones ("ld" of attention kernels).
  bool tileMultiples_ = false;
  std::map<std::string, int64_t> sizeTiles_;
  std::map<std::string, std::vector<int64_t>> classValues_;
  std::string source() const;
};

bool Builder::coin(double prob) {
  int threshold = 1000 - static_cast<int>(prob * 1000);
  return range(0, 999) >= threshold;
}

DType Builder::pickType() {
  // float first: RapidCheck shrinks toward the first element.
  static const std::vector<DType> types = {
      DType::F32, DType::I32, DType::F16, DType::BF16, DType::F64, DType::I8,  DType::I16,
      DType::I64, DType::U8,  DType::U16, DType::U32,  DType::U64, DType::Bool};
  DType t = *rc::gen::elementOf(types);
  useType(t);
  return t;
}

void Builder::declare(const std::string &name, const Val &v) {
  useType(v.type);
  line(lang(v.type) + " " + name + shape() + " = " + v.text + ";");
  tiles_.push_back({name, v.type, v.inexact});
}

// The names of the tile defines, size scalars and ranges of each axis.
void Builder::setAxes(int rank) {
  rank_ = rank;
  if (rank == 1) {
    tileNames_ = {"TS"}, sizeNames_ = {"N"}, rangeNames_ = {"rm"};
  } else if (rank == 2) {
    tileNames_ = {"TM", "TN"}, sizeNames_ = {"M", "N"}, rangeNames_ = {"rm", "rn"};
  } else {
    tileNames_ = {"TB", "TM", "TN"}, sizeNames_ = {"B", "M", "N"}, rangeNames_ = {"rb", "rm", "rn"};
  }
}

// `items` with `at` on `axis` and `rest` elsewhere (a subscript's items).
std::vector<std::string> Builder::subscript(int axis, const std::string &at,
                                            const std::string &rest) const {
  std::vector<std::string> items(static_cast<size_t>(rank_), rest);
  items[static_cast<size_t>(axis)] = at;
  return items;
}

// The range of `axis`, broadcast to the tile's rank (`rm[:, newaxis]`).
std::string Builder::index(int axis) const {
  const std::string &r = rangeNames_[static_cast<size_t>(axis)];
  return rank_ == 1 ? r : r + "[" + join(subscript(axis, ":", "newaxis"), ", ") + "]";
}

// The row-major stride of `axis` in elements ("" for the last one).
std::string Builder::stride(int axis) const {
  std::vector<std::string> later(sizeNames_.begin() + axis + 1, sizeNames_.end());
  return later.size() > 1 ? "(" + join(later, " * ") + ")" : join(later, "");
}

std::vector<std::string> Builder::indices(const std::string &suffix) const {
  std::vector<std::string> out;
  for (int a = 0; a < rank_; ++a)
    out.push_back(index(a) + suffix);
  return out;
}

std::string Builder::offsets(const std::vector<std::string> &idx) const {
  std::vector<std::string> terms;
  for (int a = 0; a < rank_; ++a) {
    std::string s = stride(a);
    terms.push_back(idx[static_cast<size_t>(a)] + (s.empty() ? "" : " * " + s));
  }
  return join(terms, " + ");
}

std::string Builder::boundsMask(const std::vector<std::string> &idx) const {
  if (rank_ == 1)
    return idx[0] + " < " + sizeNames_[0];
  std::vector<std::string> terms;
  for (int a = 0; a < rank_; ++a)
    terms.push_back("(" + idx[static_cast<size_t>(a)] + " < " + sizeNames_[static_cast<size_t>(a)] +
                    ")");
  return join(terms, " && ");
}

// An explicit conversion that is always defined: floats headed for an integer
// type are clamped first (max/min also turn NaN into a bound).
Val Builder::castTo(const Val &v, DType to) {
  if (v.type == to)
    return v;
  features_.insert("cast");
  useType(to);
  if (v.inexact && !isFloat(to)) // discontinuous: drop the inexact value
    return {"((" + lang(to) + ")0)", to};
  if (isFloat(v.type) && isIntegral(to)) {
    features_.insert("cast.float_to_int");
    bool narrow = bitWidth(to) == 8;
    std::string lo = isUnsignedInt(to) ? "0" : (narrow ? "-100" : "-1000");
    std::string hi = narrow ? "100" : "1000";
    return {"(" + lang(to) + ")min(max(" + v.text + ", " + lo + "), " + hi + ")", to};
  }
  return {"(" + lang(to) + ")(" + v.text + ")", to, v.inexact};
}

// An int32 in [-2, 2] computed from `v` (so that sums of many are exact).
Val Builder::smallExact(const Val &v) {
  if (v.inexact) // the clamp truncates: discontinuous (seed 20261502 kernel 140003)
    return {"((int32)0)", DType::I32};
  if (isFloat(v.type))
    return {"(int32)min(max(" + v.text + ", -2), 2)", DType::I32};
  if (isBool(v.type))
    return {"(int32)(" + v.text + ")", DType::I32};
  return {"(int32)(" + v.text + " % 3)", DType::I32};
}

Val Builder::leaf() {
  int choice = range(0, 9);
  if (inHelper_)
    return *rc::gen::elementOf(tiles_);
  if (choice >= 7 && !leaves_.empty()) {
    features_.insert("leaf.scalar_or_broadcast");
    return *rc::gen::elementOf(leaves_);
  }
  if (choice == 5 && !exprs_.empty()) {
    features_.insert("expr.repeated");
    return *rc::gen::elementOf(exprs_);
  }
  if (choice == 4 && coin(0.1)) {
    features_.insert("num_programs");
    return {"get_num_programs(" + std::to_string(range(0, rank_ - 1)) + ")", DType::I32};
  }
  if (choice == 6) {
    features_.insert("range");
    if (rank_ > 1)
      features_.insert(rank_ == 3 ? "broadcast.newaxis3d" : "broadcast.newaxis");
    return {index(range(0, rank_ - 1)), DType::I32};
  }
  return *rc::gen::elementOf(tiles_);
}

// A constant operand for `a op c` (rule 2: the tile's type wins when the
// constant's kind is not higher).
Val Builder::constantFor(const Val &a) {
  features_.insert("constant");
  if (coin(0.3)) {
    static const std::vector<std::string> fs = {"0.5", "1.5", "2.0", "0.25"};
    std::string c = *rc::gen::elementOf(fs);
    return {c, isFloat(a.type) ? a.type : DType::F32};
  }
  std::string c = std::to_string(range(1, 9));
  return {c, isBool(a.type) ? DType::I32 : a.type};
}

Val Builder::expr(int depth) {
  if (depth <= 0 || coin(0.25))
    return leaf();
  if (depth >= 2 && !inHelper_ && coin(0.05))
    return helperCall(depth);
  Val v = coin(0.8) ? binary(depth) : unary(depth);
  v.inexact = lastInexact_;
  if (recording_ && exprs_.size() < 64)
    exprs_.push_back(v);
  return v;
}

Val Builder::binary(int depth) {
  static const std::vector<std::string> ops = {"+",   "-",   "*",   "/",     "%",
                                               "cmp", "min", "bit", "shift", "select"};
  std::string op = *rc::gen::elementOf(ops);
  Val a = expr(depth - 1);
  bool constant = (op == "+" || op == "-" || op == "*" || op == "/" || op == "%" || op == "bit" ||
                   op == "shift") &&
                  coin(0.25);
  Val b = constant ? constantFor(a) : expr(depth - 1);
  bool inexact = a.inexact || b.inexact;
  if (inexact && (op == "%" || op == "cmp" || op == "bit" || op == "shift" || op == "select"))
    op = "+"; // continuous instead (see Val::inexact)
  // Dividing by an inexact value amplifies its error without bound where it
  // nears 0 (`x / (log2(a) - log2(b))`, seed 80 kernel 19269 under
  // --ulp-sensitivity: a one-ULP-off log2 turned inf into 4.8e7): a product.
  if (op == "/" && b.inexact)
    op = "*";
  SetOnExit mark{lastInexact_, inexact};
  DType rt = constant ? b.type : promote(a.type, b.type);
  auto plain = [&](const std::string &o, const std::string &name) {
    features_.insert("op." + name);
    return Val{"(" + a.text + " " + o + " " + b.text + ")", rt};
  };
  if (op == "+")
    return plain("+", "add");
  if (op == "-")
    return plain("-", "sub");
  if (op == "*" && !constant && isIntegral(a.type) && isIntegral(b.type) && bitWidth(rt) >= 32 &&
      coin(0.2)) {
    features_.insert("op.umulhi");
    return {"umulhi(" + a.text + ", " + b.text + ")", rt};
  }
  if (op == "*")
    return plain("*", "mul");
  if (op == "/" || op == "%") {
    std::string name = op == "/" ? "div" : "mod";
    if (isFloat(rt)) {
      if (op == "/" && b.text == "S")
        divByS_ = true;
      return plain(op, name + ".float");
    }
    if (isBool(rt))
      return plain("+", "add");
    features_.insert("op." + name + ".int");
    // The divisor is odd and positive by construction: never 0, never -1.
    std::string d = constant ? std::to_string(2 * range(0, 3) + 1)
                             : (isIntegral(b.type) ? "((" + b.text + " & 7) | 1)" : "3");
    DType t = constant || isIntegral(b.type) ? rt : a.type;
    if (op == "/" && coin(0.25)) {
      features_.insert("op.cdiv");
      return {"cdiv(" + a.text + ", " + d + ")", t};
    }
    return {"(" + a.text + " " + op + " " + d + ")", t};
  }
  if (op == "cmp") {
    static const std::vector<std::string> cmps = {"<", "<=", ">", ">=", "==", "!="};
    std::string c = *rc::gen::elementOf(cmps);
    features_.insert("op.cmp");
    return {"(" + a.text + " " + c + " " + b.text + ")", DType::Bool};
  }
  if (op == "min") {
    if (isBool(rt))
      return plain("|", "or");
    features_.insert("op.minmax");
    return {std::string(coin(0.5) ? "max(" : "min(") + a.text + ", " + b.text + ")", rt};
  }
  if (op == "bit") {
    if (isFloat(rt))
      return plain("+", "add");
    static const std::vector<std::string> bits = {"&", "|", "^"};
    return plain(*rc::gen::elementOf(bits), "bitwise");
  }
  if (op == "shift") {
    if (!isIntegral(a.type) || !isIntegral(b.type))
      return plain("-", "sub");
    features_.insert("op.shift");
    std::string s = coin(0.5) ? "<<" : ">>";
    // Every promoted type is at least 8 bits wide: counts in [0, 7] are in range.
    std::string count = constant ? std::to_string(range(0, 7)) : "(" + b.text + " & 7)";
    return {"(" + a.text + " " + s + " " + count + ")", rt};
  }
  Val c = expr(depth - 1);
  Val d = expr(depth - 1);
  if (c.inexact || d.inexact) // the condition compares: discontinuous
    return plain("+", "add");
  features_.insert("op.select");
  std::string fn = coin(0.3) ? "where(" : "select(";
  return {fn + c.text + " < " + d.text + ", " + a.text + ", " + b.text + ")", rt};
}

// `hN(a, b)`: a helper over two tile parameters (inlined by the frontend),
// sometimes with a local declaration before its `return`.
Val Builder::helperCall(int depth) {
  Val a = expr(depth - 1), b = expr(depth - 1);
  std::string name = fresh("h");
  // The parameters carry their arguments' inexactness into the body, and the
  // call carries the body's out (see Val::inexact).
  std::vector<Val> tiles = {{"p0", a.type, a.inexact}, {"p1", b.type, b.inexact}};
  std::swap(tiles, tiles_);
  bool recording = recording_;
  recording_ = false;
  inHelper_ = true;
  std::string local;
  if (coin(p_.helperStatements)) {
    features_.insert("helper.statements");
    Val t = expr(depth - 1);
    local = "  " + lang(t.type) + " t" + shape() + " = " + t.text + ";\n";
    tiles_.push_back({"t", t.type, t.inexact});
  }
  Val body = expr(depth - 1);
  inHelper_ = false;
  recording_ = recording;
  std::swap(tiles, tiles_);
  features_.insert("helper");
  helpers_.push_back(lang(body.type) + " " + name + "(" + lang(a.type) + " p0" + shape() + ", " +
                     lang(b.type) + " p1" + shape() + ") {\n" + local + "  return " + body.text +
                     ";\n}\n");
  return {name + "(" + a.text + ", " + b.text + ")", body.type, body.inexact};
}

Val Builder::unary(int depth) {
  Val a = expr(depth - 1);
  int choice = range(0, 4);
  SetOnExit mark{lastInexact_, a.inexact};
  if (choice == 0)
    return castTo(a, pickType());
  if (choice == 4 && isIntegral(a.type) && !isBool(a.type)) {
    // Another dtype of the same width (floats may become NaN or inf: defined).
    // Only from integers: the bits of a computed NaN are not part of the
    // semantics (docs/gpu-numerics.md), so a float is never reinterpreted.
    std::vector<DType> same;
    for (DType t : kAllDTypes)
      if (t != a.type && !isBool(t) && bitWidth(t) == bitWidth(a.type))
        same.push_back(t);
    if (!same.empty()) {
      DType t = *rc::gen::elementOf(same);
      features_.insert("op.bitcast");
      useType(t);
      return {"bitcast<" + lang(t) + ">(" + a.text + ")", t};
    }
  }
  if (choice == 1 && isFloat(a.type)) {
    static const std::vector<std::string> fns = {"sqrt", "abs", "floor", "ceil", "exp", "fma",
                                                 "exp2", "log", "log2",  "sin",  "cos", "rsqrt"};
    std::string f = *rc::gen::elementOf(fns);
    if (a.inexact && (f == "floor" || f == "ceil"))
      f = "abs";
    // exp and exp2 turn an absolute error e of their argument into a relative
    // error of about e * ln(b): a few ULPs of an inexact x of 40 become tens of
    // ULPs of exp2(x), past the one-function bound the GPU is compared with
    // (campaign 2026-11-27: exp2(exp(x)), seed 20261207 kernels 134883, 137468).
    // sin and cos keep an absolute error of their argument, and an inexact
    // argument may be far larger than the inputs the tolerance scales with: one
    // ULP of exp(4.5) = 90.017 moves cos by 6.8e-6 (seed 20261502 kernel 275324).
    // Neither family may take an inexact argument; abs passes its error on as is.
    if (a.inexact && (f == "exp" || f == "exp2" || f == "sin" || f == "cos"))
      f = "abs";
    mark.value =
        a.inexact || !(f == "sqrt" || f == "abs" || f == "floor" || f == "ceil" || f == "fma");
    features_.insert("op.math");
    if (f == "fma") {
      features_.insert("op.fma");
      return {"fma(" + a.text + ", " + a.text + ", " + a.text + ")", a.type};
    }
    if (f == "exp2" && coin(0.3))
      return exp2OfMax(a);
    if (coin(0.25)) { // C's float math name (sqrtf, fabsf, ...), an alias of the builtin
      features_.insert("builtin.cmath");
      f = f == "abs" ? "fabsf" : f + "f";
    }
    return {f + "(" + a.text + ")", a.type};
  }
  if (choice == 2 && (isSignedInt(a.type) || isFloat(a.type))) {
    features_.insert("op.neg");
    return {"(-" + a.text + ")", a.type};
  }
  if (isIntegral(a.type) || isBool(a.type)) {
    features_.insert("op.not");
    return {"(~" + a.text + ")", a.type};
  }
  return castTo(a, pickType());
}

// A reduction of a tile variable over one axis; the result comes back as a
// scalar (1-D) or broadcast with `newaxis` on the reduced axis.
void Builder::reduction() {
  Val v = *rc::gen::elementOf(tiles_);
  std::vector<std::string> ops = {"+"};
  if (!v.inexact) { // the index of an extreme is discontinuous
    ops.push_back("argmax");
    ops.push_back("argmin");
  }
  if (!isBool(v.type)) {
    ops.push_back("max");
    ops.push_back("min");
  }
  if (!isFloat(v.type)) {
    ops.push_back("&");
    ops.push_back("|");
    ops.push_back("^");
  }
  std::string op = *rc::gen::elementOf(ops);
  DType rt = v.type;
  if (op == "argmax" || op == "argmin")
    rt = DType::I32;
  else if (op == "+" && (isBool(v.type) || (isIntegral(v.type) && bitWidth(v.type) < 32)))
    rt = isSignedInt(v.type) ? DType::I32 : DType::U32;
  features_.insert("reduce");
  features_.insert(std::string("reduce.") + (op == "+"   ? "sum"
                                             : op == "&" ? "and"
                                             : op == "|" ? "or"
                                             : op == "^" ? "xor"
                                                         : op));
  useType(rt);
  std::string name = fresh("r");
  if (rank_ == 1) {
    line(lang(rt) + " " + name + " = " + v.text + "[" + op + "];");
    leaves_.push_back({name, rt, v.inexact});
    if (!v.inexact) // `if (r > 0)` is discontinuous
      reducedScalars_.push_back(name);
    return;
  }
  int axis = range(0, rank_ - 1);
  features_.insert("reduce.axis" + std::to_string(axis));
  features_.insert(rank_ == 3 ? "broadcast.newaxis3d" : "broadcast.newaxis");
  std::vector<std::string> dims = tileNames_;
  dims.erase(dims.begin() + axis);
  line(lang(rt) + " " + name + "[" + join(dims, ", ") + "] = " + v.text + "[" +
       join(subscript(axis, op, ":"), ", ") + "];");
  leaves_.push_back(
      {name + "[" + join(subscript(axis, "newaxis", ":"), ", ") + "]", rt, v.inexact});
}

// `T name[dims] = prod;`, or (dotAcc) with an accumulator: a constant or
// `rangeInit`, as `name = init; name += prod;` or `name = init + prod`.
void Builder::product(DType acc, const std::string &name, const std::string &dims,
                      const std::string &prod, const std::string &rangeInit) {
  std::string decl = lang(acc) + " " + name + dims;
  if (!coin(p_.dotAcc)) {
    line(decl + " = " + prod + ";");
    return;
  }
  features_.insert("dot.acc");
  std::string init = coin(0.5) ? rangeInit : (isFloat(acc) ? "1.5" : "2");
  if (coin(0.5)) {
    features_.insert("dot.acc.compound");
    line(decl + " = " + init + ";");
    line(name + " += " + prod + ";");
  } else {
    line(decl + " = " + init + " + " + prod + ";");
  }
}

// `a @ ^b` (or `^a @ b`) of two tiles converted to the operand type, summed
// back to a broadcast column (row); or a full-shape product (fullDot).
void Builder::dot() {
  static const std::vector<DType> types = {DType::F32, DType::F16, DType::I8, DType::BF16,
                                           DType::F64};
  DType t = *rc::gen::elementOf(types);
  DType acc = dotResult(t);
  features_.insert("dot");
  features_.insert("dot." + conf(t));
  useType(t);
  useType(acc);
  std::string a = fresh("da");
  declare(a, castTo(*rc::gen::elementOf(tiles_), t));
  // An operand computed from an inexact value makes the product inexact (seed
  // 20261510 kernel 204120: `log` values summed by `@` converted to uint64).
  bool aInexact = tiles_.back().inexact;
  tiles_.pop_back();
  if (rank_ == 3 || coin(0.4)) {
    fullDot(t, acc, a, aInexact);
    return;
  }
  std::string b = fresh("db"), d = fresh("dd"), s = fresh("ds");
  declare(b, castTo(*rc::gen::elementOf(tiles_), t));
  bool inexact = dotInexact(acc) || aInexact || tiles_.back().inexact;
  tiles_.pop_back();
  if (coin(0.5)) {
    features_.insert("dot.trans_b");
    product(acc, d, "[TM, TM]", a + " @ ^" + b, "(rm[:, newaxis] - rm[newaxis, :])");
    line(lang(acc) + " " + s + "[TM] = " + d + "[:, +];");
    leaves_.push_back({s + "[:, newaxis]", acc, inexact});
  } else {
    features_.insert("dot.trans_a");
    product(acc, d, "[TN, TN]", "^" + a + " @ " + b, "(rn[:, newaxis] - rn[newaxis, :])");
    line(lang(acc) + " " + s + "[TN] = " + d + "[+, :];");
    leaves_.push_back({s + "[newaxis, :]", acc, inexact});
  }
}

// `a @ b` with the tile `a` and a square `b` built from a reduction of
// another tile, broadcast with `newaxis`: [TM, TN] @ [TN, TN], or batched with
// the batch axis trailing (as the original): [TB, TM, TN] @ [TM, TM, TN] is
// M = TB, K = TM, N = TM over TN batches. The product is a full-shape tile.
void Builder::fullDot(DType t, DType acc, const std::string &a, bool aInexact) {
  std::string w = fresh("dw"), s = fresh("ds"), b = fresh("db"), d = fresh("dd");
  declare(w, castTo(*rc::gen::elementOf(tiles_), t));
  bool inexact = dotInexact(acc) || aInexact || tiles_.back().inexact;
  tiles_.pop_back();
  std::string red = coin(0.5) ? "max" : "min";
  bool outer = coin(0.5);
  features_.insert("dot.full");
  if (rank_ == 3) {
    features_.insert("dot.batched");
    features_.insert("broadcast.newaxis3d");
    line(lang(t) + " " + s + "[TM, TN] = " + w + "[" + red + ", :, :];");
    line(lang(t) + " " + b + "[TM, TM, TN] = " + s + "[newaxis, :, :]" +
         (outer ? " + " + s + "[:, newaxis, :]" : "") + ";");
  } else {
    line(lang(t) + " " + s + "[TN] = " + w + "[" + red + ", :];");
    line(lang(t) + " " + b + "[TN, TN] = " + s + "[newaxis, :]" +
         (outer ? " + " + s + "[:, newaxis]" : "") + ";");
  }
  std::string init = rank_ == 3 ? "(rm[newaxis, :, newaxis] - rn[newaxis, newaxis, :])"
                                : "(rm[:, newaxis] - rn[newaxis, :])";
  product(acc, d, shape(), a + " @ " + b, init);
  useType(acc);
  tiles_.push_back({d, acc, inexact});
}

// A pointer that walks through an input along axis 0 inside a loop, with the
// mask following its offset: declared before the loop, loaded and advanced in
// it. Returns the masked load; `after` gets the increments.
Val Builder::walkingPointer(std::vector<std::string> &after) {
  Val in = *rc::gen::elementOf(inputs_);
  std::string q = fresh("q"), o = fresh("o"), mq = fresh("mq");
  features_.insert("loop.pointer");
  line(lang(in.type) + " *" + q + shape() + " = p" + in.text + ";");
  line("int " + o + " = 0;");
  // A step that does not depend on the tile size (the results must not: property (d)).
  std::string step = std::to_string(range(1, 3));
  std::string s = stride(0);
  std::string ptrStep = s.empty() ? step : step + " * " + s;
  after.push_back(coin(0.5) ? q + " += " + ptrStep + ";" : q + " = " + q + " + " + ptrStep + ";");
  after.push_back(o + " += " + step + ";");
  std::vector<std::string> idx = indices();
  idx[0] = "(" + idx[0] + " + " + o + ")";
  after.insert(after.begin(), "bool " + mq + shape() + " = " + boundsMask(idx) + ";");
  return {"((" + lang(in.type) + ")(" + mq + " ? *" + q + " : 0))", in.type};
}

// `for (int i = 0; i < K; i++) acc = acc OP e;` with K a runtime argument (or
// the loop counting down, or `while`, or `do ... while`; sometimes inside
// another loop, sometimes with `break` or `continue`, sometimes with a pointer
// that walks through an input).
void Builder::loop() {
  features_.insert("loop");
  Val init = expr(1);
  std::string acc = fresh("acc");
  declare(acc, init);
  tiles_.pop_back();
  std::string i = fresh("i");
  // Inside the body: the loop variable and the inputs' loads (again) are leaves;
  // nothing is remembered for use outside the loop.
  size_t leaves = leaves_.size();
  leaves_.push_back({i, DType::I32});
  if (coin(0.5)) {
    features_.insert("loop.load");
    leaves_.insert(leaves_.end(), loads_.begin(), loads_.end());
  }
  std::vector<std::string> walk; // the walking pointer's mask (first) and increments
  if (!poison_ && coin(p_.loopPointer))
    leaves_.push_back(walkingPointer(walk));
  recording_ = false;
  Val step = castTo(expr(p_.maxDepth - 1), init.type);
  recording_ = true;
  leaves_.resize(leaves);
  std::string op = isBool(init.type) || coin(0.5) ? "+" : (coin(0.5) ? "max" : "min");
  std::string update =
      op == "+" ? acc + " + " + step.text : op + "(" + acc + ", " + step.text + ")";
  bool nested = coin(0.2);
  std::string outer = nested ? fresh("j") : "";
  if (nested) {
    features_.insert("loop.nested");
    line("for (int " + outer + " = 0; " + outer + " < 2; " + outer + "++) {");
  }
  int form = range(0, 3);
  if (form == 0) {
    line("for (int " + i + " = 0; " + i + " < K; " + i + "++) {");
  } else if (form == 1) {
    features_.insert("loop.down");
    line("for (int " + i + " = K; " + i + " > 0; " + i + " -= 1) {");
  } else {
    features_.insert(form == 2 ? "loop.while" : "loop.do");
    line("int " + i + " = 0;");
    line(form == 2 ? "while (" + i + " < K) {" : "do {");
    line("  " + i + "++;");
  }
  if (coin(0.25)) {
    bool brk = coin(0.5);
    features_.insert(brk ? "loop.break" : "loop.continue");
    line("  if (" + i + " == " + std::to_string(range(0, 2)) + ") " +
         (brk ? "break;" : "continue;"));
  }
  if (!walk.empty())
    line("  " + walk.front());
  line("  " + acc + " = " + update + ";");
  for (size_t w = 1; w < walk.size(); ++w)
    line("  " + walk[w]);
  line(form == 3 ? "} while (" + i + " < K);" : "}");
  if (nested)
    line("}");
  // The accumulator carries what every trip adds (see Val::inexact).
  tiles_.push_back({acc, init.type, init.inexact || step.inexact});
}

// The original's double buffer: `T sb[2, TM, TN];` filled slice by slice, the
// slices chosen by a run-time index flipped with `^ 1` (`sb[si ^ 1, ...]` writes
// the other one), one read back as a tile of the body (integer subscripts
// select a slice).
void Builder::sliceBuffer() {
  features_.insert("slices");
  Val a = expr(1);
  Val b = castTo(expr(1), a.type);
  Val c = castTo(expr(1), a.type);
  std::string sb = fresh("sb"), si = fresh("si");
  std::string rest;
  for (int d = 0; d < rank_; ++d)
    rest += ", :";
  useType(a.type);
  line(lang(a.type) + " " + sb + "[2, " + join(tileNames_, ", ") + "];");
  line(sb + "[0" + rest + "] = " + a.text + ";");
  line(sb + "[1" + rest + "] = " + b.text + ";");
  // A run-time index that is the same in every program and for every tile size
  // (a program id would make the result depend on the tiling): 1.
  line("int " + si + " = (int)(get_num_programs(0) > 0);");
  line(sb + "[" + si + " ^ 1" + rest + "] = " + c.text + ";");
  declare(fresh("v"), Val{sb + "[" + si + rest + "]", a.type, a.inexact || b.inexact});
}

// `if (C > t) w = e1; else w = e2;` on the scalar argument C.
void Builder::ifStatement() {
  features_.insert("if");
  Val init = expr(1);
  std::string w = fresh("w");
  declare(w, init);
  tiles_.pop_back();
  Val then = castTo(expr(p_.maxDepth - 1), init.type);
  std::string cond = "C > " + std::to_string(range(0, 2));
  if (!reducedScalars_.empty() && coin(0.5)) {
    features_.insert("if.data");
    cond = *rc::gen::elementOf(reducedScalars_) + " > 0";
  }
  line("if (" + cond + ") {");
  line("  " + w + " = " + then.text + ";");
  bool inexact = init.inexact || then.inexact;
  if (coin(0.5)) {
    Val other = castTo(expr(p_.maxDepth - 1), init.type);
    inexact = inexact || other.inexact;
    line("} else {");
    line("  " + w + " = " + other.text + ";");
  }
  line("}");
  tiles_.push_back({w, init.type, inexact});
}

// A problem size for `tile`: usually not a multiple of it (masked kernels).
int64_t Builder::extent(int64_t tile) {
  if (unmasked_)
    return tile * range(1, 3);
  int64_t n = range(1, static_cast<int>(2 * tile + 1));
  return n % tile == 0 && tile > 1 ? n + 1 : n;
}

// The programs along an axis: cdiv(size, tile), sometimes one more (fully masked).
int64_t Builder::programs(int64_t size, int64_t tile) {
  int64_t g = (size + tile - 1) / tile;
  if (unmasked_ || !coin(p_.extraProgram))
    return g;
  features_.insert("grid.extra");
  return g + 1;
}

// Tile sizes, problem sizes (usually not multiples of the tile) and the grid.
void Builder::chooseShape(FuzzKernel &k) {
  int maxTile = rank_ == 1 ? p_.max1DTile : rank_ == 2 ? p_.max2DTile : p_.max3DTile;
  for (int a = 0; a < rank_; ++a)
    tile_.push_back(int64_t{1} << range(0, log2Of(maxTile)));
  if (rank_ == 1 && (coin(p_.wideTile) || (hotAtomic_ && coin(0.5)))) {
    features_.insert("tile.wide");
    tile_[0] = int64_t{1} << range(9, 11);
  }
  for (int a = 0; a < rank_; ++a)
    size_.push_back(extent(tile_[static_cast<size_t>(a)]));
  int64_t programCount = 1;
  bool tail = false;
  for (size_t a = 0; a < static_cast<size_t>(rank_); ++a) {
    k.defines.push_back({tileNames_[a], std::to_string(tile_[a])});
    k.grid[a] = programs(size_[a], tile_[a]);
    k.gridAxes.push_back({sizeNames_[a], tileNames_[a]});
    programCount *= k.grid[a];
    tail = tail || size_[a] % tile_[a] != 0;
    if (tile_[a] == 1)
      features_.insert("tile.size1");
  }
  static const char *const grids[] = {"grid.multi", "grid.2d", "grid.3d"};
  if (programCount > 1)
    features_.insert(grids[rank_ - 1]);
  if (!unmasked_ && tail)
    features_.insert("boundary.tail");
}

// An input's data: values of the mode, with IEEE edge values mixed into
// general-mode float inputs when the kernel has them.
void Builder::fillInput(BufferDesc &b, std::mt19937_64 &rng) {
  int64_t n = 1;
  for (int64_t d : b.shape)
    n *= d;
  std::vector<double> vals(static_cast<size_t>(n));
  auto edgeCut = static_cast<uint64_t>(p_.edgeFraction * 1000);
  for (double &v : vals) {
    v = randomValue(b.dtype, smallInts_, rng);
    if (!edges_ || !isFloat(b.dtype) || rng() % 1000 >= edgeCut)
      continue;
    int which = static_cast<int>(rng() % kEdgeKinds);
    v = edgeValue(b.dtype, which);
    features_.insert("input.edge");
    features_.insert(std::string("input.") + kEdgeNames[which]);
  }
  b.data = exactValues(b.dtype, std::move(vals));
}

// The buffers (inputs with their data, then the output Y, then Z for the old
// values of atomics) and their parameters.
void Builder::addBuffers(FuzzKernel &k, DType outType) {
  int inputs = range(1, p_.maxInputs);
  std::vector<DType> inTypes;
  for (int i = 0; i < inputs; ++i)
    inTypes.push_back(pickType());
  int64_t dataSeed = *rc::gen::inRange<int64_t>(0, 1 << 30);
  dataSeed_ = static_cast<uint64_t>(dataSeed);
  std::mt19937_64 rng(static_cast<uint64_t>(dataSeed));
  int64_t elements = 1;
  for (int64_t s : size_)
    elements *= s;
  for (int i = 0; i < inputs; ++i) {
    BufferDesc b{
        "X" + std::to_string(i), inTypes[static_cast<size_t>(i)], size_, {}, false, sizeNames_};
    fillInput(b, rng);
    params_.push_back(lang(b.dtype) + " *" + b.name);
    inputs_.push_back({b.name, b.dtype});
    k.buffers.push_back(std::move(b));
  }
  std::vector<double> fill(static_cast<size_t>(elements), isBool(outType) ? 1 : 3);
  for (const char *name : {"Y", "Z"}) {
    if (name[0] == 'Z' && !storeOld_)
      continue;
    k.buffers.push_back({name, outType, size_, fill, true, sizeNames_});
    params_.push_back(lang(outType) + " *" + name);
  }
}

// The scalar parameters: sizes, then K (loops), C (`if`) and S (a leaf).
void Builder::addScalars(FuzzKernel &k, bool hasLoop, bool hasIf, bool hasScalar) {
  for (size_t a = 0; a < static_cast<size_t>(rank_); ++a)
    k.scalars.push_back({sizeNames_[a], DType::I32, static_cast<double>(size_[a])});
  if (hasLoop)
    k.scalars.push_back({"K", DType::I32, static_cast<double>(range(0, 3))});
  if (hasIf)
    k.scalars.push_back({"C", DType::I32, static_cast<double>(range(0, 3))});
  if (hasScalar) {
    DType t = pickType();
    features_.insert("scalar.param");
    double v = isBool(t)          ? range(0, 1)
               : isFloat(t)       ? range(-16, 16) / 4.0
               : isUnsignedInt(t) ? range(0, 4)
                                  : range(-4, 4);
    // With edge values on, a float S is a signed zero or a subnormal a quarter of
    // the time: S is the one value every thread's elements share (`x / S`, the
    // shared divisor's range check; S * x, S + x for signed zeros). Drawn from
    // the data seed, not from the kernel's choices, so the kernels stay the same.
    if (edges_ && isFloat(t)) {
      std::mt19937_64 srng(dataSeed_ ^ 0x53u);
      if (srng() % 4 == 0) {
        static const char *const names[] = {"zero", "neg_zero", "subnormal", "subnormal"};
        int which = static_cast<int>(srng() % 4);
        v = which == 0 ? 0.0 : which == 1 ? -0.0 : edgeValue(t, which + 2);
        features_.insert("scalar.edge");
        features_.insert(std::string("scalar.") + names[which]);
      }
    }
    k.scalars.push_back({"S", t, exactValues(t, {v})[0]});
    leaves_.push_back({"S", t});
  }
  for (const ScalarDesc &s : k.scalars)
    params_.push_back(lang(s.dtype) + " " + s.name);
}

// A wide tile divided by the scalar S: every thread's elements share one
// divisor (the GPU backend's shared-divisor path, codegen/SharedDivisor.cpp).
// The numerator is cast to float, so the division is a float one whatever S's
// type (a bool S is left alone).
void Builder::sharedQuotient() {
  auto s = std::find_if(leaves_.begin(), leaves_.end(), [](const Val &v) { return v.text == "S"; });
  if (s == leaves_.end() || isBool(s->type))
    return;
  const Val &x = *rc::gen::elementOf(tiles_);
  features_.insert("op.div.float");
  features_.insert("div.by_scalar");
  divByS_ = true;
  declare(fresh("v"), {"((float)(" + x.text + ") / S)", promote(DType::F32, s->type), x.inexact});
}

// When a float `/` divides by S, S is 0 or -0 half the time, or in general
// mode also a subnormal: the divisors on which a shared reciprocal goes wrong
// (1 / 0 and 1 / subnormal overflow; x / 0 is +-inf, not NaN). Small-ints
// kernels and kernels with an `@` get the zeros only: +-inf and NaN come out of
// any order of additions the same (a product's order is the tensor cores'),
// where a sum of quotients near the overflow threshold would not.
// Drawn from the data seed after the kernel's text: only S moves.
void Builder::divisorEdge(FuzzKernel &k) {
  auto s = std::find_if(k.scalars.begin(), k.scalars.end(),
                        [](const ScalarDesc &d) { return d.name == "S"; });
  if (s == k.scalars.end() || isBool(s->dtype) || features_.count("scalar.edge"))
    return;
  std::mt19937_64 rng(dataSeed_ ^ 0x5344u);
  if (rng() % 2 != 0)
    return;
  static const char *const names[] = {"zero", "neg_zero", "subnormal"};
  int kinds = !isFloat(s->dtype) ? 1 : smallInts_ || features_.count("dot") ? 2 : 3;
  int which = static_cast<int>(rng() % static_cast<uint64_t>(kinds));
  double v = which == 0   ? 0.0
             : which == 1 ? -0.0
                          : edgeValue(s->dtype, 4 + static_cast<int>(rng() % 2));
  s->value = exactValues(s->dtype, {v})[0];
  features_.insert("scalar.divisor_edge");
  features_.insert(std::string("scalar.divisor_") + names[which]);
}

// Program ids, ranges, the bounds mask, pointers and the inputs' loads.
void Builder::prologue(const FuzzKernel &k) {
  for (int a = 0; a < rank_; ++a)
    line("int p" + rangeNames_[static_cast<size_t>(a)].substr(1) + " = get_program_id(" +
         std::to_string(a) + ");");
  for (size_t a = 0; a < static_cast<size_t>(rank_); ++a) {
    const std::string &t = tileNames_[a], &r = rangeNames_[a];
    line("int " + r + "[" + t + "] = p" + r.substr(1) + " * " + t + " + 0 ... " + t + ";");
  }
  line("bool mask" + shape() + " = " + boundsMask(indices()) + ";");
  if (rank_ > 1)
    features_.insert(rank_ == 3 ? "broadcast.newaxis3d" : "broadcast.newaxis");
  std::string offs = offsets(indices());
  for (const BufferDesc &b : k.buffers) {
    std::string p = "p" + b.name, x = "x" + b.name.substr(1);
    line(lang(b.dtype) + " *" + p + shape() + " = " + b.name + " + " + offs + ";");
    if (b.isOutput)
      continue;
    // The fallback is sometimes not 0, so that a dropped fallback shows.
    std::string other = !isBool(b.dtype) && coin(0.4) ? std::to_string(range(1, 3)) : "0";
    std::string load = unmasked_ ? "*" + p
                       : poison_ ? "*?(mask) " + p
                                 : "mask ? *" + p + " : " + other;
    features_.insert(unmasked_ ? "load.plain" : poison_ ? "load.poison" : "load.masked");
    if (other != "0" && !unmasked_ && !poison_)
      features_.insert("load.masked_fallback");
    line(lang(b.dtype) + " " + x + shape() + " = " + load + ";");
    loads_.push_back({"((" + lang(b.dtype) + ")(" + load + "))", b.dtype});
    tiles_.push_back({x, b.dtype});
  }
  // A tile of one constant: arithmetic on it is left to the fold pass (the
  // frontend folds only literal arithmetic).
  if (coin(0.3)) {
    features_.insert("constant.tile");
    declare("kc", {std::to_string(range(1, 4)), coin(0.5) ? DType::I32 : DType::F32});
  }
}

// Whether the result goes out by an atomic, and which kind (drawn before the
// buffers, since storing the old values needs the output Z).
void Builder::planAtomic(DType outType) {
  if (isBool(outType) || poison_)
    return;
  if (hotAtomic_) {
    atomic_ = AtomicKind::Collide;
    return;
  }
  if (!coin(p_.atomic))
    return;
  if (coin(p_.atomicCollide)) {
    atomic_ = AtomicKind::Collide;
    return;
  }
  atomic_ = coin(p_.atomicCas) ? AtomicKind::Cas : AtomicKind::Own;
  storeOld_ = coin(p_.atomicOld);
}

// exp2 of a max with a constant bound, the argument sometimes moved down past
// -126: bounds at or above -126 take the GPU's exponent instruction alone
// (codegen option exp2-range), those below keep libdevice's exp2f with its
// subnormal results. a - 140 rounds alike on both sides.
Val Builder::exp2OfMax(const Val &a) {
  static const std::vector<std::string> bounds = {"-126.0", "-125.5", "-100.0",
                                                  "-126.5", "-127.0", "-130.0"};
  static const std::vector<std::string> shifts = {"", " - 130.0", " - 140.0"};
  features_.insert("op.math");
  features_.insert("op.exp2_max");
  return {"exp2(max((" + a.text + ")" + *rc::gen::elementOf(shifts) + ", " +
              *rc::gen::elementOf(bounds) + "))",
          a.type, true};
}

// A ULP-bounded function of an exact value of the output's type, stored as it
// is (store.math): the GPU comparison checks such an output in ULPs alone
// (fuzz::boundedOutputs), so a subnormal result flushed to zero or a wrong
// special value cannot hide in the absolute tolerance that other outputs of
// kernels with math functions get. Nothing when the drawn value is inexact.
std::optional<Val> Builder::mathStore(DType outType) {
  Val a = expr(range(0, 2));
  if (a.inexact)
    return std::nullopt;
  a = castTo(a, outType);
  static const std::vector<std::string> fns = {"exp", "exp2", "exp2_max", "exp2_max", "exp2_max",
                                               "log", "log2", "sin",      "cos",      "rsqrt"};
  std::string f = *rc::gen::elementOf(fns);
  features_.insert("store.math");
  if (f == "exp2_max")
    return exp2OfMax(a);
  features_.insert("op.math");
  return Val{f + "(" + a.text + ")", outType, true};
}

// The result, written to Y by a (masked) store or an atomic.
void Builder::epilogue(DType outType) {
  // A tenth of the kernels, from the shape draw's last digit (no draw of its
  // own, so every other kernel of a seed is what it was before math stores).
  std::optional<Val> math;
  if (atomic_ == AtomicKind::None && isFloat(outType) && shapeDraw_ % 10 == 7)
    math = mathStore(outType);
  Val result = math ? *math : expr(range(1, p_.maxDepth));
  if (!math && coin(0.6)) { // mostly store something that depends on the last statement
    const Val &last = tiles_.back();
    result = {"(" + last.text + " + " + result.text + ")", promote(last.type, result.type),
              last.inexact || result.inexact};
  }
  // An inexact sum headed for an integer type is dropped by castTo: the three
  // findings of a 10-minute campaign (seed 20261122) were rsqrt/log2 values
  // that cancel to an integer, truncated differently on the GPU.
  result = castTo(result, outType);
  features_.insert(unmasked_ ? "store.plain" : "store.masked");
  std::string storeMask = "mask";
  if (!unmasked_ && !poison_ && coin(0.3)) {
    Val l = expr(1), r = expr(1);
    // A comparison is discontinuous: no inexact operand (seed 20261402 kernel
    // 209079 stored where the interpreter did not: `exp(x - 2.0) + 2.0 <
    // (x & 7) + exp(x - 2.0)` rounds differently when exp is one ULP off).
    if (!l.inexact && !r.inexact) {
      features_.insert("store.data_mask");
      storeMask = "mask && (" + l.text + " < " + r.text + ")";
    }
  }
  if (atomic_ == AtomicKind::None) {
    line((unmasked_ ? std::string("*pY") : "*?(" + storeMask + ") pY") + " = " + result.text + ";");
    return;
  }
  atomicStore(result, outType, storeMask);
}

// An atomic on each lane's own element (so the order of programs and lanes
// does not matter): any operation, or atomic_cas with a compare that
// sometimes matches Y's initial 3; the old values may go to Z.
void Builder::atomicStore(const Val &result, DType outType, const std::string &storeMask) {
  std::string maskArg = unmasked_ ? "" : ", " + storeMask;
  features_.insert("atomic");
  if (atomic_ == AtomicKind::Collide) {
    collidingAtomic(result, outType, maskArg);
    return;
  }
  std::string call;
  if (atomic_ == AtomicKind::Cas) {
    features_.insert("atomic.cas");
    Val lhs = expr(1), rhs = expr(1);
    // The compare value comes from a comparison: not of inexact values.
    std::string which = lhs.inexact || rhs.inexact
                            ? std::string("3")
                            : "select(" + lhs.text + " < " + rhs.text + ", 3, 5)";
    Val cmp = castTo({which, DType::I32}, outType);
    call = "atomic_cas(pY, " + cmp.text + ", " + result.text + maskArg + ")";
  } else {
    std::vector<std::string> ops = {"add", "max", "min", "xchg"};
    if (isIntegral(outType))
      ops.insert(ops.end(), {"and", "or", "xor"});
    std::string op = *rc::gen::elementOf(ops);
    features_.insert("atomic." + op);
    call = "atomic_" + op + "(pY, " + result.text + maskArg + ")";
  }
  if (!storeOld_) {
    line(call + ";");
    return;
  }
  features_.insert("atomic.old");
  std::string old = fresh("old");
  line(lang(outType) + " " + old + shape() + " = " + call + ";");
  line((unmasked_ ? std::string("*pZ") : "*?(" + storeMask + ") pZ") + " = " + old + ";");
}

// An atomic whose lanes collide: lane index i goes to element i % 4 on every
// axis (in bounds, since i % 4 <= i), or (`atomic.collide.hot`, known before
// the shape) every lane of every program to element 0: the most contention
// one address gets, at offset 0 of its 32-bit word, where an 8/16-bit atomic
// is a compare-and-swap loop on the word whose retries must re-read the
// element (the lost update LLVM 19's expansion made:
// docs/upstream/llvm-atomicexpand-partword-stale.md). Only operations whose
// final value does not depend on the order: integer add/and/or/xor/max/min,
// float max/min, and float add of integers in [-2, 2] while every partial sum
// stays exact. The old values are not used.
void Builder::collidingAtomic(const Val &result, DType outType, const std::string &maskArg) {
  features_.insert("atomic.collide");
  int64_t fold = 4; // lanes i and i + fold meet on every axis
  if (hotAtomic_) {
    features_.insert("atomic.collide.hot");
    fold = 1;
  }
  std::string pc = fresh("pc");
  line(lang(outType) + " *" + pc + shape() + " = Y + " +
       offsets(indices(" % " + std::to_string(fold))) + ";");
  std::vector<std::string> ops = {"max", "min"};
  double lanes = 1; // the most lanes that update one element
  for (int64_t s : size_)
    lanes *= static_cast<double>((s + fold - 1) / fold);
  if (isIntegral(outType))
    ops.insert(ops.end(), {"add", "and", "or", "xor"});
  else if (3 + 2 * lanes < exactIntLimit(outType))
    ops.push_back("add");
  std::string op = *rc::gen::elementOf(ops);
  features_.insert("atomic." + op);
  Val v = op == "add" && isFloat(outType) ? castTo(smallExact(result), outType) : result;
  line("atomic_" + op + "(" + pc + ", " + v.text + maskArg + ");");
}

// One operand of a matmul kernel: `rows x cols` (as named size scalars), or
// `cols x rows` when stored transposed.
// pitchedShape: the buffer's own shape (rows a pitch apart that is not the
// size of an axis), its axes not sized by a scalar (the reducer and the class
// launches keep it).
void Builder::matmulOperand(FuzzKernel &k, const std::string &name, DType t, bool transposed,
                            const std::string &rows, const std::string &cols,
                            std::vector<int64_t> pitchedShape) {
  auto sizeOf = [&](const std::string &s) {
    for (const ScalarDesc &d : k.scalars)
      if (d.name == s)
        return static_cast<int64_t>(d.value);
    return int64_t{1};
  };
  std::vector<std::string> dims =
      transposed ? std::vector<std::string>{cols, rows} : std::vector<std::string>{rows, cols};
  BufferDesc b{name, t, {sizeOf(dims[0]), sizeOf(dims[1])}, {}, false, dims};
  if (!pitchedShape.empty()) {
    b.shape = std::move(pitchedShape);
    b.dims.clear();
  }
  int64_t dataSeed = *rc::gen::inRange<int64_t>(0, 1 << 30);
  std::mt19937_64 rng(static_cast<uint64_t>(dataSeed));
  fillInput(b, rng);
  params_.push_back(lang(t) + " *" + name);
  k.buffers.push_back(std::move(b));
}

// The K loop of a matmul kernel, as in the tutorial: masked loads whose masks
// follow the tail of K, `c += a @ b` (operands transposed with `^` when
// stored transposed) and pointer increments.
// pitchB: B's row pitch (N, or a parameter of its own: pitchedOperand).
void Builder::matmulLoop(bool transA, bool transB, DType ta, DType tb, bool masked, bool fused,
                         const std::string &pitchB) {
  bool down = coin(0.5);
  auto inK = [&](const std::string &rk) { return down ? rk + " < k" : rk + " + k < K"; };
  if (down) {
    features_.insert("loop.down");
    line("for (int k = K; k > 0; k -= TK) {");
  } else {
    line("for (int k = 0; k < K; k += TK) {");
  }
  std::string maskA = transA ? "(" + inK("rk[:, newaxis]") + ") && (rm[newaxis, :] < M)"
                             : "(rm[:, newaxis] < M) && (" + inK("rk[newaxis, :]") + ")";
  std::string maskB = transB ? "(rn[:, newaxis] < N) && (" + inK("rk[newaxis, :]") + ")"
                             : "(" + inK("rk[:, newaxis]") + ") && (rn[newaxis, :] < N)";
  std::string shapeA = transA ? "[TK, TM]" : "[TM, TK]", shapeB = transB ? "[TN, TK]" : "[TK, TN]";
  if (masked) {
    line("  bool ma" + shapeA + " = " + maskA + ";");
    line("  bool mb" + shapeB + " = " + maskB + ";");
  }
  line("  " + lang(ta) + " a" + shapeA + " = " + (masked ? "ma ? *pa : 0;" : "*pa;"));
  line("  " + lang(tb) + " b" + shapeB + " = " + (masked ? "mb ? *pb : 0;" : "*pb;"));
  std::string prod = std::string(transA ? "^a" : "a") + " @ " + (transB ? "^b" : "b");
  // (`c += a @ b` is the form the GPU lowers as a matmul loop; `fused` always takes it.)
  line(fused || coin(0.5) ? "  c += " + prod + ";" : "  c = c + " + prod + ";");
  for (auto [p, step] : {std::pair<std::string, std::string>{"pa", transA ? "TK * M" : "TK"},
                         {"pb", transB ? "TK" : "TK * " + pitchB}})
    line(coin(0.5) ? "  " + p + " += " + step + ";" : "  " + p + " = " + p + " + " + step + ";");
  line("}");
}

// A matmul kernel in the form of the tutorial (examples/matmul.tc): tiles
// TM x TN of C = A x B (+ an accumulator's initial value), a loop over K by
// TK with pointer increments, fp16/bf16/fp32/int8/fp64 operands (sometimes
// mixed, sometimes stored transposed) and their accumulator type.
void Builder::matmulKernel(FuzzKernel &k) {
  setAxes(2);
  for (const char *f : {"matmul.kloop", "dot", "tile.2d", "loop", "loop.pointer", "store.masked",
                        "broadcast.newaxis"})
    features_.insert(f);
  int lo = log2Of(p_.matmulMinTile), hi = std::max(lo, log2Of(p_.matmulMaxTile));
  tile_ = {int64_t{1} << range(lo, hi), int64_t{1} << range(lo, hi)};
  int64_t tk = int64_t{1} << range(lo, hi);
  // Sometimes sizes that are multiples of the tiles: no tail, so the loads
  // need no mask, and the sizes are declared with the powers of two they are
  // multiples of (true claims, checked at launch): the form the GPU's cp.async
  // pipeline of matmul loops takes (docs/gpu-perf.md, "Matmul loops").
  bool plain = coin(0.3);
  size_ = plain ? std::vector<int64_t>{tile_[0] * range(1, 2), tile_[1] * range(1, 2)}
                : std::vector<int64_t>{extent(tile_[0]), extent(tile_[1])};
  int64_t depth = plain ? tk * range(1, 4) : range(1, static_cast<int>(2 * tk + 1));
  k.defines = {{"TM", std::to_string(tile_[0])},
               {"TN", std::to_string(tile_[1])},
               {"TK", std::to_string(tk)}};
  if (plain) // no extra (fully masked) programs: the loads are not masked
    k.grid = {size_[0] / tile_[0], size_[1] / tile_[1], 1};
  else
    k.grid = {programs(size_[0], tile_[0]), programs(size_[1], tile_[1]), 1};
  k.gridAxes = {{"M", "TM"}, {"N", "TN"}};
  if (k.grid[0] * k.grid[1] > 1)
    features_.insert("grid.2d");
  bool tail = size_[0] % tile_[0] || size_[1] % tile_[1] || depth % tk;
  if (tail)
    features_.insert("boundary.tail");
  features_.insert(plain ? "load.plain" : "load.masked");
  if (plain)
    features_.insert("matmul.unmasked");

  static const std::vector<DType> types = {DType::F32, DType::F16, DType::BF16, DType::I8,
                                           DType::F64};
  DType ta = *rc::gen::elementOf(types);
  DType tb = coin(0.2) ? *rc::gen::elementOf(types) : ta;
  DType acc = dotResult(promote(ta, tb));
  if (ta != tb)
    features_.insert("matmul.mixed");
  features_.insert("dot." + conf(promote(ta, tb)));
  for (DType t : {ta, tb, acc})
    useType(t);
  bool transA = coin(0.3), transB = coin(0.3);
  // Mostly, plain fp16/bf16 products get 64 rows per program: the shape that
  // Hopper's wgmma takes (one warpgroup per 64 rows; docs/gpu-perf.md, "wgmma").
  if (plain && ta == tb && (ta == DType::F16 || ta == DType::BF16) && !transA && !transB &&
      coin(0.7)) {
    tile_[0] = 64;
    size_[0] = 64 * range(1, 2);
    k.defines[0].second = "64";
    k.grid[0] = size_[0] / 64;
    if (k.grid[0] * k.grid[1] > 1)
      features_.insert("grid.2d");
    features_.insert("matmul.wgmma");
  }
  DType outType = coin(0.5) ? acc : pickType();
  // With general float inputs the product's sum is only within a tolerance of
  // the reference's (tensor cores add in an order of their own): it must not
  // be converted to an integer (see Val::inexact).
  if (!smallInts_ && isFloat(acc) && !isFloat(outType))
    outType = acc;
  k.scalars = {{"M", DType::I32, static_cast<double>(size_[0])},
               {"N", DType::I32, static_cast<double>(size_[1])},
               {"K", DType::I32, static_cast<double>(depth)}};
  tileMultiples_ = plain;
  sizeTiles_ = {{"M", tile_[0]}, {"N", tile_[1]}, {"K", tk}};
  matmulOperand(k, "A", ta, transA, "M", "K");
  matmulOperand(k, "B", tb, transB, "K", "N");
  k.buffers.push_back(
      {"Y", outType, size_,
       std::vector<double>(static_cast<size_t>(size_[0] * size_[1]), isBool(outType) ? 1 : 3), true,
       sizeNames_});
  params_.push_back(lang(outType) + " *Y");
  for (const ScalarDesc &s : k.scalars) {
    int64_t claim = plain ? multipleOfClaim(static_cast<int64_t>(s.value)) : 1;
    params_.push_back(lang(s.dtype) + " " + s.name +
                      (claim > 1 ? " __multipleof(" + std::to_string(claim) + ")" : ""));
  }

  line("int pm = get_program_id(0);");
  line("int pn = get_program_id(1);");
  line("int rm[TM] = pm * TM + 0 ... TM;");
  line("int rn[TN] = pn * TN + 0 ... TN;");
  line("int rk[TK] = 0 ... TK;");
  std::string init = "0";
  if (coin(p_.dotAcc)) {
    features_.insert("dot.acc");
    init = coin(0.5) ? "(rm[:, newaxis] - rn[newaxis, :])" : (isFloat(acc) ? "0.5" : "2");
  }
  line(lang(acc) + " c[TM, TN] = " + init + ";");
  line(lang(ta) + (transA ? " *pa[TK, TM] = A + rk[:, newaxis] * M + rm[newaxis, :];"
                          : " *pa[TM, TK] = A + rm[:, newaxis] * K + rk[newaxis, :];"));
  line(lang(tb) + (transB ? " *pb[TN, TK] = B + rn[:, newaxis] * K + rk[newaxis, :];"
                          : " *pb[TK, TN] = B + rk[:, newaxis] * N + rn[newaxis, :];"));
  if (transA)
    features_.insert("dot.trans_a");
  if (transB)
    features_.insert("dot.trans_b");
  matmulLoop(transA, transB, ta, tb, !plain);
  line("bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);");
  line(lang(outType) + " *pY[TM, TN] = Y + rm[:, newaxis] * N + rn[newaxis, :];");
  static const std::vector<std::string> outs = {"c", "max(c, 0)", "(c * 2)", "(c - 1)"};
  Val v = castTo({*rc::gen::elementOf(outs), acc}, outType);
  line("*?(mask) pY = " + v.text + ";");
}

// A matmul operand of `rows` x `cols` elements whose rows are `name` apart, a
// parameter of its own: padded (the pitch >= cols) or overlapping (< cols:
// a trip's tile may pass the end of its first row), with a scalar offset first
// now and then. The forms of option tma's proof and of its per-trip check
// (codegen/LowerTma.cpp): a trip whose tile the tensor map cannot address
// exactly is copied with cp.async. Rows stay 16-byte aligned (the pitch and
// the offset multiples of 16 bytes), so the streams' other forms still apply.
// The buffer is sized for the values drawn: class launches keep the sizes
// `keep` and give the pitch only smaller values that keep its __multipleof
// claim (tensor maps encoded at launch from other pitches, rows overlapping
// more), so that every element read stays in the buffer.
Builder::PitchedOperand Builder::pitchedOperand(FuzzKernel &k, const std::string &name, DType t,
                                                int64_t rows, int64_t cols,
                                                const std::vector<std::string> &keep) {
  PitchedOperand o;
  features_.insert(name == "lda" ? "matmul.pitch" : "matmul.pitch_b");
  int64_t step = 16 / static_cast<int64_t>(byteSize(t));
  int64_t ld =
      coin(0.5) ? cols + step * range(0, 4) : std::max<int64_t>(step, cols - step * range(1, 4));
  if (ld < cols)
    features_.insert("matmul.overlapping_rows");
  int64_t off = 0;
  if (coin(0.4)) {
    off = step * range(1, 8);
    o.offset = " + " + std::to_string(off);
    features_.insert("matmul.offset");
  }
  // Every element read: off + r * ld + c for r < rows, c < cols.
  o.shape = {rows - 1 + (off + cols + ld - 1) / ld, ld};
  o.pitch = name;
  k.scalars.push_back({name, DType::I32, static_cast<double>(ld)});
  for (const std::string &size : keep)
    classValues_[size] = {};
  int64_t claim = multipleOfClaim(ld);
  std::vector<int64_t> &pitches = classValues_[name];
  for (int64_t v : {ld - claim, ld / 2 / claim * claim, claim})
    if (v > 0 && v < ld && std::find(pitches.begin(), pitches.end(), v) == pitches.end())
      pitches.push_back(v);
  return o;
}

// A matmul kernel aimed at one of the GPU's fast paths (GenPolicy::aim,
// docs/fuzz.md "Fast paths"): the form the backend lowers as a matmul loop
// (`c += a @ b` with the loads and pointer steps around it), mostly with
// mask-free loads of sizes that are multiples of the tiles (the cp.async
// pipeline), fp16/bf16 operands (tensor cores), tiles of 64 or 128 rows for a
// warpgroup (wgmma) or of 16 and 32 rows (mma.sync), many trips (K is TK times
// 1 to 24, mostly not a multiple of the stage count), the accumulator read
// right after the loop, and small-integer inputs (exact results: a stage read
// too early or too late, or products still in flight, change the sum).
// Sometimes (`grid.many`) more programs than an H200 has SMs (132).
void Builder::aimedMatmul(FuzzKernel &k, const std::string &aim) {
  setAxes(2);
  features_.insert("aim." + aim);
  for (const char *f : {"matmul.kloop", "dot", "tile.2d", "loop", "loop.pointer", "store.masked",
                        "broadcast.newaxis"})
    features_.insert(f);
  // Which form: a warpgroup's tile (wgmma), or rows for mma.sync; for
  // mma.loop, half of them with masked loads of sizes that are not multiples
  // of the tiles. Of those, half have tails on every axis (the loop's
  // operands staged from registers every trip) and half keep N and K
  // multiples of 16 (rows 16-byte aligned, the tails of N and K within the
  // tiles' last 16-element steps): their masked loads stream through cp.async
  // like unmasked ones, each 16-byte chunk zero-filled by its mask (option
  // masked-stream), half of them on a warpgroup's tile (wgmma).
  bool masked = aim == "mma.loop" && coin(0.5);
  bool alignedTails = masked && coin(0.5);
  bool wg = aim == "wgmma" || (aim == "pipeline" && coin(0.5)) || (alignedTails && coin(0.5));
  features_.insert(masked ? "load.masked" : "load.plain");
  if (!masked)
    features_.insert("matmul.unmasked");
  // Larger tiles compile more slowly (ptxas): the largest are rarer (what a
  // race needs, a long trip with copies landing during it, they give more).
  int64_t tm, tn, tk = *rc::gen::weightedElement<int64_t>({{4, 16}, {4, 32}, {2, 64}});
  if (wg) {
    features_.insert("matmul.wgmma");
    tm = coin(0.15) ? 128 : 64;
    // N a multiple of 8 up to 256 and at most 128 accumulators per thread
    // (4 warps: 64 x N / 128 per 64 rows). A campaign on 8 warps also draws
    // 128 x 256 (a warpgroup's m64n256 each, the widest benchmark tile), its
    // TK at most 64 so that 3 stages fit.
    if (tm == 64)
      tn = *rc::gen::weightedElement<int64_t>({{4, 16}, {6, 32}, {6, 64}, {3, 128}, {1, 256}});
    else if (p_.numWarps >= 8)
      tn = *rc::gen::weightedElement<int64_t>({{2, 16}, {3, 32}, {3, 64}, {1, 128}, {1, 256}});
    else
      tn = *rc::gen::weightedElement<int64_t>({{2, 16}, {3, 32}, {3, 64}, {1, 128}});
    if (tn == 256 && tm == 128) {
      features_.insert("matmul.wide_n");
      tk = std::min<int64_t>(tk, 64);
    }
  } else {
    // Warp tiles of 16 x 16 .. 64 whose count is a multiple of 4 (num_warps).
    auto [m, n] = *rc::gen::weightedElement<std::pair<int64_t, int64_t>>(
        {{8, {32, 32}}, {6, {16, 64}}, {5, {32, 64}}, {1, {32, 128}}});
    tm = m, tn = n;
  }
  // Stages that 3 would not fit (160 KiB, codegen/LowerMmaLoop.cpp): a 128 x
  // 128 wgmma tile with TK = 128 (64 KiB a stage and more with padding) takes
  // 2 (pipeline.stages=2, which the campaign's num_stages 3 reaches no other
  // way), few trips (ptxas and the interpreter are slow on it).
  bool twoStages = wg && coin(aim == "pipeline" ? 0.2 : 0.05);
  if (twoStages) {
    features_.insert("matmul.two_stages");
    tm = 128, tn = 128, tk = 128;
  }
  tile_ = {tm, tn};
  bool many = !twoStages && coin(0.1);
  int64_t gm = range(1, 2), gn = range(1, 2);
  int trips = twoStages ? range(1, 3) : coin(0.8) ? range(1, 8) : range(9, 24);
  if (many) {
    features_.insert("grid.many");
    gn = (140 + gm * 4 - 1) / (gm * 4); // >= 140 programs with gm * 4 rows of them
    gm *= 4;
    trips = range(1, 2);
    tm = std::min<int64_t>(tm, 64);
    tn = std::min<int64_t>(tn, 32);
    tk = std::min<int64_t>(tk, 32);
    tile_ = {tm, tn};
  }
  size_ = {tm * gm, tn * gn};
  int64_t depth = tk * trips;
  if (alignedTails) { // tails on M, and on N and K by 16s
    features_.insert("matmul.aligned_tails");
    size_[0] -= range(0, static_cast<int>(tm) - 1);
    size_[1] -= 16 * range(0, static_cast<int>(tn / 16) - 1);
    depth -= 16 * range(0, static_cast<int>(tk / 16) - 1);
    features_.insert("boundary.tail");
  } else if (masked) { // tails on every axis (the grid stays cdiv(size, tile))
    size_[0] -= range(0, static_cast<int>(tm) - 1);
    size_[1] -= range(0, static_cast<int>(tn) - 1);
    depth -= range(0, static_cast<int>(tk) - 1);
    features_.insert("boundary.tail");
  }
  features_.insert("matmul.trips" + std::string(trips >= 9 ? "9+" : trips >= 4 ? "4-8" : "1-3"));
  k.defines = {{"TM", std::to_string(tm)}, {"TN", std::to_string(tn)}, {"TK", std::to_string(tk)}};
  k.grid = {gm, gn, 1};
  k.gridAxes = {{"M", "TM"}, {"N", "TN"}};
  if (gm * gn > 1)
    features_.insert("grid.2d");
  // The fast paths' operand types: fp16 and bf16; int8 on mma.sync without the
  // pipeline, or on a warpgroup's tile with TK a multiple of 32 (wgmma, b
  // transposed in shared memory every trip: option int8-wgmma; not for the
  // two-stage tiles, whose three int8 stages fit).
  std::vector<DType> types = {DType::F16, DType::BF16};
  if ((!wg && aim != "pipeline") || (wg && tk % 32 == 0 && !twoStages))
    types.push_back(DType::I8);
  DType t = *rc::gen::elementOf(types);
  if (wg && t == DType::I8)
    features_.insert("matmul.int8_wgmma");
  DType acc = dotResult(t);
  features_.insert("dot." + conf(t));
  useType(t);
  useType(acc);
  DType outType = acc;
  // A fifth store the accumulator itself into the operands' type (the
  // tutorial's `*pc = c` into half): its cast is then done on the fragments
  // (codegen option epilogue-cast, path mma.loop.epilogue_cast).
  bool narrowStore = coin(0.2);
  if (narrowStore) {
    outType = t;
    features_.insert("matmul.narrow_store");
  } else if (coin(0.3)) {
    outType = pickType();
    if (!smallInts_ && isFloat(acc) && !isFloat(outType))
      outType = acc;
  }
  useType(outType);
  k.scalars = {{"M", DType::I32, static_cast<double>(size_[0])},
               {"N", DType::I32, static_cast<double>(size_[1])},
               {"K", DType::I32, static_cast<double>(depth)}};
  // Sometimes (unmasked forms) A's rows, B's, or both are a pitch apart that
  // is a parameter of its own (lda, ldb), with a scalar offset first now and
  // then (pitchedOperand).
  PitchedOperand pa{{}, "K", ""}, pb{{}, "N", ""};
  if (!masked && !many && coin(0.3))
    pa = pitchedOperand(k, "lda", t, size_[0], depth, {"M", "K"});
  if (!masked && !many && coin(0.2))
    pb = pitchedOperand(k, "ldb", t, depth, size_[1], {"K", "N"});
  tileMultiples_ = !masked;
  sizeTiles_ = {{"M", tm}, {"N", tn}, {"K", tk}};
  matmulOperand(k, "A", t, false, "M", "K", pa.shape);
  matmulOperand(k, "B", t, false, "K", "N", pb.shape);
  k.buffers.push_back(
      {"Y", outType, size_,
       std::vector<double>(static_cast<size_t>(size_[0] * size_[1]), isBool(outType) ? 1 : 3), true,
       sizeNames_});
  params_.push_back(lang(outType) + " *Y");
  for (const ScalarDesc &s : k.scalars) {
    int64_t claim = multipleOfClaim(static_cast<int64_t>(s.value));
    params_.push_back(lang(s.dtype) + " " + s.name +
                      (claim > 1 ? " __multipleof(" + std::to_string(claim) + ")" : ""));
  }
  // Sometimes persistent programs (bench/kernels/matmul_persistent.tc): a 1-D
  // grid of P programs, program p computing tiles p, p + P, ... of C: the
  // matmul loop nested in a loop over tiles (its stages, barriers and
  // accumulator set up again for every tile). P below the tile count (a
  // program runs several tiles) or above it (some run none); the grid does not
  // follow the sizes (no gridAxes: the kernel counts its tiles from M and N).
  bool persistent = !many && !twoStages && coin(0.15);
  if (persistent) {
    features_.insert("grid.persistent");
    features_.erase("grid.2d");
    int64_t tiles = gm * gn;
    k.grid = {coin(0.8) ? range(1, static_cast<int>(std::max<int64_t>(1, tiles / 2)))
                        : tiles + range(0, 1),
              1, 1};
    k.gridAxes.clear();
    line("int tilesN = (N + TN - 1) / TN;");
    line("int tiles = (M + TM - 1) / TM * tilesN;");
    line("for (int tile = get_program_id(0); tile < tiles; tile += get_num_programs(0)) {");
    pad_ = "    ";
    line("int pm = tile / tilesN;");
    line("int pn = tile % tilesN;");
  } else {
    line("int pm = get_program_id(0);");
    line("int pn = get_program_id(1);");
  }
  line("int rm[TM] = pm * TM + 0 ... TM;");
  line("int rn[TN] = pn * TN + 0 ... TN;");
  line("int rk[TK] = 0 ... TK;");
  std::string init = "0";
  if (coin(p_.dotAcc)) {
    features_.insert("dot.acc");
    init = coin(0.5) ? "(rm[:, newaxis] - rn[newaxis, :])" : (isFloat(acc) ? "0.5" : "2");
  }
  line(lang(acc) + " c[TM, TN] = " + init + ";");
  line(lang(t) + " *pa[TM, TK] = A" + pa.offset + " + rm[:, newaxis] * " + pa.pitch +
       " + rk[newaxis, :];");
  line(lang(t) + " *pb[TK, TN] = B" + pb.offset + " + rk[:, newaxis] * " + pb.pitch +
       " + rn[newaxis, :];");
  matmulLoop(false, false, t, t, masked, /*fused=*/true, pb.pitch);
  // The accumulator, read right after the loop.
  line("bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);");
  line(lang(outType) + " *pY[TM, TN] = Y + rm[:, newaxis] * N + rn[newaxis, :];");
  static const std::vector<std::string> outs = {"c", "max(c, 0)", "(c * 2)", "(c - 1)"};
  Val v = castTo({narrowStore ? std::string("c") : *rc::gen::elementOf(outs), acc}, outType);
  line("*?(mask) pY = " + v.text + ";");
  if (persistent) {
    pad_ = "  ";
    line("}");
  }
}

// A FlashAttention-like kernel (issue 29, item 7; docs/fuzz.md "Attention
// kernels"): per program BM query rows of one head (grid axis 1), a loop
// over the N keys by BN with two `@` per trip, `s = q @ k^T` (K^T loaded
// through strided pointers, or `q @ ^k`) and `acc += p @ v` with `p`
// computed in registers (exp2 of s, converted to the operand type); a
// running row max and sum (base-2 online softmax) and the accumulator
// rescaled by `alpha[:, newaxis]`; the K and V pointer tiles advanced each
// trip (the tutorial's `pk += BN * ld`) or recomputed from the trip's start;
// masked tails on M and N; fp16/bf16 inputs, fp32 accumulation; the rows
// `ld` elements apart (ld >= HD, not always a multiple of 16). The exponents
// are clamped (`max(x, -4)`, `alpha` at -2) and the trips few, so that with
// small-integer inputs every value is exact: p and alpha are powers of two,
// and the sums stay within float's 24 bits (docs/fuzz.md says why).
void Builder::attentionKernel(FuzzKernel &k) {
  setAxes(2);
  for (const char *f : {"attention", "dot", "dot.register_operand", "loop", "reduce",
                        "reduce.max", "reduce.sum", "op.math", "tile.2d", "broadcast.newaxis",
                        "load.masked", "store.masked", "op.select"})
    features_.insert(f);
  bool aimedValues = isValuesAim(p_.aim);
  if (p_.aim == "attention" || aimedValues)
    features_.insert("aim." + p_.aim);
  // The form of the GPU's mma.values path (docs/gpu-perf.md, "mma-values"):
  // BM a multiple of 16 x num_warps (p_.numWarps) with at most 64 rows per
  // warp; and, for its values pipeline, the rows `ld` apart a proven multiple
  // of 8 elements (`int ld __multipleof(8)`: 16-byte aligned K and V runs).
  // The other kernels keep the forms that test the fallbacks (smaller BM,
  // rows 1 or 3 elements past HD).
  bool valuesForm = aimedValues || coin(p_.attentionValues);
  int64_t valuesBm = 16 * std::max(1, p_.numWarps);
  int64_t bm = valuesForm && valuesBm <= 128
                   ? (valuesBm * 2 <= 64 * p_.numWarps && valuesBm * 2 <= 128 && coin(0.2)
                          ? valuesBm * 2
                          : valuesBm)
                   : *rc::gen::weightedElement<int64_t>({{3, 16}, {3, 32}, {2, 64}});
  if (valuesForm)
    features_.insert("attention.values_form");
  int64_t bn = *rc::gen::weightedElement<int64_t>({{1, 16}, {1, 32}});
  int64_t hd = *rc::gen::weightedElement<int64_t>({{1, 16}, {1, 32}});
  // A tenth of those aimed at the values pipeline: K^T and V tiles of 128 x
  // 128 (about 70 KiB a stage with padding), so that 3 stages pass the 160
  // KiB the lowering allows and it takes 2 (mma.values.pipeline.stages=2);
  // at most 2 trips (ptxas and the interpreter are slow on them).
  bool twoStages = p_.aim == "mma.values.pipeline" && valuesBm == 64 && coin(0.1);
  if (twoStages) {
    features_.insert("attention.two_stages");
    bm = 64, bn = 128, hd = 128;
  }
  DType t = coin(0.5) ? DType::F16 : DType::BF16;
  DType outType = coin(0.5) ? DType::F32 : t;
  useType(t);
  useType(outType);
  useType(DType::F32);
  features_.insert("dot." + conf(t));
  int trips = range(1, twoStages ? 2 : 4);
  bool tail = coin(0.7);
  int64_t m = tail ? range(1, static_cast<int>(2 * bm)) : bm * range(1, 2);
  int64_t n = bn * trips - (tail ? range(0, static_cast<int>(bn) - 1) : 0);
  int64_t heads = range(1, 2);
  // The row stride: HD (a multiple of 16), HD + 8 (a multiple of 8 only) or odd.
  // Kernels aimed at mma.values alone get the unaligned rows a quarter of the
  // time (the path without its pipeline).
  bool alignedRows = aimedValues ? (p_.aim != "mma.values" || coin(0.75)) : valuesForm && coin(0.85);
  int64_t ld = hd + (alignedRows ? *rc::gen::elementOf(std::vector<int64_t>{0, 8, 16})
                                 : *rc::gen::elementOf(std::vector<int64_t>{0, 8, 1, 3}));
  if (alignedRows)
    features_.insert("attention.aligned_rows");
  // (Two stages need both K^T and V streamed: K^T through its pointers.)
  bool carried = coin(0.7), ktPointers = twoStages || coin(0.6), fusedUpdate = coin(0.5), lse = coin(0.5);
  double scale = coin(0.5) ? 1.0 : 2.0;
  if (tail)
    features_.insert("boundary.tail");
  features_.insert(carried ? "loop.pointer" : "attention.recomputed_pointers");
  features_.insert(ktPointers ? "attention.kt_pointers" : "dot.trans_b");
  features_.insert("matmul.trips" + std::string(trips >= 4 ? "4-8" : "1-3"));
  if (lse)
    features_.insert("attention.lse");
  k.defines = {{"BM", std::to_string(bm)}, {"BN", std::to_string(bn)}, {"HD", std::to_string(hd)}};
  k.grid = {programs(m, bm), heads, 1};
  k.gridAxes = {{"M", "BM"}};
  if (k.grid[0] * k.grid[1] > 1)
    features_.insert("grid.2d");
  size_ = {m, n};
  tile_ = {bm, bn};
  // Class launches: any M; at most 4 trips (exactness); ld from HD up.
  sizeTiles_ = {{"M", bm}, {"N", bn}};
  classValues_["N"] = {1, 8, 16, 17, 24, 32};
  std::erase_if(classValues_["N"], [&](int64_t v) { return v > 4 * bn; });
  classValues_["ld"] = {hd, hd + 8, hd + 1, hd + 16};
  if (alignedRows) // the claim `__multipleof(8)` holds for every launch
    classValues_["ld"] = {hd, hd + 8, hd + 16};
  k.scalars = {{"M", DType::I32, static_cast<double>(m)},
               {"N", DType::I32, static_cast<double>(n)},
               {"ld", DType::I32, static_cast<double>(ld)},
               {"H", DType::I32, static_cast<double>(heads)},
               {"scale", DType::F32, scale}};
  classValues_["H"] = {}; // the grid's second axis: kept
  int64_t dataSeed = *rc::gen::inRange<int64_t>(0, 1 << 30);
  std::mt19937_64 rng(static_cast<uint64_t>(dataSeed));
  for (auto [name, rows] : {std::pair<const char *, const char *>{"Q", "M"}, {"K", "N"}, {"V", "N"}}) {
    BufferDesc b{name, t, {heads, rows[0] == 'M' ? m : n, ld}, {}, false, {"H", rows, "ld"}};
    fillInput(b, rng);
    params_.push_back(lang(t) + " *" + name);
    k.buffers.push_back(std::move(b));
  }
  // A fifth of the kernels not aimed at a values path run a matmul loop in
  // every trip (`e += x @ w` over KI by BK, unmasked, the form the GPU's
  // cp.async pipeline of matmul loops takes), summed into `w` and added to the
  // output: a pipelined loop nested in an attention loop (the two loops'
  // stages once shared their shared memory, 25ae5ba). Drawn from the data's
  // generator, after the inputs' values, so that every other kernel of a seed
  // stays what it was (no RapidCheck draw is added; the choice does not shrink).
  // X is [BM, KI] (every program reads the same rows) and W [KI, HD]; KI is a
  // multiple of BK, itself of 16 (a true `__multipleof(16)`, kept by the class
  // launches). With small-integer inputs e and w are exact integers (|w| <=
  // 4 trips x 64 x 16), so `acc / li + w` is the same bits on either side:
  // each of its operations (and the store's cast) is correctly rounded.
  bool nested = !aimedValues && !twoStages && rng() % 5 == 0;
  int64_t bk = 0, ki = 0;
  if (nested) {
    bk = rng() % 2 ? 32 : 16;
    ki = bk * static_cast<int64_t>(1 + rng() % 2);
    features_.insert("attention.nested_matmul");
    features_.insert("matmul.kloop");
    k.defines.push_back({"BK", std::to_string(bk)});
    for (auto [name, rows, cols] :
         {std::tuple<const char *, int64_t, int64_t>{"X", bm, ki}, {"W", ki, hd}}) {
      BufferDesc b{name, t, {rows, cols}, {}, false, {}};
      fillInput(b, rng);
      params_.push_back(lang(t) + " *" + name);
      k.buffers.push_back(std::move(b));
    }
    k.scalars.push_back({"KI", DType::I32, static_cast<double>(ki)});
    classValues_["KI"] = {};
  }
  // A quarter of the others walk the keys in two loops, as causal attention
  // does (docs/gpu-perf.md, "Two loops: causal attention"): the blocks left
  // of the program's rows (keys below pm * BM, rounded down to a block), then
  // the rest with the causal mask (key j kept for row i where j <= i); mi, li
  // and acc carried from the first loop into the second, q the a operand of
  // both. Carried pointer tiles go on from the first loop or start again at
  // the split (half each). Drawn from the data's generator after everything
  // else it draws, so that the other kernels of a seed stay what they were.
  bool causal = !nested && !twoStages && rng() % 4 == 0;
  bool rebase = causal && rng() % 2 == 0;
  if (causal) {
    features_.insert("attention.causal_loops");
    if (carried)
      features_.insert(rebase ? "attention.causal_rebased" : "attention.causal_carried_on");
  }
  // (Y last, as in the other kernels.)
  k.buffers.push_back({"L", DType::F32, {heads, m},
                       std::vector<double>(static_cast<size_t>(heads * m), 3), true, {"H", "M"}});
  params_.push_back("float *L");
  k.buffers.push_back({"Y", outType, {heads, m, ld},
                       std::vector<double>(static_cast<size_t>(heads * m * ld), 3), true,
                       {"H", "M", "ld"}});
  params_.push_back(lang(outType) + " *Y");
  for (const ScalarDesc &s : k.scalars)
    params_.push_back(lang(s.dtype) + " " + s.name +
                      (alignedRows && s.name == "ld" ? " __multipleof(8)"
                       : s.name == "KI"              ? " __multipleof(16)"
                                                     : ""));

  std::string T = lang(t);
  line("int pm = get_program_id(0);");
  line("int ph = get_program_id(1);");
  line("int rm[BM] = pm * BM + 0 ... BM;");
  line("int rn[BN] = 0 ... BN;");
  line("int rd[HD] = 0 ... HD;");
  line("int oq = ph * M * ld;");
  line("int ok = ph * N * ld;");
  line("int lh = ph < H ? ph * M : 0;");
  line("bool mq[BM, HD] = (rm[:, newaxis] < M) && (rd[newaxis, :] < HD);");
  line(T + " *pq[BM, HD] = Q + oq + rm[:, newaxis] * ld + rd[newaxis, :];");
  line(T + " q[BM, HD] = mq ? *pq : 0;");
  std::string kShape = ktPointers ? "[HD, BN]" : "[BN, HD]";
  auto kPointers = [&](const std::string &row) {
    return ktPointers ? "K + ok + rd[:, newaxis] + (" + row + "rn[newaxis, :]) * ld"
                      : "K + ok + (" + row + "rn[:, newaxis]) * ld + rd[newaxis, :]";
  };
  auto vPointers = [&](const std::string &row) {
    return "V + ok + (" + row + "rn[:, newaxis]) * ld + rd[newaxis, :]";
  };
  if (carried) {
    line(T + " *pk" + kShape + " = " + kPointers("") + ";");
    line(T + " *pv[BN, HD] = " + vPointers("") + ";");
  }
  line("float mi[BM] = -F32_INFINITY;");
  line("float li[BM] = 0;");
  line("float acc[BM, HD] = 0;");
  if (nested)
    line("float w[BM, HD] = 0;");
  bool compound = carried && coin(0.5); // pk += BN * ld, or pk = pk + BN * ld
  // The loop over the keys from `from` to `to`; with `causalMask` key j is
  // kept for row i where j <= i.
  auto keyLoop = [&](const std::string &from, const std::string &to, bool causalMask) {
    line("for (int n0 = " + from + "; n0 < " + to + "; n0 += BN) {");
    if (!carried) {
      line("  " + T + " *pk" + kShape + " = " + kPointers("n0 + ") + ";");
      line("  " + T + " *pv[BN, HD] = " + vPointers("n0 + ") + ";");
    }
    line("  bool cn[BN] = n0 + rn < N;");
    line(ktPointers ? "  bool mk[HD, BN] = (rd[:, newaxis] < HD) && cn[newaxis, :];"
                    : "  bool mk[BN, HD] = cn[:, newaxis] && (rd[newaxis, :] < HD);");
    line("  " + T + " kt" + kShape + " = mk ? *pk : 0;");
    line(std::string("  float s[BM, BN] = ") + (ktPointers ? "q @ kt;" : "q @ ^kt;"));
    std::string keep = "cn[newaxis, :]";
    if (causalMask) {
      line("  bool kc[BM, BN] = cn[newaxis, :] && (rm[:, newaxis] >= n0 + rn[newaxis, :]);");
      keep = "kc";
    }
    line("  float sm[BM, BN] = where(" + keep + ", s * scale, -F32_INFINITY);");
    line("  float mij[BM] = max(mi, sm[:, max]);");
    line("  float p[BM, BN] = where(" + keep + ", exp2(max(sm - mij[:, newaxis], -4.0)), 0.0);");
    line("  float alpha[BM] = exp2(max(mi - mij, -2.0));");
    line("  li = li * alpha + p[:, +];");
    if (nested) {
      line("  float e[BM, HD] = 0;");
      line("  int rx[BM] = 0 ... BM;");
      line("  int rk[BK] = 0 ... BK;");
      line("  " + T + " *px[BM, BK] = X + rx[:, newaxis] * KI + rk[newaxis, :];");
      line("  " + T + " *pw[BK, HD] = W + rk[:, newaxis] * HD + rd[newaxis, :];");
      line("  for (int k0 = 0; k0 < KI; k0 += BK) {");
      line("    " + T + " xa[BM, BK] = *px;");
      line("    " + T + " wb[BK, HD] = *pw;");
      line("    e += xa @ wb;");
      line("    px += BK;");
      line("    pw += BK * HD;");
      line("  }");
      line("  w += e;");
    }
    line("  bool mv[BN, HD] = cn[:, newaxis] && (rd[newaxis, :] < HD);");
    line("  " + T + " v[BN, HD] = mv ? *pv : 0;");
    if (fusedUpdate) {
      features_.insert("attention.fused_update");
      line("  acc = acc * alpha[:, newaxis] + (" + T + ")p @ v;");
    } else {
      line("  acc = acc * alpha[:, newaxis];");
      line("  acc += (" + T + ")p @ v;");
    }
    line("  mi = mij;");
    if (carried)
      for (const char *ptr : {"pk", "pv"})
        line(std::string("  ") + ptr +
             (compound ? " += BN * ld;" : " = " + std::string(ptr) + " + BN * ld;"));
    line("}");
  };
  if (!causal) {
    keyLoop("0", "N", false);
  } else {
    // Keys below the program's first row, whole blocks (every one of them
    // kept), then the rest with the mask; key 0 is kept for every row.
    line("int ns = min(pm * BM / BN * BN, N);");
    keyLoop("0", "ns", false);
    if (rebase && carried) {
      line("pk = " + kPointers("ns + ") + ";");
      line("pv = " + vPointers("ns + ") + ";");
    }
    keyLoop("ns", "N", true);
  }
  line("acc = acc / li[:, newaxis];");
  if (nested)
    line("acc = acc + w;");
  line(lang(outType) + " *py[BM, HD] = Y + oq + rm[:, newaxis] * ld + rd[newaxis, :];");
  line("*?(mq) py = " + (outType == DType::F32 ? std::string("acc") : "(" + lang(outType) + ")acc") +
       ";");
  line("float *pl[BM] = L + lh + rm;");
  line(std::string("*?(rm < M) pl = ") + (lse ? "mi + log2(li);" : "mi;"));
}

// Class launches (GenPolicy::argClasses, docs/fuzz.md "Argument classes"):
// one to three more launches of the kernel whose integer scalars take values
// of each specialisation class (1; 16 and 32; 8, 24 and 17, which are not
// multiples of 16, 8 and 24 being what a classifier that looks at too few
// bits takes for one), and whose buffers sometimes sit 1 to 3 elements into
// their allocation (a pointer that is not 16-byte aligned). Sizes stay
// multiples of their tile where the kernel needs it (plain loads,
// __multipleof claims); kernels whose colliding atomics add floats keep
// their sizes (more lanes per element could make the sums inexact).
void Builder::planClassLaunches(FuzzKernel &k) {
  if (!coin(p_.argClasses))
    return;
  bool keepSizes = features_.count("atomic.collide") > 0;
  int launches = range(1, 3);
  for (int l = 0; l < launches; ++l) {
    ClassLaunch launch;
    for (const ScalarDesc &s : k.scalars) {
      if (!isInt(s.dtype) || isBool(s.dtype) || !coin(0.7))
        continue;
      auto tile = sizeTiles_.find(s.name);
      bool size = tile != sizeTiles_.end() ||
                  std::any_of(k.buffers.begin(), k.buffers.end(), [&](const BufferDesc &b) {
                    return std::count(b.dims.begin(), b.dims.end(), s.name) > 0;
                  });
      if (size && keepSizes)
        continue;
      int64_t v;
      if (auto own = classValues_.find(s.name); own != classValues_.end()) {
        if (own->second.empty())
          continue;
        v = *rc::gen::elementOf(own->second);
      } else if (size && tileMultiples_ && tile != sizeTiles_.end()) {
        v = tile->second * range(1, p_.aim.empty() ? 3 : 2);
      } else if (size) {
        std::vector<int64_t> vs = {1, 8, 16, 17, 24, 32};
        if (rank_ == 3)
          vs = {1, 8, 16};
        v = *rc::gen::elementOf(vs);
      } else { // a trip count, a condition or a scalar operand
        v = *rc::gen::elementOf(std::vector<int64_t>{0, 1, 3, 16, 24});
      }
      if (v != static_cast<int64_t>(s.value))
        launch.ints.push_back({s.name, v});
    }
    if (coin(0.4))
      launch.offset = range(1, 3);
    if (launch.ints.empty() && launch.offset == 0)
      continue;
    for (const auto &[name, v] : launch.ints)
      features_.insert(v == 1 ? "arg_classes.one" : v % 16 == 0 ? "arg_classes.div16"
                                                    : v % 8 == 0 ? "arg_classes.div8"
                                                                 : "arg_classes.other");
    if (launch.offset)
      features_.insert("arg_classes.unaligned");
    k.classLaunches.push_back(std::move(launch));
  }
  if (!k.classLaunches.empty())
    features_.insert("arg_classes");
}

std::string Builder::source() const {
  std::ostringstream os;
  for (const std::string &h : helpers_)
    os << h;
  os << "__global__ void fuzz(" << join(params_, ", ") << ") {\n";
  for (const std::string &l : body_)
    os << l << "\n";
  os << "}\n";
  return os.str();
}

FuzzKernel Builder::build() {
  FuzzKernel k;
  k.kernelName = "fuzz";
  smallInts_ = coin(p_.aim.empty() ? p_.smallInts : p_.aimSmallInts);
  k.smallInts = smallInts_;
  features_.insert(smallInts_ ? "mode.small_ints" : "mode.general");
  edges_ = !smallInts_ && coin(p_.edgeValues);
  // One draw picks the kernel's shape: matmul as before (coin(p_.matmul) is
  // this draw), attention from the band just below it (so adding it changed
  // only the kernels drawn there).
  int shape = p_.aim.empty() ? range(0, 999) : 0;
  shapeDraw_ = shape;
  int matmulFrom = 1000 - static_cast<int>(p_.matmul * 1000);
  int attentionFrom = matmulFrom - static_cast<int>(p_.attention * 1000);
  if (p_.aim == "attention" || isValuesAim(p_.aim)) {
    attentionKernel(k);
  } else if (!p_.aim.empty()) {
    aimedMatmul(k, p_.aim);
  } else if (shape >= matmulFrom) {
    matmulKernel(k);
  } else if (shape >= attentionFrom) {
    attentionKernel(k);
  } else {
    setAxes(coin(p_.threeD) ? 3 : coin(p_.twoD) ? 2 : 1);
    unmasked_ = coin(p_.unmasked);
    poison_ = !unmasked_ && coin(p_.poisonLoads);
    static const char *const tiles[] = {"tile.1d", "tile.2d", "tile.3d"};
    features_.insert(tiles[rank_ - 1]);
    // A hot atomic is known before the shape (its 1-D tile is often wide):
    // the lowest band of the shape draw (so adding it changed only the
    // kernels drawn there).
    hotAtomic_ = shape < static_cast<int>(p_.atomic * p_.atomicCollide * p_.atomicHot * 1000);
    chooseShape(k);
    tileMultiples_ = unmasked_;
    for (size_t a = 0; a < static_cast<size_t>(rank_); ++a)
      sizeTiles_[sizeNames_[a]] = tile_[a];
    DType outType = pickType();
    planAtomic(outType);
    addBuffers(k, outType);
    bool hasLoop = coin(p_.loop), hasIf = coin(p_.ifStmt);
    bool hasReduce = !poison_ && coin(p_.reduction);
    bool hasDot = rank_ > 1 && !poison_ && coin(p_.dot);
    bool hasScalar = coin(p_.scalarParam);
    addScalars(k, hasLoop, hasIf, hasScalar);
    prologue(k);

    // The body: elementwise statements with the optional constructs between them.
    int statements = range(1, p_.maxStatements);
    for (int i = 0; i < statements; ++i) {
      declare(fresh("v"), expr(range(1, p_.maxDepth)));
      if (i == 0 && hasReduce)
        reduction();
      if (i == 0 && hasDot)
        dot();
      if (i == 0 && coin(features_.count("tile.wide") ? 0.5 : 0.1))
        sliceBuffer();
    }
    if (hasLoop)
      loop();
    if (hasIf)
      ifStatement();
    if (hasScalar && features_.count("tile.wide") && coin(0.8))
      sharedQuotient();
    epilogue(outType);
    if (divByS_)
      divisorEdge(k);
  }
  planClassLaunches(k);
  k.source = source();
  k.features.assign(features_.begin(), features_.end());
  return k;
}

} // namespace

const std::vector<std::string> &aimablePaths() {
  static const std::vector<std::string> kPaths = {"wgmma",    "mma.sync",
                                                   "mma.loop", "pipeline",
                                                   "mma.values.pipeline", "mma.values"};
  return kPaths;
}

bool isValuesAim(const std::string &aim) {
  return aim == "mma.values" || aim == "mma.values.pipeline";
}

const std::vector<std::string> &focusTargets() {
  static const std::vector<std::string> kTargets = [] {
    std::vector<std::string> t = aimablePaths();
    t.push_back("attention");
    return t;
  }();
  return kTargets;
}

bool tookPath(const std::vector<std::string> &paths, const std::string &aim) {
  for (const std::string &p : paths)
    if (p == aim || (aim == "pipeline" && p.rfind("pipeline.stages=", 0) == 0) ||
        (aim == "mma.values.pipeline" && p.rfind("mma.values.pipeline.stages=", 0) == 0))
      return true;
  return false;
}

rc::Gen<FuzzKernel> genKernel(const GenPolicy &policy) {
  return rc::gen::exec([policy] { return Builder(policy).build(); });
}

FuzzKernel generateKernel(const GenPolicy &policy, uint64_t seed, int size) {
  return genKernel(policy)(rc::Random(seed), size).value();
}

FuzzKernel shrinkKernel(const GenPolicy &policy, uint64_t seed, int size,
                        const std::function<bool(const FuzzKernel &)> &stillFails, double seconds,
                        int *steps) {
  auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  rc::Shrinkable<FuzzKernel> current = genKernel(policy)(rc::Random(seed), size);
  FuzzKernel best = current.value();
  bool progress = true;
  while (progress && elapsed() < seconds) {
    progress = false;
    rc::Seq<rc::Shrinkable<FuzzKernel>> shrinks = current.shrinks();
    while (rc::Maybe<rc::Shrinkable<FuzzKernel>> next = shrinks.next()) {
      if (elapsed() >= seconds)
        break;
      FuzzKernel candidate = next->value();
      // A smaller choice sequence can spell a longer kernel (a choice that
      // turns on a statement form); the reduction never makes the kernel longer.
      if (candidate.source.size() > best.source.size() || !stillFails(candidate))
        continue;
      current = *next;
      best = std::move(candidate);
      progress = true;
      if (steps)
        ++*steps;
      break;
    }
  }
  return best;
}

FuzzKernel classLaunchKernel(const FuzzKernel &k, size_t i) {
  FuzzKernel c = k;
  c.classLaunches.clear();
  const ClassLaunch &l = k.classLaunches.at(i);
  for (const auto &[name, v] : l.ints)
    for (ScalarDesc &s : c.scalars)
      if (s.name == name)
        s.value = static_cast<double>(v);
  auto scalar = [&](const std::string &name) -> std::optional<int64_t> {
    for (const ScalarDesc &s : c.scalars)
      if (s.name == name)
        return static_cast<int64_t>(s.value);
    return std::nullopt;
  };
  // New data comes from a stream of its own per launch and buffer.
  std::mt19937_64 rng(0x5eed0000u + i);
  for (BufferDesc &b : c.buffers) {
    std::vector<int64_t> shape = b.shape;
    for (size_t a = 0; a < b.dims.size() && a < shape.size(); ++a)
      if (std::optional<int64_t> v = scalar(b.dims[a]))
        shape[a] = std::max<int64_t>(*v, 1);
    b.offset = l.offset;
    if (shape == b.shape)
      continue;
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    double fill = b.data.empty() ? 3 : b.data[0];
    std::vector<double> data(static_cast<size_t>(n), fill);
    if (!b.isOutput)
      for (double &v : data)
        v = randomValue(b.dtype, k.smallInts, rng);
    b.shape = shape;
    b.data = exactValues(b.dtype, std::move(data));
  }
  for (size_t a = 0; a < c.gridAxes.size() && a < 3; ++a) {
    std::optional<int64_t> size = scalar(c.gridAxes[a].size), tile;
    for (const auto &[name, value] : c.defines)
      if (name == c.gridAxes[a].tile)
        tile = std::stoll(value);
    if (size && tile && *tile > 0)
      c.grid[a] = std::max<int64_t>(1, (*size + *tile - 1) / *tile);
  }
  return c;
}

std::string describeClassLaunch(const ClassLaunch &l) {
  std::string out;
  for (const auto &[name, v] : l.ints)
    out += (out.empty() ? "" : " ") + name + "=" + std::to_string(v);
  if (l.offset)
    out += (out.empty() ? "" : " ") + std::string("offset=") + std::to_string(l.offset);
  return out;
}

std::string describeKernel(const FuzzKernel &k) {
  std::ostringstream os;
  os << "// defines:";
  for (const auto &[name, value] : k.defines)
    os << " -D" << name << "=" << value;
  os << "\n// grid: [" << k.grid[0] << ", " << k.grid[1] << ", " << k.grid[2] << "]\n// args:";
  for (const BufferDesc &b : k.buffers) {
    os << " " << b.name << ":" << conformanceName(b.dtype) << "[";
    for (size_t i = 0; i < b.shape.size(); ++i)
      os << (i ? "," : "") << b.shape[i];
    os << "]";
  }
  for (const ScalarDesc &s : k.scalars)
    os << " " << s.name << "=" << s.value << ":" << conformanceName(s.dtype);
  os << (k.smallInts ? "\n// mode: small integers\n" : "\n// mode: general values\n");
  for (const ClassLaunch &l : k.classLaunches)
    os << "// class launch: " << describeClassLaunch(l) << "\n";
  return os.str() + k.source;
}

} // namespace tc::fuzz
