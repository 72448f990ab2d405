// The supervision loop of chorus-run: poll over rank output pipes and a signalfd.
#include "supervisor.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "signals.h"

namespace chorus_run {
namespace {

constexpr auto kKillGrace = std::chrono::seconds(2);   // SIGTERM -> SIGKILL
// First failure -> SIGTERM to the others: time for the ranks that saw the failure too to
// print their flight recorders and the cross-rank hang report (its budget is 1 s).
constexpr auto kReportGrace = std::chrono::milliseconds(1500);
constexpr auto kDrainLimit = std::chrono::seconds(2);  // output after the last exit
constexpr int kMaxPollMs = 200;

// The exit code chorus-run reports for a rank's wait status.
int exit_code_of(int status) {
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

bool failed(int status) { return WIFSIGNALED(status) || WEXITSTATUS(status) != 0; }

}  // namespace

Supervisor::Supervisor(int signal_fd, double timeout_s)
    : signal_fd_(signal_fd), has_deadline_(timeout_s > 0), timeout_s_(timeout_s) {
  if (has_deadline_)
    deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                   std::chrono::duration<double>(timeout_s));
}

void Supervisor::set_peers(PeerWatch* peers, int node) {
  peers_ = peers;
  name_ = "chorus-run[node " + std::to_string(node) + "]";
}

void Supervisor::say(const std::string& text) const {
  write_all(STDERR_FILENO, name_ + ": " + text + "\n");
}

void Supervisor::add_rank(int rank, pid_t pid, int out_fd, int err_fd) {
  Rank r{rank, pid, true, {}};
  std::string prefix = "[" + std::to_string(rank) + "] ";
  if (out_fd >= 0) r.streams.emplace_back(out_fd, STDOUT_FILENO, prefix);
  if (err_fd >= 0) r.streams.emplace_back(err_fd, STDERR_FILENO, prefix);
  ranks_.push_back(std::move(r));
}

void Supervisor::terminate_all(int exit_code) {
  if (exit_code_ == 0) exit_code_ = exit_code;
  begin_termination(SIGTERM);
}

int Supervisor::run() {
  while (any_alive()) {
    poll_once();
    handle_signals();
    reap();
    check_peers();
    check_deadlines();
  }
  kill_process_groups(SIGKILL);  // whatever the ranks left behind in their groups
  drain_output();
  return exit_code_;
}

void Supervisor::poll_once() {
  std::vector<pollfd> fds{{signal_fd_, POLLIN, 0}};
  // The wake fd stays readable once set: watched only until the job is stopping.
  if (peers_ != nullptr && !failing_ && !terminating_) fds.push_back({peers_->wake_fd(), POLLIN, 0});
  const std::size_t first_stream = fds.size();
  std::vector<TaggedStream*> streams;
  for (Rank& r : ranks_)
    for (TaggedStream& s : r.streams)
      if (s.is_open()) {
        fds.push_back({s.fd(), POLLIN, 0});
        streams.push_back(&s);
      }
  int n = poll(fds.data(), fds.size(), poll_timeout_ms());
  if (n <= 0) return;
  for (std::size_t i = first_stream; i < fds.size(); ++i)
    if (fds[i].revents != 0) streams[i - first_stream]->pump();
}

// Another node failed (or the store is gone): the same grace as for a local failure,
// so ranks that saw the lost peers print their own errors first.
void Supervisor::check_peers() {
  if (peers_ == nullptr || failing_ || terminating_ || !any_alive()) return;
  std::string reason = peers_->stop_reason();
  if (reason.empty()) return;
  say(reason + "; stopping the ranks of this node");
  failing_ = true;
  if (exit_code_ == 0) exit_code_ = 1;
  term_at_ = Clock::now() + kReportGrace;
}

void Supervisor::handle_signals() {
  while (int sig = read_signal(signal_fd_)) {
    if (sig == SIGCHLD) continue;  // reap() runs after every poll
    if (!terminating_) {
      say("received " + signal_name(sig) + ", forwarding it to the ranks");
      if (exit_code_ == 0) exit_code_ = 128 + sig;
      begin_termination(sig);
    } else if (!killed_) {
      say("received " + signal_name(sig) + " again, killing the ranks");
      kill_process_groups(SIGKILL);
      killed_ = true;
    }
  }
}

void Supervisor::reap() {
  std::vector<std::pair<int, int>> failed_now;  // (index into ranks_, wait status)
  for (std::size_t i = 0; i < ranks_.size(); ++i) {
    Rank& r = ranks_[i];
    if (!r.alive) continue;
    int status = 0;
    pid_t got = waitpid(r.pid, &status, WNOHANG);
    if (got == 0 || (got < 0 && errno == EINTR)) continue;
    r.alive = false;
    if (got > 0 && failed(status) && !terminating_)  // also during the report grace
      failed_now.emplace_back(static_cast<int>(i), status);
  }
  if (!failed_now.empty()) report_failures(failed_now);
}

// Ranks that failed in the same poll round are all named; the one killed by a
// signal (the likely cause, the others having seen their peer vanish) sets the code.
void Supervisor::report_failures(const std::vector<std::pair<int, int>>& failed_now) {
  auto first = std::find_if(failed_now.begin(), failed_now.end(),
                            [](const auto& f) { return WIFSIGNALED(f.second); });
  if (first == failed_now.end()) first = failed_now.begin();
  for (const auto& [index, status] : failed_now) {
    const Rank& r = ranks_[index];
    std::string who = "rank " + std::to_string(r.rank) + " (pid " + std::to_string(r.pid) + ")";
    if (WIFSIGNALED(status))
      say(who + " was killed by signal " + signal_name(WTERMSIG(status)));
    else
      say(who + " exited with status " + std::to_string(WEXITSTATUS(status)));
  }
  if (failing_) return;  // the first failure sets the code and starts the grace
  failing_ = true;
  exit_code_ = exit_code_of(first->second);
  if (peers_ != nullptr) {
    const Rank& r = ranks_[first->first];
    int status = first->second;
    peers_->local_failure("rank " + std::to_string(r.rank) + " (pid " + std::to_string(r.pid) +
                          ") " + (WIFSIGNALED(status)
                                      ? "was killed by signal " + signal_name(WTERMSIG(status))
                                      : "exited with status " + std::to_string(WEXITSTATUS(status))));
  }
  term_at_ = Clock::now() + kReportGrace;
}

void Supervisor::begin_termination(int sig) {
  if (!terminating_) kill_at_ = Clock::now() + kKillGrace;
  terminating_ = true;
  for (const Rank& r : ranks_)
    if (r.alive) killpg(r.pid, sig);
}

void Supervisor::check_deadlines() {
  Clock::time_point now = Clock::now();
  if (failing_ && !terminating_ && now >= term_at_ && any_alive()) {
    say("terminating the remaining ranks");
    begin_termination(SIGTERM);
  }
  if (has_deadline_ && !terminating_ && now >= deadline_ && any_alive()) {
    char text[128];
    std::snprintf(text, sizeof(text), "timeout of %g s exceeded, killing all ranks", timeout_s_);
    say(text);
    exit_code_ = 124;
    begin_termination(SIGTERM);
  }
  if (terminating_ && !killed_ && now >= kill_at_) {
    kill_process_groups(SIGKILL);
    killed_ = true;
  }
}

void Supervisor::kill_process_groups(int sig) {
  for (const Rank& r : ranks_) killpg(r.pid, sig);  // ESRCH for an empty group is fine
}

void Supervisor::drain_output() {
  Clock::time_point until = Clock::now() + kDrainLimit;
  bool open = true;
  while (open && Clock::now() < until) {
    std::vector<pollfd> fds;
    std::vector<TaggedStream*> streams;
    for (Rank& r : ranks_)
      for (TaggedStream& s : r.streams)
        if (s.is_open()) {
          fds.push_back({s.fd(), POLLIN, 0});
          streams.push_back(&s);
        }
    open = !fds.empty();
    if (open && poll(fds.data(), fds.size(), kMaxPollMs) > 0)
      for (std::size_t i = 0; i < fds.size(); ++i)
        if (fds[i].revents != 0) streams[i]->pump();
  }
  for (Rank& r : ranks_)
    for (TaggedStream& s : r.streams) s.finish();
}

bool Supervisor::any_alive() const {
  return std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.alive; });
}

int Supervisor::poll_timeout_ms() const {
  auto wait = std::chrono::milliseconds(kMaxPollMs);
  Clock::time_point now = Clock::now();
  auto until = [&](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(t - now) +
           std::chrono::milliseconds(1);
  };
  if (has_deadline_ && !terminating_) wait = std::min(wait, until(deadline_));
  if (failing_ && !terminating_) wait = std::min(wait, until(term_at_));
  if (terminating_ && !killed_) wait = std::min(wait, until(kill_at_));
  return static_cast<int>(std::max<std::chrono::milliseconds::rep>(0, wait.count()));
}

}  // namespace chorus_run
