#include "conformance/Json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace tc::conf {

namespace {

constexpr size_t kMaxDepth = 64;

// Builds the DOM from SAX events, keeping float texts and tracking the path.
class DomBuilder {
public:
  DomBuilder(Json &root, const std::string &text) : root_(root), text_(text) {}

  bool null() { return add(Json(nullptr)); }
  bool boolean(bool v) { return add(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return add(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return add(Json(v)); }
  bool number_float(Json::number_float_t, const std::string &text) {
    return add(Json::binary(std::vector<uint8_t>(text.begin(), text.end()), kRawNumberSubtype));
  }
  bool string(std::string &v) { return add(Json(v)); }
  bool binary(Json::binary_t &v) { return add(Json::binary(v)); }

  bool start_object(size_t) { return open(Json::object()); }
  bool start_array(size_t) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(std::string &k) {
    Json &obj = *stack_.back().value;
    stack_.back().key.clear(); // the path of the object itself
    if (obj.contains(k)) {
      std::string p = pathText();
      error_ = p + (p.empty() ? "" : ": ") + "duplicate key '" + k + "'";
      return false;
    }
    stack_.back().key = k;
    return true;
  }

  bool parse_error(size_t position, const std::string &, const nlohmann::detail::exception &ex) {
    error_ = lineColumn(ex.what());
    if (error_.empty())
      error_ = lineColumnAt(position);
    std::string p = pathText();
    if (!p.empty())
      error_ += p + ": ";
    error_ += "malformed JSON: " + message(ex.what());
    if (ex.id == 406) // a float literal beyond binary64
      error_ += "; write \"inf\" or \"-inf\" for infinities";
    return false;
  }

  const std::string &error() const { return error_; }

private:
  struct Frame {
    Json *value;
    std::string key; // the pending key of an object
    size_t index = 0; // the next element of an array
  };

  // Adds a scalar value where the parser is; returns a pointer to it.
  Json *place(Json v) {
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Frame &top = stack_.back();
    if (top.value->is_array()) {
      top.value->push_back(std::move(v));
      ++top.index;
      return &top.value->back();
    }
    Json &slot = (*top.value)[top.key];
    slot = std::move(v);
    return &slot;
  }
  bool add(Json v) {
    place(std::move(v));
    return true;
  }
  bool open(Json container) {
    if (stack_.size() >= kMaxDepth) {
      error_ = pathText() + ": nesting deeper than " + std::to_string(kMaxDepth) + " levels";
      return false;
    }
    // Segment names come from the parent frame before the child is placed.
    Json *child = place(std::move(container));
    stack_.push_back({child, "", 0});
    return true;
  }
  bool close() {
    stack_.pop_back();
    return true;
  }

  // The path of the value being parsed, e.g. "cases[3].args".
  std::string pathText() const {
    std::string p;
    for (size_t i = 0; i < stack_.size(); ++i) {
      const Frame &f = stack_[i];
      if (f.value->is_array()) {
        // The element being parsed is the last one added or the next one.
        bool childOpen = i + 1 < stack_.size();
        size_t idx = childOpen ? f.index - 1 : f.index;
        p += "[" + std::to_string(idx) + "]";
      } else if (!f.key.empty()) {
        p += (p.empty() ? "" : ".") + f.key;
      }
    }
    return p;
  }

  // "LINE:COL: " of the character before byte offset `position`.
  std::string lineColumnAt(size_t position) const {
    size_t end = std::min(position, text_.size());
    size_t line = 1, col = 0;
    for (size_t i = 0; i < end; ++i) {
      col = text_[i] == '\n' ? 0 : col + 1;
      line += text_[i] == '\n' ? 1 : 0;
    }
    return std::to_string(line) + ":" + std::to_string(col) + ": ";
  }

  // "...parse error at line 3, column 7: syntax error ..." -> "3:7: ".
  static std::string lineColumn(std::string_view what) {
    size_t at = what.find("at line ");
    if (at == std::string_view::npos)
      return "";
    size_t comma = what.find(", column ", at);
    size_t colon = what.find(':', at);
    if (comma == std::string_view::npos || colon == std::string_view::npos)
      return "";
    std::string_view line = what.substr(at + 8, comma - at - 8);
    std::string_view col = what.substr(comma + 9, colon - comma - 9);
    return std::string(line) + ":" + std::string(col) + ": ";
  }
  static std::string message(std::string_view what) {
    size_t pos = what.find("parse error");
    if (pos != std::string_view::npos) {
      size_t colon = what.find(": ", pos);
      if (colon != std::string_view::npos)
        return std::string(what.substr(colon + 2));
    }
    size_t bracket = what.find("] ");
    return std::string(bracket == std::string_view::npos ? what : what.substr(bracket + 2));
  }

  Json &root_;
  const std::string &text_;
  std::vector<Frame> stack_;
  std::string error_;
};

bool isRaw(const Json &j) {
  return j.is_binary() && j.get_binary().has_subtype() &&
         j.get_binary().subtype() == kRawNumberSubtype;
}

} // namespace

std::optional<Json> parseJson(const std::string &text, std::string &error) {
  Json root;
  DomBuilder builder(root, text);
  bool ok = Json::sax_parse(text, &builder, Json::input_format_t::json, /*strict=*/true);
  if (!ok) {
    error = builder.error().empty() ? "malformed JSON" : builder.error();
    return std::nullopt;
  }
  return root;
}

bool isNumber(const Json &j) { return j.is_number_integer() || isRaw(j); }

std::string numberText(const Json &j) {
  if (j.is_number_unsigned())
    return std::to_string(j.get<uint64_t>());
  if (j.is_number_integer())
    return std::to_string(j.get<int64_t>());
  if (isRaw(j)) {
    const auto &b = j.get_binary();
    return std::string(b.begin(), b.end());
  }
  return "";
}

std::optional<double> numberValue(const Json &j) {
  if (j.is_number_unsigned())
    return static_cast<double>(j.get<uint64_t>());
  if (j.is_number_integer())
    return static_cast<double>(j.get<int64_t>());
  if (!isRaw(j))
    return std::nullopt;
  std::string t = numberText(j);
  return std::strtod(t.c_str(), nullptr);
}

std::optional<int64_t> intValue(const Json &j) {
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX))
      return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (j.is_number_integer())
    return j.get<int64_t>();
  if (!isRaw(j))
    return std::nullopt;
  // 1e3 is an integer; 1.5 is not; texts past 2^53 are rejected rather than
  // rounded. (Element values use the exact conversions of Value.h instead.)
  std::optional<double> d = numberValue(j);
  if (!d || *d != std::floor(*d) || std::fabs(*d) >= 0x1p53)
    return std::nullopt;
  return static_cast<int64_t>(*d);
}

std::optional<uint64_t> uintValue(const Json &j) {
  if (j.is_number_unsigned())
    return j.get<uint64_t>();
  std::optional<int64_t> v = intValue(j);
  if (!v || *v < 0)
    return std::nullopt;
  return static_cast<uint64_t>(*v);
}

std::string typeName(const Json &j) {
  if (isNumber(j))
    return "number";
  return j.type_name();
}

namespace {
// Compact JSON text with raw numbers as written, stopping after `limit` chars.
void dumpInto(const Json &j, std::string &out, size_t limit) {
  if (out.size() > limit)
    return;
  if (isNumber(j)) {
    out += numberText(j);
  } else if (j.is_array()) {
    out += '[';
    bool first = true;
    for (const Json &e : j) {
      out += first ? "" : ", ";
      first = false;
      dumpInto(e, out, limit);
      if (out.size() > limit)
        return;
    }
    out += ']';
  } else if (j.is_object()) {
    out += '{';
    bool first = true;
    for (const auto &[k, v] : j.items()) {
      out +=
          (first ? "" : ", ") + Json(k).dump(-1, ' ', false, Json::error_handler_t::replace) + ": ";
      first = false;
      dumpInto(v, out, limit);
      if (out.size() > limit)
        return;
    }
    out += '}';
  } else if (j.is_binary()) {
    out += "<binary>";
  } else {
    out += j.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}
} // namespace

std::string shortText(const Json &j) {
  std::string s;
  dumpInto(j, s, 60);
  if (s.size() > 60)
    s = s.substr(0, 57) + "...";
  return s;
}

} // namespace tc::conf
