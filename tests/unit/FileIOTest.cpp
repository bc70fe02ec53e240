// The shared file helpers (support/FileIO.h) and time limits (support/TimeLimit.h).
#include "support/FileIO.h"
#include "support/TimeLimit.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace tc;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "tc-fileio-XXXXXX").string();
    path = ::mkdtemp(tmpl.data());
  }
  ~TempDir() { fs::remove_all(path); }
  std::string file(const std::string &name, const std::string &text) const {
    std::ofstream(path / name, std::ios::binary) << text;
    return (path / name).string();
  }
};

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(FileIO, ReadsRegularFilesWithinTheLimit) {
  TempDir d;
  std::string p = d.file("a.txt", "hello\n"), text, error;
  ASSERT_TRUE(readFileCapped(p, 6, text, error)) << error;
  EXPECT_EQ(text, "hello\n");
  EXPECT_FALSE(readFileCapped(p, 5, text, error));
  EXPECT_EQ(error, "'" + p + "' is larger than the limit of 5 bytes (6 bytes)");
}

TEST(FileIO, RefusesFilesThatAreNotRegular) {
  TempDir d;
  std::string text, error;
  EXPECT_FALSE(readFileCapped("/dev/zero", 1 << 20, text, error));
  EXPECT_EQ(error, "'/dev/zero' is a device, not a regular file");
  EXPECT_FALSE(readFileCapped(d.path.string(), 1 << 20, text, error));
  EXPECT_EQ(error, "'" + d.path.string() + "' is a directory");
  // A FIFO nobody writes to: refused at once (opening it would block).
  std::string fifo = (d.path / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(readFileCapped(fifo, 1 << 20, text, error));
  EXPECT_EQ(error, "'" + fifo + "' is a FIFO, not a regular file");
  EXPECT_FALSE(readFileCapped((d.path / "missing").string(), 1 << 20, text, error));
  EXPECT_EQ(error, "cannot open '" + (d.path / "missing").string() +
                       "' (No such file or directory)");
}

TEST(FileIO, WritesAtomicallyAndReportsFailures) {
  TempDir d;
  std::string p = d.file("out.txt", "old"), error;
  ASSERT_TRUE(writeFileAtomic(p, "new", error)) << error;
  EXPECT_EQ(slurp(p), "new");
  // No temporary is left behind.
  size_t entries = 0;
  for ([[maybe_unused]] const auto &e : fs::directory_iterator(d.path))
    ++entries;
  EXPECT_EQ(entries, 1u);
  EXPECT_FALSE(writeFileAtomic("/dev/full", "x", error));
  EXPECT_EQ(error, "cannot write '/dev/full' (No space left on device)");
  EXPECT_FALSE(writeFileAtomic(d.path.string(), "x", error));
  EXPECT_EQ(error, "cannot write '" + d.path.string() + "': it is a directory");
  EXPECT_FALSE(writeFileAtomic((d.path / "no" / "x").string(), "x", error));
  EXPECT_TRUE(writeFileAtomic("/dev/null", "x", error)) << error;
  std::string fifo = (d.path / "fifo").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_FALSE(writeFileAtomic(fifo, "x", error)); // no reader: an error, not a hang
  EXPECT_EQ(error, "cannot write '" + fifo + "' (a FIFO with no reader)");
}

TEST(FileIO, SameFileAndOutputChecks) {
  TempDir d;
  std::string a = d.file("a.npy", "x");
  std::string rel = (d.path / "." / "a.npy").string();
  EXPECT_TRUE(sameFile(a, rel));
  EXPECT_TRUE(sameFile((d.path / "new.npy").string(), (d.path / "sub" / ".." / "new.npy").string()));
  EXPECT_FALSE(sameFile(a, (d.path / "b.npy").string()));
  EXPECT_EQ(checkOutputPath(rel, {a}, /*replaceExisting=*/true),
            "refusing to overwrite the input file '" + rel + "'");
  EXPECT_EQ(checkOutputPath(a, {}, false),
            "refusing to overwrite the existing file '" + a + "'; use --force to overwrite it");
  EXPECT_EQ(checkOutputPath(a, {}, true), "");
  EXPECT_EQ(checkOutputPath(d.path.string(), {}, true), "'" + d.path.string() + "' is a directory");
}

TEST(TimeLimit, SaturatesAndRejectsNonsense) {
  auto now = std::chrono::steady_clock::now();
  EXPECT_EQ(deadlineAfter(now, 1e10), std::chrono::steady_clock::time_point::max());
  EXPECT_EQ(deadlineAfter(now, 1e300), std::chrono::steady_clock::time_point::max());
  EXPECT_GT(deadlineAfter(now, 1.0), now);
  EXPECT_LT(deadlineAfter(now, 1.0), now + std::chrono::seconds(2));
  EXPECT_EQ(timeLimitProblem("2.5"), "");
  EXPECT_EQ(timeLimitProblem("1e10"), "");
  EXPECT_EQ(timeLimitProblem("nan"), "'nan' is not a finite number of seconds");
  EXPECT_EQ(timeLimitProblem("inf"), "'inf' is not a finite number of seconds");
  EXPECT_EQ(timeLimitProblem("-1"), "the time limit must be >= 0, not -1");
  EXPECT_EQ(timeLimitProblem("5s"), "'5s' is not a number of seconds");
}

} // namespace
