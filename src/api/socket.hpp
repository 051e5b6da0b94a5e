// A connection upgraded to WebSocket (RFC 6455), as the layers above the server see it: text
// messages in, text messages out. http/ implements the peer over Beast; api/ implements the
// handler (api/live_connection.hpp), so neither knows the other's types.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "api/message.hpp"

namespace crmd::api {

// The server's end of the connection. Thread-safe; it may outlive the connection (every call then
// does nothing).
class SocketPeer {
 public:
  virtual ~SocketPeer() = default;
  // Queues one text message. False when the connection is gone, or has just been dropped because
  // its queue of unsent bytes passed the server's cap (a consumer slower than its events): the
  // queue never grows without bound.
  virtual bool Send(std::string text) = 0;
  // Ends the connection with a close frame carrying `reason` (at most 123 bytes).
  virtual void Close(std::string_view reason) = 0;
};

// What reads the connection's messages. Called on the connection's network thread, one call at a
// time; OnClose once, last.
class SocketHandler {
 public:
  virtual ~SocketHandler() = default;
  virtual void OnMessage(std::string_view text) = 0;
  virtual void OnClose() = 0;
  // Whether the connection ever came to hold what it is for (a subscription): one that has not
  // within the server's bound is closed, so no caller holds sockets it never uses.
  virtual bool Engaged() const { return true; }
};

// Decides an upgrade from the request's head: a handler, or null when the path takes no upgrade
// (the request is then answered as any other).
using SocketUpgrade = std::function<std::shared_ptr<SocketHandler>(const Request& head, std::shared_ptr<SocketPeer> peer)>;

}  // namespace crmd::api
