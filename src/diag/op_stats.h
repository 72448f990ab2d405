// OpStats: per-operation statistics of one communicator on one rank, by (operation,
// size class): count, bytes, time (total, p50, p99, max), busbw, algorithm; their text
// encoding for the gather through the store, and the cross-rank table (CHORUS_STATS=1).
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "chorus/profiler.h"

namespace chorus::diag {

// The nccl-tests bus-bandwidth factor of operation `name` on `nranks` ranks.
double busbw_factor(const std::string& name, int nranks);
// The size class of `bytes`: the largest power of two <= bytes (0 for 0).
std::size_t size_class(std::size_t bytes);
// "4K", "1M", "8" (binary units).
std::string size_text(std::size_t bytes);

// Thread-safe (one mutex, held for a few additions per operation).
class OpStats {
 public:
  explicit OpStats(int nranks) : nranks_(nranks) {}
  // Adds one finished operation (failed ones are not counted).
  void add(const OpEvent& e);
  std::vector<OpStatsRow> rows() const;

 private:
  // Log histogram of durations: 32 buckets per power of two from 64 ns.
  static constexpr int kPerOctave = 32;
  static constexpr int kOctaves = 34;
  struct Acc {
    std::uint64_t count = 0, bytes = 0;
    std::int64_t total_ns = 0, max_ns = 0;
    const char* algo = "";
    std::vector<std::uint32_t> hist;
  };
  static int bucket(std::int64_t ns);
  static double bucket_us(int b);  // the bucket's middle
  static double quantile_us(const Acc& a, double q);

  const int nranks_;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::size_t>, Acc> acc_;
};

// One line per row: "op size_class count bytes total_us p50_us p99_us max_us algo".
std::string encode_stats(const std::vector<OpStatsRow>& rows);
std::vector<OpStatsRow> decode_stats(const std::string& text);

// The cross-rank table printed at destruction with CHORUS_STATS=1: per (op, size class),
// count and bytes (rank 0's), time over ranks (mean of the ranks' means, the largest
// p50/p99), busbw from that mean, the algorithm, and the arrival-skew estimate: the rank
// whose mean time is the smallest arrived last (the others waited for it) and the
// skew is the largest mean minus that smallest. `per_rank[r]` are rank r's rows (empty
// when it sent none).
std::string format_stats_table(const std::string& comm, int nranks,
                               const std::vector<std::vector<OpStatsRow>>& per_rank);
// A single rank's rows as a table (chorus-bench --stats, chorus-stress).
std::string format_rank_stats(const std::vector<OpStatsRow>& rows);

}  // namespace chorus::diag
