//===- FileIO.h - Reading and writing user files safely -----------------===//
//
// Every file a tool reads (sources, #include files, suite and report JSON,
// .npy arguments, expectations, campaign files) goes through readFileCapped:
// only regular files are read (a directory, FIFO, socket or device such as
// /dev/zero is refused with a message instead of blocking or reading forever),
// and never more than a documented number of bytes (docs/limits.md).
//
// Every file a tool writes goes through writeFileAtomic: a regular file is
// written to a temporary beside it and renamed over the target only when the
// whole text was written (a failed run leaves the old file as it was); write
// errors (a full disk, /dev/full) are reported. Whether an existing file may
// be replaced is each tool's decision (checkOutputPath helps).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tc {

/// The read limits of docs/limits.md.
inline constexpr uint64_t kMaxSourceFileBytes = uint64_t(4) << 20; // .tc, .tir, #include
inline constexpr uint64_t kMaxJsonFileBytes = uint64_t(256) << 20; // suites, reports, journals
/// One buffer (an argument, a JSON case's input or output), in bytes.
inline constexpr uint64_t kMaxBufferBytes = uint64_t(4) << 30;
/// All buffers of one launch together (of all variants, when a tool keeps every
/// variant's buffers to compare them).
inline constexpr uint64_t kMaxLaunchBufferBytes = uint64_t(16) << 30;
/// A .npy file: one buffer plus its header.
inline constexpr uint64_t kMaxNpyFileBytes = kMaxBufferBytes + (uint64_t(1) << 20);

/// Reads the regular file `path` (at most `maxBytes` bytes) into `text`. On
/// failure returns false with `error` = "'PATH' is a directory" (or "is not a
/// regular file", "does not exist", "is larger than the limit of N bytes", ...).
bool readFileCapped(const std::string &path, uint64_t maxBytes, std::string &text,
                    std::string &error);

/// Why `path` cannot be read as a regular file ("" if it can be opened): for
/// messages of callers that check before reading.
std::string regularFileProblem(const std::string &path);

/// Writes `text` to `path`. A regular file (or a new one) is written to a
/// temporary in the same directory and renamed over `path` on success; a
/// character device (/dev/null, /dev/stdout on a terminal) is written
/// directly; a FIFO is written only when a reader is already there (never
/// blocks); a directory is refused. Every write error is reported.
bool writeFileAtomic(const std::string &path, const std::string &text, std::string &error);

/// Whether `a` and `b` name the same file: the same inode when both exist,
/// else the same absolute, normalised path.
bool sameFile(const std::string &a, const std::string &b);

/// The checks before writing output `path`: not a directory, its directory
/// exists, not one of `inputs`, and (unless `replaceExisting`) not an existing
/// file. Returns "" or the reason ("refusing to overwrite the input file ...").
std::string checkOutputPath(const std::string &path, const std::vector<std::string> &inputs,
                            bool replaceExisting, const std::string &forceHint = "--force");

} // namespace tc
