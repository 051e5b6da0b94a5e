// JSON in and out. Parsing enforces crmd's limits; writing formats numbers as JavaScript would
// (`1.5`, not Boost's `1.5E0`), because clients compare what they read with what they wrote.
#pragma once

#include <boost/json.hpp>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace crmd {

namespace json = boost::json;

// Why 64: the deepest legitimate CRM Object we know of nests under 10 levels; a JSON bomb of
// 10,000 levels must be refused before it costs stack.
inline constexpr std::size_t kMaxJsonDepth = 64;

// Parses UTF-8 JSON text: strict (no comments, no trailing commas, valid UTF-8), depth-limited.
// The error is the spec's 107 with the parser's reason.
// `too_deep`, when given, is set when the only fault was nesting beyond kMaxJsonDepth.
Result<json::value> ParseJson(std::string_view text, bool* too_deep = nullptr);
// The same, the tree's memory from `storage` (which copies of its values share, as Boost.JSON's do).
Result<json::value> ParseJson(std::string_view text, json::storage_ptr storage);

// Appends the serialisation of `v` to `out`.
void WriteJson(const json::value& v, std::string& out);
// The same for an object, which a json::value would first copy.
void WriteJson(const json::object& o, std::string& out);
std::string ToJson(const json::value& v);

// Appends `s` as a JSON string literal (quotes and escapes included).
void AppendJsonString(std::string_view s, std::string& out);

// JavaScript's Number-to-String for a double (shortest round-trip, no exponent for integers < 1e21).
std::string FormatNumber(double d);

}  // namespace crmd
