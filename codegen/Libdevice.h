//===- Libdevice.h - NVIDIA's libdevice bitcode, embedded at build time ---===//
//
// The GPU math functions (__nv_expf, __nv_sin, ...) that codegen/ScalarEmit
// calls live in libdevice.10.bc from the CUDA toolkit. The build embeds the
// file into the library (codegen/Libdevice.cpp, `.incbin` of TC_LIBDEVICE_PATH)
// so that compiling a kernel needs no CUDA installation at run time. The file
// is optional at build time: without it, kernels that call no math function
// still compile to PTX and the others are refused (libdeviceMissing()). No LLVM
// types here: callers parse the bytes with llvm::parseBitcodeFile.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <string>
#include <string_view>

namespace tc::codegen {

/// The bytes of libdevice.10.bc as embedded at build time (LLVM bitcode);
/// empty when the build found no CUDA toolkit.
std::string_view libdeviceBitcode();

/// Empty when libdevice is embedded; otherwise why it is not and how to get
/// it (a sentence for a diagnostic).
std::string libdeviceMissing();

/// A short hex digest of libdeviceBitcode() (64-bit FNV-1a, 16 hex digits),
/// computed once; part of the compiler's cache key.
std::string libdeviceHash();

} // namespace tc::codegen
