#include "auth/password_reset.hpp"

#include <sodium.h>

#include <filesystem>

#include "app/write_unit.hpp"
#include "auth/password.hpp"
#include "auth/sessions.hpp"
#include "mail/mailer.hpp"
#include "schema/system_classes.hpp"
#include "util/ids.hpp"
#include "util/log.hpp"
#include "util/time.hpp"

namespace crmd::auth {

void RequestPasswordReset(Context& ctx, std::string_view email) {
  if (email.empty()) return;
  app::Application& app = *ctx.app;
  unsigned char bytes[16];
  randombytes_buf(bytes, sizeof bytes);
  char token[33];
  sodium_bin2hex(token, sizeof token, bytes, sizeof bytes);
  const auto expires = timeutil::NowMillis() +
                       std::chrono::duration_cast<std::chrono::milliseconds>(kResetTokenLifetime).count();
  const auto& settings = app.settings();
  mail::Mail mail{std::string(email), "Reset your password",
                  "Someone asked to reset the password of your account.\r\n"
                  "To choose a new password, open this link within an hour:\r\n\r\n" +
                      settings.public_url + "/" + settings.prefix + "/apps/" + app.id() +
                      "/reset-password?token=" + token +
                      "\r\n\r\nIf it was not you, ignore this mail; your password stays as it is."};
  auto stored = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Status {
    const auto& cls = *unit.schema()->Find("_User");
    auto user = storage::FindFirst(unit.txn(), cls, "email", std::string(email));
    if (!user) return {};
    storage::Row update = *user;
    update.cells = {ids::HashSecret(token), timeutil::FormatIso(expires)};
    unit.txn().Update(cls, {schema::kResetTokenHash, schema::kResetTokenExpires}, update);
    // A link whose token never committed would only disappoint: the mail waits for the commit.
    unit.AfterCommit([&app, mail] {
      app.mailer().Send(mail);
      log::Info("password reset mailed", {{"app", app.id()}});
    });
    return {};
  });
  if (!stored.ok()) log::Error("password reset not stored", {{"app", app.id()}, {"error", stored.error().message}});
}

ResetOutcome ResetPassword(Context& ctx, std::string_view token, std::string_view new_password) {
  if (!MeetsPasswordPolicy(new_password)) return ResetOutcome::kWeakPassword;
  if (token.empty()) return ResetOutcome::kInvalidToken;
  app::Application& app = *ctx.app;
  auto snapshot = app.schema();
  const auto& cls = *snapshot->Find("_User");
  // A cheap read first, so unauthenticated posts with made-up tokens never reach the slow hash.
  const std::string token_hash = ids::HashSecret(token);
  auto pending = storage::FindFirst(app.db(), cls, schema::kResetTokenHash, token_hash);
  if (!pending || storage::TextOf(cls, *pending, schema::kResetTokenExpires) <= timeutil::NowIso())
    return ResetOutcome::kInvalidToken;
  const std::string hash = HashPassword(new_password);  // slow: before the write begins
  auto outcome = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<ResetOutcome> {
    storage::WriteTransaction& txn = unit.txn();
    auto user = storage::FindFirst(txn, cls, schema::kResetTokenHash, token_hash);
    if (!user || storage::TextOf(cls, *user, schema::kResetTokenExpires) <= timeutil::NowIso())
      return ResetOutcome::kInvalidToken;
    storage::Row update = *user;
    update.updated_at = timeutil::NowIso();
    update.cells = {hash, std::monostate{}, std::monostate{}, std::int64_t{0}, std::monostate{}};
    txn.Update(cls,
               {schema::kHashedPassword, schema::kResetTokenHash, schema::kResetTokenExpires,
                schema::kFailedLogins, schema::kLockoutUntil},
               update);
    DeleteUserSessions(app, txn, user->object_id);
    return ResetOutcome::kDone;
  });
  return outcome.ok() ? outcome.value() : ResetOutcome::kInvalidToken;
}

}  // namespace crmd::auth
