#include "runtime/Trap.h"

#include <sstream>

namespace tc {

namespace {
constexpr std::string_view kTrapNames[kNumTrapKinds] = {
    "out_of_bounds",   "misaligned",      "division_by_zero",
    "division_overflow", "shift_out_of_range", "float_to_int_out_of_range",
    "undefined_value", "assertion_failed", "step_limit",
    "invalid_launch"};
} // namespace

std::string_view trapKindName(TrapKind k) { return kTrapNames[static_cast<int>(k)]; }

std::optional<TrapKind> parseTrapKind(std::string_view name) {
  for (int i = 0; i < kNumTrapKinds; ++i)
    if (kTrapNames[i] == name)
      return static_cast<TrapKind>(i);
  return std::nullopt;
}

std::string Trap::render() const {
  std::ostringstream os;
  if (!file.empty() && line)
    os << file << ':' << line << ':' << col << ": ";
  os << "trap: " << trapKindName(kind) << ": " << message << '\n';
  if (!sourceLine.empty() && line) {
    os << sourceLine << '\n';
    std::string caret;
    for (uint32_t i = 1; i < col && i - 1 < sourceLine.size(); ++i)
      caret += sourceLine[i - 1] == '\t' ? '\t' : ' ';
    os << caret << "^\n";
  }
  if (!kernel.empty()) {
    os << "note: in kernel '" << kernel << "'";
    if (hasProgram)
      os << ", program (" << programId[0] << ", " << programId[1] << ", " << programId[2] << ")";
    if (lane >= 0)
      os << ", lane " << lane;
    os << '\n';
  }
  return os.str();
}

} // namespace tc
