// all_to_all_v (uneven counts, zero counts, scattered displacements), send/recv (ring
// exchange and in-order delivery between a pair) and barrier on 1-8 ranks.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "collective_grid.h"
#include "rank_runner.h"
#include "reference.h"

namespace chorus::mp {
namespace {

using chorus::testing::check;
using chorus::testing::RankRunner;
using chorus::testing::step;

class PointToPoint : public ::testing::TestWithParam<int> {};

constexpr std::size_t kStride = 10000000;  // pattern index space per destination

// Elements rank `src` sends to rank `dst` (some pairs send nothing).
std::size_t pair_count(int src, int dst, std::size_t scale, int salt) {
  if ((src * 3 + dst * 5 + salt) % 4 == 0) return 0;
  return static_cast<std::size_t>((src + 2 * dst + salt) % 3 + 1) * scale;
}

TEST_P(PointToPoint, AllToAllV) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    int salt = 0;
    for (const Combo& c : move_grid(n, 1, 3 * n)) {
      ++salt;
      std::vector<std::size_t> sc(n), sd(n), rc(n), rd(n);
      std::size_t soff = 3, roff = 1;  // blocks in reverse rank order, with gaps
      for (int p = n - 1; p >= 0; --p) {
        sc[p] = pair_count(r, p, c.count, salt);
        sd[p] = soff;
        soff += sc[p] + 3;
        rc[p] = pair_count(p, r, c.count, salt);
        rd[p] = roff;
        roff += rc[p] + 2;
      }
      std::string what = label("all_to_all_v", c.dtype, "", c.count, "(scale; gaps)");
      step(what);
      Buffer send(c.dtype, soff), recv(c.dtype, roff);
      for (int p = 0; p < n; ++p) fill_pattern(c.dtype, r, p * kStride, sc[p], salt, send.at(sd[p]));
      Buffer want = recv;  // gaps must keep their bytes
      for (int q = 0; q < n; ++q) fill_pattern(c.dtype, q, r * kStride, rc[q], salt, want.at(rd[q]));
      comm.all_to_all_v(send.data(), sc, sd, recv.data(), rc, rd, c.dtype);
      std::string bad = compare(c.dtype, recv.data(), want.data(), roff);
      check(bad.empty(), what + ": " + bad);
      check(recv.guard_damage(what).empty(), recv.guard_damage(what));
    }
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, deadline_for(GetParam()))));
}

// send/recv needs a peer (sending to self is an error), so this suite starts at 2 ranks.
class SendRecvRanks : public PointToPoint {};

TEST_P(SendRecvRanks, SendRecv) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    const int right = (r + 1) % n, left = (r + n - 1) % n;
    int salt = 0;
    for (const Combo& c : move_grid(n, 1, 1)) {
      ++salt;
      std::string what = label("send/recv ring", c.dtype, "", c.count, "");
      step(what);
      Buffer out(c.dtype, c.count), in(c.dtype, c.count), want(c.dtype, c.count);
      fill_pattern(c.dtype, r, 0, c.count, salt, out.data());
      fill_pattern(c.dtype, left, 0, c.count, salt, want.data());
      if (r % 2 == 0) {
        comm.send(out.data(), c.count, c.dtype, right);
        comm.recv(in.data(), c.count, c.dtype, left);
      } else {
        comm.recv(in.data(), c.count, c.dtype, left);
        comm.send(out.data(), c.count, c.dtype, right);
      }
      std::string bad = compare(c.dtype, in.data(), want.data(), c.count);
      check(bad.empty(), what + " (from rank " + std::to_string(left) + "): " + bad);
      check(in.guard_damage(what).empty(), in.guard_damage(what));
    }
    // Several messages of one pair arrive in the order sent; rank 0 drains the
    // senders in reverse rank order.
    for (DataType t : kAllTypes) {
      const std::size_t sizes[] = {7, 1031, 0, 1};
      step(std::string("send/recv fan-in ordering ") + to_string(t));
      if (r != 0) {
        int k = 0;
        for (std::size_t count : sizes) {
          Buffer b(t, count);
          fill_pattern(t, r, 0, count, 100 + k++, b.data());
          comm.send(b.data(), count, t, 0);
        }
        continue;
      }
      for (int q = n - 1; q >= 1; --q) {
        int k = 0;
        for (std::size_t count : sizes) {
          Buffer b(t, count), want(t, count);
          comm.recv(b.data(), count, t, q);
          fill_pattern(t, q, 0, count, 100 + k++, want.data());
          std::string bad = compare(t, b.data(), want.data(), count);
          check(bad.empty(), std::string("message ") + std::to_string(k) + " from rank " +
                                 std::to_string(q) + " (" + to_string(t) + "): " + bad);
        }
      }
    }
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, deadline_for(GetParam()))));
}

TEST_P(PointToPoint, Barrier) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    namespace fs = std::filesystem;
    const fs::path dir = chorus::testing::this_rank().temp_dir;
    for (int it = 0; it < 4; ++it) {
      step("barrier " + std::to_string(it));
      // One late rank per round: nobody may leave the barrier before it arrives.
      if (r == it % n) std::this_thread::sleep_for(std::chrono::milliseconds(300));
      const fs::path mine = dir / ("arrived_" + std::to_string(it) + "_" + std::to_string(r));
      int fd = open(mine.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
      check(fd >= 0, "cannot create " + mine.string());
      close(fd);
      comm.barrier();
      for (int q = 0; q < n; ++q) {
        check(fs::exists(dir / ("arrived_" + std::to_string(it) + "_" + std::to_string(q))),
              "left barrier " + std::to_string(it) + " before rank " + std::to_string(q) +
                  " entered it");
      }
    }
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, deadline_for(GetParam()))));
}

INSTANTIATE_TEST_SUITE_P(Ranks, PointToPoint, ::testing::ValuesIn(kRankCounts), rank_count_name);
INSTANTIATE_TEST_SUITE_P(Ranks, SendRecvRanks, ::testing::Values(2, 3, 4, 5, 8), rank_count_name);

}  // namespace
}  // namespace chorus::mp
