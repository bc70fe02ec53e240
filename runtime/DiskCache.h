//===- DiskCache.h - A content-addressed store for compiled kernels -------===//
//
// One file per entry, <dir>/<hash>.bin, holding a header line (a magic string,
// the key's and the blob's lengths and the blob's checksum), then the key and
// the blob. get() returns an entry only when all of these check out, so a
// truncated or corrupted file reads as a miss. put() writes a temporary file
// in the same directory and rename()s it into place, so concurrent processes
// never see a half-written entry. A cache never makes a run fail: any I/O
// error is a miss (get) or a no-op (put).
//
// Whoever can write the folder chooses the code a GPU runs, so the folder is
// created with mode 0700 and used only while it is a directory owned by this
// user that neither group nor others may write; otherwise the cache is off
// for this object, with one warning per process on stderr (never a failure).
// Every entry holds its full key, compared byte for byte on get(): callers
// should pass the full key (fullKey()), not only its hash, so that a file
// under the right name for another key is never used.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <vector>

namespace tc {

/// $XDG_CACHE_HOME/triton-c, else $HOME/.cache/triton-c, else "" (no cache).
std::string defaultCacheDir();

class DiskCache {
public:
  /// A cache in `dir` (created on the first put); "" disables it.
  explicit DiskCache(std::string dir);

  /// Whether a directory was given.
  bool enabled() const { return !dir_.empty(); }

  /// The blob stored under `key`, or nullopt (missing, unreadable, corrupt).
  std::optional<std::string> get(const std::string &key) const;

  /// Stores `blob` under `key` atomically; errors are ignored.
  void put(const std::string &key, const std::string &blob) const;

  /// The parts as one key, each length-prefixed (what get() and put() should
  /// be given: the file name is its hash, the file holds it whole).
  static std::string fullKey(const std::vector<std::string> &parts);

  /// Why `dir` must not be used as a cache by user `uid` ("" when it may):
  /// not a directory, owned by another user, writable by group or others.
  static std::string folderProblem(const std::string &dir, unsigned uid);

  /// A 128-bit hash (32 lower-case hex digits) of the parts, each
  /// length-prefixed so that {"ab","c"} and {"a","bc"} differ.
  static std::string hashKey(const std::vector<std::string> &parts);

private:
  std::string pathFor(const std::string &key) const;
  /// Whether the folder may be used (checked once; with `create`, a missing
  /// folder is made, mode 0700).
  bool usable(bool create) const;

  std::string dir_;
  mutable std::atomic<int> state_{0}; // 0 unchecked, 1 usable, 2 refused
};

} // namespace tc
