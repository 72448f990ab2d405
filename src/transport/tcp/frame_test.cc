// Frame header encode/decode round trip and validation of hostile headers.
#include "transport/tcp/frame.h"

#include <gtest/gtest.h>

namespace chorus::tcp {
namespace {

constexpr std::uint64_t kToken = 0x1122334455667788ull;

FrameHeader sample() {
  FrameHeader h;
  h.kind = FrameKind::kRts;
  h.job_token = kToken;
  h.tag = {7, 0x0102030405060708ull, 9};
  h.length = 123456789;
  h.arg = 42;
  return h;
}

TEST(Frame, RoundTrip) {
  std::uint8_t buf[kFrameHeaderBytes];
  FrameHeader h = sample();
  encode_frame(h, buf);
  EXPECT_EQ(buf[0], 'C');
  EXPECT_EQ(buf[1], 'H');
  EXPECT_EQ(buf[2], 'R');
  EXPECT_EQ(buf[3], 'S');
  FrameHeader d = decode_frame(buf);
  EXPECT_EQ(d.magic, kFrameMagic);
  EXPECT_EQ(d.version, kWireVersion);
  EXPECT_EQ(d.kind, FrameKind::kRts);
  EXPECT_EQ(d.job_token, kToken);
  EXPECT_TRUE(d.tag.matches(h.tag));
  EXPECT_EQ(d.length, h.length);
  EXPECT_EQ(d.arg, 42u);
  EXPECT_TRUE(validate_frame(d, kToken, 1024).is_ok());
}

// Bytes 56-63 carry the sender's progress, except in desync frames (the peer's signature).
TEST(Frame, ProgressAndPeerSignatureShareTheLastField) {
  std::uint8_t buf[kFrameHeaderBytes];
  FrameHeader h = sample();
  h.progress = 0x0a0b0c0d0e0f1011ull;
  encode_frame(h, buf);
  EXPECT_EQ(buf[56], 0x11);
  EXPECT_EQ(buf[63], 0x0a);
  FrameHeader d = decode_frame(buf);
  EXPECT_EQ(d.progress, h.progress);
  EXPECT_EQ(d.peer_sig, 0u);
  h.kind = FrameKind::kDesync;
  h.length = 0;
  h.peer_sig = 77;
  encode_frame(h, buf);
  d = decode_frame(buf);
  EXPECT_EQ(d.peer_sig, 77u);
  EXPECT_EQ(d.progress, 0u);
}

TEST(Frame, ByeCarriesNothingButProgress) {
  std::uint8_t buf[kFrameHeaderBytes];
  FrameHeader h;
  h.kind = FrameKind::kBye;
  h.job_token = kToken;
  h.progress = 10;  // the sender completed seq 9
  encode_frame(h, buf);
  FrameHeader d = decode_frame(buf);
  EXPECT_STREQ(frame_kind_name(d.kind), "bye");
  EXPECT_EQ(d.progress, 10u);
  EXPECT_TRUE(validate_frame(d, kToken, 1024).is_ok());
  d.length = 1;
  EXPECT_EQ(validate_frame(d, kToken, 1024).code(), ErrorCode::kIo);
}

Status validate_bytes(const FrameHeader& h, std::uint64_t max_eager = 1024) {
  std::uint8_t buf[kFrameHeaderBytes];
  encode_frame(h, buf);
  return validate_frame(decode_frame(buf), kToken, max_eager);
}

TEST(Frame, RejectsBadMagic) {
  FrameHeader h = sample();
  h.magic = 0xdeadbeef;
  Status st = validate_bytes(h);
  EXPECT_EQ(st.code(), ErrorCode::kIo);
  EXPECT_NE(st.message().find("magic"), std::string::npos);
}

TEST(Frame, RejectsBadVersion) {
  FrameHeader h = sample();
  h.version = 99;
  EXPECT_EQ(validate_bytes(h).code(), ErrorCode::kIo);
}

TEST(Frame, RejectsForeignToken) {
  FrameHeader h = sample();
  h.job_token = 1;
  Status st = validate_bytes(h);
  EXPECT_EQ(st.code(), ErrorCode::kIo);
  EXPECT_NE(st.message().find("token"), std::string::npos);
}

TEST(Frame, RejectsUnknownKind) {
  FrameHeader h = sample();
  h.kind = static_cast<FrameKind>(77);
  EXPECT_EQ(validate_bytes(h).code(), ErrorCode::kIo);
}

TEST(Frame, RejectsHugeLengths) {
  FrameHeader h = sample();
  h.length = ~std::uint64_t{0};
  EXPECT_EQ(validate_bytes(h).code(), ErrorCode::kIo);
  h.kind = FrameKind::kEager;
  h.length = 1025;
  EXPECT_EQ(validate_bytes(h, 1024).code(), ErrorCode::kIo);
  h.length = 1024;
  EXPECT_TRUE(validate_bytes(h, 1024).is_ok());
  h.kind = FrameKind::kCts;
  h.length = 1;
  EXPECT_EQ(validate_bytes(h).code(), ErrorCode::kIo);
}

TEST(Frame, GarbageNeverValidates) {
  std::uint8_t buf[kFrameHeaderBytes];
  for (std::size_t i = 0; i < sizeof(buf); ++i) buf[i] = static_cast<std::uint8_t>(i * 37 + 5);
  EXPECT_FALSE(validate_frame(decode_frame(buf), kToken, 1024).is_ok());
}

}  // namespace
}  // namespace chorus::tcp
