// The one progress engine under every medium: matching of receives to messages by (peer,
// tag) with posted and unexpected queues per peer, completion, the statuses of every
// failure (overtaken, foreign, size or signature mismatch, timeout), abort state, and the
// wait loop with its waiting policy. A medium (shared-memory rings, TCP frames) derives
// from it and only moves bytes, watches liveness and carries aborts, through the hooks.
//
// Thread-safe: every public method may be called from any thread. One mutex (mu_) guards
// all state; the thread that drives progress drops it while it yields or blocks.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <span>
#include <string>

#include "transport/engine/op.h"
#include "transport/engine/wait_policy.h"
#include "util/deadline.h"

namespace chorus::engine {

struct EngineOptions {
  int rank = 0;
  int size = 1;
  int name = 0;    // this rank's number in messages
  int names = 1;   // rank numbers in messages are below this (the job's size)
  const char* medium = "";  // "shm", "TCP": for messages
  std::size_t max_reason_bytes = 256;  // abort reasons are cut to this length
  transport::SignatureFormatter describe_sig = nullptr;
  WaitPolicy::Config wait;
};

class Engine {
 public:
  virtual ~Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Starts `op` (kind, peer, tag, buffer filled in; peer already range-checked). Never
  // blocks. Fails at once if the peer is lost or desynced, or the engine aborted.
  Status post(Op* op);
  // transport::Transport::probe() (targets already checked): waits, driving progress like
  // wait(), until a message or offer matching a target is held; returns its index.
  Result<int> probe(std::span<const transport::ProbeTarget> targets, Deadline deadline);
  // Forgets a pending op: its buffer is never touched again. No-op when done.
  void cancel(Op* op);
  // Drives progress until every non-null op is done, one fails, or `deadline` passes.
  Status wait(std::span<Op* const> ops, Deadline deadline);
  // One round of progress without blocking, unless another thread is driving it.
  void poke();
  // No pending request and nothing queued to move (transport::Transport::idle()).
  bool idle();
  // transport::Transport::disagreement(): a held message of tag's operation with another
  // signature.
  Status disagreement(const transport::Tag& tag);
  // Fails everything with `reason` and tells every peer the medium can reach (the first
  // abort wins; later ones are ignored). Never waits for a peer.
  void abort(const Status& reason);
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  Status abort_status() const;
  // The abort's status when it concerns collective `seq` of this communicator: OK while
  // not aborted, or when the rank the abort came from had completed `seq` already (its
  // data for it was all sent: a later failure there does not undo it here).
  Status abort_for(std::uint64_t seq) const;
  // Fails pending ops and says goodbye to the peers. Called by the transport; idempotent.
  virtual void close() = 0;

  // For a combined transport that waits on several media at once (Transport::event_fd,
  // arm_events, block): an fd that becomes readable while armed when a peer has news for
  // this rank (-1: the medium has none); and a blocking progress round that also returns
  // when `also` is readable (false: the medium cannot block so; nothing happened).
  virtual int event_fd() const { return -1; }
  virtual void arm_events(bool /*on*/) {}
  bool block(Deadline deadline, int also);

 protected:
  explicit Engine(const EngineOptions& opts);

  // ---- for media (mu_ held) ----
  void complete(Op* op, Status st);
  // Fails every pending op with `p` and every later post (sticky).
  void fail_peer(PeerState& p, Status st);
  // Fails every pending op with `p` (posted here, held by the medium), e.g. on desync.
  void drop_pending(PeerState& p, const Status& st);
  // The receive posted for an incoming message `tag` from `p`, removed from the queue, or
  // null: then receives the message proves lost fail first (fail_overtaken, fail_foreign).
  Op* take_posted(PeerState& p, const transport::Tag& tag);
  // Checks that message (tag, length) fits receive `op`; if not, fails `op` and tells the
  // sender (refuse), and returns false.
  bool accepts(PeerState& p, Op* op, const Unexpected& msg);
  // Holds a message no receive asked for (yet); a receive posted meanwhile matches now.
  void hold(PeerState& p, Unexpected u);
  // `p` told us a message we sent did not fit its receive: `st` fails every pending and
  // later request with `p`.
  void refused_by(PeerState& p, const Status& st);
  // `from` reported an abort that started at rank `origin` with `culprit` and `text`
  // (numbers from the wire, checked here): adopted and forwarded. `origin_done`: the
  // collectives the origin had completed (its last seq + 1; 0 when unknown).
  void adopt_abort(const PeerState& from, ErrorCode code, int origin, int culprit,
                   const std::string& text, std::uint64_t origin_done = 0);
  // A message of a later operation from `p` (tag `later`) means `p` finished every
  // earlier operation of that communicator: receives still waiting for one of those from
  // `p` can never match, so they fail with kDesync (e.g. ranks disagree about the root).
  void fail_overtaken(PeerState& p, const transport::Tag& later);
  // A message from `p` (tag `msg`) claims an operation this rank runs, under another
  // signature (transport::disagree): every posted receive of that (comm, seq), from any
  // peer, fails with kDesync.
  void fail_foreign(PeerState& p, const transport::Tag& msg);

  // Statuses (no lock needed).
  std::string describe(std::uint64_t sig) const;
  Status signature_status(const PeerState& p, const transport::Tag& tag, std::uint64_t mine,
                          std::uint64_t theirs, bool receiver) const;
  Status size_status(const PeerState& p, const transport::Tag& tag, std::uint64_t got,
                     std::uint64_t expected) const;
  // The receiver of our message `tag` (sent `sent` bytes; -1 unknown) expected `expected`
  // bytes of operation `theirs`.
  Status refusal_status(const PeerState& p, const transport::Tag& tag, std::uint64_t mine,
                        std::uint64_t theirs, std::uint64_t expected, long long sent) const;
  // Message `msg` from `p` claims an operation this rank runs as signature `mine`.
  Status foreign_status(const PeerState& p, const transport::Tag& msg, std::uint64_t mine) const;
  Status closed_status() const;
  int name() const { return name_; }

  // ---- hooks: what each medium does (mu_ held unless noted) ----
  virtual PeerState& peer(int r) = 0;
  virtual const PeerState& peer(int r) const = 0;
  // Queue (and start writing) send `op`.
  virtual void start_send(PeerState& p, Op* op) = 0;
  // Receive `op` was queued in p.posted (e.g. look for its message, announce it).
  virtual void recv_posted(PeerState& /*p*/, Op* /*op*/) {}
  // Receive `op` matched an offer (msg.offer): ask the sender for the payload.
  virtual void accept_offer(PeerState& /*p*/, Op* /*op*/, const Unexpected& /*msg*/) {}
  // Message `msg` did not fit receive `op`: tell the sender, if the medium can.
  virtual void refuse(PeerState& p, const Unexpected& msg, const Op& op) = 0;
  // Cancel `op`, which the medium holds (where != kPosted).
  virtual void cancel_in_medium(PeerState& p, Op* op) = 0;
  // Posted receive `op` was cancelled (e.g. withdraw its announcement).
  virtual void withdrawn(PeerState& /*p*/, Op* /*op*/) {}
  // The medium has work in flight with `p` (queued writes, a message being read, ...).
  virtual bool busy(const PeerState& p) const = 0;
  // Fails the ops the medium holds for `p` with `st`, keeping its byte stream well formed.
  virtual void drop_in_medium(PeerState& p, const Status& st) = 0;
  // `p` is lost for good: release what the medium holds for it (its ops already failed).
  virtual void on_peer_failed(PeerState& /*p*/, const Status& /*st*/) {}
  // One round of progress: without blocking, or (block) waiting for an event of the
  // medium at most until `deadline` (the medium caps it for its own liveness checks).
  // May drop `lk` while blocked. True when anything moved.
  virtual bool progress(std::unique_lock<std::mutex>& lk, Deadline deadline, bool block) = 0;
  // Interrupts a thread blocked in progress() (any thread, lock not needed).
  virtual void wake() = 0;
  // True when progress(block) also returns once also_fd_ is readable.
  virtual bool blocks_with_fd() const { return false; }
  // Tells the peers about the recorded abort (abort_reason()).
  virtual void announce_abort() = 0;
  // A message the medium holds outside p.unexpected (e.g. parked in a ring), or null.
  virtual const transport::Tag* parked(const PeerState& /*p*/) const { return nullptr; }
  // Other held announcements that claim an operation (transport::disagree with `tag`).
  virtual Status held_elsewhere(const transport::Tag& /*tag*/) const { return Status::ok(); }
  // After a blocking round: a failure the medium can see only then (a peer waiting
  // elsewhere for another operation), for the ops being waited for.
  virtual Status after_block(std::span<Op* const> /*ops*/) { return Status::ok(); }

  // The recorded abort: its status, the rank it started at, its text (abort_mu_ taken).
  struct AbortReason {
    Status status;
    int origin = -1;
    std::string text;
    std::uint64_t origin_done = 0;  // see adopt_abort
  };
  AbortReason abort_reason() const;

  const int rank_;
  const int size_;
  std::mutex mu_;
  std::condition_variable cv_;
  // A thread with nothing done yet waits its turn: when another thread drives progress,
  // on cv_ (at most 10 ms, or to `deadline`; false); else it drives one round itself in
  // the phase the wait policy gives for a wait begun at *start (set on the first round,
  // *polled then true; restarted by progress when the policy says so), relaxing or
  // yielding when nothing moved, and returns true with *block = whether it blocked.
  bool take_turn(std::unique_lock<std::mutex>& lk, Deadline deadline, bool* polled,
                 WaitPolicy::Clock::time_point* start, bool* block);
  bool polling_ = false;  // a thread is driving progress
  bool closed_ = false;
  int also_fd_ = -1;      // block(): another fd a blocking progress round watches
  int probing_ = 0;       // threads in probe(): a medium holds no message back unread

  // A buffer of `bytes` for an unexpected message (mu_ held), from the spares that
  // recycle() kept: an allocation of tens of KiB per message comes back from the heap as
  // fresh pages, and the first touch of a page costs ~15 us on a PVM guest (a 2-rank tree
  // broadcast of 64 KiB out of place took 239 us a call, 83 heap resizes in 200 calls).
  std::vector<std::uint8_t> buffer(std::size_t bytes);
  // Keeps `b` (a delivered unexpected message's) for buffer(), up to 2 MiB of them, the
  // oldest dropped first (mu_ held).
  void recycle(std::vector<std::uint8_t>&& b);

 private:
  std::vector<std::vector<std::uint8_t>> spare_;  // recycle()d buffers, contents stale
  std::size_t spare_bytes_ = 0;                    // their capacities (<= 2 MiB)

  Status held_disagreement(const transport::Tag& tag) const;
  // A message (or offer) for `tag` from `p` is held: unexpected, or parked in the medium.
  bool holds(const PeerState& p, const transport::Tag& tag) const;
  // probe()'s look at the held messages: a target's index, -1 (none yet), or the failure
  // of a target's peer that can no longer send (`*st`).
  int probe_held(std::span<const transport::ProbeTarget> targets, Status* st) const;
  bool take_unexpected(PeerState& p, Op* op);
  bool overtaken(PeerState& p, Op* op);
  bool foreign(Op* op);
  Status overtaken_status(const PeerState& p, const Op& op, const transport::Tag& later) const;
  Status mismatch(const PeerState& p, const transport::Tag& got, std::uint64_t got_len,
                  const Op& op) const;
  Status timeout_status(std::span<Op* const> ops) const;
  bool begin_abort(const Status& st, int origin, const std::string& text,
                   std::uint64_t origin_done = 0);

  const int name_;
  const int names_;
  const char* const medium_;
  const std::size_t max_reason_bytes_;
  const transport::SignatureFormatter describe_sig_;
  WaitPolicy policy_;  // of the driving thread (mu_)

  std::atomic<bool> aborted_{false};
  mutable std::mutex abort_mu_;
  AbortReason abort_;
};

}  // namespace chorus::engine
