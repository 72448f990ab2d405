// Large collectives where the ranks disagree about placement: some pass send == recv (in
// place), the others separate buffers. Each rank decides alone, so no algorithm may
// depend on every rank's placement; the single-copy algorithms in particular read peers'
// buffers directly and must never see a block its owner already overwrote. Sizes are
// above the single-copy thresholds (docs/ALGORITHMS.md).
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

constexpr std::size_t kCount = (768 << 10) / 4 + 13;  // float32 elements: > 512 KiB, odd

void expect_equal(DataType t, const void* got, const void* want, std::size_t count,
                  const std::string& what) {
  const std::string bad = compare(t, got, want, count);
  check(bad.empty(), what + ": " + bad);
}

class MixedPlacement : public ::testing::TestWithParam<int> {};

TEST_P(MixedPlacement, OddRanksInPlace) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank();
    const bool in_place = r % 2 == 1;
    const DataType t = DataType::kFloat32;
    for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kAvg}) {
      step(label("all_reduce", t, to_string(op), kCount, "odd ranks in place"));
      Buffer send(t, kCount), recv(t, kCount), want(t, kCount);
      fill_reduce_input(t, op, r, n, 0, kCount, 3, send.data());
      fill_reduce_expected(t, op, n, 0, kCount, 3, want.data());
      Buffer& out = in_place ? send : recv;
      comm.all_reduce(send.data(), out.data(), kCount, t, op);
      expect_equal(t, out.data(), want.data(), kCount, "all_reduce");
    }
    {
      step(label("reduce_scatter", t, "sum", kCount, "odd ranks in place"));
      Buffer send(t, kCount * n), recv(t, kCount), want(t, kCount);
      fill_reduce_input(t, ReduceOp::kSum, r, n, 0, kCount * n, 5, send.data());
      fill_reduce_expected(t, ReduceOp::kSum, n, r * kCount, kCount, 5, want.data());
      void* out = in_place ? send.at(r * kCount) : recv.data();
      comm.reduce_scatter(send.data(), out, kCount, t, ReduceOp::kSum);
      expect_equal(t, out, want.data(), kCount, "reduce_scatter");
    }
    {
      step(label("all_gather", t, "", kCount, "odd ranks in place"));
      Buffer send(t, kCount), recv(t, kCount * n), want(t, kCount * n);
      for (int q = 0; q < n; ++q) fill_pattern(t, q, 0, kCount, 7, want.at(q * kCount));
      fill_pattern(t, r, 0, kCount, 7, send.data());
      const void* in = send.data();
      if (in_place) {
        std::memcpy(recv.at(r * kCount), send.data(), send.bytes());
        in = recv.at(r * kCount);
      }
      comm.all_gather(in, recv.data(), kCount, t);
      expect_equal(t, recv.data(), want.data(), kCount * n, "all_gather");
    }
    {
      step(label("all_to_all", t, "", kCount, "odd ranks in place"));
      Buffer send(t, kCount * n), recv(t, kCount * n), want(t, kCount * n);
      fill_pattern(t, r, 0, kCount * n, 9, send.data());
      for (int q = 0; q < n; ++q) fill_pattern(t, q, r * kCount, kCount, 9, want.at(q * kCount));
      void* out = in_place ? send.data() : recv.data();
      comm.all_to_all(send.data(), out, kCount, t);
      expect_equal(t, out, want.data(), kCount * n, "all_to_all");
    }
    for (int root = 0; root < n; ++root) {
      step(label("broadcast", t, "", kCount, "odd ranks in place", root));
      Buffer send(t, kCount), recv(t, kCount), want(t, kCount);
      fill_pattern(t, root, 0, kCount, 11 + root, want.data());
      Buffer& src = in_place ? recv : send;
      if (r == root) std::memcpy(src.data(), want.data(), want.bytes());
      comm.broadcast(src.data(), recv.data(), kCount, t, root);
      expect_equal(t, recv.data(), want.data(), kCount, "broadcast");
    }
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(GetParam(), body, deadline_for(GetParam()))));
}

INSTANTIATE_TEST_SUITE_P(Ranks, MixedPlacement, ::testing::Values(2, 3, 4), rank_count_name);

}  // namespace
}  // namespace chorus::mp
