//===- triton-fuzz.cpp - The differential fuzzer ---------------------------===//
//
//   triton-fuzz --cpu-only [--time 2m] [--seed N] [--out DIR] [--max-kernels N]
//       [--shrink-time 20s] [--threads 4] [--replay I [--print]]
//
// Generates well-typed, UB-free kernels (fuzz/Generator.h) and checks the
// properties that need no GPU on each (fuzz/Oracle.h) until the time is up:
// the IR round-trips through print/parse, the pass pipeline does not change
// results, and neither does the interpreter's thread count. Kernel I of a
// campaign is generated from (seed, I) alone, so `--seed N --replay I`
// finds it again. A kernel that traps on the interpreter is discarded; a
// kernel that does not compile is a generator bug. Each failure is shrunk
// (RapidCheck's shrinks, within --shrink-time; only the first three failures
// of each property) and written to DIR as a conformance suite file
// (/work/shared/CONFORMANCE.md).
//
// Exit codes: 0 no failure; 1 a property failed or the generator has a bug;
// 3 usage error (also: the GPU campaign, not supported yet).
//
//===----------------------------------------------------------------------===//
#include "fuzz/Case.h"
#include "fuzz/Generator.h"
#include "fuzz/Oracle.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>

namespace fs = std::filesystem;
using namespace tc::fuzz;

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitUsage = 3;
constexpr int64_t kMaxShrunkPerProperty = 3;

struct Flags {
  bool cpuOnly = false, print = false;
  std::string time = "2m", shrinkTime = "20s", out = "fuzz-out";
  uint64_t seed = 1;
  int64_t maxKernels = 0;
  unsigned threads = 4;
  std::optional<int64_t> replay;
  std::string plantFeature; // testing the failure path: kernels with it "fail"
};

// "90", "30s", "2m", "1h" -> seconds.
std::optional<double> parseDuration(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  double scale = 1;
  std::string num = text;
  switch (text.back()) {
  case 's': num.pop_back(); break;
  case 'm': scale = 60; num.pop_back(); break;
  case 'h': scale = 3600; num.pop_back(); break;
  }
  try {
    size_t used = 0;
    double v = std::stod(num, &used);
    if (used != num.size() || v < 0)
      return std::nullopt;
    return v * scale;
  } catch (...) {
    return std::nullopt;
  }
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Kernel `index` of the campaign `seed`: its RapidCheck seed and size.
uint64_t kernelSeed(uint64_t seed, int64_t index) {
  return splitmix64(splitmix64(seed) ^ static_cast<uint64_t>(index));
}
int kernelSize(int64_t) { return 100; } // rc::gen::inRange scales with size: keep it full

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Campaign {
  Flags flags;
  GenPolicy policy;
  OracleOptions oracle;
  double seconds = 120, shrinkSeconds = 20;
  int64_t kernels = 0, passed = 0, discards = 0, failures = 0, generatorBugs = 0;
  std::map<std::string, int64_t> features, discardKinds, failedProperties;
  std::vector<std::string> discardSamples;

  std::string reproduce(int64_t index) const {
    return "triton-fuzz --cpu-only --seed " + std::to_string(flags.seed) + " --replay " +
           std::to_string(index) + " --print";
  }
  OracleResult check(const FuzzKernel &k) const;
  void record(int64_t index, const FuzzKernel &k, const OracleResult &r);
  void fail(int64_t index, const FuzzKernel &k, const OracleResult &r);
  void progress(double elapsed) const;
  void summary(double elapsed) const;
};

void writeFile(const fs::path &path, const std::string &text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream(path) << text;
  std::cout << "triton-fuzz: wrote " << path.string() << "\n";
}

// The oracle, plus the planted failure of --fail-on-feature.
OracleResult Campaign::check(const FuzzKernel &k) const {
  OracleResult r = checkKernel(k, oracle);
  if (r.status == OracleResult::Status::Pass && !flags.plantFeature.empty() &&
      std::count(k.features.begin(), k.features.end(), flags.plantFeature)) {
    r.status = OracleResult::Status::Fail;
    r.property = "planted";
    r.message = "planted failure: the kernel uses feature " + flags.plantFeature;
  }
  return r;
}

void Campaign::record(int64_t index, const FuzzKernel &k, const OracleResult &r) {
  ++kernels;
  for (const std::string &f : k.features)
    ++features[f];
  switch (r.status) {
  case OracleResult::Status::Pass:
    ++passed;
    return;
  case OracleResult::Status::Discard:
    ++discards;
    ++discardKinds[r.property];
    if (discardSamples.size() < 3)
      discardSamples.push_back("kernel " + std::to_string(index) + ": " + r.message + "\n" +
                               describeKernel(k));
    return;
  case OracleResult::Status::GeneratorBug:
    ++generatorBugs;
    std::cout << "triton-fuzz: GENERATOR BUG (kernel " << index << " does not "
              << (r.property == "compile" ? "compile" : "launch") << "):\n"
              << r.message << "\n" << describeKernel(k) << "reproduce: " << reproduce(index) << "\n";
    writeFile(fs::path(flags.out) / ("generator-bug-" + std::to_string(index) + ".tc"),
              describeKernel(k) + "/* " + r.message + " */\n");
    return;
  case OracleResult::Status::Fail:
    fail(index, k, r);
    return;
  }
}

void Campaign::fail(int64_t index, const FuzzKernel &k, const OracleResult &r) {
  ++failures;
  ++failedProperties[r.property];
  std::cout << "triton-fuzz: FAILURE of property '" << r.property << "' on kernel " << index
            << ": " << r.message.substr(0, 1000) << "\n";
  int steps = 0;
  auto stillFails = [&](const FuzzKernel &c) {
    OracleResult again = check(c);
    return again.status == OracleResult::Status::Fail && again.property == r.property;
  };
  // Shrinking costs up to --shrink-time: only the first few failures of each
  // property are shrunk (a systematic bug would otherwise eat the campaign).
  FuzzKernel small = failedProperties[r.property] <= kMaxShrunkPerProperty
                         ? shrinkKernel(policy, kernelSeed(flags.seed, index), kernelSize(index),
                                        stillFails, shrinkSeconds, &steps)
                         : k;
  OracleResult smallResult = check(small);
  if (smallResult.status != OracleResult::Status::Fail) { // flaky: keep the original
    small = k;
    smallResult = r;
  }
  if (failedProperties[r.property] <= kMaxShrunkPerProperty)
    std::cout << "triton-fuzz: shrunk in " << steps << " steps to:\n" << describeKernel(small);
  std::string name = "seed" + std::to_string(flags.seed) + "_kernel" + std::to_string(index) +
                     "_" + r.property;
  writeFile(fs::path(flags.out) / (name + ".json"),
            conformanceCase(small, smallResult,
                            {name, kernelSeed(flags.seed, index), reproduce(index)}));
}

void Campaign::progress(double elapsed) const {
  double rate = elapsed > 0 ? kernels / elapsed : 0;
  double discardPct = kernels ? 100.0 * discards / kernels : 0;
  std::cout << std::fixed << std::setprecision(1) << "[" << elapsed << "s / " << seconds
            << "s] kernels " << kernels << " (" << rate << "/s), discards " << discardPct
            << "%, failures " << failures << ", generator bugs " << generatorBugs << ", remaining "
            << std::max(0.0, seconds - elapsed) << "s" << std::endl;
}

void Campaign::summary(double elapsed) const {
  std::cout << "\ntriton-fuzz summary (seed " << flags.seed << "):\n";
  progress(elapsed);
  std::cout << "passed " << passed << ", discarded " << discards << ", failed " << failures
            << ", generator bugs " << generatorBugs << "\n";
  for (const auto &[p, n] : failedProperties)
    std::cout << "  failed property " << p << ": " << n << "\n";
  for (const auto &[kind, n] : discardKinds)
    std::cout << "  discard (trap " << kind << "): " << n << "\n";
  std::cout << "features (kernels using each):\n";
  for (const auto &[f, n] : features)
    std::cout << "  " << std::setw(6) << std::setprecision(2)
              << (kernels ? 100.0 * n / kernels : 0) << "% " << f << " (" << n << ")\n";
  for (const std::string &s : discardSamples)
    std::cout << "sample of a discarded (trapping) kernel, " << s << "\n";
}

int replay(Campaign &c) {
  int64_t index = *c.flags.replay;
  FuzzKernel k = generateKernel(c.policy, kernelSeed(c.flags.seed, index), kernelSize(index));
  if (c.flags.print)
    std::cout << describeKernel(k);
  OracleResult r = c.check(k);
  const char *names[] = {"pass", "discard", "generator bug", "FAIL"};
  std::cout << "kernel " << index << ": " << names[static_cast<int>(r.status)]
            << (r.property.empty() ? "" : " (" + r.property + ")") << "\n"
            << (r.message.empty() ? "" : r.message + "\n");
  return r.status == OracleResult::Status::Fail || r.status == OracleResult::Status::GeneratorBug
             ? kExitFailed
             : kExitOk;
}

int run(Campaign &c) {
  Clock::time_point start = Clock::now(), lastReport = start;
  for (int64_t index = 0; since(start) < c.seconds; ++index) {
    if (c.flags.maxKernels > 0 && index >= c.flags.maxKernels)
      break;
    FuzzKernel k = generateKernel(c.policy, kernelSeed(c.flags.seed, index), kernelSize(index));
    c.record(index, k, c.check(k));
    if (since(lastReport) >= 5) {
      c.progress(since(start));
      lastReport = Clock::now();
    }
  }
  c.summary(since(start));
  return c.failures || c.generatorBugs ? kExitFailed : kExitOk;
}

} // namespace

int main(int argc, char **argv) {
  Campaign c;
  CLI::App app("triton-fuzz: the differential fuzzer (CPU-only properties for now)");
  app.add_flag("--cpu-only", c.flags.cpuOnly, "Check only the properties that need no GPU");
  app.add_option("--time", c.flags.time, "Campaign length: 90, 30s, 2m, 1h (default 2m)");
  app.add_option("--seed", c.flags.seed, "Campaign seed (default 1)");
  app.add_option("--out", c.flags.out, "Folder for failures (conformance cases)");
  app.add_option("--max-kernels", c.flags.maxKernels, "Stop after this many kernels (0: no limit)");
  app.add_option("--shrink-time", c.flags.shrinkTime, "Time budget for shrinking one failure");
  app.add_option("--threads", c.flags.threads, "Thread count compared with 1 (default 4)");
  app.add_option("--replay", c.flags.replay, "Check only kernel I of the campaign");
  app.add_flag("--print", c.flags.print, "With --replay: print the kernel");
  app.add_option("--fail-on-feature", c.flags.plantFeature,
                 "Testing the failure path: count every kernel with this feature as failing");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (!c.flags.cpuOnly) {
    std::cerr << "triton-fuzz: the GPU campaign is not supported yet (use --cpu-only)\n";
    return kExitUsage;
  }
  std::optional<double> seconds = parseDuration(c.flags.time);
  std::optional<double> shrink = parseDuration(c.flags.shrinkTime);
  if (!seconds || !shrink) {
    std::cerr << "triton-fuzz: bad duration (use e.g. 90, 30s, 2m, 1h)\n";
    return kExitUsage;
  }
  c.seconds = *seconds;
  c.shrinkSeconds = *shrink;
  c.oracle.threads = c.flags.threads;
  return c.flags.replay ? replay(c) : run(c);
}
