// The shared-memory medium under the one engine (transport/engine): per-pair byte rings
// carrying framed records, a doorbell futex per rank to sleep on, peer liveness (process
// exit, departure) and abort words in the segment header, and shared-window barriers.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "transport/engine/engine.h"
#include "transport/shm/bells.h"
#include "transport/shm/hand_off.h"
#include "transport/shm/segment.h"
#include "transport/shm/shm_transport.h"
#include "util/unique_fd.h"

namespace chorus::shm {

using engine::Op;

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

struct OutItem {
  RecHeader hdr;
  bool hdr_done = false;
  const std::uint8_t* payload = nullptr;
  std::size_t sent = 0;  // payload bytes written
  Op* op = nullptr;      // completed when the whole record is in the ring
  std::vector<std::uint8_t> owned;  // payload copy once `op` was cancelled mid-record
};

struct Peer : engine::PeerState {
  enum class Sink : std::uint8_t { kUndecided, kOp, kUnexpected, kDiscard };
  int pid = 0;
  UniqueFd pidfd;  // readable once the process has exited
  Ring out_ring;   // this rank -> peer
  Ring in_ring;    // peer -> this rank
  std::deque<OutItem> out;
  bool have_hdr = false;  // incoming record whose header has been read
  RecHeader in_hdr;
  transport::Tag in_tag;  // in_hdr's
  Sink sink = Sink::kUndecided;
  Op* in_op = nullptr;
  std::vector<std::uint8_t> in_buf;
  std::uint64_t in_pos = 0;
};

class Engine final : public engine::Engine {
 public:
  Engine(const ShmOptions& opts, Segment seg, Bells bells = {});
  ~Engine() override;

  // Marks this rank departed (peers see kPeerLost only for work pending with it).
  void close() override;
  // Shared windows (windows.cc): see transport::SharedWindows.
  const Segment& segment() const { return seg_; }
  // How messages name peer `r`: its rank number (ShmOptions::rank_names) and "pid P on HOST".
  int peer_name(int r) const { return peers_[r].name; }
  const std::string& peer_address(int r) const { return peers_[r].address; }
  // With `meanwhile`: run after this rank's arrival, before the wait
  // (transport::SharedWindows::barrier_meanwhile).
  Status window_barrier(const transport::Tag& tag, Deadline deadline,
                        const util::FunctionRef<void()>* meanwhile = nullptr);
  // Small-message mailboxes (windows.cc): see transport::SharedWindows::exchange.
  Status mailbox_exchange(const void* data, std::size_t bytes, const transport::Tag& tag,
                          Deadline deadline);
  const void* mailbox(int rank) const;
  // The status for a failed single-copy read of `rank`'s memory (windows.cc): a dying
  // process loses its memory (EFAULT) a moment before it is gone, so this waits up to a
  // second for the peer to be seen lost or an abort, and returns `read_error` otherwise.
  Status single_copy_failure(int rank, Status read_error);
  std::uint64_t window_barriers() const { return win_count_.load(std::memory_order_relaxed); }
  // The cache-line hand-off sampled at barriers and exchanges (hand_off.h).
  transport::HandOff hand_off() const { return hand_off_.read(); }
  // This rank's bell (bells.h), armed while any thread watches it.
  int event_fd() const override { return bells_.ready() ? bells_.in.get() : -1; }
  void arm_events(bool on) override;

 private:
  // Hooks of engine::Engine (mu_ held).
  engine::PeerState& peer(int r) override { return peers_[r]; }
  const engine::PeerState& peer(int r) const override { return peers_[r]; }
  void start_send(engine::PeerState& p, Op* op) override;
  void recv_posted(engine::PeerState& p, Op* op) override;
  void refuse(engine::PeerState& p, const engine::Unexpected& msg, const Op& op) override;
  void cancel_in_medium(engine::PeerState& p, Op* op) override;
  bool busy(const engine::PeerState& p) const override;
  void drop_in_medium(engine::PeerState& p, const Status& st) override;
  void on_peer_failed(engine::PeerState& p, const Status& st) override;
  bool progress(std::unique_lock<std::mutex>& lk, Deadline deadline, bool block) override;
  void wake() override;
  void announce_abort() override;
  const transport::Tag* parked(const engine::PeerState& p) const override;
  Status after_block(std::span<Op* const> ops) override;
  Status held_elsewhere(const transport::Tag& tag) const override;
  // The two synchronisation points of the slots: window barriers and mailbox exchanges.
  enum class Sync : std::uint8_t { kWindows, kMailbox };
  struct Claim {
    std::uint64_t seq, sig;
  };
  static const char* sync_name(Sync kind) {
    return kind == Sync::kWindows ? "shared-window barrier" : "mailbox exchange";
  }
  // How far slot `s` got: window barriers reached, or the exchange in the mailbox
  // exchange `target` uses (>= target once that rank published for it).
  static std::uint64_t arrived(const RankSlot& s, Sync kind, std::uint64_t target) {
    return kind == Sync::kWindows ? s.win_arrived.load(std::memory_order_acquire)
                                  : s.mailbox[target % 2].stamp.load(std::memory_order_acquire);
  }
  // The last point of `kind` slot `s` arrived at (0: none yet).
  static std::uint64_t latest(const RankSlot& s, Sync kind) {
    if (kind == Sync::kWindows) return s.win_arrived.load(std::memory_order_acquire);
    return std::max(s.mailbox[0].stamp.load(std::memory_order_acquire),
                    s.mailbox[1].stamp.load(std::memory_order_acquire));
  }
  // The operation slot `s` arrived at point `target` for.
  static Claim claim(const RankSlot& s, Sync kind, std::uint64_t target) {
    if (kind == Sync::kWindows)
      return {s.win_seq[target % 2].load(std::memory_order_relaxed),
              s.win_sig[target % 2].load(std::memory_order_relaxed)};
    return {s.mailbox[target % 2].seq.load(std::memory_order_relaxed),
            s.mailbox[target % 2].sig.load(std::memory_order_relaxed)};
  }
  // kDesync when a peer waits at a shared-window barrier or a mailbox exchange this rank
  // has yet to reach, for tag's seq under another signature (it issued a different
  // operation).
  Status claims(const transport::Tag& tag) const;
  // kDesync when a peer that has not arrived at `target` waits at the other kind of point.
  Status stray_peer(Sync kind, std::uint64_t target, const transport::Tag& tag) const;
  // Publishes nothing; waits until every rank arrived at point `target` (windows.cc).
  // `worked_until`: the caller rang the peers' doorbells as it arrived and has done other
  // work since, until this steady-clock time (ns; read at sampled points only): a hand-off
  // sample then counts only a peer that arrived after it.
  Status wait_arrivals(Sync kind, std::uint64_t target, const transport::Tag& tag,
                       Deadline deadline, std::optional<std::int64_t> worked_until = {});
  // windows.cc: at a sampled point, stamps this rank's arrival (before its arrival word);
  // once every rank is seen there by a thread that spun for them, the hand-off sample.
  void stamp_arrival(Sync kind, std::uint64_t target);
  void sample_hand_off(Sync kind, std::uint64_t target, std::optional<std::int64_t> worked_until);
  // Where a rank stamps its sampled arrival at point `target` of `kind`: on the line of
  // the arrival word.
  static std::atomic<std::int64_t>& arrive_ns(RankSlot& s, Sync kind, std::uint64_t target) {
    return kind == Sync::kWindows ? s.win_arrive_ns : s.mailbox[target % 2].arrive_ns;
  }
  // Every rank arrived at `target`: kDesync unless for `tag`'s operation, or the failure
  // of a rank that aborted there.
  Status agreed(Sync kind, std::uint64_t target, const transport::Tag& tag);

  static Peer& of(engine::PeerState& p) { return static_cast<Peer&>(p); }
  // Rings rank r's doorbell (and its bell when it watches it).
  void ring(int r);
  // Rings every other rank's doorbell.
  void ring_peers();
  void queue_nack(Peer& p, const transport::Tag& tag, std::size_t expected, std::uint64_t sig);
  void on_nack(Peer& p, const RecHeader& h);
  void on_peer_abort(const Peer& p);
  // engine_io.cc (mu_ held)
  bool write_peer(Peer& p);
  bool read_peer(Peer& p, bool final);
  bool decide_sink(Peer& p, bool final);
  void finish_record(Peer& p);
  bool progress_all();
  void check_peers();
  // windows.cc: the first rank behind `target` that can never arrive (lost or aborted).
  Status sync_failure(Sync kind, std::uint64_t target);
  // spread.cc: when `peer`, which this thread waits for, last arrived from this thread's
  // processor, moves this thread to the nearest processor of its mask with at least two
  // local ranks fewer, if any.
  void spread_from(int peer);
  // windows.cc: kDesync unless every rank arrived at point `target` for `tag`'s op.
  Status sync_agreement(Sync kind, const transport::Tag& tag, std::uint64_t target) const;

  const std::size_t copy_out_bytes_;
  Segment seg_;
  RankSlot& me_;
  std::vector<Peer> peers_;
  Bells bells_;
  std::atomic<int> bell_watchers_{0};
  std::int64_t next_liveness_ns_ = 0;
  std::atomic<std::uint64_t> win_count_{0};  // shared-window barriers reached
  std::atomic<std::uint64_t> mb_count_{0};   // mailbox exchanges completed
  engine::WaitPolicy::Config win_wait_;         // how a window barrier waits
  std::int64_t next_spread_ns_ = 0;             // spread.cc: no look before (steady clock)
  std::int64_t spread_backoff_ns_ = 0;          // spread.cc: the pause after the last move
  HandOffMeter hand_off_;                       // windows.cc: sampled arrivals
};

}  // namespace chorus::shm
