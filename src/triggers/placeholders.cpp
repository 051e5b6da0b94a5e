#include "triggers/placeholders.hpp"

#include "schema/names.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"

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

// C0 controls, DEL, and the Unicode line breaks (NEL, LINE and PARAGRAPH SEPARATOR) some readers
// also end a line at, each as one space.
std::string OneLine(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c < 0x20 || c == 0x7f) {
      out.push_back(' ');
    } else if (c == 0xc2 && i + 1 < value.size() && static_cast<unsigned char>(value[i + 1]) == 0x85) {
      out.push_back(' ');
      ++i;
    } else if (c == 0xe2 && i + 2 < value.size() && static_cast<unsigned char>(value[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(value[i + 2]) == 0xa8 || static_cast<unsigned char>(value[i + 2]) == 0xa9)) {
      out.push_back(' ');
      i += 2;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  return out;
}

std::string Escaped(std::string value, Escape escape) {
  switch (escape) {
    case Escape::kNone: return value;
    case Escape::kHtml: return EscapeHtml(value);
    case Escape::kHeader: return OneLine(value);
  }
  return value;
}

}  // namespace

std::string Fill(std::string_view text, const json::object& record, Escape escape) {
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
    if (field) out += Escaped(ValueText(record.if_contains(name)), escape);
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
