// Doorbells over shared (not process-private) futexes.
#include "transport/shm/doorbell.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace chorus::shm {

namespace {
long futex(std::atomic<std::uint32_t>* addr, int op, std::uint32_t val, const timespec* ts) {
  return ::syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(addr), op, val, ts, nullptr, 0);
}
}  // namespace

// The fence orders the caller's news before the look at the sleepers; a sleeper sets its
// flag (an atomic read-modify-write, a fence too) before it looks at its work a last time,
// so either the ringer sees the flag or the sleeper sees the news. Without a sleeper the
// doorbell is not touched: a write to it would take the line that holds the peer's own
// words away from it, one more cache-line transfer per message between busy ranks.
void ring_doorbell(RankSlot& slot, int bell) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const std::uint32_t sleepers = slot.sleeping.load(std::memory_order_relaxed);
  if (sleepers == 0) return;
  slot.doorbell.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers & kFutexSleeper) futex(&slot.doorbell, FUTEX_WAKE, 1 << 30, nullptr);
  if ((sleepers & kBellSleeper) && bell >= 0) {
    const char one = 1;
    [[maybe_unused]] ssize_t n = ::write(bell, &one, 1);  // full FIFO: it is readable already
  }
}

void sleep_on_doorbell(RankSlot& slot, std::uint32_t seen, long timeout_us) {
  timespec ts{timeout_us / 1000000, (timeout_us % 1000000) * 1000};
  futex(&slot.doorbell, FUTEX_WAIT, seen, &ts);
}

}  // namespace chorus::shm
