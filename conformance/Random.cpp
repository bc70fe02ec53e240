#include "conformance/Random.h"

#include "support/Numerics.h"

#include <random>

namespace tc::conf {

namespace {

double unit(uint64_t x) { return static_cast<double>(x >> 11) * 0x1p-53; }

double irwinHall(std::mt19937_64 &gen) {
  uint64_t sum = 0; // 12 values below 2^53: below 2^57, exact
  for (int i = 0; i < 12; ++i)
    sum += gen() >> 11;
  return static_cast<double>(sum) * 0x1p-53 - 6.0;
}

int64_t uniformInt(std::mt19937_64 &gen, int64_t low, int64_t high) {
  uint64_t r = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) + 1; // 0: all 2^64
  if (r == 0)
    return static_cast<int64_t>(gen());
  uint64_t limit = (~uint64_t(0) / r) * r; // largest multiple of r that fits, as a bound
  uint64_t x = gen();
  while (x >= limit)
    x = gen();
  return static_cast<int64_t>(static_cast<uint64_t>(low) + x % r);
}

void store(HostArray &a, int64_t i, double v) {
  if (isFloat(a.dtype))
    a.setBits(i, num::floatBits(a.dtype, v));
  else
    a.setDouble(i, v);
}

} // namespace

void fillRandom(HostArray &array, const RandomSpec &spec) {
  std::mt19937_64 gen(spec.seed);
  int64_t n = array.numElements();
  for (int64_t i = 0; i < n; ++i) {
    switch (spec.dist) {
    case RandomSpec::Dist::Uniform:
      store(array, i, spec.low + (spec.high - spec.low) * unit(gen()));
      break;
    case RandomSpec::Dist::Normal:
      store(array, i, spec.mean + spec.stddev * irwinHall(gen));
      break;
    case RandomSpec::Dist::Int: {
      int64_t v = uniformInt(gen, spec.intLow, spec.intHigh);
      if (isFloat(array.dtype))
        store(array, i, static_cast<double>(v));
      else
        array.setBits(i, num::wrapInt(array.dtype, v));
      break;
    }
    }
  }
}

} // namespace tc::conf
