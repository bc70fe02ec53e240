// Reports: the summary line, JSON round trips, the feature matrix, the
// Markdown and HTML renderings, and the diff of two reports.
#include "conformance/Report.h"

#include <gtest/gtest.h>

using namespace tc;
using namespace tc::conf;

namespace {

CaseRecord rec(const std::string &name, Status s, const std::string &backend = "interp",
               std::vector<std::string> features = {}) {
  CaseRecord r;
  r.suite = "s";
  r.name = name;
  r.file = "s.json";
  r.backend = backend;
  r.status = s;
  r.features = std::move(features);
  return r;
}

Report reportOf(std::vector<CaseRecord> records) {
  Report r;
  r.backends = {"interp"};
  r.records = std::move(records);
  return r;
}

std::string names(const std::vector<DiffEntry> &list) {
  std::string out;
  for (const DiffEntry &e : list)
    out += (out.empty() ? "" : " ") + e.name;
  return out;
}

} // namespace

TEST(ConformanceReport, SummaryLine) {
  StatusCounts c =
      countStatuses({rec("a", Status::Pass), rec("b", Status::Pass), rec("c", Status::Fail),
                     rec("d", Status::Skipped), rec("e", Status::XFail)});
  EXPECT_EQ(summaryLine(c),
            "2 passed, 1 failed, 0 error, 0 crash, 0 timeout, 1 skipped, 1 xfail, 0 xpass");
  EXPECT_FALSE(runSucceeded(c));
  EXPECT_TRUE(runSucceeded(
      countStatuses({rec("a", Status::Pass), rec("b", Status::XFail), rec("c", Status::Skipped)})));
  for (Status bad : {Status::Fail, Status::Error, Status::Crash, Status::Timeout, Status::XPass})
    EXPECT_FALSE(runSucceeded(countStatuses({rec("a", bad)})));
}

TEST(ConformanceReport, RecordJsonRoundTrip) {
  CaseRecord r = rec("c\"quoted\"", Status::XFail, "gpu", {"op.add", "dtype.int8"});
  r.time = 0.125;
  r.variant = "TM=32 TN=64";
  r.variants = 4;
  r.expect = "outputs";
  r.mismatch = Mismatch{"Z", 17, "1.5 (0x3fc00000)", "2 (0x40000000)", 3};
  r.error = "line 1\nline 2";
  r.reason = "issue 7";
  r.actual = Status::Crash;
  r.source = "__global__ void k() {}\n";
  r.reproduce = "triton-interp --launch s.json --case c";
  std::string err;
  std::optional<CaseRecord> back = recordFromJsonText(recordToJsonText(r), err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(back->suite, r.suite);
  EXPECT_EQ(back->name, r.name);
  EXPECT_EQ(back->file, r.file);
  EXPECT_EQ(back->features, r.features);
  EXPECT_EQ(back->backend, "gpu");
  EXPECT_EQ(back->status, Status::XFail);
  EXPECT_EQ(back->time, 0.125);
  EXPECT_EQ(back->variant, r.variant);
  EXPECT_EQ(back->variants, 4);
  EXPECT_EQ(back->expect, "outputs");
  ASSERT_TRUE(back->mismatch);
  EXPECT_EQ(back->mismatch->output, "Z");
  EXPECT_EQ(back->mismatch->index, 17);
  EXPECT_EQ(back->mismatch->got, "1.5 (0x3fc00000)");
  EXPECT_EQ(back->mismatch->want, "2 (0x40000000)");
  EXPECT_EQ(back->mismatch->count, 3);
  EXPECT_EQ(back->error, r.error);
  EXPECT_EQ(back->reason, "issue 7");
  EXPECT_EQ(back->actual, Status::Crash);
  EXPECT_EQ(back->source, r.source);
  EXPECT_EQ(back->reproduce, r.reproduce);
  EXPECT_FALSE(recordFromJsonText(R"({"status": "passed"})", err));
  EXPECT_EQ(err, "record.status: unknown status 'passed'");
}

TEST(ConformanceReport, ReportJsonRoundTripAndFormat) {
  Report r = reportOf({rec("a", Status::Pass), rec("b", Status::Fail)});
  r.inputs = {"cases"};
  r.seconds = 1.5;
  std::string text = reportToJson(r);
  EXPECT_NE(text.find(R"("format": "triton-conformance-report/1")"), std::string::npos);
  EXPECT_NE(text.find(R"("fail": 1)"), std::string::npos);
  EXPECT_NE(text.find(R"("mismatch": null)"), std::string::npos);
  std::string err;
  std::optional<Report> back = reportFromJson(text, "r.json", err);
  ASSERT_TRUE(back) << err;
  EXPECT_EQ(back->backends, r.backends);
  EXPECT_EQ(back->inputs, r.inputs);
  EXPECT_EQ(back->seconds, 1.5);
  ASSERT_EQ(back->records.size(), 2u);
  EXPECT_EQ(back->records[1].status, Status::Fail);
  EXPECT_FALSE(reportFromJson(R"({"format": "x"})", "r.json", err));
  EXPECT_EQ(err, "r.json: not a conformance report (format 'triton-conformance-report/1')");
  EXPECT_FALSE(reportFromJson("{", "r.json", err));
  EXPECT_EQ(err.rfind("r.json:1:2: malformed JSON", 0), 0u) << err;
  EXPECT_FALSE(reportFromJson(R"({"format": "triton-conformance-report/1"})", "r.json", err));
  EXPECT_EQ(err, "r.json: results: missing list of records");
}

TEST(ConformanceReport, FeatureMatrix) {
  Report r;
  r.backends = {"interp", "gpu"};
  r.records = {rec("a", Status::Pass, "interp", {"op.add", "dtype.int8"}),
               rec("b", Status::Fail, "interp", {"op.add"}),
               rec("a", Status::Skipped, "gpu", {"op.add", "dtype.int8"}),
               rec("b", Status::Pass, "gpu", {"op.add"}), rec("c", Status::Pass, "interp")};
  std::vector<FeatureRow> m = featureMatrix(r);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].feature, "(no feature)");
  EXPECT_EQ(m[1].feature, "dtype.int8");
  EXPECT_EQ(m[2].feature, "op.add");
  EXPECT_EQ(m[3].feature, "(all)");
  auto n = [](const StatusCounts &c, Status s) { return c[static_cast<int>(s)]; };
  EXPECT_EQ(n(m[2].perBackend[0], Status::Pass), 1);
  EXPECT_EQ(n(m[2].perBackend[0], Status::Fail), 1);
  EXPECT_EQ(n(m[2].perBackend[1], Status::Pass), 1);
  EXPECT_EQ(n(m[2].perBackend[1], Status::Skipped), 1);
  EXPECT_EQ(n(m[3].perBackend[0], Status::Pass), 2);
  std::string md = renderMarkdown(r);
  EXPECT_NE(md.find("| `op.add` | 1/2 pass (50%), 100% run; 1 fail | 1/2 pass (50%), 50% run |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| `dtype.int8` | 1/1 pass (100%), 100% run | 0/1 pass (0%), 0% run |"),
            std::string::npos)
      << md;
}

TEST(ConformanceReport, RenderingsListEveryCaseThatDidNotPass) {
  CaseRecord bad = rec("bad<1>", Status::Fail, "interp", {"op.add"});
  bad.mismatch = Mismatch{"Z", 3, "5", "4", 1};
  bad.source = "// ``` a fence inside\n__global__ void k(int *Z) { *Z = 1 < 2; }\n";
  bad.error = "output 'Z' differs";
  bad.reproduce = "triton-interp --launch s.json --case 'bad<1>'";
  Report r = reportOf({rec("good", Status::Pass), bad, rec("skip", Status::Skipped)});
  std::string md = renderMarkdown(r);
  EXPECT_NE(md.find("## Cases that did not pass (1)"), std::string::npos);
  EXPECT_NE(md.find("## Skipped (1)"), std::string::npos);
  EXPECT_NE(md.find("### s/bad<1> [interp]: fail"), std::string::npos);
  EXPECT_NE(md.find("- first mismatch: output 'Z' at index 3: got 5, want 4 (1 element differs)"),
            std::string::npos);
  EXPECT_NE(md.find("````c\n// ``` a fence inside"), std::string::npos); // a longer fence
  EXPECT_LT(md.find("s/bad<1>"), md.find("s/skip"));                     // skipped ones last
  EXPECT_EQ(md.substr(md.rfind('\n', md.size() - 2) + 1),
            "1 passed, 1 failed, 0 error, 0 crash, 0 timeout, 1 skipped, 0 xfail, 0 xpass\n");
  std::string html = renderHtml(r);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<style>"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos); // no external assets
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_NE(html.find("s/bad&lt;1&gt;"), std::string::npos);
  EXPECT_NE(html.find("*Z = 1 &lt; 2;"), std::string::npos);
  EXPECT_NE(html.find("--case &#39;bad&lt;1&gt;&#39;"), std::string::npos);
  EXPECT_EQ(html.find("bad<1>"), std::string::npos);
}

// Skipped records: one row per reason with its count, reasons in order of
// first appearance, each case listed once under its reason.
TEST(ConformanceReport, SkippedCasesAreGroupedByReason) {
  std::vector<CaseRecord> recs;
  for (const char *name : {"a", "b", "c", "d", "e"}) {
    CaseRecord r = rec(name, Status::Skipped, "gpu");
    r.reason = std::string(name) < "d" ? "no CUDA device" : "the case runs on interp only";
    recs.push_back(r);
  }
  Report r = reportOf(recs);
  std::string md = renderMarkdown(r);
  EXPECT_NE(md.find("| no CUDA device | 3 |\n| the case runs on interp only | 2 |\n"),
            std::string::npos)
      << md;
  EXPECT_EQ(md.find("### s/a"), std::string::npos); // not one section per skipped case
  std::string html = renderHtml(r);
  EXPECT_EQ(html.find("<summary>no CUDA device</summary>"),
            html.rfind("<summary>no CUDA device</summary>")); // one group per reason
  EXPECT_LT(html.find("s/c [gpu]"), html.find("<summary>the case runs on interp only"));
  EXPECT_GT(html.find("s/e [gpu]"), html.find("<summary>the case runs on interp only"));
}

// The suite table: one row per suite file and backend, counts by status and the
// sum of the cases' times.
TEST(ConformanceReport, SuiteTableCountsAndTimes) {
  CaseRecord a = rec("a", Status::Pass), b = rec("b", Status::Fail), c = rec("c", Status::Pass);
  a.time = 0.25;
  b.time = 1.5;
  c.suite = "t";
  c.file = "t.json";
  c.time = 2;
  Report r = reportOf({a, b, c});
  r.command = "triton-conformance run x";
  r.version = "0.1.0 (abc)";
  std::string md = renderMarkdown(r);
  EXPECT_NE(md.find("| s | s.json | interp | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 1.75 s |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| t | t.json | interp | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 2.00 s |"),
            std::string::npos);
  EXPECT_NE(md.find("- command: `triton-conformance run x`"), std::string::npos);
  EXPECT_NE(md.find("- version: `0.1.0 (abc)`"), std::string::npos);
  // The header survives the JSON round trip.
  std::string error;
  std::optional<Report> back = reportFromJson(reportToJson(r), "r.json", error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->command, r.command);
  EXPECT_EQ(back->version, r.version);
}

// The diff page: regressions (the new record's failure) and fixes (the old
// record's failure) come before the feature table.
TEST(ConformanceReport, DiffPagesPutRegressionsAndFixesFirst) {
  CaseRecord wasBad = rec("fixed", Status::Fail, "interp", {"op.add"});
  wasBad.mismatch = Mismatch{"Z", 1, "3", "2", 1};
  wasBad.source = "__global__ void fixed_kernel(int *Z) {}\n";
  CaseRecord nowBad = rec("broken", Status::Fail, "interp", {"op.add"});
  nowBad.mismatch = Mismatch{"Y", 7, "9", "8", 2};
  nowBad.source = "__global__ void broken_kernel(int *Y) {}\n";
  nowBad.reproduce = "triton-interp --launch s.json --case broken";
  Report before = reportOf({wasBad, rec("broken", Status::Pass, "interp", {"op.add"})});
  Report after = reportOf({rec("fixed", Status::Pass, "interp", {"op.add"}), nowBad});
  ReportDiff d = diffReports(before, after);
  for (const std::string &page : {renderDiffMarkdown(d, before, after, "a -> b"),
                                  renderDiffHtml(d, before, after, "a -> b")}) {
    size_t regression = page.find("broken_kernel"), fix = page.find("fixed_kernel");
    size_t features = page.find("op.add");
    ASSERT_NE(regression, std::string::npos) << page;
    ASSERT_NE(fix, std::string::npos) << page;
    EXPECT_LT(regression, fix);
    EXPECT_LT(fix, features);
    EXPECT_NE(page.find("at index 7: got 9, want 8"), std::string::npos);
    EXPECT_NE(page.find("at index 1: got 3, want 2"), std::string::npos);
    EXPECT_NE(page.find("triton-interp --launch s.json --case broken"), std::string::npos);
  }
}

TEST(ConformanceReport, Diff) {
  CaseRecord knownPass = rec("known_fail_then_xpass", Status::XFail);
  knownPass.actual = Status::Fail;
  CaseRecord hidden = rec("pass_then_hidden", Status::XFail);
  hidden.actual = Status::Crash;
  CaseRecord stillKnown = rec("xfail_then_fail", Status::XFail);
  stillKnown.actual = Status::Fail;
  Report before =
      reportOf({rec("pass_then_fail", Status::Pass), rec("fail_then_pass", Status::Fail),
                rec("pass_then_skipped", Status::Pass), rec("fail_then_crash", Status::Fail),
                rec("skipped_then_error", Status::Skipped), rec("same_fail", Status::Fail),
                rec("removed", Status::Pass), knownPass, rec("pass_then_hidden", Status::Pass),
                stillKnown, rec("pass", Status::Pass, "gpu")});
  CaseRecord newFail = rec("added_failing", Status::Timeout);
  Report after = reportOf(
      {rec("pass_then_fail", Status::Fail), rec("fail_then_pass", Status::Pass),
       rec("pass_then_skipped", Status::Skipped), rec("fail_then_crash", Status::Crash),
       rec("skipped_then_error", Status::Error), rec("same_fail", Status::Fail),
       rec("known_fail_then_xpass", Status::XPass), hidden, rec("xfail_then_fail", Status::Fail),
       rec("pass", Status::Fail, "interp"), newFail, rec("added_passing", Status::Pass)});
  ReportDiff d = diffReports(before, after);
  EXPECT_EQ(names(d.regressions),
            "pass_then_fail skipped_then_error pass_then_hidden pass added_failing");
  EXPECT_EQ(names(d.fixes), "fail_then_pass known_fail_then_xpass");
  EXPECT_EQ(names(d.flips), "pass_then_skipped fail_then_crash xfail_then_fail");
  EXPECT_EQ(names(d.added), "pass added_failing added_passing"); // "pass" is new on interp
  EXPECT_EQ(names(d.removed), "removed pass");                   // and gone on gpu
  std::string text = renderDiff(d, before, after);
  EXPECT_NE(text.find("regressions (5):\n  s/pass_then_fail [interp]: pass -> fail\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  s/added_failing [interp]: absent -> timeout\n"), std::string::npos);
  EXPECT_NE(text.find("fixes (2):\n  s/fail_then_pass [interp]: fail -> pass\n"),
            std::string::npos);
  EXPECT_NE(text.find("3 cases added, 2 removed\n"), std::string::npos);
  EXPECT_NE(text.find("5 regressions, 2 fixes\n"), std::string::npos);
  ReportDiff none = diffReports(before, before);
  EXPECT_TRUE(none.regressions.empty());
  EXPECT_TRUE(none.fixes.empty());
  EXPECT_TRUE(none.flips.empty());
}

TEST(ConformanceReport, DiffShowsTheFirstMismatchOfARegression) {
  CaseRecord now = rec("c", Status::Fail);
  now.variant = "TM=64";
  now.error = "output 'Z' differs at index 3 (1 of 8 elements; compare exact)\nmore";
  now.mismatch = Mismatch{"Z", 3, "5", "4", 1};
  Report before = reportOf({rec("c", Status::Pass)}), after = reportOf({now});
  ReportDiff d = diffReports(before, after);
  std::string text = renderDiff(d, reportOf({}), reportOf({}));
  EXPECT_EQ(text.rfind("regressions (1):\n  s/c [interp]: pass -> fail (TM=64): output 'Z' differs "
                       "at index 3 (1 of 8 elements; compare exact); got 5, want 4\n",
                       0),
            0u)
      << text;
}
