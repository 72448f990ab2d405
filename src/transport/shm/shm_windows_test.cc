// Shared windows and mailboxes of the shm transport over real processes: every rank sees
// every window and every mailbox, barriers and exchanges order the writes, and neither
// ever hangs: a killed peer gives kPeerLost, a missing one kTimeout, an abort its code, a
// peer in another operation kDesync.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <optional>

#include "transport/shm/hand_off.h"
#include "transport/shm/test_world.h"
#include "util/spin_lock.h"

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

// barrier_meanwhile runs its work once, after the rank's arrival is published: rank 0's
// work waits for every other rank to have passed the barrier (which they can only do once
// rank 0 arrived), and each of them counts its own work's runs. Run before the arrival
// (the default of a transport that cannot split its barrier), rank 0's work would wait in
// vain and the others would pass only after it gave up.
TEST_P(Windows, MeanwhileRunsAfterThisRanksArrival) {
  const int n = GetParam();
  World w(n);
  // Shared with the forked ranks: how many ranks have returned from the barrier.
  void* shared = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(shared, MAP_FAILED);
  auto* passed = static_cast<std::atomic<int>*>(shared);
  passed->store(0);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    transport::SharedWindows* win = t->shared_windows();
    SHM_CHECK(win != nullptr, "no shared windows");
    int runs = 0, others_passed = -1;
    Status st = win->barrier_meanwhile(Tag{1, 1, 0}, in_ms(kWaitMs), [&] {
      ++runs;
      if (rank != 0) return;
      const auto give_up = Clock::now() + std::chrono::seconds(5);
      while (passed->load() < n - 1 && Clock::now() < give_up) util::cpu_pause();
      others_passed = passed->load();
    });
    SHM_CHECK(st.is_ok(), "barrier_meanwhile: %s", st.to_string().c_str());
    if (rank != 0) passed->fetch_add(1);
    SHM_CHECK(runs == 1, "the work ran %d times", runs);
    SHM_CHECK(win->barriers() == 1, "barriers() = %llu",
              static_cast<unsigned long long>(win->barriers()));
    if (rank == 0)
      SHM_CHECK(others_passed == n - 1, "%d of %d other ranks passed while rank 0's work ran",
                others_passed, n - 1);
    // The next barrier works as usual after one with work in it.
    st = win->barrier(Tag{1, 2, 0}, in_ms(kWaitMs));
    SHM_CHECK(st.is_ok(), "barrier after: %s", st.to_string().c_str());
  }));
  ::munmap(shared, 4096);
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

// The hand-off meter fed by the barriers and exchanges themselves (windows.cc: at every
// HandOffMeter::kEvery-th point, a rank that was waiting and saw the last arrival while
// spinning measures from that arrival's stamp to the moment it saw it). Rank 1 comes a
// few pauses late to every point, so rank 0 waits at each, within its first round of
// pauses, and publishes a figure within the meter's bounds once it has 27 samples; a
// figure of 0 means the path took none. A waiter that was preempted or had to yield takes
// no sample, so the ranks go on (every 256 points rank 0 says whether to stop)
// until rank 0 has a figure, for up to 20 s (World::run allows 30): an idle host needs
// ~2 ms. Next to a busy process the two ranks may share one processor for seconds, where
// no wait ends within a spin: the case runs alone, in make test's serial pass (its label
// is "serial", see SERIAL in src/CMakeLists.txt).
// Barriers with work (barrier_meanwhile) sample too: from the end of the work, so rank 1
// comes later there, after rank 0's work. Each case uses its own kind of point only (the
// stop word of barriers travels in rank 0's window), so its figure comes from that kind.
TEST(HandOffSampling, AWaitingRankMeasuresTheLastArrival) {
  enum Kind { kBarriers, kBarriersWithWork, kExchanges };
  for (const Kind kind : {kBarriers, kBarriersWithWork, kExchanges}) {
    World w(2);
    expect_all_pass(w.run([&](int rank) {
      auto t = w.connect(rank);
      transport::SharedWindows* win = t->shared_windows();
      SHM_CHECK(win != nullptr, "no shared windows");
      const transport::HandOff before = win->hand_off();
      SHM_CHECK(before.now_ns == 0 && before.floor_ns == 0, "a figure before any point: %g",
                before.now_ns);
      const char* what = kind == kExchanges ? "exchanges"
                         : kind == kBarriers ? "barriers"
                                             : "barriers with work";
      int worked = 0;
      std::uint64_t seq = 0;
      // One point of this case's kind; with `stop` given, it carries rank 0's to every rank.
      auto point = [&](std::optional<char> stop) -> char {
        const Tag tag{1, ++seq, 0};
        auto* word = static_cast<volatile char*>(win->window(0));
        if (rank == 0 && stop && kind != kExchanges) *word = *stop;
        const char mine = stop.value_or(0);
        Status st = kind == kExchanges ? win->exchange(&mine, 1, tag, in_ms(kWaitMs))
                    : kind == kBarriers
                        ? win->barrier(tag, in_ms(kWaitMs))
                        : win->barrier_meanwhile(tag, in_ms(kWaitMs), [&] { ++worked; });
        SHM_CHECK(st.is_ok(), "%s, point %llu: %s", what, static_cast<unsigned long long>(seq),
                  st.to_string().c_str());
        if (!stop) return 0;
        return kind == kExchanges ? *static_cast<const char*>(win->mailbox(0)) : *word;
      };
      const auto give_up = Clock::now() + std::chrono::seconds(20);
      for (char stop = 0; stop == 0;) {
        for (int i = 0; i < 256; ++i) {
          if (rank == 1)  // a little late, busy: within the waiter's first round of pauses
            for (int p = 0; p < (kind == kBarriersWithWork ? 16 : 4); ++p) util::cpu_pause();
          (void)point(std::nullopt);
        }
        // Rank 0 writes its window only here, after rank 1 passed the 256 points (and so
        // read the last word) since the last time.
        stop = point(static_cast<char>(rank == 0 &&
                                       (win->hand_off().now_ns > 0 || Clock::now() > give_up)));
      }
      SHM_CHECK((kind == kBarriersWithWork) == (worked > 0), "%s: the work ran %d times",
                what, worked);
      if (rank != 0) return;
      const transport::HandOff h = win->hand_off();
      SHM_CHECK(h.now_ns > 0 && h.now_ns <= HandOffMeter::kMaxNs,
                "%s: hand-off figure %g ns after %llu points", what, h.now_ns,
                static_cast<unsigned long long>(seq));
      SHM_CHECK(h.floor_ns > 0 && h.floor_ns <= h.now_ns, "%s: floor %g ns, now %g ns", what,
                h.floor_ns, h.now_ns);
    }));
  }
}

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
