// Mesh set-up: listen on host:0, exchange addresses, connect to lower ranks (sending a
// hello), accept higher ranks (validating their hello), all bounded by connect_deadline.
#include "transport/tcp/mesh.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "diag/log.h"
#include "net/address.h"
#include "net/socket.h"
#include "net/stream_io.h"
#include "transport/tcp/frame.h"
#include "transport/tcp/handshake.h"
#include "util/strings.h"

namespace chorus::tcp {
namespace {

// An accepted connection whose hello has not fully arrived yet.
struct PendingConn {
  UniqueFd fd;
  std::uint8_t buf[kFrameHeaderBytes];
  std::size_t got = 0;
};

std::string rank_list(const std::vector<int>& ranks) {
  std::string out;
  for (int r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

Status send_hello(int fd, const TcpOptions& opts, Deadline deadline) {
  FrameHeader h;
  h.kind = FrameKind::kHello;
  h.job_token = opts.job_token;
  h.arg = static_cast<std::uint64_t>(opts.rank);
  h.tag.seq = static_cast<std::uint64_t>(opts.size);
  std::uint8_t buf[kFrameHeaderBytes];
  encode_frame(h, buf);
  return net::send_all(fd, buf, sizeof(buf), deadline);
}

// Validates a complete hello; returns the sender's rank or the reason to drop it.
Result<int> check_hello(const std::uint8_t* buf, const TcpOptions& opts,
                        const std::vector<UniqueFd>& fds) {
  CHORUS_ASSIGN_OR_RETURN(int peer, check_hello_bytes(buf, opts.job_token, opts.rank, opts.size));
  if (fds[peer].valid()) return Status(ErrorCode::kIo, str_printf("duplicate hello from rank %d", peer));
  return peer;
}

// Reads what is available of a pending hello. Returns false when the connection is to be
// dropped; sets *peer >= 0 when a valid hello completed.
bool read_hello(PendingConn& c, const TcpOptions& opts, const std::vector<UniqueFd>& fds, int* peer) {
  *peer = -1;
  while (c.got < kFrameHeaderBytes) {
    ssize_t n = ::recv(c.fd.get(), c.buf + c.got, kFrameHeaderBytes - c.got, 0);
    if (n > 0) {
      c.got += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    CHORUS_LOG(WARN, Net, "rank %d: dropping a connection that closed before its hello", opts.rank);
    return false;
  }
  auto r = check_hello(c.buf, opts, fds);
  if (!r.has_value()) {
    CHORUS_LOG(WARN, Net, "rank %d: dropping an incoming connection with a bad hello: %s",
               opts.rank, r.status().message().c_str());
    return false;
  }
  *peer = *r;
  return true;
}

// Accepts until every higher rank has said hello or the deadline passes.
Status accept_higher(int listener, const TcpOptions& opts, std::vector<UniqueFd>& fds) {
  std::vector<PendingConn> pending;
  std::vector<pollfd> pfds;
  auto missing = [&] {
    int n = 0;
    for (int r = opts.rank + 1; r < opts.size; ++r) n += fds[r].valid() ? 0 : 1;
    return n;
  };
  while (missing() > 0) {
    if (opts.connect_deadline.expired()) return timeout_error("accept: deadline passed");
    pfds.assign(1, pollfd{listener, POLLIN, 0});
    for (auto& c : pending) pfds.push_back(pollfd{c.fd.get(), POLLIN, 0});
    int n = ::poll(pfds.data(), pfds.size(), opts.connect_deadline.remaining_ms(100));
    if (n < 0 && errno != EINTR) return io_error("poll", errno);
    for (std::size_t i = pending.size(); i-- > 0;) {
      if (pfds[i + 1].revents == 0) continue;
      int peer = -1;
      bool keep = read_hello(pending[i], opts, fds, &peer);
      if (peer >= 0) {
        net::tune_socket(pending[i].fd.get(), opts.socket_buffer_bytes);
        fds[peer] = std::move(pending[i].fd);
        CHORUS_LOG(DEBUG, Net, "rank %d: accepted rank %d", opts.rank, peer);
      }
      if (!keep || peer >= 0) pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    }
    if (pfds[0].revents & POLLIN) {
      for (;;) {
        int fd = ::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) break;
        pending.push_back(PendingConn{UniqueFd(fd), {}, 0});
      }
    }
  }
  return Status::ok();
}

}  // namespace

Result<Mesh> build_mesh(const TcpOptions& opts, const AddressExchange& exchange) {
  if (opts.size < 1) return invalid_argument(str_printf("size must be >= 1, got %d", opts.size));
  if (opts.rank < 0 || opts.rank >= opts.size)
    return invalid_argument(str_printf("rank must be in [0, %d), got %d", opts.size, opts.rank));
  Mesh mesh;
  mesh.fds.resize(static_cast<std::size_t>(opts.size));
  if (opts.size == 1) {
    mesh.addresses.assign(1, "self");
    return mesh;
  }
  // Bind address: the interface's IPv4 address when one is named, else listen_host.
  std::string bind_host = opts.listen_host;
  if (!opts.interface_name.empty()) {
    CHORUS_ASSIGN_OR_RETURN(bind_host, net::interface_ipv4(opts.interface_name));
  }
  const std::string advertised =
      opts.interface_name.empty() && !opts.advertise_host.empty() ? opts.advertise_host : bind_host;
  CHORUS_ASSIGN_OR_RETURN(net::Listener listener,
                          net::listen_tcp(bind_host, 0, opts.socket_buffer_bytes));
  std::string mine = net::format_host_port(advertised, listener.port);
  // Before the exchange: the listener is open from here until the mesh is formed.
  CHORUS_LOG(DEBUG, Net, "rank %d listening on %s (bound to %s)", opts.rank, mine.c_str(),
             bind_host.c_str());
  CHORUS_ASSIGN_OR_RETURN(mesh.addresses, exchange(mine));
  if (mesh.addresses.size() != static_cast<std::size_t>(opts.size))
    return invalid_argument(str_printf("address exchange returned %zu addresses for %d ranks",
                                       mesh.addresses.size(), opts.size));

  std::vector<int> not_connected;
  for (int peer = 0; peer < opts.rank; ++peer) {
    CHORUS_ASSIGN_OR_RETURN(net::HostPort hp, net::parse_host_port(mesh.addresses[peer]));
    auto fd = net::connect_tcp(hp, {.buffer_bytes = opts.socket_buffer_bytes, .retry = true},
                               opts.connect_deadline);
    Status st = fd.has_value() ? send_hello(fd->get(), opts, opts.connect_deadline) : fd.status();
    if (st.code() == ErrorCode::kTimeout) {
      not_connected.push_back(peer);
      continue;
    }
    if (!st.is_ok()) return st.with_context(str_printf("rank %d connecting to rank %d", opts.rank, peer)).with_peer(peer);
    mesh.fds[peer] = std::move(*fd);
  }
  Status st = accept_higher(listener.fd.get(), opts, mesh.fds);
  if (!st.is_ok() && st.code() != ErrorCode::kTimeout) return st;
  for (int peer = opts.rank + 1; peer < opts.size; ++peer)
    if (!mesh.fds[peer].valid()) not_connected.push_back(peer);
  if (!not_connected.empty())
    return Status(ErrorCode::kTimeout,
                  str_printf("rank %d: TCP mesh not formed by the connect deadline; ranks not "
                             "connected: %s",
                             opts.rank, rank_list(not_connected).c_str()),
                  not_connected.front());
  return mesh;
}

}  // namespace chorus::tcp
