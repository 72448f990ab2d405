// Tests of the TCP store server and client: semantics, blocking GET, timeouts that leave
// the client usable, concurrency, garbage clients and a vanished server.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "bootstrap/file_store.h"
#include "bootstrap/store_protocol.h"
#include "bootstrap/tcp_store.h"
#include "diag/log.h"

namespace chorus::bootstrap {
namespace {

using namespace std::chrono_literals;

Bytes b(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string s(const Bytes& v) { return std::string(v.begin(), v.end()); }

// Silences the expected "dropping client" warnings for one test.
struct QuietLog {
  int saved = diag::g_log_level.exchange(0);
  ~QuietLog() { diag::g_log_level.store(saved); }
};

class TcpStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = TcpStoreServer::start("127.0.0.1", 0);
    ASSERT_TRUE(server) << server.status().to_string();
    server_ = std::move(server).value();
    ASSERT_GT(server_->port(), 0);
  }
  std::shared_ptr<Store> client() {
    auto c = connect_tcp_store("127.0.0.1", server_->port(), Deadline::after(5s));
    EXPECT_TRUE(c) << c.status().to_string();
    return c ? c.value() : nullptr;
  }
  // A raw socket to the server.
  int raw_connect() {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(server_->port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    return fd;
  }
  std::unique_ptr<TcpStoreServer> server_;
};

TEST_F(TcpStoreTest, SetGetAddCheckWait) {
  auto st = client();
  ASSERT_TRUE(st->set("a", b("hello")).is_ok());
  auto v = st->get("a", Deadline::after(2s));
  ASSERT_TRUE(v) << v.status().to_string();
  EXPECT_EQ(s(*v), "hello");
  ASSERT_TRUE(st->set("a", b("")).is_ok());  // overwrite with an empty value
  EXPECT_EQ(s(st->get("a", Deadline::after(2s)).value()), "");
  EXPECT_EQ(st->add("n", 5).value(), 5);
  EXPECT_EQ(st->add("n", -7).value(), -2);
  EXPECT_EQ(s(st->get("n", Deadline::after(2s)).value()), "-2");
  EXPECT_TRUE(st->check("a").value());
  EXPECT_FALSE(st->check("zzz").value());
  EXPECT_TRUE(st->wait({"a", "n"}, Deadline::after(2s)).is_ok());
  EXPECT_TRUE(st->wait({}, Deadline::after(2s)).is_ok());
  Bytes big(3 << 20);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 7);
  ASSERT_TRUE(st->set("big", big).is_ok());
  EXPECT_EQ(st->get("big", Deadline::after(5s)).value(), big);
}

TEST_F(TcpStoreTest, AddOnNonCounterIsInvalidArgument) {
  auto st = client();
  ASSERT_TRUE(st->set("text", b("abc")).is_ok());
  auto r = st->add("text", 1);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("text"), std::string::npos);
  EXPECT_EQ(st->add("ok", 1).value(), 1);  // connection still fine
}

TEST_F(TcpStoreTest, GetWaitsForLaterSetFromAnotherThread) {
  auto reader = client();
  auto writer = client();
  std::thread t([&] {
    std::this_thread::sleep_for(50ms);
    EXPECT_TRUE(writer->set("late", b("v")).is_ok());
    std::this_thread::sleep_for(20ms);
    EXPECT_TRUE(writer->add("late2", 3).has_value());
  });
  auto v = reader->get("late", Deadline::after(5s));
  EXPECT_TRUE(reader->wait({"late", "late2"}, Deadline::after(5s)).is_ok());
  t.join();
  ASSERT_TRUE(v) << v.status().to_string();
  EXPECT_EQ(s(*v), "v");
}

TEST_F(TcpStoreTest, ManyBlockedGettersAllWake) {
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto st = client();
      auto v = st->get("go", Deadline::after(5s));
      if (v && s(*v) == "now") ++ok;
    });
  }
  std::this_thread::sleep_for(50ms);
  ASSERT_TRUE(client()->set("go", b("now")).is_ok());
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 8);
}

TEST_F(TcpStoreTest, GetTimeoutNamesKeyAndClientStaysUsable) {
  auto st = client();
  auto start = std::chrono::steady_clock::now();
  auto v = st->get("missing/key", Deadline::after(100ms));
  auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(v);
  EXPECT_EQ(v.status().code(), ErrorCode::kTimeout);
  EXPECT_NE(v.status().message().find("missing/key"), std::string::npos) << v.status().message();
  EXPECT_LT(took, 2s);
  // The abandoned GET must not be answered into a later request.
  ASSERT_TRUE(st->set("missing/key", b("x")).is_ok());
  ASSERT_TRUE(st->set("other", b("y")).is_ok());
  EXPECT_EQ(s(st->get("other", Deadline::after(2s)).value()), "y");
  EXPECT_EQ(s(st->get("missing/key", Deadline::after(2s)).value()), "x");
  EXPECT_EQ(st->add("c", 2).value(), 2);
}

TEST_F(TcpStoreTest, WaitTimeoutNamesFirstMissingKey) {
  auto st = client();
  ASSERT_TRUE(st->set("k0", b("")).is_ok());
  Status w = st->wait({"k0", "k1", "k2"}, Deadline::after(100ms));
  EXPECT_EQ(w.code(), ErrorCode::kTimeout);
  EXPECT_NE(w.message().find("'k1'"), std::string::npos) << w.message();
  EXPECT_TRUE(st->check("k0").value());
}

TEST_F(TcpStoreTest, ConcurrentAddsFromManyClientsAndThreadsAreExact) {
  constexpr int kClients = 6, kThreadsPerClient = 2, kAdds = 150;
  std::vector<std::shared_ptr<Store>> clients;
  for (int i = 0; i < kClients; ++i) clients.push_back(client());
  std::vector<std::thread> threads;
  std::mutex mu;
  std::vector<std::int64_t> seen;
  for (int i = 0; i < kClients * kThreadsPerClient; ++i) {
    threads.emplace_back([&, i] {
      std::vector<std::int64_t> mine;
      for (int k = 0; k < kAdds; ++k) {
        auto r = clients[i % kClients]->add("counter", 1);
        if (r) mine.push_back(*r);
      }
      std::lock_guard<std::mutex> lock(mu);
      seen.insert(seen.end(), mine.begin(), mine.end());
    });
  }
  for (auto& t : threads) t.join();
  const std::int64_t total = kClients * kThreadsPerClient * kAdds;
  EXPECT_EQ(clients[0]->add("counter", 0).value(), total);
  std::sort(seen.begin(), seen.end());
  ASSERT_EQ(static_cast<std::int64_t>(seen.size()), total);
  for (std::int64_t i = 0; i < total; ++i) ASSERT_EQ(seen[i], i + 1);
}

// Sends `bytes` on a raw connection and expects the server to close it.
void expect_dropped(int fd, const Bytes& bytes) {
  ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL), static_cast<ssize_t>(bytes.size()));
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 2000), 1) << "server did not drop the garbage client";
  char c;
  EXPECT_LE(::recv(fd, &c, 1, 0), 0);
  ::close(fd);
}

TEST_F(TcpStoreTest, GarbageClientsAreDroppedOthersKeepWorking) {
  QuietLog quiet;
  auto good = client();
  ASSERT_TRUE(good->set("x", b("1")).is_ok());
  int idle = raw_connect();  // half a header, then silence: must not stall anyone
  ASSERT_EQ(::send(idle, "CHS", 3, MSG_NOSIGNAL), 3);
  expect_dropped(raw_connect(), b("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
  Bytes huge;  // valid magic and version, body length over the cap
  proto::put_header(huge, static_cast<std::uint16_t>(proto::Op::kSet), 1, 0xFFFFFFF0u);
  expect_dropped(raw_connect(), huge);
  Bytes bad_op;
  proto::put_header(bad_op, 99, 1, 0);
  expect_dropped(raw_connect(), bad_op);
  Bytes bad_body;  // a SET whose key length runs past the body
  proto::put_header(bad_body, static_cast<std::uint16_t>(proto::Op::kSet), 1, 4);
  proto::put_u32(bad_body, 1000);
  expect_dropped(raw_connect(), bad_body);
  Bytes bad_version = proto::encode_request({proto::Op::kCheck, 1, {"x"}, {}, 0});
  bad_version[4] = 7;
  expect_dropped(raw_connect(), bad_version);
  EXPECT_EQ(s(good->get("x", Deadline::after(2s)).value()), "1");
  EXPECT_EQ(s(client()->get("x", Deadline::after(2s)).value()), "1");
  ::close(idle);
}

TEST_F(TcpStoreTest, RandomBodiesNeverCrashTheServer) {
  QuietLog quiet;
  std::uint32_t seed = 12345;
  auto next = [&seed] { return seed = seed * 1664525u + 1013904223u; };
  for (int round = 0; round < 60; ++round) {
    Bytes frame;
    Bytes body((next() >> 16) % 48);
    for (auto& x : body) x = static_cast<std::uint8_t>(next() >> 24);
    if (body.size() >= 4 && round % 2 == 0) body[0] = static_cast<std::uint8_t>((next() >> 16) % body.size());
    proto::put_header(frame, static_cast<std::uint16_t>(1 + round % 5), 7, static_cast<std::uint32_t>(body.size()));
    frame.insert(frame.end(), body.begin(), body.end());
    int fd = raw_connect();
    ASSERT_EQ(::send(fd, frame.data(), frame.size(), MSG_NOSIGNAL), static_cast<ssize_t>(frame.size()));
    ::close(fd);
  }
  auto st = client();
  ASSERT_TRUE(st->set("alive", b("yes")).is_ok());
  EXPECT_EQ(s(st->get("alive", Deadline::after(2s)).value()), "yes");
}

TEST_F(TcpStoreTest, ServerGoneFailsCallsWithoutHanging) {
  auto st = client();
  ASSERT_TRUE(st->set("a", b("1")).is_ok());
  Result<Bytes> blocked = Status(ErrorCode::kInternal, "not run");
  std::thread t([&] { blocked = st->get("never", Deadline::after(10s)); });
  std::this_thread::sleep_for(50ms);
  auto start = std::chrono::steady_clock::now();
  server_.reset();
  t.join();
  ASSERT_FALSE(blocked);
  EXPECT_EQ(blocked.status().code(), ErrorCode::kPeerLost) << blocked.status().to_string();
  EXPECT_NE(blocked.status().message().find("closed the connection"), std::string::npos)
      << blocked.status().message();
  Status again = st->set("b", b("2"));
  EXPECT_EQ(again.code(), ErrorCode::kPeerLost) << again.to_string();
  EXPECT_FALSE(st->check("a"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST_F(TcpStoreTest, LocalAddressOfTcpClientOnly) {
  auto st = client();
  EXPECT_EQ(tcp_store_local_address(*st), "127.0.0.1");
  PrefixStore prefixed(st, "p");
  EXPECT_EQ(tcp_store_local_address(prefixed), "");
}

TEST(TcpStoreConnect, TimesOutWhenNoServer) {
  int port = 0;
  {
    auto server = TcpStoreServer::start("127.0.0.1", 0);
    ASSERT_TRUE(server);
    port = (*server)->port();
  }
  auto start = std::chrono::steady_clock::now();
  auto c = connect_tcp_store("127.0.0.1", port, Deadline::after(200ms));
  ASSERT_FALSE(c);
  EXPECT_EQ(c.status().code(), ErrorCode::kTimeout) << c.status().to_string();
  EXPECT_NE(c.status().message().find(std::to_string(port)), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_EQ(connect_tcp_store("127.0.0.1", 0, Deadline::after(1s)).status().code(),
            ErrorCode::kInvalidArgument);
}

TEST(TcpStoreConnect, RetriesUntilTheServerStarts) {
  int port = 0;
  {
    auto server = TcpStoreServer::start("127.0.0.1", 0);
    ASSERT_TRUE(server);
    port = (*server)->port();
  }
  std::unique_ptr<TcpStoreServer> late;
  std::thread t([&] {
    std::this_thread::sleep_for(150ms);
    auto server = TcpStoreServer::start("127.0.0.1", port);  // SO_REUSEADDR: rebinding works
    if (server) late = std::move(server).value();
  });
  auto c = connect_tcp_store("127.0.0.1", port, Deadline::after(5s));
  t.join();
  ASSERT_TRUE(late) << "port " << port << " was taken meanwhile";
  ASSERT_TRUE(c) << c.status().to_string();
  EXPECT_TRUE((*c)->set("k", b("v")).is_ok());
}

TEST(TcpStoreServerStart, BadHostIsIo) {
  auto server = TcpStoreServer::start("256.1.1.1", 0);
  ASSERT_FALSE(server);
  EXPECT_EQ(server.status().code(), ErrorCode::kIo);
}

}  // namespace
}  // namespace chorus::bootstrap
