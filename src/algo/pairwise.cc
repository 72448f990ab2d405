// Pairwise-exchange all_to_all and all_to_all_v: in step s (1..n-1) every rank sends
// its block for rank + s and receives the block from rank - s, so each step is a
// permutation and no rank is flooded.
#include <cstring>
#include <string>
#include <vector>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/patterns.h"
#include "algo/scratch.h"

namespace chorus::algo {

Status pairwise_all_to_all(transport::Transport& t, const CollArgs& a) {
  const int r = t.rank(), n = t.size();
  const std::size_t bytes = a.count * elem_bytes(a);
  if (a.count == 0) return Status();
  char* recv = static_cast<char*>(a.recv);
  const char* send = static_cast<const char*>(a.send);
  // In place, incoming blocks would overwrite blocks not yet sent: send from a copy.
  const Scratch copy(ScratchSlot::kPairwise, send == recv && n > 1 ? bytes * n : 0);
  if (copy.data() != nullptr) {
    std::memcpy(copy.data(), send, bytes * n);
    send = copy.data();
  }
  copy_if_distinct(recv + r * bytes, send + r * bytes, bytes);
  for (int s = 1; s < n; ++s) {
    const int to = pairwise_to(r, s, n), from = pairwise_from(r, s, n);
    CHORUS_RETURN_IF_ERROR(exchange(t, a.tag(static_cast<std::uint32_t>(s)), to, send + to * bytes,
                                    bytes, from, recv + from * bytes, bytes, a.deadline));
  }
  return Status();
}

Status pairwise_all_to_all_v(transport::Transport& t, const CollArgs& a) {
  const int r = t.rank(), n = t.size();
  const std::size_t esz = elem_bytes(a);
  char* recv = static_cast<char*>(a.recv);
  const char* send = static_cast<const char*>(a.send);
  if (a.send_counts[r] != a.recv_counts[r]) {
    return Status(ErrorCode::kDesync,
                  "all_to_all_v: send_counts[" + std::to_string(r) + "] = " +
                      std::to_string(a.send_counts[r]) + " but recv_counts[" + std::to_string(r) +
                      "] = " + std::to_string(a.recv_counts[r]),
                  r);
  }
  if (a.recv_counts[r] > 0) {
    std::memmove(recv + a.recv_displs[r] * esz, send + a.send_displs[r] * esz,
                 a.recv_counts[r] * esz);
  }
  for (int s = 1; s < n; ++s) {
    const int to = pairwise_to(r, s, n), from = pairwise_from(r, s, n);
    CHORUS_RETURN_IF_ERROR(exchange(t, a.tag(static_cast<std::uint32_t>(s)), to,
                                    send + a.send_displs[to] * esz, a.send_counts[to] * esz, from,
                                    recv + a.recv_displs[from] * esz, a.recv_counts[from] * esz,
                                    a.deadline));
  }
  return Status();
}

}  // namespace chorus::algo
