//===- Sema.h - Semantic analysis of Triton-C -------------------------===//
#pragma once

#include "frontend/AST.h"
#include "support/Diagnostics.h"

#include <string>

namespace tc {

/// Type-checks the translation unit and annotates it in place (see AST.h's
/// "set by sema" fields): dtypes and shapes (docs/semantics.md rules 1-3),
/// constant folding (floor division, Python modulo; a warning where that
/// differs from C), tile-shape rules, name resolution, builtins, definite
/// assignment. Returns false if any error was reported. With no `__global__`
/// function, the `void` function named `kernelName` (else the first `void`
/// function) becomes the kernel, with a note.
bool analyze(ast::TranslationUnit &tu, DiagEngine &diags, const std::string &kernelName = "");

} // namespace tc
