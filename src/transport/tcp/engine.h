// The TCP medium under the one engine (transport/engine): non-blocking socket I/O of
// frames (eager, and rendezvous: rts/cts/data or rtr/put), incoming frame dispatch, abort
// frames, and a graceful close. Progress rounds poll every peer socket plus an eventfd
// that interrupts a blocked poll.
#pragma once
#include <poll.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "transport/engine/engine.h"
#include "transport/tcp/mesh.h"
#include "transport/tcp/peer.h"
#include "transport/tcp/tcp_transport.h"

namespace chorus::tcp {

class Engine final : public engine::Engine {
 public:
  Engine(const TcpOptions& opts, Mesh mesh);
  ~Engine() override;

  // This rank's last completed collective seq (one relaxed store); stamped into every
  // frame header from now on, and into a bye frame when the transport closes.
  void set_progress(std::uint64_t last_done_seq) {
    progress_.store(last_done_seq + 1, std::memory_order_relaxed);
  }
  // The last completed seq `peer` was known to reach (its latest frame); -1 = none.
  std::int64_t peer_progress(int peer);
  // Fails pending ops, says bye (or flushes abort frames) and closes every socket.
  void close() override;

 private:
  // Hooks of engine::Engine (mu_ held).
  engine::PeerState& peer(int r) override { return peers_[r]; }
  const engine::PeerState& peer(int r) const override { return peers_[r]; }
  void start_send(engine::PeerState& p, Op* op) override;
  void recv_posted(engine::PeerState& p, Op* op) override;
  void accept_offer(engine::PeerState& p, Op* op, const engine::Unexpected& msg) override;
  void refuse(engine::PeerState& p, const engine::Unexpected& msg, const Op& op) override;
  void cancel_in_medium(engine::PeerState& p, Op* op) override;
  void withdrawn(engine::PeerState& p, Op* op) override;
  bool busy(const engine::PeerState& p) const override;
  void drop_in_medium(engine::PeerState& p, const Status& st) override;
  void on_peer_failed(engine::PeerState& p, const Status& st) override;
  bool progress(std::unique_lock<std::mutex>& lk, Deadline deadline, bool block) override;
  void wake() override;
  bool blocks_with_fd() const override { return true; }
  void announce_abort() override;
  Status held_elsewhere(const transport::Tag& tag) const override;

  static Peer& of(engine::PeerState& p) { return static_cast<Peer&>(p); }
  Status lost_status(const Peer& p) const;
  // Queues `op`'s payload behind a header of `kind` (eager, data or put; arg = its id).
  void queue_payload(Peer& p, Op* op, FrameKind kind);
  // Removes the peer's rtr for `op`'s tag; true when it fits `op` (size and signature),
  // so the payload may go at once (then op->id is the rtr's id).
  bool take_ready(Peer& p, Op* op);
  void queue_control(Peer& p, FrameKind kind, transport::Tag tag, std::uint64_t length,
                     std::uint64_t arg);
  void cancel_send(Peer& p, Op* op);
  // Writes what it can now and wakes a blocked poller for the rest.
  void flush(Peer& p);
  // Graceful close: flush queued frames, send FIN, and read until the peers' FIN (bounded),
  // so that unread bytes never turn our close into a reset that destroys data in flight.
  void linger_close(std::unique_lock<std::mutex>& lk);
  // After abort: writes what is still queued (abort frames), bounded by the linger time.
  void flush_after_abort(std::unique_lock<std::mutex>& lk);
  void on_abort_frame(Peer& p);
  void on_desync(Peer& p, const FrameHeader& h);

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

  const std::uint64_t job_token_;
  const std::size_t eager_bytes_;

  std::vector<Peer> peers_;  // index = rank; peers_[rank_] unused
  std::vector<pollfd> pfds_;
  std::vector<int> pfd_peer_;
  std::vector<std::uint8_t> scratch_;  // sink for discarded payloads
  UniqueFd wake_fd_;                   // eventfd that interrupts poll()

  std::atomic<std::uint64_t> progress_{0};  // last completed collective seq + 1
};

}  // namespace chorus::tcp
