// Non-blocking TCP socket helpers: listen on host:0, connect with retry until a deadline,
// socket tuning (TCP_NODELAY, buffer sizes) and "host:port" parsing.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "util/deadline.h"
#include "util/status.h"
#include "util/unique_fd.h"

namespace chorus::tcp {

struct HostPort {
  std::string host;
  int port = 0;
};

// Splits "host:port" (IPv6 as "[::1]:port") at the last colon. kInvalidArgument if malformed.
Result<HostPort> parse_host_port(const std::string& address);
// Formats host and port back into "host:port" ("[host]:port" when host contains ':').
std::string format_host_port(const std::string& host, int port);

// The IPv4 address (dotted quad) of network interface `name` (getifaddrs). kInvalidArgument
// naming CHORUS_SOCKET_IFNAME and listing the interfaces present when no interface of that
// name has an IPv4 address.
Result<std::string> interface_ipv4(const std::string& name);
// Names of the interfaces that have an IPv4 address, in getifaddrs order, without repeats.
std::vector<std::string> ipv4_interfaces();

// Creates a non-blocking listening socket bound to `host` port 0 (the kernel picks one).
// `buffer_bytes` (0 = kernel default) is applied before listen so accepted sockets inherit it.
Result<UniqueFd> listen_tcp(const std::string& host, std::size_t buffer_bytes);
// The port a bound socket listens on.
Result<int> local_port(int fd);

// Connects to host:port, retrying refused/unreachable attempts until `deadline`.
// Returns a connected, non-blocking, tuned socket; kTimeout when the deadline passes
// (message carries the last error), kIo on other failures.
Result<UniqueFd> connect_tcp(const HostPort& to, std::size_t buffer_bytes, Deadline deadline);

Status set_nonblocking(int fd);
// TCP_NODELAY, and SO_SNDBUF/SO_RCVBUF when buffer_bytes > 0. Failures are logged, not fatal.
void tune_socket(int fd, std::size_t buffer_bytes);
// Writes all bytes to a non-blocking socket, polling until `deadline`.
Status write_all(int fd, const void* data, std::size_t bytes, Deadline deadline);

}  // namespace chorus::tcp
