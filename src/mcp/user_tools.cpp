// The user tools (spec §4.10): who works in the application.
#include <string>
#include <variant>

#include "app/application.hpp"

#include "mcp/args.hpp"
#include "mcp/tool.hpp"
#include "util/strings.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {

// Spec §4.10: Get-all-Users answers the first 100 users only.
constexpr int kUsersListed = 100;

ToolResult GetAllUsers(const ToolCall& call, const json::object&) {
  return call.Relay("/classes/_User?order=createdAt&limit=" + std::to_string(kUsersListed));
}

// With `objectId`: changes that user (the record API's user update, master only); without: signs
// a new user up.
ToolResult CreateOrUpdateUser(const ToolCall& call, const json::object& args) {
  const json::value& user = args.at("user");
  if (const auto* id = args.if_contains("objectId"))
    return Answered(call.Send("PUT", "/users/" + PercentEncode(id->get_string()), &user));
  return Answered(call.Send("POST", "/users", &user));
}

// The objectId of the role named `name`, or the tool's refusal.
std::variant<std::string, ToolResult> RoleId(const ToolCall& call, const json::value& name) {
  auto [status, body] = call.Send("GET", "/classes/_Role?keys=objectId&limit=1" + WhereParam(json::object{{"name", name}}));
  if (status >= 400 || !body.is_object()) return Answered({status, body});
  const auto& rows = body.get_object()["results"].get_array();
  if (rows.empty()) return ToolResult{"No role is named " + json::serialize(name) + ".", true};
  return std::string(rows[0].at("objectId").get_string());
}

ToolResult ChangeMembership(const ToolCall& call, const json::object& args, std::string_view op) {
  auto role = RoleId(call, args.at("role"));
  if (auto* refused = std::get_if<ToolResult>(&role)) return *refused;
  const json::value body = json::object{
      {"users", json::object{{"__op", op}, {"objects", json::array{PointerTo("_User", args.at("userId").get_string())}}}}};
  return Answered(call.Send("PUT", ClassPath("_Role", std::get<std::string>(role)), &body));
}

ToolResult RoleMembers(const ToolCall& call, const json::object& args) {
  auto role = RoleId(call, args.at("role"));
  if (auto* refused = std::get_if<ToolResult>(&role)) return *refused;
  const json::value where = json::object{
      {"$relatedTo", json::object{{"object", PointerTo("_Role", std::get<std::string>(role))}, {"key", "users"}}}};
  return call.Relay("/classes/_User?limit=1000" + WhereParam(where));
}

ToolResult WhoAmI(const ToolCall& call, const json::object&) {
  const auto& identity = call.ctx.identity;
  // Only a key that matched is the Master identity; a refused one gets every tool's refusal (spec
  // §5.6), here for the class the tool reads (issue 31 #14).
  if (identity.principal != auth::Principal::kUser && !identity.IsMaster())
    return ToolResult{"Permission denied for action find on class _User", true};
  if (identity.principal != auth::Principal::kUser)
    return Json(json::object{{"identity", "Master"}, {"application", call.ctx.app ? call.ctx.app->id() : std::string()},
                             {"note", "A key connection: no permission model applies (spec §5.6)."}});
  auto [status, body] = call.Send("GET", ClassPath("_User", identity.user_id));
  if (status >= 400 || !body.is_object()) return Answered({status, body});
  json::array roles, switches;
  for (const auto& r : identity.roles) roles.emplace_back(r);
  if (call.switches)
    for (const auto& s : *call.switches) switches.emplace_back(s);
  return Json(json::object{{"user", std::move(body)}, {"roles", std::move(roles)}, {"mcpPermissions", std::move(switches)}});
}

ToolResult GetMcpPermissions(const ToolCall& call, const json::object& args) {
  auto [status, body] = call.Send("GET", ClassPath("_User", args.at("userId").get_string()) + "?keys=mcpPermissions,username");
  if (status >= 400 || !body.is_object()) return Answered({status, body});
  const auto* set = body.get_object().if_contains("mcpPermissions");
  return Json(json::object{{"userId", args.at("userId")}, {"mcpPermissions", set ? *set : json::value(json::array{})}});
}

ToolResult SetMcpPermissions(const ToolCall& call, const json::object& args) {
  const json::value body = json::object{{"mcpPermissions", args.at("mcpPermissions")}};
  return Answered(call.Send("PUT", "/users/" + PercentEncode(args.at("userId").get_string()), &body));
}

}  // namespace

void AddUserTools(std::vector<Tool>& tools) {
  tools.push_back(Tool{
      "Get-all-Users", "List users",
      "Lists the application's users (objectId, username, email, name, phone, active, ...; never "
      "passwords or sessions), oldest first: the first 100 users only.",
      json::object{{"type", "object"}, {"additionalProperties", false}},
      Switch::kView, true, GetAllUsers});
  tools.push_back(Tool{
      "Create-or-Update-User", "Create or update a user",
      "Without `objectId`, creates a user from `user` ({username, password, email?, name?, phone?, ...}; "
      "the password needs 8 characters with a lower-case letter, an upper-case letter and a digit). With "
      "`objectId`, changes that user's fields: `active`:false deactivates, `password` resets it. Needs a "
      "master connection.",
      json::object{{"type", "object"},
                   {"properties", json::object{{"objectId", json::object{{"type", "string"}, {"minLength", 1}, {"maxLength", 64},
                                                                         {"description", "The user to change; absent to create one."}}},
                                               {"user", json::object{{"type", "object"}, {"description", "The user's fields."}}}}},
                   {"required", json::array{"user"}},
                   {"additionalProperties", false}},
      Switch::kUpdate, false, CreateOrUpdateUser});
  using namespace args;
  const auto role = Str("The role's name, e.g. Agents.", 128);
  const auto user = Id("The user's objectId.");
  tools.push_back(Tool{"Get-User", "Get a user", "Reads one user by objectId: username, email, name, phone, active and the other fields (never passwords or sessions).",
                       Params({{"userId", user}}, {"userId"}), Switch::kView, true,
                       [](const ToolCall& call, const json::object& args) {
                         return call.Relay(ClassPath("_User", args.at("userId").get_string()));
                       }});
  tools.push_back(Tool{"Find-Users", "Find users",
                       "Finds users matching `where` (e.g. {\"email\":\"dana@example.com\"} or {\"active\":false}), at most "
                       "`limit` (default 20).",
                       Params({{"where", Obj("Query constraints on _User fields.")}, {"limit", Int("Users to return (default 20).", 1, 1000)}},
                              {"where"}),
                       Switch::kView, true,
                       [](const ToolCall& call, const json::object& args) {
                         const auto limit = args.contains("limit") ? args.at("limit").to_number<std::int64_t>() : 20;
                         return call.Relay("/classes/_User?limit=" + std::to_string(limit) + WhereParam(args.at("where")));
                       }});
  tools.push_back(Tool{"List-Roles", "List roles", "Lists the application's roles (name, objectId). Table permissions name them as role:<name>.",
                       Params({}), Switch::kView, true,
                       [](const ToolCall& call, const json::object&) {
                         return call.Relay("/classes/_Role?keys=name&order=name&limit=1000");
                       }});
  tools.push_back(Tool{"Get-Role-Members", "List a role's users", "Lists the users who are direct members of one role (List-Roles names the roles), at most 1000.",
                       Params({{"role", role}}, {"role"}), Switch::kView, true, RoleMembers});
  tools.push_back(Tool{"Add-User-To-Role", "Add a user to a role",
                       "Makes a user a member of a role, giving them what the role may do. Master connection.",
                       Params({{"userId", user}, {"role", role}}, {"userId", "role"}), Switch::kUpdate, false,
                       [](const ToolCall& call, const json::object& args) { return ChangeMembership(call, args, "AddRelation"); }});
  tools.push_back(Tool{"Remove-User-From-Role", "Remove a user from a role", "Ends a user's membership of a role, and with it what the role allowed them. Master connection.",
                       Params({{"userId", user}, {"role", role}}, {"userId", "role"}), Switch::kUpdate, false,
                       [](const ToolCall& call, const json::object& args) { return ChangeMembership(call, args, "RemoveRelation"); }});
  tools.push_back(Tool{"Create-Role", "Create a role",
                       "Creates a role (letters, digits, spaces, - and _), to name in table permissions as role:<name>. "
                       "Master connection.",
                       Params({{"name", Str("The role's name.", 128)}}, {"name"}), Switch::kEditPageAndSchema, false,
                       [](const ToolCall& call, const json::object& args) {
                         const json::value body = json::object{{"name", args.at("name")}};
                         return Answered(call.Send("POST", "/classes/_Role", &body));
                       }});
  tools.push_back(Tool{"Who-Am-I", "Who am I",
                       "Says who this connection acts as: the signed-in user with their roles and MCP permissions, or "
                       "the Master identity of a key.",
                       Params({}), Switch::kView, true, WhoAmI});
  tools.push_back(Tool{"Get-MCP-Permissions", "Get a user's MCP permissions",
                       "Returns a user's MCP switches (mcp:view, mcp:create, mcp:update, mcp:edit-page-and-schema).",
                       Params({{"userId", user}}, {"userId"}), Switch::kView, true, GetMcpPermissions});
  tools.push_back(Tool{"Set-MCP-Permissions", "Set a user's MCP permissions",
                       "Sets a user's MCP switches (all off for new users, the owner included). Master connection.",
                       Params({{"userId", user},
                               {"mcpPermissions", Arr("The switches to grant; the others are off.",
                                                      Enum("A switch.", {"mcp:view", "mcp:create", "mcp:update", "mcp:edit-page-and-schema"}), 4)}},
                              {"userId", "mcpPermissions"}),
                       Switch::kEditPageAndSchema, false, SetMcpPermissions});
}

}  // namespace crmd::mcp
