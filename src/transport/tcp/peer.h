// Per-request and per-peer state of the TCP engine: an Op is one posted send or receive;
// a Peer holds one connection's outgoing frame queue, matching queues and read state.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "transport/tcp/frame.h"
#include "transport/transport.h"
#include "util/status.h"
#include "util/unique_fd.h"

namespace chorus::tcp {

// One posted send or receive. Lives inside its Request; the engine holds raw pointers to
// it only while it is pending (every container drops it before completion or cancel).
struct Op {
  enum class Kind : std::uint8_t { kSend, kRecv };
  // Where the pending op is referenced from (so cancel can find it).
  enum class Where : std::uint8_t {
    kNone,       // not referenced (done, cancelled, or not yet posted)
    kPosted,     // recv in Peer::posted, waiting for a matching frame
    kOutQueue,   // send whose eager or data frame sits in Peer::out
    kAwaitCts,   // rendezvous send in Peer::await_cts (RTS queued or sent)
    kAwaitData,  // rendezvous recv in Peer::await_data (CTS queued or sent)
    kReading,    // recv whose payload is being read (Peer::in_op)
  };
  Kind kind = Kind::kSend;
  Where where = Where::kNone;
  int peer = -1;
  transport::Tag tag;
  const std::uint8_t* send_data = nullptr;
  std::uint8_t* recv_data = nullptr;
  std::size_t bytes = 0;
  std::uint64_t rdv_id = 0;     // rendezvous id, 0 when eager
  bool rtr = false;             // recv announced to the sender by an rtr (id rdv_id)
  std::atomic<bool> done{false};  // set (release) after `status` is final
  Status status;
};

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

// A message that arrived before its receive was posted: an eager copy or an RTS header.
struct Unexpected {
  transport::Tag tag;
  bool rts = false;
  std::uint64_t rdv_id = 0;
  std::uint64_t length = 0;
  std::vector<std::uint8_t> data;  // eager payload
};

// A receive the peer announced (rtr) before this rank posted the matching send.
struct Ready {
  transport::Tag tag;
  std::uint64_t length = 0;
  std::uint64_t id = 0;
};

struct Peer {
  enum class Sink : std::uint8_t { kOp, kUnexpected, kDiscard, kAbortReason };
  int rank = -1;
  std::string address;
  UniqueFd fd;
  Status failed;  // set once; every later post to this peer fails with it
  bool is_failed() const { return !failed.is_ok(); }
  // Set when this peer reported that a message we sent belongs to a different operation
  // (kDesync frame): every pending and later request with the peer fails with it, but
  // the connection stays open so the peer's abort frame can still be read.
  Status desynced;

  std::deque<OutFrame> out;
  std::deque<Op*> posted;
  std::deque<Unexpected> unexpected;
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
};

}  // namespace chorus::tcp
