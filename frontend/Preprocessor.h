//===- Preprocessor.h - The C preprocessor of Triton-C -----------------===//
#pragma once

#include "frontend/Token.h"
#include "support/Diagnostics.h"

#include <cstdint>
#include <map>
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
  /// The main file is text given in memory (no folder of its own): its
  /// relative #includes are searched in `includeDirs` only.
  bool mainIsText = false;
};

/// Preprocesses `file`: predefined macros and typedef-like macros, -D/-U,
/// directives, macro expansion (object- and function-like, #, ##, __FILE__,
/// __LINE__), #include (only of files inside the main file's folder or an
/// include directory, symbolic links and `..` resolved; absolute names too;
/// files with NUL bytes are refused unread). Returns the token stream with identifiers that spell
/// keywords turned into keyword kinds, ending with eof. Diagnostics go to
/// `diags`; expanded tokens carry their expansion in SourceLoc::expansion.
/// With `integerMacros`, also fills it with the source's integer defaults:
/// every object-like macro defined by the source (not -D, not built in) that
/// is still defined at the end of preprocessing and whose replacement list,
/// with object-like macros substituted, is an integer constant expression of
/// `#if` (`#define ROWS 4`, `#define TILE (ROWS * 16)`), with its value.
std::vector<Token> preprocess(uint32_t file, const PreprocessorOptions &opts, SourceManager &sm,
                              DiagEngine &diags,
                              std::map<std::string, int64_t> *integerMacros = nullptr);

/// Renders tokens back to text (for `tritonc -E`), one source line per line.
std::string renderTokens(const std::vector<Token> &tokens);

} // namespace tc
