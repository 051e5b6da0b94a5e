#include "mcp/arguments.hpp"

#include <cmath>

namespace crmd::mcp {

namespace json = boost::json;

namespace {

bool IsType(const json::value& v, std::string_view type) {
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_bool();
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "null") return v.is_null();
  if (type == "number") return v.is_number();
  if (type == "integer") {
    if (v.is_int64() || v.is_uint64()) return true;
    return v.is_double() && std::isfinite(v.get_double()) && std::floor(v.get_double()) == v.get_double();
  }
  return false;
}

std::string TypeWords(const json::value& type) {
  if (type.is_string()) {
    const std::string_view t = type.get_string();
    return (t == "object" || t == "array" || t == "integer" ? "an " : "a ") + std::string(t);
  }
  std::string words;
  for (const auto& t : type.get_array()) {
    if (!words.empty()) words += " or ";
    words += TypeWords(t);
  }
  return words;
}

// Characters, not bytes: what a model counts.
std::size_t Utf8Length(std::string_view text) {
  std::size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;
  return n;
}

double Number(const json::value& v) { return v.is_double() ? v.get_double() : v.is_int64() ? double(v.get_int64()) : double(v.get_uint64()); }

std::string Shown(double n) {
  if (std::floor(n) == n && std::fabs(n) < 1e15) return std::to_string(static_cast<long long>(n));
  return std::to_string(n);
}

// "1 character", "2 characters".
std::string Counted(double n, std::string_view noun) {
  return Shown(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

// `path` names `v` for messages: empty for the arguments object itself.
std::optional<std::string> Check(const json::object& schema, const json::value& v, const std::string& path) {
  if (const auto* type = schema.if_contains("type")) {
    bool ok = false;
    if (type->is_string()) ok = IsType(v, type->get_string());
    else if (type->is_array())
      for (const auto& t : type->get_array()) ok = ok || (t.is_string() && IsType(v, t.get_string()));
    if (!ok) return (path.empty() ? std::string("arguments") : path) + " must be " + TypeWords(*type);
  }
  if (const auto* allowed = schema.if_contains("enum"); allowed && allowed->is_array()) {
    bool found = false;
    for (const auto& a : allowed->get_array()) found = found || a == v;
    if (!found) {
      std::string list;
      for (const auto& a : allowed->get_array()) list += (list.empty() ? "" : ", ") + json::serialize(a);
      return path + " must be one of " + list;
    }
  }
  if (v.is_number()) {
    if (const auto* min = schema.if_contains("minimum"); min && Number(v) < Number(*min))
      return path + " must be at least " + Shown(Number(*min));
    if (const auto* max = schema.if_contains("maximum"); max && Number(v) > Number(*max))
      return path + " must be at most " + Shown(Number(*max));
  }
  if (v.is_string()) {
    const std::size_t length = Utf8Length(v.get_string());
    if (const auto* min = schema.if_contains("minLength"); min && length < Number(*min))
      return path + " must have at least " + Counted(Number(*min), "character");
    if (const auto* max = schema.if_contains("maxLength"); max && length > Number(*max))
      return path + " must have at most " + Counted(Number(*max), "character");
  }
  if (v.is_array()) {
    const auto& items = v.get_array();
    if (const auto* min = schema.if_contains("minItems"); min && items.size() < Number(*min))
      return path + " must have at least " + Counted(Number(*min), "item");
    if (const auto* max = schema.if_contains("maxItems"); max && items.size() > Number(*max))
      return path + " must have at most " + Counted(Number(*max), "item");
    if (const auto* item = schema.if_contains("items"); item && item->is_object())
      for (std::size_t i = 0; i < items.size(); ++i)
        if (auto bad = Check(item->get_object(), items[i], path + "[" + std::to_string(i) + "]")) return bad;
  }
  if (v.is_object()) {
    const auto& object = v.get_object();
    const json::object* properties = nullptr;
    if (const auto* p = schema.if_contains("properties"); p && p->is_object()) properties = &p->get_object();
    if (const auto* required = schema.if_contains("required"); required && required->is_array())
      for (const auto& name : required->get_array())
        if (name.is_string() && !object.contains(name.get_string()))
          return (path.empty() ? std::string() : path + ".") + std::string(name.get_string()) + " is required";
    const auto* additional = schema.if_contains("additionalProperties");
    const bool closed = additional && additional->is_bool() && !additional->get_bool();
    for (const auto& [key, value] : object) {
      const std::string where = path.empty() ? std::string(key) : path + "." + std::string(key);
      const json::value* property = properties ? properties->if_contains(key) : nullptr;
      if (!property) {
        if (closed) return where + " is not an argument of this tool";
        continue;
      }
      if (property->is_object())
        if (auto bad = Check(property->get_object(), value, where)) return bad;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> CheckArguments(const json::object& schema, const json::value& arguments) {
  return Check(schema, arguments, "");
}

}  // namespace crmd::mcp
