//===- InterpreterBackend.h - The reference interpreter as a Backend ----===//
//
// The CPU reference interpreter behind the host API's Backend interface
// (runtime/Launch.h).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Launch.h"

#include <memory>

namespace tc {

/// The CPU reference interpreter.
std::unique_ptr<Backend> createInterpreterBackend();

} // namespace tc
