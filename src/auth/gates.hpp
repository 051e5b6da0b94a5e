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
  // Issue 36, Parse's anonymous users: on, a sign-up or a user's own update carrying
  // `authData.anonymous` signs up, logs in, links or unlinks that id; any other provider answers
  // 252. Off: `authData` is a rights field, the keys' alone.
  bool anonymous_users = false;
  // Issue 36: on, a write a client may make to `_User` (an open sign-up, an own update) may add
  // fields to it, as Parse's default `addField` on `_User` allows. Off: only keys add them.
  bool user_fields = false;
  // Spec §4.7 "a user cannot update their own record". On: a session may update its own `_User`
  // whatever the class's update permission says; the record's ACL, the 206 for another user and
  // the fields only keys write (rights fields, username, email, password) still hold.
  bool self_update = false;
  // Issue 36: on, the master key may drop an empty `_Role` or `_Session` (`DELETE /schemas/_Role`),
  // as Parse drops an empty class; it is put back at once as first defined. Off: system classes stay.
  bool drop_system_classes = false;
  // Issue 36, Parse's installations: on, a request carrying an installation id (the
  // installation-id header, the SDK's `_InstallationId`) creates its own `_Installation` row and
  // reads and updates it, through the row's ACL, which names `installation:<id>`; listing,
  // counting and deleting stay the keys'. Off: `_Installation` is the keys' alone.
  bool installations = false;
  // Issue 36: Parse's other names for what crmd already does, under the keys and rules that
  // decide it (docs/PROFILES.md lists them): `POST /config`, `/verifyPassword`, `/loginAs`, the
  // `Bytes` type, `_created_at`/`_updated_at`, `$score`, `classLevelPermissions: null`, a JSON
  // answer to `DELETE /files`, `redirectClassNameForKey`, a trailing `$lookup`.
  bool parse_names = false;
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
