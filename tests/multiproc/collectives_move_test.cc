// broadcast, all_gather, all_to_all, gather and scatter on 1-8 ranks: every dtype x
// count x placement, bit-exact (opaque bit patterns, NaNs included), with non-root
// ranks passing nullptr where the API allows.
#include <gtest/gtest.h>

#include <cstring>

#include "collective_grid.h"
#include "rank_runner.h"
#include "reference.h"

namespace chorus::mp {
namespace {

using chorus::testing::check;
using chorus::testing::RankRunner;
using chorus::testing::step;

class MoveCollectives : public ::testing::TestWithParam<int> {};

void expect_equal(DataType t, const void* got, const void* want, std::size_t count,
                  const std::string& what) {
  std::string bad = compare(t, got, want, count);
  check(bad.empty(), what + ": " + bad);
}

void expect_guard(const Buffer& b, const std::string& what) {
  std::string bad = b.guard_damage(what);
  check(bad.empty(), bad);
}

TEST_P(MoveCollectives, Broadcast) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    int salt = 0;
    for (const Combo& c : move_grid(n, 2, 1)) {
      const int root = ++salt % n;
      std::string what = label("broadcast", c.dtype, "", c.count,
                               c.placement ? "in-place" : "out-of-place", root);
      step(what);
      Buffer send(c.dtype, c.count), recv(c.dtype, c.count), want(c.dtype, c.count);
      fill_pattern(c.dtype, root, 0, c.count, salt, want.data());
      const void* in = nullptr;  // read on root only
      if (r == root) {
        Buffer& src = c.placement ? recv : send;
        std::memcpy(src.data(), want.data(), want.bytes());
        in = src.data();
      }
      comm.broadcast(in, recv.data(), c.count, c.dtype, root);
      expect_equal(c.dtype, recv.data(), want.data(), c.count, what);
      expect_guard(recv, what);
    }
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, deadline_for(GetParam()))));
}

TEST_P(MoveCollectives, AllGather) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    int salt = 0;
    for (const Combo& c : move_grid(n, 2, n)) {
      ++salt;
      std::string what = label("all_gather", c.dtype, "", c.count,
                               c.placement ? "in-place (send = recv + rank*count)" : "out-of-place");
      step(what);
      Buffer send(c.dtype, c.count), recv(c.dtype, c.count * n), want(c.dtype, c.count * n);
      for (int q = 0; q < n; ++q) fill_pattern(c.dtype, q, 0, c.count, salt, want.at(q * c.count));
      fill_pattern(c.dtype, r, 0, c.count, salt, send.data());
      const void* in = send.data();
      if (c.placement) {
        std::memcpy(recv.at(r * c.count), send.data(), send.bytes());
        in = recv.at(r * c.count);
      }
      comm.all_gather(in, recv.data(), c.count, c.dtype);
      expect_equal(c.dtype, recv.data(), want.data(), c.count * n, what);
      expect_guard(recv, what);
    }
    // The typed overload agrees with the untyped one.
    step("all_gather typed span<const int32_t>");
    std::vector<std::int32_t> mine = {r, r * 10 + 1}, all(2 * n);
    comm.all_gather(std::span<const std::int32_t>(mine), std::span<std::int32_t>(all));
    for (int q = 0; q < n; ++q)
      check(all[2 * q] == q && all[2 * q + 1] == q * 10 + 1, "typed all_gather: wrong block");
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, deadline_for(GetParam()))));
}

TEST_P(MoveCollectives, AllToAll) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    int salt = 0;
    for (const Combo& c : move_grid(n, 2, n)) {
      ++salt;
      std::string what = label("all_to_all", c.dtype, "", c.count,
                               c.placement ? "in-place" : "out-of-place");
      step(what);
      const std::size_t total = c.count * n;
      Buffer send(c.dtype, total), recv(c.dtype, total), want(c.dtype, total);
      // Block p of rank q's send holds q's elements [p*count, (p+1)*count).
      fill_pattern(c.dtype, r, 0, total, salt, send.data());
      for (int q = 0; q < n; ++q)
        fill_pattern(c.dtype, q, r * c.count, c.count, salt, want.at(q * c.count));
      Buffer keep = send;
      void* out = c.placement ? send.data() : recv.data();
      comm.all_to_all(send.data(), out, c.count, c.dtype);
      expect_equal(c.dtype, out, want.data(), total, what);
      expect_guard(send, what);
      expect_guard(recv, what);
      if (!c.placement) expect_equal(c.dtype, send.data(), keep.data(), total, what + " (send buffer)");
    }
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, deadline_for(GetParam()))));
}

TEST_P(MoveCollectives, Gather) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    int salt = 0;
    for (const Combo& c : move_grid(n, 1, n)) {
      const int root = ++salt % n;
      std::string what = label("gather", c.dtype, "", c.count, "(recv=nullptr off root)", root);
      step(what);
      Buffer send(c.dtype, c.count), recv(c.dtype, c.count * n), want(c.dtype, c.count * n);
      fill_pattern(c.dtype, r, 0, c.count, salt, send.data());
      comm.gather(send.data(), r == root ? recv.data() : nullptr, c.count, c.dtype, root);
      if (r != root) continue;
      for (int q = 0; q < n; ++q) fill_pattern(c.dtype, q, 0, c.count, salt, want.at(q * c.count));
      expect_equal(c.dtype, recv.data(), want.data(), c.count * n, what);
      expect_guard(recv, what);
    }
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, deadline_for(GetParam()))));
}

TEST_P(MoveCollectives, Scatter) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    int salt = 0;
    for (const Combo& c : move_grid(n, 1, n)) {
      const int root = ++salt % n;
      std::string what = label("scatter", c.dtype, "", c.count, "(send=nullptr off root)", root);
      step(what);
      Buffer send(c.dtype, c.count * n), recv(c.dtype, c.count), want(c.dtype, c.count);
      fill_pattern(c.dtype, root, 0, c.count * n, salt, send.data());
      fill_pattern(c.dtype, root, r * c.count, c.count, salt, want.data());
      comm.scatter(r == root ? send.data() : nullptr, recv.data(), c.count, c.dtype, root);
      expect_equal(c.dtype, recv.data(), want.data(), c.count, what);
      expect_guard(recv, what);
    }
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, deadline_for(GetParam()))));
}

INSTANTIATE_TEST_SUITE_P(Ranks, MoveCollectives, ::testing::ValuesIn(kRankCounts), rank_count_name);

}  // namespace
}  // namespace chorus::mp
