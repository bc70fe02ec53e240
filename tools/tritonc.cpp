//===- tritonc.cpp - The Triton-C compiler driver ----------------------===//
//
//   tritonc kernel.tc -DTM=64 -DTYPE=float --emit=ir
//   tritonc kernel.tc -E | --emit=tokens|ast|ir [-o out] [--kernel NAME]
//   tritonc module.tir --passes=canonicalize,fold,cse,dce --print-after-all
//   tritonc bad.tc -verify          (checks `// expected-error {{...}}` comments)
//   tritonc kernel.tc -DTM=64 --emit=ptx|llvm [--num-warps 4] [--num-stages 3] [--sm 90]
//       [--ptxas]
//   tritonc kernel.tc -DTM=64 --emit=layouts [--num-warps 4] [--sm 90]   (layouts, conversions)
//   tritonc kernel.tc -DTM=64 --emit=triton [--kernel NAME]   (a Triton Python module)
//
// Exit codes: 0 success, 1 ptxas rejected the PTX (--ptxas), 2 compile error
// (or -verify mismatch, or a kernel the GPU backend cannot compile), 3 usage error.
//
//===----------------------------------------------------------------------===//
#include "codegen/Codegen.h"
#include "codegen/Layout.h"
#include "frontend/ASTDump.h"
#include "frontend/Compiler.h"
#include "frontend/Defines.h"
#include "frontend/Preprocessor.h"
#include "ir/IRParser.h"
#include "ir/Passes.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "runtime/Specialize.h"
#include "support/FileIO.h"
#include "support/SourceWords.h"
#include "support/ToolMain.h"
#include "tritonpy/TritonPy.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

namespace {

constexpr int kExitOk = 0, kExitPtxas = 1, kExitCompileError = 2, kExitUsage = 3;

struct Options {
  std::string input, output, emit = "ir", kernel, passes;
  std::vector<std::string> defines, undefines, includeDirs, warnings;
  bool preprocessOnly = false, noLocs = false, verify = false, optimize = false;
  bool printAfterAll = false, verifyEach = false, ptxas = false;
  unsigned numWarps = 4, sm = 90;
  unsigned numStages = tc::codegen::Options{}.numStages;
  bool assumeAligned = false; // --assume-aligned: pointer parameters 16-byte aligned
  bool timePasses = false;    // --time-passes: codegen stage times on stderr
  std::string disableOpt;     // --disable-opt LIST (applied after --num-stages: pipeline means 1)
  std::string specialize;     // --specialize 'N=16,stride=1,X=16': a launch's argument classes

  /// Whether the output is GPU code (LLVM IR or PTX) rather than tile IR.
  bool emitsGpu() const { return emit == "llvm" || emit == "ptx" || emit == "layouts"; }
};

// CLI11 takes single-dash options of one letter only; accept clang's spelling
// of `-verify` and the like by rewriting them.
std::vector<std::string> normaliseArgs(int argc, char **argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-verify" || a == "-emit" || a.rfind("-emit=", 0) == 0 || a == "-o-")
      a = "-" + a;
    args.push_back(a);
  }
  std::reverse(args.begin(), args.end()); // CLI11 parses a reversed vector
  return args;
}

void printModule(const tc::ir::Module &m, const Options &opt, std::ostream &os) {
  tc::ir::PrintOptions po;
  po.locations = !opt.noLocs;
  if (opt.kernel.empty()) {
    tc::ir::printModule(m, os, po);
    return;
  }
  // Print only the requested kernel: cut it out of the printed module, so that
  // value numbering is the same as in the full output.
  std::ostringstream all;
  tc::ir::printModule(m, all, po);
  std::string text = all.str();
  size_t start = text.find("kernel @" + opt.kernel + "(");
  if (start == std::string::npos)
    return;
  size_t end = text.find("\n}\n", start);
  os << text.substr(start, end == std::string::npos ? std::string::npos : end + 3 - start);
}

bool hasKernel(const tc::ir::Module &m, const std::string &name) {
  for (const auto &f : m.functions)
    if (f->name() == name)
      return true;
  return false;
}

bool runPasses(tc::ir::Module &m, const Options &opt, std::ostream &out) {
  // GPU code is always generated from optimised IR (as with -O).
  if (!opt.optimize && opt.passes.empty() && !opt.emitsGpu())
    return true;
  tc::ir::PipelineOptions po;
  po.printAfterAll = opt.printAfterAll;
  po.verifyEach = opt.verifyEach;
  po.out = &out;
  std::stringstream ss(opt.passes);
  for (std::string p; std::getline(ss, p, ',');)
    if (!p.empty())
      po.passes.push_back(p);
  return tc::ir::runPipeline(m, po);
}

// The kernels --emit=llvm|ptx compiles into one module: --kernel NAME, or
// every kernel of the module (as nvcc does).
std::vector<const tc::ir::Function *> pickKernels(const tc::ir::Module &m, const Options &opt) {
  std::vector<const tc::ir::Function *> fns;
  for (const auto &f : m.functions)
    if (opt.kernel.empty() || f->name() == opt.kernel)
      fns.push_back(f.get());
  return fns;
}

// Lowers the (optimised) module's kernels to LLVM IR or PTX and prints them;
// with --ptxas, checks the PTX with ptxas.
int emitGpu(const tc::ir::Module &m, const Options &opt, std::ostream &out) {
  std::vector<const tc::ir::Function *> fns = pickKernels(m, opt);
  if (fns.empty()) {
    std::cerr << "tritonc: error: " << opt.input << " has no kernel\n";
    return kExitUsage;
  }
  tc::codegen::Options co;
  co.numWarps = opt.numWarps;
  co.numStages = opt.numStages;
  co.alignedPointers = opt.assumeAligned;
  co.sm = opt.sm;
  co.wantLLVM = opt.emit == "llvm";
  if (std::string error; !tc::codegen::disableOptimizations(co, opt.disableOpt, error)) {
    std::cerr << "tritonc: error: --disable-opt: " << error << '\n';
    return kExitUsage;
  }
  // --specialize: the kernel as a launch with those argument classes gets it
  // (runtime/Specialize.h), one kernel at a time.
  tc::SpecializedKernel sk;
  if (!opt.specialize.empty()) {
    if (fns.size() > 1) {
      std::cerr << "tritonc: error: --specialize applies to one kernel; " << opt.input << " has "
                << fns.size() << ": pick one with --kernel NAME\n";
      return kExitUsage;
    }
    std::string error;
    std::optional<tc::Specialization> spec =
        tc::parseSpecialization(opt.specialize == "none" ? "" : opt.specialize, *fns[0], error);
    if (!spec) {
      std::cerr << "tritonc: error: --specialize: " << error << '\n';
      return kExitUsage;
    }
    sk = tc::specializeKernel(m, *fns[0], *spec);
    fns = {sk.function};
  }
  if (opt.emit == "layouts") { // the GPU backend's layouts pass (codegen/Layout.h)
    for (const tc::ir::Function *fn : fns) {
      tc::codegen::KernelLayouts kl;
      std::string error;
      // What the lowering sees: loop results from their initial values (option
      // exit-values), the loops that load one trip ahead (option prefetch).
      const tc::ir::Module &mod = sk.module ? *sk.module : m;
      tc::codegen::PreparedKernel pk = tc::codegen::prepareKernel(mod, *fn, co);
      const tc::ir::Module &lm = pk.module(mod);
      const tc::ir::Function &lf = pk.function(*fn);
      if (!tc::codegen::assignLayouts(lm, lf, co, kl, error)) {
        std::cerr << "tritonc: error: " << error << '\n';
        return kExitCompileError;
      }
      tc::codegen::printLayouts(lm, lf, kl, out);
    }
    return kExitOk;
  }
  tc::codegen::Result r = tc::codegen::compileKernels(sk.module ? *sk.module : m, fns, co);
  if (!r.ok()) {
    std::cerr << "tritonc: error: " << r.error << '\n';
    return kExitCompileError;
  }
  out << (opt.emit == "llvm" ? r.compiled->llvmIR : r.compiled->ptx);
  if (opt.timePasses) {
    double total = 0;
    for (const tc::codegen::StageTime &t : r.compiled->times) {
      std::fprintf(stderr, "time-passes: %-16s %8.1f ms\n", t.stage.c_str(), t.ms);
      total += t.ms;
    }
    std::fprintf(stderr, "time-passes: %-16s %8.1f ms\n", "total", total);
  }
  if (!opt.ptxas)
    return kExitOk;
  if (tc::codegen::findPtxas().empty()) {
    std::cerr << "tritonc: error: --ptxas: " << tc::codegen::ptxasMissing() << '\n';
    return kExitPtxas;
  }
  std::string log;
  if (!tc::codegen::runPtxas(r.compiled->ptx, opt.sm, log)) {
    std::string names;
    for (const tc::ir::Function *fn : fns)
      names += (names.empty() ? "'" : ", '") + fn->name() + "'";
    std::cerr << "tritonc: error: ptxas -arch=sm_" << opt.sm << " rejected the PTX of "
              << (fns.size() == 1 ? "kernel " : "kernels ") << names << ":\n"
              << log << (log.ends_with('\n') ? "" : "\n");
    return kExitPtxas;
  }
  return kExitOk;
}

// Prints one kernel (--kernel NAME, or the module's only one) as a Triton
// Python module; a construct Triton cannot express is a compile error naming it.
int emitTriton(const tc::ir::Module &m, const Options &opt, std::ostream &out) {
  std::vector<const tc::ir::Function *> fns = pickKernels(m, opt);
  if (fns.empty()) {
    std::cerr << "tritonc: error: " << opt.input << " has no kernel\n";
    return kExitUsage;
  }
  if (fns.size() > 1) {
    std::cerr << "tritonc: error: --emit=triton prints one kernel; " << opt.input << " has "
              << fns.size() << ": pick one with --kernel NAME\n";
    return kExitUsage;
  }
  tc::tritonpy::Options to;
  to.sourceName = std::filesystem::path(opt.input).filename().string();
  to.numWarps = opt.numWarps;
  tc::tritonpy::Result r = tc::tritonpy::translate(m, *fns[0], to);
  if (!r.ok()) {
    std::cerr << "tritonc: error: kernel '" << fns[0]->name() << "': " << r.error << '\n';
    return kExitCompileError;
  }
  out << r.code;
  return kExitOk;
}

// Every file a compilation read (the source and its #include files): -o never
// replaces one of them.
std::vector<std::string> filesRead;

void noteFilesRead(const tc::SourceManager &sm) {
  for (uint32_t i = 0; i < sm.numFiles(); ++i)
    filesRead.push_back(sm.name(i));
}

// Compiles one variant of a .tc file and writes the requested output.
/// "tritonc: warning: -DBLOKC=128 is not used by the source; did you mean -DBLOCK?"
void warnUnusedDefines(const Options &opt, const tc::SourceManager &sm) {
  std::set<std::string> used;
  for (uint32_t f = 0; f < sm.numFiles(); ++f)
    if (sm.name(f) != "<built-in>" && sm.name(f) != "<command line>") // not the defines
      tc::addIdentifiers(sm.text(f), used);
  for (const std::string &w : tc::unusedDefineWarnings(opt.defines, used))
    std::cerr << "tritonc: warning: " << w << '\n';
}

int compileVariant(const Options &opt, const tc::DefineList &defines, std::ostream &out,
                   bool first) {
  tc::CompileOptions co;
  co.kernel = opt.kernel;
  co.defines = defines;
  co.undefines = opt.undefines;
  co.includeDirs = opt.includeDirs;
  for (const std::string &w : opt.warnings) {
    if (w == "error")
      co.warningsAsErrors = true;
    else if (w == "none")
      co.ignoreWarnings = true;
  }
  tc::Compilation c(co);
  if (opt.verify)
    c.diags().setVerifyMode(true);
  if (!c.addMainFile(opt.input))
    return kExitCompileError;

  tc::Stage last = opt.preprocessOnly || opt.emit == "tokens" ? tc::Stage::Preprocess
                   : opt.emit == "ast"                       ? tc::Stage::Sema
                                                             : tc::Stage::Lower;
  bool ok = c.run(last);
  noteFilesRead(c.sourceManager());
  if (ok && first && !opt.verify &&
      std::find(opt.warnings.begin(), opt.warnings.end(), "none") == opt.warnings.end())
    warnUnusedDefines(opt, c.sourceManager());
  if (opt.verify) {
    bool matched = c.diags().verify(std::cerr);
    return matched ? kExitOk : kExitCompileError;
  }
  if (!ok)
    return kExitCompileError;

  if (opt.preprocessOnly) {
    out << tc::renderTokens(c.tokens());
  } else if (opt.emit == "tokens") {
    for (const tc::Token &t : c.tokens()) {
      tc::SourceLoc l = c.sourceManager().outermost(t.loc);
      out << tc::tokKindName(t.kind) << " '" << t.text << "' " << l.line << ':' << l.col << '\n';
    }
  } else if (opt.emit == "ast") {
    tc::dumpAST(*c.ast(), c.sourceManager(), out);
  } else {
    tc::ir::Module &m = *c.module();
    if (!opt.kernel.empty() && !hasKernel(m, opt.kernel)) {
      std::cerr << "tritonc: error: no kernel named '" << opt.kernel << "' in " << opt.input
                << '\n';
      return kExitUsage;
    }
    if (!runPasses(m, opt, out))
      return kExitCompileError;
    if (opt.emitsGpu())
      return emitGpu(m, opt, out);
    if (opt.emit == "triton")
      return emitTriton(m, opt, out);
    printModule(m, opt, out);
  }
  return kExitOk;
}

// Reads, verifies, transforms and prints a .tir file.
int processIR(const Options &opt, std::ostream &out) {
  tc::SourceManager sm;
  tc::DiagEngine diags(sm);
  if (opt.verify)
    diags.setVerifyMode(true);
  std::string error;
  auto file = sm.loadFile(opt.input, error);
  if (!file) {
    diags.reportNoLoc(tc::DiagId::err_cannot_open_file, {error});
    return kExitCompileError;
  }
  tc::ir::SourcePositions positions;
  auto m = tc::ir::parseModule(*file, sm, diags, &positions);
  noteFilesRead(sm);
  // Verifier errors point at the op as written (file:line:col, the line, a
  // caret), in the user's value names; -verify checks them like parse errors.
  bool verified = true;
  if (m)
    for (const tc::ir::VerifyFailure &f : tc::ir::verifyModule(*m)) {
      verified = false;
      auto op = f.op ? positions.ops.find(f.op) : positions.ops.end();
      auto fn = positions.functions.find(f.function);
      tc::SourceLoc at = op != positions.ops.end()         ? op->second
                         : fn != positions.functions.end() ? fn->second
                                                           : tc::SourceLoc{};
      if (at.file == tc::SourceLoc::kNoFile)
        diags.reportNoLoc(tc::DiagId::err_ir_verifier,
                          {f.message + " (in kernel @" + f.function + ")"});
      else
        diags.report(tc::DiagId::err_ir_verifier, at, {f.message});
    }
  if (opt.verify)
    return diags.verify(std::cerr) ? kExitOk : kExitCompileError;
  if (!m || !verified)
    return kExitCompileError;
  if (!runPasses(*m, opt, out))
    return kExitCompileError;
  if (!opt.kernel.empty() && !hasKernel(*m, opt.kernel)) {
    std::cerr << "tritonc: error: no kernel named '" << opt.kernel << "' in " << opt.input << '\n';
    return kExitUsage;
  }
  if (opt.emitsGpu())
    return emitGpu(*m, opt, out);
  if (opt.emit == "triton")
    return emitTriton(*m, opt, out);
  printModule(*m, opt, out);
  return kExitOk;
}

int run(const Options &opt, std::ostream &out) {
  if (opt.input.ends_with(".tir"))
    return processIR(opt, out);
  std::vector<tc::DefineSpec> specs;
  for (const std::string &d : opt.defines) {
    std::string error;
    auto spec = tc::parseDefine(d, error);
    if (!spec) {
      std::cerr << "tritonc: error: " << error << '\n';
      return kExitUsage;
    }
    specs.push_back(std::move(*spec));
  }
  if (std::string why = tc::variantCountProblem(specs); !why.empty()) {
    std::cerr << "tritonc: error: " << why << '\n';
    return kExitUsage;
  }
  std::vector<tc::DefineList> variants = tc::expandDefines(specs);
  int status = kExitOk;
  for (const tc::DefineList &v : variants) {
    std::string name = tc::describeVariant(specs, v);
    if (variants.size() > 1)
      out << "// ----- variant: " << name << '\n';
    int rc = compileVariant(opt, v, out, &v == &variants.front());
    if (rc != kExitOk && variants.size() > 1)
      std::cerr << "note: in variant " << name << '\n';
    status = std::max(status, rc);
  }
  return status;
}

} // namespace

static int toolMain(int argc, char **argv) {
  Options opt;
  CLI::App app{"tritonc: the Triton-C compiler (source -> tile IR)", "tritonc"};
  app.add_option("input", opt.input, "Triton-C source (.tc) or tile IR (.tir)")->required();
  app.add_option("-D", opt.defines, "define a macro: NAME, NAME=VALUE or NAME=[v1,v2,...]")
      ->allow_extra_args(false);
  app.add_option("-U", opt.undefines, "undefine a macro")->allow_extra_args(false);
  app.add_option("-I", opt.includeDirs, "add a directory to the #include search path")
      ->allow_extra_args(false);
  app.add_option("-W", opt.warnings, "-Werror: warnings are errors; -Wnone: no warnings")
      ->allow_extra_args(false);
  app.add_flag("-E", opt.preprocessOnly, "preprocess only");
  app.add_option("--emit", opt.emit,
                 "what to print: tokens, ast, ir, llvm (LLVM IR), ptx, layouts (the IR with "
                 "the GPU backend's layout of each tile value and the cost of each conversion, "
                 "docs/gpu-perf.md) or triton (a Python module with a @triton.jit kernel and a "
                 "launcher, docs/triton.md)")
      ->check(CLI::IsMember({"tokens", "ast", "ir", "llvm", "ptx", "layouts", "triton"}));
  app.add_option("--num-warps", opt.numWarps, "with --emit=llvm|ptx|triton: warps per program (default 4)")
      ->check(CLI::IsMember({1, 2, 4, 8, 16, 32}));
  app.add_option("--num-stages", opt.numStages,
                 "with --emit=llvm|ptx: software-pipelining stages of the loads in loops, 1 to "
                 "8 (1: none; default " +
                     std::to_string(opt.numStages) + "; --disable-opt pipeline means 1)")
      ->check(CLI::Range(1u, 8u));
  app.add_option("--sm", opt.sm, "with --emit=llvm|ptx: target compute capability (default 90)")
      ->check(CLI::Range(80u, 120u));
  app.add_option("--disable-opt", opt.disableOpt,
                 "with --emit=llvm|ptx: switch off optimisations (" +
                     tc::codegen::optimizationList() +
                     "; specialize: ignored here, see --specialize)");
  app.add_option("--specialize", opt.specialize,
                 "with --emit=llvm|ptx: compile the kernel for a launch's argument classes, as the "
                 "GPU backend does: NAME=16 (an integer divisible by 16, a 16-byte aligned "
                 "pointer), NAME=1 (an integer equal to 1), comma-separated; 'none': no class")
      ->type_name("LIST");
  app.add_flag("--assume-aligned", opt.assumeAligned,
               "with --emit=llvm|ptx: take every pointer parameter as 16-byte aligned, as the "
               "GPU backend does (it passes whole allocations)");
  app.add_flag("--time-passes", opt.timePasses,
               "with --emit=llvm|ptx: print the time of each codegen stage (lower, link-libdevice, "
               "optimize, ptx) on stderr");
  app.add_flag("--ptxas", opt.ptxas, "with --emit=llvm|ptx: check the PTX with ptxas");
  app.add_option("-o", opt.output, "write the output to this file");
  app.add_option("--kernel", opt.kernel, "print only this kernel");
  app.add_flag("--no-locs", opt.noLocs, "print IR without source locations");
  app.add_flag("--verify", opt.verify, "check diagnostics against expected-* comments");
  app.add_flag("-O,--opt", opt.optimize, "run the default IR pass pipeline");
  app.add_option("--passes", opt.passes, "comma-separated IR passes to run, in order: canonicalize, fold, cse, dce (default with -O or --emit=llvm|ptx: all four)");
  app.add_flag("--print-after-all", opt.printAfterAll, "print the IR after every pass");
  app.add_flag("--verify-each", opt.verifyEach, "run the IR verifier after every pass");
  app.set_version_flag("--version", "tritonc 0.1.0");
  try {
    app.parse(normaliseArgs(argc, argv));
  } catch (const CLI::Success &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return kExitUsage;
  }
  // Code generation flags have no effect on tokens, the AST or the tile IR
  // (--emit=triton takes --num-warps only): refused rather than ignored.
  if (!opt.emitsGpu())
    for (const char *flag : {"--num-warps", "--num-stages", "--sm", "--disable-opt",
                             "--assume-aligned", "--time-passes"})
      if (app.count(flag) > 0 &&
          !(opt.emit == "triton" && std::string_view(flag) == "--num-warps")) {
        std::cerr << "tritonc: error: " << flag
                  << " applies to GPU code (--emit=ptx, llvm or layouts"
                  << (std::string_view(flag) == "--num-warps" ? ", or triton" : "")
                  << "); it has no effect with --emit=" << opt.emit << "\n";
        return kExitUsage;
      }
  if (!opt.specialize.empty() && (!opt.emitsGpu() || opt.preprocessOnly || opt.verify)) {
    std::cerr << "tritonc: error: --specialize compiles GPU code; use it with --emit=ptx or "
                 "--emit=llvm\n";
    return kExitUsage;
  }
  if (opt.ptxas && (!opt.emitsGpu() || opt.emit == "layouts" || opt.preprocessOnly || opt.verify)) {
    std::cerr << "tritonc: error: --ptxas checks GPU code; use it with --emit=ptx or --emit=llvm\n";
    return kExitUsage;
  }
  if (opt.output.empty()) {
    int rc = run(opt, std::cout);
    if (!std::cout.flush()) {
      std::cerr << "tritonc: error: cannot write the output (standard output)\n";
      return std::max(rc, kExitUsage);
    }
    return rc;
  }
  // -o FILE: never one of the files read; the output is made in memory and
  // replaces FILE (atomically) only when the compilation succeeded, so a failed
  // compile leaves an existing FILE as it was.
  if (std::string why = tc::checkOutputPath(opt.output, {opt.input}, /*replaceExisting=*/true);
      !why.empty()) {
    std::cerr << "tritonc: error: -o " << opt.output << ": " << why << '\n';
    return kExitUsage;
  }
  std::ostringstream text;
  int rc = run(opt, text);
  for (const std::string &in : filesRead)
    if (tc::sameFile(in, opt.output)) {
      std::cerr << "tritonc: error: -o " << opt.output << ": refusing to overwrite '" << in
                << "', a file the compilation read\n";
      return kExitUsage;
    }
  if (rc != kExitOk) {
    if (std::filesystem::exists(opt.output))
      std::cerr << "note: " << opt.output << " was left unchanged\n";
    return rc;
  }
  std::string error;
  if (!tc::writeFileAtomic(opt.output, text.str(), error)) {
    std::cerr << "tritonc: error: " << error << '\n';
    return kExitUsage;
  }
  return rc;
}

int main(int argc, char **argv) {
  return tc::guardedMain("tritonc", [&] { return toolMain(argc, argv); });
}
