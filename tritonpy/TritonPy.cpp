// Tile IR -> a Triton Python module. One Python statement per op, every value
// named x<N> in print order; the reference semantics spelled out where Triton's
// operations differ (docs/triton.md has the table of differences).
#include "tritonpy/TritonPy.h"

#include "support/FloatBits.h"

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

namespace tc::tritonpy {

namespace {

using ir::Op;
using ir::OpKind;
using ir::Type;
using ir::Value;

// A Python string literal of `s` made of printable ASCII only: a label may hold
// any byte (a newline in a comment would end the comment and start code).
std::string pyStringLiteral(const std::string &s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out + "\"";
}

// `s` as it may stand in a comment: itself when it is printable ASCII without
// quotes or backslashes, else a Python string literal (a newline in a file name
// would end the comment and start code).
std::string commentText(const std::string &s) {
  for (unsigned char c : s)
    if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
      return pyStringLiteral(s);
  return s;
}

std::string tlType(DType t) {
  switch (t) {
  case DType::Bool: return "tl.int1";
  case DType::I8: return "tl.int8";
  case DType::I16: return "tl.int16";
  case DType::I32: return "tl.int32";
  case DType::I64: return "tl.int64";
  case DType::U8: return "tl.uint8";
  case DType::U16: return "tl.uint16";
  case DType::U32: return "tl.uint32";
  case DType::U64: return "tl.uint64";
  case DType::F16: return "tl.float16";
  case DType::BF16: return "tl.bfloat16";
  case DType::F32: return "tl.float32";
  case DType::F64: return "tl.float64";
  }
  return "?";
}

bool isNarrowFloat(DType t) { return t == DType::F16 || t == DType::BF16; }

/// The signed integer type of a float's width (for bit manipulation).
std::string bitsType(DType t) {
  switch (bitWidth(t)) {
  case 16: return "tl.int16";
  case 32: return "tl.int32";
  default: return "tl.int64";
  }
}

/// The sign bit of a float type as the signed integer of its width.
std::string signBit(DType t) {
  switch (bitWidth(t)) {
  case 16: return "-32768";
  case 32: return "-2147483648";
  default: return "-9223372036854775808";
  }
}

std::string shapeText(const ir::Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::string doubleText(double d) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", d);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos)
    s += ".0";
  return s;
}

/// The bit pattern of `d` (already rounded to `t`) as the signed integer of t's width.
int64_t floatBitsSigned(double d, DType t) {
  switch (t) {
  case DType::F16: return static_cast<int16_t>(doubleToHalfBits(d));
  case DType::BF16: return static_cast<int16_t>(doubleToBF16Bits(d));
  case DType::F32: {
    float f = static_cast<float>(d);
    int32_t b;
    std::memcpy(&b, &f, 4);
    return b;
  }
  default: {
    int64_t b;
    std::memcpy(&b, &d, 8);
    return b;
  }
  }
}

// Python names that a parameter may not take as it is.
const std::set<std::string> &reservedNames() {
  static const std::set<std::string> r = {
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
      "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if",
      "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
      "while", "with", "yield", "tl", "triton", "torch", "range", "float", "int", "bool", "min",
      "max", "abs", "len", "print", "grid", "launch", "num_warps", "num_stages", "struct",
      "KERNEL", "PARAMS", "KERNEL_NAME", "math"};
  return r;
}

bool looksGenerated(const std::string &n) {
  if (n.rfind("_tc", 0) == 0)
    return true;
  if (n.size() < 2 || std::string_view("xict").find(n[0]) == std::string_view::npos)
    return false;
  for (size_t i = 1; i < n.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(n[i])))
      return false;
  return true;
}

std::string paren(const std::string &x);

class Emitter {
public:
  Emitter(const ir::Module &m, const ir::Function &fn, const Options &opts)
      : m_(m), fn_(fn), opts_(opts) {}

  Result run();

private:
  const ir::Module &m_;
  const ir::Function &fn_;
  const Options &opts_;
  std::ostringstream out_;
  int indent_ = 1;
  std::map<const Value *, std::string> names_;
  int next_ = 0, nextLoop_ = 0, nextTemp_ = 0;
  std::set<std::string> helpers_; // helper functions used, by name
  std::map<std::string, std::string> helperCode_;
  std::string error_;

  void line(const std::string &s) { out_ << std::string(4 * indent_, ' ') << s << '\n'; }
  const std::string &name(const Value *v) { return names_.at(v); }
  const std::string &define(const Value *v) {
    auto it = names_.find(v);
    if (it != names_.end())
      return it->second;
    return names_[v] = "x" + std::to_string(next_++);
  }
  bool refuse(const Op &op, const std::string &what) {
    if (error_.empty()) {
      error_ = std::string(kUnsupported) + what;
      if (op.loc().line) {
        std::string file = op.loc().file < m_.files.size() ? m_.files[op.loc().file] : "";
        error_ += " (" + (file.empty() ? "line " : file + ":") + std::to_string(op.loc().line) + ")";
      }
    }
    return false;
  }
  std::string helper(const std::string &nm, const std::string &code) {
    helpers_.insert(nm);
    helperCode_[nm] = code;
    return nm;
  }

  std::string constant(const Type &t, const ir::AttrValue &v);
  std::string full(const ir::Shape &s, DType t, const std::string &value);
  std::string toF32(const std::string &x, DType t) {
    return t == DType::BF16 ? conv(x, t, DType::F32) : t == DType::F16 ? x + ".to(tl.float32)" : x;
  }
  std::string conv(const std::string &x, DType from, DType to);
  std::string floatMinMax(DType t, bool isMax);
  std::string argCombine(DType t, bool isMax);
  std::string simpleCombine(const std::string &nm, const std::string &expr);
  std::string axisIndex(const ir::Shape &s, int64_t axis, const std::string &scalarIndex);

  bool emitBlock(const ir::Block &b);
  bool emitOp(const Op &op);
  bool emitElementwise(const Op &op);
  bool emitCast(const Op &op);
  bool emitReduce(const Op &op);
  bool emitMemory(const Op &op);
  bool emitFloatAtomicMinMax(const Op &op, bool isMax);
  bool emitSlice(const Op &op);
  bool emitFor(const Op &op);
  bool emitIf(const Op &op);
  bool emitWhile(const Op &op);
  void assignAll(const std::vector<std::string> &to, const std::vector<Value *> &from);
  std::string paramName(unsigned i) const;
};

std::string Emitter::paramName(unsigned i) const {
  std::string n = fn_.paramName(i);
  if (n.empty())
    n = "arg" + std::to_string(i);
  if (reservedNames().count(n) || looksGenerated(n))
    n += "_";
  return n;
}

std::string Emitter::full(const ir::Shape &s, DType t, const std::string &value) {
  return "tl.full(" + shapeText(s) + ", " + value + ", " + tlType(t) + ")";
}

// x converted from `from` to `to` (not bool) with one rounding. bf16 goes
// through fp32 both ways: Triton's interpreter keeps bf16 as uint16 and
// converts only bf16 <-> fp32 as floats. Wider sources reach bf16 through
// fp32 rounded to odd (_tc_to_bf16), so the final rounding is the only one.
/// `x` in parentheses unless it is one name, call or attribute chain (no space
/// outside parentheses), so that `.to(...)` applies to all of it.
std::string paren(const std::string &x) {
  int depth = 0;
  for (char c : x) {
    depth += c == '(' || c == '[' ? 1 : c == ')' || c == ']' ? -1 : 0;
    if (depth == 0 && c == ' ')
      return "(" + x + ")";
  }
  return x;
}

std::string Emitter::conv(const std::string &xIn, DType from, DType to) {
  if (from == to)
    return xIn;
  std::string x = paren(xIn);
  if (from == DType::BF16) {
    std::string h = helper("_tc_bf16_to_f32",
                           "@triton.jit\ndef _tc_bf16_to_f32(x):\n"
                           "    # exact: the bf16 bits are the top half of the fp32 bits\n"
                           "    u = x.to(tl.uint16, bitcast=True).to(tl.uint32)\n"
                           "    return (u << tl.full([], 16, tl.uint32)).to(tl.float32, bitcast=True)\n");
    return to == DType::F32 ? h + "(" + x + ")" : conv(h + "(" + x + ")", DType::F32, to);
  }
  if (to == DType::BF16) {
    if (from == DType::F32)
      return helper("_tc_f32_to_bf16",
                    "@triton.jit\ndef _tc_f32_to_bf16(x):\n"
                    "    # round to nearest even in integer arithmetic (NaN stays a quiet NaN)\n"
                    "    u = x.to(tl.uint32, bitcast=True)\n"
                    "    sixteen = tl.full([], 16, tl.uint32)\n"
                    "    lsb = (u >> sixteen) & tl.full([], 1, tl.uint32)\n"
                    "    r = (u + tl.full([], 32767, tl.uint32) + lsb) >> sixteen\n"
                    "    r = tl.where(x != x, (u >> sixteen) | tl.full([], 64, tl.uint32), r)\n"
                    "    return r.to(tl.uint16).to(tl.bfloat16, bitcast=True)\n") +
             "(" + x + ")";
    if (from == DType::F16 || from == DType::Bool || (isInt(from) && bitWidth(from) <= 16))
      return conv(x + ".to(tl.float32)", DType::F32, DType::BF16);
    std::string h = helper(
        "_tc_to_bf16",
        "@triton.jit\ndef _tc_to_bf16(x):\n"
        "    # fp64 -> fp32 rounded to odd, then -> bf16 to nearest even: one rounding.\n"
        "    r = x.to(tl.float32)\n"
        "    b = r.to(tl.int32, bitcast=True)\n"
        "    inexact = r.to(tl.float64) != x\n"
        "    toward_zero = tl.abs(r.to(tl.float64)) > tl.abs(x)\n"
        "    b = tl.where(inexact & toward_zero, b - 1, b)\n"
        "    b = tl.where(inexact, b | 1, b)\n"
        "    return _tc_f32_to_bf16(b.to(tl.float32, bitcast=True))\n");
    conv("", DType::F32, DType::BF16); // _tc_to_bf16 calls it
    std::string wide = x + ".to(tl.float64)";
    if (from == DType::I64 || from == DType::U64) {
      // 64-bit integers to fp64 rounded to odd too: the exact error of the
      // fp64 value decides (a value at 2^63 / 2^64 does not convert back).
      bool s = from == DType::I64;
      std::string nm = s ? "_tc_i64_to_f64_odd" : "_tc_u64_to_f64_odd";
      std::string code =
          "@triton.jit\ndef " + nm + "(x):\n"
          "    f = x.to(tl.float64)\n"
          "    big = f >= tl.full([], " + std::string(s ? "9223372036854775808.0" : "18446744073709551616.0") + ", tl.float64)\n" +
          (s ? "    top = tl.full([], 9223372036854775807, tl.int64)\n"
               "    fi = tl.where(big, top, f.to(tl.int64))\n"
               "    d = x - fi\n"
             : "    top = tl.full([], -1, tl.int64).to(tl.uint64, bitcast=True)\n"
               "    fi = tl.where(big, top, f.to(tl.uint64))\n"
               "    d = (x - fi).to(tl.int64, bitcast=True)\n") +
          "    e = tl.where(big, d - tl.full([], 1, tl.int64), d)\n"
          "    inexact = e != tl.full([], 0, tl.int64)\n" +
          (s ? "    toward_zero = (e < tl.full([], 0, tl.int64)) == (x > tl.full([], 0, tl.int64))\n"
             : "    toward_zero = e < tl.full([], 0, tl.int64)\n") +
          "    b = f.to(tl.int64, bitcast=True)\n"
          "    b = tl.where(inexact & toward_zero, b - tl.full([], 1, tl.int64), b)\n"
          "    b = tl.where(inexact, b | tl.full([], 1, tl.int64), b)\n"
          "    return b.to(tl.float64, bitcast=True)\n";
      wide = helper(nm, code) + "(" + x + ")";
    }
    return h + "(" + (from == DType::F64 ? x : wide) + ")";
  }
  if (isFloat(from) && isInt(to) && bitWidth(to) < 32) {
    // A float to an 8- or 16-bit integer goes through int32 (every value of
    // those types is an int32, so the result is the same): ptxas (sm_90, -O2
    // and up; CUDA 12.8, 12.9 and 13.0) copies a 16-bit conversion's result
    // into the low half of a register and then reads all 32 bits, the stale
    // upper half included (H200 campaign of 2026-12-04, seed 41204 kernel
    // 49237; docs/upstream/triton-ptxas-f2i16-prmt.md). Our own backend
    // widens these conversions the same way (codegen's widenNarrowFloatToInt).
    return x + ".to(tl.int32).to(" + tlType(to) + ")";
  }
  return x + ".to(" + tlType(to) + ")";
}

// A typed constant. Triton's interpreter has no bf16 constants and Python
// floats cannot spell NaN, infinities or -0.0 inside a kernel: those go through
// a wider type or the bit pattern.
std::string Emitter::constant(const Type &t, const ir::AttrValue &v) {
  DType d = t.dtype;
  if (isFloat(d)) {
    double x = std::holds_alternative<double>(v) ? std::get<double>(v)
                                                  : static_cast<double>(std::get<int64_t>(v));
    x = roundToFloat(x, d);
    if (!std::isfinite(x) || (x == 0 && std::signbit(x)) || d == DType::BF16)
      return full(t.shape, bitWidth(d) == 16 ? DType::I16 : bitWidth(d) == 32 ? DType::I32 : DType::I64,
                  std::to_string(floatBitsSigned(x, d))) +
             ".to(" + tlType(d) + ", bitcast=True)";
    if (isNarrowFloat(d))
      return full(t.shape, DType::F32, doubleText(x)) + ".to(" + tlType(d) + ")";
    return full(t.shape, d, doubleText(x));
  }
  int64_t bits = std::holds_alternative<int64_t>(v) ? std::get<int64_t>(v)
                                                    : static_cast<int64_t>(std::get<double>(v));
  if (d == DType::Bool)
    return full(t.shape, d, bits ? "True" : "False");
  unsigned w = bitWidth(d);
  uint64_t mask = w == 64 ? ~uint64_t(0) : (uint64_t(1) << w) - 1;
  uint64_t u = static_cast<uint64_t>(bits) & mask;
  // The same bits as a signed integer of width w.
  int64_t s = w == 64 ? static_cast<int64_t>(u)
                      : (u >> (w - 1) ? static_cast<int64_t>(u) - (int64_t(1) << w)
                                      : static_cast<int64_t>(u));
  if (isSignedInt(d))
    return full(t.shape, d, std::to_string(s));
  if (s >= 0)
    return full(t.shape, d, std::to_string(u));
  return full(t.shape, intOfWidth(w, true), std::to_string(s)) + ".to(" + tlType(d) +
         ", bitcast=True)";
}

// maxNum / minNum of the reference: the non-NaN operand; equal operands give
// the AND (max) or OR (min) of their bits, so max(-0.0, +0.0) is +0.0.
std::string Emitter::floatMinMax(DType t, bool isMax) {
  std::string nm = std::string("_tc_") + (isMax ? "max_" : "min_") + std::string(irName(t));
  std::string f = tlType(t), i = bitsType(t);
  std::string cmp = isMax ? ">" : "<", bitop = isMax ? "&" : "|";
  std::string code = "@triton.jit\ndef " + nm + "(a, b):\n" +
                     "    af = " + toF32("a", t) + "\n" +
                     "    bf = " + toF32("b", t) + "\n" +
                     "    r = tl.where(bf " + cmp + " af, b, a)\n" +
                     "    t = (a.to(" + i + ", bitcast=True) " + bitop + " b.to(" + i +
                     ", bitcast=True)).to(" + f + ", bitcast=True)\n" +
                     "    r = tl.where(af == bf, t, r)\n" + "    return tl.where(af != af, b, r)\n";
  return helper(nm, code);
}

// argmax/argmin as a total order on (value, index): a NaN never wins, ties and
// an all-NaN axis give the smallest index; the result is the same for any
// reduction tree.
std::string Emitter::argCombine(DType t, bool isMax) {
  std::string nm = std::string("_tc_") + (isMax ? "argmax_" : "argmin_") + std::string(irName(t));
  std::string cmp = isMax ? ">" : "<";
  std::string code = "@triton.jit\ndef " + nm + "(v1, i1, v2, i2):\n";
  if (isFloat(t)) {
    code += "    a = " + toF32("v1", t) + "\n";
    code += "    b = " + toF32("v2", t) + "\n";
    code += "    n1 = a != a\n    n2 = b != b\n    lt = i1 < i2\n";
    code += "    both = (n1 == False) & (n2 == False)\n";
    code += "    p1 = (n2 & (n1 == False)) | (both & ((a " + cmp +
            " b) | ((a == b) & lt))) | (n1 & n2 & lt)\n";
  } else {
    code += "    p1 = (v1 " + cmp + " v2) | ((v1 == v2) & (i1 < i2))\n";
  }
  code += "    return tl.where(p1, v1, v2), tl.where(p1, i1, i2)\n";
  return helper(nm, code);
}

std::string Emitter::simpleCombine(const std::string &nm, const std::string &expr) {
  return helper(nm, "@triton.jit\ndef " + nm + "(a, b):\n    return " + expr + "\n");
}

// An int32 tile of shape `s` whose element is true where its index along
// `axis` equals the scalar `scalarIndex` (an int32 expression).
std::string Emitter::axisIndex(const ir::Shape &s, int64_t axis, const std::string &scalarIndex) {
  std::string r = "tl.arange(0, " + std::to_string(s[axis]) + ")";
  for (size_t k = 0; k < s.size(); ++k)
    if (static_cast<int64_t>(k) != axis)
      r = "tl.expand_dims(" + r + ", " + std::to_string(k < static_cast<size_t>(axis) ? 0 : k) + ")";
  // Expanding the axes before `axis` one by one at position 0 and those after
  // it at their own positions gives rank s.size() with the range on `axis`.
  r = "tl.broadcast_to(" + r + ", " + shapeText(s) + ")";
  if (scalarIndex.empty())
    return r;
  return "(" + r + " == " + scalarIndex + ")";
}

void Emitter::assignAll(const std::vector<std::string> &to, const std::vector<Value *> &from) {
  // A yielded value may be another carried variable (a swap): then through
  // temporaries, each a fresh name (a name that a loop reassigns with another
  // type would be a loop-carried variable that changes type, which Triton refuses).
  std::set<std::string> targets(to.begin(), to.end());
  bool clash = false;
  for (size_t i = 0; i < from.size(); ++i)
    clash = clash || (to[i] != name(from[i]) && targets.count(name(from[i])));
  if (!clash) {
    for (size_t i = 0; i < from.size(); ++i)
      if (to[i] != name(from[i]))
        line(to[i] + " = " + name(from[i]));
    return;
  }
  std::vector<std::string> tmp;
  for (size_t i = 0; i < from.size(); ++i) {
    if (to[i] == name(from[i])) {
      tmp.push_back("");
      continue;
    }
    tmp.push_back("t" + std::to_string(nextTemp_++));
    line(tmp.back() + " = " + name(from[i]));
  }
  for (size_t i = 0; i < from.size(); ++i)
    if (!tmp[i].empty())
      line(to[i] + " = " + tmp[i]);
}

bool Emitter::emitBlock(const ir::Block &b) {
  size_t before = static_cast<size_t>(out_.tellp());
  for (const auto &op : b.ops())
    if (!emitOp(*op))
      return false;
  if (static_cast<size_t>(out_.tellp()) == before)
    line("pass");
  return true;
}

bool Emitter::emitOp(const Op &op) {
  const Type *rt = op.numResults() ? &op.result()->type() : nullptr;
  auto def = [&](const std::string &expr) { line(define(op.result()) + " = " + expr); };
  auto opnd = [&](unsigned i) { return name(op.operand(i)); };
  switch (op.kind()) {
  case OpKind::Constant:
    if (rt->isPtr)
      return refuse(op, "a pointer constant");
    def(constant(*rt, *op.attr("value")));
    return true;
  case OpKind::Range: {
    int64_t start = op.intAttr("start"), end = op.intAttr("end");
    if (start >= 0) // tl.arange takes no negative start: shift [0, n)
      def("tl.arange(" + std::to_string(start) + ", " + std::to_string(end) + ")");
    else
      def("(tl.arange(0, " + std::to_string(end - start) + ") + " +
          full({}, DType::I32, std::to_string(start)) + ")");
    return true;
  }
  case OpKind::GetProgramId: def("tl.program_id(" + std::to_string(op.intAttr("axis")) + ")"); return true;
  case OpKind::GetNumPrograms:
    def("tl.num_programs(" + std::to_string(op.intAttr("axis")) + ")");
    return true;
  case OpKind::Splat:
  case OpKind::Broadcast: def("tl.broadcast_to(" + opnd(0) + ", " + shapeText(rt->shape) + ")"); return true;
  case OpKind::ExpandDims:
    def("tl.expand_dims(" + opnd(0) + ", " + std::to_string(op.intAttr("axis")) + ")");
    return true;
  case OpKind::Reshape: {
    const Type &in = op.operand(0)->type();
    if (rt->isPtr || in.isPtr)
      return refuse(op, "reshape of a pointer tile");
    if (in.isScalar()) {
      def("tl.broadcast_to(" + opnd(0) + ", " + shapeText(rt->shape) + ")");
    } else if (rt->isScalar()) {
      // One element: a reduction that returns it unchanged.
      std::string first = simpleCombine("_tc_first", "a");
      def("tl.reduce(tl.reshape(" + opnd(0) + ", [1]), 0, " + first + ")");
    } else {
      def("tl.reshape(" + opnd(0) + ", " + shapeText(rt->shape) + ")");
    }
    return true;
  }
  case OpKind::Trans: {
    std::string perm;
    for (int64_t p : op.intsAttr("perm"))
      perm += (perm.empty() ? "" : ", ") + std::to_string(p);
    def("tl.permute(" + opnd(0) + ", (" + perm + (op.intsAttr("perm").size() == 1 ? ",)" : ")") + ")");
    return true;
  }
  case OpKind::ExtractSlice:
  case OpKind::InsertSlice: return emitSlice(op);
  case OpKind::Undef:
    if (rt->isPtr)
      return refuse(op, "a pointer tile declared without an initialiser");
    // Reading a lane never assigned traps in the reference: any value will do.
    def(constant(*rt, isFloat(rt->dtype) ? ir::AttrValue(0.0) : ir::AttrValue(int64_t(0))));
    return true;
  case OpKind::Cast: return emitCast(op);
  case OpKind::Bitcast:
    if (rt->isPtr || op.operand(0)->type().isPtr)
      return refuse(op, "bitcast of pointers");
    def(opnd(0) + ".to(" + tlType(rt->dtype) + ", bitcast=True)");
    return true;
  case OpKind::Reduce: return emitReduce(op);
  case OpKind::Dot: {
    const Type &a = op.operand(0)->type(), &b = op.operand(1)->type();
    size_t r = a.rank();
    int64_t M = a.shape[r - 2], K = a.shape[r - 1], N = b.shape[r - 1];
    if (M < 16 || N < 16 || K < 16)
      return refuse(op, "'@' with a dimension below 16 (" + shapeText(a.shape) + " @ " +
                            shapeText(b.shape) + "; tl.dot needs M, N, K >= 16)");
    if (bitWidth(a.dtype) == 8 && K < 32)
      return refuse(op, "'@' of 8-bit integers with K below 32 (" + shapeText(a.shape) + " @ " +
                            shapeText(b.shape) + "; Triton's int8 tl.dot needs K >= 32)");
    if (a.dtype == DType::BF16) {
      // bf16 products are exact in fp32 and bf16 '@' accumulates in fp32: the
      // same result from fp32 operands (Triton's interpreter has no bf16 arithmetic).
      def("tl.dot(" + toF32(opnd(0), a.dtype) + ", " + toF32(opnd(1), a.dtype) + ", " + opnd(2) +
          ", input_precision=\"" + opts_.dotInputPrecision + "\", out_dtype=tl.float32)");
      return true;
    }
    std::string prec =
        a.dtype == DType::F32 ? ", input_precision=\"" + opts_.dotInputPrecision + "\"" : "";
    def("tl.dot(" + opnd(0) + ", " + opnd(1) + ", " + opnd(2) + prec +
        ", out_dtype=" + tlType(rt->dtype) + ")");
    return true;
  }
  case OpKind::Load:
  case OpKind::Store:
  case OpKind::AtomicRMW:
  case OpKind::AtomicCas: return emitMemory(op);
  case OpKind::Print:
    line("# print(" + pyStringLiteral(op.strAttr("label")) +
         ", ...): not translated (no effect on results)");
    return true;
  case OpKind::Assert:
    line("# assert: not translated (the triton backend does not report traps)");
    return true;
  case OpKind::DebugBarrier: line("tl.debug_barrier()"); return true;
  case OpKind::For: return emitFor(op);
  case OpKind::If: return emitIf(op);
  case OpKind::While: return emitWhile(op);
  case OpKind::Yield:
  case OpKind::Condition: return true; // handled by the enclosing op
  case OpKind::Return:
    if (op.parentBlock() != &fn_.body())
      return refuse(op, "'return' inside a loop or if");
    return true;
  case OpKind::Neg:
  case OpKind::Not:
  case OpKind::Abs:
  case OpKind::Exp:
  case OpKind::Exp2:
  case OpKind::Log:
  case OpKind::Log2:
  case OpKind::Sqrt:
  case OpKind::Rsqrt:
  case OpKind::Sin:
  case OpKind::Cos:
  case OpKind::Floor:
  case OpKind::Ceil:
  case OpKind::Add:
  case OpKind::Sub:
  case OpKind::Mul:
  case OpKind::Div:
  case OpKind::Rem:
  case OpKind::And:
  case OpKind::Or:
  case OpKind::Xor:
  case OpKind::Shl:
  case OpKind::Shr:
  case OpKind::Min:
  case OpKind::Max:
  case OpKind::UMulHi:
  case OpKind::CmpEq:
  case OpKind::CmpNe:
  case OpKind::CmpLt:
  case OpKind::CmpLe:
  case OpKind::CmpGt:
  case OpKind::CmpGe:
  case OpKind::AddPtr:
  case OpKind::Fma:
  case OpKind::Select: return emitElementwise(op);
  }
  return refuse(op, "op '" + std::string(op.name()) + "'");
}

bool Emitter::emitElementwise(const Op &op) {
  const Type &rt = op.result()->type();
  DType d = op.operand(op.kind() == OpKind::Select ? 1 : 0)->type().dtype;
  std::string f = tlType(d);
  auto a = [&](unsigned i) { return name(op.operand(i)); };
  auto def = [&](const std::string &expr) { line(define(op.result()) + " = " + expr); };
  bool fl = isFloat(d) && !op.operand(0)->type().isPtr;
  // bf16 arithmetic (and fp16 / and sqrt) through fp32: exact operands, one fp32
  // operation, one rounding back (fp32 has more than 2p+2 bits, so + - * / and
  // sqrt round as if done directly); Triton's interpreter has no bf16 arithmetic.
  auto narrow = [&](const std::string &expr) { return conv("(" + expr + ")", DType::F32, d); };
  auto viaF64 = [&](const std::string &fn, const std::string &x) {
    if (d == DType::F64)
      return fn + "(" + x + ")";
    return conv(fn + "(" + conv(x, d, DType::F64) + ")", DType::F64, d);
  };
  auto binary = [&](const std::string &sym) {
    if (fl && d == DType::BF16)
      return narrow(toF32(a(0), d) + " " + sym + " " + toF32(a(1), d));
    return a(0) + " " + sym + " " + a(1);
  };
  auto compare = [&](const std::string &sym) {
    if (fl)
      return toF32(a(0), d) + " " + sym + " " + toF32(a(1), d);
    return a(0) + " " + sym + " " + a(1);
  };
  auto unaryFloatOnly = [&]() {
    if (!fl)
      return refuse(op, "'" + std::string(op.name()) + "' on " + std::string(langName(d)));
    return true;
  };
  switch (op.kind()) {
  case OpKind::Neg:
    if (fl) // the sign bit flipped (Triton's -x is 0 - x: -(+0.0) would be +0.0)
      def("(" + a(0) + ".to(" + bitsType(d) + ", bitcast=True) ^ " +
          full({}, bitWidth(d) == 16 ? DType::I16 : bitWidth(d) == 32 ? DType::I32 : DType::I64,
               signBit(d)) +
          ").to(" + f + ", bitcast=True)");
    else
      def("-" + a(0));
    return true;
  case OpKind::Not: def(d == DType::Bool ? "(" + a(0) + " == False)" : "~" + a(0)); return true;
  case OpKind::Abs:
    if (fl) // the sign bit cleared
      def("(" + a(0) + ".to(" + bitsType(d) + ", bitcast=True) & " +
          full({}, bitWidth(d) == 16 ? DType::I16 : bitWidth(d) == 32 ? DType::I32 : DType::I64,
               bitWidth(d) == 16 ? "32767" : bitWidth(d) == 32 ? "2147483647" : "9223372036854775807") +
          ").to(" + f + ", bitcast=True)");
    else if (isUnsignedInt(d) || d == DType::Bool)
      def(a(0));
    else
      def("tl.abs(" + a(0) + ")");
    return true;
  case OpKind::Exp: if (!unaryFloatOnly()) return false; def(viaF64("tl.exp", a(0))); return true;
  case OpKind::Exp2: if (!unaryFloatOnly()) return false; def(viaF64("tl.exp2", a(0))); return true;
  case OpKind::Log: if (!unaryFloatOnly()) return false; def(viaF64("tl.log", a(0))); return true;
  case OpKind::Log2: if (!unaryFloatOnly()) return false; def(viaF64("tl.log2", a(0))); return true;
  case OpKind::Sin: if (!unaryFloatOnly()) return false; def(viaF64("tl.sin", a(0))); return true;
  case OpKind::Cos: if (!unaryFloatOnly()) return false; def(viaF64("tl.cos", a(0))); return true;
  case OpKind::Sqrt:
    if (!unaryFloatOnly())
      return false;
    // Triton's fp32 tl.sqrt is approximate; its fp64 one is IEEE (sqrt_rn takes fp32 only).
    if (d == DType::F64)
      def("tl.sqrt(" + a(0) + ")");
    else
      def(isNarrowFloat(d) ? narrow("tl.sqrt_rn(" + toF32(a(0), d) + ")") : "tl.sqrt_rn(" + a(0) + ")");
    return true;
  case OpKind::Rsqrt:
    if (!unaryFloatOnly())
      return false;
    // In fp64 and rounded (tl.rsqrt is approximate).
    if (d == DType::F64)
      def(full({}, DType::F64, "1.0") + " / tl.sqrt(" + a(0) + ")");
    else
      def(conv(full({}, DType::F64, "1.0") + " / tl.sqrt(" + conv(a(0), d, DType::F64) + ")",
               DType::F64, d));
    return true;
  case OpKind::Floor:
  case OpKind::Ceil: {
    if (!unaryFloatOnly())
      return false;
    bool floor = op.kind() == OpKind::Floor;
    std::string fn = floor ? "tl.floor" : "tl.ceil";
    if (d == DType::F64 || d == DType::F16) { // (fp16 subnormals are normal in fp32)
      def(isNarrowFloat(d) ? narrow(fn + "(" + toF32(a(0), d) + ")") : fn + "(" + a(0) + ")");
      return true;
    }
    // fp32 and bf16: on the GPU Triton's floor/ceil (libdevice, with Triton's
    // flush-to-zero reflection) flush a subnormal to zero: floor(-1e-45) gave
    // -0.0 on an H200 with Triton 3.6. A plain comparison keeps subnormals, so
    // the one lost case is spelled out: floor of a negative subnormal is -1,
    // ceil of a positive one is 1.
    std::string x = toF32(a(0), d), zero = full({}, DType::F32, "0.0");
    std::string tiny = full({}, DType::F32, floor ? "-1.1754943508222875e-38" : "1.1754943508222875e-38");
    std::string cond = floor ? "(" + x + " < " + zero + ") & (" + x + " > " + tiny + ")"
                             : "(" + x + " > " + zero + ") & (" + x + " < " + tiny + ")";
    std::string r = "tl.where(" + cond + ", " + full({}, DType::F32, floor ? "-1.0" : "1.0") +
                    ", " + fn + "(" + x + "))";
    def(isNarrowFloat(d) ? narrow(r) : r);
    return true;
  }
  case OpKind::Add: def(binary("+")); return true;
  case OpKind::Sub: def(binary("-")); return true;
  case OpKind::Mul: def(binary("*")); return true;
  case OpKind::Div:
    if (!fl)
      def(a(0) + " // " + a(1)); // Triton's integer // truncates toward zero, as C's /
    else if (d == DType::F64)
      def(a(0) + " / " + a(1));
    else if (d == DType::F32)
      def("tl.div_rn(" + a(0) + ", " + a(1) + ")"); // Triton's fp32 / is approximate
    else
      def(narrow("tl.div_rn(" + toF32(a(0), d) + ", " + toF32(a(1), d) + ")"));
    return true;
  case OpKind::Rem: {
    // Triton's integer % takes the dividend's sign, as the reference's. Its
    // float % is frem, which Triton's interpreter computes exactly (NumPy's
    // fmod) but the GPU does not (measured on an H200 with Triton 3.6: 5.3 %
    // 2.0-like cases off by far more than an ulp, inf % 1 gave inf): on the GPU
    // the module calls libdevice's fmod, which is exact.
    if (!fl) {
      def(binary("%"));
      return true;
    }
    std::string h = helper(
        "_tc_fmod",
        "if os.environ.get(\"TRITON_INTERPRET\", \"0\") == \"1\":\n"
        "    @triton.jit\n    def _tc_fmod(a, b):\n        return a % b\n"
        "else:\n"
        "    from triton.language.extra import libdevice\n\n"
        "    @triton.jit\n    def _tc_fmod(a, b):\n        return libdevice.fmod(a, b)\n");
    if (isNarrowFloat(d)) // exact in fp32, and representable in the narrow type
      def(narrow(h + "(" + toF32(a(0), d) + ", " + toF32(a(1), d) + ")"));
    else
      def(h + "(" + a(0) + ", " + a(1) + ")");
    return true;
  }
  case OpKind::And: def(a(0) + " & " + a(1)); return true;
  case OpKind::Or: def(a(0) + " | " + a(1)); return true;
  case OpKind::Xor: def(a(0) + " ^ " + a(1)); return true;
  case OpKind::Shl: def(a(0) + " << " + a(1)); return true;
  case OpKind::Shr: def(a(0) + " >> " + a(1)); return true;
  case OpKind::Min:
  case OpKind::Max: {
    bool mx = op.kind() == OpKind::Max;
    if (fl)
      def(floatMinMax(d, mx) + "(" + a(0) + ", " + a(1) + ")");
    else if (d == DType::Bool)
      def(a(0) + (mx ? " | " : " & ") + a(1));
    else
      def(std::string(mx ? "tl.maximum(" : "tl.minimum(") + a(0) + ", " + a(1) + ")");
    return true;
  }
  case OpKind::UMulHi: {
    if (bitWidth(d) < 32)
      return refuse(op, "umulhi on " + std::string(langName(d)) +
                            " (tl.umulhi takes 32- and 64-bit integers)");
    std::string hi = "tl.umulhi(" + a(0) + ", " + a(1) + ")";
    if (isUnsignedInt(d)) {
      def(hi);
    } else {
      // tl.umulhi is the unsigned high half (__nv_umulhi); the signed one is
      // that minus b where a < 0 and minus a where b < 0 (modulo 2^w).
      std::string zero = full({}, d, "0");
      def(hi + " - tl.where(" + a(0) + " < " + zero + ", " + a(1) + ", " + zero + ") - tl.where(" +
          a(1) + " < " + zero + ", " + a(0) + ", " + zero + ")");
    }
    return true;
  }
  case OpKind::CmpEq: def(compare("==")); return true;
  case OpKind::CmpNe: def(compare("!=")); return true;
  case OpKind::CmpLt: def(compare("<")); return true;
  case OpKind::CmpLe: def(compare("<=")); return true;
  case OpKind::CmpGt: def(compare(">")); return true;
  case OpKind::CmpGe: def(compare(">=")); return true;
  case OpKind::AddPtr: def(a(0) + " + " + a(1)); return true;
  case OpKind::Fma:
    if (!fl)
      return refuse(op, "fma on " + std::string(langName(d)));
    if (isNarrowFloat(d))
      def(conv("tl.fma(" + conv(a(0), d, DType::F64) + ", " + conv(a(1), d, DType::F64) + ", " +
                   conv(a(2), d, DType::F64) + ")",
               DType::F64, d));
    else
      def("tl.fma(" + a(0) + ", " + a(1) + ", " + a(2) + ")");
    return true;
  case OpKind::Select: def("tl.where(" + a(0) + ", " + a(1) + ", " + a(2) + ")"); return true;
  default: break;
  }
  (void)rt;
  return refuse(op, "op '" + std::string(op.name()) + "'");
}

// C conversions (rule 13) with Triton's .to(): ints wrap and extend by the
// source's signedness, floats round to nearest even, float -> int truncates.
bool Emitter::emitCast(const Op &op) {
  DType from = op.operand(0)->type().dtype, to = op.result()->type().dtype;
  std::string x = name(op.operand(0));
  auto def = [&](const std::string &expr) { line(define(op.result()) + " = " + expr); };
  if (op.operand(0)->type().isPtr || op.result()->type().isPtr)
    return refuse(op, "a cast of pointers");
  if (from == to) {
    def(x);
  } else if (to == DType::Bool) {
    // != 0 (a NaN converts to true).
    if (isFloat(from))
      def(toF32(x, from) + " != " + full({}, from == DType::F64 ? DType::F64 : DType::F32, "0.0"));
    else
      def(x + " != " + full({}, from, "0"));
  } else {
    def(conv(x, from, to));
  }
  return true;
}

bool Emitter::emitReduce(const Op &op) {
  const Type &in = op.operand(0)->type();
  const Type &rt = op.result()->type();
  DType d = in.dtype;
  const std::string &kind = op.strAttr("kind");
  int64_t axis = op.intAttr("axis");
  std::string x = name(op.operand(0)), ax = std::to_string(axis);
  auto def = [&](const std::string &expr) { line(define(op.result()) + " = " + expr); };
  if (in.isPtr)
    return refuse(op, "a reduction of pointers");
  if (kind == "add") {
    // The accumulator type of rule 10: narrow ints in (u)int32, fp16/bf16 in f32.
    DType acc = isNarrowFloat(d) ? DType::F32 : rt.dtype;
    std::string src = d == acc ? x : isFloat(d) ? conv(x, d, acc) : x + ".to(" + tlType(acc) + ")";
    std::string sum = "tl.sum(" + src + ", axis=" + ax + ")";
    def(acc == rt.dtype ? sum : conv("(" + sum + ")", acc, rt.dtype));
    return true;
  }
  if (kind == "max" || kind == "min") {
    bool mx = kind == "max";
    std::string comb;
    if (isFloat(d))
      comb = floatMinMax(d, mx);
    else if (d == DType::Bool)
      comb = simpleCombine(mx ? "_tc_or" : "_tc_and", mx ? "a | b" : "a & b");
    else
      comb = simpleCombine(mx ? "_tc_imax" : "_tc_imin", mx ? "tl.maximum(a, b)" : "tl.minimum(a, b)");
    def("tl.reduce(" + x + ", " + ax + ", " + comb + ")");
    return true;
  }
  if (kind == "and" || kind == "or" || kind == "xor") {
    std::string sym = kind == "and" ? "&" : kind == "or" ? "|" : "^";
    def("tl.reduce(" + x + ", " + ax + ", " + simpleCombine("_tc_" + kind, "a " + sym + " b") + ")");
    return true;
  }
  if (kind == "argmax" || kind == "argmin") {
    std::string comb = argCombine(d, kind == "argmax");
    def("tl.reduce((" + x + ", " + axisIndex(in.shape, axis, "") + "), " + ax + ", " + comb +
        ")[1]");
    return true;
  }
  return refuse(op, "reduction '" + kind + "'");
}

bool Emitter::emitMemory(const Op &op) {
  auto a = [&](unsigned i) { return name(op.operand(i)); };
  size_t n = op.numOperands();
  switch (op.kind()) {
  case OpKind::Load: {
    std::string args = a(0);
    if (n > 1)
      args += ", mask=" + a(1);
    if (n > 2)
      args += ", other=" + a(2);
    line(define(op.result()) + " = tl.load(" + args + ")");
    return true;
  }
  case OpKind::Store:
    line("tl.store(" + a(0) + ", " + a(1) + (n > 2 ? ", mask=" + a(2) : "") + ")");
    return true;
  case OpKind::AtomicRMW: {
    const std::string &kind = op.strAttr("kind");
    static const std::map<std::string, std::string> fns = {
        {"add", "tl.atomic_add"}, {"max", "tl.atomic_max"}, {"min", "tl.atomic_min"},
        {"xchg", "tl.atomic_xchg"}, {"and", "tl.atomic_and"}, {"or", "tl.atomic_or"},
        {"xor", "tl.atomic_xor"}};
    auto it = fns.find(kind);
    if (it == fns.end())
      return refuse(op, "atomic '" + kind + "'");
    DType d = op.operand(1)->type().dtype;
    bool halfAdd = kind == "add" && isNarrowFloat(d);
    if ((bitWidth(d) < 32 && !halfAdd) ||
        (isFloat(d) && (kind == "and" || kind == "or" || kind == "xor")))
      return refuse(op, "atomic_" + kind + " on " + std::string(langName(d)) +
                            " (Triton's atomics take 32- and 64-bit types, and fp16/bf16 for add)");
    if (isFloat(d) && (kind == "max" || kind == "min"))
      return emitFloatAtomicMinMax(op, kind == "max");
    line(define(op.result()) + " = " + it->second + "(" + a(0) + ", " + a(1) +
         (n > 2 ? ", mask=" + a(2) : "") + ", sem=\"acq_rel\", scope=\"gpu\")");
    return true;
  }
  case OpKind::AtomicCas:
    if (bitWidth(op.operand(1)->type().dtype) < 32)
      return refuse(op, "atomic_cas on " + std::string(langName(op.operand(1)->type().dtype)) +
                            " (Triton's atomics take 32- and 64-bit types)");
    if (n > 3)
      return refuse(op, "a masked atomic_cas (tl.atomic_cas has no mask)");
    line(define(op.result()) + " = tl.atomic_cas(" + a(0) + ", " + a(1) + ", " + a(2) +
         ", sem=\"acq_rel\", scope=\"gpu\")");
    return true;
  default: break;
  }
  return refuse(op, "op '" + std::string(op.name()) + "'");
}

// A float atomic_max/min with the reference's rule (maxNum: NaN never wins, on
// either side). Triton's own orders the floats by their bits (a signed max or
// an unsigned min of the integer view, by the value's sign), so a +NaN value
// wins a max and a -NaN value a min, and a NaN in memory stays where the
// reference replaces it (+NaN under a max, -NaN under a min; the other sign is
// replaced). So:
//   1. lanes whose value is a number: Triton's atomic, right unless memory
//      held a NaN that it keeps (the old value it returns is that NaN);
//   2. lanes whose value is NaN: the identity on the integer view (a signed
//      max with INT_MIN, a signed min with INT_MAX), which leaves memory as it
//      is (maxNum(m, NaN) is m, NaN when m is) and returns the old value;
//   3. lanes that read a NaN in (1): an exchange on the integer view puts the
//      value in place of the NaN (Triton's interpreter has no float xchg);
//      when it returns a number instead, another lane replaced the NaN first,
//      and that number goes back in by Triton's atomic (memory holds no NaN by
//      then). No lane of (3) is active unless memory held a NaN.
// Lanes of a tile that collide return other old values than the reference's
// row-major order, as Triton's atomics always do (docs/triton.md).
bool Emitter::emitFloatAtomicMinMax(const Op &op, bool isMax) {
  const Type &vt = op.operand(1)->type();
  DType d = vt.dtype;
  std::string p = name(op.operand(0)), v = name(op.operand(1));
  std::string m = op.numOperands() > 2 ? name(op.operand(2)) : "";
  std::string fn = isMax ? "tl.atomic_max" : "tl.atomic_min";
  std::string it = bitsType(d), ft = tlType(d);
  bool wide = bitWidth(d) == 64;
  std::string ident = isMax ? (wide ? "-9223372036854775808" : "-2147483648")
                            : (wide ? "9223372036854775807" : "2147483647");
  auto tmp = [&] { return "t" + std::to_string(nextTemp_++); };
  auto with = [&](const std::string &cond) { return m.empty() ? cond : m + " & " + cond; };
  const std::string sem = ", sem=\"acq_rel\", scope=\"gpu\")";
  std::string num = tmp(), pi = tmp(), o1 = tmp(), o2 = tmp(), need = tmp(), r = tmp();
  line(num + " = " + v + " == " + v);
  line(pi + " = " + p + ".to(tl.pointer_type(" + it + "), bitcast=True)");
  line(o1 + " = " + fn + "(" + p + ", " + v + ", mask=" + with(num) + sem);
  // A full tile as the value (Triton 3.6's interpreter mishandles a broadcast one).
  line(o2 + " = " + fn + "(" + pi + ", tl.full(" + shapeText(vt.shape) + ", " + ident + ", " + it +
       "), mask=" + with("(" + v + " != " + v + ")") + sem);
  line(define(op.result()) + " = tl.where(" + num + ", " + o1 + ", " + o2 + ".to(" + ft +
       ", bitcast=True))");
  line(need + " = " + with(num) + " & (" + o1 + " != " + o1 + ")");
  line(r + " = tl.atomic_xchg(" + pi + ", " + v + ".to(" + it + ", bitcast=True), mask=" + need +
       sem + ".to(" + ft + ", bitcast=True)");
  line(fn + "(" + p + ", " + r + ", mask=" + need + " & (" + r + " == " + r + ")" + sem);
  return true;
}

// Slices selected by an index (constant or run-time), which Triton cannot
// subscript: a mask over the axis. extract_slice sums the masked tile's bits
// (one lane is nonzero, so the sum is that lane's bits exactly); insert_slice
// selects between the tile and the broadcast slice.
bool Emitter::emitSlice(const Op &op) {
  const Type &t = op.operand(0)->type();
  if (t.isPtr)
    return refuse(op, "run-time indexing of a pointer tile's slices");
  int64_t axis = op.intAttr("axis");
  std::string idx = name(op.operand(1)) + ".to(tl.int32)";
  std::string mask = axisIndex(t.shape, axis, idx);
  std::string x = name(op.operand(0));
  DType d = t.dtype;
  if (op.kind() == OpKind::InsertSlice) {
    std::string v = name(op.operand(2));
    std::string vb = op.operand(2)->type().isScalar()
                         ? "tl.broadcast_to(" + v + ", " + shapeText(t.shape) + ")"
                         : "tl.broadcast_to(tl.expand_dims(" + v + ", " + std::to_string(axis) +
                               "), " + shapeText(t.shape) + ")";
    line(define(op.result()) + " = tl.where(" + mask + ", " + vb + ", " + x + ")");
    return true;
  }
  std::string bitsT = d == DType::Bool ? "tl.int8" : isFloat(d) ? bitsType(d) : tlType(d);
  std::string bits = d == DType::Bool ? x + ".to(tl.int8)"
                     : isFloat(d)     ? x + ".to(" + bitsT + ", bitcast=True)"
                                      : x;
  std::string zero = "tl.zeros_like(" + bits + ")";
  std::string sum = "tl.sum(tl.where(" + mask + ", " + bits + ", " + zero + "), axis=" +
                    std::to_string(axis) + ").to(" + bitsT + ")";
  std::string r = d == DType::Bool ? "(" + sum + " != 0)"
                  : isFloat(d)     ? sum + ".to(" + tlType(d) + ", bitcast=True)"
                                   : sum;
  line(define(op.result()) + " = " + r);
  return true;
}

bool Emitter::emitFor(const Op &op) {
  const ir::Block &body = *op.region(0);
  std::vector<std::string> carried;
  std::vector<Value *> inits(op.operands().begin() + 3, op.operands().end());
  for (size_t i = 0; i < op.numResults(); ++i) {
    const std::string &r = define(op.result(i));
    names_[body.arg(i + 1)] = r;
    carried.push_back(r);
  }
  assignAll(carried, inits);
  DType ivType = op.operand(0)->type().dtype;
  std::string iv = "i" + std::to_string(nextLoop_++);
  bool native = ivType == DType::I32 || ivType == DType::I64;
  auto bound = [&](unsigned i) {
    return native ? name(op.operand(i)) : name(op.operand(i)) + ".to(tl.int64)";
  };
  line("for " + iv + " in range(" + bound(0) + ", " + bound(1) + ", " + bound(2) + "):");
  ++indent_;
  line(define(body.arg(0)) + " = " + iv + (native ? "" : ".to(" + tlType(ivType) + ")"));
  for (const auto &o : body.ops())
    if (!emitOp(*o))
      return false;
  const Op *y = body.terminator();
  if (y && y->numOperands())
    assignAll(carried, y->operands());
  --indent_;
  return true;
}

bool Emitter::emitIf(const Op &op) {
  std::vector<std::string> res;
  for (size_t i = 0; i < op.numResults(); ++i)
    res.push_back(define(op.result(i)));
  line("if " + name(op.operand(0)) + ":");
  for (unsigned r = 0; r < 2; ++r) {
    if (r == 1) {
      const ir::Block &e = *op.region(1);
      bool empty = e.ops().size() == 1 && op.numResults() == 0;
      if (empty)
        break;
      line("else:");
    }
    ++indent_;
    const ir::Block &b = *op.region(r);
    size_t before = static_cast<size_t>(out_.tellp());
    for (const auto &o : b.ops())
      if (!emitOp(*o))
        return false;
    if (const Op *y = b.terminator(); y && y->numOperands())
      assignAll(res, y->operands());
    if (static_cast<size_t>(out_.tellp()) == before)
      line("pass");
    --indent_;
  }
  return true;
}

// while (inits) before(args) -> condition(c, fwd...); after(fwd) -> yield:
// the before-region is printed ahead of the loop and again at the end of its
// body, so the Python `while` tests one variable.
bool Emitter::emitWhile(const Op &op) {
  const ir::Block &before = *op.region(0), &after = *op.region(1);
  std::vector<std::string> bargs, fwd;
  for (size_t i = 0; i < before.numArgs(); ++i)
    bargs.push_back(define(before.arg(i)));
  for (size_t i = 0; i < op.numResults(); ++i) {
    const std::string &r = define(op.result(i));
    names_[after.arg(i)] = r;
    fwd.push_back(r);
  }
  std::vector<Value *> inits(op.operands().begin(), op.operands().end());
  assignAll(bargs, inits);
  std::string cond = "c" + std::to_string(nextLoop_++);
  auto emitBefore = [&]() {
    for (const auto &o : before.ops())
      if (!emitOp(*o))
        return false;
    const Op *c = before.terminator();
    std::vector<Value *> f(c->operands().begin() + 1, c->operands().end());
    assignAll(fwd, f);
    line(cond + " = " + name(c->operand(0)));
    return true;
  };
  if (!emitBefore())
    return false;
  line("while " + cond + ":");
  ++indent_;
  for (const auto &o : after.ops())
    if (!emitOp(*o))
      return false;
  if (const Op *y = after.terminator(); y && y->numOperands())
    assignAll(bargs, y->operands());
  if (!emitBefore())
    return false;
  --indent_;
  return true;
}

Result Emitter::run() {
  // Parameters: pointers keep their Triton type (unsigned buffers of 16 bits and
  // more come as signed torch tensors and are cast here); scalars are
  // converted from what Triton inferred from the Python value to the declared type.
  std::vector<std::string> pnames;
  std::ostringstream entry;
  std::string dns;
  for (unsigned i = 0; i < fn_.numParams(); ++i) {
    const Value *p = fn_.param(i);
    std::string n = paramName(i);
    pnames.push_back(n);
    names_[p] = n;
    const Type &t = p->type();
    DType d = t.dtype;
    std::string pad(4, ' ');
    if (t.isPtr) {
      if (isUnsignedInt(d) && bitWidth(d) > 8)
        entry << pad << n << " = " << n << ".to(tl.pointer_type(" << tlType(d)
              << "), bitcast=True)\n";
      continue;
    }
    dns += (dns.empty() ? "\"" : ", \"") + n + "\"";
    // Through int64 first: Triton types a Python int by its value (i32, i64 or
    // u64), and its interpreter may hold an i32 scalar in 64 bits.
    std::string wide = n + ".to(tl.int64)";
    if (isFloat(d)) // passed as its bit pattern (a Python float would be fp32)
      entry << pad << n << " = " << (bitWidth(d) == 64 ? wide : wide + ".to(" + bitsType(d) + ")")
            << ".to(" << tlType(d) << ", bitcast=True)\n";
    else if (d == DType::Bool)
      entry << pad << n << " = " << wide << " != 0\n";
    else
      entry << pad << n << " = " << wide << (d == DType::I64 ? "" : ".to(" + tlType(d) + ")")
            << "\n";
  }
  out_ << entry.str();
  if (!emitBlock(fn_.body()))
    return {"", error_};

  std::ostringstream mod;
  mod << "# Generated by tritonc --emit=triton"
      << (opts_.sourceName.empty() ? "" : " from " + commentText(opts_.sourceName)) << ": kernel '"
      << fn_.name() << "'.\n"
      << "# Triton-C's reference semantics in Triton's Python DSL (docs/triton.md lists\n"
      << "# where the two languages differ and how this code follows the reference).\n"
      << "import os\nimport struct\n\nimport torch\nimport triton\nimport triton.language as tl\n"
      << "\n"
      << "KERNEL_NAME = \"" << fn_.name() << "\"\n"
      << "# (name, 'ptr' or 'scalar', dtype) of each parameter, in order.\nPARAMS = [";
  for (unsigned i = 0; i < fn_.numParams(); ++i)
    mod << (i ? ", " : "") << "(\"" << pnames[i] << "\", \""
        << (fn_.param(i)->type().isPtr ? "ptr" : "scalar") << "\", \""
        << paramDTypeName(fn_.param(i)->type().dtype) << "\")";
  mod << "]\n\n";
  for (const std::string &h : helpers_)
    mod << "\n" << helperCode_[h] << "\n";
  std::string kname = "_tc_kernel";
  mod << "\n@triton.jit" << (dns.empty() ? "" : "(do_not_specialize=[" + dns + "])") << "\ndef "
      << kname << "(";
  for (size_t i = 0; i < pnames.size(); ++i)
    mod << (i ? ", " : "") << pnames[i];
  mod << "):\n" << out_.str() << "\n\n";
  // Two of Triton's defaults break the reference's rounding; every launch turns them off
  // (the GPU campaign of seed 20261204 found both). enable_reflect_ftz: libdevice linked
  // with flush-to-zero, so its fmod took a subnormal divisor for 0 and gave NaN.
  // enable_fp_fusion: LLVM contracts a * b + c into one fma, which rounds once where the
  // reference rounds twice. Triton's interpreter drops launch options it does not know.
  mod << R"PY(class _Launcher:
    """KERNEL[grid](*args, **options): Triton's launch, libdevice without flush-to-zero and
    no contraction of a * b + c into fma unless the options say otherwise."""

    def __init__(self, fn):
        self.fn = fn

    def __getitem__(self, grid):
        def run(*args, **options):
            options.setdefault("enable_reflect_ftz", False)
            options.setdefault("enable_fp_fusion", False)
            return self.fn[grid](*args, **options)
        return run


)PY";
  mod << "KERNEL = _Launcher(" << kname << ")\n\n";
  mod << R"PY(# torch dtypes of the buffers: unsigned types of 16 bits and more travel as the
# signed type of their width (the kernel casts the pointer back).
TORCH_DTYPES = {"i1": torch.bool, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32,
                "i64": torch.int64, "u8": torch.uint8, "u16": torch.int16, "u32": torch.int32,
                "u64": torch.int64, "f16": torch.float16, "bf16": torch.bfloat16,
                "f32": torch.float32, "f64": torch.float64}
_FLOAT_BITS = {"f16": ("<e", "<h"), "f32": ("<f", "<i"), "f64": ("<d", "<q")}


def scalar_argument(value, dtype):
    """A Python number as the kernel receives it (floats as their bit pattern)."""
    if dtype in _FLOAT_BITS:
        fmt, ifmt = _FLOAT_BITS[dtype]
        return struct.unpack(ifmt, struct.pack(fmt, float(value)))[0]
    if dtype == "bf16":
        bits = torch.tensor([float(value)], dtype=torch.bfloat16).view(torch.int16)
        return int(bits[0])
    if dtype == "i1":
        return int(bool(value))
    return int(value)


def launch(grid, *args, num_warps=)PY"
      << opts_.numWarps << R"PY(, num_stages=3):
    """Runs the kernel on grid (1 to 3 ints): args are torch tensors for pointer
    parameters (of the parameter's dtype, or a same-width view) and numbers for
    scalars, in the order of PARAMS."""
    if len(args) != len(PARAMS):
        raise TypeError("%s takes %d arguments (%s), got %d" % (
            KERNEL_NAME, len(PARAMS), ", ".join(p[0] for p in PARAMS), len(args)))
    call = []
    for (name, kind, dtype), value in zip(PARAMS, args):
        if kind == "ptr":
            want = TORCH_DTYPES[dtype]
            call.append(value if value.dtype == want else value.view(want))
        else:
            call.append(scalar_argument(value, dtype))
    KERNEL[tuple(grid)](*call, num_warps=num_warps, num_stages=num_stages)
)PY";
  return {mod.str(), ""};
}

} // namespace

std::string_view paramDTypeName(DType t) { return irName(t); }

Result translate(const ir::Module &m, const ir::Function &fn, const Options &opts) {
  Emitter e(m, fn, opts);
  return e.run();
}

} // namespace tc::tritonpy
