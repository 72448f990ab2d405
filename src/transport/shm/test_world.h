// Test helper: runs N real rank processes (fork), each bounded in time, with a
// directory-based Exchange; children report failures on stderr and by exit code.
#pragma once
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "transport/shm/segment.h"
#include "transport/shm/shm_transport.h"

namespace chorus::shm::testing {

using transport::Tag;
using TransportPtr = std::unique_ptr<transport::Transport>;

inline Deadline in_ms(int ms) { return Deadline::after(std::chrono::milliseconds(ms)); }

// Fails the child process: message on stderr, exit code 1.
#define SHM_CHECK(cond, ...)                                                   \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::fprintf(stderr, "[rank child %d] %s:%d: check failed: %s: ", getpid(), __FILE__, \
                   __LINE__, #cond);                                           \
      std::fprintf(stderr, __VA_ARGS__);                                       \
      std::fprintf(stderr, "\n");                                              \
      _exit(1);                                                                \
    }                                                                          \
  } while (0)

// All-gather through files `<dir>/<key>.<rank>` (written then renamed, so readers never
// see half a file).
inline Exchange dir_exchange(const std::string& dir, int rank, int n) {
  return [=](const std::string& key, const std::string& mine) -> Result<std::vector<std::string>> {
    const std::string base = dir + "/" + key + ".";
    {
      std::ofstream(base + "tmp" + std::to_string(rank)) << mine;
    }
    std::filesystem::rename(base + "tmp" + std::to_string(rank), base + std::to_string(rank));
    std::vector<std::string> out(n);
    Deadline d = in_ms(10000);
    for (int r = 0; r < n; ++r) {
      while (!std::filesystem::exists(base + std::to_string(r))) {
        if (d.expired()) return timeout_error("test exchange timed out on " + key);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      std::ifstream in(base + std::to_string(r));
      std::stringstream ss;
      ss << in.rdbuf();
      out[r] = ss.str();
    }
    return out;
  };
}

inline std::uint64_t fresh_token() {
  static int counter = 0;
  auto t = std::chrono::steady_clock::now().time_since_epoch().count();
  return (static_cast<std::uint64_t>(getpid()) << 40) ^ static_cast<std::uint64_t>(t) ^
         (static_cast<std::uint64_t>(++counter) << 56);
}

struct World {
  int n;
  std::uint64_t token = fresh_token();
  std::string dir;
  std::size_t ring_bytes = 64 << 10;
  std::size_t window_bytes = 1 << 20;  // shared window per rank (0 = none)
  int single_copy_off = -1;            // this rank sets ShmOptions::single_copy = false
  explicit World(int ranks) : n(ranks) {
    char tmpl[] = "/tmp/chorus_shm_test_XXXXXX";
    dir = ::mkdtemp(tmpl);
  }
  ~World() { std::filesystem::remove_all(dir); }
  // In a child: this rank's transport (exits the child on failure).
  TransportPtr connect(int rank) const {
    ShmOptions o;
    o.rank = rank;
    o.size = n;
    o.job_token = token;
    o.ring_bytes = ring_bytes;
    o.window_bytes = window_bytes;
    o.single_copy = rank != single_copy_off;
    auto t = create_shm_transport(o, dir_exchange(dir, rank, n));
    SHM_CHECK(t.has_value(), "setup: %s", t.status().to_string().c_str());
    return std::move(*t);
  }
  // Forks n ranks running fn(rank) (exit code 0 = pass); kills them after timeout_ms.
  // Returns each rank's exit code (or 128 + signal).
  std::vector<int> run(const std::function<void(int)>& fn, int timeout_ms = 30000) const {
    std::vector<pid_t> pids;
    for (int r = 0; r < n; ++r) {
      pid_t pid = ::fork();
      if (pid == 0) {
        ::alarm(static_cast<unsigned>(timeout_ms / 1000 + 2));
        fn(r);
        _exit(0);
      }
      pids.push_back(pid);
    }
    std::vector<int> codes(n, -1);
    for (int r = 0; r < n; ++r) {
      int st = 0;
      ::waitpid(pids[r], &st, 0);
      codes[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    }
    return codes;
  }
};

inline std::vector<std::uint8_t> pattern(std::size_t bytes, std::uint32_t seed) {
  std::vector<std::uint8_t> v(bytes);
  std::uint32_t x = seed * 2654435761u + 1;
  for (std::size_t i = 0; i < bytes; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<std::uint8_t>(x >> 24);
  }
  return v;
}

inline bool contains(const Status& st, const std::string& s) {
  return st.message().find(s) != std::string::npos;
}

}  // namespace chorus::shm::testing
