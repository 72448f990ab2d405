// HandOffMeter: how long a cache line written by one rank takes to reach another, now and
// at its best, sampled at no extra synchronisation. Every kEvery-th window barrier and
// mailbox exchange, every rank stamps its arrival time (steady clock) next to its arrival
// word; a rank that was already waiting when the last rank arrived measures from that
// stamp to the moment it saw the arrival. The figure is an upper bound of the line's
// one-way trip (it includes a pause and a clock reading) whose changes follow where the
// host runs the ranks' processors: on this project's 2-vCPU guests 60-110 ns while the two
// share a last-level cache, 250-400 ns while they do not (docs/PERFORMANCE.md, session 21).
#pragma once
#include <array>
#include <atomic>
#include <cstdint>

#include "transport/transport.h"

namespace chorus::shm {

class HandOffMeter {
 public:
  static constexpr std::uint64_t kEvery = 8;  // sampled points: target % kEvery == 0
  static constexpr int kBatch = 9;            // samples per published median
  // Longer is not a hand-off (a line crosses between any two cores of a server in well
  // under 1 us): the waiter lost its processor meanwhile.
  static constexpr std::int64_t kMaxNs = 2000;

  static bool sampled(std::uint64_t target) { return target % kEvery == 0; }
  // One sample (ns). Callers are serialised by the ticket order of the operations that
  // synchronise (a sample racing another is dropped, never torn).
  void add(std::int64_t ns);
  // `now_ns`: the middle of the latest three batch medians (one batch spoilt by a
  // preemption does not count); `floor_ns`: the least such figure so far (0, 0: none yet).
  transport::HandOff read() const;

 private:
  std::atomic<bool> busy_{false};
  std::array<std::int64_t, kBatch> batch_{};
  int filled_ = 0;
  std::array<std::int64_t, 3> medians_{};  // the latest three batch medians
  int next_median_ = 0;                     // where the next one goes
  int batches_ = 0;                         // complete batches, up to 3
  std::atomic<std::int64_t> now_ns_{0};
  std::atomic<std::int64_t> floor_ns_{0};
};

}  // namespace chorus::shm
