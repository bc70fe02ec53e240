//===- Autotune.h - Pick the fastest variant of a kernel on the GPU ------===//
//
// The tutorial's auto-tuning: list-valued defines (`-DTM=[32,64,128]`), a list
// of num_warps and a list of num_stages give a set of variants. On the first
// launch for a *key* (the kernel's source, the variant space, the device and
// the values of the scalar arguments), every variant is compiled and timed
// (CUDA events, median of a few launches on copies of the buffers, so the
// user's buffers see exactly one real launch); the fastest is remembered in memory and on disk
// ($XDG_CACHE_HOME/triton-c/autotune/), and later launches with the same key
// run the winner directly. A variant that fails to compile for the GPU or
// faults is skipped and reported.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Defines.h"
#include "gpu/GpuBackend.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tc::gpu {

struct TuneVariant {
  DefineList defines;
  unsigned numWarps = 4;
  unsigned numStages = codegen::Options{}.numStages;
  std::string describe() const; // "TM=64 TN=64 num_warps=4 num_stages=3"
};

/// One row of --autotune-report.
struct TuneRow {
  TuneVariant variant;
  double medianMs = 0; // < 0 when the variant was skipped
  std::string note;    // why it was skipped ("compile error: ...", "fault: ...")
  bool winner = false;
};

struct TuneOutcome {
  bool fromCache = false;        // the key was tuned before (memory or disk)
  TuneVariant best;
  std::vector<TuneRow> rows;     // empty when fromCache
  std::string error;             // no variant could run
};

struct TuneRequest {
  CompileRequest base;           // path/source, includes, kernel name; defines = the fixed ones
  std::vector<DefineSpec> specs; // all -D, list-valued or not
  std::vector<unsigned> numWarps = {4};
  std::vector<unsigned> numStages = {codegen::Options{}.numStages}; // 1..8 each
  GridSpec grid;                 // evaluated per variant (it may use the defines)
  int warmup = 3, iterations = 10;
};

class Autotuner {
public:
  Autotuner(GpuBackend &backend, std::string cacheDir = {}); // "" -> defaultCacheDir()
  /// Tunes (or looks up) the best variant for `args`, then launches it once on
  /// `args` (results written back into the buffers). `result` is that launch.
  TuneOutcome run(const TuneRequest &req, LaunchArgs &args, const RunOptions &opts,
                  RunResult &result);
  /// Formats `o` as the --autotune-report table.
  static std::string report(const TuneOutcome &o);

private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// The pieces of the tuner that need no GPU, for the unit tests (added by the
// autotune engineer; not a stable API).
namespace detail {

/// The variant space: expandDefines(specs) x numWarps x numStages, the
/// defines varying slowest and num_stages fastest. A variant keeps only the
/// list-valued defines (in `specs` order).
std::vector<TuneVariant> enumerateVariants(const TuneRequest &req);

/// What `v` is compiled with: base.defines, then every spec's value for `v`
/// (the spec's single value, or v's value for a list), a later name replacing
/// an earlier one.
DefineList compileDefines(const TuneRequest &req, const TuneVariant &v);

/// The tuning key (DiskCache::fullKey, stored whole and compared on a disk
/// cache hit): the kernel's source, name,
/// defines, include dirs, variant space (num_warps and num_stages lists
/// included) and grid, `device`, the compiler
/// version, the scalar arguments' values, the buffers' dtypes, shapes and
/// 16-byte alignment (never their contents), and whether the backend
/// specialises on argument classes (runtime/Specialize.h).
std::string tuneKey(const TuneRequest &req, const LaunchArgs &args, const std::string &device,
                    bool specialize = true);

/// A winner as the caches store it (JSON text), and back; nullopt when
/// malformed or written before num_stages was tuned (a cache miss).
std::string serializeVariant(const TuneVariant &v);
std::optional<TuneVariant> parseVariant(const std::string &text);

} // namespace detail

} // namespace tc::gpu
