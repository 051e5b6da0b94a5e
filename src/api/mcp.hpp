// The MCP endpoint (spec §4.10, §5.6; issue 21): Streamable HTTP, one JSON-RPC message per
// `POST /mcp` (the application in `X-Core-Application-Id`) or `POST /mcp/<appId>` (the application
// in the path: one MCP URL per application). Stateless: every answer is one JSON object, no session
// id is minted or needed, `GET`/`DELETE` answer 405. The pipeline, in order (../shared/research/MCP.md
// §1.2): an unsupported `MCP-Protocol-Version` (400), a body that is not JSON (415) or not one
// JSON-RPC message (400), notifications and responses (202, empty), `initialize`/`ping`/`tools/list`
// (no caller needed), unknown methods (-32601), then the caller of `tools/call`:
//   - `X-Core-API-Key` or `X-Core-Master-Key` of the application: the Master identity; a wrong key
//     is a caller whose every tool answers `Permission denied for action <op> on class <X>`;
//   - `Authorization: Bearer <token>` that crmd did not issue: 401 with
//     `WWW-Authenticate: Bearer error="invalid_token"`;
//   - neither and no `Authorization`: 403 `{"code":-32000,"message":"Authorization header is required"}`
//     on `/mcp`; on `/mcp/<appId>`, the application's OAuth resource, the same body with 401 and a
//     `WWW-Authenticate` challenge, which standard MCP clients answer by signing the user in.
// Under protocol revision 2025-03-26 (or no `MCP-Protocol-Version`) a body may be a batch, an
// array of at most mcp::kMaxBatch messages answered by an array; later revisions refuse it (400).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "api/message.hpp"
#include "auth/context.hpp"
#include "mcp/tool.hpp"

namespace crmd::api {

// How the request's caller presented itself.
enum class McpCredentials { kNone, kKeys, kBearer, kInvalidBearer };

// `ctx.app` is the application the request names (null when it names none or an unknown one);
// `ctx.identity` its caller as `credentials` resolved it.
// `switches`: a signed-in user's MCP switches (null for keys, which need none). `metadata_url`:
// the protected-resource metadata a refusal points OAuth clients at (empty: none).
// What tools reach beside the record API: the file routes and the functions (null: unavailable).
struct McpDoors {
  const mcp::FileDoor* files = nullptr;
  const mcp::FunctionRunner* functions = nullptr;
  const mcp::DispatchText* text = nullptr;  // the record API answering its body's text
};

// `challenge`: the request is to the OAuth resource of a known application (`/mcp/<appId>`).
Response HandleMcp(const Request& request, auth::Context& ctx, McpCredentials credentials, const mcp::Dispatch& dispatch,
                   std::string_view prefix, McpDoors doors = {}, const std::vector<std::string>* switches = nullptr,
                   const std::string& metadata_url = {}, bool challenge = false);

// The `WWW-Authenticate` value that points an MCP client at the protected-resource metadata.
std::string McpChallenge(const std::string& metadata_url);

// The largest message an MCP caller that is not known yet may send: `initialize`, `ping` and
// `tools/list` are a few hundred bytes; the 24 MiB of Upload-Public-File are for callers with a
// key or a token of a known application (issue 31: nothing anonymous is read to the end first).
inline constexpr std::size_t kOpenMcpMessageBytes = 64u << 10;

// A `POST /mcp[/<appId>]` refused from its head, before its body is read: without a credential
// header and larger than kOpenMcpMessageBytes (or of no announced length), the 403 a `tools/call`
// without one gets (401 with `challenge` on an application's OAuth resource); with a credential of
// an application that does not exist, 413. nullopt: the body may be read.
std::optional<Response> RefuseMcpHead(const Request& head, bool credential_sent, bool application_known,
                                      const std::optional<std::string>& challenge = std::nullopt);

}  // namespace crmd::api
