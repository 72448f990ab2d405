// How the TCP polling thread waits: spin (non-blocking poll + cpu pause), then yield
// (non-blocking poll + sched_yield), then block in poll(). Waking a thread blocked in the
// kernel costs tens of microseconds; a busy waiter answers in a few. CHORUS_SPIN_US bounds
// the busy part (0 = block at once). The budget adapts: a wait that still has to block
// after busy waiting halves it (down to 1/16), one that completes while busy doubles it.
// No busy waiting at all when the host is oversubscribed (see phase()): on Linux's EEVDF
// scheduler a sched_yield() with competitors costs a whole time slice, a wake-up ~50 us.
#pragma once
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "util/cpus.h"

namespace chorus::tcp {

class SpinPolicy {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Phase : std::uint8_t { kSpin, kYield, kBlock };

  // `addresses`: every rank's "host:port"; ranks sharing our host count as local.
  SpinPolicy(std::int64_t budget_us, const std::vector<std::string>& addresses, int rank)
      : SpinPolicy(budget_us, count_local(addresses, rank), usable_cores()) {}
  SpinPolicy(std::int64_t budget_us, int local_ranks, int cores)
      : max_ns_(std::max<std::int64_t>(budget_us, 0) * 1000),
        min_ns_(max_ns_ / 16),
        cur_ns_(max_ns_),
        cores_(cores),
        oversubscribed_(local_ranks > cores) {}

  bool enabled() const { return max_ns_ > 0; }
  bool oversubscribed() const { return oversubscribed_; }
  std::int64_t budget_ns() const { return cur_ns_; }

  // Phase for a wait that began at `start`: spin for 3/4 of the budget, yield for the rest,
  // then block. Blocks at once when this host runs more ranks than we have cores, or (checked
  // every few ms) more runnable tasks than cores: a busy waiter would then take the core
  // that its peer, or anyone else, needs, and the wake-up is the cheaper price.
  Phase phase(Clock::time_point start, Clock::time_point now) {
    if (!enabled() || oversubscribed_ || loaded(now)) return Phase::kBlock;
    const std::int64_t t = std::chrono::duration_cast<std::chrono::nanoseconds>(now - start).count();
    if (t >= cur_ns_) return Phase::kBlock;
    return t < cur_ns_ / 4 * 3 ? Phase::kSpin : Phase::kYield;
  }
  // Records how a wait ended: completed during busy waiting, or only after blocking.
  void record(bool blocked) {
    if (!enabled()) return;
    cur_ns_ = blocked ? std::max(min_ns_, cur_ns_ / 2) : std::min(max_ns_, cur_ns_ * 2);
  }

  static void cpu_relax() {
    for (int i = 0; i < 16; ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield" ::: "memory");
#endif
    }
  }

 private:
  // More runnable tasks on the host than cores this process may use (/proc/loadavg's
  // running count, sampled at most every kSampleNs; the spinning ranks count themselves).
  bool loaded(Clock::time_point now) {
    if (now - sampled_ < std::chrono::nanoseconds(kSampleNs)) return loaded_;
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
  static std::string host_of(const std::string& addr) {
    auto colon = addr.rfind(':');
    return colon == std::string::npos ? addr : addr.substr(0, colon);
  }
  static int count_local(const std::vector<std::string>& addresses, int rank) {
    if (rank < 0 || rank >= static_cast<int>(addresses.size())) return 1;
    const std::string mine = host_of(addresses[rank]);
    return static_cast<int>(std::count_if(addresses.begin(), addresses.end(),
                                          [&](const std::string& a) { return host_of(a) == mine; }));
  }
  std::int64_t max_ns_;
  std::int64_t min_ns_;
  std::int64_t cur_ns_;
  int cores_;
  bool oversubscribed_;
  static constexpr std::int64_t kSampleNs = 2'000'000;
  Clock::time_point sampled_{};
  bool loaded_ = false;
};

}  // namespace chorus::tcp
