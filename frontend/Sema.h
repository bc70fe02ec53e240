//===- Sema.h - Semantic analysis of Triton-C -------------------------===//
#pragma once

#include "frontend/AST.h"
#include "support/Diagnostics.h"

#include <string>

namespace tc {

/// How deeply helper calls may nest (a kernel calling a helper calling a helper
/// ...: the functions on the longest chain, the kernel included). Helpers are
/// inlined, and sema and lowering recurse along the chain: a deeper one is an
/// error, not a stack overflow.
inline constexpr unsigned kMaxCallDepth = 64;

/// Stack the nested helper analyses and inlinings of one kernel may use: a
/// chain of helpers with deep expressions at each call is stopped by this
/// before the thread's stack (8 MiB) runs out.
inline constexpr size_t kMaxCallStackBytes = size_t(2) << 20;

/// The bytes of stack used since `base` (the address of a local in an outer frame).
inline size_t stackUsedSince(const char *base) {
  char here;
  return base > &here ? static_cast<size_t>(base - &here) : 0;
}

/// Type-checks the translation unit and annotates it in place (see AST.h's
/// "set by sema" fields): dtypes and shapes (docs/semantics.md rules 1-3),
/// constant folding (floor division, Python modulo; a warning where that
/// differs from C), tile-shape rules, name resolution, builtins, definite
/// assignment. Returns false if any error was reported. With no `__global__`
/// function, the `void` function named `kernelName` (else the first `void`
/// function) becomes the kernel, with a note. When `kernelName` names a kernel
/// of the source, only it and the helpers it calls are analysed; the other
/// kernels are marked FunctionDecl::skipped (lowering leaves them out).
bool analyze(ast::TranslationUnit &tu, DiagEngine &diags, const std::string &kernelName = "");

} // namespace tc
