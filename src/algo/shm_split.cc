// The split forms of reduce_scatter and all_gather (algorithm.h: ring_*_split, the
// intra-host phases of the hierarchical all_reduce) through the shared windows. Rank r's
// share is split_block(count, n, r); the shares are walked together, c elements of each
// per chunk (a window half holds n slots of c elements):
//   reduce_scatter_split: every rank copies element k.. of every share into slot j of its
//     window; barrier; rank r reduces slot r across the n windows, in rank order, into its
//     share of recv (not finalized: the caller finalizes).
//   all_gather_split: every rank copies element k.. of its own share into its window;
//     barrier; each copies the other ranks' pieces into their shares of recv.
// One barrier per chunk (the rule of shm_window.h). Without windows, the ring forms.
#include <algorithm>
#include <cstring>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/patterns.h"
#include "algo/shm_window.h"

namespace chorus::algo {

namespace {
// Elements of each share per chunk: n slots fill a window half, each a multiple of 64 bytes.
std::size_t slot_elems(transport::SharedWindows& w, int n, std::size_t esz) {
  return window_half_bytes(w) / static_cast<std::size_t>(n) / 64 * 64 / esz;
}
}  // namespace

Status shm_reduce_scatter_split(transport::Transport& t, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  const std::size_t esz = elem_bytes(a);
  transport::SharedWindows* w = usable_windows(t, 64 * esz * static_cast<std::size_t>(n));
  if (w == nullptr) return ring_reduce_scatter_split(t, a);
  const std::size_t c = slot_elems(*w, n, esz), slot = c * esz;
  const std::size_t longest = split_block(a.count, n, 0).count;  // the first shares are longest
  const Block mine = split_block(a.count, n, r);
  const auto* send = static_cast<const char*>(a.send);
  auto* recv = static_cast<char*>(a.recv);
  CollArgs sum = a;  // reduce_windows finalizes kAvg: the caller does, over the whole job
  if (sum.op == ReduceOp::kAvg) sum.op = ReduceOp::kSum;
  std::uint32_t step = 0;
  for (std::size_t k = 0; k < longest; k += c) {
    const std::uint64_t b = w->barriers();
    char* half = window_half(*w, r, b);
    for (int j = 0; j < n; ++j) {
      const Block s = split_block(a.count, n, j);
      if (k < s.count)
        std::memcpy(half + j * slot, send + (s.offset + k) * esz, std::min(c, s.count - k) * esz);
    }
    CHORUS_RETURN_IF_ERROR(w->barrier(a.tag(step++), a.deadline));
    if (k < mine.count)
      reduce_windows(*w, n, b, r * slot, std::min(c, mine.count - k),
                     recv + (mine.offset + k) * esz, sum);
  }
  return Status::ok();
}

Status shm_all_gather_split(transport::Transport& t, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  const std::size_t esz = elem_bytes(a);
  transport::SharedWindows* w = usable_windows(t, 64 * esz);
  if (w == nullptr) return ring_all_gather_split(t, a);
  const std::size_t c = window_half_bytes(*w) / esz;
  const std::size_t longest = split_block(a.count, n, 0).count;
  const Block mine = split_block(a.count, n, r);
  auto* recv = static_cast<char*>(a.recv);
  std::uint32_t step = 0;
  for (std::size_t k = 0; k < longest; k += c) {
    const std::uint64_t b = w->barriers();
    if (k < mine.count)
      std::memcpy(window_half(*w, r, b), recv + (mine.offset + k) * esz,
                  std::min(c, mine.count - k) * esz);
    CHORUS_RETURN_IF_ERROR(w->barrier(a.tag(step++), a.deadline));
    for (int j = 0; j < n; ++j) {
      const Block s = split_block(a.count, n, j);
      if (j != r && k < s.count)
        std::memcpy(recv + (s.offset + k) * esz, window_half(*w, j, b),
                    std::min(c, s.count - k) * esz);
    }
  }
  return Status::ok();
}

}  // namespace chorus::algo
