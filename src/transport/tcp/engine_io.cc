// TCP engine I/O: non-blocking writes of queued frames (header + payload straight from
// the user buffer), resumable reads of headers and payloads, and incoming frame dispatch.
#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "diag/log.h"
#include "transport/tcp/engine.h"
#include "util/strings.h"

namespace chorus::tcp {

namespace {
constexpr std::size_t kMaxIov = 32;
constexpr std::uint64_t kReadBudget = 8 << 20;  // bytes per peer per round, for fairness
// Reads smaller than this go through the peer's staging buffer (one recv for many small
// frames); larger payload reads go straight to their destination.
constexpr std::size_t kStageBytes = 16 << 10;

// Up to `want` bytes of peer p's stream into dst: from the staging buffer when it holds
// some, else with one recv, straight into dst for a large read or into the staging buffer
// (as much as the socket has) for a small one. recv's result convention. A recv that
// returns less than it asked for emptied the socket's receive queue: `drained` is set,
// and the caller stops reading until poll() reports the socket readable again (one
// recv fewer per message than reading on until EAGAIN; poll is level-triggered, so bytes
// that arrive meanwhile are reported by the next poll).
ssize_t take(Peer& p, std::uint8_t* dst, std::size_t want, bool& drained) {
  if (p.stage_pos == p.stage_len && want < kStageBytes) {
    if (p.stage.empty()) p.stage.resize(kStageBytes);
    const ssize_t n = ::recv(p.fd.get(), p.stage.data(), p.stage.size(), MSG_DONTWAIT);
    if (n <= 0) return n;
    drained = static_cast<std::size_t>(n) < p.stage.size();
    p.stage_pos = 0;
    p.stage_len = static_cast<std::size_t>(n);
  }
  if (p.stage_pos == p.stage_len) {
    const ssize_t n = ::recv(p.fd.get(), dst, want, MSG_DONTWAIT);
    drained = n > 0 && static_cast<std::size_t>(n) < want;
    return n;
  }
  const std::size_t n = std::min(want, p.stage_len - p.stage_pos);
  std::memcpy(dst, p.stage.data() + p.stage_pos, n);
  p.stage_pos += n;
  return static_cast<ssize_t>(n);
}

template <class C>
Op* take_by_id(C& c, std::uint64_t id) {
  auto it = std::find_if(c.begin(), c.end(), [&](Op* op) { return op->id == id; });
  if (it == c.end()) return nullptr;
  Op* op = *it;
  c.erase(it);
  return op;
}

}  // namespace

void Engine::write_peer(Peer& p) {
  iovec iov[kMaxIov];
  while (!p.out.empty() && !p.is_failed()) {
    std::size_t n_iov = 0;
    for (auto it = p.out.begin(); it != p.out.end() && n_iov + 2 <= kMaxIov; ++it) {
      std::size_t off = it->sent;
      if (off < kFrameHeaderBytes)
        iov[n_iov++] = {it->hdr + off, kFrameHeaderBytes - off};
      std::size_t poff = off > kFrameHeaderBytes ? off - kFrameHeaderBytes : 0;
      if (it->payload_len > poff)
        iov[n_iov++] = {const_cast<std::uint8_t*>(it->payload) + poff, it->payload_len - poff};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = n_iov;
    ssize_t n = ::sendmsg(p.fd.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      int err = errno;
      read_peer(p);  // deliver whatever the peer sent before it went away
      Status st = err == EPIPE ? lost_status(p)
                               : Status(ErrorCode::kPeerLost,
                                        str_printf("peer rank %d (%s) connection lost: %s", p.rank,
                                                   p.address.c_str(), std::strerror(err)),
                                        p.rank);
      fail_peer(p, st);
      return;
    }
    auto left = static_cast<std::size_t>(n);
    while (left > 0) {
      OutFrame& f = p.out.front();
      std::size_t take = std::min(left, f.total() - f.sent);
      f.sent += take;
      left -= take;
      if (f.sent < f.total()) break;
      if (f.op != nullptr) complete(f.op, Status::ok());
      p.out.pop_front();
    }
  }
}

void Engine::read_peer(Peer& p) {
  std::uint64_t budget = kReadBudget;
  bool drained = false;  // the last recv emptied the socket (take())
  // After abort nothing more is read: no buffer is written once its request failed.
  // Staged bytes are parsed even past the budget or once the socket is drained: no
  // socket read, and nothing may stay behind that poll() would not report.
  while (!p.is_failed() && ((budget > 0 && !drained) || p.stage_pos < p.stage_len) &&
         !aborted()) {
    std::uint8_t* dst;
    std::size_t want;
    if (!p.in_body) {
      dst = p.in_hdr + p.in_hdr_got;
      want = kFrameHeaderBytes - p.in_hdr_got;
    } else {
      std::uint64_t left = p.in_frame.length - p.in_pos;
      switch (p.in_sink) {
        case Peer::Sink::kOp: dst = p.in_op->recv_data + p.in_pos; break;
        case Peer::Sink::kUnexpected:
        case Peer::Sink::kAbortReason: dst = p.in_buf.data() + p.in_pos; break;
        default: dst = scratch_.data(); left = std::min<std::uint64_t>(left, scratch_.size());
      }
      want = static_cast<std::size_t>(
          std::min<std::uint64_t>(left, std::max<std::uint64_t>(budget, 1)));
    }
    ssize_t n = take(p, dst, want, drained);
    if (n == 0) return fail_peer(p, lost_status(p));
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      return fail_peer(p, Status(ErrorCode::kPeerLost,
                                 str_printf("peer rank %d (%s) connection lost: %s", p.rank,
                                            p.address.c_str(), std::strerror(errno)),
                                 p.rank));
    }
    budget -= std::min<std::uint64_t>(budget, static_cast<std::uint64_t>(n));
    if (!p.in_body) {
      p.in_hdr_got += static_cast<std::size_t>(n);
      if (p.in_hdr_got == kFrameHeaderBytes) {
        p.in_hdr_got = 0;
        on_header(p);
      }
    } else {
      p.in_pos += static_cast<std::uint64_t>(n);
      if (p.in_pos == p.in_frame.length) finish_body(p);
    }
  }
}

void Engine::on_header(Peer& p) {
  FrameHeader h = decode_frame(p.in_hdr);
  Status st = validate_frame(h, job_token_, eager_bytes_);
  if (st.is_ok() && h.kind == FrameKind::kHello) st = Status(ErrorCode::kIo, "unexpected hello");
  if (!st.is_ok()) {
    return fail_peer(p, Status(ErrorCode::kIo,
                               str_printf("peer rank %d (%s) sent a malformed frame: %s", p.rank,
                                          p.address.c_str(), st.message().c_str()),
                               p.rank));
  }
  if (h.kind != FrameKind::kDesync) p.progress = std::max(p.progress, h.progress);
  CHORUS_LOG(TRACE, Net, "rank %d <- %d %s comm %u seq %llu step %u len %llu", rank_, p.rank,
             frame_kind_name(h.kind), h.tag.comm, static_cast<unsigned long long>(h.tag.seq),
             h.tag.step, static_cast<unsigned long long>(h.length));
  switch (h.kind) {
    case FrameKind::kEager: return on_eager(p, h);
    case FrameKind::kRts: return on_rts(p, h);
    case FrameKind::kCts: return on_cts(p, h);
    case FrameKind::kData: return on_data(p, h);
    case FrameKind::kNack: return on_nack(p, h);
    case FrameKind::kCancel: return on_cancel(p, h);
    case FrameKind::kRtr: return on_rtr(p, h);
    case FrameKind::kPut: return on_put(p, h);
    case FrameKind::kDesync: return on_desync(p, h);
    case FrameKind::kBye: return;  // its progress is all it carries; EOF follows
    case FrameKind::kAbort:
      p.in_frame = h;
      return begin_body(p, Peer::Sink::kAbortReason, nullptr);
    default: return;
  }
}

void Engine::begin_body(Peer& p, Peer::Sink sink, Op* op) {
  p.in_sink = sink;
  p.in_op = op;
  p.in_pos = 0;
  if (op != nullptr) op->where = Op::Where::kReading;
  if (sink == Peer::Sink::kUnexpected || sink == Peer::Sink::kAbortReason)
    p.in_buf = buffer(p.in_frame.length);
  p.in_body = true;
  if (p.in_frame.length == 0) finish_body(p);
}

void Engine::finish_body(Peer& p) {
  p.in_body = false;
  Op* op = std::exchange(p.in_op, nullptr);
  if (p.in_sink == Peer::Sink::kOp) {
    complete(op, Status::ok());
  } else if (p.in_sink == Peer::Sink::kUnexpected) {
    // A receive may have been posted while this payload was arriving; it matches first.
    hold(p, engine::Unexpected{p.in_frame.tag, p.in_frame.length, false, 0,
                               std::exchange(p.in_buf, {})});
  } else if (p.in_sink == Peer::Sink::kAbortReason) {
    on_abort_frame(p);
  }
}

void Engine::on_eager(Peer& p, const FrameHeader& h) {
  p.in_frame = h;
  Op* op = take_posted(p, h.tag);
  if (op == nullptr) return begin_body(p, Peer::Sink::kUnexpected, nullptr);
  if (!accepts(p, op, engine::Unexpected{h.tag, h.length, false, 0, {}}))
    return begin_body(p, Peer::Sink::kDiscard, nullptr);
  begin_body(p, Peer::Sink::kOp, op);
}

void Engine::on_rts(Peer& p, const FrameHeader& h) {
  engine::Unexpected offer{h.tag, h.length, true, h.arg, {}};
  Op* op = take_posted(p, h.tag);
  if (op == nullptr) return p.unexpected.push_back(std::move(offer));
  if (accepts(p, op, offer)) accept_offer(p, op, offer);
}

void Engine::on_cts(Peer& p, const FrameHeader& h) {
  Op* op = take_by_id(p.await_cts, h.arg);
  if (op == nullptr) return;  // the send was cancelled; a CANCEL is on its way
  queue_payload(p, op, FrameKind::kData);
}

void Engine::on_rtr(Peer& p, const FrameHeader& h) {
  // A send already announced by an rts crossed this rtr: the peer answers that rts.
  if (std::any_of(p.await_cts.begin(), p.await_cts.end(),
                  [&](const Op* op) { return op->tag.matches(h.tag); }))
    return;
  fail_foreign(p, h.tag);
  p.ready.push_back(Ready{h.tag, h.length, h.arg});
}

void Engine::on_put(Peer& p, const FrameHeader& h) {
  p.in_frame = h;
  auto it = std::find_if(p.posted.begin(), p.posted.end(), [&](const Op* op) {
    return op->announced && op->id == h.arg && op->tag.matches(h.tag);
  });
  if (it == p.posted.end()) return begin_body(p, Peer::Sink::kDiscard, nullptr);  // withdrawn
  Op* op = *it;
  p.posted.erase(it);
  if (op->bytes != h.length) {  // the sender checks this; a corrupt peer may not
    complete(op, size_status(p, h.tag, h.length, op->bytes));
    return begin_body(p, Peer::Sink::kDiscard, nullptr);
  }
  begin_body(p, Peer::Sink::kOp, op);
}

void Engine::on_data(Peer& p, const FrameHeader& h) {
  p.in_frame = h;
  Op* op = take_by_id(p.await_data, h.arg);
  if (op == nullptr) return begin_body(p, Peer::Sink::kDiscard, nullptr);  // recv cancelled
  if (op->bytes != h.length) {
    complete(op, size_status(p, h.tag, h.length, op->bytes));
    return begin_body(p, Peer::Sink::kDiscard, nullptr);
  }
  begin_body(p, Peer::Sink::kOp, op);
}

void Engine::on_nack(Peer& p, const FrameHeader& h) {
  Op* op = take_by_id(p.await_cts, h.arg);
  if (op == nullptr) return;
  complete(op, refusal_status(p, h.tag, 0, 0, h.length, static_cast<long long>(op->bytes)));
}

// A cancel names (tag, id): the peer withdrew its rts or rtr, or gave up a data or put
// frame this rank waits for. Ids of the two sides may coincide; tags never do.
void Engine::on_cancel(Peer& p, const FrameHeader& h) {
  auto same = [&](const transport::Tag& t, std::uint64_t id) {
    return id == h.arg && t.matches(h.tag);
  };
  auto it = std::find_if(p.unexpected.begin(), p.unexpected.end(),
                         [&](const engine::Unexpected& u) { return u.offer && same(u.tag, u.id); });
  if (it != p.unexpected.end()) {
    p.unexpected.erase(it);
    return;
  }
  std::erase_if(p.ready, [&](const Ready& r) { return same(r.tag, r.id); });
  Op* op = nullptr;
  auto waiting = [&](const Op* o) { return same(o->tag, o->id); };
  if (auto d = std::find_if(p.await_data.begin(), p.await_data.end(), waiting);
      d != p.await_data.end()) {
    op = *d;
    p.await_data.erase(d);
  } else if (auto q = std::find_if(p.posted.begin(), p.posted.end(),
                                   [&](const Op* o) { return o->announced && waiting(o); });
             q != p.posted.end()) {
    op = *q;
    p.posted.erase(q);
  }
  if (op == nullptr) return;
  complete(op, Status(ErrorCode::kAborted,
                      str_printf("peer rank %d (%s) cancelled its send with tag comm %u seq %llu "
                                 "step %u",
                                 p.rank, p.address.c_str(), h.tag.comm,
                                 static_cast<unsigned long long>(h.tag.seq), h.tag.step),
                      p.rank, static_cast<std::int64_t>(h.tag.seq)));
}

}  // namespace chorus::tcp
