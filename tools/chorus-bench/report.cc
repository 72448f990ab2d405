// Text table (nccl-tests layout) and JSON rendering of chorus-bench results.
#include "report.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "chorus/info.h"

namespace chorus_bench {
namespace {

std::string fmt_time(double us) {
  char buf[32];
  const char* format = us < 1e4 ? "%7.2f" : us < 1e5 ? "%7.1f" : "%7.0f";  // 7 columns
  std::snprintf(buf, sizeof(buf), format, us);
  return buf;
}

std::string fmt_wrong(std::int64_t wrong) {
  return wrong < 0 ? "N/A" : std::to_string(wrong);
}

void print_mode(const ModeResult& m) {
  std::printf("  %7s  %6.2f  %6.2f  %6s", fmt_time(m.time_us).c_str(), m.algbw, m.busbw,
              fmt_wrong(m.wrong).c_str());
}

nlohmann::ordered_json mode_json(const ModeResult& m, const char* prefix) {
  std::string p(prefix);
  return {{p + "time_us", m.time_us},
          {p + "min_us", m.min_us},
          {p + "max_us", m.max_us},
          {p + "algbw", m.algbw},
          {p + "busbw", m.busbw},
          {p + "wrong", m.wrong < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(m.wrong)},
          {p + "stats_time_us",
           m.stats_time_us < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(m.stats_time_us)}};
}

}  // namespace

void print_banner(const BenchConfig& cfg, int nranks, const std::string& transport) {
  std::printf("# chorus-bench (Chorus %s): %d ranks, minBytes %zu maxBytes %zu step: %zu(factor) "
              "warmup iters: %d iters: %d validation: %d\n",
              chorus::version(), nranks, cfg.min_bytes, cfg.max_bytes, cfg.step_factor,
              cfg.warmup_iters, cfg.iters, cfg.check ? 1 : 0);
  std::printf("# transport: %s\n", transport.c_str());
  if (cfg.sync) std::printf("# sync: a barrier before every timed iteration\n");
  if (!cfg.algo.empty()) std::printf("# algo: %s\n", cfg.algo.c_str());
  std::printf("#\n");
}

void print_table_header(Coll c) {
  std::printf("# Collective: %s\n#\n", coll_name(c));
  std::printf("# %72s%31s\n", "out-of-place", "in-place");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size",
              "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
              "algbw", "busbw", "#wrong");
  std::printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)",
              "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
              "(GB/s)", "");
  std::fflush(stdout);
}

void print_row(const RowResult& row) {
  std::printf("  %10zu  %12zu  %8s  %6s  %6d", row.bytes, row.elems, chorus::to_string(row.dtype),
              has_redop(row.coll) ? chorus::to_string(row.op) : "none",
              has_root(row.coll) ? row.root : -1);
  print_mode(row.out_of_place);
  print_mode(row.in_place);
  std::printf("\n");
  std::fflush(stdout);
}

std::int64_t total_wrong(const std::vector<RowResult>& rows) {
  std::int64_t total = 0;
  for (const RowResult& r : rows)
    for (const ModeResult* m : {&r.out_of_place, &r.in_place})
      if (m->wrong > 0) total += m->wrong;
  return total;
}

void print_footer(const std::vector<RowResult>& rows, bool checked) {
  double sum = 0;
  for (const RowResult& r : rows) sum += r.out_of_place.busbw + r.in_place.busbw;
  std::int64_t wrong = total_wrong(rows);
  if (checked)
    std::printf("# Out of bounds values : %lld %s\n", static_cast<long long>(wrong),
                wrong == 0 ? "OK" : "FAILED");
  else
    std::printf("# Out of bounds values : N/A (check disabled)\n");
  std::printf("# Avg bus bandwidth    : %g\n#\n", rows.empty() ? 0.0 : sum / (2.0 * rows.size()));
  std::fflush(stdout);
}

std::string write_stats_json(const std::string& path, const std::vector<chorus::OpStatsRow>& rows) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& r : rows)
    out.push_back({{"op", r.op}, {"size_class", r.size_class}, {"count", r.count},
                   {"bytes", r.bytes}, {"total_us", r.total_us}, {"mean_us", r.mean_us},
                   {"p50_us", r.p50_us}, {"p99_us", r.p99_us}, {"max_us", r.max_us},
                   {"busbw_gbps", r.busbw_gbps}, {"algo", r.algo}});
  std::ofstream f(path);
  if (!f) return "cannot open " + path + ": " + std::strerror(errno);
  f << out.dump(2) << "\n";
  f.close();
  return f ? "" : "cannot write " + path;
}

std::string write_json(const std::string& path, const std::vector<RowResult>& rows, int nranks,
                       bool sync) {
  using Json = nlohmann::ordered_json;
  Json out = Json::array();
  for (const RowResult& r : rows) {
    Json row = {{"op", coll_name(r.coll)},
                {"nranks", nranks},
                {"size", r.bytes},
                {"count", r.elems},
                {"type", chorus::to_string(r.dtype)},
                {"redop", has_redop(r.coll) ? Json(chorus::to_string(r.op)) : Json()},
                {"root", has_root(r.coll) ? Json(r.root) : Json()},
                {"sync", sync}};
    row.update(mode_json(r.out_of_place, "oop_"));
    row.update(mode_json(r.in_place, "ip_"));
    out.push_back(std::move(row));
  }
  std::ofstream f(path);
  if (!f) return "cannot open " + path + ": " + std::strerror(errno);
  f << out.dump(2) << "\n";
  f.close();
  if (!f) return "cannot write " + path;
  return "";
}

}  // namespace chorus_bench
