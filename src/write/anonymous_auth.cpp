#include "write/anonymous_auth.hpp"

#include "app/application.hpp"
#include "app/write_unit.hpp"
#include "schema/encode.hpp"
#include "schema/system_classes.hpp"
#include "storage/database.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/time.hpp"
#include "write/session_writes.hpp"

namespace crmd::write {

namespace json = boost::json;

namespace {

// Parse's UNSUPPORTED_SERVICE.
constexpr int kUnsupportedService = 252;

ApiError Unsupported() { return ApiError{400, kUnsupportedService, "This authentication method is unsupported."}; }

}  // namespace

Result<std::optional<AnonymousAuth>> ReadAnonymousAuth(const json::object& body) {
  const auto* data = body.if_contains("authData");
  if (!data) return std::optional<AnonymousAuth>();
  if (!data->is_object()) return Unsupported();
  std::optional<AnonymousAuth> out;
  for (const auto& kv : data->get_object()) {
    if (kv.key() != "anonymous") return Unsupported();
    if (kv.value().is_null()) {
      out = AnonymousAuth{};
      continue;
    }
    const auto* id = kv.value().is_object() ? kv.value().get_object().if_contains("id") : nullptr;
    if (!id || !id->is_string() || id->get_string().empty() || id->get_string().size() > kMaxAnonymousIdLength)
      return Unsupported();
    out = AnonymousAuth{ids::HashSecret(id->get_string())};
  }
  return out;
}

Result<std::optional<json::object>> AnonymousLogIn(auth::Context& ctx, const std::string& id_hash) {
  app::Application& app = *ctx.app;
  return app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<std::optional<json::object>> {
    storage::WriteTransaction& txn = unit.txn();
    const auto snapshot = unit.schema();
    const schema::ClassSchema* users = snapshot->Find(schema::kUserClass);
    if (!users || !users->FindField(schema::kAnonymousIdHash)) return std::optional<json::object>();
    auto user = storage::FindFirst(txn, *users, schema::kAnonymousIdHash, id_hash);
    if (!user || schema::IsSystemUser(*users, *user)) return std::optional<json::object>();
    if (users->FindField("active")) {
      auto cell = storage::CellOf(*users, *user, "active");
      if (const auto* flag = std::get_if<std::int64_t>(&cell); flag && *flag == 0) return errors::UserInactive();
    }
    storage::Row update;
    update.object_id = user->object_id;
    update.updated_at = user->updated_at;
    update.acl = user->acl;
    update.nulls = user->nulls;
    update.cells = {timeutil::NowIso()};
    txn.Update(*users, {"last_success_login"}, update);
    auto stored = txn.Get(*users, user->object_id);
    json::object out = schema::EncodeRow(*users, *stored);
    out["sessionToken"] = CreateSession(app, txn, user->object_id, "login", ctx.installation_id);
    return std::optional<json::object>(std::move(out));
  });
}

}  // namespace crmd::write
