// Tests for the in-process fake transport: matching, unexpected queue, length checks,
// deadlines, abort, kill_rank and cancellation.
#include "transport/testing/fake_transport.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace chorus::transport::testing {
namespace {

Tag tag(std::uint32_t step) { return Tag{1, 2, step}; }
Deadline soon() { return Deadline::after(std::chrono::seconds(5)); }

TEST(FakeTransport, SendBeforeRecvIsQueuedInOrder) {
  auto w = make_fake_world(2);
  int a = 1, b = 2, x = 0, y = 0;
  ASSERT_TRUE(send(*w[0], 1, tag(0), &a, 4, soon()).is_ok());
  ASSERT_TRUE(send(*w[0], 1, tag(0), &b, 4, soon()).is_ok());
  EXPECT_EQ(static_cast<FakeTransport&>(*w[0]).unexpected_bytes(), 8u);
  ASSERT_TRUE(recv(*w[1], 0, tag(0), &x, 4, soon()).is_ok());
  ASSERT_TRUE(recv(*w[1], 0, tag(0), &y, 4, soon()).is_ok());
  EXPECT_EQ(x, 1);
  EXPECT_EQ(y, 2);
  EXPECT_EQ(static_cast<FakeTransport&>(*w[0]).unexpected_bytes(), 0u);
  EXPECT_EQ(static_cast<FakeTransport&>(*w[0]).stats().messages_sent, 2u);
  EXPECT_EQ(static_cast<FakeTransport&>(*w[0]).stats().bytes_sent, 8u);
}

TEST(FakeTransport, TagsDoNotMix) {
  auto w = make_fake_world(2);
  int a = 1, b = 2, x = 0, y = 0;
  auto r1 = w[1]->post_recv(0, tag(1), &x, 4);
  auto r2 = w[1]->post_recv(0, tag(2), &y, 4);
  ASSERT_TRUE(r1.has_value() && r2.has_value());
  ASSERT_TRUE(send(*w[0], 1, tag(2), &b, 4, soon()).is_ok());
  ASSERT_TRUE(send(*w[0], 1, tag(1), &a, 4, soon()).is_ok());
  Request* reqs[] = {r1->get(), r2->get(), nullptr};
  ASSERT_TRUE(w[1]->wait(reqs, soon()).is_ok());
  EXPECT_EQ(x, 1);
  EXPECT_EQ(y, 2);
}

TEST(FakeTransport, CrossThreadRendezvous) {
  auto w = make_fake_world(2);
  std::vector<int> data(100000, 7), got(100000, 0);
  std::thread th([&] { ASSERT_TRUE(recv(*w[1], 0, tag(0), got.data(), 400000, soon()).is_ok()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(send(*w[0], 1, tag(0), data.data(), 400000, soon()).is_ok());
  th.join();
  EXPECT_EQ(got, data);
}

TEST(FakeTransport, LengthMismatchIsDesync) {
  auto w = make_fake_world(2);
  char buf[8] = {};
  ASSERT_TRUE(send(*w[0], 1, tag(0), buf, 8, soon()).is_ok());
  Status s = recv(*w[1], 0, tag(0), buf, 4, soon());
  EXPECT_EQ(s.code(), ErrorCode::kDesync);
  EXPECT_EQ(s.peer(), 0);
}

TEST(FakeTransport, ZeroByteMessages) {
  auto w = make_fake_world(2);
  ASSERT_TRUE(send(*w[0], 1, tag(0), nullptr, 0, soon()).is_ok());
  EXPECT_TRUE(recv(*w[1], 0, tag(0), nullptr, 0, soon()).is_ok());
}

TEST(FakeTransport, TimeoutNamesPeer) {
  auto w = make_fake_world(3);
  int x;
  const auto t0 = std::chrono::steady_clock::now();
  Status s = recv(*w[0], 2, tag(0), &x, 4, Deadline::after(std::chrono::milliseconds(100)));
  EXPECT_EQ(s.code(), ErrorCode::kTimeout);
  EXPECT_EQ(s.peer(), 2);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(100));
}

TEST(FakeTransport, AbortFailsPendingAndFuture) {
  auto w = make_fake_world(2);
  int x;
  Status s;
  std::thread th([&] { s = recv(*w[1], 0, tag(0), &x, 4, Deadline::never()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  w[1]->abort(Status(ErrorCode::kAborted, "stop"));
  th.join();
  EXPECT_EQ(s.code(), ErrorCode::kAborted);
  EXPECT_EQ(w[1]->post_recv(0, tag(1), &x, 4).status().code(), ErrorCode::kAborted);
  EXPECT_TRUE(send(*w[0], 1, tag(2), &x, 4, soon()).is_ok());  // others unaffected
}

TEST(FakeTransport, KilledRankIsPeerLost) {
  auto w = make_fake_world(3);
  auto& f = static_cast<FakeTransport&>(*w[0]);
  int x = 5, y = 0;
  ASSERT_TRUE(send(*w[2], 0, tag(9), &x, 4, soon()).is_ok());  // queued before the kill
  Status s;
  std::thread th([&] { s = recv(*w[0], 2, tag(0), &y, 4, Deadline::never()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  f.kill_rank(2);
  th.join();
  EXPECT_EQ(s.code(), ErrorCode::kPeerLost);
  EXPECT_EQ(s.peer(), 2);
  EXPECT_TRUE(recv(*w[0], 2, tag(9), &y, 4, soon()).is_ok());  // already delivered
  EXPECT_EQ(y, 5);
  EXPECT_EQ(w[1]->post_send(2, tag(0), &x, 4).status().code(), ErrorCode::kPeerLost);
  EXPECT_EQ(w[1]->post_recv(2, tag(0), &y, 4).status().code(), ErrorCode::kPeerLost);
  EXPECT_EQ(w[2]->post_send(1, tag(0), &x, 4).status().code(), ErrorCode::kAborted);
}

TEST(FakeTransport, DestroyedRecvIsCancelled) {
  auto w = make_fake_world(2);
  int x = 0, y = 0, v = 3;
  { auto r = w[1]->post_recv(0, tag(0), &x, 4); ASSERT_TRUE(r.has_value()); }
  ASSERT_TRUE(send(*w[0], 1, tag(0), &v, 4, soon()).is_ok());
  EXPECT_EQ(x, 0);  // the cancelled buffer was not touched
  ASSERT_TRUE(recv(*w[1], 0, tag(0), &y, 4, soon()).is_ok());
  EXPECT_EQ(y, 3);
}

TEST(FakeTransport, BadPeerIsInvalidArgument) {
  auto w = make_fake_world(2);
  int x;
  EXPECT_EQ(w[0]->post_send(0, tag(0), &x, 4).status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(w[0]->post_recv(5, tag(0), &x, 4).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace chorus::transport::testing
