// `POST /login` (spec §3.1, §4.7): the lock after 8 consecutive failures, the inactive check,
// `last_success_login`, and a new session.
#pragma once

#include <boost/json.hpp>
#include <string_view>

#include "auth/context.hpp"
#include "util/result.hpp"

namespace crmd::auth {

// Consecutive failures that lock a login (spec §3.1, §8).
inline constexpr int kMaxFailedLogins = 8;

// The login response: the user (no secrets), `_failed_login_count` (failures before this
// success), `sessionToken`. Without `open_session` (a sign-in that hands out something else, such
// as an OAuth code) no session is made and the answer has no `sessionToken`.
Result<boost::json::object> LogIn(Context& ctx, std::string_view username, std::string_view password,
                                  bool open_session = true);


}  // namespace crmd::auth
