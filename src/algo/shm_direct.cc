// shm_direct all_reduce: reduces straight out of the ranks' shared windows (one per rank,
// mapped by every rank; transport::SharedWindows). Per chunk of the message:
//   1. every rank copies its chunk into (one half of) its window;          barrier
//   2. rank r reduces share r (1/L of the chunk) across all L windows in rank order
//      0..L-1 into its recv buffer (kAvg finalized there), and copies the result back
//      into its window;                                                     barrier
//   3. every rank copies the other L-1 reduced shares out to its recv buffer.
// Chunks alternate between the two halves of each window, so step 3 of chunk c and
// step 1 of chunk c+1 run without a barrier in between (two barriers per chunk). Every
// element is reduced once, by its owner, in the same order: all ranks get the same bits.
// Without shared windows (e.g. TCP) it runs ring_all_reduce.
#include <cstring>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/patterns.h"
#include "kernels/reduce.h"

namespace chorus::algo {

namespace {

// Reduces share `s` (elements [s.offset, s.offset + s.count) of the chunk at byte offset
// `off` of each window half) across all windows in rank order into `dst`.
void reduce_share(transport::SharedWindows& w, int n, std::size_t off, const Block& s,
                  std::size_t esz, char* dst, const CollArgs& a) {
  auto at = [&](int j) { return static_cast<const char*>(w.window(j)) + off + s.offset * esz; };
  kernels::reduce(dst, at(0), at(1), s.count, a.dtype, a.op);
  for (int j = 2; j < n; ++j) kernels::reduce(dst, dst, at(j), s.count, a.dtype, a.op);
  kernels::finalize(dst, s.count, a.dtype, a.op, n);
}

}  // namespace

Status shm_direct_all_reduce(transport::Transport& t, const CollArgs& a) {
  transport::SharedWindows* w = t.shared_windows();
  const int n = t.size(), r = t.rank();
  const std::size_t esz = elem_bytes(a);
  // Each half window holds one chunk; keep chunks a multiple of 64 bytes and of esz.
  const std::size_t half = w != nullptr ? w->window_bytes() / 2 / 64 * 64 : 0;
  if (w == nullptr || n < 2 || half < 64 * esz) return ring_all_reduce(t, a);
  if (a.count == 0) return Status::ok();
  const std::size_t chunk_elems = half / esz;
  const std::size_t chunks = (a.count + chunk_elems - 1) / chunk_elems;
  const auto* send = static_cast<const char*>(a.send);
  auto* recv = static_cast<char*>(a.recv);
  // The half a chunk uses continues the alternation of earlier operations: the half the
  // previous operation read last may still be read by slower ranks.
  const std::uint64_t base = w->barriers() / 2;
  char* mine = static_cast<char*>(w->window(r));
  std::uint32_t step = 0;
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::size_t first = c * chunk_elems;
    const std::size_t cnt = a.count - first < chunk_elems ? a.count - first : chunk_elems;
    const std::size_t off = ((base + c) % 2) * half;
    std::memcpy(mine + off, send + first * esz, cnt * esz);
    CHORUS_RETURN_IF_ERROR(w->barrier(a.tag(step++), a.deadline));
    const Block s = split_block(cnt, n, r);
    if (s.count > 0) {
      char* dst = recv + (first + s.offset) * esz;
      reduce_share(*w, n, off, s, esz, dst, a);
      std::memcpy(mine + off + s.offset * esz, dst, s.count * esz);
    }
    CHORUS_RETURN_IF_ERROR(w->barrier(a.tag(step++), a.deadline));
    for (int j = 0; j < n; ++j) {
      const Block o = split_block(cnt, n, j);
      if (j == r || o.count == 0) continue;
      std::memcpy(recv + (first + o.offset) * esz,
                  static_cast<const char*>(w->window(j)) + off + o.offset * esz, o.count * esz);
    }
  }
  return Status::ok();
}

}  // namespace chorus::algo
