// Data-movement algorithms (all_gather, broadcast, all_to_all(_v), gather, scatter,
// barrier) over the fake transport, every rank count x count x in-place mode.
#include <gtest/gtest.h>

#include <atomic>

#include "algo/algorithm.h"
#include "algo/world_for_test.h"

namespace chorus::algo::test {
namespace {

// Odd-sized int8 and wide float64 cover byte arithmetic and 8-byte elements.
const DataType kTypes[] = {DataType::kInt8, DataType::kFloat64};

Bytes concat(const std::vector<Bytes>& parts) {
  Bytes out;
  for (const Bytes& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

class Movement : public ::testing::TestWithParam<Param> {};

TEST_P(Movement, RingAllGather) {
  const int n = std::get<0>(GetParam());
  const std::size_t count = per_rank(std::get<1>(GetParam()), n);
  for (DataType dt : kTypes) {
    for (int mode = 0; mode < 2; ++mode) {  // 1: send == recv + rank * count
      const std::size_t bytes = count * kernels::element_size(dt);
      std::vector<Bytes> in(n), out(n, Bytes(bytes * n, 0xcd));
      for (int r = 0; r < n; ++r) {
        in[r] = make_input(dt, ReduceOp::kSum, r, count, 3);
        if (mode) std::copy(in[r].begin(), in[r].end(), out[r].begin() + r * bytes);
      }
      auto st = run_ranks(n, [&](transport::Transport& t, int r) {
        CollArgs a = base_args(dt, ReduceOp::kSum, count, chunk_for(count));
        a.send = mode ? out[r].data() + r * bytes : in[r].data();
        a.recv = out[r].data();
        return ring_all_gather(t, a);
      });
      expect_all_ok(st);
      const Bytes want = concat(in);
      for (int r = 0; r < n; ++r) ASSERT_TRUE(same(out[r], want)) << "mode " << mode << " rank " << r;
    }
  }
}

TEST_P(Movement, TreeBroadcast) {
  const auto [n, count] = GetParam();
  for (int root : {0, n - 1, n / 2}) {
    for (int mode = 0; mode < 2; ++mode) {  // 1: root's send == recv
      const DataType dt = DataType::kFloat32;
      const Bytes src = make_input(dt, ReduceOp::kSum, root, count, 5);
      std::vector<Bytes> out(n, Bytes(count * 4, 0xcd));
      if (mode) out[root] = src;
      auto st = run_ranks(n, [&](transport::Transport& t, int r) {
        CollArgs a = base_args(dt, ReduceOp::kSum, count, chunk_for(count));
        a.root = root;
        a.send = r == root ? (mode ? out[r].data() : src.data()) : nullptr;
        a.recv = out[r].data();
        return tree_broadcast(t, a);
      });
      expect_all_ok(st);
      for (int r = 0; r < n; ++r) ASSERT_TRUE(same(out[r], src)) << "root " << root << " rank " << r;
    }
  }
}

TEST_P(Movement, PairwiseAllToAll) {
  const int n = std::get<0>(GetParam());
  const std::size_t count = per_rank(std::get<1>(GetParam()), n);
  for (DataType dt : kTypes) {
    for (int mode = 0; mode < 2; ++mode) {  // 1: in place
      const std::size_t bytes = count * kernels::element_size(dt);
      std::vector<Bytes> in(n), out(n, Bytes(bytes * n, 0xcd));
      for (int r = 0; r < n; ++r) {
        in[r] = make_input(dt, ReduceOp::kSum, r, count * n, 7);
        if (mode) out[r] = in[r];
      }
      auto st = run_ranks(n, [&](transport::Transport& t, int r) {
        CollArgs a = base_args(dt, ReduceOp::kSum, count, chunk_for(count));
        a.send = mode ? out[r].data() : in[r].data();
        a.recv = out[r].data();
        return pairwise_all_to_all(t, a);
      });
      expect_all_ok(st);
      for (int r = 0; r < n; ++r) {
        for (int q = 0; q < n; ++q) {
          Bytes got(out[r].begin() + q * bytes, out[r].begin() + (q + 1) * bytes);
          Bytes want(in[q].begin() + r * bytes, in[q].begin() + (r + 1) * bytes);
          ASSERT_TRUE(same(got, want)) << "mode " << mode << " rank " << r << " block " << q;
        }
      }
    }
  }
}

TEST_P(Movement, PairwiseAllToAllV) {
  const int n = std::get<0>(GetParam());
  const std::size_t base = per_rank(std::get<1>(GetParam()), n);
  const DataType dt = DataType::kInt32;
  // Rank s sends c(s, d) elements to rank d; some pairs send nothing.
  auto c = [&](int s, int d) -> std::size_t {
    const std::size_t v = (s * 3 + d * 5) % 4;
    return v == 0 ? 0 : base * v / 2 + v;
  };
  std::vector<std::vector<std::size_t>> sc(n), sd(n), rc(n), rd(n);
  std::vector<Bytes> in(n), out(n);
  for (int r = 0; r < n; ++r) {
    std::size_t so = 1, ro = 2;  // leave gaps to catch displacement mistakes
    for (int p = 0; p < n; ++p) {
      sc[r].push_back(c(r, p)), sd[r].push_back(so), so += c(r, p) + 1;
      rc[r].push_back(c(p, r)), rd[r].push_back(ro), ro += c(p, r) + 2;
    }
    in[r] = make_input(dt, ReduceOp::kSum, r, so, 9);
    out[r] = Bytes(ro * 4, 0xcd);
  }
  auto st = run_ranks(n, [&](transport::Transport& t, int r) {
    CollArgs a = base_args(dt, ReduceOp::kSum, 0, 1 << 20);
    a.send = in[r].data();
    a.recv = out[r].data();
    a.send_counts = sc[r].data(), a.send_displs = sd[r].data();
    a.recv_counts = rc[r].data(), a.recv_displs = rd[r].data();
    return pairwise_all_to_all_v(t, a);
  });
  expect_all_ok(st);
  for (int r = 0; r < n; ++r) {
    for (int q = 0; q < n; ++q) {
      Bytes got(out[r].begin() + rd[r][q] * 4, out[r].begin() + (rd[r][q] + rc[r][q]) * 4);
      Bytes want(in[q].begin() + sd[q][r] * 4, in[q].begin() + (sd[q][r] + sc[q][r]) * 4);
      ASSERT_TRUE(same(got, want)) << "rank " << r << " from " << q;
    }
    EXPECT_EQ(out[r][0], 0xcd) << "gap overwritten";
  }
}

TEST_P(Movement, DirectGatherAndScatter) {
  const int n = std::get<0>(GetParam());
  const std::size_t count = per_rank(std::get<1>(GetParam()), n);
  const DataType dt = DataType::kInt8;
  for (int root : {0, n - 1, n / 2}) {
    for (int mode = 0; mode < 2; ++mode) {  // 1: root's own block in place
      std::vector<Bytes> in(n);
      for (int r = 0; r < n; ++r) in[r] = make_input(dt, ReduceOp::kSum, r, count, 11);
      Bytes gathered(count * n, 0xcd);
      if (mode) std::copy(in[root].begin(), in[root].end(), gathered.begin() + root * count);
      auto st = run_ranks(n, [&](transport::Transport& t, int r) {
        CollArgs a = base_args(dt, ReduceOp::kSum, count, 1 << 20);
        a.root = root;
        a.send = (mode && r == root) ? gathered.data() + root * count : in[r].data();
        a.recv = r == root ? gathered.data() : nullptr;
        return direct_gather(t, a);
      });
      expect_all_ok(st);
      ASSERT_TRUE(same(gathered, concat(in))) << "gather root " << root;
      // Scatter the gathered buffer back out.
      std::vector<Bytes> out(n, Bytes(count, 0xcd));
      st = run_ranks(n, [&](transport::Transport& t, int r) {
        CollArgs a = base_args(dt, ReduceOp::kSum, count, 1 << 20);
        a.root = root;
        a.send = r == root ? gathered.data() : nullptr;
        a.recv = (mode && r == root) ? gathered.data() + root * count : out[r].data();
        return direct_scatter(t, a);
      });
      expect_all_ok(st);
      for (int r = 0; r < n; ++r) {
        if (mode && r == root) continue;
        ASSERT_TRUE(same(out[r], in[r])) << "scatter root " << root << " rank " << r;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Algo, Movement,
                         ::testing::Combine(::testing::ValuesIn(kRanks), ::testing::ValuesIn(kCounts)),
                         param_name);

TEST(Barrier, NoRankLeavesBeforeAllArrive) {
  for (int n = 1; n <= 9; ++n) {
    std::atomic<int> arrived{0};
    std::atomic<bool> early{false};
    auto st = run_ranks(n, [&](transport::Transport& t, int r) {
      std::this_thread::sleep_for(std::chrono::milliseconds(r % 3));
      arrived++;
      CollArgs a = base_args(DataType::kInt8, ReduceOp::kSum, 0, 1);
      Status s = dissemination_barrier(t, a);
      if (arrived.load() != n) early = true;
      return s;
    });
    expect_all_ok(st);
    EXPECT_FALSE(early.load()) << n;
  }
}

}  // namespace
}  // namespace chorus::algo::test
