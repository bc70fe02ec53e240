//===- Preprocessor.cpp - The C preprocessor of Triton-C ---------------===//
// TEMPORARY minimal version: -D object-like macros and keyword classification.
#include "frontend/Preprocessor.h"
#include "frontend/Lexer.h"
#include "frontend/PPLexer.h"

#include <unordered_map>

namespace tc {

std::vector<Token> preprocess(uint32_t file, const PreprocessorOptions &opts, SourceManager &sm,
                              DiagEngine &diags) {
  std::unordered_map<std::string, std::vector<Token>> macros;
  for (const auto &[name, value] : opts.defines) {
    uint32_t f = sm.addBuffer("<command line>", "#define " + name + " " + value + "\n");
    std::vector<Token> body = lexBuffer(value, f, &diags, LexErrorMode::Report);
    body.pop_back();
    macros[name] = body;
  }
  for (const auto &name : opts.undefines)
    macros.erase(name);
  std::vector<Token> in = lexFile(file, sm, diags), out;
  for (size_t i = 0; i < in.size(); ++i) {
    Token &t = in[i];
    if (t.is(TokKind::hash) && t.atLineStart) {
      while (i + 1 < in.size() && !in[i + 1].atLineStart)
        ++i;
      continue;
    }
    auto it = t.is(TokKind::identifier) ? macros.find(t.text) : macros.end();
    if (it == macros.end()) {
      out.push_back(t);
      continue;
    }
    for (Token b : it->second) {
      b.loc = t.loc;
      out.push_back(b);
    }
  }
  for (Token &t : out)
    if (t.is(TokKind::identifier))
      t.kind = keywordKind(t.text);
  return out;
}

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
  out += '\n';
  return out;
}

} // namespace tc
