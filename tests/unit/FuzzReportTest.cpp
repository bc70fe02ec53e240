// Campaign summaries (fuzz/Report.h): the JSON form round-trips and rejects
// bad input with a one-line error, known signatures come from suite files and
// a list file, merging adds up (figures worked out by hand below), and the
// reports put new signatures before known ones, escape HTML and list features.
#include "fuzz/Report.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace tc::fuzz;
namespace fs = std::filesystem;

namespace {

Finding finding(const std::string &sig, const std::string &property, int64_t index,
                const std::string &caseFile) {
  Finding f;
  f.signature = sig;
  f.property = property;
  f.campaignSeed = 7;
  f.index = index;
  f.message = "out[" + std::to_string(index) + "] differs";
  f.caseFile = caseFile;
  f.reproduce = "triton-fuzz --cpu-only --seed 7 --replay " + std::to_string(index) + " --print";
  f.features = {"dot", "reduce"};
  return f;
}

// Shard 0 of 2 (the figures of the merge test are worked out from these two).
CampaignSummary shard0() {
  CampaignSummary s;
  s.name = "shard0";
  s.seed = 7;
  s.shardIndex = 0;
  s.shardCount = 2;
  s.mode = "cpu-only";
  s.started = "2026-11-21T08:00:00Z";
  s.finished = "2026-11-21T09:00:00Z";
  s.elapsedSeconds = 100;
  s.generationSeconds = 5;
  s.kernels = 1000;
  s.passed = 990;
  s.discards = 6;
  s.failures = 3;
  s.generatorBugs = 1;
  s.workerRestarts = 2;
  s.discardsByKind = {{"out_of_bounds", 4}, {"division_by_zero", 2}};
  s.failuresByProperty = {{"passes", 3}};
  s.features = {{"dot", 10}, {"reduce", 20}};
  s.findings = {finding("passes|f32|dot", "passes", 4, "cases/a.json"),
                finding("passes|f32|dot", "passes", 6, ""),
                finding("passes|i8|add", "passes", 8, "cases/c.json")};
  return s;
}

CampaignSummary shard1() {
  CampaignSummary s;
  s.name = "shard1";
  s.seed = 7;
  s.shardIndex = 1;
  s.shardCount = 2;
  s.mode = "cpu-only";
  s.started = "2026-11-21T07:59:00Z";
  s.finished = "2026-11-21T09:05:00Z";
  s.elapsedSeconds = 130;
  s.generationSeconds = 7.5;
  s.kernels = 1200;
  s.passed = 1194;
  s.discards = 4;
  s.failures = 2;
  s.workerRestarts = 1;
  s.discardsByKind = {{"out_of_bounds", 4}};
  s.failuresByProperty = {{"roundtrip", 2}};
  s.features = {{"reduce", 5}, {"loop", 7}};
  s.findings = {finding("roundtrip|f16|load", "roundtrip", 1, "cases/b.json"),
                finding("roundtrip|f16|load", "roundtrip", 3, "")};
  return s;
}

CampaignSummary fromJson(const std::string &text) {
  CampaignSummary s;
  std::string error;
  EXPECT_TRUE(summaryFromJson(text, s, error)) << error;
  return s;
}

std::string errorOf(const std::string &text) {
  CampaignSummary s;
  std::string error;
  EXPECT_FALSE(summaryFromJson(text, s, error));
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  return error;
}

void expectSameFinding(const Finding &a, const Finding &b) {
  EXPECT_EQ(a.signature, b.signature);
  EXPECT_EQ(a.property, b.property);
  EXPECT_EQ(a.campaignSeed, b.campaignSeed);
  EXPECT_EQ(a.index, b.index);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.caseFile, b.caseFile);
  EXPECT_EQ(a.reproduce, b.reproduce);
  EXPECT_EQ(a.features, b.features);
}

TEST(FuzzReport, JsonRoundTrip) {
  CampaignSummary s = shard0();
  s.seed = (uint64_t(1) << 63) + 5; // needs all 64 bits
  s.device = "NVIDIA H100 80GB HBM3 x1";
  s.parts = {"a", "b"};
  PartSummary p;
  p.name = "a";
  p.seed = 3;
  p.shardIndex = 2;
  p.shardCount = 4;
  p.elapsedSeconds = 1.25;
  p.generationSeconds = 0.5;
  p.kernels = 9;
  p.discards = 1;
  p.failures = 2;
  p.started = "x";
  s.partStats = {p};
  s.stageSeconds = {{"gen", 0.25}, {"jit", 1.5}};
  std::string text = summaryToJson(s);
  EXPECT_NE(text.find("\"format\": \"triton-fuzz-campaign/1\""), std::string::npos);
  CampaignSummary t = fromJson(text);
  EXPECT_EQ(t.name, s.name);
  EXPECT_EQ(t.seed, s.seed);
  EXPECT_EQ(t.shardIndex, 0);
  EXPECT_EQ(t.shardCount, 2);
  EXPECT_EQ(t.mode, s.mode);
  EXPECT_EQ(t.device, s.device);
  EXPECT_EQ(t.started, s.started);
  EXPECT_EQ(t.finished, s.finished);
  EXPECT_EQ(t.elapsedSeconds, 100);
  EXPECT_EQ(t.generationSeconds, 5);
  EXPECT_EQ(t.kernels, 1000);
  EXPECT_EQ(t.passed, 990);
  EXPECT_EQ(t.discards, 6);
  EXPECT_EQ(t.failures, 3);
  EXPECT_EQ(t.generatorBugs, 1);
  EXPECT_EQ(t.workerRestarts, 2);
  EXPECT_EQ(t.discardsByKind, s.discardsByKind);
  EXPECT_EQ(t.failuresByProperty, s.failuresByProperty);
  EXPECT_EQ(t.features, s.features);
  EXPECT_EQ(t.stageSeconds, s.stageSeconds);
  EXPECT_EQ(t.parts, s.parts);
  ASSERT_EQ(t.findings.size(), 3u);
  for (size_t i = 0; i < 3; ++i)
    expectSameFinding(t.findings[i], s.findings[i]);
  ASSERT_EQ(t.partStats.size(), 1u);
  EXPECT_EQ(t.partStats[0].name, "a");
  EXPECT_EQ(t.partStats[0].seed, 3u);
  EXPECT_EQ(t.partStats[0].shardIndex, 2);
  EXPECT_EQ(t.partStats[0].shardCount, 4);
  EXPECT_EQ(t.partStats[0].elapsedSeconds, 1.25);
  EXPECT_EQ(t.partStats[0].generationSeconds, 0.5);
  EXPECT_EQ(t.partStats[0].kernels, 9);
  EXPECT_EQ(t.partStats[0].discards, 1);
  EXPECT_EQ(t.partStats[0].failures, 2);
  EXPECT_EQ(t.partStats[0].started, "x");
  EXPECT_EQ(summaryToJson(t), text);
}

TEST(FuzzReport, JsonErrors) {
  EXPECT_NE(errorOf("{").find("JSON"), std::string::npos);
  EXPECT_NE(errorOf("[1]").find("format"), std::string::npos);
  EXPECT_NE(errorOf(R"({"format": "triton-conformance/1"})").find("format"), std::string::npos);
  std::string f = R"({"format": "triton-fuzz-campaign/1", )";
  EXPECT_NE(errorOf(f + R"("kernels": "many"})").find("'kernels'"), std::string::npos);
  EXPECT_NE(errorOf(f + R"("seed": -1})").find("'seed'"), std::string::npos);
  EXPECT_NE(errorOf(f + R"("elapsed_seconds": "1"})").find("'elapsed_seconds'"),
            std::string::npos);
  EXPECT_NE(errorOf(f + R"("features": {"dot": 1.5}})").find("'features'"), std::string::npos);
  EXPECT_NE(errorOf(f + R"("parts": [1]})").find("'parts'"), std::string::npos);
  EXPECT_NE(errorOf(f + R"("stage_seconds": {"jit": "1"}})").find("'stage_seconds'"),
            std::string::npos);
  EXPECT_NE(errorOf(f + R"("findings": {}})").find("'findings'"), std::string::npos);
  EXPECT_NE(errorOf(f + R"("findings": [{"index": 1}, {"index": "x"}]})").find("findings[1].index"),
            std::string::npos);
  EXPECT_NE(errorOf(f + R"("findings": [3]})").find("findings[0]"), std::string::npos);
  EXPECT_NE(errorOf(f + R"("part_stats": [{"shard_count": 5000000000}]})")
                .find("part_stats[0].shard_count"),
            std::string::npos);
  // Only the format is required.
  CampaignSummary s = fromJson(R"({"format": "triton-fuzz-campaign/1", "kernels": 4})");
  EXPECT_EQ(s.kernels, 4);
  EXPECT_EQ(s.shardCount, 1);
}

TEST(FuzzReport, BadBytesNeverBreakOutput) {
  CampaignSummary s = shard0();
  s.findings[0].message = std::string("bad \xff\xfe byte, nul ") + '\0' + " and \xc3\xa9.";
  std::string json = summaryToJson(s);
  EXPECT_EQ(json.find('\xff'), std::string::npos);
  EXPECT_NE(json.find("\xef\xbf\xbd"), std::string::npos); // U+FFFD
  for (const std::string &report : {htmlReport(s, {}), markdownReport(s, {})}) {
    EXPECT_EQ(report.find('\xff'), std::string::npos);
    EXPECT_EQ(report.find('\0'), std::string::npos);
    EXPECT_NE(report.find("\xef\xbf\xbd"), std::string::npos);
    EXPECT_NE(report.find("\xc3\xa9"), std::string::npos); // valid UTF-8 kept
  }
}

class TempDir : public ::testing::Test {
protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "fuzzreporttest-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string &rel, const std::string &text) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
  fs::path dir_;
};

using FuzzReportFiles = TempDir;

TEST_F(FuzzReportFiles, KnownSignatures) {
  write("cases/fuzz/a.json", R"({"format": "triton-conformance/1", "suite": "fuzz.a",
    "description": "triton-fuzz finding: property 'passes' failed\nfuzz-signature: passes|f32|load,store  \nReproduce: triton-fuzz --replay 3",
    "cases": []})");
  write("cases/b.json", R"({"format": "triton-conformance/1", "suite": "b",
    "description": "a hand-written case", "cases": []})");
  write("cases/c.json", R"({"suite": "c", "description": "fuzz-signature: not|a|suite"})");
  write("cases/broken.json", "{ \"format\": ");
  write("cases/d.txt", "fuzz-signature: not|json");
  write("known.txt", "# known bugs\n\n  roundtrip|i8|add  \n#passes|x\nthreads|f64|dot\n");
  std::set<std::string> want = {"passes|f32|load,store", "roundtrip|i8|add", "threads|f64|dot"};
  EXPECT_EQ(knownSignatures((dir_ / "cases").string(), (dir_ / "known.txt").string()), want);
  EXPECT_EQ(knownSignatures((dir_ / "cases").string(), ""),
            std::set<std::string>{"passes|f32|load,store"});
  EXPECT_EQ(knownSignatures((dir_ / "missing").string(), (dir_ / "known.txt").string()).size(), 2u);
  EXPECT_TRUE(knownSignatures("", "").empty());
}

TEST(FuzzReport, MergeArithmetic) {
  CampaignSummary a = shard0(), b = shard1();
  a.stageSeconds = {{"gen", 1}, {"jit", 2}};
  b.stageSeconds = {{"jit", 0.5}, {"launch", 4}};
  EXPECT_EQ(mergeSummaries({a, b}).stageSeconds,
            (std::map<std::string, double>{{"gen", 1}, {"jit", 2.5}, {"launch", 4}}));
  CampaignSummary m = mergeSummaries({shard0(), shard1()});
  EXPECT_EQ(m.name, "merged");
  EXPECT_EQ(m.seed, 7u);
  EXPECT_EQ(m.mode, "cpu-only");
  EXPECT_EQ(m.device, "");
  EXPECT_EQ(m.started, "2026-11-21T07:59:00Z");  // shard1's
  EXPECT_EQ(m.finished, "2026-11-21T09:05:00Z"); // shard1's
  EXPECT_EQ(m.elapsedSeconds, 130);              // max(100, 130)
  EXPECT_EQ(m.generationSeconds, 12.5);          // 5 + 7.5
  EXPECT_EQ(m.kernels, 2200);
  EXPECT_EQ(m.passed, 2184);
  EXPECT_EQ(m.discards, 10);
  EXPECT_EQ(m.failures, 5);
  EXPECT_EQ(m.generatorBugs, 1);
  EXPECT_EQ(m.workerRestarts, 3);
  EXPECT_EQ(m.discardsByKind,
            (std::map<std::string, int64_t>{{"out_of_bounds", 8}, {"division_by_zero", 2}}));
  EXPECT_EQ(m.failuresByProperty,
            (std::map<std::string, int64_t>{{"passes", 3}, {"roundtrip", 2}}));
  EXPECT_EQ(m.features, (std::map<std::string, int64_t>{{"dot", 10}, {"reduce", 25}, {"loop", 7}}));
  EXPECT_EQ(m.parts, (std::vector<std::string>{"shard0", "shard1"}));
  ASSERT_EQ(m.findings.size(), 5u);
  EXPECT_EQ(m.findings[0].caseFile, "shard0/cases/a.json");
  EXPECT_EQ(m.findings[1].caseFile, "");
  EXPECT_EQ(m.findings[2].caseFile, "shard0/cases/c.json");
  EXPECT_EQ(m.findings[3].caseFile, "shard1/cases/b.json");
  EXPECT_EQ(m.findings[3].index, 1);
  ASSERT_EQ(m.partStats.size(), 2u);
  EXPECT_EQ(m.partStats[1].name, "shard1");
  EXPECT_EQ(m.partStats[1].elapsedSeconds, 130);
  EXPECT_EQ(m.partStats[1].shardIndex, 1);
  EXPECT_EQ(m.partStats[0].kernels, 1000);

  // A merge of a merge keeps the leaves' figures, under nested names.
  CampaignSummary other = shard0();
  other.name = "gpu0";
  other.mode = "gpu";
  other.seed = 9;
  other.device = "H100";
  CampaignSummary mm = mergeSummaries({m, other});
  EXPECT_EQ(mm.mode, "mixed");
  EXPECT_EQ(mm.device, "mixed");
  EXPECT_EQ(mm.kernels, 3200);
  EXPECT_EQ(mm.parts, (std::vector<std::string>{"merged", "gpu0"}));
  ASSERT_EQ(mm.partStats.size(), 3u);
  EXPECT_EQ(mm.partStats[0].name, "merged/shard0");
  EXPECT_EQ(mm.partStats[2].name, "gpu0");
  EXPECT_EQ(mm.findings[3].caseFile, "merged/shard1/cases/b.json");
  EXPECT_NE(markdownReport(mm, {}).find("- seed: mixed"), std::string::npos);

  EXPECT_EQ(mergeSummaries({}).kernels, 0);
}

// An HTML table row: a label, then right-aligned figures.
std::string htmlRow(const std::string &label, const std::string &n, const std::string &pct) {
  return "<tr><td>" + label + "</td><td class=\"num\">" + n + "</td><td class=\"num\">" + pct +
         "</td></tr>";
}

CampaignSummary reportSummary() {
  CampaignSummary s;
  s.name = "nightly";
  s.seed = 42;
  s.shardIndex = 3;
  s.shardCount = 64;
  s.mode = "gpu";
  s.device = "NVIDIA H100 x1";
  s.started = "2026-11-21T01:00:00Z";
  s.finished = "2026-11-21T02:00:00Z";
  s.elapsedSeconds = 8;
  s.generationSeconds = 0.4;
  s.kernels = 4;
  s.passed = 1;
  s.discards = 1;
  s.failures = 2;
  s.discardsByKind = {{"out_of_bounds", 1}};
  s.features = {{"zeta", 1}, {"alpha", 3}, {"never.seen", 0}};
  // The known signature has more kernels, yet the new one comes first.
  s.findings = {finding("old|f32|dot", "passes", 1, "cases/old.json"),
                finding("old|f32|dot", "passes", 2, ""),
                finding("new|i8|add", "gpu-mismatch", 3, "cases/new.json")};
  s.findings[2].message = "got <script>&\"x\" want 1";
  return s;
}

TEST(FuzzReport, HtmlReport) {
  CampaignSummary s = reportSummary();
  std::string html = htmlReport(s, {"old|f32|dot"});
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("<style>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("got &lt;script&gt;&amp;&quot;x&quot; want 1"), std::string::npos);
  size_t fresh = html.find("NEW: new|i8|add"), known = html.find("known: old|f32|dot");
  ASSERT_NE(fresh, std::string::npos);
  ASSERT_NE(known, std::string::npos);
  EXPECT_LT(fresh, known);
  EXPECT_NE(html.find("1 new, 1 known"), std::string::npos);
  // Totals and throughput: 1 of 4 kernels discarded, 4 kernels in 8 s, 0.4 s of 8 s generating.
  EXPECT_NE(html.find(htmlRow("discards", "1", "25.0%")), std::string::npos);
  EXPECT_NE(html.find("<b>kernels per second</b> 0.5<"), std::string::npos);
  EXPECT_NE(html.find("0.4 s, 5.0% of the wall time"), std::string::npos);
  EXPECT_NE(html.find(htmlRow("out_of_bounds", "1", "25.0%")),
            std::string::npos);
  // The feature table, sorted by name, with the share of kernels.
  size_t alpha = html.find(htmlRow("alpha", "3", "75.0%"));
  size_t zeta = html.find(htmlRow("zeta", "1", "25.0%"));
  ASSERT_NE(alpha, std::string::npos);
  ASSERT_NE(zeta, std::string::npos);
  EXPECT_LT(alpha, zeta);
  EXPECT_NE(html.find("Never generated: never.seen."), std::string::npos);
  EXPECT_NE(html.find("<code>cases/new.json</code>"), std::string::npos);
  EXPECT_NE(html.find("<code>triton-fuzz --cpu-only --seed 7 --replay 3 --print</code>"),
            std::string::npos);
  EXPECT_NE(html.find("3/64"), std::string::npos);
  EXPECT_NE(html.find("NVIDIA H100 x1"), std::string::npos);
  EXPECT_NE(html.find("2026-11-21T01:00:00Z"), std::string::npos);
  EXPECT_EQ(html, htmlReport(s, {"old|f32|dot"})); // deterministic
}

TEST(FuzzReport, MarkdownReport) {
  CampaignSummary s = reportSummary();
  std::string md = markdownReport(s, {"old|f32|dot"});
  EXPECT_EQ(md.rfind("# triton-fuzz campaign nightly\n", 0), 0u);
  size_t fresh = md.find("### NEW: new\\|i8\\|add"), known = md.find("### known: old\\|f32\\|dot");
  ASSERT_NE(fresh, std::string::npos);
  ASSERT_NE(known, std::string::npos);
  EXPECT_LT(fresh, known);
  EXPECT_NE(md.find("```text\ngot <script>&\"x\" want 1\n```"), std::string::npos);
  EXPECT_NE(md.find("| alpha | 3 | 75.0% |"), std::string::npos);
  EXPECT_NE(md.find("| discards | 1 | 25.0% |"), std::string::npos);
  EXPECT_NE(md.find("| feature | kernels | of kernels |\n|---|---:|---:|\n"), std::string::npos);
  EXPECT_NE(md.find("- reproduce: ` triton-fuzz --cpu-only --seed 7 --replay 3 --print `"),
            std::string::npos);
  // Everything unknown without a known set; a known-only campaign has no NEW.
  EXPECT_EQ(markdownReport(s, {}).find("### known:"), std::string::npos);
  EXPECT_EQ(markdownReport(s, {"old|f32|dot", "new|i8|add"}).find("### NEW:"), std::string::npos);
  // A long message is cut.
  s.findings[2].message = std::string(5000, 'x');
  std::string cut = markdownReport(s, {});
  EXPECT_EQ(cut.find(std::string(1000, 'x')), std::string::npos);
  EXPECT_NE(cut.find("x [...]"), std::string::npos);
}

TEST(FuzzReport, MergedReportHasPartTable) {
  CampaignSummary m = mergeSummaries({shard0(), shard1()});
  std::string md = markdownReport(m, {});
  EXPECT_NE(md.find("- merged from 2 parts: shard0, shard1"), std::string::npos);
  EXPECT_NE(md.find("- shards: 0/2, 1/2"), std::string::npos);
  // 2200 kernels in max(100, 130) s; generation 12.5 s of 100 + 130 s.
  EXPECT_NE(md.find("- kernels per second: 16.9"), std::string::npos);
  EXPECT_NE(md.find("12.5 s, 5.4% of the wall time"), std::string::npos);
  // shard1: 1200 kernels in 130 s = 9.2/s, 7.5 s generating = 5.8%.
  EXPECT_NE(md.find("| shard1 | 1/2 | 7 | cpu-only |  | 1200 | 130.0 | 9.2 | 5.8% | 4 | 2 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("` shard1/cases/b.json `"), std::string::npos);
}

} // namespace

// The report's "never taken" list names the attention fast paths too
// (codegen::loweringPathNames, issue 29 item 7), and leaves out those taken.
TEST(FuzzReport, NeverTakenListsTheAttentionPaths) {
  CampaignSummary s;
  s.kernels = s.pathKernels = 10;
  s.paths = {{"mma.sync", 4}, {"mma.values", 3}, {"mma.values.pipeline.stages=3", 2}};
  std::string md = markdownReport(s, {});
  size_t at = md.find("Never taken: ");
  ASSERT_NE(at, std::string::npos) << md;
  std::string never = md.substr(at, md.find('\n', at) - at);
  for (const char *p : {"mma.values.pipeline.stages=2", "mma.values.wgmma", "pipeline.stages=2", "wgmma"})
    EXPECT_NE(never.find(p), std::string::npos) << p << ": " << never;
  for (const char *p : {"mma.values,", "mma.values.pipeline.stages=3", "mma.sync"})
    EXPECT_EQ(never.find(p), std::string::npos) << p << ": " << never;
}
