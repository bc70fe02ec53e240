//===- Diagnostics.h - clang-style diagnostics from one table ------------===//
//
// Every diagnostic the toolchain can emit has a kind in support/diag/*.def
// (one table, split by phase): an identifier, a severity and a message format
// with {0}, {1}, ... placeholders. Messages are lower-case without a final period.
//
// Rendering follows clang:
//   file:line:col: error: message
//     source line
//         ^~~~
//   file:line:col: note: expanded from macro 'X'
//
//===----------------------------------------------------------------------===//
#pragma once

#include "support/SourceManager.h"

#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

enum class Severity : uint8_t { Note, Warning, Error };

enum class DiagId : uint16_t {
#define DIAG(ID, SEV, FMT) ID,
#include "support/diag/All.def"
#undef DIAG
  NumDiagIds
};

/// Severity as written in the table (before -Werror).
Severity defaultSeverity(DiagId id);
/// The identifier of a kind, e.g. "err_sema_incompatible_shapes".
std::string_view diagName(DiagId id);
/// The raw format string of a kind.
std::string_view diagFormat(DiagId id);
/// Substitutes {0}, {1}, ... in `format` with `args`.
std::string formatMessage(std::string_view format, const std::vector<std::string> &args);

/// `text` with every byte that is not part of well-formed UTF-8 written as
/// `\xNN` (diagnostics quote source text, which may hold any bytes; consumers
/// such as Python and terminals expect UTF-8). Valid UTF-8 is returned as is,
/// so escaping twice changes nothing.
std::string escapeInvalidUtf8(std::string_view text);

struct Diagnostic {
  DiagId id;
  Severity severity; // after -Werror promotion
  SourceLoc loc;     // as reported (may be inside a macro expansion)
  uint32_t length;   // of the highlighted range, in columns (>= 1)
  std::string message;
  bool promotedFromWarning = false;
};

class DiagEngine {
public:
  explicit DiagEngine(const SourceManager &sm);

  /// Where rendered diagnostics go (default std::cerr); nullptr keeps them silent.
  void setOutput(std::ostream *out) { out_ = out; }
  void setWarningsAsErrors(bool on) { werror_ = on; }
  void setIgnoreWarnings(bool on) { ignoreWarnings_ = on; }
  /// After this many errors the engine emits a fatal note and shouldStop() is true.
  void setErrorLimit(unsigned n) { errorLimit_ = n; }
  /// Verify mode: nothing is printed; verify() compares against expected-* comments.
  void setVerifyMode(bool on) { verifyMode_ = on; }

  /// Reports a diagnostic of kind `id` at `loc`, highlighting `length` columns.
  void report(DiagId id, SourceLoc loc, std::vector<std::string> args = {}, uint32_t length = 1);
  /// Reports a diagnostic with no source location (e.g. a bad command-line flag).
  void reportNoLoc(DiagId id, std::vector<std::string> args = {});

  unsigned numErrors() const { return numErrors_; }
  unsigned numWarnings() const { return numWarnings_; }
  bool hasErrors() const { return numErrors_ > 0; }
  /// True once the error limit was reached; long loops should then stop.
  bool shouldStop() const { return stopped_; }
  const std::vector<Diagnostic> &diagnostics() const { return diags_; }
  const SourceManager &sourceManager() const { return sm_; }

  /// Renders one diagnostic like clang (with source line, caret and macro
  /// notes); always valid UTF-8: other bytes (of the source line, a file name,
  /// the message) are written as \xNN, the caret aligned under them.
  std::string render(const Diagnostic &d) const;

  /// Verify mode: checks every diagnostic against the `expected-error {{text}}`,
  /// `expected-warning`, `expected-note` comments (optionally `@+N`, `@-N`, `@N`
  /// for another line) of the files in the source manager, and writes mismatches
  /// to `out`. Returns true when every diagnostic was expected and vice versa.
  bool verify(std::ostream &out) const;

private:
  const SourceManager &sm_;
  std::ostream *out_;
  std::vector<Diagnostic> diags_;
  unsigned numErrors_ = 0, numWarnings_ = 0;
  unsigned errorLimit_ = 50;
  bool werror_ = false, ignoreWarnings_ = false, verifyMode_ = false, stopped_ = false;
  bool lastWasIgnored_ = false; // notes after an ignored warning are dropped too
};

} // namespace tc
