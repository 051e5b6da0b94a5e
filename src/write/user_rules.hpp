// The `_User` rules of spec §2.4 and §4.7 around the generic write pipeline: passwords are
// checked against the policy and hashed before the write lock is taken (hashing is slow), stored
// only as a hash, and never read back; usernames are required and unique; emails are unique.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>

#include "auth/identity.hpp"
#include "storage/write_transaction.hpp"
#include "util/result.hpp"
#include "write/anonymous_auth.hpp"
#include "write/field_changes.hpp"

namespace crmd::write {

struct UserWrite {
  std::optional<std::string> password_hash;  // set when the body changes the password
  std::optional<AnonymousAuth> anonymous;    // set when the body links or unlinks an anonymous id
  // A user changed their own address (the selfUpdate gate): it is no longer a verified one.
  bool unverify_email = false;
};

// Outside the lock: the body's password (policy, then argon2id, through auth::PasswordGate, which
// spends `remote_ip`'s budget unless a key writes) or, for an import with a key, a bcrypt/argon2id
// `_hashed_password`. On create a password is required.
Result<UserWrite> PrepareUserWrite(const boost::json::object& body, WriteKind kind,
                                   const auth::Identity& identity, std::string_view remote_ip);

// The `_User` fields that grant, widen or restore access (docs/SECURITY.md, issue 31 #3): the MCP
// switches, whether a login works at all, a verified address, third-party sign-in data. Only the
// Master identity (keys, crmd itself) sets them, at sign-up too, in every profile, by name: they
// are reserved before any schema has them. (The lockout and login-count fields start with `_`,
// which no client writes at all.)
inline constexpr std::string_view kRightsFields[] = {"mcpPermissions", "permissions", "active",
                                                     "emailVerified", "authData", "isPortalUser"};

// Before the lock, for every path that creates `_User` (sign-up, `/classes/_User`, batch items):
// a body naming a rights field answers 119 unless the Master identity writes it.
Status CheckUserCreator(const auth::Identity& identity, const boost::json::object& body);

// Before the lock, for every path that writes `_User` (the users routes and `/classes/_User`):
// another user's session gets 206 (spec §4.7); only keys change `password`, `email`, `username`
// or a rights field.
Status CheckUserWriter(const auth::Identity& identity, const boost::json::object& body,
                       const std::string& target_id);

// Inside the transaction: username presence and uniqueness, email uniqueness, and the hash
// column; a new password or email voids a pending reset link. `self` is the record being written
// (empty on create). Sets `end_sessions` when the user's sessions must end (new password,
// deactivated).
Status ApplyUserRules(storage::WriteTransaction& txn, const schema::ClassSchema& cls,
                      const boost::json::object& body, WriteKind kind, const std::string& self,
                      const UserWrite& user, FieldChanges& changes, bool& end_sessions);

// `_Role` (Parse's rules): a name of letters, digits, `_`, `-` and spaces is required on create,
// unique, and cannot change afterwards, since ACLs and CLPs name roles by it (`role:<name>`).
Status ApplyRoleRules(storage::WriteTransaction& txn, const schema::ClassSchema& cls,
                      const boost::json::object& body, WriteKind kind, const std::string& self);

// The ACL a new user gets when the body sets none (Parse): public read, the user writes.
std::string DefaultUserAcl(const std::string& user_id);

}  // namespace crmd::write
