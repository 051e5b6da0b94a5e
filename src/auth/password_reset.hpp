// Password reset (spec §4.7): a single-use link, valid for an hour, mailed to a known address;
// the page it opens is served by crmd (api/password_page). The decisions are here; the token and
// the new password are written by write/reset_tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

#include "app/application.hpp"
#include "auth/context.hpp"
#include "storage/row.hpp"
#include "util/result.hpp"

namespace crmd::auth {

// How long a reset link works.
inline constexpr std::chrono::hours kResetTokenLifetime{1};

// Stores the hash of a reset token for the user whose address is `email`, valid until
// `expires_ms`, as a write of `ctx` that is durable on return: true when a user has the address.
// write::StoreResetToken is the one; auth/ may not call write/, so it is handed in.
using StoreResetToken = Result<bool> (*)(Context& ctx, const std::string& email, const std::string& token_hash,
                                         std::int64_t expires_ms);

// Mails a reset link when `email` belongs to a user; does nothing otherwise. Callers answer the
// same either way, at once (no address disclosure, in the body or the time): the token is stored
// (by `store`) and the mail sent afterwards, on the application's after-commit thread, at most
// Settings::reset_mails_per_hour times an hour per address. An anonymous caller spends its
// address's budget (auth::PasswordGate): 429 when it is spent.
Status RequestPasswordReset(Context& ctx, std::string_view email, StoreResetToken store);

enum class ResetOutcome { kDone, kWeakPassword, kInvalidToken };

// A reset ready for its write (write::ConsumeResetToken): the token's hash and the new password's.
struct PreparedReset {
  std::string token_hash;
  std::string password_hash;
};

// What a reset needs before its write: the password policy (kWeakPassword), a token that a cheap
// read finds live (kInvalidToken otherwise, so that made-up tokens never reach the slow hash), and
// the new password hashed through auth::PasswordGate, whose errors are the errors here.
Result<std::variant<ResetOutcome, PreparedReset>> PrepareReset(Context& ctx, std::string_view token,
                                                               std::string_view new_password);

// Whether `user` (a `_User` row) holds a reset token that has not expired at `now_iso`.
bool ResetTokenLive(const schema::ClassSchema& users, const storage::Row& user, const std::string& now_iso);

}  // namespace crmd::auth
