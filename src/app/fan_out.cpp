#include "app/fan_out.hpp"

namespace crmd::app {

bool FanOut::Take(std::string_view root, std::int64_t n, std::int64_t budget) {
  std::lock_guard lock(mutex_);
  auto it = chains_.find(std::string(root));
  if (it == chains_.end()) {
    if (chains_.size() >= kMaxChains) {
      chains_.erase(recent_.back());
      recent_.pop_back();
    }
    recent_.emplace_front(root);
    it = chains_.emplace(std::string(root), Chain{0, recent_.begin()}).first;
  } else {
    recent_.splice(recent_.begin(), recent_, it->second.recent);
  }
  if (it->second.fired + n > budget) return false;
  it->second.fired += n;
  return true;
}

}  // namespace crmd::app
