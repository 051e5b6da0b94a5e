#include "api/routes.hpp"

namespace crmd::api {

namespace {

bool IsRead(Method method) { return method == Method::kGet || method == Method::kHead; }

RouteEntry Make(RouteId id, BodyKind body = BodyKind::kJson) {
  RouteEntry r;
  r.id = id;
  r.body = body;
  return r;
}

}  // namespace

std::string_view FamilyName(RouteId id) {
  switch (id) {
    case RouteId::kNone: return "other";
    case RouteId::kPreflight: return "preflight";
    case RouteId::kHealth: return "health";
    case RouteId::kReady: return "ready";
    case RouteId::kFunction:
    case RouteId::kGenericFunction:
    case RouteId::kFunctionList: return "functions";
    case RouteId::kOAuthMetadata:
    case RouteId::kOAuth: return "oauth";
    case RouteId::kMcp: return "mcp";
    case RouteId::kStatic: return "static";
    case RouteId::kConsole: return "console";
    case RouteId::kFileDownload:
    case RouteId::kFiles: return "files";
    case RouteId::kPage: return "pages";
    case RouteId::kRecords: return "classes";
    case RouteId::kSchemas: return "schemas";
    case RouteId::kUsers: return "users";
    case RouteId::kAggregate: return "aggregate";
    case RouteId::kBatch: return "batch";
    case RouteId::kParseConfig: return "config";
    case RouteId::kParsePurge: return "purge";
    case RouteId::kParseSessionMe: return "sessions";
    case RouteId::kParseServerInfo: return "serverInfo";
    case RouteId::kLiveTicket:
    case RouteId::kLiveEvents: return "live";
  }
  return "other";
}

RouteEntry MatchPrefixedRoute(Method method, std::span<const std::string> s, std::string_view prefix) {
  RouteEntry r;
  r.prefixed = true;
  const std::string_view family = s.empty() ? std::string_view() : std::string_view(s[0]);
  const bool parse = prefix == "parse";
  if (family == "classes" && (s.size() == 2 || s.size() == 3)) r.id = RouteId::kRecords;
  else if (family == "schemas" && s.size() <= 2) r.id = RouteId::kSchemas, r.keys_only = true;  // spec §4.5
  else if (family == "files" && s.size() == 2)
    r.id = RouteId::kFiles, r.body = BodyKind::kUpload, r.keys_only = method == Method::kDelete;  // spec §4.8
  else if (family == "users" || family == "login" || family == "logout" || family == "requestPasswordReset") r.id = RouteId::kUsers;
  else if (parse && (family == "verifyPassword" || family == "loginAs") && s.size() == 1 &&
           (method == Method::kPost || (method == Method::kGet && family == "verifyPassword")))
    r.id = RouteId::kUsers, r.parse_names = true, r.keys_only = family == "loginAs";
  else if (parse && family == "config" && s.size() == 1 &&
           (method == Method::kGet || method == Method::kPut || method == Method::kPost))
    // Parse: Config is the master key's to write.
    r.id = RouteId::kParseConfig, r.keys_only = method != Method::kGet, r.parse_names = method == Method::kPost;
  else if (parse && family == "purge" && s.size() == 2 && method == Method::kDelete) r.id = RouteId::kParsePurge, r.keys_only = true;
  else if (parse && family == "sessions" && s.size() == 2 && s[1] == "me" && method == Method::kGet) r.id = RouteId::kParseSessionMe;
  // Parse's SDK asks `/parse/health` before it sends a queued save (EventuallyQueue): crmd's
  // liveness answer, as `/health`.
  else if (parse && family == "health" && s.size() == 1 && (method == Method::kGet || method == Method::kHead)) r.id = RouteId::kHealth;
  // Issue 36: what Parse Dashboard asks first (api/parse_server_info.hpp).
  else if (parse && family == "serverInfo" && s.size() == 1 && method == Method::kGet) r.id = RouteId::kParseServerInfo, r.keys_only = true;
  // Spec §4.6: there is no `/core/aggregate/`; Parse's SDKs call `/parse/aggregate/`.
  else if ((family == "classes-aggregate" || (parse && family == "aggregate")) && s.size() == 2 && method == Method::kGet)
    r.id = RouteId::kAggregate;
  // Issue 34: the application's deployed functions, for an operator's console.
  else if (family == "functions" && s.size() == 1 && method == Method::kGet) r.id = RouteId::kFunctionList, r.keys_only = true;
  else if (family == "functions" && s.size() == 2 && (method == Method::kPost || method == Method::kGet)) r.id = RouteId::kGenericFunction;
  else if (family == "batch" && s.size() == 1 && method == Method::kPost) r.id = RouteId::kBatch;
  return r;
}

RouteEntry MatchRoute(Method method, const std::vector<std::string>& s, std::string_view prefix) {
  if (method == Method::kOptions) return Make(RouteId::kPreflight);
  const std::string_view first = s.empty() ? std::string_view() : std::string_view(s[0]);
  if (s.size() == 1 && first == "health" && IsRead(method)) return Make(RouteId::kHealth);
  if (s.size() == 1 && first == "ready" && IsRead(method)) return Make(RouteId::kReady);
  if (s.size() == 3 && first == "functions" && method == Method::kPost) {
    RouteEntry r = Make(RouteId::kFunction);
    r.app_in_path = s[1];
    return r;
  }
  if (s.size() == 4 && first == ".well-known") {
    RouteEntry r = Make(RouteId::kOAuthMetadata);
    r.app_in_path = s[3];
    return r;
  }
  if (s.size() == 3 && first == "oauth") {
    RouteEntry r = Make(RouteId::kOAuth);
    r.app_in_path = s[1];
    return r;
  }
  if (first == "mcp" && s.size() <= 2) {
    RouteEntry r = Make(RouteId::kMcp, BodyKind::kMcp);
    if (s.size() == 2) r.app_in_path = s[1];
    return r;
  }
  if (s.size() == 3 && first == "static" && IsRead(method)) {
    RouteEntry r = Make(RouteId::kStatic);
    r.app_in_path = s[1];
    return r;
  }
  if (first == "console" && IsRead(method)) return Make(RouteId::kConsole);
  if (s.empty() || first != prefix) return RouteEntry{};
  // Issue 36: server-sent events, for clients that cannot send headers (EventSource): a ticket
  // taken with the usual headers, then the stream, which names no application but the ticket's.
  if (s.size() == 3 && s[1] == "live" && s[2] == "ticket" && method == Method::kPost) return Make(RouteId::kLiveTicket);
  if (s.size() == 2 && s[1] == "live" && method == Method::kGet) return Make(RouteId::kLiveEvents);
  // A file's address is opened in a browser: its application is the path's.
  if ((s.size() == 4 || s.size() == 7) && s[1] == "files" && IsRead(method)) {
    RouteEntry r = Make(RouteId::kFileDownload);
    r.app_in_path = s[2];
    return r;
  }
  // The pages a person opens from a mail or a file's address.
  if (s.size() == 4 && s[1] == "apps" && (s[3] == "reset-password" || s[3] == "forgot-password" || s[3] == "signin")) {
    RouteEntry r = Make(RouteId::kPage);
    r.app_in_path = s[2];
    return r;
  }
  return MatchPrefixedRoute(method, std::span<const std::string>(s).subspan(1), prefix);
}

}  // namespace crmd::api
