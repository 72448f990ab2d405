// Comm: what the API layer (src/api) calls on a communicator, and nothing more. The one
// implementation is CommImpl (core/comm_impl.h), which owns the communicator's parts: the
// operation path, the failure state and the membership.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algo/selector.h"
#include "bootstrap/store.h"
#include "chorus/profiler.h"
#include "core/comm_settings.h"
#include "core/work_state.h"
#include "op/args.h"
#include "op/kind.h"
#include "util/status.h"

namespace chorus::core {

class Comm {
 public:
  // split()'s color for "not a member" (chorus::Communicator::kNoColor).
  static constexpr int kNoColor = -1;

  virtual ~Comm() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string transport_name() const = 0;
  // What the selector would run for `kind` over `bytes` (count x dtype size), and its
  // predicted time (Communicator::estimate).
  virtual algo::Estimate estimate(op::CollKind kind, std::size_t bytes) const = 0;

  // Runs one collective: stamps comm id, seq and deadline into `args`, picks the
  // algorithm, runs it on this thread (after earlier work of the default stream). Errors
  // carry this rank, the collective's name (`label` when given) and seq. A communication
  // failure (kPeerLost, kTimeout, kDesync, kIo, kInternal) also aborts the transport,
  // which tells every peer, so all ranks fail fast naming the original culprit instead of
  // waiting for their deadlines. Inside a group it is only recorded (returns OK at once).
  virtual Status run(op::CollKind kind, op::CollArgs args, const char* label = nullptr) = 0;
  // Point-to-point; ordered per (sender, receiver, tag): each tag (>= 0) of a pair is its
  // own sequence of messages. Failures propagate as in run().
  virtual Status send(const void* buf, std::size_t bytes, int peer, int tag = 0) = 0;
  virtual Status recv(void* buf, std::size_t bytes, int peer, int tag = 0) = 0;
  // Receive from any source (src/core/comm_any_source.cc): waits (within the timeout)
  // until some other rank's next message of tag `tag` to this rank has arrived
  // (Transport::probe over every peer, each at this pair's next receive seq, starting after
  // the last source chosen, so no sender starves), then receives it like recv() from that
  // rank, consuming that pair's seq. Returns the source rank. kInvalidArgument inside a
  // group or for a negative tag; kNotSupported when the transport cannot probe.
  virtual Result<int> recv_any(void* buf, std::size_t bytes, int tag = 0) = 0;
  // The asynchronous form: starts after the earlier operations of `stream`, then waits for
  // a source on the communicator's own "any_source" worker (so it never holds back later
  // operations of `stream`; receives from any source match in issue order among
  // themselves); the WorkState reports the source (WorkState::source()) and that pair's seq.
  virtual Result<std::shared_ptr<WorkState>> recv_any_async(void* buf, std::size_t bytes,
                                                            int tag, int stream) = 0;

  // --- Asynchronous operations (src/core/comm_async.cc) ---------------------------
  // Issues the collective now (seq in program order) and queues its execution on stream
  // `stream` (0 = default). Returns its WorkState; an operation refused at issue (the
  // communicator failed or was aborted) comes back as an already failed WorkState.
  // kInvalidArgument (the only error) for an unknown stream. Inside a group the
  // operation is recorded and runs at group_end().
  virtual Result<std::shared_ptr<WorkState>> run_async(op::CollKind kind, op::CollArgs args,
                                                       int stream) = 0;
  // A send/receive starts (is posted) after the earlier operations of its stream (their
  // collectives completed, their sends and receives posted) and completes on its own
  // (P2pWaiter): later operations, sends and receives included, never wait for it.
  virtual Result<std::shared_ptr<WorkState>> p2p_async(bool sending, void* buf,
                                                       std::size_t bytes, int peer, int stream,
                                                       int tag = 0) = 0;
  // A new stream (id 1, 2, ...); its worker starts on first use.
  virtual int create_stream(const std::string& name) = 0;
  // kInvalidArgument naming "stream" unless `id` names one of this communicator's streams.
  virtual Status check_stream(int id) const = 0;
  // Waits for every operation queued so far on every stream, and for the sends and
  // receives in flight; the communicator's first failure (or kAborted) if there was one.
  virtual Status synchronize() = 0;
  // Groups (src/core/group.cc): nesting counted; the outermost group_end() runs the
  // recorded operations as one unit and waits: point-to-point requests are posted first,
  // the collectives run in issue order (consecutive compatible all_reduces fused into
  // one), then the requests are waited for. Returns the first failure among them;
  // kInvalidArgument for group_end() without group_start().
  virtual void group_start() = 0;
  virtual Status group_end() = 0;
  virtual bool in_group() const = 0;

  // Logical OR of `flag` over all ranks (an all_reduce MAX of one byte); fails like run().
  // kInvalidArgument inside a group (its result is needed at once).
  virtual Result<bool> agree(bool flag) = 0;

  // Membership (core/membership.h). shrink(): the ranks that call it agree through the
  // store on who is alive and build a new communicator of them (old rank order, fresh
  // keys, token and connections); this one is aborted. Bounded by connect_timeout (+2 s
  // for the member list); kPeerLost when this rank is not a member.
  virtual Result<std::unique_ptr<Comm>> shrink() = 0;
  // split(): a collective on this communicator (an all_gather of every rank's (color,
  // key), labelled "split", with a seq number like any collective); ranks with the same
  // color >= 0 build a new communicator ordered by (key, old rank), keys under
  // "<prefix>chorus/comm<id>/split<k>/c<color>/", with fresh connections and this
  // communicator's config. OK with nullptr for color kNoColor (-1). kInvalidArgument
  // (before any communication) for color < -1.
  virtual Result<std::unique_ptr<Comm>> split(int color, int key) = 0;
  // split() with color 0 for the ranks in `ranks` (key = position) and kNoColor for the
  // others. kInvalidArgument (before any communication) for an empty list, a rank out of
  // range or listed twice; also (on every rank, after the exchange) when ranks passed
  // different lists.
  virtual Result<std::unique_ptr<Comm>> new_group(const std::vector<int>& ranks) = 0;

  // A verified all_reduce bounded by `timeout`; never fails, the report says how it went.
  // A failed check leaves the communicator failed, like any other operation.
  struct Health {
    Status status;
    int ranks_responding = 0;
    std::chrono::microseconds elapsed{0};
  };
  virtual Health health_check(std::chrono::milliseconds timeout) = 0;
  // Deadline of later operations; 0 = back to the communicator's configured timeout.
  virtual void set_timeout(std::chrono::milliseconds timeout) = 0;
  virtual std::chrono::milliseconds timeout() const = 0;

  // Fails every pending, queued and future operation with kAborted and tells the peers.
  // Thread-safe, callable while another thread is inside run() or streams are running;
  // never blocks on the network. Idempotent.
  virtual void abort() = 0;
  // abort() on every live communicator of this process.
  static void abort_all();

  // The flight recorder's versioned text and JSON dumps (docs/DIAGNOSTICS.md); `reason`
  // goes into their header. Thread-safe.
  virtual std::string flight_record(const char* reason) const = 0;
  virtual std::string flight_record_json(const char* reason) const = 0;

  // --- Observation (src/core/comm_observe.cc) ---------------------------------------
  // This rank's per-operation statistics (empty unless CHORUS_STATS=1 or Options::stats).
  virtual std::vector<OpStatsRow> stats() const = 0;
  // The same as a text table.
  virtual std::string stats_text() const = 0;
  // Installs (or with nullptr removes) a profiler. REQUIRES: no operation in flight.
  virtual void set_profiler(std::shared_ptr<Profiler> profiler) = 0;
};

// Rendezvous through `store` (keys under "<key_prefix>chorus/comm<id>/", the init
// counter under "<key_prefix>chorus/init/<rank>"), connect the transport.
// `keepalive` is held for the communicator's lifetime (e.g. a store server).
Result<std::unique_ptr<Comm>> create_comm(int rank, int size,
                                          std::shared_ptr<bootstrap::Store> store,
                                          const CommConfig& cfg,
                                          std::shared_ptr<void> keepalive = nullptr,
                                          const std::string& key_prefix = "");

}  // namespace chorus::core
