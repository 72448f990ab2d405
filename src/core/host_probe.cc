// The host probe (host_probe.h): each figure is the best of a few short timed batches,
// so a busy machine disturbs it less; docs/ALGORITHMS.md lists what it measures.
#include "core/host_probe.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "core/host_probe_tcp.h"
#include "kernels/reduce.h"
#include "transport/shm/shm_transport.h"
#include "util/cpus.h"
#include "util/spin_lock.h"

namespace chorus::core {

namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

// Bytes per microsecond of `fn` moving `bytes` per call: best of `batches` batches of
// `reps` calls.
template <class Fn>
double best_bw(std::size_t bytes, int reps, int batches, Fn&& fn) {
  double best = 0;
  for (int b = 0; b < batches; ++b) {
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) fn();
    const double us = us_since(t0);
    if (us > 0) best = std::max(best, double(bytes) * reps / us);
  }
  return best;
}

long futex(std::atomic<int>* addr, int op, int val) {
  return ::syscall(SYS_futex, reinterpret_cast<int*>(addr), op, val, nullptr, nullptr, 0);
}

// Half a round trip of a flag between two threads spinning on their cores (us): the
// fastest of batches of 20 round trips within 3 ms; 0 when no batch completed (a busy
// host where the two threads never ran at once).
double handoff_us() {
  constexpr int kBatch = 20, kBudgetUs = 3000;
  std::atomic<int> flag{0};
  std::atomic<bool> stop{false};
  std::thread peer([&] {
    for (int v = 1; !stop.load(std::memory_order_relaxed);) {
      if (flag.load(std::memory_order_acquire) == v) {
        flag.store(v + 1, std::memory_order_release);
        v += 2;
      }
    }
  });
  const auto t0 = Clock::now();
  double best = 0;
  for (int v = 1; us_since(t0) < kBudgetUs;) {
    const auto b0 = Clock::now();
    int i = 0;
    for (; i < kBatch; ++i, v += 2) {
      flag.store(v, std::memory_order_release);
      while (flag.load(std::memory_order_acquire) != v + 1 && us_since(t0) < kBudgetUs) {
      }
      if (flag.load(std::memory_order_acquire) != v + 1) break;
    }
    if (i < kBatch) break;  // out of time mid-batch: the peer may still owe a reply
    const double us = us_since(b0) / kBatch / 2;
    if (best == 0 || us < best) best = us;
  }
  stop.store(true);
  peer.join();
  return best;
}

// Half a round trip between two threads that sleep in futex waits (us): the median of
// 20 round trips (a busy host delays some by a scheduler tick).
double wake_us() {
  constexpr int kRounds = 20;
  std::atomic<int> word{0};
  std::thread peer([&] {
    for (int i = 0; i < kRounds; ++i) {
      while (word.load() != 2 * i + 1) futex(&word, FUTEX_WAIT_PRIVATE, 2 * i);
      word.store(2 * i + 2);
      futex(&word, FUTEX_WAKE_PRIVATE, 1);
    }
  });
  std::vector<double> trips;
  for (int i = 0; i < kRounds; ++i) {
    const auto t0 = Clock::now();
    word.store(2 * i + 1);
    futex(&word, FUTEX_WAKE_PRIVATE, 1);
    while (word.load() != 2 * i + 2) futex(&word, FUTEX_WAIT_PRIVATE, 2 * i + 1);
    trips.push_back(us_since(t0));
  }
  peer.join();
  std::nth_element(trips.begin(), trips.begin() + kRounds / 2, trips.end());
  return trips[kRounds / 2] / 2;
}

// Half a round trip of a flag between two threads that share one processor and poll with
// sched_yield(), as ranks of a host with more ranks than processors wait (us): each half
// is a switch to the waiting thread. The median of 20 round trips within 3 ms; 0 when
// the threads cannot be bound to one processor or the trips did not complete in time.
double switch_us() {
  constexpr int kRounds = 20;
  constexpr double kBudgetUs = 3000;
  cpu_set_t before, one;
  const int cpu = ::sched_getcpu();
  if (cpu < 0 || ::pthread_getaffinity_np(::pthread_self(), sizeof before, &before) != 0)
    return 0;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (::pthread_setaffinity_np(::pthread_self(), sizeof one, &one) != 0) return 0;
  std::atomic<int> flag{0};
  std::atomic<bool> stop{false};
  std::thread peer([&] {
    (void)::pthread_setaffinity_np(::pthread_self(), sizeof one, &one);
    for (int v = 1; v < 2 * kRounds; v += 2) {
      while (flag.load(std::memory_order_acquire) != v) {
        if (stop.load(std::memory_order_relaxed)) return;
        ::sched_yield();
      }
      flag.store(v + 1, std::memory_order_release);
    }
  });
  const auto t0 = Clock::now();
  std::vector<double> trips;
  for (int v = 1; v < 2 * kRounds; v += 2) {
    const auto r0 = Clock::now();
    flag.store(v, std::memory_order_release);
    while (flag.load(std::memory_order_acquire) != v + 1 && us_since(t0) < kBudgetUs)
      ::sched_yield();
    if (flag.load(std::memory_order_acquire) != v + 1) break;
    trips.push_back(us_since(r0));
  }
  stop.store(true);
  peer.join();
  (void)::pthread_setaffinity_np(::pthread_self(), sizeof before, &before);
  if (trips.size() < kRounds) return 0;
  std::nth_element(trips.begin(), trips.begin() + kRounds / 2, trips.end());
  return trips[kRounds / 2] / 2;
}

// Bytes per microsecond of a one-way staged transfer between two threads: the writer
// copies `total` bytes of `src` chunk by chunk into `slots` rotating slots of `buf`
// (`half` bytes each), the reader copies each chunk out to `dst` once it is complete
// while the writer fills the next slot (the writer reuses a slot once the reader is done
// with it). Two slots are the window algorithms' pattern (a window's halves, reused after
// a barrier), four the shm rings' (a ring in quarters, transport/shm/engine_io.cc).
// Best of the passes that complete within 5 ms (the first warms up); 0 when none did (the
// two threads never ran at once). On some hosts this runs several times slower than the
// two copies apart (docs/ALGORITHMS.md, "The cost model").
double staged_bw(const char* src, char* buf, char* dst, std::size_t half, int slots,
                 std::size_t total) {
  const double budget_us = 5000 * std::max(1.0, double(total) / (2 << 20));
  constexpr int kPasses = 4;
  const long chunks = static_cast<long>(total / half);
  alignas(64) std::atomic<long> written{0};
  alignas(64) std::atomic<long> done{0};
  alignas(64) std::atomic<bool> stop{false};
  std::thread reader([&] {
    for (long step = 0; step < kPasses * chunks; ++step) {
      while (written.load(std::memory_order_acquire) <= step) {
        if (stop.load(std::memory_order_relaxed)) return;
        util::cpu_pause();
      }
      std::memcpy(dst + (step % chunks) * half, buf + (step % slots) * half, half);
      done.store(step + 1, std::memory_order_release);
    }
  });
  const auto t0 = Clock::now();
  // Until `done` reaches `target`; false once the budget is spent.
  auto await_done = [&](long target) {
    while (done.load(std::memory_order_acquire) < target) {
      if (us_since(t0) > budget_us) return false;
      util::cpu_pause();
    }
    return true;
  };
  double best = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    const auto p0 = Clock::now();
    bool in_time = true;
    for (long c = 0; c < chunks && in_time; ++c) {
      const long step = pass * chunks + c;
      in_time = await_done(step - slots + 1);  // the reader is done with chunk step - slots
      if (in_time) {
        std::memcpy(buf + (step % slots) * half, src + c * half, half);
        written.store(step + 1, std::memory_order_release);
      }
    }
    if (!in_time || !await_done((pass + 1) * chunks)) break;
    if (pass > 0) best = std::max(best, double(total) / us_since(p0));
  }
  stop.store(true);
  reader.join();
  return best;
}

// Bytes per microsecond per thread of a staged exchange between two threads, the pattern
// of the window all_gather and all_to_all at two ranks: each copies `total` bytes of its
// part of `src` chunk by chunk into two alternating halves of its own part of `window`
// (`half` bytes each), both meet (a barrier per chunk), and each copies the other's chunk
// out to its part of `dst`. `src` and `dst` hold 2 x `total` bytes, `window` 4 x `half`.
// Best of the passes that complete within 5 ms (the first warms up); 0 when none did.
double exchange_bw(const char* src, char* window, char* dst, std::size_t half,
                   std::size_t total) {
  constexpr double kBudgetUs = 5000;
  constexpr int kPasses = 4;
  const long chunks = static_cast<long>(total / half);
  struct alignas(64) Arrived {
    std::atomic<long> steps{0};
  };
  Arrived arrived[2];
  alignas(64) std::atomic<bool> stop{false};
  const auto t0 = Clock::now();
  // Thread `me`'s part of pass `pass`; false once stopped (the main thread: out of time).
  auto run = [&](int me, int pass) {
    for (long c = 0; c < chunks; ++c) {
      const long step = pass * chunks + c;
      std::memcpy(window + (2 * me + step % 2) * half, src + me * total + c * half, half);
      arrived[me].steps.store(step + 1, std::memory_order_release);
      while (arrived[1 - me].steps.load(std::memory_order_acquire) <= step) {
        if (stop.load(std::memory_order_relaxed)) return false;
        if (me == 0 && us_since(t0) > kBudgetUs) {
          stop.store(true);
          return false;
        }
        util::cpu_pause();
      }
      std::memcpy(dst + me * total + c * half, window + (2 * (1 - me) + step % 2) * half, half);
    }
    return true;
  };
  std::thread peer([&] {
    for (int pass = 0; pass < kPasses && run(1, pass);) ++pass;
  });
  double best = 0;
  for (int pass = 0; pass < kPasses; ++pass) {
    const auto p0 = Clock::now();
    if (!run(0, pass)) break;
    if (pass > 0) best = std::max(best, double(total) / us_since(p0));
  }
  peer.join();
  return best;
}

// Bytes per microsecond of `read` (a process_vm_readv of `bytes` of `src`) right after
// another thread wrote `src`: the best of 4 reads after a warm-up, each counted only when
// the writer ran on another processor than the reader; 0 when none did within 5 ms per
// MiB (at least 5 ms).
template <class Read>
double written_read_bw(char* src, std::size_t bytes, Read&& read) {
  const double budget_us = 5000 * std::max(1.0, double(bytes) / (1 << 20));
  constexpr int kReads = 5;
  alignas(64) std::atomic<int> go{0};
  alignas(64) std::atomic<int> written{0};
  alignas(64) std::atomic<int> writer_cpu{-1};
  alignas(64) std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int i = 1; i <= kReads; ++i) {
      while (go.load(std::memory_order_acquire) < i) {
        if (stop.load(std::memory_order_relaxed)) return;
        util::cpu_pause();
      }
      std::memset(src, i, bytes);
      writer_cpu.store(::sched_getcpu(), std::memory_order_relaxed);
      written.store(i, std::memory_order_release);
    }
  });
  const auto t0 = Clock::now();
  double best = 0;
  for (int i = 1; i <= kReads; ++i) {
    go.store(i, std::memory_order_release);
    while (written.load(std::memory_order_acquire) < i && us_since(t0) < budget_us)
      util::cpu_pause();
    if (written.load(std::memory_order_acquire) < i) break;
    const bool apart = writer_cpu.load(std::memory_order_relaxed) != ::sched_getcpu();
    const auto r0 = Clock::now();
    if (!read()) break;
    if (const double us = us_since(r0); i > 1 && apart && us > 0)
      best = std::max(best, double(bytes) / us);
  }
  stop.store(true);
  writer.join();
  return best;
}

std::size_t l2_bytes() {
  const long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? static_cast<std::size_t>(l2) : std::size_t(1) << 20;
}

// The last-level cache: the L3 where the system reports one, else the L2.
std::size_t llc_bytes() {
  const long l3 = ::sysconf(_SC_LEVEL3_CACHE_SIZE);
  return std::max(l3 > 0 ? static_cast<std::size_t>(l3) : 0, l2_bytes());
}

}  // namespace

algo::CostParams probe_host(std::string* steps, std::vector<int>* runnable, int* missed) {
  auto last = Clock::now();
  if (runnable != nullptr) runnable->assign(1, runnable_tasks_now());
  // Sampled between the steps, where the probe runs on this thread alone.
  auto step = [&](const char* name) {
    if (runnable != nullptr) runnable->push_back(runnable_tasks_now());
    if (steps != nullptr) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%s %.1f ms", steps->empty() ? "" : ", ", name,
                    us_since(last) / 1000);
      *steps += buf;
    }
    last = Clock::now();
  };
  algo::CostParams p;
  p.cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  p.cache_bytes = double(l2_bytes());
  p.llc_bytes = double(llc_bytes());
  // Twice the L2 (2-4 MiB): the size of the figures for buffers beyond the cache that
  // another processor's writes or a staged stream pass through.
  const std::size_t beyond =
      std::clamp<std::size_t>(l2_bytes() * 2 / 4096 * 4096, 2 << 20, 4 << 20);
  // Three buffers, a and c of `beyond` bytes and b of 2 MiB (the memcpy and sum figures
  // use 2 MiB of each: beyond the per-core L2 of current x86 CPUs), on transparent huge
  // pages where the kernel offers them: faulting in 1500 small pages one by one costs
  // more than the whole probe on some VMs (about 16 us each on the test machine).
  constexpr std::size_t kSmall = 64 << 10, kLarge = 2 << 20, kHuge = 2 << 20;
  const std::size_t used = 2 * beyond + kLarge, mapped = used + kHuge;
  void* region = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                        -1, 0);
  if (region == MAP_FAILED) return p;  // the defaults
  struct Unmap {
    void* r;
    std::size_t bytes;
    ~Unmap() { ::munmap(r, bytes); }
  } unmap{region, mapped};
  auto* base = reinterpret_cast<char*>(
      (reinterpret_cast<std::uintptr_t>(region) + kHuge - 1) / kHuge * kHuge);
  ::madvise(base, used, MADV_HUGEPAGE);  // a hint: fine if refused
  std::memset(base, 0, used);
  struct Span {
    float* ptr;
    float* data() const { return ptr; }
  };
  const Span a{reinterpret_cast<float*>(base)}, b{a.ptr + beyond / 4}, c{b.ptr + kLarge / 4};
  step("buffers");
  p.copy_bw_cache = best_bw(kSmall, 64, 3, [&] { std::memcpy(c.data(), a.data(), kSmall); });
  p.copy_bw_mem = best_bw(kLarge, 1, 3, [&] { std::memcpy(c.data(), a.data(), kLarge); });
  auto sum = [&](std::size_t bytes) {
    kernels::reduce(c.data(), a.data(), b.data(), bytes / 4, DataType::kFloat32, ReduceOp::kSum);
  };
  p.reduce_bw_cache = best_bw(kSmall, 64, 3, [&] { sum(kSmall); });
  p.reduce_bw_mem = best_bw(kLarge, 1, 3, [&] { sum(kLarge); });
  step("copy+reduce");
  // A two-thread step that runs out of its budget (the helper thread got no processor in
  // time) leaves its figure at the default and counts as missed.
  int missed_steps = 0;
  auto keep = [&](double figure, double& into) {
    if (figure > 0)
      into = figure;
    else
      ++missed_steps;
  };
  // process_vm_readv of this process itself: the same page walk as of a peer. The source
  // is of small pages, as users' buffers usually are (the kernel pins and walks each 4 KiB
  // page): a huge-page source would flatter single copy. Each read follows a second
  // thread's write of the source on another processor (written_read_bw): a peer's buffer
  // is where the peer's own writes left it, as the staged figures below move lines the
  // other thread just wrote. Two sizes, as for memcpy: twice the L2 (2-4 MiB), most of it
  // evicted from the writer's L2 to a cache both share or to memory, for buffers beyond
  // the cache (P), and half the L2 for those within it (P_c). A source flushed from every
  // cache level before each read (x86 clflush; the figure until probe revision 3) priced
  // single copy against copies and staged streams measured on warm 2 MiB buffers: 7.0-8.7
  // GB/s against 11.1-12.5 from 2 to 16 MiB just written on Intel family 6 model 167, and
  // single copy went unchosen from 4 MiB where it led by 10-46% (docs/PERFORMANCE.md,
  // session 31). A source the reader had written itself would skip the transfer (it read
  // 1.1-1.5x faster than one in memory on AMD EPYC family 26, session 23; about 2x faster
  // than one another processor wrote on Intel family 6 model 167, session 30).
  void* src = ::mmap(nullptr, beyond, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (src != MAP_FAILED) {
    ::madvise(src, beyond, MADV_NOHUGEPAGE);
    std::memset(src, 1, beyond);
    const pid_t self = ::getpid();
    auto read_self = [&](std::size_t bytes) {
      iovec local{c.data(), bytes}, remote{src, bytes};
      return ::process_vm_readv(self, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(bytes);
    };
    if (read_self(4096)) {
      auto written = [&](std::size_t bytes) {
        return p.cpus >= 2 ? written_read_bw(static_cast<char*>(src), bytes,
                                             [&] { return read_self(bytes); })
                           : 0.0;
      };
      // Without a second processor, or when the writer never ran apart in time (then the
      // entry is provisional): the source as this thread left it.
      if (const double bw = written(beyond); bw > 0) {
        p.peer_read_bw = bw;
      } else {
        if (p.cpus >= 2) ++missed_steps;
        p.peer_read_bw = best_bw(beyond, 1, 3, [&] { read_self(beyond); });
      }
      const double small_bw = best_bw(4096, 64, 3, [&] { read_self(4096); });
      p.peer_read_us = std::max(0.05, 4096 / small_bw - 4096 / p.peer_read_bw);
      // Half the cache: the reader's destination shares it.
      const std::size_t cached =
          std::clamp<std::size_t>(std::size_t(p.cache_bytes / 2) / 4096 * 4096, 4096, beyond);
      p.peer_read_bw_cache = p.peer_read_bw;  // the figure without a second processor
      if (p.cpus >= 2) keep(written(cached), p.peer_read_bw_cache);
      p.peer_read_bw_cache = std::max(p.peer_read_bw_cache, p.peer_read_bw);
    }
    ::munmap(src, beyond);
  }
  step("peer read");
  if (p.cpus >= 2) keep(handoff_us(), p.sync_us);
  step("hand-off");
  // The window algorithms' chunks: half of a window as the shared-memory transport sizes it
  // (at most 1 MiB: both halves go in the 2 MiB buffer `b`; four quarters for the exchange).
  // The rings': a quarter of a ring of the default size (CHORUS_BUFFSIZE), all four in `b`.
  const std::size_t half = std::min(shm::window_bytes_for_host() / 2, kLarge / 2);
  const std::size_t quarter = std::min(half, kLarge / 4);
  const std::size_t ring_quarter = std::clamp<std::size_t>(shm::ShmOptions{}.ring_bytes / 4,
                                                           4096, kLarge / 4);
  if (p.cpus >= 2) {
    keep(staged_bw(reinterpret_cast<const char*>(a.data()), reinterpret_cast<char*>(b.data()),
                   reinterpret_cast<char*>(c.data()), half, 2, beyond / half * half),
         p.stage_bw);
    keep(staged_bw(reinterpret_cast<const char*>(a.data()), reinterpret_cast<char*>(b.data()),
                   reinterpret_cast<char*>(c.data()), ring_quarter, 4,
                   kLarge / ring_quarter * ring_quarter),
         p.ring_bw);
    keep(exchange_bw(reinterpret_cast<const char*>(a.data()), reinterpret_cast<char*>(b.data()),
                     reinterpret_cast<char*>(c.data()), quarter, kLarge / 2 / quarter * quarter),
         p.exchange_bw);
  }
  step("staged");
  p.wake_us = wake_us();
  if (const double sw = switch_us(); sw > 0) p.switch_us = sw;
  step("wake-up");
  const TcpFigures tcp = probe_tcp();
  if (tcp.handoff_us > 0 && tcp.stream_bw > 0) {
    p.net_sync_us = tcp.handoff_us;
    p.net_bw = tcp.stream_bw;
    p.net_measured = true;
  }
  step("tcp");
  p.measured = true;
  if (missed != nullptr) *missed = missed_steps;
  return p;
}

bool quiet_probe(const std::vector<int>& runnable, int cpus, int missed) {
  if (missed > 0) return false;
  const int limit = std::max(1, cpus - 1);
  return std::count_if(runnable.begin(), runnable.end(), [&](int r) { return r > limit; }) <= 1;
}

algo::CostParams best_of(const algo::CostParams& before, const algo::CostParams& now) {
  algo::CostParams p = now;
  for (auto bw : {&algo::CostParams::copy_bw_cache, &algo::CostParams::copy_bw_mem,
                  &algo::CostParams::reduce_bw_cache, &algo::CostParams::reduce_bw_mem,
                  &algo::CostParams::peer_read_bw, &algo::CostParams::peer_read_bw_cache,
                  &algo::CostParams::stage_bw,
                  &algo::CostParams::ring_bw,
                  &algo::CostParams::exchange_bw})
    p.*bw = std::max(before.*bw, now.*bw);
  for (auto us : {&algo::CostParams::sync_us, &algo::CostParams::wake_us,
                  &algo::CostParams::switch_us, &algo::CostParams::peer_read_us})
    p.*us = std::min(before.*us, now.*us);
  if (before.net_measured && now.net_measured) {
    p.net_bw = std::max(before.net_bw, now.net_bw);
    p.net_sync_us = std::min(before.net_sync_us, now.net_sync_us);
  } else if (before.net_measured) {
    p.net_bw = before.net_bw;
    p.net_sync_us = before.net_sync_us;
    p.net_measured = true;
  }
  return p;
}

std::string host_key() {
  // The model name alone does not tell processor generations apart under a hypervisor
  // ("AMD EPYC" on family 25 and 26 alike): family and model number go with it.
  std::string model = "unknown", family, number;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::size_t at = line.find_first_not_of(' ', colon + 1);
    const std::string value = at == std::string::npos ? "" : line.substr(at);
    const std::string name = line.substr(0, line.find_first_of("\t:"));
    if (name == "model name") model = value;
    else if (name == "cpu family") family = value;
    else if (name == "model") number = value;
    if (model != "unknown" && !family.empty() && !number.empty()) break;
  }
  if (!family.empty() || !number.empty()) model += " (family " + family + " model " + number + ")";
  utsname u{};
  const std::string kernel = ::uname(&u) == 0 ? u.release : "unknown";
  return model + "|" + std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)) + "|" + kernel;
}

}  // namespace chorus::core
