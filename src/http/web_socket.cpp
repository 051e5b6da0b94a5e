#include "http/web_socket.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/websocket.hpp>

#include <array>
#include <deque>
#include <mutex>
#include <string>

#include "util/log.hpp"

namespace crmd::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;

namespace {

constexpr auto kNoThrowWs = asio::as_tuple(asio::use_awaitable);

// The peer the handler holds. Send and Close may come from any thread; the socket itself is
// touched only by the session's coroutines, on the connection's thread: Send queues and wakes
// the writer there, through a timer that lives in the session and is let go when it ends.
class Peer final : public api::SocketPeer, public std::enable_shared_from_this<Peer> {
 public:
  // `events`: each message goes out as one server-sent event (`data: <text>` and a blank line).
  Peer(asio::any_io_executor executor, std::size_t send_limit, bool events = false)
      : executor_(executor), send_limit_(send_limit), events_(events) {}

  bool Send(std::string text) override {
    if (events_) text = "data: " + text + "\n\n";  // the messages are one-line JSON
    std::lock_guard lock(mutex_);
    if (ended_) return false;
    if (!queue_.empty() && queued_bytes_ + text.size() > send_limit_) {
      ended_ = true;
      dropped_ = true;
      WakeLocked();
      return false;
    }
    queued_bytes_ += text.size();
    queue_.push_back(std::move(text));
    WakeLocked();
    return true;
  }

  void Close(std::string_view reason) override {
    std::lock_guard lock(mutex_);
    if (ended_) return;
    ended_ = true;
    reason_ = std::string(reason.substr(0, 123));
    WakeLocked();
  }

  // The writer's side, on the connection's thread.
  struct Next {
    std::string text;
    bool end = false;
    bool dropped = false;
    std::string reason;
  };
  asio::awaitable<Next> Take(asio::steady_timer& wake) {
    for (;;) {
      {
        std::lock_guard lock(mutex_);
        if (!queue_.empty() && !dropped_) {
          Next next{std::move(queue_.front()), false, false, {}};
          queue_.pop_front();
          queued_bytes_ -= next.text.size();
          co_return next;
        }
        if (ended_) co_return Next{{}, true, dropped_, dropped_ ? "slow consumer: send queue full" : reason_};
        wake.expires_at(asio::steady_timer::time_point::max());
      }
      co_await wake.async_wait(kNoThrowWs);
    }
  }
  // The session's wake-up timer while it runs; null once it ended (or before it began).
  void Attach(asio::steady_timer* wake) {
    std::lock_guard lock(mutex_);
    wake_ = wake;
  }
  // The connection ended: sends from now on fail, and nothing touches the session.
  void End() {
    std::lock_guard lock(mutex_);
    ended_ = true;
    queue_.clear();
    queued_bytes_ = 0;
    wake_ = nullptr;
  }

 private:
  void WakeLocked() {
    if (!wake_) return;
    asio::post(executor_, [self = shared_from_this()] {
      std::lock_guard lock(self->mutex_);
      if (self->wake_) self->wake_->cancel();
    });
  }

  asio::any_io_executor executor_;
  const std::size_t send_limit_;
  const bool events_;
  std::mutex mutex_;
  asio::steady_timer* wake_ = nullptr;
  std::deque<std::string> queue_;
  std::size_t queued_bytes_ = 0;
  bool ended_ = false;
  bool dropped_ = false;
  std::string reason_;
};

using Stream = websocket::stream<beast::tcp_stream&>;

// Sends what the peer queues, then the close frame; ends when the peer ends.
asio::awaitable<void> WriteLoop(Stream& ws, std::shared_ptr<Peer> peer, asio::steady_timer& wake, bool& closing) {
  for (;;) {
    Peer::Next next = co_await peer->Take(wake);
    if (next.end) {
      if (closing) co_return;  // the client closed, or the read failed
      closing = true;
      const auto code = next.dropped ? websocket::close_code::policy_error : websocket::close_code::normal;
      co_await ws.async_close(websocket::close_reason(code, next.reason), kNoThrowWs);
      co_return;
    }
    ws.text(true);
    auto [ec, n] = co_await ws.async_write(asio::buffer(next.text), kNoThrowWs);
    if (ec) co_return;  // the reader fails too and ends the session
  }
}

// However a session ends (the client, an error, or the server stopping and destroying its frame),
// the handler hears of it once and the peer lets go of its timer.
struct SessionEnd {
  Peer& peer;
  api::SocketHandler& handler;
  const char* failure;  // the log line should OnClose throw
  ~SessionEnd() {
    peer.End();
    try {
      handler.OnClose();
    } catch (const std::exception& e) {
      log::Error(failure, {{"error", e.what()}});
    }
  }
};

// Shuts the socket both ways and cancels what waits on it: the session's read and its writer end.
void Hangup(beast::tcp_stream& stream) {
  beast::error_code ignored;
  stream.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
  stream.socket().cancel(ignored);
}

// The writer coroutine a session runs beside its reader. It uses the session's frame (the stream,
// the wake-up timer), so the session waits for it before it returns.
class SideWriter {
 public:
  explicit SideWriter(asio::any_io_executor executor) : done_(executor) {
    done_.expires_at(asio::steady_timer::time_point::max());
  }
  void Start(asio::awaitable<void> loop) {
    asio::co_spawn(done_.get_executor(), std::move(loop), [this](std::exception_ptr) {
      ended_ = true;
      done_.cancel();
    });
  }
  asio::awaitable<void> Finished() {
    while (!ended_) co_await done_.async_wait(kNoThrowWs);
  }

 private:
  asio::steady_timer done_;
  bool ended_ = false;
};

}  // namespace

asio::awaitable<bool> ServeWebSocket(beast::tcp_stream& stream, const beast::http::request<beast::http::string_body>& request,
                                     const api::Request& head, const api::SocketUpgrade& upgrade,
                                     const WebSocketLimits& limits) {
  auto executor = co_await asio::this_coro::executor;
  auto peer = std::make_shared<Peer>(executor, limits.send_limit);
  std::shared_ptr<api::SocketHandler> handler = upgrade(head, peer);
  if (!handler) co_return false;
  asio::steady_timer wake(executor);
  const SessionEnd ended{*peer, *handler, "closing a websocket failed"};
  peer->Attach(&wake);
  stream.expires_never();  // the websocket stream's own timeouts take over
  Stream ws(stream);
  websocket::stream_base::timeout timeout = websocket::stream_base::timeout::suggested(beast::role_type::server);
  timeout.idle_timeout = limits.idle_timeout;
  timeout.keep_alive_pings = true;
  ws.set_option(timeout);
  ws.read_message_max(limits.message_limit);
  auto [accept_ec] = co_await ws.async_accept(request, kNoThrowWs);
  if (accept_ec) co_return true;
  // The writer runs beside the reader; the session ends once both did.
  bool closing = false;
  SideWriter writer(executor);
  writer.Start(WriteLoop(ws, peer, wake, closing));
  // The bound on a socket that is never used: checked once, on this connection's thread.
  asio::steady_timer engage(executor);
  engage.expires_after(limits.idle_timeout);
  engage.async_wait([peer, handler](beast::error_code ec) {
    if (!ec && !handler->Engaged()) peer->Close("no subscription");
  });
  beast::flat_buffer buffer;
  for (;;) {
    auto [ec, n] = co_await ws.async_read(buffer, kNoThrowWs);
    if (ec) break;
    if (ws.got_text()) {
      const std::string_view text(static_cast<const char*>(buffer.data().data()), buffer.size());
      try {
        handler->OnMessage(text);
      } catch (const std::exception& e) {
        log::Error("a websocket message failed", {{"error", e.what()}});
      }
    }  // a binary frame carries nothing this protocol knows
    buffer.consume(buffer.size());
  }
  // The read ended (the client closed, an error, or our close completed): the writer stops too.
  engage.cancel();
  closing = true;
  peer->End();
  wake.cancel();
  Hangup(stream);
  co_await writer.Finished();
  co_return true;
}

namespace {

// Sends what the peer queues as server-sent events; ends when the peer ends (then the socket's
// sending side is shut, which ends the stream for the client).
asio::awaitable<void> EventWriteLoop(beast::tcp_stream& stream, std::shared_ptr<Peer> peer, asio::steady_timer& wake) {
  for (;;) {
    Peer::Next next = co_await peer->Take(wake);
    // Ended (the peer closed it, a refused subscription, a slow consumer) or the client gone: the
    // socket closes, which also ends the read that waits for the client to go away.
    if (next.end) {
      Hangup(stream);
      co_return;
    }
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(next.text), kNoThrowWs);
    if (ec) {
      beast::error_code ignored;
      stream.socket().cancel(ignored);
      co_return;
    }
  }
}

}  // namespace

asio::awaitable<void> ServeEventStream(beast::tcp_stream& stream, const api::Response& response, std::string_view extra_headers,
                                       const WebSocketLimits& limits) {
  auto executor = co_await asio::this_coro::executor;
  auto peer = std::make_shared<Peer>(executor, limits.send_limit, /*events=*/true);
  std::shared_ptr<api::SocketHandler> handler = response.event_stream(peer);
  if (!handler) co_return;
  asio::steady_timer wake(executor);
  const SessionEnd ended{*peer, *handler, "closing an event stream failed"};
  peer->Attach(&wake);
  stream.expires_never();  // a stream lasts as long as the client keeps it
  std::string head = "HTTP/1.1 200 OK\r\nServer: crmd\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n"
                     "X-Content-Type-Options: nosniff\r\nConnection: close\r\n";
  for (const auto& [name, value] : response.headers) head += name + ": " + value + "\r\n";
  head += extra_headers;
  head += "\r\n";
  auto [head_ec, head_n] = co_await asio::async_write(stream, asio::buffer(head), kNoThrowWs);
  if (head_ec) co_return;
  SideWriter writer(executor);
  writer.Start(EventWriteLoop(stream, peer, wake));
  // The client sends nothing more; a read ends when it goes away.
  std::array<char, 512> sink{};
  for (;;) {
    auto [ec, n] = co_await stream.socket().async_read_some(asio::buffer(sink), kNoThrowWs);
    if (ec) break;
  }
  peer->End();
  wake.cancel();
  Hangup(stream);
  co_await writer.Finished();
}

}  // namespace crmd::http
