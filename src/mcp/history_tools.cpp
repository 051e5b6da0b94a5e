// The history tools (spec §2.6, §4.10): the change history of records and the runs of triggers,
// read-only through every tool.
#include <string>

#include "mcp/args.hpp"
#include "mcp/tool.hpp"
#include "util/strings.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {

ToolResult History(const ToolCall& call, json::object where, std::int64_t limit) {
  return call.Relay("/classes/_Timeline?order=-createdAt&limit=" + std::to_string(limit) + WhereParam(where));
}

ToolResult RecordTimeline(const ToolCall& call, const json::object& args) {
  return History(call, json::object{{"objectClass", args.at("table")}, {"objectIdValue", args.at("objectId")}}, LimitOf(args, 20));
}

ToolResult DeletedRecords(const ToolCall& call, const json::object& args) {
  return History(call, json::object{{"objectClass", args.at("table")}, {"event", "delete"}}, LimitOf(args, 20));
}

ToolResult RecentChanges(const ToolCall& call, const json::object& args) {
  json::object where;
  if (const auto* table = args.if_contains("table")) where["objectClass"] = *table;
  return History(call, std::move(where), LimitOf(args, 20));
}

ToolResult TriggerRuns(const ToolCall& call, const json::object& args) {
  json::object where;
  if (const auto* id = args.if_contains("triggerId")) where["triggerId"] = *id;
  if (const auto* id = args.if_contains("objectId")) where["objectIdValue"] = *id;
  return call.Relay("/classes/_syslogTriggers?order=-createdAt&limit=" + std::to_string(LimitOf(args, 20)) +
                                       WhereParam(where));
}

}  // namespace

void AddHistoryTools(std::vector<Tool>& tools) {
  using namespace args;
  const auto limit = Int("Rows to return, newest first (default 20).", 1, 2000);
  tools.push_back(Tool{"Get-Record-Timeline", "A record's change history",
                       "Lists the `_Timeline` rows of one record, newest first: who created or changed it, when, and "
                       "what was sent (`data`; `updatedByTrigger` in it when an automation wrote).",
                       Params({{"table", Table()}, {"objectId", Id()}, {"limit", limit}}, {"table", "objectId"}),
                       Switch::kView, true, RecordTimeline});
  tools.push_back(Tool{"Get-Deleted-Records", "Deleted records",
                       "Lists the deletions recorded for a table (its `_Timeline` rows with event delete), newest first: "
                       "what was deleted and when. Only tables with change history record them.",
                       Params({{"table", Table()}, {"limit", limit}}, {"table"}), Switch::kView, true, DeletedRecords});
  tools.push_back(Tool{"Get-Recent-Changes", "Recent changes",
                       "Lists the newest changes recorded in the change history, of one table or of all.",
                       Params({{"table", Table()}, {"limit", limit}}), Switch::kView, true, RecentChanges});
  tools.push_back(Tool{"Get-Trigger-Runs", "Trigger runs",
                       "Lists the runs of automations (`_syslogTriggers`), newest first: when a trigger fired, each "
                       "action's answer and its error, if any. Filter by `triggerId` (Get-Triggers shows it) or by the "
                       "`objectId` of the record that fired it.",
                       Params({{"triggerId", Id("The trigger's _id.")}, {"objectId", Id("The record that fired it.")}, {"limit", limit}}),
                       Switch::kView, true, TriggerRuns});
}

}  // namespace crmd::mcp
