// The system classes every application has from its first open: `_User`, `_Session`, `_Role`
// (spec §2.4, §2.6), with their fields and class-level permissions.
//
// Fields whose names start with `_` are crmd's own bookkeeping (password hash, lockout, token
// hashes): clients can neither write them (field names start with a letter) nor read them
// (schema::IsSecretField), except where a route returns one on purpose (`_failed_login_count`
// in the login response).
#pragma once

#include <string_view>
#include <vector>

#include "schema/class_schema.hpp"
#include "schema/row.hpp"

namespace crmd::schema {

inline constexpr std::string_view kUserClass = "_User";
inline constexpr std::string_view kSessionClass = "_Session";

inline constexpr const char* kHashedPassword = "_hashed_password";
inline constexpr const char* kFailedLogins = "_failed_login_count";
inline constexpr const char* kLockoutUntil = "_account_lockout_expires_at";
inline constexpr const char* kResetTokenHash = "_perishable_token";
inline constexpr const char* kResetTokenExpires = "_perishable_token_expires_at";
inline constexpr const char* kSessionTokenHash = "_session_token";
// The SHA-256 of the user's Parse anonymous id (`authData.anonymous.id`), which signs them in.
inline constexpr const char* kAnonymousIdHash = "_auth_anonymous";
// True on the one `_User` that stands for master-key and API-key writes (the system user).
inline constexpr const char* kSystemUserFlag = "_system_user";

std::vector<ClassSchema> SystemClasses();

// Whether `row` (read with the columns of `users`, the `_User` class) is the system user.
bool IsSystemUser(const ClassSchema& users, const Row& row);

}  // namespace crmd::schema
