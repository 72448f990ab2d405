// Signal plumbing of chorus-run: the signals it handles arrive through a signalfd.
#pragma once
#include <signal.h>

#include <string>

namespace chorus_run {

// Blocks SIGINT, SIGTERM, SIGHUP and SIGCHLD in the calling thread (call before any
// thread starts, so every thread inherits the mask), ignores SIGPIPE, and returns a
// non-blocking signalfd for the blocked set. `*old_mask` receives the previous mask,
// which children restore before exec. Returns -1 (errno set) on failure.
int block_and_open_signalfd(sigset_t* old_mask);

// Reads one pending signal from `sfd`; 0 when none is pending.
int read_signal(int sfd);

// Undoes block_and_open_signalfd in a forked child (async-signal-safe).
void restore_child_signals(const sigset_t& old_mask);

// "SIGSEGV" for 11, "signal 70" for numbers without a name.
std::string signal_name(int sig);

}  // namespace chorus_run
