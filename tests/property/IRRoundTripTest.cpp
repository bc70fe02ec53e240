// Property: for all IR the corpus produces (every example kernel under random
// choices of its defines, every lit test source), print -> parse -> print is
// byte-identical, with and without locations, before and after the default pass
// pipeline; the verifier accepts the module after every pass.
#include "frontend/Compiler.h"
#include "ir/IRParser.h"
#include "ir/Passes.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <filesystem>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>
#include <sstream>

namespace fs = std::filesystem;

namespace {

#ifndef TC_SOURCE_DIR
#error "TC_SOURCE_DIR must be defined"
#endif

struct CorpusEntry {
  std::string file;
  std::vector<std::vector<std::string>> defineChoices; // one list of -D texts per axis
};

// The examples with the values their defines may take.
std::vector<CorpusEntry> exampleCorpus() {
  std::string ex = std::string(TC_SOURCE_DIR) + "/examples/";
  std::vector<std::string> types = {"TYPE=float", "TYPE=half", "TYPE=double", "TYPE=bf16",
                                    "TYPE=int8"};
  std::vector<std::string> tm = {"TM=16", "TM=32", "TM=64", "TM=128"};
  std::vector<std::string> tn = {"TN=16", "TN=32", "TN=64"};
  std::vector<std::string> tk = {"TK=8", "TK=16", "TK=32"};
  return {
      {ex + "vector_add_fixed.tc", {}},
      {ex + "vector_add.tc", {types, {"SIZE=1", "SIZE=32", "SIZE=1024", "SIZE=4096"}}},
      {ex + "transpose.tc", {types, tm, tn}},
      {ex + "transpose_masked.tc", {types, tm, tn}},
      {ex + "matmul.tc", {types, tm, tn, tk}},
      {ex + "matmul_prefetch.tc", {types, tm, tn, tk}},
      {ex + "matmul_remat.tc", {types, tm, tn, tk}},
      {ex + "matmul_trans.tc", {types, tm, tn, tk, {"AT=0", "AT=1"}, {"BT=0", "BT=1"}}},
  };
}

std::vector<std::string> litSources() {
  std::vector<std::string> files;
  fs::path root = fs::path(TC_SOURCE_DIR) / "tests" / "lit";
  for (const auto &e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().extension() == ".tc")
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::string print(const tc::ir::Module &m, bool locs) {
  tc::ir::PrintOptions po;
  po.locations = locs;
  return tc::ir::toString(m, po);
}

// Parses `text` and prints it again; returns the re-printed text or an error note.
std::string reparse(const std::string &text, bool locs) {
  tc::SourceManager sm;
  tc::DiagEngine diags(sm);
  std::ostringstream errs;
  diags.setOutput(&errs);
  uint32_t f = sm.addBuffer("roundtrip.tir", text);
  auto m = tc::ir::parseModule(f, sm, diags);
  if (!m)
    return "<parse failed>\n" + errs.str();
  auto failures = tc::ir::verifyModule(*m);
  if (!failures.empty())
    return "<verify failed>\n" + tc::ir::formatFailures(*m, failures);
  return print(*m, locs);
}

void checkRoundTrip(tc::ir::Module &m) {
  for (bool locs : {true, false}) {
    std::string once = print(m, locs);
    RC_ASSERT(reparse(once, locs) == once);
  }
  tc::ir::PipelineOptions po;
  po.verifyEach = true;
  std::ostringstream out;
  po.out = &out;
  RC_ASSERT(tc::ir::runPipeline(m, po));
  RC_ASSERT(tc::ir::verifyModule(m).empty());
  std::string optimised = print(m, true);
  RC_ASSERT(reparse(optimised, true) == optimised);
}

std::unique_ptr<tc::ir::Module> compile(const std::string &file,
                                        const std::vector<std::string> &defines) {
  tc::CompileOptions opts;
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    opts.defines.emplace_back(d.substr(0, eq), d.substr(eq + 1));
  }
  tc::Compilation c(opts);
  c.diags().setOutput(nullptr);
  if (!c.addMainFile(file) || !c.run(tc::Stage::Lower))
    return nullptr;
  return c.takeModule();
}

} // namespace

RC_GTEST_PROP(IRRoundTrip, ExamplesUnderRandomDefines, ()) {
  static const std::vector<CorpusEntry> corpus = exampleCorpus();
  const CorpusEntry &e = *rc::gen::elementOf(corpus);
  std::vector<std::string> defines;
  for (const auto &axis : e.defineChoices)
    defines.push_back(*rc::gen::elementOf(axis));
  RC_TAG(fs::path(e.file).filename().string());
  auto m = compile(e.file, defines);
  // Some combinations are invalid programs (e.g. `@` on int8 x int8 is fine, but a
  // bf16 `-DTYPE` list entry might not be); those must fail with a diagnostic only.
  if (!m)
    return;
  checkRoundTrip(*m);
}

TEST(IRRoundTrip, EveryLitSourceThatCompiles) {
  int compiled = 0;
  for (const std::string &file : litSources()) {
    auto m = compile(file, {});
    if (!m)
      continue;
    ++compiled;
    for (bool locs : {true, false}) {
      std::string once = print(*m, locs);
      EXPECT_EQ(reparse(once, locs), once) << file;
    }
  }
  EXPECT_GT(compiled, 0);
}

TEST(IRRoundTrip, EveryExampleCompilesInSomeVariant) {
  for (const CorpusEntry &e : exampleCorpus()) {
    std::vector<std::string> defines;
    for (const auto &axis : e.defineChoices)
      defines.push_back(axis[std::min<size_t>(1, axis.size() - 1)]);
    EXPECT_NE(compile(e.file, defines), nullptr) << e.file;
  }
}
