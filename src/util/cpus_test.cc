#include "util/cpus.h"

#include <gtest/gtest.h>

#include <thread>

namespace chorus {
namespace {

TEST(Cpus, RunnableTasksFromLoadavg) {
  EXPECT_EQ(runnable_tasks("0.52 0.58 0.59 3/456 7890\n"), 3);
  EXPECT_EQ(runnable_tasks("0.00 0.01 0.05 1/97 12"), 1);
  EXPECT_EQ(runnable_tasks("garbage"), 0);
  EXPECT_GE(runnable_tasks_now(), 1);  // this thread, running
  EXPECT_GE(usable_cores(), 1);
}

// The thread lands on the processor asked for, and keeps the mask it had; a processor
// outside the mask is refused and changes nothing. In a thread of its own, so the test
// process's main thread is never moved.
TEST(Cpus, MoveToCpuMovesAndKeepsTheMask) {
  std::thread([] {
    cpu_set_t mask, now;
    ASSERT_EQ(::sched_getaffinity(0, sizeof mask, &mask), 0);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &mask)) continue;
      ASSERT_TRUE(move_to_cpu(cpu)) << "processor " << cpu;
      EXPECT_EQ(::sched_getcpu(), cpu);
      ASSERT_EQ(::sched_getaffinity(0, sizeof now, &now), 0);
      EXPECT_TRUE(CPU_EQUAL(&now, &mask)) << "after the move to " << cpu;
    }
    int outside = 0;
    while (outside < CPU_SETSIZE && CPU_ISSET(outside, &mask)) ++outside;
    if (outside < CPU_SETSIZE) {
      EXPECT_FALSE(move_to_cpu(outside));
    }
    EXPECT_FALSE(move_to_cpu(-1));
    ASSERT_EQ(::sched_getaffinity(0, sizeof now, &now), 0);
    EXPECT_TRUE(CPU_EQUAL(&now, &mask));
  }).join();
}

}  // namespace
}  // namespace chorus
