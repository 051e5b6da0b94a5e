#include "triggers/webhook.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sodium.h>
#include <sys/socket.h>

#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <new>

#include "util/curl_library.hpp"
#include "util/time.hpp"

namespace crmd::triggers {

namespace {

// Long enough for any real receiver's URL, short enough that a definition cannot carry a payload.
constexpr std::size_t kMaxUrlLength = 2048;
// A receiver needs an auth header or two; more is a definition being used to smuggle data.
constexpr std::size_t kMaxHeaders = 20;
constexpr std::size_t kMaxHeaderValueLength = 1024;
// No real header name comes near it; it bounds the error messages that echo a name.
constexpr std::size_t kMaxHeaderNameLength = 256;
// The answer's body is never used; a receiver that streams more than this is not waited for.
constexpr std::size_t kMaxResponseBytes = 64 * 1024;

constexpr char kHttpStatusPrefix[] = "webhook answered ";

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// RFC 9110 `tchar`.
bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

// The headers crmd sets itself, or that would let a definition reframe the request.
bool IsReservedHeader(std::string_view lower_name) {
  for (std::string_view reserved : {"host", "content-length", "content-type", "transfer-encoding", "connection"})
    if (lower_name == reserved) return true;
  return lower_name.starts_with("x-crmd-");
}

// Any control character but HTAB could end the header line or confuse the receiver's parser.
bool HasControlCharacter(std::string_view value) {
  for (char c : value) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return true;
  }
  return false;
}

std::optional<std::string> CheckHeader(std::string_view name, std::string_view value) {
  if (name.empty()) return std::string("a webhook header needs a name");
  if (name.size() > kMaxHeaderNameLength)
    return fmt::format("a webhook header name may have at most {} characters", kMaxHeaderNameLength);
  for (char c : name)
    if (!IsTokenChar(c)) return fmt::format("webhook header name {} is not an HTTP token", name);
  if (IsReservedHeader(Lower(name))) return fmt::format("webhook header {} is set by crmd and may not be given", name);
  if (value.size() > kMaxHeaderValueLength)
    return fmt::format("webhook header {} may have at most {} characters", name, kMaxHeaderValueLength);
  if (HasControlCharacter(value)) return fmt::format("webhook header {} holds a line break or control character", name);
  return std::nullopt;
}

// `{{Field}}` becomes one plain character, so a template is checked as the shape it will have.
std::string BlankPlaceholders(std::string_view url) {
  std::string out;
  std::size_t at = 0;
  while (at < url.size()) {
    const auto open = url.find("{{", at);
    const auto close = open == std::string_view::npos ? open : url.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    out.append(url.substr(at, open - at)).push_back('x');
    at = close + 2;
  }
  out.append(url.substr(std::min(at, url.size())));
  return out;
}

std::optional<std::string> CheckUrl(std::string_view url, bool placeholders) {
  if (url.size() > kMaxUrlLength) return fmt::format("a webhook url may have at most {} characters", kMaxUrlLength);
  const std::string text = placeholders ? BlankPlaceholders(url) : std::string(url);
  auto parsed = boost::urls::parse_uri(text);
  if (!parsed) return std::string("webhook url is not a valid absolute URL");
  const auto scheme = parsed->scheme_id();
  if (scheme != boost::urls::scheme::http && scheme != boost::urls::scheme::https)
    return std::string("webhook url must be http or https");
  if (!parsed->has_authority() || parsed->encoded_host().empty()) return std::string("webhook url has no host");
  if (parsed->has_userinfo()) return std::string("webhook url may not hold a user name or password");
  return std::nullopt;
}

// --- Which addresses are public -------------------------------------------------------------

struct V4Block {
  std::uint32_t network;
  int bits;
};

// Not reachable on the public internet, or reaching this machine or the operator's networks.
constexpr V4Block kNonPublicV4[] = {
    {0x00000000, 8},   // 0.0.0.0/8, "this network" (0.0.0.0 connects to the local host)
    {0x0A000000, 8},   // 10/8, RFC 1918
    {0x64400000, 10},  // 100.64/10, carrier-grade NAT
    {0x7F000000, 8},   // loopback
    {0xA9FE0000, 16},  // 169.254/16, link-local (cloud metadata services live here)
    {0xAC100000, 12},  // 172.16/12, RFC 1918
    {0xC0A80000, 16},  // 192.168/16, RFC 1918
    {0xE0000000, 4},   // multicast
    {0xF0000000, 4},   // reserved, and the broadcast address
};

bool IsPublicV4(const unsigned char* bytes) {
  const std::uint32_t a = (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) |
                          (std::uint32_t{bytes[2]} << 8) | std::uint32_t{bytes[3]};
  for (const auto& block : kNonPublicV4)
    if ((a >> (32 - block.bits)) == (block.network >> (32 - block.bits))) return false;
  return true;
}

bool IsPublicV6(const unsigned char* b) {
  auto zeros = [b](int n) {
    for (int i = 0; i < n; ++i)
      if (b[i] != 0) return false;
    return true;
  };
  // IPv4 reached through IPv6 is judged as the IPv4 address it carries: mapped (::ffff:a.b.c.d),
  // compatible (::a.b.c.d, which covers :: and ::1), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
  if (zeros(10) && b[10] == 0xff && b[11] == 0xff) return IsPublicV4(b + 12);
  if (zeros(12)) return IsPublicV4(b + 12);
  constexpr unsigned char kNat64[12] = {0x00, 0x64, 0xff, 0x9b};
  if (std::equal(b, b + 12, kNat64)) return IsPublicV4(b + 12);
  if (b[0] == 0x20 && b[1] == 0x02) return IsPublicV4(b + 2);
  if (b[0] == 0xff) return false;                          // multicast
  if ((b[0] & 0xfe) == 0xfc) return false;                 // fc00::/7, unique local
  if (b[0] == 0xfe && (b[1] & 0x80) == 0x80) return false;  // fe80::/10 link-local, fec0::/10 site-local
  return true;
}

bool IsPublic(const sockaddr* address) {
  if (address->sa_family == AF_INET)
    return IsPublicV4(reinterpret_cast<const unsigned char*>(&reinterpret_cast<const sockaddr_in*>(address)->sin_addr));
  if (address->sa_family == AF_INET6)
    return IsPublicV6(reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr.s6_addr);
  return false;  // Unix sockets and anything else are never a webhook's destination
}

std::string AddressText(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = "";
  if (address->sa_family == AF_INET)
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text, sizeof text);
  else if (address->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr, text, sizeof text);
  else
    return fmt::format("of family {}", address->sa_family);
  return text;
}

// --- One request ------------------------------------------------------------------------------

// What the socket callback saw. curl may try several addresses of one host; the request counts
// as refused only when every one it tried was refused.
struct Destinations {
  bool allow_private = false;
  std::string refused;  // the first address refused
  bool opened = false;  // a public address was tried
};

// Runs on the address curl is about to connect to, after its own resolution: a host name that
// resolves (or re-resolves) to a private address is caught here, where the connection is made.
curl_socket_t OpenSocket(void* user, curlsocktype, curl_sockaddr* address) {
  auto* destinations = static_cast<Destinations*>(user);
  if (!destinations->allow_private && !IsPublic(&address->addr)) {
    if (destinations->refused.empty()) destinations->refused = AddressText(&address->addr);
    return CURL_SOCKET_BAD;
  }
  destinations->opened = true;
  return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

struct Sink {
  std::size_t received = 0;
  bool full = false;
};

std::size_t Discard(char*, std::size_t size, std::size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  sink->received += size * count;
  if (sink->received > kMaxResponseBytes) {
    sink->full = true;
    return 0;  // curl ends the transfer; the status line has been read by now
  }
  return size * count;
}

Delivery Refused(std::string error) { return {false, false, std::move(error), 0}; }

Delivery FromStatus(long status) {
  if (status >= 200 && status < 300) return {true, false, {}, status};
  // A receiver that is busy or restarting says so with these; any other 4xx or a redirect (not
  // followed, so a receiver cannot point crmd at another host) will answer the same next time.
  const bool retry = status >= 500 || status == 408 || status == 429;
  return {false, retry, kHttpStatusPrefix + std::to_string(status), status};
}

// Errors that a second attempt cannot fix.
bool IsPermanent(CURLcode rc) {
  return rc == CURLE_URL_MALFORMAT || rc == CURLE_UNSUPPORTED_PROTOCOL;
}

class HeaderList {
 public:
  explicit HeaderList(const CurlLibrary& lib) : lib_(lib) {}
  HeaderList(const HeaderList&) = delete;
  HeaderList& operator=(const HeaderList&) = delete;
  ~HeaderList() { lib_.slist_free_all(list_); }

  void Add(std::string_view name, std::string_view value) {
    // `Name;` is curl's way of sending a header with an empty value (`Name:` would remove it).
    AddLine(value.empty() ? fmt::format("{};", name) : fmt::format("{}: {}", name, value));
  }
  void AddLine(const std::string& line) {
    curl_slist* next = lib_.slist_append(list_, line.c_str());
    if (!next) throw std::bad_alloc();
    list_ = next;
  }
  curl_slist* get() const { return list_; }

 private:
  const CurlLibrary& lib_;
  curl_slist* list_ = nullptr;
};

}  // namespace

std::string SignWebhook(std::string_view secret, std::string_view timestamp, std::string_view body) {
  crypto_auth_hmacsha256_state state;
  crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(secret.data()), secret.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(timestamp.data()), timestamp.size());
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>("."), 1);
  crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(body.data()), body.size());
  unsigned char mac[crypto_auth_hmacsha256_BYTES];
  crypto_auth_hmacsha256_final(&state, mac);
  sodium_memzero(&state, sizeof state);  // it holds the key, padded
  char hex[crypto_auth_hmacsha256_BYTES * 2 + 1];
  sodium_bin2hex(hex, sizeof hex, mac, sizeof mac);
  return std::string("v1=") + hex;
}

std::optional<std::string> CheckWebhookUrl(std::string_view url) { return CheckUrl(url, /*placeholders=*/true); }

std::optional<std::string> CheckWebhookHeaders(const boost::json::value& headers) {
  const auto* object = headers.if_object();
  if (!object) return std::string("webhook headers must be an object of strings");
  if (object->size() > kMaxHeaders) return fmt::format("a webhook may add at most {} headers", kMaxHeaders);
  for (const auto& [name, value] : *object) {
    const auto* text = value.if_string();
    if (auto wrong = CheckHeader(name, text ? std::string_view(*text) : std::string_view())) return wrong;
    if (!text) return fmt::format("webhook header {} must be a string", std::string_view(name));
  }
  return std::nullopt;
}

Delivery PostWebhook(const Webhook& hook, const WebhookOptions& options) {
  // Checked again here: the URL and the headers were checked as templates, and a record's values
  // (a line break, a space, `@`) have been filled in since.
  if (auto wrong = CheckUrl(hook.url, /*placeholders=*/false)) return Refused(*wrong);
  for (const auto& [name, value] : hook.headers)
    if (auto wrong = CheckHeader(name, value)) return Refused(*wrong);
  if (hook.secret.empty()) return Refused("the application has no webhook secret");
  const std::string timestamp = std::to_string(timeutil::NowMillis() / 1000);
  const std::array<std::pair<std::string_view, std::string_view>, 6> own{{
      {"Content-Type", "application/json"},
      {"X-Crmd-Event", hook.event},
      {"X-Crmd-Class", hook.class_name},
      {"X-Crmd-Trigger", hook.trigger_id},
      {"X-Crmd-Delivery", hook.delivery_id},
      {"X-Crmd-Timestamp", timestamp},
  }};
  const std::string signature = SignWebhook(hook.secret, timestamp, hook.body);

  std::string problem;
  const CurlLibrary* lib = Curl(problem);
  if (!lib) return {false, true, "webhook: curl could not start: " + problem, 0};
  HeaderList list(*lib);
  for (const auto& [name, value] : own) {
    // The trigger engine's own values: a control character here is its bug, not the receiver's.
    if (HasControlCharacter(value)) return Refused(fmt::format("webhook header {} holds a control character", name));
    list.Add(name, value);
  }
  list.Add("X-Crmd-Signature", signature);
  for (const auto& [name, value] : hook.headers) list.Add(name, value);
  // Without it curl waits up to a second for `100 Continue` before sending a body over 1 MiB.
  list.AddLine("Expect:");

  std::unique_ptr<CURL, decltype(lib->easy_cleanup)> curl(lib->easy_init(), lib->easy_cleanup);
  if (!curl) return {false, true, "webhook: curl could not start", 0};
  Destinations destinations;
  destinations.allow_private = options.allow_private;
  Sink sink;
  char error[CURL_ERROR_SIZE] = "";
  CURL* c = curl.get();
  const long timeout_ms = static_cast<long>(options.timeout.count());
  lib->easy_setopt(c, CURLOPT_URL, hook.url.c_str());
  lib->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  lib->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
  lib->easy_setopt(c, CURLOPT_PROXY, "");  // http_proxy in the environment must not reroute webhooks
  lib->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  lib->easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  lib->easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  lib->easy_setopt(c, CURLOPT_USERAGENT, "crmd-webhook");
  lib->easy_setopt(c, CURLOPT_HTTPHEADER, list.get());
  lib->easy_setopt(c, CURLOPT_POST, 1L);
  lib->easy_setopt(c, CURLOPT_POSTFIELDS, hook.body.data());
  lib->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(hook.body.size()));
  lib->easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, OpenSocket);
  lib->easy_setopt(c, CURLOPT_OPENSOCKETDATA, &destinations);
  lib->easy_setopt(c, CURLOPT_WRITEFUNCTION, Discard);
  lib->easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  lib->easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  const CURLcode rc = lib->easy_perform(c);
  long status = 0;
  lib->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && sink.full && status != 0)) return FromStatus(status);
  if (!destinations.refused.empty() && !destinations.opened)
    return Refused(fmt::format("webhook destination {} is not a public address", destinations.refused));
  return {false, !IsPermanent(rc), error[0] ? std::string(error) : std::string(lib->easy_strerror(rc)), status};
}

}  // namespace crmd::triggers
