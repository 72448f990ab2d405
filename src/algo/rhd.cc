// Recursive halving-doubling all_reduce (Rabenseifner): reduce-scatter by recursive
// halving, then all-gather by recursive doubling, over the largest power of two p <= n;
// the n - p extra ranks fold their data into a partner first and get the result last.
#include <vector>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/patterns.h"
#include "algo/scratch.h"
#include "kernels/reduce.h"

namespace chorus::algo {

Status rhd_all_reduce(transport::Transport& t, const CollArgs& a) {
  const int r = t.rank(), n = t.size();
  const std::size_t esz = elem_bytes(a), count = a.count;
  if (count == 0) return Status();
  char* buf = static_cast<char*>(a.recv);
  copy_if_distinct(buf, a.send, count * esz);
  if (n == 1) {
    kernels::finalize(buf, count, a.dtype, a.op, n);
    return Status();
  }
  const int p = rhd_pow2(n);
  int log_p = 0;
  while ((1 << log_p) < p) ++log_p;
  const std::uint32_t fold_step = 0, unfold_step = 2 * log_p + 1;
  const int vr = rhd_vrank(r, n), fold = rhd_fold_partner(r, n);
  const Scratch tmp(ScratchSlot::kRhd, count * esz);
  // Pre-step: even ranks of the first 2(n-p) hand their data to their odd neighbour and
  // wait for the finished result.
  if (vr < 0) {
    CHORUS_RETURN_IF_ERROR(transport::send(t, fold, a.tag(fold_step), buf, count * esz, a.deadline));
    return transport::recv(t, fold, a.tag(unfold_step), buf, count * esz, a.deadline);
  }
  if (fold >= 0) {
    CHORUS_RETURN_IF_ERROR(transport::recv(t, fold, a.tag(fold_step), tmp.data(), count * esz,
                                           a.deadline));
    kernels::reduce(buf, tmp.data(), buf, count, a.dtype, a.op);  // lower rank's data first
  }
  // Recursive halving: after the step with distance d, this rank holds the partial
  // reduction of blocks [lo, lo + d) (of p blocks); at the end it owns block vr.
  int lo = 0;
  int step = 1;
  for (int d = p / 2; d >= 1; d /= 2, ++step) {
    const int partner = rhd_rank(vr ^ d, n);
    const bool lower = (vr & d) == 0;
    const int keep_lo = lower ? lo : lo + d, give_lo = lower ? lo + d : lo;
    const Block keep = split_range(count, p, keep_lo, keep_lo + d);
    const Block give = split_range(count, p, give_lo, give_lo + d);
    CHORUS_RETURN_IF_ERROR(exchange(t, a.tag(step), partner, buf + give.offset * esz,
                                    give.count * esz, partner, tmp.data(), keep.count * esz,
                                    a.deadline));
    // Combine in rank-independent order: the lower virtual rank's data first.
    char* mine = buf + keep.offset * esz;
    if (lower) {
      kernels::reduce(mine, mine, tmp.data(), keep.count, a.dtype, a.op);
    } else {
      kernels::reduce(mine, tmp.data(), mine, keep.count, a.dtype, a.op);
    }
    lo = keep_lo;
  }
  const Block own = split_block(count, p, vr);
  kernels::finalize(buf + own.offset * esz, own.count, a.dtype, a.op, n);
  // Recursive doubling: swap owned ranges with partners at distance 1, 2, ..., p/2.
  for (int d = 1; d < p; d *= 2, ++step) {
    const int partner = rhd_rank(vr ^ d, n);
    const int mine_lo = vr & ~(d - 1), theirs_lo = mine_lo ^ d;
    const Block mine = split_range(count, p, mine_lo, mine_lo + d);
    const Block theirs = split_range(count, p, theirs_lo, theirs_lo + d);
    CHORUS_RETURN_IF_ERROR(exchange(t, a.tag(step), partner, buf + mine.offset * esz,
                                    mine.count * esz, partner, buf + theirs.offset * esz,
                                    theirs.count * esz, a.deadline));
  }
  // Post-step: hand the result back to the folded partner.
  if (fold >= 0) {
    return transport::send(t, fold, a.tag(unfold_step), buf, count * esz, a.deadline);
  }
  return Status();
}

}  // namespace chorus::algo
