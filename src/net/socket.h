// Sockets: open a listening TCP socket, connect to one (once, or retrying until a
// deadline), and the options every connection gets (non-blocking, TCP_NODELAY, buffers).
#pragma once
#include <cstddef>
#include <string>

#include "net/address.h"
#include "util/deadline.h"
#include "util/status.h"
#include "util/unique_fd.h"

namespace chorus::net {

struct Listener {
  UniqueFd fd;
  int port = 0;  // the port actually bound (the kernel's choice when 0 was asked for)
};

// A non-blocking, close-on-exec listening socket on host:port with SO_REUSEADDR (host ""
// or "*" = every interface; port 0 = any free port). `buffer_bytes` > 0 sets SO_SNDBUF and
// SO_RCVBUF before listen, so accepted sockets inherit them (0 = kernel default).
// kInvalidArgument for a port outside [0, 65535]; kIo when the host does not resolve or no
// address of it can be bound.
Result<Listener> listen_tcp(const std::string& host, int port, std::size_t buffer_bytes = 0);

struct ConnectOptions {
  std::size_t buffer_bytes = 0;  // SO_SNDBUF/SO_RCVBUF set before connecting; 0 = default
  // Retry refused, unreachable or unresolvable attempts (the listener may start later)
  // until the deadline. Without it the first failure is returned.
  bool retry = true;
};

// A connected, non-blocking, close-on-exec socket to `to` with TCP_NODELAY and the
// requested buffers. Errors: with retry, kTimeout "connecting to host:port: deadline
// passed (last error: ...)" once the deadline passes; without retry, kPeerLost when the
// connection is refused (nobody listens there any more); kIo for a failure that retrying
// cannot fix (or, without retry, any other failure), naming host:port and the cause.
Result<UniqueFd> connect_tcp(const HostPort& to, const ConnectOptions& opts, Deadline deadline);

// Sets O_NONBLOCK on fd. kIo on failure.
Status set_nonblocking(int fd);

// TCP_NODELAY, and SO_SNDBUF/SO_RCVBUF when buffer_bytes > 0 (capped at 1 GiB). Failures
// are logged (NET subsystem), not returned: the socket still works with kernel defaults.
void tune_socket(int fd, std::size_t buffer_bytes);

}  // namespace chorus::net
