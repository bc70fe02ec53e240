//===- Memory.h - The simulated 64-bit address space of a launch ------===//
//
// Every buffer argument is a region of a simulated address space; kernels
// see only 64-bit addresses. A region's bytes are its host array's own bytes
// (no copy in or out): stores land in the caller's array as they happen, so
// after a trap the array holds every store made before it. Layout (deterministic): regions are
// placed in the order they are added (parameter order), the first at 0x10000,
// each next one at the end of the previous plus a guard gap of at least
// 4 KiB, rounded up to a multiple of 256 bytes (the alignment cudaMalloc
// guarantees), or of a larger alignment the kernel claims for the buffer
// (`__aligned(N)`, `__multipleof(N)` on a pointer). A host array bound to
// several parameters gets one region (the same address, as when a C caller
// passes one pointer twice). Nothing lives outside the regions: an access
// that is not wholly inside one region is out of bounds, and so is one inside
// a region other than those of the parameters its pointer was computed from
// (Region::params, Instr::from).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tc {
struct HostArray;
}

namespace tc::interp {

struct Region {
  uint64_t base = 0, size = 0;    // [base, base + size)
  std::vector<std::string> names; // the parameters bound to it
  HostArray *array = nullptr;     // the host array whose bytes these are
  uint8_t *host = nullptr;        // the bytes of [base, base + size)
  bool readOnly = false;          // stores trap (HostArray::readOnly)
  uint64_t params = 0;            // paramBit(i) of each parameter i bound to it

  /// "'a'" or "'a' (also 'b')".
  std::string label() const;
};

/// The bit of kernel parameter `i` in Region::params and Instr::from:
/// parameters 63 and up share the last bit (a kernel that many pointers is
/// checked less precisely, never spuriously).
inline uint64_t paramBit(size_t i) {
  return uint64_t(1) << (i < 63 ? i : 63);
}

class Memory {
public:
  static constexpr uint64_t kFirstBase = 0x10000;
  static constexpr uint64_t kAlign = 256;
  static constexpr uint64_t kGuard = 4096;
  /// Claimed alignments are kept where the region ends below this (the 48
  /// bits of a GPU's virtual addresses).
  static constexpr uint64_t kAddressLimit = uint64_t(1) << 48;

  /// Places `array` (which must outlive the Memory and keep its size) for
  /// parameter `param` (number `index` of the kernel), or names `param` on the
  /// region already holding that array (sameMemory); returns the region's base
  /// address (the pointer argument is base + HostArray::origin). A new region's
  /// base is a multiple of `align` as well as of kAlign (the claims,
  /// `__aligned(N)` or `__multipleof(N)`, of the parameters bound to the
  /// array, as a GPU allocator gives such buffers; 0: none), where the region
  /// still ends below kAddressLimit.
  uint64_t place(const std::string &param, HostArray *array, size_t index, uint64_t align = 0);
  /// Whether `array` is one memory with `placed` (which place() put in a
  /// region): the same array, or a view of the same host bytes with the same
  /// read-only flag (views of one storage).
  static bool sameMemory(const HostArray &placed, const HostArray &array);

  /// The region holding all of [addr, addr + size), or nullptr.
  const Region *find(uint64_t addr, uint64_t size) const;
  const std::vector<std::unique_ptr<Region>> &regions() const { return regions_; }

  /// Why an access of `size` bytes at `addr` is out of bounds, e.g.
  /// "load of 4 bytes at 0x10ff0 (lane [17]) is outside every buffer; nearest:
  /// 'a' [0x10000, 0x10fa0), 80 bytes past its end"; `lane` (tc::laneText) is
  /// left out when empty.
  std::string describeOutOfBounds(std::string_view access, uint64_t addr, uint64_t size,
                                  const std::string &lane) const;
  /// Why an access inside region `in` is out of bounds for a pointer computed
  /// from the parameters `from` (paramBit()s, none of them bound to `in`), e.g.
  /// "load of 4 bytes at 0x11100 (lane [0]) is inside 'Y' [0x11100, 0x11110),
  /// but the pointer comes from 'X' [0x10000, 0x10010)".
  std::string describeForeign(std::string_view access, uint64_t addr, uint64_t size,
                              const std::string &lane, const Region &in, uint64_t from) const;

private:
  std::vector<std::unique_ptr<Region>> regions_; // ascending base
  uint64_t next_ = kFirstBase;
};

/// "0x10ff0".
std::string hexAddr(uint64_t a);

/// The least common multiple of `a` and `b` (both > 0), 0 when it does not
/// fit in 64 bits.
uint64_t lcmOrZero(uint64_t a, uint64_t b);

} // namespace tc::interp
