// Password reset's writes (spec §4.7), bookkeeping as DESIGN.md says (no `_Timeline`, no trigger):
// a reset token stored on its user, and a token consumed with the new password. auth/password_reset
// decides when and with what.
#pragma once

#include <cstdint>
#include <string>

#include "auth/context.hpp"
#include "auth/password_reset.hpp"
#include "util/result.hpp"

namespace crmd::write {

// Stores `token_hash`, valid until `expires_ms`, on the user whose address is `email`, replacing
// a pending token, in one write of `ctx` (durable on return). False when no user has the address:
// not an error. Fits auth::StoreResetToken.
Result<bool> StoreResetToken(auth::Context& ctx, const std::string& email, const std::string& token_hash,
                             std::int64_t expires_ms);

// Consumes the token of `reset` in one write of `ctx`: the user's password becomes the prepared
// hash, the token and any lock are cleared and every session of the user ends. The token is read
// again inside the write, so of concurrent uses exactly one succeeds; the others, a token that
// expired meanwhile and a write that failed are kInvalidToken.
auth::ResetOutcome ConsumeResetToken(auth::Context& ctx, const auth::PreparedReset& reset);

}  // namespace crmd::write
