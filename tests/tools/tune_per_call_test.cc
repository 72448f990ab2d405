// chorus-tune's time per call (tools/chorus-tune/per_call.h): a round's back-to-back calls
// count the calls that wait for what earlier ones left undone, and stalls.
#include "per_call.h"

#include <gtest/gtest.h>

#include <vector>

namespace chorus_tune {
namespace {

// A root that queues four calls at 1 us each and waits 21 us for ring space on the fifth
// (a loop of them costs 5 us per call): the median single call says 1 us, the rounds 5.
TEST(TunePerCall, ARoundCountsTheCallThatWaits) {
  std::vector<std::vector<double>> rounds(3);
  for (auto& calls : rounds)
    for (int i = 0; i < 4; ++i)
      for (double us : {1.0, 1.0, 1.0, 1.0, 21.0}) calls.push_back(us);
  EXPECT_DOUBLE_EQ(median(rounds[0]), 1.0);
  EXPECT_DOUBLE_EQ(time_per_call(rounds), 5.0);
}

// The tree at 4 ranks on 2 processors: most calls short, one in a round stalls for a rank
// that slept. A loop pays 24.75 us a call; the median batch of 5 calls said 5.
TEST(TunePerCall, ARoundCountsItsStalls) {
  std::vector<std::vector<double>> rounds;
  for (int r = 0; r < 3; ++r) {
    std::vector<double> calls(20, 5.0);
    calls[7 + r] = 400.0;
    rounds.push_back(calls);
  }
  EXPECT_DOUBLE_EQ(time_per_call(rounds), 24.75);
}

TEST(TunePerCall, TheMedianRoundDropsADescheduledOne) {
  std::vector<std::vector<double>> rounds(3, std::vector<double>(10, 2.0));
  rounds[1][4] = 9000.0;
  EXPECT_DOUBLE_EQ(time_per_call(rounds), 2.0);
}

TEST(TunePerCall, EmptyRoundsAndNone) {
  EXPECT_DOUBLE_EQ(time_per_call({}), 0.0);
  EXPECT_DOUBLE_EQ(time_per_call({{}, {3.0, 5.0}}), 4.0);
  EXPECT_DOUBLE_EQ(median({}), 0.0);
  EXPECT_DOUBLE_EQ(median({3.0, 1.0, 2.0, 4.0}), 3.0);  // the upper of an even count
}

}  // namespace
}  // namespace chorus_tune
