// Scratch: a slot's buffer is kept for the thread's next operations (no fresh pages per
// operation), grows on demand, is separate per slot and per thread, and oversized
// requests are not retained.
#include "algo/scratch.h"

#include <gtest/gtest.h>

#include <thread>

namespace chorus::algo {
namespace {

TEST(Scratch, SlotBufferIsReusedAndGrows) {
  char* first = nullptr;
  {
    Scratch s(ScratchSlot::kRingBlock0, 1000);
    first = s.data();
    ASSERT_NE(first, nullptr);
    first[999] = 1;
  }
  {
    Scratch s(ScratchSlot::kRingBlock0, 500);
    EXPECT_EQ(s.data(), first);  // kept: no new allocation, no new pages
  }
  Scratch big(ScratchSlot::kRingBlock0, 1 << 20);
  big.data()[(1 << 20) - 1] = 2;  // really that large
  Scratch other(ScratchSlot::kRingBlock1, 1000);
  EXPECT_NE(other.data(), big.data());
}

TEST(Scratch, ZeroBytesIsNullAndThreadsHaveTheirOwn) {
  EXPECT_EQ(Scratch(ScratchSlot::kRhd, 0).data(), nullptr);
  Scratch mine(ScratchSlot::kRhd, 64);
  char* theirs = nullptr;
  std::thread([&] { theirs = Scratch(ScratchSlot::kRhd, 64).data(); }).join();
  EXPECT_NE(theirs, mine.data());
}

TEST(Scratch, OversizedBuffersAreNotRetained) {
  char* retained = Scratch(ScratchSlot::kPairwise, 4096).data();
  {
    Scratch huge(ScratchSlot::kPairwise, Scratch::kRetainBytes + 1);
    EXPECT_NE(huge.data(), retained);
  }
  EXPECT_EQ(Scratch(ScratchSlot::kPairwise, 4096).data(), retained);
}

}  // namespace
}  // namespace chorus::algo
