// GroupView: rank translation over a base transport.
#include "transport/group_view.h"

#include <algorithm>

namespace chorus::transport {

GroupView::GroupView(Transport& base, std::vector<int> members)
    : base_(base), members_(std::move(members)) {
  rank_ = static_cast<int>(std::find(members_.begin(), members_.end(), base_.rank()) -
                           members_.begin());
}

Result<RequestPtr> GroupView::post_send(int peer, Tag tag, const void* data, std::size_t bytes) {
  CHORUS_RETURN_IF_ERROR(check_post_args("post_send", peer, rank(), size(), data, bytes));
  return base_.post_send(members_[static_cast<std::size_t>(peer)], tag, data, bytes);
}

Result<RequestPtr> GroupView::post_recv(int peer, Tag tag, void* data, std::size_t bytes) {
  CHORUS_RETURN_IF_ERROR(check_post_args("post_recv", peer, rank(), size(), data, bytes));
  return base_.post_recv(members_[static_cast<std::size_t>(peer)], tag, data, bytes);
}

Result<int> GroupView::probe(std::span<const ProbeTarget> targets, Deadline deadline) {
  CHORUS_RETURN_IF_ERROR(check_probe_targets("probe", targets, rank(), size()));
  std::vector<ProbeTarget> base(targets.begin(), targets.end());
  for (ProbeTarget& t : base) t.peer = members_[static_cast<std::size_t>(t.peer)];
  return base_.probe(base, deadline);  // same order: the index means the same target
}

}  // namespace chorus::transport
