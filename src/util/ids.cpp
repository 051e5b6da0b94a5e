#include "util/ids.hpp"

#include <pthread.h>
#include <sodium.h>

#include <atomic>
#include <stdexcept>

#include "util/time.hpp"

namespace crmd::ids {

namespace {
constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

// Forks so far: a child must not hand out the bytes its parent will (crmd does not fork today).
std::atomic<unsigned> forks{0};

// Random bytes drawn from libsodium a block at a time: each randombytes_buf() call may be a
// getrandom(2), and an id needs only a few bytes. What is not handed out yet stays in memory, as a
// generator's key would; bytes handed out are not kept.
template <std::size_t kBlock>
class RandomBytes {
 public:
  unsigned char Next() {
    const unsigned fork_count = forks.load(std::memory_order_relaxed);
    if (next_ == kBlock || fork_count != forks_) {
      randombytes_buf(block_, kBlock);
      next_ = 0;
      forks_ = fork_count;
    }
    const unsigned char b = block_[next_];
    block_[next_++] = 0;
    return b;
  }
  ~RandomBytes() {
    sodium_memzero(block_, kBlock);
    next_ = kBlock;  // a late call refills rather than hand out zeros
  }

 private:
  unsigned char block_[kBlock];
  std::size_t next_ = kBlock;
  unsigned forks_ = 0;
};

// `length` alphanumerics, uniform by rejection: bytes from 248 up would favour the first letters.
template <typename Source>
std::string Alnum(std::size_t length, Source& random) {
  constexpr unsigned kLimit = 256 - 256 % kAlphabet.size();
  std::string out;
  out.reserve(length);
  while (out.size() < length) {
    const unsigned char b = random.Next();
    if (b < kLimit) out.push_back(kAlphabet[b % kAlphabet.size()]);
  }
  return out;
}
}  // namespace

void Init() {
  if (sodium_init() < 0) throw std::runtime_error("libsodium failed to initialise");
  static const bool registered = pthread_atfork(nullptr, nullptr, [] { forks.fetch_add(1); }) == 0;
  if (!registered) throw std::runtime_error("pthread_atfork failed");
}

std::string RandomAlnum(std::size_t length) {
  thread_local RandomBytes<1024> random;  // per thread: no lock
  return Alnum(length, random);
}

std::string NewSecret() {
  RandomBytes<64> random;  // its own, zeroed when done: no byte of a key waits in memory
  return Alnum(kSecretLength, random);
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
