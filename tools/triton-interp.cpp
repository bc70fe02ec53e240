//===- triton-interp.cpp - Run a Triton-C kernel on the reference interpreter ===//
//
//   triton-interp examples/vector_add.tc -DSIZE=1024 -DTYPE=float
//       --grid 'cdiv(N, SIZE)' --arg N=5000 --arg a=randn:f32[5000]:seed=1
//       --arg b=@b.npy --arg c=zeros:f32[5000] --print c --out c=c.npy
//
// List-valued defines (-DSIZE=[64,128]) run every variant and check that all
// buffers agree bit for bit. Exit codes: 0 ok, 1 trap or disagreement between
// variants, 2 compile error, 3 usage error.
//
//===----------------------------------------------------------------------===//
#include "interp/InterpreterBackend.h"
#include "ir/Printer.h"
#include "support/ToolMain.h"
#include "tools/RunDriver.h"

#include <algorithm>
#include <iostream>

namespace {

using namespace tc::tools;

/// Compiles every variant, runs each on the interpreter, checks that all
/// variants agree, then prints and writes the first one's buffers.
int runAll(const RunDriver &d) {
  const DriverOptions &opt = d.options();
  std::unique_ptr<tc::Backend> backend = tc::createInterpreterBackend();
  if (!opt.launch.empty())
    return d.runLaunch(*backend);
  Plan plan;
  if (int rc = d.makePlan(plan))
    return rc;
  std::string why;
  if (!backend->available(&why))
    return d.usageError("the interpreter is not available: " + why);
  // Compile every variant first, so that a compile error comes before any run.
  std::vector<VariantRun> runs;
  if (int rc = d.compileVariants(plan, runs))
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
      tc::RunResult r = backend->launch(*run.kernel, run.grid, run.bound->args, d.runOptions(plan));
      std::cout.flush();
      rc = d.reportResult(r);
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
      --arg c=zeros:f32[N] --print c --out c=c.npy
  triton-interp examples/vector_add.tc -DSIZE=[64,128,256] -DTYPE=float --grid 'cdiv(N, SIZE)' \
      --arg N=1000 --arg a=rand:f32[N] --arg b=rand:f32[N] --arg c=zeros:f32[N]
  triton-interp kernel.tc --grid 4,2 --program 3,1 --trace ...
  triton-interp --launch conformance/cases/promotion.json --case int8_plus_uint8

Exit codes: 0 ok, 1 trap or disagreement between variants, 2 compile error, 3 usage error.)";

} // namespace

static int toolMain(int argc, char **argv) {
  DriverOptions opt;
  CLI::App app{"triton-interp: run a Triton-C kernel on the CPU reference interpreter",
               "triton-interp"};
  app.footer(kFooter);
  addCommonOptions(app, opt);
  app.set_version_flag("--version", "triton-interp 0.1.0");
  if (int rc = parseCommandLine(app, argc, argv); rc >= 0)
    return rc;
  return runAll(RunDriver("triton-interp", opt));
}

int main(int argc, char **argv) {
  return tc::guardedMain("triton-interp", [&] { return toolMain(argc, argv); });
}
