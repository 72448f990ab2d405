// The host probe (host_probe.h): each figure is the best of a few short timed batches,
// so a busy machine disturbs it less; docs/ALGORITHMS.md lists what it measures.
#include "core/host_probe.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "kernels/reduce.h"

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

// Half a round trip of a flag between two threads spinning on their cores (us), or 0
// when it could not be measured in time.
double handoff_us() {
  constexpr int kRounds = 2000;
  std::atomic<int> flag{0};
  std::atomic<bool> stop{false};
  std::thread peer([&] {
    for (int i = 0; i < kRounds && !stop.load(std::memory_order_relaxed); ++i) {
      while (flag.load(std::memory_order_acquire) != 2 * i + 1)
        if (stop.load(std::memory_order_relaxed)) return;
      flag.store(2 * i + 2, std::memory_order_release);
    }
  });
  const auto t0 = Clock::now();
  int done = 0;
  for (; done < kRounds; ++done) {
    flag.store(2 * done + 1, std::memory_order_release);
    while (flag.load(std::memory_order_acquire) != 2 * done + 2) {
      if (us_since(t0) > 20000) break;  // the peer is not running: a busy host
    }
    if (flag.load(std::memory_order_acquire) != 2 * done + 2) break;
  }
  const double us = us_since(t0);
  stop.store(true);
  peer.join();
  return done == kRounds ? us / kRounds / 2 : 0;
}

// Half a round trip between two threads that sleep in futex waits (us).
double wake_us() {
  constexpr int kRounds = 100;
  std::atomic<int> word{0};
  std::thread peer([&] {
    for (int i = 0; i < kRounds; ++i) {
      while (word.load() != 2 * i + 1) futex(&word, FUTEX_WAIT_PRIVATE, 2 * i);
      word.store(2 * i + 2);
      futex(&word, FUTEX_WAKE_PRIVATE, 1);
    }
  });
  const auto t0 = Clock::now();
  for (int i = 0; i < kRounds; ++i) {
    word.store(2 * i + 1);
    futex(&word, FUTEX_WAKE_PRIVATE, 1);
    while (word.load() != 2 * i + 2) futex(&word, FUTEX_WAIT_PRIVATE, 2 * i + 1);
  }
  const double us = us_since(t0);
  peer.join();
  return us / kRounds / 2;
}

std::size_t l2_bytes() {
  const long l2 = ::sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? static_cast<std::size_t>(l2) : std::size_t(1) << 20;
}

}  // namespace

algo::CostParams probe_host() {
  algo::CostParams p;
  p.cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  p.cache_bytes = double(l2_bytes());
  constexpr std::size_t kSmall = 64 << 10, kLarge = 8 << 20;
  std::vector<float> a(kLarge / 4, 1.0f), b(kLarge / 4, 2.0f), c(kLarge / 4, 0.0f);
  p.copy_bw_cache = best_bw(kSmall, 64, 3, [&] { std::memcpy(c.data(), a.data(), kSmall); });
  p.copy_bw_mem = best_bw(kLarge, 1, 3, [&] { std::memcpy(c.data(), a.data(), kLarge); });
  auto sum = [&](std::size_t bytes) {
    kernels::reduce(c.data(), a.data(), b.data(), bytes / 4, DataType::kFloat32, ReduceOp::kSum);
  };
  p.reduce_bw_cache = best_bw(kSmall, 64, 3, [&] { sum(kSmall); });
  p.reduce_bw_mem = best_bw(kLarge, 1, 3, [&] { sum(kLarge); });
  // process_vm_readv of this process itself: the same page walk as of a peer.
  const pid_t self = ::getpid();
  auto read_self = [&](std::size_t bytes) {
    iovec local{c.data(), bytes}, remote{a.data(), bytes};
    return ::process_vm_readv(self, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(bytes);
  };
  if (read_self(4096)) {
    p.peer_read_bw = best_bw(kLarge, 1, 3, [&] { read_self(kLarge); });
    const double small_bw = best_bw(4096, 64, 3, [&] { read_self(4096); });
    p.peer_read_us = std::max(0.05, 4096 / small_bw - 4096 / p.peer_read_bw);
  }
  if (p.cpus >= 2)
    if (const double h = handoff_us(); h > 0) p.sync_us = h;
  p.wake_us = wake_us();
  p.measured = true;
  return p;
}

std::string host_key() {
  std::string model = "unknown";
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon != std::string::npos) model = line.substr(line.find_first_not_of(' ', colon + 1));
    break;
  }
  utsname u{};
  const std::string kernel = ::uname(&u) == 0 ? u.release : "unknown";
  return model + "|" + std::to_string(::sysconf(_SC_NPROCESSORS_ONLN)) + "|" + kernel;
}

}  // namespace chorus::core
