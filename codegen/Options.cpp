//===- Options.cpp - Switching optimisations by name ----------------------===//
#include "codegen/Codegen.h"

#include <sstream>

namespace tc::codegen {
namespace {

// The switch of each optimisation, by name.
bool *flagOf(Options &opts, const std::string &name) {
  if (name == "vectorize")
    return &opts.vectorize;
  if (name == "remat")
    return &opts.remat;
  if (name == "mma")
    return &opts.tensorCores;
  if (name == "mma-values")
    return &opts.mmaValues;
  if (name == "key-perm")
    return &opts.keyPerm;
  if (name == "wgmma")
    return &opts.wgmma;
  if (name == "int8-wgmma")
    return &opts.int8Wgmma;
  if (name == "split-n")
    return &opts.splitN;
  if (name == "masked-stream")
    return &opts.maskedStreams;
  if (name == "epilogue-cast")
    return &opts.epilogueCast;
  if (name == "late-q")
    return &opts.lateQ;
  if (name == "tma")
    return &opts.tma;
  if (name == "specialize")
    return &opts.specialize;
  if (name == "occupancy")
    return &opts.occupancy;
  if (name == "shared-divisor")
    return &opts.sharedDivisor;
  if (name == "exp2-range")
    return &opts.exp2Range;
  if (name == "prefetch")
    return &opts.prefetch;
  if (name == "exit-values")
    return &opts.exitValues;
  if (name == "copy-guard")
    return &opts.guardCopies;
  if (name == "desc-steps")
    return &opts.descSteps;
  return nullptr;
}

} // namespace

const std::vector<std::string> &optimizationNames() {
  static const std::vector<std::string> names = {
      "vectorize",     "remat",    "mma",        "mma-values", "key-perm",
      "pipeline",      "wgmma",    "int8-wgmma", "split-n",    "masked-stream",
      "epilogue-cast", "late-q",   "tma",        "occupancy",  "shared-divisor",
      "exp2-range",    "prefetch", "specialize", "copy-guard", "exit-values",
      "desc-steps"};
  return names;
}

std::string optimizationList() {
  std::string s;
  for (const std::string &name : optimizationNames())
    s += name + ",";
  return s + "all";
}

bool disableOptimizations(Options &opts, const std::string &list, std::string &error) {
  std::stringstream in(list);
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name.empty())
      continue;
    if (name == "all") {
      opts.vectorize = opts.remat = opts.tensorCores = opts.mmaValues = opts.keyPerm = opts.wgmma =
          opts.int8Wgmma = opts.splitN = opts.maskedStreams = opts.epilogueCast = opts.lateQ =
              opts.tma = opts.occupancy = opts.sharedDivisor = opts.exp2Range = opts.prefetch =
                  opts.specialize = opts.guardCopies = opts.exitValues = opts.descSteps = false;
      opts.numStages = 1;
      continue;
    }
    if (name == "pipeline") {
      opts.numStages = 1;
      continue;
    }
    bool *flag = flagOf(opts, name);
    if (!flag) {
      error = "unknown optimisation '" + name + "' (known: ";
      for (const std::string &known : optimizationNames())
        error += known + ", ";
      error += "all)";
      return false;
    }
    *flag = false;
  }
  return true;
}

std::string describeOptions(const Options &opts) {
  std::string s = "num_warps=" + std::to_string(opts.numWarps) + " sm=" + std::to_string(opts.sm) +
                  " O" + std::to_string(opts.optLevel);
  if (opts.vectorize)
    s += " vectorize";
  if (opts.remat)
    s += " remat";
  if (opts.tensorCores)
    s += " mma";
  if (opts.tensorCores && !opts.mmaValues)
    s += " no-mma-values";
  if (opts.tensorCores && opts.mmaValues && !opts.keyPerm)
    s += " no-key-perm";
  if (opts.wgmma)
    s += " wgmma";
  if (opts.wgmma && !opts.int8Wgmma)
    s += " no-int8-wgmma";
  if (opts.wgmma && !opts.splitN)
    s += " no-split-n";
  if (!opts.maskedStreams)
    s += " no-masked-stream";
  if (opts.tensorCores && !opts.epilogueCast)
    s += " no-epilogue-cast";
  if (opts.wgmma && !opts.lateQ)
    s += " no-late-q";
  if (opts.wgmma && !opts.tma)
    s += " no-tma";
  if (!opts.occupancy)
    s += " no-occupancy";
  if (!opts.sharedDivisor)
    s += " no-shared-divisor";
  if (!opts.exp2Range)
    s += " no-exp2-range";
  if (!opts.prefetch)
    s += " no-prefetch";
  if (!opts.guardCopies)
    s += " no-copy-guard";
  if (!opts.exitValues)
    s += " no-exit-values";
  if (opts.wgmma && !opts.descSteps)
    s += " no-desc-steps";
  s += " stages=" + std::to_string(opts.numStages);
  if (opts.alignedPointers)
    s += " aligned-pointers";
  if (opts.optBisectLimit >= 0)
    s += " opt-bisect-limit=" + std::to_string(opts.optBisectLimit);
  if (opts.jitOptLevel >= 0)
    s += " jit-O" + std::to_string(opts.jitOptLevel);
  if (opts.driverJit)
    s += " driver-jit";
  return s;
}

} // namespace tc::codegen
