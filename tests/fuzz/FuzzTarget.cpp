//===- FuzzTarget.cpp - Compile or parse one input and check it ------------===//
#include "tests/fuzz/FuzzTarget.h"

#include "frontend/Compiler.h"
#include "ir/IRParser.h"
#include "ir/Passes.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <memory>
#include <sstream>

namespace tc::fuzz {

namespace {

CheckResult failure(std::string kind, std::string detail) {
  CheckResult r;
  r.failed = true;
  r.kind = std::move(kind);
  r.detail = std::move(detail);
  return r;
}

/// The first line where `a` and `b` differ, both sides shown.
std::string firstDifference(const std::string &a, const std::string &b) {
  std::istringstream sa(a), sb(b);
  std::string la, lb;
  for (unsigned line = 1;; ++line) {
    bool ga = static_cast<bool>(std::getline(sa, la)), gb = static_cast<bool>(std::getline(sb, lb));
    if (!ga && !gb)
      return "texts differ only in the final newline";
    if (!ga || !gb || la != lb)
      return "line " + std::to_string(line) + ":\n  first print:  " + (ga ? la : "<end>") +
             "\n  second print: " + (gb ? lb : "<end>");
  }
}

/// All rendered diagnostics of `d`, for a report.
std::string renderAll(const DiagEngine &d) {
  std::string s;
  for (const auto &diag : d.diagnostics())
    s += d.render(diag);
  return s;
}

/// A rejected input (not a failure): names the first error for the statistics.
CheckResult rejected(const DiagEngine &d) {
  CheckResult r;
  for (const auto &diag : d.diagnostics())
    if (diag.severity == Severity::Error) {
      r.firstError = std::string(diagName(diag.id));
      break;
    }
  return r;
}

struct Parsed {
  std::unique_ptr<SourceManager> sm;
  std::unique_ptr<DiagEngine> diags;
  std::unique_ptr<ir::Module> module;
};

/// Parses IR text with silent diagnostics.
Parsed parseText(const std::string &text, const std::string &name) {
  Parsed p;
  p.sm = std::make_unique<SourceManager>();
  uint32_t file = p.sm->addBuffer(name, text);
  p.diags = std::make_unique<DiagEngine>(*p.sm);
  p.diags->setOutput(nullptr);
  p.module = ir::parseModule(file, *p.sm, *p.diags);
  return p;
}

/// Print -> parse -> verify -> print of a verified module must be the identity on the text.
CheckResult checkRoundTrip(const ir::Module &m, bool locations) {
  ir::PrintOptions opts;
  opts.locations = locations;
  std::string first = ir::toString(m, opts);
  std::string tag = locations ? " (with locations)" : " (without locations)";
  Parsed p = parseText(first, "printed.tir");
  if (!p.module)
    return failure("printed-ir-does-not-parse" + tag, renderAll(*p.diags) + "--- printed IR:\n" + first);
  if (p.diags->hasErrors())
    return failure("parser-returned-module-with-errors", renderAll(*p.diags));
  auto failures = ir::verifyModule(*p.module);
  if (!failures.empty())
    return failure("reparsed-ir-fails-verifier" + tag,
                   ir::formatFailures(*p.module, failures) + "--- printed IR:\n" + first);
  std::string second = ir::toString(*p.module, opts);
  if (first != second)
    return failure("roundtrip-mismatch" + tag, firstDifference(first, second));
  CheckResult ok;
  ok.printedIR = locations ? first : "";
  ok.reachedIR = true;
  return ok;
}

/// Both round trips (with and without locations); the printed text is the one with locations.
CheckResult checkBothRoundTrips(const ir::Module &m) {
  CheckResult withLocs = checkRoundTrip(m, true);
  if (withLocs.failed)
    return withLocs;
  CheckResult noLocs = checkRoundTrip(m, false);
  if (noLocs.failed)
    return noLocs;
  return withLocs;
}

/// Round trips, then the default pass pipeline (verifying after each pass) on a
/// fresh copy, then the round trips of the optimized module.
CheckResult checkModule(const ir::Module &m) {
  CheckResult r = checkBothRoundTrips(m);
  if (r.failed)
    return r;
  Parsed copy = parseText(r.printedIR, "printed.tir");
  std::ostringstream log;
  ir::PipelineOptions opts;
  opts.verifyEach = true;
  opts.out = &log;
  if (!ir::runPipeline(*copy.module, opts))
    return failure("pass-pipeline-failed", log.str() + "--- input IR:\n" + r.printedIR);
  auto failures = ir::verifyModule(*copy.module);
  if (!failures.empty())
    return failure("pass-pipeline-output-fails-verifier",
                   ir::formatFailures(*copy.module, failures) + "--- input IR:\n" + r.printedIR);
  CheckResult after = checkBothRoundTrips(*copy.module);
  if (after.failed) {
    after.kind = "after-passes-" + after.kind;
    return after;
  }
  return r;
}

} // namespace

CheckResult checkSource(const SourceCase &c, const std::vector<std::string> &includeDirs) {
  CompileOptions opts;
  opts.defines = c.defines;
  opts.undefines = c.undefines;
  opts.warningsAsErrors = c.warningsAsErrors;
  opts.ignoreWarnings = c.ignoreWarnings;
  opts.includeDirs = includeDirs;
  Compilation comp(std::move(opts));
  comp.diags().setOutput(nullptr);
  comp.addMainSource("fuzz.tc", c.text());
  bool ok = comp.run(Stage::Lower);
  // Rendering every diagnostic exercises the caret and macro-note code too.
  std::string rendered = renderAll(comp.diags());
  if (!comp.internalError().empty())
    return failure("lowering-produced-invalid-ir", comp.internalError());
  if (!ok) {
    if (!comp.diags().hasErrors())
      return failure("failed-without-error", "Compilation::run returned false but reported no error");
    return rejected(comp.diags());
  }
  if (comp.diags().hasErrors())
    return failure("succeeded-with-errors", rendered);
  const ir::Module *m = comp.module();
  if (!m)
    return failure("no-module", "Compilation::run(Stage::Lower) succeeded without a module");
  auto failures = ir::verifyModule(*m);
  if (!failures.empty())
    return failure("module-fails-verifier", ir::formatFailures(*m, failures));
  return checkModule(*m);
}

CheckResult checkIR(const std::string &text) {
  Parsed p = parseText(text, "fuzz.tir");
  std::string rendered = renderAll(*p.diags);
  if (!p.module) {
    if (!p.diags->hasErrors())
      return failure("parser-null-without-error", "ir::parseModule returned nullptr but reported no error");
    return rejected(*p.diags);
  }
  if (p.diags->hasErrors())
    return failure("parser-returned-module-with-errors", rendered);
  auto failures = ir::verifyModule(*p.module);
  if (!failures.empty()) {
    std::string report = ir::formatFailures(*p.module, failures);
    if (report.empty())
      return failure("empty-verifier-report", "formatFailures gave no text for " +
                                                  std::to_string(failures.size()) + " failures");
    return {};
  }
  return checkModule(*p.module);
}

} // namespace tc::fuzz
