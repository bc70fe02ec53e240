//===- Reducer.cpp - Reducing a failing kernel beyond RapidCheck's shrinks ===//
//
// Greedy passes over the kernel's text and data, each candidate kept only if
// the caller's predicate holds for it, repeated until no pass finds anything
// or the time is up. The passes know the generator's layout: the kernel body's
// lines are statements indented by two spaces, a line ending in `{` opens a
// block closed by the line where the braces balance again, and helpers and
// the kernel's parameter list start in column 0.
//
//===----------------------------------------------------------------------===//
#include "fuzz/Reducer.h"

#include "fuzz/Oracle.h"
#include "ir/IRParser.h"
#include "support/Diagnostics.h"
#include "support/SourceManager.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <sstream>

namespace tc::fuzz {
namespace {

using Lines = std::vector<std::string>;

Lines splitLines(const std::string &text) {
  Lines out;
  std::istringstream is(text);
  for (std::string l; std::getline(is, l);)
    out.push_back(l);
  return out;
}

std::string joinLines(const Lines &lines) {
  std::string out;
  for (const std::string &l : lines)
    out += l + "\n";
  return out;
}

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

int braceBalance(const std::string &l) {
  return static_cast<int>(std::count(l.begin(), l.end(), '{')) -
         static_cast<int>(std::count(l.begin(), l.end(), '}'));
}

// A body line: a statement or block of the kernel or of a helper.
bool isBodyLine(const std::string &l) { return l.size() > 2 && l[0] == ' '; }

// The line where the block opened on line `open` closes (lines.size() if never).
size_t blockEnd(const Lines &lines, size_t open) {
  int depth = 0;
  for (size_t i = open; i < lines.size(); ++i) {
    depth += braceBalance(lines[i]);
    if (depth <= 0)
      return i;
  }
  return lines.size();
}

bool isOpChar(char c) { return std::string_view("+-*/%<>=!&|^?:@").find(c) != std::string::npos; }

// The index of the bracket closing the one at `open` (`(` or `[`), or npos.
size_t closing(const std::string &s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(' || s[i] == '[')
      ++depth;
    else if ((s[i] == ')' || s[i] == ']') && --depth == 0)
      return i;
  }
  return std::string::npos;
}

// `s` split at the depth-0 occurrences of `sep` (a space-delimited operator
// token when `opTokens`, else a ", ").
std::vector<std::string> splitTop(const std::string &s, bool opTokens) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    depth += (c == '(' || c == '[') - (c == ')' || c == ']');
    if (depth != 0)
      continue;
    if (!opTokens && c == ',' && i + 1 < s.size() && s[i + 1] == ' ') {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 2;
    } else if (opTokens && c == ' ' && i + 1 < s.size() && isOpChar(s[i + 1])) {
      size_t end = i + 1;
      while (end < s.size() && isOpChar(s[end]))
        ++end;
      if (end < s.size() && s[end] == ' ' && i > start) {
        parts.push_back(trim(s.substr(start, i - start)));
        start = end + 1;
        i = end;
      }
    }
  }
  parts.push_back(trim(s.substr(start)));
  return parts;
}

// The operands of expression `e`: of a binary or ternary operator, the
// arguments of a call, the operand of a cast or a prefix operator.
std::vector<std::string> operands(std::string e) {
  e = trim(e);
  while (!e.empty() && e.front() == '(' && closing(e, 0) == e.size() - 1)
    e = trim(e.substr(1, e.size() - 2));
  std::vector<std::string> parts = splitTop(e, true);
  if (parts.size() > 1)
    return parts;
  if (e.empty())
    return {};
  if (e.front() == '(') { // a cast `(T)x`
    size_t c = closing(e, 0);
    return c == std::string::npos ? std::vector<std::string>{} : std::vector<std::string>{e.substr(c + 1)};
  }
  if (std::string_view("-~^!").find(e.front()) != std::string::npos)
    return {e.substr(1)};
  size_t paren = e.find('(');
  if (paren != std::string::npos && paren > 0 && e.back() == ')' && closing(e, paren) == e.size() - 1)
    return splitTop(e.substr(paren + 1, e.size() - paren - 2), false);
  return {};
}

// The position of the statement's assignment operator (` = `, ` += `, ...)
// at depth 0, and its length; npos if none.
std::pair<size_t, size_t> assignment(const std::string &l) {
  int depth = 0;
  for (size_t i = 0; i + 2 < l.size(); ++i) {
    depth += (l[i] == '(' || l[i] == '[') - (l[i] == ')' || l[i] == ']');
    if (depth != 0 || l[i] != ' ')
      continue;
    size_t end = i + 1;
    while (end < l.size() && isOpChar(l[end]))
      ++end;
    std::string op = l.substr(i + 1, end - i - 1);
    bool assign = !op.empty() && op.back() == '=' && op != "==" && op != "<=" && op != ">=" &&
                  op != "!=";
    if (assign && end < l.size() && l[end] == ' ')
      return {i + 1, op.size()};
  }
  return {std::string::npos, 0};
}

std::string join(const std::vector<std::string> &parts) {
  std::string out;
  for (const std::string &p : parts)
    out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::optional<int64_t> intValue(const std::string &s) {
  try {
    size_t used = 0;
    int64_t v = std::stoll(s, &used);
    return used == s.size() ? std::optional<int64_t>(v) : std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
}

/// The greedy reduction of one kernel.
class Reduction {
public:
  Reduction(const FuzzKernel &k, const std::function<bool(const FuzzKernel &)> &stillFails,
            double seconds, ReduceStats &stats)
      : best_(k), stillFails_(stillFails), seconds_(seconds), stats_(stats) {}
  FuzzKernel run();

private:
  FuzzKernel best_;
  const std::function<bool(const FuzzKernel &)> &stillFails_;
  double seconds_;
  ReduceStats &stats_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  bool timeUp() const { return elapsed() >= seconds_; }
  bool tryKernel(const FuzzKernel &c);
  bool trySource(const Lines &lines);
  bool deleteStatements();
  bool simplifyExpressions();
  bool simplifyLine(size_t i);
  bool shrinkTiles();
  bool shrinkSizes();
  bool simplifyScalars();
  bool simplifyData();
  bool dropParams();
  void regrid(FuzzKernel &c) const;
};

// Keeps `c` when the predicate holds for it (and time is left).
bool Reduction::tryKernel(const FuzzKernel &c) {
  if (timeUp())
    return false;
  ++stats_.candidates;
  if (!stillFails_(c))
    return false;
  ++stats_.accepted;
  best_ = c;
  return true;
}

bool Reduction::trySource(const Lines &lines) {
  FuzzKernel c = best_;
  c.source = joinLines(lines);
  return c.source != best_.source && tryKernel(c);
}

// Deletes statements and blocks, or unwraps a block (keeping an `if`'s then
// branch), from the last line up: later statements use earlier ones.
bool Reduction::deleteStatements() {
  bool progress = false;
  for (size_t i = splitLines(best_.source).size(); i-- > 0 && !timeUp();) {
    Lines lines = splitLines(best_.source);
    if (i >= lines.size() || !isBodyLine(lines[i]))
      continue;
    std::string t = trim(lines[i]);
    if (braceBalance(lines[i]) > 0 && t.front() != '}') {
      size_t end = blockEnd(lines, i);
      if (end >= lines.size())
        continue;
      Lines whole = lines, unwrapped = lines;
      whole.erase(whole.begin() + static_cast<long>(i), whole.begin() + static_cast<long>(end) + 1);
      size_t elseAt = end;
      for (size_t j = i + 1; j < end; ++j)
        if (trim(lines[j]) == "} else {" &&
            braceBalance(joinLines(Lines(lines.begin() + static_cast<long>(i),
                                         lines.begin() + static_cast<long>(j)))) == 1)
          elseAt = j;
      unwrapped.erase(unwrapped.begin() + static_cast<long>(elseAt),
                      unwrapped.begin() + static_cast<long>(end) + 1);
      unwrapped.erase(unwrapped.begin() + static_cast<long>(i));
      progress = trySource(whole) || trySource(unwrapped) || progress;
    } else if (braceBalance(lines[i]) == 0 && t.back() == ';' && t.rfind("return", 0) != 0) {
      lines.erase(lines.begin() + static_cast<long>(i));
      progress = trySource(lines) || progress;
    }
  }
  return progress;
}

// Replaces an assignment's right-hand side by 0, 1 or one of its operands,
// or a parenthesised sub-expression or call by one of its operands.
bool Reduction::simplifyLine(size_t i) {
  Lines lines = splitLines(best_.source);
  const std::string l = lines[i];
  std::vector<std::pair<std::pair<size_t, size_t>, std::vector<std::string>>> spans;
  auto [at, len] = assignment(l);
  size_t semi = l.rfind(';');
  if (at != std::string::npos && semi != std::string::npos && semi > at + len + 1) {
    size_t from = at + len + 1;
    std::string rhs = l.substr(from, semi - from);
    std::vector<std::string> subs;
    if (rhs != "0" && rhs != "1")
      subs = {"0", "1"};
    for (const std::string &o : operands(rhs))
      subs.push_back(o);
    spans.push_back({{from, semi - from}, subs});
  }
  for (size_t p = 0; p < l.size(); ++p) {
    if (l[p] != '(')
      continue;
    size_t c = closing(l, p), b = p;
    while (b > 0 && (std::isalnum(static_cast<unsigned char>(l[b - 1])) || l[b - 1] == '_'))
      --b;
    if (c == std::string::npos || (b == p && c + 1 < l.size() && std::isalpha(static_cast<unsigned char>(l[c + 1]))))
      continue; // unbalanced, or a cast's type
    std::vector<std::string> subs;
    for (const std::string &o : operands(l.substr(b, c + 1 - b)))
      subs.push_back("(" + o + ")");
    spans.push_back({{b, c + 1 - b}, subs});
  }
  for (const auto &[span, subs] : spans)
    for (const std::string &s : subs) {
      Lines cand = lines;
      cand[i] = l.substr(0, span.first) + s + l.substr(span.first + span.second);
      if (trySource(cand))
        return true;
    }
  return false;
}

// Whether `l` declares a mask or a pointer tile. Their expressions stay as
// generated: simplifying a bounds mask to 1 or a pointer's offsets to 0 makes
// the lanes of a store collide, which is defined (the last lane wins) but
// changes what the kernel tests into a different, unrelated finding.
bool declaresMaskOrPointer(const std::string &l) {
  std::string head = trim(l.substr(0, l.find('=')));
  return !head.empty() && head.front() != '*' &&
         (head.rfind("bool ", 0) == 0 || head.find('*') != std::string::npos);
}

bool Reduction::simplifyExpressions() {
  bool progress = false;
  for (size_t i = 0; i < splitLines(best_.source).size() && !timeUp(); ++i) {
    const std::string l = splitLines(best_.source)[i];
    if (!isBodyLine(l) || braceBalance(l) != 0 || declaresMaskOrPointer(l))
      continue;
    while (!timeUp() && simplifyLine(i))
      progress = true;
  }
  return progress;
}

// grid[axis] = cdiv(size, tile) for every axis the generator described.
void Reduction::regrid(FuzzKernel &c) const {
  for (size_t a = 0; a < c.gridAxes.size() && a < 3; ++a) {
    std::optional<int64_t> tile;
    for (const auto &[name, value] : c.defines)
      if (name == c.gridAxes[a].tile)
        tile = intValue(value);
    for (const ScalarDesc &s : c.scalars)
      if (s.name == c.gridAxes[a].size && tile && *tile > 0)
        c.grid[a] = std::max<int64_t>(1, (static_cast<int64_t>(s.value) + *tile - 1) / *tile);
  }
}

// Halves each numeric define (the grid follows).
bool Reduction::shrinkTiles() {
  bool progress = false;
  for (size_t d = 0; d < best_.defines.size() && !timeUp(); ++d) {
    std::optional<int64_t> v = intValue(best_.defines[d].second);
    while (v && *v >= 2 && !timeUp()) {
      FuzzKernel c = best_;
      c.defines[d].second = std::to_string(*v / 2);
      regrid(c);
      if (!tryKernel(c))
        break;
      progress = true;
      v = *v / 2;
    }
  }
  return progress;
}

// `b` cut to `shape` (row-major; keeps the elements whose index is in range).
void resliceBuffer(BufferDesc &b, const std::vector<int64_t> &shape) {
  std::vector<double> data;
  int64_t total = 1;
  for (int64_t s : shape)
    total *= s;
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, old = 0, scale = 1;
    for (size_t a = shape.size(); a-- > 0;) {
      old += (rest % shape[a]) * scale;
      rest /= shape[a];
      scale *= b.shape[a];
    }
    data.push_back(b.data[static_cast<size_t>(old)]);
  }
  b.shape = shape;
  b.data = std::move(data);
}

// Halves (else decrements) each size scalar, cutting every buffer with that
// axis and the grid to match.
bool Reduction::shrinkSizes() {
  bool progress = false;
  for (size_t s = 0; s < best_.scalars.size() && !timeUp(); ++s) {
    const std::string name = best_.scalars[s].name;
    for (bool halve : {true, false}) {
      auto v = static_cast<int64_t>(best_.scalars[s].value);
      int64_t to = halve ? v / 2 : v - 1;
      FuzzKernel c = best_;
      bool sized = false;
      for (BufferDesc &b : c.buffers) {
        std::vector<int64_t> shape = b.shape;
        for (size_t a = 0; a < b.dims.size() && a < shape.size(); ++a)
          if (b.dims[a] == name)
            shape[a] = to, sized = true;
        if (sized && to >= 1)
          resliceBuffer(b, shape);
      }
      if (!sized || to < 1 || to == v)
        break;
      c.scalars[s].value = static_cast<double>(to);
      regrid(c);
      if (tryKernel(c)) {
        progress = true;
        break;
      }
    }
  }
  return progress;
}

// Sets the other scalars to 0, 1 or half their value.
bool Reduction::simplifyScalars() {
  bool progress = false;
  for (size_t s = 0; s < best_.scalars.size() && !timeUp(); ++s) {
    bool sized = false;
    for (const BufferDesc &b : best_.buffers)
      sized = sized || std::count(b.dims.begin(), b.dims.end(), best_.scalars[s].name);
    double v = best_.scalars[s].value;
    if (sized)
      continue;
    for (double to : {0.0, 1.0, std::trunc(v / 2)}) {
      if (std::fabs(to) >= std::fabs(v) || (to == std::trunc(v / 2) && std::fabs(v) <= 2))
        continue;
      FuzzKernel c = best_;
      c.scalars[s].value = to;
      if (tryKernel(c)) {
        progress = true;
        break;
      }
    }
  }
  return progress;
}

// Input data to all zeros, all ones (when not all 0/1 yet), then zeros over
// halves, quarters, ... of it (down to single elements for small buffers).
bool Reduction::simplifyData() {
  bool progress = false;
  for (size_t bi = 0; bi < best_.buffers.size() && !timeUp(); ++bi) {
    if (best_.buffers[bi].isOutput)
      continue;
    auto attempt = [&](size_t from, size_t to, double value) {
      FuzzKernel c = best_;
      std::vector<double> &d = c.buffers[bi].data;
      bool changed = false;
      for (size_t i = from; i < to && i < d.size(); ++i) {
        changed = changed || !(d[i] == value && !std::signbit(d[i]));
        d[i] = value;
      }
      return changed && tryKernel(c);
    };
    const std::vector<double> &data = best_.buffers[bi].data;
    size_t n = data.size();
    bool binary = std::all_of(data.begin(), data.end(), [](double v) { return v == 0 || v == 1; });
    if (attempt(0, n, 0) || (!binary && attempt(0, n, 1))) {
      progress = true;
      continue;
    }
    size_t smallest = n <= 64 ? 1 : n / 16;
    for (size_t chunk = n / 2; chunk >= std::max<size_t>(smallest, 1) && !timeUp(); chunk /= 2)
      for (size_t from = 0; from < n; from += chunk)
        progress = attempt(from, from + chunk, 0) || progress;
  }
  return progress;
}

// The kernel's parameter list: the header line's index and the list's
// bounds in it (npos when there is none).
struct ParamList {
  size_t line = std::string::npos, open = 0, close = 0;
  std::vector<std::string> params;
};

ParamList paramList(const Lines &lines) {
  ParamList p;
  for (size_t i = 0; i < lines.size() && p.line == std::string::npos; ++i) {
    if (lines[i].rfind("__global__", 0) != 0)
      continue;
    p.open = lines[i].find('(');
    p.close = lines[i].rfind(')');
    if (p.open == std::string::npos || p.close == std::string::npos || p.close < p.open)
      return p;
    p.line = i;
    p.params = splitTop(lines[i].substr(p.open + 1, p.close - p.open - 1), false);
  }
  return p;
}

// Whether `name` occurs as a whole word in `text`.
bool usesWord(const std::string &text, const std::string &name) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t p = text.find(name); p != std::string::npos; p = text.find(name, p + 1)) {
    bool before = p > 0 && word(text[p - 1]);
    bool after = p + name.size() < text.size() && word(text[p + name.size()]);
    if (!before && !after)
      return true;
  }
  return false;
}

// Drops parameters the source no longer uses (buffers keep their order;
// size scalars that describe a buffer's axes stay).
bool Reduction::dropParams() {
  bool progress = false;
  for (size_t i = paramList(splitLines(best_.source)).params.size(); i-- > 0 && !timeUp();) {
    Lines lines = splitLines(best_.source);
    ParamList p = paramList(lines);
    if (p.line == std::string::npos || i >= p.params.size())
      continue;
    std::string name = p.params[i].substr(p.params[i].find_last_of(" *") + 1);
    Lines others = lines;
    others.erase(others.begin() + static_cast<long>(p.line));
    bool sized = false;
    for (const BufferDesc &b : best_.buffers)
      sized = sized || std::count(b.dims.begin(), b.dims.end(), name);
    if (sized || usesWord(joinLines(others), name))
      continue;
    FuzzKernel c = best_;
    std::erase_if(c.buffers, [&](const BufferDesc &b) { return b.name == name; });
    std::erase_if(c.scalars, [&](const ScalarDesc &s) { return s.name == name; });
    p.params.erase(p.params.begin() + static_cast<long>(i));
    std::string &h = lines[p.line];
    h = h.substr(0, p.open + 1) + join(p.params) + h.substr(p.close);
    c.source = joinLines(lines);
    progress = tryKernel(c) || progress;
  }
  return progress;
}

FuzzKernel Reduction::run() {
  while (!timeUp()) {
    bool progress = deleteStatements();
    progress = simplifyExpressions() || progress;
    progress = shrinkTiles() || progress;
    progress = shrinkSizes() || progress;
    progress = simplifyScalars() || progress;
    progress = simplifyData() || progress;
    progress = dropParams() || progress;
    if (!progress)
      break;
  }
  stats_.seconds = elapsed();
  return best_;
}

// The op kinds of printed IR `text` ("reduce.max", "atomic_rmw.add", "dot"...).
std::set<std::string> opKinds(const std::string &text) {
  std::set<std::string> kinds;
  SourceManager sm;
  DiagEngine diags(sm);
  std::ostringstream errs;
  diags.setOutput(&errs);
  std::unique_ptr<ir::Module> m = ir::parseModule(sm.addBuffer("signature.tir", text), sm, diags);
  if (!m)
    return kinds;
  for (const auto &f : m->functions)
    ir::forEachOp(f->body(), [&](const ir::Op &op, unsigned) {
      std::string name(op.name());
      if (const ir::AttrValue *kind = op.attr("kind"))
        if (const auto *s = std::get_if<std::string>(kind))
          name += "." + *s;
      kinds.insert(name);
    });
  return kinds;
}

} // namespace

FuzzKernel reduceKernel(const FuzzKernel &k, const std::function<bool(const FuzzKernel &)> &stillFails,
                        double seconds, ReduceStats *stats) {
  ReduceStats local;
  return Reduction(k, stillFails, seconds, stats ? *stats : local).run();
}

std::string failureSignature(const FuzzKernel &k, const std::string &property) {
  std::string outputs, ops;
  for (const BufferDesc &b : k.buffers)
    if (b.isOutput)
      outputs += (outputs.empty() ? "" : ",") + std::string(irName(b.dtype));
  std::string ir = printedIR(k, true);
  for (const std::string &op : opKinds(ir))
    ops += (ops.empty() ? "" : ",") + op;
  return property + "|" + outputs + "|" + (ir.empty() ? "no-ir" : ops);
}

} // namespace tc::fuzz
