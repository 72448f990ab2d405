// Failure behaviour of the algorithms: a lost peer yields kPeerLost (not a hang), an
// abort yields kAborted, a silent peer yields kTimeout at the deadline, and concurrent
// ops with different tags never mix.
#include <gtest/gtest.h>

#include <chrono>

#include "algo/algorithm.h"
#include "algo/world_for_test.h"

namespace chorus::algo::test {
namespace {

using Clock = std::chrono::steady_clock;
using transport::testing::FakeTransport;

struct Named {
  const char* name;
  CollFn fn;
};
const Named kAlgos[] = {
    {"ring_all_reduce", ring_all_reduce}, {"rhd_all_reduce", rhd_all_reduce},
    {"tree_all_reduce", tree_all_reduce}, {"ring_reduce_scatter", ring_reduce_scatter},
    {"ring_all_gather", ring_all_gather}, {"tree_broadcast", tree_broadcast},
    {"tree_reduce", tree_reduce},         {"pairwise_all_to_all", pairwise_all_to_all},
    {"direct_gather", direct_gather},     {"direct_scatter", direct_scatter},
    {"dissemination_barrier", dissemination_barrier},
};

// Rank `dead` never joins; 100 ms in, it is killed. Waiting ranks must fail fast with
// kPeerLost (ranks only indirectly stuck behind it end at the deadline, kTimeout).
TEST(Failure, KilledPeerYieldsPeerLostNotHang) {
  const int n = 5, dead = 2;
  const std::size_t count = 1031;
  for (const Named& alg : kAlgos) {
    std::vector<Bytes> buf(n, Bytes(count * n * 4, 1));
    auto world = transport::testing::make_fake_world(n);
    const auto t0 = Clock::now();
    std::vector<Status> st(n);
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      if (r == dead) continue;
      threads.emplace_back([&, r] {
        CollArgs a = base_args(DataType::kInt32, ReduceOp::kSum, count, 256);
        a.deadline = Deadline::after(std::chrono::milliseconds(1000));
        a.send = buf[r].data();
        a.recv = buf[r].data();
        st[r] = alg.fn(*world[r], a);
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    static_cast<FakeTransport&>(*world[0]).kill_rank(dead);
    for (auto& th : threads) th.join();
    const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
    EXPECT_LT(secs, 3.0) << alg.name;
    int lost = 0;
    for (int r = 0; r < n; ++r) {
      if (r == dead) continue;
      const ErrorCode c = st[r].code();
      EXPECT_TRUE(c == ErrorCode::kPeerLost || c == ErrorCode::kTimeout || c == ErrorCode::kOk)
          << alg.name << " rank " << r << ": " << st[r].to_string();
      if (c == ErrorCode::kPeerLost) {
        ++lost;
        EXPECT_EQ(st[r].peer(), dead) << alg.name;
      }
    }
    // Every rank may legitimately finish when its messages left before the kill
    // (eager sends); otherwise somebody must have been told the peer is lost.
    bool all_ok = true;
    for (int r = 0; r < n; ++r) all_ok = all_ok && (r == dead || st[r].is_ok());
    if (!all_ok) {
      EXPECT_GE(lost, 1) << alg.name;
    }
  }
}

TEST(Failure, RingNeighboursOfKilledRankSeePeerLostQuickly) {
  const int n = 4, dead = 1;
  const std::size_t count = 4096;
  std::vector<Bytes> buf(n, Bytes(count * 4, 1));
  auto world = transport::testing::make_fake_world(n);
  static_cast<FakeTransport&>(*world[0]).kill_rank(dead);
  std::vector<Status> st(n);
  std::vector<std::thread> threads;
  const auto t0 = Clock::now();
  for (int r : {0, 2}) {  // the neighbours; rank 3 is only indirectly blocked
    threads.emplace_back([&, r] {
      CollArgs a = base_args(DataType::kFloat32, ReduceOp::kSum, count, 1024);
      a.send = a.recv = buf[r].data();
      st[r] = ring_all_reduce(*world[r], a);
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(st[0].code(), ErrorCode::kPeerLost) << st[0].to_string();
  EXPECT_EQ(st[2].code(), ErrorCode::kPeerLost) << st[2].to_string();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 2.0);
}

TEST(Failure, AbortYieldsAborted) {
  auto world = transport::testing::make_fake_world(2);
  Bytes buf(64 * 4, 1);
  Status st;
  std::thread th([&] {
    CollArgs a = base_args(DataType::kInt32, ReduceOp::kSum, 64, 1 << 20);
    a.send = a.recv = buf.data();
    st = ring_all_reduce(*world[0], a);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  world[0]->abort(Status(ErrorCode::kAborted, "test abort"));
  th.join();
  EXPECT_EQ(st.code(), ErrorCode::kAborted) << st.to_string();
}

TEST(Failure, SilentPeerTimesOutAtDeadline) {
  auto world = transport::testing::make_fake_world(3);
  Bytes buf(16, 1);
  CollArgs a = base_args(DataType::kInt8, ReduceOp::kSum, 16, 1 << 20);
  a.send = a.recv = buf.data();
  a.deadline = Deadline::after(std::chrono::milliseconds(200));
  const auto t0 = Clock::now();
  Status st = rhd_all_reduce(*world[0], a);
  EXPECT_EQ(st.code(), ErrorCode::kTimeout) << st.to_string();
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 2.0);
}

// Two all_reduces (different seq) run at once on the same ranks, one thread each.
TEST(Tags, ConcurrentOpsDoNotMix) {
  const int n = 5;
  const std::size_t count = 1031;
  std::vector<Bytes> in1(n), in2(n), out1(n, Bytes(count * 4)), out2(n, Bytes(count * 4));
  for (int r = 0; r < n; ++r) {
    in1[r] = make_input(DataType::kInt32, ReduceOp::kSum, r, count, 1);
    in2[r] = make_input(DataType::kInt32, ReduceOp::kSum, r, count, 2);
  }
  auto world = transport::testing::make_fake_world(n);
  std::vector<Status> st(2 * n);
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    for (int op = 0; op < 2; ++op) {
      threads.emplace_back([&, r, op] {
        CollArgs a = base_args(DataType::kInt32, ReduceOp::kSum, count, 64);
        a.seq = 100 + op;
        a.send = (op ? in2 : in1)[r].data();
        a.recv = (op ? out2 : out1)[r].data();
        st[2 * r + op] = (op ? tree_all_reduce : ring_all_reduce)(*world[r], a);
      });
    }
  }
  for (auto& th : threads) th.join();
  expect_all_ok(st);
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(same(out1[r], reference(in1, DataType::kInt32, ReduceOp::kSum, count)));
    EXPECT_TRUE(same(out2[r], reference(in2, DataType::kInt32, ReduceOp::kSum, count)));
  }
  EXPECT_EQ(static_cast<FakeTransport&>(*world[0]).unexpected_bytes(), 0u);
}

}  // namespace
}  // namespace chorus::algo::test
