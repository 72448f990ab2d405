// SpinLock: mutual exclusion between threads that outnumber the processors.
#include "util/spin_lock.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>
#include <vector>

namespace chorus::util {
namespace {

// Unlocked, the four threads' read-modify-write of two counters would lose updates and
// let the two drift apart; under the lock none is lost.
TEST(SpinLock, KeepsUpdatesWhole) {
  SpinLock lock;
  long a = 0, b = 0;
  constexpr int kThreads = 4, kRounds = 200000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kRounds; ++i) {
        std::lock_guard<SpinLock> g(lock);
        const long seen = a;
        b += 1;
        a = seen + 1;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(a, long{kThreads} * kRounds);
  EXPECT_EQ(b, a);
}

}  // namespace
}  // namespace chorus::util
