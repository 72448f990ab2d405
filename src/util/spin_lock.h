// SpinLock: a lock held for a few stores, taken and released without a system call or a
// call into the C library (the flight recorder's per-operation updates); and cpu_pause(),
// the processor's spin-wait hint.
#pragma once
#include <sched.h>

#include <atomic>

namespace chorus::util {

// One pause instruction (20-40 ns on the x86 machines measured).
inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// For std::lock_guard. A waiter spins a little, then yields its processor: with more
// threads than processors the holder may be waiting for that processor.
class SpinLock {
 public:
  void lock() {
    int spins = 0;
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < kSpins)
          cpu_pause();
        else
          ::sched_yield();
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpins = 64;
  std::atomic<bool> locked_{false};
};

}  // namespace chorus::util
