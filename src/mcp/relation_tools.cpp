// The relation tools (spec §4.10): rows linked through a Relation field.
#include <string>

#include "mcp/args.hpp"
#include "mcp/tool.hpp"
#include "util/strings.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {

// Links one Add-Relation or Remove-Relation call changes at most.
constexpr std::int64_t kMaxLinks = 100;

ToolResult GetRelated(const ToolCall& call, const json::object& args) {
  // `$relatedTo` needs the related table; the Relation's target is what the rows are.
  const json::value where = json::object{
      {"$relatedTo", json::object{{"object", PointerTo(args.at("table").get_string(), args.at("objectId").get_string())},
                                  {"key", args.at("field")}}}};
  const std::int64_t limit = args.contains("limit") ? args.at("limit").to_number<std::int64_t>() : 100;
  return call.Relay(ClassPath(args.at("targetTable").get_string()) + "?limit=" + std::to_string(limit) +
                                       WhereParam(where));
}

ToolResult ChangeRelation(const ToolCall& call, const json::object& args, std::string_view op) {
  const std::string_view table = args.at("table").get_string();
  if (IsReadOnlyTable(table)) return ReadOnly("update", table);
  json::array objects;
  for (const auto& id : args.at("objectIds").get_array())
    objects.push_back(PointerTo(args.at("targetTable").get_string(), id.get_string()));
  const json::value body = json::object{
      {std::string(args.at("field").get_string()), json::object{{"__op", op}, {"objects", std::move(objects)}}}};
  return Answered(call.Send("PUT", ClassPath(table, args.at("objectId").get_string()), &body));
}

json::object RelationParams(bool with_ids) {
  using namespace args;
  if (with_ids)
    return Params({{"table", Table()}, {"objectId", Id("The row that holds the Relation field.")},
                   {"field", Str("The Relation field.", 128)}, {"targetTable", Str("The table the Relation points at.", 128)},
                   {"objectIds", Arr("The objectIds of the rows to link or unlink.", Id(), kMaxLinks)}},
                  {"table", "objectId", "field", "targetTable", "objectIds"});
  return Params({{"table", Table()}, {"objectId", Id("The row that holds the Relation field.")},
                 {"field", Str("The Relation field.", 128)}, {"targetTable", Str("The table the Relation points at.", 128)},
                 {"limit", Int("Rows to return (default 100).", 1, 2000)}},
                {"table", "objectId", "field", "targetTable"});
}

}  // namespace

void AddRelationTools(std::vector<Tool>& tools) {
  tools.push_back(Tool{"Get-Related", "Get related rows",
                       "Lists the rows a Relation field of one row links to (e.g. the participants of an activity). "
                       "`targetTable` is the Relation's target (Get-Schema shows it as targetClass).",
                       RelationParams(false), Switch::kView, true, GetRelated});
  tools.push_back(Tool{"Add-Relation", "Link rows",
                       "Adds links from a Relation field of one row to up to 100 rows of its target table.",
                       RelationParams(true), Switch::kUpdate, false,
                       [](const ToolCall& call, const json::object& args) { return ChangeRelation(call, args, "AddRelation"); }});
  tools.push_back(Tool{"Remove-Relation", "Unlink rows",
                       "Removes links from a Relation field of one row (the rows themselves stay).",
                       RelationParams(true), Switch::kUpdate, false,
                       [](const ToolCall& call, const json::object& args) { return ChangeRelation(call, args, "RemoveRelation"); }});
}

}  // namespace crmd::mcp
