// CommImpl: the one implementation of Comm (core/comm.h) and the owner of a communicator's
// parts: its identity (rank, size, comm id, transport, store, flight recorder), the
// operation path (issue and execute steps: comm_ops.cc, streams: comm_async.cc, groups:
// group.cc, receives from any source: comm_any_source.cc, window tickets), the failure
// state (FailureState: sticky failure, abort, stalled ranks; the report that a failure
// makes: comm_report.cc) and the membership (Membership: derive, split, shrink).
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "algo/selector.h"
#include "bootstrap/store.h"
#include "core/comm.h"
#include "core/comm_diag.h"
#include "core/comm_settings.h"
#include "core/failure_state.h"
#include "core/issued_op.h"
#include "core/observer.h"
#include "core/p2p_seqs.h"
#include "core/p2p_waiter.h"
#include "core/placement.h"
#include "core/stream_queue.h"
#include "core/window_tickets.h"
#include "core/work_state.h"
#include "diag/flight_recorder.h"
#include "op/args.h"
#include "op/kind.h"
#include "transport/transport.h"
#include "util/status.h"

namespace chorus::core {

class Membership;

class CommImpl final : public Comm {
 public:
  // Comm::create_comm() for the rest of core, which needs the implementation.
  static Result<std::unique_ptr<CommImpl>> create(int rank, int size,
                                                  std::shared_ptr<bootstrap::Store> store,
                                                  const CommConfig& cfg,
                                                  std::shared_ptr<void> keepalive = nullptr,
                                                  const std::string& key_prefix = "");
  ~CommImpl() override;

  // --- Comm (the contracts are in core/comm.h) ----------------------------------------
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string transport_name() const override { return transport_->name(); }
  algo::Estimate estimate(op::CollKind kind, std::size_t bytes) const override {
    return selector_for(pricing_).estimate(kind, bytes, size_, caps_);
  }
  Status run(op::CollKind kind, op::CollArgs args, const char* label = nullptr) override;
  Status send(const void* buf, std::size_t bytes, int peer, int tag = 0) override;
  Status recv(void* buf, std::size_t bytes, int peer, int tag = 0) override;
  Result<int> recv_any(void* buf, std::size_t bytes, int tag = 0) override;
  Result<std::shared_ptr<WorkState>> recv_any_async(void* buf, std::size_t bytes, int tag,
                                                    int stream) override;
  Result<std::shared_ptr<WorkState>> run_async(op::CollKind kind, op::CollArgs args,
                                               int stream) override;
  Result<std::shared_ptr<WorkState>> p2p_async(bool sending, void* buf, std::size_t bytes,
                                               int peer, int stream, int tag = 0) override;
  int create_stream(const std::string& name) override;
  Status check_stream(int id) const override;
  Status synchronize() override;
  void group_start() override { ++group_depth_; }
  Status group_end() override;
  bool in_group() const override { return group_depth_ > 0; }
  Result<bool> agree(bool flag) override;
  Result<std::unique_ptr<Comm>> shrink() override;
  Result<std::unique_ptr<Comm>> split(int color, int key) override;
  Result<std::unique_ptr<Comm>> new_group(const std::vector<int>& ranks) override;
  Health health_check(std::chrono::milliseconds timeout) override;
  void set_timeout(std::chrono::milliseconds timeout) override;
  std::chrono::milliseconds timeout() const override { return cfg_.timeout; }
  void abort() override;
  std::string flight_record(const char* reason) const override {
    return recorder_->dump(reason);
  }
  std::string flight_record_json(const char* reason) const override {
    return recorder_->dump_json(reason);
  }
  std::vector<OpStatsRow> stats() const override;
  std::string stats_text() const override;
  void set_profiler(std::shared_ptr<Profiler> profiler) override;

  // --- Within core ---------------------------------------------------------------------
  // The automatic dumps' form (failure, SIGUSR1): CHORUS_FLIGHT_RECORDER_FORMAT.
  std::string flight_record_auto(const char* reason) const {
    return diag_.json_dumps ? flight_record_json(reason) : flight_record(reason);
  }
  std::uint32_t comm_id() const { return comm_id_; }
  // The store under "<key_prefix>chorus/comm<id>" (this communicator's keys).
  const std::shared_ptr<bootstrap::Store>& comm_store() const { return comm_store_; }
  const FailureState& failure() const { return failure_; }

 private:
  struct AsyncTask;  // comm_async.cc: a PendingOp run by a stream's worker
  struct AnySourceTask;  // comm_any_source.cc: recv_any_async's two steps
  friend class GroupRun;  // group.cc: the execution of one group
  CommImpl(int rank, int size, CommConfig cfg, algo::Selector selector);
  // Issue steps (caller's thread): refuse-check, seq, signature, flight-recorder entry;
  // collectives outside a group also get their algorithm and window ticket. `alone`: a
  // lone_call() (IssuedOp::alone).
  Status issue_collective(op::CollKind kind, const op::CollArgs& args, const char* label,
                          int stream, IssuedOp* out, bool alone = false);
  Status issue_p2p(bool sending, void* buf, std::size_t bytes, int peer, int tag, int stream,
                   IssuedOp* out, const char* name = nullptr);
  // The wire tag of a point-to-point message of `bytes` under user tag `tag`, pair seq `seq`.
  transport::Tag p2p_wire_tag(std::size_t bytes, int tag, std::uint64_t seq) const;
  // recv_any's work on this thread: probes every peer for its next message of `tag`, then
  // issues the receive from the peer found into `op` (named "recv_any"; that pair's seq
  // taken), bounded by `deadline`. `rec`: the flight-recorder entry of the wait.
  Status claim_any_source(void* buf, std::size_t bytes, int tag, int stream, Deadline deadline,
                          std::uint64_t rec, IssuedOp* op);
  // Blocking send (sending) or recv: issue + execute here, or record in the open group.
  Status point_to_point(bool sending, void* buf, std::size_t bytes, int peer, int tag);
  // Asynchronous send/recv (stream worker, src/core/comm_async.cc): posts the transfer and
  // hands it to p2p_waiter_, which completes `p`'s WorkState.
  void post_p2p(std::unique_ptr<PendingOp> p);
  // The algorithm (and window ticket when it uses the windows; none for a lone call) of
  // an issued collective.
  void choose(IssuedOp& op);
  // A blocking collective on a communicator with only its default stream, nothing in
  // flight (after sync_default_stream()) and no open group: it cannot meet another
  // operation in the windows, and its execute step follows its issue on this thread.
  bool lone_call() const {
    return streams_.size() == 1 && inflight_.load(std::memory_order_acquire) == 0 &&
           !in_group();
  }
  // Execute steps (any thread): the deadline starts here; waits for the window ticket;
  // runs the algorithm or the point-to-point transfer; marks the recorder; fails.
  // `start_ns`: diag::tick_now_ns() at the start, when the caller has just read it (a
  // blocking call: its issue time); 0 = read it here. The deadline counts from it (a
  // tick, 1-4 ms, early at most).
  Status execute(IssuedOp& op, std::int64_t start_ns = 0);
  Status execute_p2p(IssuedOp& op);
  // Marks `sig` kSigUnordered when other operations are in flight (execute steps).
  std::uint64_t order_flag(std::uint64_t sig) const {
    return inflight_.load(std::memory_order_acquire) > 1 ? sig | transport::kSigUnordered : sig;
  }
  // An issued operation finished (after its execute step, whatever the outcome).
  void retire(std::int64_t n = 1) { inflight_.fetch_sub(n, std::memory_order_acq_rel); }
  // A refused operation: releases its ticket, marks its flight-recorder entry failed.
  Status drop(IssuedOp& op, Status why);
  // "rank R in all_reduce seq S (float32 x N, algo ring)" / "rank R in send seq S to ...".
  std::string op_context(const IssuedOp& op) const;
  // Waits for earlier asynchronous work of the default stream (blocking calls).
  void sync_default_stream() {
    if (streams_[0]->outstanding() != 0) streams_[0]->wait_idle();
  }
  // Queues `p` on its stream, or records it in the open group. Returns its WorkState.
  std::shared_ptr<WorkState> submit(std::unique_ptr<PendingOp> p);
  // group.cc: runs the recorded operations of a group (see group_end()).
  Status run_group(std::vector<std::unique_ptr<PendingOp>>& ops);
  // abort() with `reason` (abort() and the destructor's "destroyed with N pending").
  void abort_with(const Status& reason);
  // Records `s` (decorated with `context`) as the sticky failure (the first one wins) and
  // marks flight-recorder entry `rec` failed. For communication failures it also aborts
  // the transport so every peer learns, then (once) dumps the flight recorder and runs
  // the hang report. Returns this operation's decorated failure.
  Status fail(const Status& s, const std::string& context, std::uint64_t rec);
  // Records a send/recv as issued; returns its flight-recorder id.
  std::uint64_t record_p2p(const char* name, std::uint64_t seq, int peer, std::size_t bytes,
                           const char* stream);
  // Dump + cross-rank hang report of fail(); bounded by kHangReportBudget. Once. Settles
  // the liveness question of a timeout in failure_.
  void report_failure();
  // This rank's hang-report line in `state` ("failed", "exited", ...).
  diag::RankLine own_line(const char* state, const std::string& detail) const;
  // "rank 2 (host h pid 7) was lost; the last operation it was known to have completed was
  // seq 9" (host/pid from init, seq from the transport's progress of that peer).
  std::string lost_rank_text(int peer) const;
  // Host and pid of every rank ("" / -1 when unknown), gathered at init.
  std::vector<diag::RankLine> known_ranks() const;
  // At create(): the timeline (clock alignment when this process opens it first) and the
  // statistics, when configured; leaves observe_ null otherwise.
  Status start_observing();
  // Collective `seq` completed: tells the transport (kPeerLost messages of the peers
  // name the highest seq this rank completed). `alone`: a lone call's, the only one running.
  void note_progress(std::uint64_t seq, bool alone = false);
  std::atomic<std::uint64_t> done_max_{0};  // highest completed collective seq + 1

  int rank_;
  int size_;
  CommConfig cfg_;
  algo::Selector selector_;
  // The last choice per kind and the size it was for: the selector's answer depends only
  // on (kind, bytes) for a communicator's life, so a loop of same-sized calls asks once.
  // Issuing thread only.
  struct ChoiceMemo {
    std::size_t bytes = static_cast<std::size_t>(-1);
    Pricing pricing;
    algo::Choice choice{"none", nullptr, false};
  };
  std::array<ChoiceMemo, op::kNumKinds> memo_{};
  // Placement (core/placement.h): the selector's configuration, for the selectors that
  // price cache-line hand-offs `scale` times dearer or single copy through maps of
  // registered memory (built on first use; issuing thread); the agreement on the pricing
  // per collective (null: neither can change, or no shared windows); the pricing of the
  // last choice; whether this rank's buffers of its last collective with a single-copy
  // algorithm were registered.
  algo::SelectorConfig sel_cfg_;
  PlacementPolicy placement_policy_;
  std::unique_ptr<PlacementAgreement> placement_;
  mutable std::array<std::optional<algo::Selector>, 2 * Pricing::kMappedBit> priced_;
  Pricing pricing_;
  bool last_mapped_ = false;
  // The selector for `pricing` (the default: selector_).
  const algo::Selector& selector_for(Pricing pricing) const;
  // At choose(): the pricing agreed for `op` (the default without placement_).
  Pricing agreed_pricing(const IssuedOp& op);
  // Whether this rank's buffers of `op` lie in registered memory (peers map them).
  bool buffers_mapped(const IssuedOp& op) const;
  // At create(): placement_ when the policy and the transport allow it.
  void start_placement();
  std::uint32_t comm_id_ = 0;
  std::uint64_t next_seq_ = 0;
  P2pSeqs p2p_seqs_;  // point-to-point seqs per (direction, peer, tag)
  FailureState failure_;
  std::shared_ptr<bootstrap::Store> comm_store_;  // the store under "chorus/comm<id>"
  DiagSettings diag_;
  // Streams (id = index, 0 = default); touched by the issuing thread only. Declared before
  // the recorder, which keeps pointers to their labels.
  std::vector<std::unique_ptr<StreamQueue>> streams_;
  // recv_any_async's waits for a source (started on first use; not a user stream).
  std::unique_ptr<StreamQueue> any_stream_;
  WindowTickets tickets_;
  // Operations issued and not yet finished (any stream, groups). An operation that starts
  // while others are in flight marks its messages kSigUnordered.
  std::atomic<std::int64_t> inflight_{0};
  int group_depth_ = 0;
  std::vector<std::unique_ptr<PendingOp>> group_;  // recorded inside the open group
  std::unique_ptr<diag::FlightRecorder> recorder_;
  std::unique_ptr<Observer> observe_;  // null when nothing watches the operations
  std::uint32_t local_id_ = 0;  // this process's number of the communicator (OpEvent::comm_id)
  std::vector<std::string> hosts_;  // per rank, from the "ident" exchange at init
  std::vector<long> pids_;
  std::unique_ptr<transport::Transport> transport_;
  // After transport_ (destroyed before it): completes the asynchronous sends and receives.
  std::unique_ptr<P2pWaiter> p2p_waiter_;
  algo::Capabilities caps_;  // of transport_, read once when it is built
  const std::chrono::milliseconds configured_timeout_ = cfg_.timeout;  // set_timeout(0)
  // Derive, split, shrink; holds the store, the keepalive and the key prefix of create().
  std::unique_ptr<Membership> members_;
};

}  // namespace chorus::core
