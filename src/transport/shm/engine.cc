// Shared-memory medium bookkeeping: set-up and close, queueing sends, cancel, dropping a
// peer's work, and aborts published in (and adopted from) the rank slots.
#include "transport/shm/engine.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "diag/log.h"
#include "transport/shm/doorbell.h"
#include "util/strings.h"

namespace chorus::shm {

namespace {
std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof(buf) - 1) != 0) return "this host";
  return buf;
}

engine::EngineOptions engine_options(const ShmOptions& opts) {
  engine::EngineOptions e;
  e.rank = opts.rank;
  e.size = opts.size;
  e.name = opts.rank_names.empty() ? opts.rank : opts.rank_names[opts.rank];
  e.names = opts.job_size > 0 ? opts.job_size : opts.size;
  e.medium = "shm";
  e.max_reason_bytes = kReasonBytes - 1;
  e.describe_sig = opts.describe_sig;
  e.wait = engine::WaitPolicy::for_shm(opts.size);
  return e;
}
}  // namespace

Engine::Engine(const ShmOptions& opts, Segment seg, Bells bells)
    : engine::Engine(engine_options(opts)),
      copy_out_bytes_(std::min<std::size_t>(opts.copy_out_bytes, opts.ring_bytes)),
      seg_(std::move(seg)),
      me_(seg_.slot(opts.rank)),
      peers_(static_cast<std::size_t>(opts.size)),
      bells_(std::move(bells)),
      win_wait_(engine::WaitPolicy::for_shm(opts.size)) {
  seg_.populate(rank_);  // no page faults in the first messages through the rings
  const std::string host = host_name();
  for (int r = 0; r < size_; ++r) {
    Peer& p = peers_[r];
    p.rank = r;
    p.name = opts.rank_names.empty() ? r : opts.rank_names[r];
    if (r == rank_) continue;
    p.pid = seg_.slot(r).pid.load(std::memory_order_acquire);
    p.address = str_printf("pid %d on %s", p.pid, host.c_str());
    p.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, p.pid, 0)));  // -1: use kill(pid, 0)
    p.out_ring = seg_.ring(rank_, r);
    p.in_ring = seg_.ring(r, rank_);
  }
}

Engine::~Engine() { close(); }

void Engine::close() {
  std::lock_guard<std::mutex> lk(mu_);
  if (closed_) return;
  closed_ = true;
  for (Peer& p : peers_) {
    if (p.rank == rank_ || p.is_failed()) continue;
    fail_peer(p, Status(ErrorCode::kAborted, "the shm transport was destroyed", p.name));
  }
  // Messages already in the rings stay receivable; peers see us as departed.
  if (!aborted()) me_.state.store(kDeparted, std::memory_order_release);
  ring_peers();
  cv_.notify_all();
}

void Engine::ring_peers() {
  for (int r = 0; r < size_; ++r)
    if (r != rank_) ring(r);
}

void Engine::wake() { ring(rank_); }

void Engine::ring(int r) {
  ring_doorbell(seg_.slot(r), bells_.out.empty() ? -1 : bells_.out[r].get());
}

void Engine::arm_events(bool on) {
  if (!bells_.ready()) return;
  if (on) {
    if (bell_watchers_.fetch_add(1) == 0)
      me_.sleeping.fetch_or(kBellSleeper, std::memory_order_seq_cst);
    return;
  }
  if (bell_watchers_.fetch_sub(1) == 1)
    me_.sleeping.fetch_and(~kBellSleeper, std::memory_order_seq_cst);
  char drain[64];
  while (::read(bells_.in.get(), drain, sizeof(drain)) > 0) {
  }
}

bool Engine::busy(const engine::PeerState& ps) const {
  const auto& p = static_cast<const Peer&>(ps);
  return !p.out.empty() || p.have_hdr;
}

void Engine::start_send(engine::PeerState& ps, Op* op) {
  Peer& p = of(ps);
  OutItem& it = p.out.emplace_back();
  it.hdr.comm = op->tag.comm;
  it.hdr.seq = op->tag.seq;
  it.hdr.step = op->tag.step;
  it.hdr.sig = op->tag.sig;
  it.hdr.length = op->bytes;
  it.payload = op->send_data;
  it.op = op;
  op->where = Op::Where::kOutQueue;
  write_peer(p);
  if (polling_) wake();  // let a sleeping poller see the new work
}

void Engine::recv_posted(engine::PeerState& p, Op* /*op*/) {
  read_peer(of(p), false);
  if (polling_) wake();
}

void Engine::refuse(engine::PeerState& p, const engine::Unexpected& msg, const Op& op) {
  queue_nack(of(p), msg.tag, op.bytes, op.tag.sig);
}

void Engine::queue_nack(Peer& p, const transport::Tag& tag, std::size_t expected,
                        std::uint64_t sig) {
  OutItem& it = p.out.emplace_back();
  it.hdr.kind = RecHeader::kNack;
  it.hdr.comm = tag.comm;
  it.hdr.seq = tag.seq;
  it.hdr.step = tag.step;
  it.hdr.sig = tag.sig;
  it.hdr.length = expected;
  it.hdr.arg = sig;
  write_peer(p);
}

// The receiver of one of our messages found it does not fit its receive. The send fails
// if still pending; in any case every pending and later request with that peer fails.
void Engine::on_nack(Peer& p, const RecHeader& h) {
  refused_by(p, refusal_status(p, h.tag(), h.sig, h.arg, h.length, -1));
}

void Engine::cancel_in_medium(engine::PeerState& ps, Op* op) {
  Peer& p = of(ps);
  if (op->where == Op::Where::kReading) {
    p.sink = Peer::Sink::kDiscard;
    p.in_op = nullptr;
  } else if (op->where == Op::Where::kOutQueue) {
    auto it = std::find_if(p.out.begin(), p.out.end(), [&](const OutItem& i) { return i.op == op; });
    if (it != p.out.end() && !it->hdr_done) {
      p.out.erase(it);
    } else if (it != p.out.end()) {  // finish the started record from a private copy
      it->owned.assign(it->payload, it->payload + it->hdr.length);
      it->payload = it->owned.data();
      it->op = nullptr;
    }
  }
}

void Engine::drop_in_medium(engine::PeerState& ps, const Status& st) {
  Peer& p = of(ps);
  if (p.in_op != nullptr) {
    complete(std::exchange(p.in_op, nullptr), st);
    p.sink = Peer::Sink::kDiscard;  // the rest of the payload is read and dropped
  }
  std::deque<OutItem> keep;
  for (OutItem& it : p.out) {
    if (it.hdr_done) {  // the ring must stay well formed: finish the record from a copy
      if (it.op != nullptr) {
        it.owned.assign(it.payload, it.payload + it.hdr.length);
        it.payload = it.owned.data();
        complete(std::exchange(it.op, nullptr), st);
      }
      keep.push_back(std::move(it));
    } else if (it.op != nullptr) {
      complete(it.op, st);  // not started: dropped
    } else {
      keep.push_back(std::move(it));  // NACKs and copies of cancelled sends
    }
  }
  p.out.swap(keep);
}

void Engine::on_peer_failed(engine::PeerState& ps, const Status& /*st*/) {
  Peer& p = of(ps);  // its rings are read no more
  p.out.clear();
  p.in_op = nullptr;
  p.have_hdr = false;
  p.in_buf = {};
}

const transport::Tag* Engine::parked(const engine::PeerState& ps) const {
  const auto& p = static_cast<const Peer&>(ps);
  return p.have_hdr && p.sink == Peer::Sink::kUndecided ? &p.in_tag : nullptr;
}

void Engine::announce_abort() {
  const AbortReason a = abort_reason();
  std::memcpy(me_.abort_reason, a.text.data(), a.text.size());
  me_.abort_reason[a.text.size()] = '\0';
  me_.abort_code.store(static_cast<std::int32_t>(a.status.code()), std::memory_order_relaxed);
  me_.abort_origin.store(a.origin, std::memory_order_relaxed);
  me_.abort_peer.store(a.status.peer(), std::memory_order_relaxed);
  me_.state.store(kAborted, std::memory_order_release);
  ring_peers();
  ring(rank_);  // our own sleeping poller
}

void Engine::on_peer_abort(const Peer& p) {
  const RankSlot& s = seg_.slot(p.rank);
  // Printable ASCII only: the text comes from another process.
  std::string text(s.abort_reason, strnlen(s.abort_reason, kReasonBytes));
  for (char& c : text)
    if (c < 0x20 || c >= 0x7f) c = '?';
  adopt_abort(p, static_cast<ErrorCode>(s.abort_code.load(std::memory_order_relaxed)),
              s.abort_origin.load(std::memory_order_relaxed),
              s.abort_peer.load(std::memory_order_relaxed), text);
}

}  // namespace chorus::shm
