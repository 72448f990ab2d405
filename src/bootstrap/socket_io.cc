// Socket helpers for the TCP store: bind/listen, connect with retry until a deadline,
// and deadline-bounded send/receive of whole buffers on non-blocking sockets.
#include "bootstrap/socket_io.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include "util/strings.h"

namespace chorus::bootstrap {
namespace {

struct AddrInfo {
  addrinfo* list = nullptr;
  ~AddrInfo() {
    if (list) freeaddrinfo(list);
  }
};

// Resolves host:port; returns the getaddrinfo error text or "".
std::string resolve(const std::string& host, int port, bool passive, AddrInfo& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const char* node = (host.empty() || host == "*") ? nullptr : host.c_str();
  std::string service = std::to_string(port);
  int rc = getaddrinfo(node, service.c_str(), &hints, &out.list);
  return rc == 0 ? "" : gai_strerror(rc);
}

bool retryable(int err) {
  return err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH ||
         err == ECONNRESET || err == ECONNABORTED || err == EAGAIN;
}

// Waits for `events` on fd until the deadline; 0 = ready, else an errno (ETIMEDOUT).
int wait_fd(int fd, short events, Deadline deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int ms = deadline.is_never() ? -1 : deadline.remaining_ms();
    int rc = ::poll(&p, 1, ms);
    if (rc > 0) return 0;
    if (rc == 0) return ETIMEDOUT;
    if (errno != EINTR) return errno;
  }
}

// One connection attempt to one address; 0 or an errno.
int try_connect(const addrinfo* ai, Deadline deadline, UniqueFd& out) {
  UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
  if (!fd.valid()) return errno;
  if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return errno;
    int err = wait_fd(fd.get(), POLLOUT, deadline);
    if (err != 0) return err;
    socklen_t len = sizeof(err);
    if (getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
    if (err != 0) return err;
  }
  int one = 1;
  setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  out = std::move(fd);
  return 0;
}

Status stream_error(const char* what, int err) {
  if (err == ETIMEDOUT) return timeout_error(str_printf("%s timed out", what));
  if (err == EPIPE || err == ECONNRESET || err == 0)
    return Status(ErrorCode::kPeerLost, str_printf("%s: connection closed by peer", what));
  return io_error(what, err);
}

}  // namespace

Result<UniqueFd> listen_tcp(const std::string& host, int port, int* bound_port) {
  if (port < 0 || port > 65535) return invalid_argument(str_printf("port %d out of range", port));
  AddrInfo ai;
  std::string err = resolve(host, port, true, ai);
  if (!err.empty())
    return Status(ErrorCode::kIo, str_printf("resolving '%s': %s", host.c_str(), err.c_str()));
  int last = 0;
  for (addrinfo* a = ai.list; a; a = a->ai_next) {
    UniqueFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) { last = errno; continue; }
    int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd.get(), 1024) != 0) {
      last = errno;
      continue;
    }
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    getsockname(fd.get(), reinterpret_cast<sockaddr*>(&ss), &len);
    *bound_port = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                           : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    return fd;
  }
  return io_error(str_printf("binding the store to %s:%d", host.c_str(), port), last);
}

Result<UniqueFd> connect_tcp(const std::string& host, int port, Deadline deadline, bool retry) {
  std::string where = str_printf("%s:%d", host.c_str(), port);
  std::string last_error = "no attempt made";
  int sleep_ms = 10;
  while (true) {
    AddrInfo ai;
    std::string err = resolve(host, port, false, ai);
    bool may_retry = true;
    if (!err.empty()) {
      last_error = "resolving host: " + err;
    } else {
      for (addrinfo* a = ai.list; a; a = a->ai_next) {
        UniqueFd fd;
        int e = try_connect(a, deadline, fd);
        if (e == 0) return fd;
        last_error = std::strerror(e);
        may_retry = retryable(e);
        if (!retry && e == ECONNREFUSED)
          return Status(ErrorCode::kPeerLost, str_printf("connecting to %s: %s (server gone?)",
                                                         where.c_str(), last_error.c_str()));
      }
    }
    if (!retry || !may_retry)
      return Status(ErrorCode::kIo, str_printf("connecting to %s: %s", where.c_str(), last_error.c_str()));
    if (deadline.expired())
      return timeout_error(str_printf("connecting to %s: no server reachable before the deadline "
                                      "(last error: %s)", where.c_str(), last_error.c_str()));
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(sleep_ms, deadline.remaining_ms(sleep_ms))));
    sleep_ms = std::min(sleep_ms * 2, 200);
  }
}

Status send_all(int fd, const std::uint8_t* data, std::size_t n, Deadline deadline) {
  while (n > 0) {
    ssize_t k = ::send(fd, data, n, MSG_NOSIGNAL);
    if (k > 0) {
      data += k;
      n -= static_cast<std::size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      int e = wait_fd(fd, POLLOUT, deadline);
      if (e != 0) return stream_error("send", e);
      continue;
    }
    return stream_error("send", errno);
  }
  return Status();
}

Status recv_all(int fd, std::uint8_t* data, std::size_t n, Deadline deadline) {
  while (n > 0) {
    ssize_t k = ::recv(fd, data, n, 0);
    if (k > 0) {
      data += k;
      n -= static_cast<std::size_t>(k);
      continue;
    }
    if (k == 0) return stream_error("receive", 0);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      int e = wait_fd(fd, POLLIN, deadline);
      if (e != 0) return stream_error("receive", e);
      continue;
    }
    return stream_error("receive", errno);
  }
  return Status();
}

std::string local_ip(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";
  char buf[INET6_ADDRSTRLEN] = {0};
  if (ss.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&ss)->sin_addr, buf, sizeof(buf));
  } else if (ss.ss_family == AF_INET6) {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(&ss);
    if (IN6_IS_ADDR_V4MAPPED(&a6->sin6_addr)) {
      inet_ntop(AF_INET, &a6->sin6_addr.s6_addr[12], buf, sizeof(buf));
    } else {
      inet_ntop(AF_INET6, &a6->sin6_addr, buf, sizeof(buf));
    }
  } else {
    return "";
  }
  return buf;
}

}  // namespace chorus::bootstrap
