// LevelLog / LevelScope: levels recorded in order with their times, nothing without a log,
// the end stamped on an early return, a full log dropping further levels.
#include "op/level_log.h"

#include <gtest/gtest.h>

#include <string>

#include "op/args.h"

namespace chorus::op {
namespace {

int run_levels(LevelLog* log, bool fail_in_second) {
  {
    LevelScope a(log, 1, "host reduce_scatter", "windows");
  }
  {
    LevelScope b(log, 2, "across hosts all_reduce");
    if (fail_in_second) return 1;  // a failing phase still ends its level
  }
  LevelScope c(log, 3, "host all_gather", "messages");
  return 0;
}

TEST(LevelLog, ScopesRecordLevelsInOrderWithTheirTimes) {
  LevelLog log;
  const std::int64_t before = level_now_ns();
  EXPECT_EQ(run_levels(&log, false), 0);
  const std::int64_t after = level_now_ns();
  ASSERT_EQ(log.size(), 3);
  const OpLevel* l = log.data();
  EXPECT_STREQ(l[0].name, "host reduce_scatter");
  EXPECT_STREQ(l[0].via, "windows");
  EXPECT_EQ(l[0].level, 1);
  EXPECT_STREQ(l[1].name, "across hosts all_reduce");
  EXPECT_STREQ(l[1].via, "");
  EXPECT_EQ(l[1].level, 2);
  EXPECT_STREQ(l[2].name, "host all_gather");
  EXPECT_EQ(l[2].level, 3);
  EXPECT_GE(l[0].start_ns, before);
  for (int i = 0; i < 3; ++i) {
    EXPECT_LE(l[i].start_ns, l[i].end_ns) << i;
    if (i > 0) {
      EXPECT_LE(l[i - 1].end_ns, l[i].start_ns) << i;
    }
  }
  EXPECT_LE(l[2].end_ns, after);
}

TEST(LevelLog, EarlyReturnEndsTheLevel) {
  LevelLog log;
  EXPECT_EQ(run_levels(&log, true), 1);
  ASSERT_EQ(log.size(), 2);
  EXPECT_GE(log.data()[1].end_ns, log.data()[1].start_ns);
  EXPECT_GE(log.data()[1].start_ns, log.data()[0].end_ns);
}

TEST(LevelLog, NullLogRecordsNothing) {
  EXPECT_EQ(run_levels(nullptr, false), 0);  // no crash, nothing to look at
  const CollArgs a;
  EXPECT_EQ(a.levels, nullptr) << "levels are off unless core hands a log";
}

TEST(LevelLog, FullLogDropsFurtherLevels) {
  LevelLog log;
  for (int i = 0; i < LevelLog::kMax + 3; ++i) LevelScope s(&log, i, "level");
  EXPECT_EQ(log.size(), LevelLog::kMax);
  EXPECT_EQ(log.begin("one more", 9, ""), -1);
  log.end(-1);  // the slot of a dropped level: ignored
  EXPECT_EQ(log.data()[LevelLog::kMax - 1].level, LevelLog::kMax - 1);
}

}  // namespace
}  // namespace chorus::op
