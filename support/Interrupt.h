//===- Interrupt.h - Ctrl-C as a request, not a kill ---------------------===//
//
// A tool that runs kernels on the interpreter installs the handler: the first
// SIGINT only sets a flag (and restores the default action, so a second Ctrl-C
// kills at once); the interpreter polls the flag and stops every running
// program with a report of where it was. Library callers that install nothing
// never see the flag set.
//
//===----------------------------------------------------------------------===//
#pragma once

namespace tc {

/// Makes the next SIGINT set interruptRequested() instead of ending the process.
void installInterruptHandler();
/// True once a SIGINT arrived after installInterruptHandler().
bool interruptRequested();

} // namespace tc
