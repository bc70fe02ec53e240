#include "conformance/Value.h"

#include "support/FloatBits.h"

#include <cctype>
#include <cfenv>
#include <cstdlib>
#include <cstring>

namespace tc::conf {

namespace {

uint64_t doubleBits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

double strtodIn(const std::string &text, int mode) {
  int old = std::fegetround();
  std::fesetround(mode);
  double d = std::strtod(text.c_str(), nullptr);
  std::fesetround(old);
  return d;
}

// The decimal rounded to binary64 "to odd": exact values stay; inexact ones
// take whichever neighbour has an odd last bit. Rounding that once more to a
// format of at most 51 bits of precision equals rounding the decimal directly
// (the round-to-odd theorem), so narrow formats see a single rounding.
double roundToOdd(const std::string &text) {
  double lo = strtodIn(text, FE_DOWNWARD);
  double hi = strtodIn(text, FE_UPWARD);
  if (lo == hi)
    return lo;
  return (doubleBits(lo) & 1) ? lo : hi;
}

bool isHexDigit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

std::optional<uint64_t> rawBits(const std::string &s, DType t, std::string &error) {
  size_t digits = 2 * byteSize(t);
  std::string body = s.substr(2);
  bool ok = body.size() == digits;
  for (char c : body)
    ok = ok && isHexDigit(c);
  if (!ok) {
    error = "raw bits '" + s + "' must have exactly " + std::to_string(digits) +
            " hex digits for " + std::string(conformanceName(t));
    return std::nullopt;
  }
  uint64_t bits = std::strtoull(body.c_str(), nullptr, 16);
  if (t == DType::Bool && bits > 1) {
    error = "raw bits '" + s + "' are not a bool (0x00 or 0x01)";
    return std::nullopt;
  }
  return bits;
}

std::optional<uint64_t> specialString(const std::string &s, DType t, std::string &error) {
  if (s.size() > 2 && s[0] == '0' && s[1] == 'x')
    return rawBits(s, t, error);
  bool special = s == "nan" || s == "inf" || s == "-inf" || s == "-0.0";
  if (!special) {
    error = "'" + s + "' is not a value (numbers, \"nan\", \"inf\", \"-inf\", \"-0.0\" or raw bits "
            "\"0x...\")";
    return std::nullopt;
  }
  if (!isFloat(t)) {
    error = "'" + s + "' is not a value of " + std::string(conformanceName(t));
    return std::nullopt;
  }
  if (s == "nan")
    return quietNaNBits(t);
  if (s == "-0.0")
    return negZeroBits(t);
  return infBits(t, s == "-inf");
}

// Range of integer dtype t as __int128.
void intRange(DType t, __int128 &lo, __int128 &hi) {
  unsigned w = bitWidth(t);
  if (t == DType::Bool) {
    lo = 0;
    hi = 1;
  } else if (isSignedInt(t)) {
    hi = (static_cast<__int128>(1) << (w - 1)) - 1;
    lo = -hi - 1;
  } else {
    lo = 0;
    hi = (static_cast<__int128>(1) << w) - 1;
  }
}

std::string int128Text(__int128 v) {
  if (v == 0)
    return "0";
  bool neg = v < 0;
  unsigned __int128 u = neg ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string s;
  while (u) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return neg ? "-" + s : s;
}

std::optional<uint64_t> integerBits(const std::string &text, DType t, std::string &error) {
  __int128 v = 0;
  DecimalInt r = decimalToInt(text, v);
  std::string name(conformanceName(t));
  if (r == DecimalInt::NotInteger) {
    error = text + " is not an integer (dtype " + name + ")";
    return std::nullopt;
  }
  __int128 lo, hi;
  intRange(t, lo, hi);
  if (r == DecimalInt::OutOfRange || v < lo || v > hi) {
    error = text + " does not fit " + name + " [" + int128Text(lo) + ", " + int128Text(hi) + "]";
    return std::nullopt;
  }
  uint64_t mask = bitWidth(t) >= 64 ? ~uint64_t(0) : (uint64_t(1) << bitWidth(t)) - 1;
  if (t == DType::Bool)
    mask = 1;
  return static_cast<uint64_t>(v) & mask;
}

} // namespace

uint64_t quietNaNBits(DType t) {
  switch (t) {
  case DType::F16:
    return 0x7e00;
  case DType::BF16:
    return 0x7fc0;
  case DType::F32:
    return 0x7fc00000;
  case DType::F64:
    return 0x7ff8000000000000ull;
  default:
    return 0;
  }
}

uint64_t infBits(DType t, bool negative) {
  switch (t) {
  case DType::F16:
    return negative ? 0xfc00 : 0x7c00;
  case DType::BF16:
    return negative ? 0xff80 : 0x7f80;
  case DType::F32:
    return negative ? 0xff800000 : 0x7f800000;
  case DType::F64:
    return negative ? 0xfff0000000000000ull : 0x7ff0000000000000ull;
  default:
    return 0;
  }
}

uint64_t negZeroBits(DType t) { return uint64_t(1) << (bitWidth(t) - 1); }

uint64_t decimalToFloatBits(const std::string &text, DType t) {
  if (t == DType::F64)
    return doubleBits(strtodIn(text, FE_TONEAREST));
  double odd = roundToOdd(text);
  switch (t) {
  case DType::F32: {
    float f = static_cast<float>(odd);
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
  }
  case DType::F16:
    return doubleToHalfBits(odd);
  case DType::BF16:
    return doubleToBF16Bits(odd);
  default:
    return 0;
  }
}

DecimalInt decimalToInt(const std::string &text, __int128 &value) {
  size_t i = 0;
  bool neg = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+'))
    neg = text[i++] == '-';
  std::string digits;
  long fracDigits = 0;
  bool inFrac = false;
  for (; i < text.size() && text[i] != 'e' && text[i] != 'E'; ++i) {
    if (text[i] == '.') {
      inFrac = true;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(text[i])))
      return DecimalInt::NotInteger;
    digits += text[i];
    fracDigits += inFrac ? 1 : 0;
  }
  long exp = 0;
  if (i < text.size()) {
    std::string e = text.substr(i + 1);
    if (e.size() > 6)
      return e.find('-') != std::string::npos ? DecimalInt::NotInteger : DecimalInt::OutOfRange;
    exp = std::strtol(e.c_str(), nullptr, 10);
  }
  size_t nz = digits.find_first_not_of('0');
  if (nz == std::string::npos) {
    value = 0;
    return DecimalInt::Ok;
  }
  digits = digits.substr(nz);
  long scale = exp - fracDigits;
  while (scale < 0 && !digits.empty() && digits.back() == '0') {
    digits.pop_back();
    ++scale;
  }
  if (scale < 0)
    return DecimalInt::NotInteger;
  if (static_cast<long>(digits.size()) + scale > 30)
    return DecimalInt::OutOfRange;
  __int128 v = 0;
  for (char c : digits)
    v = v * 10 + (c - '0');
  for (long k = 0; k < scale; ++k)
    v *= 10;
  value = neg ? -v : v;
  return DecimalInt::Ok;
}

bool roundedToInfinity(const Json &v, DType t, uint64_t bits) {
  return isFloat(t) && isNumber(v) && (bits == infBits(t, false) || bits == infBits(t, true));
}

std::optional<uint64_t> elementBits(const Json &v, DType t, std::string &error) {
  if (v.is_boolean()) {
    if (t != DType::Bool) {
      error = "true/false is a value of bool only, not " + std::string(conformanceName(t));
      return std::nullopt;
    }
    return v.get<bool>() ? 1 : 0;
  }
  if (v.is_string())
    return specialString(v.get<std::string>(), t, error);
  if (!isNumber(v)) {
    error = "expected a value, found " + typeName(v) + " " + shortText(v);
    return std::nullopt;
  }
  std::string text = numberText(v);
  if (isFloat(t))
    return decimalToFloatBits(text, t);
  return integerBits(text, t, error);
}

} // namespace tc::conf
