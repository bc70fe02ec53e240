//===- DiskCache.cpp - A content-addressed store for compiled kernels -----===//
//
// Entry file layout:
//   "triton-c-cache v1 <key bytes> <blob bytes> <xxh3-64 of blob, hex>\n"
//   <key><blob>
//
//===----------------------------------------------------------------------===//

#include "runtime/DiskCache.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/xxhash.h>

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace tc {
namespace {

namespace fs = std::filesystem;

constexpr const char *kMagic = "triton-c-cache";
constexpr const char *kVersion = "v1";
constexpr size_t kMaxHeaderBytes = 256;
constexpr size_t kHashHexDigits = 32;

/// The value of environment variable `name`, or "" when unset.
std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

/// The checksum stored in the header, as 16 hex digits.
std::string checksum(const std::string &blob) {
  return llvm::utohexstr(llvm::xxh3_64bits(blob), /*LowerCase=*/true, 16);
}

/// The header line (with its newline) for an entry.
std::string headerFor(const std::string &key, const std::string &blob) {
  std::ostringstream h;
  h << kMagic << ' ' << kVersion << ' ' << key.size() << ' ' << blob.size() << ' ' << checksum(blob)
    << '\n';
  return h.str();
}

/// Whether `s` looks like a hashKey() result (32 lower-case hex digits).
bool isHashKey(const std::string &s) {
  if (s.size() != kHashHexDigits)
    return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

/// The whole file at `path`, or nullopt when it cannot be read.
std::optional<std::string> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return std::nullopt;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad())
    return std::nullopt;
  return data;
}

/// The blob of entry file `data` when it is complete and stored for `key`.
std::optional<std::string> parseEntry(const std::string &data, const std::string &key) {
  size_t eol = data.find('\n');
  if (eol == std::string::npos || eol > kMaxHeaderBytes)
    return std::nullopt;
  std::istringstream h(data.substr(0, eol));
  std::string magic, version, sum;
  size_t keyBytes = 0, blobBytes = 0;
  if (!(h >> magic >> version >> keyBytes >> blobBytes >> sum) || magic != kMagic ||
      version != kVersion)
    return std::nullopt;
  size_t body = eol + 1;
  if (keyBytes != key.size() || data.size() - body != keyBytes + blobBytes ||
      data.compare(body, keyBytes, key) != 0)
    return std::nullopt;
  std::string blob = data.substr(body + keyBytes);
  if (checksum(blob) != sum)
    return std::nullopt;
  return blob;
}

/// A file name in the cache directory no other writer uses.
std::string tempName(const std::string &stem) {
  static std::atomic<unsigned long> counter{0};
  return "." + stem + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".tmp";
}

/// Writes `parts` to `path`; false on any error.
bool writeFile(const fs::path &path, const std::vector<const std::string *> &parts) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  for (const std::string *p : parts)
    out.write(p->data(), static_cast<std::streamsize>(p->size()));
  out.close();
  return !out.fail();
}

} // namespace

/// $XDG_CACHE_HOME/triton-c (when absolute, as the XDG spec asks), else
/// $HOME/.cache/triton-c, else "" (caching disabled).
std::string defaultCacheDir() {
  std::string xdg = env("XDG_CACHE_HOME");
  if (!xdg.empty() && xdg.front() == '/')
    return (fs::path(xdg) / "triton-c").string();
  std::string home = env("HOME");
  if (!home.empty())
    return (fs::path(home) / ".cache" / "triton-c").string();
  return "";
}

DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {}

std::string DiskCache::fullKey(const std::vector<std::string> &parts) {
  std::string key = "triton-c-key";
  for (const std::string &p : parts)
    key += "\n" + std::to_string(p.size()) + ":" + p;
  return key;
}

std::string DiskCache::folderProblem(const std::string &dir, unsigned uid) {
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0)
    return "it cannot be examined";
  if (S_ISLNK(st.st_mode) && ::stat(dir.c_str(), &st) != 0) // a link to our own folder is fine
    return "it is a dangling symbolic link";
  if (!S_ISDIR(st.st_mode))
    return "it is not a directory";
  if (st.st_uid != uid)
    return "it is owned by another user (uid " + std::to_string(st.st_uid) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return std::string("group or others may write it (mode ") + mode + ")";
  }
  return "";
}

bool DiskCache::usable(bool create) const {
  int state = state_.load();
  if (state != 0)
    return state == 1;
  std::error_code ec;
  if (!fs::exists(dir_, ec)) {
    if (!create)
      return false; // nothing cached yet; checked again on the first put
    fs::path parent = fs::path(dir_).parent_path();
    if (!parent.empty())
      fs::create_directories(parent, ec);
    if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST)
      return false; // cannot create it: a no-op, as any I/O error
  }
  std::string problem = folderProblem(dir_, static_cast<unsigned>(::geteuid()));
  state_.store(problem.empty() ? 1 : 2);
  if (!problem.empty()) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true))
      std::cerr << "triton-c: warning: not using the kernel cache '" << dir_ << "': " << problem
                << " (compiling without it)\n";
  }
  return problem.empty();
}

/// SHA-256 of the length-prefixed parts, truncated to 128 bits.
std::string DiskCache::hashKey(const std::vector<std::string> &parts) {
  llvm::SHA256 sha;
  for (const std::string &p : parts) {
    uint8_t len[8];
    uint64_t n = p.size();
    for (uint8_t &b : len) {
      b = static_cast<uint8_t>(n & 0xff);
      n >>= 8;
    }
    sha.update(llvm::ArrayRef<uint8_t>(len));
    sha.update(llvm::StringRef(p));
  }
  std::array<uint8_t, 32> digest = sha.final();
  return llvm::toHex(llvm::ArrayRef<uint8_t>(digest.data(), kHashHexDigits / 2),
                     /*LowerCase=*/true);
}

/// <dir>/<hash>.bin; a key that is already a hash names the file itself.
std::string DiskCache::pathFor(const std::string &key) const {
  std::string stem = isHashKey(key) ? key : hashKey({key});
  return (fs::path(dir_) / (stem + ".bin")).string();
}

/// Reads and verifies the entry for `key`; any problem is a miss.
std::optional<std::string> DiskCache::get(const std::string &key) const {
  if (!enabled())
    return std::nullopt;
  try {
    if (!usable(/*create=*/false))
      return std::nullopt;
    std::optional<std::string> data = readFile(pathFor(key));
    if (!data)
      return std::nullopt;
    return parseEntry(*data, key);
  } catch (const std::exception &) {
    return std::nullopt;
  }
}

/// Writes a temporary file next to the entry and renames it into place.
void DiskCache::put(const std::string &key, const std::string &blob) const {
  if (!enabled())
    return;
  try {
    std::error_code ec;
    if (!usable(/*create=*/true))
      return;
    fs::path target = pathFor(key);
    fs::path temp = fs::path(dir_) / tempName(target.stem().string());
    std::string header = headerFor(key, blob);
    bool written = writeFile(temp, {&header, &key, &blob});
    if (written)
      fs::rename(temp, target, ec);
    if (!written || ec)
      fs::remove(temp, ec);
  } catch (const std::exception &) {
    // A cache never makes a run fail.
  }
}

} // namespace tc
