#include "auth/sessions.hpp"

#include <set>
#include <sodium.h>

#include "app/application.hpp"
#include "schema/system_classes.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/time.hpp"

namespace crmd::auth {

namespace {

// Role hierarchies deeper than this are cut: each level is one indexed lookup.
constexpr int kMaxRoleDepth = 16;

const schema::ClassSchema& SessionClass(const schema::Snapshot& snapshot) {
  return *snapshot.Find("_Session");
}

}  // namespace

std::string NewSessionToken() {
  unsigned char bytes[16];
  randombytes_buf(bytes, sizeof bytes);
  char hex[33];
  sodium_bin2hex(hex, sizeof hex, bytes, sizeof bytes);
  return std::string("r:") + hex;
}

Result<Identity> ResolveSession(app::Application& app, std::string_view token) {
  // Only a session's own tokens: an OAuth token (auth/oauth.hpp) is no session token.
  if (!token.starts_with("r:")) return errors::InvalidSessionToken();
  auto snapshot = app.schema();
  const auto& cls = SessionClass(*snapshot);
  auto found = storage::FindFirst(app.db(), cls, schema::kSessionTokenHash, ids::HashSecret(token));
  if (!found) return errors::InvalidSessionToken();
  const std::string expires = storage::TextOf(cls, *found, "expiresAt");
  if (expires.empty() || expires <= timeutil::NowIso()) return errors::InvalidSessionToken();
  const std::string user_id = storage::TextOf(cls, *found, "user");
  const auto& users = *snapshot->Find("_User");
  auto user = user_id.empty() ? std::nullopt : app.db().Get(users, user_id);
  if (!user) return errors::InvalidSessionToken();
  const storage::Cell active = storage::CellOf(users, *user, "active");
  if (const auto* flag = std::get_if<std::int64_t>(&active); flag && *flag == 0) return errors::InvalidSessionToken();
  Identity identity;
  identity.principal = Principal::kUser;
  identity.user_id = user_id;
  identity.session_id = found->object_id;
  identity.roles = RolesOf(app, user_id);
  return identity;
}

std::vector<std::string> RolesOf(app::Application& app, const std::string& user_id) {
  auto snapshot = app.schema();
  const auto* roles = snapshot->Find("_Role");
  std::set<std::string> all;
  std::vector<std::string> frontier = app.db().RelationOwners(*roles, "users", {user_id});
  for (int depth = 0; !frontier.empty() && depth < kMaxRoleDepth; ++depth) {
    std::vector<std::string> fresh;
    for (auto& id : frontier)
      if (all.insert(id).second) fresh.push_back(id);
    frontier = app.db().RelationOwners(*roles, "roles", fresh);
  }
  std::vector<std::string> names;
  if (all.empty()) return names;
  auto rows = app.db().GetMany(*roles, {all.begin(), all.end()});
  for (const auto& row : rows.rows)
    if (auto name = storage::TextOf(*roles, row, "name"); !name.empty()) names.push_back(std::move(name));
  return names;
}

}  // namespace crmd::auth
