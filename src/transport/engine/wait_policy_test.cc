// WaitPolicy: the phases of a wait per medium's parameters, and the adaptive budget.
#include "transport/engine/wait_policy.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <thread>

namespace chorus::engine {
namespace {

using Phase = WaitPolicy::Phase;
using std::chrono::microseconds;

WaitPolicy::Clock::time_point t0() { return WaitPolicy::Clock::time_point{} + std::chrono::hours(1); }

TEST(WaitPolicy, SharedMemorySpinsForOneYieldOnAnIdleHostThenYieldsThenBlocks) {
  WaitPolicy::Config c = WaitPolicy::for_shm(2);
  c.cores = 1 << 20;  // more cores than runnable tasks: the host's load cannot decide this
  const std::int64_t spin = WaitPolicy::yield_cost_ns();
  EXPECT_EQ(c.spin_ns, spin);
  WaitPolicy p(c);
  EXPECT_TRUE(p.restarts_on_progress());
  EXPECT_EQ(p.phase(t0(), t0()), Phase::kSpin);
  EXPECT_EQ(p.phase(t0(), t0() + std::chrono::nanoseconds(spin - 1)), Phase::kSpin);
  EXPECT_EQ(p.phase(t0(), t0() + std::chrono::nanoseconds(spin + 1)), Phase::kYield);
  EXPECT_EQ(p.phase(t0(), t0() + microseconds(499)), Phase::kYield);
  EXPECT_EQ(p.phase(t0(), t0() + microseconds(500)), Phase::kBlock);
  p.record(true);  // not adaptive: the budget stays
  EXPECT_EQ(p.budget_ns(), 500'000);
}

TEST(WaitPolicy, SharedMemoryYieldsInsteadOfSpinningWhenRanksOutnumberCores) {
  WaitPolicy::Config c = WaitPolicy::for_shm(4);
  c.cores = 2;
  WaitPolicy p(c);
  EXPECT_EQ(p.phase(t0(), t0()), Phase::kYield);  // never a busy spin, never a block early
  EXPECT_EQ(p.phase(t0(), t0() + microseconds(499)), Phase::kYield);
  EXPECT_EQ(p.phase(t0(), t0() + microseconds(500)), Phase::kBlock);
}

TEST(WaitPolicy, YieldCostIsMeasuredOnceAndBounded) {
  const std::int64_t cost = WaitPolicy::yield_cost_ns();
  EXPECT_GE(cost, 100);
  EXPECT_LE(cost, 20'000);
  EXPECT_EQ(WaitPolicy::yield_cost_ns(), cost);
}

TEST(WaitPolicy, TcpSpinsThreeQuartersThenYieldsThenBlocks) {
  WaitPolicy::Config c = WaitPolicy::for_tcp(40, 1);
  c.block_when_oversubscribed = false;  // the host's load must not decide this test
  WaitPolicy p(c);
  EXPECT_FALSE(p.restarts_on_progress());
  EXPECT_EQ(p.phase(t0(), t0()), Phase::kSpin);
  EXPECT_EQ(p.phase(t0(), t0() + microseconds(29)), Phase::kSpin);
  EXPECT_EQ(p.phase(t0(), t0() + microseconds(31)), Phase::kYield);
  EXPECT_EQ(p.phase(t0(), t0() + microseconds(40)), Phase::kBlock);
}

TEST(WaitPolicy, AdaptiveBudgetHalvesAfterBlockingAndRecovers) {
  WaitPolicy::Config c = WaitPolicy::for_tcp(64, 1);
  c.block_when_oversubscribed = false;
  WaitPolicy p(c);
  EXPECT_EQ(p.budget_ns(), 64'000);
  for (int i = 0; i < 10; ++i) p.record(true);
  EXPECT_EQ(p.budget_ns(), 4'000);  // floor: 1/16
  EXPECT_EQ(p.phase(t0(), t0() + microseconds(5)), Phase::kBlock);
  for (int i = 0; i < 10; ++i) p.record(false);
  EXPECT_EQ(p.budget_ns(), 64'000);  // ceiling: the configured budget
}

TEST(WaitPolicy, TcpYieldsToItsOwnRanksWhenTheyOutnumberCoresThenBlocks) {
  // More ranks than any host's cores: no spin, yield polling for 2 x CHORUS_SPIN_US.
  // (Times far ahead: past any slow-yield pause another test may have caused.)
  const auto s = WaitPolicy::Clock::now() + std::chrono::hours(10);
  WaitPolicy crowded(WaitPolicy::for_tcp(50, 1 << 20));
  EXPECT_EQ(crowded.phase(s, s), Phase::kYield);
  EXPECT_EQ(crowded.phase(s, s + microseconds(99)), Phase::kYield);
  EXPECT_EQ(crowded.phase(s, s + microseconds(100)), Phase::kBlock);
  for (int i = 0; i < 10; ++i) crowded.record(true);  // adaptive: the budget shrinks alike
  EXPECT_EQ(crowded.phase(s, s + microseconds(7)), Phase::kBlock);
  WaitPolicy off(WaitPolicy::for_tcp(0, 1 << 20));
  EXPECT_EQ(off.phase(s, s), Phase::kBlock);
}

TEST(WaitPolicy, SlowYieldsTurnCrowdedYieldingOffForAWhile) {
  // A task that keeps the core for a time slice (a stranger: here a busy child thread
  // pinned with us to one core) makes a yield slow; crowded waits then block at once.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  std::atomic<bool> stop{false};
  std::thread hog([&] {
    while (!stop.load(std::memory_order_relaxed)) {
    }
  });
  bool slow = false;
  for (int i = 0; i < 200 && !slow; ++i) {
    WaitPolicy::yield();
    slow = WaitPolicy::yields_slow(WaitPolicy::Clock::now());
  }
  stop = true;
  hog.join();
  ASSERT_EQ(sched_setaffinity(0, sizeof(before), &before), 0);
  ASSERT_TRUE(slow) << "200 yields next to a busy thread on one core were all fast";
  WaitPolicy crowded(WaitPolicy::for_tcp(50, 1 << 20));
  const auto now = WaitPolicy::Clock::now();
  EXPECT_EQ(crowded.phase(now, now), Phase::kBlock);
}

TEST(WaitPolicy, NoBusyWaitingWhenTheBudgetIsZero) {
  WaitPolicy off(WaitPolicy::for_tcp(0, 1));
  EXPECT_FALSE(off.busy_enabled());
  EXPECT_EQ(off.phase(t0(), t0()), Phase::kBlock);
}

}  // namespace
}  // namespace chorus::engine
