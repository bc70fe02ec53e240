//===- Lexer.cpp - Raw tokens of a source file ---------------------------===//
//
// Translation phases 1-3 of C: line splices are removed first (into a clean
// buffer that remembers each byte's offset in the original text, so locations
// stay exact), then the clean buffer is cut into preprocessing tokens.
//
//===----------------------------------------------------------------------===//
#include "frontend/Lexer.h"
#include "frontend/PPLexer.h"

#include <algorithm>

namespace tc {

namespace {

bool isIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isDigit(char c) {
  return c >= '0' && c <= '9';
}
bool isIdentChar(char c) {
  return isIdentStart(c) || isDigit(c);
}
bool isHorizontalSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/// The text of a stray byte sequence for a diagnostic: printable ASCII and
/// well-formed UTF-8 as is, anything else as \xNN escapes.
std::string describeStray(std::string_view s) {
  bool printable = s.size() == 1 && s[0] >= 0x20 && s[0] < 0x7f;
  bool utf8 = s.size() > 1 && (static_cast<unsigned char>(s[0]) & 0xC0) == 0xC0;
  if (printable || utf8)
    return std::string(s);
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    auto b = static_cast<unsigned char>(c);
    out += "\\x";
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

/// Number of bytes of a UTF-8 sequence led by `b` (1 for a stray byte).
size_t utf8Length(unsigned char b) {
  if (b >= 0xF0 && b < 0xF8)
    return 4;
  if (b >= 0xE0)
    return b < 0xF0 ? 3 : 1;
  if (b >= 0xC0)
    return 2;
  return 1;
}

class RawLexer {
public:
  RawLexer(std::string_view text, uint32_t file, DiagEngine *diags, LexErrorMode mode,
           unsigned *errors)
      : file_(file), diags_(diags), mode_(mode), errors_(errors) {
    removeSplices(text);
  }

  std::vector<Token> run();

private:
  // Builds clean_ (the text without backslash-newlines) and offsets_.
  void removeSplices(std::string_view text);
  SourceLoc locAt(size_t pos) const;
  char at(size_t pos) const { return pos < clean_.size() ? clean_[pos] : '\0'; }
  bool atEnd() const { return pos_ >= clean_.size(); }

  // Skips whitespace and comments; records newlines and spaces seen.
  void skipTrivia();
  void lexToken(Token &tok);
  void lexNumber();
  void lexQuoted(Token &tok, char quote);
  void lexStray(Token &tok);
  TokKind lexPunct();
  void error(DiagId id, size_t pos, std::vector<std::string> args, uint32_t len);

  std::string clean_;
  std::vector<uint32_t> offsets_;    // clean index -> original offset
  std::vector<uint32_t> lineStarts_; // original offsets of line starts
  uint32_t file_;
  DiagEngine *diags_;
  LexErrorMode mode_;
  unsigned *errors_;
  size_t pos_ = 0;
  bool sawNewline_ = true, sawSpace_ = false;
};

void RawLexer::removeSplices(std::string_view text) {
  clean_.reserve(text.size());
  offsets_.reserve(text.size() + 1);
  lineStarts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n')
      lineStarts_.push_back(static_cast<uint32_t>(i + 1));
    if (text[i] == '\\') {
      size_t j = i + 1;
      if (j < text.size() && text[j] == '\r')
        ++j;
      if (j < text.size() && text[j] == '\n') {
        lineStarts_.push_back(static_cast<uint32_t>(j + 1));
        i = j;
        continue;
      }
    }
    clean_.push_back(text[i]);
    offsets_.push_back(static_cast<uint32_t>(i));
  }
  offsets_.push_back(static_cast<uint32_t>(text.size())); // end-of-buffer position
}

SourceLoc RawLexer::locAt(size_t pos) const {
  uint32_t off = offsets_[std::min(pos, offsets_.size() - 1)];
  auto it = std::upper_bound(lineStarts_.begin(), lineStarts_.end(), off);
  auto line = static_cast<uint32_t>(it - lineStarts_.begin());
  return SourceLoc{file_, line, off - lineStarts_[line - 1] + 1, 0};
}

void RawLexer::error(DiagId id, size_t pos, std::vector<std::string> args, uint32_t len) {
  if (errors_)
    ++*errors_;
  if (diags_)
    diags_->report(id, locAt(pos), std::move(args), len);
}

void RawLexer::skipTrivia() {
  while (!atEnd()) {
    char c = clean_[pos_];
    if (c == '\n') {
      sawNewline_ = sawSpace_ = true;
      ++pos_;
    } else if (isHorizontalSpace(c)) {
      sawSpace_ = true;
      ++pos_;
    } else if (c == '/' && at(pos_ + 1) == '/') {
      while (!atEnd() && clean_[pos_] != '\n')
        ++pos_;
    } else if (c == '/' && at(pos_ + 1) == '*') {
      size_t end = clean_.find("*/", pos_ + 2);
      if (end == std::string::npos) {
        // Always reported: an unterminated comment swallows the rest of the file.
        if (errors_)
          ++*errors_;
        if (diags_)
          diags_->report(DiagId::err_lex_unterminated_comment, locAt(pos_), {}, 2);
        pos_ = clean_.size();
        return;
      }
      sawSpace_ = true;
      pos_ = end + 2;
    } else {
      return;
    }
  }
}

std::vector<Token> RawLexer::run() {
  std::vector<Token> toks;
  toks.reserve(clean_.size() / 4 + 1);
  for (;;) {
    skipTrivia();
    Token tok;
    tok.atLineStart = sawNewline_;
    tok.leadingSpace = sawSpace_;
    sawNewline_ = sawSpace_ = false;
    tok.loc = locAt(pos_);
    if (atEnd()) {
      tok.kind = TokKind::eof;
      toks.push_back(std::move(tok));
      return toks;
    }
    size_t start = pos_;
    lexToken(tok);
    if (tok.text.empty())
      tok.text = clean_.substr(start, pos_ - start);
    toks.push_back(std::move(tok));
  }
}

// pp-number: digit or .digit, then [0-9A-Za-z_.] and e+ e- E+ E- p+ p- P+ P-;
// a '.' followed by ".." ends it (so that `0...4` is `0`, `...`, `4`).
void RawLexer::lexNumber() {
  ++pos_;
  for (;;) {
    char c = at(pos_);
    if ((c == 'e' || c == 'E' || c == 'p' || c == 'P') &&
        (at(pos_ + 1) == '+' || at(pos_ + 1) == '-')) {
      pos_ += 2;
    } else if (isIdentChar(c)) {
      ++pos_;
    } else if (c == '.' && !(at(pos_ + 1) == '.' && at(pos_ + 2) == '.')) {
      ++pos_;
    } else {
      return;
    }
  }
}

// A string literal or character constant; backslash escapes any character.
// Without the closing quote on the same line the token is `unknown`.
void RawLexer::lexQuoted(Token &tok, char quote) {
  size_t start = pos_++;
  while (!atEnd() && clean_[pos_] != quote && clean_[pos_] != '\n') {
    if (clean_[pos_] == '\\' && pos_ + 1 < clean_.size() && clean_[pos_ + 1] != '\n')
      ++pos_;
    ++pos_;
  }
  if (!atEnd() && clean_[pos_] == quote) {
    ++pos_;
    tok.kind = quote == '"' ? TokKind::string_literal : TokKind::char_constant;
    return;
  }
  tok.kind = TokKind::unknown;
  if (mode_ == LexErrorMode::Report) {
    error(quote == '"' ? DiagId::err_lex_unterminated_string : DiagId::err_lex_unterminated_char,
          start, {}, 1);
  } else if (errors_) {
    ++*errors_;
  }
}

// A character with no use in the language (one UTF-8 sequence at a time).
void RawLexer::lexStray(Token &tok) {
  size_t n = utf8Length(static_cast<unsigned char>(clean_[pos_]));
  size_t len = 1;
  while (len < n && pos_ + len < clean_.size() &&
         (static_cast<unsigned char>(clean_[pos_ + len]) & 0xC0) == 0x80)
    ++len;
  if (len != n)
    len = 1;
  tok.kind = TokKind::unknown;
  std::string_view s(clean_.data() + pos_, len);
  if (mode_ == LexErrorMode::Report)
    error(DiagId::err_lex_stray_char, pos_, {describeStray(s)}, 1);
  else if (errors_)
    ++*errors_;
  pos_ += len;
}

void RawLexer::lexToken(Token &tok) {
  char c = clean_[pos_];
  if (isIdentStart(c)) {
    while (isIdentChar(at(pos_)))
      ++pos_;
    tok.kind = TokKind::identifier;
  } else if (isDigit(c) || (c == '.' && isDigit(at(pos_ + 1)))) {
    lexNumber();
    tok.kind = TokKind::numeric_constant;
  } else if (c == '"' || c == '\'') {
    lexQuoted(tok, c);
  } else {
    TokKind k = lexPunct();
    if (k == TokKind::unknown)
      lexStray(tok);
    else
      tok.kind = k;
  }
}

// Maximal munch over the punctuators of TokenKinds.def; `unknown` (nothing
// consumed) when the character starts none.
TokKind RawLexer::lexPunct() {
  char c = clean_[pos_], n = at(pos_ + 1), n2 = at(pos_ + 2);
  auto take = [&](size_t len, TokKind k) {
    pos_ += len;
    return k;
  };
  switch (c) {
  case '(': return take(1, TokKind::l_paren);
  case ')': return take(1, TokKind::r_paren);
  case '{': return take(1, TokKind::l_brace);
  case '}': return take(1, TokKind::r_brace);
  case '[': return take(1, TokKind::l_square);
  case ']': return take(1, TokKind::r_square);
  case ',': return take(1, TokKind::comma);
  case ';': return take(1, TokKind::semi);
  case ':': return take(1, TokKind::colon);
  case '?': return take(1, TokKind::question);
  case '~': return take(1, TokKind::tilde);
  case '@': return take(1, TokKind::at);
  case '.':
    if (n == '.' && n2 == '.')
      return take(3, TokKind::ellipsis);
    return take(1, TokKind::period);
  case '-':
    if (n == '>')
      return take(2, TokKind::arrow);
    if (n == '-')
      return take(2, TokKind::minusminus);
    if (n == '=')
      return take(2, TokKind::minusequal);
    return take(1, TokKind::minus);
  case '+':
    if (n == '+')
      return take(2, TokKind::plusplus);
    if (n == '=')
      return take(2, TokKind::plusequal);
    return take(1, TokKind::plus);
  case '*': return n == '=' ? take(2, TokKind::starequal) : take(1, TokKind::star);
  case '/': return n == '=' ? take(2, TokKind::slashequal) : take(1, TokKind::slash);
  case '%': return n == '=' ? take(2, TokKind::percentequal) : take(1, TokKind::percent);
  case '^': return n == '=' ? take(2, TokKind::caretequal) : take(1, TokKind::caret);
  case '=': return n == '=' ? take(2, TokKind::equalequal) : take(1, TokKind::equal);
  case '!': return n == '=' ? take(2, TokKind::exclaimequal) : take(1, TokKind::exclaim);
  case '#': return n == '#' ? take(2, TokKind::hashhash) : take(1, TokKind::hash);
  case '&':
    if (n == '&')
      return take(2, TokKind::ampamp);
    return n == '=' ? take(2, TokKind::ampequal) : take(1, TokKind::amp);
  case '|':
    if (n == '|')
      return take(2, TokKind::pipepipe);
    return n == '=' ? take(2, TokKind::pipeequal) : take(1, TokKind::pipe);
  case '<':
    if (n == '<')
      return n2 == '=' ? take(3, TokKind::lesslessequal) : take(2, TokKind::lessless);
    return n == '=' ? take(2, TokKind::lessequal) : take(1, TokKind::less);
  case '>':
    if (n == '>')
      return n2 == '=' ? take(3, TokKind::greatergreaterequal) : take(2, TokKind::greatergreater);
    return n == '=' ? take(2, TokKind::greaterequal) : take(1, TokKind::greater);
  }
  return TokKind::unknown;
}

} // namespace

std::vector<Token> lexBuffer(std::string_view text, uint32_t file, DiagEngine *diags,
                             LexErrorMode mode, unsigned *errors) {
  return RawLexer(text, file, diags, mode, errors).run();
}

void reportUnknownToken(const Token &tok, SourceLoc loc, DiagEngine &diags) {
  if (!tok.text.empty() && tok.text[0] == '"')
    diags.report(DiagId::err_lex_unterminated_string, loc);
  else if (!tok.text.empty() && tok.text[0] == '\'')
    diags.report(DiagId::err_lex_unterminated_char, loc);
  else
    diags.report(DiagId::err_lex_stray_char, loc, {describeStray(tok.text)});
}

std::vector<Token> lexFile(uint32_t file, const SourceManager &sm, DiagEngine &diags) {
  return lexBuffer(sm.text(file), file, &diags, LexErrorMode::Report);
}

} // namespace tc
