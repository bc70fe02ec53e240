//===- Preprocessor.cpp - The C preprocessor of Triton-C ---------------===//
//
// The driver of the preprocessor: predefined and command-line macros, the
// stack of files, #include and the dispatch of directives. See PPInternal.h
// for the other parts.
//
//===----------------------------------------------------------------------===//
#include "frontend/Preprocessor.h"
#include "frontend/PPInternal.h"
#include "frontend/PPExpr.h"
#include "frontend/PPLexer.h"
#include "frontend/StackGuard.h"
#include "support/FileIO.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

namespace tc {

namespace pp {

namespace {

/// Macros every compilation starts with (as the 2019 Triton-C compiler had).
constexpr const char *kBuiltinDefines = R"(#define __multipleof(N) __attribute__((multipleof(N)))
#define __aligned(N) __attribute__((aligned(N)))
#define __noalias __attribute__((noalias))
#define __readonly __attribute__((readonly))
#define __writeonly __attribute__((writeonly))
#define __retune __attribute__((retune))
#define F32_INFINITY bitcast<float>(0x7F800000)
#define F16_INFINITY bitcast<half>((int16)0x7C00)
#define int8 char
#define int16 short
#define int32 int
#define int64 long
#define uint8 unsigned char
#define uint16 unsigned short
#define uint32 unsigned int
#define uint64 unsigned long
#define __TRITON_C__ 1
)";

bool isIdentifierText(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

/// Directive text for #error/#warning: the tokens' spellings, spaced as written.
std::string joinTokens(const std::vector<Token> &toks, size_t from) {
  std::string s;
  for (size_t i = from; i < toks.size(); ++i) {
    if (i > from && toks[i].leadingSpace)
      s += ' ';
    s += toks[i].text;
  }
  return s;
}

std::string normalizedPath(const std::string &path) {
  return std::filesystem::path(path).lexically_normal().string();
}

} // namespace

PPState::PPState(const PreprocessorOptions &opts, SourceManager &sm, DiagEngine &diags)
    : opts_(opts), sm_(sm), diags_(diags) {}

MacroPtr PPState::findMacro(const std::string &name) const {
  auto it = macros_.find(name);
  return it == macros_.end() ? nullptr : it->second;
}

// The main loop: expanded tokens of `mainFile`, keywords classified, eof last.
std::vector<Token> PPState::run(uint32_t mainFile) {
  namespace fs = std::filesystem;
  mainFile_ = mainFile;
  auto resolved = [](const std::string &dir) {
    std::error_code ec;
    fs::path p = fs::weakly_canonical(fs::absolute(dir.empty() ? "." : dir, ec), ec);
    if (p.has_relative_path() && p.filename().empty()) // "/a/b/" -> "/a/b"
      p = p.parent_path();
    return p.string();
  };
  if (!opts_.mainIsText)
    includeRoots_.push_back(resolved(fs::path(sm_.name(mainFile)).parent_path().string()));
  for (const std::string &dir : opts_.includeDirs)
    includeRoots_.push_back(resolved(dir));
  defineBuiltins();
  addCommandLine();
  auto toks = std::make_shared<const std::vector<Token>>(
      lexBuffer(sm_.text(mainFile), mainFile, &diags_, LexErrorMode::Defer));
  Token eof = toks->back();
  std::string key = normalizedPath(sm_.name(mainFile));
  fileCache_[key] = {mainFile, toks};
  files_.push_back({mainFile, toks, 0, {}, key});
  std::vector<Token> out;
  out.reserve(toks->size());
  MacroExpander ex(*this, true);
  for (Token t = ex.next(); t.isNot(TokKind::eof); t = ex.next()) {
    if (t.is(TokKind::unknown))
      reportUnknownToken(t, t.loc, diags_);
    if (t.is(TokKind::identifier))
      t.kind = keywordKind(t.text);
    out.push_back(std::move(t));
  }
  out.push_back(std::move(eof));
  return out;
}

// `m`'s replacement list with every object-like macro replaced by its own
// (recursively, bounded): false when a token cannot be part of an integer
// constant expression (another identifier, a function-like macro, a string).
bool PPState::substituteObjectLike(const Macro &m, std::vector<Token> &out, unsigned depth) {
  constexpr unsigned kMaxDepth = 32;
  constexpr size_t kMaxTokens = 1024;
  if (depth > kMaxDepth || m.functionLike || m.builtin != Macro::Builtin::None || m.body.empty())
    return false;
  for (const Token &t : m.body) {
    if (out.size() >= kMaxTokens)
      return false;
    if (t.is(TokKind::identifier)) {
      MacroPtr inner = findMacro(t.text);
      if (!inner || !substituteObjectLike(*inner, out, depth + 1))
        return false;
      continue;
    }
    if (t.is(TokKind::string_literal) || t.is(TokKind::char_constant) ||
        t.is(TokKind::unknown) || t.is(TokKind::hash) || t.is(TokKind::hashhash))
      return false;
    out.push_back(t);
  }
  return true;
}

std::map<std::string, int64_t> PPState::integerMacros() {
  std::map<std::string, int64_t> result;
  DiagEngine scratch(sm_); // a value that is no integer is just left out
  scratch.setOutput(nullptr);
  for (const auto &[name, m] : macros_) {
    if (!m || std::find(pseudoFiles_.begin(), pseudoFiles_.end(), m->defLoc.file) !=
                  pseudoFiles_.end())
      continue;
    std::vector<Token> toks;
    if (!substituteObjectLike(*m, toks, 0))
      continue;
    if (std::optional<int64_t> v = evaluatePPExpr(toks, after(toks.back()), scratch))
      result[name] = *v;
  }
  return result;
}

// Reads a pseudo-file of directives (<built-in>, <command line>).
void PPState::runPseudoFile(uint32_t file) {
  pseudoFiles_.push_back(file);
  auto toks = std::make_shared<const std::vector<Token>>(
      lexBuffer(sm_.text(file), file, &diags_, LexErrorMode::Defer));
  files_.push_back({file, toks, 0, {}, ""});
  MacroExpander ex(*this, true);
  for (Token t = ex.next(); t.isNot(TokKind::eof); t = ex.next()) {
  }
  files_.clear();
}

// __FILE__, __LINE__ and the macros of <built-in>.
void PPState::defineBuiltins() {
  for (auto [name, kind] :
       {std::pair{"__FILE__", Macro::Builtin::File}, std::pair{"__LINE__", Macro::Builtin::Line}}) {
    auto m = std::make_shared<Macro>();
    m->name = name;
    m->builtin = kind;
    macros_[name] = m;
  }
  runPseudoFile(sm_.addBuffer("<built-in>", kBuiltinDefines));
}

// -D NAME=VALUE as `#define NAME VALUE` (NAME may be `F(x)`), then -U NAME,
// each in its own "<command line>" pseudo-file.
void PPState::addCommandLine() {
  auto oneLine = [](std::string s) {
    for (char &c : s)
      if (c == '\n' || c == '\r')
        c = ' ';
    return s;
  };
  for (const auto &[name, value] : opts_.defines) {
    std::string text = "#define " + oneLine(name) + " " + oneLine(value) + " \n";
    uint32_t file = sm_.addBuffer("<command line>", text);
    std::string_view head = std::string_view(name).substr(0, name.find('('));
    if (!isIdentifierText(head)) {
      diags_.report(DiagId::err_pp_macro_name_not_identifier, SourceLoc{file, 1, 9, 0}, {},
                    static_cast<uint32_t>(std::max<size_t>(head.size(), 1)));
      continue;
    }
    runPseudoFile(file);
  }
  for (const std::string &name : opts_.undefines)
    runPseudoFile(sm_.addBuffer("<command line>", "#undef " + oneLine(name) + " \n"));
}

// Reads the open files; see PPInternal.h.
bool PPState::nextFileToken(Token &t) {
  while (!files_.empty() && !stopped()) {
    FileState &fs = files_.back();
    const Token &tok = (*fs.toks)[fs.pos];
    if (tok.is(TokKind::eof)) {
      endOfFile();
      continue;
    }
    ++fs.pos;
    if (tok.is(TokKind::hash) && tok.atLineStart) {
      handleDirective();
      continue;
    }
    t = tok;
    return true;
  }
  return false;
}

const Token *PPState::peekArgFileToken(bool &atDirective) const {
  atDirective = false;
  if (files_.empty() || stopped())
    return nullptr;
  const FileState &fs = files_.back();
  const Token &tok = (*fs.toks)[fs.pos];
  atDirective = tok.is(TokKind::hash) && tok.atLineStart;
  return tok.is(TokKind::eof) || atDirective ? nullptr : &tok;
}

std::vector<Token> PPState::expandIsolated(const std::vector<Token> &toks, SourceLoc useLoc,
                                           bool ifMode) {
  if (toks.empty())
    return {};
  // (The thread's stack may end before the limit: then the depth reached is it.)
  if (isolatedDepth_ >= kMaxExpansionDepth || stackNearlyExhausted()) {
    diags_.report(DiagId::err_pp_expansion_too_deep, useLoc, {std::to_string(isolatedDepth_)});
    fatal_ = true;
    return toks;
  }
  // Each nesting level copies its argument: counted as expansion work, so that
  // f(f(f(...))) over a large source stops before the copies add up.
  if (!noteExpandedTokens(toks.size(), useLoc))
    return toks;
  ++isolatedDepth_;
  MacroExpander ex(*this, false, toks, ifMode);
  std::vector<Token> out;
  for (Token t = ex.next(); t.isNot(TokKind::eof); t = ex.next())
    out.push_back(std::move(t));
  --isolatedDepth_;
  return out;
}

bool PPState::expansionFits(size_t n, SourceLoc loc) {
  if (!fatal_ && expandedTokens_ + n <= kMaxExpandedTokens)
    return true;
  if (!fatal_)
    diags_.report(DiagId::err_pp_expansion_too_large, loc, {std::to_string(kMaxExpandedTokens)});
  fatal_ = true;
  return false;
}

bool PPState::noteExpandedTokens(size_t n, SourceLoc loc) {
  expandedTokens_ += n;
  if (expandedTokens_ <= kMaxExpandedTokens)
    return true;
  if (!fatal_)
    diags_.report(DiagId::err_pp_expansion_too_large, loc, {std::to_string(kMaxExpandedTokens)});
  fatal_ = true;
  return false;
}

// The rest of the current directive line (consumed).
std::vector<Token> PPState::readLine() {
  FileState &fs = files_.back();
  std::vector<Token> line;
  while ((*fs.toks)[fs.pos].isNot(TokKind::eof) && !(*fs.toks)[fs.pos].atLineStart)
    line.push_back((*fs.toks)[fs.pos++]);
  return line;
}

// At the end of a file: its open #if groups are errors; back to the includer.
void PPState::endOfFile() {
  for (const CondState &c : files_.back().conds)
    diags_.report(DiagId::err_pp_unterminated_conditional, c.ifLoc, {}, 3);
  files_.pop_back();
}

// After a '#' at the start of a line: reads the line and dispatches on the name.
void PPState::handleDirective() {
  std::vector<Token> line = readLine();
  if (line.empty())
    return; // the null directive
  const Token &name = line[0];
  const std::string &d = name.text;
  if (name.isNot(TokKind::identifier)) {
    diags_.report(DiagId::err_pp_invalid_directive, name.loc, {d}, name.length());
  } else if (d == "define") {
    handleDefine(line);
  } else if (d == "undef") {
    handleUndef(line);
  } else if (d == "include") {
    handleInclude(line);
  } else if (d == "if") {
    handleIf(line);
  } else if (d == "ifdef" || d == "ifndef") {
    handleIfdef(line, d == "ifdef");
  } else if (d == "elif" || d == "else") {
    handleElse(line);
  } else if (d == "endif") {
    handleEndif(line);
  } else if (d == "error" || d == "warning") {
    handleDiagnostic(line, d == "error");
  } else if (d == "pragma") {
    handlePragma(line);
  } else if (d == "line") {
    diags_.report(DiagId::err_not_supported, name.loc, {"#line"}, name.length());
  } else {
    diags_.report(DiagId::err_pp_invalid_directive, name.loc, {d}, name.length());
  }
}

// #include "file" (also after macro expansion); <file> is not supported.
void PPState::handleInclude(const std::vector<Token> &line) {
  std::vector<Token> arg(line.begin() + 1, line.end());
  if (!arg.empty() && arg[0].isNot(TokKind::string_literal) && arg[0].isNot(TokKind::less))
    arg = expandIsolated(arg, arg[0].loc);
  if (arg.empty() || arg[0].isNot(TokKind::string_literal)) {
    if (!arg.empty() && arg[0].is(TokKind::less))
      diags_.report(DiagId::err_not_supported, arg[0].loc,
                    {"#include <...>; use #include \"...\""});
    else
      diags_.report(DiagId::err_pp_include_expects_filename,
                    arg.empty() ? after(line[0]) : arg[0].loc);
    return;
  }
  const Token &nameTok = arg[0];
  warnExtraTokens(arg, 1, "include");
  std::string name = nameTok.text.substr(1, nameTok.text.size() - 2);
  std::string path;
  IncludeSearch found = name.empty() ? IncludeSearch::NotFound : findIncludeFile(name, path);
  if (found != IncludeSearch::Found) {
    std::string quotedName = "'" + name + "'";
    if (found == IncludeSearch::NotRegular) // a directory, /dev/zero, a FIFO
      diags_.report(DiagId::err_cannot_open_file, nameTok.loc,
                    {"cannot include " + regularFileProblem(path)}, nameTok.length());
    else if (found == IncludeSearch::Outside)
      diags_.report(DiagId::err_cannot_open_file, nameTok.loc,
                    {"cannot include " + quotedName +
                     ": only files inside the kernel's folder and the include folders (-I) "
                     "may be included"},
                    nameTok.length());
    else if (found == IncludeSearch::NoFolder)
      diags_.report(DiagId::err_cannot_open_file, nameTok.loc,
                    {"cannot include " + quotedName +
                     ": a kernel given as text has no folder; name include folders to "
                     "search (-I, include_dirs)"},
                    nameTok.length());
    else
      diags_.report(DiagId::err_pp_file_not_found, nameTok.loc, {name}, nameTok.length());
    return;
  }
  if (files_.size() >= kMaxIncludeDepth) {
    // Fatal, like clang: a file including itself twice would otherwise take
    // exponential time before the limit stops every path.
    diags_.report(DiagId::err_pp_include_too_deep, nameTok.loc, {std::to_string(kMaxIncludeDepth)},
                  nameTok.length());
    fatal_ = true;
    return;
  }
  std::string key = normalizedPath(path);
  if (!pragmaOnce_.count(key))
    enterFile(path, key, nameTok);
}

// Whether `path`, with symbolic links and `..` resolved, lies inside one of
// the include roots (the main file's folder, the -I folders).
bool PPState::insideIncludeRoots(const std::string &path) const {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec)
    return false;
  for (const std::string &rootText : includeRoots_) {
    fs::path root(rootText);
    auto pi = p.begin();
    bool inside = true;
    for (auto ri = root.begin(); ri != root.end() && inside; ++ri, ++pi)
      inside = pi != p.end() && *pi == *ri;
    if (inside)
      return true;
  }
  return false;
}

// The including file's directory (not for a main file given as text), then
// each -I directory; whatever is found must lie inside an include root. A
// name outside them is refused before anything about it is looked at.
PPState::IncludeSearch PPState::findIncludeFile(const std::string &name, std::string &path) const {
  namespace fs = std::filesystem;
  std::vector<std::string> dirs;
  if (fs::path(name).is_absolute()) {
    dirs.push_back("");
  } else {
    uint32_t including = files_.back().file;
    if (!(opts_.mainIsText && including == mainFile_))
      dirs.push_back(fs::path(sm_.name(including)).parent_path().string());
    dirs.insert(dirs.end(), opts_.includeDirs.begin(), opts_.includeDirs.end());
  }
  if (dirs.empty())
    return IncludeSearch::NoFolder;
  bool outside = false;
  std::string notRegular;
  for (const std::string &dir : dirs) {
    std::string candidate = dir.empty() ? name : (fs::path(dir) / name).string();
    if (!insideIncludeRoots(candidate)) {
      outside = true;
      continue;
    }
    std::error_code ec;
    if (fs::is_regular_file(candidate, ec)) {
      path = candidate;
      return IncludeSearch::Found;
    }
    if (notRegular.empty() && fs::exists(candidate, ec))
      notRegular = candidate; // reported as such, not as "file not found"
  }
  if (!notRegular.empty()) {
    path = notRegular;
    return IncludeSearch::NotRegular;
  }
  return outside ? IncludeSearch::Outside : IncludeSearch::NotFound;
}

// Pushes the file at `path` (lexed once, then cached by `key`).
void PPState::enterFile(const std::string &path, const std::string &key, const Token &nameTok) {
  auto it = fileCache_.find(key);
  if (it == fileCache_.end()) {
    std::string error;
    std::optional<uint32_t> file = sm_.loadFile(path, error);
    if (!file) {
      diags_.report(DiagId::err_cannot_open_file, nameTok.loc, {error}, nameTok.length());
      return;
    }
    // A binary file is not lexed: its bytes would be quoted by diagnostics.
    if (sm_.text(*file).find('\0') != std::string::npos) {
      diags_.report(DiagId::err_cannot_open_file, nameTok.loc,
                    {"cannot include '" + path + "': it is not a text file (it has NUL bytes)"},
                    nameTok.length());
      return;
    }
    auto toks = std::make_shared<const std::vector<Token>>(
        lexBuffer(sm_.text(*file), *file, &diags_, LexErrorMode::Defer));
    it = fileCache_.emplace(key, CachedFile{*file, toks}).first;
  }
  files_.push_back({it->second.file, it->second.toks, 0, {}, key});
}

// #error MESSAGE / #warning MESSAGE.
void PPState::handleDiagnostic(const std::vector<Token> &line, bool isError) {
  std::string msg = joinTokens(line, 1);
  if (msg.empty())
    msg = isError ? "#error" : "#warning";
  diags_.report(isError ? DiagId::err_pp_error_directive : DiagId::warn_pp_warning_directive,
                line[0].loc, {msg}, line[0].length());
}

// #pragma once is honoured; every other pragma is ignored.
void PPState::handlePragma(const std::vector<Token> &line) {
  if (line.size() >= 2 && line[1].text == "once" && !files_.back().key.empty())
    pragmaOnce_.insert(files_.back().key);
}

} // namespace pp

// Entry point; see Preprocessor.h.
std::vector<Token> preprocess(uint32_t file, const PreprocessorOptions &opts, SourceManager &sm,
                              DiagEngine &diags, std::map<std::string, int64_t> *integerMacros) {
  pp::PPState pp(opts, sm, diags);
  std::vector<Token> toks = pp.run(file);
  if (integerMacros && !diags.hasErrors())
    *integerMacros = pp.integerMacros();
  return toks;
}

// Each token after a space or newline as in the source (see Preprocessor.h).
std::string renderTokens(const std::vector<Token> &tokens) {
  std::string out;
  bool first = true;
  for (const Token &t : tokens) {
    if (t.is(TokKind::eof))
      break;
    if (!first && t.atLineStart)
      out += '\n';
    else if (!first && t.leadingSpace)
      out += ' ';
    out += t.text;
    first = false;
  }
  if (!first)
    out += '\n';
  return out;
}

} // namespace tc
