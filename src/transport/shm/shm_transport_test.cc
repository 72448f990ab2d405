// Data-path tests of the shm transport over real processes: all sizes through a small
// ring, both directions at once, tags out of order, FIFO per tag, oversubscription.
#include <sched.h>

#include <cstring>
#include <filesystem>

#include "transport/shm/test_world.h"

namespace chorus::shm::testing {
namespace {

constexpr int kWaitMs = 20000;

void expect_all_pass(const std::vector<int>& codes) {
  for (std::size_t r = 0; r < codes.size(); ++r) EXPECT_EQ(codes[r], 0) << "rank " << r;
}

TEST(ShmTransport, PingPongAllSizesThroughASmallRing) {
  World w(2);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    for (std::size_t bytes : {0ul, 1ul, 7ul, 100ul, 4096ul, 65536ul, 1ul << 20, 64ul << 20}) {
      auto msg = pattern(bytes, static_cast<std::uint32_t>(bytes));
      std::vector<std::uint8_t> got(bytes);
      Tag tag{1, bytes, 0, 42};
      if (rank == 0) {
        SHM_CHECK(transport::send(*t, 1, tag, msg.data(), bytes, in_ms(kWaitMs)).is_ok(), "send");
        SHM_CHECK(transport::recv(*t, 1, tag, got.data(), bytes, in_ms(kWaitMs)).is_ok(), "recv");
      } else {
        SHM_CHECK(transport::recv(*t, 0, tag, got.data(), bytes, in_ms(kWaitMs)).is_ok(), "recv");
        SHM_CHECK(transport::send(*t, 0, tag, got.data(), bytes, in_ms(kWaitMs)).is_ok(), "send");
      }
      SHM_CHECK(got == msg, "payload of %zu bytes differs", bytes);
    }
  }));
}

TEST(ShmTransport, BidirectionalLargeExchangeDoesNotDeadlock) {
  World w(2);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    const std::size_t bytes = 16 << 20;
    auto mine = pattern(bytes, rank), theirs = pattern(bytes, 1 - rank);
    std::vector<std::uint8_t> got(bytes);
    Status st = transport::send_recv(*t, 1 - rank, Tag{1, 1}, mine.data(), bytes, 1 - rank,
                                     Tag{1, 1}, got.data(), bytes, in_ms(kWaitMs));
    SHM_CHECK(st.is_ok(), "%s", st.to_string().c_str());
    SHM_CHECK(got == theirs, "payload differs");
  }));
}

TEST(ShmTransport, ManyTagsReceivedOutOfOrder) {
  World w(2);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    constexpr int kTags = 40;
    auto size_of = [](int i) -> std::size_t { return i % 4 == 0 ? (256 << 10) + i : 10 * i; };
    if (rank == 0) {
      std::vector<std::vector<std::uint8_t>> msgs;
      std::vector<transport::RequestPtr> reqs;
      for (int i = 0; i < kTags; ++i) msgs.push_back(pattern(size_of(i), i));
      for (int i = 0; i < kTags; ++i) {
        auto r = t->post_send(1, Tag{1, 5, static_cast<std::uint32_t>(i)}, msgs[i].data(), size_of(i));
        SHM_CHECK(r.has_value(), "post");
        reqs.push_back(std::move(*r));
      }
      for (auto& r : reqs) SHM_CHECK(transport::wait_one(*t, r.get(), in_ms(kWaitMs)).is_ok(), "w");
      return;
    }
    // Wait for the last tag alone first: the large messages ahead of it must move aside.
    std::vector<std::uint8_t> last(size_of(kTags - 1));
    Status st = transport::recv(*t, 0, Tag{1, 5, kTags - 1}, last.data(), last.size(), in_ms(kWaitMs));
    SHM_CHECK(st.is_ok() && last == pattern(last.size(), kTags - 1), "%s", st.to_string().c_str());
    std::vector<std::vector<std::uint8_t>> got(kTags);
    std::vector<transport::RequestPtr> reqs;
    for (int i = kTags - 2; i >= 0; --i) {
      got[i].resize(size_of(i));
      auto r = t->post_recv(0, Tag{1, 5, static_cast<std::uint32_t>(i)}, got[i].data(), size_of(i));
      SHM_CHECK(r.has_value(), "post");
      reqs.push_back(std::move(*r));
    }
    for (auto& r : reqs) SHM_CHECK(transport::wait_one(*t, r.get(), in_ms(kWaitMs)).is_ok(), "w");
    for (int i = 0; i < kTags - 1; ++i) SHM_CHECK(got[i] == pattern(size_of(i), i), "tag %d", i);
  }));
}

TEST(ShmTransport, SameTagIsFifo) {
  World w(2);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    for (int i = 0; i < 50; ++i) {
      std::uint32_t v = i, got = 0;
      if (rank == 0) SHM_CHECK(transport::send(*t, 1, Tag{3}, &v, 4, in_ms(kWaitMs)).is_ok(), "s");
      else {
        SHM_CHECK(transport::recv(*t, 0, Tag{3}, &got, 4, in_ms(kWaitMs)).is_ok(), "r");
        SHM_CHECK(got == v, "got %u want %u", got, v);
      }
    }
  }));
}

TEST(ShmTransport, SegmentIsRemovedRightAfterSetup) {
  World w(3);
  const std::string path = "/dev/shm" + segment_name(w.token);
  expect_all_pass(w.run([&](int rank) {
    auto t = w.connect(rank);
    // Rank 0 removes the name before its set-up returns (the others may return earlier).
    if (rank == 0) SHM_CHECK(!std::filesystem::exists(path), "%s still exists", path.c_str());
    char a = 1;
    const int next = (rank + 1) % 3, prev = (rank + 2) % 3;
    char b = 0;
    Status st = transport::send_recv(*t, next, Tag{1}, &a, 1, prev, Tag{1}, &b, 1, in_ms(kWaitMs));
    SHM_CHECK(st.is_ok() && b == 1, "%s", st.to_string().c_str());
    if (rank == 1) SHM_CHECK(!std::filesystem::exists(path), "%s still exists", path.c_str());
  }));
  EXPECT_FALSE(std::filesystem::exists(path));
}

// 8 ranks pinned to 2 cores: waiting ranks must yield their core, not spin on it.
TEST(ShmTransport, EightRanksOnTwoCoresRingExchangeIsFast) {
  World w(8);
  w.ring_bytes = 256 << 10;
  auto t0 = std::chrono::steady_clock::now();
  expect_all_pass(w.run([&](int rank) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    CPU_SET(1, &set);
    (void)sched_setaffinity(0, sizeof(set), &set);
    auto t = w.connect(rank);
    const int next = (rank + 1) % 8, prev = (rank + 7) % 8;
    for (std::size_t bytes : {8ul, 4096ul, 1ul << 20}) {
      auto mine = pattern(bytes, rank);
      std::vector<std::uint8_t> got(bytes);
      for (std::uint64_t it = 0; it < (bytes < 4096 ? 500u : 20u); ++it) {
        Tag tag{2, it, static_cast<std::uint32_t>(bytes)};
        Status st = transport::send_recv(*t, next, tag, mine.data(), bytes, prev, tag, got.data(),
                                         bytes, in_ms(kWaitMs));
        SHM_CHECK(st.is_ok(), "%s", st.to_string().c_str());
      }
      SHM_CHECK(got == pattern(bytes, prev), "payload differs");
    }
  }, 60000));
  auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(secs, 10.0) << "8 ranks on 2 cores took " << secs << " s";
  std::printf("8 ranks on 2 cores: %.3f s\n", secs);
}

}  // namespace
}  // namespace chorus::shm::testing
