// Shared-memory engine wait loop: one waiting thread drives progress, the others sleep on
// a condition variable. With nothing to do the driver spins briefly, then yields, then
// sleeps on its doorbell futex (short timeouts re-check deadline, abort and liveness), so
// a waiting rank never holds the core its peer needs.
#include <sched.h>

#include <algorithm>

#include "transport/shm/doorbell.h"
#include "transport/shm/engine.h"
#include "util/strings.h"

namespace chorus::shm {

namespace {
constexpr int kSpinRounds = 64;     // progress checks with pauses in between (a few µs)
constexpr int kPausesPerSpin = 16;
constexpr int kYieldRounds = 16;    // then sched_yield between checks
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
                             op->kind == Op::Kind::kSend ? "to" : "from", op->peer, p.address.c_str(),
                             op->tag.comm, static_cast<unsigned long long>(op->tag.seq),
                             op->tag.step, op->bytes),
                  op->peer, static_cast<std::int64_t>(op->tag.seq));
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
      drive(lk, deadline);
      polling_ = false;
      cv_.notify_all();
    } else {
      auto until = Deadline::earliest(deadline, Deadline::after(std::chrono::milliseconds(10)));
      cv_.wait_until(lk, until.at());
    }
  }
}

// One step of progress for the driving thread (mu_ held on entry and exit).
void Engine::drive(std::unique_lock<std::mutex>& lk, Deadline deadline) {
  if (closed_) return;
  bool any = progress_all();
  check_peers();
  if (any) {
    idle_rounds_ = 0;
    return;
  }
  ++idle_rounds_;
  if (idle_rounds_ <= kSpinRounds) {
    lk.unlock();
    for (int i = 0; i < kPausesPerSpin; ++i) cpu_relax();
    lk.lock();
    return;
  }
  if (idle_rounds_ <= kSpinRounds + kYieldRounds) {
    lk.unlock();
    ::sched_yield();
    lk.lock();
    return;
  }
  const std::uint32_t seen = me_.doorbell.load(std::memory_order_seq_cst);
  me_.sleeping.store(1, std::memory_order_seq_cst);
  if (progress_all() || aborted()) {
    me_.sleeping.store(0, std::memory_order_relaxed);
    idle_rounds_ = 0;
    return;
  }
  const long us = 1000L * std::max(1, deadline.remaining_ms(kSleepCapMs));
  lk.unlock();
  sleep_on_doorbell(me_, seen, us);
  lk.lock();
  me_.sleeping.store(0, std::memory_order_relaxed);
  idle_rounds_ = kSpinRounds;  // woken: yield-check a few times before sleeping again
}

}  // namespace chorus::shm
