// Segment::populate: which pages of the shared segment a rank faults in, and that it
// changes no byte.
#include "transport/shm/segment.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace chorus::shm {
namespace {

// Bytes of the segment's pages that are in memory (mincore over the whole mapping).
std::uint64_t resident_bytes(const Segment& seg, std::uint64_t bytes) {
  const std::uint64_t pages = (bytes + 4095) / 4096;
  std::vector<unsigned char> in(pages);
  EXPECT_EQ(::mincore(const_cast<void*>(seg.base()), bytes, in.data()), 0);
  std::uint64_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n * 4096;
}

struct TestSegment {
  std::string name = "/chorus-segtest-" + std::to_string(::getpid());
  Segment seg;
  std::uint64_t bytes = 0;
  TestSegment(int n, std::uint64_t ring, std::uint64_t window) {
    bytes = Segment::size_for(n, ring, window);
    auto s = Segment::create(name, n, ring, 1, window);
    EXPECT_TRUE(s.has_value());
    if (s.has_value()) seg = std::move(*s);
  }
  ~TestSegment() { (void)Segment::unlink(name); }
};

TEST(SegmentPopulate, FaultsInTheRanksRingsAndEveryWindowOnly) {
  constexpr std::uint64_t kRing = 256 << 10, kWindow = 64 << 10;
  TestSegment t(3, kRing, kWindow);
  const std::uint64_t before = resident_bytes(t.seg, t.bytes);
  t.seg.populate(0);
  const std::uint64_t after = resident_bytes(t.seg, t.bytes);
  // Rank 0's four rings (0->1, 1->0, 0->2, 2->0) and the three windows came in...
  EXPECT_GE(after - before, 4 * (kRing - 4096) + 3 * kWindow - 3 * 4096);
  // ... but not the data of the rings between ranks 1 and 2.
  EXPECT_GE(t.bytes - after, 2 * (kRing - 4096));
  t.seg.populate(1);
  t.seg.populate(2);
  EXPECT_EQ(resident_bytes(t.seg, t.bytes), (t.bytes + 4095) / 4096 * 4096);
}

TEST(SegmentPopulate, ChangesNoByte) {
  TestSegment t(2, 64 << 10, 0);
  Ring to0 = t.seg.ring(1, 0);
  std::vector<unsigned char> sent(40000), got(40000);
  for (std::size_t i = 0; i < sent.size(); ++i) sent[i] = static_cast<unsigned char>(i * 7 + 3);
  to0.put(sent.data(), sent.size());  // rank 1 wrote before rank 0 came up
  t.seg.populate(0);
  t.seg.populate(1);
  Ring from1 = t.seg.ring(1, 0);
  ASSERT_EQ(from1.used_bytes(), sent.size());
  from1.get(got.data(), got.size());
  EXPECT_EQ(std::memcmp(sent.data(), got.data(), sent.size()), 0);
}

TEST(SegmentPopulate, LeavesRingsBeyondTheBoundToFirstUse) {
  // 3 ranks with 32 MiB rings: rank 0's four come to 128 MiB, over kPopulateBytes.
  constexpr std::uint64_t kRing = 32ull << 20;
  static_assert(4 * kRing > Segment::kPopulateBytes);
  TestSegment t(3, kRing, 0);
  const std::uint64_t before = resident_bytes(t.seg, t.bytes);
  t.seg.populate(0);
  EXPECT_EQ(resident_bytes(t.seg, t.bytes), before);
}

}  // namespace
}  // namespace chorus::shm
