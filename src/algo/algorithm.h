// The algorithms: what each collective family offers (they receive op::CollArgs). Algorithms
// are written once against transport::Transport and never see a concrete transport.
#pragma once
#include "op/args.h"
#include "op/kind.h"
#include "transport/transport.h"
#include "util/status.h"

namespace chorus::algo {

// The operation vocabulary (src/op/) under the names the algorithms use.
using op::CollArgs;
using op::CollKind;

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
