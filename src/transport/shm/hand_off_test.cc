// HandOffMeter: nothing is published before three batches; the figure is the middle of the
// last three batch medians (one spoilt batch does not move it); samples that cannot be a
// hand-off are dropped; the floor is the least figure published.
#include "transport/shm/hand_off.h"

#include <gtest/gtest.h>

namespace chorus::shm {
namespace {

void batch(HandOffMeter& m, std::int64_t ns) {
  for (int i = 0; i < HandOffMeter::kBatch; ++i) m.add(ns);
}

TEST(HandOffMeterTest, MiddleOfThreeBatchMediansAndTheLeastSoFar) {
  HandOffMeter m;
  batch(m, 100);
  batch(m, 120);
  EXPECT_EQ(m.read().now_ns, 0);  // two batches: nothing yet
  batch(m, 110);
  EXPECT_EQ(m.read().now_ns, 110);
  EXPECT_EQ(m.read().floor_ns, 110);
  batch(m, 1900);  // one spoilt batch: the last three are 120, 110, 1900
  EXPECT_EQ(m.read().now_ns, 120);
  batch(m, 450);
  batch(m, 460);  // apart: 1900, 450, 460
  EXPECT_EQ(m.read().now_ns, 460);
  EXPECT_EQ(m.read().floor_ns, 110);
}

TEST(HandOffMeterTest, DropsWhatCannotBeAHandOff) {
  HandOffMeter m;
  for (int i = 0; i < 3 * HandOffMeter::kBatch; ++i) {
    m.add(0);
    m.add(-5);
    m.add(HandOffMeter::kMaxNs + 1);  // the waiter lost its processor
  }
  EXPECT_EQ(m.read().now_ns, 0);
  for (int i = 0; i < 3 * HandOffMeter::kBatch; ++i) m.add(i % 2 == 0 ? 80 : 90);
  EXPECT_GT(m.read().now_ns, 0);
  EXPECT_LE(m.read().now_ns, 90);
}

}  // namespace
}  // namespace chorus::shm
