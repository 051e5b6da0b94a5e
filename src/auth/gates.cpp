#include "auth/gates.hpp"

#include "util/json.hpp"

namespace crmd::auth {

namespace json = boost::json;

namespace {

// A gate's two spellings: the one that keeps it closed (the spec's), then the one that opens it.
struct Setting {
  std::string_view option;  // the CLI's name
  std::string_view key;     // the stored name
  std::string_view closed, open;
  bool Gates::*field;
  bool closed_is_true;  // whether the field is true when the gate is closed
};

constexpr Setting kSettings[] = {
    {"captcha", "captcha", "on", "off", &Gates::captcha, true},
    {"signup", "signup", "key", "open", &Gates::signup_needs_key, true},
    {"password-policy", "passwordPolicy", "on", "off", &Gates::password_policy, true},
    {"new-classes", "newClasses", "closed", "open", &Gates::closed_new_classes, true},
    {"dotted-keys", "dottedKeys", "off", "on", &Gates::dotted_keys, false},
};

bool Closed(const Gates& gates, const Setting& s) { return gates.*s.field == s.closed_is_true; }

std::optional<std::string> Set(Gates& gates, const Setting& s, std::string_view value) {
  if (value != s.closed && value != s.open)
    return "--" + std::string(s.option) + " takes " + std::string(s.closed) + " or " + std::string(s.open);
  gates.*s.field = (value == s.closed) == s.closed_is_true;
  return std::nullopt;
}

}  // namespace

Gates Gates::Parse() {
  Gates gates;
  for (const auto& s : kSettings) Set(gates, s, s.open);
  return gates;
}

Gates GatesFrom(std::string_view text) {
  Gates gates;
  if (text.empty()) return gates;
  auto parsed = ParseJson(text);
  if (!parsed.ok() || !parsed.value().is_object()) return gates;
  const auto& stored = parsed.value().get_object();
  for (const auto& s : kSettings)
    if (const auto* v = stored.if_contains(s.key); v && v->is_string()) Set(gates, s, v->get_string());
  return gates;
}

json::object GatesObject(const Gates& gates) {
  json::object out;
  for (const auto& s : kSettings) out[s.key] = Closed(gates, s) ? s.closed : s.open;
  return out;
}

std::optional<std::string> SetGate(Gates& gates, std::string_view name, std::string_view value) {
  for (const auto& s : kSettings)
    if (s.option == name) return Set(gates, s, value);
  return "no gate named " + std::string(name);
}

}  // namespace crmd::auth
