// Per-peer state of the TCP medium: one connection's outgoing frame queue, rendezvous
// state and read state, on top of the engine's matching queues.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "transport/engine/op.h"
#include "transport/tcp/frame.h"
#include "transport/transport.h"
#include "util/status.h"
#include "util/unique_fd.h"

namespace chorus::tcp {

using engine::Op;

// One frame waiting to be written: a header plus an optional payload.
struct OutFrame {
  std::uint8_t hdr[kFrameHeaderBytes];
  std::size_t sent = 0;                 // bytes of header + payload already written
  const std::uint8_t* payload = nullptr;
  std::size_t payload_len = 0;
  Op* op = nullptr;                     // completed when the frame is fully written
  FrameKind kind = FrameKind::kEager;
  std::uint64_t rdv_id = 0;
  std::vector<std::uint8_t> owned;      // payload copy when `op` was cancelled mid-frame
  std::size_t total() const { return kFrameHeaderBytes + payload_len; }
};

// A receive the peer announced (rtr) before this rank posted the matching send.
struct Ready {
  transport::Tag tag;
  std::uint64_t length = 0;
  std::uint64_t id = 0;
};

// A peer's connection: the engine's matching state (engine::PeerState; `desynced` keeps
// the connection open so the peer's abort frame can still be read) plus frames in and out.
struct Peer : engine::PeerState {
  enum class Sink : std::uint8_t { kOp, kUnexpected, kDiscard, kAbortReason };
  UniqueFd fd;

  std::deque<OutFrame> out;
  std::vector<Op*> await_cts;
  std::vector<Op*> await_data;
  std::vector<Ready> ready;
  // Ids of this side's rts and rtr frames to the peer: one counter, so no two collide.
  std::uint64_t next_rdv_id = 1;
  // The peer's last completed collective seq + 1 (0 = none), from its frame headers.
  std::uint64_t progress = 0;

  // Incoming frame being read.
  std::uint8_t in_hdr[kFrameHeaderBytes];
  std::size_t in_hdr_got = 0;
  bool in_body = false;
  FrameHeader in_frame;
  Sink in_sink = Sink::kDiscard;
  Op* in_op = nullptr;
  std::vector<std::uint8_t> in_buf;  // unexpected eager payload or abort reason being read
  std::uint64_t in_pos = 0;          // body bytes read so far
  // Bytes read from the socket ahead of the frame being parsed: small frames (header and
  // payload) come in with one recv instead of two or three. Always drained before
  // read_peer returns, so poll() readiness still means "news from this peer".
  std::vector<std::uint8_t> stage;
  std::size_t stage_pos = 0, stage_len = 0;
};

}  // namespace chorus::tcp
