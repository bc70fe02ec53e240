#include "frontend/StackGuard.h"

#include <cstdint>
#include <pthread.h>

namespace tc {

namespace {
struct StackBounds {
  bool known = false;
  uintptr_t low = 0; // the lowest usable address (the stack grows down)
  size_t reserve = 0;
};

StackBounds queryBounds() {
  StackBounds b;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0)
    return b;
  void *addr = nullptr;
  size_t size = 0;
  if (pthread_attr_getstack(&attr, &addr, &size) == 0 && addr && size > 0) {
    b.known = true;
    b.low = reinterpret_cast<uintptr_t>(addr);
    b.reserve = stackReserve(size);
  }
  pthread_attr_destroy(&attr);
  return b;
}
} // namespace

bool stackNearlyExhausted() {
  thread_local const StackBounds bounds = queryBounds();
  if (!bounds.known)
    return false;
  // The real frame, not a local's address (ASan may move locals to a heap "fake stack").
  auto here = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  return here < bounds.low + bounds.reserve;
}

} // namespace tc
