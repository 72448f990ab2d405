// Engine bookkeeping: posting, cancel, completion, peer failure, idleness.
#include "transport/engine/engine.h"

#include <algorithm>

#include "diag/log.h"
#include "util/strings.h"

namespace chorus::engine {

Engine::Engine(const EngineOptions& opts)
    : rank_(opts.rank),
      size_(opts.size),
      name_(opts.name),
      names_(std::max(opts.names, opts.size)),
      medium_(opts.medium),
      max_reason_bytes_(opts.max_reason_bytes),
      describe_sig_(opts.describe_sig),
      policy_(opts.wait) {}

Status Engine::closed_status() const {
  return Status(ErrorCode::kAborted, str_printf("the %s transport was destroyed", medium_));
}

void Engine::complete(Op* op, Status st) {
  // After abort, failures caused by it (e.g. our own shutdown seen as EOF) carry its reason.
  if (!st.is_ok() && aborted()) st = abort_status();
  op->status = std::move(st);
  op->where = Op::Where::kNone;
  op->done.store(true, std::memory_order_release);
  cv_.notify_all();
}

Status Engine::post(Op* op) {
  if (aborted()) return abort_status();
  std::unique_lock<std::mutex> lk(mu_);
  if (closed_) return closed_status();
  PeerState& p = peer(op->peer);
  // A receive about to be served from a held message: what the peer sent after it (an
  // abort, say, when it gave up waiting) is read first, so the receive does not complete
  // on data from an operation its sender has since failed.
  // (When another thread drives progress, it reads them.)
  if (op->kind == Op::Kind::kRecv && !p.is_failed() && !polling_ &&
      std::any_of(p.unexpected.begin(), p.unexpected.end(),
                  [&](const Unexpected& u) { return u.tag.matches(op->tag); })) {
    polling_ = true;
    const bool moved = progress(lk, Deadline(WaitPolicy::Clock::now()), /*block=*/false);
    polling_ = false;
    if (moved) cv_.notify_all();
    if (Status f = abort_for(op->tag.seq); !f.is_ok()) return f;
    if (closed_) return closed_status();
  }
  if (p.is_failed()) {
    // Only a message that arrived before the peer left can still be received.
    if (op->kind != Op::Kind::kRecv || !take_unexpected(p, op)) return p.failed;
    return Status::ok();
  }
  if (!p.desynced.is_ok()) return p.desynced;
  if (op->kind == Op::Kind::kSend) {
    start_send(p, op);
    return Status::ok();
  }
  if (take_unexpected(p, op) || overtaken(p, op) || foreign(op)) return Status::ok();
  op->where = Op::Where::kPosted;
  p.posted.push_back(op);
  recv_posted(p, op);
  return Status::ok();
}

void Engine::cancel(Op* op) {
  std::lock_guard<std::mutex> lk(mu_);
  if (op->done.load(std::memory_order_acquire) || op->where == Op::Where::kNone) return;
  PeerState& p = peer(op->peer);
  if (op->where == Op::Where::kPosted) {
    auto it = std::find(p.posted.begin(), p.posted.end(), op);
    if (it != p.posted.end()) p.posted.erase(it);
    withdrawn(p, op);
  } else {
    cancel_in_medium(p, op);
  }
  op->where = Op::Where::kNone;
}

bool Engine::idle() {
  std::lock_guard<std::mutex> lk(mu_);
  for (int r = 0; r < size_; ++r) {
    const PeerState& p = peer(r);
    if (!p.posted.empty() || busy(p)) return false;
  }
  return true;
}

void Engine::fail_peer(PeerState& p, Status st) {
  if (p.is_failed()) return;
  // A peer that leaves after its last operation is normal; only lost work is worth a warning.
  if (st.code() != ErrorCode::kAborted && (!p.posted.empty() || busy(p)))
    CHORUS_LOG(WARN, Net, "rank %d: %s", name_, st.message().c_str());
  else
    CHORUS_LOG(DEBUG, Net, "rank %d: %s", name_, st.message().c_str());
  p.failed = st;
  drop_pending(p, st);
  // Messages that fully arrived before the peer left stay receivable (it sent them and may
  // have exited since); offers can no longer complete.
  std::erase_if(p.unexpected, [](const Unexpected& u) { return u.offer; });
  on_peer_failed(p, st);
}

void Engine::drop_pending(PeerState& p, const Status& st) {
  for (Op* op : p.posted) complete(op, st);
  p.posted.clear();
  drop_in_medium(p, st);
}

void Engine::refused_by(PeerState& p, const Status& st) {
  CHORUS_LOG(WARN, Net, "rank %d: %s", name_, st.message().c_str());
  // The message may have gone already (its request succeeded): every pending and later
  // request with this peer fails instead, so the sender learns in any case.
  if (p.desynced.is_ok()) p.desynced = st;
  drop_pending(p, st);
}

}  // namespace chorus::engine
