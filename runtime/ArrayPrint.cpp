// NumPy-like text of a host array (ArrayPrint.h).
#include "runtime/ArrayPrint.h"

#include "support/ValueBits.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tc {

namespace {

std::string printfDouble(const char *fmt, int digits, double v) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, digits, v);
  return buf;
}

/// Whether `text` reads back as the same value in float dtype `t`.
bool roundTrips(const std::string &text, DType t, uint64_t bits) {
  double back = std::strtod(text.c_str(), nullptr);
  return num::floatBits(t, back) == bits;
}

/// The fewest digits (< maxDigits) after the point (fixed) or in the mantissa
/// (exp) that give back the value; maxDigits when none does.
int fewestDigits(double v, DType t, uint64_t bits, bool exp, int maxDigits = 8) {
  for (int d = 0; d < maxDigits; ++d)
    if (roundTrips(printfDouble(exp ? "%.*e" : "%.*f", d, v), t, bits))
      return d;
  return maxDigits;
}

/// Fixed notation with `digits` fraction digits, trailing zeros kept.
std::string fixed(double v, int digits) {
  std::string s = printfDouble("%.*f", digits, v);
  if (digits == 0)
    s += '.';
  return s;
}

std::string nonFinite(double v) {
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

/// Formats every shown element of a float array with common alignment.
class FloatFormat {
public:
  FloatFormat(const HostArray &a, const std::vector<int64_t> &shown) : a_(a) {
    double maxAbs = 0, minAbs = INFINITY;
    for (int64_t i : shown) {
      double v = a.getDouble(i);
      if (!std::isfinite(v) || v == 0)
        continue;
      maxAbs = std::max(maxAbs, std::fabs(v));
      minAbs = std::min(minAbs, std::fabs(v));
    }
    exp_ = maxAbs > 0 && (maxAbs >= 1e8 || minAbs < 1e-4 || maxAbs / minAbs > 1e3);
    for (int64_t i : shown) {
      double v = a.getDouble(i);
      if (!std::isfinite(v))
        continue;
      int d = fewestDigits(v, a.dtype, a.getBits(i), exp_);
      if (!exp_ && d == 8) { // trailing zeros of the 8-digit form do not count
        std::string s = fixed(v, 8);
        while (d > 0 && s.back() == '0') {
          s.pop_back();
          --d;
        }
      }
      digits_ = std::max(digits_, d);
      if (!exp_) {
        std::string s = fixed(v, d);
        intWidth_ = std::max(intWidth_, s.find('.'));
      }
    }
    for (int64_t i : shown)
      width_ = std::max(width_, raw(i).size());
  }

  std::string operator()(int64_t i) const {
    std::string s = raw(i);
    return std::string(width_ - s.size(), ' ') + s;
  }

private:
  // Unpadded on the left; in fixed notation padded on the right to align the points.
  std::string raw(int64_t i) const {
    double v = a_.getDouble(i);
    if (!std::isfinite(v))
      return nonFinite(v);
    if (exp_)
      return printfDouble(digits_ == 0 ? "%#.*e" : "%.*e", digits_, v);
    std::string s = fixed(v, fewestFixed(v, i));
    size_t point = s.find('.');
    size_t frac = s.size() - point - 1;
    return std::string(intWidth_ > point ? intWidth_ - point : 0, ' ') + s +
           std::string(size_t(digits_) - frac, ' ');
  }

  int fewestFixed(double v, int64_t i) const {
    int d = fewestDigits(v, a_.dtype, a_.getBits(i), false);
    if (d == 8) {
      std::string s = fixed(v, 8);
      while (d > 0 && s.back() == '0') {
        s.pop_back();
        --d;
      }
    }
    return d;
  }

  const HostArray &a_;
  bool exp_ = false;
  int digits_ = 0;
  size_t intWidth_ = 0, width_ = 0;
};

/// Writes the nested brackets, summarising long axes.
class ArrayWriter {
public:
  ArrayWriter(const HostArray &a, const ArrayPrintOptions &opts)
      : a_(a), opts_(opts), summarise_(opts.threshold >= 0 && a.numElements() > opts.threshold) {
    strides_.assign(a.shape.size(), 1);
    for (size_t k = a.shape.size(); k-- > 1;)
      strides_[k - 1] = strides_[k] * a.shape[k];
    collect(0, 0);
    if (isFloat(a.dtype))
      floatFormat_.emplace(a, shown_);
    for (int64_t i : shown_)
      width_ = std::max(width_, element(i).size());
  }

  std::string write() {
    if (a_.shape.empty()) // NumPy shows a 0-d array as its scalar: every digit it needs
      return formatElement(a_, 0);
    std::string out;
    size_t col = 0;
    writeAxis(out, col, 0, 0, "");
    return out;
  }

private:
  /// The positions shown along an axis of length n; -1 marks "...".
  std::vector<int64_t> positions(int64_t n) const {
    std::vector<int64_t> p;
    if (summarise_ && n > 2 * opts_.edgeItems) {
      for (int64_t i = 0; i < opts_.edgeItems; ++i)
        p.push_back(i);
      p.push_back(-1);
      for (int64_t i = n - opts_.edgeItems; i < n; ++i)
        p.push_back(i);
    } else {
      for (int64_t i = 0; i < n; ++i)
        p.push_back(i);
    }
    return p;
  }

  void collect(size_t axis, int64_t base) {
    if (axis == a_.shape.size()) {
      shown_.push_back(base);
      return;
    }
    for (int64_t p : positions(a_.shape[axis]))
      if (p >= 0)
        collect(axis + 1, base + p * strides_[axis]);
  }

  std::string element(int64_t i) const {
    if (floatFormat_)
      return (*floatFormat_)(i);
    return formatElement(a_, i);
  }

  std::string padded(int64_t i) const {
    std::string s = element(i);
    return std::string(width_ > s.size() ? width_ - s.size() : 0, ' ') + s;
  }

  void writeAxis(std::string &out, size_t &col, size_t axis, int64_t base,
                 const std::string &indent) {
    out += '[';
    ++col;
    std::vector<int64_t> pos = positions(a_.shape[axis]);
    bool last = axis + 1 == a_.shape.size();
    for (size_t k = 0; k < pos.size(); ++k) {
      if (last) {
        std::string word = pos[k] < 0 ? "..." : padded(base + pos[k] * strides_[axis]);
        if (k > 0 && col + 1 + word.size() + 1 > opts_.lineWidth) {
          out += "\n" + indent + " ";
          col = indent.size() + 1;
        } else if (k > 0) {
          out += ' ';
          ++col;
        }
        out += word;
        col += word.size();
        continue;
      }
      if (k > 0) {
        out += std::string(a_.shape.size() - axis - 1, '\n') + indent + " ";
        col = indent.size() + 1;
      }
      if (pos[k] < 0) {
        out += "...";
        col += 3;
        continue;
      }
      writeAxis(out, col, axis + 1, base + pos[k] * strides_[axis], indent + " ");
    }
    out += ']';
    ++col;
  }

  const HostArray &a_;
  ArrayPrintOptions opts_;
  bool summarise_;
  std::vector<int64_t> strides_, shown_;
  std::optional<FloatFormat> floatFormat_;
  size_t width_ = 0;
};

} // namespace

std::string formatArray(const HostArray &a, const ArrayPrintOptions &opts) {
  if (a.numElements() == 0)
    return "[]";
  return ArrayWriter(a, opts).write();
}

std::string formatElement(const HostArray &a, int64_t index) {
  uint64_t bits = a.getBits(index);
  if (a.dtype == DType::Bool)
    return bits ? "True" : "False";
  if (a.dtype == DType::U64)
    return std::to_string(bits);
  if (!isFloat(a.dtype))
    return std::to_string(static_cast<long long>(num::intValue(a.dtype, bits)));
  double v = num::floatValue(a.dtype, bits);
  if (!std::isfinite(v))
    return nonFinite(v);
  bool exp = v != 0 && (std::fabs(v) >= 1e8 || std::fabs(v) < 1e-4);
  // Unlike an array's elements (NumPy's 8 digits), one element shows every
  // digit its value needs: 17 significant digits give back any float64, that
  // is 16 after the mantissa's point, or at most 20 after the point when
  // 1e-4 <= |v| < 1e8 (the first significant digit is at most the 4th).
  int d = fewestDigits(v, a.dtype, bits, exp, exp ? 16 : 21);
  if (exp)
    return printfDouble(d == 0 ? "%#.*e" : "%.*e", d, v);
  return fixed(v, d);
}

} // namespace tc
