// The cost model: predicted time of one collective per algorithm from parameters of the
// host (measured by core/host_probe.cc, cached per host), written down in
// docs/ALGORITHMS.md ("The cost model"). Pure arithmetic: no I/O, no clocks.
#pragma once
#include <cstddef>
#include <string>

#include "op/kind.h"

namespace chorus::algo {

using op::CollKind;
struct Capabilities;

// Parameters of a host. Times in microseconds, bandwidths in bytes per microsecond
// (= MB/s), sizes in bytes. The defaults are a plausible 2020s x86 server; the probe
// replaces those it measures (`measured` says which did not come from it).
struct CostParams {
  double sync_us = 0.3;         // one cross-core flag hand-off (cache-line round trip / 2)
  double wake_us = 6.0;         // waking a rank that sleeps (futex wake to running)
  double switch_us = 2.0;       // handing a processor to a rank that polls with sched_yield
                                // (two ranks on one processor: half a round trip)
  double net_sync_us = 25.0;    // one TCP message hand-off on a host, both ends awake
  double net_bw = 2000.0;       // TCP bytes/us of one stream (each end copying at once)
  double copy_bw_cache = 20000.0;   // memcpy, source and destination in cache
  double copy_bw_mem = 6000.0;      // memcpy, out of cache
  double reduce_bw_cache = 12000.0; // float sum dst = a + b, output bytes per us, in cache
  double reduce_bw_mem = 4000.0;    // ... out of cache
  double peer_read_bw = 5000.0;     // process_vm_readv bandwidth (single copy) of a source
                                    // another processor has just written, beyond the cache
  double peer_read_bw_cache = 8000.0;  // ... of a source another processor has just written,
                                       // within the cache (where a peer's writes leave it)
  double peer_read_us = 1.5;        // fixed cost of one process_vm_readv call
  double stage_bw = 6000.0;         // one-way staged transfer through window halves between
                                    // two running ranks (copy in || copy out), bytes/us
  double ring_bw = 6000.0;          // one-way stream through a shm ring (four slots) between
                                    // two running ranks, bytes/us
  double exchange_bw = 3000.0;      // staged exchange between two running ranks, each
                                    // copying in and out: bytes/us each way
  double cache_bytes = 1 << 20;     // working sets up to this size run at cache speed
  double llc_bytes = 32 << 20;      // the last-level cache (the L3, else the L2), shared by
                                    // the host's ranks
  double window_half = 2 << 20;     // staging chunk of the shm algorithms (half a window)
  double chunk_bytes = 1 << 20;     // pipelining chunk of ring and tree (CHORUS_CHUNK_SIZE)
  double ring_quarter = 256 << 10;  // what the shm engine moves into a ring per hand-off:
                                    // a quarter of the ring (CHORUS_BUFFSIZE / 4); set by
                                    // the communicator, not serialised
  int cpus = 0;                     // processors of the host (0 = unknown: many)
  bool measured = false;            // true when the probe produced the figures above
  bool net_measured = false;        // ... and net_sync_us, net_bw too (loopback TCP worked)
  // Not a figure of the host but of the call (not serialised): every rank's buffers lie in
  // registered memory its peers map (chorus::mem_alloc), so single copy reads and writes
  // them with memcpy at the copy rates instead of through process_vm_readv/writev.
  bool mapped_peers = false;
};

// `p` with every figure of a cache line handed from one processor to another `k` times
// dearer: the flag hand-off (sync_us) and the staged, ring and exchange streams and the
// single-copy reads of a peer's cached writes, which move lines the other rank just wrote
// (those reads no slower than beyond the cache). Copies, reductions and single-copy reads
// beyond the cache keep their figures. What the selector prices while the host runs the ranks'
// processors apart (core/placement.h); k = 1 returns `p`.
CostParams with_hand_off_scale(const CostParams& p, double k);

// Serialised form (one line of JSON-like "key=value;..." text, fixed key order): what rank 0
// publishes through the store so every rank predicts with the same numbers.
std::string to_text(const CostParams& p);
// Parses to_text's output; false (and `out` untouched) on anything malformed.
bool from_text(const std::string& text, CostParams& out);

// Predicted time (us) of `algo` for collective `kind` with `bytes` as given to
// Selector::choose, over `nranks` ranks on a transport with `caps`; a negative value
// when the model has no formula for that pair (the selector then keeps its rules).
double predict_us(const CostParams& p, CollKind kind, const char* algo, std::size_t bytes,
                  int nranks, const Capabilities& caps);

}  // namespace chorus::algo
