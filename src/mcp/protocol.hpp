// The MCP methods crmd answers (protocol revision 2025-11-25; 2025-06-18 and 2025-03-26 accepted),
// independent of HTTP: `initialize`, `ping` and `tools/list` need no caller; `tools/call` runs a
// tool of the catalogue for one. Tool failures (bad arguments, no permission, a refused write)
// are results with `isError`, so a model can correct itself; JSON-RPC errors are only for a
// malformed call, an unknown method or tool, or a fault.
#pragma once

#include <array>
#include <boost/json.hpp>
#include <string_view>

#include "mcp/json_rpc.hpp"
#include "mcp/tool.hpp"

namespace crmd::mcp {

inline constexpr std::string_view kLatestVersion = "2025-11-25";
inline constexpr std::array<std::string_view, 3> kSupportedVersions{"2025-11-25", "2025-06-18", "2025-03-26"};

bool IsSupportedVersion(std::string_view version);

// `initialize`, `ping` and `tools/list`: answered for anyone.
bool IsOpenMethod(std::string_view method);
// Whether crmd knows `method` at all (an open one or `tools/call`).
bool IsKnownMethod(std::string_view method);

// The response to the open request `message`.
boost::json::object AnswerOpen(const Message& message);

// The response to a `tools/call` request, run as `call.ctx`.
boost::json::object AnswerToolCall(const Message& message, const ToolCall& call);

}  // namespace crmd::mcp
