//===- FuzzTarget.h - What the fuzz test checks for one input --------------===//
//
// Properties checked (beyond "no crash, no sanitizer report, no hang", which
// the driver watches):
//  - Triton-C source: compiling to Stage::Lower either reports an error
//    diagnostic, or succeeds with no error, no internal (verifier) error and a
//    module that passes ir::verifyModule; that module's text (with and without
//    locations) parses back, verifies, and re-prints identically.
//  - IR text: ir::parseModule returns a module exactly when it reported no
//    error; a parsed module that verifies round-trips (print, parse, print) the
//    same way; a module that fails verification can be rendered (formatFailures).
//  - Every verified module also goes through the default pass pipeline
//    (ir::runPipeline, verifying after each pass): it must succeed, verify, and
//    round-trip the same way.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "tests/fuzz/FuzzInput.h"

#include <string>
#include <vector>

namespace tc::fuzz {

struct CheckResult {
  bool failed = false;
  std::string kind;   // short failure class, e.g. "roundtrip-mismatch"
  std::string detail; // what differed, for the report
  /// The printed module (with locations) when the input compiled (or parsed) cleanly.
  std::string printedIR;
  bool reachedIR = false;
  /// The kind of the first error diagnostic (e.g. "err_pp_unterminated_if"), if any.
  std::string firstError;
};

/// Compiles `c` (its full text, header included) to Stage::Lower and checks the result.
CheckResult checkSource(const SourceCase &c, const std::vector<std::string> &includeDirs);

/// Parses `text` as tile IR, verifies it and checks the round trip when valid.
CheckResult checkIR(const std::string &text);

} // namespace tc::fuzz
