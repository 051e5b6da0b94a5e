#include "mcp/tool.hpp"

#include <algorithm>

#include "util/json.hpp"
#include "util/strings.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {
constexpr int kPermissionDeniedCode = 119;  // spec §7
}  // namespace

const std::vector<Tool>& Catalogue() {
  static const std::vector<Tool> tools = [] {
    std::vector<Tool> all;
    AddSchemaTools(all);
    AddRecordTools(all);
    AddRelationTools(all);
    AddHistoryTools(all);
    AddCrmTools(all);
    AddUserTools(all);
    AddAppTools(all);
    AddFileTools(all);
    return all;
  }();
  return tools;
}

const Tool* FindTool(std::string_view name) {
  const auto& tools = Catalogue();
  const auto found = std::find_if(tools.begin(), tools.end(), [&](const Tool& t) { return t.name == name; });
  return found == tools.end() ? nullptr : &*found;
}

ToolResult Answered(const std::pair<int, json::value>& answer) {
  const auto& [status, body] = answer;
  if (status < 400) return ToolResult{json::serialize(body), false};
  if (const auto* object = body.if_object())
    if (const auto* error = object->if_contains("error"); error && error->is_string()) {
      std::string text(error->get_string());
      // Spec §5.6 words MCP's refusal without the record API's final period (§7, 119).
      const auto* code = object->if_contains("code");
      if (code && *code == kPermissionDeniedCode && text.ends_with('.')) text.pop_back();
      return ToolResult{std::move(text), true};
    }
  return ToolResult{"The request failed with status " + std::to_string(status) + ".", true};
}

ToolResult AnsweredText(std::pair<int, std::string> answer) {
  if (answer.first < 400) return ToolResult{std::move(answer.second), false};
  auto parsed = ParseJson(answer.second);
  return Answered({answer.first, parsed.ok() ? std::move(parsed).value() : json::value()});
}

ToolResult ToolCall::Relay(const std::string& target) const {
  if (!dispatch_text) return Answered(Send("GET", target));
  return AnsweredText((*dispatch_text)(ctx, "GET", target, nullptr));
}

ToolResult Json(const json::value& value) { return ToolResult{json::serialize(value), false}; }

std::string ClassPath(std::string_view table, std::string_view object_id) {
  std::string path = "/classes/" + PercentEncode(table);
  if (!object_id.empty()) path += "/" + PercentEncode(object_id);
  return path;
}

std::string WhereParam(const json::value& where) { return "&where=" + PercentEncode(json::serialize(where)); }

std::int64_t LimitOf(const json::object& args, std::int64_t fallback) {
  return args.contains("limit") ? args.at("limit").to_number<std::int64_t>() : fallback;
}

json::object PointerTo(std::string_view table, std::string_view object_id) {
  return json::object{{"__type", "Pointer"}, {"className", table}, {"objectId", object_id}};
}

json::object DateValue(std::string_view iso) { return json::object{{"__type", "Date"}, {"iso", iso}}; }

bool IsReadOnlyTable(std::string_view table) { return table == "_Timeline" || table.starts_with("_syslog"); }

ToolResult ReadOnly(std::string_view action, std::string_view table) {
  return ToolResult{"Permission denied for action " + std::string(action) + " on class " + std::string(table), true};
}

bool HasSwitch(const ToolCall& call, std::string_view needed) {
  return !call.switches || std::find(call.switches->begin(), call.switches->end(), needed) != call.switches->end();
}

}  // namespace crmd::mcp
