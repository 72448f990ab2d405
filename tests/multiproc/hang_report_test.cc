// Flight recorder and hang report through the public API, in real rank processes: the
// cross-rank table on rank 0's stderr after a rank exits, Communicator::flight_record(),
// and the SIGUSR1 dump of a running rank.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "chorus/chorus.h"
#include "rank_runner.h"

namespace chorus {
namespace {

using namespace chorus::testing;  // NOLINT
using std::chrono::milliseconds;

// Sends this rank's stderr to <temp>/stderr.<rank>; returns that path.
std::string capture_stderr() {
  const std::string path = this_rank().temp_dir + "/stderr." + std::to_string(this_rank().rank);
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  check(fd >= 0 && ::dup2(fd, STDERR_FILENO) == STDERR_FILENO, "redirecting stderr");
  ::close(fd);
  return path;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The file's text once it contains `what`, waiting up to `limit`.
std::string wait_for_text(const std::string& path, const std::string& what,
                          milliseconds limit = milliseconds(5000)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  std::string text = slurp(path);
  while (text.find(what) == std::string::npos && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(milliseconds(20));
    text = slurp(path);
  }
  return text;
}

void check_has(const std::string& text, const std::string& what) {
  check(text.find(what) != std::string::npos, "missing '" + what + "' in:\n" + text);
}

void write_file(const std::string& name, const std::string& text) {
  std::ofstream(this_rank().temp_dir + "/" + name) << text;
}

RunOptions survivors(milliseconds timeout) {
  RunOptions o;
  o.stop_on_failure = false;
  o.options.timeout = timeout;
  return o;
}

// Every rank but `gone` ended kOk; `gone` left with _exit(0) without reporting.
::testing::AssertionResult survivors_ok(const RunResult& r, int gone) {
  for (const RankOutcome& o : r.ranks) {
    const bool ok = o.rank == gone ? (o.state == RankState::kDied && o.exit_code == 0)
                                   : o.state == RankState::kOk;
    if (!ok) return ::testing::AssertionFailure() << r.summary();
  }
  return ::testing::AssertionSuccess();
}

// Steps of all_reduce (seq 2s) + all_gather (seq 2s+1); `leaver` leaves before step 5,
// so the others wait in seq 10 all_reduce and its last completed op is seq 9 all_gather.
void loop_until_peer_lost(Communicator& comm, int leaver, bool graceful) {
  std::vector<float> v(256, 1.0f), sum(256), all(64 * comm.size());
  for (int s = 0; s < 100; ++s) {
    if (comm.rank() == leaver && s == 5) {
      write_file("pid." + std::to_string(leaver), std::to_string(::getpid()));
      if (!graceful) ::_exit(0);  // no ~Communicator: no hang line, connections just close
      return;
    }
    try {
      comm.all_reduce(v.data(), sum.data(), v.size(), DataType::kFloat32, ReduceOp::kSum);
      comm.all_gather(v.data(), all.data(), 64, DataType::kFloat32);
    } catch (const Error& e) {
      check(e.code() == ErrorCode::kPeerLost, std::string("expected peer_lost: ") + e.what());
      return;
    }
  }
  check(false, "the loop finished although a rank left");
}

TEST(HangReport, RankZeroNamesTheRankThatExitedAndWhereTheOthersWait) {
  ::setenv("CHORUS_TRANSPORT", "tcp", 1);
  ::unsetenv("CHORUS_HANG_REPORT");
  constexpr int kLeaver = 2;
  auto body = [](Communicator& comm) {
    const std::string err = capture_stderr();
    loop_until_peer_lost(comm, kLeaver, true);
    if (comm.rank() != 0) return;
    const std::string t = wait_for_text(err, "chorus hang report end (comm 0)");
    const std::string pid = slurp(this_rank().temp_dir + "/pid.2");
    check_has(t, "chorus hang report v1 (comm 0, 4 ranks, printed by rank 0):");
    check_has(t, "  rank 2 (host ");
    check_has(t, " pid " + pid + "): exited (communicator destroyed) after completing seq 9 "
                 "all_gather\n");
    check_has(t, "  ranks 0-1,3: failed (peer_lost) in seq 10 all_reduce\n");
    check_has(t, "chorus flight recorder v1: comm=0 rank=0 size=4 ");
    check_has(t, "reason=failure");
    check_has(t, "  seq=10 op=all_reduce dtype=float32 count=256 redop=sum");
  };
  EXPECT_TRUE(all_ok(RankRunner::run(4, body, milliseconds(30000), survivors(milliseconds(20000)))));
}

TEST(HangReport, EveryRankPrintsWithAllAndNamesAVanishedRanksHostAndPid) {
  ::setenv("CHORUS_TRANSPORT", "tcp", 1);
  ::setenv("CHORUS_HANG_REPORT", "all", 1);
  constexpr int kLeaver = 1;
  auto body = [](Communicator& comm) {
    const std::string err = capture_stderr();
    loop_until_peer_lost(comm, kLeaver, false);
    const std::string t = wait_for_text(err, "chorus hang report end (comm 0)");
    const std::string pid = slurp(this_rank().temp_dir + "/pid.1");
    check_has(t, "printed by rank " + std::to_string(comm.rank()) + "):");
    check_has(t, " pid " + pid + "): no report (exited or stalled?)\n");
    check_has(t, "  ranks 0,2: failed (peer_lost) in seq 10 all_reduce\n");
  };
  auto r = RankRunner::run(3, body, milliseconds(30000), survivors(milliseconds(20000)));
  ::unsetenv("CHORUS_HANG_REPORT");
  EXPECT_TRUE(survivors_ok(r, kLeaver));
}

TEST(HangReport, PeerLostNamesTheLostRanksHostAndPid) {
  ::setenv("CHORUS_TRANSPORT", "tcp", 1);
  auto body = [](Communicator& comm) {
    std::vector<int> pid(1, static_cast<int>(::getpid())), pids(2);
    comm.all_gather(pid.data(), pids.data(), 1, DataType::kInt32);
    if (comm.rank() == 1) ::_exit(0);
    Error e = expect_error(ErrorCode::kPeerLost, [&] { comm.barrier(); });
    check_has(e.message(), "rank 1 (host ");
    check_has(e.message(), " was lost; ");
    check_has(e.message(), " pid " + std::to_string(pids[1]) + ")");
  };
  EXPECT_TRUE(
      survivors_ok(RankRunner::run(2, body, milliseconds(30000), survivors(milliseconds(20000))), 1));
}

TEST(FlightRecord, ListsRecentOperationsDoneWithTheirSeqs) {
  auto body = [](Communicator& comm) {
    std::vector<float> v(8, 1.0f), out(8 * comm.size());
    comm.all_reduce(v.data(), out.data(), 8, DataType::kFloat32, ReduceOp::kMax);
    comm.all_gather(v.data(), out.data(), 8, DataType::kFloat32);
    comm.broadcast(v.data(), out.data(), 8, DataType::kFloat32, 1);
    comm.barrier();
    if (comm.rank() == 0) comm.send(v.data(), 2, DataType::kFloat32, 1);
    if (comm.rank() == 1) comm.recv(out.data(), 2, DataType::kFloat32, 0);
    const std::string t = comm.flight_record();
    const std::string r = std::to_string(comm.rank());
    check_has(t, "chorus flight recorder v1: comm=0 rank=" + r + " size=2 ");
    check_has(t, "reason=api");
    check_has(t, "recorded=5 capacity=64 entries=5\n");
    check_has(t, "  seq=0 op=all_reduce dtype=float32 count=8 redop=max root=- peer=- bytes=32 ");
    check_has(t, "  seq=1 op=all_gather dtype=float32 count=8 redop=- root=- peer=- bytes=32 ");
    check_has(t, "  seq=2 op=broadcast dtype=float32 count=8 redop=- root=1 peer=- bytes=32 ");
    check_has(t, "  seq=3 op=barrier dtype=- count=0");
    check_has(t, comm.rank() == 0 ? "  seq=0 op=send dtype=uint8 count=8 redop=- root=- peer=1 "
                                  : "  seq=0 op=recv dtype=uint8 count=8 redop=- root=- peer=0 ");
    std::size_t lines = 0, done = 0;
    for (std::size_t p = t.find("\n  seq="); p != std::string::npos; p = t.find("\n  seq=", p + 1))
      ++lines;
    for (std::size_t p = t.find(" state=done "); p != std::string::npos;
         p = t.find(" state=done ", p + 1))
      ++done;
    check(lines == 5 && done == 5, "expected 5 entries, all done:\n" + t);
  };
  EXPECT_TRUE(all_ok(RankRunner::run(2, body, milliseconds(30000))));
}

TEST(FlightRecord, KeepsOnlyTheLastNEntries) {
  ::setenv("CHORUS_FLIGHT_RECORDER_SIZE", "3", 1);
  auto body = [](Communicator& comm) {
    for (int i = 0; i < 10; ++i) comm.barrier();
    const std::string t = comm.flight_record();
    check_has(t, "recorded=10 capacity=3 entries=3\n");
    check_has(t, "  seq=7 op=barrier");
    check_has(t, "  seq=9 op=barrier");
    check(t.find("  seq=6 ") == std::string::npos, "seq 6 should have been overwritten:\n" + t);
  };
  auto r = RankRunner::run(2, body, milliseconds(30000));
  ::unsetenv("CHORUS_FLIGHT_RECORDER_SIZE");
  EXPECT_TRUE(all_ok(r));
}

TEST(FlightRecord, SigusrOneDumpsWithoutDisturbingTheJob) {
  auto body = [](Communicator& comm) {
    const std::string err = capture_stderr();
    std::vector<int> pid(1, static_cast<int>(::getpid())), pids(2);
    comm.all_gather(pid.data(), pids.data(), 1, DataType::kInt32);  // seq 0
    if (comm.rank() == 0) check(::kill(pids[1], SIGUSR1) == 0, "kill(SIGUSR1)");
    std::vector<std::int64_t> v(1024), out(1024);
    for (int i = 0; i < 50; ++i) {  // seq 1..50, across the signal
      for (std::size_t k = 0; k < v.size(); ++k) v[k] = comm.rank() + i + static_cast<int>(k);
      comm.all_reduce(v.data(), out.data(), v.size(), DataType::kInt64, ReduceOp::kSum);
      for (std::size_t k = 0; k < v.size(); ++k)
        check(out[k] == 1 + 2 * (i + static_cast<std::int64_t>(k)), "wrong all_reduce result");
    }
    if (comm.rank() != 1) return;
    const std::string t = wait_for_text(err, "chorus flight recorder end: comm=0 rank=1");
    check_has(t, "chorus flight recorder v1: comm=0 rank=1 size=2 ");
    check_has(t, "reason=sigusr1");
    check_has(t, "  seq=0 op=all_gather dtype=int32 count=1 ");
  };
  EXPECT_TRUE(all_ok(RankRunner::run(2, body, milliseconds(30000))));
}

}  // namespace
}  // namespace chorus
