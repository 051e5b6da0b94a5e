#include "mcp/protocol.hpp"

#include <algorithm>

#include "mcp/arguments.hpp"
#include "util/log.hpp"
#include "util/version.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {

constexpr std::string_view kInstructions =
    "One connection addresses one application of crmd, a CRM records service. Call Get-Schema for a "
    "table before reading or writing it; Get-Data returns 5 rows unless asked (at most 2000).";

std::string_view SwitchName(Switch s);

json::object ToolEntry(const Tool& tool) {
  return json::object{{"name", tool.name},
                      // The per-user switch a signed-in user needs for the tool (spec §5.6).
                      {"_meta", json::object{{"crmd/mcpPermission", SwitchName(tool.needs)}}},
                      {"title", tool.title},
                      {"description", tool.description},
                      {"inputSchema", tool.input_schema},
                      {"annotations", json::object{{"title", tool.title},
                                                   {"readOnlyHint", tool.read_only},
                                                   {"destructiveHint", false},  // no tool deletes (spec §4.10)
                                                   {"openWorldHint", false}}}};
}

std::string_view SwitchName(Switch s) {
  switch (s) {
    case Switch::kView: return "mcp:view";
    case Switch::kCreate: return "mcp:create";
    case Switch::kUpdate: return "mcp:update";
    case Switch::kEditPageAndSchema: return "mcp:edit-page-and-schema";
  }
  return "mcp:view";
}

json::object ToolResultObject(const ToolResult& result) {
  return json::object{{"content", json::array{json::object{{"type", "text"}, {"text", result.text}}}},
                      {"isError", result.is_error}};
}

}  // namespace

bool IsSupportedVersion(std::string_view version) {
  return std::find(kSupportedVersions.begin(), kSupportedVersions.end(), version) != kSupportedVersions.end();
}

bool IsOpenMethod(std::string_view method) { return method == "initialize" || method == "ping" || method == "tools/list"; }

bool IsKnownMethod(std::string_view method) { return IsOpenMethod(method) || method == kToolsCall; }

json::object AnswerOpen(const Message& message) {
  if (message.method == "ping") return Success(message.id, json::object{});
  if (message.method == "tools/list") {
    json::array tools;
    for (const Tool& tool : Catalogue()) tools.push_back(ToolEntry(tool));
    return Success(message.id, json::object{{"tools", std::move(tools)}});  // one page: clients do not follow cursors
  }
  // initialize: the client's version when crmd speaks it, else crmd's latest (the client decides).
  std::string_view version = kLatestVersion;
  if (const auto* params = message.ParamsObject())
    if (const auto* asked = params->if_contains("protocolVersion"); asked && asked->is_string() && IsSupportedVersion(asked->get_string()))
      version = asked->get_string();
  return Success(message.id, json::object{{"protocolVersion", version},
                                          {"capabilities", json::object{{"tools", json::object{{"listChanged", false}}}}},
                                          {"serverInfo", json::object{{"name", "crmd"}, {"title", "crmd CRM records"}, {"version", Version()}}},
                                          {"instructions", kInstructions}});
}

json::object AnswerToolCall(const Message& message, const ToolCall& call) {
  const json::object* params = message.ParamsObject();
  const json::value* name = params ? params->if_contains("name") : nullptr;
  if (!name || !name->is_string()) return Failure(message.id, kInvalidParams, "Invalid params: name is required");
  const Tool* tool = FindTool(name->get_string());
  if (!tool) return Failure(message.id, kInvalidParams, "Unknown tool: " + std::string(name->get_string()));
  static const json::value kNoArguments = json::object{};
  const json::value* arguments = params->if_contains("arguments");
  if (!arguments) arguments = &kNoArguments;
  // Spec §5.6: a signed-in user's switch for the tool, on top of the table permissions the record
  // API checks.
  if (call.switches) {
    const std::string_view needed = SwitchName(tool->needs);
    if (std::find(call.switches->begin(), call.switches->end(), needed) == call.switches->end())
      return Success(message.id, ToolResultObject({"Permission denied: " + std::string(tool->name) + " needs the MCP permission " +
                                                       std::string(needed) + ", which this user does not have", true}));
  }
  if (auto invalid = CheckArguments(tool->input_schema, *arguments))
    return Success(message.id, ToolResultObject({"Input validation error: Invalid arguments for tool " +
                                                     std::string(tool->name) + ": " + *invalid, true}));
  try {
    return Success(message.id, ToolResultObject(tool->run(call, arguments->get_object())));
  } catch (const std::exception& e) {
    log::Error("mcp tool failed", {{"tool", tool->name}, {"error", e.what()}});
    return Failure(message.id, kInternalError, "Internal error");
  }
}

}  // namespace crmd::mcp
