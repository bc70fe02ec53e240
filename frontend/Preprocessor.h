//===- Preprocessor.h - The C preprocessor of Triton-C -----------------===//
#pragma once

#include "frontend/Token.h"
#include "support/Diagnostics.h"

#include <string>
#include <utility>
#include <vector>

namespace tc {

struct PreprocessorOptions {
  /// -D NAME[=VALUE] in command-line order (VALUE "1" when omitted). List values
  /// (`[32,64]`) are expanded by the driver before this point.
  std::vector<std::pair<std::string, std::string>> defines;
  /// -U NAME, applied after all -D.
  std::vector<std::string> undefines;
  /// -I DIR, searched (after the including file's directory) for #include "...".
  std::vector<std::string> includeDirs;
};

/// Preprocesses `file`: predefined macros and typedef-like macros, -D/-U,
/// directives, macro expansion (object- and function-like, #, ##, __FILE__,
/// __LINE__), #include. Returns the token stream with identifiers that spell
/// keywords turned into keyword kinds, ending with eof. Diagnostics go to
/// `diags`; expanded tokens carry their expansion in SourceLoc::expansion.
std::vector<Token> preprocess(uint32_t file, const PreprocessorOptions &opts, SourceManager &sm,
                              DiagEngine &diags);

/// Renders tokens back to text (for `tritonc -E`), one source line per line.
std::string renderTokens(const std::vector<Token> &tokens);

} // namespace tc
