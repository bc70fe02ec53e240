//===- Report.h - Campaign summaries, reports and merging -----------------===//
//
// A fuzz campaign (one `--out DIR`, one shard) ends with DIR/campaign.json, a
// CampaignSummary, and two renderings of it, DIR/report.md and DIR/report.html.
// `triton-fuzz merge A/ B/ ... --out report.html` reads the campaign.json of
// each folder, merges them (sums, unions, findings deduplicated by signature)
// and writes the merged report (and its .md beside it).
//
// A finding is *known* when its signature appears in a known set (built from
// the conformance cases already in the tree, whose suite description carries
// "fuzz-signature: <sig>", and from an optional text file of signatures);
// reports list new findings first.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace tc::fuzz {

/// One failing kernel of a campaign.
struct Finding {
  std::string signature;             // dedup key (fuzz/Reducer.h failureSignature)
  std::string property;              // "gpu-mismatch", "gpu-fault", "gpu-hang", "gpu-compile",
                                     // "roundtrip", "passes", "threads", "tiles", "planted"
  uint64_t campaignSeed = 0;
  int64_t index = -1;                // the kernel's index in the campaign
  std::string message;               // first difference / the error (one paragraph)
  std::string caseFile;              // conformance case written, relative to the campaign
                                     // folder ("" when not stored: over 3 per signature)
  std::string reproduce;             // the command that finds it again
  std::vector<std::string> features; // of the (reduced) kernel
  std::string culprit;               // GPU findings: what makes it go away (fuzz/Culprit.h
                                     // Culprit::summary), "" when not searched
};

/// One merged campaign's own figures (CampaignSummary::partStats), for the
/// per-part throughput table of a merged report.
struct PartSummary {
  std::string name, mode, device, started, finished;
  uint64_t seed = 0;
  int shardIndex = 0, shardCount = 1;
  double elapsedSeconds = 0, generationSeconds = 0;
  int64_t kernels = 0, discards = 0, failures = 0;
};

/// What one campaign (or a merge of several) did.
struct CampaignSummary {
  std::string name;                  // the folder's name, or "merged"
  uint64_t seed = 0;
  int shardIndex = 0, shardCount = 1; // --shard K/N (0/1 when not sharded)
  std::string mode;                  // "gpu" or "cpu-only"
  std::string device;                // e.g. "NVIDIA H100 80GB HBM3 x1", "" for cpu-only
  std::string started, finished;     // ISO 8601 UTC
  double elapsedSeconds = 0;         // wall time of the campaign (summed over restarts)
  double generationSeconds = 0;      // time spent generating kernels (summed over workers)
  /// Where the workers' time went, per stage (gen, frontend, interp, llvm-ir,
  /// libdevice, llvm-opt, ptx, jit, launch, compare, ...; KernelRecord::stageMs),
  /// in seconds summed over workers.
  std::map<std::string, double> stageSeconds;
  int64_t kernels = 0, passed = 0, discards = 0, failures = 0, generatorBugs = 0;
  int64_t workerRestarts = 0;        // after a fault or a hang
  std::map<std::string, int64_t> discardsByKind;  // trap kind -> count
  std::map<std::string, int64_t> failuresByProperty;
  std::map<std::string, int64_t> features;        // feature -> kernels that used it
  /// Path coverage (GPU and --compile-only campaigns): lowering path -> kernels
  /// whose code took it, as the backend reported it (codegen::Compiled::paths),
  /// over the `pathKernels` kernels the backend compiled.
  std::map<std::string, int64_t> paths;
  int64_t pathKernels = 0;
  std::vector<Finding> findings;     // every failing kernel
  std::vector<std::string> parts;    // merged: the names of the merged campaigns
  std::vector<PartSummary> partStats; // merged: each merged campaign's figures (a merged
                                      // part contributes its own partStats, renamed
                                      // "<part>/<sub-part>")
};

/// The summary as JSON text (the format of campaign.json) and back. `error`
/// gets a one-line message when `text` is not a valid summary.
std::string summaryToJson(const CampaignSummary &s);
bool summaryFromJson(const std::string &text, CampaignSummary &out, std::string &error);

/// Signatures of known findings: every conformance suite file under `casesDir`
/// (recursively) whose description holds "fuzz-signature: <sig>", plus the
/// non-empty, non-# lines of `listFile` (either may be "").
std::set<std::string> knownSignatures(const std::string &casesDir, const std::string &listFile);

/// Markdown and self-contained HTML reports: totals, throughput (kernels/s,
/// generation share), discards by trap kind, findings grouped by signature
/// (new first, then known; each with its count, property, case file and
/// reproduce command), feature coverage (kernels per feature, and features
/// never generated among those listed in `expectedFeatures`). A feature
/// listed in CampaignSummary::features with 0 kernels is an expected feature
/// that was never generated. The output depends only on the arguments.
std::string markdownReport(const CampaignSummary &s, const std::set<std::string> &known);
std::string htmlReport(const CampaignSummary &s, const std::set<std::string> &known);

/// "stage times: interp 41% llvm-opt 22% ... (ms per kernel, ...: 1.2 interp, ...)":
/// each stage's share of the summed stage time, largest first, and its mean
/// per kernel; "" when the campaign recorded no stage times.
std::string stageTimesLine(const CampaignSummary &s);

/// The path coverage table as text for the end-of-campaign summary ("" when
/// no kernel was compiled by the GPU backend).
std::string pathCoverageText(const CampaignSummary &s);

/// Merges campaigns: sums counts and times (elapsed: the longest one, since
/// shards run side by side; also kept per part), unions findings.
/// Conventions: each finding's caseFile becomes "<part name>/<caseFile>", so
/// the caller names each part after its folder relative to the folder the
/// merged report goes to (its folder name when the report is written in the
/// parts' common parent). seed, mode and device come from the parts; when
/// they differ, mode and device are "mixed" and seed is the first part's (the
/// reports then say "mixed"). The merge is not itself a shard (0/1); started
/// is the earliest, finished the latest.
CampaignSummary mergeSummaries(const std::vector<CampaignSummary> &parts);

} // namespace tc::fuzz
