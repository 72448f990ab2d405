// Shared-window barriers: every rank publishes how many barriers it has reached in its
// rank slot and waits until every other rank has reached as many. Waiting spins briefly,
// then yields, then sleeps on the doorbell (arrivals ring it); while it waits it checks
// the deadline, aborts published by any rank and peer liveness, so it never hangs.
#include <sched.h>

#include <algorithm>

#include "transport/shm/doorbell.h"
#include "transport/shm/engine.h"
#include "util/strings.h"

namespace chorus::shm {

namespace {
constexpr int kSpinRounds = 256;  // checks with pauses in between
constexpr int kPausesPerSpin = 16;
constexpr int kYieldRounds = 32;  // then sched_yield between checks
constexpr int kSleepCapMs = 5;    // futex sleep bound: deadline and liveness re-checks
}  // namespace

Status Engine::window_failure(std::uint64_t target) {
  std::lock_guard<std::mutex> lk(mu_);
  if (closed_) return Status(ErrorCode::kAborted, "the shm transport was destroyed");
  check_peers();  // adopts a published abort; fails peers that departed or died
  if (aborted()) return abort_status();
  for (Peer& p : peers_) {
    if (p.rank == rank_ || !p.is_failed()) continue;
    if (seg_.slot(p.rank).win_arrived.load(std::memory_order_acquire) < target) return p.failed;
  }
  return Status::ok();
}

Status Engine::window_barrier(const transport::Tag& tag, Deadline deadline) {
  if (aborted()) return abort_status();
  const std::uint64_t target = win_count_.load(std::memory_order_relaxed) + 1;
  me_.win_arrived.store(target, std::memory_order_seq_cst);
  for (int r = 0; r < size_; ++r)
    if (r != rank_) ring_doorbell(seg_.slot(r));
  int behind = -1;  // a rank not there yet, checked first next time
  auto all_arrived = [&] {
    if (behind >= 0 && seg_.slot(behind).win_arrived.load(std::memory_order_acquire) < target)
      return false;
    for (int r = 0; r < size_; ++r) {
      if (r != rank_ && seg_.slot(r).win_arrived.load(std::memory_order_acquire) < target) {
        behind = r;
        return false;
      }
    }
    return true;
  };
  for (int round = 0;; ++round) {
    if (all_arrived()) break;
    if (round < kSpinRounds) {
      for (int i = 0; i < kPausesPerSpin; ++i) cpu_relax();
      if (round % 64 != 63) continue;
    } else if (round < kSpinRounds + kYieldRounds) {
      ::sched_yield();
    } else {
      const std::uint32_t seen = me_.doorbell.load(std::memory_order_seq_cst);
      me_.sleeping.store(1, std::memory_order_seq_cst);
      if (!all_arrived() && !aborted())
        sleep_on_doorbell(me_, seen, 1000L * std::max(1, deadline.remaining_ms(kSleepCapMs)));
      me_.sleeping.store(0, std::memory_order_relaxed);
    }
    if (all_arrived()) break;
    CHORUS_RETURN_IF_ERROR(window_failure(target));
    if (deadline.expired()) {
      const Peer& p = peers_[behind];
      return Status(ErrorCode::kTimeout,
                    str_printf("deadline passed waiting for peer rank %d (%s) at shared-window "
                               "barrier %llu, tag comm %u seq %llu step %u",
                               behind, p.address.c_str(), static_cast<unsigned long long>(target),
                               tag.comm, static_cast<unsigned long long>(tag.seq), tag.step),
                    behind, static_cast<std::int64_t>(tag.seq));
    }
  }
  win_count_.store(target, std::memory_order_relaxed);
  return Status::ok();
}

}  // namespace chorus::shm
