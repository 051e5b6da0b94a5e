// Handlers of the user routes (spec §4.7): `/users[/me|/{id}]`, `/login`, `/logout`,
// `/requestPasswordReset`. Reads and writes of `_User` records go through the same read and write
// pipelines as `/classes/_User`.
#pragma once

#include "api/message.hpp"
#include "api/target.hpp"
#include "auth/context.hpp"

namespace crmd::api {

// `target.segments` follow the prefix (e.g. {"users", "me"}, {"login"}). `token` is the request's
// session token, if any.
Response HandleUsers(const Request& request, const Target& target, auth::Context& ctx,
                     std::optional<std::string_view> token);

}  // namespace crmd::api
