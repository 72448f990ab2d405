// Failures with asynchronous work: a rank leaves (or is killed) while the others have
// operations pending on three streams; abort() from another thread with queued work; a
// communicator destroyed with pending work. Every Work must fail with the exact code,
// promptly, and nothing may crash or hang.
#include <gtest/gtest.h>

#include <csignal>
#include <optional>
#include <thread>
#include <vector>

#include "failure_util.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;

RunOptions every_rank_reports(milliseconds timeout = milliseconds(30000)) {
  RunOptions opts;
  opts.stop_on_failure = false;
  opts.options.timeout = timeout;
  return opts;
}

// Buffers of one operation that must outlive its Work.
struct Bufs {
  std::vector<float> send, recv;
};

// Issues one operation on stream `s` of `kind` 0..2 (all_reduce, all_gather, all_to_all).
Work issue(Communicator& comm, const Stream& s, int kind, Bufs& b, std::size_t count) {
  const std::size_t n = static_cast<std::size_t>(comm.size());
  b.send.assign(kind == 0 ? count : kind == 1 ? count : count * n, 1.0f);
  b.recv.assign(kind == 0 ? count : count * n, 0.0f);
  if (kind == 0)
    return comm.all_reduce_async(b.send.data(), b.recv.data(), count, DataType::kFloat32,
                                 ReduceOp::kSum, s);
  if (kind == 1)
    return comm.all_gather_async(b.send.data(), b.recv.data(), count, DataType::kFloat32, s);
  return comm.all_to_all_async(b.send.data(), b.recv.data(), count, DataType::kFloat32, s);
}

// Waits for `w` and returns its error (CheckFailure when it succeeded).
Error failure_of(const Work& w) {
  try {
    w.wait();
  } catch (const Error& e) {
    check(w.state() == Work::State::kFailed && w.code() == e.code(),
          "Work state/code disagree with the thrown error");
    return e;
  }
  check(false, "a Work succeeded although it could not complete");
  return Error(ErrorCode::kOk, "");
}

// A rank leaves while the others have operations pending on three streams (gracefully
// after synchronize(), or killed): each survivor's pending Works all fail with kPeerLost
// naming it, within 2 s.
class LeaveWithPendingStreams : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(LeaveWithPendingStreams, EveryPendingWorkFailsPeerLostNamingTheRank) {
  const auto [n, killed] = GetParam();
  const int leaver = n / 2;
  auto body = [leaver, killed = killed](Communicator& comm) {
    std::vector<Stream> streams{comm.create_stream("tp"), comm.create_stream("dp"),
                                comm.create_stream("pp")};
    constexpr int kRounds = 8, kLeaveAt = 3;
    std::vector<Bufs> bufs(kRounds * streams.size());
    std::vector<Work> works;
    for (int k = 0; k < kRounds; ++k) {
      // Every rank has finished the earlier rounds before the leaver goes (a failure
      // reported later would otherwise also fail a rank still finishing them).
      if (k == kLeaveAt && comm.rank() != leaver) {
        try {
          comm.barrier();
        } catch (const Error& e) {
          // The leaver passed the barrier and left while this rank was still finishing it.
          check(e.code() == ErrorCode::kPeerLost && e.peer_rank() == leaver,
                std::string("barrier before the leave: ") + e.what());
        }
      }
      if (comm.rank() == leaver && k == kLeaveAt) {
        comm.barrier();
        comm.synchronize();
        stamp("left");
        if (killed) ::raise(SIGKILL);
        return;  // ~Communicator with nothing pending: a graceful close
      }
      for (std::size_t s = 0; s < streams.size(); ++s) {
        const std::size_t j = k * streams.size() + s;
        works.push_back(issue(comm, streams[s], static_cast<int>(s), bufs[j], 4096 + 64 * s));
      }
      if (k < kLeaveAt) {
        step("round " + std::to_string(k) + ": every rank present");
        for (const Work& w : works) w.wait();
      }
    }
    step("waiting for the works pending on rank " + std::to_string(leaver));
    const std::size_t first_pending = kLeaveAt * streams.size();
    for (std::size_t i = first_pending; i < works.size(); ++i) {
      Error e = failure_of(works[i]);
      const double late = seconds_since_stamp("left");
      check(e.code() == ErrorCode::kPeerLost,
            "work " + std::to_string(i) + ": expected peer_lost, got " + e.what());
      check(late < 2.0, "work " + std::to_string(i) + " failed " + std::to_string(late) +
                            " s after the rank left");
      check(e.peer_rank() == leaver && has(e, "rank " + std::to_string(leaver)),
            "work " + std::to_string(i) + " does not name rank " + std::to_string(leaver) +
                ": " + e.what());
    }
    Error e = expect_error(ErrorCode::kPeerLost, [&] { comm.synchronize(); });
    check(e.peer_rank() == leaver, std::string("synchronize: ") + e.what());
  };
  auto r = RankRunner::run(n, body, milliseconds(60000), every_rank_reports());
  for (int rank = 0; rank < n; ++rank) {
    if (rank == leaver && killed)
      EXPECT_EQ(r.ranks[rank].signal, SIGKILL) << r.summary();
    else
      EXPECT_EQ(r.ranks[rank].state, RankState::kOk) << r.summary();
  }
}

INSTANTIATE_TEST_SUITE_P(RanksAndHow, LeaveWithPendingStreams,
                         ::testing::Combine(::testing::Values(2, 4, 8), ::testing::Bool()));

// A rank leaves; the others' next group (a 1 MiB ring of send/recv plus an all_reduce)
// fails in group_end() with kPeerLost naming it, and so do the group's Works.
TEST(GroupFailure, GroupEndFailsPeerLostWhenARankIsGone) {
  auto body = [](Communicator& comm) {
    const int n = comm.size(), r = comm.rank(), leaver = n - 1;
    try {
      comm.barrier();
    } catch (const Error& e) {  // the leaver passed it and left while this rank finished it
      check(e.code() == ErrorCode::kPeerLost && r != leaver, std::string("barrier: ") + e.what());
      return;  // this rank already learned of the loss; its next calls are refused at issue
    }
    if (r == leaver) {
      stamp("left");
      return;
    }
    const std::size_t count = 1 << 18;
    std::vector<float> out(count, 1.0f), in(count), red(1000, 1.0f);
    comm.group_start();
    Work s = comm.send_async(out.data(), count, DataType::kFloat32, (r + 1) % n);
    comm.recv(in.data(), count, DataType::kFloat32, (r + n - 1) % n);
    Work a = comm.all_reduce_async(red.data(), red.data(), red.size(), DataType::kFloat32,
                                   ReduceOp::kSum);
    Error e = expect_error(ErrorCode::kPeerLost, [&] { comm.group_end(); });
    check(seconds_since_stamp("left") < 2.0, std::string("group_end failed late: ") + e.what());
    check(e.peer_rank() == leaver, std::string("does not name the lost rank: ") + e.what());
    check(s.test() && a.test(), "a Work of the failed group is pending");
    // The all_reduce needs the lost rank; the send may have finished before the failure.
    check(a.code() == ErrorCode::kPeerLost, "all_reduce Work: " + a.message());
    check(s.code() == ErrorCode::kOk || s.code() == ErrorCode::kPeerLost,
          "send Work: " + s.message());
    if (n == 2) check(s.code() == ErrorCode::kPeerLost || r == leaver, "send to the lost rank");
  };
  for (int n : {2, 4})
    EXPECT_TRUE(all_ok(RankRunner::run(n, body, milliseconds(30000), every_rank_reports()))) << n;
}

// Rank 0 has work running and queued on three streams (the last rank joins late); another
// thread calls abort(): every Work fails kAborted within a second.
TEST(AsyncAbort, FromAnotherThreadFailsRunningAndQueuedWork) {
  auto body = [](Communicator& comm) {
    const int last = comm.size() - 1;
    if (comm.rank() == last) {
      std::this_thread::sleep_for(milliseconds(2000));
      return;  // never joins; the others were aborted meanwhile
    }
    std::vector<Stream> streams{comm.create_stream("a"), comm.create_stream("b"),
                                comm.create_stream("c")};
    std::vector<Bufs> bufs(30);
    std::vector<Work> works;
    for (std::size_t j = 0; j < bufs.size(); ++j)
      works.push_back(issue(comm, streams[j % 3], static_cast<int>(j % 3), bufs[j],
                            j % 2 ? 100 : (1u << 18)));
    std::optional<std::thread> aborter;
    if (comm.rank() == 0) {
      aborter.emplace([&comm] {
        std::this_thread::sleep_for(milliseconds(300));
        stamp("abort");
        comm.abort();
      });
    }
    // Collect first, join the aborter, then check (a throw with the thread still joinable
    // would end the process without saying what failed).
    std::vector<std::string> problems;
    for (std::size_t i = 0; i < works.size(); ++i) {
      try {
        Error e = failure_of(works[i]);
        if (e.code() != ErrorCode::kAborted)
          problems.push_back("work " + std::to_string(i) + ": " + e.what());
        else if (seconds_since_stamp("abort") >= 1.0)
          problems.push_back("work " + std::to_string(i) + " failed late");
        else if (!has(e, "abort() was called on rank 0"))
          problems.push_back(std::string("wrong message: ") + e.what());
      } catch (const CheckFailure& f) {
        problems.push_back("work " + std::to_string(i) + ": " + f.what());
      }
    }
    if (aborter) aborter->join();
    check(problems.empty(), problems.empty() ? "" : problems.front());
    // Later operations fail at once, at issue (the Work), not by throwing.
    std::vector<float> v(4, 1.0f);
    Work later = comm.all_reduce_async(v.data(), v.data(), 4, DataType::kFloat32, ReduceOp::kSum);
    check(later.test() && later.code() == ErrorCode::kAborted, "a later Work is not aborted");
    expect_error(ErrorCode::kAborted, [&] { comm.synchronize(); });
  };
  for (int n : {2, 3}) EXPECT_TRUE(all_ok(RankRunner::run(n, body, milliseconds(30000), every_rank_reports()))) << n;
}

// Rank 0 destroys its communicator with work running and queued: no crash, no hang, its
// Works (and the peers' works) report kAborted.
TEST(AsyncAbort, DestroyingACommunicatorWithPendingWork) {
  auto body = [](Communicator& comm) {
    const int last = comm.size() - 1;
    if (comm.rank() == last) {
      std::this_thread::sleep_for(milliseconds(2000));
      return;
    }
    std::vector<Bufs> bufs(12);
    std::vector<Work> works;
    {
      Communicator mine = std::move(comm);
      std::vector<Stream> streams{mine.create_stream("x"), mine.create_stream("y"), Stream()};
      for (std::size_t j = 0; j < bufs.size(); ++j)
        works.push_back(issue(mine, streams[j % 3], static_cast<int>(j % 3), bufs[j], 1000));
      std::this_thread::sleep_for(milliseconds(200));
      if (mine.rank() != 0) {
        // The peers see rank 0's abort on their pending work.
        for (const Work& w : works) {
          Error e = failure_of(w);
          check(e.code() == ErrorCode::kAborted && has(e, "rank 0 destroyed its communicator"),
                std::string("peer of the destroyed communicator: ") + e.what());
        }
        return;
      }
      stamp("destroy");
    }  // ~Communicator with 12 operations pending
    check(seconds_since_stamp("destroy") < 2.0, "destroying the communicator took too long");
    for (const Work& w : works) {
      check(w.test(), "a Work is pending after its communicator was destroyed");
      Error e = failure_of(w);
      check(e.code() == ErrorCode::kAborted, std::string("expected aborted: ") + e.what());
    }
  };
  for (int n : {2, 3}) EXPECT_TRUE(all_ok(RankRunner::run(n, body, milliseconds(30000), every_rank_reports()))) << n;
}

}  // namespace
}  // namespace chorus
