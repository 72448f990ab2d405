// How a thread with nothing to do waits for a peer: busy polling with a pause instruction
// (spin), then polling with sched_yield() (yield), then blocking in the kernel until an
// event (block). Every medium uses this one policy, with the costs of its own events as
// parameters (WaitPolicy::for_shm, WaitPolicy::for_tcp): a shared-memory waiter is woken
// by a futex, cheap to poll and costly to wake (~50 us on a busy VM); a TCP waiter by a
// socket, where a spinning rank takes the core the kernel's network stack needs.
#pragma once
#include <chrono>
#include <cstdint>

namespace chorus::engine {

class WaitPolicy {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Phase : std::uint8_t { kSpin, kYield, kBlock };

  struct Config {
    std::int64_t spin_ns = 0;   // busy polling with a pause instruction
    std::int64_t yield_ns = 0;  // then polling with sched_yield()
    // A wait that still had to block halves the busy budget (down to 1/16), one that
    // completed while busy doubles it (up to the configured one).
    bool adaptive = false;
    // Progress starts a new busy window; otherwise it counts from the start of the wait.
    bool restart_on_progress = false;
    // No busy polling while this host runs more ranks (`local_ranks`) than cores, or more
    // runnable tasks than cores (sampled every few ms): a busy waiter would take the core
    // a peer or the kernel needs, and a wake-up is the cheaper price.
    bool block_when_oversubscribed = false;
    // Spin only on an idle host: while this host runs more ranks than cores, or more
    // runnable tasks than cores, the spin phase polls with sched_yield() instead (a busy
    // waiter would keep the core from the peer it waits for).
    bool spin_when_idle = false;
    // With block_when_oversubscribed: while this host runs more ranks than cores, poll
    // with sched_yield() for this long (scaled with the adaptive budget) before blocking,
    // unless yields have lately been slow (yields_slow()). The core a yield gives up goes
    // to a peer rank, which is what the waiter waits for; a wake-up from a block costs
    // more. Not while other tasks crowd the host (a stranger takes a whole time slice
    // from each yield): then a yield is slow and blocking is the cheaper wait.
    std::int64_t crowded_yield_ns = 0;
    int local_ranks = 1;
    int cores = 0;  // cores this process may use; 0 = ask the kernel (usable_cores())
  };

  // Shared memory: spin for as long as one sched_yield() costs on this host (measured once
  // per process: on an idle host a peer that arrives within that time is met without a
  // system call; waiting longer than the alternative costs at most twice the best), only
  // when the host is idle; then yield polling until 500 us; then the doorbell futex.
  // Spinning on a crowded host was measured worse in every case: on 2 cores with 4 ranks
  // all_reduce 8 B took ~120 us (spin) against ~4-5 us (yield), and with 2 ranks on a
  // loaded machine ~4 us (2 us of spin first) against ~2 us. `local_ranks` share the host.
  static Config for_shm(int local_ranks = 1);
  // What one sched_yield() with nothing else to run costs here (the least of a few
  // calls, measured at the first call of the process), clamped to [0.1, 20] us.
  static std::int64_t yield_cost_ns();
  // TCP: CHORUS_SPIN_US of busy polling (3/4 spin, 1/4 yield), adaptive; when the host
  // runs more ranks than cores, 2 x CHORUS_SPIN_US of yield polling instead, while yields
  // are fast (one wake-up of a blocked rank costs ~50-60 us on a 2-vCPU VM: yielding
  // twice as long is the competitive bound); `local_ranks` share this host.
  static Config for_tcp(std::int64_t spin_us, int local_ranks);

  explicit WaitPolicy(const Config& c);

  bool busy_enabled() const { return max_ns_ > 0; }
  // Whether a wait may start with busy polling at all (no clock, no load sample): false
  // when busy waiting is off or this host runs more ranks than cores.
  bool may_spin() const {
    return busy_enabled() && spin_ns_ > 0 && !((watch_load_ || spin_when_idle_) && oversubscribed_);
  }
  std::int64_t budget_ns() const { return cur_ns_; }
  bool restarts_on_progress() const { return restart_; }

  // The phase of a wait whose busy window began at `start`.
  Phase phase(Clock::time_point start, Clock::time_point now);
  // How a wait ended: completed while busy, or only after blocking (adaptive budget).
  void record(bool blocked);

  static void cpu_relax();
  // sched_yield(), timed: a yield that took longer than kSlowYieldNs gave the core to a
  // task that kept it for a time slice; crowded yield polling then stops process-wide for
  // a while (20 ms, doubling with every slow yield up to 1 s; back to 20 ms after ten
  // times the last pause without one).
  static void yield();
  static bool yields_slow(Clock::time_point now);
  static constexpr std::int64_t kSlowYieldNs = 500'000;

 private:
  bool loaded(Clock::time_point now);

  std::int64_t max_ns_;
  std::int64_t min_ns_;
  std::int64_t cur_ns_;
  std::int64_t spin_ns_;  // of max_ns_ (scaled with the adaptive budget)
  bool adaptive_;
  bool restart_;
  bool watch_load_;
  bool spin_when_idle_;
  bool oversubscribed_;
  std::int64_t crowded_ns_;
  int cores_;
};

}  // namespace chorus::engine
