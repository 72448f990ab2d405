// Shared windows and mailboxes of the shm transport over real processes: every rank sees
// every window and every mailbox, barriers and exchanges order the writes, and neither
// ever hangs: a killed peer gives kPeerLost, a missing one kTimeout, an abort its code, a
// peer in another operation kDesync.
#include <signal.h>
#include <unistd.h>

#include <cstring>

#include "transport/shm/test_world.h"

namespace chorus::shm::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kWaitMs = 10000;

void expect_all_pass(const std::vector<int>& codes) {
  for (std::size_t r = 0; r < codes.size(); ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

class Windows : public ::testing::TestWithParam<int> {};

TEST_P(Windows, EveryRankSeesEveryWindowAfterABarrier) {
  World w(GetParam());
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    transport::SharedWindows* win = t->shared_windows();
    SHM_CHECK(win != nullptr, "no shared windows");
    SHM_CHECK(win->window_bytes() == w.window_bytes, "window_bytes %zu", win->window_bytes());
    const std::size_t bytes = 64 << 10;
    for (int round = 0; round < 40; ++round) {
      auto mine = pattern(bytes, static_cast<std::uint32_t>(round * 16 + rank));
      std::memcpy(win->window(rank), mine.data(), bytes);
      Status st = win->barrier(Tag{1, static_cast<std::uint64_t>(round), 0}, in_ms(kWaitMs));
      SHM_CHECK(st.is_ok(), "barrier: %s", st.to_string().c_str());
      for (int r = 0; r < w.n; ++r) {
        auto want = pattern(bytes, static_cast<std::uint32_t>(round * 16 + r));
        SHM_CHECK(std::memcmp(win->window(r), want.data(), bytes) == 0,
                  "round %d: window of rank %d", round, r);
      }
      st = win->barrier(Tag{1, static_cast<std::uint64_t>(round), 1}, in_ms(kWaitMs));
      SHM_CHECK(st.is_ok(), "barrier: %s", st.to_string().c_str());
    }
    SHM_CHECK(win->barriers() == 80, "barriers() = %llu",
              static_cast<unsigned long long>(win->barriers()));
  }));
}

INSTANTIATE_TEST_SUITE_P(Ranks, Windows, ::testing::Values(1, 2, 3, 8));

// The default window is derived from this host's L2 cache: half of it, within
// [256 KiB, 4 MiB], whole pages, and what ShmOptions starts from.
TEST(WindowSize, HalfTheL2WithinBounds) {
  const std::size_t w = window_bytes_for_host();
  EXPECT_GE(w, std::size_t(256) << 10);
  EXPECT_LE(w, std::size_t(4) << 20);
  EXPECT_EQ(w % 4096, 0u);
  const long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 >= (512 << 10) && l2 <= (8 << 20)) {
    EXPECT_EQ(w, (static_cast<std::size_t>(l2) / 2) & ~std::size_t{4095});
  }
  EXPECT_EQ(ShmOptions{}.window_bytes, w);
}

TEST(WindowsOff, NoWindowsWhenSizedZero) {
  World w(2);
  w.window_bytes = 0;
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    SHM_CHECK(t->shared_windows() == nullptr, "windows present although sized 0");
  }));
}

// The failures, alike at both kinds of synchronisation point: a window barrier and a
// mailbox exchange (of one int).
enum class Point { kBarrier, kExchange };

Status sync_at(transport::SharedWindows& win, Point point, const Tag& tag, Deadline deadline) {
  static const int payload = 7;
  return point == Point::kBarrier ? win.barrier(tag, deadline)
                                  : win.exchange(&payload, sizeof(payload), tag, deadline);
}

class SyncFailure : public ::testing::TestWithParam<Point> {};

TEST_P(SyncFailure, KilledPeerGivesPeerLostNotAHang) {
  World w(3);
  auto codes = w.run([&](int rank) {
    auto t = w.connect(rank);
    transport::SharedWindows* win = t->shared_windows();
    Status st = sync_at(*win, GetParam(), Tag{1, 5, 0}, in_ms(kWaitMs));
    SHM_CHECK(st.is_ok(), "first sync: %s", st.to_string().c_str());
    if (rank == 2) ::kill(::getpid(), SIGKILL);
    const auto start = Clock::now();
    st = sync_at(*win, GetParam(), Tag{1, 6, 0}, in_ms(kWaitMs));
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    SHM_CHECK(st.code() == ErrorCode::kPeerLost && st.peer() == 2 && contains(st, "peer rank 2"),
              "%s", st.to_string().c_str());
    SHM_CHECK(s < 2.0, "kPeerLost after %.2f s", s);
  });
  EXPECT_EQ(codes[0], 0);
  EXPECT_EQ(codes[1], 0);
  EXPECT_EQ(codes[2], 128 + SIGKILL);
}

TEST_P(SyncFailure, MissingPeerGivesTimeoutNamingItAndTheSeq) {
  World w(2);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    transport::SharedWindows* win = t->shared_windows();
    if (rank == 1) {
      char c;
      (void)transport::recv(*t, 0, Tag{9}, &c, 1, in_ms(kWaitMs));  // until rank 0 is done
      return;
    }
    const auto start = Clock::now();
    Status st = sync_at(*win, GetParam(), Tag{1, 77, 3}, in_ms(300));
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    const char* where = GetParam() == Point::kBarrier ? "shared-window barrier" : "mailbox exchange";
    SHM_CHECK(st.code() == ErrorCode::kTimeout && st.peer() == 1 && contains(st, "seq 77") &&
                  contains(st, where),
              "%s", st.to_string().c_str());
    SHM_CHECK(s >= 0.25 && s < 2.0, "kTimeout after %.2f s", s);
    char c = 1;
    (void)transport::send(*t, 1, Tag{9}, &c, 1, in_ms(kWaitMs));
  }));
}

TEST_P(SyncFailure, AbortByAPeerEndsTheWait) {
  World w(3);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    transport::SharedWindows* win = t->shared_windows();
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      t->abort(Status(ErrorCode::kAborted, "test abort"));
      return;
    }
    Status st = sync_at(*win, GetParam(), Tag{1, 4, 0}, in_ms(kWaitMs));
    SHM_CHECK(st.code() == ErrorCode::kAborted && contains(st, "test abort"), "%s",
              st.to_string().c_str());
  }));
}

INSTANTIATE_TEST_SUITE_P(Points, SyncFailure, ::testing::Values(Point::kBarrier, Point::kExchange),
                         [](const ::testing::TestParamInfo<Point>& i) {
                           return std::string(i.param == Point::kBarrier ? "barrier" : "exchange");
                         });

class Mailboxes : public ::testing::TestWithParam<int> {};

// Payloads of every length up to the capacity, from every rank, read by every rank after
// each exchange, with window barriers in between (the two kinds count separately), and a
// rank that comes late now and then (its peers have gone to sleep on their doorbells).
TEST_P(Mailboxes, EveryRankSeesEveryPayloadOfEveryLength) {
  World w(GetParam());
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    transport::SharedWindows* win = t->shared_windows();
    SHM_CHECK(win != nullptr, "no shared windows");
    const std::size_t cap = win->mailbox_bytes();
    SHM_CHECK(cap >= 512, "mailbox_bytes() = %zu", cap);
    std::uint64_t seq = 0;
    for (std::size_t len = 0; len <= cap; len += len < 64 ? 1 : 37) {
      ++seq;
      if (rank == 0 && seq % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      auto mine = pattern(len, static_cast<std::uint32_t>(seq * 16 + rank));
      Status st = win->exchange(mine.data(), len, Tag{1, seq, 0}, in_ms(kWaitMs));
      SHM_CHECK(st.is_ok(), "exchange: %s", st.to_string().c_str());
      for (int r = 0; r < w.n; ++r) {
        auto want = pattern(len, static_cast<std::uint32_t>(seq * 16 + r));
        SHM_CHECK(std::memcmp(win->mailbox(r), want.data(), len) == 0,
                  "%zu bytes, seq %llu: the mailbox of rank %d", len,
                  static_cast<unsigned long long>(seq), r);
      }
      if (seq % 7 == 0) {
        st = win->barrier(Tag{1, seq, 1}, in_ms(kWaitMs));
        SHM_CHECK(st.is_ok(), "barrier: %s", st.to_string().c_str());
      }
    }
    Status st = win->exchange(nullptr, cap + 1, Tag{1, ++seq, 0}, in_ms(kWaitMs));
    SHM_CHECK(st.code() == ErrorCode::kInternal && contains(st, std::to_string(cap + 1)), "%s",
              st.to_string().c_str());
  }));
}

INSTANTIATE_TEST_SUITE_P(Ranks, Mailboxes, ::testing::Values(2, 3, 8));

// Rank 0 exchanges through its mailbox for seq 5 while rank 1 waits at a window barrier
// for seq 5 under another signature: both learn of the desync, neither waits for the deadline.
TEST(MailboxesFailure, PeerAtAWindowBarrierOfTheSameSeqIsADesync) {
  World w(2);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    transport::SharedWindows* win = t->shared_windows();
    const auto start = Clock::now();
    Status st = rank == 0 ? win->exchange("x", 1, Tag{1, 5, 0, 0x1111}, in_ms(kWaitMs))
                          : win->barrier(Tag{1, 5, 0, 0x2222}, in_ms(kWaitMs));
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    SHM_CHECK(st.code() == ErrorCode::kDesync && st.peer() == 1 - rank && contains(st, "seq 5"),
              "%s", st.to_string().c_str());
    SHM_CHECK(s < 2.0, "kDesync after %.2f s", s);
    char c = 1;  // both stay until both have seen it (a closed peer would be kPeerLost)
    st = transport::send(*t, 1 - rank, Tag{9}, &c, 1, in_ms(kWaitMs));
    SHM_CHECK(st.is_ok(), "%s", st.to_string().c_str());
    st = transport::recv(*t, 1 - rank, Tag{9}, &c, 1, in_ms(kWaitMs));
    SHM_CHECK(st.is_ok(), "%s", st.to_string().c_str());
  }));
}

}  // namespace
}  // namespace chorus::shm::testing
