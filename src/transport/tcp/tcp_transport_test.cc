// Data-path tests of the TCP transport: ping-pong across the eager/rendezvous boundary,
// simultaneous large exchanges, rings, unexpected messages, tag matching, concurrency.
#include "transport/tcp/tcp_transport.h"

#include <gtest/gtest.h>

#include "transport/tcp/test_world.h"

namespace chorus::tcp::testing {
namespace {

constexpr int kWaitMs = 10000;

TEST(TcpTransport, SizeOneOpensNothing) {
  TcpOptions o = world_options(0, 1);
  bool called = false;
  auto t = create_tcp_transport(o, [&](const std::string&) -> Result<std::vector<std::string>> {
    called = true;
    return std::vector<std::string>{"x"};
  });
  ASSERT_TRUE(t.has_value()) << t.status().to_string();
  EXPECT_FALSE(called);
  EXPECT_EQ((*t)->size(), 1);
  char b = 0;
  EXPECT_EQ((*t)->post_send(0, Tag{}, &b, 1).status().code(), ErrorCode::kInvalidArgument);
}

TEST(TcpTransport, RejectsSelfAndOutOfRangePeers) {
  auto w = make_world(2);
  char b = 0;
  EXPECT_EQ(w[0]->post_send(0, Tag{}, &b, 1).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(w[0]->post_send(2, Tag{}, &b, 1).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(w[0]->post_recv(-1, Tag{}, &b, 1).status().code(), ErrorCode::kInvalidArgument);
}

class PingPong : public ::testing::TestWithParam<std::size_t> {};

TEST_P(PingPong, BytesArriveIntact) {
  const std::size_t bytes = GetParam();
  auto w = make_world(2);
  run_ranks(2, [&](int r) {
    Transport& t = *w[r];
    for (std::uint32_t round = 0; round < 3; ++round) {
      Tag tag{1, round, 0};
      auto msg = pattern(bytes, round);
      std::vector<std::uint8_t> got(bytes, 0xAA);
      if ((r == 0) == (round % 2 == 0)) {
        EXPECT_TRUE(transport::send(t, 1 - r, tag, msg.data(), bytes, in_ms(kWaitMs)).is_ok());
      } else {
        Status st = transport::recv(t, 1 - r, tag, got.data(), bytes, in_ms(kWaitMs));
        EXPECT_TRUE(st.is_ok()) << st.to_string();
        EXPECT_TRUE(got == msg) << "round " << round;
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Sizes, PingPong,
                         ::testing::Values(0, 1, 100, 64 << 10, (64 << 10) + 1, 1 << 20, 16 << 20));

// Both ranks send 64 MiB to each other at once and wait on the send first: each must
// keep draining its socket while it waits only on a send.
TEST(TcpTransport, SimultaneousLargeExchangeDoesNotDeadlock) {
  const std::size_t bytes = 64 << 20;
  auto w = make_world(2);
  run_ranks(2, [&](int r) {
    auto out = pattern(bytes, r);
    std::vector<std::uint8_t> in(bytes);
    Tag tag{2, 5, 1};
    auto rq = w[r]->post_recv(1 - r, tag, in.data(), bytes);
    auto sq = w[r]->post_send(1 - r, tag, out.data(), bytes);
    ASSERT_TRUE(rq.has_value() && sq.has_value());
    Status st = transport::wait_one(*w[r], sq->get(), in_ms(20000));
    EXPECT_TRUE(st.is_ok()) << st.to_string();
    st = transport::wait_one(*w[r], rq->get(), in_ms(20000));
    EXPECT_TRUE(st.is_ok()) << st.to_string();
    EXPECT_TRUE(in == pattern(bytes, 1 - r));
  });
}

TEST(TcpTransport, RingOfFour) {
  const int n = 4;
  auto w = make_world(n);
  run_ranks(n, [&](int r) {
    for (std::uint32_t step = 0; step < 6; ++step) {
      std::size_t bytes = step % 2 == 0 ? 4096 : (1 << 20) + step;
      auto out = pattern(bytes, r * 100 + step);
      std::vector<std::uint8_t> in(bytes);
      int right = (r + 1) % n, left = (r + n - 1) % n;
      Status st = transport::send_recv(*w[r], right, Tag{3, 1, step}, out.data(), bytes, left,
                                       Tag{3, 1, step}, in.data(), bytes, in_ms(kWaitMs));
      EXPECT_TRUE(st.is_ok()) << st.to_string();
      EXPECT_TRUE(in == pattern(bytes, left * 100 + step)) << "rank " << r << " step " << step;
    }
  });
}

class Unexpected : public ::testing::TestWithParam<std::size_t> {};

// The receive is posted well after the message (or its RTS) arrived.
TEST_P(Unexpected, RecvPostedLate) {
  const std::size_t bytes = GetParam();
  auto w = make_world(2);
  auto msg = pattern(bytes, 9);
  auto s = w[0]->post_send(1, Tag{4, 0, 0}, msg.data(), bytes);
  ASSERT_TRUE(s.has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // Drive rank 1 so the frame is read into its unexpected queue.
  char dummy;
  auto other = w[1]->post_recv(0, Tag{99, 0, 0}, &dummy, 1);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(transport::wait_one(*w[1], other->get(), in_ms(100)).code(), ErrorCode::kTimeout);
  std::vector<std::uint8_t> got(bytes);
  auto r = w[1]->post_recv(0, Tag{4, 0, 0}, got.data(), bytes);
  ASSERT_TRUE(r.has_value());
  std::thread sender([&] { EXPECT_TRUE(transport::wait_one(*w[0], s->get(), in_ms(kWaitMs)).is_ok()); });
  EXPECT_TRUE(transport::wait_one(*w[1], r->get(), in_ms(kWaitMs)).is_ok());
  sender.join();
  EXPECT_TRUE(got == msg);
}

// The receive is posted first.
TEST_P(Unexpected, RecvPostedEarly) {
  const std::size_t bytes = GetParam();
  auto w = make_world(2);
  std::vector<std::uint8_t> got(bytes);
  auto r = w[1]->post_recv(0, Tag{4, 0, 1}, got.data(), bytes);
  ASSERT_TRUE(r.has_value());
  auto msg = pattern(bytes, 10);
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(transport::send(*w[0], 1, Tag{4, 0, 1}, msg.data(), bytes, in_ms(kWaitMs)).is_ok());
  });
  EXPECT_TRUE(transport::wait_one(*w[1], r->get(), in_ms(kWaitMs)).is_ok());
  sender.join();
  EXPECT_TRUE(got == msg);
}

INSTANTIATE_TEST_SUITE_P(EagerAndRendezvous, Unexpected, ::testing::Values(512, 4 << 20));

TEST(TcpTransport, OutOfOrderTagsMatch) {
  auto w = make_world(2);
  const int k = 10;
  std::vector<std::vector<std::uint8_t>> msgs;
  for (int i = 0; i < k; ++i) msgs.push_back(pattern(i % 2 ? 1000 + i : (200 << 10) + i, i));
  run_ranks(2, [&](int r) {
    std::vector<transport::RequestPtr> reqs;
    std::vector<std::vector<std::uint8_t>> got(k);
    for (int i = 0; i < k; ++i) {
      int j = r == 0 ? i : k - 1 - i;  // receiver posts in reverse order
      Tag tag{5, 7, static_cast<std::uint32_t>(j)};
      if (r == 0) {
        reqs.push_back(std::move(*w[0]->post_send(1, tag, msgs[j].data(), msgs[j].size())));
      } else {
        got[j].resize(msgs[j].size());
        reqs.push_back(std::move(*w[1]->post_recv(0, tag, got[j].data(), got[j].size())));
      }
    }
    std::vector<transport::Request*> raw;
    for (auto& q : reqs) raw.push_back(q.get());
    EXPECT_TRUE(w[r]->wait(raw, in_ms(kWaitMs)).is_ok());
    if (r == 1) {
      for (int i = 0; i < k; ++i) EXPECT_TRUE(got[i] == msgs[i]) << i;
    }
  });
}

TEST(TcpTransport, SameTagIsFifo) {
  auto w = make_world(2);
  const std::size_t sizes[] = {10, 300 << 10, 20, 70 << 10, 64 << 10};
  Tag tag{6, 1, 1};
  run_ranks(2, [&](int r) {
    for (int i = 0; i < 5; ++i) {
      auto msg = pattern(sizes[i], 50 + i);
      if (r == 0) {
        auto s = w[0]->post_send(1, tag, msg.data(), msg.size());
        ASSERT_TRUE(s.has_value());
        EXPECT_TRUE(transport::wait_one(*w[0], s->get(), in_ms(kWaitMs)).is_ok());
      } else {
        if (i == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::vector<std::uint8_t> got(sizes[i]);
        EXPECT_TRUE(transport::recv(*w[1], 0, tag, got.data(), got.size(), in_ms(kWaitMs)).is_ok());
        EXPECT_TRUE(got == msg) << "message " << i;
      }
    }
  });
}

// Two threads of one rank wait on different requests at the same time.
TEST(TcpTransport, ConcurrentWaitsBothComplete) {
  auto w = make_world(2);
  const std::size_t bytes = 2 << 20;
  auto a = pattern(bytes, 1), b = pattern(100, 2);
  std::vector<std::uint8_t> ga(bytes), gb(100);
  auto ra = w[1]->post_recv(0, Tag{7, 0, 0}, ga.data(), bytes);
  auto rb = w[1]->post_recv(0, Tag{7, 0, 1}, gb.data(), 100);
  ASSERT_TRUE(ra.has_value() && rb.has_value());
  std::thread t1([&] { EXPECT_TRUE(transport::wait_one(*w[1], ra->get(), in_ms(kWaitMs)).is_ok()); });
  std::thread t2([&] { EXPECT_TRUE(transport::wait_one(*w[1], rb->get(), in_ms(kWaitMs)).is_ok()); });
  std::thread t3([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_TRUE(transport::send(*w[0], 1, Tag{7, 0, 1}, b.data(), 100, in_ms(kWaitMs)).is_ok());
    EXPECT_TRUE(transport::send(*w[0], 1, Tag{7, 0, 0}, a.data(), bytes, in_ms(kWaitMs)).is_ok());
  });
  t1.join();
  t2.join();
  t3.join();
  EXPECT_TRUE(ga == a);
  EXPECT_TRUE(gb == b);
}

}  // namespace
}  // namespace chorus::tcp::testing
