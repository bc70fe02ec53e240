//===- FuzzInput.h - Inputs of the frontend fuzz test ----------------------===//
//
// A fuzz case is Triton-C source plus the -D/-U options it is compiled with,
// or tile IR text. Cases are built from a seed corpus (examples/, tests/lit/,
// tests/fuzz/corpus/), from generated token soup, deep nesting and random
// kernels, then mutated token-wise. Everything here is deterministic given its
// random inputs (RapidCheck draws those; see FrontendFuzz.cpp).
//
// A saved case is a file: for Triton-C its first lines are `//!fuzz -DNAME=V`,
// `//!fuzz -UNAME`, `//!fuzz -Werror`, `//!fuzz -Wnone` comments holding the
// options, and those lines are part
// of the compiled source, so `frontend_fuzz --check FILE` and
// `tritonc FILE -DNAME=V ...` see exactly what the fuzzer compiled.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tc::fuzz {

/// One Triton-C input: the options and the body (the text after the header).
struct SourceCase {
  std::vector<std::pair<std::string, std::string>> defines;
  std::vector<std::string> undefines;
  bool warningsAsErrors = false; // -Werror
  bool ignoreWarnings = false;   // -Wnone
  std::string body;

  /// The header comment lines (one per option) followed by the body.
  std::string text() const;
  /// The options as command-line flags, e.g. `-DTM=64 -UDEBUG`.
  std::string flags() const;
};

/// Parses a saved case: leading `//!fuzz -D...`/`-U...` lines, then the body.
SourceCase parseSourceCase(const std::string &fileText);

/// One seed file of the corpus.
struct SeedFile {
  std::string path;
  std::string text;
  bool isIR = false; // .tir
  /// -D options found in the file (RUN lines, usage comments), as NAME=VALUE.
  std::vector<std::string> defines;
};

/// Reads every .tc and .tir file under `dir` (recursively), sorted by path.
void loadSeeds(const std::string &dir, std::vector<SeedFile> &out);

/// Splits text into chunks the mutators work on: identifier/number runs,
/// whitespace runs, and single other characters. Concatenating gives the text.
std::vector<std::string_view> splitTokens(std::string_view text);

/// Mutation kinds (see applyMutation).
enum class MutKind : uint8_t {
  DeleteRange,
  DuplicateRange,
  SwapRanges,
  InsertToken,
  ReplaceToken,
  FlipByte,
  Truncate,
  SpliceOther,
  InterestingNumber,
  ShuffleIdentifier,
  NestRange,
  InsertDirective,
  NumKinds
};

/// One mutation: a kind, three random numbers that pick positions and
/// lengths, and a token to insert (from the token generators).
struct Mutation {
  MutKind kind = MutKind::DeleteRange;
  uint32_t a = 0, b = 0, c = 0;
  std::string token;
};

/// Applies `m` to `text`; `other` is a second text for SpliceOther.
std::string applyMutation(const std::string &text, const Mutation &m, const std::string &other);

/// Token tables for generated inputs.
const std::vector<std::string> &sourceTokens();
const std::vector<std::string> &interestingNumbers();
const std::vector<std::string> &irTokens();

/// Base texts that are not from the corpus (all deterministic in `rng`).
std::string generateKernel(std::mt19937_64 &rng, int size);
std::string generateDeepNesting(std::mt19937_64 &rng, int depth);
std::string generateMacroChain(std::mt19937_64 &rng, int length);

/// Candidate -D options (NAME or NAME=VALUE, as after -D on a command line).
const std::vector<std::string> &defineCandidates();
/// Names for -U options.
const std::vector<std::string> &undefineCandidates();

} // namespace tc::fuzz
