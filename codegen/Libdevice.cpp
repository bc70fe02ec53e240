// The libdevice bitcode is assembled into .rodata between two hidden symbols;
// codegen/CMakeLists.txt defines TC_LIBDEVICE_PATH when the CUDA toolkit has
// the file and rebuilds this file when the bitcode changes (OBJECT_DEPENDS).
// Without it the library embeds nothing and libdeviceMissing() says why.
#include "codegen/Libdevice.h"

#include <cstdint>
#include <cstdio>

#ifdef TC_LIBDEVICE_PATH
// clang-format off
asm(".pushsection .rodata.tc_libdevice,\"a\",@progbits\n"
    ".balign 16\n"
    ".globl tc_libdevice_begin\n"
    ".hidden tc_libdevice_begin\n"
    "tc_libdevice_begin:\n"
    ".incbin \"" TC_LIBDEVICE_PATH "\"\n"
    ".globl tc_libdevice_end\n"
    ".hidden tc_libdevice_end\n"
    "tc_libdevice_end:\n"
    ".popsection\n");
// clang-format on

extern "C" {
__attribute__((visibility("hidden"))) extern const char tc_libdevice_begin[];
__attribute__((visibility("hidden"))) extern const char tc_libdevice_end[];
}
#endif

namespace tc::codegen {

std::string_view libdeviceBitcode() {
#ifdef TC_LIBDEVICE_PATH
  return {tc_libdevice_begin, static_cast<size_t>(tc_libdevice_end - tc_libdevice_begin)};
#else
  return {};
#endif
}

std::string libdeviceMissing() {
#ifdef TC_LIBDEVICE_PATH
  return "";
#else
  return "this build has no libdevice (libdevice.10.bc from the CUDA toolkit, which holds the GPU "
         "math functions): it was not found at " TC_LIBDEVICE_LOOKED_AT
         " when the build was configured; install the CUDA toolkit, or configure with "
         "-DTC_CUDA_HOME=DIR or -DTC_LIBDEVICE=FILE, and rebuild";
#endif
}

std::string libdeviceHash() {
  static const std::string hash = [] {
    uint64_t h = 0xcbf29ce484222325ull; // FNV-1a, 64-bit
    for (char c : libdeviceBitcode()) {
      h ^= static_cast<unsigned char>(c);
      h *= 0x100000001b3ull;
    }
    char text[17];
    std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(h));
    return std::string(text);
  }();
  return hash;
}

} // namespace tc::codegen
