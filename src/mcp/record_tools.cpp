// The record tools (spec §4.10): reading and writing rows of a table through the record API.
#include <string>

#include "mcp/tool.hpp"
#include "util/strings.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {

// Get-Data's page (spec §4.10, §8): 5 rows unless asked, never more than 2000 in one call.
constexpr std::int64_t kDefaultLimit = 5;
constexpr std::int64_t kMaxLimit = 2000;

json::object TableProperty() {
  return json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", 128},
                      {"description", "The table (class) name, as Get-Schema names it, e.g. Accounts."}};
}

ToolResult GetData(const ToolCall& call, const json::object& args) {
  std::string target = "/classes/" + PercentEncode(args.at("table").get_string()) + "?limit=";
  target += std::to_string(args.contains("limit") ? args.at("limit").to_number<std::int64_t>() : kDefaultLimit);
  if (const auto* where = args.if_contains("where")) target += "&where=" + PercentEncode(json::serialize(*where));
  if (const auto* skip = args.if_contains("skip")) target += "&skip=" + std::to_string(skip->to_number<std::int64_t>());
  for (const char* text : {"order", "keys", "include"})
    if (const auto* v = args.if_contains(text)) target += std::string("&") + text + "=" + PercentEncode(v->get_string());
  if (const auto* count = args.if_contains("count"); count && count->get_bool()) target += "&count=1";
  return Answered(call.Send("GET", target));
}

// Spec §5.3: the change history and the logs are read-only through every tool, even with a key
// (the record API lets a key write `_Timeline`; MCP does not).
bool IsReadOnlyTable(std::string_view table) { return table == "_Timeline" || table.starts_with("_syslog"); }

ToolResult CreateData(const ToolCall& call, const json::object& args) {
  const std::string_view table = args.at("table").get_string();
  if (IsReadOnlyTable(table)) return ToolResult{"Permission denied for action create on class " + std::string(table), true};
  const json::value& data = args.at("data");
  return Answered(call.Send("POST", "/classes/" + PercentEncode(table), &data));
}

}  // namespace

void AddRecordTools(std::vector<Tool>& tools) {
  tools.push_back(Tool{
      "Get-Data", "Get data",
      "Reads rows of one table, newest first unless `order` says otherwise. Use Get-Schema first to learn "
      "the table's fields. `where` is a JSON query object in the record API's language, e.g. "
      "{\"City\":\"Haifa\",\"Score\":{\"$gte\":10}}; `keys` limits the fields returned (comma-separated); "
      "`include` expands Pointer fields; `count`:true adds the number of matching rows. Returns "
      "{\"results\":[...]} (and \"count\"). At most 2000 rows per call (default 5): page with `skip`.",
      json::object{{"type", "object"},
                   {"properties",
                    json::object{{"table", TableProperty()},
                                 {"where", json::object{{"type", "object"}, {"description", "Query constraints, e.g. {\"Status\":\"Open\"}."}}},
                                 {"limit", json::object{{"type", "integer"}, {"minimum", 0}, {"maximum", kMaxLimit}, {"default", kDefaultLimit},
                                                        {"description", "Rows to return, at most 2000."}}},
                                 {"skip", json::object{{"type", "integer"}, {"minimum", 0}, {"description", "Rows to skip, for paging."}}},
                                 {"order", json::object{{"type", "string"}, {"maxLength", 1024},
                                                        {"description", "Sort fields, comma-separated; a leading - sorts descending, e.g. -createdAt."}}},
                                 {"keys", json::object{{"type", "string"}, {"maxLength", 4096}, {"description", "Fields to return, comma-separated."}}},
                                 {"include", json::object{{"type", "string"}, {"maxLength", 1024}, {"description", "Pointer fields to expand, comma-separated."}}},
                                 {"count", json::object{{"type", "boolean"}, {"description", "Also return the number of matching rows."}}}}},
                   {"required", json::array{"table"}},
                   {"additionalProperties", false}},
      Switch::kView, true, GetData});
  tools.push_back(Tool{
      "Create-Data", "Create a row",
      "Creates one row in a table with the given field values and returns its objectId and createdAt. "
      "Field names and types must match the table's schema (Get-Schema); Pointers are "
      "{\"__type\":\"Pointer\",\"className\":...,\"objectId\":...}, dates {\"__type\":\"Date\",\"iso\":...}. "
      "Triggers of the table run as for any write.",
      json::object{{"type", "object"},
                   {"properties", json::object{{"table", TableProperty()},
                                               {"data", json::object{{"type", "object"}, {"description", "The new row's fields and values."}}}}},
                   {"required", json::array{"table", "data"}},
                   {"additionalProperties", false}},
      Switch::kCreate, false, CreateData});
}

}  // namespace crmd::mcp
