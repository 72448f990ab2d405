// Failure-path tests of the TCP transport: size mismatch, lost peers, deadlines, abort,
// cancelled requests, and hostile or broken connections.
#include <gtest/gtest.h>

#include <cstring>

#include "transport/tcp/test_world.h"

namespace chorus::tcp::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kWaitMs = 10000;

bool contains(const Status& st, const std::string& s) {
  return st.message().find(s) != std::string::npos;
}

class SizeMismatch : public ::testing::TestWithParam<std::size_t> {};

TEST_P(SizeMismatch, FailsWithDesyncNamingBothSizes) {
  const std::size_t sent = GetParam(), expected = sent / 2;
  auto w = make_world(2);
  auto msg = pattern(sent, 1);
  std::vector<std::uint8_t> got(expected);
  Tag tag{1, 33, 2};
  auto r = w[1]->post_recv(0, tag, got.data(), expected);
  auto s = w[0]->post_send(1, tag, msg.data(), sent);
  ASSERT_TRUE(r.has_value() && s.has_value());
  Status st = transport::wait_one(*w[1], r->get(), in_ms(kWaitMs));
  EXPECT_EQ(st.code(), ErrorCode::kDesync) << st.to_string();
  EXPECT_TRUE(contains(st, std::to_string(sent)) && contains(st, std::to_string(expected)) &&
              contains(st, "seq 33"))
      << st.message();
  Status ss = transport::wait_one(*w[0], s->get(), in_ms(kWaitMs));
  if (sent > (64 << 10)) {
    EXPECT_EQ(ss.code(), ErrorCode::kDesync) << ss.to_string();
  }
  // The connection stays usable.
  char a = 'x', b = 0;
  std::thread t([&] { EXPECT_TRUE(transport::send(*w[0], 1, Tag{2}, &a, 1, in_ms(kWaitMs)).is_ok()); });
  EXPECT_TRUE(transport::recv(*w[1], 0, Tag{2}, &b, 1, in_ms(kWaitMs)).is_ok());
  t.join();
  EXPECT_EQ(b, 'x');
}

INSTANTIATE_TEST_SUITE_P(EagerAndRendezvous, SizeMismatch, ::testing::Values(1000, 1 << 20));

TEST(TcpFailure, PeerDestroyedFailsPendingAndLaterRequests) {
  auto w = make_world(3);
  std::vector<std::uint8_t> small(10), big(1 << 20);
  auto r = w[1]->post_recv(0, Tag{1}, small.data(), small.size());
  auto s = w[1]->post_send(0, Tag{2}, big.data(), big.size());  // waits for a CTS that never comes
  ASSERT_TRUE(r.has_value() && s.has_value());
  std::thread killer([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    w[0].reset();
  });
  auto t0 = Clock::now();
  Status st = transport::wait_one(*w[1], r->get(), in_ms(kWaitMs));
  killer.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(st.code(), ErrorCode::kPeerLost) << st.to_string();
  EXPECT_EQ(st.peer(), 0);
  EXPECT_TRUE(contains(st, "peer rank 0 (127.0.0.1:")) << st.message();
  EXPECT_EQ(transport::wait_one(*w[1], s->get(), in_ms(kWaitMs)).code(), ErrorCode::kPeerLost);
  EXPECT_EQ(w[1]->post_recv(0, Tag{3}, small.data(), 1).status().code(), ErrorCode::kPeerLost);
  // Rank 2 is unaffected.
  char a = 'y', b = 0;
  std::thread t([&] { EXPECT_TRUE(transport::send(*w[2], 1, Tag{4}, &a, 1, in_ms(kWaitMs)).is_ok()); });
  EXPECT_TRUE(transport::recv(*w[1], 2, Tag{4}, &b, 1, in_ms(kWaitMs)).is_ok());
  t.join();
}

TEST(TcpFailure, RequestMayOutliveItsTransport) {
  auto w = make_world(2);
  char b;
  auto r = w[0]->post_recv(1, Tag{1}, &b, 1);
  ASSERT_TRUE(r.has_value());
  w[0].reset();
  EXPECT_TRUE((*r)->done());
  EXPECT_FALSE((*r)->status().is_ok());
}

TEST(TcpFailure, DeadlineNamesPeerAndTagAndRequestStaysValid) {
  auto w = make_world(2);
  std::vector<std::uint8_t> got(100);
  auto r = w[1]->post_recv(0, Tag{5, 77, 3}, got.data(), got.size());
  ASSERT_TRUE(r.has_value());
  auto t0 = Clock::now();
  Status st = transport::wait_one(*w[1], r->get(), in_ms(200));
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
  EXPECT_EQ(st.code(), ErrorCode::kTimeout);
  EXPECT_EQ(st.peer(), 0);
  EXPECT_TRUE(contains(st, "peer rank 0") && contains(st, "comm 5 seq 77 step 3")) << st.message();
  auto msg = pattern(100, 3);
  EXPECT_TRUE(transport::send(*w[0], 1, Tag{5, 77, 3}, msg.data(), 100, in_ms(kWaitMs)).is_ok());
  EXPECT_TRUE(transport::wait_one(*w[1], r->get(), in_ms(kWaitMs)).is_ok());
  EXPECT_TRUE(got == msg);
}

TEST(TcpFailure, AbortFromAnotherThreadWakesAllWaiters) {
  auto w = make_world(2);
  char a, b;
  auto ra = w[1]->post_recv(0, Tag{1}, &a, 1);
  auto rb = w[1]->post_recv(0, Tag{2}, &b, 1);
  ASSERT_TRUE(ra.has_value() && rb.has_value());
  Clock::time_point aborted_at;
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    aborted_at = Clock::now();
    w[1]->abort(Status(ErrorCode::kAborted, "test abort"));
  });
  Status sa, sb;
  Clock::time_point ta, tb;
  std::thread t2([&] {
    sb = transport::wait_one(*w[1], rb->get(), in_ms(kWaitMs));
    tb = Clock::now();
  });
  sa = transport::wait_one(*w[1], ra->get(), in_ms(kWaitMs));
  ta = Clock::now();
  aborter.join();
  t2.join();
  EXPECT_EQ(sa.code(), ErrorCode::kAborted);
  EXPECT_EQ(sb.code(), ErrorCode::kAborted);
  EXPECT_EQ(sa.message(), "test abort");
  EXPECT_LT(ta - aborted_at, std::chrono::milliseconds(100));
  EXPECT_LT(tb - aborted_at, std::chrono::milliseconds(100));
  EXPECT_TRUE((*ra)->done());
  EXPECT_EQ((*ra)->status().code(), ErrorCode::kAborted);
  EXPECT_EQ(w[1]->post_send(0, Tag{3}, &a, 1).status().code(), ErrorCode::kAborted);
  // The peer learns at once, from rank 1's abort frame.
  auto r0 = w[0]->post_recv(1, Tag{9}, &a, 1);
  ASSERT_TRUE(r0.has_value());
  Status s0 = transport::wait_one(*w[0], r0->get(), in_ms(2000));
  EXPECT_EQ(s0.code(), ErrorCode::kAborted) << s0.to_string();
  EXPECT_EQ(s0.message(), "rank 1 reports: test abort");
  EXPECT_EQ(s0.peer(), 1);
}

// The receiver gives up on a rendezvous message mid-stream; the rest is discarded and
// the next message on the same connection arrives intact.
TEST(TcpFailure, CancelledRecvMidStreamIsDiscarded) {
  auto w = make_world(2);
  const std::size_t big = 32 << 20;
  auto a = pattern(big, 1), b = pattern(1000, 2);
  auto sa = w[0]->post_send(1, Tag{1}, a.data(), big);
  auto sb = w[0]->post_send(1, Tag{2}, b.data(), b.size());
  ASSERT_TRUE(sa.has_value() && sb.has_value());
  std::thread sender([&] {
    transport::Request* reqs[2] = {sa->get(), sb->get()};
    Status st = w[0]->wait(reqs, in_ms(kWaitMs));
    EXPECT_TRUE(st.is_ok()) << st.to_string();
    char c = 'c';  // rank 1 drives progress (draining A) until this arrives
    EXPECT_TRUE(transport::send(*w[0], 1, Tag{3}, &c, 1, in_ms(kWaitMs)).is_ok());
  });
  {
    auto buf = std::make_unique<std::vector<std::uint8_t>>(big);
    auto ra = w[1]->post_recv(0, Tag{1}, buf->data(), big);
    ASSERT_TRUE(ra.has_value());
    // Drive progress until the payload has started arriving (the recv is matched).
    auto t0 = Clock::now();
    while (std::memcmp(buf->data(), a.data(), 8) != 0 && Clock::now() - t0 < std::chrono::seconds(5))
      (void)transport::wait_one(*w[1], ra->get(), in_ms(1));
    ra->reset();
    buf.reset();  // the engine must not write here any more
  }
  std::vector<std::uint8_t> got(1000);
  EXPECT_TRUE(transport::recv(*w[1], 0, Tag{2}, got.data(), got.size(), in_ms(kWaitMs)).is_ok());
  EXPECT_TRUE(got == b);
  char c = 0;
  EXPECT_TRUE(transport::recv(*w[1], 0, Tag{3}, &c, 1, in_ms(kWaitMs)).is_ok());
  EXPECT_EQ(c, 'c');
  sender.join();
}

// A cancelled send (before or after its RTS left) keeps the stream well formed.
TEST(TcpFailure, CancelledSendKeepsStreamUsable) {
  auto w = make_world(2);
  auto a = pattern(1 << 20, 1), b = pattern(100, 2), c = pattern(50, 3);
  {
    auto sa = w[0]->post_send(1, Tag{1}, a.data(), a.size());
    auto sc = w[0]->post_send(1, Tag{3}, c.data(), c.size());
    ASSERT_TRUE(sa.has_value() && sc.has_value());
  }
  std::vector<std::uint8_t> got(100);
  std::thread sender([&] { EXPECT_TRUE(transport::send(*w[0], 1, Tag{2}, b.data(), 100, in_ms(kWaitMs)).is_ok()); });
  EXPECT_TRUE(transport::recv(*w[1], 0, Tag{2}, got.data(), 100, in_ms(kWaitMs)).is_ok());
  sender.join();
  EXPECT_TRUE(got == b);
}

TEST(TcpFailure, ReplacedRecvGetsTheMessage) {
  auto w = make_world(2);
  auto msg = pattern(1 << 20, 4);
  std::vector<std::uint8_t> first(msg.size()), second(msg.size());
  {
    auto r = w[1]->post_recv(0, Tag{1}, first.data(), first.size());
    ASSERT_TRUE(r.has_value());
  }
  auto r = w[1]->post_recv(0, Tag{1}, second.data(), second.size());
  ASSERT_TRUE(r.has_value());
  std::thread sender([&] { EXPECT_TRUE(transport::send(*w[0], 1, Tag{1}, msg.data(), msg.size(), in_ms(kWaitMs)).is_ok()); });
  EXPECT_TRUE(transport::wait_one(*w[1], r->get(), in_ms(kWaitMs)).is_ok());
  sender.join();
  EXPECT_TRUE(second == msg);
  EXPECT_TRUE(first == std::vector<std::uint8_t>(msg.size(), 0));
}

}  // namespace
}  // namespace chorus::tcp::testing

namespace chorus::tcp::testing {
namespace {

// set_progress reaches the peer in the next frame header, and the bye frame of a closing
// transport carries the final value, so a lost peer's last completed seq is known.
TEST(TcpProgress, PeerLearnsProgressFromFramesAndTheByeOnClose) {
  auto w = make_world(2);
  EXPECT_EQ(w[0]->peer_progress(1), -1);  // nothing heard yet
  char a = 'x', b = 0;
  w[1]->set_progress(4);
  std::thread t([&] { EXPECT_TRUE(transport::send(*w[1], 0, Tag{1}, &a, 1, in_ms(kWaitMs)).is_ok()); });
  ASSERT_TRUE(transport::recv(*w[0], 1, Tag{1}, &b, 1, in_ms(kWaitMs)).is_ok());
  t.join();
  EXPECT_EQ(w[0]->peer_progress(1), 4);
  EXPECT_EQ(w[0]->peer_progress(0), -1);  // itself
  EXPECT_EQ(w[0]->peer_progress(7), -1);  // out of range
  w[1]->set_progress(9);  // completed later operations without sending anything
  w[1].reset();
  Status st = transport::recv(*w[0], 1, Tag{2}, &b, 1, in_ms(kWaitMs));
  EXPECT_EQ(st.code(), ErrorCode::kPeerLost) << st.to_string();
  EXPECT_EQ(w[0]->peer_progress(1), 9);
}

}  // namespace
}  // namespace chorus::tcp::testing
