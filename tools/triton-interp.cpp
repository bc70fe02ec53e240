//===- triton-interp.cpp - Run a Triton-C kernel on the reference interpreter ===//
//
//   triton-interp examples/vector_add.tc -DSIZE=1024 -DTYPE=float
//       --grid 'cdiv(N, SIZE)' --arg N=5000 --arg a=randn:f32[5000]:seed=1
//       --arg b=@b.npy --arg c=zeros:f32[5000] --print c --out c=c.npy --force
//
// List-valued defines (-DSIZE=[64,128]) run every variant and check that all
// buffers agree: integers exactly, floats within the conformance suite's
// default tolerance or --rtol/--atol (bit for bit with --variants-exact); --print and --out show
// the first variant's buffers. Exit codes: 0 ok, 1 trap or disagreement between
// variants, 2 compile error, 3 usage error.
//
//===----------------------------------------------------------------------===//
#include "interp/AccessMap.h"
#include "interp/InterpreterBackend.h"
#include "ir/Printer.h"
#include "support/FileIO.h"
#include "support/Interrupt.h"
#include "support/ToolMain.h"
#include "tools/RunDriver.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace {

using namespace tc::tools;

/// The debugger's own flags (not shared with triton-run).
struct DebugOptions {
  bool strict = false, raceCheck = true;
  std::string accessMap; // FILE.html
};

/// The access-map file of variant `v` of `n`: FILE itself for one launch,
/// FILE with ".v" before its extension for several.
std::string accessMapPath(const std::string &file, size_t v, size_t n) {
  if (n <= 1)
    return file;
  std::filesystem::path p(file);
  std::filesystem::path ext = p.extension();
  return (p.parent_path() / (p.stem().string() + "." + std::to_string(v + 1) + ext.string()))
      .string();
}

/// Warns about buffers that were stored to but not everywhere; with --strict
/// that is an error (exit 1).
int checkCoverage(const RunDriver &d, const DebugOptions &dbg, const tc::RunResult &r,
                  std::array<int64_t, 3> grid) {
  int rc = kExitOk;
  for (const tc::BufferAccess &b : r.buffers) {
    std::string u = tc::describeUnwritten(b);
    if (u.empty())
      continue;
    std::cerr << "triton-interp: " << (dbg.strict ? "error: " : "warning: ") << u
              << "; is the grid (" << grid[0] << ", " << grid[1] << ", " << grid[2]
              << ") large enough?\n";
    if (dbg.strict)
      rc = kExitTrap;
  }
  (void)d;
  return rc;
}

/// Compiles every variant, runs each on the interpreter, checks that all
/// variants agree, then prints and writes the first one's buffers.
int runAll(const RunDriver &d, const DebugOptions &dbg) {
  const DriverOptions &opt = d.options();
  std::unique_ptr<tc::Backend> backend = tc::createInterpreterBackend();
  if (!opt.launch.empty()) {
    if (!dbg.accessMap.empty())
      return d.usageError("--access-map cannot be combined with --launch (not supported yet)");
    return d.runLaunch(*backend);
  }
  Plan plan;
  if (int rc = d.makePlan(plan))
    return rc;
  if (!dbg.accessMap.empty() && plan.program)
    return d.usageError("--access-map maps a whole launch; it cannot be combined with --program");
  if (opt.tolerance.any()) {
    std::string flags = opt.tolerance.flags();
    if (opt.variantsExact)
      return d.usageError(flags + ": --variants-exact demands identical bits; give one or the "
                                  "other");
    if (plan.variants.size() <= 1)
      return d.usageError(flags + ": the tolerance applies to the comparison of the variants of "
                                  "list-valued defines (-DBLOCK=[64,128]) or to a --launch case; "
                                  "this run has one variant");
  }
  // The access maps are outputs: never one of the inputs or an --out file
  // (--force or not), never an existing file without --force.
  auto checkAccessMaps = [&](const std::vector<std::string> &inputs) {
    for (size_t v = 0; v < plan.variants.size(); ++v) {
      std::string path = accessMapPath(dbg.accessMap, v, plan.variants.size());
      for (const auto &[name, out] : plan.outs)
        if (tc::sameFile(out, path))
          return d.usageError("--access-map " + path + ": the same file as --out " + name + "=" +
                              out);
      if (std::string why = tc::checkOutputPath(path, inputs, opt.force); !why.empty())
        return d.usageError("--access-map " + path + ": " + why);
    }
    return kExitOk;
  };
  if (!dbg.accessMap.empty())
    if (int rc = checkAccessMaps(d.inputFiles(plan)))
      return rc;
  std::string why;
  if (!backend->available(&why))
    return d.usageError("the interpreter is not available: " + why);
  // Compile every variant first, so that a compile error comes before any run.
  std::vector<VariantRun> runs;
  if (int rc = d.compileVariants(plan, runs))
    return rc;
  if (!dbg.accessMap.empty()) // and not over an #include file either
    if (int rc = checkAccessMaps(d.inputFiles(plan, &runs)))
      return rc;
  bool many = runs.size() > 1;
  int disagree = kExitOk;
  for (size_t v = 0; v < runs.size(); ++v) {
    VariantRun &run = runs[v];
    if (many)
      std::cout << "// ----- variant: " << run.name << '\n';
    if (opt.dumpIR)
      tc::ir::printModule(run.kernel->module(), std::cout);
    int rc = d.bind(plan, run);
    if (rc == kExitOk) {
      tc::RunOptions ro = d.runOptions(plan);
      ro.raceCheck = dbg.raceCheck;
      ro.accessMap = !dbg.accessMap.empty();
      tc::RunResult r = backend->launch(*run.kernel, run.grid, run.bound->args, ro);
      std::cout.flush();
      if (ro.accessMap) {
        tc::AccessMapLaunch m;
        m.kernel = run.kernel->name();
        m.title = opt.input + (run.name.empty() ? "" : " " + run.name);
        m.grid = run.grid;
        m.buffers = r.buffers;
        std::string path = accessMapPath(dbg.accessMap, v, runs.size());
        std::string error;
        if (!tc::writeFileAtomic(path, tc::renderAccessMap(m), error))
          return d.usageError("--access-map: " + error);
        std::cerr << "triton-interp: access map written to " << path << '\n';
      }
      rc = d.reportResult(r);
      if (rc == kExitOk)
        rc = checkCoverage(d, dbg, r, run.grid);
    }
    if (rc != kExitOk) {
      if (many)
        std::cerr << "note: in variant " << run.name << '\n';
      return rc;
    }
    // Compared with the first variant at once and then released: no more than
    // two variants' buffers are alive at a time.
    if (v > 0) {
      disagree = std::max(disagree, d.compareVariants({&runs[0], &run}));
      run.bound.reset();
    }
  }
  if (disagree != kExitOk)
    return disagree;
  return d.printAndWrite(plan, *runs[0].bound);
}

const char *kFooter = R"(Argument specs (--arg NAME=SPEC):
  N=5000  x=1.5  flag=true  bits=0x7fc00000   scalars (dtype from the parameter)
  zeros:f32[5000]  full:2.5:f32[64,32]  arange:i32[128]
  rand:f32[N]  randn:f32[N]:seed=1  randint:-4:4:f32[N]   (deterministic, seeded)
  @file.npy                                              NumPy file (dtype must match)
  Shapes and grids may use defines and integer scalar arguments.

Examples:
  triton-interp examples/vector_add.tc -DSIZE=1024 -DTYPE=float --grid 'cdiv(N, SIZE)' \
      --arg N=5000 --arg a=randn:f32[5000]:seed=1 --arg b=arange:f32[N] \
      --arg c=zeros:f32[N] --print c --out c=c.npy --force
  triton-interp examples/vector_add.tc -DSIZE=[64,128,256] -DTYPE=float --grid 'cdiv(N, SIZE)' \
      --arg N=1000 --arg a=rand:f32[N] --arg b=rand:f32[N] --arg c=zeros:f32[N]
  triton-interp examples/transpose_masked.tc -DTM=16 -DTN=16 -DTYPE=float --grid 2,2 \
      --arg M=20 --arg N=20 --arg ldx=20 --arg ldy=20 --arg X=arange:f32[20,20] \
      --arg Y=zeros:f32[20,20] --program 1,1 --trace
  triton-interp --launch conformance/cases/promotion.json --case bool_add_i8_to_i8

List-valued defines (-DBLOCK=[256,1024]) run every variant and compare their buffers: integers
must be identical, floats agree within the conformance suite's default tolerance of their dtype
(float32 rtol 1.3e-6 atol 1e-5; float16 1e-3, 1e-5; bfloat16 1.6e-2, 1e-5; float64 1e-7, 1e-7;
--rtol and --atol replace those parts), or bit for bit with --variants-exact. --print and --out show the FIRST variant's buffers
(BLOCK=256 above).

Exit codes: 0 ok, 1 trap or disagreement between variants, 2 compile error, 3 usage error.)";

} // namespace

static int toolMain(int argc, char **argv) {
  DriverOptions opt;
  CLI::App app{"triton-interp: run a Triton-C kernel on the CPU reference interpreter",
               "triton-interp"};
  app.footer(kFooter);
  addCommonOptions(app, opt);
  DebugOptions dbg;
  app.add_flag("--strict", dbg.strict,
               "a buffer some program stored to but not everywhere is an error, not a warning");
  app.add_flag("--race-check,!--no-race-check", dbg.raceCheck,
               "trap data_race when two programs touch one element, one with a plain store, "
               "and no atomic orders them (on by default; --no-race-check switches it off)");
  app.add_option("--access-map", dbg.accessMap,
                 "write an HTML page of which program loaded and stored each element of each "
                 "buffer (FILE.html; FILE.N.html per variant with list-valued defines)");
  addToleranceOptions(app, opt,
                      "the comparison of list-valued defines' variants and of --launch outputs "
                      "without a compare of their own");
  app.add_flag("--variants-exact", opt.variantsExact,
               "with list-valued defines, variants must give identical bits (default: integers "
               "exactly, floats within the conformance suite's tolerance of their dtype)");
  app.set_version_flag("--version", "triton-interp 0.1.0");
  if (int rc = parseCommandLine(app, argc, argv); rc >= 0)
    return rc;
  tc::installInterruptHandler(); // Ctrl-C reports where the programs are (exit 130)
  return runAll(RunDriver("triton-interp", opt), dbg);
}

int main(int argc, char **argv) {
  return tc::guardedMain("triton-interp", [&] { return toolMain(argc, argv); });
}
