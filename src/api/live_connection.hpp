// One client of Parse's LiveQuery protocol over a WebSocket (docs/LIVEQUERY.md): reads its
// `connect`, `subscribe`, `update` and `unsubscribe` messages and keeps its subscriptions in the
// hub (api/live_hub.hpp), which sends their events.
//
// Called by the server on the connection's thread, one message at a time (api/socket.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/json/object.hpp>

#include "api/live_hub.hpp"
#include "api/socket.hpp"

namespace crmd::api {

class Router;

class LiveConnection final : public SocketHandler {
 public:
  // Subscriptions one connection may hold: a screen watches a handful of queries; a hundred
  // leaves room and keeps one socket from filling its application's share.
  static constexpr std::size_t kMaxSubscriptions = 100;

  LiveConnection(Router& router, LiveHub& hub, std::shared_ptr<SocketPeer> peer);

  void OnMessage(std::string_view text) override;
  void OnClose() override;
  bool Engaged() const override { return engaged_; }

 private:
  void Connect(const boost::json::object& message);
  void Subscribe(const boost::json::object& message, bool update);
  void Unsubscribe(const boost::json::object& message);
  void Fail(int code, std::string_view message, std::optional<std::int64_t> request_id = std::nullopt);

  Router& router_;
  LiveHub& hub_;
  std::shared_ptr<SocketPeer> peer_;
  std::string header_prefix_;  // `x-parse-`: the credential headers' names
  std::string client_id_;  // empty until connected
  std::string installation_id_;
  live::Client Client() const { return {client_id_, installation_id_}; }
  std::string app_id_;
  std::vector<std::pair<std::string, std::string>> headers_;  // the connect's credentials
  std::map<std::int64_t, std::shared_ptr<LiveSubscription>> subs_;
  bool engaged_ = false;  // a subscription was taken once
};

// The upgrade of the LiveQuery door: taken on `/` and on `/<prefix>` (the Parse SDK derives its
// WebSocket address from serverURL), refused on any other path.
SocketUpgrade LiveQueryUpgrade(Router& router, LiveHub& hub);

}  // namespace crmd::api
