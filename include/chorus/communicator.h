// A group of ranks that run collectives together.
#pragma once
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "chorus/export.h"
#include "chorus/options.h"
#include "chorus/profiler.h"
#include "chorus/reports.h"
#include "chorus/status.h"
#include "chorus/store.h"
#include "chorus/stream.h"
#include "chorus/types.h"
#include "chorus/work.h"

namespace chorus {

namespace core { class Comm; }

// A communicator of `size()` ranks. Every rank must call the same collectives in the
// same order with matching arguments (count, dtype, op, root).
//
// Buffers: `send` and `recv` are host memory of `count` elements of `dtype` (sizes
// per call below). Passing send == recv runs the collective in place. The plain calls
// are blocking and touch the buffers only during the call; every one has an `_async`
// twin that returns a Work at once and runs on a Stream (buffers in use until the Work
// completes). See "Asynchronous operations" below.
//
// Thread safety: one thread at a time issues operations on a communicator (issue order
// defines the sequence numbers, which must match across ranks) and calls
// create_stream(), synchronize() and the group calls, except abort() and abort_all(),
// which any thread may call at any time (they fail running and queued work promptly);
// Work handles may be waited on from any thread. Different communicators may be used
// from different threads.
//
// Errors (chorus::Error): kInvalidArgument for bad arguments (null buffer with a
// nonzero count, count too large, unknown dtype/op, root or peer out of range);
// kTimeout, kPeerLost, kIo, kDesync during communication; kAborted after abort().
// Every communication error names this rank, the operation and its sequence number,
// and the peer where one is known (Error::peer_rank(); kPeerLost also gives its
// address). A communication error on one rank is sent to every other rank of the
// communicator, whose pending and later operations fail with the same code and the
// message "rank R reports: <R's error>" — so a lost, stalled or mismatched rank makes
// every rank fail within about a second, not after the timeout (docs/DIAGNOSTICS.md).
// After any such error the communicator is unusable; destroy it. A rank that simply
// finishes and destroys its communicator is not an error for the others.
class CHORUS_EXPORT Communicator {
 public:
  // Builds a communicator from the launcher's environment. Looks, in order, for:
  //   CHORUS_RANK / CHORUS_WORLD_SIZE / CHORUS_STORE_ADDR (chorus-run);
  //   RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT (torchrun);
  //   OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_SIZE (Open MPI mpirun);
  //   PMI_RANK / PMI_SIZE (MPICH / Hydra);
  //   SLURM_PROCID / SLURM_NTASKS (srun).
  // Under mpirun/srun the store address comes from CHORUS_STORE_ADDR or
  // MASTER_ADDR/MASTER_PORT (Slurm: first host of SLURM_JOB_NODELIST with
  // MASTER_PORT or 29500); rank 0 then hosts the store itself.
  // Throws kInvalidArgument naming the variables when none is complete or they
  // contradict each other; kTimeout when peers do not show up in time.
  static Communicator init_from_env(const Options& options = {});
  // Builds a communicator of `size` ranks through an explicit store. Every rank calls
  // it with the same size and store contents. REQUIRES: 0 <= rank < size.
  static Communicator init(int rank, int size, std::shared_ptr<Store> store,
                           const Options& options = {});

  Communicator(Communicator&&) noexcept;
  Communicator& operator=(Communicator&&) noexcept;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  ~Communicator();

  int rank() const;
  int size() const;
  // What carries this communicator's bytes: "shm" (every rank on one host), "tcp", or
  // "shm+tcp" (shared memory among the ranks of each host, TCP between hosts).
  std::string transport_name() const;

  // recv[i] = op over ranks of send[i], on every rank; `count` elements each.
  void all_reduce(const void* send, void* recv, std::size_t count, DataType dtype, ReduceOp op);
  // Like all_reduce, but only `root` receives the result (recv may be null elsewhere).
  void reduce(const void* send, void* recv, std::size_t count, DataType dtype, ReduceOp op,
              int root);
  // Copies root's `send` to every rank's `recv` (`count` elements; send is read on
  // root only and may be null elsewhere).
  void broadcast(const void* send, void* recv, std::size_t count, DataType dtype, int root);
  // recv (count * size elements) = concatenation of every rank's send (count each), in
  // rank order. In place: send == recv + rank * count.
  void all_gather(const void* send, void* recv, std::size_t count, DataType dtype);
  // send has count * size elements; rank r receives block r of the reduction
  // (`count` elements). In place: recv == send + rank * count, or recv == send.
  void reduce_scatter(const void* send, void* recv, std::size_t count, DataType dtype,
                      ReduceOp op);
  // Block p (count elements) of send goes to rank p; block q of recv comes from rank q.
  // Both buffers hold count * size elements. In place: send == recv.
  void all_to_all(const void* send, void* recv, std::size_t count, DataType dtype);
  // Variable all_to_all: send_counts[p] elements at send + send_displs[p] go to rank p;
  // recv_counts[q] elements from rank q land at recv + recv_displs[q] (displacements in
  // elements). All spans have size() entries. Counts must match pairwise across ranks.
  // Not in place: the send and receive regions must not overlap.
  void all_to_all_v(const void* send, std::span<const std::size_t> send_counts,
                    std::span<const std::size_t> send_displs, void* recv,
                    std::span<const std::size_t> recv_counts,
                    std::span<const std::size_t> recv_displs, DataType dtype);
  // root's recv (count * size elements) = every rank's send in rank order.
  void gather(const void* send, void* recv, std::size_t count, DataType dtype, int root);
  // Block r (count elements) of root's send goes to rank r's recv.
  void scatter(const void* send, void* recv, std::size_t count, DataType dtype, int root);
  // Point-to-point. Messages between a pair arrive in the order sent; the receiver's
  // count must equal the sender's (kDesync otherwise). REQUIRES: peer != rank().
  void send(const void* buf, std::size_t count, DataType dtype, int peer);
  void recv(void* buf, std::size_t count, DataType dtype, int peer);
  // Tagged: each tag (>= 0; kInvalidArgument naming "tag" otherwise) of a pair is its own
  // ordered sequence of messages, so a receive for tag 2 is matched by the sender's next
  // tag-2 message whatever was sent under other tags before it. Tag 0 is the untagged
  // sequence above. A tag the sender never uses leaves the receive waiting until its
  // deadline (kTimeout naming the peer and tag).
  void send(const void* buf, std::size_t count, DataType dtype, int peer, int tag);
  void recv(void* buf, std::size_t count, DataType dtype, int peer, int tag);
  // Receive from any source: waits for the next message of tag `tag` (default 0) that any
  // other rank sends to this rank, receives it into `buf` (its count must equal the
  // sender's, kDesync otherwise) and returns the sender's rank. The message taken is the
  // sender's next one of that tag to this rank, so per-pair order holds: a later
  // recv(peer) gets that peer's following message. When several senders' messages have
  // arrived, the one after the last source chosen is taken (no sender starves). Bounded by
  // the timeout: kTimeout "... in recv_any from any rank ...: deadline passed waiting for a
  // message from any of peer ranks ..."; kPeerLost when every other rank is gone (or has
  // left) and nothing of theirs waits: a rank that left drops out while others may send.
  // kInvalidArgument for a negative tag, inside a group (its source is needed at once), or
  // on a communicator of one rank.
  int recv_any(void* buf, std::size_t count, DataType dtype, int tag = 0);
  // Returns once every rank has entered the barrier.
  void barrier();

  // --- Asynchronous operations -----------------------------------------------------
  // Each returns at once with a Work; the operation runs on `stream` (default: the
  // default stream) in issue order after the stream's earlier operations. Arguments are
  // checked at issue time (kInvalidArgument thrown by the call itself, exactly as by the
  // blocking twin; also for a Stream of another communicator, naming "stream");
  // communication errors are reported by the Work (and fail the communicator as for
  // blocking calls), as is a call made after the communicator failed or was aborted (the
  // Work comes back already failed). all_to_all_v_async copies its four count and
  // displacement spans; only the data buffers must outlive the Work.
  // Destroying a communicator with operations still pending logs a warning, aborts them
  // (their Works report kAborted; the peers are told, as by abort()) and returns once the
  // stream workers have stopped.
  Work all_reduce_async(const void* send, void* recv, std::size_t count, DataType dtype,
                        ReduceOp op, const Stream& stream = {});
  Work reduce_async(const void* send, void* recv, std::size_t count, DataType dtype,
                    ReduceOp op, int root, const Stream& stream = {});
  Work broadcast_async(const void* send, void* recv, std::size_t count, DataType dtype, int root,
                       const Stream& stream = {});
  Work all_gather_async(const void* send, void* recv, std::size_t count, DataType dtype,
                        const Stream& stream = {});
  Work reduce_scatter_async(const void* send, void* recv, std::size_t count, DataType dtype,
                            ReduceOp op, const Stream& stream = {});
  Work all_to_all_async(const void* send, void* recv, std::size_t count, DataType dtype,
                        const Stream& stream = {});
  Work all_to_all_v_async(const void* send, std::span<const std::size_t> send_counts,
                          std::span<const std::size_t> send_displs, void* recv,
                          std::span<const std::size_t> recv_counts,
                          std::span<const std::size_t> recv_displs, DataType dtype,
                          const Stream& stream = {});
  Work gather_async(const void* send, void* recv, std::size_t count, DataType dtype, int root,
                    const Stream& stream = {});
  Work scatter_async(const void* send, void* recv, std::size_t count, DataType dtype, int root,
                     const Stream& stream = {});
  // Sends and receives start after the earlier operations of their stream (collectives
  // completed, sends and receives posted) but do not hold back later ones: a receive
  // issued before a send to the same peer never blocks that send, and later operations of
  // the stream do not wait for a pending send or receive (wait for its Work before touching
  // its buffer).
  Work send_async(const void* buf, std::size_t count, DataType dtype, int peer,
                  const Stream& stream = {});
  Work recv_async(void* buf, std::size_t count, DataType dtype, int peer,
                  const Stream& stream = {});
  Work send_async(const void* buf, std::size_t count, DataType dtype, int peer, int tag,
                  const Stream& stream = {});
  Work recv_async(void* buf, std::size_t count, DataType dtype, int peer, int tag,
                  const Stream& stream = {});
  // recv_any, asynchronous: starts after the earlier operations of `stream` but waits for
  // its source apart (the communicator's own worker), so it never holds back later
  // operations of the stream (a send issued after it goes out at once); receives from any
  // source match in issue order among themselves. Work::source() names the sender once
  // it has arrived. Not allowed in a group (kInvalidArgument).
  Work recv_any_async(void* buf, std::size_t count, DataType dtype, const Stream& stream = {});
  Work recv_any_async(void* buf, std::size_t count, DataType dtype, int tag,
                      const Stream& stream = {});
  Work barrier_async(const Stream& stream = {});

  // A new named stream (its worker thread starts on first use). Names need not be
  // unique; they appear in the flight recorder ("stream=<name>", spaces and '=' shown as
  // '_'). Streams live as long as the communicator.
  Stream create_stream(const std::string& name);
  // Waits until every operation issued so far, on every stream, has finished (callbacks
  // included); throws the communicator's first failure (or kAborted after abort()) if
  // there was one. Operations recorded in an open group are not waited for.
  void synchronize();

  // Group calls: between group_start() and the matching group_end(), collectives and
  // send/recv (blocking or _async) are only recorded and return at once (blocking ones
  // without having touched their buffers, which must stay valid until group_end());
  // group_end() launches them as one unit on the calling thread, after the earlier work
  // of the default stream and of the streams the group names, and waits for all of them,
  // throwing the first failure (in issue order). Sends and receives of a group are all
  // posted before anything is waited for, so any order of them cannot deadlock (e.g.
  // every rank sends to its right and receives from its left); the group's collectives
  // run in issue order while they progress. Consecutive all_reduces of a group with the
  // same dtype and op whose buffers do not overlap each other's are fused into one
  // operation over a packed buffer (the flight recorder shows one "fused_all_reduce").
  // Every rank must record the same group. Groups nest; only the outermost group_end()
  // launches. Works returned inside a group complete at its end (waiting for one on the
  // thread that has yet to call group_end() throws kInvalidArgument). agree() and
  // health_check() need their result at once and throw kInvalidArgument inside a group.
  // Throws kInvalidArgument for group_end() without group_start().
  void group_start();
  void group_end();

  // --- Sub-communicators ----------------------------------------------------------
  // Not a member of any group: the color to pass to split().
  static constexpr int kNoColor = -1;
  // Collective over this communicator: ranks passing the same color form a new
  // communicator, ordered by (key, old rank). Returns nullopt on ranks that passed
  // kNoColor ("not a member"). The new communicator has its own sequence numbers,
  // store keys and connections, and this communicator's options.
  // Throws kInvalidArgument for a color < -1.
  // Like any collective it takes a sequence number on this communicator (an exchange of
  // every rank's (color, key), "split" in the flight recorder) and fails like one
  // (kPeerLost, kTimeout, ... on every rank); building the new communicator can then
  // fail like init() (kTimeout after Options::connect_timeout when a member is gone).
  // Connections are not shared with this communicator (each sub-communicator connects
  // its members afresh; on one host it gets its own shared-memory segment). A
  // set_timeout() value does not carry over. Each communicator, parent or sub, may be
  // used by its own thread at the same time as the others.
  std::optional<Communicator> split(int color, int key);
  // Collective over this communicator (every rank calls it with the same list): a new
  // communicator of `ranks` (old ranks, new rank = position in the list). Returns
  // nullopt on ranks not in the list. Throws kInvalidArgument for an empty list, a rank
  // out of range or listed twice (locally, before any communication), and on every
  // rank when ranks passed different lists (after the exchange; the communicator stays
  // usable). Otherwise as split().
  std::optional<Communicator> new_group(std::span<const int> ranks);

  // Fault-aware agreement: returns true on every rank if any rank passed true, else
  // false. A collective (it takes a sequence number like the others); every rank must
  // call it. Built on the normal failure path, so a lost peer makes it throw kPeerLost
  // promptly instead of hanging: the primitive for "stop together when any rank's time
  // is up" (agree(out_of_time) at the end of every step).
  bool agree(bool flag);

  // Aborts this communicator: every pending operation (on any thread) and every later
  // one fails with kAborted, promptly (well under a second); the other ranks are told
  // and fail with kAborted ("rank R reports: abort() was called on rank R"). Never
  // blocks on the network, never throws, idempotent; callable from any thread while
  // another thread is blocked in a collective on this communicator. The communicator
  // must still be destroyed afterwards (destroying it stays the owner's job).
  void abort() noexcept;
  // abort() on every live communicator of this process (e.g. from a watchdog thread).
  static void abort_all() noexcept;

  // --- Recovery -------------------------------------------------------------------
  // Builds a new communicator of the ranks that are still alive, typically after a
  // kPeerLost: every surviving rank calls shrink() (on its failed or healthy
  // communicator). The survivors agree through the store, not the data path: each
  // publishes that it is alive (and which peer it saw lost); the first to arrive waits
  // until every rank is either alive or reported lost by someone, or until
  // Options::connect_timeout passes, then decides the members. New ranks are the
  // members in old-rank order (old ranks 0,1,3 of 4 become 0,1,2). The new communicator
  // has fresh sequence numbers, store keys, job token and connections; Options and the
  // configured timeout carry over (a set_timeout() value does not). This communicator
  // is aborted (locally and towards its peers) whatever the outcome; destroy it.
  // REQUIRES: every surviving rank calls shrink() the same number of times on this
  // communicator; the store is still reachable (if the store lived in a dead rank's
  // process, shrink fails with the store's error).
  // Errors, always bounded by about connect_timeout + 2 s: kPeerLost when this rank is
  // not a member (it called shrink() after the others had decided); kTimeout when the
  // deciding rank died before publishing the members, or a member died while the new
  // communicator connected (kPeerLost possible then too). A lost rank that no survivor
  // reported (e.g. it died while all ranks were idle) makes the decision wait the
  // whole connect_timeout. Shrinking with nobody lost returns a same-size communicator.
  Communicator shrink();
  // A small verified collective (an int64 all_reduce of a known pattern, then an agree()
  // that every rank got the right data) under a deadline of `timeout` (0 = the
  // communicator's timeout). Never throws chorus::Error (except kInvalidArgument for a
  // negative timeout or a moved-from communicator): returns a report. Every rank must
  // call it, like any collective. It returns within `timeout` plus up to about a second
  // for the hang report. When !ok the communicator has failed like after any
  // communication error: shrink() it or destroy it.
  HealthReport health_check(std::chrono::milliseconds timeout);

  // Per-call deadline: every later operation on this communicator, on this rank, fails
  // with kTimeout when it has not completed within `timeout` (like Options::timeout,
  // and with the same fail-fast reporting to the other ranks). 0 restores the
  // configured timeout (Options::timeout / CHORUS_TIMEOUT). Ranks may use different
  // values. For one call or one block, prefer ScopedTimeout:
  //   { Communicator::ScopedTimeout t(comm, std::chrono::milliseconds(500));
  //     comm.all_reduce(...); }  // the previous timeout is back here
  // Throws kInvalidArgument for a negative timeout.
  void set_timeout(std::chrono::milliseconds timeout);
  // The deadline in force for the next operation.
  std::chrono::milliseconds timeout() const;
  // Sets a timeout for its lifetime and restores the previous one on destruction.
  class ScopedTimeout {
   public:
    ScopedTimeout(Communicator& comm, std::chrono::milliseconds timeout)
        : comm_(comm), previous_(comm.timeout()) {
      comm_.set_timeout(timeout);
    }
    ~ScopedTimeout() { comm_.set_timeout(previous_); }
    ScopedTimeout(const ScopedTimeout&) = delete;
    ScopedTimeout& operator=(const ScopedTimeout&) = delete;

   private:
    Communicator& comm_;
    std::chrono::milliseconds previous_;
  };

  // This communicator's flight recorder: the last CHORUS_FLIGHT_RECORDER_SIZE (default
  // 64) collectives and sends/recvs, oldest first, each with its identity (seq, op,
  // dtype, count, reduction, root or peer), bytes, algorithm, state (issued, started,
  // done, failed), issue time, wait and run times, and the error of a failed one. The
  // text is versioned ("chorus flight recorder v1: ...", one "  seq=..." line per
  // operation; docs/DIAGNOSTICS.md specifies it). The same dump goes to stderr (or the
  // CHORUS_DEBUG_FILE file) on a communication failure and, for every communicator of
  // the process, on SIGUSR1 (unless CHORUS_SIGUSR1=0); CHORUS_FLIGHT_RECORDER_FORMAT=json
  // makes those automatic dumps JSON.
  // Thread-safe: may be called from any thread, also while another thread is inside
  // a collective; it never blocks on the network. Throws kInvalidArgument only when
  // this communicator was moved from.
  std::string flight_record() const;
  // The same record as one JSON object on one line, newline-terminated (schema
  // "chorus.flight_record", version 1; fields in docs/DIAGNOSTICS.md, "JSON dump").
  // Thread-safety and errors as flight_record().
  std::string flight_record_json() const;

  // This rank's per-operation statistics, one row per (operation, size class), sorted by
  // operation then size (chorus/profiler.h). Collected only with CHORUS_STATS=1 or
  // Options::stats, else empty. Local: no communication. Thread-safe.
  std::vector<OpStatsRow> stats() const;
  // The same rows as a text table (one header line, one line per row).
  std::string stats_text() const;
  // Installs `profiler` (nullptr removes it): it gets every later operation's start and
  // end on the thread that runs it (chorus/profiler.h). The communicator shares its
  // ownership. REQUIRES: no operation of this communicator in flight (call it right after
  // init). Not inherited by split()/new_group()/shrink() communicators.
  void set_profiler(std::shared_ptr<Profiler> profiler);

  // What the selector would run for `collective` ("all_reduce", "broadcast", "reduce",
  // "all_gather", "reduce_scatter", "all_to_all", "barrier", ...) with `count` elements of
  // `dtype` (count as in that collective's call), and the cost model's predicted time
  // (docs/ALGORITHMS.md, "The cost model"). Local: no communication; the same answer on
  // every rank. Thread-safe. Throws kInvalidArgument naming `collective` or `dtype` when
  // unknown.
  Estimate estimate(const std::string& collective, std::size_t count, DataType dtype) const;

  // Typed conveniences over the calls above.
  template <class T>
  void all_reduce(std::span<const T> send, std::span<T> recv, ReduceOp op) {
    check_span_sizes(send.size(), recv.size(), 1, "recv");
    all_reduce(send.data(), recv.data(), send.size(), DataTypeOf<T>::value, op);
  }
  template <class T>
  void all_reduce(std::span<T> buf, ReduceOp op) {
    all_reduce(buf.data(), buf.data(), buf.size(), DataTypeOf<T>::value, op);
  }
  template <class T>
  void broadcast(std::span<T> buf, int root) {
    broadcast(buf.data(), buf.data(), buf.size(), DataTypeOf<T>::value, root);
  }
  template <class T>
  void all_gather(std::span<const T> send, std::span<T> recv) {
    check_span_sizes(send.size(), recv.size(), size(), "recv");
    all_gather(send.data(), recv.data(), send.size(), DataTypeOf<T>::value);
  }

 private:
  explicit Communicator(std::unique_ptr<core::Comm> impl);
  // Throws kInvalidArgument unless `actual` == `expected` * `factor`.
  static void check_span_sizes(std::size_t expected, std::size_t actual, std::size_t factor,
                               const char* name);
  core::Comm& impl() const;
  std::unique_ptr<core::Comm> impl_;
};

}  // namespace chorus
