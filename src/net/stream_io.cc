// Stream I/O: deadline-bounded send/receive of whole buffers on non-blocking sockets.
#include "net/stream_io.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>

#include "util/strings.h"

namespace chorus::net {
namespace {

// The Status for a stream failure with errno `err` (0 = orderly close by the peer).
Status stream_error(const char* what, int err) {
  if (err == ETIMEDOUT) return timeout_error(str_printf("%s: deadline passed", what));
  if (err == EPIPE || err == ECONNRESET || err == 0)
    return Status(ErrorCode::kPeerLost, str_printf("%s: connection closed by peer", what));
  return io_error(what, err);
}

}  // namespace

int wait_fd(int fd, short events, Deadline deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, deadline.is_never() ? -1 : deadline.remaining_ms());
    if (rc > 0) return 0;
    if (rc == 0) return ETIMEDOUT;
    if (errno != EINTR) return errno;
  }
}

Status send_all(int fd, const void* data, std::size_t n, Deadline deadline) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (n > 0) {
    ssize_t k = ::send(fd, p, n, MSG_NOSIGNAL);
    if (k > 0) {
      p += k;
      n -= static_cast<std::size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (int e = wait_fd(fd, POLLOUT, deadline); e != 0) return stream_error("send", e);
      continue;
    }
    return stream_error("send", errno);
  }
  return Status::ok();
}

Status recv_all(int fd, void* data, std::size_t n, Deadline deadline) {
  auto* p = static_cast<std::uint8_t*>(data);
  while (n > 0) {
    ssize_t k = ::recv(fd, p, n, 0);
    if (k > 0) {
      p += k;
      n -= static_cast<std::size_t>(k);
      continue;
    }
    if (k == 0) return stream_error("receive", 0);
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (int e = wait_fd(fd, POLLIN, deadline); e != 0) return stream_error("receive", e);
      continue;
    }
    return stream_error("receive", errno);
  }
  return Status::ok();
}

}  // namespace chorus::net
