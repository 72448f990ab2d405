#include "core_trips.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <nlohmann/json.hpp>

namespace chorus_info {
namespace {

TEST(CoreTrips, EveryPairUpToTheBoundThenTheFirstWithEachOther) {
  std::vector<CoreTrip> all = pairs_of({0, 2, 5});
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].a, 0);
  EXPECT_EQ(all[0].b, 2);
  EXPECT_EQ(all[2].a, 2);
  EXPECT_EQ(all[2].b, 5);
  std::vector<CoreTrip> row = pairs_of({0, 1, 2, 3}, 3);
  ASSERT_EQ(row.size(), 3u);
  for (const CoreTrip& t : row) EXPECT_EQ(t.a, 0);
  EXPECT_TRUE(pairs_of({7}).empty());
}

TEST(CoreTrips, MedianOfUnsortedValues) {
  EXPECT_EQ(median({5, 1, 3}), 3);
  EXPECT_EQ(median({}), 0);
}

TEST(CoreTrips, AllowedCpusAreThisThreadsMask) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  std::vector<int> cpus = allowed_cpus();
  ASSERT_EQ(static_cast<int>(cpus.size()), CPU_COUNT(&set));
  for (int c : cpus) EXPECT_TRUE(CPU_ISSET(c, &set)) << c;
}

TEST(CoreTrips, MeasuresTwoRealProcessors) {
  std::vector<int> cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "one processor in the mask";
  CoreTrip t = measure(cpus[0], cpus[1]);
  EXPECT_EQ(t.a, cpus[0]);
  EXPECT_EQ(t.b, cpus[1]);
  // A round trip is two cache-line transfers: far above a nanosecond, far below a
  // millisecond even on a busy host (a median over 50 batches).
  EXPECT_GT(t.round_trip_ns, 1);
  EXPECT_LT(t.round_trip_ns, 1e6);
  EXPECT_GT(t.handover_us, 0);
}

TEST(CoreTrips, AProcessorOutsideTheMaskGivesNoResult) {
  cpu_set_t set;
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  int outside = -1;
  for (int c = 0; c < CPU_SETSIZE && outside < 0; ++c)
    if (!CPU_ISSET(c, &set) && c < 1024) outside = c;
  ASSERT_GE(outside, 0);
  CoreTrip t = measure(allowed_cpus()[0], outside);
  EXPECT_EQ(t.round_trip_ns, 0);
  EXPECT_EQ(t.handover_us, 0);
  std::string text = format_trips_text({t});
  EXPECT_NE(text.find(" -  "), std::string::npos) << text;
  nlohmann::json j = nlohmann::json::parse(format_trips_json({0}, {t}));
  EXPECT_TRUE(j["pairs"][0]["round_trip_ns"].is_null());
}

}  // namespace
}  // namespace chorus_info
