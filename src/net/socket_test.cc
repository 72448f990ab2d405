// Sockets: listen on port 0, connect and move bytes; the options every connection gets;
// connecting to a closed port with retry (kTimeout at the deadline, naming the port) and
// without (kPeerLost at once); retrying until a listener appears.
#include "net/socket.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "net/stream_io.h"

namespace chorus::net {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

int int_option(int fd, int level, int name) {
  int v = -1;
  socklen_t len = sizeof(v);
  EXPECT_EQ(::getsockopt(fd, level, name, &v, &len), 0);
  return v;
}

bool is_nonblocking(int fd) { return (::fcntl(fd, F_GETFL, 0) & O_NONBLOCK) != 0; }

// Accepts one connection on a non-blocking listener within 2 s.
UniqueFd accept_one(int listener) {
  if (wait_fd(listener, POLLIN, Deadline::after(2s)) != 0) return UniqueFd();
  return UniqueFd(::accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
}

// A port on which nothing listens (bound, then closed).
int closed_port() {
  auto l = listen_tcp("127.0.0.1", 0);
  EXPECT_TRUE(l.has_value()) << l.status().to_string();
  return l.has_value() ? l->port : 1;
}

TEST(NetSocket, ListenOnPortZeroThenConnectAndExchangeBytes) {
  auto l = listen_tcp("127.0.0.1", 0);
  ASSERT_TRUE(l.has_value()) << l.status().to_string();
  EXPECT_GT(l->port, 0);
  EXPECT_TRUE(is_nonblocking(l->fd.get()));
  EXPECT_NE(int_option(l->fd.get(), SOL_SOCKET, SO_REUSEADDR), 0);

  auto c = connect_tcp({"127.0.0.1", l->port}, {}, Deadline::after(2s));
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  EXPECT_TRUE(is_nonblocking(c->get()));
  EXPECT_NE(int_option(c->get(), IPPROTO_TCP, TCP_NODELAY), 0);
  UniqueFd s = accept_one(l->fd.get());
  ASSERT_TRUE(s.valid());

  std::vector<std::uint8_t> out(3 << 20), in(out.size());  // larger than the socket buffers
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(i * 7 + 1);
  std::thread reader([&] { EXPECT_TRUE(recv_all(s.get(), in.data(), in.size(), Deadline::after(10s))); });
  EXPECT_TRUE(send_all(c->get(), out.data(), out.size(), Deadline::after(10s)));
  reader.join();
  EXPECT_EQ(in, out);

  const char reply[] = "ok";
  char got[sizeof(reply)] = {};
  ASSERT_TRUE(send_all(s.get(), reply, sizeof(reply), Deadline::after(2s)));
  ASSERT_TRUE(recv_all(c->get(), got, sizeof(got), Deadline::after(2s)));
  EXPECT_STREQ(got, reply);
}

TEST(NetSocket, ListenOnEveryInterface) {
  for (const char* host : {"", "*"}) {
    auto l = listen_tcp(host, 0);
    ASSERT_TRUE(l.has_value()) << "'" << host << "': " << l.status().to_string();
    auto c = connect_tcp({"127.0.0.1", l->port}, {}, Deadline::after(2s));
    EXPECT_TRUE(c.has_value()) << c.status().to_string();
  }
}

TEST(NetSocket, ListenRejectsBadPortsAndHosts) {
  EXPECT_EQ(listen_tcp("127.0.0.1", -1).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(listen_tcp("127.0.0.1", 65536).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(listen_tcp("256.1.1.1", 0).status().code(), ErrorCode::kIo);
  EXPECT_EQ(listen_tcp("198.51.100.1", 0).status().code(), ErrorCode::kIo);  // not our address
}

TEST(NetSocket, BufferBytesAreApplied) {
  auto l = listen_tcp("127.0.0.1", 0, 4096);
  ASSERT_TRUE(l.has_value()) << l.status().to_string();
  auto c = connect_tcp({"127.0.0.1", l->port}, {.buffer_bytes = 4096}, Deadline::after(2s));
  ASSERT_TRUE(c.has_value()) << c.status().to_string();
  // Linux doubles the value asked for; the default is far larger (tcp_rmem).
  EXPECT_LE(int_option(c->get(), SOL_SOCKET, SO_RCVBUF), 2 * 4096);
  EXPECT_LE(int_option(c->get(), SOL_SOCKET, SO_SNDBUF), 2 * 4096);
  UniqueFd s = accept_one(l->fd.get());
  ASSERT_TRUE(s.valid());
  EXPECT_LE(int_option(s.get(), SOL_SOCKET, SO_RCVBUF), 2 * 4096);  // inherited
}

TEST(NetSocket, ClosedPortWithRetryTimesOutNamingIt) {
  const int port = closed_port();
  const auto t0 = Clock::now();
  auto c = connect_tcp({"127.0.0.1", port}, {.retry = true}, Deadline::after(200ms));
  const auto took = Clock::now() - t0;
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.status().code(), ErrorCode::kTimeout) << c.status().to_string();
  const std::string m = c.status().message();
  EXPECT_NE(m.find("127.0.0.1:" + std::to_string(port)), std::string::npos) << m;
  EXPECT_NE(m.find("deadline passed"), std::string::npos) << m;
  EXPECT_NE(m.find("last error: Connection refused"), std::string::npos) << m;
  EXPECT_GE(took, 190ms);
  EXPECT_LT(took, 2s);
}

TEST(NetSocket, ClosedPortWithoutRetryFailsAtOnce) {
  const int port = closed_port();
  const auto t0 = Clock::now();
  auto c = connect_tcp({"127.0.0.1", port}, {.retry = false}, Deadline::after(5s));
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.status().code(), ErrorCode::kPeerLost) << c.status().to_string();
  EXPECT_NE(c.status().message().find(std::to_string(port)), std::string::npos);
  EXPECT_LT(Clock::now() - t0, 1s);
}

TEST(NetSocket, UnresolvableHostWithoutRetryIsIo) {
  auto c = connect_tcp({"no-such-host.invalid", 80}, {.retry = false}, Deadline::after(5s));
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.status().code(), ErrorCode::kIo) << c.status().to_string();
  EXPECT_NE(c.status().message().find("no-such-host.invalid"), std::string::npos);
}

TEST(NetSocket, RetriesUntilTheListenerAppears) {
  const int port = closed_port();
  Result<Listener> late = invalid_argument("not started");
  std::thread t([&] {
    std::this_thread::sleep_for(150ms);
    late = listen_tcp("127.0.0.1", port);  // SO_REUSEADDR: rebinding works
  });
  auto c = connect_tcp({"127.0.0.1", port}, {}, Deadline::after(5s));
  t.join();
  ASSERT_TRUE(late.has_value()) << "port " << port << " was taken meanwhile";
  EXPECT_TRUE(c.has_value()) << c.status().to_string();
}

TEST(NetSocket, SetNonblocking) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  ASSERT_TRUE(fd.valid());
  EXPECT_FALSE(is_nonblocking(fd.get()));
  EXPECT_TRUE(set_nonblocking(fd.get()));
  EXPECT_TRUE(is_nonblocking(fd.get()));
  EXPECT_EQ(set_nonblocking(-1).code(), ErrorCode::kIo);
}

}  // namespace
}  // namespace chorus::net
