// Receiver ready (rtr/put, docs/WIRE.md) on the wire: the test plays rank 1 of a world of
// two against a real rank 0 and checks each frame rank 0 writes and how it takes the
// frames written to it: a posted large receive is announced by an rtr and completed by a
// put; an rts that crosses the rtr still completes by cts/data; a withdrawn receive
// cancels its rtr; a send finding the peer's rtr goes out as a put at once, and one whose
// size differs from the rtr goes out as an rts.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <thread>

#include "net/address.h"
#include "net/socket.h"
#include "net/stream_io.h"
#include "transport/tcp/frame.h"
#include "transport/tcp/test_world.h"

namespace chorus::tcp::testing {
namespace {

constexpr std::uint64_t kToken = 0xC0FFEE1234ull;  // world_options' token
constexpr std::size_t kBig = 256 << 10;           // above the default eager limit

// Rank 0 real, rank 1 played through `fd`.
struct FakePeer {
  TransportPtr real;
  UniqueFd fd;

  FakePeer() {
    SharedExchange ex(2);
    std::thread t([&] {
      auto r = create_tcp_transport(world_options(0, 2), ex.for_rank(0));
      EXPECT_TRUE(r.has_value()) << r.status().to_string();
      if (r.has_value()) real = std::move(*r);
    });
    auto addrs = ex.for_rank(1)("127.0.0.1:1");
    EXPECT_TRUE(addrs.has_value());
    auto hp = net::parse_host_port((*addrs)[0]);
    auto c = net::connect_tcp(*hp, {}, in_ms(2000));
    EXPECT_TRUE(c.has_value()) << c.status().to_string();
    fd = std::move(*c);
    FrameHeader h;
    h.kind = FrameKind::kHello;
    h.job_token = kToken;
    h.arg = 1;
    h.tag.seq = 2;
    write(h);
    t.join();
  }

  void write(const FrameHeader& h, const void* payload = nullptr, std::size_t n = 0) {
    std::uint8_t buf[kFrameHeaderBytes];
    encode_frame(h, buf);
    ASSERT_TRUE(net::send_all(fd.get(), buf, sizeof(buf), in_ms(2000)).is_ok());
    if (n > 0) {
      ASSERT_TRUE(net::send_all(fd.get(), payload, n, in_ms(2000)).is_ok());
    }
  }
  void read_exact(void* out, std::size_t n) {
    auto* p = static_cast<std::uint8_t*>(out);
    const Deadline d = in_ms(5000);
    while (n > 0 && !d.expired()) {
      pollfd pfd{fd.get(), POLLIN, 0};
      ::poll(&pfd, 1, 100);
      ssize_t k = ::recv(fd.get(), p, n, MSG_DONTWAIT);
      if (k > 0) {
        p += k;
        n -= static_cast<std::size_t>(k);
      } else if (k == 0) {
        break;
      }
    }
    ASSERT_EQ(n, 0u) << "rank 0 wrote less than expected";
  }
  // The next frame rank 0 writes, skipping nothing.
  FrameHeader next() {
    std::uint8_t buf[kFrameHeaderBytes] = {};
    read_exact(buf, sizeof(buf));
    FrameHeader h = decode_frame(buf);
    EXPECT_TRUE(validate_frame(h, kToken, 64 << 10).is_ok());
    return h;
  }
};

FrameHeader frame(FrameKind kind, Tag tag, std::uint64_t length, std::uint64_t arg) {
  FrameHeader h;
  h.kind = kind;
  h.job_token = kToken;
  h.tag = tag;
  h.length = length;
  h.arg = arg;
  return h;
}

TEST(ReceiverReady, PostedLargeReceiveIsAnnouncedAndCompletedByAPut) {
  FakePeer f;
  ASSERT_TRUE(f.real);
  const Tag tag{5, 3, 1};
  std::vector<std::uint8_t> got(kBig), want = pattern(kBig, 11);
  auto r = f.real->post_recv(1, tag, got.data(), kBig);
  ASSERT_TRUE(r.has_value());
  const FrameHeader rtr = f.next();
  EXPECT_EQ(rtr.kind, FrameKind::kRtr);
  EXPECT_TRUE(rtr.tag.matches(tag));
  EXPECT_EQ(rtr.length, kBig);
  f.write(frame(FrameKind::kPut, tag, kBig, rtr.arg), want.data(), kBig);
  Status st = transport::wait_one(*f.real, r->get(), in_ms(5000));
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  EXPECT_EQ(got, want);
}

TEST(ReceiverReady, RtsCrossingTheRtrCompletesByCtsAndData) {
  FakePeer f;
  ASSERT_TRUE(f.real);
  const Tag tag{5, 4, 0};
  std::vector<std::uint8_t> got(kBig), want = pattern(kBig, 12);
  auto r = f.real->post_recv(1, tag, got.data(), kBig);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(f.next().kind, FrameKind::kRtr);
  f.write(frame(FrameKind::kRts, tag, kBig, 77));  // as if sent before the rtr arrived
  std::thread waiter([&] {
    Status st = transport::wait_one(*f.real, r->get(), in_ms(5000));
    EXPECT_TRUE(st.is_ok()) << st.to_string();
  });
  const FrameHeader cts = f.next();
  EXPECT_EQ(cts.kind, FrameKind::kCts);
  EXPECT_EQ(cts.arg, 77u);
  f.write(frame(FrameKind::kData, tag, kBig, 77), want.data(), kBig);
  waiter.join();
  EXPECT_EQ(got, want);
}

TEST(ReceiverReady, WithdrawnReceiveCancelsItsRtrAndALatePutIsDiscarded) {
  FakePeer f;
  ASSERT_TRUE(f.real);
  const Tag tag{5, 5, 0};
  std::vector<std::uint8_t> got(kBig, 0), late = pattern(kBig, 13);
  auto r = f.real->post_recv(1, tag, got.data(), kBig);
  ASSERT_TRUE(r.has_value());
  const FrameHeader rtr = f.next();
  ASSERT_EQ(rtr.kind, FrameKind::kRtr);
  r->reset();  // cancel
  f.real->poke();
  const FrameHeader cancel = f.next();
  EXPECT_EQ(cancel.kind, FrameKind::kCancel);
  EXPECT_TRUE(cancel.tag.matches(tag));
  EXPECT_EQ(cancel.arg, rtr.arg);
  // A put already on its way is read and dropped; the stream stays usable.
  f.write(frame(FrameKind::kPut, tag, kBig, rtr.arg), late.data(), kBig);
  std::uint8_t small = 0, one = 42;
  auto r2 = f.real->post_recv(1, Tag{5, 6, 0}, &small, 1);
  ASSERT_TRUE(r2.has_value());
  f.write(frame(FrameKind::kEager, Tag{5, 6, 0}, 1, 0), &one, 1);
  EXPECT_TRUE(transport::wait_one(*f.real, r2->get(), in_ms(5000)).is_ok());
  EXPECT_EQ(small, 42);
  EXPECT_EQ(got, std::vector<std::uint8_t>(kBig, 0));
}

TEST(ReceiverReady, SendAfterTheRtrGoesAsAPutAndAMismatchedOneAsAnRts) {
  FakePeer f;
  ASSERT_TRUE(f.real);
  const Tag fits{5, 7, 0}, other{5, 8, 0};
  std::vector<std::uint8_t> data = pattern(kBig, 14);
  f.write(frame(FrameKind::kRtr, fits, kBig, 9));
  f.write(frame(FrameKind::kRtr, other, kBig + 8, 10));  // expects another size
  f.real->poke();  // loopback: both rtrs are in rank 0's socket already; read them
  auto s = f.real->post_send(1, fits, data.data(), kBig);
  ASSERT_TRUE(s.has_value());
  const FrameHeader put = f.next();
  EXPECT_EQ(put.kind, FrameKind::kPut);
  EXPECT_EQ(put.arg, 9u);
  EXPECT_EQ(put.length, kBig);
  std::vector<std::uint8_t> body(kBig);
  f.read_exact(body.data(), kBig);
  EXPECT_EQ(body, data);
  EXPECT_TRUE(transport::wait_one(*f.real, s->get(), in_ms(5000)).is_ok());
  auto s2 = f.real->post_send(1, other, data.data(), kBig);
  ASSERT_TRUE(s2.has_value());
  const FrameHeader rts = f.next();
  EXPECT_EQ(rts.kind, FrameKind::kRts);
  EXPECT_EQ(rts.length, kBig);
}

}  // namespace
}  // namespace chorus::tcp::testing
