// Streams and Work: five streams running all_reduce / all_to_all / all_gather at once
// (1 element to several MiB, so the large window algorithms, shm_direct or single_copy,
// and their window tickets run on shm), order on one stream, test()/wait(timeout),
// callbacks, synchronize(), a blocking call after async work, and a Stream of another
// communicator.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "rank_runner.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;

enum class Kind { kAllReduce, kAllToAll, kAllGather };
const char* kind_name(Kind k) {
  return k == Kind::kAllReduce ? "all_reduce" : k == Kind::kAllToAll ? "all_to_all" : "all_gather";
}

// Element counts: 1 element up to 3 MiB of int32 (all_reduce >= 1 MiB runs shm_direct
// or single_copy on shm). For all_to_all / all_gather the count is per rank, divided by the rank count.
const std::size_t kCounts[] = {1, 7, 1000, 65539, 262144, 300007, 786432};

// Value rank r contributes at element i of the op (k = round, s = stream).
std::int32_t value(int r, std::size_t i, int k, int s) {
  return static_cast<std::int32_t>((r + 1) * static_cast<int>(i % 1000 + 1) + k * 7 + s);
}
// all_to_all: element j of the block rank r sends to rank p.
std::int32_t a2a_value(int r, int p, std::size_t j, int k, int s) {
  return static_cast<std::int32_t>(r * 200000000 + p * 20000000 +
                                   static_cast<int>((j + k * 13 + s) % 20000000));
}

// One asynchronous collective with its buffers and expected result.
struct Op {
  Kind kind = Kind::kAllReduce;
  std::size_t count = 0;  // per rank for all_to_all / all_gather
  int round = 0, stream = 0;
  std::vector<std::int32_t> send, recv;
  Work work;

  void issue(Communicator& comm, const Stream& st) {
    const int n = comm.size(), r = comm.rank();
    const std::size_t total = kind == Kind::kAllReduce ? count : count * n;
    send.assign(kind == Kind::kAllGather ? count : total, 0);
    recv.assign(total, -1);
    for (std::size_t i = 0; i < send.size(); ++i)
      send[i] = kind == Kind::kAllToAll ? a2a_value(r, static_cast<int>(i / count), i % count,
                                                    round, stream)
                                        : value(r, i, round, stream);
    switch (kind) {
      case Kind::kAllReduce:
        work = comm.all_reduce_async(send.data(), recv.data(), count, DataType::kInt32,
                                     ReduceOp::kSum, st);
        break;
      case Kind::kAllToAll:
        work = comm.all_to_all_async(send.data(), recv.data(), count, DataType::kInt32, st);
        break;
      case Kind::kAllGather:
        work = comm.all_gather_async(send.data(), recv.data(), count, DataType::kInt32, st);
        break;
    }
  }

  std::int32_t expected(int n, int me, std::size_t i) const {
    if (kind == Kind::kAllReduce) {
      std::int64_t sum = 0;
      for (int r = 0; r < n; ++r) sum += value(r, i, round, stream);
      return static_cast<std::int32_t>(sum);
    }
    const int q = static_cast<int>(i / count);
    if (kind == Kind::kAllGather) return value(q, i % count, round, stream);
    return a2a_value(q, me, i % count, round, stream);
  }

  void verify(int n, int me) const {
    check(work.test(), std::string(kind_name(kind)) + " not complete after wait()");
    for (std::size_t i = 0; i < recv.size(); ++i) {
      const std::int32_t want = expected(n, me, i);
      if (recv[i] != want)
        check(false, std::string(kind_name(kind)) + " count " + std::to_string(count) +
                         " round " + std::to_string(round) + " stream " +
                         std::to_string(stream) + ": element " + std::to_string(i) + " = " +
                         std::to_string(recv[i]) + ", expected " + std::to_string(want));
    }
  }
};

class FiveStreams : public ::testing::TestWithParam<int> {};

TEST_P(FiveStreams, ConcurrentCollectivesGiveExactResults) {
  const int n = GetParam();
  const int rounds = n <= 4 ? 14 : 7;
  auto body = [rounds](Communicator& comm) {
    const int n = comm.size(), me = comm.rank();
    std::vector<Stream> streams;
    for (const char* name : {"tp", "dp", "ep", "sp", "pp"}) streams.push_back(comm.create_stream(name));
    for (int k = 0; k < rounds; ++k) {
      // Two operations per stream per round, all in flight before any wait.
      std::vector<Op> ops(2 * streams.size());
      for (std::size_t j = 0; j < ops.size(); ++j) {
        Op& op = ops[j];
        op.stream = static_cast<int>(j % streams.size());
        op.round = k;
        op.kind = static_cast<Kind>((k + j) % 3);
        const std::size_t c = kCounts[(k * 3 + j) % std::size(kCounts)];
        op.count = op.kind == Kind::kAllReduce ? c : std::max<std::size_t>(1, c / n);
        step(std::string("round ") + std::to_string(k) + " issue " + kind_name(op.kind) +
             " count " + std::to_string(op.count) + " on " + streams[op.stream].name());
        op.issue(comm, streams[op.stream]);
      }
      // Wait in reverse issue order, so later streams' ops are waited first.
      for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
        step(std::string("round ") + std::to_string(k) + " wait " + kind_name(it->kind));
        it->work.wait();
        it->verify(n, me);
      }
    }
    const std::string fr = comm.flight_record();
    check(fr.find(" stream=dp") != std::string::npos && fr.find(" stream=pp") != std::string::npos,
          "flight record does not name the streams:\n" + fr);
  };
  EXPECT_TRUE(all_ok(RankRunner::run(n, body, milliseconds(240000))));
}

INSTANTIATE_TEST_SUITE_P(Ranks, FiveStreams, ::testing::Values(2, 4, 8));

// Two in-place all_reduces of x on one stream, waiting only for the second: x * n * n.
class OneStreamOrder : public ::testing::TestWithParam<int> {};

TEST_P(OneStreamOrder, SecondOperationSeesTheFirstOnesResult) {
  auto body = [](Communicator& comm) {
    const int n = comm.size();
    Stream s = comm.create_stream("ordered");
    for (std::size_t count : kCounts) {
      for (int rep = 0; rep < 3; ++rep) {
        std::vector<std::int32_t> x(count);
        for (std::size_t i = 0; i < count; ++i) x[i] = static_cast<std::int32_t>(i % 97 + 1 + rep);
        step("two in-place all_reduces count " + std::to_string(count));
        Work first = comm.all_reduce_async(x.data(), x.data(), count, DataType::kInt32,
                                           ReduceOp::kSum, s);
        Work second = comm.all_reduce_async(x.data(), x.data(), count, DataType::kInt32,
                                            ReduceOp::kSum, s);
        second.wait();
        check(first.test(), "the first operation of the stream is not complete");
        check(second.seq() == first.seq() + 1, "seqs " + std::to_string(first.seq()) + ", " +
                                                   std::to_string(second.seq()));
        for (std::size_t i = 0; i < count; ++i) {
          const std::int32_t want = static_cast<std::int32_t>((i % 97 + 1 + rep) * n * n);
          if (x[i] != want)
            check(false, "count " + std::to_string(count) + " element " + std::to_string(i) +
                             " = " + std::to_string(x[i]) + ", expected " + std::to_string(want));
        }
      }
    }
  };
  EXPECT_TRUE(all_ok(RankRunner::run(GetParam(), body, milliseconds(120000))));
}

INSTANTIATE_TEST_SUITE_P(Ranks, OneStreamOrder, ::testing::Values(2, 4, 8));

// Large all_reduces (shm_direct or single_copy on shm: one set of shared windows per
// communicator) on three streams and the blocking path at once: their window tickets
// must order them the same way on every rank, or ranks mix each other's data or deadlock.
class WindowOps : public ::testing::TestWithParam<int> {};

TEST_P(WindowOps, LargeAllReducesOnSeveralStreamsStayExact) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), me = comm.rank();
    std::vector<Stream> streams{comm.create_stream("w1"), comm.create_stream("w2"),
                                comm.create_stream("w3")};
    const std::size_t counts[] = {262144, 393216 + 5, 524288};  // 1, 1.5, 2 MiB of int32
    for (int k = 0; k < 8; ++k) {
      std::vector<Op> ops(6);
      for (std::size_t j = 0; j < ops.size(); ++j) {
        ops[j].kind = Kind::kAllReduce;
        ops[j].count = counts[(j + k) % 3];
        ops[j].round = k;
        ops[j].stream = static_cast<int>(j % 3);
        step("round " + std::to_string(k) + " all_reduce " + std::to_string(j));
        ops[j].issue(comm, streams[j % 3]);
      }
      Op blocking;  // the blocking path takes a ticket too, between the async ones
      blocking.kind = Kind::kAllReduce;
      blocking.count = counts[k % 3];
      blocking.round = k;
      blocking.stream = 9;
      blocking.send.assign(blocking.count, 0);
      blocking.recv.assign(blocking.count, -1);
      for (std::size_t i = 0; i < blocking.count; ++i) blocking.send[i] = value(me, i, k, 9);
      comm.all_reduce(blocking.send.data(), blocking.recv.data(), blocking.count,
                      DataType::kInt32, ReduceOp::kSum);
      blocking.verify(n, me);
      for (Op& op : ops) {
        op.work.wait();
        op.verify(n, me);
      }
    }
  };
  EXPECT_TRUE(all_ok(RankRunner::run(GetParam(), body, milliseconds(120000))));
}

INSTANTIATE_TEST_SUITE_P(Ranks, WindowOps, ::testing::Values(2, 4));

// test() and wait(timeout) say false while a peer has not joined, then true.
TEST(WorkApi, TestAndTimedWaitReportPendingThenDone) {
  auto body = [](Communicator& comm) {
    std::vector<std::int32_t> v(64, comm.rank() + 1), out(64);
    Work empty;
    check(empty.test() && empty.wait(milliseconds(0)) && empty.seq() == -1 &&
              empty.state() == Work::State::kDone && empty.code() == ErrorCode::kOk,
          "an empty Work is not complete");
    if (comm.rank() == 1) std::this_thread::sleep_for(milliseconds(400));
    Work w = comm.all_reduce_async(v.data(), out.data(), v.size(), DataType::kInt32,
                                   ReduceOp::kSum);
    check(w.op() == "all_reduce" && w.seq() == 0, "op " + w.op() + " seq " + std::to_string(w.seq()));
    if (comm.rank() == 0) {
      check(!w.test(), "test() is true although rank 1 has not joined");
      check(w.state() == Work::State::kPending, "state is not pending");
      const auto t0 = std::chrono::steady_clock::now();
      check(!w.wait(milliseconds(50)), "wait(50 ms) returned true although rank 1 is asleep");
      check(std::chrono::steady_clock::now() - t0 >= milliseconds(45), "wait(50 ms) returned early");
      expect_error(ErrorCode::kInvalidArgument, [&] { w.wait(milliseconds(-1)); }, "timeout");
    }
    check(w.wait(milliseconds(20000)), "wait(20 s) returned false");
    check(w.test() && w.state() == Work::State::kDone && w.code() == ErrorCode::kOk &&
              w.message().empty(),
          "not done after wait");
    const int n = comm.size();
    check(out[0] == n * (n + 1) / 2, "wrong sum " + std::to_string(out[0]));
  };
  EXPECT_TRUE(all_ok(RankRunner::run(2, body, milliseconds(30000))));
}

// Callbacks: once each, in registration order, ops in stream order, after completion;
// one that throws is ignored; one added after completion runs at once on this thread.
TEST(WorkApi, CallbacksRunOnceInOrderAfterCompletion) {
  auto body = [](Communicator& comm) {
    constexpr int kOps = 20;
    Stream s = comm.create_stream("cb");
    std::mutex mu;
    std::vector<int> calls;
    bool saw_pending = false;
    std::vector<std::vector<std::int32_t>> bufs(kOps, std::vector<std::int32_t>(1000, 1));
    std::vector<Work> works;
    const auto me = std::this_thread::get_id();
    bool other_thread = false;
    for (int i = 0; i < kOps; ++i) {
      Work w = comm.all_reduce_async(bufs[i].data(), bufs[i].data(), 1000, DataType::kInt32,
                                     ReduceOp::kSum, s);
      for (int c = 0; c < 2; ++c) {
        w.on_complete([&, i, c](const Work& done) {
          std::lock_guard<std::mutex> g(mu);
          calls.push_back(i * 2 + c);
          if (done.state() != Work::State::kDone) saw_pending = true;
          if (std::this_thread::get_id() != me) other_thread = true;
        });
      }
      w.on_complete([](const Work&) { throw std::runtime_error("callback failure (expected)"); });
      works.push_back(w);
    }
    comm.synchronize();
    {
      std::lock_guard<std::mutex> g(mu);
      check(calls.size() == 2 * kOps, "callbacks ran " + std::to_string(calls.size()) + " times");
      for (int k = 0; k < 2 * kOps; ++k)
        check(calls[k] == k, "callback " + std::to_string(k) + " ran as number " +
                                 std::to_string(calls[k]));
      check(!saw_pending, "a callback saw its Work pending");
      check(other_thread, "no callback ran on the stream's worker");
    }
    bool now = false;
    works.back().on_complete([&](const Work&) { now = std::this_thread::get_id() == me; });
    check(now, "on_complete of a completed Work did not run at once on this thread");
    for (auto& b : bufs) check(b[0] == comm.size(), "wrong all_reduce result");
  };
  EXPECT_TRUE(all_ok(RankRunner::run(2, body, milliseconds(30000))));
}

// synchronize() waits for every stream; a blocking call on the default stream waits for
// the default stream's async work and sees its result.
TEST(WorkApi, SynchronizeAndBlockingAfterAsync) {
  auto body = [](Communicator& comm) {
    const int n = comm.size();
    std::vector<Stream> streams{comm.create_stream("a"), comm.create_stream("b"), Stream()};
    std::vector<std::vector<std::int32_t>> bufs(30, std::vector<std::int32_t>(50000, 2));
    std::vector<Work> works;
    for (std::size_t i = 0; i < bufs.size(); ++i)
      works.push_back(comm.all_reduce_async(bufs[i].data(), bufs[i].data(), bufs[i].size(),
                                            DataType::kInt32, ReduceOp::kSum,
                                            streams[i % streams.size()]));
    comm.synchronize();
    for (std::size_t i = 0; i < works.size(); ++i) {
      check(works[i].test(), "work " + std::to_string(i) + " pending after synchronize()");
      check(bufs[i][49999] == 2 * n, "wrong result after synchronize()");
    }
    for (std::size_t count : {std::size_t{10}, std::size_t{300000}}) {
      std::vector<std::int32_t> x(count, 3);
      Work w = comm.all_reduce_async(x.data(), x.data(), count, DataType::kInt32, ReduceOp::kSum);
      comm.all_reduce(x.data(), x.data(), count, DataType::kInt32, ReduceOp::kSum);
      check(w.test(), "the async op of the default stream is pending after a blocking call");
      check(x[0] == 3 * n * n && x[count - 1] == 3 * n * n,
            "blocking all_reduce after async: " + std::to_string(x[0]));
    }
  };
  EXPECT_TRUE(all_ok(RankRunner::run(3, body, milliseconds(60000))));
}

// A Stream of another communicator (and a forged one) is rejected naming "stream".
TEST(WorkApi, StreamOfAnotherCommunicatorIsInvalid) {
  auto body = [](Communicator& comm) {
    Communicator other = Communicator::init(comm.rank(), comm.size(),
                                            open_file_store(this_rank().store_dir));
    Stream theirs = other.create_stream("theirs");
    std::vector<std::int32_t> v(8, 1);
    expect_error(ErrorCode::kInvalidArgument, [&] {
      comm.all_reduce_async(v.data(), v.data(), v.size(), DataType::kInt32, ReduceOp::kSum, theirs);
    }, "stream");
    expect_error(ErrorCode::kInvalidArgument, [&] {
      comm.send_async(v.data(), v.size(), DataType::kInt32, 1 - comm.rank(), theirs);
    }, "stream");
    Stream forged(nullptr, 3, "forged");
    expect_error(ErrorCode::kInvalidArgument, [&] { comm.barrier_async(forged); }, "stream");
    // Argument checks are the blocking calls' own.
    expect_error(ErrorCode::kInvalidArgument, [&] {
      comm.all_reduce_async(nullptr, v.data(), 8, DataType::kInt32, ReduceOp::kSum);
    }, "send is null");
    expect_error(ErrorCode::kInvalidArgument,
                 [&] { comm.broadcast_async(v.data(), v.data(), 8, DataType::kInt32, 5); }, "root=5");
    // Both communicators still work, with their own streams.
    Stream mine = comm.create_stream("mine");
    Work a = comm.all_reduce_async(v.data(), v.data(), v.size(), DataType::kInt32, ReduceOp::kSum, mine);
    std::vector<std::int32_t> u(8, 5);
    Work b = other.all_reduce_async(u.data(), u.data(), u.size(), DataType::kInt32, ReduceOp::kSum, theirs);
    a.wait();
    b.wait();
    check(v[0] == 2 && u[0] == 10, "results " + std::to_string(v[0]) + ", " + std::to_string(u[0]));
  };
  EXPECT_TRUE(all_ok(RankRunner::run(2, body, milliseconds(30000))));
}

}  // namespace
}  // namespace chorus
