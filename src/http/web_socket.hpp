// A connection upgraded to WebSocket: the one place Beast's websocket stream is used; and a stream
// of server-sent events (issue 36), which shares its send queue and bound. Included by server.cpp
// alone (Beast stays out of the rest of the build).
//
// Bounds (docs/LIVEQUERY.md): an incoming message is at most `message_limit` bytes (larger ones end
// the connection with close code 1009); the messages queued for the client hold at most
// `send_limit` bytes, past which the connection is dropped (close code 1008) rather than buffered
// without limit (one message larger than that is still sent when nothing else waits: a large
// record is no slow consumer). The connection stays counted in the server's open connections until it ends.
#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>

#include <chrono>
#include <cstddef>

#include "api/message.hpp"
#include "api/socket.hpp"

namespace crmd::http {

struct WebSocketLimits {
  std::size_t message_limit = 0;
  std::size_t send_limit = 0;
  // A connection that answers no ping for this long is closed (Beast pings at half of it); and a
  // WebSocket whose handler is not Engaged() this long after the upgrade (a client that never
  // connects or subscribes), as an idle HTTP connection would be.
  std::chrono::seconds idle_timeout{60};
};

// Offers the upgrade `head` asks for to `upgrade`; false when it takes none (nothing was read or
// written: the request is to be answered as any other). Otherwise accepts it and serves the
// connection until either side ends it, and returns true.
boost::asio::awaitable<bool> ServeWebSocket(boost::beast::tcp_stream& stream,
                                            const boost::beast::http::request<boost::beast::http::string_body>& request,
                                            const api::Request& head, const api::SocketUpgrade& upgrade,
                                            const WebSocketLimits& limits);

// Serves `response`'s stream of server-sent events (api::Response::event_stream): its head, then
// each message the handler's peer sends, under the same send bound, until either side ends it.
// `extra_headers` are whole header lines (CORS) to add to the head.
boost::asio::awaitable<void> ServeEventStream(boost::beast::tcp_stream& stream, const api::Response& response,
                                              std::string_view extra_headers, const WebSocketLimits& limits);

}  // namespace crmd::http
