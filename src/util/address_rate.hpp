// A per-address rate: each address (the caller's IP, or any other key) holds a budget of
// `per_minute` calls that refills continuously at that rate, so a burst of up to `per_minute`
// passes and a steady flood passes at `per_minute` a minute. Used by the anonymous doors (form
// functions, anonymous uploads, the sign-in gate), where a key caller is exempt.
//
// Not an error: a rate of 0 means no limit (every call passes).
// Thread-safe. Memory is bounded: at most kMaxAddresses are remembered; beyond, those whose budget
// has refilled (they spent nothing lately) are forgotten, which changes nothing for them.
#pragma once

#include <chrono>
#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace crmd {

class AddressRate {
 public:
  // A distinct address table of at most this many entries (~100 bytes each).
  static constexpr std::size_t kMaxAddresses = 100'000;

  explicit AddressRate(int per_minute = 0) : per_minute_(per_minute) {}

  using Clock = std::chrono::steady_clock;

  // Spends one call of `address`'s budget at `now`: false when it has none left.
  bool Take(std::string_view address, Clock::time_point now = Clock::now());
  // Changes the rate (for new and remembered addresses alike).
  void SetPerMinute(int per_minute);
  int per_minute() const;

 private:
  struct Budget {
    double calls;
    Clock::time_point at;
  };
  double Refilled(const Budget& b, Clock::time_point now) const;  // mutex_ held

  mutable std::mutex mutex_;
  int per_minute_;
  std::unordered_map<std::string, Budget> budgets_;
};

}  // namespace crmd
