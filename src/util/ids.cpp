#include "util/ids.hpp"

#include <sodium.h>

#include <stdexcept>

#include "util/time.hpp"

namespace crmd::ids {

namespace {
constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

// Random bytes drawn from libsodium a block at a time and handed out from a per-thread buffer:
// each randombytes_buf() call may be a getrandom(2), and an id needs only a few bytes. What is
// not handed out yet stays in memory, as a generator's key would.
class RandomBytes {
 public:
  unsigned char Next() {
    if (next_ == sizeof block_) {
      randombytes_buf(block_, sizeof block_);
      next_ = 0;
    }
    const unsigned char b = block_[next_];
    block_[next_++] = 0;  // a byte handed out is not kept
    return b;
  }
  ~RandomBytes() { sodium_memzero(block_, sizeof block_); }

 private:
  unsigned char block_[1024];
  std::size_t next_ = sizeof block_;
};
}  // namespace

void Init() {
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
}

std::string RandomAlnum(std::size_t length) {
  // Uniform by rejection: bytes from 248 up would favour the alphabet's first letters.
  constexpr unsigned kLimit = 256 - 256 % kAlphabet.size();
  thread_local RandomBytes random;
  std::string out;
  out.reserve(length);
  while (out.size() < length) {
    const unsigned char b = random.Next();
    if (b < kLimit) out.push_back(kAlphabet[b % kAlphabet.size()]);
  }
  return out;
}

std::string NewObjectId() { return NewObjectId(timeutil::NowMillis()); }

std::string NewObjectId(std::int64_t millis) {
  // Digits, then upper case, then lower case: base 62 digits that sort as their values do.
  constexpr std::string_view kOrdered = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  constexpr std::size_t kClockDigits = 4;
  std::string out(kClockDigits, '0');
  auto t = static_cast<std::uint64_t>(millis);
  for (std::size_t i = kClockDigits; i-- > 0; t /= kOrdered.size()) out[i] = kOrdered[t % kOrdered.size()];
  return out + RandomAlnum(kObjectIdLength - kClockDigits);
}

std::string HashSecret(std::string_view secret) {
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256(digest, reinterpret_cast<const unsigned char*>(secret.data()), secret.size());
  char hex[crypto_hash_sha256_BYTES * 2 + 1];
  sodium_bin2hex(hex, sizeof hex, digest, sizeof digest);
  return std::string(hex, crypto_hash_sha256_BYTES * 2);
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

bool IsAlnumId(std::string_view id, std::size_t max_length) {
  if (id.empty() || id.size() > max_length) return false;
  for (char c : id) {
    bool alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum) return false;
  }
  return true;
}

}  // namespace crmd::ids
