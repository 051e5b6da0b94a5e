#include "schema/names.hpp"

#include <array>

namespace crmd::schema {

namespace {

bool IsLetter(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsIdentifier(std::string_view name) {
  if (name.empty() || name.size() > kMaxNameLength || !IsLetter(name[0])) return false;
  for (char c : name)
    if (!IsLetter(c) && !IsDigit(c) && c != '_') return false;
  return true;
}

// The system classes of spec §2.6 that the record API serves. Join tables and crmd's own
// bookkeeping are deliberately absent: they are never routable.
constexpr std::array<std::string_view, 17> kSystemClasses{
    "_User",          "_Role",          "_Session",           "_Timeline",
    "_syslogTriggers", "_RequestLog",   "_GeneralLogs",       "_Notification",
    "_syslogSMS",     "_syslogCampaignSMS", "_syslogCampaignWA", "_syslogCampaignEmails",
    "_Dictionary",    "_DynamicQueries", "_AutoIncrementValues", "_Installation",
    "_Audience",
};

constexpr std::array<std::string_view, 6> kBuiltinFields{"objectId", "createdAt", "updatedAt",
                                                          "ACL",      "createdBy", "updatedBy"};

}  // namespace

bool IsValidFieldName(std::string_view name) { return IsIdentifier(name); }

bool IsValidUserClassName(std::string_view name) {
  // `sqlite_*` names belong to the embedded store's own tables.
  return IsIdentifier(name) && !(name.size() >= 7 && EqualsIgnoringCase(name.substr(0, 7), "sqlite_"));
}

bool IsSecretField(std::string_view class_name, std::string_view field) {
  // `sessionToken` too: a store written before crmd refused it may hold one as a field.
  return field.starts_with('_') || (class_name == "_User" && (field == "password" || field == "sessionToken"));
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

bool IsSystemClassName(std::string_view name) {
  for (auto n : kSystemClasses)
    if (n == name) return true;
  return false;
}

bool IsBuiltinField(std::string_view name) {
  for (auto n : kBuiltinFields)
    if (n == name) return true;
  return false;
}

}  // namespace crmd::schema
