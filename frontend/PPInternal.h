//===- PPInternal.h - State shared by the preprocessor's parts --------===//
//
// Internal to the frontend. The preprocessor's parts:
//  - PPState: files, #include and the other directives (Preprocessor.cpp),
//    #define/#undef (PPDefine.cpp), conditional groups (PPConditional.cpp);
//  - MacroExpander (PPExpand.cpp): macro expansion over a token source;
//  - #if arithmetic (PPExpr.cpp) and the raw lexer (Lexer.cpp, PPLexer.h).
//
// Expansion follows the classic "disabled macro" formulation of the C rules
// (6.10.3.4): while the replacement list of macro M is being rescanned, M is
// disabled, and an identifier naming a disabled macro is painted blue
// (Token::noExpand) for good. Arguments are fully expanded in isolation
// before substitution (except next to # and ##).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/Preprocessor.h"

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace tc::pp {

/// Nesting limit of #include.
constexpr unsigned kMaxIncludeDepth = 200;
/// Nesting limit of macro argument pre-expansion (f(f(f(...)))).
constexpr unsigned kMaxExpansionDepth = 200;
/// Total work of macro expansion in one run (exponential macros): tokens
/// produced plus one per expansion.
constexpr size_t kMaxExpandedTokens = size_t(1) << 21;

/// The location just after token `t` (where something missing is reported).
inline SourceLoc after(const Token &t) {
  SourceLoc loc = t.loc;
  if (loc.expansion == 0)
    loc.col += t.length();
  return loc;
}

struct Macro {
  enum class Builtin : uint8_t { None, File, Line };

  std::string name;
  SourceLoc defLoc; // the name in #define
  bool functionLike = false;
  bool variadic = false; // the last parameter collects the remaining arguments
  Builtin builtin = Builtin::None;
  std::vector<std::string> params;
  std::vector<Token> body;
  std::vector<int> paramIndex; // per body token: its parameter's index, or -1
  unsigned disabled = 0;       // >0 while its replacement list is being rescanned
};
using MacroPtr = std::shared_ptr<Macro>;

/// One open #if group of a file.
struct CondState {
  SourceLoc ifLoc;
  bool taken = false; // some branch of this group was (or is being) included
  bool seenElse = false;
  SourceLoc elseLoc;
};

/// A file being read (the main file or an #include).
struct FileState {
  uint32_t file = 0;
  std::shared_ptr<const std::vector<Token>> toks;
  size_t pos = 0;
  std::vector<CondState> conds;
  std::string key; // normalized path (#pragma once)
};

class PPState;

/// Produces macro-expanded tokens from a source: the files of a PPState
/// (`fileBacked`) or a fixed token list expanded in isolation.
class MacroExpander {
public:
  /// In `ifMode` (the expression of #if/#elif) the operand of `defined` is
  /// left unexpanded.
  MacroExpander(PPState &pp, bool fileBacked, std::vector<Token> base = {}, bool ifMode = false);

  ~MacroExpander();
  MacroExpander(const MacroExpander &) = delete;
  MacroExpander &operator=(const MacroExpander &) = delete;

  /// The next token after macro expansion; eof at the end of the source.
  Token next();

private:
  struct Context {
    std::vector<Token> toks;
    size_t pos = 0;
    MacroPtr macro; // null for the base list of an isolated expansion
  };

  bool readContext(Token &t);
  bool readRaw(Token &t);
  bool isDefinedOperand(const Token &t);
  bool readArgToken(Token &t, const Token &nameTok, const Macro &m);
  bool peekLParen() const;
  void expand(const MacroPtr &m, const Token &nameTok);
  void expandBuiltin(const Macro &m, const Token &nameTok);
  bool collectArgs(const Macro &m, const Token &nameTok, std::vector<std::vector<Token>> &args);
  bool checkArgCount(const Macro &m, const Token &nameTok, std::vector<std::vector<Token>> &args);
  std::vector<Token> substitute(const Macro &m, std::vector<std::vector<Token>> &args,
                                const Token &nameTok);
  void pushContext(std::vector<Token> toks, MacroPtr m);

  PPState &pp_;
  bool fileBacked_;
  std::vector<Context> ctx_;
  bool pendingLineStart_ = false, pendingSpace_ = false; // from a macro that expanded to nothing
  bool ifMode_;
  enum class DefinedState : uint8_t {
    None,
    AfterDefined,
    AfterParen
  } defined_ = DefinedState::None;
};

/// The preprocessor's state: macros, the stack of open files, limits.
class PPState {
public:
  PPState(const PreprocessorOptions &opts, SourceManager &sm, DiagEngine &diags);

  /// Preprocesses `mainFile` after the predefined and command-line macros.
  std::vector<Token> run(uint32_t mainFile);

  // --- for MacroExpander ---
  MacroPtr findMacro(const std::string &name) const;
  /// Next token of the open files, handling directives and skipped groups;
  /// false at the end of the outermost file.
  bool nextFileToken(Token &t);
  /// The next file token for a macro's argument list, or null at the end of
  /// a file or at a directive (`atDirective` tells which).
  const Token *peekArgFileToken(bool &atDirective) const;
  void consumeFileToken() { ++files_.back().pos; }
  /// Fully macro-expands `toks` on their own (arguments, #if, #include).
  std::vector<Token> expandIsolated(const std::vector<Token> &toks, SourceLoc useLoc,
                                    bool ifMode = false);
  /// Accounts for `n` tokens produced by an expansion; false (after an error)
  /// once the limit is passed.
  bool noteExpandedTokens(size_t n, SourceLoc loc);
  /// Whether `n` more tokens would still be within the limit; false (after
  /// the same error) if not. Checked before an expansion builds its tokens,
  /// so that the limit fires before the memory is spent.
  bool expansionFits(size_t n, SourceLoc loc);
  /// True after a fatal error or once the error limit is reached.
  bool stopped() const { return fatal_ || diags_.shouldStop(); }

  SourceManager &sm() { return sm_; }
  DiagEngine &diags() { return diags_; }

  /// After run(): the source's object-like macros with integer values (see
  /// preprocess()).
  std::map<std::string, int64_t> integerMacros();

private:
  bool substituteObjectLike(const Macro &m, std::vector<Token> &out, unsigned depth);
  void runPseudoFile(uint32_t file);
  void defineBuiltins();
  void addCommandLine();
  std::vector<Token> readLine();
  void endOfFile();
  void handleDirective();
  void handleDefine(const std::vector<Token> &line);
  bool parseMacroParams(const std::vector<Token> &line, size_t &i, Macro &m);
  bool checkMacroBody(Macro &m);
  void defineMacro(MacroPtr m);
  void handleUndef(const std::vector<Token> &line);
  void handleInclude(const std::vector<Token> &line);
  enum class IncludeSearch { Found, NotFound, NotRegular, Outside, NoFolder };
  IncludeSearch findIncludeFile(const std::string &name, std::string &path) const;
  bool insideIncludeRoots(const std::string &path) const;
  void enterFile(const std::string &path, const std::string &key, const Token &nameTok);
  void handleIf(const std::vector<Token> &line);
  void handleIfdef(const std::vector<Token> &line, bool wantDefined);
  void handleElse(const std::vector<Token> &line);
  void handleEndif(const std::vector<Token> &line);
  void handleDiagnostic(const std::vector<Token> &line, bool isError);
  void handlePragma(const std::vector<Token> &line);
  bool evalCondition(const std::vector<Token> &line);
  bool resolveDefined(const std::vector<Token> &in, std::vector<Token> &out);
  void skipGroup();
  bool checkMacroName(const std::vector<Token> &line, const Token *&name);
  void warnExtraTokens(const std::vector<Token> &toks, size_t from, const std::string &directive);

  const PreprocessorOptions &opts_;
  SourceManager &sm_;
  DiagEngine &diags_;
  std::unordered_map<std::string, MacroPtr> macros_;
  std::vector<FileState> files_;
  struct CachedFile {
    uint32_t file;
    std::shared_ptr<const std::vector<Token>> toks;
  };
  std::unordered_map<std::string, CachedFile> fileCache_;
  std::unordered_set<std::string> pragmaOnce_;
  uint32_t mainFile_ = 0;
  std::vector<std::string> includeRoots_; // resolved: the main file's folder, -I folders
  std::vector<uint32_t> pseudoFiles_; // <built-in> and <command line> buffers
  unsigned isolatedDepth_ = 0;
  size_t expandedTokens_ = 0;
  bool fatal_ = false;
};

} // namespace tc::pp
