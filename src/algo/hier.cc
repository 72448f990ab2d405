// hier all_reduce: for ranks on several hosts (Transport::hosts()), keeps most traffic
// within each host:
//   1. reduce (sum of the inputs; avg is finished at the end) to each host's leader, its
//      lowest rank, by a binomial tree over that host's ranks (shared memory);
//   2. all_reduce among the leaders, one per host (ring: TCP);
//   3. the leader finalizes (avg: divides by the job's size) and broadcasts within its
//      host (tree).
// Bytes over TCP per host: 2(H-1)/H x S for H hosts, against 2(n-1)/n x S per rank (and
// L ranks per host) in a flat ring. Each phase runs on a GroupView with its own tag comm,
// so their messages never meet. Without hosts() it runs ring_all_reduce.
#include <algorithm>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "kernels/reduce.h"
#include "transport/group_view.h"

namespace chorus::algo {

namespace {

// Tag comm of phase p (1..3) of an operation of communicator `comm`.
std::uint32_t phase_comm(std::uint32_t comm, std::uint32_t p) { return comm ^ (p << 28); }

}  // namespace

Status hier_all_reduce(transport::Transport& t, const CollArgs& a) {
  const std::vector<int>* hosts = t.hosts();
  if (hosts == nullptr || a.count == 0) return ring_all_reduce(t, a);
  const int n = t.size(), r = t.rank();
  const int mine = (*hosts)[r];
  std::vector<int> local, leaders;
  for (int q = 0; q < n; ++q) {
    if ((*hosts)[q] == mine) local.push_back(q);
    if (std::find(hosts->begin(), hosts->begin() + q, (*hosts)[q]) == hosts->begin() + q)
      leaders.push_back(q);  // the first rank of its host
  }
  const bool leader = local.front() == r;
  const ReduceOp sum_op = a.op == ReduceOp::kAvg ? ReduceOp::kSum : a.op;

  CollArgs p1 = a;  // reduce to the leader (local rank 0), not finalized
  p1.op = sum_op;
  p1.root = 0;
  p1.comm = phase_comm(a.comm, 1);
  transport::GroupView host(t, local);
  CHORUS_RETURN_IF_ERROR(tree_reduce(host, p1));
  if (leader) {
    CollArgs p2 = a;  // all_reduce among leaders, in place on recv
    p2.send = a.recv;
    p2.op = sum_op;
    p2.comm = phase_comm(a.comm, 2);
    transport::GroupView across(t, leaders);
    if (leaders.size() > 1) CHORUS_RETURN_IF_ERROR(ring_all_reduce(across, p2));
    kernels::finalize(a.recv, a.count, a.dtype, a.op, n);
  }
  CollArgs p3 = a;  // broadcast from the leader, in place
  p3.send = a.recv;
  p3.root = 0;
  p3.comm = phase_comm(a.comm, 3);
  return tree_broadcast(host, p3);
}

}  // namespace chorus::algo
