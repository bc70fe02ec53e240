//===- FuzzInput.cpp - Seed corpus, mutators and generators ---------------===//
#include "tests/fuzz/FuzzInput.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace tc::fuzz {

namespace {

constexpr const char *kHeaderPrefix = "//!fuzz ";

/// A uniformly random index below `n` (n > 0).
size_t pick(std::mt19937_64 &rng, size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); }

/// True with probability num/den.
bool chance(std::mt19937_64 &rng, unsigned num, unsigned den) { return pick(rng, den) < num; }

template <typename T> const T &pickFrom(std::mt19937_64 &rng, const std::vector<T> &v) {
  return v[pick(rng, v.size())];
}

bool isWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }
bool isSpaceChar(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

bool isIdentifier(std::string_view t) {
  return !t.empty() && (std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '_');
}
bool isNumber(std::string_view t) { return !t.empty() && std::isdigit(static_cast<unsigned char>(t[0])); }

/// Joins token chunks back into text.
std::string join(const std::vector<std::string_view> &toks, size_t from, size_t to) {
  std::string s;
  for (size_t i = from; i < to && i < toks.size(); ++i)
    s += toks[i];
  return s;
}

/// Extracts the -D options written in a seed file (RUN lines, usage comments).
std::vector<std::string> extractDefines(const std::string &text) {
  static const std::regex kDefine(R"((?:^|\s)-D([A-Za-z_][A-Za-z0-9_]*(?:=[^\s\[]+)?))");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kDefine); it != std::sregex_iterator(); ++it) {
    std::string d = (*it)[1].str();
    if (std::find(out.begin(), out.end(), d) == out.end())
      out.push_back(d);
  }
  return out;
}

} // namespace

std::string SourceCase::text() const {
  std::string s;
  for (const auto &[name, value] : defines)
    s += std::string(kHeaderPrefix) + "-D" + name + "=" + value + "\n";
  for (const auto &name : undefines)
    s += std::string(kHeaderPrefix) + "-U" + name + "\n";
  if (warningsAsErrors)
    s += std::string(kHeaderPrefix) + "-Werror\n";
  if (ignoreWarnings)
    s += std::string(kHeaderPrefix) + "-Wnone\n";
  return s + body;
}

std::string SourceCase::flags() const {
  std::string s;
  for (const auto &[name, value] : defines)
    s += " '-D" + name + "=" + value + "'";
  for (const auto &name : undefines)
    s += " -U" + name;
  if (warningsAsErrors)
    s += " -Werror";
  if (ignoreWarnings)
    s += " -Wnone";
  return s;
}

SourceCase parseSourceCase(const std::string &fileText) {
  SourceCase c;
  size_t pos = 0;
  while (fileText.compare(pos, std::string_view(kHeaderPrefix).size(), kHeaderPrefix) == 0) {
    size_t eol = fileText.find('\n', pos);
    if (eol == std::string::npos)
      break;
    std::string opt = fileText.substr(pos + std::string_view(kHeaderPrefix).size(),
                                      eol - pos - std::string_view(kHeaderPrefix).size());
    if (opt.rfind("-D", 0) == 0) {
      size_t eq = opt.find('=');
      c.defines.emplace_back(opt.substr(2, eq - 2), eq == std::string::npos ? "" : opt.substr(eq + 1));
    } else if (opt == "-Werror") {
      c.warningsAsErrors = true;
    } else if (opt == "-Wnone") {
      c.ignoreWarnings = true;
    } else if (opt.rfind("-U", 0) == 0) {
      c.undefines.push_back(opt.substr(2));
    }
    pos = eol + 1;
  }
  c.body = fileText.substr(pos);
  return c;
}

void loadSeeds(const std::string &dir, std::vector<SeedFile> &out) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return;
  std::vector<std::string> paths;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec))
      continue;
    std::string ext = it->path().extension().string();
    if (ext == ".tc" || ext == ".tir" || ext == ".h")
      paths.push_back(it->path().string());
  }
  std::sort(paths.begin(), paths.end());
  for (const auto &p : paths) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    SeedFile f;
    f.path = p;
    f.text = ss.str();
    f.isIR = fs::path(p).extension() == ".tir";
    f.defines = extractDefines(f.text);
    out.push_back(std::move(f));
  }
}

std::vector<std::string_view> splitTokens(std::string_view text) {
  std::vector<std::string_view> toks;
  size_t i = 0;
  while (i < text.size()) {
    size_t j = i + 1;
    if (isWordChar(text[i]))
      while (j < text.size() && isWordChar(text[j]))
        ++j;
    else if (isSpaceChar(text[i]))
      while (j < text.size() && isSpaceChar(text[j]))
        ++j;
    toks.push_back(text.substr(i, j - i));
    i = j;
  }
  return toks;
}

/// Returns the text with a range of tokens changed as `m` says.
std::string applyMutation(const std::string &text, const Mutation &m, const std::string &other) {
  std::vector<std::string_view> toks = splitTokens(text);
  size_t n = toks.size();
  size_t at = n ? m.a % (n + 1) : 0;
  size_t len = 1 + m.b % 16;
  size_t end = std::min(n, at + len);
  switch (m.kind) {
  case MutKind::DeleteRange:
    return join(toks, 0, at) + join(toks, end, n);
  case MutKind::DuplicateRange:
    return join(toks, 0, end) + join(toks, at, end) + join(toks, end, n);
  case MutKind::SwapRanges: {
    if (n < 2)
      return text;
    size_t a0 = m.a % n, a1 = std::min(n, a0 + 1 + m.b % 8);
    size_t b0 = a1 + (n > a1 ? m.c % (n - a1 + 1) : 0), b1 = std::min(n, b0 + 1 + (m.c >> 8) % 8);
    if (b0 >= n)
      return text;
    return join(toks, 0, a0) + join(toks, b0, b1) + join(toks, a1, b0) + join(toks, a0, a1) +
           join(toks, b1, n);
  }
  case MutKind::InsertToken:
    return join(toks, 0, at) + m.token + join(toks, at, n);
  case MutKind::ReplaceToken:
    return join(toks, 0, at) + m.token + join(toks, std::min(n, at + 1), n);
  case MutKind::FlipByte: {
    if (text.empty())
      return std::string(1, static_cast<char>(m.b));
    std::string s = text;
    size_t p = m.a % s.size();
    static const char kBytes[] = {'\0', '\n', '"', '\'', '\\', '/', '*', '#', '{', '}', '(', ')', '[', ']', ';'};
    if (m.c % 3 == 0)
      s[p] = kBytes[m.b % sizeof(kBytes)];
    else
      s[p] = static_cast<char>(s[p] ^ (1u << (m.b % 8)));
    return s;
  }
  case MutKind::Truncate:
    return text.substr(0, text.empty() ? 0 : m.a % text.size());
  case MutKind::SpliceOther: {
    std::vector<std::string_view> o = splitTokens(other);
    if (o.empty())
      return text;
    size_t o0 = m.b % o.size(), o1 = std::min(o.size(), o0 + 1 + m.c % 64);
    return join(toks, 0, at) + join(o, o0, o1) + join(toks, at, n);
  }
  case MutKind::InterestingNumber: {
    std::vector<size_t> nums;
    for (size_t i = 0; i < n; ++i)
      if (isNumber(toks[i]))
        nums.push_back(i);
    const auto &table = interestingNumbers();
    std::string num = table[m.b % table.size()];
    if (nums.empty())
      return join(toks, 0, at) + num + join(toks, at, n);
    size_t i = nums[m.a % nums.size()];
    return join(toks, 0, i) + num + join(toks, i + 1, n);
  }
  case MutKind::ShuffleIdentifier: {
    std::vector<size_t> ids;
    for (size_t i = 0; i < n; ++i)
      if (isIdentifier(toks[i]))
        ids.push_back(i);
    if (ids.empty())
      return text;
    size_t i = ids[m.a % ids.size()];
    std::string repl = m.c % 4 == 0 ? m.token : std::string(toks[ids[m.b % ids.size()]]);
    return join(toks, 0, i) + repl + join(toks, i + 1, n);
  }
  case MutKind::NestRange: {
    static const char *kOpen[] = {"(", "{", "[", "(", "-(", "!(", "*(", "(int)(", "^("};
    static const char *kClose[] = {")", "}", "]", ")", ")", ")", ")", ")", ")"};
    size_t k = m.c % (sizeof(kOpen) / sizeof(kOpen[0]));
    size_t depth = 1 + (m.b >> 4) % 64;
    std::string open, close;
    for (size_t d = 0; d < depth; ++d) {
      open += kOpen[k];
      close += kClose[k];
    }
    // Sometimes leave the nest unbalanced.
    if ((m.b & 7) == 0)
      close.clear();
    return join(toks, 0, at) + open + join(toks, at, end) + close + join(toks, end, n);
  }
  case MutKind::InsertDirective: {
    // Directives go at a line start; take an identifier of the text as the macro name.
    std::string name = "A";
    for (size_t i = 0; i < n; ++i) {
      size_t j = (m.b + i) % n;
      if (isIdentifier(toks[j])) {
        name = std::string(toks[j]);
        break;
      }
    }
    static const char *kForms[] = {"#define {N} {N}",        "#define {N}(x) {N}(x)",   "#define {N} {T}",
                                   "#undef {N}",             "#define {N}(a, b) a ## b", "#define {N}(a) #a",
                                   "#if {N}\n",              "#ifdef {N}",              "#endif",
                                   "#else",                  "#elif {T}",               "#if defined({N}) || {T}",
                                   "#define {N}(...) {N}",   "#define {N}() {N}()",     "#include \"self.h\""};
    std::string form = kForms[m.c % (sizeof(kForms) / sizeof(kForms[0]))];
    std::string line;
    for (size_t i = 0; i < form.size(); ++i) {
      if (form.compare(i, 3, "{N}") == 0) {
        line += name;
        i += 2;
      } else if (form.compare(i, 3, "{T}") == 0) {
        line += m.token;
        i += 2;
      } else {
        line += form[i];
      }
    }
    size_t cut = text.empty() ? 0 : m.a % (text.size() + 1);
    size_t lineStart = text.rfind('\n', cut == 0 ? 0 : cut - 1);
    lineStart = (lineStart == std::string::npos || cut == 0) ? 0 : lineStart + 1;
    return text.substr(0, lineStart) + line + "\n" + text.substr(lineStart);
  }
  case MutKind::NumKinds:
    break;
  }
  return text;
}

const std::vector<std::string> &interestingNumbers() {
  static const std::vector<std::string> kNums = {
      "0", "1", "-1", "2", "3", "7", "16", "32", "64", "128", "1024", "65536", "1048576", "2097152",
      "2147483647", "2147483648", "4294967295", "4294967296", "9223372036854775807",
      "9223372036854775808", "18446744073709551615", "18446744073709551616",
      "340282366920938463463374607431768211456", "99999999999999999999999999999999999999999",
      "0x7fffffff", "0x80000000", "0xffffffffffffffff", "0x", "0b101", "0777", "08", "1e308", "1e309",
      "1e-400", "1.5e", "1e+", "0.0", "-0.0", "1.0f", "1.0h", "3.4028235e38", "6.1e-5", "65504.0",
      "65520.0", "1u", "1ul", "1ull", "1LL", "1.", ".5", "0e", "0x1p-1074", "1..2", "1e1e1",
      "0xg", "00000000000000000000000000001", "1'000"};
  return kNums;
}

const std::vector<std::string> &sourceTokens() {
  static const std::vector<std::string> kTokens = [] {
    std::vector<std::string> t;
#define TOK(X)
#define PUNCT(X, S) t.push_back(S);
#define KEYWORD(X, S) t.push_back(S);
#include "frontend/TokenKinds.def"
    const char *extra[] = {
        // Builtins, predefined macros and typedefs, usual names.
        "get_program_id", "get_num_programs", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin",
        "cos", "abs", "floor", "ceil", "fma", "min", "max", "select", "where", "umulhi", "cdiv",
        "atomic_add", "atomic_max", "atomic_min", "atomic_xchg", "atomic_cas", "__debug_barrier",
        "print", "assert", "argmax", "argmin", "__multipleof", "__aligned", "__noalias", "__readonly",
        "__writeonly", "__multipleof(8)", "__aligned(16)", "F32_INFINITY", "F16_INFINITY", "int8",
        "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "x", "y", "p", "X", "Y",
        "TM", "TN", "TK", "TYPE", "N", "k", "i", "undeclared_name", "__FILE__", "__LINE__", "defined",
        // Preprocessor lines.
        "\n#define A A\n", "\n#define F(x) F(x)\n", "\n#define G(x, y) x ## y\n", "\n#define S(x) #x\n",
        "\n#define A B\n#define B A\n", "\n#define E(...) __VA_ARGS__\n", "\n#if 1\n", "\n#if\n",
        "\n#ifdef A\n", "\n#ifndef TM\n", "\n#elif 0\n", "\n#else\n", "\n#endif\n", "\n#undef A\n",
        "\n#error boom\n", "\n#include \"self.h\"\n", "\n#include \"ping.h\"\n", "\n#include \"missing.h\"\n",
        "\n#include <x>\n", "\n#include\n", "\n#pragma x\n", "\n#\n", "\n#line 5\n", "\n#define\n",
        "\n#define TM\n", "\n#define TYPE float\n", "\n#if TM > 1 && defined(TN)\n", "\n#if 1/0\n",
        "\n#if 9223372036854775807 + 1\n", "\n#if (\n", "\n#define F(\n", "\n#define F(x, x) x\n",
        "\n#define __multipleof(N) N\n", "\n#undef __LINE__\n", "F(", "F()", "G(a,", "S(", "E(1,2)",
        // Comments, literals, odd bytes.
        "/*", "*/", "//", "\"", "'", "\\", "\\\n", "\"unterminated", "'a", "'ab'", "\"a\\\"b\"", "\"\\q\"",
        "\n", "\t", "\r", "\f", "\v", "`", "$", "\x01", "\x7f", "\xff", "\xc3\xa9", "\xe2\x80\xa8",
        "\"label\"", "L\"wide\"",
        // Tile syntax and fragments.
        "float x[1048576, 1048576]", "int r[1048576] = 0 ... 1048576;", "[1048576]", "[0]", "[3]", "[-1]",
        "[4294967296]", "[TM, TN]", "[1, 1, 1, 1, 1, 1, 1, 1, 1]", "0 ... 32", "1 ... 0", "0 ... 3",
        "x[:, newaxis]", "x[+, :]", "x[max]", "x[:, :, :]", "x[argmax, :]", "x[^]", "a @ b", "^a",
        "*?(m) p", "m ? *p : 0", "bitcast<int>(x)", "bitcast<double>(1.0f)", "(float[32])x",
        "(half[1048576, 1048576])0", "__global__ void k(float *p, int n) {", "__global__ void k() {}",
        "void f() {}", "f();", "}", "int i = 0;", "for (;;)", "while (1)", "for (int i = 0; i < 4; i++)",
        "return;", "return 1;", "break;", "continue;", "else", "if (x)", "= ", ";", "p + x",
        "float y[32] = x;", "atomic_cas(p, 0, 1)", "print(\"x\", x);", "assert(x, \"m\");",
        "get_program_id(3)", "get_program_id(-1)", "get_program_id(x)", "typedef int T;", "T",
        "__attribute__((x))", "int *restrict q", "const", "struct", "union", "enum", "goto", "switch",
        "case 1:", "sizeof(int)", "a.b", "a->b", "&x", "x++", "--x", "x = x = x", "1 ? 2 : 3",
        "float c[TM, TN] = 0;", "c += a @ b;", "*p = 1;", "*?(x < 3) p = 0;"};
    for (const char *e : extra)
      t.push_back(e);
    for (const auto &n : interestingNumbers())
      t.push_back(n);
    return t;
  }();
  return kTokens;
}

const std::vector<std::string> &irTokens() {
  static const std::vector<std::string> kTokens = [] {
    std::vector<std::string> t;
#define OP(Name, Mnemonic, ...) t.push_back(Mnemonic);
#include "ir/Ops.def"
#undef OP
    const char *extra[] = {
        "%0", "%1", "%2", "%arg0", "%arg1", "%x", "%", "%<null>", "%999999999999999999999", "@k", "@",
        "kernel", "kernel @k() {\n}\n", "func", "tile<64x64xf16>", "tile<32xi32>", "tile<1xi1>",
        "tile<1048576x1048576xf32>", "tile<0xf32>", "tile<x>", "tile<", "tile<64x!ptr<f32>>",
        "tile<4294967296xi8>", "tile<2x2x2x2x2x2x2x2x2x2xf32>", "!ptr<f32>", "!ptr<!ptr<i8>>", "!ptr<",
        "i1", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64", "ptr",
        "=", "(", ")", "{", "}", "[", "]", "<", ">", ":", ",", "->", "^(", "):", "\"", "\"\\", "loc(",
        "loc(\"fuzz.tc\":1:1)", "loc(\"\":0:0)", "loc(\"x\":4294967296:1)", "value = 1", "value = 1.5",
        "value = nan", "value = -inf", "axis = 0", "axis = 99", "axis = -1", "perm = [1, 0]",
        "perm = [0, 0]", "perm = []", "start = 0", "end = 1048576", "kind = \"add\"", "kind = add",
        "kind = bogus", "multipleof = 0", "aligned = 3", "noalias", "readonly", "writeonly", "yield",
        "return", "\n", "\n\n", " ", "//", "/*", "#", ";", "\x00", "\xff", "{...}", "<axis = 0>",
        "<axis = 2>", "<value = 0.0>", "<value = 1>", "<start = 0, end = 32>", "<start = 5, end = 3>",
        "<label = \"x\">", "<kind = \"max\", axis = 0>", "<perm = [1, 0]>", "<>", "<value = >",
        "^(%i: i32, %a: tile<32xf32>):\n", "^():\n", "^(%i: i32):", "yield %0\n", "yield\n",
        "} loc(\"a.tc\":6:3)\n", "%a, %b = for %0, %1, %2 : i32 {\n^(%i: i32):\n yield\n}\n",
        "if %c {\n yield\n} {\n yield\n}\n", "while", "kernel @k(%a: i32 <multipleof = 8>) {\n",
        "kernel @k(%p: !ptr<f16> <noalias, readonly>) loc(\"k.tc\":1:1) {\n  return\n}\n",
        "%0 = constant <value = 1> : i32\n", "store %0, %1\n", "%9 = load %0 : f32\n"};
    for (const char *e : extra)
      t.push_back(std::string(e));
    for (const auto &n : interestingNumbers())
      t.push_back(n);
    return t;
  }();
  return kTokens;
}

const std::vector<std::string> &defineCandidates() {
  static const std::vector<std::string> kDefines = {
      "TM=1",       "TM=16",      "TM=32",           "TM=64",          "TM=128",      "TM=3",
      "TM=0",       "TM=-1",      "TM=1048576",      "TM=2097152",     "TM=4294967296", "TN=16",
      "TN=32",      "TN=64",      "TN=1",            "TK=8",           "TK=16",       "TK=32",
      "TYPE=float", "TYPE=half",  "TYPE=bf16",       "TYPE=double",    "TYPE=int",    "TYPE=int8",
      "TYPE=char",  "TYPE=bool",  "TYPE=float*",     "TYPE=void",      "TYPE=TYPE",   "TYPE=(",
      "TYPE=",      "N=1024",     "N=0",             "BLOCK=128",      "BLOCK=1024",  "DEBUG",
      "DEBUG=0",    "A=A",        "A=B",             "B=A",            "F(x)=x",      "TM=TN",
      "TN=TM",      "TM=[32, 64]", "TM=[]",          "TM=[32",         "=1",          "1X=1",
      "X=1 +",      "X=)",        "X=\"s",           "X=/*",           "X=//",        "TM=(1 << 20)",
      "TM=9223372036854775807",   "TYPE=unsigned",   "TM=32 TN=32"};
  return kDefines;
}

const std::vector<std::string> &undefineCandidates() {
  static const std::vector<std::string> kNames = {"TM",         "TN",    "TYPE",        "DEBUG",
                                                  "__LINE__",   "__multipleof", "F32_INFINITY",
                                                  "int32",      "A",     ""};
  return kNames;
}

std::string generateDeepNesting(std::mt19937_64 &rng, int depth) {
  struct Nest {
    const char *open, *close, *inner;
  };
  static const Nest kNests[] = {
      {"(", ")", "1"},         {"-", "", "1"},         {"!", "", "x"},          {"*", "", "p"},
      {"~", "", "1"},          {"^", "", "x"},         {"(int)", "", "1"},      {"[", "]", "1"},
      {"{", "}", ""},          {"if (1) ", "", ";"},   {"1 + ", "", "1"},       {"x = ", "", "1"},
      {"f(", ")", "1"},        {"1 ? ", " : 1", "1"},  {"while (1) {", "}", ""}, {"bitcast<int>(", ")", "1"},
      {"x[", "]", "0"},        {"(float[1])", "", "1"}, {"1 @ ", "", "1"},       {"0 ... ", "", "1"}};
  const Nest &n = kNests[pick(rng, sizeof(kNests) / sizeof(kNests[0]))];
  bool balanced = !chance(rng, 1, 5);
  std::string open, close;
  for (int i = 0; i < depth; ++i) {
    open += n.open;
    if (balanced)
      close += n.close;
  }
  std::string expr = open + n.inner + close;
  switch (pick(rng, 3)) {
  case 0:
    return "__global__ void k(float *p, int x) {\n  int y = " + expr + ";\n}\n";
  case 1:
    return "__global__ void k(float *p, int x) {\n" + expr + "\n}\n";
  default:
    return "#if " + expr + "\n#endif\n__global__ void k() {}\n";
  }
}

std::string generateMacroChain(std::mt19937_64 &rng, int length) {
  // Each macro uses the previous one twice (or once): expansion size doubles per level
  // when `twice`, so the length is kept small then.
  bool twice = chance(rng, 1, 2);
  bool functionLike = chance(rng, 1, 3);
  if (twice) // 2^length copies: exponential in any C preprocessor, so keep it small
    length = std::min(length, 6);
  std::string s = functionLike ? "#define M0(x) (x + 1)\n" : "#define M0 1\n";
  for (int i = 1; i <= length; ++i) {
    std::string prev = "M" + std::to_string(i - 1);
    std::string use = functionLike ? prev + "(x)" : prev;
    s += "#define M" + std::to_string(i) + (functionLike ? "(x) " : " ") + "(" + use +
         (twice ? " + " + use : "") + ")\n";
  }
  std::string top = "M" + std::to_string(length) + (functionLike ? "(2)" : "");
  if (chance(rng, 1, 4))
    s += "#define M0 M" + std::to_string(length) + "\n"; // a cycle, which must stop expanding
  return s + "__global__ void k(int *p) {\n  int v = " + top + ";\n  *p = v;\n}\n";
}

//===----------------------------------------------------------------------===//
// Random kernels: statements drawn from a small grammar over a pool of typed
// variables, so that many type-check and reach lowering, and the rest fail in
// sema with shape, type or name errors.
//===----------------------------------------------------------------------===//

namespace {

struct Var {
  std::string name;
  std::string type;
  std::string shape; // "" for scalars, else "[32, 16]"
  bool pointer = false;
};

class KernelGen {
public:
  KernelGen(std::mt19937_64 &rng, int size) : rng_(rng), budget_(4 + size) {}

  std::string generate() {
    std::string out;
    if (chance(rng_, 1, 3))
      out += "#define BLOCK " + pickFrom(rng_, std::vector<std::string>{"32", "64", "16", "1048576", "3"}) + "\n";
    if (chance(rng_, 1, 5))
      out += "void helper(float *q) { *q = 1.0; }\n";
    out += "__global__ void " + std::string(chance(rng_, 1, 8) ? "main" : "kern") + "(" + params() + ") {\n";
    int n = 1 + static_cast<int>(pick(rng_, static_cast<size_t>(budget_)));
    for (int i = 0; i < n && budget_ > 0; ++i)
      out += stmt(1);
    out += "}\n";
    if (chance(rng_, 1, 6))
      out += "__global__ void second(int *z) { *z = get_num_programs(0); }\n";
    return out;
  }

private:
  std::string params() {
    static const std::vector<std::string> kElem = {"float", "half", "bf16", "int", "int8", "uint32",
                                                   "double", "bool", "char", "long", "unsigned"};
    std::string s;
    int n = static_cast<int>(pick(rng_, 5));
    for (int i = 0; i < n; ++i) {
      Var v;
      v.name = "P" + std::to_string(i);
      v.type = pickFrom(rng_, kElem);
      v.pointer = chance(rng_, 2, 3);
      s += (i ? ", " : "") + v.type + (v.pointer ? " *" : " ") + v.name;
      if (chance(rng_, 1, 5))
        s += pickFrom(rng_, std::vector<std::string>{" __multipleof(8)", " __aligned(16)", " __noalias",
                                                     " __readonly", " __writeonly", " __multipleof(0)"});
      vars_.push_back(v);
    }
    return s;
  }

  std::string shape() {
    static const std::vector<std::string> kShapes = {"",        "",         "[32]",    "[32]",     "[16]",
                                                     "[16, 16]", "[32, 16]", "[16, 32]", "[64]",     "[1]",
                                                     "[2, 2, 2]", "[BLOCK]", "[3]",     "[1048576]", "[0]",
                                                     "[1048576, 1048576]"};
    return pickFrom(rng_, kShapes);
  }

  std::string scalarType() {
    static const std::vector<std::string> kTypes = {"float", "float", "int", "int", "half", "bf16",
                                                    "double", "bool", "int8", "uint8", "long", "unsigned",
                                                    "int64", "char", "short", "void"};
    return pickFrom(rng_, kTypes);
  }

  std::string varName() {
    if (vars_.empty() || chance(rng_, 1, 25))
      return pickFrom(rng_, std::vector<std::string>{"undeclared", "x", "TM", "newaxis"});
    return pickFrom(rng_, vars_).name;
  }

  std::string literal() {
    static const std::vector<std::string> kLits = {"0", "1", "2", "3", "32", "1.0", "0.5", "-1", "2.5f",
                                                   "1e10", "F32_INFINITY", "true", "false", "1048576",
                                                   "4294967296", "255", "-128", "0x10"};
    return pickFrom(rng_, kLits);
  }

  std::string expr(int depth) {
    --budget_;
    if (depth > 4 || budget_ <= 0 || chance(rng_, 1, 4))
      return chance(rng_, 1, 2) ? varName() : literal();
    static const std::vector<std::string> kBin = {"+", "-", "*", "/", "%", "<", ">", "<=", ">=", "==", "!=",
                                                  "&&", "||", "&", "|", "^", "<<", ">>", "@"};
    static const std::vector<std::string> kUn = {"-", "!", "~", "*", "^", "+"};
    static const std::vector<std::string> kFn1 = {"exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin",
                                                  "cos", "abs", "floor", "ceil", "get_program_id",
                                                  "get_num_programs"};
    static const std::vector<std::string> kFn2 = {"min", "max", "umulhi", "cdiv", "atomic_add",
                                                  "atomic_max", "atomic_min", "atomic_xchg"};
    static const std::vector<std::string> kSubs = {"[:, newaxis]", "[newaxis, :]", "[+]", "[:, +]", "[+, :]",
                                                   "[max, :]", "[min]", "[argmax]", "[:, argmin]", "[&]",
                                                   "[|, :]", "[^]", "[:]", "[newaxis]", "[:, :, +]"};
    std::string e = expr(depth + 1);
    switch (pick(rng_, 14)) {
    case 0:
    case 1:
    case 2:
      return e + " " + pickFrom(rng_, kBin) + " " + expr(depth + 1);
    case 3:
      return pickFrom(rng_, kUn) + "(" + e + ")";
    case 4:
      return "(" + e + ")" + pickFrom(rng_, kSubs);
    case 5:
      return pickFrom(rng_, kFn1) + "(" + e + ")";
    case 6:
      return pickFrom(rng_, kFn2) + "(" + e + ", " + expr(depth + 1) + ")";
    case 7:
      return "(" + scalarType() + shape() + ")(" + e + ")";
    case 8:
      return literal() + " ... " + literal();
    case 9:
      return "(" + e + ") ? " + expr(depth + 1) + " : " + expr(depth + 1);
    case 10:
      return "*?(" + e + ") " + varName();
    case 11:
      return "bitcast<" + scalarType() + ">(" + e + ")";
    case 12:
      return pickFrom(rng_, std::vector<std::string>{"fma", "select", "where", "atomic_cas"}) + "(" + e + ", " +
             expr(depth + 1) + ", " + expr(depth + 1) + ")";
    default:
      return varName() + " + " + e + "[:, newaxis] * " + literal();
    }
  }

  std::string indent(int depth) { return std::string(static_cast<size_t>(depth) * 2, ' '); }

  std::string block(int depth) {
    std::string s = "{\n";
    int n = static_cast<int>(pick(rng_, 3));
    for (int i = 0; i < n && budget_ > 0; ++i)
      s += stmt(depth + 1);
    return s + indent(depth) + "}";
  }

  std::string stmt(int depth) {
    --budget_;
    std::string in = indent(depth);
    switch (depth > 3 ? pick(rng_, 5) : pick(rng_, 11)) {
    case 0:
    case 1: {
      Var v;
      v.name = "v" + std::to_string(nextVar_++);
      v.type = scalarType();
      v.pointer = chance(rng_, 1, 5);
      v.shape = shape();
      std::string init = chance(rng_, 1, 6) ? "" : " = " + expr(0);
      vars_.push_back(v);
      return in + v.type + (v.pointer ? " *" : " ") + v.name + v.shape + init + ";\n";
    }
    case 2:
      return in + varName() + " " +
             pickFrom(rng_, std::vector<std::string>{"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=",
                                                     "<<=", ">>="}) +
             " " + expr(0) + ";\n";
    case 3:
      return in + (chance(rng_, 1, 3) ? "*?(" + expr(1) + ") " : "*") + varName() + " = " + expr(0) + ";\n";
    case 4:
      return in + pickFrom(rng_, std::vector<std::string>{"break;", "continue;", "return;", ";",
                                                          "__debug_barrier();", "helper(P0);"}) +
             "\n";
    case 5:
      return in + "if (" + expr(0) + ") " + block(depth) + (chance(rng_, 1, 2) ? " else " + block(depth) : "") +
             "\n";
    case 6:
      return in + "for (int i" + std::to_string(depth) + " = 0; i" + std::to_string(depth) + " < " + literal() +
             "; i" + std::to_string(depth) + (chance(rng_, 1, 2) ? "++" : " += 1") + ") " + block(depth) + "\n";
    case 7:
      return in + "while (" + expr(0) + ") " + block(depth) + "\n";
    case 8:
      return in + "print(\"v\", " + expr(0) + ");\n";
    case 9:
      return in + "assert(" + expr(0) + ", \"message\");\n";
    default: {
      std::string id = std::to_string(nextVar_++);
      std::string s = in + "int r" + id + "[32] = 0 ... 32;\n" + in + "float *ptr" + id + "[32] = " + varName() +
                      " + r" + id + ";\n";
      vars_.push_back(Var{"r" + id, "int", "[32]", false});
      vars_.push_back(Var{"ptr" + id, "float", "[32]", true});
      return s;
    }
    }
  }

  std::mt19937_64 &rng_;
  int budget_;
  int nextVar_ = 0;
  std::vector<Var> vars_;
};

} // namespace

std::string generateKernel(std::mt19937_64 &rng, int size) { return KernelGen(rng, size).generate(); }

} // namespace tc::fuzz
