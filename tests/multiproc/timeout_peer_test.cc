// Failures of peers: a rank that leaves (returns, _exits, is killed) while the others
// are in all_reduce makes them fail fast with kPeerLost; a rank that joins too late
// makes them fail with kTimeout after Options::timeout.
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "rank_runner.h"

namespace chorus {
namespace {

using chorus::testing::check;
using chorus::testing::expect_error;
using chorus::testing::RankOutcome;
using chorus::testing::RankRunner;
using chorus::testing::RankState;
using chorus::testing::RunOptions;
using chorus::testing::step;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr int kRanks = 3;
constexpr int kLeaver = 2;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

enum class Leave { kReturn, kExit, kKill };

// The surviving ranks must see kPeerLost within `bound` seconds even though the
// operation timeout is far longer.
void expect_peer_lost(Leave how, std::size_t count) {
  auto body = [how, count](Communicator& comm) {
    std::vector<float> v(count, 1.0f), out(count);
    step("warm-up all_reduce");
    comm.all_reduce(v.data(), out.data(), count, DataType::kFloat32, ReduceOp::kSum);
    if (comm.rank() == kLeaver) {
      if (how == Leave::kExit) _exit(0);
      if (how == Leave::kKill) raise(SIGKILL);
      return;  // ~Communicator runs; the rank never calls the next all_reduce
    }
    step("all_reduce with a rank gone");
    auto t0 = Clock::now();
    expect_error(ErrorCode::kPeerLost, [&] {
      comm.all_reduce(v.data(), out.data(), count, DataType::kFloat32, ReduceOp::kSum);
    });
    double took = seconds_since(t0);
    check(took < 10.0, "kPeerLost took " + std::to_string(took) + " s (timeout is 60 s)");
  };
  RunOptions opts;
  opts.stop_on_failure = false;
  opts.options.timeout = milliseconds(60000);
  auto result = RankRunner::run(kRanks, body, milliseconds(45000), opts);
  std::vector<int> survivors = {0, 1};
  for (int r : survivors) {
    EXPECT_EQ(result.ranks[r].state, RankState::kOk) << result.summary();
  }
  const RankOutcome& leaver = result.ranks[kLeaver];
  switch (how) {
    case Leave::kReturn:
      EXPECT_EQ(leaver.state, RankState::kOk) << result.summary();
      break;
    case Leave::kExit:
      EXPECT_TRUE(leaver.state == RankState::kDied && leaver.exit_code == 0) << result.summary();
      break;
    case Leave::kKill:
      EXPECT_TRUE(leaver.state == RankState::kDied && leaver.signal == SIGKILL) << result.summary();
      break;
  }
}

TEST(PeerLost, RankReturnsEarly) { expect_peer_lost(Leave::kReturn, 1024); }
TEST(PeerLost, RankExitsEarly) { expect_peer_lost(Leave::kExit, 1024); }
TEST(PeerLost, RankKilled) { expect_peer_lost(Leave::kKill, 1024); }
TEST(PeerLost, RankExitsEarlyLargeMessage) { expect_peer_lost(Leave::kExit, 3 << 20); }

TEST(Timeout, LateRankMakesOthersTimeOut) {
  auto body = [](Communicator& comm) {
    std::vector<std::int32_t> v(256, 1), out(256);
    if (comm.rank() == kLeaver) {
      step("sleeping 5 s before joining");
      std::this_thread::sleep_for(milliseconds(5000));
      step("all_reduce after the others gave up");
      try {
        comm.all_reduce(v.data(), out.data(), v.size(), DataType::kInt32, ReduceOp::kSum);
      } catch (const Error& e) {
        check(e.code() == ErrorCode::kPeerLost || e.code() == ErrorCode::kTimeout,
              std::string("late rank: expected peer_lost or timeout, got ") + e.what());
        return;
      }
      check(false, "late rank: all_reduce succeeded although its peers had given up");
    }
    step("all_reduce waiting for a late rank");
    auto t0 = Clock::now();
    expect_error(ErrorCode::kTimeout, [&] {
      comm.all_reduce(v.data(), out.data(), v.size(), DataType::kInt32, ReduceOp::kSum);
    });
    double took = seconds_since(t0);
    check(took >= 0.9 && took < 4.0,
          "kTimeout after " + std::to_string(took) + " s with Options::timeout = 1 s");
    // Stay a while: leaving now could show the other waiting rank kPeerLost before its
    // own deadline passes.
    std::this_thread::sleep_for(milliseconds(1500));
  };
  RunOptions opts;
  opts.stop_on_failure = false;
  opts.options.timeout = milliseconds(1000);
  opts.options.connect_timeout = milliseconds(20000);
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(kRanks, body, milliseconds(30000), opts)));
}

// A rank that completed its part of the last operation and destroyed its communicator
// has left correctly: peers still finishing that operation must get the data it sent
// (already in flight) instead of kPeerLost.
TEST(Teardown, ReceiverDrainsMessagesOfAPeerThatLeft) {
  auto body = [](Communicator& comm) {
    std::vector<std::int32_t> v(64);
    if (comm.rank() == 1) {
      for (int k = 0; k < 8; ++k) {
        step("send " + std::to_string(k));
        std::fill(v.begin(), v.end(), k);
        comm.send(v.data(), v.size(), DataType::kInt32, 0);
      }
      return;  // ~Communicator; the process exits
    }
    std::this_thread::sleep_for(milliseconds(300));  // let rank 1 leave first
    for (int k = 0; k < 8; ++k) {
      step("recv " + std::to_string(k) + " after the sender left");
      comm.recv(v.data(), v.size(), DataType::kInt32, 1);
      check(v[0] == k && v[63] == k, "message " + std::to_string(k) + " has wrong contents");
    }
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(2, body, milliseconds(30000))));
}

TEST(Teardown, LastCollectiveCompletesWhenFastRanksLeave) {
  auto body = [](Communicator& comm) {
    std::vector<float> v(1 << 16, 1.0f), out(1 << 16);
    // The root is slow to arrive; leaves finish their part of the reduce and leave.
    if (comm.rank() == 0) std::this_thread::sleep_for(milliseconds(300));
    step("last reduce (root 0 arrives late)");
    comm.reduce(v.data(), comm.rank() == 0 ? out.data() : nullptr, v.size(), DataType::kFloat32,
                ReduceOp::kSum, 0);
    if (comm.rank() == 0)
      check(out[0] == comm.size() && out.back() == comm.size(), "reduce gave a wrong sum");
    step("last barrier");
    comm.barrier();
  };
  EXPECT_TRUE(chorus::testing::all_ok(RankRunner::run(4, body, milliseconds(30000))));
}

}  // namespace
}  // namespace chorus
