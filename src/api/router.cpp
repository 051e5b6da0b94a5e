#include "api/router.hpp"

#include <boost/algorithm/string/case_conv.hpp>
#include <boost/algorithm/string/predicate.hpp>

#include "api/batch.hpp"
#include "api/commit_answer.hpp"
#include "api/cors.hpp"
#include "api/files.hpp"
#include "api/functions.hpp"
#include "api/live_events.hpp"
#include "api/mcp.hpp"
#include "api/mcp_files.hpp"
#include "mcp/tool.hpp"
#include "api/oauth.hpp"
#include "auth/oauth.hpp"
#include "api/parse_routes.hpp"
#include "api/parse_server_info.hpp"
#include "api/password_page.hpp"
#include "api/records.hpp"
#include "api/routes.hpp"
#include "api/schemas.hpp"
#include "api/signin_gate.hpp"
#include "api/users.hpp"
#include "query/aggregate.hpp"
#include "auth/sessions.hpp"
#include "api/target.hpp"
#include "auth/identity.hpp"
#include "files/file_names.hpp"
#include "files/file_usage.hpp"
#include "functions/forms.hpp"
#include "storage/read_deadline.hpp"
#include "storage/storage_error.hpp"
#include "metrics/metrics.hpp"
#include "util/errors.hpp"
#include "util/json.hpp"
#include "util/log.hpp"
#include "util/time.hpp"
#include "write/record_writer.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

// Parse's installations (auth::Gates::installations): the request's installation id names the
// caller in ACLs, for every decision about it, from the head on.
void NameInstallation(auth::Identity& identity, std::string_view installation_id) {
  if (identity.gates.installations && !identity.IsMaster() && identity.principal != auth::Principal::kRejected &&
      auth::IsInstallationId(installation_id))
    identity.installation_id = std::string(installation_id);
}

std::string Capitalised(std::string word) {
  if (!word.empty()) word[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(word[0])));
  return word;
}

// The records route (routes.hpp) as a create (`/prefix/classes/T`), an update or a delete
// (`/prefix/classes/T/id`) in a class of the application's own: its write queue may run it.
// System classes stay on the writer threads: a signup hashes a password, and no write of the
// application should wait behind it in its queue.
bool IsOwnRecordWrite(Method method, const RouteEntry& route, const std::vector<std::string>& segments) {
  if (route.id != RouteId::kRecords) return false;
  const bool create = method == Method::kPost;
  if (!create && method != Method::kPut && method != Method::kDelete) return false;
  return segments.size() == (create ? 3u : 4u) && !segments[2].empty() && segments[2][0] != '_';
}

// A batch (spec §4.4) of nothing but such writes. Anything else, a malformed batch included,
// takes the writer threads, where the batch handler answers it.
bool IsOwnRecordBatch(const json::value& body, const std::string& prefix) {
  if (!body.is_object()) return false;
  const auto* requests = body.get_object().if_contains("requests");
  if (!requests || !requests->is_array()) return false;
  for (const auto& item : requests->get_array()) {
    const auto* o = item.if_object();
    const auto* method = o ? o->if_contains("method") : nullptr;
    const auto* path = o ? o->if_contains("path") : nullptr;
    if (!method || !path || !method->is_string() || !path->is_string()) return false;
    const std::string_view name = method->get_string();
    const Method m = name == "POST" ? Method::kPost : name == "PUT" ? Method::kPut
                     : name == "DELETE" ? Method::kDelete : Method::kOther;
    auto target = ParseTarget(path->get_string());
    if (!target || !IsOwnRecordWrite(m, MatchRoute(m, target->segments, prefix), target->segments)) return false;
  }
  return true;
}

// An MCP message (api/mcp.hpp) that is one `tools/call` of Create-Data into a class of the
// application's own, made with a key: the record create it dispatches is one the write queue
// takes from the record API (IsOwnRecordWrite), so it goes there too and shares the queue's
// flushes, rather than committing alone on a writer thread. Anything else, a malformed message
// included, takes the writer threads, where HandleMcp answers it.
bool IsOwnRecordCreateCall(const json::value& body) {
  const auto* message = body.if_object();
  const auto* method = message ? message->if_contains("method") : nullptr;
  if (!method || !method->is_string() || method->get_string() != mcp::kToolsCall) return false;
  const auto* params = message->if_contains("params");
  const auto* name = params && params->is_object() ? params->get_object().if_contains("name") : nullptr;
  if (!name || !name->is_string() || name->get_string() != mcp::kCreateDataTool) return false;
  const auto* arguments = params->get_object().if_contains("arguments");
  const auto* table = arguments && arguments->is_object() ? arguments->get_object().if_contains("table") : nullptr;
  return table && table->is_string() && !table->get_string().empty() && table->get_string().front() != '_';
}

// The largest body parsed into an arena: a 50-row batch is ~30 KiB; an 8 MiB body of tiny values
// would take a 64 MiB block from an arena, against its nodes' own size from malloc.
constexpr std::size_t kArenaBodyBytes = 1 << 20;

// The body of a write about to be queued, parsed here on the network thread, so that the queue's
// thread, which every write of the application waits for, does not (a batch's body was parsed
// twice there, and each item once more). Null when there is no body or it is no JSON: the
// handler answers that.
std::shared_ptr<const json::value> ParseAhead(const std::string& body) {
  if (body.empty()) return nullptr;
  if (body.size() > kArenaBodyBytes) {
    auto parsed = ParseJson(body);
    if (!parsed.ok()) return nullptr;
    return std::make_shared<const json::value>(std::move(parsed).value());
  }
  // Up to kArenaBodyBytes, the tree in blocks of one arena, released together with it: no
  // allocation per string, object and array in the parse, no free per node when the tree goes
  // (those were a third of a bulk load's instructions). Blocks start at the body's size rounded up
  // to a power of two and double, so the arena holds at most ~4 times the body until the answer.
  // The nodes point at the arena without owning it (no reference count per node, and no walk of
  // the tree to destroy it): the returned pointer shares ownership of the arena with the tree.
  struct ArenaTree {
    explicit ArenaTree(std::size_t bytes) : arena(bytes) {}
    json::monotonic_resource arena;
    std::optional<json::value> tree;  // destroyed before its arena
  };
  auto owner = std::make_shared<ArenaTree>(body.size());
  auto parsed = ParseJson(body, json::storage_ptr(&owner->arena));
  if (!parsed.ok()) return nullptr;
  owner->tree.emplace(std::move(parsed).value());  // a move keeps the tree's storage
  return std::shared_ptr<const json::value>(owner, &*owner->tree);
}

}  // namespace

Router::Router(RouterOptions options, auth::Registry& registry, app::Applications& apps,
               logs::RequestLog* request_log)
    : options_(std::move(options)), registry_(registry), apps_(apps), request_log_(request_log),
      function_rate_(options_.function_calls_per_minute),
      signin_rate_(options_.signin_per_minute), console_(options_.prefix) {
  header_prefix_ = "X-" + Capitalised(options_.prefix) + "-";
  mcp_files_ = McpFileDoor(options_.prefix);
  mcp_functions_ = [this](auth::Context& ctx, std::string_view name, const boost::json::object& body) {
    Request call;
    call.method = Method::kPost;
    call.method_name = "POST";
    call.target = "/functions/" + ctx.app->id() + "/" + std::string(name);
    call.json_body = std::make_shared<const boost::json::value>(body);
    call.remote_ip = ctx.remote_ip;
    // The tool's call runs here, within its application's share of function threads.
    std::optional<app::FunctionPool::Slot> slot;
    if (options_.function_pool && !functions::IsForm(name)) {
      slot = options_.function_pool->TryEnter(ctx.app->id());
      if (!slot) {
        metrics::CountFunctionCall(metrics::FunctionResult::kBusy);
        return std::pair<int, boost::json::value>{429, boost::json::object{{"error", "Too many requests"}}};
      }
    }
    Response answer = HandleFunction(call, CallOf(ctx.credentials.get(), name), ctx);
    auto json = ParseJson(answer.body);
    return std::pair<int, boost::json::value>{answer.status, json.ok() ? std::move(json).value() : boost::json::value()};
  };
  const std::string lower = boost::algorithm::to_lower_copy(header_prefix_);
  app_id_header_ = lower + "application-id";
  master_key_header_ = lower + "master-key";
  api_key_header_ = lower + "api-key";
  session_token_header_ = lower + "session-token";
  installation_id_header_ = lower + "installation-id";
  transport_ = TransportNames{"/" + options_.prefix + "/", "/" + options_.prefix + "/files/", app_id_header_,
                              master_key_header_, session_token_header_, installation_id_header_, api_key_header_};
  upload_rate_.SetPerMinute(options_.upload_rate);
}

std::string_view Router::FamilyOf(Method method, std::string_view target) const {
  const auto parsed = ParseTarget(target);
  return FamilyName(parsed ? MatchRoute(method, parsed->segments, options_.prefix).id : RouteId::kNone);
}

BodyKind Router::BodyOf(Method method, std::string_view target) const {
  // Reads have no body to speak of: no path to decode for them.
  if (method == Method::kGet || method == Method::kHead || method == Method::kOptions) return BodyKind::kJson;
  const auto parsed = ParseTarget(target);
  return parsed ? MatchRoute(method, parsed->segments, options_.prefix).body : BodyKind::kJson;
}

std::optional<Response> Router::Unwrap(Request& request) {
  try {
    // A file sent as JSON is admitted as a raw upload is by its head, before its base64 is decoded.
    auto answered = UnwrapClientTransport(request, transport_, [this](const Request& named) {
      Caller unused;
      return AdmitUpload(named, unused, /*raw=*/false);
    });
    if (answered) AddCorsHeaders(request, *answered);
    return answered;
  } catch (const std::exception& e) {
    log::Error("reading a client's call failed", {{"method", request.method_name}, {"error", e.what()}});
    auto answer = ErrorResponse(errors::Internal());
    AddCorsHeaders(request, answer);
    return answer;
  }
}

Response Router::Handle(const Request& request, const std::shared_ptr<app::Application>& opened,
                        storage::WriteGroup* queued) {
  Response response;
  Caller caller;
  // Reads are bounded in time: a read request on a network thread gets a slice, where the
  // thread's other connections wait for it; off them (a slow read again, a write's reads on a
  // writer thread) the whole timeout.
  const bool on_loop = (request.method == Method::kGet || request.method == Method::kHead) && !request.off_loop;
  // A slow read's time counts from its arrival: waiting for a slow-read thread is part of it.
  const storage::ReadDeadline deadline(on_loop            ? std::chrono::steady_clock::now() + options_.read_slice
                                       : request.off_loop ? request.arrived + options_.read_timeout
                                                          : std::chrono::steady_clock::now() + options_.read_timeout);
  try {
    response = Route(request, opened, queued, caller);
  } catch (const storage::ReadTimedOut&) {
    if (on_loop) {
      Response again;
      again.run_off_loop = true;
      return again;
    }
    metrics::CountReadTimeout();
    response = ErrorResponse(errors::QueryTimeout(std::chrono::duration_cast<std::chrono::seconds>(options_.read_timeout).count()));
  } catch (const storage::OutOfDescriptors& e) {
    log::Warn("out of file descriptors", {{"method", request.method_name}, {"error", e.what()}});
    apps_.Relieve();  // so that the retry finds some
    response = ErrorResponse(errors::Unavailable("too many open files, try again"));
  } catch (const storage::StoreUnavailable& e) {
    log::Warn("the store is unavailable", {{"method", request.method_name}, {"error", e.what()}});
    response = ErrorResponse(CommitError(storage::CommitOutcome::kUnavailable));
  } catch (const std::exception& e) {
    log::Error("request failed", {{"method", request.method_name}, {"error", e.what()}});
    response = ErrorResponse(errors::Internal());
  }
  if (caller.app && caller.identity.gates.parse_names) NameErrorForParse(response);
  if (request.method != Method::kOptions) AddCorsHeaders(request, response);
  if (caller.app) response.app_id = caller.app->id();
  // Spec §2.6: write requests are logged, reads never.
  const bool write = request.method == Method::kPost || request.method == Method::kPut || request.method == Method::kDelete;
  if (write && caller.app && request_log_) LogWhenSent(request, caller, response);
  return response;
}

void Router::LogWhenSent(const Request& request, const Caller& caller, Response& response) {
  logs::RequestEntry entry;
  entry.path = request.target.substr(0, request.target.find('?'));
  entry.method = request.method_name;
  entry.ip = request.remote_ip;
  if (auto v = request.Header("referer")) entry.referer = std::string(*v);
  if (auto v = request.Header("user-agent")) entry.user_agent = std::string(*v);
  if (auto v = request.Header(installation_id_header_)) entry.installation_id = std::string(*v);
  entry.content_length = static_cast<std::int64_t>(request.body.size());
  if (entry.content_length == 0)  // a body refused before it was read (Early): what was announced
    if (auto v = request.Header("content-length")) entry.content_length = std::strtoll(std::string(*v).c_str(), nullptr, 10);
  entry.service = entry.path.starts_with("/functions/") ? "functions" : "core";
  const auto& identity = caller.identity;
  entry.using_master = identity.IsMaster();
  // Spec §2.6: key requests point at the system user, which stands for them.
  if (identity.principal == auth::Principal::kUser) entry.user_id = identity.user_id;
  else if (identity.IsMaster()) entry.user_id = caller.app->system_user_id();
  response.sent = [log = request_log_, app = caller.app, entry = std::move(entry)](int status, double ms) mutable {
    entry.status = status;
    entry.duration_ms = ms;
    entry.at_millis = timeutil::NowMillis() - static_cast<std::int64_t>(ms);
    log->Append(std::move(app), std::move(entry));
  };
}

bool Router::IsRawUploadWithoutApplication(const Request& head, const std::vector<std::string>& segments) const {
  if (segments.size() != 3 || segments[1] != "files" || head.Header(app_id_header_)) return false;
  // Parse's JSON upload carries its application in the body, and is at most kJsonFileBodyLimit.
  const auto length = head.Header("content-length");
  return !length || std::strtoull(std::string(*length).c_str(), nullptr, 10) > kJsonFileBodyLimit;
}

std::optional<Response> Router::AdmitUpload(const Request& head, Caller& caller, bool raw) {
  auto app_id = head.Header(app_id_header_);
  auto credentials = app_id ? registry_.Find(*app_id) : nullptr;
  if (!credentials) return ErrorResponse(errors::Unauthorized());
  auto identity = auth::ResolveKeys(*credentials, head.Header(master_key_header_), head.Header(api_key_header_));
  auto app = apps_.Open(credentials->app_id);
  caller = Caller{app, identity};
  // A session token exempts its user from the rate only when it is good: the handler would
  // answer a bad one 209 once the body is in; it is answered now instead.
  if (auto token = head.Header(session_token_header_); token && identity.principal == auth::Principal::kAnonymous) {
    auto session = auth::ResolveSession(*app, *token);
    if (!session.ok()) return ErrorResponse(session.error());
    caller.identity = std::move(session).value();
  }
  const bool keyed = caller.identity.IsMaster() || caller.identity.principal == auth::Principal::kUser;
  if (!keyed && !upload_rate_.Take(head.remote_ip)) return ErrorResponse(errors::TooManyRequests());
  // The quota by the tally at hand (no folder read here); the handler decides by the file kept.
  const std::int64_t quota_mib = credentials->gates.file_quota_mib;
  const auto length = raw ? head.Header("content-length") : std::nullopt;
  if (quota_mib > 0 && length) {
    const auto fits = files::FileUsage::Of(app->dir())
                          .Fits(std::strtoull(std::string(*length).c_str(), nullptr, 10), static_cast<std::uint64_t>(quota_mib) << 20);
    if (fits && !*fits) return ErrorResponse(errors::FileQuotaExceeded(quota_mib));
  }
  return std::nullopt;
}

Status Router::CheckCredentials(const Request& head) {
  auto app_id = head.Header(app_id_header_);
  auto credentials = app_id ? registry_.Find(*app_id) : nullptr;
  if (!credentials) return errors::Unauthorized();
  auto identity = auth::ResolveKeys(*credentials, head.Header(master_key_header_), head.Header(api_key_header_));
  if (identity.principal == auth::Principal::kRejected) return errors::Unauthorized();
  if (auto token = head.Header(session_token_header_); token && identity.principal == auth::Principal::kAnonymous) {
    auto session = auth::ResolveSession(*apps_.Open(credentials->app_id), *token);
    if (!session.ok()) return std::move(session).error();
  }
  return {};
}

std::optional<Response> Router::Early(const Request& head) {
  try {
    auto target = ParseTarget(head.target);
    if (!target) return std::nullopt;  // the handler answers it as it always does
    const auto& segments = target->segments;
    const RouteEntry route = MatchRoute(head.method, segments, options_.prefix);
    Caller caller;
    std::optional<Response> decided;
    switch (route.id) {
      case RouteId::kFunction: return EarlyFunction(head, route);
      case RouteId::kMcp: {
        const auto app_id = route.app_in_path.empty() ? head.Header(app_id_header_) : std::optional(route.app_in_path);
        const bool sent = head.Header(master_key_header_) || head.Header(api_key_header_) || head.Header("authorization");
        const auto credentials = app_id ? registry_.Find(*app_id) : nullptr;
        std::optional<std::string> challenge;
        if (credentials && !route.app_in_path.empty())
          challenge = McpChallenge(ProtectedResourceMetadataUrl(apps_.settings(), credentials->app_id));
        decided = RefuseMcpHead(head, sent, credentials != nullptr, challenge);
        break;
      }
      case RouteId::kOAuth:
        // An OAuth server is its application's: none for an application that does not exist.
        if (!registry_.Find(route.app_in_path)) decided = ErrorResponse(ApiError{404, 0, "Not found", ErrorBody::kErrorOnly});
        break;
      case RouteId::kPreflight:
      case RouteId::kHealth:
      case RouteId::kReady:
      case RouteId::kLiveTicket:
      case RouteId::kLiveEvents:
      case RouteId::kOAuthMetadata:
      case RouteId::kStatic:
      case RouteId::kConsole:
      case RouteId::kFileDownload:
      case RouteId::kPage:
        return std::nullopt;  // a browser's or a client's request its handler decides
      default:
        if (!route.prefixed) {
          decided = ErrorResponse(errors::RouteNotFound(head.method_name, target->path));
          break;
        }
        decided = EarlyPrefixed(head, route, segments, caller);
        break;
    }
    if (!decided) return std::nullopt;
    AddCorsHeaders(head, *decided);
    if (caller.app) decided->app_id = caller.app->id();
    if (caller.app && request_log_) LogWhenSent(head, caller, *decided);
    return decided;
  } catch (const std::exception&) {
    return std::nullopt;  // the handler decides, as without this check
  }
}

std::optional<Response> Router::EarlyPrefixed(const Request& head, const RouteEntry& route, const std::vector<std::string>& segments,
                                              Caller& caller) {
  const auto app_id = head.Header(app_id_header_);
  if (head.method == Method::kPost) {
    // A raw upload (issue 31 #9, #18): its caller and the room it asks for are known from here.
    if (route.id == RouteId::kFiles && app_id) return AdmitUpload(head, caller, /*raw=*/true);
    // The header wins over a Parse body's `_ApplicationId` (api/client_transport.hpp): no body
    // can name an application this one does not (issue 31 #9).
    if (app_id && !registry_.Find(*app_id)) return ErrorResponse(errors::Unauthorized());
    // Its body may be a client's call (api/client_transport.hpp): method and credentials.
    if (!IsRawUploadWithoutApplication(head, segments)) return std::nullopt;
  }
  auto credentials = app_id ? registry_.Find(*app_id) : nullptr;
  if (!credentials) return ErrorResponse(errors::Unauthorized());
  auto identity = auth::ResolveKeys(*credentials, head.Header(master_key_header_), head.Header(api_key_header_));
  NameInstallation(identity, head.Header(installation_id_header_).value_or(""));
  // A session token is read from the store by the handler; its answers depend on the user.
  if (identity.principal == auth::Principal::kAnonymous && head.Header(session_token_header_)) return std::nullopt;
  auto app = apps_.Open(credentials->app_id);
  caller = Caller{app, identity};
  if (route.keys_only && !identity.IsMaster()) return ErrorResponse(errors::MasterKeyRequired());
  if (route.id == RouteId::kRecords && (head.method == Method::kPut || head.method == Method::kDelete)) {
    const auth::Operation op = head.method == Method::kPut ? auth::Operation::kUpdate : auth::Operation::kDelete;
    if (auto refused = write::RefuseBeforeBody(identity, op, segments[2], *app->schema())) return ErrorResponse(*refused);
  }
  return std::nullopt;
}

std::optional<Response> Router::EarlyFunction(const Request& head, const RouteEntry& route) {
  auto app_id = head.Header(app_id_header_);
  auto credentials = app_id ? registry_.Find(*app_id) : nullptr;
  std::optional<Response> decided;
  if (!credentials || credentials->app_id != route.app_in_path) {
    decided = ErrorResponse(errors::Unauthorized());
  } else {
    const auto identity = auth::ResolveKeys(*credentials, head.Header(master_key_header_), head.Header(api_key_header_));
    if (!identity.IsMaster() && !function_rate_.Take(head.remote_ip)) {
      metrics::CountFunctionCall(metrics::FunctionResult::kRate);
      decided = ErrorResponse(errors::TooManyRequests());
    }
  }
  // Refusals of a flood are not request-log rows: the log would grow with the flood.
  if (decided) AddCorsHeaders(head, *decided);
  return decided;
}

bool Router::QueueFunction(Request& request, const std::shared_ptr<const auth::AppCredentials>& credentials,
                           std::function<void(Response)>& done) {
  std::shared_ptr<app::Application> app;
  try {
    app = apps_.Open(credentials->app_id);
  } catch (const std::exception&) {
    return false;  // the writer threads run it, and answer the error
  }
  struct Pending {
    Request request;
    std::function<void(Response)> done;
  };
  auto pending = std::make_shared<Pending>(Pending{std::move(request), std::move(done)});
  const bool queued = options_.function_pool->Submit(app->id(), [this, pending, app] {
    Response response = Handle(pending->request, app);
    pending->done(std::move(response));
  });
  if (!queued) {
    metrics::CountFunctionCall(metrics::FunctionResult::kBusy);
    Response busy = ErrorResponse(errors::TooManyRequests());
    AddCorsHeaders(pending->request, busy);
    pending->done(std::move(busy));
  }
  return true;
}

bool Router::QueueWrite(Request& request, std::function<void(Response)>& done) {
  auto target = ParseTarget(request.target);
  if (!target) return false;
  const RouteEntry route = MatchRoute(request.method, target->segments, options_.prefix);
  const bool batch = route.id == RouteId::kBatch;
  // A form call is a short write of its application, as a record write is; a deployed function
  // runs in the function pool, its application's share at most.
  const bool form = route.id == RouteId::kFunction && functions::IsForm(target->segments[2]);
  const bool function = route.id == RouteId::kFunction && !form && options_.function_pool;
  const bool record = IsOwnRecordWrite(request.method, route, target->segments);
  // Key callers only: a bearer token is read from the store first, as a session token is.
  // A large message (a file in base64) is not parsed here, where this thread's other
  // connections would wait for it.
  const bool mcp = route.id == RouteId::kMcp && request.method == Method::kPost && request.body.size() <= kArenaBodyBytes &&
                   (request.Header(master_key_header_) || request.Header(api_key_header_));
  if (!batch && !form && !function && !record && !mcp) return false;
  auto app_id = mcp && !route.app_in_path.empty() ? std::optional<std::string_view>(route.app_in_path) : request.Header(app_id_header_);
  auto credentials = app_id ? registry_.Find(*app_id) : nullptr;
  if (!credentials) return false;  // no body is parsed for a request of no application
  if ((form || function) && credentials->app_id != target->segments[1]) return false;  // answered by the handler
  if (function) {
    if (!credentials->functions.contains(target->segments[2])) return false;  // 400: no such function
    return QueueFunction(request, credentials, done);
  }
  auto body = request.method == Method::kDelete ? nullptr
              : request.json_body                ? request.json_body  // a client's call, read by Unwrap
                                                 : ParseAhead(request.body);
  request.json_body = body;  // also for the writer threads, should the request go there after all
  if (batch && !(body && IsOwnRecordBatch(*body, options_.prefix))) return false;
  if (mcp && !(body && IsOwnRecordCreateCall(*body))) return false;
  std::shared_ptr<app::Application> app;
  app::WriteQueue* queue = nullptr;
  try {
    app = apps_.Open(credentials->app_id);
    queue = &app->writes();
  } catch (const std::exception&) {
    return false;  // no store or no queue: the writer threads run it, and answer the error
  }
  struct Pending {
    Request request;
    Response response;
    std::function<void(Response)> done;
  };
  auto pending = std::make_shared<Pending>(Pending{std::move(request), {}, std::move(done)});
  // The caller's request keeps the parsed body too, and the job lets go of it before answering,
  // so the tree is freed on the network thread that allocated it: glibc takes a chunk freed on
  // another thread back to its own heap under that heap's lock, thousands of them for a batch.
  request.json_body = std::move(body);
  // The job keeps the application open while queued: the store cache closes only applications
  // nobody else holds, so the job never holds the last reference.
  queue->Submit({[this, pending, app](storage::WriteGroup& group) { pending->response = Handle(pending->request, app, &group); },
               [pending](storage::CommitOutcome outcome) {
                 pending->request.json_body.reset();
                 if (!storage::Durable(outcome)) {  // the group's COMMIT failed (logged by the store)
                   auto sent = std::move(pending->response.sent);
                   auto app_id = std::move(pending->response.app_id);
                   pending->response = ErrorResponse(CommitError(outcome));
                   pending->response.sent = std::move(sent);
                   pending->response.app_id = std::move(app_id);
                   AddCorsHeaders(pending->request, pending->response);
                 }
                 pending->done(std::move(pending->response));
               }});
  return true;
}

namespace {
// The registry's region of an open application changed (`crmd app region`): lookups by phone read
// numbers in the new one from this request on.
void FollowRegion(app::Application& app, const auth::AppCredentials& credentials) {
  if (!credentials.region.empty()) app.SetPhoneRegion(credentials.region);
}
}  // namespace

Response Router::Route(const Request& request, const std::shared_ptr<app::Application>& opened,
                       storage::WriteGroup* queued, Caller& caller) {
  auto target = ParseTarget(request.target);
  if (!target) return ErrorResponse(errors::BadRequest("Invalid request target."));
  const auto& segments = target->segments;
  const RouteEntry route = MatchRoute(request.method, segments, options_.prefix);
  switch (route.id) {
    case RouteId::kPreflight: return Preflight(request, header_prefix_);
    case RouteId::kHealth: return JsonResponse(200, boost::json::object{{"status", "ok"}});
    case RouteId::kReady: {
      // Issue 35: for load balancers, unlike /health (liveness): the registry's last poll
      // succeeded and the stores answer (on PostgreSQL, a pooled connection runs a query).
      std::string why;
      if (!registry_.Healthy()) why = "the registry cannot be read";
      else if (!apps_.StoresReady()) why = "the store does not answer";
      if (why.empty()) return JsonResponse(200, boost::json::object{{"status", "ready"}});
      return JsonResponse(503, boost::json::object{{"status", "unavailable"}, {"reason", why}});
    }
    case RouteId::kFunction: return RouteFunction(request, route, segments[2], opened, queued, caller);
    case RouteId::kLiveTicket: {
      if (!live_) return ErrorResponse(errors::RouteNotFound(request.method_name, target->path));
      if (auto checked = CheckCredentials(request); !checked.ok()) return ErrorResponse(checked.error());
      LiveTickets::Ticket ticket{std::string(*request.Header(app_id_header_)), {}};
      for (const auto* name : {&app_id_header_, &master_key_header_, &api_key_header_, &session_token_header_, &installation_id_header_})
        if (auto value = request.Header(*name)) ticket.headers.emplace_back(*name, std::string(*value));
      Response out = JsonResponse(200, boost::json::object{{"ticket", live_tickets_.Issue(std::move(ticket))},
                                                          {"expiresIn", LiveTickets::kLifetime.count()}});
      out.headers.emplace_back("Cache-Control", "no-store");
      return out;
    }
    case RouteId::kLiveEvents:
      if (!live_) return ErrorResponse(errors::RouteNotFound(request.method_name, target->path));
      return LiveEvents(*live_, live_tickets_, *target);
    case RouteId::kOAuth:
    case RouteId::kOAuthMetadata: {
      // MCP's OAuth server and its metadata (api/oauth.hpp): the application is the path's.
      auto credentials = registry_.Find(route.app_in_path);
      auth::Context oauth_ctx;
      oauth_ctx.app = credentials ? apps_.Open(credentials->app_id) : nullptr;
      oauth_ctx.credentials = credentials;
      oauth_ctx.remote_ip = request.remote_ip;
      caller.app = oauth_ctx.app;
      return HandleOAuth(request, *target, oauth_ctx);
    }
    case RouteId::kMcp: return RouteMcp(request, route, opened, queued, caller);
    case RouteId::kStatic: {
      // The static host of public files (spec §4.8), when no CDN fronts crmd.
      auto credentials = registry_.Find(route.app_in_path);
      if (!credentials) return ErrorResponse(ApiError{404, 0, "File not found", ErrorBody::kErrorOnly});
      return HandleStatic(request, *apps_.Open(credentials->app_id), segments[2]);
    }
    case RouteId::kFileDownload: return RouteDownload(request, route, segments);
    case RouteId::kConsole:
      if (!options_.console) return ErrorResponse(errors::RouteNotFound(request.method_name, target->path));
      return console_.Serve(request, segments, PublicBasePath(apps_.settings().public_url));
    case RouteId::kPage: {
      // The pages a person opens in a browser, from a mail or a file's address: no application-id header.
      auto credentials = registry_.Find(route.app_in_path);
      auth::Context page_ctx;  // the browser: no credential
      page_ctx.app = credentials ? apps_.Open(credentials->app_id) : nullptr;
      page_ctx.credentials = credentials;
      if (credentials) page_ctx.identity.gates = credentials->gates;
      page_ctx.remote_ip = request.remote_ip;
      caller.app = page_ctx.app;
      const PageLook look = LookOf(request, *target, credentials.get());
      if (segments[3] == "signin") return HandleSignInGate(request, *target, page_ctx, signin_rate_, look);
      if (segments[3] == "forgot-password") return HandleForgotPasswordPage(request, *target, page_ctx, look);
      return HandlePasswordPage(request, *target, page_ctx, look);
    }
    default:
      if (!route.prefixed) return ErrorResponse(errors::RouteNotFound(request.method_name, target->path));
      break;
  }

  auto app_id = request.Header(app_id_header_);
  if (!app_id) return ErrorResponse(errors::Unauthorized());
  auto credentials = registry_.Find(*app_id);
  if (!credentials) return ErrorResponse(errors::Unauthorized());

  auth::Context ctx;
  ctx.identity = auth::ResolveKeys(*credentials, request.Header(master_key_header_),
                                   request.Header(api_key_header_));
  ctx.remote_ip = request.remote_ip;
  ctx.app = opened && opened->id() == credentials->app_id ? opened : apps_.Open(credentials->app_id);
  ctx.credentials = credentials;
  if (ctx.app == opened) ctx.queued = queued;
  FollowRegion(*ctx.app, *credentials);
  if (auto referer = request.Header("referer")) ctx.referer = std::string(*referer);
  if (auto installation = request.Header(installation_id_header_)) ctx.installation_id = std::string(*installation);
  // A session token counts when no key is sent (a key decides alone). Tokens live in the
  // application's own store, so another application's token is simply unknown: 209.
  caller.app = ctx.app;
  auto token = request.Header(session_token_header_);
  if (ctx.identity.principal == auth::Principal::kAnonymous && token) {
    auto identity = auth::ResolveSession(*ctx.app, *token);
    if (!identity.ok()) return ErrorResponse(identity.error());
    ctx.identity = std::move(identity).value();
    ctx.identity.gates = credentials->gates;
  }
  NameInstallation(ctx.identity, ctx.installation_id);
  caller.identity = ctx.identity;

  return RouteFamily(request, std::move(*target), ctx, token);
}

PageLook Router::LookOf(const Request& request, const Target& target, const auth::AppCredentials* credentials) const {
  PageLook look;
  look.language = PageLanguage(request, target);
  // The links to the other language keep the page's parameters (a reset link's token, the gate's
  // return address), and only GET pages have them: a form's answer is no address to go back to.
  if (request.method == Method::kGet) {
    look.language_base = "?";  // a query alone: the browser keeps the path it sees (behind a proxy too)
    for (const auto& [key, value] : target.params)
      if (key != "lang") look.language_base += files::EncodeSegment(key) + "=" + files::EncodeSegment(value) + "&";
  }
  if (!credentials) return look;
  look.app_name = credentials->name.empty() ? credentials->app_id : credentials->name;
  const auto& settings = apps_.settings();
  const std::string app = files::EncodeSegment(credentials->app_id);
  const std::string lang = look.language == Language::kHebrew ? "?lang=he" : "";
  look.forgot_url = settings.public_url + "/" + settings.prefix + "/apps/" + app + "/forgot-password" + lang;
  // After a reset, a person signs in where crmd offers it: the console, when it is on.
  if (options_.console) look.signin_url = settings.public_url + "/console/" + app + "/";
  return look;
}

Response Router::RouteFunction(const Request& request, const RouteEntry& route, std::string_view name,
                              const std::shared_ptr<app::Application>& opened, storage::WriteGroup* queued, Caller& caller) {
  // Spec §4.9: the public form functions and the operator's, outside the prefix.
  auto app_id = request.Header(app_id_header_);
  auto credentials = app_id ? registry_.Find(*app_id) : nullptr;
  // The header must name the application the path names.
  if (!credentials || credentials->app_id != route.app_in_path) return ErrorResponse(errors::Unauthorized());
  auth::Context ctx;
  ctx.remote_ip = request.remote_ip;
  ctx.app = opened && opened->id() == credentials->app_id ? opened : apps_.Open(credentials->app_id);
  ctx.credentials = credentials;
  if (ctx.app == opened) ctx.queued = queued;
  caller.app = ctx.app;
  FollowRegion(*ctx.app, *credentials);
  return HandleFunction(request, CallOf(credentials.get(), name), ctx);
}

Response Router::RouteDownload(const Request& request, const RouteEntry& route, const std::vector<std::string>& segments) {
  // A file's address is opened in a browser: the application is the path's, not a header's, and
  // the caller a key, a session token, or the sign-in gate's cookie.
  auto credentials = registry_.Find(route.app_in_path);
  if (!credentials) return ErrorResponse(ApiError{404, 0, "File not found", ErrorBody::kErrorOnly});
  auth::Context file_ctx;
  file_ctx.app = apps_.Open(credentials->app_id);
  file_ctx.credentials = credentials;
  file_ctx.remote_ip = request.remote_ip;
  file_ctx.identity = auth::ResolveKeys(*credentials, request.Header(master_key_header_), request.Header(api_key_header_));
  std::optional<std::string> token;
  if (auto header = request.Header(session_token_header_)) token = std::string(*header);
  else token = SessionCookie(request);
  // A token this application does not know (expired, or another application's) is no one:
  // the gate is where a browser gets a good one.
  if (token && file_ctx.identity.principal == auth::Principal::kAnonymous) {
    auto identity = auth::ResolveSession(*file_ctx.app, *token);
    if (identity.ok()) {
      file_ctx.identity = std::move(identity).value();
      file_ctx.identity.gates = credentials->gates;
    }
  }
  return HandleDownload(request, std::vector<std::string>(segments.begin() + 3, segments.end()), file_ctx);
}

Response Router::RouteMcp(const Request& request, const RouteEntry& route, const std::shared_ptr<app::Application>& opened,
                          storage::WriteGroup* queued, Caller& caller) {
  std::optional<std::string_view> app_id = route.app_in_path.empty() ? request.Header(app_id_header_)
                                                                     : std::optional<std::string_view>(route.app_in_path);
  auto credentials = app_id ? registry_.Find(*app_id) : nullptr;
  auto master_key = request.Header(master_key_header_);
  auto api_key = request.Header(api_key_header_);
  auth::Context ctx;
  ctx.remote_ip = request.remote_ip;
  McpCredentials presented = McpCredentials::kNone;
  std::vector<std::string> switches;
  if (master_key || api_key) {
    presented = McpCredentials::kKeys;
    ctx.identity.principal = auth::Principal::kRejected;
    if (credentials) {
      ctx.app = opened && opened->id() == credentials->app_id ? opened : apps_.Open(credentials->app_id);
      if (ctx.app == opened) ctx.queued = queued;  // the write queue's group, which its create joins
      ctx.credentials = credentials;
      ctx.identity = auth::ResolveKeys(*credentials, master_key, api_key);
      FollowRegion(*ctx.app, *credentials);
    }
  } else if (auto authorization = request.Header("authorization")) {
    presented = McpCredentials::kInvalidBearer;
    const std::string_view scheme = "Bearer ";
    if (credentials && authorization->size() > scheme.size() &&
        boost::algorithm::istarts_with(*authorization, scheme)) {
      auto app = apps_.Open(credentials->app_id);
      if (auto bearer = auth::oauth::ResolveAccessToken(*app, *credentials, authorization->substr(scheme.size()), McpResource(*app))) {
        presented = McpCredentials::kBearer;
        ctx.app = std::move(app);
        ctx.credentials = credentials;
        ctx.identity = std::move(bearer->identity);
        ctx.identity.gates = credentials->gates;
        switches = std::move(bearer->switches);
        FollowRegion(*ctx.app, *credentials);
      }
    }
  }
  // Where an OAuth client learns how to sign in: the application's metadata, when it names one.
  std::string metadata_url;
  if (credentials) metadata_url = ProtectedResourceMetadataUrl(apps_.settings(), credentials->app_id);
  caller = Caller{ctx.app, ctx.identity};
  const mcp::DispatchText text = [this](auth::Context& c, std::string_view method, const std::string& target,
                                        const boost::json::value* body) { return DispatchText(c, method, target, body); };
  return HandleMcp(request, ctx, presented, [this](auth::Context& c, std::string_view method, const std::string& target,
                                                   const boost::json::value* body) { return Dispatch(c, method, target, body); },
                   options_.prefix, McpDoors{&mcp_files_, &mcp_functions_, &text},
                   presented == McpCredentials::kBearer ? &switches : nullptr, metadata_url,
                   /*challenge=*/credentials && !route.app_in_path.empty());
}

std::pair<int, boost::json::value> Router::Dispatch(auth::Context& ctx, std::string_view method,
                                                   const std::string& target, const boost::json::value* body) {
  auto [status, text] = DispatchText(ctx, method, target, body);
  auto json = ParseJson(text);
  return {status, json.ok() ? std::move(json).value() : boost::json::value()};
}

std::pair<int, std::string> Router::DispatchText(auth::Context& ctx, std::string_view method, const std::string& target,
                                                 const boost::json::value* body) {
  Request item;
  item.method = method == "POST" ? Method::kPost : method == "PUT" ? Method::kPut : method == "DELETE" ? Method::kDelete : Method::kGet;
  item.method_name = std::string(method);
  item.target = "/" + options_.prefix + target;
  // Not a copy: the caller's body outlives this call, and the handlers keep no request past
  // their answer.
  if (body) item.json_body = std::shared_ptr<const boost::json::value>(std::shared_ptr<const void>(), body);
  auto parsed = ParseTarget(item.target);
  if (!parsed) return {400, R"({"error":"Invalid request target."})"};
  Response answer = RouteFamily(item, std::move(*parsed), ctx, std::nullopt);
  return {answer.status, std::move(answer.body)};
}

Result<boost::json::value> Router::RunFunction(auth::Context& ctx, const std::string& name,
                                               const boost::json::object& body, const boost::json::value& record) {
  const FunctionCall call = CallOf(ctx.credentials.get(), name);
  if (!call.code) return ApiError{400, 0, "User function not found", ErrorBody::kErrorOnly};
  return RunDeployed(call, body, &record, ctx);
}

FunctionCall Router::CallOf(const auth::AppCredentials* credentials, std::string_view name) {
  FunctionCall call;
  call.name = name;
  if (credentials)
    if (auto it = credentials->functions.find(name); it != credentials->functions.end()) call.code = it->second;
  call.limits = options_.function_limits;
  call.dispatch = [this](auth::Context& item_ctx, std::string_view method, const std::string& target,
                         const boost::json::value* item) { return DispatchText(item_ctx, method, target, item); };
  return call;
}

Response Router::RouteFamily(const Request& request, Target target, auth::Context& ctx,
                             std::optional<std::string_view> token) {
  target.segments.erase(target.segments.begin());  // the prefix; the path stays whole, for messages
  const RouteEntry route = MatchPrefixedRoute(request.method, target.segments, options_.prefix);
  if (route.parse_names && !ctx.identity.gates.parse_names)
    return ErrorResponse(errors::RouteNotFound(request.method_name, target.path));
  // Spec §4.5, §4.8, Parse's Config and purge: the route table says which are the keys'.
  if (route.keys_only && !ctx.identity.IsMaster()) return ErrorResponse(errors::MasterKeyRequired());
  const auto send = [this, &ctx](std::string_view method, const std::string& path, const boost::json::value* body) {
    return Dispatch(ctx, method, path, body);
  };
  switch (route.id) {
    case RouteId::kRecords: return HandleRecords(request, target, ctx);
    case RouteId::kSchemas: return HandleSchemas(request, target, ctx);
    case RouteId::kFiles: return HandleFiles(request, target, ctx);
    case RouteId::kUsers: return HandleUsers(request, target, ctx, token);
    case RouteId::kParseConfig: return HandleParseConfig(request, ctx, send);
    case RouteId::kParsePurge: return HandleParsePurge(target.segments[1], ctx, send);
    case RouteId::kParseSessionMe: return HandleParseSessionMe(ctx, token, send);
    case RouteId::kParseServerInfo: return HandleParseServerInfo();
    case RouteId::kHealth: return JsonResponse(200, boost::json::object{{"status", "ok"}});
    case RouteId::kAggregate: {
      Response response;
      auto status = query::Aggregate(ctx, target.segments[1], target.params, response.body);
      if (!status.ok()) return ErrorResponse(status.error());
      return response;
    }
    // Spec §4.9: the generic functions path exists but holds no function.
    case RouteId::kGenericFunction: return ErrorResponse(errors::FunctionNotFound());
    case RouteId::kFunctionList:
      return ctx.credentials ? ListFunctions(*ctx.credentials) : ErrorResponse(errors::Unauthorized());
    case RouteId::kBatch:
      return HandleBatch(request, ctx, options_.prefix, [this, &ctx, token](const Request& item) {
        // The batch checked the prefix and refused the reset page (no API route).
        auto item_target = ParseTarget(item.target);
        if (!item_target) return ErrorResponse(errors::BadRequest("Invalid request target."));
        // Each item its own context, as if resolved again; it joins the batch's write unit.
        auth::Context item_ctx = ctx;
        return RouteFamily(item, std::move(*item_target), item_ctx, token);
      });
    default: return ErrorResponse(errors::RouteNotFound(request.method_name, target.path));
  }
}

}  // namespace crmd::api
