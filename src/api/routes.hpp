// Every route of crmd's HTTP API in one table (issue 32). A request is matched once, from its
// method and decoded path, to the route that says what it is and what that decides before any
// handler runs: what of its body the server reads (JSON, a file streamed to disk, an MCP
// message), where the application it names comes from, whether only the Master identity may use
// it (refused from the head), and whether it may run on its application's write queue or the
// function pool. Router::Early, Router::QueueWrite, the server's body limits (Router::BodyOf) and
// Router::Route read this table; the handlers then dispatch by method within their route.
//
//   route            method       path (`P` the prefix, `core` by default)
//   kPreflight       OPTIONS      any
//   kHealth          GET, HEAD    /health
//   kReady           GET, HEAD    /ready
//   kFunction        POST         /functions/<app>/<fn>
//   kOAuthMetadata   any          /.well-known/<document>/<...>/<app>     (4 segments)
//   kOAuth           any          /oauth/<app>/<endpoint>
//   kMcp             any          /mcp, /mcp/<app>
//   kStatic          GET, HEAD    /static/<app>/<name>
//   kConsole         GET, HEAD    /console, /console/<...>                 (the console: api/console)
//   kFileDownload    GET, HEAD    /P/files/<app>/<name>[/<class>/<id>/<field>]
//   kPage            any          /P/apps/<app>/(reset-password|forgot-password|signin)
//   kRecords         any          /P/classes/<class>[/<id>]
//   kSchemas         any          /P/schemas[/<class>]                      keys only
//   kFiles           any          /P/files/<name>                          (upload; delete keys only)
//   kUsers           any          /P/users..., /P/login, /P/logout, /P/requestPasswordReset,
//                                 /P/verifyPassword, /P/loginAs (keys only) (`parse`, parseNames)
//   kAggregate       GET          /P/classes-aggregate/<class>  (and /P/aggregate/<class> under `parse`)
//   kGenericFunction GET, POST    /P/functions/<name>                      (spec §4.9: none)
//   kFunctionList    GET          /P/functions                             keys only (issue 34)
//   kBatch           POST         /P/batch
//   kParseConfig     GET, PUT     /P/config                 (under `parse` only; PUT keys only;
//                    POST                                    POST as PUT where parseNames is on)
//   kParsePurge      DELETE       /P/purge/<class>          (under `parse` only; keys only)
//   kParseSessionMe  GET          /P/sessions/me                           (under `parse` only)
//   kLiveTicket      POST         /P/live/ticket            (issue 36: credentials in headers, docs/LIVEQUERY.md)
//   kLiveEvents      GET          /P/live?ticket=…          (server-sent events; the application from the ticket)
//   kNone            anything else: 404 `Cannot <METHOD> <path>`
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/message.hpp"

namespace crmd::api {

enum class RouteId {
  kNone,
  kPreflight,
  kHealth,
  kReady,
  kFunction,
  kOAuthMetadata,
  kOAuth,
  kMcp,
  kStatic,
  kConsole,
  kFileDownload,
  kPage,
  kRecords,
  kSchemas,
  kFiles,
  kUsers,
  kAggregate,
  kGenericFunction,
  kFunctionList,
  kBatch,
  kParseConfig,
  kParsePurge,
  kParseSessionMe,
  kParseServerInfo,
  kLiveTicket,
  kLiveEvents,
};

// What of a request's body the server reads, and up to which limit (http::ServerOptions).
enum class BodyKind {
  kJson,    // into memory, at most the JSON body limit (8 MiB)
  kUpload,  // a file, streamed to disk (POST), at most --max-file-size
  kMcp,     // an MCP message, at most 24 MiB (a file in base64)
};

// The route's family, a fixed word: the metrics' `family` label (a few series, whatever the paths).
std::string_view FamilyName(RouteId id);

struct RouteEntry {
  RouteId id = RouteId::kNone;
  BodyKind body = BodyKind::kJson;
  // Below the prefix, with the application in the X-<Prefix>-Application-Id header (the other
  // routes name it in their path, or need none).
  bool prefixed = false;
  // Only the Master identity may use it (spec §4.5, §5.3): refused from the head otherwise.
  bool keys_only = false;
  // One of Parse's other names (issue 36): answered only where the application's `parseNames`
  // gate is on (auth::Gates::parse_names), elsewhere as no route.
  bool parse_names = false;
  // The application the path names (functions, OAuth, MCP, static, file downloads, pages); empty
  // when the route has none there.
  std::string_view app_in_path;
};

// The route of `method` on `segments` (ParseTarget's, the whole path); `prefix` is `core`, or
// `parse` (which opens the Parse routes). The views point into `segments`.
RouteEntry MatchRoute(Method method, const std::vector<std::string>& segments, std::string_view prefix);

// The route of a path below the prefix (`segments` without it), as a batch item, a function's
// `crm` call or a tool dispatches it.
RouteEntry MatchPrefixedRoute(Method method, std::span<const std::string> below, std::string_view prefix);

}  // namespace crmd::api
