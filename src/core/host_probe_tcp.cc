// The host probe's TCP figures (host_probe_tcp.h). A message hand-off is timed as the TCP
// engine meets it while awake: one send, then the receiver polling the socket without
// blocking; the stream rate as one sender and one receiver copying at once, in 256 KiB
// writes (about what a chunk of a pipelined algorithm is per system call).
#include "core/host_probe_tcp.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <thread>
#include <vector>

#include "config/defaults.h"
#include "net/socket.h"
#include "net/stream_io.h"

namespace chorus::core {

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

struct Pair {
  UniqueFd a, b;
};

// A connected loopback pair (both ends non-blocking) with the TCP transport's default
// socket buffers, or invalid fds.
Pair loopback_pair(Deadline deadline) {
  constexpr std::size_t kBuffer = config::defaults::socket_buffer_bytes;
  Pair out;
  Result<net::Listener> l = net::listen_tcp("127.0.0.1", 0, kBuffer);
  if (!l) return out;
  Result<UniqueFd> c = net::connect_tcp(net::HostPort{"127.0.0.1", l->port},
                                        net::ConnectOptions{kBuffer, false}, deadline);
  if (!c) return out;
  if (net::wait_fd(l->fd.get(), POLLIN, deadline) != 0) return out;
  UniqueFd s(::accept4(l->fd.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
  if (!s.valid()) return out;
  net::tune_socket(s.get(), kBuffer);
  out.a = std::move(*c);
  out.b = std::move(s);
  return out;
}

// Receives exactly n bytes: polling without blocking for up to 50 us (as the TCP engine
// spins while the host is not oversubscribed), then blocking in poll; false once `limit`
// passes or the connection fails.
bool spin_recv(int fd, char* buf, std::size_t n, Clock::time_point limit) {
  const auto spin_until = Clock::now() + std::chrono::microseconds(50);
  std::size_t got = 0;
  while (got < n) {
    pollfd p{fd, POLLIN, 0};
    ::poll(&p, 1, Clock::now() < spin_until ? 0 : 1);
    const ssize_t r = ::recv(fd, buf + got, n - got, MSG_DONTWAIT);
    if (r > 0) got += static_cast<std::size_t>(r);
    else if (r == 0 || (errno != EAGAIN && errno != EINTR) || Clock::now() > limit) return false;
  }
  return true;
}

// Half the median round trip of 8-byte messages over `pair` (on a busy host, some trips
// include a wake-up; the median keeps the usual one); 0 when the connection failed or the
// trips took over 50 ms.
double handoff_us(Pair& pair) {
  constexpr int kTrips = 64;
  constexpr double kBudgetUs = 50000;
  const auto limit = Clock::now() + std::chrono::microseconds(static_cast<long>(kBudgetUs));
  std::atomic<bool> ok{true};
  std::thread echo([&] {
    char m[8];
    for (int i = 0; i < kTrips && ok.load(); ++i) {
      if (!spin_recv(pair.b.get(), m, sizeof m, limit) ||
          ::send(pair.b.get(), m, sizeof m, MSG_NOSIGNAL) != sizeof m)
        ok.store(false);
    }
  });
  std::vector<double> trips;
  char m[8] = {};
  for (int i = 0; i < kTrips && ok.load(); ++i) {
    const auto t0 = Clock::now();
    if (::send(pair.a.get(), m, sizeof m, MSG_NOSIGNAL) != sizeof m ||
        !spin_recv(pair.a.get(), m, sizeof m, limit)) {
      ok.store(false);
      break;
    }
    trips.push_back(us_since(t0));
  }
  echo.join();
  if (!ok.load() || trips.size() < kTrips) return 0;
  std::nth_element(trips.begin(), trips.begin() + kTrips / 2, trips.end());
  return trips[kTrips / 2] / 2;
}

// Bytes per us of 4 MiB streamed from a to b: the best of 5 runs.
double stream_bw(Pair& pair) {
  constexpr std::size_t kWrite = 256 << 10, kTotal = 4 << 20;
  constexpr int kRuns = 5;
  const Deadline deadline = Deadline::after(std::chrono::milliseconds(200));
  std::vector<char> out(kWrite, 1), in(kWrite);
  double best = 0;
  for (int run = 0; run < kRuns; ++run) {
    std::atomic<bool> ok{true};
    const auto t0 = Clock::now();
    std::thread sink([&] {
      for (std::size_t got = 0; got < kTotal && ok.load(); got += kWrite)
        if (!net::recv_all(pair.b.get(), in.data(), kWrite, deadline).is_ok()) ok.store(false);
    });
    for (std::size_t sent = 0; sent < kTotal && ok.load(); sent += kWrite)
      if (!net::send_all(pair.a.get(), out.data(), kWrite, deadline).is_ok()) ok.store(false);
    sink.join();
    if (!ok.load()) return 0;
    best = std::max(best, double(kTotal) / us_since(t0));
  }
  return best;
}

}  // namespace

TcpFigures probe_tcp() {
  TcpFigures f;
  Pair pair = loopback_pair(Deadline::after(std::chrono::milliseconds(200)));
  if (!pair.a.valid() || !pair.b.valid()) return f;
  f.handoff_us = handoff_us(pair);
  f.stream_bw = stream_bw(pair);
  return f;
}

}  // namespace chorus::core
