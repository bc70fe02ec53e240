#include "support/FileIO.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace tc {

namespace {

std::string quoted(const std::string &path) {
  return "'" + path + "'";
}

std::string kindProblem(const std::string &path, mode_t mode) {
  if (S_ISDIR(mode))
    return quoted(path) + " is a directory";
  if (S_ISFIFO(mode))
    return quoted(path) + " is a FIFO, not a regular file";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return quoted(path) + " is a device, not a regular file";
  if (S_ISSOCK(mode))
    return quoted(path) + " is a socket, not a regular file";
  if (!S_ISREG(mode))
    return quoted(path) + " is not a regular file";
  return "";
}

std::string errnoProblem(const std::string &path, int err) {
  return "cannot open " + quoted(path) + " (" + std::strerror(err) + ")";
}

// Writes all of `text` to `fd`; false with errno set on failure.
bool writeAll(int fd, const std::string &text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (n == 0)
        errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

} // namespace

std::string regularFileProblem(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return errnoProblem(path, errno);
  return kindProblem(path, st.st_mode);
}

bool readFileCapped(const std::string &path, uint64_t maxBytes, std::string &text,
                    std::string &error) {
  // stat first: opening a FIFO for reading would block until a writer comes.
  if (std::string p = regularFileProblem(path); !p.empty()) {
    error = p;
    return false;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = errnoProblem(path, errno);
    return false;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) { // replaced since the stat
    error = kindProblem(path, st.st_mode);
    ::close(fd);
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > maxBytes) {
    error = quoted(path) + " is larger than the limit of " + std::to_string(maxBytes) + " bytes (" +
            std::to_string(st.st_size) + " bytes)";
    ::close(fd);
    return false;
  }
  text.clear();
  text.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      error = "cannot read " + quoted(path) + " (" + std::strerror(errno) + ")";
      ::close(fd);
      return false;
    }
    if (n == 0)
      break;
    if (text.size() + static_cast<uint64_t>(n) > maxBytes) { // it grew while we read
      error = quoted(path) + " is larger than the limit of " + std::to_string(maxBytes) + " bytes";
      ::close(fd);
      return false;
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return true;
}

bool writeFileAtomic(const std::string &path, const std::string &text, std::string &error) {
  struct stat st;
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    error = "cannot write " + quoted(path) + ": it is a directory";
    return false;
  }
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or a FIFO: write in place. O_NONBLOCK makes opening a FIFO
    // without a reader fail (ENXIO) instead of waiting for one.
    int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
      error = "cannot write " + quoted(path) + " (" +
              (errno == ENXIO ? std::string("a FIFO with no reader") : std::strerror(errno)) + ")";
      return false;
    }
    int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0)
      ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    bool ok = writeAll(fd, text);
    int err = errno;
    if (::close(fd) != 0 && ok) {
      ok = false;
      err = errno;
    }
    if (!ok)
      error = "cannot write " + quoted(path) + " (" + std::strerror(err) + ")";
    return ok;
  }
  fs::path target(path);
  fs::path dir = target.parent_path();
  std::string tmpl = (dir.empty() ? fs::path(".") : dir).string() + "/." +
                     target.filename().string() + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    error = "cannot write " + quoted(path) + " (" + std::strerror(errno) + ")";
    return false;
  }
  // mkstemp makes the file 0600; give it the mode a new file would get (or the old one's).
  mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, exists ? (st.st_mode & 07777) : (0666 & ~mask));
  bool ok = writeAll(fd, text);
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(tmpl.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmpl.c_str());
    error = "cannot write " + quoted(path) + " (" + std::strerror(err) + ")";
  }
  return ok;
}

bool sameFile(const std::string &a, const std::string &b) {
  struct stat sa, sb;
  bool ea = ::stat(a.c_str(), &sa) == 0, eb = ::stat(b.c_str(), &sb) == 0;
  if (ea && eb)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (ea != eb)
    return false;
  std::error_code ec;
  fs::path pa = fs::weakly_canonical(fs::absolute(a, ec).lexically_normal(), ec);
  fs::path pb = fs::weakly_canonical(fs::absolute(b, ec).lexically_normal(), ec);
  return pa == pb;
}

std::string checkOutputPath(const std::string &path, const std::vector<std::string> &inputs,
                            bool replaceExisting, const std::string &forceHint) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    return quoted(path) + " is a directory";
  fs::path parent = fs::path(path).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec))
    return "the directory '" + parent.string() + "' does not exist";
  for (const std::string &in : inputs)
    if (sameFile(in, path))
      return "refusing to overwrite the input file " + quoted(path);
  struct stat st;
  if (!replaceExisting && ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode))
    return "refusing to overwrite the existing file " + quoted(path) +
           (forceHint.empty() ? "" : "; use " + forceHint + " to overwrite it");
  return "";
}

} // namespace tc
