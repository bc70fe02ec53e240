//===- EditDistance.cpp - Did-you-mean suggestions for misspelled names ---===//
#include "support/EditDistance.h"

#include <algorithm>
#include <cctype>

namespace tc {

size_t editDistance(std::string_view a, std::string_view b, size_t limit) {
  size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > limit)
    return limit + 1;
  // Optimal string alignment distance, three rows.
  std::vector<size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j)
    prev[j] = j;
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    size_t rowMin = cur[0];
    for (size_t j = 1; j <= m; ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
      rowMin = std::min(rowMin, cur[j]);
    }
    if (rowMin > limit)
      return limit + 1;
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return std::min(prev[m], limit + 1);
}

std::string closestName(std::string_view name, const std::vector<std::string> &candidates) {
  // A name that differs only in case is the likeliest (`n` for `N`).
  auto lower = [](std::string_view v) {
    std::string out(v);
    for (char &c : out)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  for (const std::string &c : candidates)
    if (c != name && lower(c) == lower(name))
      return c;
  // Names of one or two letters are too short for a typo to tell: case only.
  size_t limit = name.size() / 3;
  if (limit == 0)
    return "";
  std::string best;
  size_t bestDist = limit + 1;
  for (const std::string &c : candidates) {
    if (c == name || c.empty())
      continue;
    size_t d = editDistance(name, c, limit);
    if (d < bestDist) {
      bestDist = d;
      best = c;
    }
  }
  return best;
}

std::string didYouMean(std::string_view name, const std::vector<std::string> &candidates) {
  std::string best = closestName(name, candidates);
  return best.empty() ? "" : "; did you mean '" + best + "'?";
}

} // namespace tc
