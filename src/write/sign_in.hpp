// Opening a session for a user found otherwise than by password (issue 36, docs/PROFILES.md): an
// anonymous id (write/anonymous_auth) or the master key's `loginAs`. As a login's write
// (write/login_attempt): bookkeeping, no `_Timeline`, no trigger.
#pragma once

#include <functional>
#include <optional>

#include <boost/json/object.hpp>

#include "auth/context.hpp"
#include "schema/class_schema.hpp"
#include "storage/row.hpp"
#include "storage/write_transaction.hpp"
#include "util/result.hpp"

namespace crmd::write {

// How the user is found inside the write: their row, or nullopt.
using FindUser = std::function<std::optional<storage::Row>(storage::WriteTransaction&, const schema::ClassSchema&)>;

// Signs in the user `find` returns, as a write of `ctx`: `last_success_login` and a new session
// (`createdWith.action` "login"). The answer is the user (no secrets) with `sessionToken`; nullopt
// when `find` finds none, or only the system user, whom nobody signs in as. 101 `User is not
// active.` for a deactivated user.
Result<std::optional<boost::json::object>> SignInUser(auth::Context& ctx, const FindUser& find);

}  // namespace crmd::write
