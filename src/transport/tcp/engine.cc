// TCP medium bookkeeping: set-up, queueing sends and announcements, accepting offers,
// cancel, and dropping a peer's work with the byte stream kept well formed.
#include "transport/tcp/engine.h"

#include <sys/eventfd.h>
#include <sys/socket.h>

#include <algorithm>
#include <string>
#include <utility>

#include "util/strings.h"

namespace chorus::tcp {

namespace {
template <class C>
void erase_one(C& c, Op* op) {
  auto it = std::find(c.begin(), c.end(), op);
  if (it != c.end()) c.erase(it);
}

std::string host_of(const std::string& addr) {
  auto colon = addr.rfind(':');
  return colon == std::string::npos ? addr : addr.substr(0, colon);
}

// Ranks whose address shares this rank's host (they compete for its cores).
int local_ranks(const std::vector<std::string>& addresses, int rank) {
  if (rank < 0 || rank >= static_cast<int>(addresses.size())) return 1;
  const std::string mine = host_of(addresses[rank]);
  return static_cast<int>(std::count_if(addresses.begin(), addresses.end(),
                                        [&](const std::string& a) { return host_of(a) == mine; }));
}

engine::EngineOptions engine_options(const TcpOptions& opts, const Mesh& mesh) {
  engine::EngineOptions e;
  e.rank = opts.rank;
  e.size = opts.size;
  e.name = opts.rank;
  e.names = opts.size;
  e.medium = "TCP";
  e.max_reason_bytes = kMaxAbortReasonBytes;
  e.describe_sig = opts.describe_sig;
  e.wait = engine::WaitPolicy::for_tcp(opts.spin_us, local_ranks(mesh.addresses, opts.rank));
  return e;
}
}  // namespace

Engine::Engine(const TcpOptions& opts, Mesh mesh)
    : engine::Engine(engine_options(opts, mesh)),
      job_token_(opts.job_token),
      eager_bytes_(opts.eager_bytes),
      peers_(static_cast<std::size_t>(opts.size)),
      scratch_(64 << 10),
      wake_fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  for (int r = 0; r < size_; ++r) {
    Peer& p = peers_[r];
    p.rank = p.name = r;
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

bool Engine::busy(const engine::PeerState& ps) const {
  const auto& p = static_cast<const Peer&>(ps);
  return !p.await_cts.empty() || !p.await_data.empty() || !p.out.empty() || p.in_body;
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

void Engine::flush(Peer& p) {
  if (!p.out.empty()) write_peer(p);  // never blocks: the socket is non-blocking
  if (!p.out.empty() && polling_) wake();
}

void Engine::start_send(engine::PeerState& ps, Op* op) {
  Peer& p = of(ps);
  const bool ready = take_ready(p, op);
  if (op->bytes <= eager_bytes_) {
    queue_payload(p, op, FrameKind::kEager);
  } else if (ready) {
    queue_payload(p, op, FrameKind::kPut);
  } else {
    // A mismatched rtr was dropped above: the rts lets the receiver report the mismatch.
    op->id = p.next_rdv_id++;
    op->where = Op::Where::kAwaitCts;
    p.await_cts.push_back(op);
    queue_control(p, FrameKind::kRts, op->tag, op->bytes, op->id);
  }
  flush(p);
}

// Receiver ready: a large message may then come at once, without rts and cts (one
// message in flight instead of three on the path of a pipelined algorithm). If the
// sender's rts crosses this, it ignores the rtr and the rendezvous goes on as usual.
void Engine::recv_posted(engine::PeerState& ps, Op* op) {
  if (op->bytes <= eager_bytes_) return;
  Peer& p = of(ps);
  op->announced = true;
  op->id = p.next_rdv_id++;
  queue_control(p, FrameKind::kRtr, op->tag, op->bytes, op->id);
  flush(p);
}

void Engine::accept_offer(engine::PeerState& ps, Op* op, const engine::Unexpected& msg) {
  Peer& p = of(ps);
  op->id = msg.id;
  op->where = Op::Where::kAwaitData;
  p.await_data.push_back(op);
  queue_control(p, FrameKind::kCts, op->tag, 0, msg.id);
  flush(p);
}

// A signature mismatch gets a desync frame (the sender's requests with us fail); a size
// mismatch of a rendezvous offer a nack (its send fails). An eager message of the wrong
// size has left its sender already: only the receive fails.
void Engine::refuse(engine::PeerState& ps, const engine::Unexpected& msg, const Op& op) {
  Peer& p = of(ps);
  const std::uint64_t id = msg.offer ? msg.id : 0;
  if (transport::signatures_differ(msg.tag.sig, op.tag.sig)) {
    FrameHeader h;
    h.kind = FrameKind::kDesync;
    h.job_token = job_token_;
    h.tag = msg.tag;
    h.tag.sig = op.tag.sig;
    h.peer_sig = msg.tag.sig;
    h.arg = id;
    OutFrame& f = p.out.emplace_back();
    f.kind = FrameKind::kDesync;
    f.rdv_id = id;
    encode_frame(h, f.hdr);
  } else if (msg.offer) {
    queue_control(p, FrameKind::kNack, op.tag, op.bytes, id);
  }
  flush(p);
}

bool Engine::take_ready(Peer& p, Op* op) {
  auto it = std::find_if(p.ready.begin(), p.ready.end(),
                         [&](const Ready& r) { return r.tag.matches(op->tag); });
  if (it == p.ready.end()) return false;
  const bool fits =
      it->length == op->bytes && !transport::signatures_differ(it->tag.sig, op->tag.sig);
  op->id = it->id;
  p.ready.erase(it);
  return fits;
}

void Engine::queue_payload(Peer& p, Op* op, FrameKind kind) {
  FrameHeader h;
  h.kind = kind;
  h.job_token = job_token_;
  h.tag = op->tag;
  h.length = op->bytes;
  h.arg = kind == FrameKind::kEager ? 0 : op->id;
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

// The sender may hold our rtr: withdraw it (a put already on its way is discarded).
void Engine::withdrawn(engine::PeerState& ps, Op* op) {
  if (!op->announced) return;
  Peer& p = of(ps);
  queue_control(p, FrameKind::kCancel, op->tag, 0, op->id);
  flush(p);
}

void Engine::cancel_in_medium(engine::PeerState& ps, Op* op) {
  Peer& p = of(ps);
  switch (op->where) {
    case Op::Where::kAwaitData: erase_one(p.await_data, op); break;  // data will be discarded
    case Op::Where::kReading:
      p.in_sink = Peer::Sink::kDiscard;
      p.in_op = nullptr;
      break;
    case Op::Where::kAwaitCts:
    case Op::Where::kOutQueue: cancel_send(p, op); break;
    default: break;
  }
  flush(p);
}

// A cancelled send must leave the byte stream well formed: an unstarted frame is dropped
// (with a CANCEL if the receiver already expects the rendezvous), a started one is
// finished from a private copy of the payload.
void Engine::cancel_send(Peer& p, Op* op) {
  if (op->where == Op::Where::kAwaitCts) {
    erase_one(p.await_cts, op);
    auto rts = std::find_if(p.out.begin(), p.out.end(), [&](const OutFrame& f) {
      return f.kind == FrameKind::kRts && f.rdv_id == op->id;
    });
    if (rts != p.out.end() && rts->sent == 0) p.out.erase(rts);
    else queue_control(p, FrameKind::kCancel, op->tag, 0, op->id);
    return;
  }
  auto it = std::find_if(p.out.begin(), p.out.end(), [&](const OutFrame& f) { return f.op == op; });
  if (it == p.out.end()) return;
  if (it->sent == 0) {
    // The receiver of a data or put frame waits for it: tell it the send is gone.
    const bool awaited = it->kind == FrameKind::kData || it->kind == FrameKind::kPut;
    p.out.erase(it);
    if (awaited) queue_control(p, FrameKind::kCancel, op->tag, 0, op->id);
    return;
  }
  it->owned.assign(it->payload, it->payload + it->payload_len);
  it->payload = it->owned.data();
  it->op = nullptr;
}

void Engine::drop_in_medium(engine::PeerState& ps, const Status& st) {
  Peer& p = of(ps);
  for (Op* op : p.await_cts) complete(op, st);
  for (Op* op : p.await_data) complete(op, st);
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
}

void Engine::on_peer_failed(engine::PeerState& ps, const Status& /*st*/) {
  Peer& p = of(ps);
  if (p.fd.valid()) ::shutdown(p.fd.get(), SHUT_RDWR);
  p.out.clear();
  p.ready.clear();
  p.in_body = false;
  p.in_op = nullptr;
  p.in_buf = {};
}

}  // namespace chorus::tcp
