// Frame header of the TCP wire format (docs/WIRE.md): fixed 48-byte little-endian header,
// encoded and decoded here, and validated before the engine touches any buffer.
#pragma once
#include <cstddef>
#include <cstdint>

#include "transport/transport.h"
#include "util/status.h"

namespace chorus::tcp {

inline constexpr std::uint32_t kFrameMagic = 0x53524843;  // bytes "CHRS" on the wire
inline constexpr std::uint16_t kWireVersion = 1;
inline constexpr std::size_t kFrameHeaderBytes = 48;
// Largest message length accepted from the wire (1 TiB); anything above is corrupt.
inline constexpr std::uint64_t kMaxMessageBytes = std::uint64_t{1} << 40;

enum class FrameKind : std::uint16_t {
  kHello = 1,   // handshake: arg = sender rank, seq = world size
  kEager = 2,   // payload of `length` bytes follows
  kRts = 3,     // ready to send `length` bytes; arg = rendezvous id
  kCts = 4,     // clear to send rendezvous `arg`
  kData = 5,    // rendezvous payload of `length` bytes follows; arg = rendezvous id
  kNack = 6,    // receiver refuses rendezvous `arg`: it expected `length` bytes
  kCancel = 7,  // sender cancelled rendezvous `arg`
};
const char* frame_kind_name(FrameKind kind);

struct FrameHeader {
  std::uint32_t magic = kFrameMagic;
  std::uint16_t version = kWireVersion;
  FrameKind kind = FrameKind::kEager;
  std::uint64_t job_token = 0;
  transport::Tag tag;
  std::uint64_t length = 0;
  std::uint64_t arg = 0;
};

// Writes `h` into exactly kFrameHeaderBytes bytes at `out`.
void encode_frame(const FrameHeader& h, std::uint8_t* out);
// Reads a header from kFrameHeaderBytes bytes. Does not validate.
FrameHeader decode_frame(const std::uint8_t* in);
// Checks magic, version, job token, kind and the kind's length rule (eager payloads at
// most `max_eager`, hello/cts/cancel carry none, others at most kMaxMessageBytes).
// Returns kIo describing the first violation.
Status validate_frame(const FrameHeader& h, std::uint64_t job_token, std::uint64_t max_eager);

}  // namespace chorus::tcp
