// The schema tools (spec §4.10): what tables exist and what their fields hold.
#include <string>

#include "mcp/tool.hpp"
#include "util/strings.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {

// Dictionary rows one table may have: one per field at most, and a table has at most 500.
constexpr int kMaxLabels = 1000;

// The `_Dictionary` labels of `table`'s fields (spec §2.5: tblName, field, value).
json::object Labels(const ToolCall& call, std::string_view table) {
  json::object labels;
  const std::string where = json::serialize(json::object{{"tblName", table}});
  auto [status, body] = call.Send("GET", "/classes/_Dictionary?limit=" + std::to_string(kMaxLabels) +
                                             "&keys=field,value&where=" + PercentEncode(where));
  if (status >= 400 || !body.is_object()) return labels;
  const auto* results = body.get_object().if_contains("results");
  if (!results || !results->is_array()) return labels;
  for (const auto& row : results->get_array()) {
    const auto* object = row.if_object();
    const auto* field = object ? object->if_contains("field") : nullptr;
    const auto* value = object ? object->if_contains("value") : nullptr;
    if (field && field->is_string() && value && value->is_string()) labels[field->get_string()] = *value;
  }
  return labels;
}

ToolResult GetSchema(const ToolCall& call, const json::object& args) {
  const std::string_view table = args.at("table").get_string();
  // Spec §4.10: roles and sessions are not described to assistants.
  if (table == "_Role" || table == "_Session") return ToolResult{"{}", false};
  if (call.ctx.identity.principal == auth::Principal::kRejected)
    return ToolResult{"Permission denied for action find on class " + std::string(table), true};
  auto answer = call.Send("GET", "/schemas/" + PercentEncode(table));
  if (answer.first >= 400 || !answer.second.is_object()) return Answered(answer);
  json::object& schema = answer.second.get_object();
  if (auto* fields = schema.if_contains("fields"); fields && fields->is_object()) {
    const json::object labels = Labels(call, table);
    for (auto& [name, def] : fields->get_object())
      if (const auto* label = labels.if_contains(name); label && def.is_object()) def.get_object()["dictionary"] = *label;
  }
  return ToolResult{json::serialize(schema), false};
}

}  // namespace

void AddSchemaTools(std::vector<Tool>& tools) {
  tools.push_back(Tool{
      "Get-Schema", "Get a table's schema",
      "Describes one table: each field's type (String, Number, Boolean, Date, Pointer with its targetClass, "
      "Relation, Array, Object, File, ...), its Hebrew display label as `dictionary` when the application "
      "has one, the table's permissions, indexes and triggers. Call it before reading or writing a table "
      "you have not seen. Answers {} for _Role and _Session.",
      json::object{{"type", "object"},
                   {"properties", json::object{{"table", json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", 128},
                                                                      {"description", "The table (class) name, e.g. Accounts."}}}}},
                   {"required", json::array{"table"}},
                   {"additionalProperties", false}},
      Switch::kView, true, GetSchema});
}

}  // namespace crmd::mcp
