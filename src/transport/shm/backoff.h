// How a shared-memory waiter with nothing to do backs off: a brief spin (only when this
// host has a core for every rank of the segment), then sched_yield() polling for up to
// kYieldNs, then sleeping on its doorbell. Polling with yields lets a peer that shares
// our core run at once (a futex wake-up costs ~50 us on a busy VM, a yield a context
// switch); measured on 2 cores with 4 ranks, all_reduce 8 B went from ~120 us (spinning
// with pauses) to ~4-5 us (docs/PERFORMANCE.md).
#pragma once
#include <time.h>

#include <cstdint>

namespace chorus::shm {

class Backoff {
 public:
  enum class Phase { kSpin, kYield, kSleep };
  static constexpr std::int64_t kSpinNs = 2'000;
  static constexpr std::int64_t kYieldNs = 500'000;

  explicit Backoff(bool may_spin) : may_spin_(may_spin) {}

  // The phase of the next idle round of the current wait.
  Phase next() {
    const std::int64_t now = now_ns();
    if (start_ns_ < 0) start_ns_ = now;
    const std::int64_t idle = now - start_ns_;
    if (may_spin_ && idle < kSpinNs) return Phase::kSpin;
    return idle < kYieldNs ? Phase::kYield : Phase::kSleep;
  }
  // Progress was made (or a wait ended): the next idle round starts a new wait.
  void reset() { start_ns_ = -1; }
  // After a sleep was woken: poll (yield) again for a while before the next sleep.
  void woken() { start_ns_ = now_ns() - kSpinNs; }

 private:
  static std::int64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }
  bool may_spin_;
  std::int64_t start_ns_ = -1;
};

}  // namespace chorus::shm
