//===- PPDefine.cpp - #define and #undef -------------------------------===//
#include "frontend/PPInternal.h"

#include <string_view>
#include <unordered_map>
#include <unordered_set>

namespace tc::pp {

namespace {

/// C's rule for a harmless redefinition: same parameters, same tokens, same
/// white space between them.
bool sameDefinition(const Macro &a, const Macro &b) {
  if (a.functionLike != b.functionLike || a.variadic != b.variadic || a.params != b.params ||
      a.body.size() != b.body.size() || a.builtin != b.builtin)
    return false;
  for (size_t i = 0; i < a.body.size(); ++i) {
    const Token &x = a.body[i], &y = b.body[i];
    if (x.kind != y.kind || x.text != y.text || (i > 0 && x.leadingSpace != y.leadingSpace))
      return false;
  }
  return true;
}

} // namespace

// The macro name of #define/#undef/#ifdef/#ifndef: line[1], an identifier.
bool PPState::checkMacroName(const std::vector<Token> &line, const Token *&name) {
  if (line.size() < 2) {
    diags_.report(DiagId::err_pp_macro_name_missing, after(line[0]));
    return false;
  }
  name = &line[1];
  if (name->isNot(TokKind::identifier)) {
    diags_.report(DiagId::err_pp_macro_name_not_identifier, name->loc, {}, name->length());
    return false;
  }
  if (name->text == "defined") {
    diags_.report(DiagId::err_pp_defined_as_macro_name, name->loc, {}, name->length());
    return false;
  }
  return true;
}

void PPState::warnExtraTokens(const std::vector<Token> &toks, size_t from,
                              const std::string &directive) {
  if (from < toks.size())
    diags_.report(DiagId::warn_pp_extra_tokens, toks[from].loc, {directive}, toks[from].length());
}

// #define NAME body | #define NAME(params) body
void PPState::handleDefine(const std::vector<Token> &line) {
  const Token *name = nullptr;
  if (!checkMacroName(line, name))
    return;
  auto m = std::make_shared<Macro>();
  m->name = name->text;
  m->defLoc = name->loc;
  size_t i = 2;
  if (i < line.size() && line[i].is(TokKind::l_paren) && !line[i].leadingSpace) {
    m->functionLike = true;
    if (!parseMacroParams(line, i, *m))
      return;
  }
  m->body.assign(line.begin() + static_cast<std::ptrdiff_t>(i), line.end());
  if (!m->body.empty())
    m->body[0].leadingSpace = false;
  if (!checkMacroBody(*m))
    return;
  defineMacro(std::move(m));
}

// '(' [ident (',' ident)* [',' '...'] | '...' | ident '...'] ')'; on success
// `i` is just past the ')'.
bool PPState::parseMacroParams(const std::vector<Token> &line, size_t &i, Macro &m) {
  ++i; // '('
  if (i < line.size() && line[i].is(TokKind::r_paren)) {
    ++i;
    return true;
  }
  std::unordered_set<std::string> seen; // linear in the number of parameters
  for (;;) {
    if (i >= line.size()) {
      diags_.report(DiagId::err_pp_missing_rparen_in_params, after(line.back()));
      return false;
    }
    const Token &p = line[i++];
    if (p.is(TokKind::ellipsis)) {
      m.variadic = true;
      m.params.push_back("__VA_ARGS__");
    } else if (p.is(TokKind::identifier) && p.text != "__VA_ARGS__") {
      if (!seen.insert(p.text).second) {
        diags_.report(DiagId::err_pp_duplicate_macro_param, p.loc, {p.text}, p.length());
        return false;
      }
      m.params.push_back(p.text);
      if (i < line.size() && line[i].is(TokKind::ellipsis)) { // GNU named variadic `args...`
        m.variadic = true;
        ++i;
      }
    } else {
      DiagId id = p.text == "__VA_ARGS__" ? DiagId::err_pp_va_args_not_variadic
                                          : DiagId::err_pp_invalid_macro_param;
      diags_.report(id, p.loc, {}, p.length());
      return false;
    }
    if (i < line.size() && line[i].is(TokKind::r_paren)) {
      ++i;
      return true;
    }
    if (i >= line.size()) {
      diags_.report(DiagId::err_pp_missing_rparen_in_params, after(line.back()));
      return false;
    }
    if (m.variadic || line[i].isNot(TokKind::comma)) {
      diags_.report(DiagId::err_pp_invalid_macro_param, line[i].loc, {}, line[i].length());
      return false;
    }
    ++i;
  }
}

// Fills paramIndex; checks # (function-like only), ## and __VA_ARGS__.
bool PPState::checkMacroBody(Macro &m) {
  std::vector<Token> &body = m.body;
  m.paramIndex.assign(body.size(), -1);
  std::unordered_map<std::string_view, int> index; // linear in parameters and body
  if (m.functionLike)
    for (size_t p = 0; p < m.params.size(); ++p)
      index[m.params[p]] = static_cast<int>(p);
  for (size_t i = 0; i < body.size(); ++i) {
    const Token &t = body[i];
    if (t.is(TokKind::identifier) && m.functionLike)
      if (auto it = index.find(t.text); it != index.end())
        m.paramIndex[i] = it->second;
    if (t.is(TokKind::identifier) && t.text == "__VA_ARGS__" && m.paramIndex[i] < 0) {
      diags_.report(DiagId::err_pp_va_args_not_variadic, t.loc, {}, t.length());
      return false;
    }
  }
  for (size_t i = 0; i < body.size(); ++i) {
    const Token &t = body[i];
    if (t.is(TokKind::hashhash) && (i == 0 || i + 1 == body.size())) {
      diags_.report(DiagId::err_pp_hashhash_at_edge, t.loc, {}, 2);
      return false;
    }
    if (m.functionLike && t.is(TokKind::hash) &&
        (i + 1 == body.size() || m.paramIndex[i + 1] < 0)) {
      diags_.report(DiagId::err_pp_stringize_not_param, t.loc);
      return false;
    }
  }
  return true;
}

// Stores `m`; a different earlier definition is a warning with a note.
void PPState::defineMacro(MacroPtr m) {
  MacroPtr &slot = macros_[m->name];
  if (slot && slot->builtin != Macro::Builtin::None) {
    diags_.report(DiagId::warn_pp_builtin_macro_redefined, m->defLoc, {m->name},
                  static_cast<uint32_t>(m->name.size()));
  } else if (slot && !sameDefinition(*slot, *m)) {
    diags_.report(DiagId::warn_pp_macro_redefined, m->defLoc, {m->name},
                  static_cast<uint32_t>(m->name.size()));
    diags_.report(DiagId::note_pp_previous_definition, slot->defLoc, {},
                  static_cast<uint32_t>(m->name.size()));
  }
  slot = std::move(m);
}

// #undef NAME (undefining an unknown name is fine).
void PPState::handleUndef(const std::vector<Token> &line) {
  const Token *name = nullptr;
  if (!checkMacroName(line, name))
    return;
  macros_.erase(name->text);
  warnExtraTokens(line, 2, line[0].text);
}

} // namespace tc::pp
