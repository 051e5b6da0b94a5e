// Handlers of `/classes/{Table}[/{objectId}]` (spec §4.1, §4.2).
#pragma once

#include <string_view>

#include "api/message.hpp"
#include "api/target.hpp"
#include "auth/context.hpp"

namespace crmd::api {

// `segments` follow the prefix: {"classes", Table} or {"classes", Table, objectId}.
Response HandleRecords(const Request& request, const Target& target, auth::Context& ctx);

}  // namespace crmd::api
