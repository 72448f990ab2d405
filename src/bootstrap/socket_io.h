// Small blocking-with-deadline socket helpers for the TCP store: listen, connect with
// retry, send/receive all bytes, and the local address of a connection.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "util/deadline.h"
#include "util/status.h"
#include "util/unique_fd.h"

namespace chorus::bootstrap {

// A non-blocking listening socket on host:port (host "" or "*" = every interface; port 0 =
// any free port) with SO_REUSEADDR. `bound_port` receives the actual port. kIo on failure.
Result<UniqueFd> listen_tcp(const std::string& host, int port, int* bound_port);

// A connected non-blocking socket with TCP_NODELAY. With `retry`, refused or unreachable
// attempts (the server may start later) are retried until `deadline` (then kTimeout
// naming the last error); without it the first failure is returned (kPeerLost for a
// refused connection, kIo otherwise).
Result<UniqueFd> connect_tcp(const std::string& host, int port, Deadline deadline, bool retry);

// Sends / receives exactly `n` bytes on a non-blocking socket before `deadline`.
// kTimeout when the deadline passes, kPeerLost when the peer closed or reset the
// connection, kIo for other errors.
Status send_all(int fd, const std::uint8_t* data, std::size_t n, Deadline deadline);
Status recv_all(int fd, std::uint8_t* data, std::size_t n, Deadline deadline);

// The numeric local IP of a connected socket ("" on failure).
std::string local_ip(int fd);

}  // namespace chorus::bootstrap
