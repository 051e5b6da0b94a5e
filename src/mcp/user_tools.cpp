// The user tools (spec §4.10): who works in the application.
#include <string>

#include "mcp/tool.hpp"
#include "util/strings.hpp"

namespace crmd::mcp {

namespace json = boost::json;

namespace {

// Spec §4.10: Get-all-Users answers the first 100 users only.
constexpr int kUsersListed = 100;

ToolResult GetAllUsers(const ToolCall& call, const json::object&) {
  return Answered(call.Send("GET", "/classes/_User?order=createdAt&limit=" + std::to_string(kUsersListed)));
}

// With `objectId`: changes that user (the record API's user update, master only); without: signs
// a new user up.
ToolResult CreateOrUpdateUser(const ToolCall& call, const json::object& args) {
  const json::value& user = args.at("user");
  if (const auto* id = args.if_contains("objectId"))
    return Answered(call.Send("PUT", "/users/" + PercentEncode(id->get_string()), &user));
  return Answered(call.Send("POST", "/users", &user));
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
}

}  // namespace crmd::mcp
