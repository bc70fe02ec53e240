#include "interp/UndoJournal.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>
#include <pthread.h>
#include <sys/mman.h>
#include <thread>

namespace tc::interp {

namespace {

/// Copy areas kept from journal to journal (see UndoJournal.h): anonymous
/// mappings, so that their pages stay with the process while cached.
class AreaCache {
public:
  static AreaCache &instance() {
    static std::once_flag once;
    std::call_once(once, [] {
      pthread_atfork(nullptr, nullptr, [] {
        new (&gMutex) std::mutex; // (another thread may have held it at the fork)
      });
    });
    // Never destroyed: a journal may end after static destructors ran (a
    // launch on another thread at exit); areas are freed with the process.
    static AreaCache *cache = new AreaCache;
    return *cache;
  }

  /// An area of at least `bytes` (a multiple of the page size), or nullptr.
  uint8_t *take(size_t bytes, size_t &got) {
    {
      std::lock_guard<std::mutex> lock(gMutex);
      auto best = areas_.end();
      for (auto it = areas_.begin(); it != areas_.end(); ++it)
        if (it->second >= bytes && (best == areas_.end() || it->second < best->second))
          best = it;
      if (best != areas_.end()) {
        uint8_t *p = best->first;
        got = best->second;
        total_ -= got;
        areas_.erase(best);
        return p;
      }
    }
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      return nullptr;
    got = bytes;
    return static_cast<uint8_t *>(p);
  }

  /// Gives `p` (`bytes` long) back: kept while the cache stays within
  /// UndoJournal::kCachedBytes (the oldest areas go first), else unmapped.
  void give(uint8_t *p, size_t bytes) {
    std::vector<std::pair<uint8_t *, size_t>> drop;
    if (bytes > UndoJournal::kCachedBytes) {
      munmap(p, bytes);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(gMutex);
      areas_.emplace_back(p, bytes);
      total_ += bytes;
      while (total_ > UndoJournal::kCachedBytes) {
        drop.push_back(areas_.front());
        total_ -= areas_.front().second;
        areas_.erase(areas_.begin());
      }
    }
    for (auto &[q, n] : drop)
      munmap(q, n);
  }

  size_t total() {
    std::lock_guard<std::mutex> lock(gMutex);
    return total_;
  }

private:
  std::vector<std::pair<uint8_t *, size_t>> areas_; // oldest first
  size_t total_ = 0;
  static inline std::mutex gMutex;
};

} // namespace

UndoJournal::~UndoJournal() {
  for (Span &s : spans_)
    if (s.area)
      AreaCache::instance().give(s.area, s.areaBytes);
}

size_t UndoJournal::cachedBytes() {
  return AreaCache::instance().total();
}

void UndoJournal::cover(uint8_t *p, size_t n) {
  if (n)
    pending_.emplace_back(reinterpret_cast<uintptr_t>(p), reinterpret_cast<uintptr_t>(p) + n);
}

void UndoJournal::build() {
  std::sort(pending_.begin(), pending_.end());
  std::vector<std::pair<uintptr_t, uintptr_t>> merged;
  for (const auto &r : pending_) {
    if (!merged.empty() && r.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, r.second);
    else
      merged.push_back(r);
  }
  pending_.clear();
  for (const auto &[b, e] : merged) {
    Span s;
    s.begin = b;
    s.end = e;
    s.firstPage = b / kPage;
    s.pages = (e - 1) / kPage - s.firstPage + 1;
    s.state = std::make_unique<std::atomic<uint8_t>[]>(s.pages); // value-initialised: kFree
    spans_.push_back(std::move(s));
  }
}

void UndoJournal::takeArea(Span &s) {
  uint8_t expected = kNoArea;
  if (!s.areaState.compare_exchange_strong(expected, kTaking, std::memory_order_acq_rel)) {
    while (s.areaState.load(std::memory_order_acquire) != kReady) // another thread takes it
      std::this_thread::yield();
    return;
  }
  s.area = AreaCache::instance().take(s.pages * kPage, s.areaBytes);
  if (!s.area) // no address space to reserve: a copy per page
    s.fallback = std::make_unique<std::unique_ptr<uint8_t[]>[]>(s.pages);
  s.areaState.store(kReady, std::memory_order_release);
}

uint8_t *UndoJournal::Span::copyOf(uintptr_t page) const {
  uintptr_t b = std::max(page * kPage, begin);
  return area ? area + (b - firstPage * kPage) : fallback[page - firstPage].get();
}

void UndoJournal::save(Span &s, uintptr_t page) {
  std::atomic<uint8_t> &st = s.state[page - s.firstPage];
  uint8_t expected = kFree;
  if (st.compare_exchange_strong(expected, kSaving, std::memory_order_acq_rel)) {
    uintptr_t b = std::max(page * kPage, s.begin), e = std::min((page + 1) * kPage, s.end);
    if (s.areaState.load(std::memory_order_acquire) != kReady)
      takeArea(s);
    if (s.area) {
      std::memcpy(s.area + (b - s.firstPage * kPage), reinterpret_cast<const void *>(b), e - b);
    } else {
      std::unique_ptr<uint8_t[]> copy(new uint8_t[e - b]); // (not zeroed: overwritten next)
      std::memcpy(copy.get(), reinterpret_cast<const void *>(b), e - b);
      s.fallback[page - s.firstPage] = std::move(copy);
    }
    st.store(kSaved, std::memory_order_release);
    return;
  }
  while (st.load(std::memory_order_acquire) != kSaved) // another thread is copying it
    std::this_thread::yield();
}

void UndoJournal::undo() {
  for (Span &s : spans_) {
    for (size_t i = 0; i < s.pages; ++i) {
      if (s.state[i].load(std::memory_order_acquire) != kSaved)
        continue;
      uintptr_t page = s.firstPage + i;
      uintptr_t b = std::max(page * kPage, s.begin), e = std::min((page + 1) * kPage, s.end);
      std::memcpy(reinterpret_cast<void *>(b), s.copyOf(page), e - b);
    }
  }
}

bool UndoJournal::touched(const uint8_t *p, size_t n) const {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  for (const Span &s : spans_) {
    if (n == 0 || a + n <= s.begin || a >= s.end)
      continue;
    uintptr_t b = std::max(a, s.begin), e = std::min(a + n, s.end);
    for (uintptr_t page = b / kPage; page <= (e - 1) / kPage; ++page)
      if (s.state[page - s.firstPage].load(std::memory_order_acquire) == kSaved)
        return true;
  }
  return false;
}

size_t UndoJournal::pagesSaved() const {
  size_t n = 0;
  for (const Span &s : spans_)
    for (size_t i = 0; i < s.pages; ++i)
      n += s.state[i].load(std::memory_order_acquire) == kSaved;
  return n;
}

} // namespace tc::interp
