// Shared-memory engine bookkeeping: posting, matching against unexpected messages,
// cancel, completion, peer failure and close.
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
}  // namespace

Engine::Engine(const ShmOptions& opts, Segment seg)
    : rank_(opts.rank),
      size_(opts.size),
      name_(opts.rank_names.empty() ? opts.rank : opts.rank_names[opts.rank]),
      names_(opts.job_size > 0 ? opts.job_size : opts.size),
      copy_out_bytes_(std::min<std::size_t>(opts.copy_out_bytes, opts.ring_bytes)),
      describe_sig_(opts.describe_sig),
      seg_(std::move(seg)),
      me_(seg_.slot(opts.rank)),
      peers_(static_cast<std::size_t>(opts.size)),
      backoff_() {
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
  for (int r = 0; r < size_; ++r)
    if (r != rank_) ring_doorbell(seg_.slot(r));
  cv_.notify_all();
}

bool Engine::idle() {
  std::lock_guard<std::mutex> lk(mu_);
  return std::all_of(peers_.begin(), peers_.end(), [](const Peer& p) {
    return p.posted.empty() && p.out.empty() && !p.have_hdr;
  });
}

void Engine::complete(Op* op, Status st) {
  if (!st.is_ok() && aborted()) st = abort_status();
  op->status = std::move(st);
  op->where = Op::Where::kNone;
  op->done.store(true, std::memory_order_release);
  cv_.notify_all();
}

void Engine::fail_peer(Peer& p, Status st) {
  if (p.is_failed()) return;
  const bool pending = !p.posted.empty() || !p.out.empty() || p.in_op != nullptr;
  if (st.code() != ErrorCode::kAborted && pending)
    CHORUS_LOG(WARN, Net, "rank %d: %s", name_, st.message().c_str());
  p.failed = st;
  for (Op* op : p.posted) complete(op, st);
  for (OutItem& it : p.out)
    if (it.op != nullptr) complete(it.op, st);
  if (p.in_op != nullptr) complete(p.in_op, st);
  p.posted.clear();
  p.out.clear();
  p.in_op = nullptr;
  p.have_hdr = false;
  p.in_buf = {};
}

bool Engine::take_unexpected(Peer& p, Op* op) {
  auto it = std::find_if(p.unexpected.begin(), p.unexpected.end(),
                         [&](const Unexpected& u) { return u.tag.matches(op->tag); });
  if (it == p.unexpected.end()) return false;
  Unexpected u = std::move(*it);
  p.unexpected.erase(it);
  if (differs(u.tag, u.data.size(), op)) {
    complete(op, mismatch(p, u.tag, u.data.size(), op->tag, op->bytes));
    if (!p.is_failed()) queue_nack(p, u.tag, op->bytes, op->tag.sig);
  } else {
    if (!u.data.empty()) std::memcpy(op->recv_data, u.data.data(), u.data.size());
    complete(op, Status::ok());
  }
  return true;
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

Status Engine::post(Op* op) {
  if (aborted()) return abort_status();
  std::lock_guard<std::mutex> lk(mu_);
  if (closed_) return Status(ErrorCode::kAborted, "the shm transport was destroyed");
  Peer& p = peers_[op->peer];
  if (!p.desynced.is_ok()) return p.desynced;
  if (p.is_failed()) {
    if (op->kind != Op::Kind::kRecv || !take_unexpected(p, op)) return p.failed;
    return Status::ok();
  }
  if (op->kind == Op::Kind::kRecv) {
    if (take_unexpected(p, op) || overtaken(p, op) || foreign(op)) return Status::ok();
    op->where = Op::Where::kPosted;
    p.posted.push_back(op);
    read_peer(p, false);
  } else {
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
  }
  if (polling_) ring_doorbell(me_);  // let a sleeping poller see the new work
  return Status::ok();
}

void Engine::cancel(Op* op) {
  std::lock_guard<std::mutex> lk(mu_);
  if (op->done.load(std::memory_order_acquire) || op->where == Op::Where::kNone) return;
  Peer& p = peers_[op->peer];
  if (op->where == Op::Where::kPosted) {
    p.posted.erase(std::find(p.posted.begin(), p.posted.end(), op));
  } else if (op->where == Op::Where::kReading) {
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
  op->where = Op::Where::kNone;
}

}  // namespace chorus::shm
