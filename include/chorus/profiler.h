// Observing operations: the profiler hook (chorus::Profiler, chorus::OpEvent) and the
// per-operation statistics rows (chorus::OpStatsRow) of Communicator::stats().
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "chorus/export.h"

namespace chorus {

// One level of a hierarchical algorithm inside an operation (OpEvent::levels): a phase
// that runs within each host or across hosts, e.g. "host reduce_scatter", "across hosts
// all_reduce", "host all_gather" (docs/DIAGNOSTICS.md, "Timeline", lists every name).
struct OpLevel {
  const char* name = "";       // static storage
  int level = 0;               // the phase's number in its algorithm (1-3), as on every rank
  const char* via = "";        // within a host: "windows" (the host's shared memory windows)
                               // or "messages"; "" across hosts or for a host of one rank
  std::int64_t start_ns = 0;   // steady clock (CLOCK_MONOTONIC), inside the op's start..end
  std::int64_t end_ns = 0;
};

// One operation as a profiler sees it. Every const char* points to storage that outlives
// the communicator (names, dtypes, algorithm names, stream labels): copy the text if it
// must outlive the communicator itself.
struct OpEvent {
  std::uint32_t comm_id = 0;   // this process's number of the communicator (0 = first)
  int rank = 0;                // rank in that communicator
  int size = 1;                // ranks of that communicator
  std::uint64_t seq = 0;       // collective seq, or per-peer seq of a send/recv
  const char* name = "";       // "all_reduce", "agree", "send", ...
  const char* dtype = "";      // "" when not applicable (barrier, send/recv)
  const char* redop = "";      // "" when not applicable
  std::size_t count = 0;       // the call's count (elements)
  std::size_t bytes = 0;       // count * dtype size (send/recv: the message)
  int root = -1;               // rooted collectives, else -1
  int peer = -1;               // send/recv, else -1
  const char* algo = "";       // the algorithm chosen ("p2p" for send/recv)
  int stream = 0;              // stream id (0 = default)
  const char* stream_name = "default";
  std::int64_t issue_ns = 0;   // steady clock (CLOCK_MONOTONIC) at issue
  std::int64_t start_ns = 0;   // ... when it started running on this thread
  std::int64_t end_ns = 0;     // ... when it ended (0 in on_start)
  bool ok = true;              // in on_end: false when it failed
  // In on_end, for hierarchical algorithms (algo "hier"): the levels this rank ran, in
  // the order they started; num_levels = 0 otherwise, and always in on_start. The array
  // is valid during the call only: copy what must outlive it.
  const OpLevel* levels = nullptr;
  int num_levels = 0;
};

// Receives operation start/end events on the thread that runs the operation (the
// caller's for blocking calls, the stream's worker for async ones, the group_end()
// caller for grouped ones): on_start right before the algorithm runs, on_end right after
// it returns (success or failure). Implementations must be thread-safe when several
// streams are used, must not throw, and must not call into the communicator.
class CHORUS_EXPORT Profiler {
 public:
  virtual ~Profiler();
  virtual void on_start(const OpEvent& e) = 0;
  virtual void on_end(const OpEvent& e) = 0;
};

// Statistics of one (operation, size class) on one rank (Communicator::stats()). A size
// class holds the sizes in [size_class, 2 * size_class) bytes (size_class a power of two,
// 0 for zero-byte operations). Times are from start to end of each operation.
struct OpStatsRow {
  std::string op;              // "all_reduce", ...
  std::size_t size_class = 0;
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;     // sum of OpEvent::bytes
  double total_us = 0;
  double mean_us = 0;
  double p50_us = 0;           // from a log histogram (about 2% resolution)
  double p99_us = 0;
  double max_us = 0;
  double busbw_gbps = 0;       // mean bytes / mean time x the nccl-tests bus factor
  std::string algo;            // the algorithm of the last operation in the row
};

}  // namespace chorus
