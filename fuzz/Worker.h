//===- Worker.h - The campaign's worker processes ------------------------===//
//
// The campaign's parent process never initialises CUDA: kernels are checked
// in worker processes (fork + exec of the fuzzer itself with the hidden
// `--worker` flag), which talk line-oriented JSON over pipes. The parent
// writes requests to a worker's stdin; the worker answers on its stdout (the
// worker's own writes to stdout go to stderr, so they cannot break the
// protocol); stderr is kept by the parent for the report of a worker that
// died.
//
//   worker -> {"op":"hello","device":D}      once, at start (no device: --reducer)
//   parent -> {"op":"check","index":I,"sample":B,"batch_failure":{"property":P,"message":M}?}
//   parent -> {"op":"check","indices":[I,...],"sample":B}   a batch (--batch N)
//             either may carry "aims":[A,...] (per kernel: the fast path it is
//             aimed at, GenPolicy::aim, "" for none; fuzz/PathWeights.h)
//   worker -> {"op":"checked","index":I,"status":S,"property":P,"message":M,
//              "features":[...],"gen_ms":G,"check_ms":C,"stages":{S:MS},"exit":B,
//              "raw_signature":R,"kernel":TEXT,"batch_only":B?}
//             one per kernel of the request, in the order they finish
//   worker -> {"op":"requeue","index":I,"property":P,"message":M,...,"exit":true}
//             kernel I failed in a batch (a fault, a hang) and CUDA is gone: the
//             parent checks it alone in a new worker, with "batch_failure" (a
//             pass there becomes the failure "batch-only-P")
//   parent -> {"op":"reduce","index":I,"property":P,"message":M,"seconds":T,
//              "reduce":B,"kernel":K?,"case_name":N,"reproduce":CMD,"note":TEXT,"aim":A}
//   worker -> {"op":"best","kernel":K}  (each smaller failing kernel found)
//   worker -> {"op":"reduced","signature":S,"case":TEXT,"features":[...],
//              "message":M,"kernel":TEXT,"steps":N}
//
// "exit": true says the worker exits after this reply (CUDA is unusable in
// it after a fault); the request's kernels without a reply were not checked
// (the parent checks each of them alone; so too when a worker dies or hangs
// in a batch). Test hooks: TC_FUZZ_TEST_HANG_INDEX=I makes a worker sleep
// forever on kernel I, TC_FUZZ_TEST_CRASH_INDEX=I makes it abort(),
// TC_FUZZ_TEST_COMPILE_FAIL_INDEX=I makes the GPU compile of any module that
// holds kernel I fail (fuzz/GpuOracle.h), TC_FUZZ_TEST_BATCH_FAULT_INDEX=I
// (--compile-only) makes kernel I "fault" in a batch of several and pass alone.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "fuzz/GpuOracle.h"
#include "fuzz/Oracle.h"
#include "fuzz/TritonOracle.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <sys/types.h>
#include <vector>

namespace tc::fuzz {

/// Kernel `index` of campaign `seed`: its RapidCheck seed (the size is always 100).
uint64_t kernelSeed(uint64_t seed, int64_t index);

/// How a worker (or --replay) checks kernels.
struct CheckConfig {
  bool cpuOnly = false;
  uint64_t seed = 1;
  GenPolicy policy;
  OracleOptions cpu;        // --cpu-only
  GpuOracleOptions gpu;     // the GPU oracle
  TritonOracleOptions triton; // --target triton (fuzz/TritonOracle.h): replaces the GPU oracle
  std::string plantFeature; // --fail-on-feature: kernels with it fail ("planted")
};

/// Checks kernels with the CPU properties or the GPU oracle.
class Checker {
public:
  virtual ~Checker() = default;
  virtual OracleResult check(const FuzzKernel &k) = 0;
  /// Checks `ks` together (the GPU oracle compiles them into one module:
  /// fuzz/GpuOracle.h); `done` gets each result as soon as it is known. When
  /// mustExit() turns true, the kernels without a result were not checked.
  /// By default one check() after the other.
  virtual void checkBatch(const std::vector<FuzzKernel> &ks, const GpuOracle::BatchDone &done);
  /// The device ("" for the CPU).
  virtual std::string device() = 0;
  /// Whether this process can check no more kernels (CUDA poisoned).
  virtual bool mustExit() const = 0;
  /// After a finding `k` (reduced) of `property` is stored as case `name`: the
  /// checker's own steps for it (--target triton: a standalone script and the
  /// culprit step), within `seconds`; a line for the finding, "" for none.
  virtual std::string onFinding(const FuzzKernel &k, const std::string &property,
                                const std::string &name, double seconds) {
    (void)k, (void)property, (void)name, (void)seconds;
    return "";
  }
};
std::unique_ptr<Checker> makeChecker(const CheckConfig &cfg);

/// The oracle statuses as the journal writes them.
std::string statusName(OracleResult::Status s);

/// A kernel as JSON (exact: doubles as their bits) and back.
nlohmann::json kernelToJson(const FuzzKernel &k);
FuzzKernel kernelFromJson(const nlohmann::json &j);

/// The worker's main loop (`triton-fuzz --worker`): answers requests on
/// stdin until it closes. Returns the exit code. `reportDevice`: say the
/// device in the hello (check workers; the reducer touches the GPU only when
/// it reduces, and CUDA's start-up costs a second).
int runWorker(const CheckConfig &cfg, bool reportDevice = true);

/// A worker process as the parent sees it.
class WorkerProcess {
public:
  WorkerProcess() = default;
  WorkerProcess(const WorkerProcess &) = delete;
  WorkerProcess &operator=(const WorkerProcess &) = delete;
  ~WorkerProcess();
  /// Starts `/proc/self/exe args...`; it dies with this process (PR_SET_PDEATHSIG).
  bool start(const std::vector<std::string> &args, std::string &error);
  /// Sends one request line; false when the worker is gone.
  bool send(const nlohmann::json &request);
  /// Reads what its stdout and stderr hold (call when poll says so): complete
  /// stdout lines go to `lines`. False when its stdout is closed (it died or exited).
  bool readOutput(std::vector<std::string> &lines);
  void readErrors();
  /// Reaps it: with `exiting` (its stdout closed) it gets a second to exit by
  /// itself; then SIGKILL.
  void kill(bool exiting = false);
  bool running() const { return pid_ > 0; }
  int outFd() const { return out_; }
  int errFd() const { return err_; }
  /// The last few KB of its stderr.
  std::string stderrTail() const { return errTail_; }
  /// How it ended ("exit code 1", "signal 9 (Killed)"), after kill() or EOF.
  std::string howEnded() const { return ended_; }

private:
  void closeFds();
  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string outBuf_, errTail_, ended_;
};

} // namespace tc::fuzz
