//===- Trap.h - The closed set of run-time traps ----------------------===//
//
// A trap is a program error the reference semantics detect (docs/semantics.md
//): the kernel did something undefined. It is a value, never an
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
#include <vector>

namespace tc {

enum class TrapKind : uint8_t {
  OutOfBounds,          // an active lane accessed memory outside every buffer
  Misaligned,           // a broken __multipleof / __aligned claim, or a misaligned element
  DivisionByZero,       // integer / or % by zero
  DivisionOverflow,     // INT_MIN / -1 or INT_MIN % -1 of a signed type
  ShiftOutOfRange,      // shift count < 0 or >= the bit width
  FloatToIntOutOfRange, // NaN, or a truncated value that does not fit the integer type
  UndefinedValue,       // a poison lane (masked-off load) reached a store, atomic, branch, print
  DataRace,             // two programs touched one element, one a plain store, unordered (rule 15)
  AssertionFailed,      // assert(cond) with a false lane
  StepLimit,            // --max-steps or the wall-clock limit was reached
  InvalidLaunch,        // arguments or grid do not match the kernel
};
inline constexpr int kNumTrapKinds = 11;

/// How every message names a lane of a tile: "lane [5, 0] (flat 160)" (the
/// row-major tile index, then the flat index) for a tile of rank 2 or more,
/// "lane [5]" for a 1-d tile (the index is the flat index), "lane 160" when the
/// shape is unknown (empty).
std::string laneText(const std::vector<int64_t> &shape, int64_t flat);
/// "[16, 32]".
std::string shapeText(const std::vector<int64_t> &shape);

/// "out_of_bounds", "misaligned", ... (the names of conformance/FORMAT.md).
std::string_view trapKindName(TrapKind k);
std::optional<TrapKind> parseTrapKind(std::string_view name);

struct Trap {
  TrapKind kind = TrapKind::InvalidLaunch;
  std::string kernel;
  std::array<int64_t, 3> programId{0, 0, 0};
  bool hasProgram = false; // false for launch-time traps
  std::string file;        // source location of the op (empty if none)
  uint32_t line = 0, col = 0;
  std::string sourceLine;         // the text of that line, for the caret
  int64_t lane = -1;              // flat row-major lane index; -1 if not lane-specific
  std::vector<int64_t> laneShape; // the shape of the tile `lane` indexes (empty: unknown)
  std::string message;            // what happened, with the values involved
  /// Further located notes (a data race's other access), each rendered as
  /// "file:line:col: note: text", its source line and a caret.
  struct Note {
    std::string file;
    uint32_t line = 0, col = 0;
    std::string sourceLine;
    std::string text;
  };
  std::vector<Note> notes;

  /// Renders like a clang diagnostic:
  ///   file:line:col: trap: out_of_bounds: <message>
  ///     source line
  ///     ^
  ///   note: in kernel 'k', program (3, 0, 0), lane [1, 1] (flat 17) of a [2, 16] tile
  /// followed by the notes.
  std::string render() const;
};

} // namespace tc
