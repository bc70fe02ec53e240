#include "runtime/Trap.h"

#include <sstream>

namespace tc {

namespace {
constexpr std::string_view kTrapNames[kNumTrapKinds] = {
    "out_of_bounds",     "misaligned",         "division_by_zero",
    "division_overflow", "shift_out_of_range", "float_to_int_out_of_range",
    "undefined_value",   "data_race",          "assertion_failed",
    "step_limit",        "invalid_launch"};
} // namespace

std::string_view trapKindName(TrapKind k) {
  return kTrapNames[static_cast<int>(k)];
}

std::optional<TrapKind> parseTrapKind(std::string_view name) {
  for (int i = 0; i < kNumTrapKinds; ++i)
    if (kTrapNames[i] == name)
      return static_cast<TrapKind>(i);
  return std::nullopt;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d)
    s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

std::string laneText(const std::vector<int64_t> &shape, int64_t flat) {
  if (shape.empty() || flat < 0)
    return "lane " + std::to_string(flat);
  std::vector<int64_t> idx(shape.size());
  int64_t rest = flat;
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? rest % shape[d] : 0;
    rest = shape[d] ? rest / shape[d] : 0;
  }
  std::string s = "lane " + shapeText(idx);
  if (shape.size() > 1)
    s += " (flat " + std::to_string(flat) + ")";
  return s;
}

namespace {
void renderSource(std::ostringstream &os, const std::string &sourceLine, uint32_t line,
                  uint32_t col) {
  if (sourceLine.empty() || !line)
    return;
  os << sourceLine << '\n';
  std::string caret;
  for (uint32_t i = 1; i < col && i - 1 < sourceLine.size(); ++i)
    caret += sourceLine[i - 1] == '\t' ? '\t' : ' ';
  os << caret << "^\n";
}
} // namespace

std::string Trap::render() const {
  std::ostringstream os;
  if (!file.empty() && line)
    os << file << ':' << line << ':' << col << ": ";
  os << "trap: " << trapKindName(kind) << ": " << message << '\n';
  renderSource(os, sourceLine, line, col);
  if (!kernel.empty()) {
    os << "note: in kernel '" << kernel << "'";
    if (hasProgram)
      os << ", program (" << programId[0] << ", " << programId[1] << ", " << programId[2] << ")";
    if (lane >= 0) {
      os << ", " << laneText(laneShape, lane);
      if (!laneShape.empty())
        os << " of a " << shapeText(laneShape) << " tile";
    }
    os << '\n';
  }
  for (const Note &n : notes) {
    if (!n.file.empty() && n.line)
      os << n.file << ':' << n.line << ':' << n.col << ": ";
    os << "note: " << n.text << '\n';
    renderSource(os, n.sourceLine, n.line, n.col);
  }
  return os.str();
}

} // namespace tc
