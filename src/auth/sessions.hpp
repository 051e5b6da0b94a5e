// Sessions (spec §3.2): `_Session` rows keyed by the SHA-256 of their token. A token is
// `r:` + 32 hex characters and is shown once, when the session is created.
#pragma once

#include <string>
#include <string_view>

#include "auth/context.hpp"
#include "auth/identity.hpp"
#include "storage/database.hpp"
#include "util/result.hpp"

namespace crmd::app {
class Application;
}

namespace crmd::auth {

// Writes a session for `user_id` inside `txn`; returns its token. `created_with` is Parse's
// `{"action":"login"|"signup"}`; `installation_id`, when given, the client's.
std::string CreateSession(app::Application& app, storage::WriteTransaction& txn,
                          const std::string& user_id, std::string_view action, std::string_view installation_id = {});

// The identity a token stands for (the user and their roles), or 209 for an unknown, cancelled
// or expired token.
Result<Identity> ResolveSession(app::Application& app, std::string_view token);

// Deletes one session (logout), as a write of `ctx`. False when there was none.
bool DeleteSession(Context& ctx, const std::string& session_id);

// Deletes every session of `user_id` inside `txn` (password change or reset, user deletion).
void DeleteUserSessions(app::Application& app, storage::WriteTransaction& txn, const std::string& user_id);

// Role names held by `user_id`, inherited ones included (Parse: a role in another role's
// `roles` relation gets that role's permissions).
std::vector<std::string> RolesOf(app::Application& app, const std::string& user_id);

}  // namespace crmd::auth
