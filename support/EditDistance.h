//===- EditDistance.h - Did-you-mean suggestions for misspelled names -----===//
//
// The Levenshtein distance between two names (insertions, deletions and
// substitutions; a swap of two neighbours counts as one edit), and the closest
// of a set of known names to an unknown one, for "did you mean 'X'?" in
// diagnostics of identifiers, functions, macros, kernels and parameters.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

/// Edits that turn `a` into `b`; stops counting above `limit` (returns limit + 1).
size_t editDistance(std::string_view a, std::string_view b, size_t limit = 64);

/// The candidate closest to `name`, if close enough to be a likely typo: one that
/// differs only in case first, else the nearest at most
/// a third of the name's length in edits (none for one or two letters), and never `name`
/// itself. Ties go to the first candidate. "" when none is.
std::string closestName(std::string_view name, const std::vector<std::string> &candidates);

/// "; did you mean 'X'?" for closestName, or "".
std::string didYouMean(std::string_view name, const std::vector<std::string> &candidates);

} // namespace tc
