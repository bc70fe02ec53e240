//===- Compare.h - Comparing a result buffer with its expected values ----===//
//
// The comparison rules of conformance/FORMAT.md and docs/fuzz.md:
//   - integer and bool buffers: bit-exact, always;
//   - "exact": bit-identical (so -0.0 differs from 0.0), except that any NaN
//     matches any NaN (payload and sign ignored);
//   - tolerance {rtol, atol}: NaN matches only NaN; an infinity matches only
//     the same infinity; otherwise |got - want| <= atol + rtol * |want|,
//     evaluated in binary64 on the exactly decoded values;
//   - {ulp: N}: NaN matches only NaN; infinities must be equal; otherwise the
//     distance in units in the last place of the dtype (the number of
//     representable values between them; -0.0 and +0.0 are 0 apart) is <= N;
//   - default for floats (no `compare`): the dtype's tolerance
//       float16  rtol 1e-3   atol 1e-5
//       bfloat16 rtol 1.6e-2 atol 1e-5
//       float32  rtol 1.3e-6 atol 1e-5
//       float64  rtol 1e-7   atol 1e-7
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Launch.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tc::conf {

struct CompareSpec {
  enum class Kind : uint8_t { Exact, Tolerance, Ulp };
  Kind kind = Kind::Exact;
  double rtol = 0, atol = 0;
  uint64_t ulp = 0;

  static CompareSpec exact() { return {}; }
  static CompareSpec tolerance(double rtol, double atol) { return {Kind::Tolerance, rtol, atol, 0}; }
  static CompareSpec ulps(uint64_t n) { return {Kind::Ulp, 0, 0, n}; }
  /// "exact", "rtol=1e-05 atol=1e-06", "ulp=2".
  std::string str() const;
};

/// The comparison used when a case gives none: exact for ints and bool,
/// the dtype's tolerance for floats (table above).
CompareSpec defaultCompare(DType t);

/// A tolerance given on a command line (--rtol, --atol): each part replaces
/// the dtype's default one (the other part stays the default).
struct ToleranceOverride {
  std::optional<double> rtol, atol;
  bool any() const { return rtol || atol; }
  /// The flags that give it ("--rtol 0.01 --atol 0"; only the parts given).
  std::string flags() const;
};

/// The comparison of a buffer of dtype `t` whose case (or tool) gives none:
/// defaultCompare(t) with the parts of `o` that are given (ints: exact).
CompareSpec defaultCompare(DType t, const ToleranceOverride &o);

/// Why `text` is not a valid --rtol/--atol value ("" when it is: a finite
/// decimal number >= 0, stored in `value`).
std::string toleranceValueProblem(const std::string &text, double &value);

/// Where two buffers first differ.
struct Mismatch {
  std::string output;  // the buffer's name (filled in by the caller)
  int64_t index = -1;  // flat row-major index; -1: the shapes or dtypes differ
  std::string got, want;
  int64_t count = 0;   // how many elements differ
};

/// Whether element bits `got` and `want` of dtype `t` match under `spec`
/// (integer dtypes: always bit-exact, whatever `spec` says).
bool elementsMatch(DType t, uint64_t got, uint64_t want, const CompareSpec &spec);

/// Whether float element bits `got` are within the `ulps` ULPs that a
/// documented GPU bound allows on top of a case's own comparison (the math
/// functions of docs/gpu-numerics.md): as {ulp: ulps}, except that a zero
/// never matches the zero of the other sign (a ULP bound excuses a rounding
/// error, not a wrong sign: "-0.0 differs from 0.0" under "exact" stays so).
/// False for integer dtypes and for ulps == 0.
bool withinExtraUlps(DType t, uint64_t got, uint64_t want, uint64_t ulps);

/// For float buffers that differ under a tolerance spec: the smallest atol,
/// rounded up to two significant digits, with which every element agrees at
/// the spec's rtol (checked by comparing again); nullopt for other specs and
/// dtypes, and when no atol does (a NaN or an infinity differs). What
/// `triton-run --compare` suggests.
std::optional<double> atolThatAgrees(const HostArray &got, const HostArray &want,
                                     const CompareSpec &spec);

/// Compares `got` with `want` element by element; nullopt when they match.
std::optional<Mismatch> compareArrays(const HostArray &got, const HostArray &want,
                                      const CompareSpec &spec);

/// Bit-for-bit equality (for buffers that must be unchanged; NaN payloads count).
std::optional<Mismatch> compareBits(const HostArray &got, const HostArray &want);

/// Units in the last place between two finite or infinite values of float dtype t.
uint64_t ulpDistance(DType t, uint64_t a, uint64_t b);

/// An element for people: ints in decimal; floats as the shortest decimal that
/// reads back to the same value ("nan", "inf", "-inf", "-0.0" as in suites),
/// followed by the bits: "0.1 (0x3dcccccd)".
std::string formatElement(DType t, uint64_t bits);

} // namespace tc::conf
