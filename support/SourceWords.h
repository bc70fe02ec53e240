//===- SourceWords.h - Which names a source mentions ---------------------===//
//
// The run tools warn about a -D define the source never mentions (a typo such
// as -DBLOKC=128 is otherwise silently ignored). A define counts as used when
// its name appears as an identifier anywhere in the source text or its
// #included files: code, directives (#if, #ifdef, defined(...)), other
// macros' bodies, skipped groups; comments and literals do not count.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

/// Adds the identifiers of C source `text` to `out` (comments, string and
/// character literals and numbers skipped).
void addIdentifiers(std::string_view text, std::set<std::string> &out);

/// One warning text per name of `defines` (NAME or NAME=VALUE, as given after
/// -D) whose name is not in `used`: "-DNAME=VALUE is not used by the source",
/// with "; did you mean -DOTHER?" for a close name of `used`.
std::vector<std::string> unusedDefineWarnings(const std::vector<std::string> &defines,
                                              const std::set<std::string> &used);

} // namespace tc
