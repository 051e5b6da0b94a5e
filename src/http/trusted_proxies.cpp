#include "http/trusted_proxies.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <cstring>

namespace crmd::http {

namespace {

std::string_view Trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

// `text` as 16 bytes (IPv4 mapped into IPv6); nullopt when it is no address.
std::optional<std::array<std::uint8_t, 16>> ParseIp(std::string_view text) {
  if (text.empty() || text.size() > INET6_ADDRSTRLEN) return std::nullopt;
  const std::string s(text);
  std::array<std::uint8_t, 16> out{};
  in_addr v4{};
  if (::inet_pton(AF_INET, s.c_str(), &v4) == 1) {
    out[10] = out[11] = 0xff;
    std::memcpy(out.data() + 12, &v4, 4);
    return out;
  }
  in6_addr v6{};
  if (::inet_pton(AF_INET6, s.c_str(), &v6) == 1) {
    std::memcpy(out.data(), &v6, 16);
    return out;
  }
  return std::nullopt;
}

bool IsMappedV4(const std::array<std::uint8_t, 16>& a) {
  return std::all_of(a.begin(), a.begin() + 10, [](std::uint8_t b) { return b == 0; }) && a[10] == 0xff && a[11] == 0xff;
}

// A `for=` or X-Forwarded-For value as an address: quotes, `[...]` and a port taken off.
std::string_view NodeAddress(std::string_view node) {
  node = Trim(node);
  if (node.size() >= 2 && node.front() == '"' && node.back() == '"') node = node.substr(1, node.size() - 2);
  if (!node.empty() && node.front() == '[') {
    const auto close = node.find(']');
    return close == std::string_view::npos ? std::string_view() : node.substr(1, close - 1);
  }
  // One colon: IPv4 with a port; more: a bare IPv6 address.
  if (std::count(node.begin(), node.end(), ':') == 1) node = node.substr(0, node.find(':'));
  return node;
}

std::vector<std::string_view> SplitCommas(std::string_view list) {
  std::vector<std::string_view> out;
  while (!list.empty()) {
    const auto comma = list.find(',');
    out.push_back(Trim(list.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

// The value of `name=` in one element of Forwarded (`for=1.2.3.4;proto=https`), or empty.
std::string_view ForwardedParam(std::string_view element, std::string_view name) {
  while (!element.empty()) {
    const auto semi = element.find(';');
    const std::string_view pair = Trim(element.substr(0, semi));
    const auto eq = pair.find('=');
    if (eq != std::string_view::npos && EqualsIgnoringCase(Trim(pair.substr(0, eq)), name)) return Trim(pair.substr(eq + 1));
    if (semi == std::string_view::npos) break;
    element.remove_prefix(semi + 1);
  }
  return {};
}

}  // namespace

std::optional<TrustedProxies> TrustedProxies::Parse(std::string_view list, std::string& error) {
  TrustedProxies out;
  for (std::string_view entry : SplitCommas(list)) {
    if (entry.empty()) continue;
    const auto slash = entry.find('/');
    const auto ip = ParseIp(entry.substr(0, slash));
    if (!ip) {
      error = "--trusted-proxies: " + std::string(entry) + " is not an IP address or CIDR block";
      return std::nullopt;
    }
    Block block{*ip, 128};
    if (slash != std::string_view::npos) {
      const std::string bits(entry.substr(slash + 1));
      const int max = IsMappedV4(*ip) ? 32 : 128;
      char* end = nullptr;
      const long n = std::strtol(bits.c_str(), &end, 10);
      if (bits.empty() || *end != '\0' || n < 0 || n > max) {
        error = "--trusted-proxies: " + std::string(entry) + " has no valid prefix length";
        return std::nullopt;
      }
      block.prefix = static_cast<int>(n) + (IsMappedV4(*ip) ? 96 : 0);
    }
    out.blocks_.push_back(block);
  }
  return out;
}

bool TrustedProxies::Trusts(std::string_view ip) const {
  if (blocks_.empty()) return false;
  const auto address = ParseIp(ip);
  if (!address) return false;
  for (const Block& b : blocks_) {
    int bits = b.prefix;
    bool match = true;
    for (int i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
      const std::uint8_t mask = bits >= 8 ? 0xff : static_cast<std::uint8_t>(0xff << (8 - bits));
      if (((*address)[i] & mask) != (b.address[i] & mask)) {
        match = false;
        break;
      }
    }
    if (match) return true;
  }
  return false;
}

std::string TrustedProxies::ClientAddress(std::string_view peer, std::string_view forwarded,
                                          std::string_view x_forwarded_for) const {
  if (!Trusts(peer)) return std::string(peer);
  std::vector<std::string_view> chain;
  if (!forwarded.empty()) {
    for (auto element : SplitCommas(forwarded)) chain.push_back(NodeAddress(ForwardedParam(element, "for")));
  } else {
    for (auto node : SplitCommas(x_forwarded_for)) chain.push_back(NodeAddress(node));
  }
  std::string client(peer);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (!ParseIp(*it)) break;  // `unknown`, an obfuscated name, garbage: no further back
    client = std::string(*it);
    if (!Trusts(*it)) break;
  }
  return client;
}

bool TrustedProxies::ClientUsedHttps(std::string_view peer, std::string_view forwarded, std::string_view x_forwarded_proto) const {
  if (!Trusts(peer)) return false;
  std::string_view proto;
  if (!forwarded.empty()) {
    const auto elements = SplitCommas(forwarded);
    proto = elements.empty() ? std::string_view() : ForwardedParam(elements.back(), "proto");
  } else {
    const auto values = SplitCommas(x_forwarded_proto);
    proto = values.empty() ? std::string_view() : values.back();
  }
  if (proto.size() >= 2 && proto.front() == '"' && proto.back() == '"') proto = proto.substr(1, proto.size() - 2);
  return EqualsIgnoringCase(proto, "https");
}

}  // namespace crmd::http
