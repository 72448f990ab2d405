// IssuedOp / PendingOp: one operation after its issue step (seq, signature, flight-recorder
// entry, algorithm and window ticket fixed on the issuing thread), waiting for its execute
// step (inline for a blocking call, on a stream's worker, or at the end of a group).
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "algo/selector.h"
#include "core/work_state.h"
#include "op/args.h"
#include "op/kind.h"
#include "op/tag_space.h"
#include "transport/transport.h"

namespace chorus::core {

struct IssuedOp {
  const char* name = "";  // static storage: "all_reduce", "agree", "send", ...
  bool p2p = false;
  // Collectives: kind, arguments (comm, seq, sig, chunk_bytes stamped; the deadline is
  // set when execution starts), algorithm and window ticket (-1 = none). Inside a group
  // the algorithm and ticket are fixed at group_end() (fusion changes the sizes).
  op::CollKind kind = op::CollKind::kBarrier;
  op::CollArgs args;
  algo::Choice choice{"none", nullptr, false};
  std::int64_t ticket = -1;
  // Point-to-point: direction, buffer, peer and tag (per-peer seq).
  bool sending = false;
  void* buf = nullptr;
  std::size_t bytes = 0;
  int peer = -1;
  transport::Tag tag;
  std::uint64_t rec = 0;  // flight-recorder id
  // A lone call (CommImpl::lone_call()): recorded started at issue, no window ticket, not
  // counted in flight (no other thread runs an operation of its communicator meanwhile).
  bool alone = false;
  std::chrono::milliseconds timeout{0};  // the deadline's length, as set at issue
  int stream = 0;
  const char* stream_label = "default";  // the stream's label (outlives the op)
  std::int64_t issue_tick_ns = 0;  // diag::tick_now_ns() at issue (flight recorder)
  std::int64_t issue_ns = 0;  // steady clock at issue / execution start, stamped only
  std::int64_t start_ns = 0;  // when an Observer watches (core/observer.h)
  // The operation's seq as users see it (a p2p tag's seq without op::kP2pSeqBase).
  std::uint64_t seq() const { return p2p ? tag.seq - op::kP2pSeqBase : args.seq; }
};

// A point-to-point transfer's failure `s` from the transport, naming the peer and the seq
// users see (the transport's own seq, if any, is the wire seq with op::kP2pSeqBase).
inline Status p2p_failure(const Status& s, const IssuedOp& o) {
  return Status(s.code(), s.message(), s.peer() >= 0 ? s.peer() : o.peer,
                static_cast<std::int64_t>(o.seq()));
}

// An issued operation that runs later: queued on a stream or recorded in a group.
struct PendingOp {
  IssuedOp op;
  std::shared_ptr<WorkState> work;  // null for a blocking call recorded in a group
  std::vector<std::size_t> v_arrays;  // all_to_all_v: the caller's four arrays, copied
  // all_to_all_v: copies the count/displacement arrays (size() entries each) and points
  // the arguments at the copies, so the caller's spans may go away after the call.
  void own_v_arrays(int size);
};

}  // namespace chorus::core
