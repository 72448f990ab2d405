// Hierarchical algorithms over the fake transport with emulated hosts: every layout
// (hosts contiguous, interleaved, uneven, one rank per host) x count x dtype/op x in-place
// mode against a local reference; results bit-identical on every rank.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "algo/algorithm.h"
#include "algo/hier_layout.h"
#include "algo/world_for_test.h"
#include "transport/testing/fake_transport.h"

namespace chorus::algo::test {
namespace {

using Hosts = std::vector<int>;
const Hosts kLayouts[] = {{0, 0, 1, 1}, {0, 1, 0, 1}, {0, 0, 0, 1, 1, 1, 2, 2, 2},
                          {0, 1, 2},    {0, 0, 1},    {0, 1, 1, 2, 0}};
const std::size_t kHierCounts[] = {1, 2, 7, 1031, 100003};
const std::pair<DataType, ReduceOp> kVariants[] = {{DataType::kFloat32, ReduceOp::kSum},
                                                   {DataType::kInt32, ReduceOp::kAvg},
                                                   {DataType::kInt64, ReduceOp::kMax},
                                                   {DataType::kFloat16, ReduceOp::kSum}};

// Runs fn on every rank of a fake world whose ranks sit on `hosts`.
std::vector<Status> on_hosts(const Hosts& hosts, const RankFn& fn) {
  return run_ranks(static_cast<int>(hosts.size()), [&](transport::Transport& t, int r) {
    static_cast<transport::testing::FakeTransport&>(t).set_hosts(hosts);
    return fn(t, r);
  });
}

CollArgs args(DataType dt, ReduceOp op, std::size_t count) {
  CollArgs a = base_args(dt, op, count, chunk_for(count));
  a.small_bytes = 256;  // both forms of every phase at these counts
  return a;
}

std::string where(const Hosts& h, std::size_t count, DataType dt, int mode, int rank) {
  std::string s = "hosts";
  for (int x : h) s += std::to_string(x);
  return s + " count " + std::to_string(count) + " dtype " + std::to_string(int(dt)) + " mode " +
         std::to_string(mode) + " rank " + std::to_string(rank);
}

TEST(HierLayout, GroupsLeadersCounterpartsAndHeads) {
  std::vector<std::unique_ptr<transport::Transport>> keep;
  on_hosts({0, 1, 0, 1, 2, 2}, [&](transport::Transport& t, int r) {
    const HostLayout l = *host_layout(t);
    if (r == 3) {
      EXPECT_EQ(l.local, (std::vector<int>{1, 3}));
      EXPECT_EQ(l.local_index, 1);
      EXPECT_EQ(l.leaders, (std::vector<int>{0, 1, 4}));
      EXPECT_EQ(l.counterparts, (std::vector<int>{2, 3, 5}));
      EXPECT_EQ(l.heads(3), (std::vector<int>{0, 3, 4}));
      EXPECT_EQ(l.head(2), 1);
      EXPECT_EQ(l.head(3), 3);
    }
    return Status();
  });
  on_hosts({0, 0, 1}, [&](transport::Transport& t, int) {
    EXPECT_FALSE(host_layout(t)->uniform());
    return Status();
  });
  auto world = transport::testing::make_fake_world(2);
  EXPECT_FALSE(host_layout(*world[0]).has_value());  // one host
}

TEST(Hier, AllReduce) {
  for (const Hosts& h : kLayouts) {
    const int n = static_cast<int>(h.size());
    for (std::size_t count : kHierCounts) {
      for (auto [dt, op] : kVariants) {
        for (int mode = 0; mode < 2; ++mode) {  // 0 out of place, 1 in place
          std::vector<Bytes> in(n), out(n);
          for (int r = 0; r < n; ++r) {
            in[r] = make_input(dt, op, r, count);
            out[r] = mode ? in[r] : Bytes(in[r].size(), 0xcd);
          }
          auto st = on_hosts(h, [&](transport::Transport& t, int r) {
            CollArgs a = args(dt, op, count);
            a.send = mode ? out[r].data() : in[r].data();
            a.recv = out[r].data();
            return hier_all_reduce(t, a);
          });
          expect_all_ok(st);
          const Bytes want = reference(in, dt, op, count);
          for (int r = 0; r < n; ++r) ASSERT_TRUE(same(out[r], want)) << where(h, count, dt, mode, r);
        }
      }
    }
  }
}

TEST(Hier, ReduceScatterAndAllGather) {
  for (const Hosts& h : kLayouts) {
    const int n = static_cast<int>(h.size());
    for (std::size_t count : kHierCounts) {
      for (auto [dt, op] : kVariants) {
        const std::size_t bytes = count * kernels::element_size(dt);
        std::vector<Bytes> in(n), out(n, Bytes(bytes, 0xcd)), all(n, Bytes(bytes * n, 0xcd));
        for (int r = 0; r < n; ++r) in[r] = make_input(dt, op, r, count * n);
        auto st = on_hosts(h, [&](transport::Transport& t, int r) {
          CollArgs a = args(dt, op, count);
          a.send = in[r].data();
          a.recv = out[r].data();
          CHORUS_RETURN_IF_ERROR(hier_reduce_scatter(t, a));
          CollArgs g = args(dt, op, count);  // in place: send == recv + r * count
          std::memcpy(all[r].data() + r * bytes, out[r].data(), bytes);
          g.send = all[r].data() + r * bytes;
          g.recv = all[r].data();
          return hier_all_gather(t, g);
        });
        expect_all_ok(st);
        const Bytes full = reference(in, dt, op, count * n);
        for (int r = 0; r < n; ++r) {
          Bytes want(full.begin() + r * bytes, full.begin() + (r + 1) * bytes);
          ASSERT_TRUE(same(out[r], want)) << "reduce_scatter " << where(h, count, dt, 0, r);
          ASSERT_TRUE(same(all[r], full)) << "all_gather " << where(h, count, dt, 1, r);
        }
      }
    }
  }
}

TEST(Hier, BroadcastAndReduceFromEveryRoot) {
  for (const Hosts& h : kLayouts) {
    const int n = static_cast<int>(h.size());
    for (std::size_t count : {std::size_t{1}, std::size_t{1031}, std::size_t{100003}}) {
      for (int root = 0; root < n; ++root) {
        const DataType dt = DataType::kInt32;
        const ReduceOp op = ReduceOp::kAvg;
        std::vector<Bytes> in(n), bc(n, Bytes(count * 4, 0xcd));
        for (int r = 0; r < n; ++r) in[r] = make_input(dt, op, r, count);
        Bytes root_out(count * 4, 0xcd);
        auto st = on_hosts(h, [&](transport::Transport& t, int r) {
          CollArgs b = args(dt, op, count);
          b.root = root;
          b.send = in[r].data();
          b.recv = bc[r].data();
          CHORUS_RETURN_IF_ERROR(hier_broadcast(t, b));
          CollArgs a = args(dt, op, count);
          a.root = root;
          a.send = in[r].data();
          a.recv = r == root ? root_out.data() : nullptr;
          return hier_reduce(t, a);
        });
        expect_all_ok(st);
        for (int r = 0; r < n; ++r)
          ASSERT_TRUE(same(bc[r], in[root])) << "broadcast root " << root << " " << where(h, count, dt, 0, r);
        ASSERT_TRUE(same(root_out, reference(in, dt, op, count)))
            << "reduce root " << root << " " << where(h, count, dt, 0, root);
      }
    }
  }
}

}  // namespace
}  // namespace chorus::algo::test
