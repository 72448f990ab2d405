// Engine wait loop: one waiting thread drives progress (the medium's progress rounds,
// paced by the waiting policy: spin, yield, then block on the medium's events), the
// others sleep on a condition variable; deadline and abort checks.
#include <sched.h>

#include <algorithm>

#include "transport/engine/engine.h"
#include "util/strings.h"

namespace chorus::engine {

Status Engine::timeout_status(std::span<Op* const> ops) const {
  for (Op* op : ops) {
    if (op == nullptr || op->done.load(std::memory_order_acquire)) continue;
    const PeerState& p = peer(op->peer);
    const bool send = op->kind == Op::Kind::kSend;
    return Status(ErrorCode::kTimeout,
                  str_printf("deadline passed waiting for %s %s peer rank %d (%s), tag comm %u "
                             "seq %llu step %u, %zu bytes",
                             send ? "send" : "recv", send ? "to" : "from", p.name,
                             p.address.c_str(), op->tag.comm,
                             static_cast<unsigned long long>(op->tag.seq), op->tag.step, op->bytes),
                  p.name, static_cast<std::int64_t>(op->tag.seq));
  }
  return timeout_error("deadline passed");
}

Status Engine::wait(std::span<Op* const> ops, Deadline deadline) {
  std::unique_lock<std::mutex> lk(mu_);
  bool polled = false;   // this thread drove progress during this wait
  bool blocked = false;  // ... and reached the blocking phase
  WaitPolicy::Clock::time_point start{};
  for (;;) {
    if (aborted()) {
      const bool all_ok = std::all_of(ops.begin(), ops.end(), [](Op* op) {
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
    if (all_done) {
      if (polled) {
        policy_.record(blocked);
        cv_.notify_all();  // another waiter may take over driving
      }
      return Status::ok();
    }
    if (deadline.expired()) return timeout_status(ops);
    bool block = false;
    if (!take_turn(lk, deadline, &polled, &start, &block)) continue;
    blocked = blocked || block;
    if (block) CHORUS_RETURN_IF_ERROR(after_block(ops));
  }
}

bool Engine::take_turn(std::unique_lock<std::mutex>& lk, Deadline deadline, bool* polled,
                       WaitPolicy::Clock::time_point* start, bool* block) {
  if (polling_) {
    const auto until = Deadline::earliest(deadline, Deadline::after(std::chrono::milliseconds(10)));
    cv_.wait_until(lk, until.at());
    return false;
  }
  polling_ = true;
  const auto now = WaitPolicy::Clock::now();
  if (!*polled) *start = now;
  *polled = true;
  const WaitPolicy::Phase phase = policy_.phase(*start, now);
  *block = phase == WaitPolicy::Phase::kBlock;
  const bool moved = closed_ ? false : progress(lk, deadline, *block);
  if (!moved && !*block) {
    lk.unlock();
    if (phase == WaitPolicy::Phase::kSpin) WaitPolicy::cpu_relax();
    else WaitPolicy::yield();
    lk.lock();
  }
  polling_ = false;
  // Busy rounds that found nothing leave the other waiters asleep.
  if (moved || *block) cv_.notify_all();
  if (moved && policy_.restarts_on_progress()) *start = WaitPolicy::Clock::now();
  return true;
}

bool Engine::block(Deadline deadline, int also) {
  if (!blocks_with_fd()) return false;
  std::unique_lock<std::mutex> lk(mu_);
  if (closed_ || aborted()) return true;
  if (polling_) {
    // Another thread drives this medium; it does not watch `also`, so come back soon.
    const auto until = Deadline::earliest(deadline, Deadline::after(std::chrono::milliseconds(10)));
    cv_.wait_until(lk, until.at());
    return true;
  }
  polling_ = true;
  also_fd_ = also;
  progress(lk, deadline, /*block=*/true);
  also_fd_ = -1;
  polling_ = false;
  cv_.notify_all();
  return true;
}

void Engine::poke() {
  std::unique_lock<std::mutex> lk(mu_);
  if (polling_ || closed_ || aborted()) return;
  polling_ = true;
  const bool moved = progress(lk, Deadline(WaitPolicy::Clock::now()), /*block=*/false);
  polling_ = false;
  if (moved) cv_.notify_all();
}

}  // namespace chorus::engine
