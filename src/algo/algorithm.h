// What every collective algorithm receives, and the algorithms themselves. Algorithms
// are written once against transport::Transport and never see a concrete transport.
#pragma once
#include <cstddef>
#include <cstdint>

#include "chorus/types.h"
#include "transport/transport.h"
#include "util/deadline.h"
#include "util/status.h"

namespace chorus::algo {

// Arguments of one collective on one rank, already validated by the API layer.
// Counts are in elements of `dtype`. Buffers may alias as the public API allows
// (send == recv means in place).
struct CollArgs {
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;  // meaning per collective, as in the public API
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  // all_to_all_v only: size() entries each, in elements.
  const std::size_t* send_counts = nullptr;
  const std::size_t* send_displs = nullptr;
  const std::size_t* recv_counts = nullptr;
  const std::size_t* recv_displs = nullptr;
  // Tag base of this op: every message uses {comm, seq, step}.
  std::uint32_t comm = 0;
  std::uint64_t seq = 0;
  std::uint64_t sig = 0;  // operation signature (algo/signature.h), carried by every tag
  // Added to every step: the phases of a composite algorithm (hier*.cc) each get their
  // own step range, while comm and seq stay the op's, so a peer in another operation is
  // still seen (its signature differs, or its later seq overtakes).
  std::uint32_t step_base = 0;
  Deadline deadline;
  std::size_t chunk_bytes = 1 << 20;  // pipelining unit
  // Messages up to this many bytes are latency-bound (CHORUS_SMALL_MSG_SIZE): algorithms
  // that run sub-steps pick latency-optimised ones for them.
  std::size_t small_bytes = 64 << 10;
  transport::Tag tag(std::uint32_t step) const {
    return transport::Tag{comm, seq, step_base + step, sig};
  }
};

using CollFn = Status (*)(transport::Transport& t, const CollArgs& a);

// all_reduce
Status ring_all_reduce(transport::Transport& t, const CollArgs& a);
Status tree_all_reduce(transport::Transport& t, const CollArgs& a);  // reduce to 0 + broadcast
Status rhd_all_reduce(transport::Transport& t, const CollArgs& a);   // recursive halving-doubling
Status rd_all_reduce(transport::Transport& t, const CollArgs& a);    // recursive doubling
// Ranks on several hosts (Transport::hosts(), hier*.cc): within each host first, then
// across hosts, each rank with its counterparts on the other hosts where every host has
// as many ranks, else through one leader per host; the flat algorithm without hosts().
Status hier_all_reduce(transport::Transport& t, const CollArgs& a);
Status hier_reduce_scatter(transport::Transport& t, const CollArgs& a);
Status hier_all_gather(transport::Transport& t, const CollArgs& a);
Status hier_broadcast(transport::Transport& t, const CollArgs& a);
Status hier_reduce(transport::Transport& t, const CollArgs& a);
// Reduces straight out of the shared windows (Transport::shared_windows()); ring without.
Status shm_direct_all_reduce(transport::Transport& t, const CollArgs& a);
// Through the shared windows, one barrier per chunk (shm_reduce.cc, shm_move.cc); each
// falls back to its collective's default algorithm without windows.
Status shm_all_reduce(transport::Transport& t, const CollArgs& a);  // one shot
Status shm_reduce(transport::Transport& t, const CollArgs& a);
Status shm_reduce_scatter(transport::Transport& t, const CollArgs& a);
Status shm_broadcast(transport::Transport& t, const CollArgs& a);
Status shm_all_gather(transport::Transport& t, const CollArgs& a);
Status shm_all_to_all(transport::Transport& t, const CollArgs& a);
Status shm_barrier(transport::Transport& t, const CollArgs& a);
// Single copy (shm_single_copy.cc): read peers' buffers straight out of their processes
// (SharedWindows::read_peer); each falls back to its staged window algorithm above
// without single-copy reads.
Status single_copy_all_reduce(transport::Transport& t, const CollArgs& a);
Status single_copy_reduce_scatter(transport::Transport& t, const CollArgs& a);
Status single_copy_broadcast(transport::Transport& t, const CollArgs& a);
Status single_copy_all_gather(transport::Transport& t, const CollArgs& a);
Status single_copy_all_to_all(transport::Transport& t, const CollArgs& a);
// The halves of ring_all_reduce, for hierarchical algorithms: `count` elements split into
// size() near-equal blocks (patterns.h split_block). reduce_scatter_split writes rank r's
// block, reduced but not finalized, at its offset in `recv` (send may equal recv);
// all_gather_split fills the other blocks of `recv` from the block at rank r's offset.
Status ring_reduce_scatter_split(transport::Transport& t, const CollArgs& a);
Status ring_all_gather_split(transport::Transport& t, const CollArgs& a);
// The same through the shared windows (shm_split.cc); the ring forms without them.
Status shm_reduce_scatter_split(transport::Transport& t, const CollArgs& a);
Status shm_all_gather_split(transport::Transport& t, const CollArgs& a);
// reduce_scatter / all_gather (count = elements per rank)
Status ring_reduce_scatter(transport::Transport& t, const CollArgs& a);
Status rh_reduce_scatter(transport::Transport& t, const CollArgs& a);  // recursive halving
Status ring_all_gather(transport::Transport& t, const CollArgs& a);
// broadcast / reduce (binomial tree, chunked and pipelined)
Status tree_broadcast(transport::Transport& t, const CollArgs& a);
Status tree_reduce(transport::Transport& t, const CollArgs& a);
// all_to_all (pairwise exchange), all_to_all_v
Status pairwise_all_to_all(transport::Transport& t, const CollArgs& a);
Status pairwise_all_to_all_v(transport::Transport& t, const CollArgs& a);
// gather / scatter (direct to / from root)
Status direct_gather(transport::Transport& t, const CollArgs& a);
Status direct_scatter(transport::Transport& t, const CollArgs& a);
// barrier (dissemination)
Status dissemination_barrier(transport::Transport& t, const CollArgs& a);

}  // namespace chorus::algo
