//===- Report.h - Conformance reports: JSON, Markdown, HTML, diff --------===//
//
// A report is the list of records of one or more runs (one record per case
// and backend). It is written as JSON (the machine form, read back by `diff`
// and `report`), as Markdown and as one self-contained HTML page (inline CSS,
// no external assets): a feature x backend matrix with pass counts and
// coverage, then every case that did not pass with its first mismatch, its
// error, the kernel source and a command that reproduces it.
//
// JSON form:
//   {"format": "triton-conformance-report/1",
//    "backends": ["interp"], "inputs": ["conformance/cases"], "seconds": 1.5,
//    "command": "triton-conformance run ...", "version": "0.1.0 (abc1234)",
//    "date": "2026-11-26T22:00:00Z", "host": "...", "device": "...",
//    "summary": {"pass": 10, "fail": 1, "error": 0, "crash": 0, "timeout": 0,
//                "skipped": 2, "xfail": 0, "xpass": 0},
//    "results": [{"suite", "name", "file", "features", "backend", "status",
//                 "time", "variant", "variants", "expect",
//                 "mismatch": {"output", "index", "got", "want", "count"} | null,
//                 "error", "reason", "actual" (xfail only), "source", "reproduce"}]}
//
//===----------------------------------------------------------------------===//
#pragma once

#include "conformance/Runner.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace tc::conf {

inline constexpr std::string_view kReportFormat = "triton-conformance-report/1";

struct Report {
  std::vector<std::string> backends;
  std::vector<std::string> inputs; // the paths given to `run`
  double seconds = 0;              // wall time of the run
  // Where the report comes from (the page's header; "" when not known).
  std::string command; // the command line of the run
  std::string version; // the tool's version and commit
  std::string date;    // when the run started (UTC, ISO 8601)
  std::string host;    // the machine: host name, CPU, OS
  std::string device;  // what ran the cases: the interpreter, the GPU's name
  /// run --rtol/--atol: the tolerance of float outputs without their own
  /// `compare` ("" : each dtype's default, conformance/Compare.h)
  std::string tolerance;
  std::vector<CaseRecord> records;
};

using StatusCounts = std::array<int64_t, kNumStatuses>;
StatusCounts countStatuses(const std::vector<CaseRecord> &records);

/// "12 passed, 1 failed, 0 error, 0 crash, 0 timeout, 2 skipped, 0 xfail, 0 xpass"
/// (the form CI log parsers recognise; always every status, in this order).
std::string summaryLine(const StatusCounts &counts);

/// Whether a run with these records succeeds: no fail, error, crash, timeout or xpass.
bool runSucceeded(const StatusCounts &counts);

/// One record as compact JSON text, and back (the worker protocol).
std::string recordToJsonText(const CaseRecord &r);
std::optional<CaseRecord> recordFromJsonText(const std::string &text, std::string &error);

/// The whole report as JSON text (pretty-printed, 2 spaces), and back.
std::string reportToJson(const Report &r);
std::optional<Report> reportFromJson(const std::string &text, const std::string &file,
                                     std::string &error);
/// Reads a report file.
std::optional<Report> readReport(const std::string &path, std::string &error);

/// The Markdown rendering.
std::string renderMarkdown(const Report &r);
/// The self-contained HTML page.
std::string renderHtml(const Report &r);

/// Per-feature counts for the matrix: features in name order, then "(all)".
struct FeatureRow {
  std::string feature;
  std::vector<StatusCounts> perBackend; // parallel to Report::backends
};
std::vector<FeatureRow> featureMatrix(const Report &r);

/// The difference between two reports, matched by (suite, case, backend).
struct DiffEntry {
  std::string suite, name, backend;
  std::optional<Status> before, after;   // nullopt: absent in that report
  const CaseRecord *record = nullptr;    // into the reports given to diffReports: the new
                                         // record (the old one when removed)
  const CaseRecord *oldRecord = nullptr; // the old record (null when added)
};
struct ReportDiff {
  std::vector<DiffEntry> regressions; // now failing, was passing, skipped or absent
  std::vector<DiffEntry> fixes;       // was failing, now passing
  std::vector<DiffEntry> flips;       // any other change of status
  std::vector<DiffEntry> added, removed;
};
/// For the comparison an xfail counts as its actual status and an xpass as a pass.
ReportDiff diffReports(const Report &before, const Report &after);
/// The diff for people; ends with the two summary lines.
std::string renderDiff(const ReportDiff &d, const Report &before, const Report &after);
/// The diff as one page a reviewer reads first: the regressions and the fixes
/// (each with its first mismatch, error, kernel source and reproduce command),
/// the other changes, then the feature table of both reports. `title` names
/// the two reports ("OLD -> NEW").
std::string renderDiffMarkdown(const ReportDiff &d, const Report &before, const Report &after,
                               const std::string &title);
std::string renderDiffHtml(const ReportDiff &d, const Report &before, const Report &after,
                           const std::string &title);

} // namespace tc::conf
