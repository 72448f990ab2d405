#include "util/cpus.h"

#include <gtest/gtest.h>

namespace chorus {
namespace {

TEST(Cpus, RunnableTasksFromLoadavg) {
  EXPECT_EQ(runnable_tasks("0.52 0.58 0.59 3/456 7890\n"), 3);
  EXPECT_EQ(runnable_tasks("0.00 0.01 0.05 1/97 12"), 1);
  EXPECT_EQ(runnable_tasks("garbage"), 0);
  EXPECT_GE(runnable_tasks_now(), 1);  // this thread, running
  EXPECT_GE(usable_cores(), 1);
}

}  // namespace
}  // namespace chorus
