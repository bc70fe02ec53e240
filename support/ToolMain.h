//===- ToolMain.h - The last-resort handler of every tool's main ---------===//
//
// The tools check their limits (docs/limits.md) before they allocate; should
// an allocation still fail (a ulimit, a machine with little memory), the tool
// says so and exits with the usage/limit code 3 instead of aborting.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdio>
#include <new>
#include <stdexcept>

namespace tc {

inline constexpr int kExitOutOfMemory = 3;

template <class Body> int guardedMain(const char *tool, Body &&body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    std::fprintf(stderr,
                 "%s: error: out of memory (the input asks for more memory than this "
                 "machine or its limits give; see docs/limits.md)\n",
                 tool);
  } catch (const std::length_error &) {
    std::fprintf(stderr, "%s: error: out of memory (a size beyond what can be allocated)\n", tool);
  }
  return kExitOutOfMemory;
}

} // namespace tc
