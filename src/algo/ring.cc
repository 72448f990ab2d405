// Ring algorithms: reduce_scatter, all_gather, and all_reduce = reduce-scatter fused with
// all-gather. Each step moves one block to the right neighbour in chunks; a chunk is
// forwarded as soon as it has arrived (and been reduced), so the ring stays pipelined.
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/patterns.h"
#include "algo/scratch.h"
#include "kernels/reduce.h"
#include "util/overlap.h"

namespace chorus::algo {

namespace {

using transport::RequestPtr;

// Where block i lives: uniform blocks of `count` (reduce_scatter / all_gather) or the
// near-equal split of `count` into n blocks (all_reduce).
struct Layout {
  std::size_t count;
  int n;
  bool uniform;
  Block block(int i) const {
    return uniform ? Block{static_cast<std::size_t>(i) * count, count} : split_block(count, n, i);
  }
  std::size_t max_block() const { return uniform ? count : split_block(count, n, 0).count; }
};

// Chunk buffers the last reduce-scatter step cycles through: the chunk that just arrived
// is reduced while the next ones stream in, and the buffers stay in cache instead of a
// block-sized buffer being faulted in and zeroed on every call.
constexpr std::size_t kLastStepSlots = 4;

// Reduce-scatter over the n blocks of `src`; rank r's reduced block (not finalized) is
// written to `out`, which may be exactly src's block r. Uses steps [step0, step0 + (n-1)*mc).
// Steps 0..n-3 (n > 2) receive into two block-sized buffers, since what they reduce is
// forwarded from there; the last step receives into kLastStepSlots chunk-sized slots,
// each reposted as soon as its chunk has been reduced into `out` (no send depends on a
// slot, so recycling them cannot deadlock the ring). `on_reduced(c, k)`, when set, runs as
// soon as chunk c (elements k of the block) of `out` holds its reduced value.
using ChunkHook = std::function<Status(std::size_t c, const Block& k)>;
Status ring_rs_core(transport::Transport& t, const CollArgs& a, const char* src, char* out,
                    const Layout& lay, std::uint32_t step0, const ChunkHook& on_reduced = {}) {
  const int r = t.rank(), n = t.size(), next = ring_next(r, n), prev = ring_prev(r, n);
  const std::size_t esz = elem_bytes(a);
  const Chunking ch = make_chunking(a, lay.max_block());
  const std::size_t mc = ch.chunks(lay.max_block());
  auto step = [&](int s, std::size_t c) {
    return a.tag(step0 + static_cast<std::uint32_t>(s * mc + c));
  };
  // Not zero-filled: every byte is written by a receive before it is read.
  const std::size_t block_bytes = n > 2 ? lay.max_block() * esz : 0;
  const Scratch tmp[2] = {Scratch(ScratchSlot::kRingBlock0, block_bytes),
                          Scratch(ScratchSlot::kRingBlock1, n > 3 ? block_bytes : 0)};
  std::vector<std::vector<RequestPtr>> sends(n);
  // Step 0 sends block r-1 straight from the input.
  const Block first = lay.block(mod(r - 1, n));
  for (std::size_t c = 0; c < ch.chunks(first.count); ++c) {
    const Block k = ch.chunk(first.count, c);
    CHORUS_ASSIGN_OR_RETURN(RequestPtr s, t.post_send(next, step(0, c),
                                                      src + (first.offset + k.offset) * esz,
                                                      k.count * esz));
    sends[0].push_back(std::move(s));
  }
  for (int s = 0; s < n - 2; ++s) {
    const Block b = lay.block(mod(r - s - 2, n));
    char* buf = tmp[s % 2].data();
    // tmp[s % 2] was the source of step s-1's sends (posted during step s-2; step 0's
    // come from the input, so step 1 posts its receives at once, announcing them early).
    if (s >= 2) CHORUS_RETURN_IF_ERROR(wait_all(t, sends[s - 1], a.deadline));
    std::vector<RequestPtr> recvs;
    for (std::size_t c = 0; c < ch.chunks(b.count); ++c) {
      const Block k = ch.chunk(b.count, c);
      CHORUS_ASSIGN_OR_RETURN(RequestPtr q, t.post_recv(prev, step(s, c), buf + k.offset * esz,
                                                        k.count * esz));
      recvs.push_back(std::move(q));
    }
    for (std::size_t c = 0; c < recvs.size(); ++c) {
      const Block k = ch.chunk(b.count, c);
      CHORUS_RETURN_IF_ERROR(transport::wait_one(t, recvs[c].get(), a.deadline));
      char* dst = buf + k.offset * esz;
      kernels::reduce(dst, dst, src + (b.offset + k.offset) * esz, k.count, a.dtype, a.op);
      CHORUS_ASSIGN_OR_RETURN(RequestPtr q, t.post_send(next, step(s + 1, c), dst,
                                                        k.count * esz));
      sends[s + 1].push_back(std::move(q));
    }
  }
  // Last step: block r, reduced into `out` through the slots.
  const int s = n - 2;
  const Block b = lay.block(r);
  const std::size_t chunks = ch.chunks(b.count);
  const std::size_t nslots = std::min(chunks, kLastStepSlots);
  const std::size_t slot_bytes = std::min(ch.elems, b.count) * esz;
  const Scratch slots(ScratchSlot::kRingSlots, nslots * slot_bytes);
  std::vector<RequestPtr> recvs(nslots);
  auto post = [&](std::size_t c) -> Status {
    const Block k = ch.chunk(b.count, c);
    CHORUS_ASSIGN_OR_RETURN(recvs[c % nslots], t.post_recv(prev, step(s, c),
                                                           slots.data() + (c % nslots) * slot_bytes,
                                                           k.count * esz));
    return Status();
  };
  for (std::size_t c = 0; c < nslots; ++c) CHORUS_RETURN_IF_ERROR(post(c));
  for (std::size_t c = 0; c < chunks; ++c) {
    const Block k = ch.chunk(b.count, c);
    CHORUS_RETURN_IF_ERROR(transport::wait_one(t, recvs[c % nslots].get(), a.deadline));
    kernels::reduce(out + k.offset * esz, slots.data() + (c % nslots) * slot_bytes,
                    src + (b.offset + k.offset) * esz, k.count, a.dtype, a.op);
    recvs[c % nslots].reset();
    if (c + nslots < chunks) CHORUS_RETURN_IF_ERROR(post(c + nslots));
    if (on_reduced) CHORUS_RETURN_IF_ERROR(on_reduced(c, k));
  }
  for (auto& v : sends) CHORUS_RETURN_IF_ERROR(wait_all(t, v, a.deadline));
  return Status();
}

// All-gather over the n blocks of `buf`, whose block r is filled (or, inside all_reduce,
// fills chunk by chunk: send_own(c) as each chunk is ready). All receives are posted up
// front (they land in their final place); a chunk received in step s is forwarded in step
// s+1 as soon as it arrives. Uses steps [step0, step0 + (n-1)*mc).
class AgRing {
 public:
  AgRing(transport::Transport& t, const CollArgs& a, char* buf, const Layout& lay,
         std::uint32_t step0)
      : t_(t), a_(a), buf_(buf), lay_(lay), step0_(step0), r_(t.rank()), n_(t.size()),
        esz_(elem_bytes(a)), ch_(make_chunking(a, lay.max_block())),
        mc_(ch_.chunks(lay.max_block())), recvs_(n_) {}

  Status post_recvs() {
    const int prev = ring_prev(r_, n_);
    for (int s = 0; s < n_ - 1; ++s) {
      const Block b = lay_.block(mod(r_ - s - 1, n_));
      for (std::size_t c = 0; c < ch_.chunks(b.count); ++c) {
        const Block k = ch_.chunk(b.count, c);
        CHORUS_ASSIGN_OR_RETURN(RequestPtr q, t_.post_recv(prev, step(s, c),
                                                           buf_ + (b.offset + k.offset) * esz_,
                                                           k.count * esz_));
        recvs_[s].push_back(std::move(q));
      }
    }
    return Status();
  }
  std::size_t own_chunks() const { return ch_.chunks(lay_.block(r_).count); }
  // Sends chunk c of this rank's own block (step 0).
  Status send_own(std::size_t c) {
    const Block own = lay_.block(r_);
    const Block k = ch_.chunk(own.count, c);
    CHORUS_ASSIGN_OR_RETURN(RequestPtr q, t_.post_send(ring_next(r_, n_), step(0, c),
                                                       buf_ + (own.offset + k.offset) * esz_,
                                                       k.count * esz_));
    sends_.push_back(std::move(q));
    return Status();
  }
  // Forwards what steps 0..n-3 receive, then waits for every receive and send.
  Status finish() {
    for (int s = 0; s + 1 < n_ - 1; ++s) {
      const Block b = lay_.block(mod(r_ - s - 1, n_));
      for (std::size_t c = 0; c < recvs_[s].size(); ++c) {
        const Block k = ch_.chunk(b.count, c);
        CHORUS_RETURN_IF_ERROR(transport::wait_one(t_, recvs_[s][c].get(), a_.deadline));
        CHORUS_ASSIGN_OR_RETURN(RequestPtr q, t_.post_send(ring_next(r_, n_), step(s + 1, c),
                                                           buf_ + (b.offset + k.offset) * esz_,
                                                           k.count * esz_));
        sends_.push_back(std::move(q));
      }
    }
    for (auto& v : recvs_) CHORUS_RETURN_IF_ERROR(wait_all(t_, v, a_.deadline));
    return wait_all(t_, sends_, a_.deadline);
  }

 private:
  transport::Tag step(int s, std::size_t c) const {
    return a_.tag(step0_ + static_cast<std::uint32_t>(s * mc_ + c));
  }
  transport::Transport& t_;
  const CollArgs& a_;
  char* buf_;
  const Layout lay_;
  const std::uint32_t step0_;
  const int r_, n_;
  const std::size_t esz_;
  const Chunking ch_;
  const std::size_t mc_;
  std::vector<std::vector<RequestPtr>> recvs_;
  std::vector<RequestPtr> sends_;
};

Status ring_ag_core(transport::Transport& t, const CollArgs& a, char* buf, const Layout& lay,
                    std::uint32_t step0) {
  AgRing ag(t, a, buf, lay, step0);
  CHORUS_RETURN_IF_ERROR(ag.post_recvs());
  for (std::size_t c = 0; c < ag.own_chunks(); ++c) CHORUS_RETURN_IF_ERROR(ag.send_own(c));
  return ag.finish();
}

}  // namespace

Status ring_reduce_scatter(transport::Transport& t, const CollArgs& a) {
  const int r = t.rank(), n = t.size();
  const std::size_t esz = elem_bytes(a), bytes = a.count * esz;
  if (a.count == 0) return Status();
  const char* src = static_cast<const char*>(a.send);
  char* recv = static_cast<char*>(a.recv);
  if (n == 1) {
    copy_if_distinct(recv, src, bytes);
    kernels::finalize(recv, a.count, a.dtype, a.op, n);
    return Status();
  }
  // recv == send (not block r) overlaps input still being sent: reduce into scratch.
  const bool aside = recv != src + r * bytes && util::overlaps(recv, bytes, src, bytes * n);
  const Scratch scratch(ScratchSlot::kRingOut, aside ? bytes : 0);
  char* out = aside ? scratch.data() : recv;
  CHORUS_RETURN_IF_ERROR(ring_rs_core(t, a, src, out, Layout{a.count, n, true}, 0));
  kernels::finalize(out, a.count, a.dtype, a.op, n);
  if (out != recv) std::memcpy(recv, out, bytes);
  return Status();
}

Status ring_all_gather(transport::Transport& t, const CollArgs& a) {
  const int r = t.rank(), n = t.size();
  const std::size_t bytes = a.count * elem_bytes(a);
  if (a.count == 0) return Status();
  char* recv = static_cast<char*>(a.recv);
  copy_if_distinct(recv + r * bytes, a.send, bytes);
  if (n == 1) return Status();
  return ring_ag_core(t, a, recv, Layout{a.count, n, true}, 0);
}

Status ring_reduce_scatter_split(transport::Transport& t, const CollArgs& a) {
  if (a.count == 0) return Status();
  const Layout lay{a.count, t.size(), false};
  char* out = static_cast<char*>(a.recv) + lay.block(t.rank()).offset * elem_bytes(a);
  if (t.size() == 1) {
    copy_if_distinct(out, a.send, a.count * elem_bytes(a));
    return Status();
  }
  return ring_rs_core(t, a, static_cast<const char*>(a.send), out, lay, 0);
}

Status ring_all_gather_split(transport::Transport& t, const CollArgs& a) {
  if (a.count == 0 || t.size() == 1) return Status();
  return ring_ag_core(t, a, static_cast<char*>(a.recv), Layout{a.count, t.size(), false}, 0);
}

// Reduce-scatter then all-gather, fused: the all-gather's receives are posted before the
// reduce-scatter starts, and each chunk of this rank's block is finalized and sent on as
// soon as it is reduced (while it is still in cache), so the ring never drains between
// the halves. Safe in place: a block's all-gather data can only arrive after this rank's
// last read of that block (it is computed from it).
Status ring_all_reduce(transport::Transport& t, const CollArgs& a) {
  const int r = t.rank(), n = t.size();
  const std::size_t esz = elem_bytes(a);
  if (a.count == 0) return Status();
  char* recv = static_cast<char*>(a.recv);
  if (n == 1) {
    copy_if_distinct(recv, a.send, a.count * esz);
    kernels::finalize(recv, a.count, a.dtype, a.op, n);
    return Status();
  }
  const Layout lay{a.count, n, false};
  const Block own = lay.block(r);
  char* out = recv + own.offset * esz;
  const std::size_t mc = make_chunking(a, lay.max_block()).chunks(lay.max_block());
  AgRing ag(t, a, recv, lay, static_cast<std::uint32_t>((n - 1) * mc));
  CHORUS_RETURN_IF_ERROR(ag.post_recvs());
  CHORUS_RETURN_IF_ERROR(ring_rs_core(t, a, static_cast<const char*>(a.send), out, lay, 0,
                                      [&](std::size_t c, const Block& k) {
                                        kernels::finalize(out + k.offset * esz, k.count, a.dtype,
                                                          a.op, n);
                                        return ag.send_own(c);
                                      }));
  return ag.finish();
}

}  // namespace chorus::algo
