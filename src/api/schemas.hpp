// Handlers of `/schemas[/{Table}]` (spec §4.5): master or API key only, which the route table
// (api/routes.hpp) says and the router checks before these run.
#pragma once

#include "api/message.hpp"
#include "api/target.hpp"
#include "auth/context.hpp"

namespace crmd::api {

// `target.segments` follow the prefix: {"schemas"} or {"schemas", Table}.
Response HandleSchemas(const Request& request, const Target& target, auth::Context& ctx);

}  // namespace crmd::api
