// Self-test of RankRunner: how it reports success, exceptions, chorus::Error codes,
// gtest failures inside a rank, crashes, timeouts and stop-on-first-failure.
#include <unistd.h>

#include <gtest/gtest.h>

#include <csignal>
#include <thread>

#include "rank_runner.h"

namespace chorus::testing {
namespace {

using std::chrono::milliseconds;

TEST(RankRunnerSelfTest, AllRanksOk) {
  auto r = RankRunner::run_raw(3, [] { check(this_rank().size == 3, "size"); }, milliseconds(10000));
  EXPECT_TRUE(all_ok(r));
}

TEST(RankRunnerSelfTest, ReportsErrorCodeAndMessage) {
  RunOptions o;
  o.stop_on_failure = false;
  auto r = RankRunner::run_raw(
      2,
      [] {
        step("pretending to all_reduce");
        throw Error(ErrorCode::kPeerLost, "rank 0 went away", 0);
      },
      milliseconds(10000), o);
  EXPECT_TRUE(all_threw(r, ErrorCode::kPeerLost));
  EXPECT_NE(r.summary().find("rank 1: chorus::Error peer_lost: rank 0 went away"), std::string::npos)
      << r.summary();
  EXPECT_NE(r.summary().find("during: pretending to all_reduce"), std::string::npos) << r.summary();
  EXPECT_FALSE(all_threw(r, ErrorCode::kTimeout));
}

TEST(RankRunnerSelfTest, GtestFailureInsideRank) {
  auto r = RankRunner::run_raw(2, [] { EXPECT_EQ(this_rank().rank, 0) << "only rank 0 passes"; },
                               milliseconds(10000));
  ASSERT_FALSE(r.all_ok());
  // The runner stops the others at the first failure, so rank 0 may be killed before it
  // reports: either outcome is right for it; rank 1's report is what is under test.
  EXPECT_TRUE(r.ranks[0].state == RankState::kOk || r.ranks[0].state == RankState::kKilled)
      << r.summary();
  EXPECT_EQ(r.ranks[1].state, RankState::kFailed);
  EXPECT_NE(r.ranks[1].message.find("only rank 0 passes"), std::string::npos) << r.summary();
}

TEST(RankRunnerSelfTest, CrashAndTimeoutAndKill) {
  auto r = RankRunner::run_raw(
      3,
      [] {
        if (this_rank().rank == 1) raise(SIGSEGV);
        if (this_rank().rank == 2) std::this_thread::sleep_for(milliseconds(500));
        step("sleeping");
        std::this_thread::sleep_for(milliseconds(60000));
      },
      milliseconds(20000));
  EXPECT_LT(r.elapsed, milliseconds(15000)) << "the runner did not stop at the first failure";
  EXPECT_EQ(r.ranks[1].state, RankState::kDied);
  EXPECT_EQ(r.ranks[1].signal, SIGSEGV);
  EXPECT_EQ(r.ranks[0].state, RankState::kKilled);
  EXPECT_EQ(r.summary().rfind("rank 1 was killed by signal 11", 0), 0u) << r.summary();
}

TEST(RankRunnerSelfTest, Deadline) {
  auto r = RankRunner::run_raw(
      2,
      [] {
        step("waiting forever");
        if (this_rank().rank == 1) pause();
      },
      milliseconds(1000));
  EXPECT_EQ(r.ranks[0].state, RankState::kOk);
  EXPECT_EQ(r.ranks[1].state, RankState::kTimedOut);
  EXPECT_NE(r.summary().find("rank 1 timed out after 1 s (in waiting forever)"), std::string::npos)
      << r.summary();
}

}  // namespace
}  // namespace chorus::testing
