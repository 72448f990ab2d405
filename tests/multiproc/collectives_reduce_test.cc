// all_reduce, reduce and reduce_scatter on 1-8 ranks: every dtype x op x count x
// placement in one set of rank processes per (collective, ranks), bit-exact against a
// locally computed reference; ranks must also agree bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collective_grid.h"
#include "rank_runner.h"
#include "reference.h"

namespace chorus::mp {
namespace {

using chorus::testing::check;
using chorus::testing::RankRunner;
using chorus::testing::step;

class ReduceCollectives : public ::testing::TestWithParam<int> {};

TEST_P(ReduceCollectives, AllReduce) {
  const int n = GetParam();
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    std::uint64_t digest = 0;
    int salt = 0;
    for (const Combo& c : reduce_grid(n, 2, false)) {
      ++salt;
      const char* where = c.placement == 0 ? "out-of-place" : "in-place";
      std::string what = label("all_reduce", c.dtype, to_string(c.op), c.count, where);
      step(what);
      Buffer send(c.dtype, c.count), recv(c.dtype, c.count), want(c.dtype, c.count);
      fill_reduce_input(c.dtype, c.op, r, n, 0, c.count, salt, send.data());
      fill_reduce_expected(c.dtype, c.op, n, 0, c.count, salt, want.data());
      Buffer keep = send;
      Buffer& result = c.placement == 0 ? recv : send;
      comm.all_reduce(send.data(), result.data(), c.count, c.dtype, c.op);
      std::string bad = compare(c.dtype, result.data(), want.data(), c.count);
      check(bad.empty(), what + ": " + bad);
      check(result.guard_damage(what).empty(), result.guard_damage(what));
      if (c.placement == 0) check(compare(c.dtype, send.data(), keep.data(), c.count).empty(),
                                  what + ": the send buffer was modified");
      digest = hash_bytes(result.data(), result.bytes(), digest);
    }
    expect_same_on_all_ranks(comm, digest, "all_reduce results");
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(n, body, deadline_for(n))));
}

TEST_P(ReduceCollectives, Reduce) {
  const int n = GetParam();
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    int salt = 0;
    for (const Combo& c : reduce_grid(n, 2, false)) {
      ++salt;
      const int root = salt % n;
      const char* where = c.placement == 0 ? "out-of-place (recv=nullptr off root)" : "in-place";
      std::string what = label("reduce", c.dtype, to_string(c.op), c.count, where, root);
      step(what);
      Buffer send(c.dtype, c.count), recv(c.dtype, c.count), want(c.dtype, c.count);
      fill_reduce_input(c.dtype, c.op, r, n, 0, c.count, salt, send.data());
      Buffer keep = send;
      void* out = c.placement == 1 ? send.data() : (r == root ? recv.data() : nullptr);
      comm.reduce(send.data(), out, c.count, c.dtype, c.op, root);
      if (r == root) {
        Buffer& result = c.placement == 1 ? send : recv;
        fill_reduce_expected(c.dtype, c.op, n, 0, c.count, salt, want.data());
        std::string bad = compare(c.dtype, result.data(), want.data(), c.count);
        check(bad.empty(), what + ": " + bad);
        check(result.guard_damage(what).empty(), result.guard_damage(what));
      } else if (c.placement == 0) {
        check(compare(c.dtype, send.data(), keep.data(), c.count).empty(),
              what + ": the send buffer of a non-root rank was modified");
      }
    }
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(n, body, deadline_for(n))));
}

TEST_P(ReduceCollectives, ReduceScatter) {
  const int n = GetParam();
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    int salt = 0;
    static const char* kWhere[] = {"out-of-place", "in-place (recv = send + rank*count)",
                                   "in-place (recv = send)"};
    for (const Combo& c : reduce_grid(n, 3, true)) {
      ++salt;
      std::string what = label("reduce_scatter", c.dtype, to_string(c.op), c.count,
                               kWhere[c.placement]);
      step(what);
      const std::size_t total = c.count * n;
      Buffer send(c.dtype, total), recv(c.dtype, c.count), want(c.dtype, c.count);
      fill_reduce_input(c.dtype, c.op, r, n, 0, total, salt, send.data());
      fill_reduce_expected(c.dtype, c.op, n, r * c.count, c.count, salt, want.data());
      Buffer keep = send;
      unsigned char* out = c.placement == 0   ? static_cast<unsigned char*>(recv.data())
                           : c.placement == 1 ? send.at(r * c.count)
                                              : send.at(0);
      comm.reduce_scatter(send.data(), out, c.count, c.dtype, c.op);
      std::string bad = compare(c.dtype, out, want.data(), c.count);
      check(bad.empty(), what + ": " + bad);
      check(send.guard_damage(what).empty() && recv.guard_damage(what).empty(),
            what + ": wrote past the end of a buffer");
      if (c.placement == 0) check(compare(c.dtype, send.data(), keep.data(), total).empty(),
                                  what + ": the send buffer was modified");
    }
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(n, body, deadline_for(n))));
}

INSTANTIATE_TEST_SUITE_P(Ranks, ReduceCollectives, ::testing::ValuesIn(kRankCounts),
                         rank_count_name);

}  // namespace
}  // namespace chorus::mp
