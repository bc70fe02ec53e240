//===- PlantedBugs.h - Known bugs planted to measure the fuzzer -----------===//
//
// Built with -DTC_PLANTED_BUGS=ON, the compiler carries known bugs (in the GPU
// backend and in the IR passes) that stay dormant until $TC_PLANT_BUG names
// one of them; `scripts/planted-bugs.sh` runs the fuzzer against each and
// measures how fast it is found (bench/RESULTS.md). In a normal build
// plantedBug() is constexpr false and every hook folds away.
//
//   if (plantedBug("reduce-max-identity")) identity = 0;   // the bug
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <vector>

namespace tc {

struct PlantedBugInfo {
  const char *name;        // what $TC_PLANT_BUG names
  const char *where;       // "gpu" (codegen/) or "ir" (ir/ passes)
  const char *description; // one line
};

/// Every bug that can be planted (also in a normal build, for --list).
const std::vector<PlantedBugInfo> &plantedBugList();

#ifdef TC_PLANTED_BUGS
/// True when $TC_PLANT_BUG (read once) is `name`.
bool plantedBug(const char *name);
/// The active bug's name ("" if none): part of the kernel cache key.
std::string activePlantedBug();
#else
constexpr bool plantedBug(const char *) { return false; }
inline std::string activePlantedBug() { return ""; }
#endif

} // namespace tc
