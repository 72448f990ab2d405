// Ranks crowded on one processor while another has fewer. Window barriers and mailbox
// exchanges never sleep for a short wait (they spin, then poll with sched_yield()), and a
// thread that never sleeps is never placed again at a wake-up: when the kernel starts two
// ranks on one processor (as it does now and then with freshly forked ranks), they can
// stay there, taking turns, for the whole of a short run although the other processor is
// idle, or three of four ranks on one of two processors. Measured on a 2-vCPU AMD EPYC
// guest: broadcast of 8 B over the windows, 2 ranks, 2000 calls, 6 runs of 40 at 3.9-6.1
// us a call (both ranks on one processor, every other wait handed over with a yield)
// where the rest took 0.3-0.6; all_reduce of 8 B, 4 ranks, 1000 calls: 3.5-3.9 us with
// two ranks on each processor, 5.0-5.6 with three on one (half the runs).
// So a waiter that finds the rank it waits for last arrived from its own processor moves
// itself to the processor of its affinity mask with the fewest local ranks, when that
// evens the two out (at least two fewer), the nearest such (its last-level cache, else
// its package: a rank's memory stays near), then gives itself its mask back. It looks at
// most every 1 ms and moves at most once per pause, which doubles with every move from
// 1 ms up to 1 s, so a scheduler that keeps putting them back together is not fought.
#include "transport/shm/spread.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <vector>

#include "diag/log.h"
#include "transport/shm/engine.h"
#include "util/cpus.h"

namespace chorus::shm {

namespace {
constexpr std::int64_t kFirstPauseNs = 1'000'000, kLongestPauseNs = 1'000'000'000;

// Each processor's last-level cache and package, from sysfs, read once per process (-1
// where unreadable).
struct Topology {
  std::vector<int> llc, package;
  Topology() {
    const long n = std::clamp<long>(::sysconf(_SC_NPROCESSORS_CONF), 1, CPU_SETSIZE);
    for (int c = 0; c < n; ++c) {
      llc.push_back(read(c, "cache/index3/id"));
      package.push_back(read(c, "topology/physical_package_id"));
    }
  }
  static int read(int c, const char* what) {
    char path[96];
    std::snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/%s", c, what);
    std::FILE* f = std::fopen(path, "re");
    if (f == nullptr) return -1;
    int v = -1;
    if (std::fscanf(f, "%d", &v) != 1) v = -1;
    std::fclose(f);
    return v;
  }
  int of(const std::vector<int>& v, int c) const {
    return c >= 0 && c < static_cast<int>(v.size()) ? v[c] : -1;
  }
};
}  // namespace

int spread_target(const std::uint16_t* ranks, const cpu_set_t& mask, int mine,
                  const std::function<int(int)>& nearness) {
  int to = -1, to_near = 0;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (c == mine || !CPU_ISSET(c, &mask) || ranks[c] + 2 > ranks[mine]) continue;
    if (to >= 0 && ranks[c] > ranks[to]) continue;
    const int near = nearness(c);
    if (to < 0 || ranks[c] < ranks[to] || near > to_near) {
      to = c;
      to_near = near;
    }
  }
  return to;
}

int host_nearness(int mine, int c) {
  static const Topology t;
  const int package = t.of(t.package, mine);
  if (package < 0 || package != t.of(t.package, c)) return 0;
  const int llc = t.of(t.llc, mine);
  return llc >= 0 && llc == t.of(t.llc, c) ? 2 : 1;
}

void Engine::spread_from(int peer) {
  const int mine = ::sched_getcpu();
  if (mine < 0 || seg_.slot(peer).cpu.load(std::memory_order_relaxed) != mine) return;
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
  if (now < next_spread_ns_) return;
  next_spread_ns_ = now + kFirstPauseNs;  // a look at most every 1 ms; the pause grows by moves
  cpu_set_t mask;
  if (::sched_getaffinity(0, sizeof mask, &mask) != 0) return;
  // The local ranks on each processor, as they last arrived (this thread on `mine`), and
  // the processor of the mask with the fewest; moving there must even the two out.
  std::array<std::uint16_t, CPU_SETSIZE> ranks{};
  for (int r = 0; r < size_; ++r) {
    const int at = r == rank_ ? mine : seg_.slot(r).cpu.load(std::memory_order_relaxed);
    if (at >= 0 && at < CPU_SETSIZE) ++ranks[at];
  }
  const int to = spread_target(ranks.data(), mask, mine,
                               [mine](int c) { return host_nearness(mine, c); });
  if (to < 0) return;
  spread_backoff_ns_ = std::clamp(2 * spread_backoff_ns_, kFirstPauseNs, kLongestPauseNs);
  next_spread_ns_ = now + spread_backoff_ns_;
  // Published before the move: the peer runs on `mine` as soon as this thread leaves it,
  // possibly before this thread runs again, and must not follow it to `to`.
  me_.cpu.store(to, std::memory_order_seq_cst);
  if (!move_to_cpu(to)) {
    me_.cpu.store(::sched_getcpu(), std::memory_order_relaxed);
    return;
  }
  CHORUS_LOG(INFO, Net,
             "rank %d: moved from processor %d (%d local ranks, rank %d among them, which it "
             "waits for) to %d (%d)", name(), mine, ranks[mine], peers_[peer].name, to, ranks[to]);
}

}  // namespace chorus::shm
