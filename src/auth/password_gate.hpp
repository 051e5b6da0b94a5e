// The gate every password hash and verification passes (argon2id: tens of milliseconds of CPU and
// 64 MiB of memory each; bcrypt: tens of milliseconds): at most `slots` run at once in the process,
// so memory and cores stay bounded whatever arrives; and a caller without a key (anonymous logins,
// reset requests, sessions) spends a per-IP budget, refilled over time, so one address cannot keep
// the slots busy. Key callers (an import of users with the master key) wait for slots only.
//
// Thread-safe. One gate per process, configured at start (Configure) before any request.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "util/result.hpp"

namespace crmd::auth {

class PasswordGate {
 public:
  struct Limits {
    int slots = 2;                         // concurrent hashes (default: one per core)
    double per_ip_per_second = 5;          // budget refill per address
    double per_ip_burst = 300;             // budget an address starts with, at most
    std::chrono::milliseconds wait{10'000};  // longest wait for a slot before 503
  };

  // Held while a hash runs; releases its slot when destroyed.
  class Permit {
   public:
    explicit Permit(PasswordGate* gate) : gate_(gate) {}
    Permit(Permit&& other) noexcept : gate_(other.gate_) { other.gate_ = nullptr; }
    Permit& operator=(Permit&&) = delete;
    Permit(const Permit&) = delete;
    ~Permit();

   private:
    PasswordGate* gate_;
  };

  static PasswordGate& Instance();
  static void Configure(const Limits& limits);

  // `ip`: the caller's address when it holds no key (its budget is spent), nullopt for key callers.
  // 429 code 155 when the address spent its budget; 503 when no slot freed within Limits::wait.
  Result<Permit> Enter(std::optional<std::string_view> ip);
  // The per-IP budget alone, for anonymous work that hashes nothing but sends mail.
  Status Spend(std::string_view ip);

 private:
  struct Bucket {
    double tokens;
    std::chrono::steady_clock::time_point at;
  };
  bool TakeToken(std::string_view ip);  // mutex_ held

  std::mutex mutex_;
  std::condition_variable freed_;
  Limits limits_;
  int busy_ = 0;
  std::unordered_map<std::string, Bucket> buckets_;
};

}  // namespace crmd::auth
