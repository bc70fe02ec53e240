//===- UndoJournal.h - Put the caller's memory back after a trap -------===//
//
// The interpreter runs on the caller's memory (HostArray::external: NumPy
// arrays and tensors from Python, zero-copy). So that a trap still leaves
// every array exactly as it was, each 4 KiB page of caller memory is copied
// the first time a store or atomic is about to write it, and undo() writes
// the copies back. Pages are keyed by host address, not by buffer, so arrays
// that overlap (two views of one storage, one buffer passed as float* and
// int*) share their copies and the first copy of a page always holds the
// bytes from before the launch. Copies never reach outside the arrays'
// bytes: memory next to an array is never read or written. Thread-safe: the
// thread that claims a page copies it while writers of that page wait.
//
// Cost (issue 32): the copies of one covered range live in one area as
// large as the range, page i of the range at offset i * kPage, so that a
// copy is a memcpy with no allocation. Areas are taken from and given back
// to a process-wide cache (at most kCachedBytes), so that launch after
// launch the copies land in memory the process already touched: fresh
// memory costs a page fault and the kernel's zeroing per 4 KiB page, which
// was most of what the logged race check cost on a transpose (64 MiB of
// copies). An area is reserved, not touched: only the pages copied into
// become resident.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tc::interp {

class UndoJournal {
public:
  static constexpr uintptr_t kPage = 4096;
  /// The most bytes of areas kept for later journals (larger areas are
  /// given back to the system at once).
  static constexpr size_t kCachedBytes = size_t(256) << 20;

  UndoJournal() = default;
  UndoJournal(const UndoJournal &) = delete;
  UndoJournal &operator=(const UndoJournal &) = delete;
  ~UndoJournal();

  /// Adds host bytes [p, p + n) that stores may write (before any write).
  void cover(uint8_t *p, size_t n);
  /// Merges the covered ranges (once, after every cover() and before any write).
  void build();
  /// Copies the pages holding [p, p + n) that are not yet copied. Bytes
  /// outside every covered range are ignored.
  void beforeWrite(uint8_t *p, size_t n) {
    uintptr_t a = reinterpret_cast<uintptr_t>(p);
    for (Span &s : spans_)
      if (a >= s.begin && a < s.end) {
        uintptr_t last = std::min(a + n, s.end) - 1;
        for (uintptr_t page = a / kPage; page <= last / kPage; ++page)
          if (s.state[page - s.firstPage].load(std::memory_order_acquire) != kSaved)
            save(s, page);
        return;
      }
  }
  /// Writes every copied page back (no store may be running).
  void undo();
  /// Pages copied so far.
  size_t pagesSaved() const;
  /// Whether a page holding a byte of [p, p + n) was copied (is being written).
  bool touched(const uint8_t *p, size_t n) const;
  /// Bytes of areas the process-wide cache holds now (tests).
  static size_t cachedBytes();

private:
  static constexpr uint8_t kFree = 0, kSaving = 1, kSaved = 2;
  struct Span {
    uintptr_t begin = 0, end = 0, firstPage = 0;
    size_t pages = 0;
    std::unique_ptr<std::atomic<uint8_t>[]> state;
    // The copies: at least pages * kPage bytes (areaBytes), taken by the first
    // save(); or, when no area can be had, one allocation per page (fallback).
    uint8_t *area = nullptr;
    size_t areaBytes = 0;
    std::unique_ptr<std::unique_ptr<uint8_t[]>[]> fallback;
    std::atomic<uint8_t> areaState{kNoArea}; // kNoArea, kTaking, then kReady
    Span() = default;
    Span(Span &&o) noexcept
        : begin(o.begin), end(o.end), firstPage(o.firstPage), pages(o.pages),
          state(std::move(o.state)), area(o.area), areaBytes(o.areaBytes),
          fallback(std::move(o.fallback)), areaState(o.areaState.load()) {
      o.area = nullptr;
    }
    /// Where the copy of saved page `page` (its covered bytes) is.
    uint8_t *copyOf(uintptr_t page) const;
  };
  static constexpr uint8_t kNoArea = 0, kTaking = 1, kReady = 2;
  void save(Span &s, uintptr_t page);
  /// Takes `s`'s area (or makes its fallback table) once; waits while
  /// another thread does.
  void takeArea(Span &s);
  std::vector<Span> spans_;                              // disjoint, after build()
  std::vector<std::pair<uintptr_t, uintptr_t>> pending_; // cover()ed, merged by build()
};

} // namespace tc::interp
