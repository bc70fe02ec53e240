// Reports for people: the feature x backend matrix, Markdown and HTML.
#include "conformance/Report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace tc::conf {

namespace {

int64_t count(const StatusCounts &c, Status s) { return c[static_cast<int>(s)]; }
int64_t total(const StatusCounts &c) {
  int64_t n = 0;
  for (int64_t v : c)
    n += v;
  return n;
}

std::vector<std::string> allBackends(const Report &r) {
  std::vector<std::string> out = r.backends;
  for (const CaseRecord &rec : r.records)
    if (std::find(out.begin(), out.end(), rec.backend) == out.end())
      out.push_back(rec.backend);
  return out;
}

std::string percent(int64_t part, int64_t whole) {
  if (whole == 0)
    return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100.0 * static_cast<double>(part) / whole);
  return buf;
}

// "5/6 pass (83%), 6/6 run" for a matrix cell; "" when the feature has no case there.
std::string cellText(const StatusCounts &c) {
  int64_t n = total(c);
  if (n == 0)
    return "";
  int64_t pass = count(c, Status::Pass), run = n - count(c, Status::Skipped);
  std::string s = std::to_string(pass) + "/" + std::to_string(n) + " pass (" + percent(pass, n) +
                  "), " + percent(run, n) + " run";
  std::string extra;
  for (Status st : {Status::Fail, Status::Error, Status::Crash, Status::Timeout, Status::XFail,
                    Status::XPass})
    if (count(c, st))
      extra += (extra.empty() ? "" : ", ") + std::to_string(count(c, st)) + " " +
               std::string(statusName(st));
  return extra.empty() ? s : s + "; " + extra;
}

std::string cellClass(const StatusCounts &c) {
  int64_t n = total(c);
  if (n == 0)
    return "none";
  if (count(c, Status::Skipped) == n)
    return "skip";
  for (Status st : {Status::Fail, Status::Error, Status::Crash, Status::Timeout, Status::XPass})
    if (count(c, st))
      return "bad";
  return count(c, Status::XFail) ? "known" : "good";
}

std::vector<const CaseRecord *> notPassed(const Report &r) {
  std::vector<const CaseRecord *> out;
  for (const CaseRecord &rec : r.records)
    if (rec.status != Status::Pass)
      out.push_back(&rec);
  std::stable_sort(out.begin(), out.end(), [](const CaseRecord *a, const CaseRecord *b) {
    auto rank = [](Status s) { return s == Status::Skipped ? 2 : s == Status::XFail ? 1 : 0; };
    return rank(a->status) < rank(b->status);
  });
  return out;
}

std::string headline(const Report &r) {
  std::string backends;
  for (const std::string &b : allBackends(r))
    backends += (backends.empty() ? "" : ", ") + b;
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.2f s", r.seconds);
  return summaryLine(countStatuses(r.records)) + " (" + std::to_string(r.records.size()) +
         " records; backends: " + backends + "; " + secs + ")";
}

std::string mismatchText(const Mismatch &m) {
  if (m.index < 0)
    return "output '" + m.output + "': got " + m.got + ", want " + m.want;
  return "output '" + m.output + "' at index " + std::to_string(m.index) + ": got " + m.got +
         ", want " + m.want + " (" + std::to_string(m.count) +
         (m.count == 1 ? " element differs)" : " elements differ)");
}

std::string caseTitle(const CaseRecord &r) {
  return r.suite + "/" + r.name + " [" + r.backend + "]: " + std::string(statusName(r.status)) +
         (r.actual ? " (" + std::string(statusName(*r.actual)) + ")" : "");
}

// --- Markdown -------------------------------------------------------------------

std::string fence(const std::string &text) {
  size_t longest = 0, run = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return std::string(std::max<size_t>(3, longest + 1), '`');
}

std::string mdCell(std::string s) {
  std::string out;
  for (char c : s)
    out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

void mdCase(std::ostringstream &os, const CaseRecord &r) {
  os << "### " << caseTitle(r) << "\n\n";
  if (!r.variant.empty())
    os << "- variant: `" << r.variant << "`\n";
  if (!r.expect.empty())
    os << "- expectation: " << r.expect << "\n";
  if (r.mismatch)
    os << "- first mismatch: " << mismatchText(*r.mismatch) << "\n";
  if (!r.reason.empty())
    os << "- reason: " << r.reason << "\n";
  if (!r.reproduce.empty())
    os << "- reproduce: `" << r.reproduce << "`\n";
  os << "\n";
  if (!r.error.empty())
    os << fence(r.error) << "text\n" << r.error << (r.error.back() == '\n' ? "" : "\n")
       << fence(r.error) << "\n\n";
  if (!r.source.empty())
    os << fence(r.source) << "c\n" << r.source << (r.source.back() == '\n' ? "" : "\n")
       << fence(r.source) << "\n\n";
}

// --- HTML -----------------------------------------------------------------------

std::string esc(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&#39;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

constexpr const char *kCss = R"(
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.good { background: #dff5df; } td.bad { background: #f9d6d5; }
td.known { background: #e2e8f8; } td.skip { background: #eee; color: #777; }
pre { background: #f7f7f7; border: 1px solid #ddd; padding: 8px; overflow-x: auto; }
.case { border-top: 1px solid #ccc; margin-top: 1.5em; }
.status { font-weight: bold; padding: 1px 6px; border-radius: 3px; }
.st-fail, .st-error, .st-crash, .st-timeout, .st-xpass { background: #f9d6d5; }
.st-xfail { background: #e2e8f8; } .st-skipped { background: #eee; }
code { background: #f3f3f3; padding: 0 3px; }
)";

void htmlMatrix(std::ostringstream &os, const Report &r) {
  std::vector<std::string> backends = allBackends(r);
  os << "<h2>Features</h2>\n<table>\n<tr><th>feature</th>";
  for (const std::string &b : backends)
    os << "<th>" << esc(b) << "</th>";
  os << "</tr>\n";
  for (const FeatureRow &row : featureMatrix(r)) {
    os << "<tr><td><code>" << esc(row.feature) << "</code></td>";
    for (const StatusCounts &c : row.perBackend)
      os << "<td class=\"" << cellClass(c) << "\">" << esc(cellText(c)) << "</td>";
    os << "</tr>\n";
  }
  os << "</table>\n";
}

void htmlCase(std::ostringstream &os, const CaseRecord &r) {
  std::string st(statusName(r.status));
  os << "<div class=\"case\">\n<h3><span class=\"status st-" << st << "\">" << st << "</span> "
     << esc(r.suite + "/" + r.name) << " [" << esc(r.backend) << "]"
     << (r.actual ? " (" + std::string(statusName(*r.actual)) + ")" : "") << "</h3>\n<ul>\n";
  if (!r.variant.empty())
    os << "<li>variant: <code>" << esc(r.variant) << "</code></li>\n";
  if (!r.expect.empty())
    os << "<li>expectation: " << esc(r.expect) << "</li>\n";
  if (r.mismatch)
    os << "<li>first mismatch: " << esc(mismatchText(*r.mismatch)) << "</li>\n";
  if (!r.reason.empty())
    os << "<li>reason: " << esc(r.reason) << "</li>\n";
  if (!r.reproduce.empty())
    os << "<li>reproduce: <code>" << esc(r.reproduce) << "</code></li>\n";
  os << "</ul>\n";
  if (!r.error.empty())
    os << "<pre>" << esc(r.error) << "</pre>\n";
  if (!r.source.empty())
    os << "<details><summary>kernel source</summary><pre>" << esc(r.source)
       << "</pre></details>\n";
  os << "</div>\n";
}

} // namespace

std::vector<FeatureRow> featureMatrix(const Report &r) {
  std::vector<std::string> backends = allBackends(r);
  std::map<std::string, std::vector<StatusCounts>> rows;
  auto bump = [&](const std::string &feature, size_t b, Status s) {
    auto &row = rows[feature];
    row.resize(backends.size(), StatusCounts{});
    ++row[b][static_cast<int>(s)];
  };
  std::vector<StatusCounts> all(backends.size(), StatusCounts{});
  for (const CaseRecord &rec : r.records) {
    size_t b = static_cast<size_t>(
        std::find(backends.begin(), backends.end(), rec.backend) - backends.begin());
    std::set<std::string> features(rec.features.begin(), rec.features.end());
    if (features.empty())
      features.insert("(no feature)");
    for (const std::string &f : features)
      bump(f, b, rec.status);
    ++all[b][static_cast<int>(rec.status)];
  }
  std::vector<FeatureRow> out;
  for (auto &[feature, counts] : rows)
    out.push_back({feature, counts});
  out.push_back({"(all)", all});
  return out;
}

std::string renderMarkdown(const Report &r) {
  std::ostringstream os;
  std::vector<std::string> backends = allBackends(r);
  os << "# Conformance report\n\n" << headline(r) << "\n\n## Features\n\n";
  os << "Each cell: cases that passed / cases with the feature (pass rate), the share that ran "
        "(coverage: not skipped), and the other statuses.\n\n| feature |";
  for (const std::string &b : backends)
    os << " " << mdCell(b) << " |";
  os << "\n|---|";
  for (size_t i = 0; i < backends.size(); ++i)
    os << "---|";
  os << "\n";
  for (const FeatureRow &row : featureMatrix(r)) {
    os << "| `" << mdCell(row.feature) << "` |";
    for (const StatusCounts &c : row.perBackend)
      os << " " << mdCell(cellText(c)) << " |";
    os << "\n";
  }
  std::vector<const CaseRecord *> bad = notPassed(r);
  os << "\n## Cases that did not pass (" << bad.size() << ")\n\n";
  for (const CaseRecord *rec : bad)
    mdCase(os, *rec);
  os << summaryLine(countStatuses(r.records)) << "\n";
  return os.str();
}

std::string renderHtml(const Report &r) {
  std::ostringstream os;
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
     << "<title>Conformance report</title>\n<style>" << kCss << "</style>\n</head>\n<body>\n"
     << "<h1>Conformance report</h1>\n<p>" << esc(headline(r)) << "</p>\n";
  htmlMatrix(os, r);
  std::vector<const CaseRecord *> bad = notPassed(r);
  os << "<h2>Cases that did not pass (" << bad.size() << ")</h2>\n";
  for (const CaseRecord *rec : bad)
    htmlCase(os, *rec);
  os << "<p>" << esc(summaryLine(countStatuses(r.records))) << "</p>\n</body>\n</html>\n";
  return os.str();
}

} // namespace tc::conf
