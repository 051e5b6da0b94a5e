// Single-use tickets for LiveQuery's server-sent events (issue 36, docs/LIVEQUERY.md): a browser's
// EventSource cannot send headers, and no key or session token may travel in a URL (it would land
// in logs, histories and Referers). A client takes a ticket with its usual credential headers
// (`POST /<prefix>/live/ticket`) and opens `GET /<prefix>/live?ticket=…` within kLifetime; the
// ticket then stands for those headers once.
//
// Thread-safe. Bounded: at most kMaxOutstanding tickets wait, the oldest dropped first.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace crmd::api {

class LiveTickets {
 public:
  // Long enough to open the stream just after taking the ticket, short enough that one read from
  // a log or a history is stale.
  static constexpr std::chrono::seconds kLifetime{30};
  // Tickets not used yet: a client takes one per stream it opens.
  static constexpr std::size_t kMaxOutstanding = 10'000;

  using Headers = std::vector<std::pair<std::string, std::string>>;
  struct Ticket {
    std::string app_id;
    Headers headers;  // the credential headers it stands for (names in lower case)
  };

  // A new ticket (a secret of 40 letters and digits from the CSPRNG) for `ticket`.
  std::string Issue(Ticket ticket);
  // The ticket's credentials, once: nullopt when unknown, used or expired.
  std::optional<Ticket> Take(const std::string& id);

 private:
  struct Entry {
    Ticket ticket;
    std::chrono::steady_clock::time_point expires;
  };
  std::mutex mutex_;
  std::unordered_map<std::string, Entry> tickets_;
  std::deque<std::string> order_;  // oldest first; may name used tickets
};

}  // namespace crmd::api
