#include "auth/password_gate.hpp"

#include <algorithm>

#include "util/errors.hpp"

namespace crmd::auth {

namespace {
// Addresses remembered at most: beyond, the ones whose budget is full again (they spent nothing
// lately) are forgotten, which changes nothing for them.
constexpr std::size_t kMaxBuckets = 100'000;

ApiError TooManyAttempts() { return ApiError{429, 155, "Too many attempts; try again later."}; }
}  // namespace

PasswordGate& PasswordGate::Instance() {
  static PasswordGate gate;
  return gate;
}

void PasswordGate::Configure(const Limits& limits) {
  auto& gate = Instance();
  std::lock_guard lock(gate.mutex_);
  gate.limits_ = limits;
  gate.limits_.slots = std::max(1, limits.slots);
}

PasswordGate::Permit::~Permit() {
  if (!gate_) return;
  {
    std::lock_guard lock(gate_->mutex_);
    --gate_->busy_;
  }
  gate_->freed_.notify_one();
}

bool PasswordGate::TakeToken(std::string_view ip) {
  const auto now = std::chrono::steady_clock::now();
  auto it = buckets_.find(std::string(ip));
  if (it == buckets_.end()) {
    if (buckets_.size() >= kMaxBuckets) {
      for (auto b = buckets_.begin(); b != buckets_.end();) {
        const double refilled = b->second.tokens + limits_.per_ip_per_second *
                                                       std::chrono::duration<double>(now - b->second.at).count();
        if (refilled >= limits_.per_ip_burst) b = buckets_.erase(b);
        else ++b;
      }
    }
    it = buckets_.emplace(std::string(ip), Bucket{limits_.per_ip_burst, now}).first;
  }
  Bucket& b = it->second;
  b.tokens = std::min(limits_.per_ip_burst,
                      b.tokens + limits_.per_ip_per_second * std::chrono::duration<double>(now - b.at).count());
  b.at = now;
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

Status PasswordGate::Spend(std::string_view ip) {
  std::lock_guard lock(mutex_);
  if (!TakeToken(ip)) return TooManyAttempts();
  return {};
}

Result<PasswordGate::Permit> PasswordGate::Enter(std::optional<std::string_view> ip) {
  std::unique_lock lock(mutex_);
  if (ip && !TakeToken(*ip)) return TooManyAttempts();
  if (!freed_.wait_for(lock, limits_.wait, [&] { return busy_ < limits_.slots; }))
    return errors::Unavailable("too many password checks at once, try again");
  ++busy_;
  return Permit(this);
}

}  // namespace crmd::auth
