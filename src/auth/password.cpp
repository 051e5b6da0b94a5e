#include "auth/password.hpp"

#include <crypt.h>
#include <sodium.h>

#include <memory>
#include <mutex>
#include <stdexcept>

#include "util/ids.hpp"

namespace crmd::auth {

namespace {

// libsodium's interactive limits: ~64 MiB and a few tens of milliseconds per hash on this class
// of machine; the recommended floor for online logins.
constexpr unsigned long long kOpsLimit = crypto_pwhash_OPSLIMIT_INTERACTIVE;
constexpr std::size_t kMemLimit = crypto_pwhash_MEMLIMIT_INTERACTIVE;

bool IsBcrypt(std::string_view hash) {
  return hash.starts_with("$2a$") || hash.starts_with("$2b$") || hash.starts_with("$2y$");
}

bool IsArgon2id(std::string_view hash) { return hash.starts_with("$argon2id$"); }

// A real hash of a random password, verified against on unknown-user logins.
const std::string& DummyHash() {
  static const std::string hash = HashPassword(ids::RandomAlnum(24));
  return hash;
}

}  // namespace

bool MeetsPasswordPolicy(std::string_view password) {
  bool digit = false, lower = false, upper = false;
  std::size_t characters = 0;
  for (unsigned char c : password) {
    digit = digit || (c >= '0' && c <= '9');
    lower = lower || (c >= 'a' && c <= 'z');
    upper = upper || (c >= 'A' && c <= 'Z');
    if ((c & 0xC0) != 0x80) ++characters;  // count UTF-8 code points, as a regex's `.` does
  }
  return digit && lower && upper && characters >= 8;
}

std::string HashPassword(std::string_view password) {
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str_alg(out, password.data(), password.size(), kOpsLimit, kMemLimit,
                            crypto_pwhash_ALG_ARGON2ID13) != 0)
    throw std::runtime_error("argon2id: out of memory");
  return out;
}

bool VerifyPassword(std::string_view password, const std::string& hash) {
  if (IsArgon2id(hash)) {
    return crypto_pwhash_str_verify(hash.c_str(), password.data(), password.size()) == 0;
  }
  if (IsBcrypt(hash)) {
    // bcrypt reads at most 72 bytes and stops at NUL; crypt_r needs a C string.
    std::string pw(password.substr(0, password.find('\0')));
    auto data = std::make_unique<crypt_data>();
    data->initialized = 0;
    const char* computed = crypt_r(pw.c_str(), hash.c_str(), data.get());
    if (!computed || computed[0] == '*') return false;
    return ids::ConstantTimeEquals(computed, hash);
  }
  return false;
}

bool NeedsRehash(const std::string& hash) { return !IsArgon2id(hash); }

void SpendVerificationTime(std::string_view password) { (void)VerifyPassword(password, DummyHash()); }

bool IsImportableHash(std::string_view hash) {
  return (IsBcrypt(hash) && hash.size() == 60) || (IsArgon2id(hash) && hash.size() < crypto_pwhash_STRBYTES);
}

}  // namespace crmd::auth
