//===- RunDriver.cpp - The command line shared by triton-interp and triton-run ===//
#include "tools/RunDriver.h"
#include "support/Interrupt.h"

#include "conformance/Compare.h"
#include "ir/Printer.h"
#include "runtime/ArrayPrint.h"
#include "runtime/GridExpr.h"
#include "support/EditDistance.h"
#include "support/FileIO.h"
#include "support/SourceManager.h"
#include "support/SourceWords.h"
#include "support/TimeLimit.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

namespace tc::tools {

namespace {

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

std::string valueStr(const HostArray &a, int64_t i) {
  std::ostringstream os;
  os << formatElement(a, i) << " (0x" << std::hex << a.getBits(i) << ")";
  return os.str();
}

// The pre-existing index format of triton-interp's messages ("7" for one dimension).
std::string indexStr(const std::vector<int64_t> &shape, int64_t flat) {
  if (shape.size() <= 1)
    return std::to_string(flat);
  return indexText(shape, flat);
}

} // namespace

CLI::Validator timeLimitValidator() {
  return CLI::Validator([](std::string &s) { return timeLimitProblem(s); }, "SECONDS");
}

CLI::Validator uint64Validator() {
  return CLI::Validator(
      [](std::string &s) -> std::string {
        uint64_t v = 0;
        auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || end != s.data() + s.size())
          return "'" + s + "' is not an integer from 0 to 18446744073709551615";
        return "";
      },
      "UINT64");
}

CLI::Validator toleranceValidator() {
  return CLI::Validator(
      [](std::string &s) {
        double v = 0;
        return conf::toleranceValueProblem(s, v);
      },
      "TOL");
}

void addToleranceOptions(CLI::App &app, DriverOptions &opt, const std::string &what) {
  auto set = [](std::optional<double> &into) {
    return [&into](const std::string &s) {
      double v = 0;
      conf::toleranceValueProblem(s, v); // validated first
      into = v;
    };
  };
  app.add_option_function<std::string>("--rtol", set(opt.tolerance.rtol),
                                       "relative tolerance of float buffers in " + what +
                                           " (replaces the dtype's default rtol)")
      ->check(toleranceValidator());
  app.add_option_function<std::string>("--atol", set(opt.tolerance.atol),
                                       "absolute tolerance of float buffers in " + what +
                                           " (replaces the dtype's default atol)")
      ->check(toleranceValidator());
}

std::string toleranceText(DType t, const conf::ToleranceOverride &o) {
  return std::string(conformanceName(t)) + " tolerance " + conf::defaultCompare(t, o).str() +
         (o.any() ? " (" + o.flags() + ")" : "");
}

void addCommonOptions(CLI::App &app, DriverOptions &opt) {
  app.add_option("input", opt.input, "Triton-C source (.tc)");
  app.add_option("-D", opt.defines, "define a macro: NAME, NAME=VALUE or NAME=[v1,v2,...]")
      ->allow_extra_args(false);
  app.add_option("-U", opt.undefines, "undo a -D of this name")->allow_extra_args(false);
  app.add_option("-I", opt.includeDirs, "add a directory to the #include search path")
      ->allow_extra_args(false);
  app.add_option("--kernel", opt.kernel,
                 "the kernel to run (default: the only one; with no __global__ function, the first "
                 "void function)");
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
  app.add_flag("--trace", opt.trace,
               "print each op's value summary per program, named by source variable, "
               "addresses as buffer+element (X+4)");
  app.add_option("--threads", opt.threads, "run programs on this many threads (same results)")
      ->check(CLI::Range(1u, 1024u));
  app.add_option("--max-steps", opt.maxSteps, "trap (step_limit) after this many ops per program")
      ->check(uint64Validator());
  app.add_option("--timeout", opt.timeout,
                 "trap (step_limit) after this many seconds (0: none; 1e9 or more: none)")
      ->check(timeLimitValidator());
  app.add_flag("--dump-ir", opt.dumpIR, "print the tile IR before running");
  app.add_option("--seed", opt.seed, "seed of random arguments without :seed= (default 0)")
      ->check(uint64Validator());
  app.add_flag("--bf16-as-u2", opt.bf16AsU2,
               "read uint16 / 2-byte void .npy files as bfloat16 for bf16 parameters");
  app.add_option("--bf16-descr", opt.bf16Descr,
                 "descr of bf16 arrays in --out files: u2 ('<u2', default) or bfloat16")
      ->check(CLI::IsMember({"u2", "bfloat16"}));
  app.add_option("--launch", opt.launch,
                 "run a conformance case from a suite file and check its expectation");
  app.add_option("--case", opt.caseName, "with --launch: the case to run (default: the only one)");
}

int parseCommandLine(CLI::App &app, int argc, char **argv) {
  try {
    app.parse(normaliseArgs(argc, argv));
  } catch (const CLI::Success &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return kExitUsage;
  }
  return -1;
}

std::unique_ptr<BoundArgs> cloneBound(const BoundArgs &b) {
  auto copy = std::make_unique<BoundArgs>();
  copy->arrays = b.arrays;
  for (const auto &[name, value] : b.args.scalars())
    copy->args.setScalar(name, value);
  for (auto &[name, array] : copy->arrays)
    copy->args.setBuffer(name, &array);
  return copy;
}

std::string indexText(const std::vector<int64_t> &shape, int64_t flat) {
  std::vector<int64_t> idx(std::max<size_t>(shape.size(), 1));
  for (size_t k = shape.size(); k-- > 0;) {
    idx[k] = shape[k] ? flat % shape[k] : 0;
    flat = shape[k] ? flat / shape[k] : 0;
  }
  if (shape.empty())
    idx[0] = flat;
  std::string s = "[";
  for (size_t k = 0; k < idx.size(); ++k)
    s += (k ? ", " : "") + std::to_string(idx[k]);
  return s + "]";
}

uint64_t bufferBytes(const LaunchArgs &args) {
  uint64_t bytes = 0;
  for (const auto &[name, array] : args.buffers())
    bytes += array->data.size();
  return bytes;
}

std::optional<int64_t> evalCountExpr(const std::string &flag, const std::string &expr,
                                     const ExprEnv &env, int64_t minimum, std::string &error) {
  std::string why;
  std::optional<int64_t> v = evalIntExpr(expr, env, why);
  if (!v) {
    error = flag + ": " + why; // names the expression
    return std::nullopt;
  }
  if (*v < minimum) {
    error = flag + " '" + expr + "' is " + std::to_string(*v) + " (must be at least " +
            std::to_string(minimum) + ")";
    return std::nullopt;
  }
  return v;
}

int RunDriver::usageError(const std::string &msg) const {
  std::istringstream lines(msg);
  for (std::string line; std::getline(lines, line);)
    std::cerr << (line.starts_with("note: ") ? "" : tool_ + ": error: ") << line << '\n';
  return kExitUsage;
}

int RunDriver::error(const std::string &msg, int rc) const {
  std::cerr << tool_ << ": error: " << msg << (msg.ends_with('\n') ? "" : "\n");
  return rc;
}

/// -D specs with -U applied: -U NAME drops every -D NAME, and is also passed to
/// the preprocessor (so it can undefine a built-in macro or one from the source's
/// own command-line defaults), as `tritonc -U` does.
bool RunDriver::parseDefines(Plan &plan, std::string &error) const {
  for (const std::string &d : opt_.defines) {
    auto spec = parseDefine(d, error);
    if (!spec)
      return false;
    plan.defineSpecs.push_back(std::move(*spec));
  }
  for (const std::string &u : opt_.undefines) {
    auto &specs = plan.defineSpecs;
    std::erase_if(specs, [&](const DefineSpec &s) { return s.name == u; });
  }
  error = variantCountProblem(plan.defineSpecs);
  if (!error.empty())
    return false;
  plan.variants = expandDefines(plan.defineSpecs);
  return true;
}

// program := INT (',' INT (',' INT)?)?
bool RunDriver::parseProgram(Plan &plan, std::string &error) const {
  std::vector<std::string> parts = splitTopLevel(opt_.program, ',');
  std::array<int64_t, 3> p{0, 0, 0};
  if (parts.empty() || parts.size() > 3) {
    error = "--program takes 1 to 3 comma-separated program ids, e.g. --program 3,0";
    return false;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    auto v = evalIntExpr(parts[i], {}, error);
    if (!v || *v < 0) {
      error = "--program " + opt_.program + ": " + (v ? "program ids are >= 0" : error);
      return false;
    }
    p[i] = *v;
  }
  plan.program = p;
  return true;
}

/// Checks --out: NAME=PATH, no two to the same file, never over an input (the
/// kernel, an --arg file), no overwriting an existing file without --force.
std::vector<std::string> RunDriver::inputFiles(const Plan &plan,
                                               const std::vector<VariantRun> *runs) const {
  std::vector<std::string> inputs = {opt_.input};
  for (const ArgSpec &a : plan.args)
    if (a.kind == ArgSpec::Kind::File)
      inputs.push_back(a.path);
  if (runs)
    for (const VariantRun &run : *runs) {
      const SourceManager &sm = run.kernel->sources();
      for (uint32_t f = 0; f < sm.numFiles(); ++f)
        if (sm.name(f) != "<built-in>" && sm.name(f) != "<command line>")
          inputs.push_back(sm.name(f));
    }
  return inputs;
}

bool RunDriver::parseOuts(Plan &plan, std::string &error) const {
  std::vector<std::string> inputs = inputFiles(plan);
  for (const std::string &o : opt_.outs) {
    size_t eq = o.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == o.size()) {
      error = "--out " + o + ": expected NAME=FILE.npy";
      return false;
    }
    std::string name = o.substr(0, eq), path = o.substr(eq + 1);
    for (const auto &[otherName, otherPath] : plan.outs)
      if (sameFile(otherPath, path)) {
        error = "--out " + o + ": two outputs would be written to '" + path + "' (--out " +
                otherName + "=" + otherPath + ")";
        return false;
      }
    plan.outs.emplace_back(name, path);
    std::string why = checkOutputPath(path, inputs, opt_.force);
    if (!why.empty()) {
      error = "--out " + o + ": " + why;
      return false;
    }
  }
  return true;
}

int RunDriver::makePlan(Plan &plan) const {
  if (opt_.input.empty())
    return usageError("no kernel file given (try --help)");
  if (opt_.grid.empty())
    return usageError("missing --grid (e.g. --grid 'cdiv(N, SIZE)' or --grid 4,2)");
  std::error_code ec;
  if (std::string why = regularFileProblem(opt_.input); !why.empty())
    return usageError("cannot open the kernel file '" + opt_.input + "': " + why);
  std::string error;
  if (!parseDefines(plan, error))
    return usageError(error);
  for (const std::string &a : opt_.args) {
    auto spec = parseArgSpec(a, error);
    if (!spec)
      return usageError(error);
    plan.args.push_back(std::move(*spec));
  }
  if (!parseOuts(plan, error))
    return usageError(error);
  plan.grid = parseGridSpec(opt_.grid);
  if (!opt_.program.empty() && !parseProgram(plan, error))
    return usageError(error);
  plan.bufferOpts.defaultSeed = opt_.seed;
  // With several variants, the first one's buffers stay while each other
  // variant runs (to compare them): the buffer budget is shared by the two.
  plan.bufferOpts.maxTotalBytes = kMaxLaunchBufferBytes / (plan.variants.size() > 1 ? 2 : 1);
  plan.bufferOpts.bf16FromU2 = opt_.bf16AsU2;
  plan.npyOpts.bf16 = opt_.bf16Descr == "bfloat16" ? NpyBf16Descr::Name : NpyBf16Descr::U2;
  return kExitOk;
}

/// --print and --out must name pointer parameters.
int RunDriver::checkBufferNames(const Plan &plan, const CompiledKernel &k) const {
  const ir::Function &f = k.function();
  auto check = [&](const std::string &flag, const std::string &name) {
    for (unsigned i = 0; i < f.numParams(); ++i)
      if (f.paramName(i) == name) {
        if (f.param(i)->type().isPtr)
          return kExitOk;
        return usageError(flag + " " + name + ": parameter '" + name + "' (" +
                          f.param(i)->type().langStr() + ") is not a buffer");
      }
    std::vector<std::string> names;
    for (unsigned i = 0; i < f.numParams(); ++i)
      names.push_back(f.paramName(i));
    return usageError(flag + " " + name + ": no parameter named '" + name + "'" +
                      didYouMean(name, names) + "\nnote: kernel '" + k.name() +
                      "' takes: " + describeParams(f));
  };
  for (const std::string &p : opt_.prints)
    if (int rc = check("--print", p))
      return rc;
  for (const auto &[name, path] : plan.outs)
    if (int rc = check("--out", name))
      return rc;
  return kExitOk;
}

std::shared_ptr<CompiledKernel> RunDriver::compile(const DefineList &defines, int &rc) const {
  CompileRequest req;
  req.path = opt_.input;
  req.defines = defines;
  req.undefines = opt_.undefines;
  req.includeDirs = opt_.includeDirs;
  req.kernelName = opt_.kernel;
  CompileOutcome outcome = compileKernel(req);
  std::cerr << outcome.diagnostics;
  rc = outcome.ok() ? kExitOk : kExitCompileError;
  return outcome.kernel;
}

int RunDriver::compileVariants(const Plan &plan, std::vector<VariantRun> &runs) const {
  bool many = plan.variants.size() > 1;
  for (const DefineList &variant : plan.variants) {
    VariantRun run;
    run.name = describeVariant(plan.defineSpecs, variant);
    run.defines = variant;
    int rc = kExitOk;
    run.kernel = compile(variant, rc);
    if (rc == kExitOk)
      rc = checkBufferNames(plan, *run.kernel);
    if (rc != kExitOk) {
      if (many)
        std::cerr << "note: in variant " << run.name << '\n';
      return rc;
    }
    if (runs.empty())
      warnUnusedDefines(*run.kernel);
    runs.push_back(std::move(run));
  }
  // --out never replaces a file the compilation read (an #include file), even
  // with --force; the kernel and --arg files were checked by makePlan.
  std::vector<std::string> inputs = inputFiles(plan, &runs);
  for (const auto &[name, path] : plan.outs)
    for (const std::string &in : inputs)
      if (sameFile(in, path))
        return usageError("--out " + name + "=" + path + ": refusing to overwrite '" + in +
                          "', a file the compilation read (--force does not change this)");
  return kExitOk;
}

/// "TOOL: warning: -DBLOKC=128 is not used by the source; did you mean -DBLOCK?"
/// A define counts as used when the source (or a file it includes), --grid or
/// an --arg names it.
void RunDriver::warnUnusedDefines(const CompiledKernel &k) const {
  std::set<std::string> used;
  const SourceManager &sm = k.sources();
  for (uint32_t f = 0; f < sm.numFiles(); ++f)
    if (sm.name(f) != "<built-in>" && sm.name(f) != "<command line>") // not the defines
      addIdentifiers(sm.text(f), used);
  addIdentifiers(opt_.grid, used);
  for (const std::string &a : opt_.args)
    addIdentifiers(a, used);
  for (const std::string &w : unusedDefineWarnings(opt_.defines, used))
    std::cerr << tool_ << ": warning: " << w << '\n';
}

int RunDriver::bind(const Plan &plan, VariantRun &run) const {
  run.bound = std::make_unique<BoundArgs>();
  std::string error;
  if (!bindArgs(plan.args, *run.kernel, plan.bufferOpts, *run.bound, error))
    return usageError(error);
  for (const std::string &w : run.bound->warnings)
    std::cerr << tool_ << ": warning: " << w << '\n';
  GridOutcome grid = evalGrid(plan.grid, *run.kernel, run.bound->args);
  if (!grid.dims)
    return usageError("--grid: " + grid.error);
  run.grid = *grid.dims;
  if (plan.program)
    for (int i = 0; i < 3; ++i)
      if ((*plan.program)[i] >= run.grid[i])
        return usageError("--program " + opt_.program + ": program id " +
                          std::to_string((*plan.program)[i]) + " on axis " + std::to_string(i) +
                          " is outside the grid (" + std::to_string(run.grid[0]) + ", " +
                          std::to_string(run.grid[1]) + ", " + std::to_string(run.grid[2]) + ")");
  return kExitOk;
}

RunOptions RunDriver::runOptions(const Plan &plan) const {
  RunOptions ro;
  ro.threads = opt_.threads;
  ro.maxSteps = opt_.maxSteps;
  ro.maxSeconds = opt_.timeout;
  ro.trace = opt_.trace;
  ro.onlyProgram = plan.program;
  ro.out = &std::cout;
  return ro;
}

int RunDriver::reportResult(const RunResult &r) const {
  if (interruptRequested() && r.status != RunResult::Status::Trapped) {
    // Ctrl-C came while compiling, or as the last ops ran: stop all the same.
    std::cerr << tool_ << ": interrupted (Ctrl-C)\n";
    return kExitInterrupted;
  }
  switch (r.status) {
  case RunResult::Status::Ok: return kExitOk;
  case RunResult::Status::Trapped:
    if (r.trap && interruptRequested() && r.trap->kind == TrapKind::StepLimit) {
      // Ctrl-C: the first program's place, then the other running programs'.
      Trap t = *r.trap;
      Trap::Note first{t.file, t.line, t.col, t.sourceLine,
                       "program (" + std::to_string(t.programId[0]) + ", " +
                           std::to_string(t.programId[1]) + ", " + std::to_string(t.programId[2]) +
                           ") was here: " + t.message};
      t.notes.insert(t.notes.begin(), std::move(first));
      std::cerr << tool_ << ": interrupted (Ctrl-C) in kernel '" << t.kernel
                << "'; where each running program was:\n";
      for (const Trap::Note &n : t.notes) {
        if (!n.file.empty() && n.line)
          std::cerr << n.file << ':' << n.line << ':' << n.col << ": ";
        std::cerr << "note: " << n.text << '\n';
        if (!n.sourceLine.empty() && n.line)
          std::cerr << n.sourceLine << '\n'
                    << std::string(std::min<size_t>(n.col ? n.col - 1 : 0, n.sourceLine.size()),
                                   ' ')
                    << "^\n";
      }
      return kExitInterrupted;
    }
    std::cerr << (r.trap ? r.trap->render() : "trap\n");
    return kExitTrap;
  case RunResult::Status::Error: return error(r.error, kExitTrap);
  }
  return kExitTrap;
}

/// The first difference between two runs' buffer `name` beyond what variants
/// may differ by, or "". Integer buffers must be identical; float buffers
/// within the conformance suite's default tolerance of their dtype
/// (conformance/FORMAT.md), or bit for bit with --variants-exact.
std::string RunDriver::firstDifference(const std::string &name, const HostArray &a,
                                       const HostArray &b, const std::string &na,
                                       const std::string &nb) const {
  if (a.shape != b.shape || a.dtype != b.dtype)
    return "buffer '" + name + "' has shape " + ir::shapeStr(a.shape) + " in variant " + na +
           " but " + ir::shapeStr(b.shape) + " in variant " + nb;
  bool exact = opt_.variantsExact || !isFloat(a.dtype);
  conf::CompareSpec spec = conf::defaultCompare(a.dtype, opt_.tolerance);
  int64_t first = -1, beyond = 0, within = 0;
  for (int64_t i = 0; i < a.numElements(); ++i) {
    uint64_t x = a.getBits(i), y = b.getBits(i);
    if (x == y)
      continue;
    if (!exact && conf::elementsMatch(a.dtype, y, x, spec)) {
      ++within;
      continue;
    }
    if (beyond++ == 0)
      first = i;
  }
  std::string tolerance = toleranceText(a.dtype, opt_.tolerance);
  if (beyond == 0) {
    if (within > 0)
      std::cerr << tool_ << ": note: variants " << na << " and " << nb << " differ in " << within
                << " of " << a.numElements() << " elements of buffer '" << name << "', within the "
                << tolerance << " (--variants-exact demands identical bits)\n";
    return "";
  }
  std::string what = "buffer '" + name + "' differs at index " + indexStr(a.shape, first) +
                     ": variant " + na + " gives " + valueStr(a, first) + ", variant " + nb +
                     " gives " + valueStr(b, first);
  std::string count =
      std::to_string(beyond) + " of " + std::to_string(a.numElements()) + " elements differ";
  if (!isFloat(a.dtype))
    return what + " (" + count + "; integer buffers must be identical)";
  if (opt_.variantsExact)
    return what + " (" + count + "; --variants-exact demands identical bits)";
  return what + " (" + count + " beyond the " + tolerance + ")";
}

int RunDriver::compareVariants(const std::vector<const VariantRun *> &runs) const {
  int rc = kExitOk;
  bool floatBeyond = false;
  for (size_t v = 1; v < runs.size(); ++v)
    for (const auto &[name, array] : runs[0]->bound->arrays) {
      std::string diff = firstDifference(name, array, runs[v]->bound->arrays.at(name),
                                         runs[0]->name, runs[v]->name);
      if (diff.empty())
        continue;
      error("variants disagree: " + diff, kExitTrap);
      rc = kExitTrap;
      floatBeyond = floatBeyond || (isFloat(array.dtype) && !opt_.variantsExact);
    }
  if (floatBeyond && !opt_.tolerance.any())
    std::cerr << "note: --rtol and --atol set the tolerance of float buffers\n";
  return rc;
}

int RunDriver::printAndWrite(const Plan &plan, const BoundArgs &bound) const {
  ArrayPrintOptions po;
  if (opt_.printAll)
    po.threshold = -1;
  for (const std::string &name : opt_.prints) {
    const HostArray &a = bound.arrays.at(name);
    std::cout << name << ": " << conformanceName(a.dtype) << ir::shapeStr(a.shape) << '\n'
              << formatArray(a, po) << '\n';
  }
  for (const auto &[name, path] : plan.outs) {
    const HostArray &a = bound.arrays.at(name);
    std::string error;
    if (!writeNpy(path, a.dtype, a.shape, a.data, plan.npyOpts, error))
      return usageError(error);
  }
  return kExitOk;
}

/// The case to run: --case NAME, or the file's only case.
const conf::Case *RunDriver::pickCase(const conf::Suite &suite, int &rc) const {
  rc = kExitOk;
  if (!opt_.caseName.empty()) {
    if (const conf::Case *c = suite.find(opt_.caseName))
      return c;
    for (const conf::InvalidCase &bad : suite.invalid)
      if (bad.name == opt_.caseName) {
        rc = usageError("case '" + bad.name + "' (" + bad.path + ") does not load:\n" + bad.error);
        return nullptr;
      }
  } else if (suite.cases.size() == 1 && suite.invalid.empty()) {
    return &suite.cases[0];
  } else if (suite.cases.empty() && suite.invalid.size() == 1) {
    const conf::InvalidCase &bad = suite.invalid[0];
    rc = usageError("case '" + bad.name + "' (" + bad.path + ") does not load:\n" + bad.error);
    return nullptr;
  }
  std::string names;
  size_t listed = 0;
  for (const conf::Case &c : suite.cases)
    if (listed++ < 50)
      names += (names.empty() ? "" : ", ") + c.name;
  for (const conf::InvalidCase &bad : suite.invalid)
    if (listed++ < 50)
      names += (names.empty() ? "" : ", ") + bad.name + " (does not load)";
  if (listed > 50)
    names += ", ...";
  rc = usageError((opt_.caseName.empty()
                       ? std::string("--launch: pick a case with --case NAME")
                       : "no case named '" + opt_.caseName + "' in " + opt_.launch) +
                  "\nnote: the cases of " + opt_.launch + ": " + (names.empty() ? "none" : names));
  return nullptr;
}

/// Prints one variant's verdict; returns its exit code.
int RunDriver::reportVerdict(const conf::Case &c, const conf::Variant &v,
                             const conf::Verdict &verdict) const {
  std::string where = "case '" + c.name + "'" + (v.label.empty() ? "" : " variant " + v.label);
  switch (verdict.status) {
  case conf::Status::Pass:
  case conf::Status::XPass: return kExitOk;
  case conf::Status::Skipped:
    std::cout << "skipped: " << where << ": " << verdict.error << '\n';
    return kExitOk;
  case conf::Status::Fail:
  case conf::Status::XFail: {
    std::string msg = verdict.error;
    if (msg.empty() && verdict.mismatch)
      msg = "output '" + verdict.mismatch->output + "' differs";
    error(where + " failed: " + msg, kExitTrap);
    if (verdict.mismatch)
      std::cerr << "note: got " << verdict.mismatch->got << ", want " << verdict.mismatch->want
                << '\n';
    return kExitTrap;
  }
  case conf::Status::Error:
  case conf::Status::Crash:
  case conf::Status::Timeout: {
    bool compileError = verdict.error.starts_with("compile error");
    error(where + ": " +
              (verdict.status == conf::Status::Error
                   ? ""
                   : std::string(conf::statusName(verdict.status)) + ": ") +
              verdict.error,
          kExitTrap);
    return compileError ? kExitCompileError : kExitTrap;
  }
  }
  return kExitTrap;
}

int RunDriver::runLaunch(Backend &backend, const CaseHook &hook) const {
  if (!opt_.input.empty() || !opt_.grid.empty() || !opt_.args.empty() || !opt_.defines.empty() ||
      !opt_.undefines.empty() || !opt_.includeDirs.empty() || !opt_.kernel.empty() ||
      !opt_.prints.empty() || !opt_.outs.empty() || !opt_.program.empty())
    return usageError(
        "--launch takes the kernel, defines, grid and arguments from the case; "
        "it cannot be combined with a kernel file, -D, -U, -I, --kernel, --grid, --arg, "
        "--program, --print or --out (not supported yet)");
  conf::LoadResult loaded = conf::loadSuiteFile(opt_.launch);
  if (!loaded.suite) {
    std::string errors;
    for (const std::string &e : loaded.errors)
      errors += (errors.empty() ? "" : "\n") + e;
    return usageError(errors.empty() ? "cannot load " + opt_.launch : errors);
  }
  for (const std::string &w : loaded.warnings)
    std::cerr << tool_ << ": warning: " << w << '\n';
  if (opt_.tolerance.any())
    conf::overrideDefaultTolerances(*loaded.suite, opt_.tolerance);
  int rc = kExitOk;
  const conf::Case *c = pickCase(*loaded.suite, rc);
  if (!c)
    return rc;
  RunOptions ro;
  ro.threads = opt_.threads;
  ro.maxSteps = opt_.maxSteps;
  ro.maxSeconds = opt_.timeout;
  ro.trace = opt_.trace;
  ro.out = &std::cout;
  ro.raceCheck = true; // as triton-conformance runs the case: a race is a data_race trap
  std::vector<conf::Variant> variants = c->variants();
  for (const conf::Variant &v : variants) {
    if (variants.size() > 1)
      std::cout << "// ----- variant: " << v.label << '\n';
    if (hook)
      hook(*c, v);
    conf::Verdict verdict = conf::runVariant(*loaded.suite, *c, v, backend, ro);
    std::cout.flush();
    if (int code = reportVerdict(*c, v, verdict))
      return code;
  }
  std::cout << "pass: " << loaded.suite->name << " / " << c->name << " ("
            << conf::expectKindName(c->expect.kind) << ", " << variants.size()
            << (variants.size() == 1 ? " variant" : " variants") << ")\n";
  return kExitOk;
}

} // namespace tc::tools
