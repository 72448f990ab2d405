// Mesh set-up and hostile-connection tests: strangers and garbage during set-up, missing
// ranks (timeout naming them), and a peer that sends malformed frames after set-up.
#include "transport/tcp/mesh.h"

#include <gtest/gtest.h>

#include "net/address.h"
#include "net/socket.h"
#include "net/stream_io.h"
#include "transport/tcp/frame.h"
#include "transport/tcp/test_world.h"

namespace chorus::tcp::testing {
namespace {

constexpr std::uint64_t kToken = 0xC0FFEE1234ull;  // world_options' token

UniqueFd connect_to(const std::string& address) {
  auto hp = net::parse_host_port(address);
  EXPECT_TRUE(hp.has_value());
  auto fd = net::connect_tcp(*hp, {}, in_ms(2000));
  EXPECT_TRUE(fd.has_value()) << fd.status().to_string();
  return fd.has_value() ? std::move(*fd) : UniqueFd();
}

void send_header(int fd, const FrameHeader& h) {
  std::uint8_t buf[kFrameHeaderBytes];
  encode_frame(h, buf);
  EXPECT_TRUE(net::send_all(fd, buf, sizeof(buf), in_ms(2000)).is_ok());
}

FrameHeader hello(std::uint64_t token, int rank, int size) {
  FrameHeader h;
  h.kind = FrameKind::kHello;
  h.job_token = token;
  h.arg = static_cast<std::uint64_t>(rank);
  h.tag.seq = static_cast<std::uint64_t>(size);
  return h;
}

// Strangers connect to rank 0's listener before the real peers: garbage, a foreign job
// token, an impossible rank, a silent connection, a truncated hello. The mesh still forms.
TEST(Mesh, StrangersDuringSetupAreDropped) {
  const int n = 3;
  SharedExchange ex(n);
  std::vector<UniqueFd> strangers;
  std::vector<TransportPtr> w(n);
  run_ranks(n, [&](int r) {
    AddressExchange inner = ex.for_rank(r);
    AddressExchange exchange = inner;
    if (r == 0) {
      exchange = [&](const std::string& mine) {
        UniqueFd garbage = connect_to(mine);
        const char junk[] = "GET / HTTP/1.1\r\nHost: x\r\n\r\n0123456789abcdefghijklmnop";
        EXPECT_TRUE(net::send_all(garbage.get(), junk, sizeof(junk), in_ms(1000)).is_ok());
        strangers.push_back(std::move(garbage));
        UniqueFd foreign = connect_to(mine);
        send_header(foreign.get(), hello(kToken + 1, 1, n));
        strangers.push_back(std::move(foreign));
        UniqueFd bad_rank = connect_to(mine);
        send_header(bad_rank.get(), hello(kToken, 7, n));
        strangers.push_back(std::move(bad_rank));
        strangers.push_back(connect_to(mine));  // silent
        UniqueFd truncated = connect_to(mine);
        EXPECT_TRUE(net::send_all(truncated.get(), "CHRS", 4, in_ms(1000)).is_ok());
        truncated.reset();  // closes mid-hello
        return inner(mine);
      };
    }
    auto t = create_tcp_transport(world_options(r, n), exchange);
    ASSERT_TRUE(t.has_value()) << "rank " << r << ": " << t.status().to_string();
    w[r] = std::move(*t);
  });
  run_ranks(n, [&](int r) {
    char out = static_cast<char>('a' + r), in = 0;
    int right = (r + 1) % n, left = (r + n - 1) % n;
    EXPECT_TRUE(transport::send_recv(*w[r], right, Tag{1}, &out, 1, left, Tag{1}, &in, 1,
                                     in_ms(5000)).is_ok());
    EXPECT_EQ(in, 'a' + left);
  });
}

TEST(Mesh, MissingHigherRankTimesOutNamingIt) {
  TcpOptions o = world_options(0, 3);
  o.connect_deadline = in_ms(300);
  auto t = create_tcp_transport(o, [](const std::string& mine) -> Result<std::vector<std::string>> {
    return std::vector<std::string>{mine, "127.0.0.1:1", "127.0.0.1:2"};
  });
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.status().code(), ErrorCode::kTimeout);
  EXPECT_NE(t.status().message().find("ranks not connected: 1, 2"), std::string::npos)
      << t.status().message();
}

TEST(Mesh, UnreachableLowerRankTimesOutNamingIt) {
  int closed_port;
  {
    auto l = net::listen_tcp("127.0.0.1", 0);
    ASSERT_TRUE(l.has_value());
    closed_port = l->port;
  }
  TcpOptions o = world_options(1, 2);
  o.connect_deadline = in_ms(300);
  auto t0 = std::chrono::steady_clock::now();
  auto t = create_tcp_transport(o, [&](const std::string& mine) -> Result<std::vector<std::string>> {
    return std::vector<std::string>{net::format_host_port("127.0.0.1", closed_port), mine};
  });
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  ASSERT_FALSE(t.has_value());
  EXPECT_EQ(t.status().code(), ErrorCode::kTimeout) << t.status().to_string();
  EXPECT_NE(t.status().message().find("ranks not connected: 0"), std::string::npos)
      << t.status().message();
}

// Rank 1 is played by the test: a valid hello, then a hostile frame. Rank 0's pending
// receive from rank 1 fails with kIo; nothing crashes or allocates the claimed length.
class MalformedFrame : public ::testing::TestWithParam<int> {};

TEST_P(MalformedFrame, FailsThatPeerOnly) {
  SharedExchange ex(2);
  TransportPtr t0;
  std::thread real([&] {
    auto t = create_tcp_transport(world_options(0, 2), ex.for_rank(0));
    ASSERT_TRUE(t.has_value()) << t.status().to_string();
    t0 = std::move(*t);
  });
  auto addrs = ex.for_rank(1)("127.0.0.1:1");
  ASSERT_TRUE(addrs.has_value());
  UniqueFd fd = connect_to((*addrs)[0]);
  send_header(fd.get(), hello(kToken, 1, 2));
  real.join();
  ASSERT_TRUE(t0 != nullptr);
  std::vector<std::uint8_t> buf(16);
  auto r = t0->post_recv(1, Tag{1}, buf.data(), buf.size());
  ASSERT_TRUE(r.has_value());
  FrameHeader h;
  h.kind = FrameKind::kEager;
  h.job_token = kToken;
  h.tag = Tag{1};
  h.length = 16;
  switch (GetParam()) {
    case 0: h.magic = 0x12345678; break;
    case 1: h.version = kWireVersion + 1; break;
    case 2: h.job_token = 5; break;
    case 3: h.length = std::uint64_t{1} << 62; break;
    case 4: h.kind = FrameKind::kHello; h.length = 0; break;
    case 5: h.kind = FrameKind::kAbort; h.arg = 99; h.length = 0; break;  // unknown code
    case 6: h.kind = FrameKind::kAbort; h.arg = 3; h.length = 4096; break;  // reason too long
  }
  send_header(fd.get(), h);
  Status st = transport::wait_one(*t0, r->get(), in_ms(5000));
  EXPECT_EQ(st.code(), ErrorCode::kIo) << st.to_string();
  EXPECT_EQ(st.peer(), 1);
  EXPECT_NE(st.message().find("malformed"), std::string::npos) << st.message();
}

INSTANTIATE_TEST_SUITE_P(Kinds, MalformedFrame, ::testing::Range(0, 7));

}  // namespace
}  // namespace chorus::tcp::testing
