// Watches the launched ranks: copies their output, forwards signals, enforces the
// timeout, and stops every rank shortly after one fails (1.5 s later: the ranks that saw
// the failure print their flight recorders and hang report first) or, multi-node, after
// another node reports a failure (PeerWatch).
#pragma once
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "output_tagger.h"

namespace chorus_run {

// What a multi-node agent adds to supervision (store_watch.h): the other nodes' failures
// stop this node's ranks, and a failure here is told to them. Absent on one node.
class PeerWatch {
 public:
  virtual ~PeerWatch() = default;
  // Readable when stop_reason() may have become non-empty (the supervisor also polls it).
  virtual int wake_fd() const = 0;
  // Why this node's ranks must stop ("node 1 failed: rank 3 (pid 9) exited with status 1",
  // "lost the connection to the store at ..."); empty while the job may go on. Never blocks.
  virtual std::string stop_reason() = 0;
  // A rank of this node failed (`what` names it); tells the other nodes. Never blocks.
  virtual void local_failure(const std::string& what) = 0;
};

class Supervisor {
 public:
  // `signal_fd` delivers SIGINT/SIGTERM/SIGHUP/SIGCHLD (see signals.h).
  // `timeout_s` <= 0 means no timeout.
  Supervisor(int signal_fd, double timeout_s);

  // Multi-node: watch `peers` (not owned, outlives run()) and name messages
  // "chorus-run[node K]" instead of "chorus-run".
  void set_peers(PeerWatch* peers, int node);
  // Takes over a started rank. `out_fd`/`err_fd` are its output pipes (owned), or -1
  // when the rank writes to chorus-run's stdout/stderr directly.
  void add_rank(int rank, pid_t pid, int out_fd, int err_fd);
  // Stops every rank (SIGTERM, then SIGKILL) and makes run() return `exit_code`.
  void terminate_all(int exit_code);
  // Runs until every rank has exited and been reaped, then kills what is left in
  // their process groups and drains their output. Returns chorus-run's exit code:
  // 0 when every rank exited 0; else the first failing rank's status (128 + signal
  // when killed), 124 on timeout, 128 + signal when chorus-run was interrupted.
  int run();

 private:
  using Clock = std::chrono::steady_clock;
  struct Rank {
    int rank;
    pid_t pid;
    bool alive;
    std::vector<TaggedStream> streams;
  };

  void say(const std::string& text) const;
  void check_peers();
  void poll_once();
  void handle_signals();
  void reap();
  void report_failures(const std::vector<std::pair<int, int>>& failed);
  void begin_termination(int sig);
  void check_deadlines();
  void kill_process_groups(int sig);
  void drain_output();
  bool any_alive() const;
  int poll_timeout_ms() const;

  int signal_fd_;
  std::vector<Rank> ranks_;
  bool has_deadline_;
  double timeout_s_;
  Clock::time_point deadline_;
  bool terminating_ = false;
  bool killed_ = false;
  Clock::time_point kill_at_;
  bool failing_ = false;        // a rank failed: the others get SIGTERM at term_at_
  Clock::time_point term_at_;
  int exit_code_ = 0;
  PeerWatch* peers_ = nullptr;
  std::string name_ = "chorus-run";
};

}  // namespace chorus_run
