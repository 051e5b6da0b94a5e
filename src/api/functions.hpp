// `POST /functions/{appId}/{fn}` (spec §4.9): the public form functions. Outside the prefix, with
// the application id header alone; answers and errors are `{"error": ...}` without a code (§7).
#pragma once

#include <string_view>

#include "api/message.hpp"
#include "auth/context.hpp"

namespace crmd::api {

// `ctx` is the caller's, for the application the header and the path both name.
Response HandleFunction(const Request& request, std::string_view name, auth::Context& ctx);

}  // namespace crmd::api
