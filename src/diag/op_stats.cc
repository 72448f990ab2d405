// Per-operation statistics: accumulation, encoding and the tables.
#include "diag/op_stats.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "util/strings.h"

namespace chorus::diag {

double busbw_factor(const std::string& name, int nranks) {
  const double n = nranks;
  if (nranks <= 1) return 1.0;
  if (name == "all_reduce" || name == "agree") return 2.0 * (n - 1) / n;
  if (name == "all_gather" || name == "reduce_scatter" || name == "all_to_all" ||
      name == "all_to_all_v" || name == "gather" || name == "scatter")
    return (n - 1) / n;
  return 1.0;
}

std::size_t size_class(std::size_t bytes) {
  if (bytes == 0) return 0;
  std::size_t c = 1;
  while (c <= bytes / 2) c <<= 1;
  return c;
}

std::string size_text(std::size_t b) {
  if (b >= (1ull << 30) && b % (1ull << 30) == 0) return std::to_string(b >> 30) + "G";
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return std::to_string(b >> 20) + "M";
  if (b >= (1ull << 10) && b % (1ull << 10) == 0) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

int OpStats::bucket(std::int64_t ns) {
  if (ns < 64) return 0;
  const double octaves = std::log2(static_cast<double>(ns) / 64.0);
  const int b = static_cast<int>(octaves * kPerOctave);
  return std::min(b, kPerOctave * kOctaves - 1);
}

double OpStats::bucket_us(int b) {
  return 64.0 * std::exp2((b + 0.5) / kPerOctave) / 1000.0;
}

double OpStats::quantile_us(const Acc& a, double q) {
  if (a.count == 0) return 0;
  const auto want = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(a.count)));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < a.hist.size(); ++b) {
    seen += a.hist[b];
    if (seen >= std::max<std::uint64_t>(want, 1)) return bucket_us(static_cast<int>(b));
  }
  return static_cast<double>(a.max_ns) / 1000.0;
}

void OpStats::add(const OpEvent& e) {
  if (!e.ok) return;
  const std::int64_t ns = std::max<std::int64_t>(0, e.end_ns - e.start_ns);
  std::lock_guard<std::mutex> g(mu_);
  Acc& a = acc_[{e.name, size_class(e.bytes)}];
  if (a.hist.empty()) a.hist.assign(kPerOctave * kOctaves, 0);
  ++a.count;
  a.bytes += e.bytes;
  a.total_ns += ns;
  a.max_ns = std::max(a.max_ns, ns);
  a.algo = e.algo;
  ++a.hist[static_cast<std::size_t>(bucket(ns))];
}

std::vector<OpStatsRow> OpStats::rows() const {
  std::lock_guard<std::mutex> g(mu_);
  std::vector<OpStatsRow> out;
  for (const auto& [key, a] : acc_) {
    OpStatsRow r;
    r.op = key.first;
    r.size_class = key.second;
    r.count = a.count;
    r.bytes = a.bytes;
    r.total_us = static_cast<double>(a.total_ns) / 1000.0;
    r.mean_us = a.count ? r.total_us / static_cast<double>(a.count) : 0;
    r.p50_us = quantile_us(a, 0.50);
    r.p99_us = quantile_us(a, 0.99);
    r.max_us = static_cast<double>(a.max_ns) / 1000.0;
    const double mean_bytes = a.count ? static_cast<double>(a.bytes) / a.count : 0;
    r.busbw_gbps = r.mean_us > 0 ? mean_bytes / (r.mean_us * 1e3) * busbw_factor(r.op, nranks_) : 0;
    r.algo = a.algo;
    out.push_back(std::move(r));
  }
  return out;
}

std::string encode_stats(const std::vector<OpStatsRow>& rows) {
  std::string out;
  for (const auto& r : rows)
    out += str_printf("%s %zu %llu %llu %.3f %.3f %.3f %.3f %.4f %s\n", r.op.c_str(), r.size_class,
                      static_cast<unsigned long long>(r.count),
                      static_cast<unsigned long long>(r.bytes), r.total_us, r.p50_us, r.p99_us,
                      r.max_us, r.busbw_gbps, r.algo.empty() ? "-" : r.algo.c_str());
  return out;
}

std::vector<OpStatsRow> decode_stats(const std::string& text) {
  std::vector<OpStatsRow> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    OpStatsRow r;
    if (!(f >> r.op >> r.size_class >> r.count >> r.bytes >> r.total_us >> r.p50_us >> r.p99_us >>
          r.max_us >> r.busbw_gbps >> r.algo))
      continue;
    r.mean_us = r.count ? r.total_us / static_cast<double>(r.count) : 0;
    out.push_back(std::move(r));
  }
  return out;
}

namespace {

const char* kHeader = "  %-14s %6s %9s %12s %10s %10s %10s %8s %-12s %s\n";

}  // namespace

std::string format_rank_stats(const std::vector<OpStatsRow>& rows) {
  std::string out = str_printf(kHeader, "op", "size", "count", "bytes", "mean_us", "p50_us",
                               "p99_us", "busbw", "algo", "");
  for (const auto& r : rows)
    out += str_printf("  %-14s %6s %9llu %12llu %10.1f %10.1f %10.1f %8.3f %-12s\n", r.op.c_str(),
                      size_text(r.size_class).c_str(), static_cast<unsigned long long>(r.count),
                      static_cast<unsigned long long>(r.bytes), r.mean_us, r.p50_us, r.p99_us,
                      r.busbw_gbps, r.algo.c_str());
  return out;
}

std::string format_stats_table(const std::string& comm, int nranks,
                               const std::vector<std::vector<OpStatsRow>>& per_rank) {
  // (op, class) -> rank -> row
  std::map<std::pair<std::string, std::size_t>, std::map<int, const OpStatsRow*>> by_key;
  int reported = 0;
  for (int r = 0; r < static_cast<int>(per_rank.size()); ++r) {
    if (!per_rank[r].empty()) ++reported;
    for (const auto& row : per_rank[r]) by_key[{row.op, row.size_class}][r] = &row;
  }
  std::string out = str_printf("chorus stats v1 (%s, %d ranks, %d reported):\n", comm.c_str(),
                               nranks, reported);
  out += str_printf(kHeader, "op", "size", "count", "bytes", "mean_us", "p50_us", "p99_us", "busbw",
                    "algo", "last_rank  skew_us");
  for (const auto& [key, ranks] : by_key) {
    double sum_mean = 0, p50 = 0, p99 = 0, max_mean = -1, min_mean = 1e300;
    int last = -1;
    const OpStatsRow* first = ranks.begin()->second;
    for (const auto& [r, row] : ranks) {
      sum_mean += row->mean_us;
      p50 = std::max(p50, row->p50_us);
      p99 = std::max(p99, row->p99_us);
      max_mean = std::max(max_mean, row->mean_us);
      if (row->mean_us < min_mean) {
        min_mean = row->mean_us;
        last = r;
      }
    }
    const double mean = sum_mean / static_cast<double>(ranks.size());
    const double mean_bytes = first->count ? static_cast<double>(first->bytes) / first->count : 0;
    const double busbw = mean > 0 ? mean_bytes / (mean * 1e3) * busbw_factor(key.first, nranks) : 0;
    std::string skew = ranks.size() > 1 ? str_printf("%-9d %8.1f", last, max_mean - min_mean) : "-";
    out += str_printf("  %-14s %6s %9llu %12llu %10.1f %10.1f %10.1f %8.3f %-12s %s\n",
                      key.first.c_str(), size_text(key.second).c_str(),
                      static_cast<unsigned long long>(first->count),
                      static_cast<unsigned long long>(first->bytes), mean, p50, p99, busbw,
                      first->algo.c_str(), skew.c_str());
  }
  out += str_printf("chorus stats end (%s)\n", comm.c_str());
  return out;
}

}  // namespace chorus::diag
