// The shared-memory progress engine: per-pair byte rings carrying framed messages,
// matching by (peer, tag), caller-driven progress with spin / yield / futex waiting,
// peer liveness and abort propagation through the segment header.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "transport/shm/backoff.h"
#include "transport/shm/segment.h"
#include "transport/shm/shm_transport.h"
#include "util/unique_fd.h"

namespace chorus::shm {

// Header of one record in a ring: a message (followed by `length` payload bytes, streamed
// as ring space allows) or a NACK (the receiver of `tag` found a size or signature mismatch).
struct RecHeader {
  enum Kind : std::uint32_t { kMsg = 0x4d534731, kNack = 0x4e41434b };
  std::uint32_t kind = kMsg;
  std::uint32_t comm = 0;
  std::uint64_t seq = 0;
  std::uint32_t step = 0;
  std::uint32_t pad = 0;
  std::uint64_t sig = 0;
  std::uint64_t length = 0;  // kMsg: payload bytes; kNack: bytes the receiver expected
  std::uint64_t arg = 0;     // kNack: the receiver's signature
  transport::Tag tag() const { return transport::Tag{comm, seq, step, sig}; }
};
static_assert(sizeof(RecHeader) == 48);

// One posted send or receive; lives inside its Request.
struct Op {
  enum class Kind : std::uint8_t { kSend, kRecv };
  enum class Where : std::uint8_t { kNone, kPosted, kOutQueue, kReading };
  Kind kind = Kind::kSend;
  Where where = Where::kNone;
  int peer = -1;
  transport::Tag tag;
  const std::uint8_t* send_data = nullptr;
  std::uint8_t* recv_data = nullptr;
  std::size_t bytes = 0;
  std::atomic<bool> done{false};  // set (release) after `status` is final
  Status status;
};

struct OutItem {
  RecHeader hdr;
  bool hdr_done = false;
  const std::uint8_t* payload = nullptr;
  std::size_t sent = 0;  // payload bytes written
  Op* op = nullptr;      // completed when the whole record is in the ring
  std::vector<std::uint8_t> owned;  // payload copy once `op` was cancelled mid-record
};

struct Unexpected {
  transport::Tag tag;
  std::vector<std::uint8_t> data;
};

struct Peer {
  enum class Sink : std::uint8_t { kUndecided, kOp, kUnexpected, kDiscard };
  int rank = -1;   // index in the segment
  int name = -1;   // rank number in messages and statuses (ShmOptions::rank_names)
  int pid = 0;
  std::string address;  // "pid P on <host>", for messages
  UniqueFd pidfd;  // readable once the process has exited
  Ring out_ring;   // this rank -> peer
  Ring in_ring;    // peer -> this rank
  Status failed;   // sticky; later posts fail with it
  Status desynced;  // it rejected one of our messages: later posts fail with this
  bool is_failed() const { return !failed.is_ok(); }
  std::deque<OutItem> out;
  std::deque<Op*> posted;
  std::deque<Unexpected> unexpected;
  bool have_hdr = false;  // incoming record whose header has been read
  RecHeader in_hdr;
  Sink sink = Sink::kUndecided;
  Op* in_op = nullptr;
  std::vector<std::uint8_t> in_buf;
  std::uint64_t in_pos = 0;
};

// True when a message (tag, length) does not fit receive `op`: the size differs, or both
// signatures are set and differ.
inline bool differs(const transport::Tag& got, std::uint64_t got_len, const Op* op) {
  return got_len != op->bytes || transport::signatures_differ(got.sig, op->tag.sig);
}

// Thread-safe; one mutex guards all state. The thread driving progress drops it while it
// yields or sleeps on the doorbell.
class Engine {
 public:
  Engine(const ShmOptions& opts, Segment seg);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  Status post(Op* op);
  void cancel(Op* op);
  Status wait(std::span<Op* const> ops, Deadline deadline);
  // One round of progress without blocking, unless another thread is driving it.
  void poke();
  // No pending request and nothing queued to write (transport::Transport::idle()).
  bool idle();
  // transport::Transport::disagreement(): a held message of tag's operation with another
  // signature.
  Status disagreement(const transport::Tag& tag);
  // Fails everything with `reason` and publishes it in our rank slot, where every peer
  // sees it (the first abort wins; later ones are ignored).
  void abort(const Status& reason);
  bool aborted() const { return aborted_.load(std::memory_order_acquire); }
  Status abort_status() const;
  // Marks this rank departed (peers see kPeerLost only for work pending with it).
  void close();
  // Shared windows (windows.cc): see transport::SharedWindows.
  const Segment& segment() const { return seg_; }
  // How messages name peer `r`: its rank number (ShmOptions::rank_names) and "pid P on HOST".
  int peer_name(int r) const { return peers_[r].name; }
  const std::string& peer_address(int r) const { return peers_[r].address; }
  Status window_barrier(const transport::Tag& tag, Deadline deadline);
  // The status for a failed single-copy read of `rank`'s memory (windows.cc): a dying
  // process loses its memory (EFAULT) a moment before it is gone, so this waits up to a
  // second for the peer to be seen lost or an abort, and returns `read_error` otherwise.
  Status single_copy_failure(int rank, Status read_error);
  std::uint64_t window_barriers() const { return win_count_.load(std::memory_order_relaxed); }

 private:
  // engine.cc (mu_ held)
  void complete(Op* op, Status st);
  void fail_peer(Peer& p, Status st);
  bool take_unexpected(Peer& p, Op* op);
  void queue_nack(Peer& p, const transport::Tag& tag, std::size_t expected, std::uint64_t sig);
  // engine_abort.cc: abort words, mismatches (kDesync) on both sides (mu_ held unless noted).
  // Records the abort (abort_mu_ only); false when the engine was already aborted.
  bool begin_abort(const Status& st, int origin, const std::string& text);
  // Writes the recorded abort into our rank slot and wakes every rank (no lock needed).
  void publish_abort();
  // Peer `p` published an abort: adopt it ("rank R reports: ...") and forward it.
  void on_peer_abort(const Peer& p);
  // Fails every pending op with `p` (a record already started is finished from a copy).
  void drop_pending(Peer& p, const Status& st);
  Status mismatch(const Peer& p, const transport::Tag& got, std::uint64_t got_len,
                  const transport::Tag& want, std::size_t want_len) const;
  Status signature_status(const Peer& p, const transport::Tag& tag, std::uint64_t mine,
                          std::uint64_t theirs, bool receiver) const;
  void on_nack(Peer& p, const RecHeader& h);
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
  std::string describe(std::uint64_t sig) const;
  // engine_io.cc (mu_ held)
  bool write_peer(Peer& p);
  bool read_peer(Peer& p, bool final);
  bool decide_sink(Peer& p, bool final);
  void finish_record(Peer& p);
  bool progress_all();
  void check_peers();
  Status timeout_status(std::span<Op* const> ops) const;
  // windows.cc: the first rank behind `target` that can never arrive (lost or aborted).
  Status window_failure(std::uint64_t target);
  // windows.cc: kDesync unless every rank arrived at barrier `target` for `tag`'s op.
  Status window_agreement(const transport::Tag& tag, std::uint64_t target) const;
  bool drive(std::unique_lock<std::mutex>& lk, Deadline deadline);
  Status window_disagreement(std::span<Op* const> ops) const;

  const int rank_;
  const int size_;
  const int name_;   // this rank's number in messages (ShmOptions::rank_names)
  const int names_;  // rank numbers in messages are below this (the job's size)
  const std::size_t copy_out_bytes_;
  const transport::SignatureFormatter describe_sig_;
  Segment seg_;
  RankSlot& me_;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Peer> peers_;
  bool polling_ = false;
  bool closed_ = false;
  Backoff backoff_;  // of the driving thread (mu_)
  std::int64_t next_liveness_ns_ = 0;
  std::atomic<std::uint64_t> win_count_{0};  // shared-window barriers reached

  std::atomic<bool> aborted_{false};
  mutable std::mutex abort_mu_;
  Status abort_status_;
  int abort_origin_ = -1;   // rank that first reported the failure
  std::string abort_text_;  // its reason, as published in our slot
};

}  // namespace chorus::shm
