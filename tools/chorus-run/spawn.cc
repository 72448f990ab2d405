// fork + exec of one rank; binding and exec failures come back through a close-on-exec pipe.
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "signals.h"

namespace chorus_run {
namespace {

// What failed in the child before its exec took over, and why.
struct ExecReport {
  enum Stage : int { kBind, kExec } stage;
  int error;
};

struct Pipe {
  int r = -1;
  int w = -1;
};

bool make_pipe(Pipe* p) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  p->r = fds[0];
  p->w = fds[1];
  return true;
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// Runs in the child between fork and exec: async-signal-safe calls only.
[[noreturn]] void exec_child(const SpawnSpec& spec, char* const* argv, char* const* envp,
                             pid_t parent, const Pipe& out, const Pipe& err, int report_fd) {
  setpgid(0, 0);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(127);  // chorus-run died before the prctl
  restore_child_signals(spec.child_mask);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, STDIN_FILENO);
  if (spec.capture_output) {
    dup2(out.w, STDOUT_FILENO);
    dup2(err.w, STDERR_FILENO);
  }
  close_range(3, ~0U, CLOSE_RANGE_CLOEXEC);
  ExecReport report{ExecReport::kBind, 0};
  if (!spec.bind || sched_setaffinity(0, sizeof(spec.cpus), &spec.cpus) == 0) {
    execvpe(argv[0], argv, envp);
    report.stage = ExecReport::kExec;
  }
  report.error = errno;
  ssize_t ignored = write(report_fd, &report, sizeof(report));
  (void)ignored;
  _exit(127);
}

// Reads the child's report: error 0 when the exec succeeded (the pipe closed empty).
ExecReport read_exec_report(int fd) {
  ExecReport r{ExecReport::kExec, 0};
  ssize_t n;
  do {
    n = read(fd, &r, sizeof(r));
  } while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(sizeof(r)) ? r : ExecReport{ExecReport::kExec, 0};
}

}  // namespace

bool spawn_rank(const SpawnSpec& spec, SpawnedRank* out, std::string* error) {
  std::vector<char*> argv, envp;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  for (const std::string& e : spec.env) envp.push_back(const_cast<char*>(e.c_str()));
  argv.push_back(nullptr);
  envp.push_back(nullptr);

  Pipe o, e, report;
  bool ok = make_pipe(&report);
  if (ok && spec.capture_output) ok = make_pipe(&o) && make_pipe(&e);
  pid_t parent = getpid();
  pid_t pid = ok ? fork() : -1;
  if (pid == 0) exec_child(spec, argv.data(), envp.data(), parent, o, e, report.w);
  int saved = errno;
  close_fd(o.w);
  close_fd(e.w);
  close_fd(report.w);
  if (pid < 0) {
    *error = std::string(ok ? "fork" : "pipe") + " failed: " + strerror(saved);
    close_fd(o.r), close_fd(e.r), close_fd(report.r);
    return false;
  }
  setpgid(pid, pid);  // also done by the child; whichever runs first wins the race
  const ExecReport failed = read_exec_report(report.r);
  close_fd(report.r);
  if (failed.error != 0) {
    *error = failed.stage == ExecReport::kBind
                 ? "cannot bind to processors: " + std::string(strerror(failed.error))
                 : "cannot execute '" + spec.argv[0] + "': " + strerror(failed.error);
    waitpid(pid, nullptr, 0);
    close_fd(o.r), close_fd(e.r);
    return false;
  }
  for (int fd : {o.r, e.r})
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  *out = SpawnedRank{pid, o.r, e.r};
  return true;
}

}  // namespace chorus_run
