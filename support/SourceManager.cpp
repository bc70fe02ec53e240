#include "support/SourceManager.h"
#include "support/FileIO.h"

namespace tc {

SourceManager::SourceManager() { expansions_.push_back({}); }

uint32_t SourceManager::addBuffer(std::string name, std::string text) {
  auto f = std::make_unique<File>();
  f->name = std::move(name);
  f->text = std::move(text);
  f->lineStarts.push_back(0);
  for (size_t i = 0; i < f->text.size(); ++i)
    if (f->text[i] == '\n')
      f->lineStarts.push_back(static_cast<uint32_t>(i + 1));
  files_.push_back(std::move(f));
  return static_cast<uint32_t>(files_.size() - 1);
}

std::optional<uint32_t> SourceManager::loadFile(const std::string &path, std::string &error) {
  std::string text;
  if (!readFileCapped(path, kMaxSourceFileBytes, text, error))
    return std::nullopt;
  return addBuffer(path, std::move(text));
}

std::string_view SourceManager::lineText(uint32_t file, uint32_t line) const {
  if (file >= files_.size())
    return {};
  const File &f = *files_[file];
  if (line == 0 || line > f.lineStarts.size())
    return {};
  size_t begin = f.lineStarts[line - 1];
  size_t end = f.text.find('\n', begin);
  if (end == std::string::npos)
    end = f.text.size();
  if (end > begin && f.text[end - 1] == '\r')
    --end;
  return std::string_view(f.text).substr(begin, end - begin);
}

uint32_t SourceManager::addExpansion(MacroExpansion e) {
  expansions_.push_back(std::move(e));
  return static_cast<uint32_t>(expansions_.size() - 1);
}

SourceLoc SourceManager::outermost(SourceLoc loc) const {
  while (loc.expansion != 0)
    loc = expansions_[loc.expansion].use;
  return loc;
}

} // namespace tc
