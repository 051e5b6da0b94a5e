#include "mcp/tool.hpp"

#include <algorithm>

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
    AddUserTools(all);
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

}  // namespace crmd::mcp
