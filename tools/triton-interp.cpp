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
#include "conformance/Runner.h"
#include "interp/ArgSpec.h"
#include "interp/ArrayPrint.h"
#include "interp/GridExpr.h"
#include "interp/Launch.h"
#include "ir/Printer.h"
#include "support/Npy.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

namespace {

constexpr int kExitOk = 0, kExitTrap = 1, kExitCompileError = 2, kExitUsage = 3;

struct Options {
  std::string input, kernel, grid, program, launch, caseName, bf16Descr = "u2";
  std::vector<std::string> defines, undefines, includeDirs, args, prints, outs;
  bool force = false, trace = false, dumpIR = false, bf16AsU2 = false, printAll = false;
  unsigned threads = 1;
  uint64_t maxSteps = 0, seed = 0;
  double timeout = 0;
};

/// Everything checked before the first compilation.
struct Plan {
  std::vector<tc::DefineSpec> defineSpecs;
  std::vector<tc::DefineList> variants;
  std::vector<tc::ArgSpec> args;
  std::vector<std::pair<std::string, std::string>> outs; // buffer name, path
  tc::GridSpec grid;
  std::optional<std::array<int64_t, 3>> program;
  tc::BufferOptions bufferOpts;
  tc::NpyWriteOptions npyOpts;
};

/// One variant after its run.
struct VariantRun {
  std::string name;
  std::shared_ptr<tc::CompiledKernel> kernel;
  std::unique_ptr<tc::BoundArgs> bound;
};

/// Prints `msg` as errors, one per line ("note: " lines stay notes).
int usageError(const std::string &msg) {
  std::istringstream lines(msg);
  for (std::string line; std::getline(lines, line);)
    std::cerr << (line.starts_with("note: ") ? "" : "triton-interp: error: ") << line << '\n';
  return kExitUsage;
}

// CLI11 takes single-dash options of one letter only; accept `-dump-ir` and
// the like by rewriting them.
std::vector<std::string> normaliseArgs(int argc, char **argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-dump-ir" || a == "-trace" || a == "-force")
      a = "-" + a;
    args.push_back(a);
  }
  std::reverse(args.begin(), args.end()); // CLI11 parses a reversed vector
  return args;
}

/// -D specs with -U applied: -U NAME drops every -D NAME, and is also passed to
/// the preprocessor (so it can undefine a built-in macro or one from the source's
/// own command-line defaults), as `tritonc -U` does.
bool parseDefines(const Options &opt, Plan &plan, std::string &error) {
  for (const std::string &d : opt.defines) {
    auto spec = tc::parseDefine(d, error);
    if (!spec)
      return false;
    plan.defineSpecs.push_back(std::move(*spec));
  }
  for (const std::string &u : opt.undefines) {
    auto &specs = plan.defineSpecs;
    std::erase_if(specs, [&](const tc::DefineSpec &s) { return s.name == u; });
  }
  plan.variants = tc::expandDefines(plan.defineSpecs);
  return true;
}

// program := INT (',' INT (',' INT)?)?
bool parseProgram(const std::string &text, Plan &plan, std::string &error) {
  std::vector<std::string> parts = tc::splitTopLevel(text, ',');
  std::array<int64_t, 3> p{0, 0, 0};
  if (parts.empty() || parts.size() > 3) {
    error = "--program takes 1 to 3 comma-separated program ids, e.g. --program 3,0";
    return false;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    auto v = tc::evalIntExpr(parts[i], {}, error);
    if (!v || *v < 0) {
      error = "--program " + text + ": " + (v ? "program ids are >= 0" : error);
      return false;
    }
    p[i] = *v;
  }
  plan.program = p;
  return true;
}

/// Checks --out: NAME=PATH, no duplicates, no overwriting without --force.
bool parseOuts(const Options &opt, Plan &plan, std::string &error) {
  std::set<std::string> paths;
  for (const std::string &o : opt.outs) {
    size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == o.size()) {
      error = "--out " + o + ": expected NAME=FILE.npy";
      return false;
    }
    std::string name = o.substr(0, eq), path = o.substr(eq + 1);
    std::error_code ec;
    std::string canon = std::filesystem::weakly_canonical(path, ec).string();
    if (!paths.insert(canon).second) {
      error = "--out " + o + ": two outputs would be written to '" + path + "'";
      return false;
    }
    plan.outs.emplace_back(name, path);
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
      error = "--out " + o + ": the directory '" + parent.string() + "' does not exist";
      return false;
    }
    if (opt.force || !std::filesystem::exists(path))
      continue;
    for (const tc::ArgSpec &a : plan.args)
      if (a.kind == tc::ArgSpec::Kind::File && std::filesystem::equivalent(a.path, path, ec)) {
        error = "--out " + o + ": refusing to overwrite the input file '" + path +
                "' (read by --arg " + a.name + "); use --force to overwrite it";
        return false;
      }
    error = "--out " + o + ": refusing to overwrite the existing file '" + path +
            "'; use --force to overwrite it";
    return false;
  }
  return true;
}

/// Parses and checks every option that does not need the kernel.
int makePlan(const Options &opt, Plan &plan) {
  std::string error;
  if (!parseDefines(opt, plan, error))
    return usageError(error);
  for (const std::string &a : opt.args) {
    auto spec = tc::parseArgSpec(a, error);
    if (!spec)
      return usageError(error);
    plan.args.push_back(std::move(*spec));
  }
  if (!parseOuts(opt, plan, error))
    return usageError(error);
  plan.grid = tc::parseGridSpec(opt.grid);
  if (!opt.program.empty() && !parseProgram(opt.program, plan, error))
    return usageError(error);
  plan.bufferOpts.defaultSeed = opt.seed;
  plan.bufferOpts.bf16FromU2 = opt.bf16AsU2;
  plan.npyOpts.bf16 = opt.bf16Descr == "bfloat16" ? tc::NpyBf16Descr::Name : tc::NpyBf16Descr::U2;
  return kExitOk;
}

/// --print and --out must name pointer parameters.
int checkBufferNames(const Options &opt, const Plan &plan, const tc::CompiledKernel &k) {
  const tc::ir::Function &f = k.function();
  auto check = [&](const std::string &flag, const std::string &name) {
    for (unsigned i = 0; i < f.numParams(); ++i)
      if (f.paramName(i) == name) {
        if (f.param(i)->type().isPtr)
          return kExitOk;
        return usageError(flag + " " + name + ": parameter '" + name + "' (" +
                          f.param(i)->type().langStr() + ") is not a buffer");
      }
    return usageError(flag + " " + name + ": no parameter named '" + name + "'\nnote: kernel '" +
                      k.name() + "' takes: " + tc::describeParams(f));
  };
  for (const std::string &p : opt.prints)
    if (int rc = check("--print", p))
      return rc;
  for (const auto &[name, path] : plan.outs)
    if (int rc = check("--out", name))
      return rc;
  return kExitOk;
}

std::shared_ptr<tc::CompiledKernel> compile(const Options &opt, const tc::DefineList &defines,
                                            int &rc) {
  tc::CompileRequest req;
  req.path = opt.input;
  req.defines = defines;
  req.undefines = opt.undefines;
  req.includeDirs = opt.includeDirs;
  req.kernelName = opt.kernel;
  tc::CompileOutcome outcome = tc::compileKernel(req);
  std::cerr << outcome.diagnostics;
  rc = outcome.ok() ? kExitOk : kExitCompileError;
  return outcome.kernel;
}

/// Binds, evaluates the grid and launches one variant.
int runVariant(const Options &opt, const Plan &plan, tc::Backend &backend, VariantRun &run) {
  run.bound = std::make_unique<tc::BoundArgs>();
  std::string error;
  if (!tc::bindArgs(plan.args, *run.kernel, plan.bufferOpts, *run.bound, error))
    return usageError(error);
  tc::GridOutcome grid = tc::evalGrid(plan.grid, *run.kernel, run.bound->args);
  if (!grid.dims)
    return usageError("--grid: " + grid.error);
  tc::RunOptions ro;
  ro.threads = opt.threads;
  ro.maxSteps = opt.maxSteps;
  ro.maxSeconds = opt.timeout;
  ro.trace = opt.trace;
  ro.onlyProgram = plan.program;
  ro.out = &std::cout;
  if (plan.program)
    for (int i = 0; i < 3; ++i)
      if ((*plan.program)[i] >= (*grid.dims)[i])
        return usageError("--program " + opt.program + ": program id " +
                          std::to_string((*plan.program)[i]) + " on axis " + std::to_string(i) +
                          " is outside the grid (" + std::to_string((*grid.dims)[0]) + ", " +
                          std::to_string((*grid.dims)[1]) + ", " + std::to_string((*grid.dims)[2]) +
                          ")");
  tc::RunResult r = backend.launch(*run.kernel, *grid.dims, run.bound->args, ro);
  std::cout.flush();
  switch (r.status) {
  case tc::RunResult::Status::Ok: return kExitOk;
  case tc::RunResult::Status::Trapped:
    std::cerr << (r.trap ? r.trap->render() : "trap\n");
    return kExitTrap;
  case tc::RunResult::Status::Error:
    std::cerr << "triton-interp: error: " << r.error << '\n';
    return kExitTrap;
  }
  return kExitTrap;
}

std::string indexStr(const std::vector<int64_t> &shape, int64_t flat) {
  if (shape.size() <= 1)
    return std::to_string(flat);
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    idx[k] = shape[k] ? flat % shape[k] : 0;
    flat = shape[k] ? flat / shape[k] : 0;
  }
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k)
    s += (k ? ", " : "") + std::to_string(idx[k]);
  return s + "]";
}

std::string valueStr(const tc::HostArray &a, int64_t i) {
  std::ostringstream os;
  os << tc::formatElement(a, i) << " (0x" << std::hex << a.getBits(i) << ")";
  return os.str();
}

/// The first difference between two runs' buffer `name`, or "".
std::string firstDifference(const std::string &name, const tc::HostArray &a, const tc::HostArray &b,
                            const std::string &na, const std::string &nb) {
  if (a.shape != b.shape || a.dtype != b.dtype)
    return "buffer '" + name + "' has shape " + tc::ir::shapeStr(a.shape) + " in variant " + na +
           " but " + tc::ir::shapeStr(b.shape) + " in variant " + nb;
  for (int64_t i = 0; i < a.numElements(); ++i)
    if (a.getBits(i) != b.getBits(i))
      return "buffer '" + name + "' differs at index " + indexStr(a.shape, i) + ": variant " + na +
             " gives " + valueStr(a, i) + ", variant " + nb + " gives " + valueStr(b, i);
  return "";
}

/// Compares every buffer of every variant with the first variant's.
int compareVariants(const std::vector<VariantRun> &runs) {
  int rc = kExitOk;
  for (size_t v = 1; v < runs.size(); ++v)
    for (const auto &[name, array] : runs[0].bound->arrays) {
      std::string diff =
          firstDifference(name, array, runs[v].bound->arrays.at(name), runs[0].name, runs[v].name);
      if (diff.empty())
        continue;
      std::cerr << "triton-interp: error: variants disagree: " << diff << '\n';
      rc = kExitTrap;
    }
  return rc;
}

int printAndWrite(const Options &opt, const Plan &plan, const VariantRun &run) {
  tc::ArrayPrintOptions po;
  if (opt.printAll)
    po.threshold = -1;
  for (const std::string &name : opt.prints) {
    const tc::HostArray &a = run.bound->arrays.at(name);
    std::cout << name << ": " << tc::conformanceName(a.dtype) << tc::ir::shapeStr(a.shape) << '\n'
              << tc::formatArray(a, po) << '\n';
  }
  for (const auto &[name, path] : plan.outs) {
    const tc::HostArray &a = run.bound->arrays.at(name);
    std::string error;
    if (!tc::writeNpy(path, a.dtype, a.shape, a.data, plan.npyOpts, error))
      return usageError(error);
  }
  return kExitOk;
}

/// The case to run: --case NAME, or the file's only case.
const tc::conf::Case *pickCase(const Options &opt, const tc::conf::Suite &suite, int &rc) {
  rc = kExitOk;
  if (!opt.caseName.empty()) {
    if (const tc::conf::Case *c = suite.find(opt.caseName))
      return c;
    for (const tc::conf::InvalidCase &bad : suite.invalid)
      if (bad.name == opt.caseName) {
        rc = usageError("case '" + bad.name + "' (" + bad.path + ") does not load:\n" + bad.error);
        return nullptr;
      }
  } else if (suite.cases.size() == 1 && suite.invalid.empty()) {
    return &suite.cases[0];
  }
  std::string names;
  for (size_t i = 0; i < suite.cases.size() && i < 50; ++i)
    names += (i ? ", " : "") + suite.cases[i].name;
  if (suite.cases.size() > 50)
    names += ", ...";
  rc = usageError((opt.caseName.empty() ? std::string("--launch: pick a case with --case NAME")
                                        : "no case named '" + opt.caseName + "' in " + opt.launch) +
                  "\nnote: the cases of " + opt.launch + ": " + (names.empty() ? "none" : names));
  return nullptr;
}

/// Prints one variant's verdict; returns its exit code.
int reportVerdict(const tc::conf::Case &c, const tc::conf::Variant &v,
                  const tc::conf::Verdict &verdict) {
  std::string where = "case '" + c.name + "'" + (v.label.empty() ? "" : " variant " + v.label);
  switch (verdict.status) {
  case tc::conf::Status::Pass:
  case tc::conf::Status::XPass: return kExitOk;
  case tc::conf::Status::Skipped:
    std::cout << "skipped: " << where << ": " << verdict.error << '\n';
    return kExitOk;
  case tc::conf::Status::Fail:
  case tc::conf::Status::XFail: {
    std::string msg = verdict.error;
    if (msg.empty() && verdict.mismatch)
      msg = "output '" + verdict.mismatch->output + "' differs";
    std::cerr << "triton-interp: error: " << where << " failed: " << msg
              << (msg.ends_with('\n') ? "" : "\n");
    if (verdict.mismatch)
      std::cerr << "note: got " << verdict.mismatch->got << ", want " << verdict.mismatch->want
                << '\n';
    return kExitTrap;
  }
  case tc::conf::Status::Error:
  case tc::conf::Status::Crash:
  case tc::conf::Status::Timeout: {
    bool compileError = verdict.error.starts_with("compile error");
    std::cerr << "triton-interp: error: " << where << ": "
              << (verdict.status == tc::conf::Status::Error
                      ? ""
                      : std::string(tc::conf::statusName(verdict.status)) + ": ")
              << verdict.error << (verdict.error.ends_with('\n') ? "" : "\n");
    return compileError ? kExitCompileError : kExitTrap;
  }
  }
  return kExitTrap;
}

/// --launch FILE [--case NAME]: runs a conformance case and checks its expectation.
int runLaunch(const Options &opt) {
  if (!opt.input.empty() || !opt.grid.empty() || !opt.args.empty() || !opt.defines.empty() ||
      !opt.prints.empty() || !opt.outs.empty() || !opt.program.empty())
    return usageError(
        "--launch takes the kernel, defines, grid and arguments from the case; "
        "it cannot be combined with a kernel file, -D, --grid, --arg, --program, --print or "
        "--out (not supported yet)");
  tc::conf::LoadResult loaded = tc::conf::loadSuiteFile(opt.launch);
  if (!loaded.suite) {
    std::string errors;
    for (const std::string &e : loaded.errors)
      errors += (errors.empty() ? "" : "\n") + e;
    return usageError(errors.empty() ? "cannot load " + opt.launch : errors);
  }
  int rc = kExitOk;
  const tc::conf::Case *c = pickCase(opt, *loaded.suite, rc);
  if (!c)
    return rc;
  std::unique_ptr<tc::Backend> backend = tc::createInterpreterBackend();
  tc::RunOptions ro;
  ro.threads = opt.threads;
  ro.maxSteps = opt.maxSteps;
  ro.maxSeconds = opt.timeout;
  ro.trace = opt.trace;
  ro.out = &std::cout;
  std::vector<tc::conf::Variant> variants = c->variants();
  for (const tc::conf::Variant &v : variants) {
    if (variants.size() > 1)
      std::cout << "// ----- variant: " << v.label << '\n';
    tc::conf::Verdict verdict = tc::conf::runVariant(*loaded.suite, *c, v, *backend, ro);
    std::cout.flush();
    if (int code = reportVerdict(*c, v, verdict))
      return code;
  }
  std::cout << "pass: " << loaded.suite->name << " / " << c->name << " ("
            << tc::conf::expectKindName(c->expect.kind) << ", " << variants.size()
            << (variants.size() == 1 ? " variant" : " variants") << ")\n";
  return kExitOk;
}

int runAll(const Options &opt) {
  if (!opt.launch.empty())
    return runLaunch(opt);
  if (opt.input.empty())
    return usageError("no kernel file given (try --help)");
  if (opt.grid.empty())
    return usageError("missing --grid (e.g. --grid 'cdiv(N, SIZE)' or --grid 4,2)");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(opt.input, ec))
    return usageError("cannot open the kernel file '" + opt.input + "'");
  Plan plan;
  if (int rc = makePlan(opt, plan))
    return rc;
  std::unique_ptr<tc::Backend> backend = tc::createInterpreterBackend();
  std::string why;
  if (!backend->available(&why))
    return usageError("the interpreter is not available: " + why);
  // Compile every variant first, so that a compile error comes before any run.
  std::vector<VariantRun> runs;
  bool many = plan.variants.size() > 1;
  for (const tc::DefineList &variant : plan.variants) {
    VariantRun run;
    run.name = tc::describeVariant(plan.defineSpecs, variant);
    int rc = kExitOk;
    run.kernel = compile(opt, variant, rc);
    if (rc == kExitOk)
      rc = checkBufferNames(opt, plan, *run.kernel);
    if (rc != kExitOk) {
      if (many)
        std::cerr << "note: in variant " << run.name << '\n';
      return rc;
    }
    runs.push_back(std::move(run));
  }
  for (VariantRun &run : runs) {
    if (many)
      std::cout << "// ----- variant: " << run.name << '\n';
    if (opt.dumpIR)
      tc::ir::printModule(run.kernel->module(), std::cout);
    if (int rc = runVariant(opt, plan, *backend, run)) {
      if (many)
        std::cerr << "note: in variant " << run.name << '\n';
      return rc;
    }
  }
  if (int rc = compareVariants(runs))
    return rc;
  return printAndWrite(opt, plan, runs[0]);
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

int main(int argc, char **argv) {
  Options opt;
  CLI::App app{"triton-interp: run a Triton-C kernel on the CPU reference interpreter",
               "triton-interp"};
  app.footer(kFooter);
  app.add_option("input", opt.input, "Triton-C source (.tc)");
  app.add_option("-D", opt.defines, "define a macro: NAME, NAME=VALUE or NAME=[v1,v2,...]")
      ->allow_extra_args(false);
  app.add_option("-U", opt.undefines, "undo a -D of this name")->allow_extra_args(false);
  app.add_option("-I", opt.includeDirs, "add a directory to the #include search path")
      ->allow_extra_args(false);
  app.add_option("--kernel", opt.kernel, "the __global__ function to run (default: the only one)");
  app.add_option("--grid", opt.grid,
                 "grid: 1-3 comma-separated expressions, e.g. 'cdiv(N, SIZE)' or 4,2");
  app.add_option("--arg", opt.args, "bind a parameter: NAME=SPEC (see below)")
      ->allow_extra_args(false);
  app.add_option("--print", opt.prints, "print this buffer after the run")->allow_extra_args(false);
  app.add_flag("--print-all", opt.printAll, "print every element (no '...' summary)");
  app.add_option("--out", opt.outs, "write a buffer after the run: NAME=FILE.npy")
      ->allow_extra_args(false);
  app.add_flag("--force", opt.force, "allow --out to overwrite existing files");
  app.add_option("--program", opt.program, "run only this program: x[,y[,z]]");
  app.add_flag("--trace", opt.trace, "print each op's value summary per program");
  app.add_option("--threads", opt.threads, "run programs on this many threads (same results)")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("--max-steps", opt.maxSteps, "trap (step_limit) after this many ops per program");
  app.add_option("--timeout", opt.timeout, "trap (step_limit) after this many seconds")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--dump-ir", opt.dumpIR, "print the tile IR before running");
  app.add_option("--seed", opt.seed, "seed of random arguments without :seed= (default 0)");
  app.add_flag("--bf16-as-u2", opt.bf16AsU2,
               "read uint16 / 2-byte void .npy files as bfloat16 for bf16 parameters");
  app.add_option("--bf16-descr", opt.bf16Descr,
                 "descr of bf16 arrays in --out files: u2 ('<u2', default) or bfloat16")
      ->check(CLI::IsMember({"u2", "bfloat16"}));
  app.add_option("--launch", opt.launch,
                 "run a conformance case from a suite file and check its expectation");
  app.add_option("--case", opt.caseName, "with --launch: the case to run (default: the only one)");
  app.set_version_flag("--version", "triton-interp 0.1.0");
  try {
    app.parse(normaliseArgs(argc, argv));
  } catch (const CLI::Success &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return kExitUsage;
  }
  return runAll(opt);
}
