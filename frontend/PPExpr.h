//===- PPExpr.h - Constant expressions of #if and #elif ----------------===//
#pragma once

#include "frontend/Token.h"
#include "support/Diagnostics.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace tc {

/// Evaluates the controlling expression of `#if`/`#elif` as C does (values of
/// intmax_t/uintmax_t, the usual arithmetic conversions, short-circuit
/// evaluation of `&&`, `||` and `?:`). `toks` is the rest of the directive
/// line after macro expansion, with every `defined X` already replaced by 0 or
/// 1; remaining identifiers are 0 (`true` is 1). `endLoc` is where a missing
/// operand at the end of the line is reported. Returns nullopt after reporting
/// an error.
std::optional<int64_t> evaluatePPExpr(const std::vector<Token> &toks, SourceLoc endLoc,
                                      DiagEngine &diags);

/// The value of an integer literal (pp-number) in #if, or nullopt after
/// reporting why it is not one (floating literal, bad digit, too large).
/// `isUnsigned` is set for a `u` suffix or a value above INT64_MAX.
std::optional<uint64_t> parsePPInteger(const Token &tok, DiagEngine &diags, bool &isUnsigned);

} // namespace tc
