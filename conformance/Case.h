//===- Case.h - Conformance suites: the loaded form and the loader -------===//
//
// A suite file (format "triton-conformance/1", conformance/FORMAT.md)
// loaded and validated into plain structs that every tool can use:
//
//   tc::conf::LoadResult r = tc::conf::loadSuiteFile("cases/add.json");
//   for (const std::string &e : r.errors) std::cerr << e << '\n';
//   const tc::conf::Case *c = r.suite ? r.suite->find("vector_add") : nullptr;
//   for (const tc::conf::Variant &v : c->variants()) {
//     tc::CompileOutcome k = tc::compileKernel(c->compileRequest(v, *r.suite));
//     std::unique_ptr<tc::conf::BoundArgs> args = tc::conf::bindArgs(*c);
//     auto grid = tc::evalGrid(c->gridSpec(), *k.kernel, args->launch);
//     ... backend->launch(*k.kernel, *grid.dims, args->launch, {}) ...
//     tc::conf::Verdict v = tc::conf::checkOutputs(*c, *args); // Runner.h
//   }
//
// Every error names the file and the JSON path of the offending value:
//   suite.json: cases[3].args[1].data: 63 values for shape [64]
// Malformed JSON also gives the line and column:
//   suite.json:12:5: cases[3]: malformed JSON: syntax error ...
// Unknown fields at the top level or in a case are warnings (ignored); unknown
// fields inside `args`, `expect`, an output, `random` or `compare` are errors,
// because ignoring them would change what the case means.
//
// A case that does not load is listed in Suite::invalid (the runner reports it
// as `error`); the other cases of the file still load. Problems with the file
// itself (unreadable, malformed JSON, wrong `format`, no `suite` or `cases`)
// leave LoadResult::suite empty.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "conformance/Compare.h"
#include "conformance/Random.h"
#include "frontend/Defines.h"
#include "runtime/Launch.h"
#include "runtime/Trap.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc::conf {

inline constexpr std::string_view kSuiteFormat = "triton-conformance/1";

/// How a buffer argument gets its initial contents.
enum class InitKind : uint8_t { Data, Fill, Random, Npy };

/// One kernel argument of a case (cases list them in parameter order).
struct ArgSpec {
  std::string name;
  DType dtype = DType::F32;
  bool isBuffer = false;
  ScalarValue scalar;           // scalars: the value
  std::vector<int64_t> shape;   // buffers: the shape
  InitKind init = InitKind::Fill;
  HostArray contents;           // Data and Npy: the values, converted
  uint64_t fillBits = 0;        // Fill: one element's bits
  RandomSpec random;            // Random
  std::string npyPath;          // Npy: the resolved path

  /// Product of the shape (1 for an empty shape).
  int64_t numElements() const;
};

/// The initial contents of buffer argument `arg` (deterministic).
HostArray makeBuffer(const ArgSpec &arg);

enum class ExpectKind : uint8_t { Outputs, CompileError, Trap, ImplementationDefined };
/// "outputs", "compile_error", "trap", "implementation_defined".
std::string_view expectKindName(ExpectKind k);

/// An expected output buffer.
struct OutputSpec {
  std::string name;     // a buffer argument of the case
  HostArray want;
  CompareSpec compare;  // as given, or defaultCompare(dtype)
  bool compareGiven = false;
};

struct Expectation {
  ExpectKind kind = ExpectKind::ImplementationDefined;
  std::vector<OutputSpec> outputs; // Outputs, in file order
  std::string message;             // CompileError (required), Trap (may be empty)
  uint32_t line = 0;               // CompileError: 0 means any line
  TrapKind trap = TrapKind::InvalidLaunch;
};

/// One combination of the case's define values.
struct Variant {
  DefineList defines;
  std::string label; // "TM=32 TN=64" (list-valued defines only); "" without lists
};

struct Suite;

struct Case {
  std::string name;
  std::string path;                  // its JSON path, "cases[3]"
  std::vector<std::string> features;
  std::string source;                // the kernel text
  std::string sourceFile;            // source_file: the resolved path ("" otherwise)
  std::string sourceName;            // name in diagnostics: the file, or "suite.json#case"
  std::string kernel;                // "" : the only __global__ function
  std::vector<DefineSpec> defines;   // in file order
  std::vector<std::string> grid;     // 1 to 3 entries: numbers or expressions, as text
  std::optional<int64_t> numWarps;
  std::vector<ArgSpec> args;
  Expectation expect;
  std::vector<std::string> backends; // empty: every backend

  /// The Cartesian product of the list-valued defines (first list slowest);
  /// a single variant when no define is a list.
  std::vector<Variant> variants() const;
  /// Whether the case lists `backend` (or lists none).
  bool runsOn(std::string_view backend) const;
  /// What compileKernel needs for one variant.
  CompileRequest compileRequest(const Variant &v, const Suite &suite) const;
  GridSpec gridSpec() const { return GridSpec{grid}; }
  const ArgSpec *arg(std::string_view name) const;
};

/// A case that did not load.
struct InvalidCase {
  std::string name; // its name, or its path when it has none
  std::string path; // "cases[3]"
  std::string error; // all its errors, one per line
};

struct Suite {
  std::string file;        // the path it was loaded from (as given)
  std::string dir;         // relative paths in the file start here
  std::string name;
  std::string description;
  std::vector<Case> cases;
  std::vector<InvalidCase> invalid;

  const Case *find(std::string_view caseName) const;
};

/// --rtol/--atol of triton-conformance run and --launch: every float output
/// of `s` that gives no `compare` of its own gets defaultCompare(dtype, o).
void overrideDefaultTolerances(Suite &s, const ToleranceOverride &o);

struct LoadResult {
  std::optional<Suite> suite;        // empty when the file itself is unusable
  std::vector<std::string> errors;   // "FILE: PATH: message", in file order
  std::vector<std::string> warnings; // same form
  std::vector<std::string>
      filesRead; // source_file and npy files: a tool's outputs never replace one
  bool ok() const { return suite.has_value() && errors.empty(); }
};

/// Reads and validates a suite file.
LoadResult loadSuiteFile(const std::string &path);
/// Validates suite text; `file` names it in messages, `dir` resolves relative paths.
LoadResult loadSuiteText(const std::string &text, const std::string &file,
                         const std::string &dir);

/// A case's arguments, bound by name for a launch; owns the buffers.
struct BoundArgs {
  std::vector<std::unique_ptr<HostArray>> buffers; // parallel to Case::args (null for scalars)
  std::vector<HostArray> initial;                  // the buffers' initial contents, same order
  LaunchArgs launch;
};

/// Makes every buffer's initial contents and binds the case's arguments.
std::unique_ptr<BoundArgs> bindArgs(const Case &c);

} // namespace tc::conf
