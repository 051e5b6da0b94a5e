#include "util/address_rate.hpp"

#include <algorithm>

namespace crmd {

double AddressRate::Refilled(const Budget& b, Clock::time_point now) const {
  const double minutes = std::chrono::duration<double, std::ratio<60>>(now - b.at).count();
  return std::min<double>(per_minute_, b.calls + minutes * per_minute_);
}

bool AddressRate::Take(std::string_view address, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (per_minute_ <= 0) return true;
  auto it = budgets_.find(std::string(address));
  if (it == budgets_.end()) {
    if (budgets_.size() >= kMaxAddresses)
      std::erase_if(budgets_, [&](const auto& kv) { return Refilled(kv.second, now) >= per_minute_; });
    if (budgets_.size() >= kMaxAddresses) return false;  // a flood from that many addresses at once
    it = budgets_.emplace(std::string(address), Budget{static_cast<double>(per_minute_), now}).first;
  }
  Budget& b = it->second;
  b.calls = Refilled(b, now);
  b.at = now;
  if (b.calls < 1) return false;
  b.calls -= 1;
  return true;
}

void AddressRate::SetPerMinute(int per_minute) {
  std::lock_guard lock(mutex_);
  per_minute_ = per_minute;
}

int AddressRate::per_minute() const {
  std::lock_guard lock(mutex_);
  return per_minute_;
}

}  // namespace crmd
