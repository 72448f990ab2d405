// Data movement straight through the shared windows, one window barrier per chunk (the
// rule of shm_window.h); every byte is written once into a window and read once out:
//   broadcast: the root copies the chunk in; after the barrier the others copy it out.
//   all_gather: every rank copies its chunk in; after the barrier each copies the
//     others' chunks out.
//   all_to_all: every rank copies chunk c of each of its n - 1 blocks for the others into
//     a slot per peer; after the barrier rank r copies its slot of every other window out.
//   barrier: one mailbox exchange of nothing.
// What stays on a rank (the root's message, a rank's own block) goes straight from send
// to recv chunk by chunk, while the rank waits at the chunk's barrier for the others
// (SharedWindows::barrier_meanwhile): off the critical path, and for broadcast and
// all_gather from the lines the copy in just brought into this processor's cache.
// What fits the transport's mailboxes (SharedWindows::exchange: up to ~4 KB per rank)
// goes through them instead, in one exchange: every rank publishes what it sends (the
// root alone for broadcast), then copies what it needs out of the mailboxes.
// Without shared windows they run the default algorithm of their collective.
#include <cstring>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/shm_window.h"

namespace chorus::algo {

Status shm_broadcast(transport::Transport& t, const CollArgs& a) {
  const std::size_t esz = elem_bytes(a);
  transport::SharedWindows* w = usable_windows(t, 64 * esz);
  if (w == nullptr) return tree_broadcast(t, a);
  const std::size_t chunk = window_half_bytes(*w) / esz;
  const bool root = t.rank() == a.root;
  const auto* send = static_cast<const char*>(a.send);
  auto* recv = static_cast<char*>(a.recv);
  if (a.count * esz <= w->mailbox_bytes()) {
    if (root) copy_if_distinct(recv, send, a.count * esz);
    CHORUS_RETURN_IF_ERROR(
        w->exchange(recv, root ? a.count * esz : 0, a.tag(0), a.deadline));
    if (!root) std::memcpy(recv, w->mailbox(a.root), a.count * esz);
    return Status::ok();
  }
  std::uint32_t step = 0;
  for (std::size_t first = 0; first < a.count; first += chunk) {
    const std::size_t bytes = (a.count - first < chunk ? a.count - first : chunk) * esz;
    const std::uint64_t b = w->barriers();
    if (root) std::memcpy(window_half(*w, a.root, b), send + first * esz, bytes);
    CHORUS_RETURN_IF_ERROR(w->barrier_meanwhile(a.tag(step++), a.deadline, [&] {
      if (root) copy_if_distinct(recv + first * esz, send + first * esz, bytes);
    }));
    if (!root) std::memcpy(recv + first * esz, window_half(*w, a.root, b), bytes);
  }
  return Status::ok();
}

Status shm_all_gather(transport::Transport& t, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  const std::size_t esz = elem_bytes(a);
  transport::SharedWindows* w = usable_windows(t, 64 * esz);
  if (w == nullptr) return ring_all_gather(t, a);
  const std::size_t chunk = window_half_bytes(*w) / esz;
  const auto* send = static_cast<const char*>(a.send);
  auto* recv = static_cast<char*>(a.recv);
  char* own = recv + r * a.count * esz;
  if (a.count * esz <= w->mailbox_bytes()) {
    copy_if_distinct(own, send, a.count * esz);
    CHORUS_RETURN_IF_ERROR(w->exchange(send, a.count * esz, a.tag(0), a.deadline));
    for (int j = 0; j < n; ++j)
      if (j != r) std::memcpy(recv + j * a.count * esz, w->mailbox(j), a.count * esz);
    return Status::ok();
  }
  std::uint32_t step = 0;
  for (std::size_t first = 0; first < a.count; first += chunk) {
    const std::size_t bytes = (a.count - first < chunk ? a.count - first : chunk) * esz;
    const std::uint64_t b = w->barriers();
    std::memcpy(window_half(*w, r, b), send + first * esz, bytes);
    CHORUS_RETURN_IF_ERROR(w->barrier_meanwhile(a.tag(step++), a.deadline, [&] {
      copy_if_distinct(own + first * esz, send + first * esz, bytes);
    }));
    for (int j = 0; j < n; ++j)
      if (j != r) std::memcpy(recv + (j * a.count + first) * esz, window_half(*w, j, b), bytes);
  }
  return Status::ok();
}

Status shm_all_to_all(transport::Transport& t, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  const std::size_t esz = elem_bytes(a);
  transport::SharedWindows* w = usable_windows(t, 64 * esz * static_cast<std::size_t>(n - 1));
  if (w == nullptr) return pairwise_all_to_all(t, a);
  // A half holds one slot per peer: the chunk of the block for rank p sits in slot
  // slot(p) of the sender's window (its own block is never staged).
  const std::size_t chunk = window_half_bytes(*w) / esz / static_cast<std::size_t>(n - 1);
  auto slot = [](int to, int from) { return static_cast<std::size_t>(to < from ? to : to - 1); };
  const auto* send = static_cast<const char*>(a.send);
  auto* recv = static_cast<char*>(a.recv);
  const std::size_t block = a.count * esz;
  if (block * static_cast<std::size_t>(n) <= w->mailbox_bytes()) {
    // In place is safe: the whole send buffer is in the mailbox before any block is
    // written, and block r stays where it is.
    CHORUS_RETURN_IF_ERROR(w->exchange(send, block * n, a.tag(0), a.deadline));
    for (int q = 0; q < n; ++q) {
      const char* from = q == r ? send + r * block
                                : static_cast<const char*>(w->mailbox(q)) + r * block;
      copy_if_distinct(recv + q * block, from, block);
    }
    return Status::ok();
  }
  std::uint32_t step = 0;
  for (std::size_t first = 0; first < a.count; first += chunk) {
    const std::size_t bytes = (a.count - first < chunk ? a.count - first : chunk) * esz;
    const std::uint64_t b = w->barriers();
    char* mine = window_half(*w, r, b);
    // In place (send == recv) is safe: chunk c of every block is staged before any rank
    // writes chunk c of a block, and later chunks sit at later offsets. This rank's own
    // block goes from send to recv during the barrier (in place: it stays).
    for (int p = 0; p < n; ++p)
      if (p != r)
        std::memcpy(mine + slot(p, r) * chunk * esz, send + (p * a.count + first) * esz, bytes);
    CHORUS_RETURN_IF_ERROR(w->barrier_meanwhile(a.tag(step++), a.deadline, [&] {
      const std::size_t mine_at = (r * a.count + first) * esz;
      copy_if_distinct(recv + mine_at, send + mine_at, bytes);
    }));
    for (int q = 0; q < n; ++q)
      if (q != r)
        std::memcpy(recv + (q * a.count + first) * esz,
                    window_half(*w, q, b) + slot(r, q) * chunk * esz, bytes);
  }
  return Status::ok();
}

Status shm_barrier(transport::Transport& t, const CollArgs& a) {
  transport::SharedWindows* w = usable_windows(t, 0);
  if (w == nullptr) return dissemination_barrier(t, a);
  if (w->mailbox_bytes() > 0) return w->exchange(nullptr, 0, a.tag(0), a.deadline);
  return w->barrier(a.tag(0), a.deadline);
}

}  // namespace chorus::algo
