// Shared-memory engine wait loop: one waiting thread drives progress, the others sleep on
// a condition variable. With nothing to do the driver backs off (backoff.h: a brief spin
// when every rank has a core, then yield polling, then sleeping on its doorbell futex with
// short timeouts that re-check deadline, abort and liveness), so a waiting rank never
// holds the core its peer needs.
#include <sched.h>

#include <algorithm>

#include "transport/shm/doorbell.h"
#include "transport/shm/engine.h"
#include "util/strings.h"

namespace chorus::shm {

namespace {
constexpr int kSleepCapMs = 10;     // futex sleep bound: liveness and deadline re-checks
}  // namespace

Status Engine::timeout_status(std::span<Op* const> ops) const {
  for (Op* op : ops) {
    if (op == nullptr || op->done.load(std::memory_order_acquire)) continue;
    const Peer& p = peers_[op->peer];
    return Status(ErrorCode::kTimeout,
                  str_printf("deadline passed waiting for %s %s peer rank %d (%s), tag comm %u "
                             "seq %llu step %u, %zu bytes",
                             op->kind == Op::Kind::kSend ? "send" : "recv",
                             op->kind == Op::Kind::kSend ? "to" : "from", p.name, p.address.c_str(),
                             op->tag.comm, static_cast<unsigned long long>(op->tag.seq),
                             op->tag.step, op->bytes),
                  p.name, static_cast<std::int64_t>(op->tag.seq));
  }
  return timeout_error("deadline passed");
}

Status Engine::wait(std::span<Op* const> ops, Deadline deadline) {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    if (aborted()) {
      bool all_ok = std::all_of(ops.begin(), ops.end(), [](Op* op) {
        return op == nullptr || (op->done.load(std::memory_order_acquire) && op->status.is_ok());
      });
      return all_ok ? Status::ok() : abort_status();
    }
    bool all_done = true;
    for (Op* op : ops) {
      if (op == nullptr) continue;
      if (!op->done.load(std::memory_order_acquire)) all_done = false;
      else if (!op->status.is_ok()) return op->status;
    }
    if (all_done) return Status::ok();
    if (deadline.expired()) return timeout_status(ops);
    if (!polling_) {
      polling_ = true;
      const bool slept = drive(lk, deadline);
      polling_ = false;
      cv_.notify_all();
      if (slept) CHORUS_RETURN_IF_ERROR(window_disagreement(ops));
    } else {
      auto until = Deadline::earliest(deadline, Deadline::after(std::chrono::milliseconds(10)));
      cv_.wait_until(lk, until.at());
    }
  }
}

// A peer waiting at a shared-window barrier for the same (comm, seq) as one of `ops` but
// with another signature issued a different operation than this rank (which waits for a
// message): kDesync, instead of both waiting until the deadline.
Status Engine::window_disagreement(std::span<Op* const> ops) const {
  const std::uint64_t mine = win_count_.load(std::memory_order_relaxed);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const RankSlot& slot = seg_.slot(r);
    const std::uint64_t at = slot.win_arrived.load(std::memory_order_acquire);
    if (at <= mine) continue;  // not waiting at a barrier this rank has yet to reach
    const std::uint64_t seq = slot.win_seq[at % 2].load(std::memory_order_relaxed);
    const std::uint64_t sig = slot.win_sig[at % 2].load(std::memory_order_relaxed);
    for (Op* op : ops) {
      if (op == nullptr || op->done.load(std::memory_order_acquire)) continue;
      if (op->tag.seq != seq || !transport::signatures_differ(op->tag.sig, sig)) continue;
      const Peer& p = peers_[r];
      return Status(ErrorCode::kDesync,
                    str_printf("rank %d waits for %s seq %llu, but peer rank %d (%s) is in %s "
                               "seq %llu at a shared-window barrier: the ranks issued different "
                               "operations",
                               name_, describe(op->tag.sig).c_str(),
                               static_cast<unsigned long long>(seq), p.name, p.address.c_str(),
                               describe(sig).c_str(), static_cast<unsigned long long>(seq)),
                    p.name, static_cast<std::int64_t>(seq));
    }
  }
  return Status::ok();
}

void Engine::poke() {
  std::unique_lock<std::mutex> lk(mu_);
  if (polling_ || closed_ || aborted()) return;
  if (progress_all()) cv_.notify_all();
  check_peers();
}

// One step of progress for the driving thread (mu_ held on entry and exit). True when it
// slept on the doorbell.
bool Engine::drive(std::unique_lock<std::mutex>& lk, Deadline deadline) {
  if (closed_) return false;
  bool any = progress_all();
  check_peers();
  if (any) {
    backoff_.reset();
    return false;
  }
  if (backoff_.keep_polling()) {
    lk.unlock();
    ::sched_yield();
    lk.lock();
    return false;
  }
  const std::uint32_t seen = me_.doorbell.load(std::memory_order_seq_cst);
  me_.sleeping.store(1, std::memory_order_seq_cst);
  if (progress_all() || aborted()) {
    me_.sleeping.store(0, std::memory_order_relaxed);
    backoff_.reset();
    return false;
  }
  const long us = doorbell_sleep_us(deadline, 1000L * kSleepCapMs);
  lk.unlock();
  sleep_on_doorbell(me_, seen, us);
  lk.lock();
  me_.sleeping.store(0, std::memory_order_relaxed);
  backoff_.woken();  // poll again for a while before sleeping again
  return true;
}

}  // namespace chorus::shm
