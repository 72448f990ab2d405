// Chunk arithmetic and small post/wait helpers shared by the algorithm files.
#include "algo/chunking.h"

#include <cstring>

#include "kernels/reduce.h"

namespace chorus::algo {

std::size_t elem_bytes(const CollArgs& a) { return kernels::element_size(a.dtype); }

Chunking make_chunking(const CollArgs& a, std::size_t max_count) {
  const std::size_t esz = elem_bytes(a);
  std::size_t elems = esz ? a.chunk_bytes / esz : 1;
  if (elems == 0) elems = 1;
  const std::size_t min_elems = (max_count + kMaxChunksPerBlock - 1) / kMaxChunksPerBlock;
  if (elems < min_elems) elems = min_elems;
  return Chunking{elems};
}

Status wait_all(transport::Transport& t, std::vector<transport::RequestPtr>& reqs, Deadline d) {
  if (reqs.empty()) return Status();
  std::vector<transport::Request*> raw;
  raw.reserve(reqs.size());
  for (auto& r : reqs) raw.push_back(r.get());
  CHORUS_RETURN_IF_ERROR(t.wait(std::span<transport::Request* const>(raw), d));
  reqs.clear();
  return Status();
}

Status exchange(transport::Transport& t, transport::Tag tag, int to, const void* send_data,
                std::size_t send_bytes, int from, void* recv_data, std::size_t recv_bytes,
                Deadline d) {
  std::vector<transport::RequestPtr> reqs;
  if (from >= 0 && recv_bytes > 0) {
    CHORUS_ASSIGN_OR_RETURN(auto r, t.post_recv(from, tag, recv_data, recv_bytes));
    reqs.push_back(std::move(r));
  }
  if (to >= 0 && send_bytes > 0) {
    CHORUS_ASSIGN_OR_RETURN(auto s, t.post_send(to, tag, send_data, send_bytes));
    reqs.push_back(std::move(s));
  }
  return wait_all(t, reqs, d);
}

void copy_if_distinct(void* dst, const void* src, std::size_t bytes) {
  if (dst != src && bytes > 0) std::memmove(dst, src, bytes);
}

}  // namespace chorus::algo
