#include "write/sign_in.hpp"

#include "app/application.hpp"
#include "app/write_unit.hpp"
#include "schema/encode.hpp"
#include "schema/system_classes.hpp"
#include "util/errors.hpp"
#include "util/time.hpp"
#include "write/session_writes.hpp"

namespace crmd::write {

namespace json = boost::json;

Result<std::optional<json::object>> SignInUser(auth::Context& ctx, const FindUser& find) {
  app::Application& app = *ctx.app;
  return app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<std::optional<json::object>> {
    storage::WriteTransaction& txn = unit.txn();
    const auto snapshot = unit.schema();
    const schema::ClassSchema* users = snapshot->Find(schema::kUserClass);
    if (!users) return std::optional<json::object>();
    auto user = find(txn, *users);
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
