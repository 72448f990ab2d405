// Tests of the operation kinds' names and properties.
#include "op/kind.h"

#include <gtest/gtest.h>

namespace chorus::op {
namespace {

TEST(KindTest, Names) {
  const char* want[] = {"all_reduce", "reduce", "broadcast", "all_gather", "reduce_scatter",
                        "all_to_all", "all_to_all_v", "gather", "scatter", "barrier", "send", "recv"};
  static_assert(sizeof(want) / sizeof(want[0]) == kNumKinds);
  for (int k = 0; k < kNumKinds; ++k) EXPECT_STREQ(to_string(static_cast<CollKind>(k)), want[k]);
}

}  // namespace
}  // namespace chorus::op
