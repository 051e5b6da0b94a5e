// The reverse proxies whose word on the client is taken (`--trusted-proxies CIDR,...`, issue 35).
// Behind a proxy every connection comes from the proxy: without this, every caller shares its
// address (one password-rate bucket for all anonymous logins, the proxy's address in the request
// log and `_RequestLog.ip`) and the gate's cookie never learns the client used HTTPS.
//
// From a trusted peer only:
// - the client address is read from `Forwarded` (RFC 7239, its `for=`), else `X-Forwarded-For`:
//   the chain is walked from the right (the nearest hop) and the first address that is not a
//   trusted proxy is the client's, so a client cannot choose its address by sending the header
//   itself (what it sends is to the left of what the proxies append); a chain of trusted proxies
//   only gives its leftmost; a value that is no IP address ends the walk there (the last address
//   read stands);
// - the scheme is read from the nearest hop's `proto=` of `Forwarded`, else from the last value of
//   `X-Forwarded-Proto`.
// From any other peer these headers are ignored: the peer's address is the client's.
//
// Immutable once parsed: thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crmd::http {

class TrustedProxies {
 public:
  // `list`: comma-separated CIDR blocks or single addresses, IPv4 or IPv6 (`10.0.0.0/8,::1`);
  // empty trusts none. nullopt (and `error` set) when an entry is not one.
  static std::optional<TrustedProxies> Parse(std::string_view list, std::string& error);

  bool empty() const { return blocks_.empty(); }
  // Whether `ip` (text, as the socket gives it) is in a trusted block.
  bool Trusts(std::string_view ip) const;

  // The client's address for a request from `peer` with these headers (empty when absent).
  std::string ClientAddress(std::string_view peer, std::string_view forwarded, std::string_view x_forwarded_for) const;
  // Whether the client used HTTPS, as a trusted `peer` says; false from any other peer.
  bool ClientUsedHttps(std::string_view peer, std::string_view forwarded, std::string_view x_forwarded_proto) const;

 private:
  struct Block {
    std::array<std::uint8_t, 16> address{};  // IPv4 as IPv4-mapped IPv6
    int prefix = 128;                        // bits, of the 128
  };
  std::vector<Block> blocks_;
};

}  // namespace crmd::http
