#include "frontend/Compiler.h"

#include "frontend/Lower.h"
#include "frontend/Parser.h"
#include "frontend/Preprocessor.h"
#include "frontend/Sema.h"
#include "ir/Verifier.h"
#include "support/FileIO.h"

namespace tc {

Compilation::Compilation(CompileOptions opts) : opts_(std::move(opts)), diags_(sm_) {
  diags_.setWarningsAsErrors(opts_.warningsAsErrors);
  diags_.setIgnoreWarnings(opts_.ignoreWarnings);
}

bool Compilation::addMainFile(const std::string &path) {
  std::string error;
  auto file = sm_.loadFile(path, error);
  if (!file) {
    diags_.reportNoLoc(DiagId::err_cannot_open_file, {error});
    return false;
  }
  mainFile_ = *file;
  return true;
}

bool Compilation::addMainSource(std::string name, std::string text) {
  if (text.size() > kMaxSourceFileBytes) {
    diags_.reportNoLoc(DiagId::err_cannot_open_file,
                       {"source text '" + name + "' is larger than the limit of " +
                        std::to_string(kMaxSourceFileBytes) + " bytes (" +
                        std::to_string(text.size()) + " bytes)"});
    return false;
  }
  mainFile_ = sm_.addBuffer(std::move(name), std::move(text));
  mainIsText_ = true;
  return true;
}

bool Compilation::run(Stage last) {
  if (mainFile_ == SourceLoc::kNoFile)
    return false;
  PreprocessorOptions ppOpts{opts_.defines, opts_.undefines, opts_.includeDirs, mainIsText_};
  tokens_ = preprocess(mainFile_, ppOpts, sm_, diags_, &integerMacros_);
  if (diags_.hasErrors() || last == Stage::Preprocess)
    return !diags_.hasErrors();
  ast_ = parseTranslationUnit(tokens_, diags_);
  if (ast_)
    ast_->mainFile = mainFile_;
  if (diags_.hasErrors() || last == Stage::Parse)
    return !diags_.hasErrors();
  if (!analyze(*ast_, diags_, opts_.kernel) || diags_.hasErrors())
    return false;
  if (last == Stage::Sema)
    return true;
  module_ = lowerToIR(*ast_, sm_, diags_);
  if (!module_ || diags_.hasErrors())
    return false;
  auto failures = ir::verifyModule(*module_);
  if (!failures.empty()) {
    internalError_ = ir::formatFailures(*module_, failures);
    diags_.reportNoLoc(DiagId::err_internal,
                       {"lowering produced invalid IR (please report this):\n" + internalError_});
    return false;
  }
  return true;
}

} // namespace tc
