// Stream I/O on non-blocking sockets: send or receive exactly n bytes, or wait for a
// socket to become ready, each bounded by a deadline.
#pragma once
#include <cstddef>

#include "util/deadline.h"
#include "util/status.h"

namespace chorus::net {

// Waits until `fd` reports one of `events` (POLLIN, POLLOUT; errors and hang-up count as
// ready) or `deadline` passes. Returns 0 when ready, ETIMEDOUT when the deadline passed,
// else the errno of poll. Retries on EINTR.
int wait_fd(int fd, short events, Deadline deadline);

// Sends exactly `n` bytes of `data` on a non-blocking socket (MSG_NOSIGNAL: no SIGPIPE),
// waiting for room until `deadline`. kTimeout "send: deadline passed" when it passes,
// kPeerLost when the peer closed or reset the connection, kIo for other errors.
Status send_all(int fd, const void* data, std::size_t n, Deadline deadline);

// Receives exactly `n` bytes into `data` from a non-blocking socket before `deadline`.
// kTimeout "receive: deadline passed" when it passes, kPeerLost when the peer closed
// (EOF) or reset the connection, kIo for other errors.
Status recv_all(int fd, void* data, std::size_t n, Deadline deadline);

}  // namespace chorus::net
