#include "auth/login.hpp"

#include "app/application.hpp"
#include "app/write_unit.hpp"
#include "auth/password.hpp"
#include "auth/password_gate.hpp"
#include "schema/system_classes.hpp"
#include "storage/database.hpp"
#include "util/errors.hpp"
#include "util/time.hpp"

namespace crmd::auth {

namespace {

std::int64_t Number(const schema::ClassSchema& users, const storage::Row& row, std::string_view field) {
  auto c = storage::CellOf(users, row, field);
  if (const auto* i = std::get_if<std::int64_t>(&c)) return *i;
  if (const auto* d = std::get_if<double>(&c)) return static_cast<std::int64_t>(*d);
  return 0;
}

// Whether a lock recorded in the row is still running at `now_iso`.
bool Locked(const schema::ClassSchema& users, const storage::Row& row, const std::string& now_iso) {
  const std::string until = storage::TextOf(users, row, schema::kLockoutUntil);
  return !until.empty() && until > now_iso;
}

}  // namespace

Result<PasswordCheck> CheckPassword(Context& ctx, std::string_view username, std::string_view password) {
  app::Application& app = *ctx.app;
  auto snapshot = app.schema();
  const auto& cls = *snapshot->Find("_User");
  const long lock_minutes = static_cast<long>(app.settings().lockout.count());

  // Slow work ahead (a hash, for a known user or not): through the gate, holding no store.
  app::BeforeSlowWork(ctx);
  CRMD_ASSIGN(auto permit, PasswordGate::Instance().Enter(
                               ctx.identity.IsMaster() ? std::nullopt : std::optional<std::string_view>(ctx.remote_ip)));
  auto user = username.empty() ? std::nullopt : storage::FindFirst(app.db(), cls, "username", std::string(username));
  // The system user stands for keys; nobody signs in as it (it has no password either).
  if (user && schema::IsSystemUser(cls, *user)) user.reset();
  if (!user) {
    SpendVerificationTime(password);  // the same work as a wrong password (SECURITY.md)
    return errors::InvalidLogin();
  }
  if (Locked(cls, *user, timeutil::NowIso())) return errors::AccountLocked(lock_minutes);
  // Slow work before the write lock: verify, and upgrade an imported bcrypt hash.
  PasswordCheck check{std::string(username), user->object_id, storage::TextOf(cls, *user, schema::kHashedPassword),
                      false, std::nullopt};
  check.matches = VerifyPassword(password, check.hash);  // an empty password spends the same work and fails
  if (password.empty()) check.matches = false;
  if (check.matches && NeedsRehash(check.hash)) check.rehash = HashPassword(password);
  return check;  // the gate's slot goes back here, before the write
}

LoginDecision JudgeLogin(const schema::ClassSchema& users, const storage::Row* fresh, const PasswordCheck& check,
                         std::chrono::minutes lockout, std::int64_t now_ms) {
  const long lock_minutes = static_cast<long>(lockout.count());
  auto refuse = [](ApiError e) {
    LoginDecision d;
    d.refusal = std::move(e);
    return d;
  };
  if (!fresh || fresh->object_id != check.user_id) return refuse(errors::InvalidLogin());
  if (storage::TextOf(users, *fresh, schema::kHashedPassword) != check.hash) return refuse(errors::InvalidLogin());
  const std::string now_iso = timeutil::FormatIso(now_ms);
  if (Locked(users, *fresh, now_iso)) return refuse(errors::AccountLocked(lock_minutes));
  // A lock that ran out starts the count again.
  const std::int64_t failures =
      storage::TextOf(users, *fresh, schema::kLockoutUntil).empty() ? Number(users, *fresh, schema::kFailedLogins) : 0;
  LoginDecision d;
  d.at = now_iso;
  if (!check.matches) {
    d.kind = LoginDecision::Kind::kCountFailure;
    const std::int64_t count = failures + 1;
    if (count >= kMaxFailedLogins) {
      d.locked_until = timeutil::FormatIso(now_ms + std::chrono::duration_cast<std::chrono::milliseconds>(lockout).count());
      d.refusal = errors::AccountLocked(lock_minutes);
    } else {
      d.failures = count;
      d.refusal = errors::InvalidLogin();
    }
    return d;
  }
  if (users.FindField("active")) {
    auto cell = storage::CellOf(users, *fresh, "active");
    if (const auto* flag = std::get_if<std::int64_t>(&cell); flag && *flag == 0) return refuse(errors::UserInactive());
  }
  d.kind = LoginDecision::Kind::kSucceed;
  d.failures = failures;
  return d;
}

}  // namespace crmd::auth
