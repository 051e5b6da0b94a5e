// The application tools (spec §4.9, §4.10, §2.6): Config flags, notifications, functions and the
// request log.
#include <string>

#include "auth/registry.hpp"
#include "mcp/args.hpp"
#include "mcp/tool.hpp"
#include "util/json.hpp"
#include "util/strings.hpp"
#include "util/time.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {

// The spec §4.9 form functions, always present.
constexpr const char* kForms[] = {"getlead", "web2table"};

ToolResult SetConfigFlag(const ToolCall& call, const json::object& args) {
  const json::value& name = args.at("name");
  // Spec §4.9: with several rows of one Name the first-created decides, so that is the one changed.
  auto [status, body] = call.Send("GET", "/classes/Config?keys=objectId&order=createdAt&limit=1" + WhereParam(json::object{{"Name", name}}));
  if (status >= 400 || !body.is_object()) return Answered({status, body});
  const json::value value = json::object{{"Name", name}, {"Value", json::object{{name.get_string(), args.at("enabled")}}}};
  const auto& rows = body.get_object()["results"].get_array();
  if (!rows.empty()) return Answered(call.Send("PUT", ClassPath("Config", rows[0].at("objectId").get_string()), &value));
  return Answered(call.Send("POST", "/classes/Config", &value));
}

ToolResult CreateNotification(const ToolCall& call, const json::object& args) {
  json::object row{{"User", PointerTo("_User", args.at("userId").get_string())}, {"Content", args.at("content")},
                   {"Date", DateValue(timeutil::NowIso())}};
  if (const auto* v = args.if_contains("icon")) row["Icon"] = *v;
  if (const auto* v = args.if_contains("table")) row["objectClass"] = *v;
  if (const auto* v = args.if_contains("objectId")) row["objectIdValue"] = *v;
  const json::value body = std::move(row);
  return Answered(call.Send("POST", "/classes/_Notification", &body));
}

ToolResult ListFunctions(const ToolCall& call, const json::object&) {
  json::array names;
  for (const char* form : kForms) names.push_back(json::object{{"name", form}, {"kind", "form"}});
  if (call.ctx.credentials)
    for (const auto& [name, code] : call.ctx.credentials->functions) names.push_back(json::object{{"name", name}, {"kind", "lua"}});
  return Json(json::object{{"functions", std::move(names)}});
}

ToolResult RunFunction(const ToolCall& call, const json::object& args) {
  if (!call.functions || !*call.functions) return ToolResult{"Functions are not available here.", true};
  static const json::object kEmpty;
  const auto* body = args.if_contains("body");
  return Answered((*call.functions)(call.ctx, args.at("name").get_string(), body ? body->get_object() : kEmpty));
}

}  // namespace

void AddAppTools(std::vector<Tool>& tools) {
  using namespace args;
  tools.push_back(Tool{"Get-Config", "Get the Config flags",
                       "Lists the application's Config rows ({Name, Value:{<flag>: true|false}}), such as AcceptWebLeads. "
                       "With several rows of one Name, the first-created one decides.",
                       Params({}), Switch::kView, true,
                       [](const ToolCall& call, const json::object&) {
                         return call.Relay("/classes/Config?order=createdAt&limit=1000");
                       }});
  tools.push_back(Tool{"Set-Config-Flag", "Set a Config flag",
                       "Turns a Config flag on or off (its first-created row, or a new row when there is none), e.g. "
                       "AcceptWebToTable for the web2table form. Master connection.",
                       Params({{"name", Str("The flag's name.", 128)}, {"enabled", Bool("On or off.")}}, {"name", "enabled"}),
                       Switch::kUpdate, false, SetConfigFlag});
  tools.push_back(Tool{"Create-Notification", "Notify a user",
                       "Puts a notification in a user's in-app bell (`_Notification`), optionally about one record.",
                       Params({{"userId", Id("The user's objectId.")}, {"content", Str("The text.", 2000)}, {"icon", Str("An icon name.", 64)},
                               {"table", Table()}, {"objectId", Id("The record it is about.")}},
                              {"userId", "content"}),
                       Switch::kCreate, false, CreateNotification});
  tools.push_back(Tool{"Get-Notifications", "Get notifications",
                       "Lists the newest in-app notifications (`_Notification`: user, content, date, the record it is about), of one user or of all.",
                       Params({{"userId", Id("The user's objectId.")}, {"limit", Int("Rows (default 20).", 1, 1000)}}),
                       Switch::kView, true,
                       [](const ToolCall& call, const json::object& args) {
                         json::object where;
                         if (const auto* id = args.if_contains("userId")) where["User"] = PointerTo("_User", id->get_string());
                         const auto limit = args.contains("limit") ? args.at("limit").to_number<std::int64_t>() : 20;
                         return call.Relay("/classes/_Notification?order=-createdAt&limit=" + std::to_string(limit) + WhereParam(where));
                       }});
  tools.push_back(Tool{"List-Functions", "List server functions",
                       "Lists the functions Run-Function can run: the web forms getlead and web2table, and the operator's "
                       "deployed Lua functions.",
                       Params({}), Switch::kView, true, ListFunctions});
  tools.push_back(Tool{"Run-Function", "Run a server function",
                       "Runs one of the application's functions (List-Functions) with `body`, as POST /functions does, and "
                       "returns its answer.",
                       Params({{"name", Str("The function's name.", 128)}, {"body", Obj("The function's input.")}}, {"name"}),
                       Switch::kCreate, false, RunFunction});
  tools.push_back(Tool{"Get-Request-Log", "Get the request log",
                       "Lists the newest write requests of the application (`_RequestLog`: path, method, status, user, "
                       "duration). Master connection only.",
                       Params({{"limit", Int("Rows (default 20).", 1, 1000)}}), Switch::kView, true,
                       [](const ToolCall& call, const json::object& args) {
                         const auto limit = args.contains("limit") ? args.at("limit").to_number<std::int64_t>() : 20;
                         return call.Relay("/classes/_RequestLog?order=-createdAt&limit=" + std::to_string(limit));
                       }});
}

}  // namespace crmd::mcp
