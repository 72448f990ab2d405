// Lost and stalled ranks: a rank that leaves a time-bounded loop early, a rank killed
// during a 64 MiB all_reduce, and a rank that stalls past Options::timeout. Every other
// rank must fail with the exact code, in time, naming the culprit, itself and its seq.
#include <gtest/gtest.h>

#include <csignal>
#include <thread>
#include <vector>

#include "failure_util.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;

RunOptions survivors_report(std::chrono::milliseconds timeout) {
  RunOptions opts;
  opts.stop_on_failure = false;
  opts.options.timeout = timeout;
  return opts;
}

// A survivor's error: kPeerLost naming `lost` (rank and address) within 2 s of its exit,
// and saying how far the lost rank got ("rank L (host H pid P) was lost; ...").
void check_peer_lost(const Error& e, int me, int lost, const std::string& stamp_name) {
  const double late = seconds_since_stamp(stamp_name);
  check(e.code() == ErrorCode::kPeerLost, std::string("expected peer_lost, got ") + e.what());
  check(late < 2.0, "peer_lost " + std::to_string(late) + " s after rank " +
                        std::to_string(lost) + " left: " + e.what());
  check(e.peer_rank() == lost, "peer_rank() = " + std::to_string(e.peer_rank()) +
                                   ", expected " + std::to_string(lost) + ": " + e.what());
  check(names_peer_address(e, lost),
        std::string("message does not name the lost rank and its address: ") + e.what());
  check_names_rank_and_seq(e, me);
  check(has(e, "rank " + std::to_string(lost) + " (host ") && has(e, " was lost; "),
        std::string("message does not say that the lost rank was lost: ") + e.what());
}

// The lost rank's last completed seq in the message, exactly.
void check_lost_after(const Error& e, int lost, int last_done_seq) {
  const std::string want = "rank " + std::to_string(lost) + " (host ";
  const std::string seq = "was lost; the last operation it was known to have completed was seq " +
                          std::to_string(last_done_seq) + ")";
  check(has(e, want) && has(e, seq), "expected '" + want + "...' and '" + seq + "' in: " + e.what());
}

// The story of issue 4: ranks loop (all_reduce + all_gather) until their time is up;
// one rank's time runs out first and it leaves (destroying its communicator normally)
// before step 5, i.e. after completing seq 9 (step s runs seqs 2s and 2s+1). Every
// survivor's message must say so.
class EarlyExit : public ::testing::TestWithParam<int> {};

TEST_P(EarlyExit, SurvivorsGetPeerLostNamingTheRankWithinTwoSeconds) {
  const int n = GetParam();
  const int leaver = n / 2;
  auto body = [leaver](Communicator& comm) {
    std::vector<float> v(1024, 1.0f), sum(1024), all(256 * comm.size());
    for (int s = 0; s < 1000; ++s) {
      if (comm.rank() == leaver && s == 5) {
        stamp("left");
        return;  // ~Communicator: a graceful close, at a different step than the others
      }
      try {
        step("step " + std::to_string(s));
        comm.all_reduce(v.data(), sum.data(), v.size(), DataType::kFloat32, ReduceOp::kSum);
        comm.all_gather(v.data(), all.data(), 256, DataType::kFloat32);
      } catch (const Error& e) {
        check_peer_lost(e, comm.rank(), leaver, "left");
        check_lost_after(e, leaver, 9);
        return;
      }
    }
    check(false, "the loop finished although rank " + std::to_string(leaver) + " left");
  };
  auto r = RankRunner::run(n, body, milliseconds(30000), survivors_report(milliseconds(30000)));
  EXPECT_TRUE(all_ok(r));
}

INSTANTIATE_TEST_SUITE_P(Ranks, EarlyExit, ::testing::Values(2, 4, 8));

// kill -9 while a 64 MiB all_reduce is in flight.
class KilledMidAllReduce : public ::testing::TestWithParam<int> {};

TEST_P(KilledMidAllReduce, SurvivorsGetPeerLostWithinTwoSeconds) {
  const int n = GetParam();
  const int victim = n - 1;
  auto body = [victim](Communicator& comm) {
    const std::size_t count = (64u << 20) / sizeof(float);
    std::vector<float> v(count, 1.0f), out(count);
    std::thread killer;
    if (comm.rank() == victim) {
      killer = std::thread([] {
        std::this_thread::sleep_for(milliseconds(150));
        stamp("killed");
        ::raise(SIGKILL);
      });
    }
    try {
      step("64 MiB all_reduce (rank " + std::to_string(victim) + " is killed during it)");
      for (int k = 0; k < 50; ++k)
        comm.all_reduce(v.data(), out.data(), count, DataType::kFloat32, ReduceOp::kSum);
    } catch (const Error& e) {
      check_peer_lost(e, comm.rank(), victim, "killed");
      return;
    }
    check(false, "all_reduce kept succeeding although a rank was killed");
  };
  auto r = RankRunner::run(n, body, milliseconds(60000), survivors_report(milliseconds(60000)));
  for (int rank = 0; rank < n; ++rank) {
    if (rank == victim) {
      EXPECT_TRUE(r.ranks[rank].state == RankState::kDied && r.ranks[rank].signal == SIGKILL)
          << r.summary();
    } else {
      EXPECT_EQ(r.ranks[rank].state, RankState::kOk) << r.summary();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, KilledMidAllReduce, ::testing::Values(2, 4));

// A rank stalls (sleeps) past Options::timeout = 1 s. Decision: a rank that waits on the
// stalled rank itself fails with kTimeout naming it (peer_rank() and "peer rank S"); a
// rank waiting on someone else fails with kTimeout too, within the same bound, either
// from its own deadline or from the report of the first rank that timed out ("rank R
// reports: ..."). Here every survivor waits directly on the stalled rank (receives from
// it; and in the 2-rank all_reduce, the only peer is the stalled one), so every survivor
// must name it exactly. The stalled rank, when it wakes, fails its next collective fast.
enum class StallIn { kAllReduce, kRecv };
class Stall : public ::testing::TestWithParam<std::tuple<int, StallIn>> {};

TEST_P(Stall, OthersTimeOutNamingTheStalledRank) {
  const auto [n, where] = GetParam();
  constexpr int kStalled = 1;
  auto body = [where = where](Communicator& comm) {
    std::vector<std::int32_t> v(256, 1), out(256);
    comm.barrier();
    if (comm.rank() == kStalled) {
      step("stalling 2.5 s");
      std::this_thread::sleep_for(milliseconds(2500));
      if (where == StallIn::kRecv) {
        for (int p = 0; p < comm.size(); ++p)
          if (p != kStalled) {
            try { comm.send(v.data(), v.size(), DataType::kInt32, p); } catch (const Error&) {}
          }
      }
      step("first collective after the stall");
      auto t0 = FailClock::now();
      try {
        comm.all_reduce(v.data(), out.data(), v.size(), DataType::kInt32, ReduceOp::kSum);
      } catch (const Error& e) {
        check(e.code() == ErrorCode::kTimeout || e.code() == ErrorCode::kPeerLost,
              std::string("stalled rank: expected timeout or peer_lost, got ") + e.what());
        check(FailClock::now() - t0 < milliseconds(2000), "stalled rank failed slowly");
        return;
      }
      check(false, "the stalled rank's all_reduce succeeded after its peers gave up");
    }
    step("waiting on the stalled rank");
    auto t0 = FailClock::now();
    Error e = expect_error(ErrorCode::kTimeout, [&] {
      if (where == StallIn::kAllReduce)
        comm.all_reduce(v.data(), out.data(), v.size(), DataType::kInt32, ReduceOp::kSum);
      else
        comm.recv(out.data(), out.size(), DataType::kInt32, kStalled);
    });
    const double took = std::chrono::duration<double>(FailClock::now() - t0).count();
    check(took >= 0.9 && took < 2.0, "kTimeout after " + std::to_string(took) + " s (timeout 1 s)");
    check(e.peer_rank() == kStalled && has(e, "peer rank 1 ("),
          std::string("timeout does not name the stalled rank 1: ") + e.what());
    check(has(e, "deadline passed"), std::string("not a deadline: ") + e.what());
    check_names_rank_and_seq(e, comm.rank());
    std::this_thread::sleep_for(milliseconds(2500));  // stay until the stalled rank wakes
  };
  RunOptions opts = survivors_report(milliseconds(1000));
  opts.options.connect_timeout = milliseconds(20000);
  EXPECT_TRUE(all_ok(RankRunner::run(n, body, milliseconds(30000), opts)));
}

INSTANTIATE_TEST_SUITE_P(Ranks, Stall,
                         ::testing::Values(std::make_tuple(2, StallIn::kAllReduce),
                                           std::make_tuple(4, StallIn::kRecv)));

}  // namespace
}  // namespace chorus
