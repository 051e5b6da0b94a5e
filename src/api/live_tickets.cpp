#include "api/live_tickets.hpp"

#include "util/ids.hpp"

namespace crmd::api {

std::string LiveTickets::Issue(Ticket ticket) {
  std::string id = ids::NewSecret();
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(mutex_);
  while (tickets_.size() >= kMaxOutstanding && !order_.empty()) {
    tickets_.erase(order_.front());
    order_.pop_front();
  }
  // Expired ones go as new ones come: the map holds no more than a lifetime's worth.
  while (!order_.empty()) {
    auto oldest = tickets_.find(order_.front());
    if (oldest != tickets_.end() && oldest->second.expires > now) break;
    if (oldest != tickets_.end()) tickets_.erase(oldest);
    order_.pop_front();
  }
  tickets_.emplace(id, Entry{std::move(ticket), now + kLifetime});
  order_.push_back(id);
  return id;
}

std::optional<LiveTickets::Ticket> LiveTickets::Take(const std::string& id) {
  std::lock_guard lock(mutex_);
  auto at = tickets_.find(id);
  if (at == tickets_.end()) return std::nullopt;
  Entry entry = std::move(at->second);
  tickets_.erase(at);  // single use, whatever comes of it
  if (entry.expires <= std::chrono::steady_clock::now()) return std::nullopt;
  return std::move(entry.ticket);
}

}  // namespace crmd::api
