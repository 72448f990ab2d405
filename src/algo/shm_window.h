// The one rule every shared-window algorithm follows, so that any sequence of them (and
// of their chunks) can reuse the two halves of each rank's window without extra barriers:
//
//   Data a rank writes into its window while it has completed b window barriers goes
//   into half (b % 2), and may be read by any rank until that rank arrives at barrier
//   b + 2.
//
// So a chunk is: write into half(b), barrier, read half(b) of the windows; the next
// write (one barrier later) lands in the other half, and a write into half(b) again
// happens only after barrier b + 2, which every rank reaches after its last read.
#pragma once
#include <cstddef>
#include <cstdint>

#include "transport/transport.h"

namespace chorus::algo {

// Usable bytes of one half of a window (a multiple of 64).
inline std::size_t window_half_bytes(transport::SharedWindows& w) {
  return w.window_bytes() / 2 / 64 * 64;
}

// Half (barriers % 2) of `rank`'s window.
inline char* window_half(transport::SharedWindows& w, int rank, std::uint64_t barriers) {
  return static_cast<char*>(w.window(rank)) + (barriers % 2) * window_half_bytes(w);
}

// dst = op over ranks j = 0..n-1, in rank order, of `count` elements at byte offset `off`
// of half(b) of window j, finalized (kAvg); a.dtype and a.op name the reduction
// (shm_reduce.cc; used by shm_direct too). `own`, when not null, holds the same elements
// as rank `me`'s window there and is read instead (own_part()).
struct CollArgs;
void reduce_windows(transport::SharedWindows& w, int n, std::uint64_t b, std::size_t off,
                    std::size_t count, char* dst, const CollArgs& a, int me = -1,
                    const char* own = nullptr);

// This rank's part of a reduction where it lies in its private memory (`src`), when it
// may be read there rather than from the rank's shared window or mailbox: lines a rank
// wrote and a peer then read have usually moved to that peer (reading them back is one
// more transfer each). Not when `src` is also the destination (in place) and this rank's
// part comes after the first two (rank >= 2): the destination holds a partial sum by then.
inline const char* own_part(const void* src, const void* dst, int rank) {
  return src != dst || rank < 2 ? static_cast<const char*>(src) : nullptr;
}

// The windows when the transport has them, more than one rank takes part, and a half
// holds at least `min_half_bytes`; null otherwise (the caller falls back).
inline transport::SharedWindows* usable_windows(transport::Transport& t,
                                                std::size_t min_half_bytes) {
  transport::SharedWindows* w = t.shared_windows();
  if (w == nullptr || t.size() < 2 || window_half_bytes(*w) < min_half_bytes) return nullptr;
  return w;
}

}  // namespace chorus::algo
