// Addresses: "host:port" round trips (IPv6 in brackets), malformed addresses rejected with
// kInvalidArgument naming them, interface lookup, the local address of a socket.
#include "net/address.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "net/socket.h"

namespace chorus::net {
namespace {

TEST(NetAddress, ParsesHostPort) {
  auto a = parse_host_port("10.0.0.1:80");
  ASSERT_TRUE(a.has_value()) << a.status().to_string();
  EXPECT_EQ(a->host, "10.0.0.1");
  EXPECT_EQ(a->port, 80);
  auto b = parse_host_port("[::1]:9");
  ASSERT_TRUE(b.has_value()) << b.status().to_string();
  EXPECT_EQ(b->host, "::1");
  EXPECT_EQ(b->port, 9);
  auto c = parse_host_port("example.com:65535");
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_EQ(c->host, "example.com");
  EXPECT_EQ(c->port, 65535);
}

TEST(NetAddress, FormatAndParseRoundTrip) {
  EXPECT_EQ(format_host_port("10.0.0.1", 80), "10.0.0.1:80");
  EXPECT_EQ(format_host_port("::1", 9), "[::1]:9");
  const std::pair<const char*, int> cases[] = {
      {"10.0.0.1", 80}, {"::1", 9}, {"fe80::1", 65535}, {"::ffff:10.0.0.1", 1}, {"node-7", 29500}};
  for (const auto& [host, port] : cases) {
    const std::string text = format_host_port(host, port);
    auto hp = parse_host_port(text);
    ASSERT_TRUE(hp.has_value()) << text << ": " << hp.status().to_string();
    EXPECT_EQ(hp->host, host) << text;
    EXPECT_EQ(hp->port, port) << text;
  }
}

TEST(NetAddress, MalformedAddressesAreInvalidArguments) {
  for (const char* bad : {"", "nohost", "h:", "h:99999", "h:65536", "h:0", "h:-1", "h:8x", ":80",
                          "::1:80", "[::1]80", "[::1]:", "[]:80", "[::1:80"}) {
    auto r = parse_host_port(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << bad;
    EXPECT_NE(r.status().message().find(std::string("'") + bad + "' is not host:port"),
              std::string::npos)
        << r.status().message();
  }
}

TEST(NetAddress, LoopbackIsLocalhostAndUnknownNamesAreListed) {
  auto lo = interface_ipv4("lo");
  ASSERT_TRUE(lo.has_value()) << lo.status().to_string();
  EXPECT_EQ(*lo, "127.0.0.1");
  const auto names = ipv4_interfaces();
  EXPECT_NE(std::find(names.begin(), names.end(), "lo"), names.end());
  auto bogus = interface_ipv4("nosuchif0");
  ASSERT_FALSE(bogus.has_value());
  EXPECT_EQ(bogus.status().code(), ErrorCode::kInvalidArgument);
  const std::string m = bogus.status().message();
  EXPECT_NE(m.find("CHORUS_SOCKET_IFNAME"), std::string::npos) << m;
  EXPECT_NE(m.find("nosuchif0"), std::string::npos) << m;
  const std::size_t listed = m.find("interfaces present: ");
  ASSERT_NE(listed, std::string::npos) << m;
  EXPECT_NE(m.find("lo", listed), std::string::npos) << m;
}

TEST(NetAddress, LocalAddressOfASocket) {
  auto l = listen_tcp("127.0.0.1", 0);
  ASSERT_TRUE(l.has_value()) << l.status().to_string();
  EXPECT_EQ(local_ip(l->fd.get()), "127.0.0.1");
  auto port = local_port(l->fd.get());
  ASSERT_TRUE(port.has_value()) << port.status().to_string();
  EXPECT_EQ(*port, l->port);
  EXPECT_EQ(local_ip(-1), "");
  EXPECT_EQ(local_port(-1).status().code(), ErrorCode::kIo);
}

}  // namespace
}  // namespace chorus::net
