// chorus-tune's per-call time (tools/chorus-tune/batches.h): batches of back-to-back calls
// (a round's) count the calls that wait for what earlier ones left undone, and stalls.
#include "batches.h"

#include <gtest/gtest.h>

#include <vector>

namespace chorus_tune {
namespace {

// A root that queues four calls at 1 us each and waits 21 us for ring space on the fifth
// (a loop of them costs 5 us per call): the median single call says 1 us, the batches 5.
TEST(TuneBatches, ABatchCountsTheCallThatWaits) {
  std::vector<double> calls;
  for (int round = 0; round < 4; ++round)
    for (double us : {1.0, 1.0, 1.0, 1.0, 21.0}) calls.push_back(us);
  EXPECT_DOUBLE_EQ(median(calls), 1.0);
  const std::vector<double> means = batch_means(calls, 5);
  ASSERT_EQ(means.size(), 4u);
  EXPECT_DOUBLE_EQ(median(means), 5.0);
}

TEST(TuneBatches, TheMedianDropsADescheduledBatch) {
  const std::vector<double> calls = {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 900, 2, 2, 2, 2};
  const std::vector<double> means = batch_means(calls, 5);
  ASSERT_EQ(means.size(), 3u);
  EXPECT_DOUBLE_EQ(median(means), 2.0);
}

// The tree at 4 ranks on 2 processors: most calls short, one in a round stalls for a
// rank that slept. A loop pays 24.75 us a call; the median batch of 5 said 5.
TEST(TuneBatches, ARoundCountsItsStalls) {
  std::vector<std::vector<double>> rounds;
  for (int r = 0; r < 3; ++r) {
    std::vector<double> calls(20, 5.0);
    calls[7 + r] = 400.0;
    rounds.push_back(calls);
  }
  EXPECT_DOUBLE_EQ(time_per_call(rounds), 24.75);
  EXPECT_DOUBLE_EQ(median(batch_means(rounds[0], 5)), 5.0);
}

TEST(TuneBatches, TheMedianRoundDropsADescheduledOne) {
  std::vector<std::vector<double>> rounds(3, std::vector<double>(10, 2.0));
  rounds[1][4] = 9000.0;
  EXPECT_DOUBLE_EQ(time_per_call(rounds), 2.0);
  EXPECT_DOUBLE_EQ(time_per_call({}), 0.0);
  EXPECT_DOUBLE_EQ(time_per_call({{}, {3.0}}), 3.0);
}

TEST(TuneBatches, AShortLastBatchAndNoCalls) {
  const std::vector<double> means = batch_means({1, 3, 5, 7, 9, 4, 6}, 5);
  ASSERT_EQ(means.size(), 2u);
  EXPECT_DOUBLE_EQ(means[0], 5.0);
  EXPECT_DOUBLE_EQ(means[1], 5.0);
  EXPECT_TRUE(batch_means({}, 5).empty());
  EXPECT_DOUBLE_EQ(median({}), 0.0);
  EXPECT_EQ(batch_means({1, 2}, 0).size(), 2u);  // a batch of at least one call
}

}  // namespace
}  // namespace chorus_tune
