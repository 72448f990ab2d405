// host_layout: host groups, leaders and counterparts from the transport's host map.
#include "algo/hier_layout.h"

#include <algorithm>

namespace chorus::algo {

std::optional<HostLayout> host_layout(const transport::Transport& t) {
  const std::vector<int>* host_of = t.hosts();
  if (host_of == nullptr) return std::nullopt;
  const int n = t.size(), r = t.rank();
  HostLayout l;
  l.hosts = *std::max_element(host_of->begin(), host_of->end()) + 1;
  l.host_of = *host_of;
  l.by_host.resize(static_cast<std::size_t>(l.hosts));
  auto& by_host = l.by_host;
  for (int q = 0; q < n; ++q) by_host[(*host_of)[q]].push_back(q);
  l.local = by_host[(*host_of)[r]];
  l.local_index = static_cast<int>(std::find(l.local.begin(), l.local.end(), r) - l.local.begin());
  for (const auto& h : by_host) l.leaders.push_back(h.front());
  std::sort(l.leaders.begin(), l.leaders.end());
  const bool uniform = std::all_of(by_host.begin(), by_host.end(), [&](const std::vector<int>& h) {
    return h.size() == l.local.size();
  });
  if (uniform) l.counterparts = l.counterparts_of(l.local_index);
  return l;
}

std::vector<int> HostLayout::counterparts_of(int j) const {
  std::vector<int> out;
  for (const auto& h : by_host) out.push_back(h[j]);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> HostLayout::heads(int root) const {
  std::vector<int> out;
  for (int leader : leaders) out.push_back(host_of[leader] == host_of[root] ? root : leader);
  std::sort(out.begin(), out.end());
  return out;
}

int HostLayout::head(int root) const {
  return host_of[root] == host_of[local.front()] ? root : local.front();
}

}  // namespace chorus::algo
