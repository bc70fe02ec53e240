//===- StackGuard.h - How much of this thread's stack is left -----------===//
//
// The parser, sema and lowering recurse along the syntax tree. Their depth
// limits (ParserImpl.h, Sema.h) are sized for an 8 MiB stack; a compile on a
// thread with a smaller stack (a Python thread, a 256 KiB pthread) would run
// out before them. Each recursive step therefore also asks whether the stack
// the thread actually has is nearly used up, and stops with "nesting too
// deep" when it is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>

namespace tc {

/// True when less than a reserve (a quarter of the current thread's stack,
/// at most 128 KiB) is left below the caller's frame. The bounds are queried
/// once per thread (pthread_getattr_np); where they cannot be, always false.
bool stackNearlyExhausted();

/// The reserve stackNearlyExhausted() keeps for a stack of `size` bytes.
inline size_t stackReserve(size_t size) {
  size_t quarter = size / 4, cap = size_t(128) << 10;
  return quarter < cap ? quarter : cap;
}

} // namespace tc
