#include "support/SourceWords.h"

#include "support/EditDistance.h"

#include <cctype>

namespace tc {

namespace {
bool identStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool identChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}
} // namespace

void addIdentifiers(std::string_view s, std::set<std::string> &out) {
  size_t i = 0, n = s.size();
  while (i < n) {
    char c = s[i];
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      while (i < n && s[i] != '\n')
        ++i;
    } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      size_t end = s.find("*/", i + 2);
      i = end == std::string_view::npos ? n : end + 2;
    } else if (c == '"' || c == '\'') {
      for (++i; i < n && s[i] != c && s[i] != '\n'; ++i)
        if (s[i] == '\\')
          ++i;
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < n && std::isdigit(static_cast<unsigned char>(s[i + 1])))) {
      // A preprocessing number: 0x1F, 1e-5f, 1.5 (its letters are no names).
      for (++i; i < n; ++i) {
        if ((s[i] == '+' || s[i] == '-') &&
            (s[i - 1] == 'e' || s[i - 1] == 'E' || s[i - 1] == 'p' || s[i - 1] == 'P'))
          continue;
        if (!identChar(s[i]) && s[i] != '.')
          break;
      }
    } else if (identStart(c)) {
      size_t start = i;
      while (i < n && identChar(s[i]))
        ++i;
      out.emplace(s.substr(start, i - start));
    } else {
      ++i;
    }
  }
}

std::vector<std::string> unusedDefineWarnings(const std::vector<std::string> &defines,
                                              const std::set<std::string> &used) {
  std::vector<std::string> out;
  std::vector<std::string> candidates(used.begin(), used.end());
  std::set<std::string> seen;
  for (const std::string &d : defines) {
    std::string name = d.substr(0, d.find('='));
    if (name.empty() || used.count(name) || !seen.insert(name).second)
      continue;
    std::string best = closestName(name, candidates);
    out.push_back("-D" + d + " is not used by the source" +
                  (best.empty() ? std::string() : "; did you mean -D" + best + "?"));
  }
  return out;
}

} // namespace tc
