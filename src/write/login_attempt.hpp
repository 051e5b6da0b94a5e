// A login attempt's write (spec §3.1, §4.7), bookkeeping as DESIGN.md says (no `_Timeline`, no
// trigger): the failure count and the lock, or the success: the count cleared,
// `last_success_login`, a rehashed password and a session. auth/login decides which.
#pragma once

#include <boost/json.hpp>

#include "auth/context.hpp"
#include "auth/login.hpp"
#include "util/result.hpp"

namespace crmd::write {

// Records the attempt `check` prepared (auth::CheckPassword), in one write of `ctx`: the user's row
// is read again inside it, so that concurrent failures all count, auth::JudgeLogin decides on it,
// and the outcome is written. A failure's count commits before its refusal is answered.
//
// The answer: the user (no secrets), `_failed_login_count` (the failures before this success) and
// `sessionToken`. Without `open_session` (a sign-in that hands out something else, such as an
// OAuth code) no session is made and the answer has no `sessionToken`.
Result<boost::json::object> RecordLogin(auth::Context& ctx, const auth::PasswordCheck& check, bool open_session = true);

}  // namespace crmd::write
