#include "support/Interrupt.h"

#include <atomic>
#include <csignal>

namespace tc {

namespace {

// Lock-free, so the handler may store to it (async-signal-safe) while the
// interpreter's threads read it.
std::atomic<int> gInterrupted{0};
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void onInterrupt(int) {
  gInterrupted.store(1, std::memory_order_relaxed);
  std::signal(SIGINT, SIG_DFL); // a second Ctrl-C ends the process
}

} // namespace

void installInterruptHandler() {
  std::signal(SIGINT, onInterrupt);
}

bool interruptRequested() {
  return gInterrupted.load(std::memory_order_relaxed) != 0;
}

} // namespace tc
