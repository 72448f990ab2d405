// The transport interface: how algorithms move bytes between ranks. Knows nothing of
// collectives. Messages are matched by (peer, tag); different tags never mix, so
// concurrent operations and ranks running ahead are safe.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "util/deadline.h"
#include "util/function_ref.h"
#include "util/status.h"

namespace chorus::transport {

// Bit 63 of a tag's signature: the sender may run this operation while earlier ones of
// the same communicator are still running (streams, groups). Such a message says nothing
// about the sender having finished earlier seqs, so it never makes a receive for an
// earlier seq "overtaken". Not part of the comparison of signatures.
inline constexpr std::uint64_t kSigUnordered = std::uint64_t{1} << 63;
// Bit 62: the operation's seq numbers count per peer pair (point-to-point), so messages of
// different peers with the same (comm, seq) belong to different operations.
inline constexpr std::uint64_t kSigPerPeer = std::uint64_t{1} << 62;

// True when two operation signatures are both set and differ (0 = not checked; the
// kSigUnordered bit is ignored).
inline bool signatures_differ(std::uint64_t a, std::uint64_t b) {
  a &= ~kSigUnordered;
  b &= ~kSigUnordered;
  return a != 0 && b != 0 && a != b;
}

// Identity of one message: communicator, operation sequence number, step within the op,
// plus the signature of the operation it belongs to.
struct Tag {
  std::uint32_t comm = 0;
  std::uint64_t seq = 0;
  std::uint32_t step = 0;
  // Opaque signature of the operation (kind, dtype, count, op, root; 0 = not checked).
  // It is NOT part of matching: a message whose (comm, seq, step) matches a receive but
  // whose signature differs (both nonzero) fails that receive with kDesync, and the
  // sender's request too, so both sides learn that the ranks disagree.
  std::uint64_t sig = 0;
  // True when `o` names the same message slot (comm, seq, step).
  bool matches(const Tag& o) const { return comm == o.comm && seq == o.seq && step == o.step; }
  // True when this message, arriving while a receive for `earlier` from the same peer
  // waits, proves that the peer moved past `earlier` without sending it: same comm, later
  // seq, and the sender ran its operations in order (no kSigUnordered).
  bool overtakes(const Tag& earlier) const {
    return comm == earlier.comm && seq > earlier.seq && (sig & kSigUnordered) == 0;
  }
};

// True when `a` and `b`, from any two peers, belong to the same collective operation
// (comm, seq) but carry different signatures: the ranks disagree about that operation,
// even if no receive matches the message's exact tag (a hierarchical algorithm exchanges
// with a subset of the ranks in each phase, so the odd rank's messages may reach a rank
// that never receives from it).
inline bool disagree(const Tag& a, const Tag& b) {
  return a.comm == b.comm && a.seq == b.seq && ((a.sig | b.sig) & kSigPerPeer) == 0 &&
         signatures_differ(a.sig, b.sig);
}

// One receive a probe (Transport::probe) looks for: the message `tag` from `peer`.
struct ProbeTarget {
  int peer = -1;
  Tag tag;
};

// Turns a signature into text for error messages (given to transports by their creator,
// since only the layers above know what a signature encodes). Null = print it in hex.
using SignatureFormatter = std::string (*)(std::uint64_t sig);

// A posted send or receive. Destroying a request that has not completed cancels it:
// the transport never touches its buffer afterwards.
class Request {
 public:
  virtual ~Request() = default;
  // True once the request has finished (successfully or not). Does not make progress.
  virtual bool done() const = 0;
  // The outcome; OK while pending or after success.
  virtual Status status() const = 0;
};
using RequestPtr = std::unique_ptr<Request>;

// Optional: one staging window per rank that every rank maps (shared memory), so that
// algorithms can copy in, reduce and copy out in place instead of passing messages.
// How long a cache line written by one rank takes to reach another (SharedWindows::hand_off):
// `now_ns` lately, `floor_ns` the least seen by this transport; 0 while unknown.
struct HandOff {
  double now_ns = 0;
  double floor_ns = 0;
};

class SharedWindows {
 public:
  virtual ~SharedWindows() = default;
  // Bytes of each window (the same on every rank).
  virtual std::size_t window_bytes() const = 0;
  // Rank `rank`'s window as mapped in this process. REQUIRES: 0 <= rank < size().
  virtual void* window(int rank) = 0;
  // Waits until every rank has called barrier() as often as this rank (this call
  // included). Every write to any window before the call is visible to every rank after
  // its own call returns. Fails with kPeerLost (a rank left or died before arriving),
  // kTimeout (deadline, naming a missing rank and `tag`'s seq), kAborted (or the code of
  // an abort reported by any rank). Never hangs.
  virtual Status barrier(const Tag& tag, Deadline deadline) = 0;
  // barrier(), with `meanwhile` run once this rank's arrival is published and before it
  // waits for the others: work on this rank's private memory (never a window, which the
  // others may still be writing) that no peer waits for, done while they arrive. By
  // default (a transport that cannot split its barrier) it runs before barrier().
  virtual Status barrier_meanwhile(const Tag& tag, Deadline deadline,
                                   util::FunctionRef<void()> meanwhile) {
    meanwhile();
    return barrier(tag, deadline);
  }
  // Barriers this rank has completed since the transport was created (algorithms derive
  // which half of a window is free from it).
  virtual std::uint64_t barriers() const = 0;

  // Optional mailboxes for small messages: a few cache lines per rank that carry the
  // payload together with the word peers wait on, so a small exchange costs one cache-line
  // hand-off per peer instead of a window barrier plus the reads of the windows.
  // mailbox_bytes() is the most one exchange carries per rank (0: no mailboxes, the default).
  virtual std::size_t mailbox_bytes() const { return 0; }
  // Publishes `bytes` (<= mailbox_bytes()) at `data` in this rank's mailbox and waits until
  // every rank has published for the same exchange (the n-th call of each rank). Fails like
  // barrier(); kDesync when a rank published for another operation than `tag`'s.
  virtual Status exchange(const void* data, std::size_t bytes, const Tag& tag, Deadline deadline);
  // What rank `rank` published in the last exchange, readable until this rank's next
  // exchange call (a rank writes a mailbox again only after every rank has entered the
  // exchange after the one it was read for). REQUIRES: mailbox_bytes() > 0.
  virtual const void* mailbox(int rank) const;

  // Optional single copy: true when every rank can read any other rank's process memory
  // (the same answer on every rank, agreed at set-up; false by default).
  virtual bool single_copy() const { return false; }
  // Copies `bytes` at address `remote` of rank `rank`'s process (an address that rank
  // published, e.g. through its window) into `local`. The caller keeps the bytes stable on
  // the owner's side (window barriers). kPeerLost when that process is gone, kIo otherwise.
  // REQUIRES: single_copy(), rank != this rank.
  virtual Status read_peer(int rank, const void* remote, void* local, std::size_t bytes);
  // The other direction: copies `bytes` at `local` to address `remote` of rank `rank`'s
  // process (which that rank published and will not touch until a barrier says so).
  virtual Status write_peer(int rank, const void* local, void* remote, std::size_t bytes);
  // Optional: whether peers reach [p, p + bytes) of this process through a map of it
  // (registered memory, chorus::mem_alloc), so that single copy moves it at memory speed
  // instead of through a system call per transfer. A hint for the algorithm choice only:
  // read_peer / write_peer work on any memory. False by default.
  virtual bool mappable(const void* /*p*/, std::size_t /*bytes*/) const { return false; }

  // Optional: the cache-line hand-off between ranks as this rank measured it at its
  // barriers and exchanges (zeros: not measured).
  virtual HandOff hand_off() const { return {}; }
  // Optional words in the shared memory for the layer above, all zero at first: one per
  // rank (written only by that rank, read by every rank) and one common word (written only
  // by rank 0). null: none.
  virtual std::atomic<std::uint64_t>* rank_word(int /*rank*/) { return nullptr; }
  virtual std::atomic<std::uint64_t>* common_word() { return nullptr; }
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // What carries the bytes: "shm", "tcp", "shm+tcp" (shared memory within the host, TCP
  // to other hosts), ... (Communicator::transport_name()).
  virtual std::string name() const = 0;

  // Sends `bytes` bytes at `data` to `peer` under `tag`. The buffer must stay valid and
  // unchanged until the request completes. A send to self is not allowed.
  virtual Result<RequestPtr> post_send(int peer, Tag tag, const void* data, std::size_t bytes) = 0;
  // Receives the message from `peer` with `tag` into `data`. The message must be exactly
  // `bytes` long: a different length fails the request with kDesync.
  virtual Result<RequestPtr> post_recv(int peer, Tag tag, void* data, std::size_t bytes) = 0;

  // Receive from any source: makes progress until a message matching one of `targets`
  // (its peer and exact tag) has arrived, or its sender offers it (TCP rendezvous), and
  // is held unreceived; returns that target's index (the lowest when several are held).
  // Consumes nothing: a post_recv for that peer and tag then matches the message. Fails
  // with a target peer's kDesync, or kPeerLost once every target peer is gone with
  // nothing of it held (a gone peer alone drops out of the wait), kTimeout at
  // `deadline` (naming the peers and tag), kAborted; kInvalidArgument for a peer out of
  // range or this rank; kNotSupported where the transport cannot probe (the default).
  virtual Result<int> probe(std::span<const ProbeTarget> targets, Deadline deadline);

  // Makes progress until every request in `reqs` is done or `deadline` passes.
  // Null entries are skipped. Returns the first failure (kPeerLost, kTimeout with the
  // peer of a pending request, kDesync, kAborted, kIo), else OK. Several threads may
  // wait at once.
  virtual Status wait(std::span<Request* const> reqs, Deadline deadline) = 0;

  // Makes the progress it can without blocking (pending sends into free space, arrived
  // messages into their receives), for a composite transport that waits on another
  // transport meanwhile. The default does nothing (progress happens in wait()).
  virtual void poke() {}
  // True when no request of this transport is pending: nothing needs driving for another
  // thread's or a peer's sake (a composite transport then waits on its other part alone,
  // to the deadline, instead of taking turns). False when unknown (the default).
  virtual bool idle() const { return false; }
  // kDesync when a message this transport received from any peer, and holds unmatched,
  // claims operation (tag.comm, tag.seq) under another signature than tag.sig
  // (transport::disagree); OK otherwise. For a composite transport whose receive for `tag`
  // waits in another part. Makes the progress it can without blocking first.
  virtual Status disagreement(const Tag& /*tag*/) { return Status::ok(); }
  // Why this transport aborted (abort() here, or a peer's abort it learned of); OK while
  // it has not. A composite transport passes one part's abort on to the other.
  virtual Status failure() const { return Status::ok(); }
  // failure() when it concerns collective `seq`: not when the rank the abort came from
  // had completed `seq` (then this rank's part can still complete with its data).
  virtual Status failure_for(std::uint64_t /*seq*/) const { return failure(); }

  // For a composite transport that waits on its parts at once, without taking turns:
  // event_fd() becomes readable, while armed (arm_events(true), as often undone with
  // arm_events(false)), when a peer has news for this rank; -1 when this transport has no
  // such fd (the default). block() waits for this transport's own events or for `also`
  // to be readable, at most until `deadline`, making the progress it can; false when it
  // cannot wait so (the default: nothing happened).
  virtual int event_fd() const { return -1; }
  virtual void arm_events(bool /*on*/) {}
  virtual bool block(Deadline /*deadline*/, int /*also*/) { return false; }

  // Fails every pending and future request with `reason`, and tells every peer still
  // reachable (best effort, never blocking), whose pending and future requests then fail
  // with `reason` too (prefixed by "rank R reports: "), so all ranks stop within the
  // bound instead of waiting for a timeout. Callable from any thread.
  virtual void abort(const Status& reason) = 0;

  // Progress: core calls set_progress(seq) when collective `seq` of this communicator
  // completes (one relaxed store); transports pass it to the peers at no extra message
  // (shm: the rank's slot in the segment; TCP: every frame header, and a bye frame when
  // the transport closes). peer_progress(peer) is the last completed seq this rank knows
  // `peer` reached, -1 = none known; a kPeerLost message names it.
  virtual void set_progress(std::uint64_t /*last_done_seq*/) {}
  virtual std::int64_t peer_progress(int /*peer*/) const { return -1; }

  // When the ranks span hosts: the host of every rank (0, 1, ... in order of each host's
  // lowest rank; the same on every rank), for algorithms that keep traffic within hosts.
  // Null when every rank is on one host or the transport does not know (the default).
  virtual const std::vector<int>* hosts() const { return nullptr; }

  // The shared windows of the ranks, or null when this transport has none (the default).
  virtual SharedWindows* shared_windows() { return nullptr; }
  // The shared windows of the group `members` (ranks of this transport, ascending; window
  // i belongs to members[i]), or null when those ranks share none: e.g. the ranks of one
  // host inside a transport that spans hosts (RoutedTransport), for algorithms that run a
  // phase within each host (GroupView). The default: shared_windows() when the group is
  // every rank.
  virtual SharedWindows* group_windows(std::span<const int> members);
};

// Convenience: wait for one request.
inline Status wait_one(Transport& t, Request* r, Deadline d) {
  Request* reqs[1] = {r};
  return t.wait(std::span<Request* const>(reqs, 1), d);
}

// Checks the arguments of post_send / post_recv (`what` names the call): peer in range and
// not `rank`, data non-null when bytes > 0. kInvalidArgument otherwise.
Status check_post_args(const char* what, int peer, int rank, int size, const void* data,
                       std::size_t bytes);

// The kDesync every transport reports when a receive for `expected` from peer `peer` (at
// `peer_address`) is overtaken by that peer's message for a later seq `later` of the same
// communicator: the ranks disagree about an operation (different roots, or one skipped).
Status overtaken_receive(int rank, const Tag& expected, int peer, const std::string& peer_address,
                         const Tag& later, const std::string& expected_desc,
                         const std::string& later_desc);

// The kDesync every transport reports when a message from peer `peer` (at `peer_address`)
// claims operation (msg.comm, msg.seq), which this rank runs as `mine_desc`, as `msg_desc`
// (transport::disagree).
Status foreign_message(int rank, int peer, const std::string& peer_address, const Tag& msg,
                       const std::string& mine_desc, const std::string& msg_desc);

// Checks probe()'s targets (`what` names the call): non-empty, each peer in range and not
// `rank`. kInvalidArgument otherwise.
Status check_probe_targets(const char* what, std::span<const ProbeTarget> targets, int rank,
                           int size);
// The kTimeout of a probe that found nothing before its deadline, naming the peers and tag.
Status probe_timeout(int rank, std::span<const ProbeTarget> targets);

// Blocking helpers built on post + wait.
Status send(Transport& t, int peer, Tag tag, const void* data, std::size_t bytes, Deadline d);
Status recv(Transport& t, int peer, Tag tag, void* data, std::size_t bytes, Deadline d);
// Sends to `to` and receives from `from` at the same time (no send-send deadlock).
Status send_recv(Transport& t, int to, Tag send_tag, const void* send_data, std::size_t send_bytes,
                 int from, Tag recv_tag, void* recv_data, std::size_t recv_bytes, Deadline d);

}  // namespace chorus::transport
