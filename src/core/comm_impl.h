// CommImpl: one communicator's state (rank, size, transport, store, op sequence) and
// the path of every collective from validated arguments to an algorithm.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "algo/algorithm.h"
#include "algo/selector.h"
#include "bootstrap/store.h"
#include "core/comm_diag.h"
#include "diag/flight_recorder.h"
#include "transport/transport.h"
#include "util/status.h"

namespace chorus::core {

// Resolved per-communicator settings (options merged over CHORUS_* config).
struct CommConfig {
  std::chrono::milliseconds timeout{300000};
  std::chrono::milliseconds connect_timeout{60000};
  std::string algo;              // CHORUS_ALGO syntax
  std::size_t chunk_bytes = 1 << 20;
  std::size_t small_bytes = 64 << 10;
  std::size_t eager_bytes = 64 << 10;
  std::size_t socket_buffer_bytes = 4 << 20;
  std::string socket_addr;       // "" = derive from the store connection
  std::string transport = "tcp";
  bool desync_check = true;      // stamp operation signatures into message tags
};

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

  // Runs one collective: stamps comm id, seq and deadline into `args`, picks the
  // algorithm, runs it on this thread. Errors carry this rank, the collective's name
  // (`label` when given) and seq. A communication failure (kPeerLost, kTimeout, kDesync,
  // kIo, kInternal) also aborts the transport, which tells every peer, so all ranks fail
  // fast naming the original culprit instead of waiting for their deadlines.
  Status run(algo::CollKind kind, algo::CollArgs args, const char* label = nullptr);
  // Point-to-point; ordered per (sender, receiver) pair. Failures propagate as in run().
  Status send(const void* buf, std::size_t bytes, int peer);
  Status recv(void* buf, std::size_t bytes, int peer);
  // Logical OR of `flag` over all ranks (an all_reduce MAX of one byte); fails like run().
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

  // Fails every pending and future operation with kAborted and tells the peers.
  // Thread-safe, callable while another thread is inside run(); never blocks on the
  // network. Idempotent.
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

 private:
  CommImpl(int rank, int size, CommConfig cfg, algo::Selector selector);
  // Records `s` (decorated with `context`) as the sticky failure and marks flight-recorder
  // entry `rec` failed. For communication failures it also aborts the transport so every
  // peer learns, then (once) dumps the flight recorder and runs the hang report.
  // Returns the recorded failure.
  Status fail(const Status& s, const std::string& context, std::uint64_t rec);
  // Records a send/recv as issued and started; returns its flight-recorder id.
  std::uint64_t record_p2p(const char* name, std::uint64_t seq, int peer, std::size_t bytes);
  // send (sending) or recv of `bytes` at `buf` with `peer`: tags, recording, failure.
  Status point_to_point(bool sending, void* buf, std::size_t bytes, int peer);
  // Dump + cross-rank hang report of fail(); bounded by kHangReportBudget.
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

  int rank_;
  int size_;
  CommConfig cfg_;
  algo::Selector selector_;
  std::uint32_t comm_id_ = 0;
  std::uint64_t next_seq_ = 0;
  std::vector<std::uint64_t> send_seq_;  // per peer, point-to-point
  std::vector<std::uint64_t> recv_seq_;
  Status failed_;  // sticky: first communication error (touched by the op thread only)
  std::atomic<bool> aborted_{false};  // abort() was called (any thread)
  std::shared_ptr<bootstrap::Store> store_;
  std::shared_ptr<bootstrap::Store> comm_store_;  // store_ under "chorus/comm<id>"
  DiagSettings diag_;
  std::unique_ptr<diag::FlightRecorder> recorder_;
  std::vector<std::string> hosts_;  // per rank, from the "ident" exchange at init
  std::vector<long> pids_;
  bool reported_ = false;  // hang line published (op thread / destructor only)
  std::unique_ptr<transport::Transport> transport_;
  std::shared_ptr<void> keepalive_;
  const std::chrono::milliseconds configured_timeout_ = cfg_.timeout;  // set_timeout(0)
  std::string key_prefix_;    // of create(); shrink() nests the new keys under ours
  unsigned shrink_attempts_ = 0;
  unsigned splits_ = 0;       // split()/new_group() calls: names each one's keys
};

}  // namespace chorus::core
