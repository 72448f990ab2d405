// Binomial-tree broadcast and reduce, chunked and pipelined, and tree all_reduce
// (reduce to rank 0, then broadcast from it).
#include <cstring>
#include <functional>
#include <vector>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/patterns.h"
#include "algo/scratch.h"
#include "kernels/reduce.h"

namespace chorus::algo {

namespace {

using transport::RequestPtr;

// Reduces every rank's a.send (a.count elements) into a.recv on a.root, finalized.
// A rank receives chunk c from each child (double-buffered: chunk c+1 is posted before
// chunk c is reduced), combines, and sends the chunk up at once. Steps [step0, step0 + chunks).
// `at_root(c)`, when set, runs on the root as soon as chunk c of a.recv is final.
Status reduce_impl(transport::Transport& t, const CollArgs& a, std::uint32_t step0,
                   const std::function<Status(std::size_t)>& at_root = {}) {
  const int r = t.rank(), n = t.size();
  const std::size_t esz = elem_bytes(a);
  const char* src = static_cast<const char*>(a.send);
  if (n == 1) {
    copy_if_distinct(a.recv, src, a.count * esz);
    kernels::finalize(a.recv, a.count, a.dtype, a.op, n);
    return Status();
  }
  const int parent = tree_parent(r, a.root, n);
  const std::vector<int> kids = tree_children(r, a.root, n);
  const std::size_t nk = kids.size();
  const Chunking ch = make_chunking(a, a.count);
  const std::size_t nch = ch.chunks(a.count);
  // Running reduction (leaves send their input directly): the root's output, else scratch.
  const Scratch scratch(ScratchSlot::kTreeAcc, !kids.empty() && parent >= 0 ? a.count * esz : 0);
  char* acc = kids.empty() ? nullptr : parent < 0 ? static_cast<char*>(a.recv) : scratch.data();
  const Scratch tmp(ScratchSlot::kTreeChunks, 2 * nk * ch.elems * esz);
  std::vector<RequestPtr> recvs(2 * nk);
  auto slot = [&](std::size_t c, std::size_t k) { return (c % 2) * nk + k; };
  auto post_recvs = [&](std::size_t c) -> Status {
    const Block k = ch.chunk(a.count, c);
    for (std::size_t i = 0; i < nk; ++i) {
      CHORUS_ASSIGN_OR_RETURN(recvs[slot(c, i)],
                              t.post_recv(kids[i], a.tag(step0 + static_cast<std::uint32_t>(c)),
                                          tmp.data() + slot(c, i) * ch.elems * esz,
                                          k.count * esz));
    }
    return Status();
  };
  std::vector<RequestPtr> sends;
  if (nch > 0) CHORUS_RETURN_IF_ERROR(post_recvs(0));
  for (std::size_t c = 0; c < nch; ++c) {
    const Block k = ch.chunk(a.count, c);
    const std::size_t off = k.offset * esz;
    if (c + 1 < nch) CHORUS_RETURN_IF_ERROR(post_recvs(c + 1));
    for (std::size_t i = 0; i < nk; ++i) {
      CHORUS_RETURN_IF_ERROR(transport::wait_one(t, recvs[slot(c, i)].get(), a.deadline));
      kernels::reduce(acc + off, (i == 0 ? src : acc) + off,
                      tmp.data() + slot(c, i) * ch.elems * esz, k.count, a.dtype, a.op);
    }
    if (parent < 0) {
      kernels::finalize(acc + off, k.count, a.dtype, a.op, n);
      if (at_root) CHORUS_RETURN_IF_ERROR(at_root(c));
    } else {
      const char* data = (acc ? acc : src) + off;
      CHORUS_ASSIGN_OR_RETURN(RequestPtr s, t.post_send(parent,
                                                        a.tag(step0 + static_cast<std::uint32_t>(c)),
                                                        data, k.count * esz));
      sends.push_back(std::move(s));
    }
  }
  return wait_all(t, sends, a.deadline);
}

// Copies root's `src` into every rank's `dst` (root's dst may be null). All chunk
// receives are posted up front; each chunk goes on to the children as soon as it lands.
// Steps [step0, step0 + chunks).
Status broadcast_impl(transport::Transport& t, const CollArgs& a, const void* src, void* dst,
                      std::uint32_t step0) {
  const int r = t.rank(), n = t.size();
  const std::size_t esz = elem_bytes(a);
  const bool root = r == a.root;
  if (root && dst != nullptr) copy_if_distinct(dst, src, a.count * esz);
  if (n == 1) return Status();
  const std::vector<int> kids = tree_children(r, a.root, n);
  const Chunking ch = make_chunking(a, a.count);
  const std::size_t nch = ch.chunks(a.count);
  const char* data = static_cast<const char*>(root ? src : dst);
  std::vector<RequestPtr> recvs, sends;
  if (!root) {
    const int parent = tree_parent(r, a.root, n);
    for (std::size_t c = 0; c < nch; ++c) {
      const Block k = ch.chunk(a.count, c);
      CHORUS_ASSIGN_OR_RETURN(RequestPtr q,
                              t.post_recv(parent, a.tag(step0 + static_cast<std::uint32_t>(c)),
                                          static_cast<char*>(dst) + k.offset * esz,
                                          k.count * esz));
      recvs.push_back(std::move(q));
    }
  }
  for (std::size_t c = 0; c < nch; ++c) {
    const Block k = ch.chunk(a.count, c);
    if (!root) CHORUS_RETURN_IF_ERROR(transport::wait_one(t, recvs[c].get(), a.deadline));
    for (int kid : kids) {
      CHORUS_ASSIGN_OR_RETURN(RequestPtr s,
                              t.post_send(kid, a.tag(step0 + static_cast<std::uint32_t>(c)),
                                          data + k.offset * esz, k.count * esz));
      sends.push_back(std::move(s));
    }
  }
  return wait_all(t, sends, a.deadline);
}

}  // namespace

Status tree_broadcast(transport::Transport& t, const CollArgs& a) {
  if (a.count == 0) return Status();
  return broadcast_impl(t, a, a.send, a.recv, 0);
}

Status tree_reduce(transport::Transport& t, const CollArgs& a) {
  if (a.count == 0) return Status();
  return reduce_impl(t, a, 0);
}

// Reduce to rank 0, then broadcast from it, the two phases overlapped: every other rank
// posts the broadcast's receives before it starts reducing, and the root sends each chunk
// on as soon as it is final, so the broadcast's bytes flow down while the reduction's
// still flow up. A chunk of a.recv is received only after the root reduced it, hence
// after every rank of the subtree sent (and so stopped reading) that chunk: in place is safe.
Status tree_all_reduce(transport::Transport& t, const CollArgs& a) {
  if (a.count == 0) return Status();
  CollArgs b = a;
  b.root = 0;
  const int r = t.rank(), n = t.size();
  const std::size_t esz = elem_bytes(a);
  const Chunking ch = make_chunking(a, a.count);
  const std::size_t nch = ch.chunks(a.count);
  const auto bstep = static_cast<std::uint32_t>(nch);
  char* out = static_cast<char*>(a.recv);
  const std::vector<int> kids = n > 1 ? tree_children(r, 0, n) : std::vector<int>{};
  std::vector<RequestPtr> recvs, sends;
  auto tag = [&](std::size_t c) { return a.tag(bstep + static_cast<std::uint32_t>(c)); };
  auto forward = [&](std::size_t c) -> Status {
    const Block k = ch.chunk(a.count, c);
    for (int kid : kids) {
      CHORUS_ASSIGN_OR_RETURN(RequestPtr s,
                              t.post_send(kid, tag(c), out + k.offset * esz, k.count * esz));
      sends.push_back(std::move(s));
    }
    return Status();
  };
  if (r != 0) {
    const int parent = tree_parent(r, 0, n);
    for (std::size_t c = 0; c < nch; ++c) {
      const Block k = ch.chunk(a.count, c);
      CHORUS_ASSIGN_OR_RETURN(RequestPtr q,
                              t.post_recv(parent, tag(c), out + k.offset * esz, k.count * esz));
      recvs.push_back(std::move(q));
    }
  }
  const std::function<Status(std::size_t)> at_root =
      r == 0 ? std::function<Status(std::size_t)>(forward) : nullptr;
  CHORUS_RETURN_IF_ERROR(reduce_impl(t, b, 0, at_root));
  for (std::size_t c = 0; c < recvs.size(); ++c) {
    CHORUS_RETURN_IF_ERROR(transport::wait_one(t, recvs[c].get(), a.deadline));
    CHORUS_RETURN_IF_ERROR(forward(c));
  }
  return wait_all(t, sends, a.deadline);
}

}  // namespace chorus::algo
