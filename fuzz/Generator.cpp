//===- Generator.cpp - Random well-typed, UB-free Triton-C kernels -------===//
#include "fuzz/Generator.h"

#include "interp/Launch.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <set>
#include <sstream>

namespace tc::fuzz {
namespace {

/// An expression: its text and element type (its shape broadcasts to the tile).
struct Val {
  std::string text;
  DType type = DType::I32;
};

std::string lang(DType t) { return std::string(langName(t)); }
std::string conf(DType t) { return std::string(conformanceName(t)); }
bool isIntegral(DType t) { return isInt(t); }

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

// `v` rounded to dtype `t` as the host array stores it (so JSON data is exact).
std::vector<double> exactValues(DType t, std::vector<double> vals) {
  HostArray a = HostArray::zeros(t, {static_cast<int64_t>(vals.size())});
  for (size_t i = 0; i < vals.size(); ++i) {
    a.setDouble(static_cast<int64_t>(i), vals[i]);
    vals[i] = a.getDouble(static_cast<int64_t>(i));
  }
  return vals;
}

/// Builds one kernel; every choice is drawn with `*gen` inside rc::gen::exec so
/// that RapidCheck can shrink it.
class Builder {
public:
  explicit Builder(const GenPolicy &p) : p_(p) {}
  FuzzKernel build();

private:
  const GenPolicy &p_;
  bool twoD_ = false, poison_ = false, unmasked_ = false, smallInts_ = false;
  int64_t tm_ = 1, tn_ = 1; // tile sizes (1-D: tm_ is TS)
  int64_t m_ = 1, n_ = 1;   // problem sizes (1-D: m_ is N)
  std::vector<std::string> params_;
  std::vector<Val> tiles_;   // full-shape variables
  std::vector<Val> leaves_;  // scalars and broadcast reductions
  std::vector<Val> exprs_;   // earlier expressions, repeated verbatim (CSE)
  std::vector<Val> loads_;   // each input's load, repeated inside loops
  std::vector<std::string> reducedScalars_; // 1-D reductions (for data-dependent `if`)
  bool recording_ = true;    // whether expr() remembers its results in exprs_
  bool inHelper_ = false;    // generating a helper's body: only its parameters are in scope
  std::vector<std::string> helpers_; // helper functions, emitted before the kernel
  std::vector<std::string> body_;
  std::set<std::string> features_;
  int nextId_ = 0;

  bool coin(double prob);
  int range(int lo, int hi) { return *rc::gen::inRange(lo, hi + 1); }
  DType pickType();
  std::string shape() const { return twoD_ ? "[TM, TN]" : "[TS]"; }
  std::string fresh(const char *prefix) { return prefix + std::to_string(nextId_++); }
  void useType(DType t) { features_.insert("dtype." + conf(t)); }
  void declare(const std::string &name, const Val &v);

  Val castTo(const Val &v, DType to);
  Val leaf();
  Val constantFor(const Val &a);
  Val expr(int depth);
  Val binary(int depth);
  Val helperCall(int depth);
  Val unary(int depth);

  void chooseShape(FuzzKernel &k);
  void addBuffers(FuzzKernel &k, DType outType);
  void addScalars(FuzzKernel &k, bool hasLoop, bool hasIf, bool hasScalar);
  void prologue(const FuzzKernel &k);
  void epilogue(DType outType);
  void reduction();
  void dot();
  void loop();
  void ifStatement();
};

bool Builder::coin(double prob) {
  int threshold = 1000 - static_cast<int>(prob * 1000);
  return range(0, 999) >= threshold;
}

DType Builder::pickType() {
  // float first: RapidCheck shrinks toward the first element.
  static const std::vector<DType> types = {DType::F32, DType::I32, DType::F16, DType::BF16,
                                           DType::F64, DType::I8,  DType::I16, DType::I64,
                                           DType::U8,  DType::U16, DType::U32, DType::U64,
                                           DType::Bool};
  DType t = *rc::gen::elementOf(types);
  useType(t);
  return t;
}

void Builder::declare(const std::string &name, const Val &v) {
  useType(v.type);
  body_.push_back("  " + lang(v.type) + " " + name + shape() + " = " + v.text + ";");
  tiles_.push_back({name, v.type});
}

// An explicit conversion that is always defined: floats headed for an integer
// type are clamped first (max/min also turn NaN into a bound).
Val Builder::castTo(const Val &v, DType to) {
  if (v.type == to)
    return v;
  features_.insert("cast");
  useType(to);
  if (isFloat(v.type) && isIntegral(to)) {
    features_.insert("cast.float_to_int");
    bool narrow = bitWidth(to) == 8;
    std::string lo = isUnsignedInt(to) ? "0" : (narrow ? "-100" : "-1000");
    std::string hi = narrow ? "100" : "1000";
    return {"(" + lang(to) + ")min(max(" + v.text + ", " + lo + "), " + hi + ")", to};
  }
  return {"(" + lang(to) + ")(" + v.text + ")", to};
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
    return {"get_num_programs(" + std::to_string(twoD_ ? range(0, 1) : 0) + ")", DType::I32};
  }
  if (choice == 6) {
    features_.insert("range");
    if (!twoD_)
      return {"rm", DType::I32};
    features_.insert("broadcast.newaxis");
    return coin(0.5) ? Val{"rm[:, newaxis]", DType::I32} : Val{"rn[newaxis, :]", DType::I32};
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
  if (recording_ && exprs_.size() < 64)
    exprs_.push_back(v);
  return v;
}

Val Builder::binary(int depth) {
  static const std::vector<std::string> ops = {"+", "-", "*", "/", "%", "cmp", "min", "bit",
                                               "shift", "select"};
  std::string op = *rc::gen::elementOf(ops);
  Val a = expr(depth - 1);
  bool constant = (op == "+" || op == "-" || op == "*" || op == "/" || op == "%" ||
                   op == "bit" || op == "shift") && coin(0.25);
  Val b = constant ? constantFor(a) : expr(depth - 1);
  DType rt = constant ? b.type : promote(a.type, b.type);
  auto plain = [&](const std::string &o, const std::string &name) {
    features_.insert("op." + name);
    return Val{"(" + a.text + " " + o + " " + b.text + ")", rt};
  };
  if (op == "+") return plain("+", "add");
  if (op == "-") return plain("-", "sub");
  if (op == "*" && !constant && isIntegral(a.type) && isIntegral(b.type) && bitWidth(rt) >= 32 &&
      coin(0.2)) {
    features_.insert("op.umulhi");
    return {"umulhi(" + a.text + ", " + b.text + ")", rt};
  }
  if (op == "*") return plain("*", "mul");
  if (op == "/" || op == "%") {
    std::string name = op == "/" ? "div" : "mod";
    if (isFloat(rt))
      return plain(op, name + ".float");
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
  features_.insert("op.select");
  Val c = expr(depth - 1);
  Val d = expr(depth - 1);
  std::string fn = coin(0.3) ? "where(" : "select(";
  return {fn + c.text + " < " + d.text + ", " + a.text + ", " + b.text + ")", rt};
}

// `hN(a, b)`: a helper over two tile parameters (inlined by the frontend).
Val Builder::helperCall(int depth) {
  Val a = expr(depth - 1), b = expr(depth - 1);
  std::string name = fresh("h");
  std::vector<Val> tiles = {{"p0", a.type}, {"p1", b.type}};
  std::swap(tiles, tiles_);
  bool recording = recording_;
  recording_ = false;
  inHelper_ = true;
  Val body = expr(depth - 1);
  inHelper_ = false;
  recording_ = recording;
  std::swap(tiles, tiles_);
  features_.insert("helper");
  helpers_.push_back(lang(body.type) + " " + name + "(" + lang(a.type) + " p0" + shape() + ", " +
                     lang(b.type) + " p1" + shape() + ") {\n  return " + body.text + ";\n}\n");
  return {name + "(" + a.text + ", " + b.text + ")", body.type};
}

Val Builder::unary(int depth) {
  Val a = expr(depth - 1);
  int choice = range(0, 4);
  if (choice == 0)
    return castTo(a, pickType());
  if (choice == 4 && !isBool(a.type)) {
    // Another dtype of the same width (floats may become NaN or inf: defined).
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
    static const std::vector<std::string> fns = {"sqrt", "abs",  "floor", "ceil", "exp",  "fma",
                                                 "exp2", "log",  "log2",  "sin",  "cos", "rsqrt"};
    std::string f = *rc::gen::elementOf(fns);
    features_.insert("op.math");
    if (f == "fma") {
      features_.insert("op.fma");
      return {"fma(" + a.text + ", " + a.text + ", " + a.text + ")", a.type};
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

// A reduction of a tile variable; the result comes back as a scalar (1-D) or
// a broadcast row/column (2-D) leaf.
void Builder::reduction() {
  Val v = *rc::gen::elementOf(tiles_);
  std::vector<std::string> ops = {"+", "argmax", "argmin"};
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
  features_.insert(std::string("reduce.") + (op == "+" ? "sum" : op == "&" ? "and"
                                             : op == "|" ? "or" : op == "^" ? "xor" : op));
  useType(rt);
  std::string name = fresh("r");
  if (!twoD_) {
    body_.push_back("  " + lang(rt) + " " + name + " = " + v.text + "[" + op + "];");
    leaves_.push_back({name, rt});
    reducedScalars_.push_back(name);
    return;
  }
  features_.insert("broadcast.newaxis");
  if (coin(0.5)) {
    body_.push_back("  " + lang(rt) + " " + name + "[TN] = " + v.text + "[" + op + ", :];");
    leaves_.push_back({name + "[newaxis, :]", rt});
  } else {
    body_.push_back("  " + lang(rt) + " " + name + "[TM] = " + v.text + "[:, " + op + "];");
    leaves_.push_back({name + "[:, newaxis]", rt});
  }
}

// `a @ ^b` (or `^a @ b`) of two tiles converted to the operand type, summed
// back to a broadcast column (row).
void Builder::dot() {
  static const std::vector<DType> types = {DType::F32, DType::F16, DType::I8, DType::BF16,
                                           DType::F64};
  DType t = *rc::gen::elementOf(types);
  DType acc = t == DType::I8 ? DType::I32 : t == DType::F64 ? DType::F64 : DType::F32;
  features_.insert("dot");
  features_.insert("dot." + conf(t));
  useType(t);
  useType(acc);
  std::string a = fresh("da"), b = fresh("db"), d = fresh("dd"), s = fresh("ds");
  declare(a, castTo(*rc::gen::elementOf(tiles_), t));
  declare(b, castTo(*rc::gen::elementOf(tiles_), t));
  tiles_.pop_back();
  tiles_.pop_back();
  if (coin(0.5)) {
    body_.push_back("  " + lang(acc) + " " + d + "[TM, TM] = " + a + " @ ^" + b + ";");
    body_.push_back("  " + lang(acc) + " " + s + "[TM] = " + d + "[:, +];");
    leaves_.push_back({s + "[:, newaxis]", acc});
  } else {
    body_.push_back("  " + lang(acc) + " " + d + "[TN, TN] = ^" + a + " @ " + b + ";");
    body_.push_back("  " + lang(acc) + " " + s + "[TN] = " + d + "[+, :];");
    leaves_.push_back({s + "[newaxis, :]", acc});
  }
}

// `for (int i = 0; i < K; i++) acc = acc OP e;` with K a runtime argument (or
// the loop counting down, or `while`, or `do ... while`; sometimes inside
// another loop, sometimes with `break` or `continue`).
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
  recording_ = false;
  Val step = castTo(expr(p_.maxDepth - 1), init.type);
  recording_ = true;
  leaves_.resize(leaves);
  std::string op = isBool(init.type) || coin(0.5) ? "+" : (coin(0.5) ? "max" : "min");
  std::string update = op == "+" ? acc + " + " + step.text : op + "(" + acc + ", " + step.text + ")";
  bool nested = coin(0.2);
  std::string outer = nested ? fresh("j") : "";
  if (nested) {
    features_.insert("loop.nested");
    body_.push_back("  for (int " + outer + " = 0; " + outer + " < 2; " + outer + "++) {");
  }
  int form = range(0, 3);
  if (form == 0) {
    body_.push_back("  for (int " + i + " = 0; " + i + " < K; " + i + "++) {");
  } else if (form == 1) {
    features_.insert("loop.down");
    body_.push_back("  for (int " + i + " = K; " + i + " > 0; " + i + " -= 1) {");
  } else {
    features_.insert(form == 2 ? "loop.while" : "loop.do");
    body_.push_back("  int " + i + " = 0;");
    body_.push_back(form == 2 ? "  while (" + i + " < K) {" : "  do {");
    body_.push_back("    " + i + "++;");
  }
  if (coin(0.25)) {
    bool brk = coin(0.5);
    features_.insert(brk ? "loop.break" : "loop.continue");
    body_.push_back("    if (" + i + " == " + std::to_string(range(0, 2)) + ") " +
                    (brk ? "break;" : "continue;"));
  }
  body_.push_back("    " + acc + " = " + update + ";");
  body_.push_back(form == 3 ? "  } while (" + i + " < K);" : "  }");
  if (nested)
    body_.push_back("  }");
  tiles_.push_back({acc, init.type});
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
  body_.push_back("  if (" + cond + ") {");
  body_.push_back("    " + w + " = " + then.text + ";");
  if (coin(0.5)) {
    Val other = castTo(expr(p_.maxDepth - 1), init.type);
    body_.push_back("  } else {");
    body_.push_back("    " + w + " = " + other.text + ";");
  }
  body_.push_back("  }");
  tiles_.push_back({w, init.type});
}

// Tile sizes, problem sizes (usually not multiples of the tile) and the grid.
void Builder::chooseShape(FuzzKernel &k) {
  auto log2of = [](int v) {
    int e = 0;
    while ((1 << (e + 1)) <= v)
      ++e;
    return e;
  };
  tm_ = 1 << range(0, log2of(twoD_ ? p_.max2DTile : p_.max1DTile));
  tn_ = twoD_ ? 1 << range(0, log2of(p_.max2DTile)) : 1;
  auto extent = [&](int64_t tile) -> int64_t {
    if (unmasked_)
      return tile * range(1, 3);
    int64_t n = range(1, static_cast<int>(2 * tile + 1));
    return n % tile == 0 && tile > 1 ? n + 1 : n;
  };
  m_ = extent(tm_);
  n_ = twoD_ ? extent(tn_) : 1;
  auto programs = [&](int64_t size, int64_t tile) {
    int64_t g = (size + tile - 1) / tile;
    return unmasked_ || !coin(p_.extraProgram) ? g : (features_.insert("grid.extra"), g + 1);
  };
  if (twoD_) {
    k.defines = {{"TM", std::to_string(tm_)}, {"TN", std::to_string(tn_)}};
    k.grid = {programs(m_, tm_), programs(n_, tn_), 1};
  } else {
    k.defines = {{"TS", std::to_string(tm_)}};
    k.grid = {programs(m_, tm_), 1, 1};
  }
  if (tm_ == 1 || (twoD_ && tn_ == 1))
    features_.insert("tile.size1");
  if (k.grid[0] * k.grid[1] > 1)
    features_.insert(twoD_ ? "grid.2d" : "grid.multi");
  if (!unmasked_ && (m_ % tm_ != 0 || (twoD_ && n_ % tn_ != 0)))
    features_.insert("boundary.tail");
}

// The buffers (inputs with their data, then the output Y) and their parameters.
void Builder::addBuffers(FuzzKernel &k, DType outType) {
  int inputs = range(1, p_.maxInputs);
  std::vector<DType> inTypes;
  for (int i = 0; i < inputs; ++i)
    inTypes.push_back(pickType());
  int64_t dataSeed = *rc::gen::inRange<int64_t>(0, 1 << 30);
  std::vector<int64_t> shape = twoD_ ? std::vector<int64_t>{m_, n_} : std::vector<int64_t>{m_};
  std::mt19937_64 rng(static_cast<uint64_t>(dataSeed));
  for (int i = 0; i < inputs; ++i) {
    BufferDesc b{"X" + std::to_string(i), inTypes[i], shape, {}, false};
    std::vector<double> vals(static_cast<size_t>(m_ * n_));
    for (double &v : vals)
      v = randomValue(b.dtype, smallInts_, rng);
    b.data = exactValues(b.dtype, std::move(vals));
    params_.push_back(lang(b.dtype) + " *" + b.name);
    k.buffers.push_back(std::move(b));
  }
  std::vector<double> fill(static_cast<size_t>(m_ * n_), isBool(outType) ? 1 : 3);
  k.buffers.push_back({"Y", outType, shape, std::move(fill), true});
  params_.push_back(lang(outType) + " *Y");
}

// The scalar parameters: sizes, then K (loops), C (`if`) and S (a leaf).
void Builder::addScalars(FuzzKernel &k, bool hasLoop, bool hasIf, bool hasScalar) {
  if (twoD_)
    k.scalars.push_back({"M", DType::I32, static_cast<double>(m_)});
  k.scalars.push_back({"N", DType::I32, static_cast<double>(twoD_ ? n_ : m_)});
  if (hasLoop)
    k.scalars.push_back({"K", DType::I32, static_cast<double>(range(0, 3))});
  if (hasIf)
    k.scalars.push_back({"C", DType::I32, static_cast<double>(range(0, 3))});
  if (hasScalar) {
    DType t = pickType();
    features_.insert("scalar.param");
    double v = isBool(t) ? range(0, 1)
               : isFloat(t) ? range(-16, 16) / 4.0
               : isUnsignedInt(t) ? range(0, 4) : range(-4, 4);
    k.scalars.push_back({"S", t, exactValues(t, {v})[0]});
    leaves_.push_back({"S", t});
  }
  for (const ScalarDesc &s : k.scalars)
    params_.push_back(lang(s.dtype) + " " + s.name);
}

// Ranges, the bounds mask, pointers and the inputs' loads.
void Builder::prologue(const FuzzKernel &k) {
  std::string offs;
  body_.push_back("  int pm = get_program_id(0);");
  if (twoD_) {
    body_.push_back("  int pn = get_program_id(1);");
    body_.push_back("  int rm[TM] = pm * TM + 0 ... TM;");
    body_.push_back("  int rn[TN] = pn * TN + 0 ... TN;");
    body_.push_back("  bool mask[TM, TN] = (rm[:, newaxis] < M) && (rn[newaxis, :] < N);");
    offs = "rm[:, newaxis] * N + rn[newaxis, :]";
    features_.insert("broadcast.newaxis");
  } else {
    body_.push_back("  int rm[TS] = pm * TS + 0 ... TS;");
    body_.push_back("  bool mask[TS] = rm < N;");
    offs = "rm";
  }
  for (const BufferDesc &b : k.buffers) {
    std::string p = "p" + b.name, x = "x" + b.name.substr(1);
    body_.push_back("  " + lang(b.dtype) + " *" + p + shape() + " = " + b.name + " + " + offs + ";");
    if (b.isOutput)
      continue;
    std::string load = unmasked_ ? "*" + p : poison_ ? "*?(mask) " + p : "mask ? *" + p + " : 0";
    features_.insert(unmasked_ ? "load.plain" : poison_ ? "load.poison" : "load.masked");
    body_.push_back("  " + lang(b.dtype) + " " + x + shape() + " = " + load + ";");
    loads_.push_back({"((" + lang(b.dtype) + ")(" + load + "))", b.dtype});
    tiles_.push_back({x, b.dtype});
  }
}

// The result, written to Y by a (masked) store or an atomic.
void Builder::epilogue(DType outType) {
  Val result = expr(range(1, p_.maxDepth));
  if (coin(0.6)) { // mostly store something that depends on the last statement
    const Val &last = tiles_.back();
    result = {"(" + last.text + " + " + result.text + ")", promote(last.type, result.type)};
  }
  result = castTo(result, outType);
  features_.insert(unmasked_ ? "store.plain" : "store.masked");
  std::string storeMask = "mask";
  if (!unmasked_ && !poison_ && coin(0.3)) {
    features_.insert("store.data_mask");
    storeMask = "mask && (" + expr(1).text + " < " + expr(1).text + ")";
  }
  if (isBool(outType) || poison_ || !coin(p_.atomic)) {
    body_.push_back(std::string("  ") + (unmasked_ ? "*pY" : "*?(" + storeMask + ") pY") + " = " +
                    result.text + ";");
    return;
  }
  // Every lane updates its own element (no two programs share one), so the
  // result does not depend on the order of programs or threads.
  std::vector<std::string> ops = {"add", "max", "min", "xchg"};
  if (isIntegral(outType))
    ops.insert(ops.end(), {"and", "or", "xor"});
  std::string op = *rc::gen::elementOf(ops);
  features_.insert("atomic");
  features_.insert("atomic." + op);
  body_.push_back("  atomic_" + op + "(pY, " + result.text +
                  (unmasked_ ? std::string(")") : ", " + storeMask + ")") + ";");
}

FuzzKernel Builder::build() {
  FuzzKernel k;
  k.kernelName = "fuzz";
  twoD_ = coin(p_.twoD);
  smallInts_ = coin(p_.smallInts);
  unmasked_ = coin(p_.unmasked);
  poison_ = !unmasked_ && coin(p_.poisonLoads);
  k.smallInts = smallInts_;
  features_.insert(smallInts_ ? "mode.small_ints" : "mode.general");
  features_.insert(twoD_ ? "tile.2d" : "tile.1d");
  chooseShape(k);
  DType outType = pickType();
  addBuffers(k, outType);
  bool hasLoop = coin(p_.loop), hasIf = coin(p_.ifStmt);
  bool hasReduce = !poison_ && coin(p_.reduction);
  bool hasDot = twoD_ && !poison_ && coin(p_.dot);
  addScalars(k, hasLoop, hasIf, coin(p_.scalarParam));
  prologue(k);

  // The body: elementwise statements with the optional constructs between them.
  int statements = range(1, p_.maxStatements);
  for (int i = 0; i < statements; ++i) {
    declare(fresh("v"), expr(range(1, p_.maxDepth)));
    if (i == 0 && hasReduce)
      reduction();
    if (i == 0 && hasDot)
      dot();
  }
  if (hasLoop)
    loop();
  if (hasIf)
    ifStatement();
  epilogue(outType);

  std::ostringstream os;
  for (const std::string &h : helpers_)
    os << h;
  os << "__global__ void fuzz(";
  for (size_t i = 0; i < params_.size(); ++i)
    os << (i ? ", " : "") << params_[i];
  os << ") {\n";
  for (const std::string &line : body_)
    os << line << "\n";
  os << "}\n";
  k.source = os.str();
  k.features.assign(features_.begin(), features_.end());
  return k;
}

} // namespace

rc::Gen<FuzzKernel> genKernel(const GenPolicy &policy) {
  return rc::gen::exec([policy] { return Builder(policy).build(); });
}

FuzzKernel generateKernel(const GenPolicy &policy, uint64_t seed, int size) {
  return genKernel(policy)(rc::Random(seed), size).value();
}

FuzzKernel shrinkKernel(const GenPolicy &policy, uint64_t seed, int size,
                        const std::function<bool(const FuzzKernel &)> &stillFails,
                        double seconds, int *steps) {
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
      if (!stillFails(candidate))
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
  return os.str() + k.source;
}

} // namespace tc::fuzz
