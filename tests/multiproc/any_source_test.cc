// Receive from any source (Communicator::recv_any / recv_any_async): messages of several
// senders each received exactly once and in each sender's order; mixed with receives from
// a named rank and with tags (the chosen pair's sequence is consumed, so a later recv from
// that rank gets its next message); posted before this rank's own send without holding it
// back; a clear kTimeout naming the operation when nobody sends.
#include <gtest/gtest.h>

#include <map>
#include <thread>
#include <vector>

#include "failure_util.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;

class AnySource : public ::testing::TestWithParam<std::tuple<int, std::size_t, bool>> {};

// Every rank but 0 sends kMessages messages (value rank * 1000 + i) to rank 0, which
// receives all of them from any source (blocking or async): each exactly once, each
// sender's in order, the source reported matching the payload.
TEST_P(AnySource, EverySendersMessagesOnceAndInOrder) {
  const auto [n, count, async] = GetParam();
  constexpr int kMessages = 6;
  auto body = [count, async](Communicator& comm) {
    const int me = comm.rank(), size = comm.size();
    if (me == 0) {
      std::map<int, int> next;  // per sender: the index expected next
      for (int k = 0; k < kMessages * (size - 1); ++k) {
        std::vector<std::int32_t> in(count, -1);
        int src = -1;
        if (async) {
          Work w = comm.recv_any_async(in.data(), count, DataType::kInt32);
          w.wait();
          src = w.source();
          check(w.seq() == next[src], "Work::seq() is not the pair's receive seq");
        } else {
          src = comm.recv_any(in.data(), count, DataType::kInt32);
        }
        check(src >= 1 && src < size, "source " + std::to_string(src) + " out of range");
        expect_all(in, src * 1000 + next[src], "message " + std::to_string(k));
        ++next[src];
      }
      for (int r = 1; r < size; ++r)
        check(next[r] == kMessages, "rank " + std::to_string(r) + ": " +
                                        std::to_string(next[r]) + " messages received");
    } else {
      for (int i = 0; i < kMessages; ++i) {
        std::vector<std::int32_t> out(count, me * 1000 + i);
        comm.send(out.data(), count, DataType::kInt32, 0);
      }
    }
    comm.barrier();
  };
  EXPECT_TRUE(all_ok(RankRunner::run(n, body, milliseconds(90000), short_timeout(milliseconds(15000)))));
}

// 16 elements go eagerly; 256 Ki elements (1 MiB) are offered and wait for the receiver
// (TCP rendezvous) or parked in the shm ring.
INSTANTIATE_TEST_SUITE_P(Grid, AnySource,
                         ::testing::Combine(::testing::Values(2, 3, 4),
                                            ::testing::Values(std::size_t{16},
                                                              std::size_t{1} << 18),
                                            ::testing::Bool()),
                         [](const auto& info) {
                           return "n" + std::to_string(std::get<0>(info.param)) + "_count" +
                                  std::to_string(std::get<1>(info.param)) +
                                  (std::get<2>(info.param) ? "_async" : "_blocking");
                         });

// Ranks 1 and 2 each send a tag-7 message, then two tag-0 messages. Rank 0 receives one
// tag-0 message from any source, then the next from that same rank by name (its second,
// since the first was consumed), then the other rank's two by name, then both tag-7
// messages from any source.
TEST(AnySourceMixed, WithNamedReceivesAndTags) {
  auto body = [](Communicator& comm) {
    const int me = comm.rank();
    std::int32_t v = -1;
    if (me == 0) {
      const int s = comm.recv_any(&v, 1, DataType::kInt32);
      check(v == s * 10, "first tag-0 message from rank " + std::to_string(s) + " is " +
                             std::to_string(v));
      comm.recv(&v, 1, DataType::kInt32, s);
      check(v == s * 10 + 1, "the named receive did not get that rank's second message");
      const int other = 3 - s;
      comm.recv(&v, 1, DataType::kInt32, other);
      check(v == other * 10, "the other rank's first message is " + std::to_string(v));
      comm.recv(&v, 1, DataType::kInt32, other);
      check(v == other * 10 + 1, "the other rank's second message is " + std::to_string(v));
      int seen = 0;
      for (int k = 0; k < 2; ++k) {
        const int t = comm.recv_any(&v, 1, DataType::kInt32, 7);
        check(v == t * 10 + 7, "tag-7 message from " + std::to_string(t) + " is " +
                                   std::to_string(v));
        seen |= 1 << t;
      }
      check(seen == 6, "the tag-7 messages did not come from ranks 1 and 2");
    } else {
      std::int32_t t7 = me * 10 + 7, a = me * 10, b = me * 10 + 1;
      comm.send(&t7, 1, DataType::kInt32, 0, 7);
      comm.send(&a, 1, DataType::kInt32, 0);
      comm.send(&b, 1, DataType::kInt32, 0);
    }
    comm.barrier();
  };
  EXPECT_TRUE(all_ok(RankRunner::run(3, body, milliseconds(60000), short_timeout(milliseconds(15000)))));
}

// Every rank posts a receive from any source, then sends to its right neighbour, on one
// stream: the pending receive must not hold the send back.
TEST(AnySourceMixed, AsyncReceiveBeforeSend) {
  auto body = [](Communicator& comm) {
    const int me = comm.rank(), size = comm.size();
    const int left = (me + size - 1) % size, right = (me + 1) % size;
    for (int round = 0; round < 20; ++round) {
      std::vector<std::int32_t> in(256, -1), out(256, round * 100 + me);
      Work r = comm.recv_any_async(in.data(), in.size(), DataType::kInt32);
      check(r.source() == -1 || r.source() == left, "source known too early");
      Work s = comm.send_async(out.data(), out.size(), DataType::kInt32, right);
      s.wait();
      r.wait();
      check(r.source() == left, "source " + std::to_string(r.source()) + ", expected " +
                                    std::to_string(left));
      expect_all(in, round * 100 + left, "round " + std::to_string(round));
    }
  };
  EXPECT_TRUE(all_ok(RankRunner::run(3, body, milliseconds(60000), short_timeout(milliseconds(15000)))));
}

// Nobody sends: kTimeout naming recv_any and the peers it waited for, within the bound.
TEST(AnySourceMixed, TimeoutNamesTheOperation) {
  auto body = [](Communicator& comm) {
    if (comm.rank() == 0) {
      std::int32_t v = 0;
      const auto t0 = FailClock::now();
      Error e = expect_error(ErrorCode::kTimeout,
                             [&] { comm.recv_any(&v, 1, DataType::kInt32); }, "recv_any");
      check(has(e, "any of peer ranks 1, 2") || has(e, "any of peer ranks 2, 1"),
            std::string("the error does not name the peers: ") + e.what());
      check(FailClock::now() - t0 < milliseconds(8000), "the timeout took too long");
    } else {
      std::this_thread::sleep_for(milliseconds(4000));  // the timeout ends rank 0's wait
    }
  };
  RunOptions opts;
  opts.options.timeout = milliseconds(1500);
  opts.stop_on_failure = false;
  EXPECT_TRUE(all_ok(RankRunner::run(3, body, milliseconds(60000), opts)));
}

TEST(AnySourceMixed, InvalidCalls) {
  auto body = [](Communicator& comm) {
    std::int32_t v = 0;
    expect_error(ErrorCode::kInvalidArgument, [&] { comm.recv_any(&v, 1, DataType::kInt32, -1); },
                 "tag");
    comm.group_start();
    expect_error(ErrorCode::kInvalidArgument, [&] { comm.recv_any(&v, 1, DataType::kInt32); },
                 "group");
    comm.group_end();
    comm.barrier();  // still usable
  };
  EXPECT_TRUE(all_ok(RankRunner::run(2, body, milliseconds(60000), short_timeout(milliseconds(15000)))));
}

}  // namespace
}  // namespace chorus
