// The HTTP/1.1 server (Boost.Beast): accept, parse with limits, keep-alive, timeouts, one access
// log line per request, graceful stop on SIGTERM/SIGINT. Knows nothing of records: each request
// is handed to `handler` as an api::Request.
//
// Beast and Asio stay inside server.cpp so the rest of the build never compiles them.
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "api/message.hpp"
#include "api/routes.hpp"
#include "api/socket.hpp"
#include "http/trusted_proxies.hpp"

namespace crmd::http {

struct ServerOptions {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;  // 0: any free port (the bound one is logged and returned)
  // Threads that run the network and the reads: reads are short and CPU-bound, so about as many
  // as there are cores (a few more cover a thread stalled in a page fault or a syscall).
  int threads = 2;
  // Threads that run writes (every method but GET, HEAD and OPTIONS). A writer waits for its
  // group's fsync without using a core; the more writers wait together, the fewer fsyncs (group
  // commit), and none of them holds up a read meanwhile.
  int write_threads = 16;
  // JSON bodies: a batch of 1,000 records of 20 fields is ~2 MiB; 8 MiB leaves room and still
  // refuses the 10 MB strings of a memory attack.
  std::size_t json_body_limit = 8u << 20;
  // What kind of body a request's head announces (api/routes.hpp): an upload gets
  // upload_body_limit and streams to disk, an MCP message mcp_body_limit, anything else
  // json_body_limit. Unset: every body is JSON. Called on a network thread with each head; must
  // be quick and must not throw.
  std::function<api::BodyKind(api::Method method, std::string_view target)> body_of;
  // The route family of a request, a fixed word (api/routes.hpp): the label of its metrics. Called
  // only when metrics are kept; unset: "other".
  std::function<std::string_view(api::Method method, std::string_view target)> family_of;
  // MCP messages: Upload-Public-File carries a file in base64, and spec §8 accepts 15 MB files
  // (20 MB of base64).
  std::size_t mcp_body_limit = 24u << 20;
  // Files: spec §4.8 sets no cap; an operator may, with --max-file-size.
  std::uint64_t upload_body_limit = std::numeric_limits<std::uint64_t>::max();
  // Where an upload (a POST body_of calls one) streams its body (api::Request::body_file) instead of
  // into memory; empty: bodies are read into memory like any other.
  std::string upload_dir;
  // Request line plus headers; browsers send under 8 KiB.
  std::size_t header_limit = 16u << 10;
  // A client has this long to send a whole request once it started (an upload: see below).
  std::chrono::seconds request_timeout{30};
  // Issue 31 #10: an upload (a POST body_of calls one) must bring at least this many bytes a
  // second, counted over each request_timeout from its first byte (http/upload_pace.hpp), or it is
  // answered 408 and closed; 0: no minimum (each read then gets request_timeout). 1 KiB/s (8 kbit/s)
  // is a fifth of what the weakest mobile data (GPRS, ~40 kbit/s) carries, so no person's upload is
  // cut, and a thousand times a trickle of a byte a second. At the connection cap, a connection
  // receiving a request slower than this makes room for a new one.
  std::uint64_t upload_min_rate = 1024;
  // ... and must end within this from its first byte. A 15 MB file (spec §8) over a weak 64 kbit/s
  // uplink takes ~31 minutes: an hour leaves it room twice over. Larger files over slower links
  // need a larger setting (--upload-timeout).
  std::chrono::seconds upload_timeout{3600};
  // An idle keep-alive connection is closed after this.
  std::chrono::seconds idle_timeout{60};
  // On SIGTERM, in-flight requests get this long to finish.
  std::chrono::seconds drain_timeout{15};
  // Called when drain_timeout passed with requests still in flight, to end what can be ended
  // (the server then waits for its threads: a read the read timeout allows to run for minutes
  // would hold the exit that long).
  std::function<void()> drain_expired;
  // Called (at most once a second) while accepting fails for want of descriptors, so that what
  // else holds them (idle database connections) can let some go.
  std::function<void()> short_of_descriptors;
  // Called with each request read whole, before anything routes it: rewrites a request a client
  // sent in another transport (api/client_transport.hpp) into the plain one, or answers it. May
  // read and write an upload's file; runs where the handler would. Must not throw.
  std::function<std::optional<api::Response>(api::Request&)> unwrap;
  // Open connections at most. At the cap, a new connection closes the one idle the longest, or is
  // closed itself when none is idle. Each holds a descriptor: keep it well under the process's
  // open-file limit, which stores need too.
  int max_connections = 10000;
  // Reverse proxies whose forwarding headers say who the client is (`--trusted-proxies`); none by
  // default: the peer is the client.
  TrustedProxies trusted_proxies;
  // A request that took this long or longer gets a `slow request` warning besides its access-log
  // line (`--slow-request-ms`); 0: none.
  std::chrono::milliseconds slow_request{1000};
  // Issue 36: a GET asking to upgrade to WebSocket is offered to this (null: none is taken).
  api::SocketUpgrade upgrade;
  // An incoming WebSocket message: LiveQuery's largest is a subscribe with its `where`, which
  // the query pipeline caps far below this anyway.
  std::size_t socket_message_limit = 64u << 10;
  // Unsent bytes queued for one WebSocket client before it is dropped as a slow consumer: a few
  // hundred events of ordinary records; 10,000 stalled clients hold 10 GiB at the very worst,
  // which --max-connections bounds.
  std::size_t socket_send_limit = 1u << 20;
  // Upgraded connections are never idle in the server's sense (they are pinged, never evicted to
  // make room): at most this share of max_connections may be WebSockets, so that a crowd of
  // subscribers never takes the slots requests need. Beyond, an upgrade answers 503.
  static constexpr int kSocketShareDivisor = 2;
  // Threads for reads that ran past their slice on a network thread (Response::run_off_loop).
  // They run at a lower priority than the network threads.
  int slow_read_threads = 2;
};

using Handler = std::function<api::Response(const api::Request&)>;
// Optional: takes a write to answer later without a writer thread (an application's write queue).
// Returns false when it does not take `request` (the server then runs Handler on a writer thread);
// otherwise it owns `request` and calls `done` exactly once, from any thread. Must not throw.
using QueueWrite = std::function<bool(api::Request& request, std::function<void(api::Response)>& done)>;

// Optional: an answer decided by a request's head alone (no route, no application, a refused
// credential), given before its body is read; nullopt: read the body and handle it. Runs on a
// network thread: must be quick, and must not throw.
using Early = std::function<std::optional<api::Response>(const api::Request& head)>;

class Server {
 public:
  Server(ServerOptions options, Handler handler, QueueWrite queue_write = {}, Early early = {});
  ~Server();

  // Binds, listens and takes SIGTERM/SIGINT; returns the bound port. Throws std::system_error on
  // failure (the address in use, no descriptor left), its message naming the address and the
  // reason; std::invalid_argument when the host is not an IP address.
  unsigned short Listen();
  // Serves until SIGTERM/SIGINT, then drains in-flight requests and returns.
  void Run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace crmd::http
