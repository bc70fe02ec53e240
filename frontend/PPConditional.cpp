//===- PPConditional.cpp - #if, #ifdef, #elif, #else, #endif -----------===//
#include "frontend/PPExpr.h"
#include "frontend/PPInternal.h"

namespace tc::pp {

// #if EXPR: opens a group, skipped when EXPR is 0 (or wrong).
void PPState::handleIf(const std::vector<Token> &line) {
  bool value = evalCondition(line);
  files_.back().conds.push_back({line[0].loc, value, false, {}});
  if (!value)
    skipGroup();
}

// #ifdef NAME / #ifndef NAME.
void PPState::handleIfdef(const std::vector<Token> &line, bool wantDefined) {
  const Token *name = nullptr;
  bool value = false;
  if (checkMacroName(line, name)) {
    value = (findMacro(name->text) != nullptr) == wantDefined;
    warnExtraTokens(line, 2, line[0].text);
  }
  files_.back().conds.push_back({line[0].loc, value, false, {}});
  if (!value)
    skipGroup();
}

// #elif / #else reached at the end of an included group: skip to #endif.
void PPState::handleElse(const std::vector<Token> &line) {
  const Token &d = line[0];
  std::vector<CondState> &conds = files_.back().conds;
  if (conds.empty()) {
    diags_.report(DiagId::err_pp_directive_without_if, d.loc, {d.text}, d.length());
    return;
  }
  CondState &c = conds.back();
  if (c.seenElse) {
    diags_.report(d.text == "else" ? DiagId::err_pp_else_after_else
                                   : DiagId::err_pp_elif_after_else,
                  d.loc, {}, d.length());
    diags_.report(DiagId::note_pp_previous_else, c.elseLoc, {}, 4);
  } else if (d.text == "else") {
    c.seenElse = true;
    c.elseLoc = d.loc;
    warnExtraTokens(line, 1, line[0].text);
  }
  c.taken = true;
  skipGroup();
}

// #endif in an included group.
void PPState::handleEndif(const std::vector<Token> &line) {
  std::vector<CondState> &conds = files_.back().conds;
  if (conds.empty()) {
    diags_.report(DiagId::err_pp_directive_without_if, line[0].loc, {"endif"}, 5);
    return;
  }
  conds.pop_back();
  warnExtraTokens(line, 1, line[0].text);
}

// Skips tokens of a group not included, up to the #elif/#else that starts an
// included group or the #endif of the current one.
void PPState::skipGroup() {
  unsigned depth = 0;
  while (!stopped()) {
    FileState &fs = files_.back();
    const Token &tok = (*fs.toks)[fs.pos];
    if (tok.is(TokKind::eof))
      return; // endOfFile reports the open group
    ++fs.pos;
    if (tok.isNot(TokKind::hash) || !tok.atLineStart)
      continue;
    std::vector<Token> line = readLine();
    if (line.empty() || line[0].isNot(TokKind::identifier))
      continue;
    const std::string &d = line[0].text;
    if (d == "if" || d == "ifdef" || d == "ifndef") {
      ++depth;
    } else if (d == "endif") {
      if (depth == 0) {
        fs.conds.pop_back();
        warnExtraTokens(line, 1, d);
        return;
      }
      --depth;
    } else if (depth == 0 && (d == "elif" || d == "else")) {
      CondState &c = fs.conds.back();
      if (c.seenElse) {
        diags_.report(d == "else" ? DiagId::err_pp_else_after_else : DiagId::err_pp_elif_after_else,
                      line[0].loc, {}, line[0].length());
        diags_.report(DiagId::note_pp_previous_else, c.elseLoc, {}, 4);
        continue;
      }
      if (d == "else") {
        c.seenElse = true;
        c.elseLoc = line[0].loc;
        warnExtraTokens(line, 1, line[0].text);
      }
      if (!c.taken && (d == "else" || evalCondition(line))) {
        c.taken = true;
        return;
      }
    }
  }
}

// The value of the expression of #if/#elif (line[0] is the directive name).
bool PPState::evalCondition(const std::vector<Token> &line) {
  std::vector<Token> rest(line.begin() + 1, line.end()), resolved;
  std::vector<Token> expanded = expandIsolated(rest, line[0].loc, /*ifMode=*/true);
  if (!resolveDefined(expanded, resolved))
    return false;
  std::optional<int64_t> v = evaluatePPExpr(resolved, after(line.back()), diags_);
  return v && *v != 0;
}

// Replaces `defined X` and `defined ( X )` by 1 or 0.
bool PPState::resolveDefined(const std::vector<Token> &in, std::vector<Token> &out) {
  for (size_t i = 0; i < in.size(); ++i) {
    const Token &t = in[i];
    if (t.isNot(TokKind::identifier) || t.text != "defined") {
      out.push_back(t);
      continue;
    }
    size_t j = i + 1;
    bool paren = j < in.size() && in[j].is(TokKind::l_paren);
    j += paren;
    if (j >= in.size() || in[j].isNot(TokKind::identifier)) {
      diags_.report(DiagId::err_pp_defined_requires_identifier,
                    j < in.size() ? in[j].loc : after(in.back()));
      return false;
    }
    bool isDefined = findMacro(in[j].text) != nullptr;
    ++j;
    if (paren && (j >= in.size() || in[j].isNot(TokKind::r_paren))) {
      diags_.report(DiagId::err_pp_defined_missing_rparen,
                    j < in.size() ? in[j].loc : after(in.back()));
      return false;
    }
    Token v = t;
    v.kind = TokKind::numeric_constant;
    v.text = isDefined ? "1" : "0";
    out.push_back(std::move(v));
    i = j - !paren;
  }
  return true;
}

} // namespace tc::pp
