// Recovery: shrink() after a lost rank (and with nobody lost), health_check() on a
// healthy and on a broken communicator, and the per-call timeout (ScopedTimeout).
#include <gtest/gtest.h>

#include <cstdio>
#include <optional>
#include <thread>
#include <vector>

#include "failure_util.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;

RunOptions recovery_options() {
  RunOptions opts;
  opts.stop_on_failure = false;
  opts.options.timeout = milliseconds(30000);
  opts.options.connect_timeout = milliseconds(10000);
  return opts;
}

double seconds_since(FailClock::time_point t0) {
  return std::chrono::duration<double>(FailClock::now() - t0).count();
}

// A correct all_reduce and all_gather on `c`, whose members had the old ranks `old`.
void check_works(Communicator& c, const std::vector<int>& old, int my_old) {
  const int n = static_cast<int>(old.size());
  check(c.size() == n, "size " + std::to_string(c.size()) + ", expected " + std::to_string(n));
  int expect_rank = 0;
  while (old[expect_rank] != my_old) ++expect_rank;
  check(c.rank() == expect_rank, "new rank " + std::to_string(c.rank()) + " for old rank " +
                                     std::to_string(my_old) + ", expected " +
                                     std::to_string(expect_rank));
  for (int round = 0; round < 3; ++round) {
    std::vector<std::int32_t> v(1000), sum(1000), all(n);
    for (int i = 0; i < 1000; ++i) v[i] = (my_old + 1) * 1000 + i + round;
    step("all_reduce on the new communicator, round " + std::to_string(round));
    c.all_reduce(v.data(), sum.data(), v.size(), DataType::kInt32, ReduceOp::kSum);
    std::int32_t base = 0;
    for (int r : old) base += (r + 1) * 1000;
    for (int i = 0; i < 1000; ++i)
      check(sum[i] == base + n * (i + round), "all_reduce element " + std::to_string(i) +
                                                  " = " + std::to_string(sum[i]));
    const std::int32_t mine = my_old;
    step("all_gather on the new communicator");
    c.all_gather(&mine, all.data(), 1, DataType::kInt32);
    for (int r = 0; r < n; ++r)
      check(all[r] == old[r], "all_gather slot " + std::to_string(r) + " = " +
                                  std::to_string(all[r]) + ", expected old rank " +
                                  std::to_string(old[r]));
  }
}

// n ranks loop (all_reduce + all_gather); rank n/2 leaves at step 5 (gracefully, or
// with _exit). The survivors catch kPeerLost, shrink to n-1 ranks and work.
std::vector<int> all_but(int n, int gone) {
  std::vector<int> out;
  for (int r = 0; r < n; ++r)
    if (r != gone) out.push_back(r);
  return out;
}

// Loops until a collective fails; returns that error (CheckFailure if none does).
Error loop_until_failure(Communicator& comm, int leaver, bool hard_exit) {
  std::vector<float> v(1024, 1.0f), sum(1024), all(256 * comm.size());
  for (int s = 0; s < 1000; ++s) {
    if (comm.rank() == leaver && s == 5) {
      if (hard_exit) ::_exit(0);
      throw CheckFailure("leaver");  // caught by the caller: it returns normally
    }
    try {
      step("step " + std::to_string(s));
      comm.all_reduce(v.data(), sum.data(), v.size(), DataType::kFloat32, ReduceOp::kSum);
      comm.all_gather(v.data(), all.data(), 256, DataType::kFloat32);
    } catch (const Error& e) {
      return e;
    }
  }
  throw CheckFailure("the loop finished although rank " + std::to_string(leaver) + " left");
}

class ShrinkAfterLoss : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(ShrinkAfterLoss, SurvivorsBuildAWorkingCommunicatorOfTheRest) {
  const auto [n, hard_exit] = GetParam();
  const int leaver = n / 2;
  auto body = [n = n, hard_exit = hard_exit, leaver](Communicator& comm) {
    const int me = comm.rank();
    try {
      const Error e = loop_until_failure(comm, leaver, hard_exit);
      check(e.code() == ErrorCode::kPeerLost, std::string("expected peer_lost: ") + e.what());
    } catch (const CheckFailure& f) {
      if (me == leaver) return;
      throw;
    }
    step("shrink");
    const auto t0 = FailClock::now();
    Communicator survivors = comm.shrink();
    const double took = seconds_since(t0);
    check(took < 5.0, "shrink took " + std::to_string(took) + " s");
    check_works(survivors, all_but(n, leaver), me);
    step("the old communicator refuses work");
    bool refused = false;
    try {
      comm.barrier();
    } catch (const Error&) {
      refused = true;
    }
    check(refused, "the old communicator still works after shrink()");
  };
  auto r = RankRunner::run(n, body, milliseconds(60000), recovery_options());
  for (int rank = 0; rank < n; ++rank) {
    if (rank == leaver && hard_exit) {
      EXPECT_EQ(r.ranks[rank].exit_code, 0) << r.summary();
    } else {
      EXPECT_EQ(r.ranks[rank].state, RankState::kOk) << r.summary();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Exit, ShrinkAfterLoss,
                         ::testing::Combine(::testing::Values(2, 4, 8), ::testing::Bool()),
                         [](const auto& info) {
                           return std::to_string(std::get<0>(info.param)) + "ranks" +
                                  (std::get<1>(info.param) ? "Exit" : "Return");
                         });

// A second rank dies while the survivors shrink. 4 ranks; rank 2 leaves at step 5; the
// others catch kPeerLost and shrink, and rank 3 dies:
//  kBeforeShrink: right after catching the error, without calling shrink(). Nobody
//    reported it lost, so the deciding rank waits the whole connect_timeout window and
//    the members are the ranks that arrived: ranks 0 and 1 get a working communicator of
//    two, after about connect_timeout.
//  kDuringShrink: a few milliseconds into its own shrink() (on another thread), at any
//    point of it. Documented outcomes, all bounded by connect_timeout + 2 s (+ slack):
//    shrink() fails with kTimeout (the new communicator's rendezvous, or no member list
//    when rank 3 was deciding) or kPeerLost; or it returns a communicator that either
//    excludes rank 3 and works, or includes it and whose next collective fails with
//    kPeerLost or kTimeout within the timeout. Never a hang, never a wrong result.
enum class SecondDeath { kBeforeShrink, kDuringShrink };
constexpr milliseconds kConnect(2000);  // connect_timeout: the shrink decision window
class DeathDuringShrink : public ::testing::TestWithParam<SecondDeath> {};

TEST_P(DeathDuringShrink, SurvivorsGetABoundedErrorOrAWorkingCommunicator) {
  const SecondDeath when = GetParam();
  constexpr int kLeaver = 2, kSecond = 3;
  auto body = [when](Communicator& comm) {
    const int me = comm.rank();
    try {
      const Error e = loop_until_failure(comm, kLeaver, false);
      check(e.code() == ErrorCode::kPeerLost, std::string("expected peer_lost: ") + e.what());
    } catch (const CheckFailure& f) {
      if (me == kLeaver) return;
      throw;
    }
    if (me == kSecond) {
      if (when == SecondDeath::kBeforeShrink) ::_exit(0);
      std::thread([] {
        std::this_thread::sleep_for(milliseconds(5));
        ::_exit(0);
      }).detach();
      try {
        Communicator c = comm.shrink();
        std::this_thread::sleep_for(milliseconds(10000));  // the thread above ends us
      } catch (const Error&) {
      }
      ::_exit(0);
    }
    step("shrink while rank 3 dies");
    const auto t0 = FailClock::now();
    const double bound = std::chrono::duration<double>(kConnect).count() + 3.0;
    std::optional<Communicator> c;
    try {
      c.emplace(comm.shrink());
    } catch (const Error& e) {
      const double took = seconds_since(t0);
      std::fprintf(stderr, "SHRINK rank %d after %.3f s: %s\n", me, took, e.what());
      check(when == SecondDeath::kDuringShrink, std::string("shrink failed: ") + e.what());
      check(e.code() == ErrorCode::kTimeout || e.code() == ErrorCode::kPeerLost,
            std::string("expected timeout or peer_lost from shrink: ") + e.what());
      check(took < bound, "shrink failed after " + std::to_string(took) + " s: " + e.what());
      return;
    }
    const double took = seconds_since(t0);
    std::fprintf(stderr, "SHRINK rank %d after %.3f s: rank %d of %d\n", me, took, c->rank(),
                 c->size());
    check(took < bound, "shrink took " + std::to_string(took) + " s");
    if (when == SecondDeath::kBeforeShrink || c->size() == 2) {
      check(when == SecondDeath::kDuringShrink || took >= 1.5,
            "the decision did not wait for the silent rank 3 (" + std::to_string(took) + " s)");
      check_works(*c, {0, 1}, me);
      return;
    }
    check(c->size() == 3, "unexpected size " + std::to_string(c->size()));
    const auto t1 = FailClock::now();
    try {
      check_works(*c, {0, 1, 3}, me);
      check(false, "a communicator including the dead rank 3 kept working");
    } catch (const Error& e) {
      std::fprintf(stderr, "SHRINK rank %d, first collective after %.3f s: %s\n", me,
                   seconds_since(t1), e.what());
      check(e.code() == ErrorCode::kPeerLost || e.code() == ErrorCode::kTimeout,
            std::string("expected peer_lost or timeout: ") + e.what());
      check(seconds_since(t1) < 7.0, "the failure took " + std::to_string(seconds_since(t1)) + " s");
    }
  };
  RunOptions opts = recovery_options();
  opts.options.connect_timeout = kConnect;
  opts.options.timeout = milliseconds(5000);
  auto r = RankRunner::run(4, body, milliseconds(60000), opts);
  for (int rank = 0; rank < 4; ++rank) {
    if (rank == kSecond) {
      EXPECT_EQ(r.ranks[rank].exit_code, 0) << r.summary();
    } else {
      EXPECT_EQ(r.ranks[rank].state, RankState::kOk) << r.summary();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(When, DeathDuringShrink,
                         ::testing::Values(SecondDeath::kBeforeShrink, SecondDeath::kDuringShrink),
                         [](const auto& info) {
                           return info.param == SecondDeath::kBeforeShrink ? "BeforeShrink"
                                                                           : "DuringShrink";
                         });

TEST(Shrink, WithNobodyLostGivesASameSizeCommunicator) {
  auto body = [](Communicator& comm) {
    comm.barrier();
    const int me = comm.rank();
    Communicator again = comm.shrink();
    check_works(again, {0, 1, 2, 3}, me);
    // And once more, from the shrunk one: keys nest, nothing is reused.
    Communicator third = again.shrink();
    check_works(third, {0, 1, 2, 3}, me);
    expect_error(ErrorCode::kAborted, [&] { comm.barrier(); });
  };
  EXPECT_TRUE(all_ok(RankRunner::run(4, body, milliseconds(60000), recovery_options())));
}

TEST(HealthCheck, HealthyCommunicatorIsOk) {
  auto body = [](Communicator& comm) {
    const HealthReport h = comm.health_check(milliseconds(2000));
    check(h.ok && h.code == ErrorCode::kOk && h.message.empty(), "not ok: " + h.message);
    check(h.ranks_responding == comm.size(),
          "ranks_responding = " + std::to_string(h.ranks_responding));
    check(h.elapsed < milliseconds(2000), "elapsed " + std::to_string(h.elapsed.count()) + " us");
    comm.barrier();  // still usable
  };
  EXPECT_TRUE(all_ok(RankRunner::run(4, body, milliseconds(30000), recovery_options())));
}

// Rank 3 leaves after a barrier; the others' health_check reports kPeerLost in time,
// and shrink() then gives them a working communicator.
TEST(HealthCheck, DeadPeerGivesPeerLostReportInTime) {
  constexpr int kLeaver = 3;
  constexpr milliseconds kTimeout(3000);
  auto body = [](Communicator& comm) {
    comm.barrier();
    const int me = comm.rank();
    if (me == kLeaver) {
      std::this_thread::sleep_for(milliseconds(100));
      return;
    }
    std::this_thread::sleep_for(milliseconds(300));
    const auto t0 = FailClock::now();
    const HealthReport h = comm.health_check(kTimeout);
    const double took = seconds_since(t0);
    check(!h.ok && h.code == ErrorCode::kPeerLost,
          "expected a peer_lost report, got " + std::string(to_string(h.code)) + ": " + h.message);
    check(h.message.find("rank 3") != std::string::npos, "report does not name rank 3: " + h.message);
    check(h.ranks_responding == 3, "ranks_responding = " + std::to_string(h.ranks_responding));
    check(took < 4.0, "health_check returned after " + std::to_string(took) + " s");
    Communicator survivors = comm.shrink();
    check_works(survivors, {0, 1, 2}, me);
  };
  EXPECT_TRUE(all_ok(RankRunner::run(4, body, milliseconds(30000), recovery_options())));
}

// Rank 1 sleeps 3 s; the others give their all_reduce 500 ms (ScopedTimeout) and fail
// with kTimeout within about a second, although Options::timeout is 30 s.
TEST(PerCallTimeout, ScopedTimeoutBoundsOneCall) {
  constexpr int kSleeper = 1;
  auto body = [](Communicator& comm) {
    std::vector<std::int32_t> v(256, 1), out(256);
    comm.barrier();
    if (comm.rank() == kSleeper) {
      std::this_thread::sleep_for(milliseconds(3000));
      try {
        comm.all_reduce(v.data(), out.data(), v.size(), DataType::kInt32, ReduceOp::kSum);
      } catch (const Error& e) {
        check(e.code() == ErrorCode::kTimeout || e.code() == ErrorCode::kPeerLost,
              std::string("sleeper: ") + e.what());
        return;
      }
      check(false, "the sleeper's all_reduce succeeded after its peers gave up");
    }
    check(comm.timeout() == milliseconds(30000), "configured timeout not reported");
    const auto t0 = FailClock::now();
    std::string e_text;
    {
      Communicator::ScopedTimeout scoped(comm, milliseconds(500));
      check(comm.timeout() == milliseconds(500), "ScopedTimeout not in force");
      Error e = expect_error(ErrorCode::kTimeout, [&] {
        comm.all_reduce(v.data(), out.data(), v.size(), DataType::kInt32, ReduceOp::kSum);
      });
      // Whichever rank this one waited on, the error names the sleeper.
      check(e.peer_rank() == kSleeper && has(e, "(stalled: rank 1 (host "),
            std::string("the sleeper is not named: ") + e.what());
      e_text = e.what();
    }
    const double took = seconds_since(t0);
    std::fprintf(stderr, "TO rank %d after %.3f s: %s\n", comm.rank(), took, e_text.c_str());
    // After the timeout, up to 1 s for the liveness answer (the sleeper never gives one).
    check(took >= 0.4 && took < 2.5, "kTimeout after " + std::to_string(took) + " s");
    check(comm.timeout() == milliseconds(30000), "ScopedTimeout did not restore the timeout");
    expect_error(ErrorCode::kInvalidArgument, [&] { comm.set_timeout(milliseconds(-1)); });
    std::this_thread::sleep_for(milliseconds(3000));  // stay until the sleeper wakes
  };
  EXPECT_TRUE(all_ok(RankRunner::run(4, body, milliseconds(30000), recovery_options())));
}

}  // namespace
}  // namespace chorus
