// Reports as JSON (write and read), the summary line, and the diff of two
// reports. Markdown and HTML: ReportRender.cpp.
#include "conformance/Report.h"
#include "support/FileIO.h"

#include "conformance/Json.h"

#include <cctype>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

namespace tc::conf {

namespace {

Json recordJson(const CaseRecord &r) {
  Json j = Json::object();
  j["suite"] = r.suite;
  j["name"] = r.name;
  j["file"] = r.file;
  j["features"] = r.features;
  j["backend"] = r.backend;
  j["status"] = std::string(statusName(r.status));
  j["time"] = r.time;
  j["variant"] = r.variant;
  j["variants"] = r.variants;
  j["expect"] = r.expect;
  if (r.mismatch) {
    const Mismatch &m = *r.mismatch;
    j["mismatch"] = {{"output", m.output},
                     {"index", m.index},
                     {"got", m.got},
                     {"want", m.want},
                     {"count", m.count}};
  } else {
    j["mismatch"] = nullptr;
  }
  j["error"] = r.error;
  j["reason"] = r.reason;
  if (r.actual)
    j["actual"] = std::string(statusName(*r.actual));
  j["source"] = r.source;
  j["reproduce"] = r.reproduce;
  return j;
}

// Field readers for reports (written by us, so the checks are light).
std::string str(const Json &j, const char *key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

double real(const Json &j, const char *key) {
  auto it = j.find(key);
  return it == j.end() ? 0 : numberValue(*it).value_or(0);
}

std::optional<CaseRecord> recordFrom(const Json &j, const std::string &where, std::string &error) {
  if (!j.is_object()) {
    error = where + ": expected a record object";
    return std::nullopt;
  }
  CaseRecord r;
  r.suite = str(j, "suite");
  r.name = str(j, "name");
  r.file = str(j, "file");
  r.backend = str(j, "backend");
  std::optional<Status> st = parseStatus(str(j, "status"));
  if (!st) {
    error = where + ".status: unknown status '" + str(j, "status") + "'";
    return std::nullopt;
  }
  r.status = *st;
  if (auto f = j.find("features"); f != j.end() && f->is_array())
    for (const Json &e : *f)
      if (e.is_string())
        r.features.push_back(e.get<std::string>());
  r.time = real(j, "time");
  r.variant = str(j, "variant");
  r.variants = static_cast<int>(real(j, "variants"));
  r.expect = str(j, "expect");
  if (auto m = j.find("mismatch"); m != j.end() && m->is_object()) {
    Mismatch mm;
    mm.output = str(*m, "output");
    mm.index = static_cast<int64_t>(real(*m, "index"));
    mm.got = str(*m, "got");
    mm.want = str(*m, "want");
    mm.count = static_cast<int64_t>(real(*m, "count"));
    r.mismatch = mm;
  }
  r.error = str(j, "error");
  r.reason = str(j, "reason");
  if (std::optional<Status> a = parseStatus(str(j, "actual")))
    r.actual = a;
  r.source = str(j, "source");
  r.reproduce = str(j, "reproduce");
  return r;
}

Json summaryJson(const StatusCounts &c) {
  Json j = Json::object();
  for (Status s : kAllStatuses)
    j[std::string(statusName(s))] = c[static_cast<int>(s)];
  return j;
}

// For diffs: an xfail is its actual status, an xpass a pass.
Status effective(const CaseRecord &r) {
  if (r.status == Status::XFail)
    return r.actual.value_or(Status::Fail);
  if (r.status == Status::XPass)
    return Status::Pass;
  return r.status;
}

using Key = std::tuple<std::string, std::string, std::string>;
Key keyOf(const CaseRecord &r) {
  return {r.suite, r.name, r.backend};
}

std::string entryLine(const DiffEntry &e) {
  auto name = [](const std::optional<Status> &s) {
    return s ? std::string(statusName(*s)) : std::string("absent");
  };
  std::string line = "  " + e.suite + "/" + e.name + " [" + e.backend + "]: " + name(e.before) +
                     " -> " + name(e.after);
  if (e.record && e.after && isFailure(*e.after)) {
    const CaseRecord &r = *e.record;
    if (!r.variant.empty())
      line += " (" + r.variant + ")";
    std::string first = r.error.substr(0, r.error.find('\n'));
    if (!first.empty())
      line += ": " + first;
    if (r.mismatch && r.mismatch->index >= 0)
      line += "; got " + r.mismatch->got + ", want " + r.mismatch->want;
  }
  return line + "\n";
}

void section(std::ostringstream &os, const char *title, const std::vector<DiffEntry> &list) {
  if (list.empty())
    return;
  os << title << " (" << list.size() << "):\n";
  for (const DiffEntry &e : list)
    os << entryLine(e);
}

} // namespace

StatusCounts countStatuses(const std::vector<CaseRecord> &records) {
  StatusCounts c{};
  for (const CaseRecord &r : records)
    ++c[static_cast<int>(r.status)];
  return c;
}

std::string summaryLine(const StatusCounts &c) {
  auto n = [&](Status s) { return std::to_string(c[static_cast<int>(s)]); };
  return n(Status::Pass) + " passed, " + n(Status::Fail) + " failed, " + n(Status::Error) +
         " error, " + n(Status::Crash) + " crash, " + n(Status::Timeout) + " timeout, " +
         n(Status::Skipped) + " skipped, " + n(Status::XFail) + " xfail, " + n(Status::XPass) +
         " xpass";
}

bool runSucceeded(const StatusCounts &c) {
  for (Status s : {Status::Fail, Status::Error, Status::Crash, Status::Timeout, Status::XPass})
    if (c[static_cast<int>(s)] != 0)
      return false;
  return true;
}

std::string recordToJsonText(const CaseRecord &r) {
  return recordJson(r).dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::optional<CaseRecord> recordFromJsonText(const std::string &text, std::string &error) {
  std::optional<Json> j = parseJson(text, error);
  if (!j)
    return std::nullopt;
  return recordFrom(*j, "record", error);
}

std::string reportToJson(const Report &r) {
  Json j = Json::object();
  j["format"] = std::string(kReportFormat);
  j["backends"] = r.backends;
  j["inputs"] = r.inputs;
  j["seconds"] = r.seconds;
  j["command"] = r.command;
  j["version"] = r.version;
  j["date"] = r.date;
  j["host"] = r.host;
  j["device"] = r.device;
  if (!r.tolerance.empty())
    j["tolerance"] = r.tolerance;
  j["summary"] = summaryJson(countStatuses(r.records));
  Json results = Json::array();
  for (const CaseRecord &rec : r.records)
    results.push_back(recordJson(rec));
  j["results"] = std::move(results);
  return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::optional<Report> reportFromJson(const std::string &text, const std::string &file,
                                     std::string &error) {
  std::string perr;
  std::optional<Json> j = parseJson(text, perr);
  if (!j) {
    // "FILE:LINE:COL: ..." when parseJson knows the position, else "FILE: ...".
    bool hasLine = !perr.empty() && std::isdigit(static_cast<unsigned char>(perr[0]));
    error = file + (hasLine ? ":" : ": ") + perr;
    return std::nullopt;
  }
  if (!j->is_object() || str(*j, "format") != kReportFormat) {
    error = file + ": not a conformance report (format '" + std::string(kReportFormat) + "')";
    return std::nullopt;
  }
  Report r;
  for (const char *key : {"backends", "inputs"})
    if (auto it = j->find(key); it != j->end() && it->is_array())
      for (const Json &e : *it)
        if (e.is_string())
          (std::string(key) == "backends" ? r.backends : r.inputs).push_back(e.get<std::string>());
  r.seconds = real(*j, "seconds");
  r.command = str(*j, "command");
  r.version = str(*j, "version");
  r.date = str(*j, "date");
  r.host = str(*j, "host");
  r.device = str(*j, "device");
  r.tolerance = str(*j, "tolerance");
  auto res = j->find("results");
  if (res == j->end() || !res->is_array()) {
    error = file + ": results: missing list of records";
    return std::nullopt;
  }
  for (size_t i = 0; i < res->size(); ++i) {
    std::optional<CaseRecord> rec =
        recordFrom((*res)[i], file + ": results[" + std::to_string(i) + "]", error);
    if (!rec)
      return std::nullopt;
    r.records.push_back(std::move(*rec));
  }
  return r;
}

std::optional<Report> readReport(const std::string &path, std::string &error) {
  std::string text;
  if (std::string why; !readFileCapped(path, kMaxJsonFileBytes, text, why)) {
    error = path + ": cannot read the file: " + why;
    return std::nullopt;
  }
  return reportFromJson(text, path, error);
}

ReportDiff diffReports(const Report &before, const Report &after) {
  std::map<Key, const CaseRecord *> old;
  for (const CaseRecord &r : before.records)
    old.emplace(keyOf(r), &r);
  ReportDiff d;
  std::map<Key, bool> seen;
  for (const CaseRecord &r : after.records) {
    Key k = keyOf(r);
    seen[k] = true;
    auto it = old.find(k);
    DiffEntry e{r.suite, r.name, r.backend, std::nullopt, r.status, &r};
    if (it == old.end()) {
      d.added.push_back(e);
      if (isFailure(effective(r)))
        d.regressions.push_back(e);
      continue;
    }
    const CaseRecord &o = *it->second;
    e.before = o.status;
    e.oldRecord = &o;
    Status was = effective(o), now = effective(r);
    if (isFailure(now) && !isFailure(was))
      d.regressions.push_back(e);
    else if (isFailure(was) && now == Status::Pass)
      d.fixes.push_back(e);
    else if (o.status != r.status)
      d.flips.push_back(e);
  }
  for (const CaseRecord &o : before.records)
    if (!seen.count(keyOf(o)))
      d.removed.push_back({o.suite, o.name, o.backend, o.status, std::nullopt, &o, &o});
  return d;
}

std::string renderDiff(const ReportDiff &d, const Report &before, const Report &after) {
  std::ostringstream os;
  section(os, "regressions", d.regressions);
  section(os, "fixes", d.fixes);
  section(os, "other status changes", d.flips);
  os << d.added.size() << " cases added, " << d.removed.size() << " removed\n";
  if (!d.removed.empty())
    section(os, "removed", d.removed);
  os << "old: " << summaryLine(countStatuses(before.records)) << "\n";
  os << "new: " << summaryLine(countStatuses(after.records)) << "\n";
  os << d.regressions.size() << " regressions, " << d.fixes.size() << " fixes\n";
  return os.str();
}

} // namespace tc::conf
