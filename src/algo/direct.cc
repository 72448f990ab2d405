// Direct gather and scatter: every rank exchanges its block with the root, which posts
// all its receives (gather) or sends (scatter) at once, straight from / into user buffers.
#include <vector>

#include "algo/algorithm.h"
#include "algo/chunking.h"

namespace chorus::algo {

using transport::RequestPtr;

Status direct_gather(transport::Transport& t, const CollArgs& a) {
  const int r = t.rank(), n = t.size();
  const std::size_t bytes = a.count * elem_bytes(a);
  if (a.count == 0) return Status();
  if (r != a.root) return transport::send(t, a.root, a.tag(0), a.send, bytes, a.deadline);
  char* recv = static_cast<char*>(a.recv);
  std::vector<RequestPtr> reqs;
  for (int q = 0; q < n; ++q) {
    if (q == r) continue;
    CHORUS_ASSIGN_OR_RETURN(RequestPtr req, t.post_recv(q, a.tag(0), recv + q * bytes, bytes));
    reqs.push_back(std::move(req));
  }
  copy_if_distinct(recv + r * bytes, a.send, bytes);
  return wait_all(t, reqs, a.deadline);
}

Status direct_scatter(transport::Transport& t, const CollArgs& a) {
  const int r = t.rank(), n = t.size();
  const std::size_t bytes = a.count * elem_bytes(a);
  if (a.count == 0) return Status();
  if (r != a.root) return transport::recv(t, a.root, a.tag(0), a.recv, bytes, a.deadline);
  const char* send = static_cast<const char*>(a.send);
  std::vector<RequestPtr> reqs;
  for (int q = 0; q < n; ++q) {
    if (q == r) continue;
    CHORUS_ASSIGN_OR_RETURN(RequestPtr req, t.post_send(q, a.tag(0), send + q * bytes, bytes));
    reqs.push_back(std::move(req));
  }
  copy_if_distinct(a.recv, send + r * bytes, bytes);
  return wait_all(t, reqs, a.deadline);
}

}  // namespace chorus::algo
