#include "triggers/placeholders.hpp"

#include "schema/names.hpp"
#include "util/json.hpp"

namespace crmd::triggers {

namespace json = boost::json;

namespace {

std::string ValueText(const json::value* value) {
  if (!value || value->is_null()) return {};
  if (value->is_string()) return std::string(value->get_string());
  if (const auto* o = value->if_object()) {
    const auto* type = o->if_contains("__type");
    if (type && type->is_string()) {
      if (const auto* id = o->if_contains("objectId"); id && id->is_string()) return std::string(id->get_string());
      if (const auto* iso = o->if_contains("iso"); iso && iso->is_string()) return std::string(iso->get_string());
      if (const auto* url = o->if_contains("url"); url && url->is_string()) return std::string(url->get_string());
    }
  }
  return ToJson(*value);
}

}  // namespace

std::string Fill(std::string_view text, const json::object& record) {
  if (text.find("{{") == std::string_view::npos) return std::string(text);
  std::string out;
  out.reserve(text.size());
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t open = text.find("{{", at);
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    const std::string_view name = text.substr(open + 2, close - open - 2);
    out.append(text.substr(at, open - at));
    const bool field = schema::IsValidFieldName(name) || name == "objectId" || name == "createdAt" || name == "updatedAt";
    if (field) out += ValueText(record.if_contains(name));
    else out.append(text.substr(open, close + 2 - open));
    at = close + 2;
  }
  out.append(text.substr(at));
  return out;
}

json::value FillAll(const json::value& value, const json::object& record) {
  switch (value.kind()) {
    case json::kind::string: return json::value(Fill(value.get_string(), record));
    case json::kind::array: {
      json::array out;
      for (const auto& v : value.get_array()) out.push_back(FillAll(v, record));
      return out;
    }
    case json::kind::object: {
      json::object out;
      for (const auto& kv : value.get_object()) out.emplace(kv.key(), FillAll(kv.value(), record));
      return out;
    }
    default: return value;
  }
}

}  // namespace crmd::triggers
