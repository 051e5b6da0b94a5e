// Parse's anonymous users (issue 36), where the application's gate allows them
// (auth::Gates::anonymous_users, docs/PROFILES.md): a `_User` body carrying
// `authData: {"anonymous": {"id": "<the client's id>"}}` signs up, signs in or links that id, and
// `{"anonymous": null}` unlinks it. The id works as a password, so it is kept as its SHA-256 in
// `_User._auth_anonymous`, a bookkeeping field no read returns. No other provider is taken: crmd
// checks no third party's tokens.
#pragma once

#include <optional>
#include <string>

#include <boost/json/object.hpp>

#include "auth/context.hpp"
#include "util/result.hpp"

namespace crmd::write {

// The longest anonymous id taken: the SDK makes a 36-character UUID.
inline constexpr std::size_t kMaxAnonymousIdLength = 128;

// What a body's `authData` asks of the anonymous provider.
struct AnonymousAuth {
  std::optional<std::string> id_hash;  // nullopt: unlink
};

// Reads `body.authData`; nullopt when the body has none or names no provider. 252 `This
// authentication method is unsupported.` (Parse's code and text) for a provider other than
// `anonymous`, a null `authData`, or an anonymous entry without a string id of 1-128 characters.
Result<std::optional<AnonymousAuth>> ReadAnonymousAuth(const boost::json::object& body);

// Signs in the user whose anonymous id hashes to `id_hash`, as a write of `ctx`: their
// `last_success_login` and a new session. The answer is the user (no secrets) with `sessionToken`;
// nullopt when no user holds the id. 101 `User is not active.` for a deactivated user.
Result<std::optional<boost::json::object>> AnonymousLogIn(auth::Context& ctx, const std::string& id_hash);

}  // namespace crmd::write
