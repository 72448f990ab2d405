// hier broadcast and reduce, for ranks on several hosts: the root stands for its host and
// each other host's lowest rank for its own (the heads). broadcast: among the heads
// (binomial tree, across hosts), then from each head within its host. reduce: within each
// host to its head, then among the heads to the root. Each host link carries the message
// once. Each phase is a level in the timeline. Binomial tree without hosts().
#include <algorithm>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/hier_layout.h"
#include "algo/scratch.h"
#include "kernels/reduce.h"
#include "transport/group_view.h"

namespace chorus::algo {

namespace {

int index_of(const std::vector<int>& group, int rank) {
  return static_cast<int>(std::find(group.begin(), group.end(), rank) - group.begin());
}

}  // namespace

Status hier_broadcast(transport::Transport& t, const CollArgs& a) {
  const std::optional<HostLayout> l = host_layout(t);
  if (!l || a.count == 0) return tree_broadcast(t, a);
  const int r = t.rank(), head = l->head(a.root);
  const std::vector<int> heads = l->heads(a.root);
  if (r == head) {
    CollArgs p1 = phase_args(a, 1);  // across hosts
    p1.root = index_of(heads, a.root);
    transport::GroupView across(t, heads);
    op::LevelScope level(a.levels, 1, "across hosts broadcast");
    CHORUS_RETURN_IF_ERROR(tree_broadcast(across, p1));
  }
  CollArgs p2 = phase_args(a, 2);  // within the host, from its head (data in its recv now)
  p2.send = a.recv;
  p2.root = index_of(l->local, head);
  transport::GroupView host(t, l->local);
  op::LevelScope level(a.levels, 2, "host broadcast", host_path(host, a));
  return shm_broadcast(host, p2);
}

Status hier_reduce(transport::Transport& t, const CollArgs& a) {
  const std::optional<HostLayout> l = host_layout(t);
  if (!l || a.count == 0) return tree_reduce(t, a);
  const int r = t.rank(), head = l->head(a.root);
  const ReduceOp sum_op = a.op == ReduceOp::kAvg ? ReduceOp::kSum : a.op;
  // A head that is not the root sums its host into scratch.
  const Scratch partial(ScratchSlot::kHier, r == head && r != a.root ? a.count * elem_bytes(a) : 0);
  void* acc = r == a.root ? a.recv : partial.data();
  CollArgs p1 = phase_args(a, 1);  // within the host, to its head
  p1.recv = acc;
  p1.op = sum_op;
  p1.root = index_of(l->local, head);
  transport::GroupView host(t, l->local);
  {
    op::LevelScope level(a.levels, 1, "host reduce", host_path(host, a));
    CHORUS_RETURN_IF_ERROR(shm_reduce(host, p1));
  }
  if (r != head) return Status();
  const std::vector<int> heads = l->heads(a.root);
  CollArgs p2 = phase_args(a, 2);  // across hosts, to the root, in place
  p2.send = acc;
  p2.recv = acc;
  p2.op = sum_op;
  p2.root = index_of(heads, a.root);
  transport::GroupView across(t, heads);
  {
    op::LevelScope level(a.levels, 2, "across hosts reduce");
    CHORUS_RETURN_IF_ERROR(tree_reduce(across, p2));
  }
  if (r == a.root) kernels::finalize(a.recv, a.count, a.dtype, a.op, t.size());
  return Status();
}

}  // namespace chorus::algo
