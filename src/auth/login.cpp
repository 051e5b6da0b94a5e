#include "auth/login.hpp"

#include "app/application.hpp"
#include "app/write_unit.hpp"
#include "auth/password.hpp"
#include "auth/password_gate.hpp"
#include "auth/sessions.hpp"
#include "schema/encode.hpp"
#include "schema/system_classes.hpp"
#include "util/errors.hpp"
#include "util/time.hpp"

namespace crmd::auth {

namespace json = boost::json;

namespace {

struct UserRow {
  const schema::ClassSchema* cls;
  storage::Row row;

  storage::Cell Get(std::string_view field) const { return storage::CellOf(*cls, row, field); }
  std::string Text(std::string_view field) const { return storage::TextOf(*cls, row, field); }
  std::int64_t Number(std::string_view field) const {
    auto c = Get(field);
    if (const auto* i = std::get_if<std::int64_t>(&c)) return *i;
    if (const auto* d = std::get_if<double>(&c)) return static_cast<std::int64_t>(*d);
    return 0;
  }
};

template <typename Source>
std::optional<UserRow> FindByUsername(Source& source, const schema::ClassSchema& cls, std::string_view username) {
  auto row = storage::FindFirst(source, cls, "username", std::string(username));
  if (!row) return std::nullopt;
  return UserRow{&cls, std::move(*row)};
}

// Whether a lock recorded in the row is still running at `now_iso`.
bool Locked(const UserRow& user, const std::string& now_iso) {
  const std::string until = user.Text(schema::kLockoutUntil);
  return !until.empty() && until > now_iso;
}

}  // namespace

Result<json::object> LogIn(Context& ctx, std::string_view username, std::string_view password, bool open_session) {
  app::Application& app = *ctx.app;
  auto snapshot = app.schema();
  const auto& cls = *snapshot->Find("_User");
  const long lock_minutes = static_cast<long>(app.settings().lockout.count());

  // Slow work ahead (a hash, for a known user or not): through the gate, holding no store.
  app::BeforeSlowWork(ctx);
  CRMD_ASSIGN(auto permit, PasswordGate::Instance().Enter(
                               ctx.identity.IsMaster() ? std::nullopt : std::optional<std::string_view>(ctx.remote_ip)));
  auto user = username.empty() ? std::nullopt : FindByUsername(app.db(), cls, username);
  // The system user stands for keys; nobody signs in as it (it has no password either).
  if (user && schema::IsSystemUser(cls, user->row)) user.reset();
  if (!user) {
    SpendVerificationTime(password);  // the same work as a wrong password (SECURITY.md)
    return errors::InvalidLogin();
  }
  if (Locked(*user, timeutil::NowIso())) return errors::AccountLocked(lock_minutes);
  // Slow work before the write lock: verify, and upgrade an imported bcrypt hash.
  const std::string hash = user->Text(schema::kHashedPassword);
  bool ok = VerifyPassword(password, hash);  // an empty password spends the same work and fails
  if (password.empty()) ok = false;
  const std::optional<std::string> rehash =
      ok && NeedsRehash(hash) ? std::optional<std::string>(HashPassword(password)) : std::nullopt;
  { auto done = std::move(permit); }  // the slot goes back before the write

  // A failed attempt is a write too (the count, the lock): the unit commits it, and the refusal is
  // answered after, so its outcome is a value here, not an error that would roll it back.
  struct Attempt {
    std::optional<json::object> user;
    ApiError refusal;
  };
  auto refused = [](ApiError e) { return Attempt{std::nullopt, std::move(e)}; };
  auto attempt = app::RunWrite(ctx, [&](app::WriteUnit& unit) -> Result<Attempt> {
    storage::WriteTransaction& txn = unit.txn();
    // Re-read inside the transaction: concurrent failures must all count.
    auto fresh = FindByUsername(txn, cls, username);
    if (!fresh || fresh->row.object_id != user->row.object_id) return refused(errors::InvalidLogin());
    // The password changed (reset, admin) while this login verified the old one: it must neither
    // open a session nor write the old password back as a rehash.
    if (fresh->Text(schema::kHashedPassword) != hash) return refused(errors::InvalidLogin());
    const std::string now_iso = timeutil::NowIso();
    if (Locked(*fresh, now_iso)) return refused(errors::AccountLocked(lock_minutes));
    // A lock that ran out starts the count again.
    const std::int64_t failures = fresh->Text(schema::kLockoutUntil).empty() ? fresh->Number(schema::kFailedLogins) : 0;

    storage::Row update;
    update.object_id = fresh->row.object_id;
    update.updated_at = fresh->row.updated_at;
    update.acl = fresh->row.acl;
    update.nulls = fresh->row.nulls;
    std::vector<std::string> columns;
    if (!ok) {
      const std::int64_t count = failures + 1;
      if (count >= kMaxFailedLogins) {
        const auto until = timeutil::NowMillis() + std::chrono::duration_cast<std::chrono::milliseconds>(app.settings().lockout).count();
        columns = {schema::kFailedLogins, schema::kLockoutUntil};
        update.cells = {std::int64_t{0}, timeutil::FormatIso(until)};
      } else {
        columns = {schema::kFailedLogins, schema::kLockoutUntil};
        update.cells = {count, std::monostate{}};
      }
      txn.Update(cls, columns, update);
      return refused(count >= kMaxFailedLogins ? errors::AccountLocked(lock_minutes) : errors::InvalidLogin());
    }
    if (const auto* active = cls.FindField("active"); active) {
      auto cell = fresh->Get("active");
      if (const auto* flag = std::get_if<std::int64_t>(&cell); flag && *flag == 0) return refused(errors::UserInactive());
    }
    columns = {schema::kFailedLogins, schema::kLockoutUntil, "last_success_login"};
    update.cells = {std::int64_t{0}, std::monostate{}, now_iso};
    if (rehash) {
      columns.emplace_back(schema::kHashedPassword);
      update.cells.emplace_back(*rehash);
    }
    txn.Update(cls, columns, update);
    auto stored = txn.Get(cls, fresh->row.object_id);
    json::object out = schema::EncodeRow(cls, *stored);
    // Spec §4.7 lists these in every login answer: null when the user has none.
    for (const char* field : {"email", "name", "createdBy", "updatedBy"})
      if (!out.contains(field)) out[field] = nullptr;
    out[schema::kFailedLogins] = failures;
    if (open_session) out["sessionToken"] = CreateSession(app, txn, fresh->row.object_id, "login", ctx.installation_id);
    return Attempt{std::move(out), {}};
  });
  if (!attempt.ok()) return std::move(attempt).error();
  if (!attempt.value().user) return std::move(attempt.value().refusal);
  return std::move(*attempt.value().user);
}

}  // namespace crmd::auth
