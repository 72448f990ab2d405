// The per-operation cost of observation (issue 13), without the noise of a multi-rank
// run: Timeline::span (format one span into the buffer, written per 1 MiB) and
// OpStats::add (histogram and sums under a mutex), each per call.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "diag/op_stats.h"
#include "diag/timeline.h"

namespace {

chorus::OpEvent event(int i) {
  chorus::OpEvent e;
  e.name = "all_reduce";
  e.dtype = "float32";
  e.redop = "sum";
  e.count = 262144;
  e.bytes = 1 << 20;
  e.algo = "shm_direct";
  e.stream = i % 5;
  e.stream_name = "tp";
  e.seq = static_cast<std::uint64_t>(i);
  e.issue_ns = 1000000000LL + i * 1000;
  e.start_ns = e.issue_ns + 500;
  e.end_ns = e.start_ns + 250000;
  return e;
}

// Spans of operations with `state.range(0)` levels each (a hierarchical algorithm's: 3).
void BM_TimelineSpan(benchmark::State& state) {
  const std::string dir = "/tmp/chorus-observe-bench-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  auto& t = chorus::diag::Timeline::process();
  t.acquire(dir + "/tl.%r.json", 0, 1, {});
  t.add_comm(0, "comm0", 0, 1);
  chorus::OpLevel levels[3];
  const char* names[3] = {"host reduce_scatter", "across hosts all_reduce", "host all_gather"};
  int i = 0;
  for (auto _ : state) {
    chorus::OpEvent e = event(i++);
    e.num_levels = static_cast<int>(state.range(0));
    for (int l = 0; l < e.num_levels; ++l)
      levels[l] = chorus::OpLevel{names[l], l + 1, l == 1 ? "" : "windows",
                                  e.start_ns + l * 1000, e.start_ns + (l + 1) * 1000};
    e.levels = levels;
    t.span(e);
  }
  t.release();
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_TimelineSpan)->Arg(0)->Arg(3);

void BM_StatsAdd(benchmark::State& state) {
  chorus::diag::OpStats s(4);
  int i = 0;
  for (auto _ : state) s.add(event(i++));
  benchmark::DoNotOptimize(s.rows());
}
BENCHMARK(BM_StatsAdd);

}  // namespace

BENCHMARK_MAIN();
