#include "frontend/Token.h"

#include <unordered_map>

namespace tc {

std::string_view tokKindName(TokKind k) {
  switch (k) {
#define TOK(X)                                                                                     \
  case TokKind::X: return #X;
#include "frontend/TokenKinds.def"
  }
  return "unknown";
}

std::string_view tokSpelling(TokKind k) {
  switch (k) {
#define TOK(X)                                                                                     \
  case TokKind::X: return "";
#define PUNCT(X, S)                                                                                \
  case TokKind::X: return S;
#define KEYWORD(X, S)                                                                              \
  case TokKind::kw_##X: return S;
#include "frontend/TokenKinds.def"
  }
  return "";
}

TokKind keywordKind(std::string_view spelling) {
  static const std::unordered_map<std::string_view, TokKind> table = {
#define KEYWORD(X, S) {S, TokKind::kw_##X},
#include "frontend/TokenKinds.def"
  };
  auto it = table.find(spelling);
  return it == table.end() ? TokKind::identifier : it->second;
}

} // namespace tc
