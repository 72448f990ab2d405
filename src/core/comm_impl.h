// CommImpl: one communicator's state (rank, size, transport, store, op sequence, streams)
// and the path of every operation from validated arguments to an algorithm: an issue step
// on the caller's thread, then an execute step (inline, on a stream's worker, or at the
// end of a group).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algo/algorithm.h"
#include "algo/selector.h"
#include "bootstrap/store.h"
#include "core/comm_config.h"
#include "core/comm_diag.h"
#include "core/issued_op.h"
#include "core/observer.h"
#include "core/p2p_waiter.h"
#include "core/stream_queue.h"
#include "core/window_tickets.h"
#include "core/work_state.h"
#include "diag/flight_recorder.h"
#include "transport/transport.h"
#include "util/status.h"

namespace chorus::core {

class CommImpl {
 public:
  // split()'s color for "not a member" (chorus::Communicator::kNoColor).
  static constexpr int kNoColor = -1;

  // Rendezvous through `store` (keys under "<key_prefix>chorus/comm<id>/", the init
  // counter under "<key_prefix>chorus/init/<rank>"), connect the transport.
  // `keepalive` is held for the communicator's lifetime (e.g. a store server).
  static Result<std::unique_ptr<CommImpl>> create(int rank, int size,
                                                  std::shared_ptr<bootstrap::Store> store,
                                                  const CommConfig& cfg,
                                                  std::shared_ptr<void> keepalive = nullptr,
                                                  const std::string& key_prefix = "");
  ~CommImpl();

  int rank() const { return rank_; }
  int size() const { return size_; }
  std::string transport_name() const { return transport_->name(); }
  // What the selector would run for `kind` over `bytes` (count x dtype size), and its
  // predicted time (Communicator::estimate).
  algo::Estimate estimate(algo::CollKind kind, std::size_t bytes) const {
    return selector_.estimate(kind, bytes, size_, caps_);
  }

  // Runs one collective: stamps comm id, seq and deadline into `args`, picks the
  // algorithm, runs it on this thread (after earlier work of the default stream). Errors
  // carry this rank, the collective's name (`label` when given) and seq. A communication
  // failure (kPeerLost, kTimeout, kDesync, kIo, kInternal) also aborts the transport,
  // which tells every peer, so all ranks fail fast naming the original culprit instead of
  // waiting for their deadlines. Inside a group it is only recorded (returns OK at once).
  Status run(algo::CollKind kind, algo::CollArgs args, const char* label = nullptr);
  // Point-to-point; ordered per (sender, receiver, tag): each tag (>= 0) of a pair is its
  // own sequence of messages. Failures propagate as in run().
  Status send(const void* buf, std::size_t bytes, int peer, int tag = 0);
  Status recv(void* buf, std::size_t bytes, int peer, int tag = 0);
  // Receive from any source (src/core/comm_any_source.cc): waits (within the timeout)
  // until some other rank's next message of tag `tag` to this rank has arrived
  // (Transport::probe over every peer, each at this pair's next receive seq, starting after
  // the last source chosen, so no sender starves), then receives it like recv() from that
  // rank, consuming that pair's seq. Returns the source rank. kInvalidArgument inside a
  // group or for a negative tag; kNotSupported when the transport cannot probe.
  Result<int> recv_any(void* buf, std::size_t bytes, int tag = 0);
  // The asynchronous form: starts after the earlier operations of `stream`, then waits for
  // a source on the communicator's own "any_source" worker (so it never holds back later
  // operations of `stream`; receives from any source match in issue order among
  // themselves); the WorkState reports the source (WorkState::source()) and that pair's seq.
  Result<std::shared_ptr<WorkState>> recv_any_async(void* buf, std::size_t bytes, int tag,
                                                    int stream);

  // --- Asynchronous operations (src/core/comm_async.cc) ---------------------------
  // Issues the collective now (seq in program order) and queues its execution on stream
  // `stream` (0 = default). Returns its WorkState; an operation refused at issue (the
  // communicator failed or was aborted) comes back as an already failed WorkState.
  // kInvalidArgument (the only error) for an unknown stream. Inside a group the
  // operation is recorded and runs at group_end().
  Result<std::shared_ptr<WorkState>> run_async(algo::CollKind kind, algo::CollArgs args,
                                               int stream);
  // A send/receive starts (is posted) after the earlier operations of its stream (their
  // collectives completed, their sends and receives posted) and completes on its own
  // (P2pWaiter): later operations, sends and receives included, never wait for it.
  Result<std::shared_ptr<WorkState>> p2p_async(bool sending, void* buf, std::size_t bytes,
                                               int peer, int stream, int tag = 0);
  // A new stream (id 1, 2, ...); its worker starts on first use.
  int create_stream(const std::string& name);
  // kInvalidArgument naming "stream" unless `id` names one of this communicator's streams.
  Status check_stream(int id) const;
  // Waits for every operation queued so far on every stream, and for the sends and
  // receives in flight; the communicator's first failure (or kAborted) if there was one.
  Status synchronize();
  // Groups (src/core/group.cc): nesting counted; the outermost group_end() runs the
  // recorded operations as one unit and waits: point-to-point requests are posted first,
  // the collectives run in issue order (consecutive compatible all_reduces fused into
  // one), then the requests are waited for. Returns the first failure among them;
  // kInvalidArgument for group_end() without group_start().
  void group_start() { ++group_depth_; }
  Status group_end();
  bool in_group() const { return group_depth_ > 0; }

  // Logical OR of `flag` over all ranks (an all_reduce MAX of one byte); fails like run().
  // kInvalidArgument inside a group (its result is needed at once).
  Result<bool> agree(bool flag);

  // Recovery (src/core/shrink.cc, src/core/health.cc). shrink(): the ranks that call it
  // agree through the store on who is alive and build a new communicator of them (old
  // rank order, fresh keys, token and connections); this one is aborted. Bounded by
  // connect_timeout (+2 s for the member list); kPeerLost when this rank is not a member.
  Result<std::unique_ptr<CommImpl>> shrink();
  // Sub-communicators (src/core/split.cc). split(): a collective on this communicator
  // (an all_gather of every rank's (color, key), labelled "split", with a seq number like
  // any collective); ranks with the same color >= 0 build a new communicator ordered by
  // (key, old rank), keys under "<prefix>chorus/comm<id>/split<k>/c<color>/", with fresh
  // connections and this communicator's config. OK with nullptr for color kNoColor (-1).
  // kInvalidArgument (before any communication) for color < -1.
  Result<std::unique_ptr<CommImpl>> split(int color, int key);
  // split() with color 0 for the ranks in `ranks` (key = position) and kNoColor for the
  // others. kInvalidArgument (before any communication) for an empty list, a rank out of
  // range or listed twice; also (on every rank, after the exchange) when ranks passed
  // different lists.
  Result<std::unique_ptr<CommImpl>> new_group(const std::vector<int>& ranks);
  // A verified all_reduce bounded by `timeout`; never fails, the report says how it went.
  // A failed check leaves the communicator failed, like any other operation.
  struct Health {
    Status status;
    int ranks_responding = 0;
    std::chrono::microseconds elapsed{0};
  };
  Health health_check(std::chrono::milliseconds timeout);
  // Deadline of later operations; 0 = back to the communicator's configured timeout.
  void set_timeout(std::chrono::milliseconds timeout);
  std::chrono::milliseconds timeout() const { return cfg_.timeout; }

  // Fails every pending, queued and future operation with kAborted and tells the peers.
  // Thread-safe, callable while another thread is inside run() or streams are running;
  // never blocks on the network. Idempotent.
  void abort();
  // abort() on every live communicator of this process.
  static void abort_all();

  // The flight recorder's versioned text dump (docs/DIAGNOSTICS.md); `reason` goes into
  // its header. Thread-safe.
  std::string flight_record(const char* reason) const { return recorder_->dump(reason); }
  std::string flight_record_json(const char* reason) const { return recorder_->dump_json(reason); }
  // The automatic dumps' form (failure, SIGUSR1): CHORUS_FLIGHT_RECORDER_FORMAT.
  std::string flight_record_auto(const char* reason) const {
    return diag_.json_dumps ? flight_record_json(reason) : flight_record(reason);
  }

  // --- Observation (src/core/comm_observe.cc) ---------------------------------------
  // This rank's per-operation statistics (empty unless CHORUS_STATS=1 or Options::stats).
  std::vector<OpStatsRow> stats() const;
  // The same as a text table.
  std::string stats_text() const;
  // Installs (or with nullptr removes) a profiler. REQUIRES: no operation in flight.
  void set_profiler(std::shared_ptr<Profiler> profiler);

 private:
  struct AsyncTask;  // comm_async.cc: a PendingOp run by a stream's worker
  struct AnySourceTask;  // comm_any_source.cc: recv_any_async's two steps
  friend class GroupRun;  // group.cc: the execution of one group
  CommImpl(int rank, int size, CommConfig cfg, algo::Selector selector);
  // Issue steps (caller's thread): refuse-check, seq, signature, flight-recorder entry;
  // collectives outside a group also get their algorithm and window ticket.
  Status issue_collective(algo::CollKind kind, const algo::CollArgs& args, const char* label,
                          int stream, IssuedOp* out);
  Status issue_p2p(bool sending, void* buf, std::size_t bytes, int peer, int tag, int stream,
                   IssuedOp* out, const char* name = nullptr);
  // The wire tag of a point-to-point message of `bytes` under user tag `tag`, pair seq `seq`.
  transport::Tag p2p_wire_tag(std::size_t bytes, int tag, std::uint64_t seq) const;
  // The seq the next (direction, peer, tag) message will take (p2p_seq_mu_ taken).
  std::uint64_t peek_p2p_seq(bool sending, int peer, int tag);
  // recv_any's work on this thread: probes every peer for its next message of `tag`, then
  // issues the receive from the peer found into `op` (named "recv_any"; that pair's seq
  // taken), bounded by `deadline`. `rec`: the flight-recorder entry of the wait.
  Status claim_any_source(void* buf, std::size_t bytes, int tag, int stream, Deadline deadline,
                          std::uint64_t rec, IssuedOp* op);
  // The next seq of (direction, peer, tag), advanced.
  std::uint64_t next_p2p_seq(bool sending, int peer, int tag);
  // Blocking send (sending) or recv: issue + execute here, or record in the open group.
  Status point_to_point(bool sending, void* buf, std::size_t bytes, int peer, int tag);
  // Asynchronous send/recv (stream worker, src/core/p2p_async.cc): posts the transfer and
  // hands it to p2p_waiter_, which completes `p`'s WorkState.
  void post_p2p(std::unique_ptr<PendingOp> p);
  // The algorithm (and window ticket when it uses the windows) of an issued collective.
  void choose(IssuedOp& op);
  // Execute steps (any thread): the deadline starts here; waits for the window ticket;
  // runs the algorithm or the point-to-point transfer; marks the recorder; fails.
  Status execute(IssuedOp& op);
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
  // Dump + cross-rank hang report of fail(); bounded by kHangReportBudget. Once.
  void report_failure();
  // This rank's hang-report line in `state` ("failed", "exited", ...).
  diag::RankLine own_line(const char* state, const std::string& detail) const;
  // "rank 2 (host h pid 7) was lost; the last operation it was known to have completed was
  // seq 9" (host/pid from init, seq from the transport's progress of that peer).
  std::string lost_rank_text(int peer) const;
  // Host and pid of every rank ("" / -1 when unknown), gathered at init.
  std::vector<diag::RankLine> known_ranks() const;
  // The sticky failure, or kAborted after abort(); OK when the communicator is usable.
  Status refuse(const char* what, std::uint64_t seq) const;
  // A new communicator (rank `new_rank` of `new_size`) from the same store, with this
  // one's config (configured timeout) and keys nested under
  // "<key_prefix_>chorus/comm<id>/<sub_prefix>/": shrink() and split() build with it.
  Result<std::unique_ptr<CommImpl>> derive(int new_rank, int new_size,
                                           const std::string& sub_prefix) const;
  // split()'s work, with `digest` (0, or new_group's list digest) checked equal on all ranks.
  Result<std::unique_ptr<CommImpl>> split_checked(int color, int key, std::int64_t digest,
                                                  const char* label);
  // The sticky failure as recorded (OK when none).
  Status first_failure() const;
  // The same once the liveness question of a timeout is answered (waits for it, bounded).
  Status settled_failure() const;

  // --- After a timeout: which ranks stopped making progress (src/core/stalled.cc) ------
  // The rank a timeout names is the one this rank waited on, which may itself wait on the
  // stalled rank. report_failure() publishes this rank's hang line and gathers the others'
  // through the store; the ranks that published nothing within the bound are the
  // stalled ones. settle_liveness() records them from the gathered `lines` (empty: not
  // known) and decorates the sticky failure; name_stalled() waits for that (bounded) and
  // decorates `s`: " (stalled: rank S (host h pid p) did not answer ...)", peer() = S.
  void settle_liveness(const std::vector<diag::RankLine>& lines);
  Status name_stalled(const Status& s) const;
  // `s` with the stalled-rank text appended, once (fail_mu_ held).
  Status with_stalled_locked(const Status& s) const;
  // Waits until no liveness question is pending, at most its budget (fail_mu_ held in `lk`).
  void wait_liveness_locked(std::unique_lock<std::mutex>& lk) const;
  // At create(): the timeline (clock alignment when this process opens it first) and the
  // statistics, when configured; leaves observe_ null otherwise.
  Status start_observing();
  // Collective `seq` completed: tells the transport (kPeerLost messages of the peers
  // name the highest seq this rank completed).
  void note_progress(std::uint64_t seq);
  std::atomic<std::uint64_t> done_max_{0};  // highest completed collective seq + 1

  int rank_;
  int size_;
  CommConfig cfg_;
  algo::Selector selector_;
  std::uint32_t comm_id_ = 0;
  std::uint64_t next_seq_ = 0;
  std::vector<std::uint64_t> send_seq_;  // per peer, point-to-point, tag 0
  std::vector<std::uint64_t> recv_seq_;
  std::map<std::pair<int, int>, std::uint64_t> tagged_send_seq_;  // (peer, tag != 0)
  std::map<std::pair<int, int>, std::uint64_t> tagged_recv_seq_;
  // Guards the four p2p seq tables above: receives from any source take a pair's seq on
  // the any_source worker while the caller issues (recursive: claim_any_source issues).
  std::recursive_mutex p2p_seq_mu_;
  int any_last_ = -1;  // the source last chosen by a receive from any source (p2p_seq_mu_)
  mutable std::mutex fail_mu_;
  Status failed_;  // sticky: first communication error (fail_mu_)
  std::atomic<bool> has_failed_{false};  // failed_ is set (read without the lock)
  bool liveness_pending_ = false;  // the liveness question of a timeout runs (fail_mu_)
  mutable std::condition_variable liveness_cv_;  // liveness_pending_ became false
  std::string stalled_text_;  // " (stalled: ...)" or "" (fail_mu_)
  int stalled_rank_ = -1;     // the stalled rank errors name as peer() (fail_mu_)
  std::atomic<bool> aborted_{false};  // abort() was called (any thread)
  std::shared_ptr<bootstrap::Store> store_;
  std::shared_ptr<bootstrap::Store> comm_store_;  // store_ under "chorus/comm<id>"
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
  std::atomic<bool> reported_{false};  // hang line published (once)
  std::unique_ptr<transport::Transport> transport_;
  // After transport_ (destroyed before it): completes the asynchronous sends and receives.
  std::unique_ptr<P2pWaiter> p2p_waiter_;
  algo::Capabilities caps_;  // of transport_, read once when it is built
  std::shared_ptr<void> keepalive_;
  const std::chrono::milliseconds configured_timeout_ = cfg_.timeout;  // set_timeout(0)
  std::string key_prefix_;    // of create(); shrink() nests the new keys under ours
  unsigned shrink_attempts_ = 0;
  unsigned splits_ = 0;       // split()/new_group() calls: names each one's keys
};

}  // namespace chorus::core
