// TCP engine bookkeeping: posting, matching against unexpected messages, cancel,
// completion, peer failure and close.
#include "transport/tcp/engine.h"

#include <sys/eventfd.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "diag/log.h"
#include "util/strings.h"

namespace chorus::tcp {

namespace {
template <class C>
void erase_one(C& c, Op* op) {
  auto it = std::find(c.begin(), c.end(), op);
  if (it != c.end()) c.erase(it);
}
}  // namespace

Engine::Engine(const TcpOptions& opts, Mesh mesh)
    : rank_(opts.rank),
      size_(opts.size),
      job_token_(opts.job_token),
      eager_bytes_(opts.eager_bytes),
      spin_us_(opts.spin_us),
      describe_sig_(opts.describe_sig),
      peers_(static_cast<std::size_t>(opts.size)),
      scratch_(64 << 10),
      wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  for (int r = 0; r < size_; ++r) {
    Peer& p = peers_[r];
    p.rank = r;
    p.address = r < static_cast<int>(mesh.addresses.size()) ? mesh.addresses[r] : "";
    p.fd = std::move(mesh.fds[r]);
  }
}

Engine::~Engine() { close(); }

void Engine::close() {
  std::unique_lock<std::mutex> lk(mu_);
  if (closed_) return;
  closed_ = true;
  linger_close(lk);
  for (Peer& p : peers_) {
    if (p.rank == rank_) continue;
    fail_peer(p, Status(ErrorCode::kAborted, "the TCP transport was destroyed", p.rank));
    p.fd.reset();
  }
  cv_.notify_all();
}

bool Engine::idle() {
  std::lock_guard<std::mutex> lk(mu_);
  return std::all_of(peers_.begin(), peers_.end(), [](const Peer& p) {
    return p.posted.empty() && p.await_cts.empty() && p.await_data.empty() && p.out.empty() &&
           !p.in_body;
  });
}

std::int64_t Engine::peer_progress(int peer) {
  std::lock_guard<std::mutex> lk(mu_);
  return static_cast<std::int64_t>(peers_[peer].progress) - 1;
}

Status Engine::lost_status(const Peer& p) const {
  return Status(ErrorCode::kPeerLost,
                str_printf("peer rank %d (%s) closed the connection", p.rank, p.address.c_str()),
                p.rank);
}

void Engine::complete(Op* op, Status st) {
  // After abort, failures caused by it (e.g. our own shutdown seen as EOF) carry its reason.
  if (!st.is_ok() && aborted()) st = abort_status();
  op->status = std::move(st);
  op->where = Op::Where::kNone;
  op->done.store(true, std::memory_order_release);
}

void Engine::fail_peer(Peer& p, Status st) {
  if (p.is_failed()) return;
  const bool pending = !p.posted.empty() || !p.await_cts.empty() || !p.await_data.empty() ||
                       !p.out.empty() || p.in_body;
  // A peer that leaves after its last operation is normal; only lost work is worth a warning.
  if (st.code() != ErrorCode::kAborted && pending)
    CHORUS_LOG(WARN, Net, "rank %d: %s", rank_, st.message().c_str());
  else
    CHORUS_LOG(DEBUG, Net, "rank %d: %s", rank_, st.message().c_str());
  p.failed = st;
  if (p.fd.valid()) ::shutdown(p.fd.get(), SHUT_RDWR);
  for (OutFrame& f : p.out)
    if (f.op != nullptr) complete(f.op, st);
  p.out.clear();
  drop_pending(p, st);
  // Eager messages that fully arrived before the connection closed stay receivable (the
  // peer sent them and may have exited since); rendezvous offers can no longer complete.
  std::erase_if(p.unexpected, [](const Unexpected& u) { return u.rts; });
  p.ready.clear();
  p.in_body = false;
  p.in_op = nullptr;
  p.in_buf = {};
  cv_.notify_all();
}

void Engine::drop_pending(Peer& p, const Status& st) {
  for (Op* op : p.posted) complete(op, st);
  for (Op* op : p.await_cts) complete(op, st);
  for (Op* op : p.await_data) complete(op, st);
  p.posted.clear();
  p.await_cts.clear();
  p.await_data.clear();
  if (p.in_body && p.in_sink == Peer::Sink::kOp) {
    if (p.in_op != nullptr) complete(p.in_op, st);
    p.in_sink = Peer::Sink::kDiscard;  // the rest of the payload is read and dropped
    p.in_op = nullptr;
  }
  std::deque<OutFrame> keep;
  for (OutFrame& f : p.out) {
    if (f.sent > 0) {  // the stream must stay well formed: finish it from a copy
      if (f.op != nullptr) {
        f.owned.assign(f.payload, f.payload + f.payload_len);
        f.payload = f.owned.data();
        complete(std::exchange(f.op, nullptr), st);
      }
      keep.push_back(std::move(f));
    } else if (f.op != nullptr) {
      complete(f.op, st);  // unsent eager or data frame: dropped
    } else if (f.kind != FrameKind::kRts) {
      keep.push_back(std::move(f));  // control frame (its rts op failed above)
    }
  }
  p.out.swap(keep);
  cv_.notify_all();
}

Status Engine::post(Op* op) {
  if (aborted()) return abort_status();
  std::lock_guard<std::mutex> lk(mu_);
  Peer& p = peers_[op->peer];
  if (closed_) return Status(ErrorCode::kAborted, "the TCP transport was destroyed");
  if (p.is_failed()) {
    // Only a message that arrived before the peer left can still be received.
    if (op->kind != Op::Kind::kRecv || !take_unexpected(p, op)) return p.failed;
    return Status::ok();
  }
  if (!p.desynced.is_ok()) return p.desynced;
  if (op->kind == Op::Kind::kRecv) post_recv_locked(p, op);
  else post_send_locked(p, op);
  if (!p.out.empty()) write_peer(p);  // never blocks: the socket is non-blocking
  if (!p.out.empty() && polling_) wake();
  return Status::ok();
}

void Engine::post_recv_locked(Peer& p, Op* op) {
  if (take_unexpected(p, op) || overtaken(p, op) || foreign(op)) return;
  op->where = Op::Where::kPosted;
  p.posted.push_back(op);
  // Receiver ready: a large message may then come at once, without rts and cts (one
  // message in flight instead of three on the path of a pipelined algorithm). If the
  // sender's rts crosses this, it ignores the rtr and the rendezvous goes on as usual.
  if (op->bytes > eager_bytes_) {
    op->rtr = true;
    op->rdv_id = p.next_rdv_id++;
    queue_control(p, FrameKind::kRtr, op->tag, op->bytes, op->rdv_id);
  }
}

bool Engine::take_unexpected(Peer& p, Op* op) {
  auto it = std::find_if(p.unexpected.begin(), p.unexpected.end(),
                         [&](const Unexpected& u) { return u.tag.matches(op->tag); });
  if (it == p.unexpected.end()) return false;
  Unexpected u = std::move(*it);
  p.unexpected.erase(it);
  if (signatures_differ(u.tag.sig, op->tag.sig)) {
    reject_signature(p, op, u.tag, u.rts ? u.rdv_id : 0);
  } else if (u.rts) {
    answer_rts(p, op, u.rdv_id, u.length);
  } else if (u.length != op->bytes) {
    complete(op, desync_status(p, op->tag, u.length, op->bytes));
  } else {
    if (u.length > 0) std::memcpy(op->recv_data, u.data.data(), u.length);
    complete(op, Status::ok());
  }
  return true;
}

void Engine::answer_rts(Peer& p, Op* op, std::uint64_t rdv_id, std::uint64_t length) {
  if (length != op->bytes) {
    queue_control(p, FrameKind::kNack, op->tag, op->bytes, rdv_id);
    complete(op, desync_status(p, op->tag, length, op->bytes));
  } else {
    op->rdv_id = rdv_id;
    op->where = Op::Where::kAwaitData;
    p.await_data.push_back(op);
    queue_control(p, FrameKind::kCts, op->tag, 0, rdv_id);
  }
}

void Engine::post_send_locked(Peer& p, Op* op) {
  const bool ready = take_ready(p, op);
  if (op->bytes <= eager_bytes_) return queue_payload(p, op, FrameKind::kEager);
  if (ready) return queue_payload(p, op, FrameKind::kPut);
  // A mismatched rtr was dropped above: the rts lets the receiver report the mismatch.
  op->rdv_id = p.next_rdv_id++;
  op->where = Op::Where::kAwaitCts;
  p.await_cts.push_back(op);
  queue_control(p, FrameKind::kRts, op->tag, op->bytes, op->rdv_id);
}

bool Engine::take_ready(Peer& p, Op* op) {
  auto it = std::find_if(p.ready.begin(), p.ready.end(),
                         [&](const Ready& r) { return r.tag.matches(op->tag); });
  if (it == p.ready.end()) return false;
  const bool fits = it->length == op->bytes && !signatures_differ(it->tag.sig, op->tag.sig);
  op->rdv_id = it->id;
  p.ready.erase(it);
  return fits;
}

void Engine::queue_payload(Peer& p, Op* op, FrameKind kind) {
  FrameHeader h;
  h.kind = kind;
  h.job_token = job_token_;
  h.tag = op->tag;
  h.length = op->bytes;
  h.arg = kind == FrameKind::kEager ? 0 : op->rdv_id;
  h.progress = progress_.load(std::memory_order_relaxed);
  OutFrame& f = p.out.emplace_back();
  f.kind = kind;
  f.rdv_id = h.arg;
  f.payload = op->send_data;
  f.payload_len = op->bytes;
  f.op = op;
  op->where = Op::Where::kOutQueue;
  encode_frame(h, f.hdr);
}

void Engine::queue_control(Peer& p, FrameKind kind, transport::Tag tag, std::uint64_t length,
                           std::uint64_t arg) {
  FrameHeader h;
  h.kind = kind;
  h.job_token = job_token_;
  h.tag = tag;
  h.length = length;
  h.arg = arg;
  h.progress = progress_.load(std::memory_order_relaxed);
  OutFrame& f = p.out.emplace_back();
  f.kind = kind;
  f.rdv_id = arg;
  encode_frame(h, f.hdr);
}

void Engine::cancel(Op* op) {
  std::lock_guard<std::mutex> lk(mu_);
  if (op->done.load(std::memory_order_acquire) || op->where == Op::Where::kNone) return;
  Peer& p = peers_[op->peer];
  switch (op->where) {
    case Op::Where::kPosted:
      erase_one(p.posted, op);
      // The sender may hold our rtr: withdraw it (a put already on its way is discarded).
      if (op->rtr) queue_control(p, FrameKind::kCancel, op->tag, 0, op->rdv_id);
      break;
    case Op::Where::kAwaitData: erase_one(p.await_data, op); break;  // data will be discarded
    case Op::Where::kReading:
      p.in_sink = Peer::Sink::kDiscard;
      p.in_op = nullptr;
      break;
    case Op::Where::kAwaitCts:
    case Op::Where::kOutQueue: cancel_send(p, op); break;
    case Op::Where::kNone: break;
  }
  op->where = Op::Where::kNone;
  if (!p.out.empty() && polling_) wake();
}

// A cancelled send must leave the byte stream well formed: an unstarted frame is dropped
// (with a CANCEL if the receiver already expects the rendezvous), a started one is
// finished from a private copy of the payload.
void Engine::cancel_send(Peer& p, Op* op) {
  if (op->where == Op::Where::kAwaitCts) {
    erase_one(p.await_cts, op);
    auto rts = std::find_if(p.out.begin(), p.out.end(), [&](const OutFrame& f) {
      return f.kind == FrameKind::kRts && f.rdv_id == op->rdv_id;
    });
    if (rts != p.out.end() && rts->sent == 0) p.out.erase(rts);
    else queue_control(p, FrameKind::kCancel, op->tag, 0, op->rdv_id);
    return;
  }
  auto it = std::find_if(p.out.begin(), p.out.end(), [&](const OutFrame& f) { return f.op == op; });
  if (it == p.out.end()) return;
  if (it->sent == 0) {
    // The receiver of a data or put frame waits for it: tell it the send is gone.
    const bool awaited = it->kind == FrameKind::kData || it->kind == FrameKind::kPut;
    p.out.erase(it);
    if (awaited) queue_control(p, FrameKind::kCancel, op->tag, 0, op->rdv_id);
    return;
  }
  it->owned.assign(it->payload, it->payload + it->payload_len);
  it->payload = it->owned.data();
  it->op = nullptr;
}

}  // namespace chorus::tcp
