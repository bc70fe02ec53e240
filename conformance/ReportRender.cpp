// Reports for people: the feature x backend matrix, Markdown and HTML.
#include "conformance/Report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

namespace tc::conf {

namespace {

int64_t count(const StatusCounts &c, Status s) {
  return c[static_cast<int>(s)];
}
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
  for (Status st :
       {Status::Fail, Status::Error, Status::Crash, Status::Timeout, Status::XFail, Status::XPass})
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

// The records that neither passed nor were skipped: failures first, then xfail.
std::vector<const CaseRecord *> notPassed(const Report &r) {
  std::vector<const CaseRecord *> out;
  for (const CaseRecord &rec : r.records)
    if (rec.status != Status::Pass && rec.status != Status::Skipped)
      out.push_back(&rec);
  std::stable_sort(out.begin(), out.end(), [](const CaseRecord *a, const CaseRecord *b) {
    auto rank = [](Status s) { return s == Status::XFail ? 1 : 0; };
    return rank(a->status) < rank(b->status);
  });
  return out;
}

// Skipped records grouped by reason (reasons in order of first appearance).
std::vector<std::pair<std::string, std::vector<const CaseRecord *>>>
skippedByReason(const Report &r) {
  std::vector<std::pair<std::string, std::vector<const CaseRecord *>>> out;
  for (const CaseRecord &rec : r.records) {
    if (rec.status != Status::Skipped)
      continue;
    auto it =
        std::find_if(out.begin(), out.end(), [&](const auto &g) { return g.first == rec.reason; });
    if (it == out.end())
      out.push_back({rec.reason, {&rec}});
    else
      it->second.push_back(&rec);
  }
  return out;
}

// One row of the per-suite table: a suite on a backend.
struct SuiteRow {
  std::string suite, file, backend;
  StatusCounts counts{};
  double seconds = 0;
};

std::vector<SuiteRow> suiteRows(const Report &r) {
  std::vector<SuiteRow> out;
  for (const CaseRecord &rec : r.records) {
    auto it = std::find_if(out.begin(), out.end(), [&](const SuiteRow &row) {
      return row.suite == rec.suite && row.file == rec.file && row.backend == rec.backend;
    });
    if (it == out.end()) {
      out.push_back({rec.suite, rec.file, rec.backend, {}, 0});
      it = out.end() - 1;
    }
    ++it->counts[static_cast<int>(rec.status)];
    it->seconds += rec.time;
  }
  return out;
}

std::string seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", s);
  return buf;
}

// The header lines: label and value, for the fields the report has.
std::vector<std::pair<std::string, std::string>> headerFields(const Report &r) {
  std::string inputs;
  for (const std::string &in : r.inputs)
    inputs += (inputs.empty() ? "" : " ") + in;
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto &[label, value] :
       std::initializer_list<std::pair<const char *, const std::string &>>{{"command", r.command},
                                                                           {"version", r.version},
                                                                           {"date", r.date},
                                                                           {"host", r.host},
                                                                           {"device", r.device},
                                                                           {"tolerance", r.tolerance},
                                                                           {"inputs", inputs}})
    if (!value.empty())
      out.push_back({label, value});
  return out;
}

std::string headline(const Report &r) {
  std::string backends;
  for (const std::string &b : allBackends(r))
    backends += (backends.empty() ? "" : ", ") + b;
  return summaryLine(countStatuses(r.records)) + " (" + std::to_string(r.records.size()) +
         " records; backends: " + backends + "; " + seconds(r.seconds) + ")";
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
    os << fence(r.error) << "text\n"
       << r.error << (r.error.back() == '\n' ? "" : "\n") << fence(r.error) << "\n\n";
  if (!r.source.empty())
    os << fence(r.source) << "c\n"
       << r.source << (r.source.back() == '\n' ? "" : "\n") << fence(r.source) << "\n\n";
}

// --- HTML -----------------------------------------------------------------------

std::string esc(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
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
td.num { text-align: right; white-space: nowrap; } .hidden { display: none; }
table.header th { text-align: right; }
.filter input { font-size: 1em; padding: 2px 6px; }
)";

void htmlMatrix(std::ostringstream &os, const Report &r) {
  std::vector<std::string> backends = allBackends(r);
  os << "<h2>Features</h2>\n<table>\n<tr><th>feature</th>";
  for (const std::string &b : backends)
    os << "<th>" << esc(b) << "</th>";
  os << "</tr>\n";
  for (const FeatureRow &row : featureMatrix(r)) {
    os << "<tr class=\"filterable\"><td><code>" << esc(row.feature) << "</code></td>";
    for (const StatusCounts &c : row.perBackend)
      os << "<td class=\"" << cellClass(c) << "\">" << esc(cellText(c)) << "</td>";
    os << "</tr>\n";
  }
  os << "</table>\n";
}

void htmlCase(std::ostringstream &os, const CaseRecord &r) {
  std::string st(statusName(r.status));
  os << "<div class=\"case filterable\">\n<h3><span class=\"status st-" << st << "\">" << st
     << "</span> " << esc(r.suite + "/" + r.name) << " [" << esc(r.backend) << "]"
     << (r.actual ? " (" + std::string(statusName(*r.actual)) + ")" : "") << "</h3>\n<ul>\n";
  if (!r.variant.empty())
    os << "<li>variant: <code>" << esc(r.variant) << "</code></li>\n";
  if (!r.expect.empty())
    os << "<li>expectation: " << esc(r.expect) << "</li>\n";
  if (!r.features.empty()) {
    std::string fs;
    for (const std::string &f : r.features)
      fs += (fs.empty() ? "" : " ") + f;
    os << "<li>features: <code>" << esc(fs) << "</code></li>\n";
  }
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
    os << "<details><summary>kernel source</summary><pre>" << esc(r.source) << "</pre></details>\n";
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
    size_t b = static_cast<size_t>(std::find(backends.begin(), backends.end(), rec.backend) -
                                   backends.begin());
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

namespace {

void mdHeader(std::ostringstream &os, const Report &r) {
  for (const auto &[label, value] : headerFields(r))
    os << "- " << label << ": `" << mdCell(value) << "`\n";
  os << "\n";
}

void mdMatrix(std::ostringstream &os, const Report &r) {
  std::vector<std::string> backends = allBackends(r);
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
  os << "\n";
}

void mdSuites(std::ostringstream &os, const Report &r) {
  os << "| suite | file | backend |";
  for (Status st : kAllStatuses)
    os << " " << statusName(st) << " |";
  os << " time |\n|---|---|---|";
  for (int i = 0; i < kNumStatuses; ++i)
    os << "---:|";
  os << "---:|\n";
  for (const SuiteRow &row : suiteRows(r)) {
    os << "| " << mdCell(row.suite) << " | " << mdCell(row.file) << " | " << mdCell(row.backend)
       << " |";
    for (Status st : kAllStatuses)
      os << " " << count(row.counts, st) << " |";
    os << " " << seconds(row.seconds) << " |\n";
  }
  os << "\n";
}

void mdSkipped(std::ostringstream &os, const Report &r) {
  auto groups = skippedByReason(r);
  size_t n = 0;
  for (const auto &g : groups)
    n += g.second.size();
  os << "## Skipped (" << n << ")\n\n";
  if (groups.empty())
    return;
  os << "| reason | cases |\n|---|---:|\n";
  for (const auto &[reason, recs] : groups)
    os << "| " << mdCell(reason.empty() ? "(no reason given)" : reason) << " | " << recs.size()
       << " |\n";
  os << "\n";
  for (const auto &[reason, recs] : groups) {
    os << "<details><summary>" << recs.size()
       << " skipped: " << mdCell(reason.empty() ? "(no reason given)" : reason) << "</summary>\n\n";
    for (const CaseRecord *rec : recs)
      os << "- " << rec->suite << "/" << rec->name << " [" << rec->backend << "]\n";
    os << "\n</details>\n\n";
  }
}

} // namespace

std::string renderMarkdown(const Report &r) {
  std::ostringstream os;
  os << "# Conformance report\n\n" << headline(r) << "\n\n";
  mdHeader(os, r);
  os << "## Suites\n\n";
  mdSuites(os, r);
  std::vector<const CaseRecord *> bad = notPassed(r);
  os << "## Cases that did not pass (" << bad.size() << ")\n\n";
  for (const CaseRecord *rec : bad)
    mdCase(os, *rec);
  mdSkipped(os, r);
  os << "## Features\n\n";
  mdMatrix(os, r);
  os << summaryLine(countStatuses(r.records)) << "\n";
  return os.str();
}

namespace {

// The filter box: hides every element of class "filterable" whose text does not
// contain all the words typed (case-insensitive), and every section of class
// "filtered-group" left with nothing shown; the page's address keeps the
// filter (#filter=WORDS), so a link opens the page filtered. Plain JavaScript,
// no external resource.
constexpr const char *kFilterScript = R"(
function tcFilter(text) {
  var words = text.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 0; });
  var items = document.querySelectorAll('.filterable');
  for (var i = 0; i < items.length; ++i) {
    var t = items[i].textContent.toLowerCase();
    var show = words.every(function (w) { return t.indexOf(w) >= 0; });
    items[i].style.display = show ? '' : 'none';
  }
  var groups = document.querySelectorAll('.filtered-group');
  for (var j = 0; j < groups.length; ++j) {
    var members = groups[j].querySelectorAll('.filterable');
    var any = members.length === 0;
    for (var k = 0; k < members.length; ++k)
      if (members[k].style.display !== 'none') any = true;
    groups[j].style.display = any ? '' : 'none';
    if (words.length > 0 && groups[j].tagName === 'DETAILS') groups[j].open = any;
  }
  var shown = document.querySelectorAll('.filterable:not([style*="none"])').length;
  document.getElementById('tc-filter-count').textContent =
      words.length ? shown + ' of ' + items.length + ' shown' : '';
  if (history.replaceState)
    history.replaceState(null, '', text ? '#filter=' + encodeURIComponent(text) : '#');
}
// A link may carry the filter: report.html#filter=WORDS.
document.addEventListener('DOMContentLoaded', function () {
  var m = /^#filter=(.*)$/.exec(location.hash);
  if (!m) return;
  var box = document.getElementById('tc-filter');
  box.value = decodeURIComponent(m[1]);
  tcFilter(box.value);
});
)";

void htmlHead(std::ostringstream &os, const std::string &title) {
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
     << "<title>" << esc(title) << "</title>\n<style>" << kCss << "</style>\n<script>"
     << kFilterScript << "</script>\n</head>\n<body>\n<h1>" << esc(title) << "</h1>\n";
}

void htmlFilterBox(std::ostringstream &os) {
  os << "<p class=\"filter\"><label for=\"tc-filter\">filter:</label> <input id=\"tc-filter\" "
        "type=\"search\" size=\"40\" placeholder=\"suite, case, backend, status, feature, "
        "reason...\" oninput=\"tcFilter(this.value)\"> <span id=\"tc-filter-count\"></span></p>\n";
}

void htmlHeader(std::ostringstream &os, const Report &r) {
  os << "<table class=\"header\">\n";
  for (const auto &[label, value] : headerFields(r))
    os << "<tr><th>" << esc(label) << "</th><td><code>" << esc(value) << "</code></td></tr>\n";
  os << "</table>\n";
}

void htmlSuites(std::ostringstream &os, const Report &r) {
  os << "<h2>Suites</h2>\n<table class=\"suites\">\n<tr><th>suite</th><th>file</th>"
        "<th>backend</th>";
  for (Status st : kAllStatuses)
    os << "<th>" << statusName(st) << "</th>";
  os << "<th>time</th></tr>\n";
  for (const SuiteRow &row : suiteRows(r)) {
    os << "<tr class=\"filterable\"><td>" << esc(row.suite) << "</td><td><code>" << esc(row.file)
       << "</code></td><td>" << esc(row.backend) << "</td>";
    for (Status st : kAllStatuses) {
      int64_t n = count(row.counts, st);
      bool bad = n && (isFailure(st) || st == Status::XPass);
      os << "<td class=\"num" << (bad ? " bad" : "") << "\">" << n << "</td>";
    }
    os << "<td class=\"num\">" << seconds(row.seconds) << "</td></tr>\n";
  }
  os << "</table>\n";
}

void htmlSkipped(std::ostringstream &os, const Report &r) {
  auto groups = skippedByReason(r);
  size_t n = 0;
  for (const auto &g : groups)
    n += g.second.size();
  os << "<h2>Skipped (" << n << ")</h2>\n";
  if (groups.empty())
    return;
  os << "<table class=\"skipped\">\n<tr><th>reason</th><th>cases</th></tr>\n";
  for (const auto &[reason, recs] : groups) {
    os << "<tr class=\"filtered-group\"><td><details class=\"filtered-group\"><summary>"
       << esc(reason.empty() ? "(no reason given)" : reason) << "</summary>\n<ul>\n";
    for (const CaseRecord *rec : recs)
      os << "<li class=\"filterable\">" << esc(rec->suite + "/" + rec->name) << " ["
         << esc(rec->backend) << "] <span class=\"hidden\">skipped " << esc(reason)
         << "</span></li>\n";
    os << "</ul>\n</details></td><td class=\"num\">" << recs.size() << "</td></tr>\n";
  }
  os << "</table>\n";
}

} // namespace

std::string renderHtml(const Report &r) {
  std::ostringstream os;
  htmlHead(os, "Conformance report");
  os << "<p>" << esc(headline(r)) << "</p>\n";
  htmlHeader(os, r);
  htmlFilterBox(os);
  htmlSuites(os, r);
  std::vector<const CaseRecord *> bad = notPassed(r);
  os << "<h2>Cases that did not pass (" << bad.size() << ")</h2>\n";
  for (const CaseRecord *rec : bad)
    htmlCase(os, *rec);
  htmlSkipped(os, r);
  htmlMatrix(os, r);
  os << "<p>" << esc(summaryLine(countStatuses(r.records))) << "</p>\n</body>\n</html>\n";
  return os.str();
}

// --- diff pages ---------------------------------------------------------------

namespace {

std::string statusOrAbsent(const std::optional<Status> &s) {
  return s ? std::string(statusName(*s)) : std::string("absent");
}

// The record whose failure explains the entry: the new one for a regression,
// the old one for a fix.
const CaseRecord *failingRecord(const DiffEntry &e) {
  if (e.record && e.record->status != Status::Pass && !e.record->source.empty())
    return e.record;
  if (e.oldRecord && e.oldRecord->status != Status::Pass)
    return e.oldRecord;
  return e.record;
}

std::string entryTitle(const DiffEntry &e) {
  return e.suite + "/" + e.name + " [" + e.backend + "]: " + statusOrAbsent(e.before) + " -> " +
         statusOrAbsent(e.after);
}

void mdEntry(std::ostringstream &os, const DiffEntry &e, const char *which) {
  os << "### " << entryTitle(e) << "\n\n";
  const CaseRecord *r = failingRecord(e);
  if (!r) {
    os << "\n";
    return;
  }
  if (r != e.record)
    os << "- " << which << "\n";
  if (!r->variant.empty())
    os << "- variant: `" << r->variant << "`\n";
  if (!r->expect.empty())
    os << "- expectation: " << r->expect << "\n";
  if (r->mismatch)
    os << "- first mismatch: " << mismatchText(*r->mismatch) << "\n";
  const std::string &reproduce = e.record ? e.record->reproduce : r->reproduce;
  if (!reproduce.empty())
    os << "- reproduce: `" << reproduce << "`\n";
  os << "\n";
  if (!r->error.empty())
    os << fence(r->error) << "text\n"
       << r->error << (r->error.back() == '\n' ? "" : "\n") << fence(r->error) << "\n\n";
  if (!r->source.empty())
    os << fence(r->source) << "c\n"
       << r->source << (r->source.back() == '\n' ? "" : "\n") << fence(r->source) << "\n\n";
}

void mdList(std::ostringstream &os, const char *title, const std::vector<DiffEntry> &list) {
  os << "## " << title << " (" << list.size() << ")\n\n";
  if (list.empty())
    os << "None.\n\n";
  for (const DiffEntry &e : list)
    os << "- " << entryTitle(e) << "\n";
  if (!list.empty())
    os << "\n";
}

void htmlEntry(std::ostringstream &os, const DiffEntry &e, const char *which) {
  const CaseRecord *r = failingRecord(e);
  std::string after = statusOrAbsent(e.after);
  os << "<div class=\"case filterable\">\n<h3><span class=\"status st-" << esc(after) << "\">"
     << esc(statusOrAbsent(e.before) + " -> " + after) << "</span> " << esc(e.suite + "/" + e.name)
     << " [" << esc(e.backend) << "]</h3>\n<ul>\n";
  if (r && r != e.record)
    os << "<li>" << esc(which) << "</li>\n";
  if (r && !r->variant.empty())
    os << "<li>variant: <code>" << esc(r->variant) << "</code></li>\n";
  if (r && !r->expect.empty())
    os << "<li>expectation: " << esc(r->expect) << "</li>\n";
  if (r && r->mismatch)
    os << "<li>first mismatch: " << esc(mismatchText(*r->mismatch)) << "</li>\n";
  const CaseRecord *rep = e.record ? e.record : r;
  if (rep && !rep->reproduce.empty())
    os << "<li>reproduce: <code>" << esc(rep->reproduce) << "</code></li>\n";
  os << "</ul>\n";
  if (r && !r->error.empty())
    os << "<pre>" << esc(r->error) << "</pre>\n";
  if (r && !r->source.empty())
    os << "<details open><summary>kernel source</summary><pre>" << esc(r->source)
       << "</pre></details>\n";
  os << "</div>\n";
}

void htmlList(std::ostringstream &os, const char *title, const std::vector<DiffEntry> &list) {
  os << "<h2>" << title << " (" << list.size() << ")</h2>\n";
  if (list.empty()) {
    os << "<p>None.</p>\n";
    return;
  }
  os << "<ul>\n";
  for (const DiffEntry &e : list)
    os << "<li class=\"filterable\">" << esc(entryTitle(e)) << "</li>\n";
  os << "</ul>\n";
}

// The two reports side by side: one column per backend and report.
Report sideBySide(const Report &before, const Report &after) {
  Report both;
  for (const auto &[tag, rep] : {std::pair<const char *, const Report *>{"old", &before},
                                 std::pair<const char *, const Report *>{"new", &after}})
    for (const std::string &b : allBackends(*rep)) {
      std::string name = b + " (" + tag + ")";
      both.backends.push_back(name);
      for (const CaseRecord &rec : rep->records)
        if (rec.backend == b) {
          CaseRecord copy;
          copy.features = rec.features;
          copy.status = rec.status;
          copy.backend = name;
          both.records.push_back(std::move(copy));
        }
    }
  return both;
}

std::string diffSummary(const ReportDiff &d) {
  return std::to_string(d.regressions.size()) + " regressions, " + std::to_string(d.fixes.size()) +
         " fixes, " + std::to_string(d.flips.size()) + " other status changes, " +
         std::to_string(d.added.size()) + " cases added, " + std::to_string(d.removed.size()) +
         " removed";
}

} // namespace

std::string renderDiffMarkdown(const ReportDiff &d, const Report &before, const Report &after,
                               const std::string &title) {
  std::ostringstream os;
  os << "# Conformance diff: " << title << "\n\n" << diffSummary(d) << "\n\n";
  os << "- old: " << summaryLine(countStatuses(before.records)) << "\n";
  os << "- new: " << summaryLine(countStatuses(after.records)) << "\n\n";
  os << "## Regressions (" << d.regressions.size() << ")\n\n";
  if (d.regressions.empty())
    os << "None.\n\n";
  for (const DiffEntry &e : d.regressions)
    mdEntry(os, e, "");
  os << "## Fixes (" << d.fixes.size() << ")\n\n";
  if (d.fixes.empty())
    os << "None.\n\n";
  for (const DiffEntry &e : d.fixes)
    mdEntry(os, e, "how it failed before:");
  mdList(os, "Other status changes", d.flips);
  mdList(os, "Added", d.added);
  mdList(os, "Removed", d.removed);
  for (const auto &[tag, rep] : {std::pair<const char *, const Report *>{"Old", &before},
                                 std::pair<const char *, const Report *>{"New", &after}}) {
    os << "## " << tag << " report\n\n" << headline(*rep) << "\n\n";
    mdHeader(os, *rep);
  }
  os << "## Features (old and new)\n\n";
  mdMatrix(os, sideBySide(before, after));
  return os.str();
}

std::string renderDiffHtml(const ReportDiff &d, const Report &before, const Report &after,
                           const std::string &title) {
  std::ostringstream os;
  htmlHead(os, "Conformance diff: " + title);
  os << "<p>" << esc(diffSummary(d))
     << "</p>\n<ul>\n<li>old: " << esc(summaryLine(countStatuses(before.records)))
     << "</li>\n<li>new: " << esc(summaryLine(countStatuses(after.records))) << "</li>\n</ul>\n";
  htmlFilterBox(os);
  os << "<h2>Regressions (" << d.regressions.size() << ")</h2>\n";
  if (d.regressions.empty())
    os << "<p>None.</p>\n";
  for (const DiffEntry &e : d.regressions)
    htmlEntry(os, e, "");
  os << "<h2>Fixes (" << d.fixes.size() << ")</h2>\n";
  if (d.fixes.empty())
    os << "<p>None.</p>\n";
  for (const DiffEntry &e : d.fixes)
    htmlEntry(os, e, "how it failed before:");
  htmlList(os, "Other status changes", d.flips);
  htmlList(os, "Added", d.added);
  htmlList(os, "Removed", d.removed);
  for (const auto &[tag, rep] : {std::pair<const char *, const Report *>{"Old", &before},
                                 std::pair<const char *, const Report *>{"New", &after}}) {
    os << "<h2>" << tag << " report</h2>\n<p>" << esc(headline(*rep)) << "</p>\n";
    htmlHeader(os, *rep);
  }
  htmlMatrix(os, sideBySide(before, after));
  os << "</body>\n</html>\n";
  return os.str();
}

} // namespace tc::conf
