#include "transport/engine/wait_policy.h"

#include <sched.h>

#include <algorithm>
#include <atomic>

#include "util/cpus.h"
#include "util/spin_lock.h"

namespace chorus::engine {

namespace {
constexpr std::int64_t kLoadSampleNs = 2'000'000;
}  // namespace

std::int64_t WaitPolicy::yield_cost_ns() {
  static const std::int64_t cost = [] {
    std::int64_t best = INT64_MAX;
    for (int i = 0; i < 16; ++i) {
      const auto t0 = Clock::now();
      ::sched_yield();
      best = std::min<std::int64_t>(
          best, std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count());
    }
    return std::clamp<std::int64_t>(best, 100, 20'000);
  }();
  return cost;
}

WaitPolicy::Config WaitPolicy::for_shm(int local_ranks) {
  Config c;
  c.spin_ns = yield_cost_ns();
  c.yield_ns = 500'000 - c.spin_ns;
  c.restart_on_progress = true;
  c.spin_when_idle = true;
  c.local_ranks = local_ranks;
  c.cores = usable_cores();
  return c;
}

WaitPolicy::Config WaitPolicy::for_tcp(std::int64_t spin_us, int local_ranks) {
  Config c;
  const std::int64_t ns = std::max<std::int64_t>(spin_us, 0) * 1000;
  c.spin_ns = ns / 4 * 3;
  c.yield_ns = ns - c.spin_ns;
  c.adaptive = true;
  c.block_when_oversubscribed = true;
  c.crowded_yield_ns = 2 * ns;
  c.local_ranks = local_ranks;
  c.cores = usable_cores();
  return c;
}

WaitPolicy::WaitPolicy(const Config& c)
    : max_ns_(std::max<std::int64_t>(c.spin_ns, 0) + std::max<std::int64_t>(c.yield_ns, 0)),
      min_ns_(max_ns_ / 16),
      cur_ns_(max_ns_),
      spin_ns_(std::max<std::int64_t>(c.spin_ns, 0)),
      adaptive_(c.adaptive),
      restart_(c.restart_on_progress),
      watch_load_(c.block_when_oversubscribed),
      spin_when_idle_(c.spin_when_idle),
      crowded_ns_(std::max<std::int64_t>(c.crowded_yield_ns, 0)),
      cores_(c.cores > 0 ? c.cores : usable_cores()) {
  oversubscribed_ = (watch_load_ || spin_when_idle_) && c.local_ranks > cores_;
}

WaitPolicy::Phase WaitPolicy::phase(Clock::time_point start, Clock::time_point now) {
  if (!busy_enabled()) return Phase::kBlock;
  const std::int64_t t =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count();
  if (watch_load_ && (oversubscribed_ || loaded(now))) {
    // Our own ranks crowd the host: yield to them for a while, unless yields are slow
    // (strangers take the core). Only the local rank count tells ours from strangers'.
    const bool ours = oversubscribed_ && crowded_ns_ > 0 && !yields_slow(now);
    return ours && t < crowded_ns_ * cur_ns_ / max_ns_ ? Phase::kYield : Phase::kBlock;
  }
  if (t >= cur_ns_) return Phase::kBlock;
  if (t >= cur_ns_ * spin_ns_ / max_ns_) return Phase::kYield;  // the spin share of the budget
  if (spin_when_idle_ && (oversubscribed_ || loaded(now))) return Phase::kYield;
  return Phase::kSpin;
}

void WaitPolicy::record(bool blocked) {
  if (!adaptive_ || !busy_enabled()) return;
  cur_ns_ = blocked ? std::max(min_ns_, cur_ns_ / 2) : std::min(max_ns_, cur_ns_ * 2);
}

void WaitPolicy::cpu_relax() {
  for (int i = 0; i < 16; ++i) util::cpu_pause();
}

namespace {
std::atomic<std::int64_t> slow_until_ns{0};  // steady clock: crowded yields off until then
std::atomic<std::int64_t> slow_backoff_ns{0};
constexpr std::int64_t kSlowBackoffMinNs = 20'000'000, kSlowBackoffMaxNs = 1'000'000'000;
std::int64_t ns_of(WaitPolicy::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}
}  // namespace

void WaitPolicy::yield() {
  const Clock::time_point t0 = Clock::now();
  ::sched_yield();
  const Clock::time_point t1 = Clock::now();
  if (ns_of(t1) - ns_of(t0) < kSlowYieldNs) {
    // Forget the backoff only after ten pauses' time without a slow yield: on a host
    // shared with busy strangers fast and slow yields alternate.
    const std::int64_t b = slow_backoff_ns.load(std::memory_order_relaxed);
    if (b > 0 && ns_of(t1) >= slow_until_ns.load(std::memory_order_relaxed) + 10 * b)
      slow_backoff_ns.store(0, std::memory_order_relaxed);
    return;
  }
  const std::int64_t b = std::clamp<std::int64_t>(
      2 * slow_backoff_ns.load(std::memory_order_relaxed), kSlowBackoffMinNs, kSlowBackoffMaxNs);
  slow_backoff_ns.store(b, std::memory_order_relaxed);
  slow_until_ns.store(ns_of(t1) + b, std::memory_order_relaxed);
}

bool WaitPolicy::yields_slow(Clock::time_point now) {
  return ns_of(now) < slow_until_ns.load(std::memory_order_relaxed);
}

// More runnable tasks on the host than cores this process may use (/proc/loadavg's
// running count; the busy ranks count themselves) in two samples in a row: one task that
// wakes for a moment (a kernel worker, the launcher) must not turn spinning off for the
// next 2 ms (measured: 2-rank waits of ~0.5 us took ~2 us in such windows). Sampled at
// most every 2 ms per process, whatever the number of waits: a wait policy made per wait
// must not read the file each time.
bool WaitPolicy::loaded(Clock::time_point now) {
  static std::atomic<std::int64_t> sampled_ns{0};  // steady clock; 0 = never
  static std::atomic<int> previous{0};  // the sample before
  static std::atomic<int> running{0};   // the lesser of the last two samples
  const std::int64_t t =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count();
  std::int64_t last = sampled_ns.load(std::memory_order_relaxed);
  if (t - last >= kLoadSampleNs &&
      sampled_ns.compare_exchange_strong(last, t, std::memory_order_relaxed)) {
    const int n_running = runnable_tasks_now();
    running.store(std::min(n_running, previous.exchange(n_running, std::memory_order_relaxed)),
                  std::memory_order_relaxed);
  }
  return running.load(std::memory_order_relaxed) > cores_;
}

}  // namespace chorus::engine
