//===- SourceRoot.cpp - Where the unit tests find the repository's files --===//
#include "tests/unit/SourceRoot.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#ifndef TC_CONFIGURED_SOURCE_DIR
#error "TC_CONFIGURED_SOURCE_DIR must be defined (tests/CMakeLists.txt)"
#endif

namespace tc::test {

namespace fs = std::filesystem;

namespace {

/// Written by scripts/build-dist.sh at the top of the copy it makes.
constexpr const char *kDistMarker = "TRITON_C_DIST";

/// A checkout (examples/ and tests/), or the stripped copy scripts/build-dist.sh
/// makes (examples/ and its marker file, kDistMarker).
bool isRoot(const fs::path &p) {
  std::error_code ec;
  return !p.empty() && fs::is_directory(p / "examples", ec) &&
         (fs::is_directory(p / "tests", ec) || fs::is_regular_file(p / kDistMarker, ec));
}

/// `start` and every folder above it.
void addAncestors(fs::path start, std::vector<fs::path> &out) {
  std::error_code ec;
  start = fs::weakly_canonical(start, ec);
  for (fs::path p = start; !p.empty(); p = p.parent_path()) {
    out.push_back(p);
    if (p == p.parent_path())
      break;
  }
}

struct Search {
  std::string root;
  std::string tried;
};

Search search() {
  Search s;
  std::vector<fs::path> candidates;
  if (const char *env = std::getenv("TC_SOURCE_DIR"); env && *env) {
    // An explicit override is the only place looked at: a wrong one is an error.
    if (isRoot(env))
      s.root = env;
    else
      s.tried = std::string("$TC_SOURCE_DIR=") + env +
                " (it has no examples/ folder with a tests/ folder or a TRITON_C_DIST file)";
    return s;
  }
  candidates.push_back(TC_CONFIGURED_SOURCE_DIR);
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec)
    addAncestors(exe.parent_path(), candidates);
  fs::path cwd = fs::current_path(ec);
  if (!ec)
    addAncestors(cwd, candidates);
  for (const fs::path &c : candidates) {
    if (isRoot(c)) {
      s.root = c.string();
      return s;
    }
    s.tried += (s.tried.empty() ? "" : ", ") + c.string();
  }
  return s;
}

const Search &cached() {
  static const Search s = search();
  return s;
}

} // namespace

std::string sourceRoot() {
  return cached().root;
}

std::string sourceRootProblem() {
  return "the repository (a folder with examples/ and tests/, or a copy made by "
         "scripts/build-dist.sh) was not found; looked at: " +
         cached().tried + "; set TC_SOURCE_DIR to the repository's root";
}

std::string examplePath(const std::string &name) {
  std::string root = sourceRoot();
  return root.empty() ? "" : root + "/examples/" + name;
}

} // namespace tc::test
