#include "interp/UndoJournal.h"

#include <algorithm>
#include <cstring>
#include <thread>

namespace tc::interp {

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
    size_t pages = (e - 1) / kPage - s.firstPage + 1;
    s.state = std::make_unique<std::atomic<uint8_t>[]>(pages); // value-initialised: kFree
    s.copies = std::make_unique<std::unique_ptr<uint8_t[]>[]>(pages);
    spans_.push_back(std::move(s));
  }
}

void UndoJournal::save(Span &s, uintptr_t page) {
  std::atomic<uint8_t> &st = s.state[page - s.firstPage];
  uint8_t expected = kFree;
  if (st.compare_exchange_strong(expected, kSaving, std::memory_order_acq_rel)) {
    uintptr_t b = std::max(page * kPage, s.begin), e = std::min((page + 1) * kPage, s.end);
    std::unique_ptr<uint8_t[]> copy(new uint8_t[e - b]); // (not zeroed: overwritten next)
    std::memcpy(copy.get(), reinterpret_cast<const void *>(b), e - b);
    s.copies[page - s.firstPage] = std::move(copy);
    st.store(kSaved, std::memory_order_release);
    return;
  }
  while (st.load(std::memory_order_acquire) != kSaved) // another thread is copying it
    std::this_thread::yield();
}

void UndoJournal::undo() {
  for (Span &s : spans_) {
    size_t pages = (s.end - 1) / kPage - s.firstPage + 1;
    for (size_t i = 0; i < pages; ++i) {
      if (!s.copies[i])
        continue;
      uintptr_t page = s.firstPage + i;
      uintptr_t b = std::max(page * kPage, s.begin), e = std::min((page + 1) * kPage, s.end);
      std::memcpy(reinterpret_cast<void *>(b), s.copies[i].get(), e - b);
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
      if (s.copies[page - s.firstPage])
        return true;
  }
  return false;
}

size_t UndoJournal::pagesSaved() const {
  size_t n = 0;
  for (const Span &s : spans_) {
    size_t pages = (s.end - 1) / kPage - s.firstPage + 1;
    for (size_t i = 0; i < pages; ++i)
      n += s.copies[i] != nullptr;
  }
  return n;
}

} // namespace tc::interp
