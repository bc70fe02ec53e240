//===- Emi.cpp - Equivalence-modulo-inputs variants of generated kernels --===//
#include "fuzz/Emi.h"

#include "fuzz/Oracle.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <regex>
#include <sstream>
#include <vector>

namespace tc::fuzz {
namespace {

// A declaration at the kernel body's top level: `T [*]name[shape] = rhs;`.
struct Decl {
  std::string type; // "int32", "float *"
  std::string name;
  std::string shape; // "[TS]" or ""
  std::string rhs;
  bool pointer = false;
};

// A masked store at the top level: `*?(mask) ptr = value;`.
struct Store {
  std::string mask, ptr, value;
};

std::vector<std::string> splitLines(const std::string &s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);)
    out.push_back(line);
  return out;
}

int braceDelta(const std::string &line) {
  return static_cast<int>(std::count(line.begin(), line.end(), '{')) -
         static_cast<int>(std::count(line.begin(), line.end(), '}'));
}

std::optional<Decl> parseDecl(const std::string &line) {
  static const std::regex re(
      R"(^\s*([A-Za-z_][A-Za-z0-9_]*)(\s*\*\s*|\s+)([A-Za-z_][A-Za-z0-9_]*)\s*(\[[^\]=]*\])?\s*=\s*(.*);\s*$)");
  std::smatch m;
  if (!std::regex_match(line, m, re))
    return std::nullopt;
  std::string type = m[1];
  // Statements that look alike, and calls with side effects.
  for (const char *kw : {"return", "if", "for", "while", "do", "else", "const", "restrict"})
    if (type == kw)
      return std::nullopt;
  std::string rhs = m[5];
  for (const char *bad : {"atomic_", "print", "assert", "__debug_barrier", "++", "--"})
    if (rhs.find(bad) != std::string::npos)
      return std::nullopt;
  Decl d;
  // (the type and the name are apart: `sb2[0, :] = v;` is an assignment)
  d.pointer = std::string(m[2]).find('*') != std::string::npos;
  d.type = d.pointer ? type + " *" : type;
  d.name = m[3];
  d.shape = m[4];
  d.rhs = rhs;
  return d;
}

// `*?(mask) ptr = value;` with balanced parentheses in the mask.
std::optional<Store> parseStore(const std::string &line) {
  size_t at = line.find_first_not_of(' ');
  if (at == std::string::npos || line.compare(at, 3, "*?(") != 0)
    return std::nullopt;
  size_t i = at + 3;
  int depth = 1;
  for (; i < line.size() && depth > 0; ++i)
    depth += line[i] == '(' ? 1 : line[i] == ')' ? -1 : 0;
  if (depth != 0)
    return std::nullopt;
  std::string mask = line.substr(at + 3, i - 1 - (at + 3));
  std::string rest = line.substr(i);
  static const std::regex re(R"(^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*);\s*$)");
  std::smatch m;
  if (!std::regex_match(rest, m, re))
    return std::nullopt;
  return Store{mask, m[1], m[2]};
}

// A value of `d`'s type and shape that differs from the current one.
std::string otherValue(const Decl &d) {
  if (d.pointer)
    return d.name + " + 1";
  if (d.type == "bool")
    return "!" + d.name;
  return "(" + d.type + ")(" + d.name + " + 1)";
}

} // namespace

uint64_t kernelHash(const FuzzKernel &k) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const std::string &s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  };
  mix(k.source);
  for (const auto &[name, value] : k.defines)
    mix(name + "=" + value);
  return h;
}

bool emiSelected(const FuzzKernel &k, double rate) {
  if (rate <= 0)
    return false;
  if (rate >= 1)
    return true;
  uint64_t h = kernelHash(k) * 0x9e3779b97f4a7c15ull;
  return static_cast<double>(h >> 11) * 0x1.0p-53 < rate;
}

std::optional<FuzzKernel> emiVariant(const FuzzKernel &k, uint64_t seed) {
  std::vector<std::string> lines = splitLines(k.source);
  const std::string head = "__global__ void " + k.kernelName + "(";
  size_t sig = 0;
  while (sig < lines.size() && lines[sig].find(head) == std::string::npos)
    ++sig;
  if (sig == lines.size() || lines[sig].find('{') == std::string::npos ||
      k.source.find(std::string(kEmiBuffer) + ",") != std::string::npos)
    return std::nullopt;
  std::mt19937_64 rng(kernelHash(k) ^ (seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull));
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };

  // The body's top-level statement boundaries (after line i), with what is in
  // scope there.
  struct Boundary {
    size_t line;
    std::vector<Decl> decls; // declared so far, in order
    bool justDeclared;       // line `line` declares decls.back()
    std::optional<Store> store;
  };
  std::vector<Boundary> bounds;
  std::vector<Decl> decls;
  int depth = 1;
  size_t end = sig + 1;
  for (; end < lines.size(); ++end) {
    int before = depth;
    depth += braceDelta(lines[end]);
    if (depth <= 0)
      break;
    if (depth != 1)
      continue;
    Boundary b{end, {}, false, std::nullopt};
    if (before == 1) {
      if (std::optional<Decl> d = parseDecl(lines[end])) {
        decls.push_back(*d);
        b.justDeclared = true;
      }
      b.store = parseStore(lines[end]);
    }
    b.decls = decls;
    bounds.push_back(std::move(b));
  }
  if (end == lines.size() || bounds.empty())
    return std::nullopt;

  FuzzKernel v = k;
  std::vector<std::string> features;
  int counter = 0;
  auto fresh = [&](const char *stem) { return std::string(stem) + std::to_string(counter++); };
  // A dead statement that changes a live variable (nothing when none is in scope).
  auto overwrite = [&](const Boundary &b) -> std::string {
    if (b.decls.empty())
      return "";
    const Decl &d = b.decls[pick(b.decls.size())];
    if (chance(0.5)) {
      std::string t = fresh("emiT");
      return d.type + " " + t + d.shape + " = " + otherValue(d) + "; " + d.name + " = " + t + ";";
    }
    return d.name + " = " + otherValue(d) + ";";
  };

  std::map<size_t, std::vector<std::string>> inserts; // after line -> statements
  int wanted = 1 + static_cast<int>(pick(4));
  for (int attempt = 0;
       attempt < 4 * wanted && counter < 64 && static_cast<int>(features.size()) < wanted;
       ++attempt) {
    const Boundary &b = bounds[pick(bounds.size())];
    std::string stmt, kind;
    switch (pick(8)) {
    case 0:
    case 1:
      if (std::string s = overwrite(b); !s.empty()) {
        stmt = "if (emiP != 0) { " + s + " }";
        kind = "emi.dead_if";
      }
      break;
    case 2:
      stmt = "if (emiP != 0) return;";
      kind = "emi.dead_return";
      break;
    case 3:
      if (std::string s = overwrite(b); !s.empty()) {
        std::string i = fresh("emiI");
        stmt = "for (int " + i + " = 0; " + i + " < emiB; " + i + "++) { " + s + " }";
        kind = "emi.zero_trip_loop";
      }
      break;
    case 4:
      if (std::string s = overwrite(b); !s.empty()) {
        stmt = "if (emiP != 0) { __debug_barrier(); " + s + " } else { }";
        kind = "emi.dead_barrier";
      }
      break;
    case 5:
      if (b.store) {
        stmt = "*?((" + b.store->mask + ") && (emiP != 0)) " + b.store->ptr + " = (" +
               b.store->value + ") + 1;";
        kind = "emi.dead_store";
      }
      break;
    default:
      // Live: the declaration just made, evaluated again under a loaded condition.
      if (b.justDeclared) {
        const Decl &d = b.decls.back();
        std::string again = d.name + " = " + d.rhs + ";";
        bool barrier = chance(0.5);
        if (barrier)
          again += " __debug_barrier();";
        if (chance(0.5)) {
          stmt = "if (emiU != 0) { " + again + " }";
        } else {
          std::string i = fresh("emiJ");
          stmt = "for (int " + i + " = 0; " + i + " < emiU; " + i + "++) { " + again + " }";
        }
        kind = barrier ? "emi.live_barrier" : "emi.live";
      }
      break;
    }
    if (stmt.empty())
      continue;
    inserts[b.line].push_back("  " + stmt);
    features.push_back(kind);
  }
  if (features.empty())
    return std::nullopt;

  std::string &s = lines[sig];
  s.insert(s.find(head) + head.size(), std::string("int32 *") + kEmiBuffer + ", ");
  std::ostringstream out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out << lines[i] << "\n";
    if (i == sig)
      out << "  int32 emiP = *" << kEmiBuffer << ";\n  int32 emiB = *(" << kEmiBuffer
          << " + 1);\n  int32 emiU = *(" << kEmiBuffer << " + 2);\n";
    if (auto it = inserts.find(i); it != inserts.end())
      for (const std::string &stmt : it->second)
        out << stmt << "\n";
  }
  v.source = out.str();
  BufferDesc emi;
  emi.name = kEmiBuffer;
  emi.dtype = DType::I32;
  emi.shape = {4};
  const char *taken = std::getenv("TC_FUZZ_TEST_EMI_TAKEN");
  emi.data = taken && std::strcmp(taken, "1") == 0 ? std::vector<double>{1, 1, 0, 0}
                                                   : std::vector<double>{0, 0, 1, 0};
  v.buffers.insert(v.buffers.begin(), emi);
  features.push_back("emi");
  v.features.insert(v.features.end(), features.begin(), features.end());
  std::sort(v.features.begin(), v.features.end());
  v.features.erase(std::unique(v.features.begin(), v.features.end()), v.features.end());
  return v;
}

std::string emiDifference(const std::map<std::string, HostArray> &plain,
                          const std::map<std::string, HostArray> &got) {
  std::string diff = firstDifference(plain, got);
  return diff.empty() ? "" : "the EMI variant differs from the plain kernel in " + diff;
}

} // namespace tc::fuzz
