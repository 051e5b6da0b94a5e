// Tokens that tie a form crmd serves to the browser it was served to (issue 31 #12: login CSRF).
// The page puts a random nonce in a cookie and FormToken(nonce) in a hidden field; a post is the
// form's own when its field is the token of the nonce its cookie holds. A page of another site can
// make a browser post, but it can neither read the field nor set the cookie, and a token is no use
// without the nonce it was made for.
//
// Tokens are an HMAC-SHA-256 under the application's OAuth secret (registry), so every server on
// a shared registry checks what another issued, and a rotation of the secret ends them. Not an
// error: FormTokenMatches is false (never throws) for an application without a secret.
// Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "auth/registry.hpp"

namespace crmd::auth {

// A nonce: 32 characters of [A-Za-z0-9], about 190 bits.
inline constexpr std::size_t kFormNonceLength = 32;

std::string NewFormNonce();
// Whether `text` has a nonce's shape (what a cookie may hold before it is used).
bool IsFormNonce(std::string_view text);
// The token of `nonce` for the form `purpose` of `app`.
std::string FormToken(const AppCredentials& app, std::string_view purpose, std::string_view nonce);
// Constant time in the token.
bool FormTokenMatches(const AppCredentials& app, std::string_view purpose, std::string_view nonce,
                      std::string_view token);

}  // namespace crmd::auth
