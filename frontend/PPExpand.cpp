//===- PPExpand.cpp - Macro expansion ------------------------------------===//
//
// MacroExpander keeps a stack of contexts (replacement lists being rescanned)
// above its base source. A macro stays disabled while its context is on the
// stack; a function-like macro's argument list may run past the end of the
// contexts (`#define f(a) a*g` / `#define g(a) f(a)`: `f(2)(9)` gives
// `2*9*g`), which pops them and re-enables their macros, as in C.
//
//===----------------------------------------------------------------------===//
#include "frontend/PPInternal.h"
#include "frontend/PPLexer.h"

#include <optional>

namespace tc::pp {

namespace {

/// A placemarker (an empty argument next to ##) inside substitute(); the
/// kind never appears otherwise in a replacement list.
Token placemarker() {
  Token t;
  t.kind = TokKind::eof;
  return t;
}
bool isPlacemarker(const Token &t) {
  return t.is(TokKind::eof);
}

/// Escapes `"` and `\` for a string literal.
void appendEscaped(std::string &out, const std::string &text) {
  for (char c : text) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
}

/// The # operator: the spelling of `toks` as a string literal, with one space
/// where the argument had white space, and `"`/`\` escaped inside literals.
Token stringize(const std::vector<Token> &toks, SourceLoc loc, bool leadingSpace) {
  std::string s = "\"";
  for (size_t i = 0; i < toks.size(); ++i) {
    const Token &t = toks[i];
    if (i > 0 && (t.leadingSpace || t.atLineStart))
      s += ' ';
    bool quoted = !t.text.empty() && (t.text[0] == '"' || t.text[0] == '\'');
    if (quoted)
      appendEscaped(s, t.text);
    else
      s += t.text;
  }
  s += '"';
  Token r;
  r.kind = TokKind::string_literal;
  r.text = std::move(s);
  r.loc = loc;
  r.leadingSpace = leadingSpace;
  return r;
}

SourceLoc inExpansion(SourceLoc loc, uint32_t expansion) {
  loc.expansion = expansion;
  return loc;
}

/// Builds the replacement of one use of a macro: parameters replaced by their
/// arguments (fully expanded, or raw next to # and ##), then # and ## applied.
/// Tokens of the body get their spelling location inside a new expansion
/// (created only when some body token is produced); argument tokens keep their
/// own locations.
class Substitution {
public:
  Substitution(PPState &pp, const Macro &m, std::vector<std::vector<Token>> &args,
               const Token &nameTok, bool ifMode)
      : pp_(pp), m_(m), body_(m.body), args_(args), nameTok_(nameTok), ifMode_(ifMode),
        expanded_(args.size()) {}

  std::vector<Token> run();

private:
  SourceLoc inThisExpansion(SourceLoc loc);
  Token bodyTok(size_t i);
  bool isStringize(size_t i) const;
  Token stringizeAt(size_t i);
  size_t appendParam(size_t i);
  size_t appendPaste(size_t i);
  void paste(Token lhs, const Token &rhs, SourceLoc loc);

  PPState &pp_;
  const Macro &m_;
  const std::vector<Token> &body_;
  std::vector<std::vector<Token>> &args_;
  const Token &nameTok_;
  bool ifMode_;
  std::vector<std::optional<std::vector<Token>>> expanded_; // arguments, expanded on demand
  uint32_t expansion_ = 0;
  std::vector<Token> out_;
};

std::vector<Token> Substitution::run() {
  out_.reserve(body_.size());
  for (size_t i = 0; i < body_.size();) {
    if (isStringize(i)) {
      out_.push_back(stringizeAt(i));
      i += 2;
    } else if (body_[i].is(TokKind::hashhash)) { // never first or last: checked by #define
      i = appendPaste(i);
    } else if (m_.paramIndex[i] >= 0) {
      i = appendParam(i);
    } else {
      out_.push_back(bodyTok(i++));
    }
  }
  if (pp_.stopped())
    out_.clear();
  std::erase_if(out_, isPlacemarker);
  return std::move(out_);
}

SourceLoc Substitution::inThisExpansion(SourceLoc loc) {
  if (expansion_ == 0)
    expansion_ = pp_.sm().addExpansion({m_.name, m_.defLoc, nameTok_.loc});
  return inExpansion(loc, expansion_);
}

Token Substitution::bodyTok(size_t i) {
  Token t = body_[i];
  t.loc = inThisExpansion(t.loc);
  t.atLineStart = false;
  return t;
}

bool Substitution::isStringize(size_t i) const {
  return m_.functionLike && body_[i].is(TokKind::hash) && i + 1 < body_.size() &&
         m_.paramIndex[i + 1] >= 0;
}

Token Substitution::stringizeAt(size_t i) {
  return stringize(args_[m_.paramIndex[i + 1]], inThisExpansion(body_[i].loc),
                   body_[i].leadingSpace);
}

// A parameter: its expanded argument, or its raw one (a placemarker when
// empty) before ##. Returns the index after it.
size_t Substitution::appendParam(size_t i) {
  int p = m_.paramIndex[i];
  bool raw = i + 1 < body_.size() && body_[i + 1].is(TokKind::hashhash);
  if (!raw && !expanded_[p])
    expanded_[p] = pp_.expandIsolated(args_[p], nameTok_.loc, ifMode_);
  const std::vector<Token> &src = raw ? args_[p] : *expanded_[p];
  if (!pp_.expansionFits(out_.size() + src.size(), nameTok_.loc))
    return body_.size(); // stopped: nothing more is produced
  std::vector<Token> toks = src;
  if (toks.empty() && raw)
    out_.push_back(placemarker());
  if (!toks.empty())
    toks[0].leadingSpace = body_[i].leadingSpace;
  out_.insert(out_.end(), std::make_move_iterator(toks.begin()),
              std::make_move_iterator(toks.end()));
  return i + 1;
}

// `##` at body index i: pastes the last token produced with the first token
// of the right operand. Returns the index after the operand.
size_t Substitution::appendPaste(size_t i) {
  SourceLoc opLoc = inThisExpansion(body_[i].loc);
  size_t next = i + 1;
  std::vector<Token> rhs;
  int rp = m_.paramIndex[next];
  if (rp >= 0) {
    if (!pp_.expansionFits(out_.size() + args_[rp].size(), nameTok_.loc))
      return body_.size();
    rhs = args_[rp];
    if (!rhs.empty())
      rhs[0].leadingSpace = body_[next].leadingSpace;
    ++next;
  } else if (isStringize(next)) {
    rhs.push_back(stringizeAt(next));
    next += 2;
  } else {
    rhs.push_back(bodyTok(next++));
  }
  // GNU `, ## __VA_ARGS__`: the comma goes away when there is no argument.
  if (rp >= 0 && m_.variadic && rp + 1 == static_cast<int>(m_.params.size()) &&
      out_.back().is(TokKind::comma)) {
    if (rhs.empty())
      out_.pop_back();
    out_.insert(out_.end(), rhs.begin(), rhs.end());
    return next;
  }
  if (rhs.empty())
    rhs.push_back(placemarker());
  Token lhs = std::move(out_.back());
  out_.pop_back();
  paste(std::move(lhs), rhs[0], opLoc);
  out_.insert(out_.end(), rhs.begin() + 1, rhs.end());
  return next;
}

// The ## operator proper: lhs and rhs glued and lexed again; they must form
// exactly one token, else an error and both are kept.
void Substitution::paste(Token lhs, const Token &rhs, SourceLoc loc) {
  if (isPlacemarker(lhs) || isPlacemarker(rhs)) {
    out_.push_back(isPlacemarker(lhs) ? rhs : std::move(lhs));
    return;
  }
  std::string text = lhs.text + rhs.text;
  unsigned errors = 0;
  std::vector<Token> toks =
      lexBuffer(text, SourceLoc::kNoFile, nullptr, LexErrorMode::Defer, &errors);
  if (errors == 0 && toks.size() == 2) {
    Token t = std::move(toks[0]);
    t.loc = loc;
    t.atLineStart = false;
    t.leadingSpace = lhs.leadingSpace;
    out_.push_back(std::move(t));
    return;
  }
  pp_.diags().report(DiagId::err_pp_invalid_paste, loc, {text}, 2);
  out_.push_back(std::move(lhs));
  out_.push_back(rhs);
}

} // namespace

MacroExpander::MacroExpander(PPState &pp, bool fileBacked, std::vector<Token> base, bool ifMode)
    : pp_(pp), fileBacked_(fileBacked), ifMode_(ifMode) {
  if (!base.empty())
    ctx_.push_back({std::move(base), 0, nullptr});
}

Token MacroExpander::next() {
  for (;;) {
    Token t;
    if (pp_.stopped() || !readRaw(t)) {
      Token eof;
      eof.kind = TokKind::eof;
      return eof;
    }
    t.atLineStart |= pendingLineStart_;
    t.leadingSpace |= pendingSpace_;
    pendingLineStart_ = pendingSpace_ = false;
    if (isDefinedOperand(t) || t.isNot(TokKind::identifier) || t.noExpand)
      return t;
    MacroPtr m = pp_.findMacro(t.text);
    if (!m)
      return t;
    if (m->disabled) {
      t.noExpand = true; // painted blue: never expanded again
      return t;
    }
    if (m->functionLike && !peekLParen())
      return t;
    expand(m, t);
  }
}

// In #if: tracks `defined X` / `defined ( X )`; true for the X, which must
// not be expanded (and for `defined` itself).
bool MacroExpander::isDefinedOperand(const Token &t) {
  if (!ifMode_)
    return false;
  DefinedState state = defined_;
  defined_ = DefinedState::None;
  if (state == DefinedState::AfterDefined && t.is(TokKind::l_paren)) {
    defined_ = DefinedState::AfterParen;
    return true;
  }
  if (state != DefinedState::None && t.is(TokKind::identifier))
    return true;
  if (t.is(TokKind::identifier) && t.text == "defined") {
    defined_ = DefinedState::AfterDefined;
    return true;
  }
  return false;
}

MacroExpander::~MacroExpander() {
  for (Context &c : ctx_)
    if (c.macro)
      --c.macro->disabled;
}

// The next token of the innermost context with tokens left, popping exhausted
// contexts (which re-enables their macros); false when none is left.
bool MacroExpander::readContext(Token &t) {
  while (!ctx_.empty()) {
    Context &c = ctx_.back();
    if (c.pos < c.toks.size()) {
      t = std::move(c.toks[c.pos++]);
      return true;
    }
    if (c.macro)
      --c.macro->disabled;
    ctx_.pop_back();
  }
  return false;
}

// The next unexpanded token: from the contexts, then the base source.
bool MacroExpander::readRaw(Token &t) {
  return readContext(t) || (fileBacked_ && pp_.nextFileToken(t));
}

// Like readRaw, but inside an argument list: stops (with an error) at the end
// of the source or at a directive instead of processing it.
bool MacroExpander::readArgToken(Token &t, const Token &nameTok, const Macro &m) {
  if (readContext(t))
    return true;
  bool atDirective = false;
  const Token *f = fileBacked_ ? pp_.peekArgFileToken(atDirective) : nullptr;
  if (f) {
    t = *f;
    pp_.consumeFileToken();
    return true;
  }
  pp_.diags().report(atDirective ? DiagId::err_pp_directive_in_macro_args
                                 : DiagId::err_pp_unterminated_macro_call,
                     nameTok.loc, {m.name}, nameTok.length());
  return false;
}

bool MacroExpander::peekLParen() const {
  for (size_t i = ctx_.size(); i-- > 0;)
    if (ctx_[i].pos < ctx_[i].toks.size())
      return ctx_[i].toks[ctx_[i].pos].is(TokKind::l_paren);
  if (!fileBacked_)
    return false;
  bool atDirective = false;
  const Token *t = pp_.peekArgFileToken(atDirective);
  return t && t->is(TokKind::l_paren);
}

void MacroExpander::pushContext(std::vector<Token> toks, MacroPtr m) {
  if (m)
    ++m->disabled;
  ctx_.push_back({std::move(toks), 0, std::move(m)});
}

// Replaces the use `nameTok` of `m` (and its arguments) by a new context.
void MacroExpander::expand(const MacroPtr &m, const Token &nameTok) {
  if (m->builtin != Macro::Builtin::None) {
    expandBuiltin(*m, nameTok);
    return;
  }
  std::vector<std::vector<Token>> args;
  if (m->functionLike && !collectArgs(*m, nameTok, args))
    return;
  std::vector<Token> out = substitute(*m, args, nameTok);
  if (!pp_.noteExpandedTokens(out.size() + 1, nameTok.loc))
    return;
  if (out.empty()) { // nothing to rescan; the next token takes the use's place
    pendingLineStart_ |= nameTok.atLineStart;
    pendingSpace_ |= nameTok.leadingSpace;
    return;
  }
  out[0].atLineStart = nameTok.atLineStart;
  out[0].leadingSpace = nameTok.leadingSpace;
  pushContext(std::move(out), m);
}

// __FILE__ and __LINE__, at the outermost use.
void MacroExpander::expandBuiltin(const Macro &m, const Token &nameTok) {
  SourceLoc use = pp_.sm().outermost(nameTok.loc);
  Token t = nameTok;
  if (m.builtin == Macro::Builtin::Line) {
    t.kind = TokKind::numeric_constant;
    t.text = std::to_string(use.line);
  } else {
    t.kind = TokKind::string_literal;
    t.text = "\"";
    appendEscaped(t.text, use.valid() ? pp_.sm().name(use.file) : std::string());
    t.text += '"';
  }
  t.noExpand = false;
  pushContext({std::move(t)}, nullptr);
}

// After the macro name: '(' args ')' with nested parentheses; commas at depth
// 0 separate arguments (all of them go to `...` once it is reached).
bool MacroExpander::collectArgs(const Macro &m, const Token &nameTok,
                                std::vector<std::vector<Token>> &args) {
  Token t;
  readRaw(t); // the '(' that peekLParen saw
  args.assign(1, {});
  unsigned depth = 0;
  for (;;) {
    if (!readArgToken(t, nameTok, m))
      return false;
    if (t.is(TokKind::r_paren) && depth == 0)
      break;
    if (t.is(TokKind::l_paren))
      ++depth;
    if (t.is(TokKind::r_paren))
      --depth;
    bool inVariadic = m.variadic && args.size() >= m.params.size();
    if (t.is(TokKind::comma) && depth == 0 && !inVariadic) {
      args.emplace_back();
      continue;
    }
    if (t.atLineStart) { // a newline inside the arguments is white space
      t.atLineStart = false;
      t.leadingSpace = true;
    }
    args.back().push_back(std::move(t));
  }
  return checkArgCount(m, nameTok, args);
}

bool MacroExpander::checkArgCount(const Macro &m, const Token &nameTok,
                                  std::vector<std::vector<Token>> &args) {
  size_t want = m.params.size(), got = args.size();
  if (want == 0 && got == 1 && args[0].empty()) {
    args.clear();
    return true;
  }
  if (m.variadic && got + 1 == want) // `...` may receive no argument at all
    args.emplace_back();
  if (args.size() == want)
    return true;
  DiagId id =
      args.size() > want ? DiagId::err_pp_too_many_macro_args : DiagId::err_pp_too_few_macro_args;
  pp_.diags().report(id, nameTok.loc, {m.name, std::to_string(want), std::to_string(got)},
                     nameTok.length());
  pp_.diags().report(DiagId::note_pp_macro_defined_here, m.defLoc, {m.name},
                     static_cast<uint32_t>(m.name.size()));
  return false;
}

std::vector<Token> MacroExpander::substitute(const Macro &m, std::vector<std::vector<Token>> &args,
                                             const Token &nameTok) {
  return Substitution(pp_, m, args, nameTok, ifMode_).run();
}

} // namespace tc::pp
