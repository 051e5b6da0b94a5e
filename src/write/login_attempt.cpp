#include "write/login_attempt.hpp"

#include "app/application.hpp"
#include "app/write_unit.hpp"
#include "schema/encode.hpp"
#include "schema/system_classes.hpp"
#include "storage/database.hpp"
#include "util/time.hpp"
#include "write/session_writes.hpp"

namespace crmd::write {

namespace json = boost::json;

Result<json::object> RecordLogin(auth::Context& ctx, const auth::PasswordCheck& check, bool open_session) {
  app::Application& app = *ctx.app;
  auto snapshot = app.schema();
  const auto& cls = *snapshot->Find(schema::kUserClass);
  using Kind = auth::LoginDecision::Kind;

  // A refusal is answered after the unit commits its count, so it is a value here, not an error
  // that would roll the unit back.
  struct Attempt {
    std::optional<json::object> user;
    ApiError refusal;
  };
  auto attempt = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<Attempt> {
    storage::WriteTransaction& txn = unit.txn();
    auto fresh = storage::FindFirst(txn, cls, "username", check.username);
    const auth::LoginDecision decision =
        auth::JudgeLogin(cls, fresh ? &*fresh : nullptr, check, app.settings().lockout, timeutil::NowMillis());
    if (decision.kind == Kind::kRefuse) return Attempt{std::nullopt, decision.refusal};

    storage::Row update;
    update.object_id = fresh->object_id;
    update.updated_at = fresh->updated_at;
    update.acl = fresh->acl;
    update.nulls = fresh->nulls;
    std::vector<std::string> columns{schema::kFailedLogins, schema::kLockoutUntil};
    if (decision.kind == Kind::kCountFailure) {
      update.cells = {decision.failures,
                      decision.locked_until ? storage::Cell(*decision.locked_until) : storage::Cell(std::monostate{})};
      txn.Update(cls, columns, update);
      return Attempt{std::nullopt, decision.refusal};
    }
    columns.emplace_back("last_success_login");
    update.cells = {std::int64_t{0}, std::monostate{}, decision.at};
    if (check.rehash) {
      columns.emplace_back(schema::kHashedPassword);
      update.cells.emplace_back(*check.rehash);
    }
    txn.Update(cls, columns, update);
    auto stored = txn.Get(cls, fresh->object_id);
    json::object out = schema::EncodeRow(cls, *stored);
    // Spec §4.7 lists these in every login answer: null when the user has none.
    for (const char* field : {"email", "name", "createdBy", "updatedBy"})
      if (!out.contains(field)) out[field] = nullptr;
    out[schema::kFailedLogins] = decision.failures;
    if (open_session) out["sessionToken"] = CreateSession(app, txn, fresh->object_id, "login", ctx.installation_id);
    return Attempt{std::move(out), {}};
  });
  if (!attempt.ok()) return std::move(attempt).error();
  if (!attempt.value().user) return std::move(attempt.value().refusal);
  return std::move(*attempt.value().user);
}

}  // namespace crmd::write
