#include "write/reset_tokens.hpp"

#include "app/application.hpp"
#include "app/write_unit.hpp"
#include "schema/system_classes.hpp"
#include "storage/database.hpp"
#include "util/time.hpp"
#include "write/session_writes.hpp"

namespace crmd::write {

Result<bool> StoreResetToken(auth::Context& ctx, const std::string& email, const std::string& token_hash,
                             std::int64_t expires_ms) {
  bool known = false;
  auto stored = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Status {
    const auto& cls = *unit.schema()->Find(schema::kUserClass);
    auto user = storage::FindFirst(unit.txn(), cls, "email", email);
    if (!user) return {};
    storage::Row update = *user;
    update.cells = {token_hash, timeutil::FormatIso(expires_ms)};
    unit.txn().Update(cls, {schema::kResetTokenHash, schema::kResetTokenExpires}, update);
    known = true;
    return {};
  });
  if (!stored.ok()) return std::move(stored).error();
  return known;
}

auth::ResetOutcome ConsumeResetToken(auth::Context& ctx, const auth::PreparedReset& reset) {
  app::Application& app = *ctx.app;
  auto snapshot = app.schema();
  const auto& cls = *snapshot->Find(schema::kUserClass);
  auto outcome = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<auth::ResetOutcome> {
    storage::WriteTransaction& txn = unit.txn();
    auto user = storage::FindFirst(txn, cls, schema::kResetTokenHash, reset.token_hash);
    if (!user || !auth::ResetTokenLive(cls, *user, timeutil::NowIso())) return auth::ResetOutcome::kInvalidToken;
    storage::Row update = *user;
    update.updated_at = timeutil::NowIso();
    update.cells = {reset.password_hash, std::monostate{}, std::monostate{}, std::int64_t{0}, std::monostate{}};
    txn.Update(cls,
               {schema::kHashedPassword, schema::kResetTokenHash, schema::kResetTokenExpires, schema::kFailedLogins,
                schema::kLockoutUntil},
               update);
    DeleteUserSessions(app, txn, user->object_id);
    return auth::ResetOutcome::kDone;
  });
  return outcome.ok() ? outcome.value() : auth::ResetOutcome::kInvalidToken;
}

}  // namespace crmd::write
