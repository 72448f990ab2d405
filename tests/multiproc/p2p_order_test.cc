// Point-to-point issue order and tags: a receive issued before a send (on the same stream,
// to the same peer, on every rank) completes instead of holding the send back until the
// deadline; a collective issued after a pending receive runs; each tag of a pair is its own
// message sequence (received in another order than sent); bad tags and mismatched sizes
// within a tag are reported.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "failure_util.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;

class RecvBeforeSend : public ::testing::TestWithParam<std::tuple<int, std::size_t>> {};

// Every rank posts a receive from every peer, then the sends to them, all on the default
// stream, then waits: before P2pWaiter the stream ran the receive to completion first and
// every rank sat in its first receive until the deadline.
TEST_P(RecvBeforeSend, CompletesOnOneStream) {
  const auto [n, count] = GetParam();
  auto body = [count](Communicator& comm) {
    const int me = comm.rank(), size = comm.size();
    std::vector<std::vector<std::int32_t>> in(size), out(size);
    std::vector<Work> works;
    for (int p = 0; p < size; ++p) {
      if (p == me) continue;
      in[p].assign(count, -1);
      works.push_back(comm.recv_async(in[p].data(), count, DataType::kInt32, p));
    }
    for (int p = 0; p < size; ++p) {
      if (p == me) continue;
      out[p].assign(count, me * 100 + p);
      works.push_back(comm.send_async(out[p].data(), count, DataType::kInt32, p));
    }
    for (Work& w : works) w.wait();
    for (int p = 0; p < size; ++p)
      if (p != me) expect_all(in[p], p * 100 + me, "from rank " + std::to_string(p));
    comm.synchronize();
  };
  EXPECT_TRUE(all_ok(RankRunner::run(n, body, milliseconds(60000), short_timeout(milliseconds(10000)))));
}

// 16 elements go eagerly; 1 Mi elements (4 MiB) wait for the receiver (rendezvous).
INSTANTIATE_TEST_SUITE_P(Sizes, RecvBeforeSend,
                         ::testing::Combine(::testing::Values(2, 3),
                                            ::testing::Values(std::size_t{16},
                                                              std::size_t{1} << 20)),
                         [](const auto& info) {
                           return "n" + std::to_string(std::get<0>(info.param)) + "_count" +
                                  std::to_string(std::get<1>(info.param));
                         });

// Ring pipeline on one stream, many rounds: receive from the left, then send to the right.
TEST(P2pOrder, RingOfReceivesFirst) {
  auto body = [](Communicator& comm) {
    const int me = comm.rank(), size = comm.size();
    const int left = (me + size - 1) % size, right = (me + 1) % size;
    for (int round = 0; round < 50; ++round) {
      std::vector<std::int32_t> in(1000, -1), out(1000, round * 10 + me);
      Work r = comm.recv_async(in.data(), in.size(), DataType::kInt32, left);
      Work s = comm.send_async(out.data(), out.size(), DataType::kInt32, right);
      s.wait();
      r.wait();
      expect_all(in, round * 10 + left, "round " + std::to_string(round));
    }
  };
  EXPECT_TRUE(all_ok(RankRunner::run(3, body, milliseconds(60000), short_timeout(milliseconds(10000)))));
}

// Rank 0 posts a receive, then joins an all_reduce; rank 1 joins the all_reduce first and
// sends afterwards. The collective must not wait for the pending receive.
TEST(P2pOrder, CollectiveAfterPendingReceive) {
  auto body = [](Communicator& comm) {
    std::vector<std::int32_t> buf(64, comm.rank() == 1 ? 7 : -1);
    std::int32_t x = 1, sum = 0;
    if (comm.rank() == 0) {
      Work r = comm.recv_async(buf.data(), buf.size(), DataType::kInt32, 1);
      comm.all_reduce(&x, &sum, 1, DataType::kInt32, ReduceOp::kSum);
      r.wait();
      expect_all(buf, 7, "received");
    } else {
      comm.all_reduce(&x, &sum, 1, DataType::kInt32, ReduceOp::kSum);
      comm.send(buf.data(), buf.size(), DataType::kInt32, 0);
    }
    check(sum == 2, "all_reduce gave " + std::to_string(sum));
  };
  EXPECT_TRUE(all_ok(RankRunner::run(2, body, milliseconds(60000), short_timeout(milliseconds(10000)))));
}

// Tags: rank 0 sends tag 1, tag 0 and tag 2 (asynchronously, large enough for
// rendezvous); rank 1 receives tag 2, then tag 0, then tag 1, each with its own data.
TEST(P2pTags, EachTagIsItsOwnSequence) {
  auto body = [](Communicator& comm) {
    const std::size_t n = 1 << 18;
    const int tags[3] = {1, 0, 2};
    if (comm.rank() == 0) {
      std::vector<std::vector<std::int32_t>> out;
      std::vector<Work> works;
      for (int t : tags) out.emplace_back(n, 1000 + t);
      for (int i = 0; i < 3; ++i)
        works.push_back(comm.send_async(out[i].data(), n, DataType::kInt32, 1, tags[i]));
      for (Work& w : works) w.wait();
    } else {
      for (int t : {2, 0, 1}) {
        std::vector<std::int32_t> in(n, -1);
        comm.recv(in.data(), n, DataType::kInt32, 0, t);
        expect_all(in, 1000 + t, "tag " + std::to_string(t));
      }
    }
    comm.barrier();
  };
  EXPECT_TRUE(all_ok(RankRunner::run(2, body, milliseconds(60000), short_timeout(milliseconds(10000)))));
}

TEST(P2pTags, NegativeTagIsInvalidArgument) {
  auto body = [](Communicator& comm) {
    std::int32_t x = 0;
    for (bool async : {false, true}) {
      try {
        if (async) comm.send_async(&x, 1, DataType::kInt32, 1 - comm.rank(), -3);
        else comm.recv(&x, 1, DataType::kInt32, 1 - comm.rank(), -3);
        check(false, "a negative tag was accepted");
      } catch (const Error& e) {
        check(e.code() == ErrorCode::kInvalidArgument && has(e, "tag"),
              std::string("expected kInvalidArgument naming the tag, got ") + e.what());
      }
    }
    comm.barrier();  // still usable
  };
  EXPECT_TRUE(all_ok(RankRunner::run(2, body, milliseconds(60000), short_timeout(milliseconds(10000)))));
}

// Within a tag the sizes are checked as for tag 0: kDesync on both sides, promptly.
TEST(P2pTags, SizeMismatchWithinATagIsADesync) {
  auto body = [](Communicator& comm) {
    std::vector<std::int32_t> buf(comm.rank() == 0 ? 10 : 20, 1);
    const auto t0 = FailClock::now();
    try {
      if (comm.rank() == 0) comm.send(buf.data(), buf.size(), DataType::kInt32, 1, 5);
      else comm.recv(buf.data(), buf.size(), DataType::kInt32, 0, 5);
      if (comm.rank() == 1) check(false, "the receive of the wrong size succeeded");
      // An eager send completes before the receiver looks: stay until it has.
      std::this_thread::sleep_for(milliseconds(1500));
    } catch (const Error& e) {
      check(e.code() == ErrorCode::kDesync || e.code() == ErrorCode::kAborted,
            std::string("expected kDesync, got ") + e.what());
    }
    check(FailClock::now() - t0 < milliseconds(5000), "the mismatch took longer than 5 s");
  };
  RunOptions opts = short_timeout(milliseconds(10000));
  opts.stop_on_failure = false;
  EXPECT_TRUE(all_ok(RankRunner::run(2, body, milliseconds(60000), opts)));
}

}  // namespace
}  // namespace chorus
