//===- SourceRoot.h - Where the unit tests find the repository's files ----===//
//
// Tests that read examples/ (or other files of the repository) find the
// repository root, in order:
//   1. $TC_SOURCE_DIR, when set (a build copied to another folder or machine);
//   2. the source folder the build was configured from (compiled in);
//   3. the folders above the test executable (<root>/build/bin/unit_tests);
//   4. the current directory and the folders above it.
// The first that holds examples/ and tests/ (or examples/ and the TRITON_C_DIST
// file of a stripped copy made by scripts/build-dist.sh, as tools/gpu-check.sh
// runs unit_tests from) wins, so the tests run from any working
// directory. When none does, sourceRoot() is empty and sourceRootProblem()
// says where it looked, for a test to fail with (never a crash).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>

namespace tc::test {

/// The repository root ("" when not found).
std::string sourceRoot();
/// Why sourceRoot() is empty: the folders tried and how to point at the tree.
std::string sourceRootProblem();
/// `<root>/examples/<name>` ("" when the root is not found).
std::string examplePath(const std::string &name);

} // namespace tc::test
