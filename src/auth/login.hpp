// `POST /login` (spec §3.1, §4.7), the decisions: the password check, the lock after 8
// consecutive failures, the inactive check. The attempt's write (the count, the lock,
// `last_success_login`, a new session) is write/login_attempt's: callers check here, then record
// there.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "auth/context.hpp"
#include "schema/class_schema.hpp"
#include "storage/row.hpp"
#include "util/result.hpp"

namespace crmd::auth {

// Consecutive failures that lock a login (spec §3.1, §8).
inline constexpr int kMaxFailedLogins = 8;

// What the password check found, before any write.
struct PasswordCheck {
  std::string username;
  std::string user_id;
  // The hash that was verified: if the row holds another one by the time of the write (a reset, an
  // admin), the login neither opens a session nor writes the old password back as a rehash.
  std::string hash;
  bool matches = false;
  // The password hashed anew, when it matched a hash of an older scheme (an imported bcrypt).
  std::optional<std::string> rehash;
};

// The slow part of a login, through auth::PasswordGate and holding no store: finds the user of
// `username` and verifies `password`. A wrong password is not an error here: the write counts it.
// Errors: 101 for an unknown user (after the same work as a wrong password), a lock that is still
// running, and the gate's 429.
Result<PasswordCheck> CheckPassword(Context& ctx, std::string_view username, std::string_view password);

// What a login attempt comes to, judged on the user's row as the attempt's write reads it.
struct LoginDecision {
  enum class Kind { kRefuse, kCountFailure, kSucceed };
  Kind kind = Kind::kRefuse;
  // kRefuse and kCountFailure: the answer, given after the write commits.
  ApiError refusal;
  // kCountFailure: the count to store (0 when this failure starts a lock); kSucceed: the failures
  // before this success, which the answer reports.
  std::int64_t failures = 0;
  // kCountFailure: the end of the lock this failure starts; unset when it starts none.
  std::optional<std::string> locked_until;
  // The attempt's time (ISO): kSucceed stores it as `last_success_login`.
  std::string at;
};

// `fresh` is the row of `check.username` read inside the write (null: none has the name now);
// `lockout` how long a lock lasts; `now_ms` the attempt's time. Pure: no store, no clock.
LoginDecision JudgeLogin(const schema::ClassSchema& users, const storage::Row* fresh, const PasswordCheck& check,
                         std::chrono::minutes lockout, std::int64_t now_ms);

}  // namespace crmd::auth
