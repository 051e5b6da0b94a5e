// Passwords: the spec's policy (§4.7), argon2id hashes for everything crmd writes, and
// verification of bcrypt hashes imported from a Parse Server database.
// Thread-safe. Hashing and verifying are deliberately slow (tens of milliseconds): never call them
// while holding a store's write transaction.
#pragma once

#include <string>
#include <string_view>

namespace crmd::auth {

// (?=.*\d)(?=.*[a-z])(?=.*[A-Z]).{8,}: at least 8 characters, a digit, a lower and an upper case
// ASCII letter. Callers answer every failure with the same 142 message.
bool MeetsPasswordPolicy(std::string_view password);

// An argon2id hash in PHC string form (`$argon2id$v=19$...`).
std::string HashPassword(std::string_view password);

// True when `password` matches `hash` (argon2id, or bcrypt `$2a$`/`$2b$`/`$2y$`). Constant-time
// in the comparison; false for an empty or unknown hash format.
bool VerifyPassword(std::string_view password, const std::string& hash);

// Whether `hash` should be replaced by HashPassword() after a successful login (bcrypt imports).
bool NeedsRehash(const std::string& hash);

// Spends what a verification costs, for logins of unknown users: a failed login takes as long
// whether or not the username exists (SECURITY.md).
void SpendVerificationTime(std::string_view password);

// Whether a hash supplied by an import (master key) is in a format VerifyPassword accepts.
bool IsImportableHash(std::string_view hash);

}  // namespace crmd::auth
