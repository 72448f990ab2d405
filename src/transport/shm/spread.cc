// Ranks that share a processor while another one is free. Window barriers and mailbox
// exchanges never sleep for a short wait (they spin, then poll with sched_yield()), and a
// thread that never sleeps is never placed again at a wake-up: when the kernel starts two
// ranks on one processor (as it does now and then with freshly forked ranks), they can
// stay there, taking turns, for the whole of a short run although the other processor is
// idle. Measured on a 2-vCPU AMD EPYC guest, broadcast of 8 B over the windows, 2 ranks,
// 2000 calls: 3 runs of 30 at 4.0-6.6 us a call (both ranks on one processor, every other
// wait handed over with a yield) where the rest took 0.3-0.9; moving the waiter, 0 of 30.
// So a waiter that finds the rank it waits for last arrived from its own processor moves
// itself to a processor of its affinity mask on which no local rank was seen, then gives
// itself its mask back. Never with fewer processors in the mask than local ranks (there
// the ranks must share, and the wait policy yields to them), and at most once per pause,
// which doubles from 1 ms up to 1 s, so a scheduler that keeps putting them back together
// is not fought.
#include <sched.h>

#include <algorithm>
#include <chrono>

#include "diag/log.h"
#include "transport/shm/engine.h"
#include "util/cpus.h"

namespace chorus::shm {

namespace {
constexpr std::int64_t kFirstPauseNs = 1'000'000, kLongestPauseNs = 1'000'000'000;
}  // namespace

void Engine::spread_from(int peer) {
  const int mine = ::sched_getcpu();
  if (mine < 0 || seg_.slot(peer).cpu.load(std::memory_order_relaxed) != mine) return;
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
  if (now < next_spread_ns_) return;
  spread_backoff_ns_ = std::clamp(2 * spread_backoff_ns_, kFirstPauseNs, kLongestPauseNs);
  next_spread_ns_ = now + spread_backoff_ns_;
  cpu_set_t free;
  if (::sched_getaffinity(0, sizeof free, &free) != 0 || CPU_COUNT(&free) < size_) return;
  for (int r = 0; r < size_; ++r) {
    const int used = seg_.slot(r).cpu.load(std::memory_order_relaxed);
    if (used >= 0 && used < CPU_SETSIZE) CPU_CLR(used, &free);
  }
  CPU_CLR(mine, &free);
  int to = 0;
  while (to < CPU_SETSIZE && !CPU_ISSET(to, &free)) ++to;
  if (to == CPU_SETSIZE) return;
  // Published before the move: the peer runs on `mine` as soon as this thread leaves it,
  // possibly before this thread runs again, and must not follow it to `to`.
  me_.cpu.store(to, std::memory_order_seq_cst);
  if (!move_to_cpu(to)) {
    me_.cpu.store(mine, std::memory_order_relaxed);
    return;
  }
  CHORUS_LOG(INFO, Net, "rank %d: moved from processor %d to %d (rank %d, which it waits for, "
             "shared processor %d)", name(), mine, to, peers_[peer].name, mine);
}

}  // namespace chorus::shm
