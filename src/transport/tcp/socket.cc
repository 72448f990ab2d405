// Non-blocking TCP socket helpers (see socket.h).
#include "transport/tcp/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <algorithm>
#include <cstring>
#include <memory>
#include <thread>

#include "diag/log.h"
#include "util/strings.h"

namespace chorus::tcp {
namespace {

struct AddrInfoDeleter {
  void operator()(addrinfo* a) const { freeaddrinfo(a); }
};
using AddrInfoPtr = std::unique_ptr<addrinfo, AddrInfoDeleter>;

Result<AddrInfoPtr> resolve(const std::string& host, int port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  addrinfo* res = nullptr;
  std::string service = std::to_string(port);
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr)
    return Status(ErrorCode::kIo, str_printf("cannot resolve '%s': %s", host.c_str(),
                                             gai_strerror(rc)));
  return AddrInfoPtr(res);
}

bool retryable_connect_error(int err) {
  return err == ECONNREFUSED || err == ETIMEDOUT || err == EHOSTUNREACH || err == ENETUNREACH ||
         err == ECONNRESET || err == EAGAIN || err == ECONNABORTED;
}

// One non-blocking connect attempt; returns the socket or the errno that stopped it.
Result<UniqueFd> connect_once(const addrinfo* ai, std::size_t buffer_bytes, Deadline deadline,
                              int* err_out) {
  UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                       ai->ai_protocol));
  if (!fd.valid()) return io_error("socket", errno);
  tune_socket(fd.get(), buffer_bytes);
  *err_out = 0;
  if (::connect(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0) return fd;
  if (errno != EINPROGRESS) {
    *err_out = errno;
    return io_error("connect", errno);
  }
  pollfd p{fd.get(), POLLOUT, 0};
  int n = ::poll(&p, 1, deadline.remaining_ms(1000));
  if (n <= 0) {
    *err_out = n == 0 ? ETIMEDOUT : errno;
    return io_error("connect", *err_out);
  }
  int so_err = 0;
  socklen_t len = sizeof(so_err);
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_err, &len);
  if (so_err != 0) {
    *err_out = so_err;
    return io_error("connect", so_err);
  }
  return fd;
}

}  // namespace

Result<HostPort> parse_host_port(const std::string& address) {
  std::size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon + 1 >= address.size())
    return invalid_argument("address '" + address + "' is not host:port");
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  auto port = parse_int(std::string_view(address).substr(colon + 1));
  if (!port || *port <= 0 || *port > 65535)
    return invalid_argument("address '" + address + "' has no valid port");
  return HostPort{host, static_cast<int>(*port)};
}

std::string format_host_port(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return str_printf("[%s]:%d", host.c_str(), port);
  return str_printf("%s:%d", host.c_str(), port);
}

namespace {
struct IfAddrsDeleter {
  void operator()(ifaddrs* a) const { freeifaddrs(a); }
};
using IfAddrsPtr = std::unique_ptr<ifaddrs, IfAddrsDeleter>;

IfAddrsPtr get_ifaddrs() {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return nullptr;
  return IfAddrsPtr(list);
}
}  // namespace

std::vector<std::string> ipv4_interfaces() {
  std::vector<std::string> names;
  IfAddrsPtr list = get_ifaddrs();
  for (const ifaddrs* a = list.get(); a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET || a->ifa_name == nullptr)
      continue;
    if (std::find(names.begin(), names.end(), a->ifa_name) == names.end())
      names.emplace_back(a->ifa_name);
  }
  return names;
}

Result<std::string> interface_ipv4(const std::string& name) {
  IfAddrsPtr list = get_ifaddrs();
  if (!list) return io_error("getifaddrs", errno);
  for (const ifaddrs* a = list.get(); a != nullptr; a = a->ifa_next) {
    if (a->ifa_addr == nullptr || a->ifa_addr->sa_family != AF_INET || a->ifa_name == nullptr ||
        name != a->ifa_name)
      continue;
    char text[INET_ADDRSTRLEN] = {};
    const auto* sin = reinterpret_cast<const sockaddr_in*>(a->ifa_addr);
    if (::inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text)) == nullptr)
      return io_error("inet_ntop", errno);
    return std::string(text);
  }
  std::string present;
  for (const std::string& n : ipv4_interfaces()) present += (present.empty() ? "" : ", ") + n;
  return invalid_argument(str_printf("CHORUS_SOCKET_IFNAME: no interface '%s' with an IPv4 "
                                     "address; interfaces present: %s",
                                     name.c_str(), present.empty() ? "(none)" : present.c_str()));
}

Result<UniqueFd> listen_tcp(const std::string& host, std::size_t buffer_bytes) {
  CHORUS_ASSIGN_OR_RETURN(AddrInfoPtr ai, resolve(host, 0, true));
  UniqueFd fd(::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                       ai->ai_protocol));
  if (!fd.valid()) return io_error("socket", errno);
  int one = 1;
  ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  tune_socket(fd.get(), buffer_bytes);
  if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0)
    return io_error("bind " + host + ":0", errno);
  if (::listen(fd.get(), SOMAXCONN) != 0) return io_error("listen", errno);
  return fd;
}

Result<int> local_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    return io_error("getsockname", errno);
  if (ss.ss_family == AF_INET) return int{ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port)};
  if (ss.ss_family == AF_INET6) return int{ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)};
  return Status(ErrorCode::kIo, "getsockname: unknown address family");
}

Result<UniqueFd> connect_tcp(const HostPort& to, std::size_t buffer_bytes, Deadline deadline) {
  CHORUS_ASSIGN_OR_RETURN(AddrInfoPtr ai, resolve(to.host, to.port, false));
  std::string where = format_host_port(to.host, to.port);
  int last_err = 0;
  for (int attempt = 0;; ++attempt) {
    for (const addrinfo* a = ai.get(); a != nullptr; a = a->ai_next) {
      int err = 0;
      auto fd = connect_once(a, buffer_bytes, deadline, &err);
      if (fd.has_value()) return fd;
      if (!retryable_connect_error(err)) return fd.status().with_context("connecting to " + where);
      last_err = err;
    }
    if (deadline.expired()) break;
    if (attempt % 50 == 0)
      CHORUS_LOG(DEBUG, Net, "connect to %s: %s, retrying", where.c_str(), std::strerror(last_err));
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(10 + attempt * 5, 100)));
  }
  return timeout_error(str_printf("connecting to %s: deadline passed (last error: %s)",
                                  where.c_str(), std::strerror(last_err)));
}

Status set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) return io_error("fcntl", errno);
  return Status::ok();
}

void tune_socket(int fd, std::size_t buffer_bytes) {
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // fails on listeners: fine
  if (buffer_bytes == 0) return;
  int size = buffer_bytes > (1u << 30) ? (1 << 30) : static_cast<int>(buffer_bytes);
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) != 0 ||
      ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) != 0)
    CHORUS_LOG(INFO, Net, "cannot set socket buffers to %d bytes: %s", size, std::strerror(errno));
}

Status write_all(int fd, const void* data, std::size_t bytes, Deadline deadline) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      bytes -= static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return io_error("send", errno);
    if (deadline.expired()) return timeout_error("send: deadline passed");
    pollfd pfd{fd, POLLOUT, 0};
    ::poll(&pfd, 1, deadline.remaining_ms(100));
  }
  return Status::ok();
}

}  // namespace chorus::tcp
