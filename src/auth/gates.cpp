#include "auth/gates.hpp"

#include <algorithm>
#include <cctype>

#include "schema/names.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"

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
    {"anonymous-users", "anonymousUsers", "off", "on", &Gates::anonymous_users, false},
    {"user-fields", "userFields", "closed", "open", &Gates::user_fields, false},
    {"self-update", "selfUpdate", "off", "on", &Gates::self_update, false},
    {"drop-system-classes", "dropSystemClasses", "off", "on", &Gates::drop_system_classes, false},
    {"installations", "installations", "off", "on", &Gates::installations, false},
    {"parse-names", "parseNames", "off", "on", &Gates::parse_names, false},
};

constexpr std::string_view kWebToTableOption = "web2table-classes";
constexpr std::string_view kWebToTableKey = "web2tableClasses";

// `A,B,C` as a list of class names (`*` or nothing: none, which means all); nullopt when a name is
// no class a form may write.
std::optional<std::vector<std::string>> ClassList(std::string_view value) {
  std::vector<std::string> out;
  if (value == "*" || value.empty()) return out;
  for (std::string_view name : Split(value, ',')) {
    if (!schema::IsValidUserClassName(name) || name == "Config") return std::nullopt;
    out.emplace_back(name);
  }
  return out;
}

std::string ListText(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

bool Closed(const Gates& gates, const Setting& s) { return gates.*s.field == s.closed_is_true; }

// The file quota (issue 31 #18): its CLI option and stored name, and the largest value taken
// (a million TiB: beyond any disk, and far from overflowing a byte count).
constexpr std::string_view kQuotaOption = "file-quota-mib";
constexpr std::string_view kQuotaKey = "fileQuotaMiB";
constexpr std::int64_t kMaxQuotaMib = std::int64_t{1} << 40;

std::optional<std::int64_t> QuotaMib(std::string_view text) {
  if (text.empty() || text.size() > 15) return std::nullopt;
  std::int64_t mib = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    mib = mib * 10 + (c - '0');
  }
  if (mib > kMaxQuotaMib) return std::nullopt;
  return mib;
}

// The mail sender (issue 34): its CLI options and stored names, and what each may hold. A name is
// one header phrase (no control character, no quote or backslash, at most 100 bytes); an
// address is a plain `local@domain` (no display part, no comments): nothing a header could be
// broken out of.
constexpr std::string_view kMailNameOption = "mail-from-name", kMailNameKey = "mailFromName";
constexpr std::string_view kMailFromOption = "mail-from", kMailFromKey = "mailFrom";
constexpr std::size_t kMaxMailName = 100, kMaxMailAddress = 254;

bool IsMailName(std::string_view name) {
  if (name.empty() || name.size() > kMaxMailName) return false;
  for (unsigned char c : name)
    if (c < 0x20 || c == 0x7f || c == '"' || c == '\\') return false;
  return true;
}

bool IsMailAddress(std::string_view address) {
  const auto at = address.find('@');
  if (address.size() > kMaxMailAddress || at == std::string_view::npos || at == 0 || at + 1 == address.size() ||
      address.find('@', at + 1) != std::string_view::npos)
    return false;
  for (unsigned char c : address)
    if (!std::isalnum(c) && std::string_view("@._%+-").find(static_cast<char>(c)) == std::string_view::npos) return false;
  return true;
}

// Realtime opt-in (issue 36): `*`, or class names (user classes, and `_User` and `_Role` as in
// Parse); nullopt when a name is neither.
constexpr std::string_view kLiveOption = "live-classes", kLiveKey = "liveClasses";

bool SetLive(Gates& gates, std::string_view value) {
  if (value == "*" || value == "-" || value.empty()) {
    gates.live_all_classes = value == "*";
    gates.live_classes.clear();
    return true;
  }
  std::vector<std::string> names;
  for (std::string_view name : Split(value, ',')) {
    if (!schema::IsValidUserClassName(name) && name != "_User" && name != "_Role") return false;
    names.emplace_back(name);
  }
  gates.live_all_classes = false;
  gates.live_classes = std::move(names);
  return true;
}

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

bool Gates::LiveClass(std::string_view class_name) const {
  if (live_all_classes) return true;
  return std::find(live_classes.begin(), live_classes.end(), class_name) != live_classes.end();
}

Gates GatesFrom(std::string_view text) {
  Gates gates;
  if (text.empty()) return gates;
  auto parsed = ParseJson(text);
  if (!parsed.ok() || !parsed.value().is_object()) return gates;
  const auto& stored = parsed.value().get_object();
  for (const auto& s : kSettings)
    if (const auto* v = stored.if_contains(s.key); v && v->is_string()) Set(gates, s, v->get_string());
  if (const auto* v = stored.if_contains(kWebToTableKey); v && v->is_string())
    if (auto list = ClassList(v->get_string())) gates.web2table_classes = std::move(*list);
  if (const auto* v = stored.if_contains(kQuotaKey); v && v->is_int64() && v->get_int64() > 0 && v->get_int64() <= kMaxQuotaMib)
    gates.file_quota_mib = v->get_int64();
  if (const auto* v = stored.if_contains(kLiveKey); v && v->is_string()) SetLive(gates, v->get_string());
  if (const auto* v = stored.if_contains(kMailNameKey); v && v->is_string() && IsMailName(v->get_string()))
    gates.mail_from_name = v->get_string();
  if (const auto* v = stored.if_contains(kMailFromKey); v && v->is_string() && IsMailAddress(v->get_string()))
    gates.mail_from = v->get_string();
  return gates;
}

json::object GatesObject(const Gates& gates) {
  json::object out;
  for (const auto& s : kSettings) out[s.key] = Closed(gates, s) ? s.closed : s.open;
  if (!gates.web2table_classes.empty()) out[kWebToTableKey] = ListText(gates.web2table_classes);
  if (gates.file_quota_mib > 0) out[kQuotaKey] = gates.file_quota_mib;
  if (gates.live_all_classes) out[kLiveKey] = "*";
  else if (!gates.live_classes.empty()) out[kLiveKey] = ListText(gates.live_classes);
  if (!gates.mail_from_name.empty()) out[kMailNameKey] = gates.mail_from_name;
  if (!gates.mail_from.empty()) out[kMailFromKey] = gates.mail_from;
  return out;
}

std::optional<std::string> SetGate(Gates& gates, std::string_view name, std::string_view value) {
  for (const auto& s : kSettings)
    if (s.option == name) return Set(gates, s, value);
  if (name == kWebToTableOption) {
    auto list = ClassList(value);
    if (!list) return "--web2table-classes takes class names separated by commas (not Config, system or log classes), or *";
    gates.web2table_classes = std::move(*list);
    return std::nullopt;
  }
  if (name == kQuotaOption) {
    const auto mib = QuotaMib(value);
    if (!mib) return "--" + std::string(kQuotaOption) + " takes a number of MiB (0: no quota)";
    gates.file_quota_mib = *mib;
    return std::nullopt;
  }
  if (name == kLiveOption) {
    if (!SetLive(gates, value)) return "--live-classes takes class names separated by commas, * for all, or - for none";
    return std::nullopt;
  }
  if (name == kMailNameOption || name == kMailFromOption) {
    const bool is_name = name == kMailNameOption;
    std::string& field = is_name ? gates.mail_from_name : gates.mail_from;
    if (value == "-") {
      field.clear();
      return std::nullopt;
    }
    if (is_name ? !IsMailName(value) : !IsMailAddress(value))
      return is_name ? "--mail-from-name takes up to 100 bytes without control characters, quotes or backslashes (- clears it)"
                     : "--mail-from takes a plain address, local@domain (- clears it)";
    field = std::string(value);
    return std::nullopt;
  }
  return "no gate named " + std::string(name);
}

}  // namespace crmd::auth
