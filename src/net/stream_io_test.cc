// Stream I/O: whole buffers in both directions; a closed peer is kPeerLost for send and
// receive; a peer that neither sends nor reads makes the call time out at its deadline.
#include "net/stream_io.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <vector>

#include "util/unique_fd.h"

namespace chorus::net {
namespace {

using namespace std::chrono_literals;

// A connected pair of non-blocking stream sockets.
struct Pair {
  UniqueFd a, b;
  Pair() {
    int fds[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds), 0);
    a.reset(fds[0]);
    b.reset(fds[1]);
  }
};

TEST(NetStreamIo, SendAndReceiveWholeBuffers) {
  Pair p;
  const std::uint8_t out[] = {1, 2, 3, 4, 5};
  std::uint8_t in[sizeof(out)] = {};
  ASSERT_TRUE(send_all(p.a.get(), out, sizeof(out), Deadline::after(1s)));
  ASSERT_TRUE(recv_all(p.b.get(), in, sizeof(in), Deadline::after(1s)));
  EXPECT_EQ(std::vector<std::uint8_t>(in, in + sizeof(in)), std::vector<std::uint8_t>(out, out + sizeof(out)));
  EXPECT_TRUE(send_all(p.a.get(), nullptr, 0, Deadline::after(1s)));  // nothing to do
}

TEST(NetStreamIo, ReceiveFromAClosedPeerIsPeerLost) {
  Pair p;
  const std::uint8_t two[] = {7, 8};
  ASSERT_TRUE(send_all(p.a.get(), two, sizeof(two), Deadline::after(1s)));
  p.a.reset();
  std::uint8_t in[4];
  Status st = recv_all(p.b.get(), in, sizeof(in), Deadline::after(1s));  // 2 bytes, then EOF
  EXPECT_EQ(st.code(), ErrorCode::kPeerLost) << st.to_string();
  EXPECT_NE(st.message().find("receive: connection closed by peer"), std::string::npos) << st.message();
}

TEST(NetStreamIo, SendToAClosedPeerIsPeerLost) {
  Pair p;
  p.b.reset();
  const std::uint8_t byte = 1;
  Status st = send_all(p.a.get(), &byte, 1, Deadline::after(1s));  // EPIPE, no SIGPIPE
  EXPECT_EQ(st.code(), ErrorCode::kPeerLost) << st.to_string();
}

TEST(NetStreamIo, ReceiveTimesOutAtTheDeadline) {
  Pair p;
  std::uint8_t in[1];
  const auto t0 = std::chrono::steady_clock::now();
  Status st = recv_all(p.b.get(), in, sizeof(in), Deadline::after(100ms));
  EXPECT_EQ(st.code(), ErrorCode::kTimeout) << st.to_string();
  EXPECT_EQ(st.message(), "receive: deadline passed");
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 90ms);
}

TEST(NetStreamIo, SendTimesOutWhenThePeerDoesNotRead) {
  Pair p;
  std::vector<std::uint8_t> big(16 << 20);  // far more than a socket buffer holds
  Status st = send_all(p.a.get(), big.data(), big.size(), Deadline::after(100ms));
  EXPECT_EQ(st.code(), ErrorCode::kTimeout) << st.to_string();
  EXPECT_EQ(st.message(), "send: deadline passed");
}

TEST(NetStreamIo, WaitFdReportsReadinessOrTimeout) {
  Pair p;
  EXPECT_EQ(wait_fd(p.b.get(), POLLIN, Deadline::after(20ms)), ETIMEDOUT);
  EXPECT_EQ(wait_fd(p.a.get(), POLLOUT, Deadline::after(20ms)), 0);
  const std::uint8_t byte = 1;
  ASSERT_TRUE(send_all(p.a.get(), &byte, 1, Deadline::after(1s)));
  EXPECT_EQ(wait_fd(p.b.get(), POLLIN, Deadline::after(1s)), 0);
}

}  // namespace
}  // namespace chorus::net
