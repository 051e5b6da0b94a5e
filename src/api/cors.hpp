// CORS exactly as spec §1: open by default, the request's Origin echoed (never `*`).
#pragma once

#include <string>

#include "api/message.hpp"

namespace crmd::api {

// The answer to any OPTIONS request. `header_prefix` is `X-Core-` (or `X-Parse-` with
// --prefix parse); every header of that family the preflight asks for is allowed.
Response Preflight(const Request& request, const std::string& header_prefix);

// Adds Access-Control-Allow-Origin (the request's Origin) and Vary to a normal response.
void AddCorsHeaders(const Request& request, Response& response);

}  // namespace crmd::api
