// Reductions straight out of the shared windows for small and medium messages, one
// window barrier per chunk (the rule of shm_window.h):
//   all_reduce ("shm", one shot): every rank copies the chunk into its window; after the
//     barrier every rank reduces the whole chunk across all windows, in rank order, into
//     its recv buffer. Same order, same kernel on every rank: the same bits everywhere.
//     A message that fits the transport's mailboxes (SharedWindows::exchange, ~4 KB) goes
//     through them instead: one cache-line hand-off per peer carries payload and arrival.
//   reduce: the same, but only the root reduces.
//   reduce_scatter: every rank copies chunk c of each of its n blocks into its window (its
//     own block only when it cannot read it from its send buffer: own_part());
//     after the barrier rank r reduces sub-chunk r across all windows into its recv
//     (through the mailboxes, like all_reduce, when its n blocks fit).
// Without shared windows they run the default algorithm of their collective.
#include <cstring>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/shm_window.h"
#include "kernels/reduce.h"

namespace chorus::algo {

namespace {

// dst = op over ranks j = 0..n-1, in rank order, of `count` elements at part(j), finalized:
// the same order and kernel on every rank, so every rank gets the same bits.
template <class Part>
void reduce_in_rank_order(char* dst, int n, Part part, std::size_t count, const CollArgs& a) {
  kernels::reduce(dst, part(0), part(1), count, a.dtype, a.op);
  for (int j = 2; j < n; ++j) kernels::reduce(dst, dst, part(j), count, a.dtype, a.op);
  kernels::finalize(dst, count, a.dtype, a.op, n);
}

}  // namespace

void reduce_windows(transport::SharedWindows& w, int n, std::uint64_t b, std::size_t off,
                    std::size_t count, char* dst, const CollArgs& a, int me,
                    const char* own) {
  reduce_in_rank_order(dst, n, [&](int j) -> const char* {
    return j == me && own != nullptr ? own : window_half(w, j, b) + off;
  }, count, a);
}

namespace {

// One shot through the mailboxes: the payload rides with the word the peers wait on.
// This rank's own part is read from its send buffer where it may (own_part()).
Status one_shot_mailbox(transport::SharedWindows& w, const CollArgs& a, int n, int r,
                        bool reduces) {
  const std::size_t bytes = a.count * elem_bytes(a);
  CHORUS_RETURN_IF_ERROR(w.exchange(a.send, bytes, a.tag(0), a.deadline));
  if (!reduces) return Status::ok();
  const char* own = own_part(a.send, a.recv, r);
  reduce_in_rank_order(static_cast<char*>(a.recv), n, [&](int j) -> const void* {
    return j == r && own != nullptr ? own : w.mailbox(j);
  }, a.count, a);
  return Status::ok();
}

// all_reduce (all ranks reduce) and reduce (`root` only; -1 = all).
Status one_shot(transport::SharedWindows& w, transport::Transport& t, const CollArgs& a,
                int reducer) {
  const int n = t.size(), r = t.rank();
  const std::size_t esz = elem_bytes(a);
  if (a.count * esz <= w.mailbox_bytes())
    return one_shot_mailbox(w, a, n, r, reducer < 0 || reducer == r);
  const std::size_t chunk = window_half_bytes(w) / esz;
  const auto* send = static_cast<const char*>(a.send);
  auto* recv = static_cast<char*>(a.recv);
  std::uint32_t step = 0;
  for (std::size_t first = 0; first < a.count; first += chunk) {
    const std::size_t cnt = a.count - first < chunk ? a.count - first : chunk;
    const std::uint64_t b = w.barriers();
    std::memcpy(window_half(w, r, b), send + first * esz, cnt * esz);
    CHORUS_RETURN_IF_ERROR(w.barrier(a.tag(step++), a.deadline));
    if (reducer < 0 || reducer == r)
      reduce_windows(w, n, b, 0, cnt, recv + first * esz, a, r,
                     own_part(send + first * esz, recv + first * esz, r));
  }
  return Status::ok();
}

}  // namespace

Status shm_all_reduce(transport::Transport& t, const CollArgs& a) {
  transport::SharedWindows* w = usable_windows(t, 64 * elem_bytes(a));
  if (w == nullptr) return ring_all_reduce(t, a);
  return one_shot(*w, t, a, -1);
}

Status shm_reduce(transport::Transport& t, const CollArgs& a) {
  transport::SharedWindows* w = usable_windows(t, 64 * elem_bytes(a));
  if (w == nullptr) return tree_reduce(t, a);
  return one_shot(*w, t, a, a.root);
}

Status shm_reduce_scatter(transport::Transport& t, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  const std::size_t esz = elem_bytes(a);
  transport::SharedWindows* w = usable_windows(t, 64 * esz * static_cast<std::size_t>(n));
  if (w == nullptr) return ring_reduce_scatter(t, a);
  const std::size_t chunk = window_half_bytes(*w) / esz / static_cast<std::size_t>(n);
  const auto* send = static_cast<const char*>(a.send);
  auto* recv = static_cast<char*>(a.recv);
  const std::size_t block = a.count * esz;
  if (block * static_cast<std::size_t>(n) <= w->mailbox_bytes()) {
    CHORUS_RETURN_IF_ERROR(w->exchange(send, block * n, a.tag(0), a.deadline));
    const char* own = own_part(send + r * block, recv, r);
    reduce_in_rank_order(recv, n, [&](int j) -> const char* {
      return j == r && own != nullptr ? own : static_cast<const char*>(w->mailbox(j)) + r * block;
    }, a.count, a);
    return Status::ok();
  }
  std::uint32_t step = 0;
  for (std::size_t first = 0; first < a.count; first += chunk) {
    const std::size_t cnt = a.count - first < chunk ? a.count - first : chunk;
    const std::uint64_t b = w->barriers();
    char* mine = window_half(*w, r, b);
    // This rank's own block is read from its send buffer where it may: no peer reads it
    // from the window, so it is not copied there (at 2 ranks, half the copying).
    const char* own = own_part(send + (r * a.count + first) * esz, recv + first * esz, r);
    for (int j = 0; j < n; ++j)
      if (j != r || own == nullptr)
        std::memcpy(mine + j * chunk * esz, send + (j * a.count + first) * esz, cnt * esz);
    CHORUS_RETURN_IF_ERROR(w->barrier(a.tag(step++), a.deadline));
    reduce_windows(*w, n, b, r * chunk * esz, cnt, recv + first * esz, a, r, own);
  }
  return Status::ok();
}

}  // namespace chorus::algo
