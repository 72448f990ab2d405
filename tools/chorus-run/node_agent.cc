// run_node_agent (see node_agent.h): store, agreement, supervision, and the final phase in
// which the agents wait for one another so every node's exit status tells the job's result.
#include "node_agent.h"

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>

#include "chorus/status.h"
#include "output_tagger.h"
#include "signals.h"
#include "store_watch.h"

namespace chorus_run {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kFlushLimit = std::chrono::seconds(2);  // sending the last reports
constexpr auto kHostLimit = std::chrono::seconds(3);   // node 0 waits for the others to leave

class Agent {
 public:
  Agent(const AgentOptions& o, int signal_fd)
      : o_(o), signal_fd_(signal_fd), name_("chorus-run[node " + std::to_string(o.spec.node_rank) + "]") {}

  int run(const LaunchFn& launch);

 private:
  void say(const std::string& text) { write_all(STDERR_FILENO, name_ + ": " + text + "\n"); }
  std::string where() const { return o_.master_host + ":" + std::to_string(o_.master_port); }
  std::shared_ptr<chorus::Store> connect();
  int wait_for_others(int code);
  int pending_signal(int wait_ms);

  const AgentOptions& o_;
  int signal_fd_;
  std::string name_;
  std::unique_ptr<StoreWatch> watch_;
  Clock::time_point started_ = Clock::now();  // --timeout counts from here
};

std::shared_ptr<chorus::Store> Agent::connect() {
  auto ms = std::chrono::milliseconds(static_cast<long long>(o_.spec.join_timeout_s * 1000));
  return chorus::connect_tcp_store(o_.master_host, o_.master_port, ms);
}

// A signal that arrived within `wait_ms` (0 when none); SIGCHLD is ignored.
int Agent::pending_signal(int wait_ms) {
  pollfd p{signal_fd_, POLLIN, 0};
  if (poll(&p, 1, wait_ms) <= 0) return 0;
  while (int sig = read_signal(signal_fd_))
    if (sig != SIGCHLD) return sig;
  return 0;
}

int Agent::run(const LaunchFn& launch) {
  std::unique_ptr<chorus::TcpStoreServer> server;
  NodePlan plan;
  std::string stage = "starting the store server on port " + std::to_string(o_.master_port);
  try {
    if (o_.spec.node_rank == 0) server = chorus::TcpStoreServer::start("0.0.0.0", o_.master_port);
    stage = "connecting to the store at " + where();
    auto store = connect();
    std::string error;
    if (!agree_on_nodes(*store, o_.spec, &plan, &error)) {
      say(error);
      return 1;
    }
    watch_ = std::make_unique<StoreWatch>(connect(), o_.spec.node_rank, o_.spec.nnodes, where());
  } catch (const chorus::Error& e) {
    say(stage + ": " + e.what());
    return 1;
  }
  int mine = plan.counts[o_.spec.node_rank];
  say("ranks " + std::to_string(plan.first_rank) + ".." + std::to_string(plan.first_rank + mine - 1) +
      " of " + std::to_string(plan.world_size) + " on " + std::to_string(o_.spec.nnodes) +
      " nodes, store " + where());
  JobEnv job{plan.world_size, where(), plan.job_id};
  Supervisor supervisor(signal_fd_, o_.timeout_s);
  supervisor.set_peers(watch_.get(), o_.spec.node_rank);
  launch(job, plan.first_rank, &supervisor);
  int code = wait_for_others(supervisor.run());
  // The watch thread may be stuck on a dead link: leave without joining it.
  fflush(nullptr);
  _exit(code);
}

// After this node's ranks are gone: report the result, wait (while this node's ranks all
// succeeded) for every node to succeed or one to fail, and leave; node 0, which hosts the
// store, leaves last.
int Agent::wait_for_others(int code) {
  if (code == 0 && watch_->stop_reason().empty()) {
    watch_->node_done();
    while (watch_->done_count() < o_.spec.nnodes) {
      if (o_.timeout_s > 0 && Clock::now() - started_ > std::chrono::duration<double>(o_.timeout_s)) {
        char text[96];
        std::snprintf(text, sizeof(text), "timeout of %g s exceeded while waiting for the other nodes",
                      o_.timeout_s);
        say(text);
        code = 124;
        break;
      }
      if (int sig = pending_signal(100)) {
        say("received " + signal_name(sig) + " while waiting for the other nodes");
        code = 128 + sig;
        break;
      }
      if (std::string reason = watch_->stop_reason(); !reason.empty()) {
        say(reason);
        code = 1;
        break;
      }
    }
  }
  if (code != 0 && !watch_->failure_reported() && watch_->stop_reason().empty())
    watch_->local_failure("chorus-run stopped with status " + std::to_string(code));
  watch_->leaving();
  for (auto until = Clock::now() + kFlushLimit; !watch_->flushed() && Clock::now() < until;)
    pending_signal(20);
  if (o_.spec.node_rank == 0)
    for (auto until = Clock::now() + kHostLimit;
         watch_->left_count() < o_.spec.nnodes - watch_->silent_nodes() && Clock::now() < until;)
      pending_signal(50);
  return code;
}

}  // namespace

int run_node_agent(const AgentOptions& o, int signal_fd, const LaunchFn& launch) {
  Agent agent(o, signal_fd);
  return agent.run(launch);
}

}  // namespace chorus_run
