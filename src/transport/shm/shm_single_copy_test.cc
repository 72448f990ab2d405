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

}  // namespace
}  // namespace chorus::shm::testing
