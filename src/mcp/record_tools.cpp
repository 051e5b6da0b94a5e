// The record tools (spec §4.10): reading and writing rows of a table through the record API.
#include <string>
#include <variant>

#include "mcp/args.hpp"
#include "mcp/tool.hpp"
#include "util/strings.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {

// Get-Data's page (spec §4.10, §8): 5 rows unless asked, never more than 2000 in one call.
constexpr std::int64_t kDefaultLimit = 5;
constexpr std::int64_t kMaxLimit = 2000;

ToolResult GetData(const ToolCall& call, const json::object& args) {
  std::string target = "/classes/" + PercentEncode(args.at("table").get_string()) + "?limit=";
  target += std::to_string(args.contains("limit") ? args.at("limit").to_number<std::int64_t>() : kDefaultLimit);
  if (const auto* where = args.if_contains("where")) target += "&where=" + PercentEncode(json::serialize(*where));
  if (const auto* skip = args.if_contains("skip")) target += "&skip=" + std::to_string(skip->to_number<std::int64_t>());
  for (const char* text : {"order", "keys", "include"})
    if (const auto* v = args.if_contains(text)) target += std::string("&") + text + "=" + PercentEncode(v->get_string());
  // As the tool's description promises (an agent asks for "the latest" first): the record API's
  // own default is the table's order, oldest first.
  if (!args.contains("order")) target += "&order=-createdAt";
  if (const auto* count = args.if_contains("count"); count && count->get_bool()) target += "&count=1";
  return call.Relay(target);
}

ToolResult CreateData(const ToolCall& call, const json::object& args) {
  const std::string_view table = args.at("table").get_string();
  if (IsReadOnlyTable(table)) return ToolResult{"Permission denied for action create on class " + std::string(table), true};
  const json::value& data = args.at("data");
  const std::string path = "/classes/" + PercentEncode(table);
  // The answer's text as the record API wrote it: not parsed to be written again.
  if (call.dispatch_text) return AnsweredText((*call.dispatch_text)(call.ctx, "POST", path, &data));
  return Answered(call.Send("POST", path, &data));
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
  return call.Relay("/classes-aggregate/" + PercentEncode(args.at("table").get_string()) +
                                       "?pipeline=" + PercentEncode(json::serialize(pipeline)));
}

// Rows Update-Many changes in one call (one batch, one write unit).
constexpr std::int64_t kMaxUpdateMany = 500;
// Fields Search-Data looks in at most.
constexpr std::size_t kMaxSearchFields = 10;

ToolResult GetRecord(const ToolCall& call, const json::object& args) {
  std::string target = ClassPath(args.at("table").get_string(), args.at("objectId").get_string()) + "?";
  for (const char* text : {"keys", "include"})
    if (const auto* v = args.if_contains(text)) target += std::string(text) + "=" + PercentEncode(v->get_string()) + "&";
  target.pop_back();
  return call.Relay(target);
}

ToolResult CountData(const ToolCall& call, const json::object& args) {
  std::string target = ClassPath(args.at("table").get_string()) + "?count=1&limit=0";
  if (const auto* where = args.if_contains("where")) target += WhereParam(*where);
  auto [status, body] = call.Send("GET", target);
  if (status >= 400 || !body.is_object()) return Answered({status, body});
  return Json(json::object{{"count", body.get_object()["count"]}});
}

ToolResult UpdateData(const ToolCall& call, const json::object& args) {
  const std::string_view table = args.at("table").get_string();
  if (IsReadOnlyTable(table)) return ReadOnly("update", table);
  const json::value& data = args.at("data");
  return Answered(call.Send("PUT", ClassPath(table, args.at("objectId").get_string()), &data));
}

// The objectIds `where` selects, at most `limit`.
std::variant<std::vector<std::string>, ToolResult> Ids(const ToolCall& call, std::string_view table, const json::value& where,
                                                       std::int64_t limit) {
  auto [status, body] = call.Send("GET", ClassPath(table) + "?keys=objectId&limit=" + std::to_string(limit) + WhereParam(where));
  if (status >= 400 || !body.is_object()) return Answered({status, body});
  std::vector<std::string> ids;
  for (const auto& row : body.get_object()["results"].get_array()) ids.emplace_back(row.at("objectId").get_string());
  return ids;
}

ToolResult UpdateMany(const ToolCall& call, const json::object& args) {
  const std::string_view table = args.at("table").get_string();
  if (IsReadOnlyTable(table)) return ReadOnly("update", table);
  const std::int64_t limit = args.contains("limit") ? args.at("limit").to_number<std::int64_t>() : 100;
  auto ids = Ids(call, table, args.at("where"), limit);
  if (auto* refused = std::get_if<ToolResult>(&ids)) return *refused;
  json::array requests;
  for (const auto& id : std::get<std::vector<std::string>>(ids)) {
    std::string path = "/";
    path += call.prefix;
    path += ClassPath(table, id);
    requests.push_back(json::object{{"method", "PUT"}, {"path", path}, {"body", args.at("data")}});
  }
  if (requests.empty()) return Json(json::object{{"updated", 0}, {"failed", 0}, {"results", json::array{}}});
  const json::value batch = json::object{{"requests", std::move(requests)}};
  auto [status, body] = call.Send("POST", "/batch", &batch);
  if (status >= 400 || !body.is_array()) return Answered({status, body});
  std::int64_t updated = 0, failed = 0;
  for (const auto& item : body.get_array()) (item.is_object() && item.get_object().contains("success") ? updated : failed) += 1;
  return Json(json::object{{"updated", updated}, {"failed", failed}, {"results", std::move(body)}});
}

ToolResult UpsertByExternalId(const ToolCall& call, const json::object& args) {
  const std::string_view table = args.at("table").get_string();
  if (IsReadOnlyTable(table)) return ReadOnly("create", table);
  const json::value& external = args.at("externalId");
  auto ids = Ids(call, table, json::object{{"ExternalId", external}}, 1);
  if (auto* refused = std::get_if<ToolResult>(&ids)) return *refused;
  json::value data = args.at("data");
  data.get_object()["ExternalId"] = external;
  const auto& found = std::get<std::vector<std::string>>(ids);
  if (!found.empty()) {
    auto updated = call.Send("PUT", ClassPath(table, found[0]), &data);
    if (updated.first >= 400) return Answered(updated);
    return Json(json::object{{"created", false}, {"objectId", found[0]}});
  }
  if (!HasSwitch(call, "mcp:create"))
    return ToolResult{"Permission denied: creating a row needs the MCP permission mcp:create, which this user does not have", true};
  auto created = call.Send("POST", ClassPath(table), &data);
  if (created.first >= 400 || !created.second.is_object()) return Answered(created);
  return Json(json::object{{"created", true}, {"objectId", created.second.get_object()["objectId"]}});
}

// `text` as a regular expression that matches it literally.
std::string Literal(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

ToolResult SearchData(const ToolCall& call, const json::object& args) {
  json::array any;
  const std::string pattern = Literal(args.at("text").get_string());
  for (const auto& field : args.at("fields").get_array())
    any.push_back(json::object{{field.get_string(), json::object{{"$regex", pattern}, {"$options", "i"}}}});
  const std::int64_t limit = args.contains("limit") ? args.at("limit").to_number<std::int64_t>() : 20;
  return call.Relay(ClassPath(args.at("table").get_string()) + "?limit=" + std::to_string(limit) +
                                       WhereParam(json::object{{"$or", std::move(any)}}));
}

ToolResult DistinctValues(const ToolCall& call, const json::object& args) {
  std::string target = "/classes-aggregate/" + PercentEncode(args.at("table").get_string()) +
                       "?distinct=" + PercentEncode(args.at("field").get_string());
  if (const auto* where = args.if_contains("where")) target += "&match=" + PercentEncode(json::serialize(*where));
  return call.Relay(target);
}

ToolResult CountBy(const ToolCall& call, const json::object& args) {
  json::array pipeline;
  if (const auto* where = args.if_contains("where")) pipeline.push_back(json::object{{"$match", *where}});
  std::string key = "$";
  key += args.at("field").get_string();
  pipeline.push_back(json::object{{"$group", json::object{{"_id", std::move(key)},
                                                          {"count", json::object{{"$sum", 1}}}}}});
  pipeline.push_back(json::object{{"$sort", json::object{{"count", -1}}}});
  pipeline.push_back(json::object{{"$limit", kMaxLimit}});
  return call.Relay("/classes-aggregate/" + PercentEncode(args.at("table").get_string()) +
                                       "?pipeline=" + PercentEncode(json::serialize(pipeline)));
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
                    json::object{{"table", args::Table()},
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
      kCreateDataTool, "Create a row",
      "Creates one row in a table with the given field values and returns its objectId and createdAt. "
      "Field names and types must match the table's schema (Get-Schema); Pointers are "
      "{\"__type\":\"Pointer\",\"className\":...,\"objectId\":...}, dates {\"__type\":\"Date\",\"iso\":...}. "
      "Triggers of the table run as for any write.",
      json::object{{"type", "object"},
                   {"properties", json::object{{"table", args::Table()},
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
                    json::object{{"table", args::Table()},
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
                    json::object{{"table", args::Table()},
                                 {"pipeline", json::object{{"type", "array"}, {"maxItems", 16}, {"items", json::object{{"type", "object"}}},
                                                           {"description", "The stages, e.g. [{\"$group\":{\"_id\":\"$City\",\"n\":{\"$sum\":1}}}]."}}},
                                 {"limit", json::object{{"type", "integer"}, {"minimum", 1}, {"maximum", kMaxLimit},
                                                        {"description", "Rows to return, at most 2000; all when absent."}}}}},
                   {"required", json::array{"table", "pipeline"}},
                   {"additionalProperties", false}},
      Switch::kView, true, AggregateData});
  using namespace args;
  const auto where = Obj("Query constraints in the record API's language, e.g. {\"Status\":\"Open\",\"Score\":{\"$gte\":10}}.");
  tools.push_back(Tool{"Get-Record", "Get one row",
                       "Reads one row of a table by its objectId, with `keys` (comma-separated fields) and `include` "
                       "(Pointer fields to expand) as in Get-Data.",
                       Params({{"table", Table()}, {"objectId", Id()}, {"keys", Str("Fields to return, comma-separated.", 4096)},
                               {"include", Str("Pointer fields to expand, comma-separated.")}},
                              {"table", "objectId"}),
                       Switch::kView, true, GetRecord});
  tools.push_back(Tool{"Count-Data", "Count rows", "Counts the rows of a table that match `where` (all rows without it). Returns {\"count\"}.",
                       Params({{"table", Table()}, {"where", where}}, {"table"}), Switch::kView, true, CountData});
  tools.push_back(Tool{"Update-Data", "Update a row",
                       "Changes the given fields of one row (only those sent); `{\"__op\":\"Increment\",\"amount\":1}` and the "
                       "record API's other operators work. Returns {\"updatedAt\"}. Triggers and the change history run as for any write.",
                       Params({{"table", Table()}, {"objectId", Id()}, {"data", Obj("The fields to change and their new values.")}},
                              {"table", "objectId", "data"}),
                       Switch::kUpdate, false, UpdateData});
  tools.push_back(Tool{"Update-Many", "Update many rows",
                       "Sets the same field values on every row `where` selects, at most `limit` rows (default 100, at most "
                       "500) in one batch. Returns {\"updated\",\"failed\",\"results\"}. Check the rows with Count-Data first.",
                       Params({{"table", Table()}, {"where", where}, {"data", Obj("The fields to change and their new values.")},
                               {"limit", Int("Rows to change at most (default 100).", 1, kMaxUpdateMany)}},
                              {"table", "where", "data"}),
                       Switch::kUpdate, false, UpdateMany});
  tools.push_back(Tool{"Upsert-By-ExternalId", "Create or update by external id",
                       "Finds the row whose `ExternalId` field equals `externalId` (an id from another system) and changes it "
                       "with `data`, or creates it with `data` and that ExternalId. Returns {\"created\",\"objectId\"}.",
                       Params({{"table", Table()}, {"externalId", Str("The other system's id.", 256)},
                               {"data", Obj("The row's fields and values.")}},
                              {"table", "externalId", "data"}),
                       Switch::kUpdate, false, UpsertByExternalId});
  tools.push_back(Tool{"Search-Data", "Search rows by text",
                       "Finds rows of a table where any of `fields` contains `text` (case-insensitive), e.g. a name, "
                       "a phone number or an email fragment. Returns {\"results\":[...]}, at most `limit` rows (default 20).",
                       Params({{"table", Table()}, {"text", Str("The text to look for.", 256)},
                               {"fields", Arr("String fields to look in (1 to 10).", Str("A field name.", 128), kMaxSearchFields)},
                               {"limit", Int("Rows to return (default 20).", 1, kMaxLimit)}},
                              {"table", "text", "fields"}),
                       Switch::kView, true, SearchData});
  tools.push_back(Tool{"Get-Distinct-Values", "List distinct values",
                       "Lists the distinct values of one field of a table (of the rows `where` selects), e.g. the cities of "
                       "accounts. Returns {\"results\":[...]}.",
                       Params({{"table", Table()}, {"field", Str("The field.", 128)}, {"where", where}}, {"table", "field"}),
                       Switch::kView, true, DistinctValues});
  tools.push_back(Tool{"Count-By", "Count rows by a field",
                       "Counts the rows of a table per value of one field, largest first (at most 2000 values), e.g. deals "
                       "per stage. Returns {\"results\":[{\"objectId\":<value>,\"count\"}]}.",
                       Params({{"table", Table()}, {"field", Str("The field to group by.", 128)}, {"where", where}}, {"table", "field"}),
                       Switch::kView, true, CountBy});
}

}  // namespace crmd::mcp
