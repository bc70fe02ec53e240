//===- Compiler.h - One compilation, source to verified tile IR ---------===//
//
// The library entry point every tool uses: preprocess -> parse -> sema ->
// lower -> verify, stopping at any stage, with all diagnostics collected.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/AST.h"
#include "frontend/Defines.h"
#include "frontend/Token.h"
#include "ir/IR.h"
#include "support/Diagnostics.h"

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

struct CompileOptions {
  DefineList defines; // one variant (list-valued defines already expanded)
  std::vector<std::string> undefines;
  std::vector<std::string> includeDirs;
  bool warningsAsErrors = false;
  bool ignoreWarnings = false;
  // The kernel the tools will pick (--kernel); with no `__global__` function in
  // the source, this `void` function (default: the first) is the kernel.
  std::string kernel;
};

enum class Stage { Preprocess, Parse, Sema, Lower };

class Compilation {
public:
  explicit Compilation(CompileOptions opts);

  /// Adds the main source from a file; false (with a diagnostic) if unreadable.
  bool addMainFile(const std::string &path);
  /// Adds the main source from memory; false (with a diagnostic, and run()
  /// then fails) when it is larger than a source file may be
  /// (kMaxSourceFileBytes, 4 MiB).
  bool addMainSource(std::string name, std::string text);

  /// Runs every stage up to and including `last`. Returns false as soon as a
  /// stage reported an error. Lowering is followed by the IR verifier; a
  /// verifier failure is an internal error (reported, returns false).
  bool run(Stage last);

  SourceManager &sourceManager() { return sm_; }
  DiagEngine &diags() { return diags_; }
  const std::vector<Token> &tokens() const { return tokens_; }
  ast::TranslationUnit *ast() const { return ast_.get(); }
  ir::Module *module() const { return module_.get(); }
  std::unique_ptr<ir::Module> takeModule() { return std::move(module_); }
  /// The source's object-like macros with integer values (after preprocessing;
  /// see preprocess()), for grid expressions.
  const std::map<std::string, int64_t> &integerMacros() const { return integerMacros_; }
  /// Text of the verifier failures after lowering (empty when none).
  const std::string &internalError() const { return internalError_; }

private:
  CompileOptions opts_;
  SourceManager sm_;
  DiagEngine diags_;
  uint32_t mainFile_ = SourceLoc::kNoFile;
  bool mainIsText_ = false; // addMainSource: #include has no folder of the main file
  std::vector<Token> tokens_;
  std::map<std::string, int64_t> integerMacros_;
  std::unique_ptr<ast::TranslationUnit> ast_;
  std::unique_ptr<ir::Module> module_;
  std::string internalError_;
};

} // namespace tc
