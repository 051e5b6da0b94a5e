// The sign-in gate (issue 20, spec §4.8): the page crmd sends a browser to when it may not open a
// file. A user of the application signs in there with the login of `POST /login` (the same
// auth::LogIn: lockout, inactive users, password rate), gets a session cookie and is sent back to
// the file:
//   GET  /<prefix>/apps/<appId>/signin?return=<file url>   the form
//   POST /<prefix>/apps/<appId>/signin                      username, password, return
// The cookie (kSessionCookie, HttpOnly, SameSite=Lax, Secure when the public URL is https) holds
// a session token and is scoped to the application's file addresses, so no other route and no
// other application ever receives it. `return` must be one of those addresses (each path segment
// a name, no dot segments in any spelling): the gate redirects nowhere else. The MCP sign-in
// (OAuth) shows the same form with another continuation.
//
// Issue 31 #12, login CSRF: a post signs in only when it is the form's own. The form carries a
// token (auth/form_token.hpp) of the nonce in kGateCookie (HttpOnly, SameSite=Strict, the gate's
// path only); a browser's Origin must be crmd's public origin (or `null`, which a page without
// referrers sends) and its Sec-Fetch-Site `same-origin`. The operator's `--signin-url` page posts
// from its own origin, which is trusted instead of a token. Anything else is shown the form again
// (403). Posts spend the caller's address budget (AddressRate, `--signin-rate`): 429 beyond.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/html_page.hpp"
#include "api/message.hpp"
#include "api/target.hpp"
#include "app/application.hpp"
#include "auth/context.hpp"
#include "util/address_rate.hpp"

namespace crmd::api {

inline constexpr std::string_view kSessionCookie = "crmd_session";
inline constexpr std::string_view kGateCookie = "crmd_gate";
// Sign-in posts an address may make a minute (`--signin-rate`): a person signs in a few times a
// day, an office behind one address a few times a minute; a guesser is held to this, and the
// password checks behind it to auth::PasswordGate's own budget.
inline constexpr int kDefaultSignInPerMinute = 30;

// `ctx.app` is null when the application does not exist; `ctx` is the browser (no credential).
// `rate` is the process's budget of sign-in posts per address.
// `look` dresses its pages (language, application name, the "forgot password" link).
Response HandleSignInGate(const Request& request, const Target& target, auth::Context& ctx, AddressRate& rate,
                          const PageLook& look);

// The gate's form, for any sign-in that continues elsewhere (the MCP authorization page):
// `heading` says what signing in is for; `hidden` fields travel with the form; `message` (plain
// text) says why it is shown again; `look.forgot_url`, when set, is linked from it.
Response SignInForm(std::string_view heading, const std::vector<std::pair<std::string, std::string>>& hidden,
                    std::string_view message, int status, const PageLook& look = {});

// The page status for a refused sign-in: 429 when rate-limited, else 401.
int SignInRefusedStatus(const ApiError& error);

// 302 to the gate (or to `--signin-url`, with `app` and `return` added to its query), to come back
// to `return_to`, an address of `app`'s files.
Response RedirectToGate(const app::Application& app, const std::string& return_to);

// The base every address of `app`'s files starts with: `<public-url>/<prefix>/files/<appId>/`.
std::string FilesBase(const app::Application& app);

// The value of the cookie `name` in `request`, if any.
std::optional<std::string> CookieValue(const Request& request, std::string_view name);
// The session token the gate's cookie carries in `request`, if any.
std::optional<std::string> SessionCookie(const Request& request);

}  // namespace crmd::api
