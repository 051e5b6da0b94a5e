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

// Rows one Create-Many call may create: one batch of the record API, one write unit.
constexpr std::size_t kMaxCreateMany = 500;

ToolResult CreateMany(const ToolCall& call, const json::object& args) {
  const std::string_view table = args.at("table").get_string();
  if (IsReadOnlyTable(table)) return ToolResult{"Permission denied for action create on class " + std::string(table), true};
  // Spec §4.10: honoured only with master authentication; a user's flags are ignored.
  const bool master = call.ctx.identity.IsMaster();
  const bool skip_triggers = master && args.contains("skipTriggers") && args.at("skipTriggers").get_bool();
  const bool skip_timeline = master && args.contains("skipTimeline") && args.at("skipTimeline").get_bool();
  std::string path = "/";
  path += call.prefix;
  path += "/classes/";
  path += PercentEncode(table);
  json::array requests;
  for (const auto& row : args.at("data").get_array())
    requests.push_back(json::object{{"method", "POST"}, {"path", path}, {"body", row}});
  const json::value batch = json::object{{"requests", std::move(requests)}};
  struct Flags {  // the call's context is the caller's: the flags end with this tool
    auth::Context& ctx;
    ~Flags() { ctx.skip_triggers = ctx.skip_timeline = false; }
  } reset{call.ctx};
  call.ctx.skip_triggers = skip_triggers;
  call.ctx.skip_timeline = skip_timeline;
  auto [status, body] = call.Send("POST", "/batch", &batch);
  if (status >= 400 || !body.is_array()) return Answered({status, body});
  std::int64_t created = 0, failed = 0;
  for (const auto& item : body.get_array()) (item.is_object() && item.get_object().contains("success") ? created : failed) += 1;
  return ToolResult{json::serialize(json::object{{"created", created}, {"failed", failed}, {"results", std::move(body)}}), false};
}

// Aggregate-Data's rows (spec §4.10, §8): all unless asked, never more than 2000 when asked.
ToolResult AggregateData(const ToolCall& call, const json::object& args) {
  json::array pipeline = args.at("pipeline").get_array();
  if (const auto* limit = args.if_contains("limit")) pipeline.push_back(json::object{{"$limit", *limit}});
  return Answered(call.Send("GET", "/classes-aggregate/" + PercentEncode(args.at("table").get_string()) +
                                       "?pipeline=" + PercentEncode(json::serialize(pipeline))));
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
  tools.push_back(Tool{
      "Create-Many", "Create many rows",
      "Creates up to 500 rows in one table in one call (one batch: each row succeeds or fails alone). "
      "Returns {\"created\",\"failed\",\"results\":[{\"success\":{objectId,createdAt}} or {\"error\":{code,error}}]} in "
      "the order given. With a master connection (API key), `skipTriggers` creates the rows without "
      "running the table's triggers and `skipTimeline` without change-history rows; signed-in users "
      "cannot skip either.",
      json::object{{"type", "object"},
                   {"properties",
                    json::object{{"table", TableProperty()},
                                 {"data", json::object{{"type", "array"}, {"minItems", 1}, {"maxItems", kMaxCreateMany},
                                                       {"items", json::object{{"type", "object"}}},
                                                       {"description", "The new rows, each an object of fields and values."}}},
                                 {"skipTriggers", json::object{{"type", "boolean"}, {"description", "Master only: run no trigger for these rows."}}},
                                 {"skipTimeline", json::object{{"type", "boolean"}, {"description", "Master only: write no _Timeline rows."}}}}},
                   {"required", json::array{"table", "data"}},
                   {"additionalProperties", false}},
      Switch::kCreate, false, CreateMany});
  tools.push_back(Tool{
      "Aggregate-Data", "Aggregate data",
      "Groups and summarises rows of one table with a pipeline of stages, in this order: "
      "{\"$match\":{...where...}}, {\"$group\":{\"_id\":\"$Field\" or null, \"total\":{\"$sum\":\"$Amount\"}}} ($sum, $avg, "
      "$min, $max, $count), {\"$sort\":{...}}, {\"$skip\":n}, {\"$limit\":n}, {\"$project\":{...}}. Returns "
      "{\"results\":[...]}: every resulting row unless `limit` (at most 2000) is given.",
      json::object{{"type", "object"},
                   {"properties",
                    json::object{{"table", TableProperty()},
                                 {"pipeline", json::object{{"type", "array"}, {"maxItems", 16}, {"items", json::object{{"type", "object"}}},
                                                           {"description", "The stages, e.g. [{\"$group\":{\"_id\":\"$City\",\"n\":{\"$sum\":1}}}]."}}},
                                 {"limit", json::object{{"type", "integer"}, {"minimum", 1}, {"maximum", kMaxLimit},
                                                        {"description", "Rows to return, at most 2000; all when absent."}}}}},
                   {"required", json::array{"table", "pipeline"}},
                   {"additionalProperties", false}},
      Switch::kView, true, AggregateData});
}

}  // namespace crmd::mcp
