// OAuth's writes (spec §5.6, docs/MCP.md), bookkeeping as DESIGN.md says (no `_Timeline`, no
// trigger): the grants that are `_Session` rows of their user (auth/oauth.hpp says which). Each
// reads the row it turns on inside its write and lets auth::oauth decide; a refusal that must
// leave a trace (a revoked family) commits before it is answered. A write that fails is
// server_error (500).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "auth/context.hpp"
#include "auth/oauth.hpp"

namespace crmd::write {

// The consent's decision on `ticket`, in one write of `ctx`: spends the ticket and, when `allow`,
// writes a code. The code, or nullopt for a refusal; a ticket already decided is
// auth::oauth::AlreadyDecided() and writes nothing. Needs ctx.credentials.
std::variant<std::optional<std::string>, auth::oauth::Error> DecideTicket(auth::Context& ctx,
                                                                         const auth::oauth::Ticket& ticket, bool allow);

// Spends the single-use token of `request` for `client` (already authenticated) in one write of
// `ctx`: as auth::oauth::JudgeSpend decides, nothing, the token's whole family deleted, or the
// token marked used and new access and refresh rows written. Needs ctx.credentials.
std::variant<auth::oauth::Tokens, auth::oauth::Error> SpendGrant(auth::Context& ctx, const auth::oauth::Client& client,
                                                                 const auth::oauth::SpendRequest& request);

// RFC 7009: ends `token` (a refresh token's whole grant) in one write of `ctx`. A token that is
// unknown, or no access or refresh token, is not an error: nothing is written.
void RevokeGrant(auth::Context& ctx, std::string_view token);

}  // namespace crmd::write
