// All_reduce over the largest power of two p <= n, the n - p extra ranks folding their
// data into a partner first and getting the result last:
// - rhd (Rabenseifner): reduce-scatter by recursive halving, then all-gather by recursive
//   doubling: 2 log2(p) exchanges, 2(p-1)/p of the message sent per rank;
// - rd: recursive doubling of the whole message: log2(p) exchanges, log2(p) messages sent
//   per rank. Half the steps, for messages whose time is the steps' latency.
#include <vector>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/patterns.h"
#include "algo/scratch.h"
#include "kernels/reduce.h"

namespace chorus::algo {

namespace {

// The steps of one operation: the fold into a partner, log2(p) or 2 log2(p) exchanges, and
// the unfold (its step number after every other).
struct Pow2Steps {
  int p = 1, log_p = 0, vr = 0, fold = -1;
};

Pow2Steps pow2_steps(int r, int n) {
  Pow2Steps s;
  s.p = rhd_pow2(n);
  while ((1 << s.log_p) < s.p) ++s.log_p;
  s.vr = rhd_vrank(r, n);
  s.fold = rhd_fold_partner(r, n);
  return s;
}

// Pre-step. A rank outside the power of two (vr < 0) hands its data to its partner and
// waits for the finished result (*done = true); its partner folds that data into buf.
Status fold_in(transport::Transport& t, const CollArgs& a, const Pow2Steps& s,
               std::uint32_t unfold_step, char* buf, char* tmp, bool* done) {
  const std::size_t bytes = a.count * elem_bytes(a);
  *done = s.vr < 0;
  if (s.vr < 0) {
    CHORUS_RETURN_IF_ERROR(transport::send(t, s.fold, a.tag(0), buf, bytes, a.deadline));
    return transport::recv(t, s.fold, a.tag(unfold_step), buf, bytes, a.deadline);
  }
  if (s.fold >= 0) {
    CHORUS_RETURN_IF_ERROR(transport::recv(t, s.fold, a.tag(0), tmp, bytes, a.deadline));
    kernels::reduce(buf, tmp, buf, a.count, a.dtype, a.op);  // lower rank's data first
  }
  return Status();
}

// Post-step: hand the result back to the folded partner.
Status fold_out(transport::Transport& t, const CollArgs& a, const Pow2Steps& s,
                std::uint32_t unfold_step, const char* buf) {
  if (s.fold < 0) return Status();
  return transport::send(t, s.fold, a.tag(unfold_step), buf, a.count * elem_bytes(a),
                         a.deadline);
}

}  // namespace

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
  const Pow2Steps s = pow2_steps(r, n);
  const int p = s.p, vr = s.vr;
  const std::uint32_t unfold_step = 2 * s.log_p + 1;
  const Scratch tmp(ScratchSlot::kRhd, count * esz);
  bool done = false;
  CHORUS_RETURN_IF_ERROR(fold_in(t, a, s, unfold_step, buf, tmp.data(), &done));
  if (done) return Status();
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
  return fold_out(t, a, s, unfold_step, buf);
}

Status rd_all_reduce(transport::Transport& t, const CollArgs& a) {
  const int r = t.rank(), n = t.size();
  const std::size_t esz = elem_bytes(a), count = a.count, bytes = count * esz;
  if (count == 0) return Status();
  char* buf = static_cast<char*>(a.recv);
  copy_if_distinct(buf, a.send, bytes);
  if (n == 1) {
    kernels::finalize(buf, count, a.dtype, a.op, n);
    return Status();
  }
  const Pow2Steps s = pow2_steps(r, n);
  const std::uint32_t unfold_step = s.log_p + 1;
  const Scratch tmp(ScratchSlot::kRhd, bytes);
  bool done = false;
  CHORUS_RETURN_IF_ERROR(fold_in(t, a, s, unfold_step, buf, tmp.data(), &done));
  if (done) return Status();
  // After the step with distance d, this rank and its d-aligned group of 2d virtual ranks
  // hold the same partial sum; every pair combines the lower virtual rank's data first,
  // so all ranks end with the same bits.
  int step = 1;
  for (int d = 1; d < s.p; d *= 2, ++step) {
    const int partner = rhd_rank(s.vr ^ d, n);
    CHORUS_RETURN_IF_ERROR(
        exchange(t, a.tag(step), partner, buf, bytes, partner, tmp.data(), bytes, a.deadline));
    if ((s.vr & d) == 0) {
      kernels::reduce(buf, buf, tmp.data(), count, a.dtype, a.op);
    } else {
      kernels::reduce(buf, tmp.data(), buf, count, a.dtype, a.op);
    }
  }
  kernels::finalize(buf, count, a.dtype, a.op, n);
  return fold_out(t, a, s, unfold_step, buf);
}

}  // namespace chorus::algo
