#include "auth/form_token.hpp"

#include <sodium.h>

#include "util/ids.hpp"

namespace crmd::auth {

std::string NewFormNonce() { return ids::RandomAlnum(kFormNonceLength); }

bool IsFormNonce(std::string_view text) {
  if (text.size() != kFormNonceLength) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) return false;
  return true;
}

std::string FormToken(const AppCredentials& app, std::string_view purpose, std::string_view nonce) {
  unsigned char key[crypto_auth_hmacsha256_KEYBYTES];
  crypto_hash_sha256(key, reinterpret_cast<const unsigned char*>(app.oauth_secret.data()), app.oauth_secret.size());
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, key, sizeof key);
  // Purpose, application and nonce, each ended by a newline none of them holds.
  for (std::string_view part : {std::string_view("form-token"), purpose, std::string_view(app.app_id), nonce}) {
    crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(part.data()), part.size());
    crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>("\n"), 1);
  }
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_final(&state, mac);
  sodium_memzero(key, sizeof key);
  char hex[sizeof mac * 2 + 1];
  sodium_bin2hex(hex, sizeof hex, mac, sizeof mac);
  return hex;
}

bool FormTokenMatches(const AppCredentials& app, std::string_view purpose, std::string_view nonce,
                      std::string_view token) {
  if (app.oauth_secret.empty() || !IsFormNonce(nonce)) return false;
  return ids::ConstantTimeEquals(FormToken(app, purpose, nonce), token);
}

}  // namespace crmd::auth
