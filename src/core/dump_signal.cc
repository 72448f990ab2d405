// SIGUSR1 handler (self-pipe) and the watcher thread that dumps the flight recorders.
#include "core/dump_signal.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <mutex>
#include <thread>

#include "core/comm_diag.h"
#include "core/comm_impl.h"
#include "core/live_comms.h"
#include "diag/log.h"

namespace chorus::core {

namespace {

// The self-pipe's write end. A signal handler can reach only static state; this is it.
std::atomic<int> g_dump_pipe{-1};

void on_sigusr1(int) {
  const int saved = errno;
  const int fd = g_dump_pipe.load(std::memory_order_relaxed);
  if (fd >= 0) {
    const char c = 1;
    [[maybe_unused]] ssize_t n = ::write(fd, &c, 1);  // non-blocking: a full pipe drops it
  }
  errno = saved;
}

void watch(int fd) {
  char buf[64];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));  // several signals: one dump
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    live_comms_for_each([](CommImpl& c) { write_report(c.flight_record_auto("sigusr1")); });
  }
}

void install_once() {
  struct sigaction old {};
  if (::sigaction(SIGUSR1, nullptr, &old) != 0) return;
  if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) {
    CHORUS_LOG(WARN, Init, "SIGUSR1 already has a handler; flight-recorder dumps on SIGUSR1 "
                           "are off (Communicator::flight_record() still works)");
    return;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    CHORUS_LOG(WARN, Init, "SIGUSR1 dumps off: pipe2 failed (errno %d)", errno);
    return;
  }
  ::fcntl(fds[1], F_SETFL, ::fcntl(fds[1], F_GETFL) | O_NONBLOCK);
  std::thread(watch, fds[0]).detach();
  g_dump_pipe.store(fds[1]);
  struct sigaction sa {};
  sa.sa_handler = on_sigusr1;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGUSR1, &sa, nullptr);
  CHORUS_LOG(INFO, Init, "SIGUSR1 dumps every communicator's flight recorder (stderr or CHORUS_DEBUG_FILE)");
}

}  // namespace

void install_dump_signal() {
  static std::once_flag once;
  std::call_once(once, install_once);
}

}  // namespace chorus::core
