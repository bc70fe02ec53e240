//===- Campaign.h - A fuzz campaign: workers, journal, shards, reports ---===//
//
// Runs a campaign (docs/fuzz.md, "Campaigns"): kernel indices of one shard are
// handed to worker processes (fuzz/Worker.h), each result is appended to the
// journal (fuzz/Journal.h), failures are shrunk and reduced in a separate
// reducer process and stored as conformance cases (at most three per
// signature), and at the end the summary and reports are written
// (fuzz/Report.h). The same machinery runs the GPU campaign and the CPU-only
// one; only the workers' oracle differs.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fuzz/Journal.h"
#include "fuzz/PathWeights.h"
#include "fuzz/Report.h"
#include "fuzz/Worker.h"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tc::fuzz {

/// --shard K/N: this campaign checks the indices I with I % N == K.
struct Shard {
  int index = 0, count = 1;
};

/// "3/64" -> {3, 64}; nullopt (with `error`) unless 0 <= K < N.
std::optional<Shard> parseShard(const std::string &text, std::string &error);

/// A shard's kernel indices, ascending, below `limit` (0: no limit), skipping `done`.
class IndexSequence {
public:
  IndexSequence(Shard shard, int64_t limit, std::set<int64_t> done);
  /// The next index to check (nullopt when the shard's range is exhausted).
  std::optional<int64_t> next();
  bool exhausted() const;

private:
  void skipDone();
  Shard shard_;
  int64_t limit_, next_;
  std::set<int64_t> done_;
};

struct CampaignOptions {
  CheckConfig check; // seed, mode and the oracles (what workers do)
  Shard shard;
  std::string out;           // the campaign folder
  double seconds = 120;      // --time (over all restarts)
  double shrinkSeconds = 60; // --shrink-time, per failure
  double hangTimeout = 60;   // --hang-timeout, per kernel
  int64_t maxKernels = 0;    // only indices below this (0: no limit)
  std::vector<int> devices;  // gpu: the devices used
  int workersPerDevice = 1;  // gpu
  int cpuWorkers = 1;        // cpu-only: --workers
  int batch = 1;             // --batch: kernels per check request (one module per batch)
  bool stopOnFailure = false;
  std::string casesDir, knownFile;     // known signatures for the reports
  std::vector<std::string> workerArgs; // how a worker is started (--device D is added)
  std::string reproduceFlags;          // " --cpu-only", " --num-warps 8", ...
  // The fast paths (fuzz/PathWeights.h): --path-floor, the share each is
  // steered to (0: none); --focus, the path every kernel aims at ("": none).
  double pathFloor = 0.06;
  std::string focus;
};

/// Adds one journal record to the summary's counts and findings.
void addRecord(CampaignSummary &s, const KernelRecord &r);

/// What identifies the crash in a dead worker's stderr: its last error line
/// ("LLVM ERROR: ...", an assertion) with addresses and numbers blanked; ""
/// when there is none. Failures that kill workers are grouped by it.
std::string crashKey(const std::string &stderrTail);

/// The distinct signatures among the summary's findings.
int64_t signatureCount(const CampaignSummary &s);

/// The progress line:
/// "[12.0s / 120.0s] kernels N (R/s), discards D%, failures F (S signatures),
///  workers W (restarts X), remaining T".
std::string progressLine(const CampaignSummary &s, double elapsed, double total, int workers,
                         int64_t restarts);

/// The command that finds kernel `index` again (`aim`: the fast path it was
/// aimed at, from its features: then with `--focus AIM`).
std::string reproduceCommand(const CampaignOptions &o, int64_t index, const std::string &aim = "");

/// Runs (or resumes, or only reports on a finished) campaign; the exit code
/// (0 clean, 1 failures or generator bugs).
int runCampaign(const CampaignOptions &opts);

} // namespace tc::fuzz
