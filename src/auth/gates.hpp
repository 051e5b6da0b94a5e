// The product gates of the spec, each a switch of its application (`crmd app set`), the spec's
// choices by default: they suit this CRM. A Parse app moving over relies on Parse Server's
// defaults instead, which the `parse` profile sets (docs/PROFILES.md). The gates decide only
// whether a door opens; the doors (authorization, the write pipeline) stay the same.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/object.hpp>

namespace crmd::auth {

struct Gates {
  // Spec §4.1: an anonymous record write answers the CAPTCHA 119 before any permission is looked
  // at. Off: the class's permissions and the record's ACL decide, as in Parse.
  bool captcha = true;
  // Spec §4.7, §5.3: sign-up (`POST /users`) needs the master key or an API key. Off: anyone.
  bool signup_needs_key = true;
  // Spec §4.7: a password needs 8 characters, a lower- and an upper-case letter and a digit.
  bool password_policy = true;
  // Only keys make classes, and a class a write makes is closed to everyone but the keys until
  // its permissions are opened. Off: a client's first write makes a class, open to all (Parse's
  // default permissions), and so does the schema API when it is given none.
  bool closed_new_classes = true;
  // Off: a key with a dot is an invalid field name (105). On: `{"object.key": v}` in an update
  // sets, increments or unsets inside an Object field, as in Parse.
  bool dotted_keys = false;
  // The classes `web2table` may write (issue 31 #6), narrower than every class a form may write
  // (never `Config`, system or log classes); empty: all of those. Not a profile's: an operator's
  // choice per application (`--web2table-classes A,B`, `*` for all again).
  std::vector<std::string> web2table_classes;
  // Issue 31 #18: MiB the application's kept files may take at most, 0 for no quota (spec §8: no
  // cap). A limit rather than a gate: `--profile` leaves it as it is. Stored and printed as
  // `"fileQuotaMiB"` only when set.
  std::int64_t file_quota_mib = 0;
  // Issue 34: who the application's mail (reset links) comes from: a display name and an address
  // (`crmd app set --mail-from-name "Acme Sales" --mail-from sales@acme.example`; `-` clears);
  // empty: the server's (`--mail-from`). Settings, not gates: `--profile` leaves them. Stored as
  // `"mailFromName"` and `"mailFrom"` only when set.
  std::string mail_from_name;
  std::string mail_from;
  // Issue 36: the classes realtime subscribers (LiveQuery, docs/LIVEQUERY.md) may watch: none
  // unless the operator opts in (`--live-classes A,B`, `*` for all, `-` for none again). An
  // operator's choice, not a profile's. Stored as `"liveClasses"` only when set.
  bool live_all_classes = false;
  std::vector<std::string> live_classes;
  // Whether subscribers may watch `class_name`.
  bool LiveClass(std::string_view class_name) const;

  // Parse Server's defaults.
  static Gates Parse();
  bool operator==(const Gates&) const = default;
};

// The gates a registry entry holds (its JSON text, empty for the defaults); an unknown or
// malformed setting keeps its default.
Gates GatesFrom(std::string_view text);
// As stored and printed: `{"captcha":"on","signup":"key","passwordPolicy":"on",
// "newClasses":"closed","dottedKeys":"off"}`, and `"web2tableClasses":"A,B"` when narrowed.
boost::json::object GatesObject(const Gates& gates);
// Sets the gate a CLI option names (`captcha`, `signup`, `password-policy`, `new-classes`,
// `dotted-keys`, `web2table-classes`, the limit `file-quota-mib`, the settings `mail-from-name`,
// `mail-from` and `live-classes`) to `value`; the error a
// person reads when either is not one of them.
std::optional<std::string> SetGate(Gates& gates, std::string_view name, std::string_view value);

}  // namespace crmd::auth
