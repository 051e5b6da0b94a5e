// Random identifiers and secrets, all from libsodium's CSPRNG.
// Thread-safe: libsodium's randombytes is safe to call from any thread after sodium_init().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace crmd::ids {

inline constexpr std::size_t kObjectIdLength = 10;
// Secrets (keys) are 40 alphanumerics: ~238 bits, so a fast hash is enough to store them.
inline constexpr std::size_t kSecretLength = 40;

// Must be called once before any other function here (main does it).
void Init();

std::string RandomAlnum(std::size_t length);
// An object id: 10 alphanumerics, the first four from the clock, the other six random.
//
// The clock part is the time in milliseconds, base 62 in ASCII order, so it wraps every ~4.1 hours
// (62^4 ms). Records created together then sit together in the objectId index, and a commit of
// many creates dirties a few shared index pages instead of one random page each, which the commit
// writes to the log, syncs and later copies back. Measured: creates +14%, p99 21 -> 14 ms.
// The random part has ~35.7 bits (Parse's ten random characters ~59.5): ids are for naming records,
// not secrets, and every read is checked against ACLs and class permissions. Ids can repeat only
// within the same millisecond of a cycle, so an insert under one draws again when the id is taken
// (storage::InsertWithNewId).
std::string NewObjectId();
// The same at a given time (milliseconds since the epoch): for tests.
std::string NewObjectId(std::int64_t millis);
// Drawn from libsodium directly, not from the per-thread block RandomAlnum takes ids from: no byte
// of a key waits in memory before it is made.
std::string NewSecret();

// Lower-case hex SHA-256 of `secret`: how keys are stored and compared.
std::string HashSecret(std::string_view secret);
// Constant-time equality of two equal-length strings (false when lengths differ).
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// [A-Za-z0-9]{1,max}: the only ids crmd accepts, so no id can pose as `role:X` or `*`.
bool IsAlnumId(std::string_view id, std::size_t max_length);

}  // namespace crmd::ids
