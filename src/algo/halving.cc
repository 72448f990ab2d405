// Recursive halving reduce_scatter over a power of two of ranks: at distances n/2, n/4,
// ..., 1 each rank sends the half of its current range of blocks that its partner keeps
// and reduces the half it keeps with what the partner sent; after log2(n) exchanges it
// holds its own block, reduced. The bytes are the ring's ((n-1)/n of the input per
// rank), in log2(n) messages instead of n-1: for small messages, where the steps are the
// time. Other rank counts run the ring.
#include <cstring>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/scratch.h"
#include "kernels/reduce.h"

namespace chorus::algo {

Status rh_reduce_scatter(transport::Transport& t, const CollArgs& a) {
  const int r = t.rank(), n = t.size();
  if (n < 2 || (n & (n - 1)) != 0) return ring_reduce_scatter(t, a);
  const std::size_t esz = elem_bytes(a), bytes = a.count * esz;
  if (a.count == 0) return Status();
  const char* src = static_cast<const char*>(a.send);
  const std::size_t half = static_cast<std::size_t>(n / 2) * bytes;
  // work: the partial sums of the kept range (block lo + i at work + i * bytes);
  // tmp: the partner's half of that range.
  const Scratch work(ScratchSlot::kRingBlock0, half), tmp(ScratchSlot::kRhd, half);
  int lo = 0;
  std::uint32_t step = 0;
  for (int d = n / 2; d >= 1; d /= 2, ++step) {
    const int partner = r ^ d;
    const bool lower = (r & d) == 0;
    const int keep_lo = lower ? lo : lo + d, give_lo = lower ? lo + d : lo;
    // Block b: in the input at the first step, then among the running sums of the
    // range [lo, lo + 2d), which start at work.
    auto block = [&](int b) {
      return step == 0 ? src + static_cast<std::size_t>(b) * bytes
                       : work.data() + static_cast<std::size_t>(b - lo) * bytes;
    };
    const std::size_t span = static_cast<std::size_t>(d) * bytes;
    CHORUS_RETURN_IF_ERROR(exchange(t, a.tag(step), partner, block(give_lo), span, partner,
                                    tmp.data(), span, a.deadline));
    // The kept blocks' sums go to the front of work; the lower rank's data first.
    const char* mine = block(keep_lo);
    const std::size_t count = static_cast<std::size_t>(d) * a.count;
    if (lower) {
      kernels::reduce(work.data(), mine, tmp.data(), count, a.dtype, a.op);
    } else {
      kernels::reduce(work.data(), tmp.data(), mine, count, a.dtype, a.op);
    }
    lo = keep_lo;
  }
  kernels::finalize(work.data(), a.count, a.dtype, a.op, n);
  std::memcpy(a.recv, work.data(), bytes);
  return Status();
}

}  // namespace chorus::algo
