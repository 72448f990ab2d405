// hier reduce_scatter and all_gather, for ranks on several hosts with L ranks on every
// host (H hosts). Blocks are packed by counterpart group (the ranks at local index j of
// every host, ascending), so that each phase works on contiguous memory:
//   reduce_scatter: pack, reduce-scatter within the host (local rank j gets the host's
//     sum of group j's H blocks), then reduce-scatter among the counterparts;
//   all_gather: all-gather among the counterparts, all-gather the H blocks within the
//     host, unpack.
// Bytes across hosts per rank: (H-1)/H of its group's H blocks, the least any algorithm
// sends. Each phase is a level in the timeline (the packing copies are not). Flat ring
// without hosts() or with uneven hosts (the selector does not choose these then).
#include <cstring>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/hier_layout.h"
#include "algo/scratch.h"
#include "kernels/reduce.h"
#include "transport/group_view.h"

namespace chorus::algo {

namespace {

bool usable(const std::optional<HostLayout>& l, std::size_t count) {
  return l && count > 0 && l->uniform() && l->hosts > 1;
}

// Block of rank q in `packed` (group-major, ascending within a group), in blocks.
std::vector<std::size_t> packed_order(const HostLayout& l) {
  std::vector<std::size_t> at(l.host_of.size());
  std::size_t k = 0;
  for (std::size_t j = 0; j < l.local.size(); ++j)
    for (int q : l.counterparts_of(static_cast<int>(j))) at[static_cast<std::size_t>(q)] = k++;
  return at;
}

}  // namespace

Status hier_reduce_scatter(transport::Transport& t, const CollArgs& a) {
  const std::optional<HostLayout> l = host_layout(t);
  if (!usable(l, a.count)) return ring_reduce_scatter(t, a);
  const std::size_t bytes = a.count * elem_bytes(a), n = l->host_of.size();
  const std::size_t group_bytes = bytes * static_cast<std::size_t>(l->hosts);
  const std::vector<std::size_t> at = packed_order(*l);
  const Scratch packed(ScratchSlot::kHier, bytes * n);
  for (std::size_t q = 0; q < n; ++q)
    std::memcpy(packed.data() + at[q] * bytes, static_cast<const char*>(a.send) + q * bytes, bytes);
  const Scratch part(ScratchSlot::kHierPart, group_bytes);
  CollArgs p1 = phase_args(a, 1);  // group local_index's H blocks, summed over the host
  p1.send = packed.data();
  p1.recv = part.data();
  p1.count = a.count * static_cast<std::size_t>(l->hosts);
  p1.op = a.op == ReduceOp::kAvg ? ReduceOp::kSum : a.op;
  transport::GroupView host(t, l->local);
  {
    op::LevelScope level(a.levels, 1, "host reduce_scatter", host_path(host, a));
    CHORUS_RETURN_IF_ERROR(shm_reduce_scatter(host, p1));
  }
  CollArgs p2 = phase_args(a, 2);  // this rank's block, summed over the hosts
  p2.send = part.data();
  p2.op = p1.op;
  transport::GroupView across(t, l->counterparts);
  {
    op::LevelScope level(a.levels, 2, "across hosts reduce_scatter");
    CHORUS_RETURN_IF_ERROR(ring_reduce_scatter(across, p2));
  }
  kernels::finalize(a.recv, a.count, a.dtype, a.op, t.size());
  return Status();
}

Status hier_all_gather(transport::Transport& t, const CollArgs& a) {
  const std::optional<HostLayout> l = host_layout(t);
  if (!usable(l, a.count)) return ring_all_gather(t, a);
  const std::size_t bytes = a.count * elem_bytes(a), n = l->host_of.size();
  const std::size_t group_bytes = bytes * static_cast<std::size_t>(l->hosts);
  const Scratch part(ScratchSlot::kHierPart, group_bytes);
  CollArgs p1 = phase_args(a, 1);  // the blocks of this rank's counterpart group
  p1.recv = part.data();
  transport::GroupView across(t, l->counterparts);
  {
    op::LevelScope level(a.levels, 1, "across hosts all_gather");
    CHORUS_RETURN_IF_ERROR(ring_all_gather(across, p1));
  }
  const Scratch packed(ScratchSlot::kHier, bytes * n);
  CollArgs p2 = phase_args(a, 2);  // every group's blocks
  p2.send = part.data();
  p2.recv = packed.data();
  p2.count = a.count * static_cast<std::size_t>(l->hosts);
  transport::GroupView host(t, l->local);
  {
    op::LevelScope level(a.levels, 2, "host all_gather", host_path(host, a));
    CHORUS_RETURN_IF_ERROR(shm_all_gather(host, p2));
  }
  const std::vector<std::size_t> at = packed_order(*l);
  for (std::size_t q = 0; q < n; ++q)
    std::memcpy(static_cast<char*>(a.recv) + q * bytes, packed.data() + at[q] * bytes, bytes);
  return Status();
}

}  // namespace chorus::algo
