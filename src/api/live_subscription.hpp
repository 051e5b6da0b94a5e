// One LiveQuery subscription (docs/LIVEQUERY.md): what a client asked to watch, with the
// credentials every event is read under. Made by its connection (api/live_connection.hpp),
// served by the hub (api/live_hub.hpp).
//
// The fixed part is set before the hub sees it and never changes. `matched` belongs to the
// hub's delivery of the subscription's application: one thread at a time (the hub serves an
// application's work in order, on one thread while it runs).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "api/live_messages.hpp"
#include "api/socket.hpp"

namespace crmd::api {

struct LiveSubscription {
  std::shared_ptr<SocketPeer> peer;
  std::string client_id;
  std::string installation_id;  // as the connection gave it, told back in every message
  std::int64_t request_id = 0;
  std::string app_id;
  std::string class_name;
  // The connection's credential headers (names in lower case), the subscription's own session
  // token in place of the connection's when it brought one.
  std::vector<std::pair<std::string, std::string>> headers;
  std::string where = "{}";  // JSON text of an object
  std::string keys;          // `a,b` or empty: every field the subscriber may read
  std::vector<std::string> watch;  // an update is told only when it names one of these; empty: any

  live::Client client() const { return {client_id, installation_id}; }

  // Cleared when unsubscribed or replaced, or when its connection closed: work queued for it
  // then does nothing.
  std::atomic<bool> active{true};

  // The hub's: the records the subscriber was last told match (seeded when it subscribed), so an
  // update can be told apart as `enter`, `update` or `leave`.
  std::unordered_set<std::string> matched;
  // The seed stopped at its cap: a record not in `matched` may match all the same.
  bool seed_truncated = false;
};

}  // namespace crmd::api
