// The levels the hierarchical algorithms record (CollArgs::levels) over the fake transport
// with emulated hosts: every form's names, numbers and paths per rank, in order and one
// after another; nothing from the algorithms inside a phase, nor from flat algorithms.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "algo/algorithm.h"
#include "algo/world_for_test.h"
#include "op/level_log.h"
#include "transport/testing/fake_transport.h"

namespace chorus::algo::test {
namespace {

using Hosts = std::vector<int>;
using Levels = std::vector<std::string>;  // "level name [via]" per recorded level

// Runs fn(t, a) on every rank of a fake world on `hosts`, with a level log in the args
// (count elements per rank block, root `root`); returns each rank's levels.
std::vector<Levels> levels_of(const Hosts& hosts, std::size_t count, int root, CollFn fn) {
  const int n = static_cast<int>(hosts.size());
  std::vector<Bytes> in(n), out(n);
  std::vector<op::LevelLog> logs(n);
  auto st = run_ranks(n, [&](transport::Transport& t, int r) {
    // All on one host: no hosts(), as the real transports report it.
    if (*std::max_element(hosts.begin(), hosts.end()) > 0)
      static_cast<transport::testing::FakeTransport&>(t).set_hosts(hosts);
    in[r] = make_input(DataType::kFloat32, ReduceOp::kSum, r, count * n);
    out[r].assign(in[r].size(), 0);
    CollArgs a = base_args(DataType::kFloat32, ReduceOp::kSum, count, chunk_for(count));
    a.small_bytes = 256;
    a.root = root;
    a.send = in[r].data();
    a.recv = out[r].data();
    a.levels = &logs[r];
    return fn(t, a);
  });
  expect_all_ok(st);
  std::vector<Levels> got(n);
  for (int r = 0; r < n; ++r) {
    const OpLevel* l = logs[r].data();
    for (int i = 0; i < logs[r].size(); ++i) {
      std::string s = std::to_string(l[i].level) + " " + l[i].name;
      if (*l[i].via) s += std::string(" [") + l[i].via + "]";
      got[r].push_back(s);
      EXPECT_LE(l[i].start_ns, l[i].end_ns) << "rank " << r << " " << s;
      if (i > 0) {
        EXPECT_LE(l[i - 1].end_ns, l[i].start_ns) << "rank " << r << " " << s;
      }
    }
  }
  return got;
}

TEST(HierLevels, AllReduceCounterpartForm) {
  const Levels want = {"1 host reduce_scatter [messages]", "2 across hosts all_reduce",
                       "3 host all_gather [messages]"};
  for (const Levels& got : levels_of({0, 0, 1, 1}, 1031, 0, hier_all_reduce)) EXPECT_EQ(got, want);
}

TEST(HierLevels, AllReduceLeaderForm) {
  const auto got = levels_of({0, 0, 1}, 1031, 0, hier_all_reduce);
  EXPECT_EQ(got[0], (Levels{"1 host reduce [messages]", "2 leaders all_reduce",
                            "3 host broadcast [messages]"}));
  EXPECT_EQ(got[1], (Levels{"1 host reduce [messages]", "3 host broadcast [messages]"}));
  // Alone on its host: the host levels move nothing, so they name no path.
  EXPECT_EQ(got[2], (Levels{"1 host reduce", "2 leaders all_reduce", "3 host broadcast"}));
}

TEST(HierLevels, ReduceScatterAndAllGather) {
  for (const Levels& got : levels_of({0, 1, 0, 1}, 257, 0, hier_reduce_scatter))
    EXPECT_EQ(got, (Levels{"1 host reduce_scatter [messages]", "2 across hosts reduce_scatter"}));
  for (const Levels& got : levels_of({0, 1, 0, 1}, 257, 0, hier_all_gather))
    EXPECT_EQ(got, (Levels{"1 across hosts all_gather", "2 host all_gather [messages]"}));
}

TEST(HierLevels, BroadcastAndReduceHeadsCrossHosts) {
  // Root 1 stands for host 0, rank 2 (its lowest) for host 1.
  const auto b = levels_of({0, 0, 1, 1}, 1031, 1, hier_broadcast);
  const Levels head = {"1 across hosts broadcast", "2 host broadcast [messages]"};
  const Levels other = {"2 host broadcast [messages]"};
  EXPECT_EQ(b, (std::vector<Levels>{other, head, head, other}));
  const auto r = levels_of({0, 0, 1, 1}, 1031, 1, hier_reduce);
  const Levels rhead = {"1 host reduce [messages]", "2 across hosts reduce"};
  const Levels rother = {"1 host reduce [messages]"};
  EXPECT_EQ(r, (std::vector<Levels>{rother, rhead, rhead, rother}));
}

TEST(HierLevels, FlatAlgorithmsRecordNothing) {
  // One host (no hosts()): hier falls back to the flat algorithm, which records nothing.
  for (const Levels& got : levels_of({0, 0, 0}, 1031, 0, hier_all_reduce)) EXPECT_TRUE(got.empty());
  for (const Levels& got : levels_of({0, 0, 1, 1}, 1031, 0, ring_all_reduce)) EXPECT_TRUE(got.empty());
  for (const Levels& got : levels_of({0, 0, 1, 1}, 1031, 2, tree_broadcast)) EXPECT_TRUE(got.empty());
}

}  // namespace
}  // namespace chorus::algo::test
