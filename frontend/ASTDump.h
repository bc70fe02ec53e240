//===- ASTDump.h - Textual dump of the AST (tritonc --emit=ast) --------===//
#pragma once

#include "frontend/AST.h"
#include "support/SourceManager.h"

#include <iosfwd>

namespace tc {

/// Writes an indented tree, one node per line with its kind, operator or name,
/// `line:col`, and (after sema) its type, e.g.
///   BinaryExpr '+' <3:22> 'int32[32]'
void dumpAST(const ast::TranslationUnit &tu, const SourceManager &sm, std::ostream &os);

} // namespace tc
