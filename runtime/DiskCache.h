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
//===----------------------------------------------------------------------===//
#pragma once

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

  /// A 128-bit hash (32 lower-case hex digits) of the parts, each
  /// length-prefixed so that {"ab","c"} and {"a","bc"} differ.
  static std::string hashKey(const std::vector<std::string> &parts);

private:
  std::string pathFor(const std::string &key) const;

  std::string dir_;
};

} // namespace tc
