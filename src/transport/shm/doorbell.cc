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

void ring_doorbell(RankSlot& slot, int bell) {
  slot.doorbell.fetch_add(1, std::memory_order_seq_cst);
  const std::uint32_t sleepers = slot.sleeping.load(std::memory_order_seq_cst);
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
