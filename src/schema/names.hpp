// Which class and field names are legal. Names reach SQL only after passing these checks, and
// storage quotes them as well (two doors, both shut).
#pragma once

#include <string_view>

namespace crmd::schema {

// Longest class or field name; SQLite and PostgreSQL (63) both hold it.
inline constexpr std::size_t kMaxNameLength = 63;

// A field a client may write: a letter, then letters, digits and `_` (Parse's rule; spec §2.2).
bool IsValidFieldName(std::string_view name);

// A class a client may create: a letter, then letters, digits and `_`.
bool IsValidUserClassName(std::string_view name);

// A system class (`_User`, `_Timeline`, ...): known by name only. Allowlist, never a prefix rule.
bool IsSystemClassName(std::string_view name);

// Names of the fields every record has (spec §2.1). Clients do not write them directly.
bool IsBuiltinField(std::string_view name);

// Fields whose values never leave the server in any response and cannot be queried (spec §2.4:
// `password`, even with the master key and `keys=password`; crmd's `_`-prefixed bookkeeping).
bool IsSecretField(std::string_view class_name, std::string_view field);

// Class and field names are compared exactly, but SQL engines fold identifier case: two names
// that differ only in case cannot both be stored.
bool EqualsIgnoringCase(std::string_view a, std::string_view b);

}  // namespace crmd::schema
