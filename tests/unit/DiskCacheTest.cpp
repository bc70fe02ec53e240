// runtime/DiskCache: round trips, misses, entries that must not be returned
// (truncated, corrupted, stored for another key), the key hash, and the cases
// where caching is off or cannot write (never an exception).
#include "runtime/DiskCache.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using tc::DiskCache;

/// A fresh directory under the system temp dir, removed afterwards.
class CacheDir {
public:
  CacheDir() {
    std::string tmpl = (fs::temp_directory_path() / "diskcachetest-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  ~CacheDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path &path() const { return path_; }

private:
  fs::path path_;
};

/// The names of the files in `dir`.
std::vector<std::string> filesIn(const fs::path &dir) {
  std::vector<std::string> names;
  for (const auto &e : fs::directory_iterator(dir))
    names.push_back(e.path().filename().string());
  return names;
}

/// The only entry file in `dir` (the test stored exactly one).
fs::path onlyEntry(const fs::path &dir) {
  std::vector<std::string> names = filesIn(dir);
  EXPECT_EQ(names.size(), 1u);
  return names.empty() ? fs::path() : dir / names.front();
}

std::string readAll(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void writeAll(const fs::path &p, const std::string &data) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

/// A blob with NUL bytes, newlines and every byte value.
std::string binaryBlob() {
  std::string blob = "// PTX\n.version 8.0\n";
  for (int i = 0; i < 512; ++i)
    blob.push_back(static_cast<char>(i & 0xff));
  return blob;
}

TEST(DiskCacheTest, RoundTrip) {
  CacheDir dir;
  DiskCache cache(dir.path().string());
  EXPECT_TRUE(cache.enabled());
  std::string key = DiskCache::hashKey({"kernel source", "sm_90"});
  cache.put(key, binaryBlob());
  std::optional<std::string> got = cache.get(key);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, binaryBlob());
  // The file is <hash>.bin and no temporary file is left behind.
  EXPECT_EQ(filesIn(dir.path()), std::vector<std::string>{key + ".bin"});
}

TEST(DiskCacheTest, EmptyBlobAndArbitraryKey) {
  CacheDir dir;
  DiskCache cache(dir.path().string());
  cache.put("a key with spaces\nand a newline", "");
  std::optional<std::string> got = cache.get("a key with spaces\nand a newline");
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, "");
}

TEST(DiskCacheTest, PutReplaces) {
  CacheDir dir;
  DiskCache cache(dir.path().string());
  cache.put("k", "first");
  cache.put("k", "second, longer");
  EXPECT_EQ(cache.get("k"), std::optional<std::string>("second, longer"));
}

TEST(DiskCacheTest, MissingKey) {
  CacheDir dir;
  DiskCache cache(dir.path().string());
  EXPECT_EQ(cache.get("never stored"), std::nullopt);
  cache.put("stored", "x");
  EXPECT_EQ(cache.get("never stored"), std::nullopt);
}

TEST(DiskCacheTest, CreatesMissingDirectories) {
  CacheDir dir;
  fs::path nested = dir.path() / "a" / "b" / "c";
  DiskCache cache(nested.string());
  cache.put("k", "blob");
  EXPECT_EQ(cache.get("k"), std::optional<std::string>("blob"));
}

TEST(DiskCacheTest, TruncatedEntryIsNotReturned) {
  CacheDir dir;
  DiskCache cache(dir.path().string());
  cache.put("k", binaryBlob());
  fs::path entry = onlyEntry(dir.path());
  std::string full = readAll(entry);
  // Every proper prefix is a miss: header only, header cut, one byte short.
  for (size_t len : {full.size() - 1, full.size() / 2, size_t(10), size_t(0)}) {
    writeAll(entry, full.substr(0, len));
    EXPECT_EQ(cache.get("k"), std::nullopt) << "length " << len;
  }
  writeAll(entry, full);
  EXPECT_EQ(cache.get("k"), std::optional<std::string>(binaryBlob()));
}

TEST(DiskCacheTest, CorruptedEntryIsNotReturned) {
  CacheDir dir;
  DiskCache cache(dir.path().string());
  cache.put("k", binaryBlob());
  fs::path entry = onlyEntry(dir.path());
  std::string full = readAll(entry);
  std::string flipped = full;
  flipped[full.size() - 100] ^= 0x01; // a bit in the blob, same length
  writeAll(entry, flipped);
  EXPECT_EQ(cache.get("k"), std::nullopt);
  writeAll(entry, full + "extra");
  EXPECT_EQ(cache.get("k"), std::nullopt);
  writeAll(entry, "not a cache entry at all\n");
  EXPECT_EQ(cache.get("k"), std::nullopt);
}

TEST(DiskCacheTest, EntryOfAnotherKeyIsNotReturned) {
  CacheDir dir;
  DiskCache cache(dir.path().string());
  std::string a = DiskCache::hashKey({"a"});
  std::string b = DiskCache::hashKey({"b"});
  cache.put(a, "blob of a");
  // An entry renamed to another key's file name (as a hash collision would
  // look) is rejected because the stored key differs.
  fs::copy_file(dir.path() / (a + ".bin"), dir.path() / (b + ".bin"));
  EXPECT_EQ(cache.get(b), std::nullopt);
  EXPECT_EQ(cache.get(a), std::optional<std::string>("blob of a"));
}

TEST(DiskCacheTest, HashKeyIsHexAndLengthPrefixed) {
  std::string h = DiskCache::hashKey({"ab", "c"});
  EXPECT_EQ(h.size(), 32u);
  EXPECT_EQ(h.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(h, DiskCache::hashKey({"ab", "c"}));
  std::set<std::string> distinct = {
      DiskCache::hashKey({"ab", "c"}), DiskCache::hashKey({"a", "bc"}), DiskCache::hashKey({"abc"}),
      DiskCache::hashKey({"abc", ""}), DiskCache::hashKey({"", "abc"}), DiskCache::hashKey({}),
      DiskCache::hashKey({""}),        DiskCache::hashKey({"", ""}),
  };
  EXPECT_EQ(distinct.size(), 8u);
}

TEST(DiskCacheTest, HashKeyKnownValue) {
  // SHA-256 of nothing (no parts), first 16 bytes: FIPS 180-2's empty-message
  // digest e3b0c442 98fc1c14 9afbf4c8 996fb924 ...
  EXPECT_EQ(DiskCache::hashKey({}), "e3b0c44298fc1c149afbf4c8996fb924");
}

TEST(DiskCacheTest, DisabledCache) {
  DiskCache cache("");
  EXPECT_FALSE(cache.enabled());
  EXPECT_NO_THROW(cache.put("k", "blob"));
  EXPECT_EQ(cache.get("k"), std::nullopt);
}

TEST(DiskCacheTest, UnwritableDirectoryDoesNotThrow) {
  CacheDir dir;
  // A directory below a regular file can never be created (even by root).
  writeAll(dir.path() / "file", "x");
  DiskCache cache((dir.path() / "file" / "cache").string());
  EXPECT_TRUE(cache.enabled());
  EXPECT_NO_THROW(cache.put("k", "blob"));
  EXPECT_EQ(cache.get("k"), std::nullopt);
}

TEST(DiskCacheTest, ConcurrentWritersNeverExposeAPartialEntry) {
  CacheDir dir;
  DiskCache cache(dir.path().string());
  std::string big(1 << 20, 'x');
  for (size_t i = 0; i < big.size(); i += 97)
    big[i] = static_cast<char>(i);
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t)
    writers.emplace_back([&] {
      for (int i = 0; i < 5; ++i)
        cache.put("shared", big);
    });
  bool sawPartial = false;
  for (int i = 0; i < 50; ++i) {
    std::optional<std::string> got = cache.get("shared");
    if (got && *got != big)
      sawPartial = true;
  }
  for (std::thread &w : writers)
    w.join();
  EXPECT_FALSE(sawPartial);
  EXPECT_EQ(cache.get("shared"), std::optional<std::string>(big));
  EXPECT_EQ(filesIn(dir.path()).size(), 1u); // no temporary files left
}

/// Sets (or unsets, for nullptr) an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    const char *old = std::getenv(name);
    if (old)
      old_ = old;
    set(value);
  }
  ~ScopedEnv() { set(old_ ? old_->c_str() : nullptr); }

private:
  void set(const char *value) {
    if (value)
      ::setenv(name_, value, 1);
    else
      ::unsetenv(name_);
  }
  const char *name_;
  std::optional<std::string> old_;
};

TEST(DiskCacheTest, DefaultCacheDir) {
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg/cache");
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(tc::defaultCacheDir(), "/xdg/cache/triton-c");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(tc::defaultCacheDir(), "/home/someone/.cache/triton-c");
  }
  {
    // The XDG spec says a relative XDG_CACHE_HOME is to be ignored.
    ScopedEnv xdg("XDG_CACHE_HOME", "relative");
    ScopedEnv home("HOME", "/home/someone");
    EXPECT_EQ(tc::defaultCacheDir(), "/home/someone/.cache/triton-c");
  }
  {
    ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", nullptr);
    EXPECT_EQ(tc::defaultCacheDir(), "");
  }
}

} // namespace

// --- the folder's owner and mode, full keys (issue 31) ---

TEST(DiskCacheTest, CreatesTheFolderPrivate) {
  CacheDir dir;
  fs::path sub = dir.path() / "a" / "triton-c";
  DiskCache cache(sub.string());
  cache.put(DiskCache::fullKey({"k"}), "blob");
  EXPECT_EQ(fs::status(sub).permissions() & fs::perms::all, fs::perms::owner_all); // 0700
  EXPECT_EQ(cache.get(DiskCache::fullKey({"k"})), std::optional<std::string>("blob"));
}

TEST(DiskCacheTest, GroupOrWorldWritableFolderIsRefusedWithOneWarning) {
  CacheDir dir;
  std::string key = DiskCache::fullKey({"ir text", "kernel", "defines"});
  DiskCache(dir.path().string()).put(key, "planted");
  for (fs::perms extra : {fs::perms::others_write, fs::perms::group_write}) {
    fs::permissions(dir.path(), fs::perms::owner_all | extra);
    testing::internal::CaptureStderr();
    DiskCache a(dir.path().string()), b(dir.path().string());
    EXPECT_EQ(a.get(key), std::nullopt); // the entry is there, but the folder is not trusted
    a.put(DiskCache::fullKey({"other"}), "x");
    EXPECT_EQ(b.get(key), std::nullopt);
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(filesIn(dir.path()).size(), 1u); // put wrote nothing
    EXPECT_NE(DiskCache::folderProblem(dir.path().string(), ::geteuid()).find("may write it"),
              std::string::npos);
    if (extra == fs::perms::others_write) { // the first refusal in this process warns, once
      EXPECT_NE(err.find("not using the kernel cache"), std::string::npos) << err;
      EXPECT_EQ(err.find("not using", err.find("not using") + 1), std::string::npos) << err;
    } else {
      EXPECT_EQ(err, "");
    }
  }
  fs::permissions(dir.path(), fs::perms::owner_all);
  EXPECT_EQ(DiskCache(dir.path().string()).get(key), std::optional<std::string>("planted"));
}

TEST(DiskCacheTest, FolderOfAnotherUserIsRefused) {
  CacheDir dir;
  unsigned me = ::geteuid();
  EXPECT_EQ(DiskCache::folderProblem(dir.path().string(), me), "");
  EXPECT_NE(DiskCache::folderProblem(dir.path().string(), me + 1).find("owned by another user"),
            std::string::npos);
  writeAll(dir.path() / "file", "x");
  EXPECT_NE(DiskCache::folderProblem((dir.path() / "file").string(), me).find("not a directory"),
            std::string::npos);
  if (me != 0)
    GTEST_SKIP() << "chown to another user needs root";
  std::string key = DiskCache::fullKey({"k"});
  DiskCache(dir.path().string()).put(key, "blob");
  ASSERT_EQ(::chown(dir.path().c_str(), 65534, 65534), 0);
  EXPECT_EQ(DiskCache(dir.path().string()).get(key), std::nullopt);
  ASSERT_EQ(::chown(dir.path().c_str(), 0, 0), 0);
  EXPECT_EQ(DiskCache(dir.path().string()).get(key), std::optional<std::string>("blob"));
}

TEST(DiskCacheTest, EntriesAreVerifiedAgainstTheFullKey) {
  CacheDir dir;
  DiskCache cache(dir.path().string());
  std::string a = DiskCache::fullKey({"module A", "k"}), b = DiskCache::fullKey({"module B", "k"});
  EXPECT_NE(a, b);
  EXPECT_NE(DiskCache::fullKey({"ab", "c"}), DiskCache::fullKey({"a", "bc"}));
  cache.put(a, "code of A");
  std::string data = readAll(onlyEntry(dir.path()));
  EXPECT_NE(data.find(a), std::string::npos); // the whole key is stored
  // A well-formed entry for A, placed under B's file name (a planted file or
  // a hash collision): its checksum is right, but the full key differs.
  fs::copy_file(onlyEntry(dir.path()),
                dir.path() / (DiskCache::hashKey({b}) + ".bin"));
  EXPECT_EQ(cache.get(b), std::nullopt);
  EXPECT_EQ(cache.get(a), std::optional<std::string>("code of A"));
}
