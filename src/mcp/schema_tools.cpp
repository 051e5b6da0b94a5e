// The schema tools (spec §4.10): what tables exist and what their fields hold.
#include <string>

#include "app/application.hpp"
#include "auth/authorize.hpp"
#include "mcp/args.hpp"
#include "mcp/tool.hpp"
#include "util/errors.hpp"
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

// The schema API is the keys' (spec §4.5, §5.3). A signed-in user reaches two parts of it through
// the tools, each only where the record API would give the same user the same thing:
//   - a table's fields, where they hold find on it (the schema is read as the system, and the tool
//     shows the fields alone: UserSchema);
//   - new fields, where the table's CLP grants them addField, as a record write with a new field
//     would add it for them (AddFields).
// Everything else the schema holds is a definition that later runs with master rights or decides
// who may do what — triggers, permissions, indexes, the timeline, a new table — and is the keys'
// alone, whatever the door (docs/SECURITY.md, "Authority follows the author"). A user asking for
// one gets the record API's answer to a session on the schema API.
bool IsUser(const ToolCall& call) { return call.ctx.identity.principal == auth::Principal::kUser; }

ToolResult KeysOnly() { return ToolResult{errors::MasterKeyRequired().message, true}; }

std::pair<int, json::value> Refusal(const ApiError& e) {
  return {e.http_status, json::object{{"code", e.code}, {"error", e.message}}};
}

// The schema of `table`: a key reads it as itself, a user where they hold find on the table.
std::pair<int, json::value> ReadSchema(const ToolCall& call, std::string_view table) {
  const std::string path = "/schemas/" + PercentEncode(table);
  if (!IsUser(call)) return call.dispatch(call.ctx, "GET", path, nullptr);
  auto snapshot = call.ctx.app->schema();
  auto allowed = auth::Authorize(call.ctx.identity, auth::Operation::kFind, table, snapshot->Find(table));
  if (!allowed.ok()) return Refusal(allowed.error());
  auth::Context system = call.ctx;
  system.identity = auth::Identity::System();
  return call.dispatch(system, "GET", path, nullptr);
}

// Adds `fields` ({name: {type, targetClass?}}) to `table`: a key as itself; a user only new fields
// (none changed, none removed) of a table whose addField they hold.
std::pair<int, json::value> AddFields(const ToolCall& call, std::string_view table, const json::object& fields) {
  const std::string path = "/schemas/" + PercentEncode(table);
  const json::value body = json::object{{"fields", fields}};
  if (!IsUser(call)) return call.dispatch(call.ctx, "PUT", path, &body);
  auto snapshot = call.ctx.app->schema();
  const schema::ClassSchema* cls = snapshot->Find(table);
  auto allowed = auth::Authorize(call.ctx.identity, auth::Operation::kAddField, table, cls);
  if (!allowed.ok()) return Refusal(allowed.error());
  if (!cls) return Refusal(errors::PermissionDenied("addField", table));
  for (const auto& [name, def] : fields)
    if (cls->FindField(name) || !def.is_object() || def.get_object().contains("__op"))
      return Refusal(errors::PermissionDenied("addField", table));  // changing or removing one is a key's
  auth::Context system = call.ctx;
  system.identity = auth::Identity::System();
  return call.dispatch(system, "PUT", path, &body);
}

// A change of one of `table`'s definitions (triggers, permissions, indexes, timeline): a key's.
std::pair<int, json::value> ChangeDefinition(const ToolCall& call, std::string_view table, json::object change) {
  const json::value body = std::move(change);
  return call.dispatch(call.ctx, "PUT", "/schemas/" + PercentEncode(table), &body);
}

// A signed-in user is shown the fields of a table they may read, and nothing of its permissions,
// indexes or triggers.
ToolResult UserSchema(const ToolCall& call, std::string_view table) {
  auto answer = ReadSchema(call, table);
  if (answer.first >= 400 || !answer.second.is_object()) return Answered(answer);
  json::object shown{{"className", table}, {"fields", json::object{}}};
  if (const auto* fields = answer.second.get_object().if_contains("fields"); fields && fields->is_object()) {
    json::object out = fields->get_object();
    const json::object labels = Labels(call, table);
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
  // No permission of a table that does not exist can allow it: a new table is a key's to make.
  if (IsUser(call)) return KeysOnly();
  json::object body{{"className", table}, {"classLevelPermissions", DefaultPermissions()}};
  if (const auto* fields = args.if_contains("fields")) body["fields"] = *fields;
  const json::value sent = std::move(body);
  return Answered(call.Send("POST", "/schemas/" + PercentEncode(table), &sent));
}

// The table's trigger list as the schema API holds it (a key's: an action's headers and URLs are
// its author's).
std::pair<int, json::value> Triggers(const ToolCall& call, std::string_view table) {
  auto answer = call.dispatch(call.ctx, "GET", "/schemas/" + PercentEncode(table), nullptr);
  if (answer.first >= 400 || !answer.second.is_object()) return answer;
  const auto* triggers = answer.second.get_object().if_contains("triggers");
  return {200, json::object{{"triggers", triggers && triggers->is_array() ? *triggers : json::array{}}}};
}

ToolResult GetTriggers(const ToolCall& call, const json::object& args) {
  if (IsUser(call)) return KeysOnly();
  return Answered(Triggers(call, args.at("table").get_string()));
}

// Adds a trigger, or changes the one with the same `_id` (only the keys sent; `active:false`
// switches it off), and stores the whole list through the schema API, which checks it.
ToolResult SetTrigger(const ToolCall& call, const json::object& args) {
  if (IsUser(call)) return KeysOnly();
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
  auto stored = ChangeDefinition(call, table, json::object{{"triggers", std::move(list)}});
  if (stored.first >= 400) return Answered(stored);
  return Answered(Triggers(call, table));
}

// One key of a table's schema (`classLevelPermissions`, `indexes`), as the schema API holds it: a
// key's to read, as the schema API is.
ToolResult SchemaPart(const ToolCall& call, std::string_view table, std::string_view key) {
  if (IsUser(call)) return KeysOnly();
  auto answer = call.dispatch(call.ctx, "GET", "/schemas/" + PercentEncode(table), nullptr);
  if (answer.first >= 400 || !answer.second.is_object()) return Answered(answer);
  const auto* part = answer.second.get_object().if_contains(key);
  return Json(json::object{{key, part ? *part : json::value(json::object{})}});
}

ToolResult ChangeSchema(const ToolCall& call, std::string_view table, json::object change) {
  if (IsUser(call)) return KeysOnly();
  return Answered(ChangeDefinition(call, table, std::move(change)));
}

ToolResult ListTables(const ToolCall& call, const json::object&) {
  // A user is shown the tables they may read; the schema API itself is the master key's.
  const bool user = call.ctx.identity.principal == auth::Principal::kUser;
  auth::Context system = call.ctx;
  if (user) system.identity = auth::Identity::System();
  auto answer = call.dispatch(user ? system : call.ctx, "GET", "/schemas", nullptr);
  if (answer.first >= 400 || !answer.second.is_object()) return Answered(answer);
  json::array tables;
  for (const auto& cls : answer.second.get_object()["results"].get_array()) {
    const json::value& name = cls.at("className");
    if (user && call.Send("GET", "/classes/" + PercentEncode(name.get_string()) + "?limit=0").first >= 400) continue;
    tables.push_back(json::object{{"table", name}, {"fields", cls.at("fields").get_object().size()}});
  }
  return Json(json::object{{"tables", std::move(tables)}});
}

ToolResult AddField(const ToolCall& call, const json::object& args) {
  json::object def{{"type", args.at("type")}};
  if (const auto* target = args.if_contains("targetClass")) def["targetClass"] = *target;
  return Answered(AddFields(call, args.at("table").get_string(), json::object{{args.at("field").get_string(), std::move(def)}}));
}

ToolResult SetFieldLabel(const ToolCall& call, const json::object& args) {
  const json::value where = json::object{{"tblName", args.at("table")}, {"field", args.at("field")}};
  auto [status, body] = call.Send("GET", "/classes/_Dictionary?keys=objectId&limit=1" + WhereParam(where));
  if (status >= 400 || !body.is_object()) return Answered({status, body});
  const auto& rows = body.get_object()["results"].get_array();
  if (!rows.empty()) {
    const json::value change = json::object{{"value", args.at("label")}};
    return Answered(call.Send("PUT", ClassPath("_Dictionary", rows[0].at("objectId").get_string()), &change));
  }
  const json::value row = json::object{{"tblName", args.at("table")}, {"field", args.at("field")}, {"value", args.at("label")}};
  return Answered(call.Send("POST", "/classes/_Dictionary", &row));
}

ToolResult GetLabels(const ToolCall& call, const json::object& args) {
  return Json(json::object{{"labels", Labels(call, args.at("table").get_string())}});
}

ToolResult RemoveTrigger(const ToolCall& call, const json::object& args) {
  if (IsUser(call)) return KeysOnly();
  const std::string_view table = args.at("table").get_string();
  auto current = Triggers(call, table);
  if (current.first >= 400) return Answered(current);
  json::array kept;
  bool found = false;
  for (auto& t : current.second.get_object().at("triggers").get_array()) {
    if (t.is_object() && t.get_object().if_contains("_id") && t.get_object().at("_id") == args.at("_id")) {
      found = true;
      continue;
    }
    kept.push_back(t);
  }
  if (!found) return ToolResult{"No trigger of " + std::string(table) + " has that _id.", true};
  auto stored = ChangeSchema(call, table, json::object{{"triggers", std::move(kept)}});
  if (stored.is_error) return stored;
  return Answered(Triggers(call, table));
}

// The rows a Pointer field may point at (its target table's `Name` and objectId), so that a model
// can fill a Pointer without guessing ids.
ToolResult PointerOptions(const ToolCall& call, const json::object& args) {
  const std::string_view table = args.at("table").get_string();
  const std::string_view field = args.at("field").get_string();
  auto schema = ReadSchema(call, table);  // the target's rows are read as the caller
  if (schema.first >= 400 || !schema.second.is_object()) return Answered(schema);
  const auto* fields = schema.second.get_object().if_contains("fields");
  const auto* def = fields && fields->is_object() ? fields->get_object().if_contains(field) : nullptr;
  const auto* target = def && def->is_object() ? def->get_object().if_contains("targetClass") : nullptr;
  if (!target || !target->is_string()) return ToolResult{std::string(field) + " is not a Pointer field of " + std::string(table), true};
  auto rows = call.Send("GET", ClassPath(target->get_string()) + "?keys=objectId,Name&order=Name&limit=200");
  if (rows.first >= 400 || !rows.second.is_object()) return Answered(rows);
  return Json(json::object{{"targetClass", *target}, {"results", rows.second.get_object()["results"]}});
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
                   {"properties", json::object{{"table", args::Table()},
                                               {"fields", json::object{{"type", "object"}, {"description", "Field name to {type, targetClass?}."}}}}},
                   {"required", json::array{"table"}},
                   {"additionalProperties", false}},
      Switch::kEditPageAndSchema, false, CreateTable});
  tools.push_back(Tool{
      "Get-Triggers", "Get a table's triggers",
      "Lists the automations of one table: each trigger's `_id`, name, event (create, update, delete), "
      "`active`, conditions and actions (docs/TRIGGERS.md). The `_id` is the one `_syslogTriggers` rows "
      "and `updatedByTrigger` name.",
      json::object{{"type", "object"}, {"properties", json::object{{"table", args::Table()}}},
                   {"required", json::array{"table"}}, {"additionalProperties", false}},
      Switch::kView, true, GetTriggers});
  tools.push_back(Tool{
      "Set-Trigger", "Add or change a trigger",
      "Adds a trigger to a table, or changes the trigger whose `_id` is given (only the keys sent change): "
      "{\"_id\":\"...\",\"active\":false} switches one off. A new trigger is {name, event, active, where?, "
      "actions:[{actionType, ...}]} as Get-Triggers shows them. Returns the table's triggers.",
      json::object{{"type", "object"},
                   {"properties", json::object{{"table", args::Table()},
                                               {"trigger", json::object{{"type", "object"}, {"description", "The trigger, or the keys to change of an existing one with its _id."}}}}},
                   {"required", json::array{"table", "trigger"}},
                   {"additionalProperties", false}},
      Switch::kEditPageAndSchema, false, SetTrigger});
  using namespace args;
  tools.push_back(Tool{"List-Tables", "List tables",
                       "Lists the application's tables with their number of fields (for a signed-in user, the tables "
                       "the user may read). Use Get-Schema for one table's fields.",
                       Params({}), Switch::kView, true, ListTables});
  tools.push_back(Tool{"Add-Field", "Add a field",
                       "Adds a field to a table. Types: String, Number, Boolean, Date, Object, Array, Pointer and "
                       "Relation (with targetClass), File, PrivateFile, GeoPoint (one per table), Polygon.",
                       Params({{"table", Table()}, {"field", Str("The new field's name (letters, digits, _).", 128)},
                               {"type", Enum("The field's type.", {"String", "Number", "Boolean", "Date", "Object", "Array", "Pointer",
                                                                    "Relation", "File", "PrivateFile", "GeoPoint", "Polygon"})},
                               {"targetClass", Str("For Pointer and Relation: the table it points at.", 128)}},
                              {"table", "field", "type"}),
                       Switch::kEditPageAndSchema, false, AddField});
  tools.push_back(Tool{"Set-Field-Label", "Set a field's label",
                       "Sets the display label (usually Hebrew) of a field in `_Dictionary`, shown by Get-Schema as "
                       "`dictionary`.",
                       Params({{"table", Table()}, {"field", Str("The field.", 128)}, {"label", Str("The label.", 256)}},
                              {"table", "field", "label"}),
                       Switch::kEditPageAndSchema, false, SetFieldLabel});
  tools.push_back(Tool{"Get-Labels", "Get a table's labels", "Returns the display labels of a table's fields: {\"labels\":{field: label}}.",
                       Params({{"table", Table()}}, {"table"}), Switch::kView, true, GetLabels});
  tools.push_back(Tool{"Get-Table-Permissions", "Get a table's permissions",
                       "Returns who may find, count, get, create, update, delete and add fields in a table "
                       "(classLevelPermissions: `*`, `role:<Name>`, user ids, requiresAuthentication). Master connection.",
                       Params({{"table", Table()}}, {"table"}), Switch::kView, true,
                       [](const ToolCall& call, const json::object& args) {
                         return SchemaPart(call, args.at("table").get_string(), "classLevelPermissions");
                       }});
  tools.push_back(Tool{"Set-Table-Permissions", "Set a table's permissions",
                       "Replaces a table's classLevelPermissions, e.g. {\"find\":{\"role:Agents\":true},\"create\":"
                       "{\"role:Agents\":true}}; operations not given stay as they are.",
                       Params({{"table", Table()}, {"permissions", Obj("Operation to who may do it.")}}, {"table", "permissions"}),
                       Switch::kEditPageAndSchema, false,
                       [](const ToolCall& call, const json::object& args) {
                         return ChangeSchema(call, args.at("table").get_string(), json::object{{"classLevelPermissions", args.at("permissions")}});
                       }});
  tools.push_back(Tool{"List-Indexes", "List a table's indexes", "Returns a table's indexes: {\"indexes\":{name: {field: 1|-1|\"text\"}}}.",
                       Params({{"table", Table()}}, {"table"}), Switch::kView, true,
                       [](const ToolCall& call, const json::object& args) {
                         return SchemaPart(call, args.at("table").get_string(), "indexes");
                       }});
  tools.push_back(Tool{"Add-Index", "Add an index",
                       "Adds an index to a table so that queries on its fields are fast, e.g. name City_1 with "
                       "{\"City\":1}; {\"Name\":\"text\"} makes a text index for `$text` searches.",
                       Params({{"table", Table()}, {"name", Str("The index's name.", 128)}, {"fields", Obj("Field to 1, -1 or \"text\".")}},
                              {"table", "name", "fields"}),
                       Switch::kEditPageAndSchema, false,
                       [](const ToolCall& call, const json::object& args) {
                         return ChangeSchema(call, args.at("table").get_string(),
                                             json::object{{"indexes", json::object{{args.at("name").get_string(), args.at("fields")}}}});
                       }});
  tools.push_back(Tool{"Set-Timeline", "Set a table's change history",
                       "Turns on (or changes) the change history of a table: {\"displayFields\":{...},\"index\":{\"AccountId\":"
                       "\"Accounts\"}}; `_Timeline` then records every create, update and delete of it.",
                       Params({{"table", Table()}, {"timeline", Obj("The timeline settings: displayFields, index.")}}, {"table", "timeline"}),
                       Switch::kEditPageAndSchema, false,
                       [](const ToolCall& call, const json::object& args) {
                         return ChangeSchema(call, args.at("table").get_string(), json::object{{"timeline", args.at("timeline")}});
                       }});
  tools.push_back(Tool{"Remove-Trigger", "Remove a trigger",
                       "Removes one trigger of a table by its `_id` (use Set-Trigger with active:false to keep it but "
                       "switch it off). Returns the table's triggers.",
                       Params({{"table", Table()}, {"_id", Id("The trigger's _id.")}}, {"table", "_id"}),
                       Switch::kEditPageAndSchema, false, RemoveTrigger});
  tools.push_back(Tool{"Get-Pointer-Options", "List what a Pointer may point at",
                       "For a Pointer field (e.g. Accounts.LeadStatusId), lists the rows of its target table (objectId and "
                       "Name, at most 200), so that a Pointer value can be chosen instead of guessed.",
                       Params({{"table", Table()}, {"field", Str("The Pointer field.", 128)}}, {"table", "field"}),
                       Switch::kView, true, PointerOptions});
}

}  // namespace crmd::mcp
