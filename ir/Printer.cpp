//===- Printer.cpp - Deterministic text form of the tile IR ---------------===//
//
// Values are numbered %0, %1, ... per function in print order (an op's
// results before its regions' arguments); parameters print with their name
// hint, made unique and non-numeric. The grammar is in docs and in the
// parser (ir/IRParser.cpp).
//
//===----------------------------------------------------------------------===//
#include "ir/Printer.h"

#include <charconv>
#include <cmath>
#include <ostream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace tc::ir {

namespace {

/// Assigns printed names to the values of one function.
class Namer {
public:
  /// Names the parameters (the function body's arguments) by their hints.
  void nameParams(const Block &body);
  /// Numbers results and region arguments of every op under `b`, in print order.
  void numberBlock(const Block &b);
  void numberOp(const Op &op);
  std::string name(const Value *v) const;

private:
  std::unordered_map<const Value *, std::string> names_;
  unsigned next_ = 0;
};

/// A hint reduced to [A-Za-z0-9_], starting with a letter or '_'.
std::string sanitizeHint(const std::string &hint, unsigned index) {
  if (hint.empty())
    return "arg" + std::to_string(index);
  std::string s;
  for (char c : hint) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    s += ok ? c : '_';
  }
  if (s[0] >= '0' && s[0] <= '9')
    s = "_" + s;
  return s;
}

void Namer::nameParams(const Block &body) {
  std::unordered_set<std::string> used;
  for (size_t i = 0; i < body.numArgs(); ++i) {
    const Value *v = body.arg(static_cast<unsigned>(i));
    std::string base = sanitizeHint(v->nameHint(), static_cast<unsigned>(i));
    std::string name = base;
    for (unsigned n = 1; used.count(name); ++n)
      name = base + "_" + std::to_string(n);
    used.insert(name);
    names_[v] = "%" + name;
  }
}

void Namer::numberOp(const Op &op) {
  for (const auto &r : op.results())
    names_[r.get()] = "%" + std::to_string(next_++);
  for (const auto &region : op.regions())
    numberBlock(*region);
}

void Namer::numberBlock(const Block &b) {
  if (b.parentOp())
    for (const auto &a : b.args())
      names_[a.get()] = "%" + std::to_string(next_++);
  for (const auto &op : b.ops())
    numberOp(*op);
}

std::string Namer::name(const Value *v) const {
  if (!v)
    return "%<null>";
  auto it = names_.find(v);
  return it == names_.end() ? "%<unknown>" : it->second;
}

/// Shortest text that reads back as `d`, always distinct from an integer.
std::string formatDouble(double d) {
  if (std::isnan(d))
    return std::signbit(d) ? "-nan" : "nan";
  if (std::isinf(d))
    return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return s;
}

/// A quoted string with `"`, `\` and non-printable bytes escaped.
std::string quote(const std::string &s) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c >= 0x7f) {
      out += '\\';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string formatAttrValue(const AttrValue &v) {
  if (const auto *i = std::get_if<int64_t>(&v))
    return std::to_string(*i);
  if (const auto *d = std::get_if<double>(&v))
    return formatDouble(*d);
  if (const auto *s = std::get_if<std::string>(&v))
    return quote(*s);
  const auto &list = std::get<std::vector<int64_t>>(v);
  std::string out = "[";
  for (size_t i = 0; i < list.size(); ++i)
    out += (i ? ", " : "") + std::to_string(list[i]);
  return out + "]";
}

/// Prints ops, functions and modules with one Namer per function.
class Printer {
public:
  Printer(const Module *m, std::ostream &os, const PrintOptions &opts,
          const PrintHooks *hooks = nullptr)
      : m_(m), os_(os), opts_(opts), hooks_(hooks) {}
  void printFunction(const Function &f);
  /// The op's line up to (not including) its regions and location.
  std::string opHeader(const Op &op) const;
  Namer &namer() { return namer_; }

private:
  void printOp(const Op &op, unsigned indent);
  void printRegion(const Block &b, unsigned indent);
  std::string locSuffix(Location loc) const;
  std::string paramAttrs(const ParamAttrs &a) const;
  std::string suffix(const Value &v) const {
    return hooks_ && hooks_->valueSuffix ? hooks_->valueSuffix(v) : std::string();
  }

  const Module *m_;
  std::ostream &os_;
  PrintOptions opts_;
  const PrintHooks *hooks_;
  Namer namer_;
};

std::string Printer::locSuffix(Location loc) const {
  if (!opts_.locations || loc.line == 0)
    return "";
  std::string file = m_ && loc.file < m_->files.size() ? m_->files[loc.file] : "";
  return " loc(" + quote(file) + ":" + std::to_string(loc.line) + ":" + std::to_string(loc.col) +
         ")";
}

std::string Printer::paramAttrs(const ParamAttrs &a) const {
  std::vector<std::string> parts;
  if (a.multipleOf != 1)
    parts.push_back("multipleof = " + std::to_string(a.multipleOf));
  if (a.aligned != 0)
    parts.push_back("aligned = " + std::to_string(a.aligned));
  if (a.noalias)
    parts.push_back("noalias");
  if (a.readonly)
    parts.push_back("readonly");
  if (a.writeonly)
    parts.push_back("writeonly");
  if (parts.empty())
    return "";
  std::string s = " <";
  for (size_t i = 0; i < parts.size(); ++i)
    s += (i ? ", " : "") + parts[i];
  return s + ">";
}

std::string Printer::opHeader(const Op &op) const {
  std::string s;
  for (size_t i = 0; i < op.numResults(); ++i)
    s += (i ? ", " : "") + namer_.name(op.result(static_cast<unsigned>(i)));
  if (op.numResults())
    s += " = ";
  s += op.name();
  for (size_t i = 0; i < op.numOperands(); ++i)
    s += (i ? ", " : " ") + namer_.name(op.operand(static_cast<unsigned>(i)));
  if (!op.attrs().empty()) {
    s += " <";
    for (size_t i = 0; i < op.attrs().size(); ++i)
      s += (i ? ", " : "") + op.attrs()[i].name + " = " + formatAttrValue(op.attrs()[i].value);
    s += ">";
  }
  for (size_t i = 0; i < op.numResults(); ++i)
    s += (i ? ", " : " : ") + op.result(static_cast<unsigned>(i))->type().str() +
         suffix(*op.result(static_cast<unsigned>(i)));
  return s;
}

void Printer::printOp(const Op &op, unsigned indent) {
  if (hooks_ && hooks_->opComments)
    for (const std::string &c :
         hooks_->opComments(op, [this](const Value *v) { return namer_.name(v); }))
      os_ << std::string(indent, ' ') << "// " << c << '\n';
  os_ << std::string(indent, ' ') << opHeader(op);
  for (const auto &region : op.regions())
    printRegion(*region, indent);
  os_ << locSuffix(op.loc()) << '\n';
}

void Printer::printRegion(const Block &b, unsigned indent) {
  os_ << " {\n";
  if (b.numArgs()) {
    std::string s = std::string(indent, ' ') + "^(";
    for (size_t i = 0; i < b.numArgs(); ++i) {
      const Value *a = b.arg(static_cast<unsigned>(i));
      s += (i ? ", " : "") + namer_.name(a) + ": " + a->type().str() + suffix(*a);
    }
    os_ << s << "):\n";
  }
  for (const auto &op : b.ops())
    printOp(*op, indent + 2);
  os_ << std::string(indent, ' ') << '}';
}

void Printer::printFunction(const Function &f) {
  namer_ = Namer();
  namer_.nameParams(f.body());
  namer_.numberBlock(f.body());
  std::string s = "kernel @" + f.name() + "(";
  for (size_t i = 0; i < f.numParams(); ++i) {
    unsigned idx = static_cast<unsigned>(i);
    s += (i ? ", " : "") + namer_.name(f.param(idx)) + ": " + f.param(idx)->type().str() +
         paramAttrs(f.paramAttrs(idx));
  }
  os_ << s << ")" << locSuffix(f.loc()) << " {\n";
  for (const auto &op : f.body().ops())
    printOp(*op, 2);
  os_ << "}\n";
}

} // namespace

void printModule(const Module &m, std::ostream &os, const PrintOptions &opts) {
  Printer p(&m, os, opts);
  for (const auto &f : m.functions)
    p.printFunction(*f);
}

void printModule(const Module &m, std::ostream &os, const PrintOptions &opts,
                 const PrintHooks &hooks) {
  Printer p(&m, os, opts, &hooks);
  for (const auto &f : m.functions)
    p.printFunction(*f);
}

std::string toString(const Module &m, const PrintOptions &opts) {
  std::ostringstream os;
  printModule(m, os, opts);
  return os.str();
}

std::string opToString(const Op &op) {
  // Number the whole enclosing function so the names match the module's print.
  const Op *top = &op;
  for (unsigned guard = 0; guard < 100000 && top->parentBlock() && top->parentBlock()->parentOp();
       ++guard)
    top = top->parentBlock()->parentOp();
  std::ostringstream unused;
  Printer p(nullptr, unused, PrintOptions{false});
  if (const Block *root = top->parentBlock()) {
    p.namer().nameParams(*root);
    p.namer().numberBlock(*root);
  } else {
    p.namer().numberOp(*top);
  }
  std::string s = p.opHeader(op);
  for (size_t i = 0; i < op.numRegions(); ++i)
    s += " {...}";
  return s;
}

} // namespace tc::ir
