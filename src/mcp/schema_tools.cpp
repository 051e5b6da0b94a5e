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

// The schema API is the master key's (spec §5.3); a signed-in user is shown the fields of a table
// they may read, and nothing of its permissions, indexes or triggers.
ToolResult UserSchema(const ToolCall& call, std::string_view table) {
  auto probe = call.Send("GET", "/classes/" + PercentEncode(table) + "?limit=0");
  if (probe.first >= 400) return Answered(probe);
  auth::Context system = call.ctx;
  system.identity = auth::Identity::System();
  const ToolCall elevated{system, call.dispatch, call.prefix, call.files, nullptr};
  auto answer = elevated.Send("GET", "/schemas/" + PercentEncode(table));
  if (answer.first >= 400 || !answer.second.is_object()) return Answered(answer);
  json::object shown{{"className", table}, {"fields", json::object{}}};
  if (const auto* fields = answer.second.get_object().if_contains("fields"); fields && fields->is_object()) {
    json::object out = fields->get_object();
    const json::object labels = Labels(elevated, table);
    for (auto& [name, def] : out)
      if (const auto* label = labels.if_contains(name); label && def.is_object()) def.get_object()["dictionary"] = *label;
    shown["fields"] = std::move(out);
  }
  return ToolResult{json::serialize(shown), false};
}

ToolResult GetSchema(const ToolCall& call, const json::object& args) {
  const std::string_view table = args.at("table").get_string();
  // Spec §4.10: roles and sessions are not described to assistants.
  if (table == "_Role" || table == "_Session") return ToolResult{"{}", false};
  if (call.ctx.identity.principal == auth::Principal::kRejected)
    return ToolResult{"Permission denied for action find on class " + std::string(table), true};
  if (call.ctx.identity.principal == auth::Principal::kUser) return UserSchema(call, table);
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

json::object TableProperty() {
  return json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", 128}, {"description", "The table (class) name, e.g. Accounts."}};
}

// Spec §2.5: a table made by Create-Table starts with permissions that still must be opened to the
// roles that need it: every operation for the product base's Administrators role only.
json::object DefaultPermissions() {
  json::object clp;
  for (const char* op : {"find", "count", "get", "create", "update", "delete", "addField"})
    clp[op] = json::object{{"role:Administrators", true}};
  clp["protectedFields"] = json::object{};
  return clp;
}

ToolResult CreateTable(const ToolCall& call, const json::object& args) {
  const std::string_view table = args.at("table").get_string();
  json::object body{{"className", table}, {"classLevelPermissions", DefaultPermissions()}};
  if (const auto* fields = args.if_contains("fields")) body["fields"] = *fields;
  const json::value sent = std::move(body);
  return Answered(call.Send("POST", "/schemas/" + PercentEncode(table), &sent));
}

// The table's trigger list as the schema API holds it.
std::pair<int, json::value> Triggers(const ToolCall& call, std::string_view table) {
  auto answer = call.Send("GET", "/schemas/" + PercentEncode(table));
  if (answer.first >= 400 || !answer.second.is_object()) return answer;
  const auto* triggers = answer.second.get_object().if_contains("triggers");
  return {200, json::object{{"triggers", triggers && triggers->is_array() ? *triggers : json::array{}}}};
}

ToolResult GetTriggers(const ToolCall& call, const json::object& args) {
  return Answered(Triggers(call, args.at("table").get_string()));
}

// Adds a trigger, or changes the one with the same `_id` (only the keys sent; `active:false`
// switches it off), and stores the whole list through the schema API, which checks it.
ToolResult SetTrigger(const ToolCall& call, const json::object& args) {
  const std::string_view table = args.at("table").get_string();
  auto current = Triggers(call, table);
  if (current.first >= 400) return Answered(current);
  json::array list = current.second.get_object().at("triggers").get_array();
  const json::object& trigger = args.at("trigger").get_object();
  const json::value* id = trigger.if_contains("_id");
  bool changed = false;
  for (auto& existing : list) {
    if (!id || !existing.is_object() || existing.get_object().if_contains("_id") == nullptr ||
        existing.get_object().at("_id") != *id)
      continue;
    for (const auto& [key, value] : trigger) existing.get_object()[key] = value;
    changed = true;
  }
  if (!changed) list.push_back(trigger);
  const json::value body = json::object{{"triggers", std::move(list)}};
  auto stored = call.Send("PUT", "/schemas/" + PercentEncode(table), &body);
  if (stored.first >= 400) return Answered(stored);
  return Answered(Triggers(call, table));
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
  tools.push_back(Tool{
      "Create-Table", "Create a table",
      "Creates a table, optionally with fields ({\"Name\":{\"type\":\"String\"},\"Account\":{\"type\":\"Pointer\","
      "\"targetClass\":\"Accounts\"}}). Field types: String, Number, Boolean, Date, Object, Array, Pointer, "
      "Relation, File, PrivateFile, GeoPoint. The new table is open to the Administrators role only: open "
      "it to the roles that need it afterwards.",
      json::object{{"type", "object"},
                   {"properties", json::object{{"table", TableProperty()},
                                               {"fields", json::object{{"type", "object"}, {"description", "Field name to {type, targetClass?}."}}}}},
                   {"required", json::array{"table"}},
                   {"additionalProperties", false}},
      Switch::kEditPageAndSchema, false, CreateTable});
  tools.push_back(Tool{
      "Get-Triggers", "Get a table's triggers",
      "Lists the automations of one table: each trigger's `_id`, name, event (create, update, delete), "
      "`active`, conditions and actions (docs/TRIGGERS.md). The `_id` is the one `_syslogTriggers` rows "
      "and `updatedByTrigger` name.",
      json::object{{"type", "object"}, {"properties", json::object{{"table", TableProperty()}}},
                   {"required", json::array{"table"}}, {"additionalProperties", false}},
      Switch::kView, true, GetTriggers});
  tools.push_back(Tool{
      "Set-Trigger", "Add or change a trigger",
      "Adds a trigger to a table, or changes the trigger whose `_id` is given (only the keys sent change): "
      "{\"_id\":\"...\",\"active\":false} switches one off. A new trigger is {name, event, active, where?, "
      "actions:[{actionType, ...}]} as Get-Triggers shows them. Returns the table's triggers.",
      json::object{{"type", "object"},
                   {"properties", json::object{{"table", TableProperty()},
                                               {"trigger", json::object{{"type", "object"}, {"description", "The trigger, or the keys to change of an existing one with its _id."}}}}},
                   {"required", json::array{"table", "trigger"}},
                   {"additionalProperties", false}},
      Switch::kEditPageAndSchema, false, SetTrigger});
}

}  // namespace crmd::mcp
