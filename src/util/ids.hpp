// Random identifiers and secrets, all from libsodium's CSPRNG.
// Thread-safe: libsodium's randombytes is safe to call from any thread after sodium_init().
#pragma once

#include <string>
#include <string_view>

namespace crmd::ids {

inline constexpr std::size_t kObjectIdLength = 10;
// Secrets (keys) are 40 alphanumerics: ~238 bits, so a fast hash is enough to store them.
inline constexpr std::size_t kSecretLength = 40;

// Must be called once before any other function here (main does it).
void Init();

std::string RandomAlnum(std::size_t length);
inline std::string NewObjectId() { return RandomAlnum(kObjectIdLength); }
inline std::string NewSecret() { return RandomAlnum(kSecretLength); }

// Lower-case hex SHA-256 of `secret`: how keys are stored and compared.
std::string HashSecret(std::string_view secret);
// Constant-time equality of two equal-length strings (false when lengths differ).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// [A-Za-z0-9]{1,max}: the only ids crmd accepts, so no id can pose as `role:X` or `*`.
bool IsAlnumId(std::string_view id, std::size_t max_length);

}  // namespace crmd::ids
