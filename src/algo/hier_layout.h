// Where the ranks sit, for hierarchical algorithms: from Transport::hosts(), this rank's
// host group, the host leaders, and this rank's counterparts (the ranks with the same
// index on every host) when every host has as many ranks. Pure arithmetic.
#pragma once
#include <optional>
#include <vector>

#include "algo/algorithm.h"
#include "op/tag_space.h"
#include "transport/transport.h"

namespace chorus::algo {

struct HostLayout {
  std::vector<int> local;    // the ranks of this rank's host, ascending
  int local_index = 0;       // this rank's position in `local`
  std::vector<int> leaders;  // the lowest rank of every host, ascending
  // Every host has local.size() ranks: `counterparts` holds, ascending, the rank at
  // local_index of every host (this rank included); empty otherwise.
  std::vector<int> counterparts;
  int hosts = 0;
  // Where every rank sits: by_host[h] = the ranks of host h, ascending; host_of[q] = h.
  std::vector<std::vector<int>> by_host;
  std::vector<int> host_of;
  bool uniform() const { return !counterparts.empty(); }
  // The rank that stands for host of rank `root` (root itself) and for every other host
  // (its leader), ascending: the group a rooted collective crosses hosts in.
  std::vector<int> heads(int root) const;
  // The head of this rank's host for a collective rooted at `root`.
  int head(int root) const;
  // Uniform layouts: the counterparts of local index j (the rank at j on every host),
  // ascending.
  std::vector<int> counterparts_of(int j) const;
};

// Null when the transport reports no hosts (all ranks on one host, or unknown).
std::optional<HostLayout> host_layout(const transport::Transport& t);

// The arguments of phase p (1..3) of a hierarchical operation: its own step range
// (CollArgs::step_base, allocated by op/tag_space.h), so phases never exchange messages;
// no level log, so the algorithm a phase runs records nothing of its own.
inline CollArgs phase_args(const CollArgs& a, std::uint32_t p) {
  CollArgs out = a;
  out.step_base = op::phase_step_base(a.step_base, p);
  out.levels = nullptr;
  return out;
}

// How a phase within the host group `host` moves data, for its level record (asked only
// when `a` records levels): "windows" when the host's ranks share windows (the shm_*
// algorithms go through them), else "messages"; "" for a host of one rank.
inline const char* host_path(transport::Transport& host, const CollArgs& a) {
  if (a.levels == nullptr || host.size() < 2) return "";
  return host.shared_windows() != nullptr ? "windows" : "messages";
}

}  // namespace chorus::algo
