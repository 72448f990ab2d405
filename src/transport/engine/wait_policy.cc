#include "transport/engine/wait_policy.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "util/cpus.h"

namespace chorus::engine {

namespace {
constexpr std::int64_t kLoadSampleNs = 2'000'000;
}  // namespace

WaitPolicy::Config WaitPolicy::for_shm() {
  Config c;
  c.yield_ns = 500'000;
  c.restart_on_progress = true;
  return c;
}

WaitPolicy::Config WaitPolicy::for_tcp(std::int64_t spin_us, int local_ranks) {
  Config c;
  const std::int64_t ns = std::max<std::int64_t>(spin_us, 0) * 1000;
  c.spin_ns = ns / 4 * 3;
  c.yield_ns = ns - c.spin_ns;
  c.adaptive = true;
  c.block_when_oversubscribed = true;
  c.local_ranks = local_ranks;
  return c;
}

WaitPolicy::WaitPolicy(const Config& c)
    : max_ns_(std::max<std::int64_t>(c.spin_ns, 0) + std::max<std::int64_t>(c.yield_ns, 0)),
      min_ns_(max_ns_ / 16),
      cur_ns_(max_ns_),
      spin_share_(max_ns_ > 0 ? std::max<std::int64_t>(c.spin_ns, 0) * 1024 / max_ns_ : 0),
      adaptive_(c.adaptive),
      restart_(c.restart_on_progress),
      watch_load_(c.block_when_oversubscribed),
      cores_(usable_cores()) {
  oversubscribed_ = watch_load_ && c.local_ranks > cores_;
}

WaitPolicy::Phase WaitPolicy::phase(Clock::time_point start, Clock::time_point now) {
  if (!busy_enabled() || oversubscribed_ || (watch_load_ && loaded(now))) return Phase::kBlock;
  const std::int64_t t =
      std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count();
  if (t >= cur_ns_) return Phase::kBlock;
  return t < cur_ns_ * spin_share_ / 1024 ? Phase::kSpin : Phase::kYield;
}

void WaitPolicy::record(bool blocked) {
  if (!adaptive_ || !busy_enabled()) return;
  cur_ns_ = blocked ? std::max(min_ns_, cur_ns_ / 2) : std::min(max_ns_, cur_ns_ * 2);
}

void WaitPolicy::cpu_relax() {
  for (int i = 0; i < 16; ++i) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
  }
}

// More runnable tasks on the host than cores this process may use (/proc/loadavg's
// running count; the busy ranks count themselves).
bool WaitPolicy::loaded(Clock::time_point now) {
  if (now - sampled_ < std::chrono::nanoseconds(kLoadSampleNs)) return loaded_;
  sampled_ = now;
  char buf[128] = {};
  int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return loaded_ = false;
  ssize_t n = ::read(fd, buf, sizeof(buf) - 1);
  ::close(fd);
  int running = 0;
  if (n <= 0 || std::sscanf(buf, "%*s %*s %*s %d/", &running) != 1) return loaded_ = false;
  return loaded_ = running > cores_;
}

}  // namespace chorus::engine
