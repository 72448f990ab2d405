// Doorbells: a futex word per rank in the shared segment. Whoever has news for a rank
// (data in its rings, space freed in rings it writes, an abort) rings its doorbell; a rank
// with nothing to do spins briefly, then yields, then sleeps on its doorbell.
#pragma once
#include <atomic>
#include <cstdint>

#include "transport/shm/segment.h"

namespace chorus::shm {

// Who sleeps on a rank's doorbell (RankSlot::sleeping, a bit mask): a thread on the futex,
// or a thread blocked in poll() that watches the rank's bell (a FIFO; see Bells).
inline constexpr std::uint32_t kFutexSleeper = 1;
inline constexpr std::uint32_t kBellSleeper = 2;

// Wakes `slot`'s rank when it sleeps (a fence and a load when it does not): bumps its
// doorbell, wakes the futex, and writes the bell through `bell` (the write end of that
// rank's FIFO; -1 = none).
void ring_doorbell(RankSlot& slot, int bell = -1);
// Sleeps while `slot.doorbell` still equals `seen`, at most `timeout_us`. The caller has
// set slot.sleeping and re-checked its work after reading `seen`.
void sleep_on_doorbell(RankSlot& slot, std::uint32_t seen, long timeout_us);

}  // namespace chorus::shm
