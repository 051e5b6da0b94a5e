// Sessions (spec §3.2): `_Session` rows keyed by the SHA-256 of their token. A token is
// `r:` + 32 hex characters and is shown once, when the session is created. The rows are written by
// write/session_writes; here they are only read.
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

// A new session token (`r:` + 32 hex characters): what write::CreateSession stores the hash of
// and ResolveSession accepts.
std::string NewSessionToken();

// The identity a token stands for (the user and their roles), or 209 for an unknown, cancelled
// or expired token.
Result<Identity> ResolveSession(app::Application& app, std::string_view token);

// Role names held by `user_id`, inherited ones included (Parse: a role in another role's
// `roles` relation gets that role's permissions).
std::vector<std::string> RolesOf(app::Application& app, const std::string& user_id);

}  // namespace crmd::auth
