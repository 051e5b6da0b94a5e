// Sessions as crmd's bookkeeping (DESIGN.md, "One door per decision"): `_Session` rows written
// straight into the unit's transaction, with no `_Timeline` row and no trigger. What a session
// stands for, and whether a token is still good, is auth/sessions' to say; these only write.
#pragma once

#include <string>
#include <string_view>

#include "auth/context.hpp"
#include "storage/database.hpp"

namespace crmd::app {
class Application;
}

namespace crmd::write {

// Writes a session for `user_id` inside `txn`; returns its token, shown this once. `action` is
// Parse's `createdWith.action` ("login" or "signup"); `installation_id`, when given, the client's.
std::string CreateSession(app::Application& app, storage::WriteTransaction& txn, const std::string& user_id,
                          std::string_view action, std::string_view installation_id = {});

// Deletes one session (logout), as a write of `ctx`. False when there was none, or the write failed.
bool DeleteSession(auth::Context& ctx, const std::string& session_id);

// Deletes every session of `user_id` inside `txn` (password change or reset, deactivation, user
// deletion); OAuth grants are sessions too and go with them. None is not an error. `keep`, when
// given, is the session that stays: the one a user changed their own password with (Parse).
void DeleteUserSessions(app::Application& app, storage::WriteTransaction& txn, const std::string& user_id,
                        std::string_view keep = {});

}  // namespace crmd::write
