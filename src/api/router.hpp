// The HTTP-facing entry of crmd: checks the application id and credentials, routes by path to
// one handler per route family, and turns every outcome (faults included) into a Response.
//
// Thread-safe: Handle() is called concurrently from all server threads.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "api/client_transport.hpp"
#include "api/console.hpp"
#include "api/functions.hpp"
#include "api/html_page.hpp"
#include "api/live_tickets.hpp"
#include "api/message.hpp"
#include "api/routes.hpp"
#include "api/signin_gate.hpp"
#include "functions/lua_function.hpp"
#include "api/target.hpp"
#include "app/application.hpp"
#include "app/function_pool.hpp"
#include "auth/context.hpp"
#include "auth/registry.hpp"
#include "logs/request_log.hpp"
#include "mcp/tool.hpp"
#include "util/address_rate.hpp"

namespace crmd::api {

class LiveHub;

struct RouterOptions {
  // The word in `/core/...` and `X-Core-*` (DESIGN.md rule 5): `core`, or `parse` to answer Parse
  // clients.
  std::string prefix = "core";
  // How long a read may run on a network thread, where other connections wait for it, before it
  // is moved to a thread of slow reads; and how long it may run in all (400 124 beyond).
  std::chrono::milliseconds read_slice{20};
  std::chrono::milliseconds read_timeout{15'000};
  // What one call of an operator's Lua function may use.
  functions::LuaLimits function_limits;
  // Where direct calls of operator functions run, an application's share at most (issue 31 #4);
  // null: on the writer thread that took the request (tests).
  app::FunctionPool* function_pool = nullptr;
  // Calls under `/functions/` one address may make a minute without a key (issue 31 #18); 0: no
  // limit. 60: a person filling forms never comes near it; a script flooding one does at once.
  int function_calls_per_minute = 60;
  // Sign-in gate posts per address a minute (`--signin-rate`; 0: no limit).
  int signin_per_minute = kDefaultSignInPerMinute;
  // Issue 31 #18: uploads a caller without a key (nor a session) may start per address and minute,
  // 0 for no limit. A browser form attaching a few files a minute stays far below; a script
  // filling the disk anonymously is held to a trickle.
  int upload_rate = 30;
  // Issue 34: the console at `/console/` (`--console on|off`).
  bool console = true;
};

class Router {
 public:
  // `request_log` (may be null) gets a row for every write request of a known application.
  Router(RouterOptions options, auth::Registry& registry, app::Applications& apps,
         logs::RequestLog* request_log = nullptr);

  // `opened`, when given, is the request's application already opened: a queued write's job has
  // it, and must not look applications up while its queue holds the store (that lookup waits for
  // a store being opened, which waits for its store's write lock). `queued` is that job's write
  // group, in which the request's writes begin.
  Response Handle(const Request& request, const std::shared_ptr<app::Application>& opened = nullptr,
                  storage::WriteGroup* queued = nullptr);

  // Record writes (create, update, delete in a class of the application's own, and batches of
  // nothing else) go to their application's write queue (app/write_queue.hpp) instead of a writer
  // thread: returns false for any other request, or takes `request` and answers it through
  // `done`, once, from the queue's thread, after its writes are durable.
  bool QueueWrite(Request& request, std::function<void(Response)>& done);

  // The answer a request's head already decides (http::Early): a path that is no route, a missing
  // or unknown application id, and what the write pipeline refuses from the caller and path alone
  // (write::RefuseBeforeBody), the schema API to non-master callers, sign-up without a key.
  // nullopt: the body may matter. Never throws.
  std::optional<Response> Early(const Request& head);

  // A request in Parse's client transport rewritten into the plain one (api/client_transport.hpp),
  // or answered when malformed (http::ServerOptions::unwrap). Never throws.
  std::optional<Response> Unwrap(Request& request);

  const std::string& header_prefix() const { return header_prefix_; }
  // The word of `/<prefix>/...` (RouterOptions::prefix).
  const std::string& prefix() const { return options_.prefix; }

  // LiveQuery's connect (api/live_connection.hpp): whether the credential headers of `head` (the
  // application id, a key, a session token) name a known application and a caller; the error a
  // request carrying them would get otherwise. Never throws but StorageError.
  Status CheckCredentials(const Request& head);
  // Issue 36: the LiveQuery hub the server-sent-events routes use (`/<prefix>/live`); until set,
  // those routes answer 404. Set before the server runs.
  void SetLive(LiveHub* hub) { live_ = hub; }

  // What kind of body `method` on `target` reads (the route table; http::ServerOptions::body_of).
  BodyKind BodyOf(Method method, std::string_view target) const;
  // The route family of `method` on `target` (the route table; http::ServerOptions::family_of).
  std::string_view FamilyOf(Method method, std::string_view target) const;

  // A request below the prefix made by a function's `crm` API or a trigger's action, with their
  // context (it joins the context's write unit).
  std::pair<int, boost::json::value> Dispatch(auth::Context& ctx, std::string_view method, const std::string& target,
                                              const boost::json::value* body);
  // The same, answering the body as the handler wrote it (no parse of a large read's JSON).
  std::pair<int, std::string> DispatchText(auth::Context& ctx, std::string_view method, const std::string& target,
                                           const boost::json::value* body);
  // The deployed function `name` of ctx's application, run by a trigger's action with the
  // triggering record (400 `User function not found` when it is gone).
  Result<boost::json::value> RunFunction(auth::Context& ctx, const std::string& name, const boost::json::object& body,
                                         const boost::json::value& record);

 private:
  // Who made a request, once the router knew it: for its `_RequestLog` row.
  struct Caller {
    std::shared_ptr<app::Application> app;
    auth::Identity identity;
  };
  Response Route(const Request& request, const std::shared_ptr<app::Application>& opened, storage::WriteGroup* queued,
                 Caller& caller);
  // `/mcp` and `/mcp/<appId>` (api/mcp.hpp): the caller from the key headers, tools re-entering
  // Dispatch.
  Response RouteMcp(const Request& request, const RouteEntry& route, const std::shared_ptr<app::Application>& opened,
                    storage::WriteGroup* queued, Caller& caller);
  // `POST /functions/<appId>/<fn>` (spec §4.9): the header must name the path's application.
  Response RouteFunction(const Request& request, const RouteEntry& route, std::string_view name,
                         const std::shared_ptr<app::Application>& opened, storage::WriteGroup* queued, Caller& caller);
  // How the pages a person opens are dressed (api/html_page.hpp): language, the application's
  // name, where to ask for a reset link and where to sign in after one.
  PageLook LookOf(const Request& request, const Target& target, const auth::AppCredentials* credentials) const;
  // A file's address (spec §4.8), opened with a key, a session token or the gate's cookie.
  Response RouteDownload(const Request& request, const RouteEntry& route, const std::vector<std::string>& segments);
  // What the head of a request below the prefix decides: its application, a raw upload's
  // admission, a keys-only route, a write the caller cannot make (nullopt: read the body).
  std::optional<Response> EarlyPrefixed(const Request& head, const RouteEntry& route, const std::vector<std::string>& segments,
                                        Caller& caller);
  // An upload with no application-id header that cannot be Parse's JSON upload either (no length,
  // or a larger one): refused by its head, before its body is streamed to disk.
  bool IsRawUploadWithoutApplication(const Request& head, const std::vector<std::string>& segments) const;
  // `POST /functions/<appId>/<fn>` decided from its head: the header must name the path's
  // application (403), and a caller without a key spends its address's budget (429). Nothing is
  // read of a refused call's body.
  std::optional<Response> EarlyFunction(const Request& head, const RouteEntry& route);
  // A call of a deployed function, queued to the function pool (true: it answers through `done`).
  bool QueueFunction(Request& request, const std::shared_ptr<const auth::AppCredentials>& credentials,
                     std::function<void(Response)>& done);
  // Issue 31 #9, #18: an upload's caller, from its head (or from a JSON file's credentials, before
  // its base64 is decoded): 403 for an application that does not exist, the session's 209 for a
  // token it does not know, 429 `{"error":"Too many requests"}` for a caller without a key or
  // session past its address's upload rate, and for a `raw` upload (the body is the file) 413 when
  // its Content-Length would pass the application's quota. nullopt: the body may be read.
  // `caller` gets the application and identity, if known.
  std::optional<Response> AdmitUpload(const Request& head, Caller& caller, bool raw);
  // Makes `response` hand the request's row to the request log once it is sent.
  void LogWhenSent(const Request& request, const Caller& caller, Response& response);
  // A request below the prefix for a caller already known (its own, or its batch's: the items of a
  // batch are the batch's caller, resolved once, as in Parse).
  // `target` is consumed: its first segment (the prefix) is dropped for the family's handler.
  // A call of the function `name` of the application `credentials` names (its deployed code, if any).
  FunctionCall CallOf(const auth::AppCredentials* credentials, std::string_view name);
  Response RouteFamily(const Request& request, Target target, auth::Context& ctx,
                       std::optional<std::string_view> token);

  RouterOptions options_;
  std::string header_prefix_;  // "X-Core-"
  mcp::FileDoor mcp_files_;     // the file routes as MCP tools reach them
  mcp::FunctionRunner mcp_functions_;  // the functions as MCP's Run-Function reaches them
  // Lower-case header names under the prefix.
  std::string app_id_header_, master_key_header_, api_key_header_, session_token_header_, installation_id_header_;
  TransportNames transport_;
  auth::Registry& registry_;
  app::Applications& apps_;
  logs::RequestLog* request_log_;
  AddressRate function_rate_;  // per address, for calls without a key
  AddressRate signin_rate_;  // the sign-in gate's posts, per address
  AddressRate upload_rate_;  // anonymous uploads per address (RouterOptions::upload_rate)
  Console console_;
  LiveHub* live_ = nullptr;
  LiveTickets live_tickets_;
};

}  // namespace crmd::api
