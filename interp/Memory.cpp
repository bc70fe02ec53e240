#include "interp/Memory.h"

#include "runtime/Launch.h"

#include <algorithm>
#include <charconv>
#include <numeric>

namespace tc::interp {

std::string hexAddr(uint64_t a) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), a, 16);
  return "0x" + std::string(buf, r.ptr);
}

std::string Region::label() const {
  std::string s = "'" + (names.empty() ? std::string("?") : names[0]) + "'";
  for (size_t i = 1; i < names.size(); ++i)
    s += (i == 1 ? " (also '" : ", '") + names[i] + "'";
  return names.size() > 1 ? s + ")" : s;
}

uint64_t lcmOrZero(uint64_t a, uint64_t b) {
  uint64_t m = 0;
  return __builtin_mul_overflow(a / std::gcd(a, b), b, &m) ? 0 : m;
}

bool Memory::sameMemory(const HostArray &placed, const HostArray &array) {
  return &placed == &array ||
         (array.external && placed.bytes() == array.bytes() &&
          placed.byteCount() == array.byteCount() && placed.readOnly == array.readOnly);
}

uint64_t Memory::place(const std::string &param, HostArray *array, size_t index, uint64_t align) {
  for (auto &r : regions_) {
    if (sameMemory(*r->array, *array)) {
      r->names.push_back(param);
      r->params |= paramBit(index);
      return r->base;
    }
  }
  auto r = std::make_unique<Region>();
  r->base = next_;
  // A claimed alignment past kAlign: the next multiple of it, where the
  // region and its guard gap end below kAddressLimit.
  if (uint64_t m = align > kAlign ? lcmOrZero(kAlign, align) : 0; m != 0) {
    uint64_t up = 0, end = 0;
    if (!__builtin_add_overflow(next_, m - 1, &up) &&
        !__builtin_add_overflow(up / m * m, array->byteCount() + kGuard, &end) &&
        end <= kAddressLimit)
      r->base = up / m * m;
  }
  r->size = array->byteCount();
  r->names.push_back(param);
  r->params = paramBit(index);
  r->array = array;
  r->host = array->bytes();
  r->readOnly = array->readOnly;
  next_ = (r->base + r->size + kGuard + kAlign - 1) / kAlign * kAlign;
  regions_.push_back(std::move(r));
  return regions_.back()->base;
}

const Region *Memory::find(uint64_t addr, uint64_t size) const {
  auto it =
      std::upper_bound(regions_.begin(), regions_.end(), addr,
                       [](uint64_t a, const std::unique_ptr<Region> &r) { return a < r->base; });
  if (it == regions_.begin())
    return nullptr;
  const Region *r = (it - 1)->get();
  uint64_t off = addr - r->base;
  return r->size >= size && off <= r->size - size ? r : nullptr;
}

namespace {

/// "'a' [0x10000, 0x10010)".
std::string regionText(const Region &r) {
  return r.label() + " [" + hexAddr(r.base) + ", " + hexAddr(r.base + r.size) + ")";
}

/// "load of 4 bytes at 0x10ff0 (lane [17])".
std::string accessText(std::string_view access, uint64_t addr, uint64_t size,
                       const std::string &lane) {
  std::string s = std::string(access) + " of " + std::to_string(size) + " byte" +
                  (size == 1 ? "" : "s") + " at " + hexAddr(addr);
  return lane.empty() ? s : s + " (" + lane + ")";
}

} // namespace

std::string Memory::describeForeign(std::string_view access, uint64_t addr, uint64_t size,
                                    const std::string &lane, const Region &in,
                                    uint64_t from) const {
  std::vector<const Region *> sources;
  for (const auto &r : regions_)
    if (r->params & from)
      sources.push_back(r.get());
  std::string s = accessText(access, addr, size, lane) + " is inside " + regionText(in) +
                  ", but the pointer comes from ";
  for (size_t i = 0; i < sources.size(); ++i)
    s += (i == 0 ? "" : i + 1 == sources.size() ? " or " : ", ") + regionText(*sources[i]);
  return sources.empty() ? s + "no buffer" : s;
}

std::string Memory::describeOutOfBounds(std::string_view access, uint64_t addr, uint64_t size,
                                        const std::string &lane) const {
  std::string s = accessText(access, addr, size, lane);
  // An access that starts inside a region but runs past its end.
  for (const auto &r : regions_) {
    if (addr >= r->base && addr - r->base < r->size)
      return s + " runs past the end of " + regionText(*r);
  }
  s += " is outside every buffer";
  const Region *best = nullptr;
  uint64_t bestDist = 0;
  for (const auto &r : regions_) {
    uint64_t end = r->base + r->size;
    uint64_t dist = addr < r->base ? r->base - addr : addr - end;
    if (!best || dist < bestDist) {
      best = r.get();
      bestDist = dist;
    }
  }
  if (!best)
    return s + " (the launch has no buffers)";
  s += "; nearest: " + regionText(*best) + ", " + std::to_string(bestDist) + " byte" +
       (bestDist == 1 ? "" : "s");
  return s + (addr < best->base ? " before its start" : " past its end");
}

} // namespace tc::interp
