// Tests of failure propagation in the TCP transport: operation-signature mismatches fail
// both the receive and the sender (kDesync naming both signatures), and abort frames
// fail every peer's pending and later requests with the reporter's reason.
#include <gtest/gtest.h>

#include <cstring>

#include "transport/tcp/test_world.h"
#include "util/strings.h"

namespace chorus::tcp::testing {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kWaitMs = 10000;
constexpr std::uint64_t kSigA = 0xA1, kSigB = 0xB2;

bool contains(const Status& st, const std::string& s) {
  return st.message().find(s) != std::string::npos;
}

std::string fake_describe(std::uint64_t sig) {
  return str_printf("op%llx(...)", static_cast<unsigned long long>(sig));
}

std::vector<TransportPtr> described_world(int n) {
  return make_world(n, [](TcpOptions& o) { o.describe_sig = fake_describe; });
}

// (bytes, receive posted before the message arrives)
class SignatureMismatch : public ::testing::TestWithParam<std::tuple<std::size_t, bool>> {};

TEST_P(SignatureMismatch, FailsReceiverAndSenderNamingBothSignatures) {
  const auto [bytes, posted_first] = GetParam();
  auto w = described_world(2);
  auto msg = pattern(bytes, 1);
  std::vector<std::uint8_t> got(bytes);
  const Tag sent{1, 5, 2, kSigA}, expected{1, 5, 2, kSigB};
  Result<transport::RequestPtr> r = Status(ErrorCode::kInternal, "unset");
  if (posted_first) r = w[1]->post_recv(0, expected, got.data(), bytes);
  auto s = w[0]->post_send(1, sent, msg.data(), bytes);
  ASSERT_TRUE(s.has_value());
  if (!posted_first) {
    char c;  // drive progress so the message lands in the unexpected queue first
    auto dummy = w[1]->post_recv(0, Tag{99}, &c, 1);
    ASSERT_TRUE(dummy.has_value());
    (void)transport::wait_one(*w[1], dummy->get(), in_ms(100));
    r = w[1]->post_recv(0, expected, got.data(), bytes);
  }
  ASSERT_TRUE(r.has_value());
  Status st = transport::wait_one(*w[1], r->get(), in_ms(kWaitMs));
  EXPECT_EQ(st.code(), ErrorCode::kDesync) << st.to_string();
  EXPECT_EQ(st.peer(), 0);
  EXPECT_EQ(st.seq(), 5);
  EXPECT_TRUE(contains(st, "rank 1 expected opb2(...) seq 5 from peer rank 0 (127.0.0.1:") &&
              contains(st, "which sent opa1(...) seq 5 (tag comm 1 step 2)"))
      << st.message();
  EXPECT_TRUE(got == std::vector<std::uint8_t>(bytes, 0)) << "the mismatched payload was delivered";
  // The sender learns: its request fails (rendezvous) or, if it already went out eagerly,
  // its next request with that peer does.
  Status ss = transport::wait_one(*w[0], s->get(), in_ms(kWaitMs));
  if (ss.is_ok()) {
    char c;
    auto r2 = w[0]->post_recv(1, Tag{1, 6, 0, kSigA}, &c, 1);
    ss = r2.has_value() ? transport::wait_one(*w[0], r2->get(), in_ms(kWaitMs)) : r2.status();
  }
  EXPECT_EQ(ss.code(), ErrorCode::kDesync) << ss.to_string();
  EXPECT_EQ(ss.peer(), 1);
  EXPECT_TRUE(contains(ss, "rank 0 sent opa1(...) seq 5 to peer rank 1 (127.0.0.1:") &&
              contains(ss, "which expected opb2(...) seq 5"))
      << ss.message();
}

INSTANTIATE_TEST_SUITE_P(EagerAndRendezvous, SignatureMismatch,
                         ::testing::Combine(::testing::Values(100, 1 << 20), ::testing::Bool()));

TEST(Signature, PrintedInHexWithoutFormatter) {
  auto w = make_world(2);
  char a = 'a', b = 0;
  auto r = w[1]->post_recv(0, Tag{1, 1, 0, 0x1234}, &b, 1);
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(transport::send(*w[0], 1, Tag{1, 1, 0, 0x5678}, &a, 1, in_ms(kWaitMs)).is_ok());
  Status st = transport::wait_one(*w[1], r->get(), in_ms(kWaitMs));
  EXPECT_EQ(st.code(), ErrorCode::kDesync);
  EXPECT_TRUE(contains(st, "signature 0x0000000000001234") &&
              contains(st, "signature 0x0000000000005678"))
      << st.message();
}

TEST(Signature, ZeroIsNotChecked) {
  auto w = described_world(2);
  char a = 'a', b = 0, c = 'c', d = 0;
  std::thread sender([&] {
    EXPECT_TRUE(transport::send(*w[0], 1, Tag{1, 1, 0, 0}, &a, 1, in_ms(kWaitMs)).is_ok());
    EXPECT_TRUE(transport::send(*w[0], 1, Tag{1, 2, 0, kSigA}, &c, 1, in_ms(kWaitMs)).is_ok());
  });
  EXPECT_TRUE(transport::recv(*w[1], 0, Tag{1, 1, 0, kSigB}, &b, 1, in_ms(kWaitMs)).is_ok());
  EXPECT_TRUE(transport::recv(*w[1], 0, Tag{1, 2, 0, 0}, &d, 1, in_ms(kWaitMs)).is_ok());
  sender.join();
  EXPECT_EQ(b, 'a');
  EXPECT_EQ(d, 'c');
}

// Rank 0 lost rank 2 and aborts: rank 1, waiting only on rank 2, fails at once with
// rank 0's reason, code and culprit.
TEST(AbortFrame, ReachesPeersNotWaitingOnTheReporter) {
  auto w = make_world(3);
  char buf[8];
  auto r = w[1]->post_recv(2, Tag{1, 9, 0}, buf, sizeof(buf));
  ASSERT_TRUE(r.has_value());
  std::thread reporter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    w[0]->abort(Status(ErrorCode::kPeerLost, "peer rank 2 (x) closed the connection", 2));
  });
  auto t0 = Clock::now();
  Status st = transport::wait_one(*w[1], r->get(), in_ms(kWaitMs));
  reporter.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(1));
  EXPECT_EQ(st.code(), ErrorCode::kPeerLost) << st.to_string();
  EXPECT_EQ(st.peer(), 2);
  EXPECT_EQ(st.message(), "rank 0 reports: peer rank 2 (x) closed the connection");
  // Later requests fail the same way; rank 2 heard it too (directly or forwarded).
  EXPECT_EQ(w[1]->post_send(0, Tag{2}, buf, 1).status().code(), ErrorCode::kPeerLost);
  auto r2 = w[2]->post_recv(1, Tag{3}, buf, 1);
  Status s2 = r2.has_value() ? transport::wait_one(*w[2], r2->get(), in_ms(2000)) : r2.status();
  EXPECT_EQ(s2.code(), ErrorCode::kPeerLost) << s2.to_string();
  EXPECT_TRUE(contains(s2, "reports: peer rank 2 (x) closed the connection")) << s2.message();
}

// Abort while a large send streams: the partly written frame is finished from a copy
// (the user buffer may be freed at once) and the peer still hears about the abort.
TEST(AbortFrame, DuringLargeTransferFreesTheBufferAndTellsThePeer) {
  auto w = make_world(2);
  const std::size_t big = 32 << 20;
  std::vector<std::uint8_t> dst(big);
  auto rr = w[1]->post_recv(0, Tag{1}, dst.data(), big);
  ASSERT_TRUE(rr.has_value());
  {
    auto src = std::make_unique<std::vector<std::uint8_t>>(pattern(big, 7));
    auto s = w[0]->post_send(1, Tag{1}, src->data(), big);
    ASSERT_TRUE(s.has_value());
    (void)transport::wait_one(*w[1], rr->get(), in_ms(20));  // answers the rts
    (void)transport::wait_one(*w[0], s->get(), in_ms(50));   // fills the socket buffers
    const bool done_before = (*s)->done();
    w[0]->abort(Status(ErrorCode::kTimeout, "stuck", 1));
    EXPECT_TRUE((*s)->done());
    if (!done_before) {
      EXPECT_EQ((*s)->status().code(), ErrorCode::kTimeout);
    }
    s->reset();
    src.reset();  // the engine must not read it any more
  }
  Status later;
  auto t0 = Clock::now();
  std::thread receiver([&] {
    (void)transport::wait_one(*w[1], rr->get(), in_ms(kWaitMs));  // completes or fails
    char c;
    auto r2 = w[1]->post_recv(0, Tag{2}, &c, 1);
    later = r2.has_value() ? transport::wait_one(*w[1], r2->get(), in_ms(kWaitMs)) : r2.status();
  });
  w[0].reset();  // close() flushes the rest, bounded
  receiver.join();
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(2));
  EXPECT_TRUE(later.code() == ErrorCode::kTimeout || later.code() == ErrorCode::kPeerLost)
      << later.to_string();
}

}  // namespace
}  // namespace chorus::tcp::testing
