//===- SourceManager.h - Source files, locations, macro expansions -----===//
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tc {

/// A position in a source file. `file` indexes SourceManager's files; lines and
/// columns start at 1 (column counts bytes). `expansion` is 0 for a token written
/// in the file, else the index of the macro expansion this token came out of.
struct SourceLoc {
  uint32_t file = kNoFile;
  uint32_t line = 0;
  uint32_t col = 0;
  uint32_t expansion = 0;

  static constexpr uint32_t kNoFile = UINT32_MAX;
  bool valid() const { return file != kNoFile; }
};

/// One macro expansion: the token at `spelling` (inside the macro's definition)
/// was produced by expanding macro `macro` at `use` (itself possibly expanded).
struct MacroExpansion {
  std::string macro;
  SourceLoc definition; // where `#define macro` is
  SourceLoc use;        // the macro name at the expansion point
};

/// Owns the text of every file the compilation reads (and of command-line
/// defines, as pseudo-files) and the macro-expansion table.
class SourceManager {
public:
  SourceManager();

  /// Adds an in-memory buffer; returns its file index.
  uint32_t addBuffer(std::string name, std::string text);
  /// Reads a file from disk; on failure returns nullopt and sets `error`.
  std::optional<uint32_t> loadFile(const std::string &path, std::string &error);

  const std::string &name(uint32_t file) const { return files_[file]->name; }
  const std::string &text(uint32_t file) const { return files_[file]->text; }
  size_t numFiles() const { return files_.size(); }
  /// The text of line `line` (1-based) without its newline; empty if out of range.
  std::string_view lineText(uint32_t file, uint32_t line) const;

  uint32_t addExpansion(MacroExpansion e);
  const MacroExpansion &expansion(uint32_t id) const { return expansions_[id]; }
  /// Follows `use` links to the location written in a file (not inside a macro).
  SourceLoc outermost(SourceLoc loc) const;

private:
  struct File {
    std::string name, text;
    std::vector<uint32_t> lineStarts;
  };
  std::vector<std::unique_ptr<File>> files_;
  std::vector<MacroExpansion> expansions_; // [0] is a placeholder for "none"
};

} // namespace tc
