// Failure-path tests of the shm transport over real processes: size and signature
// mismatch, killed and departed peers, abort propagation, deadlines.
#include <signal.h>

#include <cstring>

#include "transport/shm/test_world.h"

namespace chorus::shm::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kWaitMs = 10000;

void expect_all_pass(const std::vector<int>& codes) {
  for (std::size_t r = 0; r < codes.size(); ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

// A message that does not fit the posted receive fails the receive with kDesync; the
// sender learns it on the send itself when still pending, else on its next post.
class Mismatch : public ::testing::TestWithParam<std::tuple<std::size_t, bool>> {};

TEST_P(Mismatch, FailsBothSidesWithDesync) {
  const auto [sent, by_sig] = GetParam();
  const std::size_t expected = by_sig ? sent : sent / 2;
  World w(2);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    auto msg = pattern(sent, 1);
    std::vector<std::uint8_t> got(expected);
    if (rank == 1) {
      Tag tag{1, 33, 2, by_sig ? 0x2222u : 0x1111u};
      Status st = transport::recv(*t, 0, tag, got.data(), expected, in_ms(kWaitMs));
      SHM_CHECK(st.code() == ErrorCode::kDesync && contains(st, "seq 33"), "%s",
                st.to_string().c_str());
      if (!by_sig)
        SHM_CHECK(contains(st, std::to_string(sent)) && contains(st, std::to_string(expected)),
                  "%s", st.to_string().c_str());
      char c;
      (void)transport::recv(*t, 0, Tag{9}, &c, 1, in_ms(kWaitMs));  // until rank 0 is done
      return;
    }
    Status st = transport::send(*t, 1, Tag{1, 33, 2, 0x1111u}, msg.data(), sent, in_ms(kWaitMs));
    if (st.is_ok()) {  // delivered before the receiver looked: the next post learns it
      Deadline d = in_ms(kWaitMs);
      while (st.is_ok() && !d.expired()) {
        char c = 0;
        auto r = t->post_recv(1, Tag{8}, &c, 1);
        st = r.status();
        if (st.is_ok()) st = transport::wait_one(*t, r->get(), in_ms(20));
        if (st.code() == ErrorCode::kTimeout) st = Status::ok();
      }
    }
    SHM_CHECK(st.code() == ErrorCode::kDesync && contains(st, "seq 33"), "%s", st.to_string().c_str());
    char c = 1;
    (void)transport::send(*t, 1, Tag{9}, &c, 1, in_ms(kWaitMs));
  }));
}

INSTANTIATE_TEST_SUITE_P(SmallAndLarge, Mismatch,
                         ::testing::Combine(::testing::Values(1000, 1 << 20), ::testing::Bool()));

TEST(ShmFailure, KilledPeerIsLostWithinOneSecond) {
  World w(3);
  auto codes = w.run([&](int rank) {
    auto t = w.connect(rank);
    if (rank == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      ::raise(SIGKILL);
    }
    char c;
    auto t0 = Clock::now();
    if (rank == 1) {
      Status st = transport::recv(*t, 0, Tag{1}, &c, 1, in_ms(kWaitMs));
      SHM_CHECK(Clock::now() - t0 < std::chrono::milliseconds(1000), "too slow");
      SHM_CHECK(st.code() == ErrorCode::kPeerLost && st.peer() == 0 && contains(st, "peer rank 0"),
                "%s", st.to_string().c_str());
    }
    // Ranks 1 and 2 still talk.
    char a = 'y', b = 0;
    const int other = 3 - rank;
    Status st = transport::send_recv(*t, other, Tag{4}, &a, 1, other, Tag{4}, &b, 1, in_ms(kWaitMs));
    SHM_CHECK(st.is_ok() && b == 'y', "%s", st.to_string().c_str());
  });
  EXPECT_EQ(codes[0], 128 + SIGKILL);
  EXPECT_EQ(codes[1], 0);
  EXPECT_EQ(codes[2], 0);
}

TEST(ShmFailure, DepartedPeerMessagesStayReceivable) {
  World w(2);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    auto msg = pattern(10000, 3);
    if (rank == 0) {
      SHM_CHECK(transport::send(*t, 1, Tag{1}, msg.data(), msg.size(), in_ms(kWaitMs)).is_ok(), "s");
      return;  // destroys the transport and exits
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::vector<std::uint8_t> got(msg.size());
    Status st = transport::recv(*t, 0, Tag{1}, got.data(), got.size(), in_ms(kWaitMs));
    SHM_CHECK(st.is_ok() && got == msg, "%s", st.to_string().c_str());
    st = transport::recv(*t, 0, Tag{2}, got.data(), 1, in_ms(kWaitMs));
    SHM_CHECK(st.code() == ErrorCode::kPeerLost, "%s", st.to_string().c_str());
  }));
}

TEST(ShmFailure, AbortReachesPeers) {
  World w(3);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    char c;
    if (rank == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      t->abort(Status(ErrorCode::kAborted, "boom"));
      Status st = transport::recv(*t, 1, Tag{1}, &c, 1, in_ms(kWaitMs));
      SHM_CHECK(st.code() == ErrorCode::kAborted && contains(st, "boom"), "%s", st.to_string().c_str());
      return;
    }
    auto t0 = Clock::now();
    Status st = transport::recv(*t, 0, Tag{1}, &c, 1, in_ms(kWaitMs));
    SHM_CHECK(Clock::now() - t0 < std::chrono::milliseconds(1000), "too slow");
    SHM_CHECK(st.code() == ErrorCode::kAborted && contains(st, "rank 0 reports: boom"), "%s",
              st.to_string().c_str());
    SHM_CHECK(t->post_send(3 - rank, Tag{2}, &c, 1).status().code() == ErrorCode::kAborted, "later");
  }));
}

// An abort keeps its code, first reporter and culprit on every rank that hears it.
TEST(ShmFailure, AbortKeepsCodeOriginAndCulprit) {
  World w(3);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    char c;
    if (rank == 0) t->abort(Status(ErrorCode::kPeerLost, "peer rank 2 left", 2));
    Status st = transport::recv(*t, (rank + 1) % 3, Tag{1}, &c, 1, in_ms(kWaitMs));
    SHM_CHECK(st.code() == ErrorCode::kPeerLost && st.peer() == 2, "%s", st.to_string().c_str());
    if (rank != 0)
      SHM_CHECK(contains(st, "rank 0 reports: peer rank 2 left"), "%s", st.to_string().c_str());
  }));
}

// A message of a later seq (same comm) from the peer a receive waits on fails that receive,
// whether it was posted before the message came or after.
TEST(ShmFailure, ReceiveOvertakenByALaterSeqFailsWithDesync) {
  World w(2);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    char c = 'x';
    if (rank == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      SHM_CHECK(transport::send(*t, 1, Tag{3, 5}, &c, 1, in_ms(kWaitMs)).is_ok(), "send");
      (void)transport::recv(*t, 1, Tag{9}, &c, 1, in_ms(kWaitMs));  // until rank 1 is done
      return;
    }
    for (std::uint64_t seq : {4, 3}) {
      Status st = transport::recv(*t, 0, Tag{3, seq}, &c, 1, in_ms(kWaitMs));
      SHM_CHECK(st.code() == ErrorCode::kDesync && st.peer() == 0 &&
                    contains(st, "seq " + std::to_string(seq) + " (step 0) from peer rank 0") &&
                    contains(st, "moved on to"),
                "%s", st.to_string().c_str());
    }
    SHM_CHECK(transport::recv(*t, 0, Tag{3, 5}, &c, 1, in_ms(kWaitMs)).is_ok() && c == 'x', "seq 5");
    (void)transport::send(*t, 0, Tag{9}, &c, 1, in_ms(kWaitMs));
  }));
}

TEST(ShmFailure, DeadlineGivesTimeoutNamingThePeer) {
  World w(2);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    char c;
    if (rank == 1) {
      auto t0 = Clock::now();
      Status st = transport::recv(*t, 0, Tag{1, 7}, &c, 1, in_ms(200));
      SHM_CHECK(st.code() == ErrorCode::kTimeout && contains(st, "peer rank 0"), "%s",
                st.to_string().c_str());
      SHM_CHECK(Clock::now() - t0 < std::chrono::milliseconds(1000), "too slow");
    }
    (void)transport::send_recv(*t, 1 - rank, Tag{2}, &c, 1, 1 - rank, Tag{2}, &c, 1, in_ms(kWaitMs));
  }));
}

TEST(ShmFailure, CancelledLargeSendKeepsTheRingUsable) {
  World w(2);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    auto big = pattern(1 << 20, 5);
    if (rank == 0) {
      {
        auto r = t->post_send(1, Tag{1}, big.data(), big.size());  // larger than the ring
        SHM_CHECK(r.has_value(), "post");
      }  // cancelled mid-record
      char a = 'z';
      SHM_CHECK(transport::send(*t, 1, Tag{2}, &a, 1, in_ms(kWaitMs)).is_ok(), "send");
      return;
    }
    std::vector<std::uint8_t> got(big.size());
    char b = 0;
    SHM_CHECK(transport::recv(*t, 0, Tag{2}, &b, 1, in_ms(kWaitMs)).is_ok() && b == 'z', "small");
    SHM_CHECK(transport::recv(*t, 0, Tag{1}, got.data(), got.size(), in_ms(kWaitMs)).is_ok() &&
                  got == big, "cancelled send finished from a copy");
  }));
}

}  // namespace
}  // namespace chorus::shm::testing

namespace chorus::shm::testing {
namespace {

// set_progress is visible to the peers through the rank's slot, even after it exited.
TEST(ShmProgress, PeerReadsProgressFromTheSegmentAfterTheRankIsGone) {
  World w(2);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    char a = 'x', b = 0;
    if (rank == 1) {
      SHM_CHECK(t->peer_progress(0) == -1, "progress before any set_progress");
      t->set_progress(41);
      SHM_CHECK(transport::send(*t, 0, Tag{1}, &a, 1, in_ms(kWaitMs)).is_ok(), "send");
      ::_exit(0);  // no close: the slot still says how far it got
    }
    SHM_CHECK(transport::recv(*t, 1, Tag{1}, &b, 1, in_ms(kWaitMs)).is_ok(), "recv");
    Status st = transport::recv(*t, 1, Tag{2}, &b, 1, in_ms(kWaitMs));
    SHM_CHECK(st.code() == ErrorCode::kPeerLost, "%s", st.to_string().c_str());
    SHM_CHECK(t->peer_progress(1) == 41, "peer_progress %lld",
              static_cast<long long>(t->peer_progress(1)));
    SHM_CHECK(t->peer_progress(0) == -1 && t->peer_progress(5) == -1, "self / out of range");
  }));
}

}  // namespace
}  // namespace chorus::shm::testing
