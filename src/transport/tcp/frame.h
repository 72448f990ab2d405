// Frame header of the TCP wire format (docs/WIRE.md): fixed 64-byte little-endian header,
// encoded and decoded here, and validated before the engine touches any buffer.
#pragma once
#include <cstddef>
#include <cstdint>

#include "transport/transport.h"
#include "util/status.h"

namespace chorus::tcp {

inline constexpr std::uint32_t kFrameMagic = 0x53524843;  // bytes "CHRS" on the wire
inline constexpr std::uint16_t kWireVersion = 4;
inline constexpr std::size_t kFrameHeaderBytes = 64;
// Longest reason text an abort frame may carry.
inline constexpr std::uint64_t kMaxAbortReasonBytes = 1024;
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
  kAbort = 8,   // sender aborted: payload = reason text; arg = abort_arg(); tag.step = the
                // rank that first reported the failure
  kDesync = 9,  // receiver's signature (tag.sig) differs from the message's (peer_sig);
                // tag = the message's slot; arg = rendezvous id (0 for eager)
  kBye = 10,    // the sender closes its transport normally; carries only its progress
  kRtr = 11,    // receiver ready: a receive of `length` bytes for `tag` is posted; arg = its id
  kPut = 12,    // payload of `length` bytes answering rtr `arg` follows
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
  std::uint64_t peer_sig = 0;  // kDesync only: the signature the receiver got
  // Every kind but kDesync (same 8 bytes): the sender's last completed collective seq + 1
  // (0 = none completed yet), so a peer can tell how far a rank got if it is lost.
  std::uint64_t progress = 0;
};

using transport::signatures_differ;

// arg of an abort frame: error code in bits 0-31, culprit peer rank + 1 in bits 32-63
// (0 = unknown).
inline std::uint64_t abort_arg(ErrorCode code, int peer) {
  return static_cast<std::uint64_t>(static_cast<std::uint32_t>(code)) |
         (static_cast<std::uint64_t>(static_cast<std::uint32_t>(peer + 1)) << 32);
}

// Writes `h` into exactly kFrameHeaderBytes bytes at `out`.
void encode_frame(const FrameHeader& h, std::uint8_t* out);
// Reads a header from kFrameHeaderBytes bytes. Does not validate.
FrameHeader decode_frame(const std::uint8_t* in);
// Checks magic, version, job token, kind and the kind's length rule (eager payloads at
// most `max_eager`, abort reasons at most kMaxAbortReasonBytes, hello/cts/cancel carry
// none, others at most kMaxMessageBytes), and that an abort frame's code is a failure code.
// Returns kIo describing the first violation.
Status validate_frame(const FrameHeader& h, std::uint64_t job_token, std::uint64_t max_eager);

}  // namespace chorus::tcp
