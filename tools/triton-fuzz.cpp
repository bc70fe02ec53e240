//===- triton-fuzz.cpp - The differential fuzzer ---------------------------===//
//
//   triton-fuzz [--time 8h] [--seed N] [--devices all|0,2] [--shard K/N] [--out DIR]
//   triton-fuzz --cpu-only [--time 2m] [--seed N] [--workers N] [--out DIR]
//   triton-fuzz --target triton [--triton-mode gpu|interp] [--time 2m] [--out DIR]
//   triton-fuzz --seed N --replay I[,J...] [--print] [--cpu-only]
//   triton-fuzz merge DIR... --out FILE.html [--known FILE] [--cases-dir D]
//
// Generates well-typed, UB-free kernels (fuzz/Generator.h) and checks each in
// a worker process until the time is up: by default on the GPU against the
// reference interpreter (fuzz/GpuOracle.h), with --cpu-only the properties
// that need no GPU (fuzz/Oracle.h), with --target triton against Triton
// (fuzz/TritonOracle.h: on the GPU or on Triton's interpreter). Kernel I of a campaign is generated from
// (seed, I) alone, so `--seed N --replay I` finds it again, and a campaign
// killed at any point resumes from its journal in DIR (fuzz/Campaign.h). Each
// failure is shrunk and reduced, and stored as a conformance suite file
// (conformance/FORMAT.md) under DIR/cases; DIR/report.html sums up.
//
// Exit codes: 0 no failure; 1 a property failed or the generator has a bug;
// 3 usage error; 4 no CUDA device (GPU mode), or no Triton (--target triton).
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"
#include "codegen/Cuda.h"
#include "fuzz/Campaign.h"
#include "fuzz/Emi.h"
#include "gpu/GpuBackend.h"
#include "runtime/TritonBackend.h"
#include "support/FileIO.h"
#include "support/PlantedBugs.h"
#include "support/ToolMain.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace tc;
using namespace tc::fuzz;

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitUsage = 3;
// --batch: kernels per worker request, compiled into one module. See
// docs/fuzz.md ("Batches") for the measurement behind the default.
constexpr int kDefaultBatch = 32, kMaxBatch = 256;

struct Flags {
  bool cpuOnly = false, compileOnly = false, print = false, worker = false, reducer = false,
       stopOnFailure = false;
  bool listPlanted = false;
  std::string time = "2m", shrinkTime = "60s", hangTimeout = "60s", out;
  uint64_t seed = 1;
  int64_t maxKernels = 0;
  unsigned threads = 4, numWarps = 4;
  unsigned numStages = codegen::Options{}.numStages;
  int workers = 1, workersPerDevice = 0, device = 0;
  std::optional<int> batch; // --batch (unset: the mode's default)
  std::string devices = "all", shard = "0/1", disableOpt, casesDir, knownFile;
  std::vector<int64_t> replay; // --replay I[,J...]
  std::string plantFeature; // testing the failure path: kernels with it "fail"
  double emiRate = 0.1;     // the share of kernels also checked with an EMI variant
  std::string focus;        // --focus PATH: every kernel aims at that fast path
  double pathFloor = 0.06;  // --path-floor: the share each fast path is steered to
  int repeats = GpuOracleOptions{}.repeats;                   // --repeats
  double stageVariantRate = GpuOracleOptions{}.stageVariantRate; // --stage-variant-rate
  double warpsVariantRate = GpuOracleOptions{}.warpsVariantRate; // --warps-variant-rate
  bool ulpSensitivity = false; // cpu-only: property (f)
  std::string target = "gpu";     // --target gpu|triton
  std::string tritonMode = "gpu"; // --triton-mode gpu|interp (interpret)
  std::string tritonReproDir;     // (hidden) where a worker writes findings' scripts
  bool reportKnownTritonBugs = false; // --report-known-triton-bugs
  std::string script;             // --replay --target triton --script FILE
};

// The batch of --target triton: Triton compiles and runs one kernel at a time;
// a few kernels per request only save round trips.
constexpr int kTritonBatch = 4;

struct MergeFlags {
  std::vector<std::string> dirs;
  std::string out, knownFile, casesDir;
  bool force = false;
};

// "90", "30s", "2m", "1h" -> seconds.
std::optional<double> parseDuration(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  double scale = 1;
  std::string num = text;
  switch (text.back()) {
  case 's': num.pop_back(); break;
  case 'm':
    scale = 60;
    num.pop_back();
    break;
  case 'h':
    scale = 3600;
    num.pop_back();
    break;
  }
  try {
    size_t used = 0;
    double v = std::stod(num, &used);
    // nan, inf, negative and absurd values (more than a year) are errors.
    if (used != num.size() || !std::isfinite(v) || v < 0 || v * scale > 366.0 * 24 * 3600)
      return std::nullopt;
    return v * scale;
  } catch (...) {
    return std::nullopt;
  }
}

int usage(const std::string &message) {
  std::cerr << "triton-fuzz: " << message << "\n";
  return kExitUsage;
}

// The oracles' settings from the flags (the same in the parent and its workers).
std::optional<CheckConfig> checkConfig(const Flags &f, double hangSeconds, std::string &error) {
  CheckConfig c;
  c.cpuOnly = f.cpuOnly;
  c.seed = f.seed;
  c.plantFeature = f.plantFeature;
  c.cpu.threads = f.threads;
  c.cpu.maxSeconds = std::min(20.0, std::max(1.0, hangSeconds / 4));
  c.gpu.device = f.device;
  c.gpu.compileOnly = f.compileOnly;
  if (f.cpuOnly && f.compileOnly) {
    error = "--cpu-only and --compile-only exclude each other";
    return std::nullopt;
  }
  c.gpu.maxSeconds = std::min(20.0, std::max(1.0, hangSeconds / 3));
  c.gpu.codegen.numWarps = f.numWarps;
  c.policy.numWarps = static_cast<int>(f.numWarps); // the attention kernels' mma.values shape
  c.gpu.codegen.numStages = f.numStages; // before --disable-opt: pipeline means 1
  if (!validNumWarps(f.numWarps)) {
    error = "bad --num-warps " + std::to_string(f.numWarps) + " (1, 2, 4, 8, 16 or 32)";
    return std::nullopt;
  }
  if (!(f.emiRate >= 0 && f.emiRate <= 1)) {
    error = "bad --emi-rate " + std::to_string(f.emiRate) + " (a share from 0 to 1)";
    return std::nullopt;
  }
  c.cpu.emiRate = c.gpu.emiRate = f.emiRate;
  if (f.repeats < 0 || f.repeats > 100) {
    error = "bad --repeats " + std::to_string(f.repeats) + " (0 to 100)";
    return std::nullopt;
  }
  if (!(f.stageVariantRate >= 0 && f.stageVariantRate <= 1)) {
    error = "bad --stage-variant-rate (a share from 0 to 1)";
    return std::nullopt;
  }
  if (!(f.warpsVariantRate >= 0 && f.warpsVariantRate <= 1)) {
    error = "bad --warps-variant-rate (a share from 0 to 1)";
    return std::nullopt;
  }
  c.gpu.repeats = f.repeats;
  // The reducer checks every candidate with its stage variant, so that a
  // failure that shows only there reduces (as EMI findings do with their variant).
  c.gpu.stageVariantRate = f.reducer ? 1 : f.stageVariantRate;
  c.gpu.warpsVariantRate = f.reducer ? 1 : f.warpsVariantRate; // (likewise)
  if (f.ulpSensitivity && !f.cpuOnly) {
    error = "--ulp-sensitivity needs --cpu-only (a GPU campaign discards every ULP-sensitive "
            "kernel the GPU differs on)";
    return std::nullopt;
  }
  c.cpu.ulpStability = f.ulpSensitivity;
  if (!f.focus.empty()) {
    const std::vector<std::string> &paths = focusTargets();
    if (std::find(paths.begin(), paths.end(), f.focus) == paths.end()) {
      std::string list;
      for (const std::string &p : paths)
        list += (list.empty() ? "" : ", ") + p;
      error = "unknown --focus path '" + f.focus + "' (a campaign can aim at: " + list + ")";
      return std::nullopt;
    }
    c.policy.aim = f.focus; // --replay; a campaign's workers get each kernel's aim
  }
  if (!(f.pathFloor >= 0 && f.pathFloor <= 0.5)) {
    std::ostringstream v;
    v << f.pathFloor;
    error = "bad --path-floor " + v.str() + " (a share from 0 to 0.5; 0: no steering)";
    return std::nullopt;
  }
  if (!codegen::disableOptimizations(c.gpu.codegen, f.disableOpt, error))
    return std::nullopt;
  if (f.target != "gpu" && f.target != "triton") {
    error = "bad --target '" + f.target + "' (gpu: our GPU backend; triton: Triton)";
    return std::nullopt;
  }
  if (f.target == "triton") {
    if (f.cpuOnly || f.compileOnly) {
      error = "--target triton runs Triton: it excludes --cpu-only and --compile-only";
      return std::nullopt;
    }
    if (!f.disableOpt.empty() || !f.focus.empty()) {
      error = "--disable-opt and --focus are our GPU backend's: not with --target triton";
      return std::nullopt;
    }
    std::string mode = f.tritonMode == "interp" ? "interpret" : f.tritonMode;
    if (mode != "gpu" && mode != "interpret") {
      error = "bad --triton-mode '" + f.tritonMode + "' (gpu, or interp: Triton's interpreter)";
      return std::nullopt;
    }
    c.triton.enabled = true;
    c.triton.mode = mode;
    c.triton.numWarps = f.numWarps;
    c.triton.numStages = f.numStages;
    c.triton.maxSeconds = std::min(60.0, std::max(5.0, hangSeconds / 2));
    c.triton.emiRate = f.emiRate;
    c.triton.reproDir = f.tritonReproDir;
    c.triton.reportKnownBugs = f.reportKnownTritonBugs;
  }
  return c;
}

// A rate as a flag's value, as `<<` writes it (0.25, not 0.250000).
std::string shortest(double rate) {
  std::ostringstream os;
  os << rate;
  return os.str();
}

// The flags a worker is started with (the campaign adds --device D).
std::vector<std::string> workerArgs(const Flags &f) {
  std::vector<std::string> a = {"--worker",
                                "--seed",
                                std::to_string(f.seed),
                                "--threads",
                                std::to_string(f.threads),
                                "--num-warps",
                                std::to_string(f.numWarps),
                                "--num-stages",
                                std::to_string(f.numStages),
                                "--hang-timeout",
                                f.hangTimeout};
  if (f.cpuOnly)
    a.push_back("--cpu-only");
  if (f.compileOnly)
    a.push_back("--compile-only");
  if (!f.disableOpt.empty())
    a.insert(a.end(), {"--disable-opt", f.disableOpt});
  if (!f.plantFeature.empty())
    a.insert(a.end(), {"--fail-on-feature", f.plantFeature});
  if (f.emiRate != Flags{}.emiRate)
    a.insert(a.end(), {"--emi-rate", std::to_string(f.emiRate)});
  if (f.ulpSensitivity)
    a.push_back("--ulp-sensitivity");
  if (f.target == "triton")
    a.insert(a.end(), {"--target", "triton", "--triton-mode", f.tritonMode});
  if (f.target == "triton" && f.reportKnownTritonBugs)
    a.push_back("--report-known-triton-bugs");
  if (f.repeats != Flags{}.repeats)
    a.insert(a.end(), {"--repeats", std::to_string(f.repeats)});
  if (f.stageVariantRate != Flags{}.stageVariantRate)
    a.insert(a.end(), {"--stage-variant-rate", shortest(f.stageVariantRate)});
  if (f.warpsVariantRate != Flags{}.warpsVariantRate)
    a.insert(a.end(), {"--warps-variant-rate", shortest(f.warpsVariantRate)});
  return a;
}

// The flags of the reproduce command that differ from the defaults.
std::string reproduceFlags(const Flags &f) {
  std::string s;
  if (f.cpuOnly)
    s += " --cpu-only";
  if (f.target == "triton")
    s += " --target triton --triton-mode " + f.tritonMode;
  if (f.target == "triton" && f.reportKnownTritonBugs)
    s += " --report-known-triton-bugs";
  if (f.compileOnly)
    s += " --compile-only";
  if (f.cpuOnly && f.threads != 4)
    s += " --threads " + std::to_string(f.threads);
  if (!f.cpuOnly && f.numWarps != 4)
    s += " --num-warps " + std::to_string(f.numWarps);
  if (!f.cpuOnly && f.numStages != codegen::Options{}.numStages)
    s += " --num-stages " + std::to_string(f.numStages);
  if (!f.cpuOnly && !f.disableOpt.empty())
    s += " --disable-opt " + f.disableOpt;
  if (!f.plantFeature.empty())
    s += " --fail-on-feature " + f.plantFeature;
  if (f.emiRate != Flags{}.emiRate)
    s += " --emi-rate " + shortest(f.emiRate);
  if (f.ulpSensitivity)
    s += " --ulp-sensitivity";
  if (!f.cpuOnly && f.repeats != Flags{}.repeats)
    s += " --repeats " + std::to_string(f.repeats);
  if (!f.cpuOnly && f.stageVariantRate != Flags{}.stageVariantRate)
    s += " --stage-variant-rate " + shortest(f.stageVariantRate);
  if (!f.cpuOnly && f.warpsVariantRate != Flags{}.warpsVariantRate)
    s += " --warps-variant-rate " + shortest(f.warpsVariantRate);
  return s;
}

// --devices all|0,2,...: the device ordinals (counted in a child process).
std::optional<std::vector<int>> resolveDevices(const std::string &spec, int count,
                                               std::string &error) {
  std::vector<int> out;
  if (spec == "all") {
    for (int d = 0; d < count; ++d)
      out.push_back(d);
    return out;
  }
  std::stringstream in(spec);
  std::string item;
  while (std::getline(in, item, ',')) {
    try {
      size_t used = 0;
      int d = std::stoi(item, &used);
      if (used != item.size() || d < 0 || d >= count)
        throw std::out_of_range("device");
      out.push_back(d);
    } catch (const std::exception &) {
      error = "bad --devices entry '" + item + "' (this machine has " + std::to_string(count) +
              " CUDA device(s): use all or ordinals 0.." + std::to_string(count - 1) + ")";
      return std::nullopt;
    }
  }
  if (out.empty())
    error = "--devices lists no device";
  return out.empty() ? std::nullopt : std::optional(out);
}

// One kernel of --replay; `checker` is made at the first kernel checked and
// serves the others (one Triton worker, one GPU context).
int replayOne(const Flags &f, const CheckConfig &cfg, int64_t index,
              std::unique_ptr<Checker> &checker) {
  // Generating and printing the kernel needs no GPU; only checking it does.
  std::string why;
  bool noDevice =
      !cfg.cpuOnly && !cfg.gpu.compileOnly && !cfg.triton.enabled && !gpu::cudaAvailable(&why);
  if (noDevice && !f.print) {
    std::cerr << "triton-fuzz: " << why << "\n";
    return gpu::kExitNoDevice;
  }
  FuzzKernel k = generateKernel(cfg.policy, kernelSeed(f.seed, index), 100);
  if (f.print) {
    std::cout << describeKernel(k);
    if (emiSelected(k, f.emiRate))
      if (std::optional<FuzzKernel> v = emiVariant(k, kernelHash(k)))
        std::cout << "// its EMI variant (--emi-rate):\n" << describeKernel(*v);
  }
  if (noDevice) {
    std::cout.flush();
    std::cerr << "triton-fuzz: kernel " << index << " printed, not checked: " << why
              << "\nnote: --cpu-only checks it on the interpreter alone\n";
    return gpu::kExitNoDevice;
  }
  if (!f.script.empty()) {
    if (!cfg.triton.enabled)
      return usage("--script writes a Triton script: it needs --target triton");
    std::map<std::string, HostArray> want;
    std::string error;
    if (!interpReference(k, 20, want, error)) {
      std::cerr << "triton-fuzz: kernel " << index << " has no reference result: " << error << "\n";
      return kExitFailed;
    }
    std::string script = tritonScript(k, want, "triton-fuzz --seed " + std::to_string(f.seed) +
                                                   " --replay " + std::to_string(index),
                                      cfg.triton.numWarps, cfg.triton.numStages, error);
    if (script.empty() || !writeFileAtomic(f.script, script, error)) {
      std::cerr << "triton-fuzz: " << error << "\n";
      return kExitFailed;
    }
    std::cout << "wrote " << f.script << "\n";
  }
  if (!checker) {
    checker = makeChecker(cfg);
    if (!cfg.cpuOnly)
      std::cout << "device: " << checker->device() << "\n";
  }
  OracleResult r = checker->check(k);
  const char *names[] = {"pass", "discard", "generator bug", "FAIL"};
  std::cout << "kernel " << index << ": " << names[static_cast<int>(r.status)]
            << (r.property.empty() ? "" : " (" + r.property + ")") << "\n"
            << (r.message.empty() ? "" : r.message + "\n");
  return r.status == OracleResult::Status::Fail || r.status == OracleResult::Status::GeneratorBug
             ? kExitFailed
             : kExitOk;
}

// --replay I[,J...]: each kernel in turn, in this process; exit 1 when any fails.
int replay(const Flags &f, const CheckConfig &cfg) {
  if (!f.script.empty() && f.replay.size() > 1)
    return usage("--script writes one kernel's script: give --replay one index");
  std::unique_ptr<Checker> checker;
  int rc = kExitOk;
  for (size_t i = 0; i < f.replay.size(); ++i) {
    if (checker && checker->mustExit()) { // CUDA is poisoned for this process
      std::cerr << "triton-fuzz: the GPU context is lost; not checked: kernels";
      for (size_t j = i; j < f.replay.size(); ++j)
        std::cerr << (j > i ? "," : " ") << f.replay[j];
      std::cerr << " (replay them in another process)\n";
      return kExitFailed;
    }
    int r = replayOne(f, cfg, f.replay[i], checker);
    if (r == gpu::kExitNoDevice && !f.print)
      return r; // (--print: each kernel printed, not checked)
    if (r != kExitOk && rc != kExitFailed)
      rc = r;
  }
  return rc;
}

// A folder for the state of a campaign run without --out.
std::string temporaryOut() {
  std::string tmpl = (fs::temp_directory_path() / "triton-fuzz-XXXXXX").string();
  if (!::mkdtemp(tmpl.data()))
    return "fuzz-out";
  return tmpl;
}

int campaign(const Flags &f, const CheckConfig &cfg, double seconds, double shrink, double hang) {
  CampaignOptions o;
  o.check = cfg;
  std::string error;
  std::optional<Shard> shard = parseShard(f.shard, error);
  if (!shard)
    return usage(error);
  if (f.batch && (*f.batch < 1 || *f.batch > kMaxBatch))
    return usage("bad --batch " + std::to_string(*f.batch) + " (1 to " + std::to_string(kMaxBatch) +
                 ")");

  o.shard = *shard;
  o.out = f.out.empty() ? temporaryOut() : f.out;
  if (f.out.empty())
    std::cout << "triton-fuzz: the campaign's state and reports go to " << o.out
              << " (--out DIR keeps them in DIR and lets a killed campaign resume)\n";
  o.seconds = seconds;
  o.shrinkSeconds = shrink;
  o.hangTimeout = hang;
  o.maxKernels = f.maxKernels;
  o.stopOnFailure = f.stopOnFailure;
  o.knownFile = f.knownFile;
  o.casesDir = !f.casesDir.empty()                     ? f.casesDir
               : fs::is_directory("conformance/cases") ? "conformance/cases"
                                                       : "";
  o.workerArgs = workerArgs(f);
  o.reproduceFlags = reproduceFlags(f);
  o.focus = f.focus;
  o.pathFloor = f.pathFloor;
  o.batch = f.batch ? *f.batch : f.cpuOnly ? 1 : kDefaultBatch;
  int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (cfg.triton.enabled) {
    // One Triton worker (a Python process) behind each campaign worker.
    std::string why;
    TritonOptions to;
    to.mode = cfg.triton.mode;
    if (!createTritonBackend(to)->available(&why)) {
      std::cerr << "triton-fuzz: " << why << "\n";
      return gpu::kExitNoDevice;
    }
    o.devices = {0};
    o.workersPerDevice = f.workersPerDevice > 0 ? f.workersPerDevice : hw;
    o.batch = f.batch ? *f.batch : kTritonBatch;
    o.pathFloor = 0; // the fast paths are our GPU backend's
    // Findings' standalone Triton scripts (the reducer writes them).
    o.workerArgs.insert(o.workerArgs.end(),
                        {"--triton-repro-dir", (fs::path(o.out) / "triton").string()});
    return runCampaign(o);
  }
  if (f.cpuOnly) {
    if (f.workers < 1)
      return usage("--workers must be at least 1");
    o.cpuWorkers = f.workers;
    return runCampaign(o);
  }
  if (f.compileOnly) {
    // No CUDA: one "device" whose workers compile (a core each by default).
    o.devices = {0};
    o.workersPerDevice = f.workersPerDevice > 0 ? f.workersPerDevice : hw;
    return runCampaign(o);
  }
  std::string why;
  int count = gpu::cudaDeviceCount(&why);
  if (count == 0) {
    std::cerr << "triton-fuzz: " << why << "\n";
    return gpu::kExitNoDevice;
  }
  std::optional<std::vector<int>> devices = resolveDevices(f.devices, count, error);
  if (!devices)
    return usage(error);
  o.devices = *devices;
  // A worker keeps a core busy (the GPU waits on the CPU-side stages): one per core.
  o.workersPerDevice = f.workersPerDevice > 0
                           ? f.workersPerDevice
                           : std::max(1, hw / static_cast<int>(o.devices.size()));
  return runCampaign(o);
}

int merge(const MergeFlags &m) {
  std::vector<CampaignSummary> parts;
  std::vector<std::string> inputs, texts;
  for (const std::string &dir : m.dirs) {
    fs::path file = fs::path(dir) / "campaign.json";
    std::string text, error;
    std::error_code ec;
    if (!fs::exists(file, ec))
      return usage("merge: " + file.string() + " is missing (is " + dir +
                   " a finished campaign's --out folder?)");
    if (!readFileCapped(file.string(), kMaxJsonFileBytes, text, error))
      return usage("merge: " + error + " (is " + dir + " a finished campaign's --out folder?)");
    CampaignSummary s;
    if (!summaryFromJson(text, s, error))
      return usage("merge: " + file.string() + ": " + error);
    // The same campaign twice (a folder and its copy) would count every kernel
    // twice; two campaigns of one seed and shard checked the same kernels.
    for (size_t i = 0; i < parts.size(); ++i) {
      const CampaignSummary &o = parts[i];
      if (o.seed != s.seed || o.shardIndex != s.shardIndex || o.shardCount != s.shardCount ||
          o.mode != s.mode)
        continue;
      if (texts[i] == text || sameFile(inputs[i], file.string()))
        return usage("merge: " + dir + " and " + m.dirs[i] + " hold the same campaign (seed " +
                     std::to_string(s.seed) + ", started " + s.started + "); give it once");
      std::cerr << "triton-fuzz: warning: merge: " << dir << " and " << m.dirs[i]
                << " are campaigns of the same seed " << s.seed
                << " and shard: their first kernels are the same ones, counted in each\n";
    }
    parts.push_back(std::move(s));
    inputs.push_back(file.string());
    texts.push_back(std::move(text));
  }
  fs::path html(m.out), md = fs::path(m.out).replace_extension(".md"),
                        json = html.parent_path() / "merged.json";
  if (html.extension() == ".md" || html.filename() == "merged.json")
    return usage("merge: --out names the HTML report (FILE.html); FILE.md and merged.json go "
                 "beside it");
  std::error_code ec;
  if (!html.parent_path().empty())
    fs::create_directories(html.parent_path(), ec);
  for (const fs::path &p : {html, md, json})
    if (std::string why = checkOutputPath(p.string(), inputs, m.force); !why.empty())
      return usage("merge: " + why);
  CampaignSummary merged = mergeSummaries(parts);
  std::set<std::string> known = knownSignatures(m.casesDir, m.knownFile);
  std::string error;
  if (!writeFileAtomic(json.string(), summaryToJson(merged), error) ||
      !writeFileAtomic(md.string(), markdownReport(merged, known), error) ||
      !writeFileAtomic(html.string(), htmlReport(merged, known), error))
    return usage("merge: " + error);
  std::cout << "merged " << parts.size() << " campaigns: kernels " << merged.kernels << ", passed "
            << merged.passed << ", discards " << merged.discards << ", failures " << merged.failures
            << " (" << signatureCount(merged) << " signatures), generator bugs "
            << merged.generatorBugs << ", worker restarts " << merged.workerRestarts << "\n"
            << "wrote " << html.string() << ", " << md.string() << ", " << json.string() << "\n";
  return kExitOk;
}

// --list-planted-bugs: "name<TAB>where<TAB>description" per line; exit 3 (with
// a message) when this build cannot plant them, so scripts refuse it.
int listPlantedBugs() {
  for (const tc::PlantedBugInfo &b : tc::plantedBugList())
    std::cout << b.name << '\t' << b.where << '\t' << b.description << '\n';
#ifdef TC_PLANTED_BUGS
  return kExitOk;
#else
  std::cerr << "triton-fuzz: not built with TC_PLANTED_BUGS (configure with "
               "-DTC_PLANTED_BUGS=ON to plant them)\n";
  return kExitUsage;
#endif
}

// A kernel index: 0 to 2^63-1, never clamped (CLI11 saturates a number past
// int64's range) nor negative.
CLI::Validator kernelIndexValidator() {
  return CLI::Validator(
      [](std::string &text) -> std::string {
        int64_t v = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (ec == std::errc::result_out_of_range)
          return "'" + text + "' is past the largest kernel index, 2^63-1";
        if (ec != std::errc() || end != text.data() + text.size() || v < 0)
          return "'" + text + "' is not a kernel index (an integer, 0 or more)";
        return "";
      },
      "INDEX");
}

void addCampaignOptions(CLI::App &app, Flags &f) {
  app.add_flag("--cpu-only", f.cpuOnly, "Check only the properties that need no GPU");
  app.add_flag("--compile-only", f.compileOnly,
               "No GPU: interpreter, the whole GPU compile pipeline and ptxas, no launch "
               "(profiling the CPU-side stages, CI)");
  app.add_option("--time", f.time,
                 "Campaign length over all restarts: 90, 30s, 2m, 8h (default 2m)");
  app.add_option("--seed", f.seed, "Campaign seed (default 1)")
      ->check(CLI::Validator(
          [](std::string &v) -> std::string {
            uint64_t x = 0;
            auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
            return v.empty() || ec != std::errc() || end != v.data() + v.size()
                       ? "'" + v + "' is not an integer from 0 to 18446744073709551615"
                       : "";
          },
          "UINT64"));
  app.add_option("--out", f.out, "Campaign folder: journal, cases, reports (resumable)");
  app.add_option("--max-kernels", f.maxKernels, "Only kernel indices below N (0: no limit)")
      ->check(kernelIndexValidator());
  app.add_option("--shrink-time", f.shrinkTime, "Time budget for reducing one failure (60s)");
  app.add_option("--hang-timeout", f.hangTimeout, "A kernel not checked by then is a hang (60s)");
  app.add_option("--emi-rate", f.emiRate,
                 "Share of kernels also checked with an EMI variant, 0 to 1 (default 0.1)");
  app.add_flag("--ulp-sensitivity", f.ulpSensitivity,
               "cpu-only: also fail kernels whose results, with each ULP-bounded math result "
               "one ULP off, would fail the GPU comparison (generator blind spots)");
  app.add_option("--threads", f.threads, "cpu-only: thread count compared with 1 (default 4)");
  app.add_option("--workers", f.workers, "cpu-only: worker processes (default 1)");
  app.add_option("--devices", f.devices, "GPU devices: all, or ordinals 0,2,... (default all)");
  app.add_option("--workers-per-device", f.workersPerDevice,
                 "Workers per GPU (default: cores / devices; --compile-only: cores)");
  app.add_option("--batch", f.batch,
                 "GPU and --compile-only: kernels checked together, compiled into one module "
                 "(one PTX, one JIT load; default " +
                     std::to_string(kDefaultBatch) +
                     "; 1: one module per kernel); --cpu-only: kernels per request (default 1)");
  app.add_option("--num-warps", f.numWarps, "GPU: threads per program / 32 (default 4)");
  app.add_option("--num-stages", f.numStages,
                 "GPU: software-pipelining stages of the loads in loops, 1 to 8 (default " +
                     std::to_string(f.numStages) + "; --disable-opt pipeline means 1)")
      ->check(CLI::Range(1u, 8u));
  app.add_option("--disable-opt", f.disableOpt,
                 "GPU: optimisations to switch off (e.g. mma,remat,pipeline)");
  app.add_option("--focus", f.focus,
                 "Aim every kernel at one fast path of the GPU backend: wgmma, mma.sync, "
                 "mma.loop, pipeline, mma.values or mma.values.pipeline, or make every kernel "
                 "FlashAttention-like: attention "
                 "(with --replay: the kernel a campaign aimed at it)");
  app.add_option("--path-floor", f.pathFloor,
                 "GPU and --compile-only: steer each fast path (wgmma, mma.sync, mma.loop, "
                 "pipeline, mma.values, mma.values.pipeline) to at least this share of the compiled kernels, 0 to 0.5 (default "
                 "0.06; 0: no steering)");
  app.add_option("--repeats", f.repeats,
                 "GPU: runs more of each kernel on a timing-sensitive path (wgmma, pipelined or "
                 "mma loops), each compared (default " + std::to_string(f.repeats) + "; 0: none)");
  app.add_option("--stage-variant-rate", f.stageVariantRate,
                 "GPU: share of those kernels also run with another --num-stages (2, 3 or 4), "
                 "0 to 1 (default 0.25)");
  app.add_option("--warps-variant-rate", f.warpsVariantRate,
                 "GPU and --compile-only: share of the kernels also run (compiled) with "
                 "--num-warps 8 (4 when --num-warps is 8), 0 to 1 (default 0.08)");
  app.add_option("--shard", f.shard, "Check only indices I with I % N == K (K/N)");
  app.add_flag("--stop-on-failure", f.stopOnFailure, "Stop after the first failing kernel");
  app.add_option("--cases-dir", f.casesDir, "Known findings' cases (default conformance/cases)")
      ->check(CLI::ExistingDirectory);
  app.add_option("--known", f.knownFile, "A file of known signatures, one per line")
      ->check(CLI::ExistingFile);
  app.add_option("--replay", f.replay,
                 "Check only kernel I of the campaign (I,J,...: each in turn), in this process")
      ->delimiter(',')
      ->check(kernelIndexValidator());
  app.add_flag("--print", f.print,
               "With --replay: print the kernel (needs no GPU: without one it is printed, "
               "not checked, exit 4)");
  app.add_option("--fail-on-feature", f.plantFeature,
                 "Testing the failure path: count every kernel with this feature as failing");
  app.add_flag("--list-planted-bugs", f.listPlanted,
               "Print the bugs a -DTC_PLANTED_BUGS=ON build can plant ($TC_PLANT_BUG)");
  app.add_option("--target", f.target,
                 "What runs the kernels: gpu (our GPU backend, default) or triton (Triton, "
                 "through the triton backend's workers; docs/fuzz.md, \"Against Triton\")");
  app.add_option("--triton-mode", f.tritonMode,
                 "--target triton: gpu (Triton on the GPU, default) or interp (Triton's "
                 "interpreter, TRITON_INTERPRET=1: no GPU needed)");
  app.add_flag("--report-known-triton-bugs", f.reportKnownTritonBugs,
               "--target triton: report a compile failure that is a known bug of the Triton in "
               "use (fixed in a later release) as a failure, not a triton-known-bug discard");
  app.add_option("--triton-repro-dir", f.tritonReproDir, "")->group("");
  app.add_option("--script", f.script,
                 "With --replay and --target triton: also write the kernel as a standalone "
                 "Triton script (torch and triton only) that checks Triton's result");
  app.add_flag("--worker", f.worker, "")->group("");
  app.add_flag("--reducer", f.reducer, "")->group("");
  app.add_option("--device", f.device, "")->group("");
}

} // namespace

/// GPU runs make their modules with ptxas where that pays (TC_CUBIN=auto,
/// codegen/Cuda.h) when $TC_CUBIN is unset and a ptxas is found: on an H200
/// campaign 1.6x the kernels a second of the driver's JIT, which compiles
/// every wgmma kernel twice (its module and the ptxas-repair check). The
/// workers, replays and the reducer inherit the environment. TC_CUBIN=driver
/// keeps the JIT.
static void defaultToCubins() {
  if (const char *m = std::getenv("TC_CUBIN"); m && *m)
    return;
  std::string ptxas = codegen::findPtxas();
  if (ptxas.empty() || ::access(ptxas.c_str(), X_OK) != 0)
    return;
  ::setenv("TC_CUBIN", "auto", 1);
  cuda::setImageMode(cuda::ImageMode::Auto);
}

static int toolMain(int argc, char **argv) {
  Flags f;
  MergeFlags m;
  CLI::App app("triton-fuzz: the differential fuzzer (interpreter vs GPU; --cpu-only: the "
               "properties that need no GPU; --target triton: interpreter vs Triton)");
  addCampaignOptions(app, f);
  CLI::App *mergeCmd = app.add_subcommand("merge", "Merge campaign folders into one report");
  mergeCmd->add_option("dirs", m.dirs, "Campaign folders (each with campaign.json)")->required();
  mergeCmd->add_option("--out", m.out, "The merged HTML report (.md and merged.json beside it)")
      ->required();
  mergeCmd->add_flag("--force", m.force, "Replace existing report files");
  mergeCmd->add_option("--known", m.knownFile, "A file of known signatures, one per line")
      ->check(CLI::ExistingFile);
  mergeCmd
      ->add_option("--cases-dir", m.casesDir, "Known findings' cases (default conformance/cases)")
      ->check(CLI::ExistingDirectory);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  if (f.listPlanted)
    return listPlantedBugs();
  if (mergeCmd->parsed()) {
    if (m.casesDir.empty() && fs::is_directory("conformance/cases"))
      m.casesDir = "conformance/cases";
    return merge(m);
  }
  std::optional<double> seconds = parseDuration(f.time), shrink = parseDuration(f.shrinkTime),
                        hang = parseDuration(f.hangTimeout);
  if (!seconds || !shrink || !hang || *hang <= 0)
    return usage("bad duration (use e.g. 90, 30s, 2m, 1h)");
  std::string error;
  std::optional<CheckConfig> cfg = checkConfig(f, *hang, error);
  if (!cfg)
    return usage(error);
  if (!f.cpuOnly && !f.compileOnly && !cfg->triton.enabled)
    defaultToCubins();
  if (f.worker)
    return runWorker(*cfg, !f.reducer);
  if (!f.replay.empty())
    return replay(f, *cfg);
  return campaign(f, *cfg, *seconds, *shrink, *hang);
}

int main(int argc, char **argv) {
  return tc::guardedMain("triton-fuzz", [&] { return toolMain(argc, argv); });
}
