// Doorbells: a futex word per rank in the shared segment. Whoever has news for a rank
// (data in its rings, space freed in rings it writes, an abort) rings its doorbell; a rank
// with nothing to do spins briefly, then yields, then sleeps on its doorbell.
#pragma once
#include <atomic>
#include <cstdint>

#include "transport/shm/segment.h"

namespace chorus::shm {

// Bumps `slot`'s doorbell and wakes it when it sleeps (cheap when it does not).
void ring_doorbell(RankSlot& slot);
// Sleeps while `slot.doorbell` still equals `seen`, at most `timeout_us`. The caller has
// set slot.sleeping and re-checked its work after reading `seen`.
void sleep_on_doorbell(RankSlot& slot, std::uint32_t seen, long timeout_us);
// One pause instruction (spin-wait hint).
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace chorus::shm
