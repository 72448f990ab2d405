// Blocks the signals chorus-run handles and delivers them through a signalfd.
#include "signals.h"

#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

namespace chorus_run {

int block_and_open_signalfd(sigset_t* old_mask) {
  sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGCHLD}) sigaddset(&set, sig);
  if (pthread_sigmask(SIG_BLOCK, &set, old_mask) != 0) return -1;
  signal(SIGPIPE, SIG_IGN);
  return signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

int read_signal(int sfd) {
  signalfd_siginfo info;
  ssize_t n = read(sfd, &info, sizeof(info));
  if (n != static_cast<ssize_t>(sizeof(info))) return 0;
  return static_cast<int>(info.ssi_signo);
}

void restore_child_signals(const sigset_t& old_mask) {
  signal(SIGPIPE, SIG_DFL);
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  if (abbrev == nullptr) return "signal " + std::to_string(sig);
  return std::string("SIG") + abbrev;
}

}  // namespace chorus_run
