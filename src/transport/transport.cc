// Blocking helpers over the Transport interface.
#include "transport/transport.h"

namespace chorus::transport {

Status send(Transport& t, int peer, Tag tag, const void* data, std::size_t bytes, Deadline d) {
  CHORUS_ASSIGN_OR_RETURN(RequestPtr r, t.post_send(peer, tag, data, bytes));
  return wait_one(t, r.get(), d);
}

Status recv(Transport& t, int peer, Tag tag, void* data, std::size_t bytes, Deadline d) {
  CHORUS_ASSIGN_OR_RETURN(RequestPtr r, t.post_recv(peer, tag, data, bytes));
  return wait_one(t, r.get(), d);
}

Status send_recv(Transport& t, int to, Tag send_tag, const void* send_data, std::size_t send_bytes,
                 int from, Tag recv_tag, void* recv_data, std::size_t recv_bytes, Deadline d) {
  CHORUS_ASSIGN_OR_RETURN(RequestPtr r, t.post_recv(from, recv_tag, recv_data, recv_bytes));
  CHORUS_ASSIGN_OR_RETURN(RequestPtr s, t.post_send(to, send_tag, send_data, send_bytes));
  Request* reqs[2] = {r.get(), s.get()};
  return t.wait(std::span<Request* const>(reqs, 2), d);
}

}  // namespace chorus::transport
