// The password page a reset mail links to: `GET|POST /{prefix}/apps/{appId}/reset-password`.
// Opened by a person in a browser, so it answers HTML and needs no application-id header.
#pragma once

#include "api/message.hpp"
#include "api/target.hpp"
#include "app/application.hpp"
#include "auth/context.hpp"

namespace crmd::api {

// `ctx.app` is null when the application does not exist; the reset is a write of `ctx`.
Response HandlePasswordPage(const Request& request, const Target& target, auth::Context& ctx);

}  // namespace crmd::api
