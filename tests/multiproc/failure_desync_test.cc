// Mismatched collectives (kind, count, dtype, root) fail every rank with kDesync showing
// both signatures; abort() / abort_all() from another thread unblock a collective with
// kAborted; agree() is a logical OR that fails fast with kPeerLost when a rank is gone.
#include <gtest/gtest.h>

#include <optional>
#include <thread>
#include <vector>

#include "failure_util.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;

RunOptions every_rank_reports() {
  RunOptions opts;
  opts.stop_on_failure = false;
  opts.options.timeout = milliseconds(10000);  // a missed desync would show as a timeout
  return opts;
}

// kMixed: on shm, the majority's all_gather runs through the shared windows (a barrier)
// while the odd rank's gather runs the direct algorithm (messages).
enum class Mismatch { kKind, kCount, kDtype, kRoot, kMixed };

// The odd rank runs the other operation. `expected` / `other` are the signature texts
// that must appear in the message of the ranks that detect the mismatch.
struct Case {
  Mismatch what;
  const char* mine;   // what the majority runs
  const char* odd;    // what the odd rank runs
};

void run_op(Communicator& comm, Mismatch what, bool odd) {
  std::vector<float> f(1024, 1.0f), g(1024 * comm.size());
  std::vector<std::int32_t> i(1024, 1), j(1024);
  switch (what) {
    case Mismatch::kKind:
      if (odd) comm.all_gather(f.data(), g.data(), 256, DataType::kFloat32);
      else comm.all_reduce(f.data(), g.data(), 1024, DataType::kFloat32, ReduceOp::kSum);
      break;
    case Mismatch::kCount:
      comm.all_reduce(f.data(), g.data(), odd ? 512 : 1024, DataType::kFloat32, ReduceOp::kSum);
      break;
    case Mismatch::kDtype:
      if (odd) comm.all_reduce(i.data(), j.data(), 1024, DataType::kInt32, ReduceOp::kSum);
      else comm.all_reduce(f.data(), g.data(), 1024, DataType::kFloat32, ReduceOp::kSum);
      break;
    case Mismatch::kRoot:
      comm.broadcast(f.data(), f.data(), 1024, DataType::kFloat32, odd ? 1 : 0);
      break;
    case Mismatch::kMixed:
      if (odd) comm.gather(f.data(), g.data(), 1024, DataType::kFloat32, 0);
      else comm.all_gather(f.data(), g.data(), 1024, DataType::kFloat32);
      break;
  }
}

class Desync : public ::testing::TestWithParam<std::tuple<int, Case>> {};

TEST_P(Desync, EveryRankFailsShowingBothSignatures) {
  const auto [n, c] = GetParam();
  auto body = [c = c](Communicator& comm) {
    const bool odd = comm.rank() == comm.size() - 1;
    auto t0 = FailClock::now();
    Error e = expect_error(ErrorCode::kDesync, [&] {
      // A rank still finishing this barrier may already hear another rank's desync report
      // for seq 1 (reports overtake the last barrier messages); that is a correct outcome.
      step("barrier (seq 0)");
      comm.barrier();
      step("mismatched collective (seq 1)");
      run_op(comm, c.what, odd);
      // A rank whose part of a mismatched broadcast completed learns at its next call.
      step("barrier after it (seq 2)");
      comm.barrier();
    });
    check(FailClock::now() - t0 < milliseconds(2000), std::string("desync took long: ") + e.what());
    // Through the shared windows both signatures meet at a barrier ("met peer rank", or
    // "waits for" when a rank waits for a message while its peer waits at a barrier);
    // through messages the receiver or sender of a mismatched message reports it.
    const bool at_window = has(e, "shared-window barrier");
    if (c.what == Mismatch::kRoot && !at_window) {
      // A rank waiting for a message of its tree sees its peer move on to seq 2 instead
      // and names its own signature and the next one; or (hierarchical phases, whose
      // trees share ranks) a message of the other tree reaches a rank running seq 1
      // under its root: both roots.
      const bool moved_on = has(e, c.odd) && has(e, "moved on to barrier() seq 2") &&
                            has(e, "seq 1 (step ");
      const bool both = has(e, c.mine) && has(e, c.odd) &&
                        (has(e, "seq 1, but peer rank") || has(e, "seq 1 from peer rank"));
      check(moved_on || both,
            std::string("message lacks the odd root or the overtaking op: ") + e.what());
    } else if (c.what == Mismatch::kMixed) {
      // The odd rank's gather may complete at once (a small eager send to the root) and
      // meet the others at the next operation's barrier: then the message shows one of
      // the two signatures against the barrier that followed, or is a forwarded report.
      check(has(e, c.mine) || has(e, c.odd) || has(e, "reports:"),
            std::string("message lacks both signatures: ") + e.what());
    } else {
      check(has(e, c.mine) && has(e, c.odd),
            std::string("message lacks a signature (") + c.mine + " / " + c.odd + "): " + e.what());
      check(has(e, "seq 1 from peer rank") || has(e, "seq 1 to peer rank") ||
                has(e, "seq 1 met peer rank") || has(e, "seq 1, but peer rank"),
            std::string("message does not name seq 1 and the peer: ") + e.what());
    }
    check_names_rank_and_seq(e, comm.rank());
  };
  EXPECT_TRUE(all_ok(RankRunner::run(n, body, milliseconds(30000), every_rank_reports())));
}

const Case kCases[] = {
    {Mismatch::kKind, "all_reduce(float32 x 1024, sum)", "all_gather(float32 x 256)"},
    {Mismatch::kCount, "all_reduce(float32 x 1024, sum)", "all_reduce(float32 x 512, sum)"},
    {Mismatch::kDtype, "all_reduce(float32 x 1024, sum)", "all_reduce(int32 x 1024, sum)"},
    {Mismatch::kRoot, "broadcast(float32 x 1024, root 0)", "broadcast(float32 x 1024, root 1)"},
    {Mismatch::kMixed, "all_gather(float32 x 1024)", "gather(float32 x 1024, root 0)"},
};

std::string case_name(const ::testing::TestParamInfo<std::tuple<int, Case>>& info) {
  static const char* const kNames[] = {"kind", "count", "dtype", "root", "mixed"};
  return std::to_string(std::get<0>(info.param)) + "ranks_" +
         kNames[static_cast<int>(std::get<1>(info.param).what)];
}

INSTANTIATE_TEST_SUITE_P(
    KindCountDtype, Desync,
    ::testing::Combine(::testing::Values(2, 4), ::testing::Values(kCases[0], kCases[1], kCases[2])),
    case_name);
// With two ranks that both believe they are the root nobody receives, so nothing can be
// compared (docs/DIAGNOSTICS.md); three or more ranks always have a receiver.
INSTANTIATE_TEST_SUITE_P(Mixed, Desync,
                         ::testing::Combine(::testing::Values(2, 4), ::testing::Values(kCases[4])),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Root, Desync,
                         ::testing::Combine(::testing::Values(3, 4), ::testing::Values(kCases[3])),
                         case_name);

// Rank 0 blocks in an all_reduce that rank 1 joins late; a second thread aborts.
class AbortWhileBlocked : public ::testing::TestWithParam<bool> {};

TEST_P(AbortWhileBlocked, FailsWithAbortedWithinOneSecond) {
  const bool all = GetParam();
  auto body = [all](Communicator& comm) {
    std::vector<float> v(1024, 1.0f), out(1024);
    if (comm.rank() == 1) {
      std::this_thread::sleep_for(milliseconds(1500));
      auto t0 = FailClock::now();
      Error e = expect_error(ErrorCode::kAborted, [&] {
        comm.all_reduce(v.data(), out.data(), v.size(), DataType::kFloat32, ReduceOp::kSum);
      });
      check(FailClock::now() - t0 < milliseconds(1000), "the peer learnt of the abort slowly");
      check(has(e, "rank 0 reports: abort() was called on rank 0") && e.peer_rank() == 0,
            std::string("peer's error does not name rank 0's abort: ") + e.what());
      return;
    }
    std::thread aborter([&comm, all] {
      std::this_thread::sleep_for(milliseconds(300));
      stamp("abort");
      if (all) Communicator::abort_all();
      else comm.abort();
    });
    Error e = expect_error(ErrorCode::kAborted, [&] {
      comm.all_reduce(v.data(), out.data(), v.size(), DataType::kFloat32, ReduceOp::kSum);
    });
    const double late = seconds_since_stamp("abort");
    aborter.join();
    check(late < 1.0, "kAborted " + std::to_string(late) + " s after abort()");
    check(has(e, "abort() was called on rank 0"), std::string("wrong message: ") + e.what());
    check_names_rank_and_seq(e, 0);
    // Later calls fail at once too.
    expect_error(ErrorCode::kAborted, [&] { comm.barrier(); });
    comm.abort();  // idempotent
  };
  EXPECT_TRUE(all_ok(RankRunner::run(2, body, milliseconds(30000), every_rank_reports())));
}

INSTANTIATE_TEST_SUITE_P(AbortAndAbortAll, AbortWhileBlocked, ::testing::Bool());

class Agree : public ::testing::TestWithParam<int> {};

TEST_P(Agree, IsALogicalOrAndFailsFastWhenARankIsGone) {
  const int n = GetParam();
  auto body = [](Communicator& comm) {
    const int last = comm.size() - 1;
    check(comm.agree(comm.rank() == 1), "agree with rank 1 true returned false");
    check(!comm.agree(false), "agree with every rank false returned true");
    // The last rank leaves right after the third agree (seq 2). A rank still waiting for
    // seq 2's data when another rank's report of the loss (made in seq 3) reaches it fails
    // in seq 2 (a report ends the pending operations; only one whose data has all arrived
    // completes): either way kPeerLost naming the lost rank, within 2 s.
    std::optional<Error> third;
    try {
      check(comm.agree(true), "agree with every rank true returned false");
    } catch (const Error& e) {
      if (comm.rank() == last) throw;
      third = e;
    }
    if (comm.rank() == last) {
      stamp("gone");
      _exit(0);  // gone without a word, before the next agree
    }
    Error e = third ? *third : expect_error(ErrorCode::kPeerLost, [&] { (void)comm.agree(false); });
    check(e.code() == ErrorCode::kPeerLost, std::string("expected peer_lost: ") + e.what());
    check(seconds_since_stamp("gone") < 2.0, std::string("agree failed slowly: ") + e.what());
    check(e.peer_rank() == last && has(e, "peer rank " + std::to_string(last) + " ("),
          std::string("error does not name the lost rank: ") + e.what());
    check(has(e, third ? "in agree seq 2" : "in agree seq 3"),
          std::string("error does not name the agree it ended: ") + e.what());
  };
  RunOptions opts = every_rank_reports();
  opts.options.timeout = milliseconds(30000);
  auto r = RankRunner::run(n, body, milliseconds(30000), opts);
  for (int rank = 0; rank + 1 < n; ++rank) EXPECT_EQ(r.ranks[rank].state, RankState::kOk) << r.summary();
  EXPECT_EQ(r.ranks[n - 1].state, RankState::kDied) << r.summary();
}

INSTANTIATE_TEST_SUITE_P(Ranks, Agree, ::testing::Values(2, 4, 8));

}  // namespace
}  // namespace chorus
