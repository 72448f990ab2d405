// Sockets: listen, connect (with or without retry until a deadline) and socket tuning.
#include "net/socket.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <thread>

#include "diag/log.h"
#include "net/stream_io.h"
#include "util/strings.h"

namespace chorus::net {
namespace {

struct AddrInfoDeleter {
  void operator()(addrinfo* a) const { freeaddrinfo(a); }
};
using AddrInfoPtr = std::unique_ptr<addrinfo, AddrInfoDeleter>;

// Resolves host:port into *out (host "" or "*" = any address); returns the
// getaddrinfo error text, or "" on success.
std::string resolve(const std::string& host, int port, bool passive, AddrInfoPtr* out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  const char* node = (host.empty() || host == "*") ? nullptr : host.c_str();
  addrinfo* list = nullptr;
  int rc = ::getaddrinfo(node, std::to_string(port).c_str(), &hints, &list);
  if (rc != 0 || list == nullptr) return rc != 0 ? gai_strerror(rc) : "no address";
  out->reset(list);
  return "";
}

// Errors after which another attempt may succeed (the listener is not up yet).
bool retryable(int err) {
  return err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH ||
         err == ECONNRESET || err == ECONNABORTED || err == EAGAIN;
}

UniqueFd open_socket(const addrinfo* ai) {
  return UniqueFd(::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                           ai->ai_protocol));
}

// One connection attempt to one address, waiting for it until `deadline`: 0 (and the
// socket in *out) or the errno that stopped it.
int connect_once(const addrinfo* ai, std::size_t buffer_bytes, Deadline deadline, UniqueFd* out) {
  UniqueFd fd = open_socket(ai);
  if (!fd.valid()) return errno;
  tune_socket(fd.get(), buffer_bytes);
  if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0) {
    if (errno != EINPROGRESS) return errno;
    if (int err = wait_fd(fd.get(), POLLOUT, deadline); err != 0) return err;
    int err = 0;
    socklen_t len = sizeof(err);
    if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) return errno;
    if (err != 0) return err;
  }
  *out = std::move(fd);
  return 0;
}

}  // namespace

Result<Listener> listen_tcp(const std::string& host, int port, std::size_t buffer_bytes) {
  if (port < 0 || port > 65535) return invalid_argument(str_printf("port %d out of range", port));
  AddrInfoPtr ai;
  if (std::string err = resolve(host, port, true, &ai); !err.empty())
    return Status(ErrorCode::kIo, str_printf("resolving '%s': %s", host.c_str(), err.c_str()));
  int last = 0;
  for (const addrinfo* a = ai.get(); a != nullptr; a = a->ai_next) {
    UniqueFd fd = open_socket(a);
    if (!fd.valid()) {
      last = errno;
      continue;
    }
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    tune_socket(fd.get(), buffer_bytes);
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd.get(), SOMAXCONN) != 0) {
      last = errno;
      continue;
    }
    CHORUS_ASSIGN_OR_RETURN(int bound, local_port(fd.get()));
    return Listener{std::move(fd), bound};
  }
  return io_error("binding to " + format_host_port(host.empty() ? "*" : host, port), last);
}

Result<UniqueFd> connect_tcp(const HostPort& to, const ConnectOptions& opts, Deadline deadline) {
  const std::string where = format_host_port(to.host, to.port);
  auto failed = [&](ErrorCode code, const std::string& why) {
    return Status(code, str_printf("connecting to %s: %s", where.c_str(), why.c_str()));
  };
  std::string last_error = "no attempt made";
  int sleep_ms = 10;
  for (int attempt = 0;; ++attempt) {
    AddrInfoPtr ai;
    if (std::string err = resolve(to.host, to.port, false, &ai); !err.empty()) {
      last_error = "resolving '" + to.host + "': " + err;
      if (!opts.retry) return failed(ErrorCode::kIo, last_error);
    }
    for (const addrinfo* a = ai.get(); a != nullptr; a = a->ai_next) {
      UniqueFd fd;
      const int e = connect_once(a, opts.buffer_bytes, deadline, &fd);
      if (e == 0) return fd;
      last_error = std::strerror(e);
      if (!retryable(e)) return failed(ErrorCode::kIo, last_error);
      if (!opts.retry && e == ECONNREFUSED)
        return failed(ErrorCode::kPeerLost, last_error + " (nobody listening: peer gone?)");
    }
    if (!opts.retry) return failed(ErrorCode::kIo, last_error);
    if (deadline.expired())
      return failed(ErrorCode::kTimeout, "deadline passed (last error: " + last_error + ")");
    if (attempt % 50 == 0)
      CHORUS_LOG(DEBUG, Net, "connect to %s: %s, retrying", where.c_str(), last_error.c_str());
    std::this_thread::sleep_for(std::chrono::milliseconds(deadline.remaining_ms(sleep_ms)));
    sleep_ms = std::min(sleep_ms * 2, 100);
  }
}

Status set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return io_error("fcntl", errno);
  return Status::ok();
}

void tune_socket(int fd, std::size_t buffer_bytes) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // harmless on a listener
  if (buffer_bytes == 0) return;
  int size = buffer_bytes > (1u << 30) ? (1 << 30) : static_cast<int>(buffer_bytes);
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) != 0)
    CHORUS_LOG(INFO, Net, "cannot set socket buffers to %d bytes: %s", size, std::strerror(errno));
}

}  // namespace chorus::net
