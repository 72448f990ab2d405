// Single copy vs staging between two processes on one host, side by side in one run:
//   staging: the owner copies its private buffer into a shared mapping, the reader
//            copies it out (what the shm transport's windows do: two copies);
//   process_vm_readv: the reader copies straight out of the owner's private buffer
//            (one copy, a system call per transfer; needs ptrace permission).
// Prints GB/s of the transfer (bytes / time from start to the reader holding the data),
// the median of several rounds per size. Usage: chorus_single_copy_bench [max MiB]
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Control words in a shared page: the reader's request and the owner's "staged" flag.
struct Ctl {
  std::atomic<int> round{0};   // bumped by the reader to ask for one staging transfer
  std::atomic<int> staged{0};  // set by the owner to the round it staged
  std::atomic<int> quit{0};
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t max_mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
  const std::size_t max_bytes = max_mib << 20;
  auto* ctl = static_cast<Ctl*>(
      mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  auto* stage = static_cast<char*>(
      mmap(nullptr, max_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (ctl == MAP_FAILED || stage == MAP_FAILED) return 1;
  new (ctl) Ctl();
  std::vector<char> owned(max_bytes, 3);  // the owner's private buffer (same address in both)
  std::size_t bytes_now = 0;
  auto* size_word = reinterpret_cast<std::atomic<std::size_t>*>(reinterpret_cast<char*>(ctl) + 256);
  new (size_word) std::atomic<std::size_t>(0);
  const pid_t owner = fork();
  if (owner == 0) {  // the owner: stages on request
    int seen = 0;
    while (!ctl->quit.load()) {
      const int r = ctl->round.load(std::memory_order_acquire);
      if (r == seen) {
        sched_yield();
        continue;
      }
      bytes_now = size_word->load();
      std::memcpy(stage, owned.data(), bytes_now);
      seen = r;
      ctl->staged.store(r, std::memory_order_release);
    }
    _exit(0);
  }
  std::vector<char> mine(max_bytes);
  std::memset(mine.data(), 1, max_bytes);
  std::printf("# %-10s %14s %14s %8s\n", "size", "staging GB/s", "vm_readv GB/s", "ratio");
  int round = 0;
  bool vm_ok = true;
  for (std::size_t bytes = 64 << 10; bytes <= max_bytes; bytes *= 4) {
    size_word->store(bytes);
    std::vector<double> staging, single;
    for (int rep = 0; rep < 7; ++rep) {
      auto t0 = Clock::now();
      ctl->round.store(++round, std::memory_order_release);
      while (ctl->staged.load(std::memory_order_acquire) != round) sched_yield();
      std::memcpy(mine.data(), stage, bytes);
      staging.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      t0 = Clock::now();
      iovec local{mine.data(), bytes}, remote{owned.data(), bytes};
      if (process_vm_readv(owner, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(bytes)) {
        vm_ok = false;
        break;
      }
      single.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    }
    if (!vm_ok) {
      std::printf("# process_vm_readv failed: %s\n", std::strerror(errno));
      break;
    }
    const double s = bytes / median(staging) / 1e9, v = bytes / median(single) / 1e9;
    std::printf("  %-10zu %14.2f %14.2f %7.2fx\n", bytes, s, v, v / s);
  }
  ctl->quit.store(1);
  waitpid(owner, nullptr, 0);
  return vm_ok ? 0 : 1;
}
