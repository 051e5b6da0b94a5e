#include "api/mcp.hpp"

#include <cstdlib>
#include <variant>

#include "mcp/json_rpc.hpp"
#include "mcp/protocol.hpp"

namespace crmd::api {

namespace json = boost::json;

namespace {

Response RpcResponse(int status, const json::value& body) {
  Response r = JsonResponse(status, body);
  r.content_type = "application/json";
  // A browser client reads the challenge of a 401 only when it is exposed.
  r.headers.emplace_back("Access-Control-Expose-Headers", "WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version");
  return r;
}

Response TransportError(int status, std::string_view message) {
  return RpcResponse(status, mcp::Failure(nullptr, mcp::kServerError, message));
}

bool IsJson(std::optional<std::string_view> content_type) {
  if (!content_type) return false;
  std::string_view type = content_type->substr(0, content_type->find(';'));
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  return type.size() == 16 && std::equal(type.begin(), type.end(), "application/json",
                                         [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

}  // namespace

std::string McpChallenge(const std::string& metadata_url) {
  return "Bearer resource_metadata=\"" + metadata_url + "\", scope=\"mcp\"";
}

std::optional<Response> RefuseMcpHead(const Request& head, bool credential_sent, bool application_known,
                                      const std::optional<std::string>& challenge) {
  if (head.method != Method::kPost || (credential_sent && application_known)) return std::nullopt;
  const auto length = head.Header("content-length");
  if (length && std::strtoull(std::string(*length).c_str(), nullptr, 10) <= kOpenMcpMessageBytes) return std::nullopt;
  if (!credential_sent) {
    Response r = TransportError(challenge ? 401 : 403, "Authorization header is required");
    if (challenge) r.headers.emplace_back("WWW-Authenticate", *challenge);
    return r;
  }
  return TransportError(413, "Message too large for a caller of no known application");
}

namespace {

// The revision whose clients may send batches: a request that names it, or none (a client that
// has not negotiated yet, or an older one that never sends the header).
bool BatchesAllowed(const Request& request) {
  const auto version = request.Header("mcp-protocol-version");
  return !version || *version == "2025-03-26";
}

// One JSON-RPC request answered: its HTTP status and body.
struct McpAnswer {
  int status = 200;
  json::object body;
  std::optional<std::string> challenge;  // WWW-Authenticate, on a 401 or 403
};

McpAnswer AnswerRequest(const mcp::Message& message, auth::Context& ctx, McpCredentials credentials,
                               const mcp::Dispatch& dispatch, std::string_view prefix, McpDoors doors,
                               const std::vector<std::string>* switches, const std::string& metadata_url, bool challenge) {
  if (mcp::IsOpenMethod(message.method)) return {200, mcp::AnswerOpen(message), std::nullopt};
  if (!mcp::IsKnownMethod(message.method)) return {200, mcp::Failure(message.id, mcp::kMethodNotFound, "Method not found"), std::nullopt};
  // RFC 6750 §3: no error code when no credential came; where to learn the way in, either way.
  const std::string metadata = metadata_url.empty() ? std::string() : ", resource_metadata=\"" + metadata_url + "\"";
  if (credentials == McpCredentials::kNone) {
    // The spec's 403 (§5.6) on `/mcp`; on an application's OAuth resource `/mcp/<appId>` the 401
    // that MCP clients answer by signing in (MCP authorization; docs/COMPATIBILITY.md).
    McpAnswer refused{challenge ? 401 : 403, mcp::Failure(message.id, mcp::kServerError, "Authorization header is required"), std::nullopt};
    if (!metadata_url.empty()) refused.challenge = McpChallenge(metadata_url);
    return refused;
  }
  if (credentials == McpCredentials::kInvalidBearer)
    return {401, mcp::Failure(message.id, mcp::kServerError, "Invalid or expired access token"), "Bearer error=\"invalid_token\"" + metadata};
  static const mcp::FileDoor kNoFiles;
  const mcp::ToolCall call{ctx, dispatch, prefix, doors.files ? doors.files : &kNoFiles, switches, doors.functions, doors.text};
  if (!ctx.app) {
    // Nothing to dispatch to: every tool refuses, as a wrong key of a real application does.
    const json::object* params = message.ParamsObject();
    const json::value* args = params ? params->if_contains("arguments") : nullptr;
    const json::value* table = args && args->is_object() ? args->get_object().if_contains("table") : nullptr;
    const std::string name = table && table->is_string() ? std::string(table->get_string()) : "_User";
    return {200, mcp::Success(message.id, json::object{
        {"content", json::array{json::object{{"type", "text"}, {"text", "Permission denied for action find on class " + name}}}},
        {"isError", true}}), std::nullopt};
  }
  return {200, mcp::AnswerToolCall(message, call), std::nullopt};
}

Response Answered(int status, const json::value& body, const std::optional<std::string>& challenge) {
  Response r = RpcResponse(status, body);
  if (challenge) r.headers.emplace_back("WWW-Authenticate", *challenge);
  return r;
}

Response Accepted() {
  Response accepted = RpcResponse(202, json::value());
  accepted.body.clear();
  return accepted;
}

}  // namespace

Response HandleMcp(const Request& request, auth::Context& ctx, McpCredentials credentials, const mcp::Dispatch& dispatch,
                   std::string_view prefix, McpDoors doors, const std::vector<std::string>* switches,
                   const std::string& metadata_url, bool challenge) {
  if (request.method != Method::kPost) {
    Response r = TransportError(405, "Method not allowed: this endpoint answers POST only");
    r.headers.emplace_back("Allow", "POST, OPTIONS");
    return r;
  }
  // Before any caller check: a newer client falls back to `initialize` on this answer (and gives
  // up on an authentication refusal).
  if (auto version = request.Header("mcp-protocol-version"); version && !mcp::IsSupportedVersion(*version)) {
    std::string supported;
    for (auto v : mcp::kSupportedVersions) supported += (supported.empty() ? "" : ", ") + std::string(v);
    return TransportError(400, "Bad Request: Unsupported protocol version: " + std::string(*version) +
                                   " (supported versions: " + supported + ")");
  }
  if (!IsJson(request.Header("content-type")))
    return TransportError(415, "Unsupported Media Type: Content-Type must be application/json");
  if (mcp::LooksLikeBatch(request.body) && BatchesAllowed(request)) {
    auto batch = mcp::ParseBatch(request.body);
    if (const auto* refused = std::get_if<mcp::Refusal>(&batch)) return RpcResponse(400, mcp::Failure(nullptr, refused->code, refused->message));
    json::array answers;
    for (const json::value& item : std::get<std::vector<json::value>>(batch)) {
      auto read = mcp::ReadMessage(item);
      if (const auto* refused = std::get_if<mcp::Refusal>(&read)) {
        answers.push_back(mcp::Failure(nullptr, refused->code, refused->message));
        continue;
      }
      const mcp::Message& message = std::get<mcp::Message>(read);
      if (message.kind != mcp::Message::Kind::kRequest) continue;
      McpAnswer answer = AnswerRequest(message, ctx, credentials, dispatch, prefix, doors, switches, metadata_url, challenge);
      // A refused caller is refused for the whole batch: the status is what starts a sign-in.
      if (answer.status != 200) return Answered(answer.status, json::array{std::move(answer.body)}, answer.challenge);
      answers.push_back(std::move(answer.body));
    }
    if (answers.empty()) return Accepted();  // notifications and responses only
    return RpcResponse(200, answers);
  }
  // Parsed already when the write queue was offered it (Router::QueueWrite), with the same limits.
  auto parsed = request.json_body ? mcp::ReadMessage(*request.json_body) : mcp::ParseMessage(request.body);
  if (const auto* refused = std::get_if<mcp::Refusal>(&parsed)) return RpcResponse(400, mcp::Failure(nullptr, refused->code, refused->message));
  const mcp::Message& message = std::get<mcp::Message>(parsed);
  if (message.kind != mcp::Message::Kind::kRequest) return Accepted();
  McpAnswer answer = AnswerRequest(message, ctx, credentials, dispatch, prefix, doors, switches, metadata_url, challenge);
  return Answered(answer.status, answer.body, answer.challenge);
}

}  // namespace crmd::api
