// Password reset (spec §4.7): a single-use link, valid for an hour, mailed to a known address;
// the page it opens is served by crmd (api/password_page).
#pragma once

#include <string_view>

#include "app/application.hpp"
#include "auth/context.hpp"
#include "util/result.hpp"

namespace crmd::auth {

// How long a reset link works.
inline constexpr std::chrono::hours kResetTokenLifetime{1};

// Mails a reset link when `email` belongs to a user; does nothing otherwise. Callers answer the
// same either way, at once (no address disclosure, in the body or the time): the token is stored
// and the mail sent afterwards, on the application's after-commit thread, at most
// Settings::reset_mails_per_hour times an hour per address. An anonymous caller spends its
// address's budget (auth::PasswordGate): 429 when it is spent.
Status RequestPasswordReset(Context& ctx, std::string_view email);

enum class ResetOutcome { kDone, kWeakPassword, kInvalidToken };

// Sets the password of the token's user. The token is consumed inside one write unit, so of
// concurrent uses exactly one succeeds. Ends every session of the user. The hash passes
// auth::PasswordGate: its errors are an outcome of their own.
Result<ResetOutcome> ResetPassword(Context& ctx, std::string_view token, std::string_view new_password);

}  // namespace crmd::auth
