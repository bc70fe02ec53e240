// Kernel arguments from `--arg NAME=SPEC`: parsing, values, generators, binding (ArgSpec.h).
#include "runtime/ArgSpec.h"

#include "support/EditDistance.h"
#include "support/FloatBits.h"
#include "support/ValueBits.h"

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

namespace tc {

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

bool isIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

/// The buffer kinds by their spelling, with how many value parts precede the dtype.
struct KindInfo {
  std::string_view word;
  ArgSpec::Kind kind;
  unsigned values;
  bool random;
};
constexpr KindInfo kKinds[] = {
    {"zeros", ArgSpec::Kind::Zeros, 0, false},   {"full", ArgSpec::Kind::Full, 1, false},
    {"arange", ArgSpec::Kind::Arange, 0, false}, {"rand", ArgSpec::Kind::Rand, 0, true},
    {"randn", ArgSpec::Kind::Randn, 0, true},    {"randint", ArgSpec::Kind::Randint, 2, true},
};

const KindInfo *findKind(std::string_view word) {
  for (const KindInfo &k : kKinds)
    if (k.word == word)
      return &k;
  return nullptr;
}

// typed-shape := dtype? '[' (expr (',' expr)*)? ']'
bool parseTypedShape(std::string_view part, ArgSpec &spec, std::string &error) {
  size_t open = part.find('[');
  if (open == std::string_view::npos || part.back() != ']') {
    error = "expected DTYPE[SHAPE] (e.g. f32[5000]) in '" + std::string(part) + "'";
    return false;
  }
  std::string_view dt = trim(part.substr(0, open));
  if (!dt.empty()) {
    spec.dtype = parseDTypeName(dt);
    if (!spec.dtype) {
      error = "unknown dtype '" + std::string(dt) +
              "' (expected e.g. f32, i32, bf16, i1, float32, int32, bfloat16, bool)";
      return false;
    }
  }
  std::string_view inside = trim(part.substr(open + 1, part.size() - open - 2));
  if (!inside.empty())
    spec.shape = splitTopLevel(inside, ',');
  for (const std::string &d : spec.shape)
    if (d.empty()) {
      error = "empty dimension in shape '[" + std::string(inside) + "]'";
      return false;
    }
  return true;
}

// seed := 'seed=' DIGITS
bool parseSeed(std::string_view part, ArgSpec &spec, std::string &error) {
  part = trim(part);
  if (!part.starts_with("seed=")) {
    error = "unexpected '" + std::string(part) + "' (only ':seed=S' may follow the shape)";
    return false;
  }
  std::string_view digits = part.substr(5);
  uint64_t s = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), s);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    error = "bad seed '" + std::string(digits) + "' (expected an unsigned 64-bit integer)";
    return false;
  }
  spec.seed = s;
  return true;
}

// buffer := KIND (':' VALUE)* ':' typed-shape (':' seed)?
bool parseBufferSpec(std::string_view text, ArgSpec &spec, std::string &error) {
  std::vector<std::string> parts = splitTopLevel(text, ':');
  const KindInfo *info = findKind(parts[0]);
  if (!info) {
    error = "unknown buffer kind '" + parts[0] +
            "' (expected zeros, full, arange, rand, randn, randint or @file.npy)";
    return false;
  }
  spec.kind = info->kind;
  size_t need = 1 + info->values + 1;
  std::string usage = info->kind == ArgSpec::Kind::Full ? "full:VALUE:DTYPE[SHAPE]"
                      : info->kind == ArgSpec::Kind::Randint
                          ? "randint:LO:HI:DTYPE[SHAPE]"
                          : std::string(info->word) + ":DTYPE[SHAPE]";
  if (parts.size() < need || parts.size() > need + (info->random ? 1 : 0)) {
    bool seedMisplaced =
        !info->random && parts.size() == need + 1 && parts.back().starts_with("seed=");
    error = seedMisplaced ? "'" + std::string(info->word) + "' takes no seed"
                          : "expected " + usage + (info->random ? "[:seed=S]" : "");
    return false;
  }
  for (unsigned i = 0; i < info->values; ++i)
    if (parts[1 + i].empty()) {
      error = "empty value in " + usage;
      return false;
    }
  if (info->kind == ArgSpec::Kind::Full)
    spec.value = parts[1];
  if (info->kind == ArgSpec::Kind::Randint) {
    spec.low = parts[1];
    spec.high = parts[2];
  }
  if (!parseTypedShape(parts[need - 1], spec, error))
    return false;
  return parts.size() == need || parseSeed(parts[need], spec, error);
}

/// The value of an integer dtype's range: [lo, hi].
void intRange(DType t, __int128 &lo, __int128 &hi) {
  unsigned w = bitWidth(t);
  if (t == DType::Bool) {
    lo = 0;
    hi = 1;
  } else if (isSignedInt(t)) {
    lo = -(__int128(1) << (w - 1));
    hi = (__int128(1) << (w - 1)) - 1;
  } else {
    lo = 0;
    hi = (__int128(1) << w) - 1;
  }
}

std::optional<uint64_t> parseRawBits(std::string_view hex, DType t, std::string &error) {
  unsigned maxDigits = t == DType::Bool ? 1 : byteSize(t) * 2;
  uint64_t bits = 0;
  auto [end, ec] = std::from_chars(hex.data(), hex.data() + hex.size(), bits, 16);
  if (hex.empty() || ec != std::errc() || end != hex.data() + hex.size()) {
    error = "bad hexadecimal bits '0x" + std::string(hex) + "'";
    return std::nullopt;
  }
  if (hex.size() > maxDigits || (t == DType::Bool && bits > 1)) {
    error = "raw bits '0x" + std::string(hex) + "' do not fit " + std::string(conformanceName(t)) +
            " (at most " + std::to_string(maxDigits) + " hex digits)";
    return std::nullopt;
  }
  return bits;
}

std::optional<uint64_t> parseIntValue(std::string_view text, DType t, std::string &error) {
  bool neg = text.starts_with('-');
  std::string_view digits = text.substr(neg || text.starts_with('+') ? 1 : 0);
  unsigned __int128 mag = 0;
  bool ok = !digits.empty();
  for (char c : digits) {
    if (c < '0' || c > '9' || mag > (unsigned __int128)(1) << 100) {
      ok = false;
      break;
    }
    mag = mag * 10 + unsigned(c - '0');
  }
  if (!ok) {
    error = "'" + std::string(text) + "' is not an integer (the dtype is " +
            std::string(conformanceName(t)) + ")";
    return std::nullopt;
  }
  __int128 v = neg ? -static_cast<__int128>(mag) : static_cast<__int128>(mag);
  __int128 lo, hi;
  intRange(t, lo, hi);
  if (v < lo || v > hi) {
    error = "'" + std::string(text) + "' does not fit " + std::string(conformanceName(t));
    return std::nullopt;
  }
  return num::wrapInt(t, v);
}

std::optional<uint64_t> parseFloatValue(std::string_view text, DType t, std::string &error) {
  std::string lower;
  for (char c : text)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view body = lower;
  bool neg = body.starts_with('-');
  if (neg || body.starts_with('+'))
    body.remove_prefix(1);
  if (body == "nan" || body == "inf" || body == "infinity") {
    double v = body == "nan" ? std::nan("") : INFINITY;
    return num::floatBits(t, neg ? -v : v);
  }
  const char *first = text.data() + (text.starts_with('+') ? 1 : 0),
             *last = text.data() + text.size();
  if (t == DType::F32) {
    float f = 0;
    auto [end, ec] = std::from_chars(first, last, f);
    if (first != last && end == last && (ec == std::errc() || ec == std::errc::result_out_of_range))
      return num::floatBits(t, ec == std::errc() ? double(f)
                                                 : std::strtod(std::string(text).c_str(), nullptr));
  } else {
    double d = 0;
    auto [end, ec] = std::from_chars(first, last, d);
    if (first != last && end == last && (ec == std::errc() || ec == std::errc::result_out_of_range))
      return num::floatBits(t, ec == std::errc() ? d
                                                 : std::strtod(std::string(text).c_str(), nullptr));
  }
  error = "'" + std::string(text) + "' is not a number (the dtype is " +
          std::string(conformanceName(t)) + ")";
  return std::nullopt;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : s)
    h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return h;
}

unsigned significandBits(DType t) {
  switch (t) {
  case DType::F16: return 11;
  case DType::BF16: return 8;
  case DType::F32: return 24;
  default: return 53;
  }
}

/// Output `i` of the SplitMix64 generator whose state starts at `key`
/// (its first output is splitmix64(key)): random access, so a buffer can be
/// filled in any order or in parallel with the same values.
inline uint64_t splitmixAt(uint64_t key, uint64_t i) {
  return splitmix64(key + i * 0x9e3779b97f4a7c15ull);
}

/// The key of word stream `k` of a buffer with seed `seed` (ArgSpec.h).
uint64_t streamKey(uint64_t seed, unsigned k) {
  return k == 0 ? seed : splitmix64(seed + k * 0x632be59bd9b4e019ull);
}

/// Stores `gen(i)` (bits of the dtype) into every element of `a`, on several
/// threads for large buffers; the values do not depend on how it is split.
template <typename Gen> void fillWith(HostArray &a, const Gen &gen) {
  int64_t n = a.numElements();
  unsigned size = byteSize(a.dtype);
  uint8_t *base = a.data.data();
  auto fillRange = [&](int64_t begin, int64_t end) {
    switch (size) {
    case 1:
      for (int64_t i = begin; i < end; ++i)
        base[i] = static_cast<uint8_t>(gen(i));
      break;
    case 2:
      for (int64_t i = begin; i < end; ++i) {
        auto v = static_cast<uint16_t>(gen(i));
        std::memcpy(base + 2 * i, &v, 2);
      }
      break;
    case 4:
      for (int64_t i = begin; i < end; ++i) {
        auto v = static_cast<uint32_t>(gen(i));
        std::memcpy(base + 4 * i, &v, 4);
      }
      break;
    default:
      for (int64_t i = begin; i < end; ++i) {
        uint64_t v = gen(i);
        std::memcpy(base + 8 * i, &v, 8);
      }
      break;
    }
  };
  constexpr int64_t kChunk = int64_t(1) << 20; // elements below which one thread fills
  unsigned threads = std::min<unsigned>(std::max(1u, std::thread::hardware_concurrency()), 16);
  threads = static_cast<unsigned>(std::min<int64_t>(threads, (n + kChunk - 1) / kChunk));
  if (threads <= 1) {
    fillRange(0, n);
    return;
  }
  std::vector<std::thread> pool;
  int64_t per = (n + threads - 1) / threads;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(fillRange, std::min<int64_t>(n, t * per), std::min<int64_t>(n, (t + 1) * per));
  for (std::thread &th : pool)
    th.join();
}

/// float16 bits of `f` (finite), rounded to nearest even, subnormals
/// included: the float-arithmetic conversion of Maratyszcza's FP16 library,
/// which needs the default rounding mode and no flush-to-zero.
inline uint16_t halfBits(float f) {
  float base = (std::fabs(f) * 0x1.0p+112f) * 0x1.0p-110f;
  uint32_t w = std::bit_cast<uint32_t>(f);
  uint32_t shl1 = w + w;
  uint32_t sign = w & 0x80000000u;
  uint32_t bias = std::max(shl1 & 0xff000000u, 0x71000000u);
  base = std::bit_cast<float>((bias >> 1) + 0x07800000u) + base;
  uint32_t bits = std::bit_cast<uint32_t>(base);
  uint32_t nonsign = ((bits >> 13) & 0x7c00u) + (bits & 0x0fffu);
  return static_cast<uint16_t>((sign >> 16) | nonsign);
}

/// bfloat16 bits of `f` (finite), rounded to nearest even.
inline uint16_t bf16Bits(float f) {
  uint32_t b = std::bit_cast<uint32_t>(f);
  return static_cast<uint16_t>((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

/// Fills float buffer `a` with `gen(i)`, a float that holds the element's
/// value exactly (so that rounding it to f16/bf16 rounds the value once).
template <typename Gen> void fillFloat(HostArray &a, const Gen &gen) {
  switch (a.dtype) {
  case DType::F16: fillWith(a, [&](int64_t i) { return uint64_t(halfBits(gen(i))); }); break;
  case DType::BF16: fillWith(a, [&](int64_t i) { return uint64_t(bf16Bits(gen(i))); }); break;
  case DType::F32:
    fillWith(a, [&](int64_t i) { return uint64_t(std::bit_cast<uint32_t>(gen(i))); });
    break;
  default:
    fillWith(a, [&](int64_t i) { return std::bit_cast<uint64_t>(double(gen(i))); });
    break;
  }
}

/// The three 21-bit fields of `w` (bits 63-43, 42-22, 21-1), summed.
inline int64_t fields21(uint64_t w) {
  return int64_t((w >> 43) + ((w >> 22) & 0x1fffff) + ((w >> 1) & 0x1fffff));
}

/// Fills `a` for the random kinds (the streams and transforms of ArgSpec.h).
bool fillRandom(const ArgSpec &spec, HostArray &a, const ExprEnv &env, uint64_t seed,
                std::string &error) {
  DType t = a.dtype;
  uint64_t k0 = streamKey(seed, 0);
  if (spec.kind == ArgSpec::Kind::Rand) {
    if (t == DType::F64) { // 53 bits: more than a float holds
      fillWith(a, [&](int64_t i) {
        return std::bit_cast<uint64_t>(double(splitmixAt(k0, uint64_t(i)) >> 11) * 0x1p-53);
      });
      return true;
    }
    unsigned p = significandBits(t); // <= 24: exact in a float
    float scale = std::ldexp(1.0f, -int(p));
    fillFloat(a, [&](int64_t i) {
      return float(int64_t(splitmixAt(k0, uint64_t(i)) >> (64 - p))) * scale;
    });
    return true;
  }
  if (spec.kind == ArgSpec::Kind::Randn) {
    uint64_t k1 = streamKey(seed, 1), k2 = streamKey(seed, 2), k3 = streamKey(seed, 3);
    fillFloat(a, [=](int64_t i) __attribute__((always_inline)) {
      uint64_t u = uint64_t(i);
      // sum + 6 - 6 * 2^21: an integer below 2^24 in magnitude, so the value
      // (times 2^-21) is exact in a float.
      int64_t centred = fields21(splitmixAt(k0, u)) + fields21(splitmixAt(k1, u)) +
                        fields21(splitmixAt(k2, u)) + fields21(splitmixAt(k3, u)) + 6 -
                        6 * (int64_t(1) << 21);
      return float(centred) * 0x1p-21f;
    });
    return true;
  }
  auto lo = evalIntExpr(spec.low, env, error);
  if (!lo)
    return false;
  auto hi = evalIntExpr(spec.high, env, error);
  if (!hi)
    return false;
  if (*hi < *lo) {
    error = "randint bounds [" + std::to_string(*lo) + ", " + std::to_string(*hi) + "] are empty";
    return false;
  }
  if (!isFloat(t)) {
    __int128 dlo, dhi;
    intRange(t, dlo, dhi);
    if (*lo < dlo || *hi > dhi) {
      error = "randint bounds [" + std::to_string(*lo) + ", " + std::to_string(*hi) +
              "] do not fit " + std::string(conformanceName(t));
      return false;
    }
  }
  uint64_t range = uint64_t(*hi) - uint64_t(*lo) + 1; // 0 means 2^64
  uint64_t reject = range == 0 ? 0 : (0 - range) % range; // 2^64 mod range
  int64_t low = *lo;
  auto draw = [&](int64_t i) {
    uint64_t x = splitmixAt(k0, uint64_t(i));
    if (range == 0)
      return static_cast<int64_t>(x);
    unsigned __int128 m = static_cast<unsigned __int128>(x) * range;
    for (unsigned k = 1; static_cast<uint64_t>(m) < reject; ++k)
      m = static_cast<unsigned __int128>(splitmixAt(streamKey(seed, k), uint64_t(i))) * range;
    return static_cast<int64_t>(uint64_t(low) + static_cast<uint64_t>(m >> 64));
  };
  constexpr int64_t kFloatExact = int64_t(1) << 24; // integers a float holds exactly
  if (isFloat(t) && *lo >= -kFloatExact && *hi <= kFloatExact)
    fillFloat(a, [&](int64_t i) { return float(draw(i)); });
  else if (isFloat(t))
    fillWith(a, [&](int64_t i) { return num::floatBits(t, double(draw(i))); });
  else
    fillWith(a, [&](int64_t i) { return num::wrapInt(t, draw(i)); });
  return true;
}

/// Evaluates the shape expressions; checks the size.
std::optional<std::vector<int64_t>> evalShape(const ArgSpec &spec, DType t, const ExprEnv &env,
                                              uint64_t maxBytes, std::string &error) {
  std::vector<int64_t> shape;
  uint64_t bytes = byteSize(t);
  for (const std::string &d : spec.shape) {
    auto v = evalIntExpr(d, env, error);
    if (!v)
      return std::nullopt;
    if (*v < 0) {
      error = "dimension '" + d + "' is " + std::to_string(*v) + " (must be >= 0)";
      return std::nullopt;
    }
    if (__builtin_mul_overflow(bytes, uint64_t(*v), &bytes) || bytes > maxBytes) {
      error = "the buffer is too large (limit " + std::to_string(maxBytes) + " bytes)";
      return std::nullopt;
    }
    shape.push_back(*v);
  }
  return shape;
}

std::optional<HostArray> loadFile(const ArgSpec &spec, DType pointee, const BufferOptions &opts,
                                  std::string &error) {
  std::filesystem::path p(spec.path);
  if (p.is_relative() && !opts.baseDir.empty())
    p = std::filesystem::path(opts.baseDir) / p;
  NpyReadOptions ro;
  ro.bf16FromU2 = opts.bf16FromU2 && pointee == DType::BF16;
  ro.maxBytes = opts.maxBytes;
  auto npy = readNpy(p.string(), ro, error);
  if (!npy)
    return std::nullopt;
  if (npy->dtype != pointee) {
    error = p.string() + " holds " + std::string(conformanceName(npy->dtype)) +
            " but the parameter points to " + std::string(conformanceName(pointee));
    if (pointee == DType::BF16 && npy->dtype == DType::U16)
      error += " (bfloat16 is written as '<u2'; read it as bfloat16 with --bf16-as-u2)";
    return std::nullopt;
  }
  HostArray a;
  a.dtype = npy->dtype;
  a.shape = std::move(npy->shape);
  a.data = std::move(npy->data);
  return a;
}

std::string paramDesc(const ir::Function &f, unsigned i) {
  return "'" + f.paramName(i) + "' (" + f.param(i)->type().langStr() + ")";
}

} // namespace

std::optional<DType> parseDTypeName(std::string_view name) {
  if (auto t = parseIrName(name))
    return t;
  if (auto t = parseConformanceName(name))
    return t;
  if (name == "float")
    return DType::F32;
  if (name == "double")
    return DType::F64;
  if (name == "half")
    return DType::F16;
  if (name == "int")
    return DType::I32;
  return std::nullopt;
}

std::optional<ArgSpec> parseArgSpec(std::string_view text, std::string &error) {
  size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    error = "expected NAME=SPEC, got '" + std::string(text) + "'";
    return std::nullopt;
  }
  ArgSpec spec;
  spec.name = std::string(trim(text.substr(0, eq)));
  spec.text = std::string(trim(text.substr(eq + 1)));
  std::string where = "--arg " + std::string(text) + ": ";
  if (!isIdentifier(spec.name)) {
    error = where + "'" + spec.name + "' is not a parameter name";
    return std::nullopt;
  }
  if (spec.text.empty()) {
    error = where + "empty value";
    return std::nullopt;
  }
  if (spec.text[0] == '@') {
    spec.kind = ArgSpec::Kind::File;
    spec.path = spec.text.substr(1);
    if (spec.path.empty()) {
      error = where + "missing file name after '@'";
      return std::nullopt;
    }
    return spec;
  }
  if (spec.text.find_first_of(":[") == std::string::npos) {
    spec.value = spec.text;
    return spec;
  }
  if (!parseBufferSpec(spec.text, spec, error)) {
    error = where + error;
    return std::nullopt;
  }
  return spec;
}

std::optional<uint64_t> parseValueBits(std::string_view text, DType t, std::string &error) {
  text = trim(text);
  if (text.starts_with("0x") || text.starts_with("0X"))
    return parseRawBits(text.substr(2), t, error);
  if (t == DType::Bool) {
    if (text == "true" || text == "True" || text == "1")
      return 1;
    if (text == "false" || text == "False" || text == "0")
      return 0;
    error = "'" + std::string(text) + "' is not a bool (expected true, false, 1 or 0)";
    return std::nullopt;
  }
  if (isFloat(t))
    return parseFloatValue(text, t, error);
  return parseIntValue(text, t, error);
}

/// Whether decimal `text` is a finite number that rounds to infinity in float
/// type `t` (as the language warns for `half h = 70000.0;`).
bool overflowsToInfinity(std::string_view text, DType t) {
  text = trim(text);
  if (!isFloat(t) || text.empty() || text.starts_with("0x") || text.starts_with("0X"))
    return false;
  std::string s(text);
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size())
    return false;
  bool spelledInf = s.find_first_of("iI") != std::string::npos; // inf, -Infinity
  return !spelledInf && !std::isnan(v) && (std::isinf(v) || std::isinf(roundToFloat(v, t)));
}

std::optional<ScalarValue> makeScalar(const ArgSpec &spec, DType t, std::string &error) {
  auto bits = parseValueBits(spec.value, t, error);
  if (!bits) {
    error = "--arg " + spec.name + "=" + spec.text + ": " + error;
    return std::nullopt;
  }
  ScalarValue s;
  s.dtype = t;
  s.bits = *bits;
  if (isFloat(t))
    s.f = num::floatValue(t, *bits);
  return s;
}

uint64_t effectiveSeed(const ArgSpec &spec, uint64_t defaultSeed) {
  return spec.seed ? *spec.seed : splitmix64(defaultSeed ^ fnv1a(spec.name));
}

std::optional<HostArray> makeBuffer(const ArgSpec &spec, DType pointee, const ExprEnv &env,
                                    const BufferOptions &opts, std::string &error) {
  std::string where = "--arg " + spec.name + "=" + spec.text + ": ";
  auto failWith = [&](const std::string &msg) {
    error = where + msg;
    return std::nullopt;
  };
  if (spec.kind == ArgSpec::Kind::File) {
    auto a = loadFile(spec, pointee, opts, error);
    if (!a)
      error = where + error;
    return a;
  }
  DType t = spec.dtype.value_or(pointee);
  if (t != pointee)
    return failWith("dtype " + std::string(conformanceName(t)) + " does not match the parameter (" +
                    std::string(langName(pointee)) + "*, " + std::string(conformanceName(pointee)) +
                    ")");
  if ((spec.kind == ArgSpec::Kind::Rand || spec.kind == ArgSpec::Kind::Randn) && !isFloat(t))
    return failWith(std::string(spec.kind == ArgSpec::Kind::Rand ? "rand" : "randn") +
                    " needs a float dtype (use randint:LO:HI for " +
                    std::string(conformanceName(t)) + ")");
  auto shape = evalShape(spec, t, env, opts.maxBytes, error);
  if (!shape)
    return failWith(error);
  HostArray a = HostArray::zeros(t, *shape);
  switch (spec.kind) {
  case ArgSpec::Kind::Zeros: return a;
  case ArgSpec::Kind::Full: {
    auto bits = parseValueBits(spec.value, t, error);
    if (!bits)
      return failWith(error);
    for (int64_t i = 0; i < a.numElements(); ++i)
      a.setBits(i, *bits);
    return a;
  }
  case ArgSpec::Kind::Arange:
    for (int64_t i = 0; i < a.numElements(); ++i)
      a.setDouble(i, double(i));
    return a;
  case ArgSpec::Kind::Rand:
  case ArgSpec::Kind::Randn:
  case ArgSpec::Kind::Randint:
    if (!fillRandom(spec, a, env, effectiveSeed(spec, opts.defaultSeed), error))
      return failWith(error);
    return a;
  case ArgSpec::Kind::Scalar:
  case ArgSpec::Kind::File: break;
  }
  return failWith("not a buffer");
}

std::string describeParams(const ir::Function &f) {
  std::string s;
  for (unsigned i = 0; i < f.numParams(); ++i)
    s += (i ? ", " : "") + f.param(i)->type().langStr() + " " + f.paramName(i);
  return s;
}

namespace {

/// Before any buffer is made: the bytes of all of them together (shapes with
/// the scalars bound so far, .npy files by their size) within opts.maxTotalBytes.
bool checkTotalBytes(const ir::Function &f, std::map<std::string, const ArgSpec *> &byName,
                     const CompiledKernel &kernel, const BufferOptions &opts, const BoundArgs &out,
                     std::string &error) {
  uint64_t total = 0;
  for (unsigned i = 0; i < f.numParams(); ++i) {
    const ir::Type &type = f.param(i)->type();
    const ArgSpec &s = *byName[f.paramName(i)];
    if (!type.isPtr || !s.isBuffer())
      continue;
    uint64_t bytes = 0;
    std::error_code ec;
    if (s.kind == ArgSpec::Kind::File) {
      std::filesystem::path p(s.path);
      if (p.is_relative() && !opts.baseDir.empty())
        p = std::filesystem::path(opts.baseDir) / p;
      if (std::filesystem::is_regular_file(p, ec))
        bytes = std::filesystem::file_size(p, ec);
    } else {
      std::string ignored; // a bad shape is reported when the buffer is made
      ExprEnv env = makeExprEnv(kernel, out.args);
      if (auto shape = evalShape(s, s.dtype.value_or(type.dtype), env, opts.maxBytes, ignored)) {
        bytes = byteSize(s.dtype.value_or(type.dtype));
        for (int64_t d : *shape)
          bytes *= static_cast<uint64_t>(d); // evalShape keeps this within maxBytes
      }
    }
    total += bytes;
  }
  if (total <= opts.maxTotalBytes)
    return true;
  error = "--arg: the buffers need " + std::to_string(total) +
          " bytes together, more than the limit of " + std::to_string(opts.maxTotalBytes) +
          " bytes for all buffers of a launch" +
          (opts.maxTotalBytes < kMaxLaunchBufferBytes
               ? " (half of " + std::to_string(kMaxLaunchBufferBytes) +
                     ": with several variants, the first variant's buffers are kept to compare)"
               : std::string());
  return false;
}

} // namespace

bool bindArgs(const std::vector<ArgSpec> &specs, const CompiledKernel &kernel,
              const BufferOptions &opts, BoundArgs &out, std::string &error) {
  const ir::Function &f = kernel.function();
  std::string params = "\nnote: kernel '" + kernel.name() + "' takes: " + describeParams(f);
  std::map<std::string, unsigned> index;
  for (unsigned i = 0; i < f.numParams(); ++i)
    index[f.paramName(i)] = i;
  std::map<std::string, const ArgSpec *> byName;
  for (const ArgSpec &s : specs) {
    if (!index.count(s.name)) {
      std::vector<std::string> names;
      for (unsigned i = 0; i < f.numParams(); ++i)
        names.push_back(f.paramName(i));
      error = "--arg " + s.name + ": no parameter named '" + s.name + "'" +
              didYouMean(s.name, names) + params;
      return false;
    }
    if (!byName.emplace(s.name, &s).second) {
      error = "--arg " + s.name + " is given twice";
      return false;
    }
  }
  std::vector<std::string> missing;
  for (unsigned i = 0; i < f.numParams(); ++i)
    if (!byName.count(f.paramName(i)))
      missing.push_back("missing --arg for parameter " + paramDesc(f, i));
  if (!missing.empty()) {
    error.clear();
    for (const std::string &m : missing)
      error += (error.empty() ? "" : "\n") + m;
    error += params;
    return false;
  }
  for (int pass = 0; pass < 2; ++pass) { // scalars, then buffers
    if (pass == 1 && !checkTotalBytes(f, byName, kernel, opts, out, error))
      return false;
    for (unsigned i = 0; i < f.numParams(); ++i) {
      const ir::Type &type = f.param(i)->type();
      const ArgSpec &s = *byName[f.paramName(i)];
      if (type.isPtr != (pass == 1))
        continue;
      if (type.isPtr && !s.isBuffer()) {
        error = "--arg " + s.name + "=" + s.text + ": parameter " + paramDesc(f, i) +
                " is a pointer; give a buffer, e.g. zeros:" + std::string(irName(type.dtype)) +
                "[N], randn:" + std::string(irName(type.dtype)) + "[N] or @" + s.name + ".npy";
        return false;
      }
      if (!type.isPtr && s.isBuffer()) {
        error = "--arg " + s.name + "=" + s.text + ": parameter " + paramDesc(f, i) +
                " is a scalar; give a value, e.g. " + s.name + "=" +
                (isFloat(type.dtype)         ? "1.5"
                 : type.dtype == DType::Bool ? "true"
                                             : "64");
        return false;
      }
      auto overflowWarning = [&] {
        if (overflowsToInfinity(s.value, type.dtype))
          out.warnings.push_back(
              "--arg " + s.name + "=" + s.text + ": " + std::string(trim(s.value)) + " overflows " +
              std::string(conformanceName(type.dtype)) + " and becomes infinity");
      };
      if (!type.isPtr) {
        auto v = makeScalar(s, type.dtype, error);
        if (!v)
          return false;
        overflowWarning();
        out.args.setScalar(s.name, *v);
        continue;
      }
      ExprEnv env = makeExprEnv(kernel, out.args);
      auto a = makeBuffer(s, type.dtype, env, opts, error);
      if (!a)
        return false;
      if (s.kind == ArgSpec::Kind::Full)
        overflowWarning();
      HostArray &slot = out.arrays[s.name] = std::move(*a);
      out.args.setBuffer(s.name, &slot);
    }
  }
  return true;
}

} // namespace tc
