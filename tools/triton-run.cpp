//===- triton-run.cpp - Run a Triton-C kernel on an NVIDIA GPU ------------===//
//
//   triton-run examples/vector_add.tc -DSIZE=1024 -DTYPE=float
//       --grid 'cdiv(N, SIZE)' --arg N=5000 --arg a=randn:f32[5000]:seed=1
//       --arg b=@b.npy --arg c=zeros:f32[5000] --print c --compare --bench
//
// The command line of triton-interp (RunDriver.h), run on the GPU. List-valued
// defines and lists of --num-warps and --num-stages are auto-tuned
// (gpu/Autotune.h) instead of run one by one. --compare runs the interpreter
// on the same inputs and compares every buffer with the conformance suite's
// default tolerances; --bench times launches. Exit codes: 0 ok, 1 trap, GPU
// failure or mismatch, 2 compile error, 3 usage error, 4 no CUDA device.
//
// --backend triton runs the kernel with Triton instead (docs/triton.md): the
// kernel printed as a Triton Python module and run by a Python worker, on the
// GPU or in Triton's interpreter (--triton-mode interpret, no GPU needed);
// --compare and --launch work as on the GPU. Exit code 4: Triton is not
// available (no 'triton' Python package, or no GPU in gpu mode).
//
//===----------------------------------------------------------------------===//
#include "conformance/Compare.h"
#include "gpu/Autotune.h"
#include "gpu/GpuBackend.h"
#include "interp/InterpreterBackend.h"
#include "ir/Printer.h"
#include "runtime/ArrayPrint.h"
#include "runtime/GridExpr.h"
#include "runtime/Specialize.h"
#include "runtime/TritonBackend.h"
#include "support/ToolMain.h"
#include "tools/RunDriver.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

namespace {

using namespace tc::tools;
using tc::gpu::kExitNoDevice;

/// The flags triton-interp does not have.
struct GpuFlags {
  std::string numWarps = "4", flops, bytes;
  std::string numStages = std::to_string(tc::codegen::Options{}.numStages);
  std::string disableOpt;       // --disable-opt LIST
  tc::codegen::Options codegen; // --disable-opt applied
  std::vector<unsigned> warps;  // --num-warps parsed
  std::vector<unsigned> stages; // --num-stages parsed ({1} when pipelining is switched off)
  bool compare = false, bench = false, autotuneReport = false, timePasses = false;
  bool noCache = false, checkDevice = false, noFlushL2 = false;
  std::string backend = "gpu", tritonMode = "auto"; // --backend, --triton-mode
  bool raceCheck = true; // --compare's interpreter run (--no-race-check)
  int benchIters = 100, benchWarmup = 10;
  bool warpsGiven = false, threadsGiven = false, maxStepsGiven = false;
  bool itersGiven = false, warmupGiven = false;
};

/// A temporary directory removed at exit (the autotuner's cache under --no-cache).
class TempDir {
public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "triton-run-XXXXXX").string();
    if (mkdtemp(tmpl.data()))
      path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty())
      std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

/// "no CUDA device: ..." on stderr; exit code 4.
int noDevice(const std::string &why) {
  std::cerr << "triton-run: " << (why.starts_with("no CUDA device") ? "" : "no CUDA device: ")
            << why << '\n';
  return kExitNoDevice;
}

/// --check-device: the device's description, or why there is none.
int checkDevice() {
  std::string why;
  if (!tc::gpu::cudaAvailable(&why))
    return noDevice(why);
  std::cout << tc::gpu::createGpuBackend()->deviceDescription() << '\n';
  return kExitOk;
}

/// A list-valued flag such as --num-warps: its name, what a value counts,
/// which values it takes and an example list.
struct ListFlag {
  const char *name, *what, *range, *example;
  bool (*valid)(int64_t);
};

const ListFlag kWarpsFlag{"--num-warps", "warps", "1, 2, 4, 8, 16 or 32", "4 or --num-warps 2,4,8",
                          [](int64_t v) { return v >= 1 && v <= 32 && (v & (v - 1)) == 0; }};
const ListFlag kStagesFlag{"--num-stages", "stages", "1 to 8", "3 or --num-stages 2,3,4",
                           [](int64_t v) { return v >= 1 && v <= 8; }};

/// Parses `text`, one value or a comma list, of `flag` into `out`.
bool parseList(const ListFlag &flag, const std::string &text, std::vector<unsigned> &out,
               std::string &error) {
  for (const std::string &part : tc::splitTopLevel(text, ',')) {
    std::string err;
    std::optional<int64_t> v = tc::evalIntExpr(part, {}, err);
    if (!v || !flag.valid(*v)) {
      error = std::string(flag.name) + " " + text + ": '" + part + "' is not a number of " +
              flag.what + " (" + flag.range + ")";
      return false;
    }
    out.push_back(static_cast<unsigned>(*v));
  }
  if (out.empty())
    error = std::string(flag.name) + " needs a value, e.g. " + flag.name + " " + flag.example;
  return !out.empty();
}

/// Parses --num-warps and --num-stages; --disable-opt pipeline leaves one stage.
bool parseLists(GpuFlags &g, std::string &error) {
  if (!parseList(kWarpsFlag, g.numWarps, g.warps, error) ||
      !parseList(kStagesFlag, g.numStages, g.stages, error))
    return false;
  tc::codegen::Options probe; // does --disable-opt switch pipelining off (stages to 1)?
  probe.numStages = 2;
  std::string ignored; // --disable-opt was checked in main()
  tc::codegen::disableOptimizations(probe, g.disableOpt, ignored);
  if (probe.numStages == 1 && g.stages.size() > 1) {
    error = "--num-stages " + g.numStages + ": --disable-opt " + g.disableOpt +
            " switches software pipelining off, so there are no stages to tune";
    return false;
  }
  if (probe.numStages == 1)
    g.stages = {1};
  g.codegen.numStages = g.stages[0];
  return true;
}

/// Whether the run tunes: several variants, or a --num-warps or --num-stages list.
bool tunes(const GpuFlags &g, size_t variants) {
  return variants > 1 || g.warps.size() > 1 || g.stages.size() > 1;
}

/// Flag combinations triton-run rejects before compiling anything.
std::string checkFlags(const DriverOptions &opt, GpuFlags &g) {
  std::string error;
  if (!parseLists(g, error))
    return error;
  if (!opt.program.empty())
    return "--program runs one program on the interpreter; the GPU runs the whole grid "
           "(use triton-interp --program)";
  if (opt.trace)
    return "--trace is an interpreter feature (use triton-interp --trace)";
  if ((g.threadsGiven || g.maxStepsGiven) && !g.compare)
    return std::string(g.threadsGiven ? "--threads" : "--max-steps") +
           " applies to the interpreter run of --compare; it needs --compare";
  if (opt.tolerance.any() && !g.compare && opt.launch.empty())
    return opt.tolerance.flags() +
           ": the tolerance applies to --compare (or a --launch case); it needs --compare";
  if (!g.flops.empty() && !g.bench)
    return "--flops needs --bench";
  if (!g.bytes.empty() && !g.bench)
    return "--bytes needs --bench (it says which bytes count for GB/s)";
  if (g.noFlushL2 && !g.bench)
    return "--no-flush-l2 needs --bench (only timed launches flush the L2)";
  if ((g.itersGiven || g.warmupGiven) && !g.bench)
    return std::string(g.itersGiven ? "--bench-iters" : "--bench-warmup") + " needs --bench";
  if (g.benchIters < 1 || g.benchWarmup < 0)
    return "--bench-iters must be at least 1 and --bench-warmup at least 0";
  if (!opt.launch.empty() &&
      (g.compare || g.bench || g.autotuneReport || g.timePasses || tunes(g, 1)))
    return "--launch runs a conformance case and checks its expectation; it cannot be combined "
           "with --compare, --bench, --autotune-report, --time-passes or a --num-warps list or a "
           "--num-stages list";
  return "";
}

/// With auto-tuning every variant shares the arguments: buffer shapes and the
/// grid must evaluate in every variant, and shapes must not change.
int checkTunedVariants(const RunDriver &d, const Plan &plan, const std::vector<VariantRun> &runs) {
  const VariantRun &first = runs[0];
  for (size_t v = 1; v < runs.size(); ++v) {
    tc::ExprEnv env = tc::makeExprEnv(*runs[v].kernel, first.bound->args);
    for (const tc::ArgSpec &spec : plan.args) {
      if (!spec.isBuffer() || spec.kind == tc::ArgSpec::Kind::File)
        continue;
      std::vector<int64_t> shape;
      std::string error;
      for (const std::string &dim : spec.shape)
        if (std::optional<int64_t> n = tc::evalIntExpr(dim, env, error))
          shape.push_back(*n);
      const std::vector<int64_t> &bound = first.bound->arrays.at(spec.name).shape;
      if (shape != bound)
        return d.usageError(
            "--arg " + spec.name + "=" + spec.text +
            ": with auto-tuning every variant shares the "
            "buffers, but the shape is " +
            tc::ir::shapeStr(bound) + " in variant " + first.name + " and " +
            (error.empty() ? tc::ir::shapeStr(shape) : "not defined (" + error + ")") +
            " in variant " + runs[v].name);
    }
    tc::GridOutcome grid = tc::evalGrid(plan.grid, *runs[v].kernel, first.bound->args);
    if (!grid.dims)
      return d.usageError("--grid: " + grid.error + "\nnote: in variant " + runs[v].name);
  }
  return kExitOk;
}

/// What --bench reports per launch: --flops and the bytes for GB/s.
struct BenchCounts {
  double flops = 0;
  uint64_t bytes = 0; // --bytes, or every buffer argument
};

/// Evaluates --flops and --bytes over the kernel's defines (-D values, then
/// the source's own #defines) and the scalar arguments (0 flops and 1 byte at
/// least).
int evalCounts(const RunDriver &d, const GpuFlags &g, const tc::CompiledKernel &kernel,
               const tc::LaunchArgs &args, BenchCounts &out) {
  std::string error;
  tc::ExprEnv env = tc::makeExprEnv(kernel, args);
  if (!g.flops.empty()) {
    std::optional<int64_t> v = evalCountExpr("--flops", g.flops, env, 0, error);
    if (!v)
      return d.usageError(error);
    out.flops = static_cast<double>(*v);
  }
  out.bytes = bufferBytes(args);
  if (!g.bytes.empty()) {
    std::optional<int64_t> v = evalCountExpr("--bytes", g.bytes, env, 1, error);
    if (!v)
      return d.usageError(error);
    out.bytes = static_cast<uint64_t>(*v);
  }
  return kExitOk;
}

/// --time-passes: one block per compiled kernel.
void printCompileInfo(const std::string &what, const tc::gpu::CompileInfo &info) {
  std::cout << "compile times: " << what
            << " (cache: " << (info.cacheHit.empty() ? "miss" : info.cacheHit + " hit") << ")\n";
  for (const tc::codegen::StageTime &t : info.times)
    std::cout << "  " << t.stage << std::string(t.stage.size() < 16 ? 16 - t.stage.size() : 1, ' ')
              << fixed(t.ms, 3) << " ms\n";
  std::cout << "  load            " << fixed(info.loadMs, 3) << " ms (cuModuleLoadData)\n"
            << "  total           " << fixed(info.totalMs, 3) << " ms\n";
}

/// num_warps and num_stages of a launch.
struct LaunchShape {
  unsigned warps = 4, stages = 1;

  /// Makes `gpu` compile with these.
  void apply(tc::gpu::GpuBackend &gpu) const {
    gpu.setNumWarps(warps);
    gpu.setNumStages(stages);
  }
  /// "num_warps=4 num_stages=3".
  std::string describe() const {
    return "num_warps=" + std::to_string(warps) + " num_stages=" + std::to_string(stages);
  }
};

/// Compiles and loads `run`'s kernel for `shape`; prints its times with --time-passes.
/// A GPU compile error is exit code 2 when `fatal`.
int prepare(const RunDriver &d, const GpuFlags &g, tc::gpu::GpuBackend &gpu, const VariantRun &run,
            LaunchShape shape, bool fatal) {
  shape.apply(gpu);
  tc::gpu::CompileInfo info;
  std::string error;
  std::string what = (run.name.empty() ? "" : run.name + " ") + shape.describe();
  // With the arguments: compiled for their classes, as the launch runs it.
  if (!gpu.prepare(*run.kernel, error, &info, run.bound ? &run.bound->args : nullptr)) {
    if (fatal)
      return d.error(error, kExitCompileError);
    std::cout << "compile times: " << what << ": " << error << '\n';
    return kExitOk;
  }
  if (g.timePasses) {
    // The argument classes the kernel was compiled for (runtime/Specialize.h):
    // `tritonc --specialize` with this text prints the same PTX.
    if (gpu.specializes() && run.bound) {
      tc::Specialization s = tc::classifyArgs(
          run.kernel->function(), run.bound->args,
          [](const std::string &, const tc::HostArray &a) { return a.device + a.origin; });
      std::string text = tc::describeSpecialization(run.kernel->function(), s);
      what += ", specialised: " + (text.empty() ? std::string("none") : text);
    }
    printCompileInfo(what, info);
  }
  return kExitOk;
}

/// Everything a GPU run needs.
struct GpuRun {
  const RunDriver &d;
  const GpuFlags &g;
  const Plan &plan;
  std::vector<VariantRun> &runs;
  tc::gpu::GpuBackend &gpu;
  const VariantRun *chosen = nullptr; // the variant that ran (the winner when tuning)
  LaunchShape shape;
};

/// The compiled variant whose list-valued defines are `defines`.
const VariantRun *findVariant(const std::vector<VariantRun> &runs, const tc::DefineList &defines) {
  for (const VariantRun &run : runs) {
    bool all = true;
    for (const auto &def : defines)
      all = all && std::find(run.defines.begin(), run.defines.end(), def) != run.defines.end();
    if (all)
      return &run;
  }
  return nullptr;
}

/// Tunes over the variants, warps and stages, then runs the winner once on the arguments.
int runTuned(GpuRun &r, tc::RunResult &result) {
  const DriverOptions &opt = r.d.options();
  if (r.g.timePasses)
    for (const VariantRun &run : r.runs)
      for (unsigned w : r.g.warps)
        for (unsigned s : r.g.stages)
          prepare(r.d, r.g, r.gpu, run, {w, s}, false);
  std::optional<TempDir> scratch;
  if (r.g.noCache)
    scratch.emplace();
  tc::gpu::Autotuner tuner(r.gpu, scratch ? scratch->path() : std::string());
  tc::gpu::TuneRequest req;
  req.base.path = opt.input;
  req.base.undefines = opt.undefines;
  req.base.includeDirs = opt.includeDirs;
  req.base.kernelName = opt.kernel;
  req.specs = r.plan.defineSpecs;
  req.numWarps = r.g.warps;
  req.numStages = r.g.stages;
  req.grid = r.plan.grid;
  tc::gpu::TuneOutcome o = tuner.run(req, r.runs[0].bound->args, r.d.runOptions(r.plan), result);
  if (r.g.autotuneReport)
    std::cout << tc::gpu::Autotuner::report(o);
  if (!o.error.empty())
    return kExitOk; // `result` says why
  std::cout << "autotune: " << o.best.describe() << (o.fromCache ? " (cached winner)" : "") << '\n';
  r.chosen = findVariant(r.runs, o.best.defines);
  r.shape = {o.best.numWarps, o.best.numStages};
  if (!r.chosen)
    return r.d.error("internal: the autotuner's winner " + o.best.describe() +
                         " is not one of the compiled variants",
                     kExitTrap);
  return kExitOk;
}

/// The interpreter's run of --compare, on `args` (a copy of the GPU's inputs).
int runInterpreter(GpuRun &r, tc::BoundArgs &args) {
  const DriverOptions &opt = r.d.options();
  tc::GridOutcome grid = tc::evalGrid(r.plan.grid, *r.chosen->kernel, args.args);
  tc::RunOptions ro;
  ro.threads = r.g.threadsGiven ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
  ro.maxSteps = opt.maxSteps;
  ro.maxSeconds = opt.timeout;
  ro.raceCheck = r.g.raceCheck;
  std::ostringstream sink; // print() output of the reference run is not shown twice
  ro.out = &sink;
  std::unique_ptr<tc::Backend> interp = tc::createInterpreterBackend();
  tc::RunResult res = interp->launch(*r.chosen->kernel, *grid.dims, args.args, ro);
  if (res.status == tc::RunResult::Status::Ok)
    return kExitOk;
  std::cerr
      << "triton-run: error: --compare: the GPU run finished but the interpreter's did not:\n";
  return r.d.reportResult(res);
}

/// Compares every buffer of the GPU run with the interpreter's; one line each.
int compareBuffers(const tc::BoundArgs &gpu, const tc::BoundArgs &ref,
                   const tc::conf::ToleranceOverride &tol, const std::string &who = "gpu") {
  size_t bad = 0;
  for (const auto &[name, a] : gpu.arrays) {
    const tc::HostArray &b = ref.arrays.at(name);
    tc::conf::CompareSpec spec = tc::conf::defaultCompare(a.dtype, tol);
    std::string how = std::string(tc::conformanceName(a.dtype)) + ", " + spec.str();
    std::optional<tc::conf::Mismatch> m = tc::conf::compareArrays(a, b, spec);
    if (!m) {
      std::cout << "buffer " << name << ": all " << a.numElements() << " elements agree (" << how
                << ")\n";
      continue;
    }
    ++bad;
    std::cout << "buffer " << name << ": first mismatch at " << indexText(a.shape, m->index)
              << ": " << who << " " << tc::formatElement(a, m->index) << " interp "
              << tc::formatElement(b, m->index) << " (" << m->count << " of " << a.numElements()
              << " elements differ; " << how << ")\n";
    if (std::optional<double> atol = tc::conf::atolThatAgrees(a, b, spec)) {
      std::ostringstream v;
      v << *atol;
      std::cout << "  every element of " << name << " agrees with --atol " << v.str()
                << " (at rtol=" << spec.rtol << ")\n";
    } else if (spec.kind == tc::conf::CompareSpec::Kind::Tolerance) {
      std::cout << "  no --atol makes " << name
                << " agree: a NaN or an infinity differs\n";
    }
  }
  if (bad == 0) {
    std::cout << "compare: " << (who == "gpu" ? "the GPU" : "Triton")
              << " and the interpreter agree on all " << gpu.arrays.size()
              << " buffers ("
              << (tol.any() ? "float tolerance " + tol.flags() + ", other parts the dtype's default"
                            : std::string("default tolerances of the conformance suite"))
              << ")\n";
    return kExitOk;
  }
  std::cerr << "triton-run: error: --compare: " << (who == "gpu" ? "the GPU" : "Triton")
            << " and the interpreter disagree on " << bad
            << " of " << gpu.arrays.size() << " buffers\n";
  return kExitTrap;
}

/// --bench: times launches of the chosen variant on `args` (a copy of the inputs).
int runBench(GpuRun &r, tc::BoundArgs &args) {
  BenchCounts counts;
  if (int rc = evalCounts(r.d, r.g, *r.chosen->kernel, args.args, counts))
    return rc;
  tc::GridOutcome grid = tc::evalGrid(r.plan.grid, *r.chosen->kernel, args.args);
  r.shape.apply(r.gpu);
  tc::gpu::BenchResult b;
  tc::RunResult res = r.gpu.bench(*r.chosen->kernel, *grid.dims, args.args, r.d.runOptions(r.plan),
                                  r.g.benchWarmup, r.g.benchIters, b);
  if (int rc = r.d.reportResult(res))
    return rc;
  const std::array<int64_t, 3> &gd = *grid.dims;
  std::string defines;
  for (const auto &[name, value] : r.chosen->kernel->defines())
    defines += (defines.empty() ? "" : " ") + name + "=" + value;
  std::cout << "bench: " << r.chosen->kernel->name()
            << (defines.empty() ? "" : " (" + defines + ")") << " " << r.shape.describe()
            << ", grid (" << gd[0] << ", " << gd[1] << ", " << gd[2] << "), " << b.ms.size()
            << " launches after " << r.g.benchWarmup << " warm-up"
            << (r.g.noFlushL2 ? " (L2 not flushed)" : " (L2 flushed before each)") << ", "
            << r.gpu.deviceDescription()
            << '\n'
            << "  median   " << fixed(b.medianMs, 4) << " ms\n"
            << "  min      " << fixed(b.minMs, 4) << " ms\n";
  if (b.medianMs > 0) {
    std::cout << "  GB/s     " << fixed(double(counts.bytes) / b.medianMs * 1e-6, 1) << " ("
              << (r.g.bytes.empty() ? std::to_string(counts.bytes) + " bytes of buffer arguments"
                                    : r.g.bytes + " = " + std::to_string(counts.bytes) + " bytes")
              << ", at the median)\n";
    if (!r.g.flops.empty())
      std::cout << "  TFLOP/s  " << fixed(counts.flops / b.medianMs * 1e-9, 2) << " ("
                << r.g.flops << " = " << static_cast<int64_t>(counts.flops)
                << " flops, at the median)\n";
  }
  return kExitOk;
}

/// Runs the chosen variant (or tunes), then --compare, --bench, --print, --out.
int runGpu(GpuRun &r) {
  bool tuning = tunes(r.g, r.runs.size());
  VariantRun &first = r.runs[0];
  std::unique_ptr<tc::BoundArgs> interpArgs, benchArgs;
  if (r.g.compare)
    interpArgs = cloneBound(*first.bound);
  if (r.g.bench)
    benchArgs = cloneBound(*first.bound);
  tc::RunResult result;
  if (tuning) {
    if (int rc = runTuned(r, result))
      return rc;
  } else {
    r.chosen = &first;
    r.shape = {r.g.warps[0], r.g.stages[0]};
    if (int rc = prepare(r.d, r.g, r.gpu, first, r.shape, true))
      return rc;
    result = r.gpu.launch(*first.kernel, first.grid, first.bound->args, r.d.runOptions(r.plan));
  }
  std::cout.flush();
  if (int rc = r.d.reportResult(result))
    return rc;
  int status = kExitOk;
  if (r.g.compare) {
    if (int rc = runInterpreter(r, *interpArgs))
      return rc;
    status = compareBuffers(*first.bound, *interpArgs, r.d.options().tolerance);
  }
  if (r.g.bench)
    if (int rc = runBench(r, *benchArgs))
      return rc;
  if (int rc = r.d.printAndWrite(r.plan, *first.bound))
    return rc;
  return status;
}

/// --launch: a conformance case on the GPU (its num_warps unless --num-warps is given).
int runLaunch(const RunDriver &d, const GpuFlags &g) {
  std::string why;
  if (!tc::gpu::cudaAvailable(&why))
    return noDevice(why);
  tc::gpu::GpuOptions go;
  go.diskCache = !g.noCache;
  go.codegen = g.codegen;
  std::unique_ptr<tc::gpu::GpuBackend> gpu = tc::gpu::createGpuBackend(go);
  auto hook = [&](const tc::conf::Case &c, const tc::conf::Variant &) {
    unsigned w = g.warps[0];
    if (!g.warpsGiven && c.numWarps)
      w = static_cast<unsigned>(*c.numWarps);
    gpu->setNumWarps(w);
  };
  return d.runLaunch(*gpu, hook);
}

/// --backend triton: the kernel with Triton (one variant), then --compare,
/// --print, --out; or a --launch case.
int runTriton(const RunDriver &d, const GpuFlags &g) {
  const DriverOptions &opt = d.options();
  if (g.bench || g.autotuneReport || g.timePasses || !g.disableOpt.empty() || g.noCache)
    return d.usageError("--backend triton runs the kernel once with Triton: --bench, "
                        "--autotune-report, --time-passes, --disable-opt and --no-cache are for the "
                        "gpu backend");
  tc::TritonOptions to;
  to.mode = g.tritonMode;
  to.numWarps = g.warps[0];
  to.numStages = g.stages[0];
  std::unique_ptr<tc::TritonBackend> triton = tc::createTritonBackend(to);
  auto unavailable = [&](const std::string &why) {
    std::cerr << "triton-run: the triton backend is not available: " << why << '\n';
    return kExitNoDevice;
  };
  if (!opt.launch.empty()) {
    std::string why;
    if (!triton->available(&why))
      return unavailable(why);
    auto hook = [&](const tc::conf::Case &c, const tc::conf::Variant &) {
      unsigned w = g.warps[0];
      if (!g.warpsGiven && c.numWarps)
        w = static_cast<unsigned>(*c.numWarps);
      triton->setNumWarps(w);
    };
    return d.runLaunch(*triton, hook);
  }
  Plan plan;
  if (int rc = d.makePlan(plan))
    return rc;
  std::vector<VariantRun> runs;
  if (int rc = d.compileVariants(plan, runs))
    return rc;
  if (runs.size() > 1 || tunes(g, 1))
    return d.usageError("--backend triton runs one variant: give each define and --num-warps, "
                        "--num-stages one value (list-valued ones are auto-tuned on the gpu backend)");
  VariantRun &run = runs[0];
  if (int rc = d.bind(plan, run))
    return rc;
  std::string why;
  if (!triton->available(&why))
    return unavailable(why);
  std::unique_ptr<tc::BoundArgs> ref;
  if (g.compare)
    ref = cloneBound(*run.bound);
  tc::RunResult result = triton->launch(*run.kernel, run.grid, run.bound->args, d.runOptions(plan));
  std::cout.flush();
  if (int rc = d.reportResult(result))
    return rc;
  int status = kExitOk;
  if (g.compare) {
    tc::RunOptions ro;
    ro.threads = g.threadsGiven ? opt.threads : std::max(1u, std::thread::hardware_concurrency());
    ro.maxSteps = opt.maxSteps;
    ro.maxSeconds = opt.timeout;
    std::ostringstream sink;
    ro.out = &sink;
    tc::GridOutcome grid = tc::evalGrid(plan.grid, *run.kernel, ref->args);
    tc::RunResult res = tc::createInterpreterBackend()->launch(*run.kernel, *grid.dims, ref->args, ro);
    if (res.status != tc::RunResult::Status::Ok) {
      std::cerr << "triton-run: error: --compare: the Triton run finished but the interpreter's "
                   "did not:\n";
      return d.reportResult(res);
    }
    status = compareBuffers(*run.bound, *ref, opt.tolerance, "triton");
  }
  if (int rc = d.printAndWrite(plan, *run.bound))
    return rc;
  return status;
}

int runAll(const RunDriver &d, GpuFlags &g) {
  const DriverOptions &opt = d.options();
  if (g.checkDevice)
    return checkDevice();
  if (std::string error = checkFlags(opt, g); !error.empty())
    return d.usageError(error);
  if (g.backend == "triton")
    return runTriton(d, g);
  if (!opt.launch.empty())
    return runLaunch(d, g);
  Plan plan;
  if (int rc = d.makePlan(plan))
    return rc;
  std::vector<VariantRun> runs;
  if (int rc = d.compileVariants(plan, runs))
    return rc;
  bool tuning = tunes(g, runs.size());
  if (g.autotuneReport && !tuning)
    return d.usageError("--autotune-report needs something to tune: list-valued defines "
                        "(-DTM=[32,64]) or a --num-warps list (--num-warps 2,4,8) or a "
                        "--num-stages list (--num-stages 2,3,4)");
  if (int rc = d.bind(plan, runs[0]))
    return rc;
  if (tuning)
    if (int rc = checkTunedVariants(d, plan, runs))
      return rc;
  BenchCounts counts; // checked before the device is (usage errors come first)
  if (int rc = evalCounts(d, g, *runs[0].kernel, runs[0].bound->args, counts))
    return rc;
  std::string why;
  if (!tc::gpu::cudaAvailable(&why))
    return noDevice(why);
  if (opt.dumpIR)
    for (const VariantRun &run : runs) {
      if (runs.size() > 1)
        std::cout << "// ----- variant: " << run.name << '\n';
      tc::ir::printModule(run.kernel->module(), std::cout);
    }
  tc::gpu::GpuOptions go;
  go.diskCache = !g.noCache;
  go.codegen = g.codegen;
  go.flushL2 = g.bench && !g.noFlushL2; // --bench's timings (and the auto-tuner's in that run)
  std::unique_ptr<tc::gpu::GpuBackend> gpu = tc::gpu::createGpuBackend(go);
  GpuRun r{d, g, plan, runs, *gpu, nullptr, {}};
  return runGpu(r);
}

const char *kFooter =
    R"(Argument specs: as triton-interp's (--arg NAME=SPEC; see triton-interp --help).

Auto-tuning: list-valued defines (-DTM=[32,64,128]), a --num-warps list
(--num-warps 2,4,8) and a --num-stages list (--num-stages 2,3,4) are tuned
together (variants = defines x warps x stages): every variant is timed on copies
of the arguments, the fastest runs once on them (remembered per device and
arguments under ~/.cache/triton-c/autotune; --no-cache forgets it).

Examples:
  triton-run examples/vector_add.tc -DSIZE=1024 -DTYPE=float --grid 'cdiv(N, SIZE)' \
      --arg N=5000 --arg a=randn:f32[N] --arg b=randn:f32[N] --arg c=zeros:f32[N] \
      --compare --print c
  triton-run examples/matmul.tc -DTM=[64,128] -DTN=[64,128] -DTK=32 -DTYPE=half \
      --num-warps 4,8 --num-stages 2,3,4 --grid 'M/TM, N/TN' --arg M=4096 --arg N=4096 \
      --arg K=4096 --arg lda=4096 --arg ldb=4096 --arg ldc=4096 --arg A=randn:[M,K] \
      --arg B=randn:[K,N] --arg C=zeros:[M,N] --bench --flops '2*M*N*K' --autotune-report
  triton-run --launch conformance/cases/kernels.json --case NAME
  triton-run --check-device
  triton-run --backend triton --triton-mode interpret examples/vector_add.tc -DSIZE=1024 \
      -DTYPE=float --grid 'cdiv(N, SIZE)' --arg N=5000 --arg a=randn:f32[N] \
      --arg b=randn:f32[N] --arg c=zeros:f32[N] --compare

Exit codes: 0 ok, 1 trap, GPU failure or --compare mismatch, 2 compile error, 3 usage error,
4 no CUDA device (--backend triton: Triton not available).)";

} // namespace

static int toolMain(int argc, char **argv) {
  DriverOptions opt;
  GpuFlags g;
  CLI::App app{"triton-run: run a Triton-C kernel on an NVIDIA GPU", "triton-run"};
  app.footer(kFooter);
  addCommonOptions(app, opt);
  app.get_option("--threads")
      ->description("with --compare: the interpreter's threads (default: all cores)");
  app.get_option("--max-steps")
      ->description("with --compare: the interpreter's step limit per program");
  app.get_option("--timeout")
      ->description("stop a launch (GPU or interpreter) after this many seconds");
  app.get_option("--program")->description("interpreter only (use triton-interp)");
  app.get_option("--trace")->description("interpreter only (use triton-interp)");
  app.add_option("--num-warps", g.numWarps,
                 "warps per program (default 4); a list such as 2,4,8 is auto-tuned");
  app.add_option("--num-stages", g.numStages,
                 "software-pipelining stages of the loads in loops, 1 to 8 (1: none; default " +
                     g.numStages + "); a list such as 2,3,4 is auto-tuned (not with "
                     "--disable-opt pipeline, which means 1)");
  app.add_option("--disable-opt", g.disableOpt,
                 "switch off GPU optimisations to bisect a mismatch: " +
                     tc::codegen::optimizationList());
  app.add_flag("--compare", g.compare,
               "also run on the interpreter and compare every buffer (default tolerances, or "
               "--rtol/--atol)");
  addToleranceOptions(app, opt, "--compare and of --launch outputs without a compare of their own");
  app.add_flag("--race-check,!--no-race-check", g.raceCheck,
               "with --compare: the interpreter's race check (on by default; --no-race-check "
               "switches it off)");
  app.add_flag("--bench", g.bench,
               "time launches: median and min ms, GB/s (and TFLOP/s); a 256 MiB buffer is "
               "written before each timed launch (untimed) to flush the L2, as Triton's do_bench "
               "does (also for auto-tuning in that run)");
  app.add_flag("--no-flush-l2", g.noFlushL2,
               "with --bench: do not flush the L2 between launches (data may stay cached)");
  app.add_option("--bytes", g.bytes,
                 "with --bench: the bytes a launch moves, for GB/s, e.g. '2*N*4' (an expression "
                 "over defines and scalar arguments; default: every buffer argument's size)");
  app.add_option("--bench-iters", g.benchIters, "timed launches of --bench (default 100)");
  app.add_option("--bench-warmup", g.benchWarmup, "untimed launches first (default 10)");
  app.add_option("--flops", g.flops, "with --bench: flops per launch, e.g. '2*M*N*K'");
  app.add_flag("--autotune-report", g.autotuneReport, "print every tuned variant's time");
  app.add_flag("--time-passes", g.timePasses, "print the GPU compiler's per-stage times");
  app.add_flag("--no-cache", g.noCache, "compile afresh (no kernel or auto-tuning cache)");
  app.add_option("--backend", g.backend,
                 "gpu (this project's GPU backend; default) or triton (Triton, the Python DSL: "
                 "the kernel as tritonc --emit=triton prints it, docs/triton.md)")
      ->check(CLI::IsMember({"gpu", "triton"}));
  app.add_option("--triton-mode", g.tritonMode,
                 "with --backend triton: gpu, interpret (Triton's interpreter, TRITON_INTERPRET=1, "
                 "no GPU) or auto (the GPU when torch sees one; default)")
      ->check(CLI::IsMember({"auto", "gpu", "interpret"}));
  app.add_flag("--check-device", g.checkDevice,
               "print the CUDA device and exit (4 when there is none)");
  app.set_version_flag("--version", "triton-run 0.1.0");
  if (int rc = parseCommandLine(app, argc, argv); rc >= 0)
    return rc;
  g.warpsGiven = app.count("--num-warps") > 0;
  if (std::string error; !tc::codegen::disableOptimizations(g.codegen, g.disableOpt, error)) {
    std::cerr << "triton-run: error: --disable-opt: " << error << '\n';
    return 3;
  }
  g.threadsGiven = app.count("--threads") > 0;
  g.maxStepsGiven = app.count("--max-steps") > 0;
  g.itersGiven = app.count("--bench-iters") > 0;
  g.warmupGiven = app.count("--bench-warmup") > 0;
  return runAll(RunDriver("triton-run", opt), g);
}

int main(int argc, char **argv) {
  return tc::guardedMain("triton-run", [&] { return toolMain(argc, argv); });
}
