#include "write/session_writes.hpp"

#include "app/application.hpp"
#include "app/write_unit.hpp"
#include "auth/sessions.hpp"
#include "schema/system_classes.hpp"
#include "util/ids.hpp"
#include "util/json.hpp"
#include "util/time.hpp"

namespace crmd::write {

namespace json = boost::json;

namespace {

const schema::ClassSchema& SessionClass(const schema::Snapshot& snapshot) { return *snapshot.Find(schema::kSessionClass); }

}  // namespace

std::string CreateSession(app::Application& app, storage::WriteTransaction& txn, const std::string& user_id,
                          std::string_view action, std::string_view installation_id) {
  auto snapshot = app.schema();
  const auto& cls = SessionClass(*snapshot);
  const std::string token = auth::NewSessionToken();
  const std::int64_t now = timeutil::NowMillis();
  const auto expires = now + std::chrono::duration_cast<std::chrono::milliseconds>(app.settings().session_ttl).count();
  storage::Row row;
  row.created_at = row.updated_at = timeutil::FormatIso(now);
  row.acl = ToJson(json::object{{user_id, json::object{{"read", true}, {"write", true}}}});
  std::vector<std::string> columns{"user", "expiresAt", "createdWith", schema::kSessionTokenHash};
  row.cells = {user_id, timeutil::FormatIso(expires),
               ToJson(json::object{{"action", action}, {"authProvider", "password"}}), ids::HashSecret(token)};
  if (!installation_id.empty()) {
    columns.emplace_back("installationId");
    row.cells.emplace_back(std::string(installation_id));
  }
  storage::InsertWithNewId(txn, cls, columns, row, [](storage::Row&) {});
  return token;
}

bool DeleteSession(auth::Context& ctx, const std::string& session_id) {
  auto deleted = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<bool> {
    return unit.txn().Delete(SessionClass(*unit.schema()), session_id);
  });
  return deleted.ok() && deleted.value();
}

void DeleteUserSessions(app::Application& app, storage::WriteTransaction& txn, const std::string& user_id,
                        std::string_view keep) {
  auto snapshot = app.schema();
  const auto& cls = SessionClass(*snapshot);
  schema::Query q;
  q.where = schema::FieldEquals("user", user_id);
  q.limit = -1;
  std::vector<std::string> ids;
  txn.Find(cls, q, [&](const storage::Row& row) {
    ids.push_back(row.object_id);
    return true;
  });
  for (const auto& id : ids)
    if (keep.empty() || id != keep) txn.Delete(cls, id);
}

}  // namespace crmd::write
