// Shared-memory engine I/O: streaming records into and out of the rings, choosing where an
// incoming message goes (posted receive, unexpected copy, or parked in the ring), and
// watching peers (abort words, departure, process exit).
#include <poll.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "transport/shm/doorbell.h"
#include "transport/shm/engine.h"
#include "util/strings.h"

namespace chorus::shm {

namespace {
constexpr std::uint64_t kHdr = sizeof(RecHeader);
constexpr std::int64_t kLivenessPeriodNs = 5'000'000;

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool process_gone(const Peer& p) {
  if (p.pidfd.valid()) {
    pollfd pfd{p.pidfd.get(), POLLIN, 0};
    return ::poll(&pfd, 1, 0) > 0;  // readable once the process has exited (zombies too)
  }
  return ::kill(p.pid, 0) != 0 && errno == ESRCH;
}
}  // namespace

bool Engine::write_peer(Peer& p) {
  bool any = false;
  // Chunks let the receiver start copying before the whole ring is full.
  const std::uint64_t chunk = std::max<std::uint64_t>(seg_.ring_bytes() / 4, 4096);
  while (!p.out.empty()) {
    OutItem& it = p.out.front();
    if (!it.hdr_done) {
      if (p.out_ring.free_bytes() < kHdr) break;
      p.out_ring.put(&it.hdr, kHdr);
      it.hdr_done = any = true;
    }
    const std::uint64_t len = it.hdr.kind == RecHeader::kMsg ? it.hdr.length : 0;
    while (it.sent < len) {
      std::uint64_t n = std::min({p.out_ring.free_bytes(), len - it.sent, chunk});
      if (n == 0) break;
      p.out_ring.put(it.payload + it.sent, n);
      it.sent += n;
      any = true;
      if (it.sent < len) ring(p.rank);
    }
    if (it.sent < len) break;
    if (it.op != nullptr) complete(it.op, Status::ok());
    p.out.pop_front();
  }
  if (any) ring(p.rank);
  return any;
}

// Picks the sink of the record at the head of p's ring. False: leave it parked in the ring
// (a large message nobody has asked for, while no other receive from p is waiting and no
// receive from any source is looking: the message it looks for may be behind this one).
bool Engine::decide_sink(Peer& p, bool final) {
  if (Op* op = take_posted(p, p.in_tag)) {
    if (!accepts(p, op, engine::Unexpected{p.in_tag, p.in_hdr.length, false, 0, {}})) {
      p.sink = Peer::Sink::kDiscard;
    } else {
      p.sink = Peer::Sink::kOp;
      p.in_op = op;
      op->where = Op::Where::kReading;
    }
    return true;
  }
  const bool whole = p.in_ring.used_bytes() >= p.in_hdr.length;
  if (p.in_hdr.length <= copy_out_bytes_ || !p.posted.empty() || probing_ > 0 ||
      (final && whole)) {
    p.sink = Peer::Sink::kUnexpected;
    p.in_buf = buffer(p.in_hdr.length);
    return true;
  }
  return false;
}

void Engine::finish_record(Peer& p) {
  p.have_hdr = false;
  if (p.sink == Peer::Sink::kOp) {
    complete(std::exchange(p.in_op, nullptr), Status::ok());
  } else if (p.sink == Peer::Sink::kUnexpected) {
    const std::uint64_t length = p.in_hdr.length;
    hold(p, engine::Unexpected{p.in_tag, length, false, 0, std::exchange(p.in_buf, {})});
  }
  p.sink = Peer::Sink::kUndecided;
}

bool Engine::read_peer(Peer& p, bool final) {
  bool any = false;
  while (!p.is_failed()) {
    if (!p.have_hdr) {
      if (p.in_ring.used_bytes() < kHdr) break;
      RecHeader h;
      p.in_ring.get(&h, kHdr);
      any = true;
      if (h.kind == RecHeader::kNack) {
        on_nack(p, h);
        continue;
      }
      if (h.kind != RecHeader::kMsg || h.length > (std::uint64_t{1} << 48)) {
        fail_peer(p, Status(ErrorCode::kIo,
                            str_printf("peer rank %d (%s) wrote a malformed record (kind 0x%x)",
                                       p.name, p.address.c_str(), h.kind), p.name));
        break;
      }
      p.in_hdr = h;
      p.in_tag = h.tag();
      p.have_hdr = true;
      p.in_pos = 0;
      p.sink = Peer::Sink::kUndecided;
    }
    if (p.sink == Peer::Sink::kUndecided && !decide_sink(p, final)) break;
    const std::uint64_t left = p.in_hdr.length - p.in_pos;
    if (left > 0) {
      const std::uint64_t n = std::min(p.in_ring.used_bytes(), left);
      if (n == 0) break;
      std::uint8_t* dst = p.sink == Peer::Sink::kOp ? p.in_op->recv_data + p.in_pos
                          : p.sink == Peer::Sink::kUnexpected ? p.in_buf.data() + p.in_pos
                                                              : nullptr;
      p.in_ring.get(dst, n);
      p.in_pos += n;
      any = true;
      if (p.in_pos < p.in_hdr.length) break;
    }
    finish_record(p);
  }
  if (any) ring(p.rank);  // ring space freed for the sender
  return any;
}

bool Engine::progress_all() {
  bool any = false;
  for (Peer& p : peers_) {
    if (p.rank == rank_ || p.is_failed()) continue;
    if (!p.out.empty()) any |= write_peer(p);
    any |= read_peer(p, false);
  }
  return any;
}

void Engine::check_peers() {
  const std::int64_t now = now_ns();
  const bool probe = now >= next_liveness_ns_;
  if (probe) next_liveness_ns_ = now + kLivenessPeriodNs;
  for (Peer& p : peers_) {
    if (p.rank == rank_) continue;
    const std::uint32_t state = seg_.slot(p.rank).state.load(std::memory_order_acquire);
    // Aborts are read even from a peer already failed (lost, or desynced with us).
    if (state == kAborted) {
      if (!aborted()) on_peer_abort(p);
      return;
    }
    if (p.is_failed()) continue;
    const bool departed = state == kDeparted;
    if (!departed && !(probe && process_gone(p))) continue;
    // Everything the peer wrote before leaving stays receivable.
    while (read_peer(p, true)) {
    }
    fail_peer(p, Status(ErrorCode::kPeerLost,
                        departed ? str_printf("peer rank %d (%s) closed its shm transport",
                                              p.name, p.address.c_str())
                                 : str_printf("peer rank %d (%s) exited", p.name, p.address.c_str()),
                        p.name));
  }
}

}  // namespace chorus::shm
