// Single-copy algorithms ("single_copy"): each rank publishes the addresses of its own
// buffers in its shared window; after a window barrier the others read what they need
// straight out of those buffers (SharedWindows::read_peer, process_vm_readv), so every
// byte moves once instead of twice through a window; a last barrier keeps each owner's
// buffers in place until every reader is done.
//   broadcast: the others read the root's buffer (a root in place also writes the
//     last 1/n into theirs, so no core idles).                            2 barriers
//   all_gather: every rank reads the others' send buffers.                 2 barriers
//   all_to_all: each pair of ranks swaps its two blocks, half the bytes moved by
//     each (read the peer's, write its own: write_peer, process_vm_writev).  2 barriers
//   reduce_scatter: rank r reads block r of the others' send buffers chunk by chunk
//     into a cache-sized scratch and reduces (own block first, then the others in rank
//     order) into recv; aside first when recv is the start of the send buffer, which
//     the others still read.                                               2 barriers
//   all_reduce: reduce_scatter of share r (1/L of the message) into recv; barrier; then
//     every rank reads the other L-1 reduced shares out of their recv.     3 barriers
// Addresses go into half(b) of the window under the rule of shm_window.h. Without
// single-copy reads (or without windows) each runs its staged window algorithm.
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "algo/algorithm.h"
#include "algo/chunking.h"
#include "algo/shm_window.h"
#include "kernels/reduce.h"
#include "util/overlap.h"

namespace chorus::algo {

namespace {

// Bytes read from a peer per reduction step (or per step of an in-place all_to_all's
// swap): the scratch buffer stays in the core's cache meanwhile.
constexpr std::size_t kScratchBytes = 128 << 10;

transport::SharedWindows* single_copy_windows(transport::Transport& t) {
  transport::SharedWindows* w = usable_windows(t, 64);
  return w != nullptr && w->single_copy() ? w : nullptr;
}

std::uint64_t word_of(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// Publishes two words (addresses, or a size) in half(b) of this rank's window.
void publish(transport::SharedWindows& w, int rank, std::uint64_t b, std::uint64_t w0,
             std::uint64_t w1 = 0) {
  auto* slot = reinterpret_cast<std::uint64_t*>(window_half(w, rank, b));
  slot[0] = w0;
  slot[1] = w1;
}

// Word `i` that rank `rank` published in half(b) of its window, and as an address.
std::uint64_t published_word(transport::SharedWindows& w, int rank, std::uint64_t b, int i) {
  return reinterpret_cast<const std::uint64_t*>(window_half(w, rank, b))[i];
}
char* published(transport::SharedWindows& w, int rank, std::uint64_t b, int i) {
  return reinterpret_cast<char*>(static_cast<std::uintptr_t>(published_word(w, rank, b, i)));
}

// Per-thread scratch (kScratchBytes).
char* scratch() {
  thread_local std::unique_ptr<char[]> buf(new char[kScratchBytes]);
  return buf.get();
}

// Address `i` that every rank published in half(b) of its window (read right after the
// barrier that made them visible).
std::vector<const char*> gather_published(transport::SharedWindows& w, int n, std::uint64_t b,
                                          int i) {
  std::vector<const char*> out(static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) out[j] = published(w, j, b, i);
  return out;
}

// dst[0, count) = op over all ranks of the elements at byte offset `off` of each rank's
// buffer srcs[j]: this rank's own (`own`, which may be dst itself: in place) first, then
// the others in rank order, read chunk by chunk into the scratch. Only this rank reduces
// these elements, so every rank ends with the same bits. kAvg is finalized.
Status reduce_from_peers(transport::SharedWindows& w, int r, const std::vector<const char*>& srcs,
                         std::size_t off, std::size_t count, const char* own, char* dst,
                         const CollArgs& a) {
  const int n = static_cast<int>(srcs.size());
  const std::size_t esz = elem_bytes(a);
  const std::size_t chunk = kScratchBytes / esz;
  char* tmp = scratch();
  for (std::size_t first = 0; first < count; first += chunk) {
    const std::size_t cnt = count - first < chunk ? count - first : chunk;
    const std::size_t at = first * esz;
    const char* acc = own + at;
    for (int j = 0; j < n; ++j) {
      if (j == r) continue;
      CHORUS_RETURN_IF_ERROR(w.read_peer(j, srcs[j] + off + at, tmp, cnt * esz));
      kernels::reduce(dst + at, acc, tmp, cnt, a.dtype, a.op);
      acc = dst + at;
    }
    kernels::finalize(dst + at, cnt, a.dtype, a.op, n);
  }
  return Status::ok();
}

}  // namespace

Status single_copy_broadcast(transport::Transport& t, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  transport::SharedWindows* w = single_copy_windows(t);
  if (w == nullptr) return shm_broadcast(t, a);
  const std::size_t bytes = a.count * elem_bytes(a);
  const bool root = r == a.root;
  // A root working in place would sit idle while the others read: it writes the last
  // `tail` bytes (1/n, whole pages) into every other rank's buffer itself, so every core
  // copies. Out of place it is busy with its own copy and pushes nothing.
  const std::size_t tail = root && a.send == a.recv ? bytes / static_cast<std::size_t>(n) / 4096 * 4096 : 0;
  const std::uint64_t b = w->barriers();
  if (root) publish(*w, r, b, word_of(a.send), tail);
  else publish(*w, r, b, word_of(a.recv));
  // The root's own copy while the others arrive: its recv is no peer's to read or write.
  CHORUS_RETURN_IF_ERROR(w->barrier_meanwhile(a.tag(0), a.deadline, [&] {
    if (root) copy_if_distinct(a.recv, a.send, bytes);
  }));
  if (root) {
    const auto* src = static_cast<const char*>(a.send);
    for (int i = 1; i < n && tail > 0; ++i) {
      const int j = (r + i) % n;
      CHORUS_RETURN_IF_ERROR(
          w->write_peer(j, src + bytes - tail, published(*w, j, b, 0) + bytes - tail, tail));
    }
  } else {
    const std::uint64_t pushed = published_word(*w, a.root, b, 1);
    CHORUS_RETURN_IF_ERROR(w->read_peer(a.root, published(*w, a.root, b, 0), a.recv, bytes - pushed));
  }
  return w->barrier(a.tag(1), a.deadline);
}

// Rank r publishes its send buffer; after the barrier it fills block j of recv with
// rank j's send buffer (its own by a local copy, the others' by reads starting after r,
// so the ranks spread their reads); a last barrier keeps every send buffer in place.
Status single_copy_all_gather(transport::Transport& t, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  transport::SharedWindows* w = single_copy_windows(t);
  if (w == nullptr) return shm_all_gather(t, a);
  const std::size_t bytes = a.count * elem_bytes(a);
  auto* recv = static_cast<char*>(a.recv);
  const std::uint64_t b = w->barriers();
  publish(*w, r, b, word_of(a.send));
  CHORUS_RETURN_IF_ERROR(w->barrier_meanwhile(a.tag(0), a.deadline, [&] {
    copy_if_distinct(recv + r * bytes, a.send, bytes);  // no peer touches this block
  }));
  for (int i = 1; i < n; ++i) {
    const int j = (r + i) % n;
    CHORUS_RETURN_IF_ERROR(w->read_peer(j, published(*w, j, b, 0), recv + j * bytes, bytes));
  }
  return w->barrier(a.tag(1), a.deadline);
}

Status single_copy_all_to_all(transport::Transport& t, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  transport::SharedWindows* w = single_copy_windows(t);
  if (w == nullptr) return shm_all_to_all(t, a);
  const std::size_t bytes = a.count * elem_bytes(a);
  const std::size_t total = bytes * static_cast<std::size_t>(n);
  const char* send = static_cast<const char*>(a.send);
  auto* recv = static_cast<char*>(a.recv);
  // A receive buffer overlapping the send buffer other than exactly (in place) would let
  // peers' writes land on blocks not yet moved: this rank's blocks move from a copy.
  std::unique_ptr<char[]> aside;
  if (send != recv && util::overlaps(send, total, recv, total)) {
    aside.reset(new char[total]);
    std::memcpy(aside.get(), send, total);
    send = aside.get();
  }
  const std::uint64_t b = w->barriers();
  publish(*w, r, b, word_of(send), word_of(recv));
  CHORUS_RETURN_IF_ERROR(w->barrier_meanwhile(a.tag(0), a.deadline, [&] {
    copy_if_distinct(recv + r * bytes, send + r * bytes, bytes);  // peers write the others
  }));
  // Ranks r and j swap block j of r's send buffer with block r of j's: the lower rank
  // moves both ways the first half of the bytes, the higher rank the second half. Every
  // byte range of a pair is read and written by one process, so a rank in place loses
  // nothing it still owes (it reads the peer's part first, then writes its own, then
  // stores what it read), whatever the other ranks' placement: one protocol for all.
  const std::size_t half = bytes / 2 / 64 * 64;
  for (int i = 1; i < n; ++i) {
    const int j = (r + i) % n;
    const std::size_t lo = r < j ? 0 : half, len = r < j ? half : bytes - half;
    if (len == 0) continue;
    const char* their_send = published(*w, j, b, 0) + static_cast<std::size_t>(r) * bytes + lo;
    char* their_recv = published(*w, j, b, 1) + static_cast<std::size_t>(r) * bytes + lo;
    const char* mine = send + static_cast<std::size_t>(j) * bytes + lo;
    char* into = recv + static_cast<std::size_t>(j) * bytes + lo;
    if (mine != into) {
      CHORUS_RETURN_IF_ERROR(w->read_peer(j, their_send, into, len));
      CHORUS_RETURN_IF_ERROR(w->write_peer(j, mine, their_recv, len));
      continue;
    }
    char* tmp = scratch();
    for (std::size_t at = 0; at < len; at += kScratchBytes) {
      const std::size_t c = len - at < kScratchBytes ? len - at : kScratchBytes;
      CHORUS_RETURN_IF_ERROR(w->read_peer(j, their_send + at, tmp, c));
      CHORUS_RETURN_IF_ERROR(w->write_peer(j, mine + at, their_recv + at, c));
      std::memcpy(into + at, tmp, c);
    }
  }
  return w->barrier(a.tag(1), a.deadline);
}

Status single_copy_reduce_scatter(transport::Transport& t, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  transport::SharedWindows* w = single_copy_windows(t);
  if (w == nullptr) return shm_reduce_scatter(t, a);
  const std::size_t bytes = a.count * elem_bytes(a);
  const std::size_t off = static_cast<std::size_t>(r) * bytes;
  const auto* send = static_cast<const char*>(a.send);
  // In place at the start of the send buffer (recv == send, rank > 0), the result would
  // overwrite block 0 while its reader may not be done: reduce aside, copy at the end.
  std::unique_ptr<char[]> aside;
  char* out = static_cast<char*>(a.recv);
  if (out != send + off && util::overlaps(out, bytes, send, bytes * static_cast<std::size_t>(n))) {
    aside.reset(new char[bytes]);
    out = aside.get();
  }
  const std::uint64_t b = w->barriers();
  publish(*w, r, b, word_of(send));
  CHORUS_RETURN_IF_ERROR(w->barrier(a.tag(0), a.deadline));
  CHORUS_RETURN_IF_ERROR(
      reduce_from_peers(*w, r, gather_published(*w, n, b, 0), off, a.count, send + off, out, a));
  CHORUS_RETURN_IF_ERROR(w->barrier(a.tag(1), a.deadline));
  if (aside) std::memcpy(a.recv, aside.get(), bytes);
  return Status::ok();
}

Status single_copy_all_reduce(transport::Transport& t, const CollArgs& a) {
  const int n = t.size(), r = t.rank();
  transport::SharedWindows* w = single_copy_windows(t);
  if (w == nullptr) return shm_direct_all_reduce(t, a);
  const std::size_t esz = elem_bytes(a);
  const auto* send = static_cast<const char*>(a.send);
  auto* recv = static_cast<char*>(a.recv);
  const std::uint64_t b = w->barriers();
  publish(*w, r, b, word_of(send), word_of(recv));
  CHORUS_RETURN_IF_ERROR(w->barrier(a.tag(0), a.deadline));
  const std::vector<const char*> sends = gather_published(*w, n, b, 0);
  const std::vector<const char*> recvs = gather_published(*w, n, b, 1);
  // In place, share r of the send buffer is overwritten only by this rank, and the
  // others read shares they own from it: no reader sees a half-reduced share.
  const Block s = split_block(a.count, n, r);
  if (s.count > 0)
    CHORUS_RETURN_IF_ERROR(reduce_from_peers(*w, r, sends, s.offset * esz, s.count,
                                             send + s.offset * esz, recv + s.offset * esz, a));
  CHORUS_RETURN_IF_ERROR(w->barrier(a.tag(1), a.deadline));
  for (int i = 1; i < n; ++i) {
    const int j = (r + i) % n;
    const Block o = split_block(a.count, n, j);
    if (o.count == 0) continue;
    CHORUS_RETURN_IF_ERROR(w->read_peer(j, recvs[j] + o.offset * esz,
                                        recv + o.offset * esz, o.count * esz));
  }
  return w->barrier(a.tag(2), a.deadline);
}

}  // namespace chorus::algo
