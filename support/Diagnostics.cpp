#include "support/Diagnostics.h"

#include <algorithm>
#include <iostream>
#include <optional>
#include <sstream>
#include <string_view>

namespace tc {

namespace {
struct DiagInfo {
  std::string_view name;
  Severity severity;
  std::string_view format;
};

constexpr DiagInfo kDiagInfos[] = {
#define DIAG(ID, SEV, FMT) {#ID, Severity::SEV, FMT},
#include "support/diag/All.def"
#undef DIAG
};

const DiagInfo &info(DiagId id) { return kDiagInfos[static_cast<size_t>(id)]; }

std::string_view severityName(Severity s) {
  switch (s) {
  case Severity::Note: return "note";
  case Severity::Warning: return "warning";
  case Severity::Error: return "error";
  }
  return "error";
}
} // namespace

Severity defaultSeverity(DiagId id) { return info(id).severity; }
std::string_view diagName(DiagId id) { return info(id).name; }
std::string_view diagFormat(DiagId id) { return info(id).format; }

std::string formatMessage(std::string_view format, const std::vector<std::string> &args) {
  std::string out;
  for (size_t i = 0; i < format.size(); ++i) {
    char c = format[i];
    if (c == '{' && i + 2 < format.size() && std::isdigit(static_cast<unsigned char>(format[i + 1])) &&
        format[i + 2] == '}') {
      size_t k = static_cast<size_t>(format[i + 1] - '0');
      out += k < args.size() ? args[k] : std::string("<missing>");
      i += 2;
      continue;
    }
    out += c;
  }
  return out;
}

namespace {
/// The length of the well-formed UTF-8 sequence at `s[i]`, 0 if there is none.
size_t utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80)
    return 1;
  size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
  unsigned char c1 = byte(i + 1);
  if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || // overlong, surrogates
      (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F))   // overlong, > U+10FFFF
    return 0;
  return n;
}
} // namespace

std::string escapeInvalidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (size_t n = utf8SequenceLength(text, i)) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    static const char *hex = "0123456789abcdef";
    unsigned char c = static_cast<unsigned char>(text[i++]);
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

DiagEngine::DiagEngine(const SourceManager &sm) : sm_(sm), out_(&std::cerr) {}

void DiagEngine::report(DiagId id, SourceLoc loc, std::vector<std::string> args, uint32_t length) {
  if (stopped_)
    return;
  Severity sev = defaultSeverity(id);
  bool promoted = false;
  if (sev == Severity::Note && lastWasIgnored_)
    return;
  if (sev == Severity::Warning) {
    if (ignoreWarnings_) {
      lastWasIgnored_ = true;
      return;
    }
    if (werror_) {
      sev = Severity::Error;
      promoted = true;
    }
  }
  if (sev != Severity::Note)
    lastWasIgnored_ = false;
  Diagnostic d{id, sev, loc, std::max<uint32_t>(length, 1), formatMessage(diagFormat(id), args),
               promoted};
  if (sev == Severity::Error)
    ++numErrors_;
  if (sev == Severity::Warning)
    ++numWarnings_;
  if (out_ && !verifyMode_)
    *out_ << render(d);
  diags_.push_back(std::move(d));
  if (sev == Severity::Error && numErrors_ >= errorLimit_ && errorLimit_ != 0) {
    Diagnostic stop{DiagId::err_too_many_errors, Severity::Error, SourceLoc{}, 1,
                    std::string(diagFormat(DiagId::err_too_many_errors)), false};
    if (out_ && !verifyMode_)
      *out_ << render(stop);
    diags_.push_back(std::move(stop));
    stopped_ = true;
  }
}

void DiagEngine::reportNoLoc(DiagId id, std::vector<std::string> args) {
  report(id, SourceLoc{}, std::move(args));
}

namespace {
// A source line longer than this is shown as a window of this many bytes,
// starting this many before the column.
constexpr size_t kMaxShownLine = 240, kShownBefore = 100;

// Writes "file:line:col: sev: msg" plus the source line and caret, with every
// byte that is not well-formed UTF-8 written as \xNN.
void renderOne(std::ostringstream &os, const SourceManager &sm, SourceLoc loc, uint32_t length,
               Severity sev, const std::string &msg, bool werror) {
  std::string head;
  if (loc.valid())
    head += sm.name(loc.file) + ':' + std::to_string(loc.line) + ':' + std::to_string(loc.col) +
            ": ";
  head += std::string(severityName(sev)) + ": " + msg;
  if (werror)
    head += " [-Werror]";
  os << escapeInvalidUtf8(head) << '\n';
  if (!loc.valid())
    return;
  std::string_view line = sm.lineText(loc.file, loc.line);
  if (line.empty() && loc.line == 0)
    return;
  // The caret goes under the escaped line: one column per character, four
  // per escaped byte, tabs kept as tabs.
  size_t start = std::min<size_t>(loc.col > 0 ? loc.col - 1 : 0, line.size());
  size_t end = std::min<size_t>(start + length, line.size());
  // A very long line (generated code, a fuzzer's input) is shown as a window
  // around the column, "..." marking what is cut: every diagnostic on a
  // 256 KiB line printed the whole line twice (38 MB for one file).
  size_t from = 0, to = line.size();
  if (line.size() > kMaxShownLine) {
    from = start > kShownBefore ? start - kShownBefore : 0;
    to = std::min(line.size(), from + kMaxShownLine);
    auto continuation = [&](size_t i) { return (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80; };
    while (from > 0 && continuation(from)) // whole characters only
      --from;
    while (to < line.size() && continuation(to))
      ++to;
  }
  std::string text, caret;
  if (from > 0) {
    text += "...";
    caret += "   ";
  }
  size_t highlighted = 0;
  for (size_t i = from; i < to;) {
    size_t n = utf8SequenceLength(line, i);
    size_t width = 1;
    if (n) {
      text.append(line.data() + i, n);
    } else {
      std::string escaped = escapeInvalidUtf8(line.substr(i, 1));
      width = escaped.size();
      text += escaped;
    }
    if (i < start)
      caret.append(line[i] == '\t' ? 1 : width, line[i] == '\t' ? '\t' : ' ');
    else if (i < end)
      highlighted += width;
    i += n ? n : 1;
  }
  if (to < line.size())
    text += "...";
  caret += '^';
  if (highlighted > 1)
    caret += std::string(highlighted - 1, '~');
  os << text << '\n' << caret << '\n';
}
} // namespace

std::string DiagEngine::render(const Diagnostic &d) const {
  std::ostringstream os;
  SourceLoc primary = sm_.outermost(d.loc);
  // Inside a macro expansion the highlighted length refers to the spelling, not the use.
  uint32_t len = d.loc.expansion ? 1 : d.length;
  renderOne(os, sm_, primary, len, d.severity, d.message, d.promotedFromWarning);
  SourceLoc cur = d.loc;
  while (cur.expansion != 0) {
    const MacroExpansion &e = sm_.expansion(cur.expansion);
    SourceLoc spelling{cur.file, cur.line, cur.col, 0};
    renderOne(os, sm_, spelling, 1, Severity::Note,
              formatMessage(diagFormat(DiagId::note_expanded_from_macro), {e.macro}), false);
    cur = e.use;
  }
  return os.str();
}

namespace {
struct Expectation {
  Severity severity;
  uint32_t file, line;
  std::string text;
  bool matched = false;
};

// One `expected-KIND[@[+-]N] {{text}}` directive per match on a line (--verify).
// Scanned by hand: a directive is as long as a line may be (a regex recursed
// per character and overflowed the stack). A malformed directive is a problem,
// never silently skipped (the run would pass without checking anything).
std::vector<Expectation> collectExpectations(const SourceManager &sm,
                                             std::vector<std::string> &problems) {
  std::vector<Expectation> result;
  static constexpr std::string_view kPrefix = "expected-";
  auto isLower = [](char c) { return (c >= 'a' && c <= 'z') || c == '-'; };
  auto isDigit = [](char c) { return c >= '0' && c <= '9'; };
  for (uint32_t f = 0; f < sm.numFiles(); ++f) {
    const std::string &text = sm.text(f);
    uint32_t lineNo = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
      size_t end = text.find('\n', pos);
      if (end == std::string::npos)
        end = text.size();
      ++lineNo;
      std::string_view line(text.data() + pos, end - pos);
      auto problem = [&](const std::string &msg) {
        problems.push_back(escapeInvalidUtf8(sm.name(f)) + ":" + std::to_string(lineNo) + ": " +
                           msg);
      };
      for (size_t at = line.find(kPrefix); at != std::string_view::npos;
           at = line.find(kPrefix, at + 1)) {
        size_t i = at + kPrefix.size();
        size_t wordEnd = i;
        while (wordEnd < line.size() && isLower(line[wordEnd]))
          ++wordEnd;
        std::string_view word = line.substr(i, wordEnd - i);
        i = wordEnd;
        std::optional<Severity> sev;
        if (word == "error")
          sev = Severity::Error;
        else if (word == "warning")
          sev = Severity::Warning;
        else if (word == "note")
          sev = Severity::Note;
        if (!sev) {
          // Prose such as "the expected-value table" is not a directive; a
          // word followed by {{ is one we do not know.
          size_t j = i;
          while (j < line.size() && (line[j] == ' ' || line[j] == '\t'))
            ++j;
          bool kindLike =
              word.starts_with("error") || word.starts_with("warning") || word.starts_with("note");
          if (kindLike || line.substr(j).starts_with("{{"))
            problem("unknown directive 'expected-" + std::string(word) +
                    "' (expected-error, expected-warning or expected-note)");
          continue;
        }
        std::string directive = "expected-" + std::string(word);
        uint32_t target = lineNo;
        if (i < line.size() && line[i] == '@') {
          ++i;
          char sign = 0;
          if (i < line.size() && (line[i] == '+' || line[i] == '-'))
            sign = line[i++];
          size_t digits = i;
          uint64_t n = 0;
          while (i < line.size() && isDigit(line[i]) && n <= 0xffffffffu)
            n = n * 10 + uint64_t(line[i++] - '0');
          if (i == digits) {
            problem("expected a line number after '" + directive + "@'");
            continue;
          }
          if (i < line.size() && isDigit(line[i])) {
            problem(directive + "@: the line number is too large");
            continue;
          }
          int64_t t = sign == '+'   ? int64_t(lineNo) + int64_t(n)
                      : sign == '-' ? int64_t(lineNo) - int64_t(n)
                                    : int64_t(n);
          if (t < 1 || t > int64_t(0xffffffffu)) {
            problem(directive + "@" + (sign ? std::string(1, sign) : "") + std::to_string(n) +
                    ": line " + std::to_string(t) + " is outside the file");
            continue;
          }
          target = uint32_t(t);
        }
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t'))
          ++i;
        if (!line.substr(i).starts_with("{{")) {
          problem(i < line.size() && isDigit(line[i])
                      ? "'" + directive +
                            " N {{...}}': counts are not supported; write one "
                            "directive per diagnostic"
                      : "expected '{{' after '" + directive + "'");
          continue;
        }
        size_t close = line.find("}}", i + 2);
        if (close == std::string_view::npos) {
          problem("'" + directive + " {{' without its closing '}}' on the same line");
          continue;
        }
        result.push_back({*sev, f, target, std::string(line.substr(i + 2, close - i - 2)), false});
        at = close;
      }
      pos = end + 1;
    }
  }
  return result;
}
} // namespace

bool DiagEngine::verify(std::ostream &out) const {
  std::vector<std::string> problems;
  std::vector<Expectation> expected = collectExpectations(sm_, problems);
  bool ok = problems.empty();
  for (const std::string &p : problems)
    out << "malformed directive at " << p << '\n';
  for (const Diagnostic &d : diags_) {
    if (d.id == DiagId::err_too_many_errors)
      continue;
    SourceLoc loc = sm_.outermost(d.loc);
    bool found = false;
    for (Expectation &e : expected) {
      if (e.matched || e.severity != d.severity || e.file != loc.file || e.line != loc.line)
        continue;
      if (d.message.find(e.text) == std::string::npos)
        continue;
      e.matched = found = true;
      break;
    }
    if (!found) {
      ok = false;
      out << "unexpected " << severityName(d.severity) << " ";
      if (loc.valid())
        out << "at " << escapeInvalidUtf8(sm_.name(loc.file)) << ':' << loc.line << ':' << loc.col;
      out << ": " << escapeInvalidUtf8(d.message) << '\n';
    }
  }
  for (const Expectation &e : expected) {
    if (e.matched)
      continue;
    ok = false;
    out << "expected " << severityName(e.severity) << " not seen at "
        << escapeInvalidUtf8(sm_.name(e.file)) << ':' << e.line << ": " << escapeInvalidUtf8(e.text)
        << '\n';
  }
  return ok;
}

} // namespace tc
