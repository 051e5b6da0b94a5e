// triggers/webhook (docs/TRIGGERS.md, "Webhooks"): what a receiver gets (headers, a signature it can
// verify), which answers are retried, the SSRF guard on the address curl connects to, and the
// definition checks of `PUT /schemas`.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "closed_port.hpp"
#include "triggers/webhook.hpp"
#include "util/time.hpp"

namespace crmd::triggers {
namespace {

using namespace std::chrono_literals;

struct Received {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
};

struct Answer {
  int status = 200;
  std::chrono::milliseconds delay{0};  // before answering
  std::size_t body_bytes = 0;          // the Content-Length announced
  std::size_t body_sent = 0;           // of which sent; then the receiver stalls until stopped
  std::string location{};               // a Location header, when not empty
};

// A loopback HTTP receiver: one thread, one connection at a time. It records each request, then
// answers as told and closes. Stopped and joined by its destructor, a delay or a stall included.
class Receiver {
 public:
  // The largest request in these tests is 2 MiB; anything larger is the client misbehaving.
  static constexpr std::size_t kMaxRequestBytes = 4 << 20;

  explicit Receiver(int status) : Receiver(Answer{status}) {}
  explicit Receiver(Answer answer) : answer_(std::move(answer)) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    if (listener_ < 0 || bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        listen(listener_, 8) != 0 || getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0)
      throw std::runtime_error("receiver: cannot listen on 127.0.0.1");
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Run(); });
  }
  ~Receiver() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
    close(listener_);
  }

  std::string Url(const std::string& host = "127.0.0.1") const { return fmt::format("http://{}:{}/hook", host, port_); }
  std::vector<Received> Requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  bool Stopping() {
    std::lock_guard lock(mutex_);
    return stop_;
  }

  void Run() {
    while (!Stopping()) {
      pollfd p{listener_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      const int connection = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
      if (connection < 0) continue;
      Serve(connection);
      close(connection);
    }
  }

  // Reads until `want` bytes are in `data` or the peer stops sending; false on a silent peer.
  static bool ReadMore(int connection, std::string& data) {
    pollfd p{connection, POLLIN, 0};
    if (poll(&p, 1, 2000) <= 0) return false;
    char buffer[4096];
    const ssize_t n = recv(connection, buffer, sizeof buffer, 0);
    if (n <= 0) return false;
    data.append(buffer, static_cast<std::size_t>(n));
    return data.size() <= kMaxRequestBytes;
  }

  void Serve(int connection) {
    std::string data;
    std::size_t head_end;
    while ((head_end = data.find("\r\n\r\n")) == std::string::npos)
      if (!ReadMore(connection, data)) return;
    Received request;
    std::size_t line_end = data.find("\r\n");
    const std::string request_line = data.substr(0, line_end);
    request.method = request_line.substr(0, request_line.find(' '));
    request.target = request_line.substr(request.method.size() + 1, request_line.rfind(' ') - request.method.size() - 1);
    while (line_end < head_end) {
      const std::size_t next = data.find("\r\n", line_end + 2);
      const std::string line = data.substr(line_end + 2, next - line_end - 2);
      const std::size_t colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string value = colon == std::string::npos ? "" : line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      request.headers[name] = value;
      line_end = next;
    }
    const std::size_t length = request.headers.contains("content-length") ? std::stoul(request.headers["content-length"]) : 0;
    while (data.size() < head_end + 4 + length)
      if (!ReadMore(connection, data)) return;
    request.body = data.substr(head_end + 4, length);
    {
      std::unique_lock lock(mutex_);
      requests_.push_back(std::move(request));
      if (wake_.wait_for(lock, answer_.delay, [this] { return stop_; })) return;
    }
    const std::string location = answer_.location.empty() ? "" : "Location: " + answer_.location + "\r\n";
    const std::string answer =
        fmt::format("HTTP/1.1 {} Status\r\n{}Content-Length: {}\r\nConnection: close\r\n\r\n{}", answer_.status,
                    location, answer_.body_bytes, std::string(answer_.body_sent, 'x'));
    std::size_t sent = 0;
    while (sent < answer.size()) {
      const ssize_t n = send(connection, answer.data() + sent, answer.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;  // the client stopped reading
      sent += static_cast<std::size_t>(n);
    }
    if (answer_.body_sent < answer_.body_bytes) {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_; });
    }
  }

  const Answer answer_;
  int listener_ = -1;
  unsigned short port_ = 0;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::vector<Received> requests_;
  std::thread thread_;
};

constexpr char kSecret[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

Webhook Hook(std::string url) {
  Webhook hook;
  hook.url = std::move(url);
  hook.headers = {{"Authorization", "Bearer token-1"}, {"X-Tenant", "acme"}};
  hook.body = R"({"objectId":"a1","Name":"Dana"})";
  hook.secret = kSecret;
  hook.event = "create";
  hook.class_name = "Leads";
  hook.trigger_id = "trg1";
  hook.delivery_id = "dlv1";
  return hook;
}

WebhookOptions Private(std::chrono::milliseconds timeout = 5000ms) {
  WebhookOptions options;
  options.allow_private = true;
  options.timeout = timeout;
  return options;
}

std::string NotPublic(const std::string& address) {
  return "webhook destination " + address + " is not a public address";
}

// --- Signature ------------------------------------------------------------------------------

// The value a receiver computes with any HMAC library (Python's hmac module made this one).
TEST(WebhookSignatureTest, IsV1AndTheHexHmacSha256OfTimestampDotBody) {
  EXPECT_EQ(SignWebhook("whsec-test-key", "1700000000", R"({"objectId":"a1"})"),
            "v1=a1c1d8b17a21ab39651f30053498aa6865aa023fd0342416d60f7cb18417de96");
  EXPECT_NE(SignWebhook("whsec-test-key", "1700000001", R"({"objectId":"a1"})"),
            SignWebhook("whsec-test-key", "1700000000", R"({"objectId":"a1"})"));
}

// --- Deliveries -----------------------------------------------------------------------------

TEST(WebhookDeliveryTest, A200IsDeliveredWithEveryHeaderAndASignatureThatVerifies) {
  Receiver receiver(200);
  const Webhook hook = Hook(receiver.Url());
  const std::int64_t before = timeutil::NowMillis() / 1000;
  const Delivery delivery = PostWebhook(hook, Private());
  const std::int64_t after = timeutil::NowMillis() / 1000;
  EXPECT_TRUE(delivery.delivered);
  EXPECT_FALSE(delivery.retry);
  EXPECT_EQ(delivery.status, 200);
  EXPECT_EQ(delivery.error, "");

  const auto requests = receiver.Requests();
  ASSERT_EQ(requests.size(), 1u);
  const Received& r = requests[0];
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.target, "/hook");
  EXPECT_EQ(r.body, hook.body);
  auto header = [&r](const std::string& name) {
    auto it = r.headers.find(name);
    return it == r.headers.end() ? std::string("<missing>") : it->second;
  };
  EXPECT_EQ(header("content-type"), "application/json");
  EXPECT_EQ(header("x-crmd-event"), "create");
  EXPECT_EQ(header("x-crmd-class"), "Leads");
  EXPECT_EQ(header("x-crmd-trigger"), "trg1");
  EXPECT_EQ(header("x-crmd-delivery"), "dlv1");
  EXPECT_EQ(header("authorization"), "Bearer token-1");
  EXPECT_EQ(header("x-tenant"), "acme");
  EXPECT_FALSE(r.headers.contains("expect"));
  const std::string timestamp = header("x-crmd-timestamp");
  ASSERT_FALSE(timestamp.empty());
  ASSERT_EQ(timestamp.find_first_not_of("0123456789"), std::string::npos) << timestamp;
  EXPECT_GE(std::stoll(timestamp), before);
  EXPECT_LE(std::stoll(timestamp), after);
  EXPECT_EQ(header("x-crmd-signature"), SignWebhook(kSecret, timestamp, r.body));
}

TEST(WebhookDeliveryTest, ABodyOverOneMibIsSentWithoutWaitingForContinue) {
  Receiver receiver(204);
  Webhook hook = Hook(receiver.Url());
  hook.body = R"({"Notes":")" + std::string(2 << 20, 'n') + R"("})";
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(PostWebhook(hook, Private()).delivered);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 900ms);
  ASSERT_EQ(receiver.Requests().size(), 1u);
  EXPECT_EQ(receiver.Requests()[0].body, hook.body);
}

TEST(WebhookDeliveryTest, FiveHundredsAnd408And429AreRetried) {
  for (int status : {500, 502, 503, 408, 429}) {
    Receiver receiver(status);
    const Delivery delivery = PostWebhook(Hook(receiver.Url()), Private());
    EXPECT_FALSE(delivery.delivered) << status;
    EXPECT_TRUE(delivery.retry) << status;
    EXPECT_EQ(delivery.status, status);
    EXPECT_EQ(delivery.error, fmt::format("webhook answered {}", status));
  }
}

TEST(WebhookDeliveryTest, OtherFourHundredsAndRedirectsAreNotRetried) {
  for (int status : {400, 401, 404, 410, 301, 302, 307}) {
    Receiver receiver(status);
    const Delivery delivery = PostWebhook(Hook(receiver.Url()), Private());
    EXPECT_FALSE(delivery.delivered) << status;
    EXPECT_FALSE(delivery.retry) << status;
    EXPECT_EQ(delivery.status, status);
    EXPECT_EQ(delivery.error, fmt::format("webhook answered {}", status));
    EXPECT_EQ(receiver.Requests().size(), 1u) << status;
  }
}

TEST(WebhookDeliveryTest, ATimeoutIsRetried) {
  Receiver receiver(Answer{.status = 200, .delay = 5000ms});
  const auto start = std::chrono::steady_clock::now();
  const Delivery delivery = PostWebhook(Hook(receiver.Url()), Private(/*timeout=*/200ms));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2000ms);
  EXPECT_FALSE(delivery.delivered);
  EXPECT_TRUE(delivery.retry);
  EXPECT_EQ(delivery.status, 0);
  EXPECT_FALSE(delivery.error.empty());
}

TEST(WebhookDeliveryTest, NothingListeningIsRetried) {
  const Delivery delivery =
      PostWebhook(Hook(fmt::format("http://127.0.0.1:{}/hook", test::ClosedPort())), Private());
  EXPECT_FALSE(delivery.delivered);
  EXPECT_TRUE(delivery.retry);
  EXPECT_FALSE(delivery.error.empty());
}

// The answer's body is never used, and a receiver cannot make crmd read without end: this one
// announces 8 MiB, sends 256 KiB and stalls, which only a reader that stops at 64 KiB gets past.
TEST(WebhookDeliveryTest, AnAnswerBodyPast64KibIsNotReadButTheStatusCounts) {
  Receiver receiver(Answer{.status = 200, .body_bytes = 8 << 20, .body_sent = 256 << 10});
  const Delivery delivery = PostWebhook(Hook(receiver.Url()), Private(/*timeout=*/2000ms));
  EXPECT_TRUE(delivery.delivered) << delivery.error;
  EXPECT_EQ(delivery.status, 200);
}

// A redirect could point crmd at an address the guard would refuse, or at another receiver.
TEST(WebhookDeliveryTest, RedirectsAreNotFollowed) {
  Receiver elsewhere(200);
  Receiver receiver(Answer{.status = 302, .location = elsewhere.Url()});
  const Delivery delivery = PostWebhook(Hook(receiver.Url()), Private());
  EXPECT_FALSE(delivery.delivered);
  EXPECT_FALSE(delivery.retry);
  EXPECT_EQ(delivery.status, 302);
  EXPECT_TRUE(elsewhere.Requests().empty());
}

// An http_proxy in the server's environment (here one that does not answer) must not carry
// webhooks past the address guard.
TEST(WebhookDeliveryTest, AProxyInTheEnvironmentIsNotUsed) {
  Receiver receiver(200);
  const std::string proxy = fmt::format("http://127.0.0.1:{}", test::ClosedPort());
  std::map<std::string, std::optional<std::string>> saved;
  for (const char* name : {"http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "no_proxy", "NO_PROXY"}) {
    const char* value = std::getenv(name);
    saved[name] = value ? std::optional<std::string>(value) : std::nullopt;
    unsetenv(name);
  }
  setenv("http_proxy", proxy.c_str(), 1);
  setenv("ALL_PROXY", proxy.c_str(), 1);
  const Delivery delivery = PostWebhook(Hook(receiver.Url()), Private());
  for (const auto& [name, value] : saved) {
    if (value) setenv(name.c_str(), value->c_str(), 1);
    else unsetenv(name.c_str());
  }
  EXPECT_TRUE(delivery.delivered) << delivery.error;
  EXPECT_EQ(receiver.Requests().size(), 1u);
}

// --- SSRF guard -----------------------------------------------------------------------------

TEST(WebhookSsrfTest, LoopbackIsRefusedWithoutConnecting) {
  Receiver receiver(200);
  const Delivery delivery = PostWebhook(Hook(receiver.Url()), WebhookOptions{});
  EXPECT_FALSE(delivery.delivered);
  EXPECT_FALSE(delivery.retry);
  EXPECT_EQ(delivery.status, 0);
  EXPECT_EQ(delivery.error, NotPublic("127.0.0.1"));
  EXPECT_TRUE(receiver.Requests().empty());
}

// A host name is judged by the address it resolves to, not by how it is spelled.
TEST(WebhookSsrfTest, AHostNameResolvingToLoopbackIsRefused) {
  Receiver receiver(200);
  const Delivery delivery = PostWebhook(Hook(receiver.Url("localhost")), WebhookOptions{});
  EXPECT_FALSE(delivery.retry);
  EXPECT_TRUE(delivery.error == NotPublic("127.0.0.1") || delivery.error == NotPublic("::1")) << delivery.error;
  EXPECT_TRUE(receiver.Requests().empty());
}

TEST(WebhookSsrfTest, PrivateLinkLocalMulticastAndMappedAddressesAreRefused) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"10.1.2.3", "10.1.2.3"},
      {"172.16.0.1", "172.16.0.1"},
      {"172.31.255.255", "172.31.255.255"},
      {"192.168.1.1", "192.168.1.1"},
      {"169.254.169.254", "169.254.169.254"},  // cloud metadata
      {"100.64.0.1", "100.64.0.1"},
      {"0.0.0.0", "0.0.0.0"},
      {"127.8.9.10", "127.8.9.10"},
      {"224.0.0.1", "224.0.0.1"},
      {"255.255.255.255", "255.255.255.255"},
      {"[::1]", "::1"},
      {"[::]", "::"},
      {"[fe80::1]", "fe80::1"},
      {"[fc00::1]", "fc00::1"},
      {"[fd12:3456::1]", "fd12:3456::1"},
      {"[ff02::1]", "ff02::1"},
      {"[::ffff:127.0.0.1]", "::ffff:127.0.0.1"},
      {"[::ffff:10.0.0.1]", "::ffff:10.0.0.1"},
      {"[64:ff9b::a9fe:a9fe]", "64:ff9b::a9fe:a9fe"},
  };
  for (const auto& [host, text] : cases) {
    const Delivery delivery = PostWebhook(Hook(fmt::format("http://{}:9/hook", host)), WebhookOptions{});
    EXPECT_FALSE(delivery.delivered) << host;
    EXPECT_FALSE(delivery.retry) << host;
    EXPECT_EQ(delivery.error, NotPublic(text)) << host;
  }
}

// Neighbours of the refused blocks are public: the guard refuses no more than it says.
TEST(WebhookSsrfTest, PublicNeighboursOfThoseBlocksAreTried) {
  for (const char* host : {"172.32.0.1", "172.15.255.255", "100.128.0.1", "100.63.255.255", "192.0.2.1", "11.0.0.1",
                           "9.255.255.255", "126.255.255.255", "128.0.0.1", "169.253.255.255", "169.255.0.1",
                           "192.167.255.255", "192.169.0.1", "223.255.255.255", "[2001:db8::1]", "[fbff::1]", "[fe7f::1]"}) {
    const Delivery delivery =
        PostWebhook(Hook(fmt::format("http://{}:9/hook", host)), WebhookOptions{false, 100ms});
    EXPECT_FALSE(delivery.delivered) << host;
    EXPECT_EQ(delivery.error.find("is not a public address"), std::string::npos) << host << ": " << delivery.error;
  }
}

// --- What is checked again at send time ------------------------------------------------------

TEST(WebhookDeliveryTest, AFilledHeaderWithALineBreakIsNotSent) {
  Receiver receiver(200);
  Webhook hook = Hook(receiver.Url());
  hook.headers.push_back({"X-Name", "Dana\r\nX-Injected: 1"});
  const Delivery delivery = PostWebhook(hook, Private());
  EXPECT_FALSE(delivery.delivered);
  EXPECT_FALSE(delivery.retry);
  EXPECT_TRUE(receiver.Requests().empty());
}

TEST(WebhookDeliveryTest, AFilledUrlThatIsNoLongerValidIsNotSent) {
  for (const char* url : {"http://127.0.0.1:9/a b", "http://user:pw@127.0.0.1:9/", "ftp://127.0.0.1/x"}) {
    const Delivery delivery = PostWebhook(Hook(url), Private());
    EXPECT_FALSE(delivery.delivered) << url;
    EXPECT_FALSE(delivery.retry) << url;
    EXPECT_FALSE(delivery.error.empty()) << url;
  }
}

// --- Definition checks ----------------------------------------------------------------------

TEST(WebhookDefinitionTest, UrlsMustBeHttpOrHttpsWithAHostAndNoCredentials) {
  for (const char* ok : {"https://example.com/hook", "http://example.com:8080/a?b=c#d", "HTTPS://EXAMPLE.COM",
                         "https://hooks.example.com/{{objectId}}?name={{Name}}", "http://[2001:db8::1]/x"})
    EXPECT_EQ(CheckWebhookUrl(ok), std::nullopt) << ok;
  for (const char* wrong : {"", "example.com/hook", "ftp://example.com/x", "file:///etc/passwd", "gopher://example.com",
                            "javascript:alert(1)", "http:///path", "http://user:pw@example.com/", "http://user@example.com/",
                            "https://exa mple.com/", "http://example.com/\r\nHost: x", "https://{{x"})
    EXPECT_NE(CheckWebhookUrl(wrong), std::nullopt) << wrong;
  const std::string prefix = "https://example.com/";
  EXPECT_EQ(CheckWebhookUrl(prefix + std::string(2048 - prefix.size(), 'a')), std::nullopt);
  EXPECT_NE(CheckWebhookUrl(prefix + std::string(2049 - prefix.size(), 'a')), std::nullopt);
}

TEST(WebhookDefinitionTest, HeadersAreAnObjectOfStringsWithTokenNames) {
  namespace json = boost::json;
  EXPECT_EQ(CheckWebhookHeaders(json::object{}), std::nullopt);
  EXPECT_EQ(CheckWebhookHeaders(json::object{{"Authorization", "Bearer {{Token}}"}, {"X-Empty", ""}}), std::nullopt);
  EXPECT_NE(CheckWebhookHeaders(json::array{"a"}), std::nullopt);
  EXPECT_NE(CheckWebhookHeaders(json::value("Authorization: x")), std::nullopt);
  EXPECT_NE(CheckWebhookHeaders(json::object{{"X-Number", 1}}), std::nullopt);
  EXPECT_NE(CheckWebhookHeaders(json::object{{"X-Null", nullptr}}), std::nullopt);
  for (const char* name : {"", "Bad Name", "Bad:Name", "Bad\r\nName", "Naïve"})
    EXPECT_NE(CheckWebhookHeaders(json::object{{name, "v"}}), std::nullopt) << name;
}

TEST(WebhookDefinitionTest, HeadersCrmdSetsOrThatReframeTheRequestAreRefusedInAnyCase) {
  namespace json = boost::json;
  for (const char* name : {"Host", "host", "Content-Length", "CONTENT-TYPE", "Transfer-Encoding", "connection",
                           "X-Crmd-Signature", "x-crmd-timestamp", "X-CRMD-Anything"})
    EXPECT_NE(CheckWebhookHeaders(json::object{{name, "v"}}), std::nullopt) << name;
  EXPECT_EQ(CheckWebhookHeaders(json::object{{"X-Crmd", "v"}, {"X-Crmdx", "v"}}), std::nullopt);
}

TEST(WebhookDefinitionTest, HeaderValuesHoldNoLineBreaksAndCountAndLengthAreBounded) {
  namespace json = boost::json;
  for (std::string value : {std::string("a\rb"), std::string("a\nb"), std::string("a\0b", 3)})
    EXPECT_NE(CheckWebhookHeaders(json::object{{"X-V", value}}), std::nullopt);
  EXPECT_EQ(CheckWebhookHeaders(json::object{{"X-V", "tab\tok"}}), std::nullopt);
  EXPECT_EQ(CheckWebhookHeaders(json::object{{"X-V", std::string(1024, 'v')}}), std::nullopt);
  EXPECT_NE(CheckWebhookHeaders(json::object{{"X-V", std::string(1025, 'v')}}), std::nullopt);
  json::object twenty;
  for (int i = 0; i < 20; ++i) twenty[fmt::format("X-H{}", i)] = "v";
  EXPECT_EQ(CheckWebhookHeaders(twenty), std::nullopt);
  twenty["X-H20"] = "v";
  EXPECT_NE(CheckWebhookHeaders(twenty), std::nullopt);
}

}  // namespace
}  // namespace crmd::triggers
