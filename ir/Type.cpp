#include "ir/Type.h"

#include <charconv>

namespace tc::ir {

int64_t Type::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string Type::str() const {
  std::string elem = isPtr ? "!ptr<" + std::string(irName(dtype)) + ">" : std::string(irName(dtype));
  if (shape.empty())
    return elem;
  std::string s = "tile<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + elem + ">";
}

std::string Type::langStr() const {
  std::string s(langName(dtype));
  if (isPtr)
    s += "*";
  if (!shape.empty())
    s += shapeStr(shape);
  return s;
}

std::string shapeStr(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

namespace {
std::optional<Type> parseElement(std::string_view t) {
  if (t.starts_with("!ptr<") && t.ends_with(">")) {
    auto d = parseIrName(t.substr(5, t.size() - 6));
    if (!d)
      return std::nullopt;
    return Type::ptr(*d);
  }
  auto d = parseIrName(t);
  if (!d)
    return std::nullopt;
  return Type::scalar(*d);
}
} // namespace

std::optional<Type> parseType(std::string_view text) {
  if (!text.starts_with("tile<"))
    return parseElement(text);
  if (!text.ends_with(">"))
    return std::nullopt;
  std::string_view body = text.substr(5, text.size() - 6);
  Shape shape;
  while (!body.empty() && body[0] >= '0' && body[0] <= '9') {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
    if (ec != std::errc() || p == body.data() + body.size() || *p != 'x' || v <= 0)
      return std::nullopt;
    shape.push_back(v);
    body.remove_prefix(static_cast<size_t>(p - body.data()) + 1);
  }
  if (shape.empty())
    return std::nullopt;
  auto elem = parseElement(body);
  if (!elem)
    return std::nullopt;
  return elem->withShape(std::move(shape));
}

std::optional<Shape> broadcastShapes(const Shape &a, const Shape &b, int *badAxis) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      if (badAxis)
        *badAxis = static_cast<int>(i);
      return std::nullopt;
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

} // namespace tc::ir
