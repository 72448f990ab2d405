// The stalled rank named by every survivor (issue 13, item 6). One rank stops making
// progress (sleeps outside any call) while the others are in collectives on two streams
// and in point-to-point receives; the first rank to time out waits on a rank that is
// itself waiting on the stalled one. Every error of every survivor must still name the
// stalled rank (message and peer_rank()), not the rank its own wait happened to be on.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "failure_util.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;

constexpr int kStalled = 2;

void check_names_stalled(const Error& e, const std::string& what) {
  check(e.code() == ErrorCode::kTimeout, what + ": expected timeout, got " + e.what());
  check(e.peer_rank() == kStalled, what + ": peer_rank() = " + std::to_string(e.peer_rank()) +
                                       ", expected the stalled rank 2: " + e.what());
  check(has(e, "(stalled: rank 2 (host ") && has(e, "did not answer the liveness check"),
        what + ": the message does not name the stalled rank 2: " + e.what());
}

TEST(StalledRank, EverySurvivorNamesItWhenTheFirstTimeoutNamesAnotherRank) {
  auto body = [](Communicator& comm) {
    const int n = comm.size();
    std::vector<float> a(1024, 1.0f), a_out(1024), g(256, 1.0f), g_out(256 * n);
    Stream sa = comm.create_stream("a"), sb = comm.create_stream("b");
    step("warm-up on two streams");
    for (int i = 0; i < 3; ++i) {
      Work w1 = comm.all_reduce_async(a.data(), a_out.data(), a.size(), DataType::kFloat32,
                                      ReduceOp::kSum, sa);
      Work w2 = comm.all_gather_async(g.data(), g_out.data(), g.size(), DataType::kFloat32, sb);
      w1.wait();
      w2.wait();
    }
    comm.barrier();
    if (comm.rank() == kStalled) {
      step("stalled: sleeping outside any call");
      for (int i = 0; i < 40; ++i) std::this_thread::sleep_for(milliseconds(100));
      return;  // never calls the communicator again
    }
    const auto t0 = FailClock::now();
    step("collectives on two streams that need the stalled rank");
    Work w1 = comm.all_reduce_async(a.data(), a_out.data(), a.size(), DataType::kFloat32,
                                    ReduceOp::kSum, sa);
    Work w2 = comm.all_gather_async(g.data(), g_out.data(), g.size(), DataType::kFloat32, sb);
    std::vector<std::int32_t> buf(64);
    if (comm.rank() == 0) {
      // Times out first (1 s) waiting on rank 1, which waits on the stalled rank.
      Communicator::ScopedTimeout t(comm, milliseconds(1000));
      Error e = expect_error(ErrorCode::kTimeout,
                             [&] { comm.recv(buf.data(), buf.size(), DataType::kInt32, 1); });
      check(has(e, "peer rank 1 ("), std::string("rank 0 did not wait on rank 1: ") + e.what());
      check_names_stalled(e, "rank 0's recv from rank 1");
    } else if (comm.rank() == 1) {
      std::this_thread::sleep_for(milliseconds(300));
      Error e = expect_error(ErrorCode::kTimeout,
                             [&] { comm.recv(buf.data(), buf.size(), DataType::kInt32, kStalled); });
      check_names_stalled(e, "rank 1's recv from rank 2");
    }
    Error e1 = expect_error(ErrorCode::kTimeout, [&] { w1.wait(); });
    check_names_stalled(e1, "all_reduce on stream a");
    Error e2 = expect_error(ErrorCode::kTimeout, [&] { w2.wait(); });
    check_names_stalled(e2, "all_gather on stream b");
    Error e3 = expect_error(ErrorCode::kTimeout, [&] { comm.synchronize(); });
    check_names_stalled(e3, "synchronize");
    // A later call is refused with the same culprit.
    Error e4 = expect_error(ErrorCode::kTimeout, [&] { comm.barrier(); });
    check_names_stalled(e4, "a later barrier");
    const double took = std::chrono::duration<double>(FailClock::now() - t0).count();
    // 1 s to the first timeout, at most 1 s for the liveness answer, slack for load.
    check(took < 3.5, "the survivors' errors came after " + std::to_string(took) + " s");
  };
  RunOptions opts;
  opts.stop_on_failure = false;
  opts.options.timeout = milliseconds(8000);  // only rank 0's recv times out by itself
  EXPECT_TRUE(all_ok(RankRunner::run(4, body, milliseconds(30000), opts)));
}

}  // namespace
}  // namespace chorus
