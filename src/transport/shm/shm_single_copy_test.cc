// Single-copy reads and writes of the shm transport over real processes: agreed at
// set-up (one rank without them turns them off everywhere), read_peer / write_peer copy
// exactly the bytes of the buffer a peer published, a peer that is gone gives
// kPeerLost, and buffers in registered memory (mem_registry.h) move through maps.
#include <signal.h>

#include <cstring>

#include "transport/shm/mem_registry.h"
#include "transport/shm/peer_maps.h"
#include "transport/shm/test_world.h"

namespace chorus::shm::testing {
namespace {

constexpr int kWaitMs = 10000;

// Writes `buf`'s address into this rank's window, then a window barrier (step `step`).
void publish_and_wait(transport::SharedWindows* win, int rank, const void* buf, std::uint32_t step) {
  const std::uint64_t addr = reinterpret_cast<std::uintptr_t>(buf);
  std::memcpy(win->window(rank), &addr, sizeof(addr));
  Status st = win->barrier(Tag{1, 1, step}, in_ms(kWaitMs));
  SHM_CHECK(st.is_ok(), "barrier: %s", st.to_string().c_str());
}

// The address rank `r` published.
void* published(transport::SharedWindows* win, int r) {
  std::uint64_t addr = 0;
  std::memcpy(&addr, win->window(r), sizeof(addr));
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(addr));
}

// Every rank publishes the address of a private buffer through its window; after a
// barrier each reads every peer's buffer with read_peer and checks it byte for byte.
TEST(SingleCopy, EveryRankReadsEveryPeersPrivateBuffer) {
  World w(3);
  auto codes = w.run([&](int rank) {
    auto t = w.connect(rank);
    transport::SharedWindows* win = t->shared_windows();
    SHM_CHECK(win != nullptr && win->single_copy(), "single copy not agreed");
    const std::size_t bytes = (3 << 20) + 17;  // several pages, odd tail
    auto mine = pattern(bytes, static_cast<std::uint32_t>(100 + rank));
    publish_and_wait(win, rank, mine.data(), 0);
    for (int r = 0; r < w.n; ++r) {
      if (r == rank) continue;
      std::vector<std::uint8_t> got(bytes);
      Status st = win->read_peer(r, published(win, r), got.data(), bytes);
      SHM_CHECK(st.is_ok(), "read_peer(%d): %s", r, st.to_string().c_str());
      SHM_CHECK(got == pattern(bytes, static_cast<std::uint32_t>(100 + r)), "bytes of rank %d", r);
    }
    publish_and_wait(win, rank, mine.data(), 1);  // buffers stay until all have read
  });
  for (int c : codes) EXPECT_EQ(c, 0);
}

// write_peer: rank 0 fills the buffer rank 1 published; rank 1 finds it after a barrier.
TEST(SingleCopy, WritePeerFillsThePublishedBuffer) {
  World w(2);
  auto codes = w.run([&](int rank) {
    auto t = w.connect(rank);
    transport::SharedWindows* win = t->shared_windows();
    SHM_CHECK(win != nullptr && win->single_copy(), "single copy not agreed");
    const std::size_t bytes = (1 << 20) + 5;
    std::vector<std::uint8_t> target(bytes, 0);
    publish_and_wait(win, rank, target.data(), 0);
    if (rank == 0) {
      const auto data = pattern(bytes, 42);
      Status st = win->write_peer(1, data.data(), published(win, 1), bytes);
      SHM_CHECK(st.is_ok(), "write_peer: %s", st.to_string().c_str());
    }
    publish_and_wait(win, rank, target.data(), 1);
    if (rank == 1) SHM_CHECK(target == pattern(bytes, 42), "rank 1's buffer was not written");
  });
  for (int c : codes) EXPECT_EQ(c, 0);
}

TEST(SingleCopy, OneRankWithoutItTurnsItOffForAll) {
  World w(3);
  w.single_copy_off = 1;
  auto codes = w.run([&](int rank) {
    auto t = w.connect(rank);
    transport::SharedWindows* win = t->shared_windows();
    SHM_CHECK(win != nullptr, "no windows");
    SHM_CHECK(!win->single_copy(), "rank %d uses single copy although rank 1 turned it off", rank);
  });
  for (int c : codes) EXPECT_EQ(c, 0);
}

TEST(SingleCopy, ReadFromAPeerThatIsGoneIsPeerLost) {
  World w(2);
  auto codes = w.run([&](int rank) {
    auto t = w.connect(rank);
    transport::SharedWindows* win = t->shared_windows();
    std::vector<std::uint8_t> mine(4096, 7);
    publish_and_wait(win, rank, mine.data(), 0);
    if (rank == 1) ::kill(::getpid(), SIGKILL);
    Status st;
    // Rank 1 is dead (a zombie until reaped: no memory left to read) within moments.
    for (int i = 0; i < 2000; ++i) {
      std::vector<std::uint8_t> got(4096);
      st = win->read_peer(1, published(win, 1), got.data(), got.size());
      if (!st.is_ok()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    SHM_CHECK(st.code() == ErrorCode::kPeerLost && st.peer() == 1 && contains(st, "rank 1"),
              "%s", st.to_string().c_str());
  });
  EXPECT_EQ(codes[0], 0);
  EXPECT_EQ(codes[1], 128 + SIGKILL);
}


TEST(MemRegistry, ListsWhatItAllocatesUntilFreed) {
  MemRegistry& reg = MemRegistry::instance();
  ASSERT_GE(reg.page_fd(), 0);
  const std::size_t before = reg.listed();
  auto a = reg.alloc(5000);
  ASSERT_TRUE(a.has_value()) << a.status().to_string();
  auto* p = static_cast<unsigned char*>(*a);
  EXPECT_EQ(reg.listed(), before + 1);
  EXPECT_EQ(p[0], 0);
  EXPECT_EQ(p[8191], 0);  // rounded up to whole pages, zeroed
  p[8191] = 7;
  EXPECT_TRUE(reg.free(p).is_ok());
  EXPECT_EQ(reg.listed(), before);
  Status twice = reg.free(p);
  EXPECT_EQ(twice.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(twice.message().find("ptr"), std::string::npos) << twice.message();
  int local = 0;
  EXPECT_EQ(reg.free(&local).code(), ErrorCode::kInvalidArgument);
  auto none = reg.alloc(0);
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.status().code(), ErrorCode::kInvalidArgument);
}

// holds(): a range inside one listed region, not one that runs past it, nor a freed one.
TEST(MemRegistry, HoldsRangesOfListedRegionsOnly) {
  MemRegistry& reg = MemRegistry::instance();
  auto a = reg.alloc(8192);
  ASSERT_TRUE(a.has_value()) << a.status().to_string();
  auto* p = static_cast<char*>(*a);
  EXPECT_TRUE(reg.holds(p, 8192));
  EXPECT_TRUE(reg.holds(p + 100, 8000));
  EXPECT_FALSE(reg.holds(p + 100, 8100));
  EXPECT_FALSE(reg.holds(p - 1, 2));
  std::vector<char> heap(64);
  EXPECT_FALSE(reg.holds(heap.data(), 64));
  ASSERT_TRUE(reg.free(p).is_ok());
  EXPECT_FALSE(reg.holds(p, 1));
}

// Each rank's buffer in registered memory: peers read and write it through their map of
// the region (counted), byte for byte; a private buffer still takes process_vm_readv.
TEST(MemRegistry, PeersMoveRegisteredBuffersThroughMaps) {
  World w(2);
  auto codes = w.run([&](int rank) {
    auto t = w.connect(rank);
    transport::SharedWindows* win = t->shared_windows();
    SHM_CHECK(win != nullptr && win->single_copy(), "single copy not agreed");
    const std::size_t bytes = (2 << 20) + 17;
    auto reg = MemRegistry::instance().alloc(bytes);
    SHM_CHECK(reg.has_value(), "alloc: %s", reg.status().to_string().c_str());
    auto* mine = static_cast<std::uint8_t*>(*reg);
    const auto want = pattern(bytes, static_cast<std::uint32_t>(7 + rank));
    std::memcpy(mine, want.data(), bytes);
    const int peer = 1 - rank;
    PeerMaps& maps = PeerMaps::instance();
    publish_and_wait(win, rank, mine, 0);
    const std::uint64_t n0 = maps.mapped_transfers();
    std::vector<std::uint8_t> got(bytes);
    Status st = win->read_peer(peer, published(win, peer), got.data(), bytes);
    SHM_CHECK(st.is_ok(), "read_peer: %s", st.to_string().c_str());
    SHM_CHECK(got == pattern(bytes, static_cast<std::uint32_t>(7 + peer)), "bytes read");
    SHM_CHECK(maps.mapped_transfers() == n0 + 1, "the read did not go through a map");
    publish_and_wait(win, rank, mine, 1);  // both have read: now each writes the other's
    if (rank == 0) {
      const auto data = pattern(bytes, 99);
      st = win->write_peer(1, data.data(), published(win, 1), bytes);
      SHM_CHECK(st.is_ok(), "write_peer: %s", st.to_string().c_str());
      SHM_CHECK(maps.mapped_transfers() == n0 + 2, "the write did not go through a map");
    }
    publish_and_wait(win, rank, mine, 2);
    if (rank == 1)
      SHM_CHECK(std::memcmp(mine, pattern(bytes, 99).data(), bytes) == 0, "not written");
    std::vector<std::uint8_t> priv = pattern(4096, static_cast<std::uint32_t>(rank));
    publish_and_wait(win, rank, priv.data(), 3);
    std::vector<std::uint8_t> small(4096);
    st = win->read_peer(peer, published(win, peer), small.data(), small.size());
    SHM_CHECK(st.is_ok() && small == pattern(4096, static_cast<std::uint32_t>(peer)),
              "private buffer read");
    SHM_CHECK(maps.mapped_transfers() == n0 + (rank == 0 ? 2 : 1), "a private buffer was mapped");
    publish_and_wait(win, rank, priv.data(), 4);
    SHM_CHECK(MemRegistry::instance().free(mine).is_ok(), "free");
  });
  for (int c : codes) EXPECT_EQ(c, 0);
}

// A region freed and another allocated (often at the same address) is read afresh: the
// reader's map of the freed one is never used for the new one.
TEST(MemRegistry, AReallocatedRegionIsMappedAgain) {
  World w(2);
  auto codes = w.run([&](int rank) {
    auto t = w.connect(rank);
    transport::SharedWindows* win = t->shared_windows();
    SHM_CHECK(win != nullptr && win->single_copy(), "single copy not agreed");
    const std::size_t bytes = 1 << 20;
    for (std::uint32_t round = 0; round < 3; ++round) {
      void* mine = nullptr;
      if (rank == 1) {
        auto reg = MemRegistry::instance().alloc(bytes);
        SHM_CHECK(reg.has_value(), "alloc: %s", reg.status().to_string().c_str());
        mine = *reg;
        std::memcpy(mine, pattern(bytes, 50 + round).data(), bytes);
      }
      publish_and_wait(win, rank, mine, 2 * round);
      if (rank == 0) {
        std::vector<std::uint8_t> got(bytes);
        Status st = win->read_peer(1, published(win, 1), got.data(), bytes);
        SHM_CHECK(st.is_ok(), "read_peer: %s", st.to_string().c_str());
        SHM_CHECK(got == pattern(bytes, 50 + round), "round %u read stale bytes", round);
      }
      publish_and_wait(win, rank, mine, 2 * round + 1);
      if (rank == 1) SHM_CHECK(MemRegistry::instance().free(mine).is_ok(), "free");
    }
  });
  for (int c : codes) EXPECT_EQ(c, 0);
}

}  // namespace
}  // namespace chorus::shm::testing
