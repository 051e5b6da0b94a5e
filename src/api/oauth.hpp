// The HTTP side of crmd's OAuth 2.1 authorization server for MCP (auth/oauth.hpp; docs/MCP.md),
// one per application, outside the prefix:
//   GET  /.well-known/oauth-protected-resource/mcp/<appId>    RFC 9728, the MCP URL's metadata
//   GET  /.well-known/oauth-authorization-server/oauth/<appId> RFC 8414, the issuer's metadata
//   POST /oauth/<appId>/register                               RFC 7591 dynamic registration
//   GET|POST /oauth/<appId>/authorize                          sign-in (the files' gate form), then consent
//   POST /oauth/<appId>/token                                  authorization_code (PKCE S256), refresh_token
//   POST /oauth/<appId>/revoke                                 RFC 7009
// Browser pages are plain HTML (api/html_page); API answers are JSON with `Cache-Control: no-store`.
#pragma once

#include <string>
#include <string_view>

#include "api/message.hpp"
#include "api/target.hpp"
#include "app/application.hpp"
#include "auth/context.hpp"

namespace crmd::api {

// `<public-url>/mcp/<appId>`: the resource tokens are bound to.
std::string McpResource(const app::Application& app);
// `<public-url>/.well-known/oauth-protected-resource/mcp/<appId>` (no store needed to say it).
std::string ProtectedResourceMetadataUrl(const app::Settings& settings, std::string_view app_id);

// `target.segments` start with `.well-known` or `oauth`; `ctx.app` and `ctx.credentials` are the
// application the path names (null: none, 404).
Response HandleOAuth(const Request& request, const Target& target, auth::Context& ctx);

}  // namespace crmd::api
