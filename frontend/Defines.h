//===- Defines.h - Command-line defines, incl. list-valued ones ---------===//
//
// `-DTM=64`, `-DTYPE=float`, `-DDEBUG` and the tutorial's list form,
// `-DTM=[32, 64, 128]`, which the tools expand into one compilation per
// combination (the Cartesian product of every list, the first list varying
// slowest).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tc {

struct DefineSpec {
  std::string name;
  std::vector<std::string> values; // one value unless `isList`
  bool isList = false;
};

using DefineList = std::vector<std::pair<std::string, std::string>>;

/// Parses `NAME`, `NAME=VALUE` or `NAME=[v1, v2, ...]` (the text after -D).
/// Returns nullopt and sets `error` when malformed (empty name, unbalanced
/// brackets, empty list, empty list element).
std::optional<DefineSpec> parseDefine(std::string_view text, std::string &error);

/// The most variants one command line or conformance case may expand to.
inline constexpr size_t kMaxVariants = 4096;

/// "" when the product of the list lengths of `specs` is at most kMaxVariants,
/// else the message ("-D lists give more than 4096 variants ...").
std::string variantCountProblem(const std::vector<DefineSpec> &specs);

/// The Cartesian product of all list values, in command-line order (check
/// variantCountProblem first: the product is not bounded here).
std::vector<DefineList> expandDefines(const std::vector<DefineSpec> &specs);

/// "TM=32 TN=64" for the list-valued names of `specs` in `variant` (for headers and notes).
std::string describeVariant(const std::vector<DefineSpec> &specs, const DefineList &variant);

} // namespace tc
