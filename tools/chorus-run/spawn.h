// Forks and execs one rank in its own process group, tied to chorus-run's lifetime.
#pragma once
#include <sched.h>
#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace chorus_run {

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  std::vector<std::string> env;   // "NAME=value" entries
  bool capture_output = true;     // stdout/stderr to pipes (else inherited)
  sigset_t child_mask;            // signal mask the child restores before exec
  bool bind = false;              // run on `cpus` only (sched_setaffinity before exec)
  cpu_set_t cpus;
};

struct SpawnedRank {
  pid_t pid = -1;     // also the id of the rank's process group
  int out_fd = -1;    // read end of the rank's stdout pipe (non-blocking), or -1
  int err_fd = -1;    // read end of the rank's stderr pipe (non-blocking), or -1
};

// Starts the rank: its own process group, PR_SET_PDEATHSIG(SIGKILL), stdin from
// /dev/null, bound to `spec.cpus` when `spec.bind`. Returns false with `*error` set when
// fork, the binding or exec fails (the child, if any, is reaped). Only async-signal-safe
// calls run between fork and exec.
bool spawn_rank(const SpawnSpec& spec, SpawnedRank* out, std::string* error);

}  // namespace chorus_run
