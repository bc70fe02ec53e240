//===- interp_bench.cpp - Speed of the reference interpreter -----------===//
//
// Times the interpreter on the kernels and sizes Triton's own interpreter is
// measured on (vector add, softmax, matmul; bench/RESULTS.md) plus a transpose,
// at each thread count asked for, and a plain C++ loop doing the same work.
// Each kernel's output is checked against the plain loop before anything is
// timed. Figures: median of --repeat whole launches (the interpreter runs on the
// caller's arrays; compilation excluded). Every ratio is of figures of this one
// process.
//
//   interp_bench [--threads 1,2,16] [--repeat 5] [--kernel TEXT] [--triton triton_interp.json]
//                [--json out.json] [--src REPO_ROOT] [--no-checks] [--checks-cost]
//                [--only-mode none|coverage|race] [--plain-scaling]
//
// The table has one row per kernel and thread count: the plain loop, ours
// without the race check (the coverage shadow only: RunOptions::raceCheck =
// false), ours / plain, the speed-up over our 1-thread time, ours with the race
// check (the default) and race / no race.
//
// --no-checks times launches without any shadow memory (no coverage, no race
// check); --checks-cost times each kernel with none, the coverage shadow and
// the race check and prints the ratios to none. --only-mode times each kernel
// in that one mode at the last thread count (for a profiler). --plain-scaling
// times only the plain loops, each split into equal parts (elements or rows)
// run on each thread count's threads: the speed-up the machine itself gives
// (memory bandwidth, shared caches, clocks under load), against which the
// interpreter's speed-up is read (matmul's parts start from float copies of A
// and B made before the timing).
//
// With --triton (the JSON of `TRITON_INTERPRET=1 triton_reference.py interp
// --json`), also prints the ratio Triton time / our time (default options).
//
//===----------------------------------------------------------------------===//
#include "interp/InterpreterBackend.h"
#include "runtime/Launch.h"
#include "support/FloatBits.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double timeIt(int repeat, const std::function<void()> &f) {
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    auto start = Clock::now();
    f();
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return median(t);
}

// Random values from a fixed generator (never time on zeros).
void fillRandom(tc::HostArray &a, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < a.numElements(); ++i)
    a.setDouble(i, static_cast<double>(rng() % 2001) / 1000.0 - 1.0);
}

struct Bench {
  std::string name, anchorKey; // key in triton_reference.py's interp JSON
  std::string source;
  tc::DefineList defines;
  std::vector<std::string> grid;
  std::function<void(tc::LaunchArgs &, std::vector<tc::HostArray> &)> bind;
  std::function<void(std::vector<tc::HostArray> &)> plainLoop; // writes the reference output
  size_t outIndex;                                             // which array is the output
  double tolerance;
  // --plain-scaling: the plain loop's items [lo, hi) (elements or rows), after
  // plainSetup (outside the timing); items in all.
  std::function<void(std::vector<tc::HostArray> &, int64_t lo, int64_t hi)> plainRange;
  int64_t plainItems = 0;
  std::function<void(std::vector<tc::HostArray> &)> plainSetup = {};
};

std::string gSourceDir = TC_SOURCE_DIR;
std::string srcDir() {
  return gSourceDir;
}

std::vector<Bench> benches() {
  std::vector<Bench> b;
  const int64_t n = 1 << 20;
  b.push_back({"vector add f32, n = 2^20, 1024-element programs",
               "interp_add_f32_2^20_s",
               srcDir() + "/examples/vector_add.tc",
               {{"SIZE", "1024"}, {"TYPE", "float"}},
               {"cdiv(N, SIZE)"},
               [n](tc::LaunchArgs &args, std::vector<tc::HostArray> &a) {
                 a = {tc::HostArray::zeros(tc::DType::F32, {n}),
                      tc::HostArray::zeros(tc::DType::F32, {n}),
                      tc::HostArray::zeros(tc::DType::F32, {n})};
                 fillRandom(a[0], 1);
                 fillRandom(a[1], 2);
                 args.setScalar("N", tc::ScalarValue::ofInt(tc::DType::I32, n));
                 args.setBuffer("a", &a[0]);
                 args.setBuffer("b", &a[1]);
                 args.setBuffer("c", &a[2]);
               },
               [n](std::vector<tc::HostArray> &a) {
                 const float *x = reinterpret_cast<const float *>(a[0].data.data());
                 const float *y = reinterpret_cast<const float *>(a[1].data.data());
                 float *z = reinterpret_cast<float *>(a[2].data.data());
                 for (int64_t i = 0; i < n; ++i)
                   z[i] = x[i] + y[i];
               },
               2,
               0,
               [](std::vector<tc::HostArray> &a, int64_t lo, int64_t hi) {
                 const float *x = reinterpret_cast<const float *>(a[0].data.data());
                 const float *y = reinterpret_cast<const float *>(a[1].data.data());
                 float *z = reinterpret_cast<float *>(a[2].data.data());
                 for (int64_t i = lo; i < hi; ++i)
                   z[i] = x[i] + y[i];
               },
               n});
  const int64_t rows = 4096, cols = 1024;
  b.push_back({"row softmax f32, 4096 x 1024",
               "interp_softmax_f32_4096x1024_s",
               srcDir() + "/bench/kernels/softmax.tc",
               {{"BLOCK", "1024"}},
               {"4096"},
               [=](tc::LaunchArgs &args, std::vector<tc::HostArray> &a) {
                 a = {tc::HostArray::zeros(tc::DType::F32, {rows, cols}),
                      tc::HostArray::zeros(tc::DType::F32, {rows, cols})};
                 fillRandom(a[1], 3);
                 args.setBuffer("Y", &a[0]);
                 args.setBuffer("X", &a[1]);
                 args.setScalar("stride", tc::ScalarValue::ofInt(tc::DType::I32, cols));
                 args.setScalar("N", tc::ScalarValue::ofInt(tc::DType::I32, cols));
               },
               [=](std::vector<tc::HostArray> &a) {
                 const float *x = reinterpret_cast<const float *>(a[1].data.data());
                 float *y = reinterpret_cast<float *>(a[0].data.data());
                 for (int64_t r = 0; r < rows; ++r) {
                   const float *xr = x + r * cols;
                   float m = *std::max_element(xr, xr + cols), s = 0;
                   for (int64_t c = 0; c < cols; ++c)
                     s += (y[r * cols + c] = std::exp(xr[c] - m));
                   for (int64_t c = 0; c < cols; ++c)
                     y[r * cols + c] /= s;
                 }
               },
               0,
               1e-5,
               [=](std::vector<tc::HostArray> &a, int64_t lo, int64_t hi) {
                 const float *x = reinterpret_cast<const float *>(a[1].data.data());
                 float *y = reinterpret_cast<float *>(a[0].data.data());
                 for (int64_t r = lo; r < hi; ++r) {
                   const float *xr = x + r * cols;
                   float m = *std::max_element(xr, xr + cols), s = 0;
                   for (int64_t c = 0; c < cols; ++c)
                     s += (y[r * cols + c] = std::exp(xr[c] - m));
                   for (int64_t c = 0; c < cols; ++c)
                     y[r * cols + c] /= s;
                 }
               },
               rows});
  const int64_t S = 512;
  b.push_back({"matmul f16 -> f32 acc, 512^3, 64 x 64 x 32 tiles",
               "interp_matmul_f16_512^3_s",
               srcDir() + "/examples/matmul.tc",
               {{"TM", "64"}, {"TN", "64"}, {"TK", "32"}, {"TYPE", "half"}},
               {"8", "8"},
               [=](tc::LaunchArgs &args, std::vector<tc::HostArray> &a) {
                 a = {tc::HostArray::zeros(tc::DType::F16, {S, S}),
                      tc::HostArray::zeros(tc::DType::F16, {S, S}),
                      tc::HostArray::zeros(tc::DType::F16, {S, S})};
                 fillRandom(a[0], 4);
                 fillRandom(a[1], 5);
                 args.setBuffer("A", &a[0]);
                 args.setBuffer("B", &a[1]);
                 args.setBuffer("C", &a[2]);
                 for (const char *p : {"M", "N", "K", "lda", "ldb", "ldc"})
                   args.setScalar(p, tc::ScalarValue::ofInt(tc::DType::I32, S));
               },
               [=](std::vector<tc::HostArray> &a) {
                 std::vector<float> A(S * S), B(S * S);
                 for (int64_t i = 0; i < S * S; ++i) {
                   A[i] = static_cast<float>(a[0].getDouble(i));
                   B[i] = static_cast<float>(a[1].getDouble(i));
                 }
                 std::vector<float> C(S * S, 0.0f);
                 for (int64_t i = 0; i < S; ++i)
                   for (int64_t k = 0; k < S; ++k)
                     for (int64_t j = 0; j < S; ++j)
                       C[i * S + j] += A[i * S + k] * B[k * S + j];
                 for (int64_t i = 0; i < S * S; ++i)
                   a[2].setDouble(i, C[i]);
               },
               2,
               2e-3,
               // A and B as floats from plainSetup (each part converting all of B
               // would repeat that work on every thread); C's rows [lo, hi).
               [=](std::vector<tc::HostArray> &a, int64_t lo, int64_t hi) {
                 const float *A = reinterpret_cast<const float *>(a[3].data.data());
                 const float *B = reinterpret_cast<const float *>(a[4].data.data());
                 float *C = reinterpret_cast<float *>(a[5].data.data());
                 for (int64_t i = lo; i < hi; ++i) {
                   float *__restrict c = C + i * S; // (C is neither A nor B)
                   std::fill(c, c + S, 0.0f);
                   for (int64_t k = 0; k < S; ++k) {
                     float aik = A[i * S + k];
                     for (int64_t j = 0; j < S; ++j)
                       c[j] += aik * B[k * S + j];
                   }
                 }
               },
               S,
               [=](std::vector<tc::HostArray> &a) {
                 a.resize(3);
                 for (int m = 0; m < 3; ++m)
                   a.push_back(tc::HostArray::zeros(tc::DType::F32, {S, S}));
                 for (int64_t i = 0; i < S * S; ++i) {
                   a[3].setDouble(i, a[0].getDouble(i));
                   a[4].setDouble(i, a[1].getDouble(i));
                 }
               }});
  const int64_t T = 4096;
  b.push_back({"transpose f32, 4096^2, 64 x 64 tiles",
               "",
               srcDir() + "/examples/transpose.tc",
               {{"TM", "64"}, {"TN", "64"}, {"TYPE", "float"}},
               {"64", "64"},
               [=](tc::LaunchArgs &args, std::vector<tc::HostArray> &a) {
                 a = {tc::HostArray::zeros(tc::DType::F32, {T, T}),
                      tc::HostArray::zeros(tc::DType::F32, {T, T})};
                 fillRandom(a[0], 6);
                 args.setBuffer("X", &a[0]);
                 args.setBuffer("Y", &a[1]);
                 for (const char *p : {"M", "N", "ldx", "ldy"})
                   args.setScalar(p, tc::ScalarValue::ofInt(tc::DType::I32, T));
               },
               [=](std::vector<tc::HostArray> &a) {
                 const float *x = reinterpret_cast<const float *>(a[0].data.data());
                 float *y = reinterpret_cast<float *>(a[1].data.data());
                 for (int64_t i = 0; i < T; ++i)
                   for (int64_t j = 0; j < T; ++j)
                     y[j * T + i] = x[i * T + j];
               },
               1,
               0,
               [=](std::vector<tc::HostArray> &a, int64_t lo, int64_t hi) {
                 const float *x = reinterpret_cast<const float *>(a[0].data.data());
                 float *y = reinterpret_cast<float *>(a[1].data.data());
                 for (int64_t i = lo; i < hi; ++i)
                   for (int64_t j = 0; j < T; ++j)
                     y[j * T + i] = x[i * T + j];
               },
               T});
  return b;
}

// Largest relative difference between two arrays (0 when identical).
double maxRelDiff(const tc::HostArray &a, const tc::HostArray &b) {
  double worst = 0;
  for (int64_t i = 0; i < a.numElements(); ++i) {
    double x = a.getDouble(i), y = b.getDouble(i);
    double d = std::fabs(x - y) / std::max(1e-30, std::fabs(y));
    if (std::isnan(x) != std::isnan(y))
      return INFINITY;
    worst = std::max(worst, std::fabs(x - y) <= 1e-30 ? 0.0 : d);
  }
  return worst;
}

/// --plain-scaling: the median time of the plain loop split into `threads`
/// equal parts run at once. The threads are started once and meet at a
/// barrier before and after each repeat (thread start-up is not timed), so
/// the figure is what the machine gives a loop with no interpreter at all:
/// memory bandwidth, shared caches and clock speeds under load.
double timePlainParallel(const Bench &b, std::vector<tc::HostArray> &a, unsigned threads,
                         int repeat) {
  std::barrier sync(static_cast<std::ptrdiff_t>(threads));
  std::vector<double> t;
  auto part = [&](unsigned k) {
    int64_t lo = b.plainItems * k / threads, hi = b.plainItems * (k + 1) / threads;
    for (int r = 0; r < repeat; ++r) {
      sync.arrive_and_wait();
      auto start = Clock::now();
      b.plainRange(a, lo, hi);
      sync.arrive_and_wait();
      if (k == 0)
        t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
    }
  };
  std::vector<std::thread> team;
  for (unsigned k = 1; k < threads; ++k)
    team.emplace_back(part, k);
  part(0);
  for (auto &th : team)
    th.join();
  return median(t);
}

} // namespace

/// "1,2,16" -> {1, 2, 16}; empty on a malformed list.
std::vector<unsigned> parseThreads(const std::string &text) {
  std::vector<unsigned> r;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (item.empty() || item.size() > 6 || item.find_first_not_of("0123456789") != std::string::npos)
      return {};
    unsigned t = static_cast<unsigned>(std::stoul(item));
    if (t == 0)
      return {};
    r.push_back(t);
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return r;
}

int main(int argc, char **argv) {
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  std::string threadList = hw > 1 ? "1," + std::to_string(hw) : "1";
  int repeat = 5;
  std::string tritonJson, outJson, only;
  CLI::App app{"interp_bench: speed of the reference interpreter"};
  app.add_option("--threads", threadList,
                 "comma-separated thread counts, one table row each (default: 1 and all cores)");
  app.add_option("--repeat", repeat, "launches per figure (median)")->check(CLI::Range(1, 1000));
  app.add_option("--kernel", only, "only the kernels whose name contains this text");
  app.add_option("--triton", tritonJson, "JSON of triton_reference.py interp");
  app.add_option("--json", outJson, "write the figures as JSON");
  app.add_option("--src", gSourceDir, "the repository root (for examples/ and bench/kernels/)");
  bool noChecks = false, checksCost = false, plainScaling = false;
  app.add_flag("--plain-scaling", plainScaling,
               "time only the plain C++ loops, split across each thread count's threads (what "
               "the machine's cores give without the interpreter)");
  app.add_flag("--no-checks", noChecks, "launch without any shadow memory (no coverage, no race check)");
  app.add_flag("--checks-cost", checksCost,
               "time every kernel without shadow memory, with coverage, with the race check");
  std::string onlyMode;
  app.add_option("--only-mode", onlyMode,
                 "time only this mode (none, coverage or race) at the last thread count")
      ->check(CLI::IsMember({"none", "coverage", "race"}));
  CLI11_PARSE(app, argc, argv);
  std::vector<unsigned> threadCounts = parseThreads(threadList);
  if (threadCounts.empty()) {
    std::cerr << "interp_bench: error: --threads wants a comma-separated list of counts >= 1, "
                 "got '"
              << threadList << "'\n";
    return 2;
  }
  unsigned threads = threadCounts.back(); // --checks-cost: the last count

  nlohmann::json anchors = nlohmann::json::object();
  if (!tritonJson.empty()) {
    std::ifstream in(tritonJson);
    anchors = nlohmann::json::parse(in, nullptr, false);
    if (anchors.is_discarded()) {
      std::cerr << "interp_bench: error: cannot parse " << tritonJson << '\n';
      return 3;
    }
  }
  auto backend = tc::createInterpreterBackend();
  nlohmann::json out = nlohmann::json::array();
  if (plainScaling)
    std::printf("%-50s %7s %10s %9s\n", "kernel", "threads", "plain C++", "speed-up");
  else if (!checksCost && onlyMode.empty())
    std::printf("%-50s %7s %10s %10s %9s %9s %11s %10s\n", "kernel", "threads", "plain C++",
                noChecks ? "ours(none)" : "ours", "ours/C++", "speed-up", "race check",
                "race/ours");
  int status = 0, ran = 0;
  for (Bench &b : benches()) {
    if (!only.empty() && b.name.find(only) == std::string::npos)
      continue;
    ++ran;
    tc::CompileRequest req;
    req.path = b.source;
    req.defines = b.defines;
    auto compiled = tc::compileKernel(req);
    if (!compiled.ok()) {
      std::cerr << compiled.diagnostics;
      return 2;
    }
    tc::LaunchArgs args;
    std::vector<tc::HostArray> arrays;
    b.bind(args, arrays);
    if (plainScaling) {
      std::vector<tc::HostArray> ref = arrays;
      if (b.plainSetup)
        b.plainSetup(ref);
      double first = 0;
      for (unsigned t : threadCounts) {
        double s = timePlainParallel(b, ref, t, repeat);
        if (first == 0)
          first = s;
        std::printf("%-50s %7u %9.4fs %8.2fx\n", b.name.c_str(), t, s, first / s);
        out.push_back({{"kernel", b.name}, {"threads", t}, {"plain_cpp_split_s", s},
                       {"speedup_vs_first", first / s}});
      }
      continue;
    }
    auto grid = tc::evalGrid({b.grid}, *compiled.kernel, args);
    if (!grid.dims) {
      std::cerr << grid.error << '\n';
      return 2;
    }
    std::vector<tc::HostArray> ref = arrays;
    double plain = timeIt(repeat, [&] { b.plainLoop(ref); });
    // mode 0: no shadow memory; 1: the coverage shadow only; 2: the race check.
    auto run = [&](unsigned t, int mode) {
      tc::RunOptions opts;
      opts.threads = t;
      opts.coverage = mode >= 1;
      opts.raceCheck = mode == 2;
      return timeIt(repeat, [&] {
        tc::RunResult r = backend->launch(*compiled.kernel, *grid.dims, args, opts);
        if (r.status != tc::RunResult::Status::Ok) {
          std::cerr << (r.trap ? r.trap->render() : r.error);
          std::exit(1);
        }
      });
    };
    if (!onlyMode.empty()) {
      int mode = onlyMode == "none" ? 0 : onlyMode == "coverage" ? 1 : 2;
      double t = run(threads, mode);
      std::printf("%-50s %u threads, %s: %.4fs\n", b.name.c_str(), threads, onlyMode.c_str(), t);
      out.push_back({{"kernel", b.name}, {"threads", threads}, {"mode", onlyMode}, {"s", t}});
      continue;
    }
    if (checksCost) {
      double off1 = run(1, 0), cov1 = run(1, 1), race1 = run(1, 2);
      double offN = run(threads, 0), covN = run(threads, 1), raceN = run(threads, 2);
      std::printf("%-50s 1 thread: none %.4fs, coverage %.4fs (%.2fx), race check %.4fs "
                  "(%.2fx); %u threads: none %.4fs, coverage %.4fs (%.2fx), race check %.4fs "
                  "(%.2fx)\n",
                  b.name.c_str(), off1, cov1, cov1 / off1, race1, race1 / off1, threads, offN, covN,
                  covN / offN, raceN, raceN / offN);
      out.push_back({{"kernel", b.name},
                     {"none_1t_s", off1},
                     {"coverage_1t_s", cov1},
                     {"race_1t_s", race1},
                     {"none_all_s", offN},
                     {"coverage_all_s", covN},
                     {"race_all_s", raceN},
                     {"threads", threads}});
      continue;
    }
    // The output is checked after a run with the race check (the default).
    run(1, noChecks ? 0 : 2);
    double diff = maxRelDiff(arrays[b.outIndex], ref[b.outIndex]);
    if (diff > b.tolerance) {
      std::cerr << "interp_bench: " << b.name << ": output differs from the plain loop (max rel "
                << diff << ")\n";
      status = 1;
    }
    double first = 0, firstRace = 0;
    for (unsigned t : threadCounts) {
      double ours = run(t, noChecks ? 0 : 1);
      double race = noChecks ? 0 : run(t, 2);
      if (first == 0)
        first = ours, firstRace = race;
      std::printf("%-50s %7u %9.4fs %9.4fs %8.2fx %8.2fx %10.4fs %9.2fx\n", b.name.c_str(), t,
                  plain, ours, ours / plain, first / ours, race, race > 0 ? race / ours : 0);
      nlohmann::json row = {{"kernel", b.name},        {"threads", t},
                            {"plain_cpp_s", plain},    {"ours_s", ours},
                            {"ours_race_check_s", race}, {"speedup_vs_first", first / ours},
                            {"race_speedup_vs_first", race > 0 ? firstRace / race : 0}};
      if (anchors.contains(b.anchorKey)) {
        double anchor = anchors[b.anchorKey].get<double>();
        row["triton_interp_s"] = anchor;
        std::printf("%-50s %7s Triton's interpreter %.3fs: %.0fx ours (race check on), %.0fx "
                    "ours (off)\n",
                    "", "", anchor, race > 0 ? anchor / race : 0, anchor / ours);
      }
      out.push_back(row);
    }
  }
  if (ran == 0) {
    std::cerr << "interp_bench: error: no kernel's name contains '" << only << "'\n";
    return 2;
  }
  if (!outJson.empty())
    std::ofstream(outJson) << out.dump(1) << '\n';
  return status;
}
