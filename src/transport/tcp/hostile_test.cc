// Hostile input on the TCP transport's listening ports: strangers that connect to every
// rank's listener during set-up with garbage, truncated frames, huge lengths, a wrong
// version or a foreign job token are dropped with a WARN and the job forms and works;
// after set-up the listeners are closed (nothing left to attack); a fake rank sending a
// malformed frame after set-up fails only itself. Also the interface binding
// (CHORUS_SOCKET_IFNAME): a world bound through TcpOptions::interface_name (interface_ipv4
// itself is tested in src/net/address_test.cc).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <mutex>

#include "net/address.h"
#include "net/socket.h"
#include "net/stream_io.h"
#include "transport/tcp/frame.h"
#include "transport/tcp/handshake.h"
#include "transport/tcp/test_world.h"

namespace chorus::tcp::testing {
namespace {

constexpr std::uint64_t kToken = 0xC0FFEE1234ull;  // world_options' token

UniqueFd dial(const std::string& address) {
  auto hp = net::parse_host_port(address);
  EXPECT_TRUE(hp.has_value());
  auto fd = net::connect_tcp(*hp, {}, in_ms(2000));
  EXPECT_TRUE(fd.has_value()) << fd.status().to_string();
  return fd.has_value() ? std::move(*fd) : UniqueFd();
}

void send_bytes(int fd, const void* data, std::size_t n) {
  EXPECT_TRUE(net::send_all(fd, data, n, in_ms(2000)).is_ok());
}

void send_header(int fd, const FrameHeader& h) {
  std::uint8_t buf[kFrameHeaderBytes];
  encode_frame(h, buf);
  send_bytes(fd, buf, sizeof(buf));
}

FrameHeader hello(std::uint64_t token, int rank, int size) {
  FrameHeader h;
  h.kind = FrameKind::kHello;
  h.job_token = token;
  h.arg = static_cast<std::uint64_t>(rank);
  h.tag.seq = static_cast<std::uint64_t>(size);
  return h;
}

// Every rank sends one byte to its right neighbour and checks what its left one sent.
void ring_exchange(std::vector<TransportPtr>& w, std::uint64_t seq) {
  const int n = static_cast<int>(w.size());
  run_ranks(n, [&](int r) {
    char out = static_cast<char>('a' + r + static_cast<int>(seq)), in = 0;
    int right = (r + 1) % n, left = (r + n - 1) % n;
    Tag tag{1, seq};
    EXPECT_TRUE(transport::send_recv(*w[r], right, tag, &out, 1, left, tag, &in, 1, in_ms(5000))
                    .is_ok());
    EXPECT_EQ(in, static_cast<char>('a' + left + static_cast<int>(seq)));
  });
}

// Opens the hostile connections to `address`; they stay open (held in `keep`) unless the
// case closes them itself.
void attack(const std::string& address, int n, std::vector<UniqueFd>& keep) {
  UniqueFd garbage = dial(address);  // an HTTP client
  const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n0123456789abcdefghijklmnopqrstuvwxyz0123";
  send_bytes(garbage.get(), junk, sizeof(junk));
  keep.push_back(std::move(garbage));

  UniqueFd truncated = dial(address);  // half a valid hello, then close
  std::uint8_t buf[kFrameHeaderBytes];
  encode_frame(hello(kToken, n - 1, n), buf);
  send_bytes(truncated.get(), buf, kFrameHeaderBytes / 2);
  truncated.reset();

  UniqueFd huge = dial(address);  // hello claiming a payload of 2^60 bytes
  FrameHeader h = hello(kToken, n - 1, n);
  h.length = std::uint64_t{1} << 60;
  send_header(huge.get(), h);
  keep.push_back(std::move(huge));

  UniqueFd huge_eager = dial(address);  // not a hello at all, and enormous
  h = hello(kToken, n - 1, n);
  h.kind = FrameKind::kEager;
  h.length = ~std::uint64_t{0};
  send_header(huge_eager.get(), h);
  keep.push_back(std::move(huge_eager));

  UniqueFd version = dial(address);  // a future wire version
  h = hello(kToken, n - 1, n);
  h.version = kWireVersion + 1;
  send_header(version.get(), h);
  keep.push_back(std::move(version));

  UniqueFd foreign = dial(address);  // another job's token
  send_header(foreign.get(), hello(kToken ^ 0xFF, n - 1, n));
  keep.push_back(std::move(foreign));

  UniqueFd flood = dial(address);  // 256 KiB of noise
  std::vector<std::uint8_t> noise = pattern(256 << 10, 7);
  (void)::send(flood.get(), noise.data(), noise.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  keep.push_back(std::move(flood));

  keep.push_back(dial(address));  // silent
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t k = 0;
  for (std::size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++k;
  return k;
}

// Every rank's listener is attacked before any real peer connects.
TEST(Hostile, StrangersOnEveryListenerDuringSetupAreDroppedAndLogged) {
  const int n = 3;
  SharedExchange ex(n);
  std::mutex mu;
  std::vector<UniqueFd> strangers;
  std::vector<TransportPtr> w(n);
  ::testing::internal::CaptureStderr();
  run_ranks(n, [&](int r) {
    AddressExchange inner = ex.for_rank(r);
    AddressExchange exchange = [&, inner](const std::string& mine) {
      std::vector<UniqueFd> mine_keep;
      attack(mine, n, mine_keep);
      {
        std::lock_guard<std::mutex> lk(mu);
        for (auto& fd : mine_keep) strangers.push_back(std::move(fd));
      }
      return inner(mine);
    };
    auto t = create_tcp_transport(world_options(r, n), exchange);
    ASSERT_TRUE(t.has_value()) << "rank " << r << ": " << t.status().to_string();
    w[r] = std::move(*t);
  });
  const std::string log = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(w[0] && w[1] && w[2]);
  ring_exchange(w, 1);
  // Rank 0 reads every stranger queued ahead of its real peers (the highest rank accepts
  // nobody, so its strangers are just closed with its listener).
  EXPECT_GE(count(log, "rank 0: dropping"), 6u) << log;
  EXPECT_NE(log.find("rank 0: dropping a connection that closed before its hello"), std::string::npos) << log;
  EXPECT_NE(log.find("unsupported wire version " + std::to_string(kWireVersion + 1)),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("frame from another job"), std::string::npos) << log;
  EXPECT_NE(log.find("hello frame length 1152921504606846976 exceeds"), std::string::npos) << log;
  EXPECT_NE(log.find("bad frame magic"), std::string::npos) << log;
  ring_exchange(w, 2);
}

// After set-up the listening sockets are closed: the advertised ports refuse connections,
// and the world keeps working.
TEST(Hostile, ListenersAreClosedAfterSetup) {
  const int n = 3;
  SharedExchange ex(n);
  std::vector<TransportPtr> w(n);
  run_ranks(n, [&](int r) {
    auto t = create_tcp_transport(world_options(r, n), ex.for_rank(r));
    ASSERT_TRUE(t.has_value()) << t.status().to_string();
    w[r] = std::move(*t);
  });
  ring_exchange(w, 1);
  for (const std::string& a : ex.snapshot()) {
    auto hp = net::parse_host_port(a);
    ASSERT_TRUE(hp.has_value());
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(static_cast<std::uint16_t>(hp->port));
    ASSERT_EQ(::inet_pton(AF_INET, hp->host.c_str(), &sin.sin_addr), 1);
    UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    int rc = ::connect(fd.get(), reinterpret_cast<sockaddr*>(&sin), sizeof(sin));
    EXPECT_EQ(rc, -1) << a << " still accepts connections after set-up";
    EXPECT_EQ(errno, ECONNREFUSED) << a;
  }
  ring_exchange(w, 2);
}

// Rank 2 is played by the test: a valid hello to ranks 0 and 1, then garbage to rank 0.
// Rank 0's receive from rank 2 fails with kIo (logged), ranks 0 and 1 keep working.
TEST(Hostile, MalformedFrameAfterSetupFailsOnlyThatPeer) {
  SharedExchange ex(3);
  std::vector<TransportPtr> w(2);
  std::thread real([&] {
    run_ranks(2, [&](int r) {
      auto t = create_tcp_transport(world_options(r, 3), ex.for_rank(r));
      ASSERT_TRUE(t.has_value()) << t.status().to_string();
      w[r] = std::move(*t);
    });
  });
  auto addrs = ex.for_rank(2)("127.0.0.1:1");
  ASSERT_TRUE(addrs.has_value());
  UniqueFd to0 = dial((*addrs)[0]), to1 = dial((*addrs)[1]);
  send_header(to0.get(), hello(kToken, 2, 3));
  send_header(to1.get(), hello(kToken, 2, 3));
  real.join();
  ASSERT_TRUE(w[0] && w[1]);
  std::vector<TransportPtr> pair;
  pair.push_back(std::move(w[0]));
  pair.push_back(std::move(w[1]));
  ring_exchange(pair, 1);
  std::uint8_t buf[8];
  auto r = pair[0]->post_recv(2, Tag{1, 9}, buf, sizeof(buf));
  ASSERT_TRUE(r.has_value());
  ::testing::internal::CaptureStderr();
  const char junk[kFrameHeaderBytes] = "garbage after a valid hello";
  send_bytes(to0.get(), junk, sizeof(junk));
  Status st = transport::wait_one(*pair[0], r->get(), in_ms(5000));
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(st.code(), ErrorCode::kIo) << st.to_string();
  EXPECT_EQ(st.peer(), 2);
  EXPECT_NE(log.find("sent a malformed frame"), std::string::npos) << log;
  ring_exchange(pair, 2);
  to0.reset();
  to1.reset();
}

TEST(Handshake, ChecksEveryField) {
  EXPECT_EQ(*check_hello(hello(kToken, 2, 3), kToken, 0, 3), 2);
  EXPECT_FALSE(check_hello(hello(kToken, 0, 3), kToken, 0, 3).has_value());  // not higher
  EXPECT_FALSE(check_hello(hello(kToken, 3, 3), kToken, 0, 3).has_value());  // out of range
  EXPECT_FALSE(check_hello(hello(kToken, 2, 4), kToken, 0, 3).has_value());  // other size
  EXPECT_FALSE(check_hello(hello(kToken + 1, 2, 3), kToken, 0, 3).has_value());
  FrameHeader h = hello(kToken, 2, 3);
  h.length = 1;
  EXPECT_EQ(check_hello(h, kToken, 0, 3).status().code(), ErrorCode::kIo);
  h = hello(kToken, 2, 3);
  h.kind = FrameKind::kCts;
  EXPECT_NE(check_hello(h, kToken, 0, 3).status().message().find("expected hello"), std::string::npos);
  std::uint8_t bytes[kFrameHeaderBytes];
  encode_frame(hello(kToken, 1, 2), bytes);
  EXPECT_EQ(*check_hello_bytes(bytes, kToken, 0, 2), 1);
}

// interface_name wins over listen_host (here unusable) and is what peers are told.
TEST(Interface, WorldBindsAndAdvertisesTheNamedInterface) {
  SharedExchange ex(2);
  std::vector<TransportPtr> w(2);
  run_ranks(2, [&](int r) {
    TcpOptions o = world_options(r, 2);
    o.listen_host = "198.51.100.1";  // TEST-NET-2: not ours, bind would fail
    o.interface_name = "lo";
    auto t = create_tcp_transport(o, ex.for_rank(r));
    ASSERT_TRUE(t.has_value()) << t.status().to_string();
    w[r] = std::move(*t);
  });
  for (const std::string& a : ex.snapshot()) EXPECT_EQ(a.rfind("127.0.0.1:", 0), 0u) << a;
  ring_exchange(w, 1);
}

TEST(Interface, WildcardBindAdvertisesTheGivenAddress) {
  SharedExchange ex(2);
  std::vector<TransportPtr> w(2);
  run_ranks(2, [&](int r) {
    TcpOptions o = world_options(r, 2);
    o.listen_host = "0.0.0.0";
    o.advertise_host = "127.0.0.1";
    auto t = create_tcp_transport(o, ex.for_rank(r));
    ASSERT_TRUE(t.has_value()) << t.status().to_string();
    w[r] = std::move(*t);
  });
  for (const std::string& a : ex.snapshot()) EXPECT_EQ(a.rfind("127.0.0.1:", 0), 0u) << a;
  ring_exchange(w, 1);
}

TEST(Interface, UnknownInterfaceFailsSetupWithInvalidArgument) {
  TcpOptions o = world_options(0, 2);
  o.interface_name = "nosuchif0";
  auto t = create_tcp_transport(o, [](const std::string&) -> Result<std::vector<std::string>> {
    ADD_FAILURE() << "exchange must not run";
    return timeout_error("unreachable");
  });
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.status().code(), ErrorCode::kInvalidArgument) << t.status().to_string();
  EXPECT_NE(t.status().message().find("CHORUS_SOCKET_IFNAME"), std::string::npos);
}

}  // namespace
}  // namespace chorus::tcp::testing
