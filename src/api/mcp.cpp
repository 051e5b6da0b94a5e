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

std::optional<Response> RefuseMcpHead(const Request& head, bool credential_sent, bool application_known) {
  if (head.method != Method::kPost || (credential_sent && application_known)) return std::nullopt;
  const auto length = head.Header("content-length");
  if (length && std::strtoull(std::string(*length).c_str(), nullptr, 10) <= kOpenMcpMessageBytes) return std::nullopt;
  if (!credential_sent) return TransportError(403, "Authorization header is required");
  return TransportError(413, "Message too large for a caller of no known application");
}

Response HandleMcp(const Request& request, auth::Context& ctx, McpCredentials credentials, const mcp::Dispatch& dispatch,
                   std::string_view prefix, McpDoors doors, const std::vector<std::string>* switches,
                   const std::string& metadata_url) {
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
  auto parsed = mcp::ParseMessage(request.body);
  if (const auto* refused = std::get_if<mcp::Refusal>(&parsed)) return RpcResponse(400, mcp::Failure(nullptr, refused->code, refused->message));
  const mcp::Message& message = std::get<mcp::Message>(parsed);
  if (message.kind != mcp::Message::Kind::kRequest) {
    Response accepted = RpcResponse(202, json::value());
    accepted.body.clear();
    return accepted;
  }
  if (mcp::IsOpenMethod(message.method)) return RpcResponse(200, mcp::AnswerOpen(message));
  if (!mcp::IsKnownMethod(message.method)) return RpcResponse(200, mcp::Failure(message.id, mcp::kMethodNotFound, "Method not found"));
  // RFC 6750 §3: no error code when no credential came; where to learn the way in, either way.
  const std::string metadata = metadata_url.empty() ? std::string() : ", resource_metadata=\"" + metadata_url + "\"";
  if (credentials == McpCredentials::kNone) {
    Response r = RpcResponse(403, mcp::Failure(message.id, mcp::kServerError, "Authorization header is required"));
    if (!metadata_url.empty())
      r.headers.emplace_back("WWW-Authenticate", "Bearer resource_metadata=\"" + metadata_url + "\", scope=\"mcp\"");
    return r;
  }
  if (credentials == McpCredentials::kInvalidBearer) {
    Response r = RpcResponse(401, mcp::Failure(message.id, mcp::kServerError, "Invalid or expired access token"));
    r.headers.emplace_back("WWW-Authenticate", "Bearer error=\"invalid_token\"" + metadata);
    return r;
  }
  if (!ctx.app) ctx.identity.principal = auth::Principal::kRejected;  // a key of no application crmd has
  static const mcp::FileDoor kNoFiles;
  const mcp::ToolCall call{ctx, dispatch, prefix, doors.files ? doors.files : &kNoFiles, switches, doors.functions, doors.text};
  if (!ctx.app) {
    // Nothing to dispatch to: every tool refuses, as a wrong key of a real application does.
    const json::object* params = message.params.if_object();
    const json::value* args = params ? params->if_contains("arguments") : nullptr;
    const json::value* table = args && args->is_object() ? args->get_object().if_contains("table") : nullptr;
    const std::string name = table && table->is_string() ? std::string(table->get_string()) : "_User";
    return RpcResponse(200, mcp::Success(message.id, json::object{
        {"content", json::array{json::object{{"type", "text"}, {"text", "Permission denied for action find on class " + name}}}},
        {"isError", true}}));
  }
  return RpcResponse(200, mcp::AnswerToolCall(message, call));
}

}  // namespace crmd::api
