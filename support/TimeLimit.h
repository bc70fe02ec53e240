//===- TimeLimit.h - Wall-clock limits without overflow -----------------===//
//
// A time limit given in seconds (--timeout) becomes a deadline on the steady
// clock. The arithmetic saturates: a limit beyond kMaxTimeLimitSeconds (about
// 31 years; std::chrono's nanoseconds overflow near 292 years, and a double of
// 1e10 seconds already overflows a duration_cast) means "no limit". NaN,
// infinite and negative limits are usage errors of the tools (timeLimitProblem).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <chrono>
#include <cmath>
#include <string>

namespace tc {

inline constexpr double kMaxTimeLimitSeconds = 1e9;

/// The deadline `seconds` after `start`; time_point::max() (never) for a limit
/// of kMaxTimeLimitSeconds or more. `seconds` must be > 0 and not NaN.
inline std::chrono::steady_clock::time_point
deadlineAfter(std::chrono::steady_clock::time_point start, double seconds) {
  using Clock = std::chrono::steady_clock;
  if (!(seconds < kMaxTimeLimitSeconds))
    return Clock::time_point::max();
  auto d = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
  if (start > Clock::time_point::max() - d)
    return Clock::time_point::max();
  return start + d;
}

/// "" if `text` is a time limit in seconds a tool accepts (a finite number >= 0;
/// large values saturate), else why not.
inline std::string timeLimitProblem(const std::string &text) {
  try {
    size_t used = 0;
    double v = std::stod(text, &used);
    if (used != text.size())
      return "'" + text + "' is not a number of seconds";
    if (std::isnan(v) || std::isinf(v))
      return "'" + text + "' is not a finite number of seconds";
    if (v < 0)
      return "the time limit must be >= 0, not " + text;
    return "";
  } catch (const std::exception &) {
    return "'" + text + "' is not a number of seconds";
  }
}

} // namespace tc
