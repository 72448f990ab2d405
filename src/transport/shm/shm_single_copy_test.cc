// Single-copy reads and writes of the shm transport over real processes: agreed at
// set-up (one rank without them turns them off everywhere), read_peer / write_peer copy
// exactly the bytes of the buffer a peer published, and a peer that is gone gives
// kPeerLost.
#include <signal.h>

#include <cstring>

#include "transport/shm/test_world.h"

namespace chorus::shm::testing {
namespace {

constexpr int kWaitMs = 10000;

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
    const std::uint64_t addr = reinterpret_cast<std::uintptr_t>(mine.data());
    std::memcpy(win->window(rank), &addr, sizeof(addr));
    Status st = win->barrier(Tag{1, 1, 0}, in_ms(kWaitMs));
    SHM_CHECK(st.is_ok(), "barrier: %s", st.to_string().c_str());
    for (int r = 0; r < w.n; ++r) {
      if (r == rank) continue;
      std::uint64_t theirs = 0;
      std::memcpy(&theirs, win->window(r), sizeof(theirs));
      std::vector<std::uint8_t> got(bytes);
      st = win->read_peer(r, reinterpret_cast<const void*>(theirs), got.data(), bytes);
      SHM_CHECK(st.is_ok(), "read_peer(%d): %s", r, st.to_string().c_str());
      SHM_CHECK(got == pattern(bytes, static_cast<std::uint32_t>(100 + r)), "bytes of rank %d", r);
    }
    st = win->barrier(Tag{1, 1, 1}, in_ms(kWaitMs));  // buffers stay until all have read
    SHM_CHECK(st.is_ok(), "barrier: %s", st.to_string().c_str());
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
    const std::uint64_t addr = reinterpret_cast<std::uintptr_t>(target.data());
    std::memcpy(win->window(rank), &addr, sizeof(addr));
    Status st = win->barrier(Tag{1, 1, 0}, in_ms(kWaitMs));
    SHM_CHECK(st.is_ok(), "barrier: %s", st.to_string().c_str());
    if (rank == 0) {
      std::uint64_t theirs = 0;
      std::memcpy(&theirs, win->window(1), sizeof(theirs));
      const auto data = pattern(bytes, 42);
      st = win->write_peer(1, data.data(), reinterpret_cast<void*>(theirs), bytes);
      SHM_CHECK(st.is_ok(), "write_peer: %s", st.to_string().c_str());
    }
    st = win->barrier(Tag{1, 1, 1}, in_ms(kWaitMs));
    SHM_CHECK(st.is_ok(), "barrier: %s", st.to_string().c_str());
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
    const std::uint64_t addr = reinterpret_cast<std::uintptr_t>(mine.data());
    std::memcpy(win->window(rank), &addr, sizeof(addr));
    Status st = win->barrier(Tag{1, 1, 0}, in_ms(kWaitMs));
    SHM_CHECK(st.is_ok(), "barrier: %s", st.to_string().c_str());
    if (rank == 1) ::kill(::getpid(), SIGKILL);
    std::uint64_t theirs = 0;
    std::memcpy(&theirs, win->window(1), sizeof(theirs));
    // Rank 1 is dead (a zombie until reaped: no memory left to read) within moments.
    for (int i = 0; i < 2000; ++i) {
      std::vector<std::uint8_t> got(4096);
      st = win->read_peer(1, reinterpret_cast<const void*>(theirs), got.data(), got.size());
      if (!st.is_ok()) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    SHM_CHECK(st.code() == ErrorCode::kPeerLost && st.peer() == 1 && contains(st, "rank 1"),
              "%s", st.to_string().c_str());
  });
  EXPECT_EQ(codes[0], 0);
  EXPECT_EQ(codes[1], 128 + SIGKILL);
}

}  // namespace
}  // namespace chorus::shm::testing
