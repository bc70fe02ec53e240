//===- GridExpr.h - Integer expressions of grids and shapes -------------===//
//
// The small expression language of launch grids (`cdiv(N, SIZE)`) and of
// buffer shapes in argument specs (`zeros:f32[N, TM]`):
//
//   expr    := term (('+' | '-') term)*
//   term    := unary (('*' | '/' | '%') unary)*
//   unary   := ('-' | '+') unary | primary
//   primary := INT | NAME | FUNC '(' expr ',' expr ')' | '(' expr ')'
//   FUNC    := cdiv | min | max
//
// INT is decimal or 0x-hex with optional C suffixes (u, l). Arithmetic is C's
// on int64: / truncates toward zero, % takes the dividend's sign; division by
// zero and overflow are errors, never undefined behaviour. cdiv(a, b) is the
// exact ceiling of a / b. Names are looked up in an environment built from
// the kernel's defines (whose values must themselves be integer expressions
// without names, e.g. TM=64), the source's own integer #defines (`#define
// ROWS 4`, unless a -D names them) and its integer scalar arguments.
//
// evalGrid (Launch.h) is built on these.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Launch.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

/// A name visible to expressions: its integer value, or why it has none
/// (e.g. "its value is 'float'"), which is reported when it is used.
struct ExprName {
  std::optional<int64_t> value;
  std::string whyNot;
};
using ExprEnv = std::map<std::string, ExprName>;

/// Evaluates `text`. On failure returns nullopt and sets `error` to a message
/// that quotes the expression and names the problem (an unknown name comes
/// with the list of the integer-valued names and their values).
std::optional<int64_t> evalIntExpr(std::string_view text, const ExprEnv &env, std::string &error);

/// The names of `defines` (values evaluated as name-free expressions) and of
/// the integer/bool scalars of `args` (later entries win).
ExprEnv makeExprEnv(const DefineList &defines, const LaunchArgs &args);
/// The same for a compiled kernel: its -D defines, then the source's own
/// integer #defines (CompiledKernel::sourceDefines) where no -D names them,
/// then its scalar arguments. Grids use this.
ExprEnv makeExprEnv(const CompiledKernel &kernel, const LaunchArgs &args);

/// Splits `text` at the `sep` characters outside parentheses and brackets,
/// trimming blanks ("cdiv(N, 64), 2" -> {"cdiv(N, 64)", "2"}).
std::vector<std::string> splitTopLevel(std::string_view text, char sep);

/// Parses a grid given as one string ("4,2" or "cdiv(N, SIZE), 1").
GridSpec parseGridSpec(std::string_view text);

} // namespace tc
