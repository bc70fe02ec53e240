//===- Json.h - JSON reading for the conformance suite (internal) -------===//
//
// Suite files are parsed into an nlohmann::ordered_json DOM (key order kept:
// the order of `defines` decides the order of variants) with two twists:
//   - a number with a fraction or an exponent is kept as its *text* (a binary
//     value of subtype kRawNumberSubtype; JSON text never produces binary
//     values), so it can be rounded once, correctly, to any dtype;
//   - errors carry the line, the column and the JSON path where parsing
//     stopped, and duplicate keys and nesting deeper than 64 are errors.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace tc::conf {

using Json = nlohmann::ordered_json;

inline constexpr uint8_t kRawNumberSubtype = 0x4e; // 'N'

/// Parses `text`. On failure returns nullopt and sets `error` to
/// "LINE:COL: PATH: message" (PATH omitted at the top level).
std::optional<Json> parseJson(const std::string &text, std::string &error);

/// Whether `j` is a number (integer, unsigned, or a raw decimal text).
bool isNumber(const Json &j);
/// The text of a number as written (integers printed in decimal).
std::string numberText(const Json &j);
/// A number as a double (raw texts through strtod; nullopt if not a number).
std::optional<double> numberValue(const Json &j);
/// An integral number as int64 (nullopt if not a number, not integral or out of range).
std::optional<int64_t> intValue(const Json &j);
/// An integral number as uint64 (nullopt if not a number, negative, not integral or too big).
std::optional<uint64_t> uintValue(const Json &j);
/// "string", "number", "object", ... for messages.
std::string typeName(const Json &j);
/// Compact text of a value for messages (raw numbers as written; long values cut).
std::string shortText(const Json &j);

} // namespace tc::conf
