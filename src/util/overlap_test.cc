#include "util/overlap.h"

#include <gtest/gtest.h>

namespace chorus::util {
namespace {

TEST(Overlap, SharedBytesOverlapTouchingOnesDoNot) {
  char buf[64];
  EXPECT_TRUE(overlaps(buf, 16, buf + 15, 16));   // one byte in common
  EXPECT_TRUE(overlaps(buf + 15, 16, buf, 16));   // either order
  EXPECT_TRUE(overlaps(buf, 64, buf + 8, 8));     // one inside the other
  EXPECT_TRUE(overlaps(buf, 8, buf, 8));          // the same range
  EXPECT_FALSE(overlaps(buf, 16, buf + 16, 16));  // adjacent
  EXPECT_FALSE(overlaps(buf + 16, 16, buf, 16));
}

TEST(Overlap, AnEmptyRangeOverlapsNothing) {
  char buf[64];
  EXPECT_FALSE(overlaps(buf + 8, 0, buf, 64));
  EXPECT_FALSE(overlaps(buf, 64, buf + 8, 0));
  EXPECT_FALSE(overlaps(buf, 0, buf, 0));
}

}  // namespace
}  // namespace chorus::util
