// Integer expressions of launch grids and buffer shapes, and evalGrid (Launch.h).
#include "runtime/GridExpr.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace tc {

namespace {

constexpr int kMaxDepth = 100;

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

bool isNameStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// Recursive-descent evaluator; stops at the first error.
class ExprEval {
public:
  ExprEval(std::string_view text, const ExprEnv &env) : text_(text), env_(env) {}

  std::optional<int64_t> run(std::string &error) {
    auto v = parseExpr(0);
    skipSpace();
    if (v && pos_ < text_.size())
      v = fail("unexpected '" + std::string(1, text_[pos_]) + "'");
    if (!v)
      error = "in '" + std::string(text_) + "': " + error_;
    return v;
  }

private:
  std::optional<int64_t> fail(std::string msg) {
    if (error_.empty())
      error_ = std::move(msg);
    return std::nullopt;
  }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool eat(char c) {
    skipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  char peek() {
    skipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }

  // expr := term (('+' | '-') term)*
  std::optional<int64_t> parseExpr(int depth) {
    auto lhs = parseTerm(depth);
    while (lhs && (peek() == '+' || peek() == '-')) {
      char op = text_[pos_++];
      auto rhs = parseTerm(depth);
      if (!rhs)
        return std::nullopt;
      int64_t r;
      bool overflow = op == '+' ? __builtin_add_overflow(*lhs, *rhs, &r)
                                : __builtin_sub_overflow(*lhs, *rhs, &r);
      if (overflow)
        return fail("integer overflow in " + std::to_string(*lhs) + " " + op + " " +
                    std::to_string(*rhs));
      lhs = r;
    }
    return lhs;
  }

  // term := unary (('*' | '/' | '%') unary)*
  std::optional<int64_t> parseTerm(int depth) {
    auto lhs = parseUnary(depth);
    while (lhs && (peek() == '*' || peek() == '/' || peek() == '%')) {
      char op = text_[pos_++];
      auto rhs = parseUnary(depth);
      if (!rhs)
        return std::nullopt;
      lhs = binary(op, *lhs, *rhs);
    }
    return lhs;
  }

  std::optional<int64_t> binary(char op, int64_t a, int64_t b) {
    std::string what = std::to_string(a) + " " + op + " " + std::to_string(b);
    int64_t r;
    if (op == '*') {
      if (__builtin_mul_overflow(a, b, &r))
        return fail("integer overflow in " + what);
      return r;
    }
    if (b == 0)
      return fail("division by zero in " + what);
    if (a == INT64_MIN && b == -1)
      return fail("integer overflow in " + what);
    return op == '/' ? a / b : a % b;
  }

  // unary := ('-' | '+') unary | primary
  std::optional<int64_t> parseUnary(int depth) {
    if (depth > kMaxDepth)
      return fail("expression nested too deeply");
    if (eat('+'))
      return parseUnary(depth + 1);
    if (eat('-')) {
      auto v = parseUnary(depth + 1);
      if (v && *v == INT64_MIN)
        return fail("integer overflow in -(" + std::to_string(*v) + ")");
      return v ? std::optional<int64_t>(-*v) : std::nullopt;
    }
    return parsePrimary(depth);
  }

  // primary := INT | NAME | FUNC '(' expr ',' expr ')' | '(' expr ')'
  std::optional<int64_t> parsePrimary(int depth) {
    char c = peek();
    if (c == '(') {
      ++pos_;
      auto v = parseExpr(depth + 1);
      if (v && !eat(')'))
        return fail("missing ')'");
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c)))
      return parseInt();
    if (isNameStart(c))
      return parseName(depth);
    if (c == '\0')
      return fail(pos_ == 0 ? "empty expression" : "unexpected end of expression");
    return fail("unexpected '" + std::string(1, c) + "'");
  }

  // INT := [0-9]+ | 0x[0-9a-fA-F]+, then optional u/U/l/L suffixes
  std::optional<int64_t> parseInt() {
    unsigned base = 10;
    if (text_.substr(pos_).starts_with("0x") || text_.substr(pos_).starts_with("0X")) {
      base = 16;
      pos_ += 2;
    }
    size_t start = pos_;
    uint64_t v = 0;
    bool overflow = false;
    while (pos_ < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
      char ch = text_[pos_];
      unsigned d = std::isdigit(static_cast<unsigned char>(ch))
                       ? unsigned(ch - '0')
                       : unsigned(std::tolower(ch) - 'a' + 10);
      if (d >= base)
        break;
      overflow |= __builtin_mul_overflow(v, uint64_t(base), &v) || __builtin_add_overflow(v, d, &v);
      ++pos_;
    }
    if (pos_ == start)
      return fail("malformed number");
    while (pos_ < text_.size() && std::strchr("uUlL", text_[pos_]) && text_[pos_] != '\0')
      ++pos_;
    if (pos_ < text_.size() && isNameChar(text_[pos_]))
      return fail("malformed number '" + std::string(text_.substr(start, pos_ - start + 1)) + "'");
    if (overflow || v > uint64_t(INT64_MAX))
      return fail("number too large: '" + std::string(text_.substr(start, pos_ - start)) + "'");
    return static_cast<int64_t>(v);
  }

  std::optional<int64_t> parseName(int depth) {
    size_t start = pos_;
    while (pos_ < text_.size() && isNameChar(text_[pos_]))
      ++pos_;
    std::string name(text_.substr(start, pos_ - start));
    if (peek() == '(')
      return parseCall(name, depth);
    if (name == "cdiv" || name == "min" || name == "max")
      return fail("'" + name + "' is a function: write " + name + "(a, b)");
    auto it = env_.find(name);
    if (it == env_.end())
      return fail("unknown name '" + name + "'; " + available());
    if (!it->second.value)
      return fail("'" + name + "' is not an integer (" + it->second.whyNot + ")");
    return *it->second.value;
  }

  // FUNC '(' expr ',' expr ')'
  std::optional<int64_t> parseCall(const std::string &name, int depth) {
    if (name != "cdiv" && name != "min" && name != "max")
      return fail("unknown function '" + name + "' (available: cdiv, min, max)");
    ++pos_; // '('
    auto a = parseExpr(depth + 1);
    if (!a)
      return std::nullopt;
    if (!eat(','))
      return fail(name + "() takes two arguments");
    auto b = parseExpr(depth + 1);
    if (!b)
      return std::nullopt;
    if (!eat(')'))
      return fail(peek() == ',' ? name + "() takes two arguments"
                                : "missing ')' after " + name + "(");
    if (name == "min")
      return std::min(*a, *b);
    if (name == "max")
      return std::max(*a, *b);
    return ceilDiv(*a, *b);
  }

  std::optional<int64_t> ceilDiv(int64_t a, int64_t b) {
    if (b == 0)
      return fail("division by zero in cdiv(" + std::to_string(a) + ", 0)");
    if (a == INT64_MIN && b == -1)
      return fail("integer overflow in cdiv(" + std::to_string(a) + ", -1)");
    int64_t q = a / b, r = a % b;
    if (r != 0 && ((r > 0) == (b > 0)))
      ++q;
    return q;
  }

  /// The integer-valued names with their values.
  std::string available() const {
    std::string s;
    for (const auto &[name, v] : env_)
      if (v.value)
        s += (s.empty() ? "" : ", ") + name + " = " + std::to_string(*v.value);
    return s.empty() ? "no integer names are available here" : "available: " + s;
  }

  std::string_view text_;
  const ExprEnv &env_;
  size_t pos_ = 0;
  std::string error_;
};

} // namespace

std::optional<int64_t> evalIntExpr(std::string_view text, const ExprEnv &env, std::string &error) {
  return ExprEval(text, env).run(error);
}

ExprEnv makeExprEnv(const DefineList &defines, const LaunchArgs &args) {
  ExprEnv env;
  const ExprEnv none;
  for (const auto &[name, value] : defines) {
    std::string ignored;
    ExprName n;
    n.value = evalIntExpr(value, none, ignored);
    if (!n.value)
      n.whyNot = "the define's value is '" + value + "'";
    env[name] = n;
  }
  for (const auto &[name, v] : args.scalars()) {
    ExprName n;
    if (isFloat(v.dtype))
      n.whyNot = "it is a " + std::string(conformanceName(v.dtype)) + " scalar";
    else if (isUnsignedInt(v.dtype) && v.bits > uint64_t(INT64_MAX))
      n.whyNot = "its value does not fit int64";
    else
      n.value = v.asInt();
    env[name] = n;
  }
  for (const auto &[name, b] : args.buffers())
    env[name] = ExprName{std::nullopt, "it is a buffer"};
  return env;
}

ExprEnv makeExprEnv(const CompiledKernel &kernel, const LaunchArgs &args) {
  ExprEnv env = makeExprEnv(kernel.defines(), args);
  for (const auto &[name, value] : kernel.sourceDefines())
    env.try_emplace(name, ExprName{value, ""}); // -D and arguments first
  return env;
}

std::vector<std::string> splitTopLevel(std::string_view text, char sep) {
  std::vector<std::string> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    char c = i < text.size() ? text[i] : sep;
    if (c == '(' || c == '[')
      ++depth;
    else if ((c == ')' || c == ']') && depth > 0)
      --depth;
    if (c == sep && (depth == 0 || i == text.size())) {
      parts.emplace_back(trim(text.substr(start, i - start)));
      start = i + 1;
    }
  }
  return parts;
}

GridSpec parseGridSpec(std::string_view text) {
  return GridSpec{splitTopLevel(text, ',')};
}

GridOutcome evalGrid(const GridSpec &spec, const CompiledKernel &kernel, const LaunchArgs &args) {
  GridOutcome out;
  if (spec.dims.empty() || spec.dims.size() > 3) {
    out.error = "a grid has 1 to 3 dimensions, got " + std::to_string(spec.dims.size());
    return out;
  }
  ExprEnv env = makeExprEnv(kernel, args);
  std::array<int64_t, 3> dims{1, 1, 1};
  static const char *axis[] = {"x", "y", "z"};
  for (size_t i = 0; i < spec.dims.size(); ++i) {
    std::string error;
    auto v = evalIntExpr(spec.dims[i], env, error);
    std::string where = "grid dimension " + std::to_string(i) + " (" + axis[i] + ")";
    if (!v) {
      out.error = where + ": " + error;
      return out;
    }
    if (*v < 1) {
      out.error = where + " '" + spec.dims[i] + "' is " + std::to_string(*v) +
                  "; every grid dimension must be at least 1";
      return out;
    }
    dims[i] = *v;
  }
  out.dims = dims;
  return out;
}

} // namespace tc
