// The TCP progress engine: matching by (peer, tag), eager and rendezvous protocols,
// non-blocking socket I/O driven by the threads inside wait(), and failure handling.
#pragma once
#include <poll.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <span>
#include <vector>

#include "transport/tcp/mesh.h"
#include "transport/tcp/peer.h"
#include "transport/tcp/spin_policy.h"
#include "transport/tcp/tcp_transport.h"

namespace chorus::tcp {

// Thread-safe: every method may be called from any thread. One mutex guards all state;
// the thread that drives progress releases it while it sits in poll().
class Engine {
 public:
  Engine(const TcpOptions& opts, Mesh mesh);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Starts `op` (kind, peer, tag, buffer filled in; peer already range-checked). Never
  // blocks on the network. Fails at once if the peer is lost or the engine aborted.
  Status post(Op* op);
  // Forgets a pending op: its buffer is never touched again. No-op when done.
  void cancel(Op* op);
  // Drives progress until every non-null op is done, one fails, or `deadline` passes.
  Status wait(std::span<Op* const> ops, Deadline deadline);
  // One round of progress without blocking, unless another thread is driving it.
  void poke();
  // No pending request and nothing queued to write (transport::Transport::idle()).
  bool idle();
  // transport::Transport::disagreement(): a held message of tag's operation with another
  // signature.
  Status disagreement(const transport::Tag& tag);
  // Fails everything with `reason`, sends every live peer an abort frame (best effort:
  // written without blocking; what the socket does not take now is flushed, bounded, by
  // close()) and half-closes the connections. Takes the engine lock only briefly (no
  // thread holds it across a blocking call); never waits for the network.
  void abort(const Status& reason);
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  Status abort_status() const;
  // This rank's last completed collective seq (one relaxed store); stamped into every
  // frame header from now on, and into a bye frame when the transport closes.
  void set_progress(std::uint64_t last_done_seq) {
    progress_.store(last_done_seq + 1, std::memory_order_relaxed);
  }
  // The last completed seq `peer` was known to reach (its latest frame); -1 = none.
  std::int64_t peer_progress(int peer);
  // Fails pending ops and closes every socket (peers see EOF). Called by the transport.
  void close();

 private:
  // engine.cc: matching and bookkeeping (mu_ held).
  void complete(Op* op, Status st);
  void fail_peer(Peer& p, Status st);
  // Fails every pending op of `p` and drops queued frames that carry user data (a frame
  // already partly written is finished from a private copy); control frames stay.
  void drop_pending(Peer& p, const Status& st);
  Status lost_status(const Peer& p) const;
  void post_recv_locked(Peer& p, Op* op);
  // Completes `op` from a matching unexpected message; false when none matches.
  bool take_unexpected(Peer& p, Op* op);
  void post_send_locked(Peer& p, Op* op);
  // Queues `op`'s payload behind a header of `kind` (eager, data or put; arg = rdv_id).
  void queue_payload(Peer& p, Op* op, FrameKind kind);
  // Removes the peer's rtr for `op`'s tag; true when it fits `op` (size and signature),
  // so the payload may go at once (then op->rdv_id is the rtr's id).
  bool take_ready(Peer& p, Op* op);
  void answer_rts(Peer& p, Op* op, std::uint64_t rdv_id, std::uint64_t length);
  void queue_control(Peer& p, FrameKind kind, transport::Tag tag, std::uint64_t length,
                     std::uint64_t arg);
  void cancel_send(Peer& p, Op* op);
  Status timeout_status(std::span<Op* const> ops) const;
  // One poll over every socket; `phase` says whether it may block (kBlock) or not (then
  // it pauses the cpu or yields when nothing happened). False when nothing happened.
  bool progress_round(std::unique_lock<std::mutex>& lk, Deadline deadline,
                      SpinPolicy::Phase phase);
  // Graceful close: flush queued frames, send FIN, and read until the peers' FIN (bounded),
  // so that unread bytes never turn our close into a reset that destroys data in flight.
  void linger_close(std::unique_lock<std::mutex>& lk);
  void wake();

  // engine_abort.cc: abort frames out and in, signature mismatches (mu_ held unless noted).
  // Records the abort (abort_mu_ only); false when the engine was already aborted.
  bool begin_abort(const Status& st, int origin, const std::string& text);
  void broadcast_abort_locked();
  void on_abort_frame(Peer& p);
  // After abort: writes what is still queued (abort frames), bounded by the linger time.
  void flush_after_abort(std::unique_lock<std::mutex>& lk);
  // Fails receive `op` whose message (tag `msg`) belongs to another operation, and tells
  // the sender with a desync frame (rdv_id of a rendezvous message, else 0).
  void reject_signature(Peer& p, Op* op, const transport::Tag& msg, std::uint64_t rdv_id);
  void on_desync(Peer& p, const FrameHeader& h);
  // A message of a later operation from `p` (tag `later`) means `p` finished every
  // earlier operation of that communicator: receives still waiting for one of those from
  // `p` can never match, so they fail with kDesync (e.g. ranks disagree about the root).
  void fail_overtaken(Peer& p, const transport::Tag& later);
  bool overtaken(Peer& p, Op* op);
  // A message from `p` (tag `msg`) claims an operation this rank runs, under another
  // signature (transport::disagree): every posted receive of that (comm, seq), from any
  // peer, fails with kDesync.
  void fail_foreign(Peer& p, const transport::Tag& msg);
  // Receive `op` is about to be posted: fails it (true) when a message of its (comm, seq)
  // from any peer, already here, carries another signature.
  bool foreign(Op* op);
  Status held_disagreement(const transport::Tag& tag) const;
  Status foreign_status(const Peer& p, const transport::Tag& msg, std::uint64_t mine) const;
  Status overtaken_status(const Peer& p, const Op& op, const transport::Tag& later) const;
  Status signature_status(const Peer& p, const transport::Tag& tag, std::uint64_t mine,
                          std::uint64_t theirs, bool receiver) const;
  std::string describe(std::uint64_t sig) const;

  // engine_io.cc: socket I/O and incoming frame dispatch (mu_ held).
  void read_peer(Peer& p);
  void write_peer(Peer& p);
  void on_header(Peer& p);
  void begin_body(Peer& p, Peer::Sink sink, Op* op);
  void finish_body(Peer& p);
  void on_eager(Peer& p, const FrameHeader& h);
  void on_rts(Peer& p, const FrameHeader& h);
  void on_cts(Peer& p, const FrameHeader& h);
  void on_data(Peer& p, const FrameHeader& h);
  void on_nack(Peer& p, const FrameHeader& h);
  void on_rtr(Peer& p, const FrameHeader& h);
  void on_put(Peer& p, const FrameHeader& h);
  void on_cancel(Peer& p, const FrameHeader& h);
  Status desync_status(const Peer& p, transport::Tag tag, std::uint64_t got,
                       std::uint64_t expected) const;

  const int rank_;
  const int size_;
  const std::uint64_t job_token_;
  const std::size_t eager_bytes_;
  const std::int64_t spin_us_;
  const transport::SignatureFormatter describe_sig_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Peer> peers_;  // index = rank; peers_[rank_] unused
  bool polling_ = false;     // a thread is driving progress
  std::optional<SpinPolicy> spin_;  // how the polling thread waits; set on the first wait()
  bool closed_ = false;
  std::vector<pollfd> pfds_;
  std::vector<int> pfd_peer_;
  std::vector<std::uint8_t> scratch_;  // sink for discarded payloads
  UniqueFd wake_fd_;                   // eventfd that interrupts poll()

  std::atomic<std::uint64_t> progress_{0};  // last completed collective seq + 1

  std::atomic<bool> aborted_{false};
  mutable std::mutex abort_mu_;
  Status abort_status_;
  int abort_origin_ = -1;   // rank that first reported the failure
  std::string abort_text_;  // its reason, as sent in abort frames
};

}  // namespace chorus::tcp
