//===- Lower.h - AST to tile IR ---------------------------------------===//
#pragma once

#include "frontend/AST.h"
#include "ir/IR.h"
#include "support/Diagnostics.h"

#include <memory>
#include <string_view>

namespace tc {

/// Lowers every kernel of an analysed translation unit, except those sema
/// marked skipped (--kernel picked another one) (helpers are inlined
/// at their calls) to tile IR. Source locations become ir::Locations (file
/// names interned in the module). Returns nullptr if lowering reported an error
/// (only for constructs sema accepts but lowering does not support yet).
std::unique_ptr<ir::Module> lowerToIR(const ast::TranslationUnit &tu, const SourceManager &sm,
                                      DiagEngine &diags);

} // namespace tc
