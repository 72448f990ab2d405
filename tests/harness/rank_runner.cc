// RankRunner: forks the rank processes, collects their reports through pipes, enforces
// the deadline and turns the outcome into gtest-readable text.
#include "rank_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include "child_report.h"
#include "chorus/store.h"

namespace chorus::testing {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::string make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/chorus-mp-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) {
    std::perror("mkdtemp");
    std::abort();
  }
  return buf.data();
}

std::string seconds_text(milliseconds ms) {
  char buf[32];
  if (ms.count() % 1000 == 0) {
    std::snprintf(buf, sizeof buf, "%lld s", static_cast<long long>(ms.count() / 1000));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f s", ms.count() / 1000.0);
  }
  return buf;
}

struct Child {
  pid_t pid = -1;
  int fd = -1;          // read end of the report pipe; -1 once EOF seen
  std::string data;     // everything the child wrote
  bool ended = false;   // EOF seen
  bool killed = false;  // killed by us before EOF
  Clock::time_point end_time;
};

void parse_report(Child& c, RankOutcome& out) {
  const std::string& d = c.data;
  std::size_t ok = d.find("@ok\n");
  std::size_t fail = d.find("@fail ");
  if (fail != std::string::npos) {
    out.state = RankState::kFailed;
    std::size_t nl = d.find('\n', fail);
    int code = std::atoi(d.c_str() + fail + 6);
    if (code >= 0) out.error_code = static_cast<ErrorCode>(code);
    out.message = nl == std::string::npos ? "" : d.substr(nl + 1);
  } else if (ok != std::string::npos) {
    out.state = RankState::kOk;
  }
}

std::string last_phase(const std::string& d) {
  std::size_t p = d.rfind("@phase ");
  if (p == std::string::npos) return "";
  std::size_t nl = d.find('\n', p);
  return d.substr(p + 7, nl == std::string::npos ? std::string::npos : nl - p - 7);
}

}  // namespace

std::string RankOutcome::describe(milliseconds deadline) const {
  std::string r = "rank " + std::to_string(rank);
  switch (state) {
    case RankState::kOk:
      return r + ": ok";
    case RankState::kFailed:
      return r + ": " + message;
    case RankState::kDied:
      if (signal != 0) {
        return r + " was killed by signal " + std::to_string(signal) + " (" + strsignal(signal) +
               ")" + (message.empty() ? "" : " " + message);
      }
      return r + " exited with code " + std::to_string(exit_code) + " without reporting" +
             (message.empty() ? "" : " " + message);
    case RankState::kTimedOut:
      return r + " timed out after " + seconds_text(deadline) + message;
    case RankState::kKilled:
      return r + " was killed after another rank failed" + message;
  }
  return r;
}

bool RunResult::all_ok() const {
  for (const auto& o : ranks)
    if (o.state != RankState::kOk) return false;
  return !ranks.empty();
}

std::string RunResult::summary() const {
  std::string s;
  std::vector<bool> shown(ranks.size(), false);
  for (int r : failure_order) {
    s += ranks[r].describe(deadline) + "\n";
    shown[r] = true;
  }
  for (const auto& o : ranks)
    if (!shown[o.rank] && o.state != RankState::kOk) s += o.describe(deadline) + "\n";
  return s;
}

RunResult RankRunner::run_raw(int n, std::function<void()> fn, milliseconds deadline,
                              RunOptions options) {
  RunResult result;
  result.deadline = deadline;
  const std::string temp = make_temp_dir();
  std::fflush(nullptr);
  std::vector<std::array<int, 2>> pipes(n);
  for (auto& p : pipes) {
    if (pipe2(p.data(), O_CLOEXEC) != 0) {
      std::perror("pipe2");
      std::abort();
    }
  }
  const pid_t parent = getpid();
  const auto start = Clock::now();
  std::vector<Child> kids(n);
  pid_t pgid = 0;
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid < 0) {
      std::perror("fork");
      std::abort();
    }
    if (pid == 0) {
      setpgid(0, pgid);
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(97);
      for (int q = 0; q < n; ++q) {
        close(pipes[q][0]);
        if (q != r) close(pipes[q][1]);
      }
      RankContext ctx{r, n, temp, temp + "/store"};
      detail::child_main(pipes[r][1], std::move(ctx), fn);  // never returns
    }
    if (pgid == 0) pgid = pid;
    setpgid(pid, pgid);  // also from the parent, so there is no race
    kids[r].pid = pid;
  }
  for (int r = 0; r < n; ++r) {
    close(pipes[r][1]);
    kids[r].fd = pipes[r][0];
  }

  result.ranks.resize(n);
  for (int r = 0; r < n; ++r) result.ranks[r].rank = r;
  const auto hard_end = start + deadline;
  bool killed_all = false;
  Clock::time_point killed_time;
  std::optional<Clock::time_point> kill_at;
  auto kill_group = [&] {
    if (!killed_all) killed_time = Clock::now();
    kill(-pgid, SIGKILL);
    for (auto& k : kids) kill(k.pid, SIGKILL);
    for (auto& k : kids)
      if (!k.ended) k.killed = true;
    killed_all = true;
  };
  for (;;) {
    std::vector<pollfd> pfds;
    std::vector<int> idx;
    for (int r = 0; r < n; ++r) {
      if (kids[r].ended) continue;
      pfds.push_back({kids[r].fd, POLLIN, 0});
      idx.push_back(r);
    }
    if (pfds.empty()) break;
    auto now = Clock::now();
    if (!killed_all && kill_at && now >= *kill_at) kill_group();
    if (!killed_all && now >= hard_end) kill_group();
    // After a kill, the pipes close promptly; give them a bounded time.
    if (killed_all && now >= killed_time + milliseconds(10000)) break;
    if (poll(pfds.data(), pfds.size(), 50) < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < pfds.size(); ++i) {
      if (!(pfds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Child& c = kids[idx[i]];
      char buf[4096];
      ssize_t got = read(c.fd, buf, sizeof buf);
      if (got > 0) {
        c.data.append(buf, got);
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      c.ended = true;
      c.end_time = Clock::now();
      close(c.fd);
      RankOutcome& o = result.ranks[idx[i]];
      parse_report(c, o);
      if (o.state != RankState::kOk && !c.killed) {
        if (o.state != RankState::kFailed) o.state = RankState::kDied;
        result.failure_order.push_back(idx[i]);
        if (options.stop_on_failure && !kill_at) kill_at = Clock::now() + options.failure_grace;
      }
    }
  }
  kill_group();  // strays (grandchildren) and anything still running
  for (int r = 0; r < n; ++r) {
    Child& c = kids[r];
    RankOutcome& o = result.ranks[r];
    int st = 0;
    while (waitpid(c.pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(st)) o.exit_code = WEXITSTATUS(st);
    if (WIFSIGNALED(st)) o.signal = WTERMSIG(st);
    o.elapsed = std::chrono::duration_cast<milliseconds>(
        (c.ended ? c.end_time : Clock::now()) - start);
    if (!c.ended) close(c.fd);
    if (o.state == RankState::kOk || o.state == RankState::kFailed) continue;
    std::string phase = last_phase(c.data);
    std::string where = phase.empty() ? "" : " (in " + phase + ")";
    if (c.killed && o.state != RankState::kDied) {
      bool timed_out = !kill_at || *kill_at >= hard_end;
      o.state = timed_out ? RankState::kTimedOut : RankState::kKilled;
      o.message = where;
      o.signal = 0;
    } else {
      o.state = RankState::kDied;
      o.message = where;
    }
  }
  result.elapsed = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  std::error_code ec;
  std::filesystem::remove_all(temp, ec);
  return result;
}

RunResult RankRunner::run(int n, std::function<void(Communicator&)> fn, milliseconds deadline,
                          RunOptions options) {
  Options comm_options = options.options;
  std::function<void(int)> before_init = options.before_init;
  return run_raw(
      n,
      [&fn, comm_options, before_init] {
        const RankContext& ctx = this_rank();
        if (before_init) {
          before_init(ctx.rank);
        } else if (const char* hosts = std::getenv("CHORUS_TEST_HOSTS")) {
          const int h = std::atoi(hosts);
          if (h > 0) {
            const std::string id = "test-host-" + std::to_string(ctx.rank * h / ctx.size);
            ::setenv("CHORUS_HOST_ID", id.c_str(), 1);
          }
        }
        detail::phase("Communicator::init");
        Communicator comm =
            Communicator::init(ctx.rank, ctx.size, open_file_store(ctx.store_dir), comm_options);
        detail::phase("test body");
        try {
          fn(comm);
        } catch (...) {
          detail::fail_current_exception_and_exit();  // without running ~Communicator
        }
        detail::fail_if_gtest_failed();
        detail::phase("~Communicator");
      },
      deadline, std::move(options));
}

::testing::AssertionResult all_ok(const RunResult& r) {
  if (r.all_ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << r.summary();
}

::testing::AssertionResult all_threw(const RunResult& r, ErrorCode code, std::vector<int> ranks) {
  if (ranks.empty())
    for (const auto& o : r.ranks) ranks.push_back(o.rank);
  std::string bad;
  for (int rank : ranks) {
    const RankOutcome& o = r.ranks.at(rank);
    if (o.state == RankState::kFailed && o.error_code == code) continue;
    bad += "expected chorus::Error " + std::string(to_string(code)) + ", but " +
           (o.state == RankState::kOk ? "rank " + std::to_string(rank) + " succeeded"
                                      : o.describe(r.deadline)) +
           "\n";
  }
  if (bad.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << bad << "all ranks:\n" << r.summary();
}

}  // namespace chorus::testing
