// How a shared-memory waiter with nothing to do backs off: sched_yield() polling for up
// to kYieldNs, then sleeping on its doorbell. Polling with yields lets a peer that shares
// our core run at once (a futex wake-up costs ~50 us on a busy VM, a yield a context
// switch), and returns at once on an idle core. Spinning with pause instructions first
// was measured worse in every case here: on 2 cores with 4 ranks all_reduce 8 B took
// ~120 us (spin) against ~4-5 us (yield), and with 2 ranks on a loaded machine ~4 us
// (2 us of spin first) or ~22 us (20 us of spin) against ~2 us (docs/PERFORMANCE.md).
#pragma once
#include <time.h>

#include <algorithm>
#include <cstdint>

#include "util/deadline.h"

namespace chorus::shm {

// How long a waiter with nothing to do sleeps on its doorbell (doorbell.h): until
// `deadline`, at most `cap_us`, at least 20 us; to the microsecond, so a caller waiting in
// short slices (transport::RoutedTransport) gets its turn back on time.
inline long doorbell_sleep_us(const Deadline& deadline, long cap_us) {
  return std::max(20L, deadline.remaining_us(cap_us));
}

class Backoff {
 public:
  static constexpr std::int64_t kYieldNs = 500'000;

  // True while the current wait should keep polling (yield), false when it should
  // sleep on the doorbell.
  bool keep_polling() {
    const std::int64_t now = now_ns();
    if (start_ns_ < 0) start_ns_ = now;
    return now - start_ns_ < kYieldNs;
  }
  // Progress was made (or a wait ended): the next idle round starts a new wait.
  void reset() { start_ns_ = -1; }
  // After a sleep was woken: poll again for a while before the next sleep.
  void woken() { start_ns_ = now_ns(); }

 private:
  static std::int64_t now_ns() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  }
  std::int64_t start_ns_ = -1;
};

}  // namespace chorus::shm
