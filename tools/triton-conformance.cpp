//===- triton-conformance.cpp - Run, check and compare conformance suites ===//
//
//   triton-conformance run PATH... [--backend interp|gpu|triton] [--out report.json]
//       [--html report.html] [--md report.md] [-j N] [--timeout S]
//       [--suite GLOB] [--feature GLOB] [--case GLOB] [--expectations FILE]
//       [--batch N]
//   triton-conformance check PATH...           (load, compile and bind every case)
//   triton-conformance diff OLD.json NEW.json [--html F] [--md F] [--force]
//       (regressions, fixes, flips; the pages put regressions and fixes first)
//   triton-conformance report IN.json... [--out merged.json] [--html F] [--md F]
//   triton-conformance check-ptx PATH... [-j N] [--sm 90] [--num-warps 4]
//       [--num-stages 3] [--allow-unsupported]
//       (every kernel of the suite through codegen and ptxas)
//
// PATH is a suite file or a directory (every *.json under it, sorted).
// Exit codes: 0 success; 1 a case failed (run: any fail, error, crash,
// timeout or xpass), a suite is invalid, a case does not compile or its
// arguments do not match the kernel, or a case name repeats (check), a
// regression (diff);
// check-ptx: ptxas rejected a kernel (or codegen failed other than "not
// supported", which fails only without --allow-unsupported);
// 3 usage error (bad options, unreadable inputs); 77 check-ptx found no
// ptxas (no CUDA toolkit) and checked nothing.
//
// The gpu backend runs when a CUDA device is present (`--num-warps` sets its
// warps per program unless a case gives num_warps, `--num-stages` its
// software-pipelining stages); without one every gpu case is `skipped` with the reason.
// The triton backend runs the kernels with Triton (docs/triton.md): on the GPU or
// in Triton's interpreter (--triton-mode); kernels Triton cannot express are
// `skipped` with the construct named.
//
//===----------------------------------------------------------------------===//
#include "ConformanceVersion.h"
#include "conformance/Case.h"
#include "conformance/Report.h"
#include "conformance/Runner.h"
#include "frontend/Compiler.h"
#include "gpu/GpuBackend.h"
#include "runtime/Launch.h"
#include "runtime/TritonBackend.h"
#include "support/FileIO.h"
#include "support/TimeLimit.h"
#include "support/ToolMain.h"
#include "tools/CheckPtx.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace tc::conf;

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitUsage = 3;

struct RunFlags {
  std::vector<std::string> paths, backends{"interp"}, suites, features, cases;
  std::string out, html, md, expectations;
  unsigned jobs = 0, numWarps = 4, batch = 16;
  unsigned numStages = tc::codegen::Options{}.numStages;
  double timeout = 60;
  std::string disableOpt; // --disable-opt LIST (gpu backend)
  std::string tritonMode = "auto"; // --triton-mode (triton backend)
  bool batchGiven = false;
  bool noIsolation = false, quiet = false, force = false;
  tc::conf::ToleranceOverride tolerance; // --rtol, --atol
};

// Suite files named by the paths: files as given, directories expanded to
// every *.json below them in sorted order.
bool expandPaths(const std::vector<std::string> &paths, std::vector<std::string> &files) {
  for (const std::string &p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::end(it);
           it.increment(ec))
        if (it->is_regular_file() && it->path().extension() == ".json")
          found.push_back(it->path().string());
      std::sort(found.begin(), found.end());
      if (found.empty()) {
        std::cerr << "triton-conformance: error: no suite files (*.json) under " << p << "\n";
        return false;
      }
      files.insert(files.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      files.push_back(p);
    } else {
      std::cerr << "triton-conformance: error: no such file or directory: " << p << "\n";
      return false;
    }
  }
  return true;
}

std::vector<LoadResult> loadAll(const std::vector<std::string> &files) {
  std::vector<LoadResult> out;
  for (const std::string &f : files) {
    out.push_back(loadSuiteFile(f));
    for (const std::string &w : out.back().warnings)
      std::cerr << "warning: " << w << "\n";
  }
  return out;
}

bool writeText(const std::string &path, const std::string &text) {
  std::string error;
  if (!tc::writeFileAtomic(path, text, error)) {
    std::cerr << "triton-conformance: error: " << error << "\n";
    return false;
  }
  return true;
}

/// The files a compilation of `req` #includes (its preprocessing only).
std::vector<std::string> includedFiles(const tc::CompileRequest &req) {
  tc::CompileOptions opts;
  opts.defines = req.defines;
  opts.undefines = req.undefines;
  opts.includeDirs = req.includeDirs;
  tc::Compilation comp(opts);
  bool added = req.path.empty() ? comp.addMainSource(req.sourceName, req.sourceText)
                                : comp.addMainFile(req.path);
  std::vector<std::string> files;
  if (!added)
    return files;
  (void)comp.run(tc::Stage::Preprocess); // errors are the run's to report
  const tc::SourceManager &sm = comp.sourceManager();
  for (uint32_t i = 0; i < sm.numFiles(); ++i)
    if (sm.name(i) != "<built-in>" && sm.name(i) != "<command line>")
      files.push_back(sm.name(i));
  return files;
}

/// Checks the report outputs before anything runs: none is an input, none is
/// named twice, none exists unless `force`.
bool checkOutputs(const std::vector<std::pair<std::string, std::string>> &outs,
                  const std::vector<std::string> &inputs, bool force) {
  std::vector<std::string> seen;
  for (const auto &[flag, path] : outs) {
    if (path.empty())
      continue;
    std::string why = tc::checkOutputPath(path, inputs, force);
    for (const std::string &other : seen)
      if (why.empty() && tc::sameFile(other, path))
        why = "two outputs would be written to '" + path + "'";
    if (!why.empty()) {
      std::cerr << "triton-conformance: error: " << flag << " " << path << ": " << why << "\n";
      return false;
    }
    seen.push_back(path);
  }
  return true;
}

bool writeReports(const Report &report, const std::string &out, const std::string &html,
                  const std::string &md) {
  bool ok = true;
  if (!out.empty())
    ok = writeText(out, reportToJson(report)) && ok;
  if (!html.empty())
    ok = writeText(html, renderHtml(report)) && ok;
  if (!md.empty())
    ok = writeText(md, renderMarkdown(report)) && ok;
  return ok;
}

/// The command line, each argument shell-quoted where needed.
std::string commandLine(int argc, char **argv) {
  std::string out;
  for (int i = 0; i < argc; ++i)
    out += (i ? " " : "") + shellQuote(argv[i]);
  return out;
}

std::string utcNow() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// "NAME (CPU model, N cores; Linux 6.1.0)".
std::string hostDescription() {
  char name[256] = "unknown host";
  if (gethostname(name, sizeof name) != 0)
    std::snprintf(name, sizeof name, "unknown host");
  name[sizeof name - 1] = 0;
  std::string cpu;
  std::ifstream info("/proc/cpuinfo");
  for (std::string line; cpu.empty() && std::getline(info, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos)
      cpu = line.substr(line.find(':') + 2);
  std::string out = std::string(name) + " (" + (cpu.empty() ? "unknown CPU" : cpu) + ", " +
                    std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads";
  if (utsname u{}; uname(&u) == 0)
    out += "; " + std::string(u.sysname) + " " + u.release;
  return out + ")";
}

/// The GPU's name, asked in a child process (CUDA must not start in this
/// one: the workers are forked from it); "" when it cannot be told.
std::string gpuDescription(const tc::codegen::Options &codegen) {
  int fds[2];
  if (pipe(fds) != 0)
    return "";
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return "";
  }
  if (pid == 0) {
    close(fds[0]);
    tc::gpu::GpuOptions go;
    go.codegen = codegen;
    std::string d = tc::gpu::createGpuBackend(go)->deviceDescription();
    ssize_t n = write(fds[1], d.data(), d.size());
    _exit(n == static_cast<ssize_t>(d.size()) ? 0 : 1);
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;)
    out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : "";
}

/// What ran the cases of each backend: "interp: the interpreter on this host; gpu: NAME".
std::string deviceDescription(const std::vector<std::string> &backends,
                              const tc::codegen::Options &codegen, const RunFlags &f) {
  std::string out;
  for (const std::string &b : backends) {
    std::string d;
    if (b == "interp") {
      d = "the reference interpreter on the host CPU";
    } else if (b == "gpu") {
      std::string why;
      if (!tc::gpu::cudaAvailable(&why))
        d = "not available (" + why + ")";
      else if (d = gpuDescription(codegen); d.empty())
        d = "a CUDA device (its name could not be read)";
    } else if (b == "triton") {
      tc::TritonOptions to;
      to.mode = f.tritonMode;
      std::unique_ptr<tc::TritonBackend> t = tc::createTritonBackend(to);
      std::string why;
      d = t->available(&why) ? t->description() : "not available (" + why + ")";
    }
    out += (out.empty() ? "" : "; ") + b + ": " + d;
  }
  return out;
}

/// The reproduce command's extra arguments on the GPU: the run's --num-warps
/// (unless the case sets num_warps, which triton-run's --num-warps would
/// override), --num-stages and --disable-opt when they are not the defaults.
std::function<std::vector<std::string>(const Case &)> gpuReproduceArgs(const RunFlags &f) {
  return [f](const Case &c) {
    std::vector<std::string> args;
    if (!c.numWarps && f.numWarps != RunFlags{}.numWarps)
      args.insert(args.end(), {"--num-warps", std::to_string(f.numWarps)});
    if (f.numStages != RunFlags{}.numStages)
      args.insert(args.end(), {"--num-stages", std::to_string(f.numStages)});
    if (!f.disableOpt.empty())
      args.insert(args.end(), {"--disable-opt", f.disableOpt});
    return args;
  };
}

/// Extra arguments of a case's reproduce command on `backend`: the GPU's
/// (gpuReproduceArgs), then --rtol/--atol when given.
std::function<std::vector<std::string>(const Case &)> reproduceArgs(const RunFlags &f,
                                                                   const std::string &backend) {
  std::function<std::vector<std::string>(const Case &)> gpu;
  if (backend == "gpu")
    gpu = gpuReproduceArgs(f);
  if (backend == "triton" && f.tritonMode != "auto")
    gpu = [mode = f.tritonMode](const Case &) {
      return std::vector<std::string>{"--triton-mode", mode};
    };
  if (!f.tolerance.any())
    return gpu;
  return [gpu, tol = f.tolerance](const Case &c) {
    std::vector<std::string> args;
    if (gpu)
      args = gpu(c);
    char buf[64];
    for (auto [flag, v] : {std::pair{"--rtol", tol.rtol}, std::pair{"--atol", tol.atol}})
      if (v) {
        std::snprintf(buf, sizeof buf, "%.17g", *v);
        args.insert(args.end(), {flag, buf});
      }
    return args;
  };
}

/// The report's line on the tolerance of float outputs without their own `compare`.
std::string toleranceDescription(const tc::conf::ToleranceOverride &t) {
  if (!t.any())
    return "";
  std::string s;
  for (tc::DType d : {tc::DType::F16, tc::DType::BF16, tc::DType::F32, tc::DType::F64})
    s += std::string(s.empty() ? "" : "; ") + std::string(tc::conformanceName(d)) + " " +
         tc::conf::defaultCompare(d, t).str();
  return t.flags() + " (float outputs without their own compare: " + s + ")";
}

/// Registers the GPU backend (compiled into the library; the device is probed,
/// in a child process, when the runner asks whether it is available).
void registerGpuBackend(const tc::codegen::Options &codegen) {
  registerBackend(
      "gpu",
      [codegen]() -> std::unique_ptr<tc::Backend> {
        tc::gpu::GpuOptions go;
        go.codegen = codegen;
        std::unique_ptr<tc::gpu::GpuBackend> b = tc::gpu::createGpuBackend(go);
        return b;
      },
      /*detectsTraps=*/false);
}

int runCommand(const RunFlags &f, const std::string &command) {
  tc::codegen::Options codegen;
  codegen.numWarps = f.numWarps;
  codegen.numStages = f.numStages;
  if (std::string error; !tc::codegen::disableOptimizations(codegen, f.disableOpt, error)) {
    std::cerr << "triton-conformance: error: --disable-opt: " << error << '\n';
    return kExitUsage;
  }
  registerGpuBackend(codegen);
  registerBackend(
      "triton",
      [&f]() -> std::unique_ptr<tc::Backend> {
        tc::TritonOptions to;
        to.mode = f.tritonMode;
        to.numWarps = f.numWarps;
        to.numStages = f.numStages;
        return tc::createTritonBackend(to);
      },
      /*detectsTraps=*/false);
  std::vector<std::string> files;
  if (!expandPaths(f.paths, files))
    return kExitUsage;
  std::vector<std::string> inputs = files;
  if (!f.expectations.empty())
    inputs.push_back(f.expectations);
  if (!checkOutputs({{"--out", f.out}, {"--html", f.html}, {"--md", f.md}}, inputs, f.force))
    return kExitUsage;
  std::optional<KnownFailures> known;
  if (!f.expectations.empty()) {
    std::string error;
    known = loadKnownFailures(f.expectations, error);
    if (!known) {
      std::cerr << "triton-conformance: error: " << error << "\n";
      return kExitUsage;
    }
  }
  auto start = std::chrono::steady_clock::now();
  std::vector<LoadResult> suites = loadAll(files);
  // Nor a file a case reads (its source_file, an npy input or expected output,
  // a file its source #includes: found by preprocessing each variant).
  for (const LoadResult &l : suites)
    inputs.insert(inputs.end(), l.filesRead.begin(), l.filesRead.end());
  if (!f.out.empty() || !f.html.empty() || !f.md.empty())
    for (const LoadResult &l : suites)
      if (l.suite)
        for (const Case &c : l.suite->cases)
          if (c.source.find("include") != std::string::npos)
            for (const Variant &v : c.variants())
              for (const std::string &file : includedFiles(c.compileRequest(v, *l.suite)))
                inputs.push_back(file);
  if (!checkOutputs({{"--out", f.out}, {"--html", f.html}, {"--md", f.md}}, inputs, f.force))
    return kExitUsage;
  // A filter that selects nothing is a mistake (a misspelt name), not a pass.
  if (!f.suites.empty() || !f.cases.empty() || !f.features.empty()) {
    RunnerOptions filter;
    filter.suiteGlobs = f.suites;
    filter.caseGlobs = f.cases;
    filter.featureGlobs = f.features;
    RunnerOptions byName = filter; // the features of a case that did not load are unknown
    byName.featureGlobs.clear();
    size_t matched = 0, loaded = 0, unloaded = 0;
    for (const LoadResult &l : suites) {
      if (!l.suite) { // its error is the run's to report; its cases' names are unknown
        ++unloaded;
        continue;
      }
      ++loaded;
      for (const Case &c : l.suite->cases)
        matched += selected(filter, l.suite->name, c.name, c.features);
      for (const InvalidCase &c : l.suite->invalid)
        matched += selected(byName, l.suite->name, c.name, {});
    }
    if (matched == 0 && loaded > 0 && unloaded == 0) {
      std::string flags;
      for (const auto &[flag, globs] :
           {std::pair<std::string, const std::vector<std::string> *>{"--suite", &f.suites},
            {"--case", &f.cases},
            {"--feature", &f.features}})
        for (const std::string &g : *globs)
          flags += " " + flag + " " + g;
      std::cerr << "triton-conformance: error: no case of the " << loaded
                << (loaded == 1 ? " suite" : " suites") << " matches" << flags << '\n';
      return kExitUsage;
    }
  }
  if (f.tolerance.any())
    for (LoadResult &l : suites)
      if (l.suite)
        overrideDefaultTolerances(*l.suite, f.tolerance);
  Report report;
  report.inputs = f.paths;
  report.command = command;
  report.version = kConformanceVersion;
  report.date = utcNow();
  report.host = hostDescription();
  report.device = deviceDescription(f.backends, codegen, f);
  report.tolerance = toleranceDescription(f.tolerance);
  for (const std::string &backend : f.backends) {
    RunnerOptions opts;
    opts.backend = backend;
    opts.jobs = f.jobs;
    opts.timeout = f.timeout;
    opts.isolate = !f.noIsolation;
    // A triton worker process starts Python, torch and Triton once per batch.
    opts.batch = backend == "triton" && !f.batchGiven ? 64 : f.batch;
    opts.suiteGlobs = f.suites;
    opts.featureGlobs = f.features;
    opts.caseGlobs = f.cases;
    opts.known = known ? &*known : nullptr;
    opts.progress = f.quiet ? nullptr : &std::cerr;
    opts.reproduceArgs = reproduceArgs(f, backend);
    report.backends.push_back(backend);
    std::vector<CaseRecord> records = runSuites(suites, opts);
    report.records.insert(report.records.end(), records.begin(), records.end());
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  bool written = writeReports(report, f.out, f.html, f.md);
  StatusCounts counts = countStatuses(report.records);
  std::cout << summaryLine(counts) << std::endl;
  if (!written)
    return kExitUsage;
  return runSucceeded(counts) ? kExitOk : kExitFailed;
}

/// `text` with every line indented by four spaces.
std::string indent(const std::string &text) {
  std::string out;
  for (size_t start = 0; start < text.size();) {
    size_t end = std::min(text.find('\n', start), text.size());
    out += "    " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

/// Compiles every variant of `c` and binds its arguments to the kernel's
/// parameters (order, count, buffer or scalar, dtype, values that fit) and
/// evaluates its grid; the problems, one message each. A compile_error case
/// is not compiled (running it checks the error), and an invalid_launch trap
/// case may give arguments that do not match on purpose.
std::vector<std::string> compileAndBind(const Suite &s, const Case &c) {
  std::vector<std::string> problems;
  if (c.expect.kind == ExpectKind::CompileError)
    return problems;
  bool badArgsExpected =
      c.expect.kind == ExpectKind::Trap && c.expect.trap == tc::TrapKind::InvalidLaunch;
  for (const Variant &v : c.variants()) {
    std::string where = v.label.empty() ? "" : " (variant " + v.label + ")";
    tc::CompileOutcome k = tc::compileKernel(c.compileRequest(v, s));
    if (!k.ok()) {
      problems.push_back("the kernel does not compile" + where + ":\n" + indent(k.diagnostics));
      continue;
    }
    if (badArgsExpected)
      continue;
    std::optional<tc::Trap> bad = checkArgs(c, *k.kernel);
    std::unique_ptr<BoundArgs> args = bad ? nullptr : bindArgs(c);
    if (!bad)
      bad = tc::checkLaunchArguments(*k.kernel, args->launch);
    if (bad) {
      problems.push_back("the arguments do not match the kernel's parameters" + where + ": " +
                         bad->message);
      continue;
    }
    if (tc::GridOutcome g = tc::evalGrid(c.gridSpec(), *k.kernel, args->launch); !g.dims)
      problems.push_back("the grid does not evaluate" + where + ": " + g.error);
  }
  return problems;
}

int checkCommand(const std::vector<std::string> &paths) {
  std::vector<std::string> files;
  if (!expandPaths(paths, files))
    return kExitUsage;
  size_t cases = 0, variants = 0, errors = 0;
  // Case names across the files given: the first file and JSON path of each.
  std::map<std::string, std::pair<std::string, std::string>> firstSeen;
  auto seen = [&](const std::string &file, const std::string &path, const std::string &name) {
    auto [it, fresh] = firstSeen.emplace(name, std::pair{file, path});
    if (fresh || it->second.first == file) // within a file: the loader's error
      return true;
    std::cerr << "error: " << file << ": " << path << ": case '" << name
              << "': a case of this name is also in " << it->second.first << " ("
              << it->second.second << "); case names must be unique across the suites\n";
    ++errors;
    return false;
  };
  for (const LoadResult &r : loadAll(files)) {
    for (const std::string &e : r.errors)
      std::cerr << "error: " << e << "\n";
    errors += r.errors.size();
    if (!r.suite)
      continue;
    for (const Case &c : r.suite->cases) {
      bool good = seen(r.suite->file, c.path, c.name);
      for (const std::string &p : compileAndBind(*r.suite, c)) {
        std::cerr << "error: " << r.suite->file << ": " << c.path << ": case '" << c.name
                  << "': " << p << (p.back() == '\n' ? "" : "\n");
        ++errors;
        good = false;
      }
      if (good) {
        ++cases;
        variants += c.variants().size();
      }
    }
    for (const InvalidCase &inv : r.suite->invalid)
      seen(r.suite->file, inv.path, inv.name);
  }
  auto n = [](size_t count, const char *what) {
    return std::to_string(count) + " " + what + (count == 1 ? "" : "s");
  };
  std::cout << "checked " << n(files.size(), "suite file") << ": " << n(cases, "valid case") << " ("
            << n(variants, "variant") << "), " << n(errors, "error") << std::endl;
  return errors ? kExitFailed : kExitOk;
}

int diffCommand(const std::string &oldPath, const std::string &newPath, const std::string &html,
                const std::string &md, bool force) {
  if (!checkOutputs({{"--html", html}, {"--md", md}}, {oldPath, newPath}, force))
    return kExitUsage;
  std::string error;
  std::optional<Report> before = readReport(oldPath, error);
  std::optional<Report> after = before ? readReport(newPath, error) : std::nullopt;
  if (!after) {
    std::cerr << "triton-conformance: error: " << error << "\n";
    return kExitUsage;
  }
  ReportDiff d = diffReports(*before, *after);
  std::cout << renderDiff(d, *before, *after) << std::flush;
  std::string title = oldPath + " -> " + newPath;
  bool ok = true;
  if (!html.empty())
    ok = writeText(html, renderDiffHtml(d, *before, *after, title)) && ok;
  if (!md.empty())
    ok = writeText(md, renderDiffMarkdown(d, *before, *after, title)) && ok;
  if (!ok)
    return kExitUsage;
  return d.regressions.empty() ? kExitOk : kExitFailed;
}

int reportCommand(const std::vector<std::string> &inputs, const std::string &out,
                  const std::string &html, const std::string &md, bool force) {
  if (!checkOutputs({{"--out", out}, {"--html", html}, {"--md", md}}, inputs, force))
    return kExitUsage;
  Report merged;
  for (const std::string &in : inputs) {
    std::string error;
    std::optional<Report> r = readReport(in, error);
    if (!r) {
      std::cerr << "triton-conformance: error: " << error << "\n";
      return kExitUsage;
    }
    for (const std::string &b : r->backends)
      if (std::find(merged.backends.begin(), merged.backends.end(), b) == merged.backends.end())
        merged.backends.push_back(b);
    merged.inputs.insert(merged.inputs.end(), r->inputs.begin(), r->inputs.end());
    merged.seconds += r->seconds;
    for (auto [into, from] :
         {std::pair{&merged.command, &r->command}, std::pair{&merged.version, &r->version},
          std::pair{&merged.date, &r->date}, std::pair{&merged.host, &r->host},
          std::pair{&merged.device, &r->device}, std::pair{&merged.tolerance, &r->tolerance}})
      if (!from->empty() && into->find(*from) == std::string::npos)
        *into += (into->empty() ? "" : " | ") + *from;
    merged.records.insert(merged.records.end(), r->records.begin(), r->records.end());
  }
  bool written = writeReports(merged, out, html, md);
  std::cout << summaryLine(countStatuses(merged.records)) << std::endl;
  return written ? kExitOk : kExitUsage;
}

/// --num-stages N of `cmd` (1 to 8; the default is codegen::Options').
void addNumStages(CLI::App &cmd, unsigned &numStages, const std::string &prefix) {
  cmd.add_option("--num-stages", numStages,
                 prefix +
                     "software-pipelining stages of the loads in loops, 1 to 8 (1: none; "
                     "default " +
                     std::to_string(numStages) + "; --disable-opt pipeline means 1)")
      ->check(CLI::Range(1u, 8u));
}

} // namespace

static int toolMain(int argc, char **argv) {
  CLI::App app{"Run, check and compare Triton-C conformance suites"};
  app.require_subcommand(1);

  CLI::Validator timeLimit([](std::string &s) { return tc::timeLimitProblem(s); }, "SECONDS");
  RunFlags rf;
  CLI::App *run = app.add_subcommand("run", "run suites on a backend and write a report");
  run->add_option("paths", rf.paths, "suite files or directories")->required();
  run->add_option("--backend", rf.backends,
                  "interp, gpu or triton (Triton, the Python DSL; repeat for several)")
      ->capture_default_str()
      ->check(CLI::IsMember({"interp", "gpu", "triton"}));
  run->add_option("--triton-mode", rf.tritonMode,
                  "triton backend: gpu (Triton on the GPU), interpret (Triton's interpreter, "
                  "TRITON_INTERPRET=1, no GPU) or auto (the GPU when torch sees one; default)")
      ->check(CLI::IsMember({"auto", "gpu", "interpret"}));
  run->add_option("--out", rf.out, "write the JSON report here");
  run->add_option("--html", rf.html, "write the HTML report here");
  run->add_option("--md", rf.md, "write the Markdown report here");
  run->add_option("-j,--jobs", rf.jobs, "workers at once (default: the number of cores)");
  run->add_option("--timeout", rf.timeout, "seconds per case, all variants (0: none)")
      ->capture_default_str()
      ->check(timeLimit);
  run->add_option("--suite", rf.suites, "only suites whose name matches GLOB");
  run->add_option("--feature", rf.features, "only cases with a feature matching GLOB");
  run->add_option("--case", rf.cases, "only cases whose name matches GLOB");
  run->add_option("--expectations", rf.expectations, "known failures (JSON list)");
  run->add_option("--batch", rf.batch,
                  "cases per worker process, run in turn (1: a process per case; default 16, "
                  "64 for the triton backend)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  run->add_flag("--force", rf.force, "replace existing report files (never an input)");
  run->add_flag("--no-isolation", rf.noIsolation, "run cases in this process (debugging)");
  run->add_flag("-q,--quiet", rf.quiet, "no progress on stderr");
  run->add_option("--num-warps", rf.numWarps,
                  "gpu and triton backends: warps per program of the cases without a num_warps "
                  "(default 4)")
      ->check(CLI::IsMember({1, 2, 4, 8, 16, 32}));
  addNumStages(*run, rf.numStages, "gpu backend: ");
  run->add_option("--disable-opt", rf.disableOpt,
                  "gpu backend: switch off optimisations (" +
                      tc::codegen::optimizationList() + ")");
  CLI::Validator tolerance(
      [](std::string &s) {
        double v = 0;
        return tc::conf::toleranceValueProblem(s, v);
      },
      "TOL");
  double rtol = 0, atol = 0;
  run->add_option("--rtol", rtol,
                  "relative tolerance of float outputs that give no compare of their own "
                  "(replaces the dtype's default; the report says which was used)")
      ->check(tolerance);
  run->add_option("--atol", atol, "absolute tolerance of those outputs (as --rtol)")
      ->check(tolerance);

  CheckPtxFlags pf;
  CLI::App *checkPtx = app.add_subcommand(
      "check-ptx", "compile every kernel of the suites to PTX and check it with ptxas");
  checkPtx->add_option("paths", pf.paths, "suite files or directories")->required();
  checkPtx->add_option("-j,--jobs", pf.jobs, "kernels at once (default: the number of cores)");
  checkPtx->add_option("--sm", pf.sm, "target compute capability (default 90)")
      ->check(CLI::Range(80u, 120u));
  checkPtx->add_option("--num-warps", pf.numWarps, "warps per program (default 4)")
      ->check(CLI::IsMember({1, 2, 4, 8, 16, 32}));
  addNumStages(*checkPtx, pf.numStages, "");
  checkPtx->add_option("--disable-opt", pf.disableOpt,
                       "switch off optimisations (" + tc::codegen::optimizationList() +
                           ")");
  checkPtx->add_option("--timeout", pf.timeout, "seconds per kernel, then it is rejected (0: none)")
      ->capture_default_str()
      ->check(timeLimit);
  checkPtx->add_flag("--allow-unsupported", pf.allowUnsupported,
                     "kernels the GPU backend does not support yet do not fail the check");
  checkPtx->add_flag("-q,--quiet", pf.quiet, "no progress on stderr");

  std::vector<std::string> checkPaths;
  CLI::App *check = app.add_subcommand("check", "load and validate suites");
  check->add_option("paths", checkPaths, "suite files or directories")->required();

  std::string oldPath, newPath, diffHtml, diffMd;
  bool diffForce = false;
  CLI::App *diff = app.add_subcommand("diff", "compare two reports");
  diff->add_option("old", oldPath, "the report before")->required();
  diff->add_option("new", newPath, "the report after")->required();
  diff->add_option("--html", diffHtml,
                   "write the diff as an HTML page: regressions and fixes first, then features");
  diff->add_option("--md", diffMd, "write the diff as a Markdown page (as --html)");
  diff->add_flag("--force", diffForce, "replace existing output files (never an input)");

  std::vector<std::string> reportInputs;
  std::string repOut, repHtml, repMd;
  CLI::App *report = app.add_subcommand("report", "merge JSON reports and render them");
  report->add_option("inputs", reportInputs, "JSON reports")->required();
  report->add_option("--out", repOut, "write the merged JSON report here");
  report->add_option("--html", repHtml, "write the HTML report here");
  report->add_option("--md", repMd, "write the Markdown report here");
  bool repForce = false;
  report->add_flag("--force", repForce, "replace existing report files (never an input)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  if (*run) {
    rf.batchGiven = run->count("--batch") > 0;
    if (run->count("--rtol"))
      rf.tolerance.rtol = rtol;
    if (run->count("--atol"))
      rf.tolerance.atol = atol;
    return runCommand(rf, commandLine(argc, argv));
  }
  if (*check)
    return checkCommand(checkPaths);
  if (*checkPtx) {
    std::vector<std::string> files;
    if (!expandPaths(pf.paths, files))
      return kExitUsage;
    return checkPtxCommand(loadAll(files), pf);
  }
  if (*diff)
    return diffCommand(oldPath, newPath, diffHtml, diffMd, diffForce);
  return reportCommand(reportInputs, repOut, repHtml, repMd, repForce);
}

int main(int argc, char **argv) {
  return tc::guardedMain("triton-conformance", [&] { return toolMain(argc, argv); });
}
