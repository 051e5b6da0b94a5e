// Building blocks of the tools' input schemas (the JSON Schema subset of mcp/arguments.hpp), so
// that a tool's definition reads as its arguments: `Params({{"table", Table()}, {"limit",
// Int("Rows", 1, 2000)}}, {"table"})`.
#pragma once

#include <boost/json.hpp>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <utility>

namespace crmd::mcp::args {

inline boost::json::object Str(std::string_view description, std::int64_t max_length = 1024) {
  return {{"type", "string"}, {"minLength", 1}, {"maxLength", max_length}, {"description", description}};
}
// A table (class) name.
inline boost::json::object Table() { return Str("The table (class) name, as Get-Schema names it, e.g. Accounts.", 128); }
// A record's objectId.
inline boost::json::object Id(std::string_view description = "The record's objectId.") { return Str(description, 64); }
inline boost::json::object Int(std::string_view description, std::int64_t min, std::int64_t max) {
  return {{"type", "integer"}, {"minimum", min}, {"maximum", max}, {"description", description}};
}
inline boost::json::object Bool(std::string_view description) { return {{"type", "boolean"}, {"description", description}}; }
inline boost::json::object Obj(std::string_view description) { return {{"type", "object"}, {"description", description}}; }
inline boost::json::object Arr(std::string_view description, boost::json::object items, std::int64_t max_items) {
  return {{"type", "array"}, {"items", std::move(items)}, {"maxItems", max_items}, {"description", description}};
}
inline boost::json::object Enum(std::string_view description, std::initializer_list<std::string_view> values) {
  boost::json::array list;
  for (auto v : values) list.emplace_back(v);
  return {{"type", "string"}, {"enum", std::move(list)}, {"description", description}};
}
// The arguments object: closed (an unknown argument is an error a model can correct).
inline boost::json::object Params(std::initializer_list<std::pair<std::string_view, boost::json::object>> properties,
                                  std::initializer_list<std::string_view> required = {}) {
  boost::json::object props;
  for (const auto& [name, schema] : properties) props[name] = schema;
  boost::json::array req;
  for (auto r : required) req.emplace_back(r);
  boost::json::object out{{"type", "object"}, {"properties", std::move(props)}, {"additionalProperties", false}};
  if (!req.empty()) out["required"] = std::move(req);
  return out;
}

}  // namespace crmd::mcp::args
