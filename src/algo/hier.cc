// hier all_reduce: for ranks on several hosts (Transport::hosts()), keeps most traffic
// within each host. With L ranks on every host (counterpart form):
//   1. reduce-scatter within the host (ring halves): local rank i holds the host's sum of
//      share i (1/L of the buffer);
//   2. all_reduce of share i among the counterparts (the rank at local index i on every
//      host): L connections carry the inter-host bytes at once;
//   3. finalize share i (avg: divide by the job's size) and all-gather within the host.
// Bytes across hosts per host: 2(H-1)/H x S for H hosts, against 2(n-1)/n x S per rank
// (L per host) in a flat ring. With uneven hosts (leader form): reduce to each host's
// lowest rank (binomial tree), all_reduce among those leaders, broadcast within. Each
// phase runs on a GroupView with its own step range (phase_args), so messages never meet.
// Within a host the phases go through the host's shared windows when the transport shares
// them among its ranks (Transport::group_windows), else over messages.
// Each phase is a level in the timeline (op::LevelScope, docs/DIAGNOSTICS.md).
// Without hosts() it runs the flat algorithm.
#include <algorithm>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/hier_layout.h"
#include "algo/patterns.h"
#include "kernels/reduce.h"
#include "transport/group_view.h"

namespace chorus::algo {

namespace {

// Flat all_reduce among a group: latency-bound messages by recursive doubling (rd) or
// halving-doubling (rhd), as the selector chooses for a flat group.
Status flat_all_reduce(transport::Transport& t, const CollArgs& a) {
  const std::size_t bytes = a.count * elem_bytes(a);
  if (bytes <= a.small_bytes)
    return rd_fits(bytes, t.size(), a.small_bytes) ? rd_all_reduce(t, a) : rhd_all_reduce(t, a);
  return ring_all_reduce(t, a);
}

ReduceOp unfinalized(ReduceOp op) { return op == ReduceOp::kAvg ? ReduceOp::kSum : op; }

Status leader_all_reduce(transport::Transport& t, const CollArgs& a, const HostLayout& l) {
  const bool leader = l.local.front() == t.rank();
  CollArgs p1 = phase_args(a, 1);  // reduce to the leader (local rank 0), not finalized
  p1.op = unfinalized(a.op);
  p1.root = 0;
  transport::GroupView host(t, l.local);
  {
    op::LevelScope level(a.levels, 1, "host reduce", host_path(host, a));
    CHORUS_RETURN_IF_ERROR(shm_reduce(host, p1));
  }
  if (leader) {
    CollArgs p2 = phase_args(a, 2);  // all_reduce among leaders, in place on recv
    p2.send = a.recv;
    p2.op = unfinalized(a.op);
    transport::GroupView across(t, l.leaders);
    if (l.leaders.size() > 1) {
      op::LevelScope level(a.levels, 2, "leaders all_reduce");
      CHORUS_RETURN_IF_ERROR(flat_all_reduce(across, p2));
    }
    kernels::finalize(a.recv, a.count, a.dtype, a.op, t.size());
  }
  CollArgs p3 = phase_args(a, 3);  // broadcast from the leader, in place
  p3.send = a.recv;
  p3.root = 0;
  op::LevelScope level(a.levels, 3, "host broadcast", host_path(host, a));
  return shm_broadcast(host, p3);
}

Status counterpart_all_reduce(transport::Transport& t, const CollArgs& a, const HostLayout& l) {
  const int L = static_cast<int>(l.local.size());
  transport::GroupView host(t, l.local);
  CollArgs p1 = phase_args(a, 1);  // share local_index of the host's sum, at its offset in recv
  p1.op = unfinalized(a.op);
  {
    op::LevelScope level(a.levels, 1, "host reduce_scatter", host_path(host, a));
    CHORUS_RETURN_IF_ERROR(shm_reduce_scatter_split(host, p1));
  }
  const Block mine = split_block(a.count, L, l.local_index);
  char* share = static_cast<char*>(a.recv) + mine.offset * elem_bytes(a);
  if (mine.count > 0 && l.counterparts.size() > 1) {
    CollArgs p2 = phase_args(a, 2);  // the share among the counterparts, in place
    p2.send = share;
    p2.recv = share;
    p2.count = mine.count;
    p2.op = unfinalized(a.op);
    transport::GroupView across(t, l.counterparts);
    op::LevelScope level(a.levels, 2, "across hosts all_reduce");
    CHORUS_RETURN_IF_ERROR(flat_all_reduce(across, p2));
  }
  kernels::finalize(share, mine.count, a.dtype, a.op, t.size());
  CollArgs p3 = phase_args(a, 3);  // every share to every local rank
  p3.send = a.recv;
  op::LevelScope level(a.levels, 3, "host all_gather", host_path(host, a));
  return shm_all_gather_split(host, p3);
}

}  // namespace

Status hier_all_reduce(transport::Transport& t, const CollArgs& a) {
  const std::optional<HostLayout> l = host_layout(t);
  if (!l || a.count == 0) return flat_all_reduce(t, a);
  if (l->uniform() && a.count >= l->local.size()) return counterpart_all_reduce(t, a, *l);
  return leader_all_reduce(t, a, *l);
}

}  // namespace chorus::algo
