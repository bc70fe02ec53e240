#include "frontend/Defines.h"

#include <algorithm>
#include <cctype>

namespace tc {

namespace {
std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

// Splits a list body at top-level commas (commas inside (), [] or {} stay).
std::optional<std::vector<std::string>> splitList(std::string_view body, std::string &error) {
  std::vector<std::string> items;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= body.size(); ++i) {
    char c = i < body.size() ? body[i] : ',';
    if (c == '(' || c == '[' || c == '{')
      ++depth;
    else if (c == ')' || c == ']' || c == '}')
      --depth;
    if (depth < 0) {
      error = "unbalanced brackets in list value";
      return std::nullopt;
    }
    if (c == ',' && depth == 0) {
      std::string_view item = trim(body.substr(start, i - start));
      if (item.empty()) {
        error = "empty element in list value";
        return std::nullopt;
      }
      items.emplace_back(item);
      start = i + 1;
    }
  }
  if (depth != 0) {
    error = "unbalanced brackets in list value";
    return std::nullopt;
  }
  return items;
}
} // namespace

std::optional<DefineSpec> parseDefine(std::string_view text, std::string &error) {
  DefineSpec spec;
  size_t eq = text.find('=');
  spec.name = std::string(trim(text.substr(0, eq)));
  if (spec.name.empty()) {
    error = "macro name missing in -D" + std::string(text);
    return std::nullopt;
  }
  if (eq == std::string_view::npos) {
    spec.values = {"1"};
    return spec;
  }
  std::string_view value = trim(text.substr(eq + 1));
  if (value.size() >= 2 && value.front() == '[' && value.back() == ']') {
    auto items = splitList(value.substr(1, value.size() - 2), error);
    if (!items)
      return std::nullopt;
    spec.values = std::move(*items);
    spec.isList = true;
    return spec;
  }
  if (!value.empty() && value.front() == '[') {
    error = "list value of '" + spec.name + "' is missing its closing ']'";
    return std::nullopt;
  }
  spec.values = {std::string(text.substr(eq + 1))};
  return spec;
}

std::string variantCountProblem(const std::vector<DefineSpec> &specs) {
  size_t variants = 1;
  for (const DefineSpec &spec : specs) {
    variants *= std::max<size_t>(spec.values.size(), 1);
    if (variants > kMaxVariants)
      return "the list-valued defines give more than " + std::to_string(kMaxVariants) +
             " variants (the product of the list lengths)";
  }
  return "";
}

std::vector<DefineList> expandDefines(const std::vector<DefineSpec> &specs) {
  std::vector<DefineList> result(1);
  for (const DefineSpec &spec : specs) {
    std::vector<DefineList> next;
    for (const DefineList &prefix : result)
      for (const std::string &v : spec.values) {
        DefineList l = prefix;
        l.emplace_back(spec.name, v);
        next.push_back(std::move(l));
      }
    result = std::move(next);
  }
  return result;
}

std::string describeVariant(const std::vector<DefineSpec> &specs, const DefineList &variant) {
  std::string out;
  for (size_t i = 0; i < specs.size() && i < variant.size(); ++i) {
    if (!specs[i].isList)
      continue;
    if (!out.empty())
      out += ' ';
    out += variant[i].first + "=" + variant[i].second;
  }
  return out;
}

} // namespace tc
