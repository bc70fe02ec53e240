#include "conformance/Compare.h"

#include "conformance/Value.h"
#include "support/Numerics.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tc::conf {

namespace {

double decode(DType t, uint64_t bits) { return num::floatValue(t, bits); }

bool isNaNBits(DType t, uint64_t bits) { return std::isnan(decode(t, bits)); }

std::string hexBits(DType t, uint64_t bits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llx", static_cast<int>(2 * byteSize(t)),
                static_cast<unsigned long long>(bits));
  return buf;
}

std::string shortestDecimal(DType t, uint64_t bits) {
  double v = decode(t, bits);
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  if (v == 0)
    return std::signbit(v) ? "-0.0" : "0.0";
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*g", p, v);
    if (decimalToFloatBits(buf, t) == bits)
      break;
  }
  return buf;
}

} // namespace

std::string CompareSpec::str() const {
  char buf[96];
  switch (kind) {
  case Kind::Exact:
    return "exact";
  case Kind::Tolerance:
    std::snprintf(buf, sizeof buf, "rtol=%g atol=%g", rtol, atol);
    return buf;
  case Kind::Ulp:
    return "ulp=" + std::to_string(ulp);
  }
  return "exact";
}

CompareSpec defaultCompare(DType t, const ToleranceOverride &o) {
  CompareSpec d = defaultCompare(t);
  if (d.kind != CompareSpec::Kind::Tolerance)
    return d;
  return CompareSpec::tolerance(o.rtol.value_or(d.rtol), o.atol.value_or(d.atol));
}

std::string ToleranceOverride::flags() const {
  char buf[96];
  std::string s;
  if (rtol) {
    std::snprintf(buf, sizeof buf, "--rtol %g", *rtol);
    s += buf;
  }
  if (atol) {
    std::snprintf(buf, sizeof buf, "%s--atol %g", s.empty() ? "" : " ", *atol);
    s += buf;
  }
  return s;
}

std::string toleranceValueProblem(const std::string &text, double &value) {
  const char *b = text.c_str();
  char *end = nullptr;
  double v = text.empty() || std::isspace(static_cast<unsigned char>(text[0]))
                 ? std::nan("")
                 : std::strtod(b, &end);
  if (!end || *end != '\0' || std::isnan(v) || std::isinf(v))
    return "'" + text + "' is not a finite number (expected a tolerance such as 1e-3 or 0)";
  if (v < 0)
    return "'" + text + "' is negative (a tolerance is >= 0)";
  value = v == 0 ? 0.0 : v; // no -0
  return "";
}

CompareSpec defaultCompare(DType t) {
  switch (t) {
  case DType::F16:
    return CompareSpec::tolerance(1e-3, 1e-5);
  case DType::BF16:
    return CompareSpec::tolerance(1.6e-2, 1e-5);
  case DType::F32:
    return CompareSpec::tolerance(1.3e-6, 1e-5);
  case DType::F64:
    return CompareSpec::tolerance(1e-7, 1e-7);
  default:
    return CompareSpec::exact();
  }
}

uint64_t ulpDistance(DType t, uint64_t a, uint64_t b) {
  uint64_t sign = uint64_t(1) << (bitWidth(t) - 1);
  auto ordered = [&](uint64_t x) -> __int128 {
    __int128 mag = static_cast<__int128>(x & ~sign);
    return (x & sign) ? -mag : mag;
  };
  __int128 d = ordered(a) - ordered(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

bool elementsMatch(DType t, uint64_t got, uint64_t want, const CompareSpec &spec) {
  if (!isFloat(t))
    return got == want;
  bool gotNaN = isNaNBits(t, got), wantNaN = isNaNBits(t, want);
  if (gotNaN || wantNaN)
    return gotNaN && wantNaN;
  switch (spec.kind) {
  case CompareSpec::Kind::Exact:
    return got == want;
  case CompareSpec::Kind::Ulp: {
    double g = decode(t, got), w = decode(t, want);
    if (std::isinf(g) || std::isinf(w))
      return g == w;
    return ulpDistance(t, got, want) <= spec.ulp;
  }
  case CompareSpec::Kind::Tolerance: {
    double g = decode(t, got), w = decode(t, want);
    if (std::isinf(g) || std::isinf(w))
      return g == w;
    return std::fabs(g - w) <= spec.atol + spec.rtol * std::fabs(w);
  }
  }
  return false;
}

bool withinExtraUlps(DType t, uint64_t got, uint64_t want, uint64_t ulps) {
  if (ulps == 0 || !isFloat(t))
    return false;
  if (got != want && decode(t, got) == 0 && decode(t, want) == 0)
    return false; // -0.0 against 0.0: 0 ULPs apart, but not a rounding error
  return elementsMatch(t, got, want, CompareSpec::ulps(ulps));
}

namespace {

std::optional<Mismatch> shapeMismatch(const HostArray &got, const HostArray &want) {
  if (got.dtype == want.dtype && got.shape == want.shape &&
      got.data.size() == want.data.size())
    return std::nullopt;
  auto describe = [](const HostArray &a) {
    std::string s = std::string(conformanceName(a.dtype)) + "[";
    for (size_t i = 0; i < a.shape.size(); ++i)
      s += (i ? ", " : "") + std::to_string(a.shape[i]);
    return s + "]";
  };
  Mismatch m;
  m.got = describe(got);
  m.want = describe(want);
  m.count = want.numElements();
  return m;
}

template <typename Pred>
std::optional<Mismatch> firstMismatch(const HostArray &got, const HostArray &want, Pred match) {
  if (auto m = shapeMismatch(got, want))
    return m;
  Mismatch m;
  int64_t n = want.numElements();
  for (int64_t i = 0; i < n; ++i) {
    uint64_t g = got.getBits(i), w = want.getBits(i);
    if (match(g, w))
      continue;
    if (m.count++ == 0) {
      m.index = i;
      m.got = formatElement(want.dtype, g);
      m.want = formatElement(want.dtype, w);
    }
  }
  if (m.count == 0)
    return std::nullopt;
  return m;
}

} // namespace

std::optional<Mismatch> compareArrays(const HostArray &got, const HostArray &want,
                                      const CompareSpec &spec) {
  DType t = want.dtype;
  return firstMismatch(got, want,
                       [&](uint64_t g, uint64_t w) { return elementsMatch(t, g, w, spec); });
}

std::optional<double> atolThatAgrees(const HostArray &got, const HostArray &want,
                                     const CompareSpec &spec) {
  if (spec.kind != CompareSpec::Kind::Tolerance || !isFloat(want.dtype) ||
      got.dtype != want.dtype || got.numElements() != want.numElements())
    return std::nullopt;
  double need = spec.atol;
  for (int64_t i = 0; i < want.numElements(); ++i) {
    double g = got.getDouble(i), w = want.getDouble(i);
    if (std::isfinite(g) && std::isfinite(w))
      need = std::max(need, std::fabs(g - w) - spec.rtol * std::fabs(w));
  }
  if (!(need > 0))
    return std::nullopt;
  double unit = std::pow(10.0, std::floor(std::log10(need)) - 1);
  double atol = std::ceil(need / unit) * unit;
  for (int step = 0; step < 2; ++step, atol += unit) // the second: the sum's rounding
    if (!compareArrays(got, want, CompareSpec::tolerance(spec.rtol, atol)))
      return atol;
  return std::nullopt;
}

std::optional<Mismatch> compareBits(const HostArray &got, const HostArray &want) {
  return firstMismatch(got, want, [](uint64_t g, uint64_t w) { return g == w; });
}

std::string formatElement(DType t, uint64_t bits) {
  if (isFloat(t)) {
    std::string s = shortestDecimal(t, bits);
    s.append(" (").append(hexBits(t, bits)).append(")");
    return s;
  }
  __int128 v = num::intValue(t, bits);
  if (isSignedInt(t))
    return std::to_string(static_cast<int64_t>(v));
  return std::to_string(static_cast<uint64_t>(v));
}

} // namespace tc::conf
