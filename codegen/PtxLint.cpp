// See PtxLint.h.
#include "codegen/PtxLint.h"

#include <cctype>
#include <map>
#include <regex>
#include <set>

namespace tc::codegen {
namespace {

struct Inst {
  int line = 0;
  std::string opcode;
  std::vector<std::string> operands; // the destination first, as written
  std::string text;
};

std::string trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t;");
  return b == std::string_view::npos || e < b ? "" : std::string(s.substr(b, e - b + 1));
}

/// The instructions of `ptx`, one per line (the backend writes one per line;
/// a guard `@%p` is dropped).
std::vector<Inst> parse(std::string_view ptx) {
  std::vector<Inst> out;
  int line = 0;
  size_t pos = 0;
  while (pos <= ptx.size()) {
    size_t end = ptx.find('\n', pos);
    std::string l = trim(ptx.substr(pos, end == std::string_view::npos ? ptx.size() - pos : end - pos));
    ++line;
    pos = end == std::string_view::npos ? ptx.size() + 1 : end + 1;
    if (size_t c = l.find("//"); c != std::string::npos)
      l = trim(l.substr(0, c));
    if (l.empty() || l[0] == '.' || l[0] == '$' || l[0] == '{' || l[0] == '}' || l[0] == '(' ||
        l[0] == ')')
      continue;
    if (l[0] == '@') {
      size_t sp = l.find_first_of(" \t");
      if (sp == std::string::npos)
        continue;
      l = trim(l.substr(sp));
    }
    size_t sp = l.find_first_of(" \t");
    Inst in;
    in.line = line;
    in.text = l;
    in.opcode = l.substr(0, sp);
    if (sp != std::string::npos) {
      std::string rest = l.substr(sp);
      size_t start = 0;
      int depth = 0;
      for (size_t i = 0; i <= rest.size(); ++i) {
        char ch = i < rest.size() ? rest[i] : ',';
        depth += ch == '{' || ch == '[' ? 1 : ch == '}' || ch == ']' ? -1 : 0;
        if (ch == ',' && depth == 0) {
          in.operands.push_back(trim(std::string_view(rest).substr(start, i - start)));
          start = i + 1;
        }
      }
    }
    out.push_back(std::move(in));
  }
  return out;
}

bool startsWith(const std::string &s, std::string_view p) { return s.rfind(p, 0) == 0; }

bool isFloatReg(const std::string &r) {
  return startsWith(r, "%f") && r.size() > 2 && (std::isdigit(static_cast<unsigned char>(r[2])) ||
                                                  (r[2] == 'd' && r.size() > 3));
}

enum class Def { Neg, BoolSelect, BoolConstant, BoolCopy, MulHi, WideMulHi, Other };

Def classify(const Inst &in) {
  static const std::regex neg(R"(neg\.s(16|32|64))");
  static const std::regex selp(R"(selp\.[usbf](16|32|64))");
  static const std::regex mov(R"(mov\.[usb](16|32|64))");
  if (std::regex_match(in.opcode, neg))
    return Def::Neg;
  if (in.opcode == "mul.hi.u32" || in.opcode == "mul.hi.s32")
    return Def::MulHi;
  auto isBit = [](const std::string &v, bool one) {
    return one ? (v == "1" || v == "0f00000001" || v == "0d0000000000000001")
               : (v == "0" || v == "0f00000000" || v == "0d0000000000000000");
  };
  if (std::regex_match(in.opcode, selp) && in.operands.size() == 4 &&
      ((isBit(in.operands[1], true) && isBit(in.operands[2], false)) ||
       (isBit(in.operands[1], false) && isBit(in.operands[2], true))))
    return Def::BoolSelect;
  if (std::regex_match(in.opcode, mov) && in.operands.size() == 2 &&
      (in.operands[1] == "0" || in.operands[1] == "1"))
    return Def::BoolConstant;
  return Def::Other;
}

} // namespace

int rewriteNarrowNegations(std::string &ptx) {
  // An optional guard, the opcode, the destination and the operand, as LLVM
  // writes them ("\tneg.s16 \t%rs4, %rs3;").
  static const std::regex inst(
      R"(^([ \t]*)(@!?%p[0-9]+[ \t]+)?(neg|abs)\.s16[ \t]+(%rs[0-9]+),[ \t]*([^;]+);)");
  if (ptx.find("neg.s16") == std::string::npos && ptx.find("abs.s16") == std::string::npos)
    return 0;
  std::string out;
  out.reserve(ptx.size() + 256);
  int count = 0;
  size_t pos = 0;
  while (pos < ptx.size()) {
    size_t end = ptx.find('\n', pos);
    std::string line = ptx.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    pos = end == std::string::npos ? ptx.size() : end + 1;
    std::smatch m;
    if (std::regex_search(line, m, inst)) {
      ++count;
      std::string indent = m[1], guard = m[2], d = m[4], a = trim(m[5].str());
      if (m[3] == "neg") {
        line = indent + guard + "sub.u16 \t" + d + ", 0, " + a +
               "; // a 16-bit neg (ptxas-neg16-sext)";
      } else {
        line = indent + "{ // a 16-bit abs (ptxas-neg16-sext)\n" + indent +
               ".reg .pred \t%abs_p;\n" + indent + ".reg .b16 \t%abs_n;\n" + indent +
               "setp.lt.s16 \t%abs_p, " + a + ", 0;\n" + indent + "sub.u16 \t%abs_n, 0, " + a +
               ";\n" + indent + guard + "selp.b16 \t" + d + ", %abs_n, " + a + ", %abs_p;\n" +
               indent + "}";
      }
    }
    out += line;
    if (end != std::string::npos)
      out += '\n';
  }
  ptx = std::move(out);
  return count;
}

std::vector<PtxHazard> findPtxasHazards(std::string_view ptx) {
  std::vector<Inst> insts = parse(ptx);
  // Every definition of each register (the destination: the first operand,
  // except for stores, branches and the like, which define none).
  std::map<std::string, std::vector<Def>> defs;
  for (const Inst &in : insts) {
    if (in.operands.empty() || startsWith(in.opcode, "st.") || startsWith(in.opcode, "bra") ||
        startsWith(in.opcode, "ret") || startsWith(in.opcode, "red.") ||
        startsWith(in.opcode, "bar"))
      continue;
    const std::string &d = in.operands[0];
    if (!d.empty() && d[0] == '%') {
      defs[d].push_back(classify(in));
    } else if (!d.empty() && d[0] == '{') {
      // A vector destination (`mov.b64 {%temp, %r29}, %fd5` unpacking a
      // double, `ld.v4`): each register in it is defined here too.
      std::string list = d.substr(1, d.find('}') - 1);
      size_t start = 0;
      while (start < list.size()) {
        size_t comma = list.find(',', start);
        std::string r =
            trim(list.substr(start, comma == std::string::npos ? comma : comma - start));
        if (!r.empty() && r[0] == '%')
          defs[r].push_back(Def::Other);
        start = comma == std::string::npos ? list.size() : comma + 1;
      }
    }
  }
  // A 64-bit zero extension of a 32-bit high half (the minuend ptxas fuses).
  for (const Inst &in : insts)
    if (in.opcode == "cvt.u64.u32" && in.operands.size() == 2) {
      auto src = defs.find(in.operands[1]);
      if (src != defs.end() && src->second.size() == 1 && src->second[0] == Def::MulHi)
        defs[in.operands[0]] = {Def::WideMulHi};
    }
  auto all = [&](const std::string &r, auto pred) {
    auto it = defs.find(r);
    if (it == defs.end())
      return false;
    for (Def d : it->second)
      if (!pred(d))
        return false;
    return true;
  };
  auto isNeg = [&](const std::string &r) { return all(r, [](Def d) { return d == Def::Neg; }); };
  auto isBool = [&](const std::string &r) {
    auto it = defs.find(r);
    if (it == defs.end())
      return false;
    bool select = false;
    for (Def d : it->second) {
      if (d != Def::BoolSelect && d != Def::BoolConstant && d != Def::BoolCopy)
        return false;
      select |= d != Def::BoolConstant;
    }
    return select || it->second.size() > 1; // a phi of the constants 0 and 1 counts
  };
  // An integer widening, narrowing or copy of a bool's bits keeps them a
  // bool's (`cvt.u16.u32` before a 16-bit float compare, `cvt.u64.u32` before
  // a `mov.b64` to a double). A few rounds follow chains of them.
  static const std::regex intCopy(R"(cvt\.[us](16|32|64)\.[us](16|32|64)|mov\.[bu](16|32|64))");
  for (int round = 0; round < 3; ++round)
    for (const Inst &in : insts)
      if (std::regex_match(in.opcode, intCopy) && in.operands.size() == 2 &&
          isBool(in.operands[1])) {
        std::vector<Def> &d = defs[in.operands[0]];
        if (d.size() == 1 && d[0] == Def::Other)
          d[0] = Def::BoolCopy;
      }
  static const std::regex minmaxShr(R"((min|max)\.[us](16|32|64)|shr\.[usb](16|32|64))");
  static const std::regex movBits(R"(mov\.b(32|64))");
  // Opcodes whose source operands are floats (a 16-bit float is in a %rs register).
  static const std::regex floatUse(
      R"(cvt(\.r[nzmp])?\.(f16|bf16|f32|f64)\.(f16|bf16|f32|f64)|setp\.[a-z]+\.(f16|bf16|f32|f64))");
  static const std::regex narrowCvt(R"(cvt\.rzi\.[su](8|16)\.(f16|bf16|f32|f64))");
  std::vector<PtxHazard> out;
  for (const Inst &in : insts) {
    // Any 16-bit signed negation or abs: ptxas sign-extends before it
    // negates wherever the result is read as signed (ptxas-neg16-sext).
    if (in.opcode == "neg.s16" || in.opcode == "abs.s16" ||
        (in.opcode == "sub.s16" && in.operands.size() == 3 && in.operands[1] == "0")) {
      out.push_back({in.line, "a 16-bit neg or abs (ptxas-neg16-sext)", in.text});
      continue;
    }
    if (std::regex_match(in.opcode, narrowCvt)) {
      out.push_back({in.line, "a float converted straight to an 8/16-bit integer (ptxas-f2i16-remat)",
                     in.text});
      continue;
    }
    if (in.operands.size() < 2)
      continue;
    bool toFloat = std::regex_match(in.opcode, movBits) && isFloatReg(in.operands[0]);
    for (size_t i = 1; i < in.operands.size(); ++i) {
      const std::string &r = in.operands[i];
      if (r.empty() || r[0] != '%')
        continue;
      bool shifted = startsWith(in.opcode, "shr") ? i == 1 : true; // not the shift amount
      if (isNeg(r) && ((std::regex_match(in.opcode, minmaxShr) && shifted) || toFloat))
        out.push_back({in.line, toFloat ? "a neg whose bits a float takes (ptxas-neg-bits-setp)"
                                        : "a neg taken by a min/max or right shift "
                                          "(ptxas-vimnmx3-neg, ptxas-lea-hi-neg)",
                       in.text});
      else if (in.opcode == "sub.s64" && i == 1 &&
               all(r, [](Def d) { return d == Def::WideMulHi; }))
        out.push_back({in.line, "a 64-bit difference whose minuend is a zero-extended mul.hi "
                                "(ptxas-imad-hi-sub)",
                       in.text});
      else if (isBool(r) && (toFloat || std::regex_match(in.opcode, floatUse)))
        out.push_back({in.line, "a bool's bits used as a float (ptxas-bool-bits-float)", in.text});
    }
  }
  return out;
}

} // namespace tc::codegen
