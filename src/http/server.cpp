#include "http/server.hpp"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/websocket/rfc6455.hpp>
#include <fmt/format.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <filesystem>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <vector>

#include "http/upload_pace.hpp"
#include "http/web_socket.hpp"
#include "metrics/metrics.hpp"
#include "util/errors.hpp"
#include "util/ids.hpp"
#include "util/log.hpp"
#include "util/redact.hpp"

namespace crmd::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
// How often a stopping server checks whether in-flight requests have finished.
constexpr std::chrono::milliseconds kDrainPoll{20};
// The nice value of slow-read threads (0 is the network threads'): they get a core when the
// network threads leave one.
constexpr int kSlowReadNice = 10;
// How long the accept loop waits after running out of descriptors before it tries again.
constexpr std::chrono::milliseconds kAcceptPause{50};
// Out of descriptors, a connection idle this long is closed to make room: one just opened is
// about to send its request.
constexpr std::chrono::milliseconds kIdleToEvict{1000};
// At the connection cap (or out of descriptors) with none idle, a connection that has been
// receiving its request this long at less than the minimum upload rate is closed to make room
// (issue 31 #10): a person's client sends its head in one packet and its body far faster.
constexpr std::chrono::milliseconds kSlowSenderGrace{2000};
// When an upload's pace or time runs out (http/upload_pace.hpp) while a read waits, the read gets
// this much longer: a client still sending is then told why (408) instead of being cut off; one
// that sends nothing is closed when it ends.
constexpr std::chrono::milliseconds kPaceAnswerGrace{1000};
// After refusing a request, how long input is drained so the client can read the refusal.
constexpr std::chrono::seconds kLingerTime{2};
constexpr std::size_t kLingerChunk = 64 * 1024;
// Beast reads max(512, free capacity) bytes at a time into the connection's buffer: without room
// made first, a ~1 KB request took two reads with a trip through epoll between them, and a 40 KB
// batch a dozen reads and as many reallocations. Every connection keeps kReadBuffer between
// requests (an idle connection holds no more); a body with a Content-Length gets room for up to
// kBodyReadAhead of it before it is read.
constexpr std::size_t kReadBuffer = 4096;
constexpr std::size_t kBodyReadAhead = 64 * 1024;
// What a file answer sends per write: large enough for few system calls, small enough that a
// thousand downloads at once hold 256 MiB at most.
constexpr std::size_t kFileChunk = 256 * 1024;

// What of a query string the access log keeps: enough to tell requests apart, not a `where` of
// kilobytes on every line.
constexpr std::size_t kLoggedQuery = 512;
// A client's X-Request-Id is kept (and echoed, and logged) when it is 1-128 of
// [A-Za-z0-9._:-]: a proxy's UUID or trace id fits, a header that could break a log line does not.
constexpr std::size_t kMaxRequestId = 128;

// A request id of crmd's own: 8 random letters and digits drawn once per process, then a counter
// in 8 hex digits. Unique within a process and across restarts in practice; not a secret, so no
// draw from the CSPRNG (a system call) per request.
std::string NewRequestId() {
  static const std::string prefix = ids::RandomAlnum(8);
  static std::atomic<std::uint32_t> next{0};
  // The counter's 8 hex digits written in place: a format and a concatenation were ~1% of a
  // get-by-id's instructions.
  std::uint32_t n = next.fetch_add(1, std::memory_order_relaxed);
  std::string id(prefix.size() + 8, '0');
  prefix.copy(id.data(), prefix.size());
  for (std::size_t i = id.size(); i > prefix.size(); n >>= 4) id[--i] = "0123456789abcdef"[n & 0xf];
  return id;
}

// The client's (or its proxy's) request id, or a new one.
std::string RequestIdOf(std::string_view sent) {
  if (sent.empty() || sent.size() > kMaxRequestId) return NewRequestId();
  for (char c : sent) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                    c == ':' || c == '-';
    if (!ok) return NewRequestId();
  }
  return std::string(sent);
}

api::Method ToMethod(bhttp::verb verb) {
  switch (verb) {
    case bhttp::verb::get: return api::Method::kGet;
    case bhttp::verb::post: return api::Method::kPost;
    case bhttp::verb::put: return api::Method::kPut;
    case bhttp::verb::delete_: return api::Method::kDelete;
    case bhttp::verb::options: return api::Method::kOptions;
    case bhttp::verb::head: return api::Method::kHead;
    default: return api::Method::kOther;
  }
}

template <typename Fields>
api::Request ToApiRequest(const bhttp::request_header<Fields>& in, std::string body, const std::string& remote_ip, bool https) {
  api::Request out;
  out.method = ToMethod(in.method());
  out.method_name = std::string(in.method_string());
  out.target = std::string(in.target());
  out.headers.reserve(8);
  for (const auto& field : in) {
    std::string name(field.name_string());
    for (auto& c : name)  // ASCII only (header names are tokens); no locale call per character
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  out.body = std::move(body);
  out.remote_ip = remote_ip;
  out.https = https;
  return out;
}

// A name of its own for each upload's temporary file.
std::string UploadFileName() {
  static std::atomic<std::uint64_t> next{0};
  return std::to_string(::getpid()) + "-" + std::to_string(next.fetch_add(1)) + ".part";
}

// The status line and headers of an answer, written by hand: Beast's response object allocates
// every header field and serialises them again per request, a sizeable part of a get-by-id. Values
// come from crmd or from header values Beast already parsed, so none holds a line break.
void WriteHead(const api::Response& in, unsigned version, bool keep_alive, std::size_t content_length,
               std::string& out) {
  out += version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
  out += std::to_string(in.status);
  out += ' ';
  out += bhttp::obsolete_reason(static_cast<bhttp::status>(in.status));
  out += "\r\nServer: crmd\r\nContent-Type: ";
  out += in.content_type;
  out += "\r\nX-Content-Type-Options: nosniff\r\n";
  for (const auto& [name, value] : in.headers) {
    out += name;
    out += ": ";
    out += value;
    out += "\r\n";
  }
  // As Beast's keep_alive(): HTTP/1.1 stays open unless told, HTTP/1.0 closes unless told.
  if (version >= 11 && !keep_alive) out += "Connection: close\r\n";
  if (version < 11 && keep_alive) out += "Connection: keep-alive\r\n";
  const bool bodiless = (in.status >= 100 && in.status < 200) || in.status == 204 || in.status == 304;
  if (!bodiless) {
    out += "Content-Length: ";
    out += std::to_string(content_length);
    out += "\r\n";
  }
  out += "\r\n";
}

// A refusal for the codings of a request body crmd does not decode: any Transfer-Encoding but
// `chunked` alone, any Content-Encoding but `identity`.
template <typename Header>
std::optional<ApiError> UnsupportedCoding(const Header& header) {
  auto trimmed = [](std::string_view v) {
    while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
    while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
    return v;
  };
  const std::string_view te = trimmed(header[bhttp::field::transfer_encoding]);
  if (!te.empty() && !beast::iequals(te, "chunked"))
    return ApiError{400, errors::kInvalidJson, "Unsupported Transfer-Encoding: " + std::string(te) + "."};
  const std::string_view ce = trimmed(header[bhttp::field::content_encoding]);
  if (!ce.empty() && !beast::iequals(ce, "identity"))
    return ApiError{415, errors::kInvalidJson, "Unsupported Content-Encoding: " + std::string(ce) + "."};
  return std::nullopt;
}

// A request as the head alone says it, for Early: no body yet.
template <typename Header>
api::Request HeadOnly(const Header& header, const std::string& remote_ip, bool https) {
  api::Request out;
  out.method = ToMethod(header.method());
  out.method_name = std::string(header.method_string());
  out.target = std::string(header.target());
  for (const auto& field : header) {
    std::string name(field.name_string());
    for (auto& c : name)
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    out.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  out.remote_ip = remote_ip;
  out.https = https;
  return out;
}

// The answer to a body over its route's limit: an upload's in the file routes' form (spec §7).
ApiError TooLarge(bool upload, std::uint64_t limit) {
  return upload ? errors::FileTooLarge(limit) : errors::BodyTooLarge(static_cast<std::size_t>(limit));
}

// One connection. Shared with the idle list, which may close it while it waits for its next
// request, or while it sends one too slowly, to make room for a new connection when the server is
// at max_connections.
struct Conn {
  explicit Conn(tcp::socket socket, std::atomic<int>& open) : stream(std::move(socket)), open(open) {
    metrics::Set(metrics::Gauge::kOpenConnections, ++open);
  }
  ~Conn() { metrics::Set(metrics::Gauge::kOpenConnections, --open); }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;
  beast::tcp_stream stream;
  std::atomic<int>& open;
  // Guarded by the idle list's mutex.
  std::list<std::weak_ptr<Conn>>::iterator idle_at;
  std::chrono::steady_clock::time_point idle_since;
  bool idle = false;
  bool answering = false;  // left the idle list for a request
  bool evicted = false;
  // Receiving a request (its head, or an upload's body), since when, and the body bytes so far.
  std::list<std::weak_ptr<Conn>>::iterator receiving_at;
  std::chrono::steady_clock::time_point receiving_since;
  bool receiving = false;
  std::atomic<std::uint64_t> received{0};  // written by the session, read by the accept loop
};

// Connections waiting idle between requests, oldest first, and connections receiving a request.
// Thread-safe.
class IdleConnections {
 public:
  void Enter(const std::shared_ptr<Conn>& c) {
    std::lock_guard lock(mutex_);
    c->idle_at = list_.insert(list_.end(), c);
    c->idle_since = std::chrono::steady_clock::now();
    c->idle = true;
    c->answering = false;
  }
  // True when the connection was chosen to be closed while it waited: the session ends.
  bool Leave(const std::shared_ptr<Conn>& c) {
    std::lock_guard lock(mutex_);
    if (c->idle) {
      list_.erase(c->idle_at);
      c->idle = false;
    }
    c->answering = true;
    return c->evicted;
  }
  // Closes the connection idle the longest (on its own thread), if it has been idle `at_least`;
  // false when none is.
  bool EvictOldest(std::chrono::milliseconds at_least = {}) {
    std::shared_ptr<Conn> victim;
    const auto idle_before = std::chrono::steady_clock::now() - at_least;
    {
      std::lock_guard lock(mutex_);
      while (!list_.empty() && !victim) {
        victim = list_.front().lock();
        if (victim && victim->idle_since > idle_before) return false;
        list_.pop_front();
        if (victim) {
          victim->idle = false;
          victim->evicted = true;
        }
      }
    }
    if (!victim) return false;
    asio::post(victim->stream.get_executor(), [this, victim] {
      std::lock_guard lock(mutex_);
      if (victim->answering) return;  // its request arrived first: the session closes after it
      beast::error_code ignored;
      victim->stream.socket().cancel(ignored);
    });
    return true;
  }

  // The connection receives a request from now on: its head, and an upload's body
  // (`Conn::received` counts that body's bytes).
  void StartReceiving(const std::shared_ptr<Conn>& c) {
    std::lock_guard lock(mutex_);
    c->received = 0;
    c->receiving_since = std::chrono::steady_clock::now();
    if (!c->receiving) c->receiving_at = receiving_.insert(receiving_.end(), c);
    c->receiving = true;
  }
  void StopReceiving(const std::shared_ptr<Conn>& c) {
    std::lock_guard lock(mutex_);
    if (!c->receiving) return;
    receiving_.erase(c->receiving_at);
    c->receiving = false;
  }
  // Closes the connection that receives its request the slowest, if it has been at it `grace` at
  // less than `min_rate` bytes a second (issue 31 #10: trickling uploads and heads do not hold
  // the slots new clients need); false when none does, or min_rate is 0.
  bool EvictSlowSender(std::uint64_t min_rate, std::chrono::milliseconds grace) {
    if (min_rate == 0) return false;
    std::shared_ptr<Conn> victim;
    double slowest = 0;
    const auto now = std::chrono::steady_clock::now();
    {
      std::lock_guard lock(mutex_);
      for (const auto& weak : receiving_) {
        auto c = weak.lock();
        if (!c || c->evicted) continue;
        const auto elapsed = std::chrono::duration<double>(now - c->receiving_since);
        if (elapsed < grace) continue;
        const double rate = static_cast<double>(c->received.load()) / elapsed.count();
        if (rate >= static_cast<double>(min_rate) || (victim && rate >= slowest)) continue;
        victim = std::move(c);
        slowest = rate;
      }
      if (!victim) return false;
      victim->evicted = true;
    }
    asio::post(victim->stream.get_executor(), [this, victim] {
      std::lock_guard lock(mutex_);
      if (!victim->receiving) return;  // its request arrived whole meanwhile: closed after its answer
      beast::error_code ignored;
      victim->stream.socket().cancel(ignored);
    });
    return true;
  }

 private:
  std::mutex mutex_;
  std::list<std::weak_ptr<Conn>> list_;
  std::list<std::weak_ptr<Conn>> receiving_;
};

}  // namespace

struct Server::Impl {
  ServerOptions options;
  Handler handler;
  QueueWrite queue_write;
  Early early;
  std::atomic<int> open_connections{0};
  std::atomic<int> open_sockets{0};  // upgraded to WebSocket
  IdleConnections idle;
  // Declared before the contexts: sessions destroyed with a context still count themselves out.
  std::atomic<int> in_flight{0};
  std::atomic<bool> stopping{false};
  // One io_context per network thread, each run by that thread alone: connections are dealt out
  // round-robin and stay on theirs, so no two threads contend for one scheduler's lock (with one
  // context shared by all threads, a third and fourth thread made get-by-id slower, not faster).
  // The first runs only the acceptor, the signals and the drain, so a long request never holds up
  // new connections or a SIGTERM.
  std::deque<asio::io_context> contexts;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> keep_running;
  asio::io_context& ioc;
  std::size_t next_context = 0;  // touched only by Accept()
  asio::thread_pool writers;
  asio::thread_pool slow_reads;
  // The acceptor is used by Accept() and closed by the signal handler: both run on this strand.
  asio::strand<asio::io_context::executor_type> acceptor_strand{ioc.get_executor()};
  tcp::acceptor acceptor{acceptor_strand};
  std::optional<asio::signal_set> signals;  // made by Listen()

  Impl(ServerOptions o, Handler h, QueueWrite q, Early e)
      : options(std::move(o)),
        handler(std::move(h)),
        queue_write(std::move(q)),
        early(std::move(e)),
        contexts(MakeContexts(std::max(1, options.threads) + 1)),
        ioc(contexts.front()),
        writers(static_cast<std::size_t>(options.write_threads)),
        slow_reads(static_cast<std::size_t>(std::max(1, options.slow_read_threads))) {
    for (auto& context : contexts) {
      keep_running.push_back(asio::make_work_guard(context));
      // Each context's reactor (an epoll, an eventfd, a timerfd) is made now, not by its first
      // accepted socket: out of descriptors then, it would throw out of the accept loop.
      asio::steady_timer make_reactor(context);
    }
  }

  static std::deque<asio::io_context> MakeContexts(int count) {
    std::deque<asio::io_context> out;
    for (int i = 0; i < count; ++i) out.emplace_back(1);  // hint: one thread runs it
    return out;
  }

  // Offers the request to queue_write; completes with its answer, back on the session's own
  // context, or with nullopt when queue_write did not take it.
  template <typename Token>
  auto AsyncQueueWrite(api::Request& request, Token&& token) {
    return asio::async_initiate<Token, void(std::optional<api::Response>)>(
        [this, &request](auto handler) {
          auto executor = asio::get_associated_executor(handler);
          // std::function must be copyable; the completion handler is move-only.
          auto shared = std::make_shared<decltype(handler)>(std::move(handler));
          std::function<void(api::Response)> done = [shared, executor](api::Response response) {
            asio::post(executor, [shared, response = std::move(response)]() mutable {
              (*shared)(std::optional<api::Response>(std::move(response)));
            });
          };
          bool taken = false;
          try {
            taken = queue_write(request, done);
          } catch (const std::exception& e) {
            // queue_write does not throw once it took the request; an exception before that
            // would otherwise end this thread.
            log::Error("queueing a write failed", {{"error", e.what()}});
          }
          if (!taken)
            asio::post(executor, [shared]() mutable { (*shared)(std::optional<api::Response>()); });
        },
        token);
  }

  // An upgraded connection or an event stream, counted among the sockets for as long as it lasts.
  // A socket held open for minutes is no request in flight: a SIGTERM does not wait for it (it
  // ends with the server), though it stays counted in the open connections. Either count is put
  // back however the socket ends.
  struct HeldSocket {
    HeldSocket(std::atomic<int>& sockets, std::atomic<int>& in_flight) : sockets(sockets), in_flight(in_flight) {
      ++sockets;
      --in_flight;
    }
    ~HeldSocket() {
      --sockets;
      ++in_flight;
    }
    HeldSocket(const HeldSocket&) = delete;
    HeldSocket& operator=(const HeldSocket&) = delete;
    std::atomic<int>& sockets;
    std::atomic<int>& in_flight;
  };
  WebSocketLimits SocketLimits() const {
    return WebSocketLimits{options.socket_message_limit, options.socket_send_limit, options.idle_timeout};
  }
  bool SocketsFull() const { return open_sockets.load() >= options.max_connections / ServerOptions::kSocketShareDivisor; }

  static bool RunsOnWriters(api::Method method) {
    return method != api::Method::kGet && method != api::Method::kHead && method != api::Method::kOptions;
  }

  // What the access log says of one request.
  struct LogFacts {
    std::string method;
    std::string path;
    std::string remote_ip;
    std::string query;       // redacted (util/redact.hpp), at most kLoggedQuery bytes
    std::string request_id;  // the client's X-Request-Id when usable, else one made here
    bool https = false;      // a trusted proxy says the client used HTTPS
    std::string_view family = "other";  // the route family, when metrics are kept (family_of)
  };

  // Returns the request's time in milliseconds.
  double LogRequest(const LogFacts& facts, const api::Response& response, int status, std::size_t bytes,
                    std::chrono::steady_clock::time_point start) {
    const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    const double ms = static_cast<double>(micros) / 1000.0;
    log::Request({facts.method, facts.path, facts.query, status, bytes, ms, facts.remote_ip, response.app_id, facts.request_id});
    metrics::CountRequest(facts.family, status, ms / 1000.0, response.app_id);
    if (options.slow_request.count() > 0 && ms >= static_cast<double>(options.slow_request.count()))
      log::Warn("slow request", {{"method", facts.method}, {"path", facts.path}, {"status", status}, {"ms", ms},
                                 {"app", response.app_id}, {"requestId", facts.request_id}});
    return ms;
  }

  // Answers a request the handler never saw (a limit, a malformed message) and closes.
  // `origin` is echoed as on every other response, so browsers can read the error. The close
  // lingers (RFC 9112 §9.6): input is drained for a moment so the client reads the answer instead
  // of a reset while it is still sending the body we refused.
  asio::awaitable<void> WriteError(beast::tcp_stream& stream, const ApiError& error,
                                   std::string origin, const LogFacts& facts,
                                   std::chrono::steady_clock::time_point start) {
    co_await WriteAndClose(stream, api::ErrorResponse(error), std::move(origin), facts, start);
  }

  // The same for an answer the application layer gave from the head alone (Early), whose body is
  // then never read.
  asio::awaitable<void> WriteAndClose(beast::tcp_stream& stream, api::Response response, std::string origin,
                                      const LogFacts& facts, std::chrono::steady_clock::time_point start) {
    const int status = response.status;
    if (!origin.empty() && origin.find_first_of("\r\n") == std::string::npos &&
        std::none_of(response.headers.begin(), response.headers.end(),
                     [](const auto& h) { return h.first == "Access-Control-Allow-Origin"; })) {
      response.headers.emplace_back("Access-Control-Allow-Origin", std::move(origin));
      response.headers.emplace_back("Vary", "Origin");
    }
    const std::size_t bytes = response.body.size();
    if (!facts.request_id.empty()) response.headers.emplace_back("X-Request-Id", facts.request_id);
    std::string head;
    WriteHead(response, 11, /*keep_alive=*/false, bytes, head);
    const std::array<asio::const_buffer, 2> buffers{asio::buffer(head), asio::buffer(response.body)};
    stream.expires_after(options.request_timeout);
    co_await asio::async_write(stream, buffers, kNoThrow);
    const double ms = LogRequest(facts, response, status, bytes, start);
    if (response.sent) response.sent(status, ms);
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
    std::vector<char> sink(kLingerChunk);
    std::size_t drained = 0;
    stream.expires_after(kLingerTime);
    while (drained < options.upload_body_limit) {
      auto [ec, n] = co_await stream.async_read_some(asio::buffer(sink), kNoThrow);
      if (ec) break;
      drained += n;
    }
  }

  // Slow reads yield the cores to the network threads: once per slow-read thread, a nicer value.
  static void LowerPriority() {
    thread_local bool lowered = false;
    if (lowered) return;
    lowered = true;
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kSlowReadNice);
  }

  // The body a head announces (ServerOptions::body_of), JSON when nobody says.
  template <typename Header>
  api::BodyKind BodyOf(const Header& header) const {
    return options.body_of ? options.body_of(ToMethod(header.method()), header.target()) : api::BodyKind::kJson;
  }

  static bool IsQuietDisconnect(const beast::error_code& ec) {
    return ec == bhttp::error::end_of_stream || ec == beast::error::timeout ||
           ec == asio::error::eof || ec == asio::error::connection_reset ||
           ec == asio::error::operation_aborted;
  }

  // Writes an answer on a connection that stays usable: false when the connection is to be closed
  // (the write failed, or the request was its last).
  asio::awaitable<bool> WriteAnswer(beast::tcp_stream& stream, beast::flat_buffer& buffer, api::Response& api_response,
                                    unsigned version, bool head, bool keep_alive, const LogFacts& facts,
                                    std::chrono::steady_clock::time_point start) {
    const int status = api_response.status;
    const bool from_file = !api_response.file.empty();
    const std::size_t bytes = from_file ? api_response.file_length : api_response.body.size();
    if (!facts.request_id.empty()) api_response.headers.emplace_back("X-Request-Id", facts.request_id);
    std::string response_head;
    response_head.reserve(256);
    WriteHead(api_response, version, keep_alive, bytes, response_head);
    const std::array<asio::const_buffer, 2> response{
        asio::buffer(response_head), head || from_file ? asio::const_buffer() : asio::buffer(api_response.body)};
    // The handler may have waited (a commit group, an exclusive schema change): the answer gets
    // its own deadline, not what is left of the request's.
    stream.expires_after(options.request_timeout);
    auto [write_ec, written] = co_await asio::async_write(stream, response, kNoThrow);
    if (!write_ec && from_file && !head) write_ec = co_await WriteFile(stream, api_response);
    const double ms = LogRequest(facts, api_response, status, bytes, start);
    if (api_response.sent) api_response.sent(status, ms);
    if (buffer.capacity() > kReadBuffer) {  // keeps a pipelined request's bytes
      buffer.shrink_to_fit();
      buffer.reserve(kReadBuffer);
    }
    if (write_ec || !keep_alive) {
      beast::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
      co_return false;
    }
    co_return true;
  }

  // Sends `file_length` bytes of the response's file from `file_offset`, a chunk at a time, each
  // with its own deadline: memory holds one chunk, whatever the file's size.
  asio::awaitable<beast::error_code> WriteFile(beast::tcp_stream& stream, const api::Response& response) {
    beast::file file;
    beast::error_code ec;
    file.open(response.file.c_str(), beast::file_mode::read, ec);
    if (!ec) file.seek(response.file_offset, ec);
    if (ec) co_return ec;  // the head promised a length: the connection is closed instead
    std::vector<char> chunk(kFileChunk);
    for (std::uint64_t left = response.file_length; left > 0;) {
      const std::size_t n = file.read(chunk.data(), static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size())), ec);
      if (ec || n == 0) co_return ec ? ec : beast::error_code(asio::error::eof);
      stream.expires_after(options.request_timeout);
      auto [write_ec, written] = co_await asio::async_write(stream, asio::buffer(chunk.data(), n), kNoThrow);
      if (write_ec) co_return write_ec;
      left -= n;
    }
    co_return beast::error_code{};
  }

  struct StreamedUpload {
    api::Request request;  // body_file set, body empty
    unsigned version = 11;
    bool keep_alive = true;
  };

  // Reads an upload's body into a temporary file of options.upload_dir at the pace UploadPace
  // asks (a large file on a slow link takes its time, within upload_timeout; a stalled or
  // trickling one does not). nullopt when it was answered here (an error) and the connection is to
  // be closed.
  asio::awaitable<std::optional<StreamedUpload>> ReadUploadBody(Conn& conn, beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                                                bhttp::request_parser<bhttp::string_body>&& header_parser,
                                                                std::uint64_t body_limit, const std::string& origin,
                                                                const LogFacts& facts,
                                                                std::chrono::steady_clock::time_point start) {
    bhttp::request_parser<bhttp::file_body> parser(std::move(header_parser));
    parser.body_limit(body_limit);
    const std::string path = (std::filesystem::path(options.upload_dir) / UploadFileName()).string();
    beast::error_code ec;
    parser.get().body().open(path.c_str(), beast::file_mode::write, ec);
    if (ec) {
      log::Error("cannot open an upload's file", {{"path", path}, {"error", ec.message()}});
      co_await WriteError(stream, errors::Internal(), origin, facts, start);
      co_return std::nullopt;
    }
    struct RemoveUnlessKept {
      const std::string& path;
      bool kept = false;
      ~RemoveUnlessKept() {
        if (kept) return;
        std::error_code ignored;
        std::filesystem::remove(path, ignored);
      }
    } cleanup{path};
    if (beast::iequals(parser.get()[bhttp::field::expect], "100-continue")) {
      bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, parser.get().version()};
      co_await bhttp::async_write(stream, cont, kNoThrow);
    }
    UploadPace pace(options.upload_min_rate, options.request_timeout, options.upload_timeout, start);
    while (!parser.is_done()) {
      stream.expires_at(pace.Deadline() + kPaceAnswerGrace);  // nothing by then: closed, as a stalled request is
      auto [read_ec, n] = co_await bhttp::async_read_some(stream, buffer, parser, kNoThrow);
      if (read_ec) {
        if (read_ec == bhttp::error::body_limit)
          co_await WriteError(stream, TooLarge(true, body_limit), origin, facts, start);
        else if (!IsQuietDisconnect(read_ec))
          co_await WriteError(stream, errors::BadRequest("Malformed HTTP request."), origin, facts, start);
        co_return std::nullopt;
      }
      conn.received += n;
      if (parser.is_done()) break;  // whole: taken, however long its last read took
      switch (pace.Add(n, std::chrono::steady_clock::now())) {
        case UploadPace::Verdict::kGoOn: break;
        case UploadPace::Verdict::kTooSlow:
          co_await WriteError(stream, errors::UploadTooSlow(options.upload_min_rate), origin, facts, start);
          co_return std::nullopt;
        case UploadPace::Verdict::kTooLong:
          co_await WriteError(stream, errors::UploadTooLong(static_cast<long>(options.upload_timeout.count())), origin,
                              facts, start);
          co_return std::nullopt;
      }
    }
    parser.get().body().close();
    StreamedUpload out;
    out.request = ToApiRequest(parser.get().base(), std::string(), facts.remote_ip, facts.https);
    out.request.body_file = path;
    out.version = parser.get().version();
    out.keep_alive = parser.get().keep_alive();
    cleanup.kept = true;  // the caller removes it once handled
    co_return out;
  }

  asio::awaitable<void> Session(tcp::socket socket) {
    beast::error_code ep_error;
    auto endpoint = socket.remote_endpoint(ep_error);
    LogFacts facts;
    const std::string peer = ep_error ? std::string() : endpoint.address().to_string();
    facts.remote_ip = peer;
    auto conn = std::make_shared<Conn>(std::move(socket), open_connections);
    beast::tcp_stream& stream = conn->stream;
    beast::flat_buffer buffer;
    buffer.reserve(kReadBuffer);
    bool closing = false;  // chosen to make room: the request at hand is its last
    for (;;) {
      bhttp::request_parser<bhttp::string_body> parser;
      parser.header_limit(static_cast<std::uint32_t>(options.header_limit));
      // Beast checks Content-Length against the limit while reading the header, so the header is
      // read under the largest limit and the route's own limit is set once the target is known.
      parser.body_limit(std::max<std::uint64_t>({options.json_body_limit, options.upload_body_limit, options.mcp_body_limit}));
      if (buffer.size() == 0) {
        // Idle between requests: the connection may wait idle_timeout for the next one to start,
        // and may be closed to make room for a new connection meanwhile (MaxConnections).
        stream.expires_after(options.idle_timeout);
        idle.Enter(conn);
        auto [first_ec, first_n] = co_await stream.async_read_some(buffer.prepare(kReadBuffer), kNoThrow);
        // Evicted as its request arrived: it is answered, then closed.
        closing = idle.Leave(conn);
        if (first_ec || (closing && first_n == 0)) co_return;  // closed, timed out or evicted while idle
        buffer.commit(first_n);
      }
      // From its first byte a request has request_timeout to arrive whole, headers and body (an
      // upload's body: ReadUploadBody). Meanwhile it may be closed for room if it is slow.
      idle.StartReceiving(conn);
      struct StopReceiving {
        IdleConnections& idle;
        const std::shared_ptr<Conn>& conn;
        ~StopReceiving() { idle.StopReceiving(conn); }
      } receiving{idle, conn};
      stream.expires_after(options.request_timeout);
      auto [ec, n] = co_await bhttp::async_read_header(stream, buffer, parser, kNoThrow);
      auto start = std::chrono::steady_clock::now();
      if (ec) {
        facts.method = "-";
        facts.path = "-";
        facts.family = "other";
        facts.query.clear();
        facts.request_id = NewRequestId();
        if (ec == bhttp::error::header_limit)
          co_await WriteError(stream, errors::HeaderTooLarge(), std::string(), facts, start);
        else if (ec == bhttp::error::body_limit)  // the start line is parsed by then
          co_await WriteError(stream, TooLarge(BodyOf(parser.get()) == api::BodyKind::kUpload, options.upload_body_limit),
                              std::string(), facts, start);
        else if (!IsQuietDisconnect(ec))
          co_await WriteError(stream, errors::BadRequest("Malformed HTTP request."), std::string(), facts, start);
        co_return;
      }

      // From here the request counts as in flight: a SIGTERM waits for it to finish.
      ++in_flight;
      struct InFlight {
        std::atomic<int>& count;
        ~InFlight() { --count; }
      } guard{in_flight};

      const auto& header = parser.get();
      facts.method = std::string(header.method_string());
      const std::string_view target = header.target();
      const auto question = target.find('?');
      facts.path = std::string(target.substr(0, question));
      facts.family = options.family_of && metrics::Enabled() ? options.family_of(ToMethod(header.method()), target) : "other";
      facts.query = question == std::string_view::npos ? std::string() : RedactQuery(target.substr(question + 1));
      if (facts.query.size() > kLoggedQuery) facts.query.resize(kLoggedQuery);
      facts.request_id = RequestIdOf(header["X-Request-Id"]);
      // Behind a trusted proxy, the client is who the proxy says (http/trusted_proxies.hpp).
      const TrustedProxies& proxies = options.trusted_proxies;
      facts.remote_ip = proxies.empty() ? peer : proxies.ClientAddress(peer, header["Forwarded"], header["X-Forwarded-For"]);
      facts.https = !proxies.empty() && proxies.ClientUsedHttps(peer, header["Forwarded"], header["X-Forwarded-Proto"]);
      const std::string origin(header[bhttp::field::origin]);
      const api::BodyKind body_kind = BodyOf(header);
      const bool upload = body_kind == api::BodyKind::kUpload;
      const std::size_t body_limit = upload                               ? options.upload_body_limit
                                     : body_kind == api::BodyKind::kMcp ? options.mcp_body_limit
                                                                          : options.json_body_limit;
      if (parser.content_length() && *parser.content_length() > body_limit) {
        co_await WriteError(stream, TooLarge(upload, body_limit), origin, facts, start);
        co_return;
      }
      // Beast reads a chunked body whatever codings come before `chunked`: a body crmd cannot
      // decode is refused, not read as if it were plain JSON.
      if (const auto coding = UnsupportedCoding(header)) {
        co_await WriteError(stream, *coding, origin, facts, start);
        co_return;
      }
      // An answer the head alone decides (no route, no application, a refused credential) is
      // given before the body is read: a large body to nowhere costs nothing but its drain.
      if (early && (parser.content_length().value_or(0) > 0 || parser.chunked())) {
        auto decided = early(HeadOnly(header, facts.remote_ip, facts.https));
        if (decided) {
          co_await WriteAndClose(stream, std::move(*decided), origin, facts, start);
          co_return;
        }
      }
      const bool streams = upload && !options.upload_dir.empty() && header.method() == bhttp::verb::post;
      if (!streams) idle.StopReceiving(conn);  // a JSON body has request_timeout in all
      if (streams) {
        // Files stream to disk as they arrive (spec §4.8 sets no size cap): the server's memory
        // holds one read buffer of an upload, whatever its size.
        auto streamed = co_await ReadUploadBody(*conn, stream, buffer, std::move(parser), body_limit, origin, facts, start);
        idle.StopReceiving(conn);
        if (!streamed) co_return;
        co_await asio::post(asio::bind_executor(writers.get_executor(), asio::use_awaitable));
        std::optional<api::Response> answered;
        if (options.unwrap) answered = options.unwrap(streamed->request);
        api::Response api_response = answered ? std::move(*answered) : handler(streamed->request);
        std::error_code ignored;
        std::filesystem::remove(streamed->request.body_file, ignored);  // a kept file was renamed away
        co_await asio::post(asio::bind_executor(stream.get_executor(), asio::use_awaitable));
        const bool keep_alive = streamed->keep_alive && !stopping.load() && !closing;
        if (!co_await WriteAnswer(stream, buffer, api_response, streamed->version, false, keep_alive, facts, start))
          co_return;
        continue;
      }
      parser.body_limit(body_limit);
      // The body itself is reserved whole by Beast's string body; this buffer only passes it on,
      // and kBodyReadAhead at a time is enough for reads of a useful size. What the buffer holds
      // now is the body's first bytes: room for the whole body is the Content-Length.
      if (parser.content_length())
        buffer.reserve(std::min<std::uint64_t>(std::max<std::uint64_t>(buffer.size(), *parser.content_length()),
                                               std::max(buffer.size(), kBodyReadAhead)));
      if (beast::iequals(header[bhttp::field::expect], "100-continue")) {
        bhttp::response<bhttp::empty_body> cont{bhttp::status::continue_, header.version()};
        co_await bhttp::async_write(stream, cont, kNoThrow);
      }
      std::tie(ec, n) = co_await bhttp::async_read(stream, buffer, parser, kNoThrow);
      if (ec) {
        if (ec == bhttp::error::body_limit)
          co_await WriteError(stream, TooLarge(upload, body_limit), origin, facts, start);
        else if (!IsQuietDisconnect(ec))
          co_await WriteError(stream, errors::BadRequest("Malformed HTTP request."), origin, facts, start);
        co_return;
      }

      auto request = parser.release();
      // Without an Upgrade header there is no upgrade: asked first, so that a plain request skips
      // the parse of its Connection header's tokens.
      if (options.upgrade && !stopping.load() && request.find(bhttp::field::upgrade) != request.end() &&
          beast::websocket::is_upgrade(request)) {
        if (SocketsFull()) {
          // A named error, never an aggregate temporary inside the co_await: g++ 12 destroys such a
          // temporary twice, and every refused upgrade corrupted the heap (scripts/check-coroutines).
          const ApiError full{503, errors::kInternal, "Too many WebSocket connections"};
          co_await WriteError(stream, full, origin, facts, start);
          co_return;
        }
        bool upgraded = false;
        {
          const HeldSocket held(open_sockets, in_flight);
          const WebSocketLimits limits = SocketLimits();
          const api::Request head = HeadOnly(request.base(), facts.remote_ip, facts.https);
          upgraded = co_await ServeWebSocket(stream, request, head, options.upgrade, limits);
        }
        if (upgraded) {
          LogRequest(facts, api::Response{}, 101, 0, start);
          co_return;
        }
      }
      const unsigned version = request.version();
      const bool head = request.method() == bhttp::verb::head;
      const bool keep_alive = request.keep_alive() && !stopping.load() && !closing;
      api::Request api_request = ToApiRequest(request.base(), std::move(request.body()), facts.remote_ip, facts.https);
      api::Response api_response;
      std::optional<api::Response> answered;
      if (options.unwrap) answered = options.unwrap(api_request);  // before the method decides the thread
      if (answered) {
        api_response = std::move(*answered);
      } else if (RunsOnWriters(api_request.method)) {
        std::optional<api::Response> queued;
        if (queue_write) queued = co_await AsyncQueueWrite(api_request, asio::use_awaitable);
        if (queued) {
          api_response = std::move(*queued);
        } else {
          // The session hops to a writer thread for the handler and back to its own context for
          // the socket; nothing else touches the session meanwhile. (Not a co_spawn of a lambda:
          // g++ 12 frees its captures twice.)
          co_await asio::post(asio::bind_executor(writers.get_executor(), asio::use_awaitable));
          api_response = handler(api_request);
          co_await asio::post(asio::bind_executor(stream.get_executor(), asio::use_awaitable));
        }
      } else {
        api_response = handler(api_request);
        if (api_response.run_off_loop) {
          // The read ran past its slice here: it runs again on a slow-read thread, and this
          // thread goes back to its other connections meanwhile.
          api_request.off_loop = true;
          metrics::CountReadMovedOff();
          co_await asio::post(asio::bind_executor(slow_reads.get_executor(), asio::use_awaitable));
          LowerPriority();
          api_response = handler(api_request);
          co_await asio::post(asio::bind_executor(stream.get_executor(), asio::use_awaitable));
        }
      }
      if (api_response.event_stream && SocketsFull())
        api_response = api::ErrorResponse(ApiError{503, errors::kInternal, "Too many streaming connections"});
      if (api_response.event_stream && !head) {
        // Issue 36: a stream of server-sent events holds the connection like a WebSocket, and is
        // counted and bounded as one; it is no request in flight.
        LogRequest(facts, api_response, api_response.status, 0, start);
        const HeldSocket held(open_sockets, in_flight);
        const WebSocketLimits limits = SocketLimits();
        const std::string request_id_header = "X-Request-Id: " + facts.request_id + "\r\n";
        co_await ServeEventStream(stream, api_response, request_id_header, limits);
        co_return;
      }
      if (!co_await WriteAnswer(stream, buffer, api_response, version, head, keep_alive, facts, start)) co_return;
    }
  }

  asio::awaitable<void> Accept() {
    asio::steady_timer pause(co_await asio::this_coro::executor);
    auto last_warning = std::chrono::steady_clock::time_point();
    for (;;) {
      bool failed = false;
      try {
        auto& context = contexts[1 + next_context++ % (contexts.size() - 1)];
        auto [ec, socket] = co_await acceptor.async_accept(context, kNoThrow);
        if (ec) {
          if (!acceptor.is_open()) co_return;
          if (ec != asio::error::no_descriptors && ec != asio::error::no_buffer_space) continue;
          // Out of descriptors: the pending connection stays queued; an idle connection makes room
          // and the loop waits a moment instead of spinning on the same error.
          const auto now = std::chrono::steady_clock::now();
          if (now - last_warning > std::chrono::seconds(1)) {
            log::Warn("out of file descriptors: accepting paused", {{"open_connections", open_connections.load()}});
            last_warning = now;
            if (options.short_of_descriptors) options.short_of_descriptors();
          }
          if (!idle.EvictOldest(kIdleToEvict)) idle.EvictSlowSender(options.upload_min_rate, kSlowSenderGrace);
          pause.expires_after(kAcceptPause);
          co_await pause.async_wait(kNoThrow);
          continue;
        }
        // At the cap, the connection idle the longest makes room, else one sending its request too
        // slowly; with neither, the new one is closed at once rather than held waiting.
        if (open_connections.load() >= options.max_connections && !idle.EvictOldest() &&
            !idle.EvictSlowSender(options.upload_min_rate, kSlowSenderGrace)) {
          beast::error_code ignored;
          socket.close(ignored);
          continue;
        }
        beast::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        auto executor = socket.get_executor();
        asio::co_spawn(executor, Session(std::move(socket)), asio::detached);
      } catch (const std::exception& e) {
        // Nothing may end the accept loop but the stop: log, wait, go on.
        log::Error("accepting a connection failed", {{"error", e.what()}});
        failed = true;
      }
      if (failed) {
        pause.expires_after(kAcceptPause);
        co_await pause.async_wait(kNoThrow);
      }
    }
  }

  asio::awaitable<void> Drain() {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    const auto deadline = std::chrono::steady_clock::now() + options.drain_timeout;
    while (in_flight.load() > 0 && std::chrono::steady_clock::now() < deadline) {
      timer.expires_after(kDrainPoll);
      co_await timer.async_wait(kNoThrow);
    }
    if (in_flight.load() > 0) {
      log::Warn("requests still running at the end of the drain", {{"in_flight", in_flight.load()}});
      if (options.drain_expired) options.drain_expired();
    }
    keep_running.clear();
    for (auto& context : contexts) context.stop();
  }
};

Server::Server(ServerOptions options, Handler handler, QueueWrite queue_write, Early early)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler), std::move(queue_write), std::move(early))) {}

Server::~Server() = default;

unsigned short Server::Listen() {
  Impl& s = *impl_;
  const std::string address = s.options.host + ":" + std::to_string(s.options.port);
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address(s.options.host, ec);
  if (ec) throw std::invalid_argument("cannot listen on " + address + ": " + s.options.host + " is not an IP address");
  const tcp::endpoint endpoint(ip, s.options.port);
  auto& acceptor = s.acceptor;
  // Boost's exceptions name its own source file and line; the person starting crmd needs the
  // address and the reason (issue 35).
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::system_error(ec.value(), std::generic_category(), "cannot listen on " + address);
  // The signal pipe now, not in Run(): short of descriptors, the failure comes before the server
  // says it listens, not after.
  try {
    s.signals.emplace(s.ioc, SIGTERM, SIGINT);
  } catch (const boost::system::system_error& e) {
    throw std::system_error(e.code().value(), std::generic_category(), "cannot catch SIGTERM");
  }
  const auto bound = acceptor.local_endpoint(ec);
  if (ec) throw std::system_error(ec.value(), std::generic_category(), "cannot listen on " + address);
  return bound.port();
}

void Server::Run() {
  Impl& s = *impl_;
  if (!s.signals) throw std::logic_error("Server::Run() before Listen()");
  asio::signal_set& signals = *s.signals;
  signals.async_wait([&s](const boost::system::error_code& ec, int signal) {
    if (ec) return;
    log::Announce("stopping", {{"signal", signal}, {"in_flight", s.in_flight.load()}});
    s.stopping = true;
    asio::post(s.acceptor_strand, [&s] {
      beast::error_code ignored;
      s.acceptor.close(ignored);
    });
    asio::co_spawn(s.ioc, s.Drain(), asio::detached);
  });
  asio::co_spawn(s.acceptor_strand, s.Accept(), asio::detached);

  std::vector<std::thread> threads;
  for (std::size_t i = 1; i < s.contexts.size(); ++i)
    threads.emplace_back([&context = s.contexts[i]] { context.run(); });
  s.ioc.run();
  for (auto& t : threads) t.join();
  s.writers.join();
  s.slow_reads.join();
}

}  // namespace crmd::http
