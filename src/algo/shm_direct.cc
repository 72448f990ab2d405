// shm_direct all_reduce: reduces straight out of the ranks' shared windows (one per rank,
// mapped by every rank; transport::SharedWindows). Per chunk of the message:
//   1. every rank copies its chunk into (one half of) its window;          barrier
//   2. rank r reduces share r (1/L of the chunk) across all L windows in rank order
//      0..L-1 into its recv buffer (kAvg finalized there), and copies the result into
//      the other half of its window;                                     barrier
//   3. every rank copies the other L-1 reduced shares out to its recv buffer.
// Halves follow the rule of shm_window.h: the chunk goes into half(b), the reduced shares
// into half(b + 1), so step 3 of chunk c and step 1 of chunk c+1 run without a barrier in
// between (two barriers per chunk). Every element is reduced once, by its owner, in the
// same order: all ranks get the same bits.
// Without shared windows (e.g. TCP) it runs ring_all_reduce.
#include <cstring>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/patterns.h"
#include "algo/shm_window.h"

namespace chorus::algo {

Status shm_direct_all_reduce(transport::Transport& t, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  const std::size_t esz = elem_bytes(a);
  transport::SharedWindows* w = usable_windows(t, 64 * esz);
  if (w == nullptr) return ring_all_reduce(t, a);
  const std::size_t chunk_elems = window_half_bytes(*w) / esz;
  const auto* send = static_cast<const char*>(a.send);
  auto* recv = static_cast<char*>(a.recv);
  std::uint32_t step = 0;
  for (std::size_t first = 0; first < a.count; first += chunk_elems) {
    const std::size_t cnt = a.count - first < chunk_elems ? a.count - first : chunk_elems;
    const std::uint64_t b = w->barriers();
    std::memcpy(window_half(*w, r, b), send + first * esz, cnt * esz);
    CHORUS_RETURN_IF_ERROR(w->barrier(a.tag(step++), a.deadline));
    const Block s = split_block(cnt, n, r);
    if (s.count > 0) {
      char* dst = recv + (first + s.offset) * esz;
      reduce_windows(*w, n, b, s.offset * esz, s.count, dst, a, r,
                     own_part(send + (first + s.offset) * esz, dst, r));
      std::memcpy(window_half(*w, r, b + 1) + s.offset * esz, dst, s.count * esz);
    }
    CHORUS_RETURN_IF_ERROR(w->barrier(a.tag(step++), a.deadline));
    for (int j = 0; j < n; ++j) {
      const Block o = split_block(cnt, n, j);
      if (j == r || o.count == 0) continue;
      std::memcpy(recv + (first + o.offset) * esz, window_half(*w, j, b + 1) + o.offset * esz,
                  o.count * esz);
    }
  }
  return Status::ok();
}

}  // namespace chorus::algo
