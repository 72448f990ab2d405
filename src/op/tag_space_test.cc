// Tests of the tag-space allocation: point-to-point comms and phase step ranges.
#include "op/tag_space.h"

#include <gtest/gtest.h>

namespace chorus::op {
namespace {

TEST(TagSpaceTest, PointToPointCommsNeverEqualACollectiveComm) {
  for (std::uint32_t id : {0u, 1u, 7u, kCommIdMask}) {
    EXPECT_NE(p2p_comm(id, false), id);
    EXPECT_NE(p2p_comm(id, true), id);
    EXPECT_NE(p2p_comm(id, true), p2p_comm(id, false));
    EXPECT_EQ(p2p_comm(id, true) & kCommIdMask, id);
  }
  EXPECT_EQ(p2p_comm(5, false), 0x80000005u);
  EXPECT_EQ(p2p_comm(5, true), 0xC0000005u);
}

TEST(TagSpaceTest, PhasesTakeDisjointStepRanges) {
  EXPECT_EQ(phase_step_base(0, 1), 1u << 28);
  EXPECT_EQ(phase_step_base(0, 3), 3u << 28);
  for (std::uint32_t p = 1; p < kMaxPhase; ++p)
    EXPECT_GE(phase_step_base(0, p + 1) - phase_step_base(0, p), 1u << kPhaseStepShift);
}

}  // namespace
}  // namespace chorus::op
