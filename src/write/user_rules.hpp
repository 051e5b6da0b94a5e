// The `_User` rules of spec §2.4 and §4.7 around the generic write pipeline: passwords are
// checked against the policy and hashed before the write lock is taken (hashing is slow), stored
// only as a hash, and never read back; usernames are required and unique; emails are unique.
#pragma once

#include <boost/json.hpp>
#include <optional>
#include <string>

#include "auth/identity.hpp"
#include "storage/database.hpp"
#include "util/result.hpp"
#include "write/field_changes.hpp"

namespace crmd::write {

struct UserWrite {
  std::optional<std::string> password_hash;  // set when the body changes the password
};

// Outside the lock: the body's password (policy, then argon2id) or, for an import with a key, a
// bcrypt/argon2id `_hashed_password`. On create a password is required.
Result<UserWrite> PrepareUserWrite(const boost::json::object& body, WriteKind kind,
                                   const auth::Identity& identity);

// Inside the transaction: username presence and uniqueness, email uniqueness, and the hash
// column. `self` is the record being written (empty on create).
Status ApplyUserRules(storage::WriteTransaction& txn, const schema::ClassSchema& cls,
                      const boost::json::object& body, WriteKind kind, const std::string& self,
                      const UserWrite& user, FieldChanges& changes);

}  // namespace crmd::write
