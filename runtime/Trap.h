//===- Trap.h - The closed set of run-time traps ----------------------===//
//
// A trap is a program error the reference semantics detect (DESIGN.md
// section 4): the kernel did something undefined. It is a value, never an
// exception or exit; tools turn it into exit code 1.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tc {

enum class TrapKind : uint8_t {
  OutOfBounds,           // an active lane accessed memory outside every buffer
  Misaligned,            // a broken __multipleof / __aligned claim, or a misaligned element
  DivisionByZero,        // integer / or % by zero
  DivisionOverflow,      // INT_MIN / -1 or INT_MIN % -1 of a signed type
  ShiftOutOfRange,       // shift count < 0 or >= the bit width
  FloatToIntOutOfRange,  // NaN, or a truncated value that does not fit the integer type
  UndefinedValue,        // a poison lane (masked-off load) reached a store, atomic, branch, print
  AssertionFailed,       // assert(cond) with a false lane
  StepLimit,             // --max-steps or the wall-clock limit was reached
  InvalidLaunch,         // arguments or grid do not match the kernel
};
inline constexpr int kNumTrapKinds = 10;

/// "out_of_bounds", "misaligned", ... (the names of CONFORMANCE.md).
std::string_view trapKindName(TrapKind k);
std::optional<TrapKind> parseTrapKind(std::string_view name);

struct Trap {
  TrapKind kind = TrapKind::InvalidLaunch;
  std::string kernel;
  std::array<int64_t, 3> programId{0, 0, 0};
  bool hasProgram = false; // false for launch-time traps
  std::string file;        // source location of the op (empty if none)
  uint32_t line = 0, col = 0;
  std::string sourceLine;  // the text of that line, for the caret
  int64_t lane = -1;       // flat row-major lane index; -1 if not lane-specific
  std::string message;     // what happened, with the values involved

  /// Renders like a clang diagnostic:
  ///   file:line:col: trap: out_of_bounds: <message>
  ///     source line
  ///     ^
  ///   note: in kernel 'k', program (3, 0, 0), lane 17
  std::string render() const;
};

} // namespace tc
