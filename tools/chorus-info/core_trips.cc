#include "core_trips.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <thread>

namespace chorus_info {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kBatches = 50, kTripsPerBatch = 200, kRounds = 50;
constexpr std::size_t kHandoverBytes = 64 << 10;
constexpr auto kGiveUp = std::chrono::seconds(1);

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return ::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set) == 0;
}

// Spins until `word` holds `want`; false after kGiveUp without it.
bool await(const std::atomic<long>& word, long want) {
  const auto start = Clock::now();
  for (unsigned spins = 0; word.load(std::memory_order_acquire) != want; ++spins)
    if ((spins & 1023) == 0 && Clock::now() - start > kGiveUp) return false;
  return true;
}

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

std::vector<CoreTrip> pairs_of(const std::vector<int>& cpus, std::size_t full_up_to) {
  std::vector<CoreTrip> out;
  for (std::size_t i = 0; i < cpus.size(); ++i)
    for (std::size_t j = i + 1; j < cpus.size(); ++j)
      if (i == 0 || cpus.size() <= full_up_to) out.push_back({cpus[i], cpus[j]});
  return out;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The flag counts up: odd values are the first thread's, even ones the peer's answers.
// The round trips come first, then the hand-overs (the value jumps to kHandover).
CoreTrip measure(int a, int b) {
  constexpr long kHandover = 1L << 40;
  alignas(64) std::atomic<long> flag{0};
  std::atomic<bool> failed{false};
  std::vector<unsigned char> buffer(kHandoverBytes, 0);
  std::thread peer([&] {
    if (!pin(b)) return failed.store(true);
    for (long v = 1; v < 2L * kBatches * kTripsPerBatch; v += 2) {
      if (!await(flag, v)) return failed.store(true);
      flag.store(v + 1, std::memory_order_release);
    }
    for (long r = 0; r < kRounds; ++r) {
      if (!await(flag, kHandover + 2 * r + 1)) return failed.store(true);
      unsigned long sum = 0;
      for (std::size_t i = 0; i < buffer.size(); i += 64) sum += buffer[i];
      volatile unsigned long sink = sum;
      (void)sink;
      flag.store(kHandover + 2 * r + 2, std::memory_order_release);
    }
  });
  CoreTrip out{a, b};
  std::vector<double> trips, handovers;
  bool ok = false;
  // The caller's thread keeps its affinity: this side runs on a thread of its own too.
  std::thread self([&] {
    ok = pin(a);
    for (long batch = 0, v = 1; ok && batch < kBatches; ++batch) {
      const auto t0 = Clock::now();
      for (int i = 0; ok && i < kTripsPerBatch; ++i, v += 2) {
        flag.store(v, std::memory_order_release);
        ok = await(flag, v + 1) && !failed.load();
      }
      trips.push_back(std::chrono::duration<double, std::nano>(Clock::now() - t0).count() /
                      kTripsPerBatch);
    }
    for (long r = 0; ok && r < kRounds; ++r) {
      const auto t0 = Clock::now();
      std::memset(buffer.data(), static_cast<int>(r), buffer.size());
      flag.store(kHandover + 2 * r + 1, std::memory_order_release);
      ok = await(flag, kHandover + 2 * r + 2) && !failed.load();
      handovers.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    }
  });
  self.join();
  if (!ok) flag.store(-1);  // the peer gives up on its own within kGiveUp
  peer.join();
  if (ok && !failed.load()) {
    out.round_trip_ns = median(trips);
    out.handover_us = median(handovers);
  }
  return out;
}

std::string format_trips_text(const std::vector<CoreTrip>& trips) {
  std::string out = "processors  round trip (ns)  64 KiB hand-over (us)\n";
  char line[96];
  for (const CoreTrip& t : trips) {
    if (t.round_trip_ns > 0)
      std::snprintf(line, sizeof(line), "%4d %4d  %15.0f  %21.1f\n", t.a, t.b, t.round_trip_ns,
                    t.handover_us);
    else
      std::snprintf(line, sizeof(line), "%4d %4d  %15s  %21s\n", t.a, t.b, "-", "-");
    out += line;
  }
  return out;
}

std::string format_trips_json(const std::vector<int>& cpus, const std::vector<CoreTrip>& trips) {
  nlohmann::json pairs = nlohmann::json::array();
  for (const CoreTrip& t : trips) {
    nlohmann::json p = {{"a", t.a}, {"b", t.b}, {"round_trip_ns", nullptr},
                        {"handover_us", nullptr}};
    if (t.round_trip_ns > 0) p["round_trip_ns"] = t.round_trip_ns, p["handover_us"] = t.handover_us;
    pairs.push_back(p);
  }
  return nlohmann::json{{"cpus", cpus}, {"pairs", pairs}}.dump(1) + "\n";
}

}  // namespace chorus_info
