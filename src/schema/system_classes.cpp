#include "schema/system_classes.hpp"

#include "schema/row.hpp"

namespace crmd::schema {

namespace json = boost::json;

namespace {

json::object Permissions(const json::object& read, const json::object& write) {
  return json::object{{"find", read},     {"count", read},   {"get", read},
                      {"create", write},  {"update", write}, {"delete", write},
                      {"addField", write}, {"protectedFields", json::object{}}};
}

ClassSchema Make(const char* name, std::vector<std::pair<std::string, FieldDef>> fields,
                 json::object permissions) {
  ClassSchema cls;
  cls.name = name;
  cls.fields.emplace_back("createdBy", FieldDef{FieldType::kPointer, "_User"});
  cls.fields.emplace_back("updatedBy", FieldDef{FieldType::kPointer, "_User"});
  for (auto& f : fields) cls.fields.push_back(std::move(f));
  cls.class_level_permissions = std::move(permissions);
  return cls;
}

}  // namespace

std::vector<ClassSchema> SystemClasses() {
  const json::object nobody;  // empty: master and API keys only
  const json::object authenticated{{"requiresAuthentication", true}};
  const json::object everyone{{"*", true}};
  std::vector<ClassSchema> out;
  // Spec §4.7: reading _User needs a session; create and delete need a key; a user cannot update
  // their own record through the record API.
  out.push_back(Make("_User",
                     {{"username", {FieldType::kString, {}}},
                      {"password", {FieldType::kString, {}}},
                      {"email", {FieldType::kString, {}}},
                      {"emailVerified", {FieldType::kBoolean, {}}},
                      {"name", {FieldType::kString, {}}},
                      {"status", {FieldType::kPointer, "UserStatuses"}},
                      {"profile_image", {FieldType::kFile, {}}},
                      {"last_success_login", {FieldType::kDate, {}}},
                      {"language", {FieldType::kString, {}}},
                      {"permissions", {FieldType::kArray, {}}},
                      {kHashedPassword, {FieldType::kString, {}}},
                      {kFailedLogins, {FieldType::kNumber, {}}},
                      {kLockoutUntil, {FieldType::kDate, {}}},
                      {kResetTokenHash, {FieldType::kString, {}}},
                      {kResetTokenExpires, {FieldType::kDate, {}}},
                      {kSystemUserFlag, {FieldType::kBoolean, {}}},
                      {kAnonymousIdHash, {FieldType::kString, {}}}},
                     Permissions(authenticated, nobody)));
  // Rows carry an ACL naming their user, so a session reads its own sessions only.
  out.push_back(Make("_Session",
                     {{"user", {FieldType::kPointer, "_User"}},
                      {"expiresAt", {FieldType::kDate, {}}},
                      {"createdWith", {FieldType::kObject, {}}},
                      {"installationId", {FieldType::kString, {}}},
                      {kSessionTokenHash, {FieldType::kString, {}}}},
                     Permissions(authenticated, nobody)));
  out.push_back(Make("_Role",
                     {{"name", {FieldType::kString, {}}},
                      {"users", {FieldType::kRelation, "_User"}},
                      {"roles", {FieldType::kRelation, "_Role"}}},
                     Permissions(everyone, nobody)));
  // Lookups used by sessions and logins.
  out[0].indexes["username_1"] = json::object{{"username", 1}};
  out[0].indexes["email_1"] = json::object{{"email", 1}};
  out[0].indexes["reset_token_1"] = json::object{{kResetTokenHash, 1}};
  out[0].indexes["auth_anonymous_1"] = json::object{{kAnonymousIdHash, 1}};
  out[1].indexes["token_1"] = json::object{{kSessionTokenHash, 1}};
  out[1].indexes["user_1"] = json::object{{"user", 1}};
  out[2].indexes["name_1"] = json::object{{"name", 1}};
  return out;
}

bool IsSystemUser(const ClassSchema& users, const Row& row) {
  const Cell flag = CellOf(users, row, kSystemUserFlag);
  const auto* on = std::get_if<std::int64_t>(&flag);
  return on && *on == 1;
}

}  // namespace crmd::schema
