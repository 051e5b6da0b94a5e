// Issue 35, behind a proxy: the client's address and scheme are taken from the forwarding headers
// of trusted peers only, and a client cannot choose its address by sending the headers itself.
#include "http/trusted_proxies.hpp"

#include <gtest/gtest.h>

namespace crmd::http {
namespace {

TrustedProxies Trust(std::string_view list) {
  std::string error;
  auto parsed = TrustedProxies::Parse(list, error);
  EXPECT_TRUE(parsed) << error;
  return parsed ? *parsed : TrustedProxies{};
}

TEST(TrustedProxiesTest, BlocksOfBothFamiliesAndSingleAddresses) {
  const auto t = Trust("10.0.0.0/8, 192.168.1.7,fd00::/8");
  EXPECT_TRUE(t.Trusts("10.200.3.4"));
  EXPECT_TRUE(t.Trusts("::ffff:10.1.2.3"));  // an IPv4 peer on a dual-stack socket
  EXPECT_TRUE(t.Trusts("192.168.1.7"));
  EXPECT_FALSE(t.Trusts("192.168.1.8"));
  EXPECT_TRUE(t.Trusts("fd12::1"));
  EXPECT_FALSE(t.Trusts("11.0.0.1"));
  EXPECT_FALSE(t.Trusts("not an address"));
  EXPECT_FALSE(Trust("").Trusts("127.0.0.1"));
}

TEST(TrustedProxiesTest, WrongEntriesAreRefusedInWords) {
  std::string error;
  EXPECT_FALSE(TrustedProxies::Parse("10.0.0.0/33", error));
  EXPECT_NE(error.find("10.0.0.0/33"), std::string::npos);
  EXPECT_FALSE(TrustedProxies::Parse("proxy.example", error));
  EXPECT_FALSE(TrustedProxies::Parse("::/129", error));
  EXPECT_FALSE(TrustedProxies::Parse("10.0.0.0/x", error));
}

TEST(TrustedProxiesTest, TheClientIsTheFirstUntrustedHopFromTheRight) {
  const auto t = Trust("127.0.0.1,10.0.0.0/8");
  EXPECT_EQ(t.ClientAddress("127.0.0.1", "", "203.0.113.9"), "203.0.113.9");
  // A client's own X-Forwarded-For is to the left of what the proxy appends: it is not believed.
  EXPECT_EQ(t.ClientAddress("127.0.0.1", "", "1.1.1.1, 203.0.113.9"), "203.0.113.9");
  EXPECT_EQ(t.ClientAddress("127.0.0.1", "", "203.0.113.9, 10.1.1.1"), "203.0.113.9");  // two trusted hops
  EXPECT_EQ(t.ClientAddress("127.0.0.1", "", "10.2.2.2, 10.1.1.1"), "10.2.2.2");       // proxies all the way
  EXPECT_EQ(t.ClientAddress("127.0.0.1", "", "garbage, 203.0.113.9"), "203.0.113.9");
  EXPECT_EQ(t.ClientAddress("127.0.0.1", "", "unknown"), "127.0.0.1");
  EXPECT_EQ(t.ClientAddress("127.0.0.1", "", ""), "127.0.0.1");
}

TEST(TrustedProxiesTest, AnUntrustedPeerIsTheClientWhateverItSends) {
  const auto t = Trust("10.0.0.0/8");
  EXPECT_EQ(t.ClientAddress("203.0.113.9", "for=1.2.3.4", "1.2.3.4"), "203.0.113.9");
  EXPECT_FALSE(t.ClientUsedHttps("203.0.113.9", "proto=https", "https"));
}

TEST(TrustedProxiesTest, ForwardedIsReadBeforeXForwardedFor) {
  const auto t = Trust("10.0.0.1");
  EXPECT_EQ(t.ClientAddress("10.0.0.1", "for=192.0.2.60;proto=https;by=10.0.0.1", "5.5.5.5"), "192.0.2.60");
  EXPECT_EQ(t.ClientAddress("10.0.0.1", "For=\"[2001:db8:cafe::17]:4711\"", ""), "2001:db8:cafe::17");
  EXPECT_EQ(t.ClientAddress("10.0.0.1", "for=192.0.2.43:8080, for=10.0.0.1", ""), "192.0.2.43");
  EXPECT_TRUE(t.ClientUsedHttps("10.0.0.1", "for=192.0.2.60;proto=https", ""));
  EXPECT_FALSE(t.ClientUsedHttps("10.0.0.1", "for=192.0.2.60;proto=http", "https"));
}

TEST(TrustedProxiesTest, TheSchemeIsTheNearestHopsWord) {
  const auto t = Trust("127.0.0.1");
  EXPECT_TRUE(t.ClientUsedHttps("127.0.0.1", "", "https"));
  EXPECT_TRUE(t.ClientUsedHttps("127.0.0.1", "", "http, HTTPS"));
  EXPECT_FALSE(t.ClientUsedHttps("127.0.0.1", "", "https, http"));
  EXPECT_FALSE(t.ClientUsedHttps("127.0.0.1", "", ""));
}

}  // namespace
}  // namespace crmd::http
