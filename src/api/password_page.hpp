// The password pages a person opens in a browser, so they answer HTML and need no
// application-id header:
//   GET|POST /{prefix}/apps/{appId}/reset-password    the page a reset mail links to: a new
//                                                     password, typed twice
//   GET|POST /{prefix}/apps/{appId}/forgot-password   an address to mail a reset link to (the
//                                                     sign-in pages link here); answered the
//                                                     same whether a user has it (spec §4.7)
#pragma once

#include "api/html_page.hpp"
#include "api/message.hpp"
#include "api/target.hpp"
#include "app/application.hpp"
#include "auth/context.hpp"

namespace crmd::api {

// `ctx.app` is null when the application does not exist; the reset is a write of `ctx`.
Response HandlePasswordPage(const Request& request, const Target& target, auth::Context& ctx, const PageLook& look);

// The same `ctx`; the mail goes out as `POST /requestPasswordReset`'s does (its budget too).
Response HandleForgotPasswordPage(const Request& request, const Target& target, auth::Context& ctx, const PageLook& look);

}  // namespace crmd::api
