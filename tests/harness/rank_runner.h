// Runs a test body in n real rank processes (fork) and reports, per rank, how it ended.
// Children join one process group, die with the parent, report failures through a pipe
// and leave with _exit; the parent enforces a deadline and kills the group on timeout
// or on the first failure.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chorus/communicator.h"
#include "chorus/options.h"
#include "chorus/status.h"

namespace chorus::testing {

// What a child process knows about its run.
struct RankContext {
  int rank = -1;
  int size = 0;
  std::string temp_dir;   // fresh per run, removed afterwards; shared by all ranks
  std::string store_dir;  // temp_dir + "/store": the FileStore of RankRunner::run
};

// The context of the rank process running now (valid only inside a child).
const RankContext& this_rank();

// How one rank process ended.
enum class RankState {
  kOk,        // fn returned
  kFailed,    // fn threw (or a gtest assertion failed inside the child)
  kDied,      // the process ended without reporting (exit code or signal)
  kTimedOut,  // still running at the deadline
  kKilled,    // killed by the runner because another rank failed first
};

struct RankOutcome {
  int rank = -1;
  RankState state = RankState::kTimedOut;
  std::string message;                 // failure text (what(), gtest failures)
  std::optional<ErrorCode> error_code; // set when fn threw chorus::Error
  int exit_code = -1;                  // when the process exited
  int signal = 0;                      // when a signal ended it
  std::chrono::milliseconds elapsed{0};// from fork to report / end
  // "rank 2: chorus::Error peer_lost: ..." / "rank 1 timed out after 30 s".
  std::string describe(std::chrono::milliseconds deadline) const;
};

struct RunResult {
  std::vector<RankOutcome> ranks;       // indexed by rank
  std::vector<int> failure_order;       // ranks in the order their failures arrived
  std::chrono::milliseconds deadline{0};
  std::chrono::milliseconds elapsed{0};
  bool all_ok() const;
  // Failures first (in arrival order), one line per rank that did not end kOk.
  std::string summary() const;
};

struct RunOptions {
  Options options;                   // passed to Communicator::init
  bool stop_on_failure = true;       // kill the other ranks at the first failure
  std::chrono::milliseconds failure_grace{0};  // wait this long before that kill
  // run(): called in each rank process before Communicator::init (e.g. to set a per-rank
  // environment). Without it, CHORUS_TEST_HOSTS=H in the test's environment spreads the
  // ranks over H emulated hosts (CHORUS_HOST_ID "test-host-<rank*H/n>"), so any test runs
  // with shared memory within and TCP between hosts.
  std::function<void(int rank)> before_init;
};

class RankRunner {
 public:
  // Forks n ranks; each builds Communicator::init(rank, n, open_file_store(<temp>/store),
  // options) and runs fn(comm). Call before the test creates threads.
  static RunResult run(int n, std::function<void(Communicator&)> fn,
                       std::chrono::milliseconds deadline, RunOptions options = {});
  // Forks n ranks that run fn() with no communicator (see this_rank()).
  static RunResult run_raw(int n, std::function<void()> fn, std::chrono::milliseconds deadline,
                           RunOptions options = {});
};

// Success when every rank ended kOk; otherwise the summary.
::testing::AssertionResult all_ok(const RunResult& r);
// Success when every rank in `ranks` (all when empty) failed with chorus::Error `code`.
::testing::AssertionResult all_threw(const RunResult& r, ErrorCode code,
                                     std::vector<int> ranks = {});

// --- Helpers for use inside a rank process -----------------------------------------

// Thrown by the helpers below; its what() reaches the parent as the rank's failure.
class CheckFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Names what the rank is doing now ("all_reduce int8 sum count=7 in-place"); the text
// is appended to this rank's failure message and shown when it times out.
void step(const std::string& what);
// Throws CheckFailure(message) unless cond.
void check(bool cond, const std::string& message);
// Runs fn; returns the chorus::Error it threw when its code is `code` and its message
// contains `must_contain`; throws CheckFailure describing what happened otherwise.
Error expect_error(ErrorCode code, const std::function<void()>& fn,
                   std::string_view must_contain = {});
// Unsets every launcher variable (CHORUS_RANK..., RANK, WORLD_SIZE, MASTER_*, OMPI_*,
// PMI_*, PMIX_*, SLURM_*, ...).
void clear_launcher_env();
// A TCP port on 127.0.0.1 that was free a moment ago; with `pair`, port+1 was free too.
int pick_free_port(bool pair = false);

}  // namespace chorus::testing
