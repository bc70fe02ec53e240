//===- PathWeights.h - Steering a campaign toward the GPU's fast paths -----===//
//
// The campaign hands each kernel index to a worker with an aim (GenPolicy::aim:
// a matmul loop in the form of one fast path, or "" for the usual mix). With
// `--focus PATH` every kernel aims at PATH. Otherwise the aims follow what the
// backend reported for the kernels checked so far (their paths, counted from
// the code it emitted: codegen::Compiled::paths): a fast path whose share of
// the compiled kernels is below the floor (`--path-floor`, default 0.06) gets
// aimed kernels, as many as needed to lift it to the floor given
//   - the share the unaimed kernels reach by themselves,
//   - how often a kernel aimed at it takes it, and
//   - what the kernels aimed at the paths before it already give it
//     (a wgmma loop is also a pipelined matmul loop),
// all measured from the journal records (priors until there are enough).
// At most half of the kernels are aimed. The aim of a kernel is recorded in
// its features ("aim.wgmma"), so `--replay I --focus wgmma` finds it again.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tc::fuzz {

class PathWeights {
public:
  /// `floor`: the share each fast path is steered to (0: no steering);
  /// `focus`: a path of aimablePaths() every kernel aims at ("": none).
  PathWeights(double floor, std::string focus) : floor_(floor), focus_(std::move(focus)) {}

  /// Counts one checked kernel: its features (its aim is among them) and the
  /// paths its code took (nullopt: it was not compiled, e.g. a discard).
  void add(const std::vector<std::string> &features,
           const std::optional<std::vector<std::string>> &paths);

  /// The share of the kernels that aim at each fast path now (those at 0 left out).
  std::map<std::string, double> aimRates() const;

  /// The aim of kernel `index` of campaign `seed` ("" for none): with a focus,
  /// the focus; else drawn by a hash of (seed, index) from aimRates().
  std::string aimFor(uint64_t seed, int64_t index) const;

  /// How many compiled kernels have been counted.
  int64_t compiled() const { return compiled_; }

private:
  /// The share of the kernels aimed at `aim` ("" : unaimed) that took `path`
  /// (a prior until there are enough of them).
  double rate(const std::string &aim, const std::string &path) const;

  double floor_;
  std::string focus_;
  int64_t compiled_ = 0;
  std::map<std::string, int64_t> kernels_;                     // per aim ("" unaimed)
  std::map<std::string, std::map<std::string, int64_t>> took_; // aim -> path -> kernels
};

/// The aim recorded in a kernel's features ("aim.X" -> "X"; "" for none).
std::string aimOf(const std::vector<std::string> &features);

} // namespace tc::fuzz
