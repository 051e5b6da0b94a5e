#include "auth/password_reset.hpp"

#include <sodium.h>

#include <chrono>
#include <deque>
#include <filesystem>
#include <mutex>
#include <unordered_map>

#include "app/write_unit.hpp"
#include "auth/password.hpp"
#include "auth/password_gate.hpp"
#include "mail/mailer.hpp"
#include "schema/system_classes.hpp"
#include "util/ids.hpp"
#include "util/log.hpp"
#include "util/time.hpp"

namespace crmd::auth {

namespace {

// How many reset mails an address got lately, per application: a flood of requests for one
// address sends it a few mails, and replaces its pending link a few times, not once per request.
class ResetMailLimiter {
 public:
  // Whether one more mail may go to `address` now (and counts it when so).
  bool Allow(const std::string& app_id, std::string_view address, int per_hour) {
    std::string key = app_id + '\n';
    for (char c : address) key.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard lock(mutex_);
    if (sent_.size() > kMaxAddresses) Forget(now);
    auto& times = sent_[key];
    while (!times.empty() && now - times.front() > std::chrono::hours(1)) times.pop_front();
    if (static_cast<int>(times.size()) >= per_hour) return false;
    times.push_back(now);
    return true;
  }

 private:
  static constexpr std::size_t kMaxAddresses = 100'000;  // remembered at most; older ones forgotten
  void Forget(std::chrono::steady_clock::time_point now) {
    for (auto it = sent_.begin(); it != sent_.end();) {
      if (it->second.empty() || now - it->second.back() > std::chrono::hours(1)) it = sent_.erase(it);
      else ++it;
    }
  }
  std::mutex mutex_;
  std::unordered_map<std::string, std::deque<std::chrono::steady_clock::time_point>> sent_;
};

ResetMailLimiter& Limiter() {
  static ResetMailLimiter limiter;
  return limiter;
}

// Who a reset mail names and comes from (issue 34): the application's name and its sender.
struct ResetSender {
  std::string app_name;
  std::string from_name;
  std::string from_address;
};

// The work of a reset request, after its answer: the token stored, then the mail.
void SendResetLink(const std::shared_ptr<app::Application>& app, const std::string& email, StoreResetToken store,
                   const ResetSender& sender) {
  if (!Limiter().Allow(app->id(), email, app->settings().reset_mails_per_hour)) {
    log::Info("password reset not mailed: too many for the address lately", {{"app", app->id()}});
    return;
  }
  unsigned char bytes[16];
  randombytes_buf(bytes, sizeof bytes);
  char token[33];
  sodium_bin2hex(token, sizeof token, bytes, sizeof bytes);
  const auto expires = timeutil::NowMillis() +
                       std::chrono::duration_cast<std::chrono::milliseconds>(kResetTokenLifetime).count();
  Context ctx;
  ctx.app = app;
  ctx.identity = Identity::System();
  auto stored = store(ctx, email, ids::HashSecret(token), expires);
  if (!stored.ok()) {
    log::Error("password reset not stored", {{"app", app->id()}, {"error", stored.error().message}});
    return;
  }
  if (!stored.value()) return;
  const auto& settings = app->settings();
  // Durable now (the store committed): a link whose token never committed would only disappoint.
  mail::Mail mail{email, "Reset your password for " + sender.app_name,
                  "Someone asked to reset the password of your account in " + sender.app_name + ".\r\n"
                  "To choose a new password, open this link within an hour:\r\n\r\n" +
                      settings.public_url + "/" + settings.prefix + "/apps/" + app->id() + "/reset-password?token=" + token +
                      "\r\n\r\nIf it was not you, ignore this mail; your password stays as it is."};
  mail.from_name = sender.from_name;
  mail.from_address = sender.from_address;
  app->mailer().Send(mail);
  log::Info("password reset mailed", {{"app", app->id()}});
}

}  // namespace

Status RequestPasswordReset(Context& ctx, std::string_view email, StoreResetToken store) {
  // An anonymous endpoint that sends mail: it spends the caller's budget like a password check.
  if (!ctx.identity.IsMaster()) CRMD_TRY(PasswordGate::Instance().Spend(ctx.remote_ip));
  if (email.empty()) return {};
  // The answer may tell a known address from an unknown one neither by its body nor by its time:
  // the lookup, the token and the mail all come after it, on the after-commit thread.
  auto app = ctx.app;
  ResetSender sender{app->id(), {}, {}};
  if (ctx.credentials) {
    if (!ctx.credentials->name.empty()) sender.app_name = ctx.credentials->name;
    sender.from_name = ctx.credentials->gates.mail_from_name;
    sender.from_address = ctx.credentials->gates.mail_from;
  }
  app->after_commit().Post({[app, address = std::string(email), store, sender = std::move(sender)] {
    SendResetLink(app, address, store, sender);
  }});
  return {};
}

Result<std::variant<ResetOutcome, PreparedReset>> PrepareReset(Context& ctx, std::string_view token,
                                                               std::string_view new_password) {
  using Step = std::variant<ResetOutcome, PreparedReset>;
  if (ctx.identity.gates.password_policy && !MeetsPasswordPolicy(new_password)) return Step(ResetOutcome::kWeakPassword);
  if (token.empty()) return Step(ResetOutcome::kInvalidToken);
  app::Application& app = *ctx.app;
  auto snapshot = app.schema();
  const auto& cls = *snapshot->Find("_User");
  // A cheap read first, so unauthenticated posts with made-up tokens never reach the slow hash.
  PreparedReset reset{ids::HashSecret(token), {}};
  auto pending = storage::FindFirst(app.db(), cls, schema::kResetTokenHash, reset.token_hash);
  if (!pending || !ResetTokenLive(cls, *pending, timeutil::NowIso())) return Step(ResetOutcome::kInvalidToken);
  app::BeforeSlowWork(ctx);
  CRMD_ASSIGN(auto permit, PasswordGate::Instance().Enter(std::optional<std::string_view>(ctx.remote_ip)));
  reset.password_hash = HashPassword(new_password);  // slow: before the write begins
  return Step(std::move(reset));  // the gate's slot goes back here
}

bool ResetTokenLive(const schema::ClassSchema& users, const storage::Row& user, const std::string& now_iso) {
  return storage::TextOf(users, user, schema::kResetTokenExpires) > now_iso;
}

}  // namespace crmd::auth
