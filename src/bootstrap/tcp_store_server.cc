// TcpStoreServer: one background thread polls the listening socket and every client
// connection, decodes length-prefixed frames (docs/STORE.md), keeps the key-value map,
// and parks GET/WAIT requests until their keys appear. A client that sends garbage is
// dropped; the others keep being served.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <unordered_map>

#include "bootstrap/store_protocol.h"
#include "bootstrap/tcp_store.h"
#include "diag/log.h"
#include "net/socket.h"
#include "util/strings.h"

namespace chorus::bootstrap {
namespace {

using proto::Op;

class TcpStoreServerImpl final : public TcpStoreServer {
 public:
  TcpStoreServerImpl(UniqueFd listen_fd, UniqueFd wake_r, UniqueFd wake_w, int port)
      : listen_(std::move(listen_fd)), wake_r_(std::move(wake_r)), wake_w_(std::move(wake_w)),
        port_(port) {
    thread_ = std::thread([this] { loop(); });
  }
  ~TcpStoreServerImpl() override {
    stop_.store(true);
    char c = 1;
    while (::write(wake_w_.get(), &c, 1) < 0 && errno == EINTR) {
    }
    thread_.join();
    CHORUS_LOG(DEBUG, Boot, "store server on port %d stopped", port_);
  }
  int port() const override { return port_; }

 private:
  // A GET or WAIT parked until all its keys exist.
  struct Waiter {
    std::uint32_t id;
    Op op;
    std::vector<std::string> keys;
  };
  struct Conn {
    UniqueFd fd;
    Bytes in;
    Bytes out;
    std::size_t out_off = 0;
    std::vector<Waiter> waiters;
    bool dead = false;
  };

  void loop();
  void accept_all();
  void on_readable(Conn& c);
  void flush(Conn& c);
  void handle(Conn& c, proto::Request req);
  void reply(Conn& c, std::uint32_t id, ErrorCode code, const Bytes& body);
  void serve_waiter(Conn& c, const Waiter& w);
  void wake_waiters(const std::string& key);
  bool all_present(const std::vector<std::string>& keys) const;

  UniqueFd listen_;
  UniqueFd wake_r_;
  UniqueFd wake_w_;
  int port_;
  std::atomic<bool> stop_{false};
  std::unordered_map<std::string, Bytes> data_;
  std::vector<std::unique_ptr<Conn>> conns_;
  std::size_t parked_ = 0;  // waiters across all connections
  std::thread thread_;
};

void TcpStoreServerImpl::loop() {
  std::vector<pollfd> fds;
  while (!stop_.load()) {
    fds.clear();
    fds.push_back({listen_.get(), POLLIN, 0});
    fds.push_back({wake_r_.get(), POLLIN, 0});
    for (auto& c : conns_) {
      short ev = POLLIN;
      if (c->out_off < c->out.size()) ev |= POLLOUT;
      fds.push_back({c->fd.get(), ev, 0});
    }
    int rc = ::poll(fds.data(), fds.size(), -1);
    if (rc < 0) {
      if (errno == EINTR) continue;
      CHORUS_LOG(WARN, Boot, "store server poll failed: %s", std::strerror(errno));
      return;
    }
    if (stop_.load()) break;
    // New connections are appended after the polled ones, so indices stay valid.
    std::size_t polled = conns_.size();
    for (std::size_t i = 0; i < polled; ++i) {
      Conn& c = *conns_[i];
      short re = fds[i + 2].revents;
      if (re & POLLOUT) flush(c);
      if (!c.dead && (re & (POLLIN | POLLHUP | POLLERR))) on_readable(c);
    }
    if (fds[0].revents & POLLIN) accept_all();
    std::erase_if(conns_, [this](const std::unique_ptr<Conn>& c) {
      if (c->dead) parked_ -= c->waiters.size();
      return c->dead;
    });
  }
}

void TcpStoreServerImpl::accept_all() {
  while (true) {
    int fd = ::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        CHORUS_LOG(WARN, Boot, "store server accept failed: %s", std::strerror(errno));
      return;
    }
    net::tune_socket(fd, 0);
    auto c = std::make_unique<Conn>();
    c->fd.reset(fd);
    conns_.push_back(std::move(c));
  }
}

void TcpStoreServerImpl::on_readable(Conn& c) {
  std::uint8_t buf[64 * 1024];
  ssize_t k = ::recv(c.fd.get(), buf, sizeof(buf), 0);
  if (k < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return;
  if (k <= 0) {  // orderly close or reset: drop the connection and its parked requests
    c.dead = true;
    return;
  }
  c.in.insert(c.in.end(), buf, buf + k);
  std::size_t pos = 0;
  while (!c.dead && c.in.size() - pos >= proto::kHeaderSize) {
    auto h = proto::parse_header(c.in.data() + pos);
    if (!h) {
      CHORUS_LOG(WARN, Boot, "store server: dropping client: %s", h.status().message().c_str());
      c.dead = true;
      return;
    }
    if (c.in.size() - pos - proto::kHeaderSize < h->body_len) break;
    auto req = proto::parse_request(*h, c.in.data() + pos + proto::kHeaderSize);
    pos += proto::kHeaderSize + h->body_len;
    if (!req) {
      CHORUS_LOG(WARN, Boot, "store server: dropping client: %s", req.status().message().c_str());
      c.dead = true;
      return;
    }
    handle(c, std::move(req).value());
  }
  c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(pos));
}

void TcpStoreServerImpl::handle(Conn& c, proto::Request req) {
  const std::string& key = req.keys.empty() ? std::string() : req.keys[0];
  switch (req.op) {
    case Op::kSet:
      data_[key] = std::move(req.value);
      reply(c, req.id, ErrorCode::kOk, {});
      wake_waiters(key);
      return;
    case Op::kAdd: {
      std::int64_t current = 0;
      auto it = data_.find(key);
      if (it != data_.end()) {
        auto v = parse_int(std::string(it->second.begin(), it->second.end()));
        if (!v) {
          std::string msg = str_printf("store key '%s' does not hold a decimal counter", key.c_str());
          reply(c, req.id, ErrorCode::kInvalidArgument, Bytes(msg.begin(), msg.end()));
          return;
        }
        current = *v;
      }
      current += req.delta;
      std::string text = std::to_string(current);
      data_[key] = Bytes(text.begin(), text.end());
      Bytes body;
      proto::put_i64(body, current);
      reply(c, req.id, ErrorCode::kOk, body);
      wake_waiters(key);
      return;
    }
    case Op::kCheck:
      reply(c, req.id, ErrorCode::kOk, Bytes{static_cast<std::uint8_t>(data_.count(key) ? 1 : 0)});
      return;
    case Op::kGet:
    case Op::kWait: {
      Waiter w{req.id, req.op, std::move(req.keys)};
      if (all_present(w.keys)) {
        serve_waiter(c, w);
      } else {
        c.waiters.push_back(std::move(w));
        ++parked_;
      }
      return;
    }
  }
}

bool TcpStoreServerImpl::all_present(const std::vector<std::string>& keys) const {
  for (const auto& k : keys)
    if (!data_.count(k)) return false;
  return true;
}

void TcpStoreServerImpl::serve_waiter(Conn& c, const Waiter& w) {
  if (w.op == Op::kGet) {
    reply(c, w.id, ErrorCode::kOk, data_.at(w.keys[0]));
  } else {
    reply(c, w.id, ErrorCode::kOk, {});
  }
}

void TcpStoreServerImpl::wake_waiters(const std::string& key) {
  if (parked_ == 0) return;
  for (auto& c : conns_) {
    if (c->dead || c->waiters.empty()) continue;
    std::erase_if(c->waiters, [&](const Waiter& w) {
      bool mentions = false;
      for (const auto& k : w.keys) mentions = mentions || k == key;
      if (!mentions || !all_present(w.keys)) return false;
      serve_waiter(*c, w);
      --parked_;
      return true;
    });
  }
}

void TcpStoreServerImpl::reply(Conn& c, std::uint32_t id, ErrorCode code, const Bytes& body) {
  if (c.dead) return;
  if (c.out_off == c.out.size()) {
    c.out.clear();
    c.out_off = 0;
  }
  proto::put_header(c.out, static_cast<std::uint16_t>(code), id, static_cast<std::uint32_t>(body.size()));
  c.out.insert(c.out.end(), body.begin(), body.end());
  flush(c);
}

void TcpStoreServerImpl::flush(Conn& c) {
  while (c.out_off < c.out.size()) {
    ssize_t k = ::send(c.fd.get(), c.out.data() + c.out_off, c.out.size() - c.out_off,
                       MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      c.out_off += static_cast<std::size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    c.dead = true;  // peer gone
    return;
  }
  c.out.clear();
  c.out_off = 0;
}

}  // namespace

Result<std::unique_ptr<TcpStoreServer>> TcpStoreServer::start(const std::string& host, int port) {
  auto listener = net::listen_tcp(host, port);
  if (!listener) return listener.status().with_context("starting the store server");
  auto [fd, bound] = std::move(listener).value();
  int p[2];
  if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) return io_error("store server wake pipe", errno);
  CHORUS_LOG(INFO, Boot, "store server listening on %s:%d", host.empty() ? "*" : host.c_str(), bound);
  return std::unique_ptr<TcpStoreServer>(
      new TcpStoreServerImpl(std::move(fd), UniqueFd(p[0]), UniqueFd(p[1]), bound));
}

}  // namespace chorus::bootstrap
