//===- Pipeline.cpp - Running passes in order -----------------------------===//
#include "ir/Passes.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"

#include <iostream>

namespace tc::ir {

namespace {

struct PassEntry {
  const char *name;
  bool (*run)(Module &);
};

constexpr PassEntry kPasses[] = {
    {"canonicalize", canonicalize},
    {"fold", foldConstants},
    {"cse", eliminateCommonSubexpressions},
    {"dce", eliminateDeadCode},
};

const PassEntry *findPass(const std::string &name) {
  for (const PassEntry &p : kPasses)
    if (name == p.name)
      return &p;
  return nullptr;
}

} // namespace

std::vector<std::string> passNames() {
  std::vector<std::string> names;
  for (const PassEntry &p : kPasses)
    names.push_back(p.name);
  return names;
}

bool runPipeline(Module &m, const PipelineOptions &opts) {
  std::ostream &out = opts.out ? *opts.out : std::cerr;
  std::vector<std::string> names = opts.passes.empty() ? passNames() : opts.passes;
  std::vector<const PassEntry *> passes;
  for (const std::string &name : names) {
    const PassEntry *p = findPass(name);
    if (!p) {
      std::string known;
      for (const std::string &n : passNames())
        known += (known.empty() ? "" : ", ") + n;
      out << "error: unknown pass '" << name << "' (known passes: " << known << ")\n";
      return false;
    }
    passes.push_back(p);
  }
  for (const PassEntry *p : passes) {
    p->run(m);
    if (opts.printAfterAll) {
      out << "// -----// IR Dump After " << p->name << " //----- //\n";
      printModule(m, out);
    }
    if (opts.verifyEach) {
      std::vector<VerifyFailure> failures = verifyModule(m);
      if (!failures.empty()) {
        out << "error: verification failed after pass '" << p->name << "'\n"
            << formatFailures(m, failures);
        return false;
      }
    }
  }
  return true;
}

} // namespace tc::ir
