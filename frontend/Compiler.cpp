#include "frontend/Compiler.h"

#include "frontend/Lower.h"
#include "frontend/Parser.h"
#include "frontend/Preprocessor.h"
#include "frontend/Sema.h"
#include "ir/Verifier.h"
#include "support/FileIO.h"

namespace tc {

namespace {
/// The length of the well-formed UTF-8 sequence at `s[i]`, 0 if there is none.
size_t utf8SequenceLength(std::string_view s, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = byte(i);
  if (c < 0x80)
    return 1;
  size_t n = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size())
    return 0;
  for (size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
  unsigned char c1 = byte(i + 1);
  if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 > 0x9F) || // overlong, surrogates
      (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 > 0x8F))   // overlong, > U+10FFFF
    return 0;
  return n;
}
} // namespace

std::string escapeInvalidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (size_t n = utf8SequenceLength(text, i)) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    static const char *hex = "0123456789abcdef";
    unsigned char c = static_cast<unsigned char>(text[i++]);
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

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
