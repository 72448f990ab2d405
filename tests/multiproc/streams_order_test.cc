// Issue order across streams and communicators: random interleavings (the same issue
// order on every rank, each rank waiting in its own random order, operations spread over
// streams of the world and of a split sub-communicator) give exact results; a rank that
// issues the operations of two streams in a different order than the others is reported
// as kDesync on every rank, within 2 s, not a hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "failure_util.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;

struct Pending {
  Work work;
  std::vector<std::int64_t> send, recv;
  int kind = 0;      // 0 all_reduce, 1 all_gather, 2 broadcast
  int nranks = 1;
  std::int64_t base = 0;
};

class RandomInterleavings : public ::testing::TestWithParam<int> {};

TEST_P(RandomInterleavings, ExactResultsWhateverTheWaitOrder) {
  auto body = [](Communicator& world) {
    std::optional<Communicator> half = world.split(world.rank() % 2, world.rank());
    check(half.has_value(), "split gave no communicator");
    Communicator* comms[2] = {&world, &*half};
    std::vector<Stream> streams[2];
    for (int c = 0; c < 2; ++c)
      for (const char* name : {"a", "b", "c"}) streams[c].push_back(comms[c]->create_stream(name));
    std::mt19937 shared(12345);                   // the same program on every rank
    std::mt19937 mine(777 + world.rank());        // each rank waits in its own order
    for (int round = 0; round < 20; ++round) {
      std::vector<Pending> ops(1 + shared() % 8);
      for (std::size_t i = 0; i < ops.size(); ++i) {
        Pending& p = ops[i];
        const int c = static_cast<int>(shared() % 2);
        Communicator& comm = *comms[c];
        const Stream& s = streams[c][shared() % 3];
        p.kind = static_cast<int>(shared() % 3);
        const std::size_t count = 1 + shared() % 50000;
        p.nranks = comm.size();
        p.base = round * 1000 + static_cast<std::int64_t>(i);
        p.send.assign(count, p.base + comm.rank());
        p.recv.assign(p.kind == 1 ? count * comm.size() : count, -1);
        if (p.kind == 0)
          p.work = comm.all_reduce_async(p.send.data(), p.recv.data(), count, DataType::kInt64,
                                         ReduceOp::kSum, s);
        else if (p.kind == 1)
          p.work = comm.all_gather_async(p.send.data(), p.recv.data(), count, DataType::kInt64, s);
        else
          p.work = comm.broadcast_async(p.send.data(), p.recv.data(), count, DataType::kInt64, 0, s);
      }
      std::vector<std::size_t> order(ops.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::shuffle(order.begin(), order.end(), mine);
      for (std::size_t i : order) ops[i].work.wait();
      for (const Pending& p : ops) {
        const std::size_t count = p.send.size();
        for (std::size_t e = 0; e < p.recv.size(); ++e) {
          std::int64_t want = p.base;  // broadcast from rank 0
          if (p.kind == 0) want = p.base * p.nranks + p.nranks * (p.nranks - 1) / 2;
          if (p.kind == 1) want = p.base + static_cast<std::int64_t>(e / count);
          if (p.recv[e] != want)
            check(false, "round " + std::to_string(round) + " kind " + std::to_string(p.kind) +
                             " element " + std::to_string(e) + ": expected " +
                             std::to_string(want) + ", got " + std::to_string(p.recv[e]));
        }
      }
    }
    world.synchronize();
    half->synchronize();
  };
  EXPECT_TRUE(all_ok(RankRunner::run(GetParam(), body, milliseconds(120000))));
}

INSTANTIATE_TEST_SUITE_P(Ranks, RandomInterleavings, ::testing::Values(2, 4),
                         [](const auto& info) { return "n" + std::to_string(info.param); });

// The last rank issues stream "sp"'s all_gather before stream "tp"'s all_reduce; the
// others the other way round. Sequence numbers follow issue order, so seq 0 and 1 carry
// different operations on that rank: every rank fails kDesync, promptly.
TEST(IssueOrder, DifferentOrderOnOneRankIsADesync) {
  auto body = [](Communicator& comm) {
    Stream tp = comm.create_stream("tp"), sp = comm.create_stream("sp");
    std::vector<float> a(1024, 1.0f), ra(1024), g(256, 1.0f), rg(256 * comm.size());
    const bool odd = comm.rank() == comm.size() - 1;
    auto t0 = FailClock::now();
    std::vector<Work> works;
    auto reduce = [&] {
      works.push_back(comm.all_reduce_async(a.data(), ra.data(), a.size(), DataType::kFloat32,
                                            ReduceOp::kSum, tp));
    };
    auto gather = [&] {
      works.push_back(comm.all_gather_async(g.data(), rg.data(), g.size(), DataType::kFloat32, sp));
    };
    if (odd) { gather(); reduce(); } else { reduce(); gather(); }
    bool desync = false;
    for (Work& w : works) {
      try {
        w.wait();
      } catch (const Error& e) {
        check(e.code() == ErrorCode::kDesync || e.code() == ErrorCode::kAborted,
              std::string("expected desync, got ") + e.what());
        desync |= e.code() == ErrorCode::kDesync;
      }
    }
    check(desync, "no operation failed with kDesync");
    check(FailClock::now() - t0 < milliseconds(2000), "the desync took longer than 2 s");
  };
  RunOptions opts;
  opts.stop_on_failure = false;
  opts.options.timeout = milliseconds(20000);  // a missed desync shows as a timeout
  for (int n : {2, 4}) EXPECT_TRUE(all_ok(RankRunner::run(n, body, milliseconds(60000), opts)));
}

}  // namespace
}  // namespace chorus
