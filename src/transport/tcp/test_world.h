// Test helper: a world of N TCP transports inside one process, one thread per rank,
// sharing an in-memory AddressExchange; plus byte-pattern helpers.
#pragma once
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "transport/tcp/tcp_transport.h"

namespace chorus::tcp::testing {

using transport::Tag;
using transport::Transport;
using TransportPtr = std::unique_ptr<Transport>;

inline Deadline in_ms(int ms) { return Deadline::after(std::chrono::milliseconds(ms)); }

// Everyone publishes its address and waits (bounded) for all others.
class SharedExchange {
 public:
  explicit SharedExchange(int n) : addrs_(n) {}
  AddressExchange for_rank(int rank) {
    return [this, rank](const std::string& mine) -> Result<std::vector<std::string>> {
      std::unique_lock<std::mutex> lk(mu_);
      addrs_[rank] = mine;
      ++count_;
      cv_.notify_all();
      if (!cv_.wait_for(lk, std::chrono::seconds(5), [&] { return count_ == addrs_.size(); }))
        return timeout_error("test exchange timed out");
      return addrs_;
    };
  }
  // Addresses published so far (for tests that poke at listeners).
  std::vector<std::string> snapshot() {
    std::lock_guard<std::mutex> lk(mu_);
    return addrs_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> addrs_;
  std::size_t count_ = 0;
};

// Runs fn(rank) on n threads and joins them.
inline void run_ranks(int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) threads.emplace_back(fn, r);
  for (auto& t : threads) t.join();
}

inline TcpOptions world_options(int rank, int n) {
  TcpOptions o;
  o.rank = rank;
  o.size = n;
  o.job_token = 0xC0FFEE1234ull;
  o.connect_deadline = in_ms(5000);
  return o;
}

// Creates n connected transports; `tweak` may adjust each rank's options.
inline std::vector<TransportPtr> make_world(
    int n, const std::function<void(TcpOptions&)>& tweak = [](TcpOptions&) {}) {
  SharedExchange ex(n);
  std::vector<TransportPtr> world(n);
  std::vector<Status> errors(n);
  run_ranks(n, [&](int r) {
    TcpOptions o = world_options(r, n);
    tweak(o);
    auto t = create_tcp_transport(o, ex.for_rank(r));
    if (t.has_value()) world[r] = std::move(*t);
    else errors[r] = t.status();
  });
  for (int r = 0; r < n; ++r) EXPECT_TRUE(errors[r].is_ok()) << "rank " << r << ": " << errors[r].to_string();
  return world;
}

inline std::vector<std::uint8_t> pattern(std::size_t bytes, std::uint32_t seed) {
  std::vector<std::uint8_t> v(bytes);
  std::uint32_t x = seed * 2654435761u + 1;
  for (std::size_t i = 0; i < bytes; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<std::uint8_t>(x >> 24);
  }
  return v;
}

}  // namespace chorus::tcp::testing
