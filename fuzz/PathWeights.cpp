//===- PathWeights.cpp - Steering a campaign toward the GPU's fast paths ---===//
#include "fuzz/PathWeights.h"

#include "fuzz/Generator.h"

#include <algorithm>

namespace tc::fuzz {
namespace {

constexpr double kMaxAimed = 0.5;       // at most this share of the kernels is aimed
constexpr int64_t kMinAimedSamples = 20; // measured rates of aimed kernels after this many
constexpr int64_t kMinPlainSamples = 200;

// splitmix64: a hash of (seed, index) for the aim draw.
uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// What a kernel aimed at `aim` is expected to take before it is measured
// (the forms fuzz/Generator.cpp's aimed matmuls have; 0 for unaimed ones).
double prior(const std::string &aim, const std::string &path) {
  if (aim.empty())
    return 0;
  if (aim == path)
    return 0.9;
  static const std::map<std::pair<std::string, std::string>, double> kCross = {
      {{"wgmma", "pipeline"}, 0.9}, {{"wgmma", "mma.loop"}, 0.9},
      {{"pipeline", "wgmma"}, 0.45}, {{"pipeline", "mma.loop"}, 0.9},
      {{"pipeline", "mma.sync"}, 0.45}, {{"mma.sync", "mma.loop"}, 0.8},
      {{"mma.sync", "pipeline"}, 0.5}, {{"mma.loop", "mma.sync"}, 0.9},
      {{"mma.loop", "pipeline"}, 0.5},
      // Attention kernels in the mma.values form (fuzz/Generator.cpp): both
      // also take mma.sync; 3 in 4 of those aimed at mma.values have the
      // aligned rows of the values pipeline.
      {{"mma.values.pipeline", "mma.values"}, 0.95}, {{"mma.values.pipeline", "mma.sync"}, 0.9},
      {{"mma.values", "mma.values.pipeline"}, 0.6}, {{"mma.values", "mma.sync"}, 0.9}};
  auto it = kCross.find({aim, path});
  return it == kCross.end() ? 0 : it->second;
}

} // namespace

std::string aimOf(const std::vector<std::string> &features) {
  for (const std::string &f : features)
    if (f.rfind("aim.", 0) == 0)
      return f.substr(4);
  return "";
}

void PathWeights::add(const std::vector<std::string> &features,
                      const std::optional<std::vector<std::string>> &paths) {
  if (!paths)
    return;
  ++compiled_;
  std::string aim = aimOf(features);
  ++kernels_[aim];
  for (const std::string &p : aimablePaths())
    if (tookPath(*paths, p))
      ++took_[aim][p];
}

double PathWeights::rate(const std::string &aim, const std::string &path) const {
  auto n = kernels_.find(aim);
  int64_t count = n == kernels_.end() ? 0 : n->second;
  if (count < (aim.empty() ? kMinPlainSamples : kMinAimedSamples))
    return prior(aim, path);
  auto t = took_.find(aim);
  int64_t hits = 0;
  if (t != took_.end())
    if (auto h = t->second.find(path); h != t->second.end())
      hits = h->second;
  return static_cast<double>(hits) / static_cast<double>(count);
}

std::map<std::string, double> PathWeights::aimRates() const {
  std::map<std::string, double> rates;
  if (!focus_.empty()) {
    rates[focus_] = 1;
    return rates;
  }
  if (floor_ <= 0)
    return rates;
  double aimed = 0;
  for (const std::string &p : aimablePaths()) {
    double natural = rate("", p);
    double share = natural * (1 - aimed);
    for (const auto &[q, r] : rates)
      share += r * rate(q, p);
    if (share >= floor_)
      continue;
    double gain = std::max(0.05, rate(p, p) - natural);
    double r = std::min((floor_ - share) / gain, kMaxAimed - aimed);
    if (r <= 0)
      continue;
    rates[p] = r;
    aimed += r;
  }
  return rates;
}

std::string PathWeights::aimFor(uint64_t seed, int64_t index) const {
  if (!focus_.empty())
    return focus_;
  std::map<std::string, double> rates = aimRates();
  if (rates.empty())
    return "";
  double u = static_cast<double>(mix(seed ^ mix(static_cast<uint64_t>(index))) >> 11) * 0x1.0p-53;
  for (const std::string &p : aimablePaths()) {
    auto it = rates.find(p);
    if (it == rates.end())
      continue;
    if (u < it->second)
      return p;
    u -= it->second;
  }
  return "";
}

} // namespace tc::fuzz
