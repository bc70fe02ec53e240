//===- Journal.h - A campaign's state on disk: arguments and journal -----===//
//
// A campaign folder DIR holds the state that lets a killed campaign go on
// where it stopped (docs/fuzz.md, "Campaigns"):
//   - DIR/campaign-args.json: the arguments that define which kernels are
//     checked and how (seed, shard, mode, oracle options), the time the
//     campaign first started and the device it runs on. A restart with other
//     arguments into the same folder is refused.
//   - DIR/journal.jsonl: one JSON line per finished kernel, appended with a
//     single write(2) on an O_APPEND descriptor, holding everything the
//     summary needs. A line torn by kill -9 does not parse and is ignored
//     when the journal is read back (that kernel is checked again).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fuzz/Report.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tc::fuzz {

/// One finished kernel: a line of the journal.
struct KernelRecord {
  int64_t index = -1;
  std::string status;   // "pass", "discard", "generator-bug", "fail"
  std::string property; // discard: the trap kind; fail: the property;
                        // generator-bug: "compile" or "launch"
  std::string message;  // discard, generator-bug: what happened (fail: in `finding`)
  std::vector<std::string> features;
  double genMs = 0, checkMs = 0;  // generating and checking it, in its worker
  std::map<std::string, double> stageMs; // where checking it went (OracleResult::stageMs)
  // GPU campaigns: the lowering paths the backend took (OracleResult::paths);
  // unset when the kernel was not compiled (a discard, a cpu-only campaign).
  std::optional<std::vector<std::string>> paths;
  double elapsed = 0;             // the campaign's elapsed seconds (over restarts) when it finished
  int64_t restarts = 0;           // worker restarts it caused (a fault, a hang, a crash)
  std::string sample;             // discard: the kernel's text (only the first few discards)
  std::string rawSignature;       // fail: failureSignature of the kernel before reduction
  std::optional<Finding> finding; // fail
};

/// The record as one JSON line (with its '\n') and back; nullopt when `line`
/// is not a complete record (a torn write).
std::string recordToLine(const KernelRecord &r);
std::optional<KernelRecord> recordFromLine(const std::string &line);

/// The journal's records in file order; lines that do not parse are skipped
/// (and counted in `skipped`), as is a second record of an index.
std::vector<KernelRecord> readJournal(const std::string &path, int64_t *skipped = nullptr);

/// An open journal: appends records, each with one write(2) (O_APPEND), so a
/// crash leaves at most the last line torn.
class Journal {
public:
  Journal() = default;
  Journal(const Journal &) = delete;
  Journal &operator=(const Journal &) = delete;
  ~Journal();
  /// Opens (or creates) `path` for appending.
  bool open(const std::string &path, std::string &error);
  bool append(const KernelRecord &r, std::string &error);

private:
  int fd_ = -1;
};

/// What defines a campaign: a restart must give the same (docs/fuzz.md).
struct CampaignArgs {
  uint64_t seed = 1;
  int shardIndex = 0, shardCount = 1;
  std::string mode = "gpu"; // "gpu" or "cpu-only"
  unsigned numWarps = 4;    // gpu
  std::string disableOpt;   // gpu: --disable-opt
  unsigned threads = 4;     // cpu-only: the thread count compared with 1
  std::string plantFeature; // --fail-on-feature
  bool operator==(const CampaignArgs &) const = default;
};

/// DIR/campaign-args.json: the arguments and what is known about the campaign.
struct CampaignState {
  CampaignArgs args;
  std::string started; // ISO 8601 UTC of the first start
  std::string device;  // from a worker ("" until one said)
};

/// The arguments as JSON text (for messages and the state file).
std::string argsToJson(const CampaignArgs &a);

/// Reads DIR/campaign-args.json into `state`. Returns false with `error` when
/// it exists but does not parse; `exists` says whether it was there.
bool loadState(const std::string &dir, CampaignState &state, bool &exists, std::string &error);
/// Writes DIR/campaign-args.json.
bool saveState(const std::string &dir, const CampaignState &state, std::string &error);

/// Starts or resumes the campaign in `dir` with `args`: a new folder gets a
/// state file (started now); an existing one must hold the same arguments,
/// else false with an `error` naming the differences. Fills `state`.
bool openCampaign(const std::string &dir, const CampaignArgs &args, CampaignState &state,
                  std::string &error);

/// The current time as ISO 8601 UTC ("2026-11-21T03:04:05Z").
std::string isoNow();

} // namespace tc::fuzz
