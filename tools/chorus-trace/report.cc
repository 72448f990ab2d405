// The chorus-trace report: operations, levels of hierarchical algorithms, arrival skew,
// stragglers, stream overlap.
#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

namespace chorus_trace {

namespace {

double busbw_factor(const std::string& name, int n) {
  if (n <= 1) return 1.0;
  if (name == "all_reduce" || name == "agree") return 2.0 * (n - 1) / n;
  if (name == "all_gather" || name == "reduce_scatter" || name == "all_to_all" ||
      name == "all_to_all_v" || name == "gather" || name == "scatter")
    return static_cast<double>(n - 1) / n;
  return 1.0;
}

unsigned long long size_class(double bytes) {
  unsigned long long b = static_cast<unsigned long long>(bytes), c = 1;
  if (b == 0) return 0;
  while (c <= b / 2) c <<= 1;
  return c;
}

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) ;
  return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
}

struct Interval {
  double a, b;
};

// Union of intervals, sorted and disjoint.
std::vector<Interval> unite(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& x, const Interval& y) { return x.a < y.a; });
  std::vector<Interval> out;
  for (const auto& i : v) {
    if (!out.empty() && i.a <= out.back().b) out.back().b = std::max(out.back().b, i.b);
    else out.push_back(i);
  }
  return out;
}

double length(const std::vector<Interval>& v) {
  double s = 0;
  for (const auto& i : v) s += i.b - i.a;
  return s;
}

double intersect(const std::vector<Interval>& x, const std::vector<Interval>& y) {
  double s = 0;
  std::size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const double a = std::max(x[i].a, y[j].a), b = std::min(x[i].b, y[j].b);
    if (b > a) s += b - a;
    if (x[i].b < y[j].b) ++i;
    else ++j;
  }
  return s;
}

nlohmann::json op_rows(const std::vector<Instance>& instances) {
  struct Acc {
    int n = 0;
    double bytes = 0;
    std::vector<double> time, skew;
    std::map<int, int> last;
  };
  std::map<std::pair<std::string, unsigned long long>, Acc> acc;
  for (const Instance& in : instances) {
    if (!in.complete()) continue;
    Acc& a = acc[{in.spans[0]->name, size_class(in.spans[0]->bytes)}];
    ++a.n;
    a.bytes = in.spans[0]->bytes;
    a.time.push_back(std::max(0.0, in.last_end - in.last_start));
    a.skew.push_back(in.last_arrival - in.first_arrival);
    if (in.expected > 1) ++a.last[in.last_rank];
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [key, a] : acc) {
    const int n = a.n;
    const double p50 = quantile(a.time, 0.5);
    int top = -1, top_n = 0;
    for (const auto& [r, c] : a.last)
      if (c > top_n) top = r, top_n = c;
    double skew_sum = 0;
    for (double s : a.skew) skew_sum += s;
    rows.push_back({{"op", key.first}, {"size_class", key.second}, {"count", n},
                    {"bytes", a.bytes}, {"time_p50_us", p50},
                    {"time_p99_us", quantile(a.time, 0.99)},
                    {"busbw_gbps", 0.0},  // set by report(), which knows the size
                    {"skew_mean_us", n ? skew_sum / n : 0.0},
                    {"skew_max_us", a.skew.empty() ? 0.0 : *std::max_element(a.skew.begin(), a.skew.end())},
                    {"last_rank", top}, {"last_share", n ? static_cast<double>(top_n) / n : 0.0}});
  }
  return rows;
}

// Levels of hierarchical algorithms: per (operation, level), the time of each rank's
// level span.
nlohmann::json level_rows(const std::vector<RankFile>& files) {
  struct Acc {
    std::vector<double> time;
    std::string via;
  };
  std::map<std::tuple<std::string, int, std::string>, Acc> acc;
  for (const auto& f : files)
    for (const LevelSpan& l : f.levels) {
      Acc& a = acc[{l.op, l.level, l.name}];
      a.time.push_back(l.dur);
      if (!l.via.empty()) a.via = l.via;
    }
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [key, a] : acc)
    rows.push_back({{"op", std::get<0>(key)}, {"level", std::get<1>(key)},
                    {"name", std::get<2>(key)}, {"via", a.via}, {"count", a.time.size()},
                    {"time_p50_us", quantile(a.time, 0.5)},
                    {"time_p99_us", quantile(a.time, 0.99)}});
  return rows;
}

}  // namespace

nlohmann::json report(const std::vector<RankFile>& files) {
  const std::vector<Instance> instances = match(files);
  nlohmann::json r;
  r["chorus_trace_report"] = 1;
  r["ranks"] = files.size();
  nlohmann::json ops = op_rows(instances);
  // busbw needs the communicator size: fix the factor per row from any instance.
  std::map<std::string, int> size_of;
  for (const Instance& in : instances) size_of[in.spans[0]->name] = in.expected;
  for (auto& row : ops) {
    const std::string op = row["op"];
    const double p50 = row["time_p50_us"];
    const double bytes = row["bytes"];
    row["busbw_gbps"] = p50 > 0 ? bytes / (p50 * 1e3) * busbw_factor(op, size_of[op]) : 0.0;
  }
  r["ops"] = ops;
  r["levels"] = level_rows(files);

  // Stragglers: how often each rank arrived last, and by how much after the next one.
  std::map<int, std::pair<int, double>> last;  // rank -> (times, sum of lateness)
  int considered = 0;
  for (const Instance& in : instances) {
    if (!in.complete() || in.expected < 2) continue;
    ++considered;
    auto& l = last[in.last_rank];
    ++l.first;
    l.second += in.last_arrival - in.second_arrival;
  }
  nlohmann::json stragglers = nlohmann::json::array();
  for (const auto& [rank, l] : last)
    stragglers.push_back({{"rank", rank}, {"times_last", l.first},
                          {"share", considered ? static_cast<double>(l.first) / considered : 0.0},
                          {"mean_late_us", l.first ? l.second / l.first : 0.0}});
  std::sort(stragglers.begin(), stragglers.end(), [](const auto& a, const auto& b) {
    return a["times_last"].template get<int>() > b["times_last"].template get<int>();
  });
  r["operations_matched"] = considered;
  r["stragglers"] = stragglers;
  r["straggler"] = stragglers.empty() ? -1 : stragglers[0]["rank"].get<int>();

  // Overlap: per rank and track, the share of its busy time other tracks were busy.
  nlohmann::json streams = nlohmann::json::array();
  for (const auto& f : files) {
    std::map<long, std::vector<Interval>> by_track;
    std::map<long, std::string> label;
    for (const auto& s : f.spans) {
      by_track[s.tid].push_back({s.ts, s.end()});
      label[s.tid] = s.comm_key + " " + s.stream;
    }
    for (auto& [tid, v] : by_track) v = unite(v);
    for (const auto& [tid, v] : by_track) {
      std::vector<Interval> others;
      for (const auto& [t2, w] : by_track)
        if (t2 != tid) others.insert(others.end(), w.begin(), w.end());
      const double busy = length(v), ov = intersect(v, unite(others));
      streams.push_back({{"rank", f.rank}, {"track", label[tid]}, {"busy_us", busy},
                         {"overlap_us", ov}, {"overlap_pct", busy > 0 ? 100.0 * ov / busy : 0.0}});
    }
  }
  r["streams"] = streams;
  nlohmann::json clocks = nlohmann::json::array();
  for (const auto& f : files) {
    const auto& c = f.other.value("clock", nlohmann::json::object());
    clocks.push_back({{"rank", f.rank}, {"offset_us", c.value("offset_us", 0.0)},
                      {"error_us", c.value("error_us", 0.0)}, {"method", c.value("method", "")}});
  }
  r["clocks"] = clocks;
  return r;
}

static std::string size_text(unsigned long long b) {
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) return std::to_string(b >> 20) + "M";
  if (b >= (1ull << 10) && b % (1ull << 10) == 0) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

std::string report_text(const nlohmann::json& r) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "# chorus-trace report: %d ranks, %d collectives matched on all their ranks\n",
                r["ranks"].get<int>(), r["operations_matched"].get<int>());
  out += line;
  std::snprintf(line, sizeof line, "%-16s %10s %7s %12s %12s %9s %10s %10s %9s %6s\n", "op",
                "size", "count", "time_p50_us", "time_p99_us", "busbw", "skew_mean", "skew_max",
                "last_rank", "share");
  out += line;
  for (const auto& o : r["ops"]) {
    std::snprintf(line, sizeof line, "%-16s %10s %7d %12.1f %12.1f %9.3f %10.1f %10.1f %9d %5.0f%%\n",
                  o["op"].get<std::string>().c_str(),
                  size_text(o["size_class"].get<unsigned long long>()).c_str(),
                  o["count"].get<int>(), o["time_p50_us"].get<double>(),
                  o["time_p99_us"].get<double>(), o["busbw_gbps"].get<double>(),
                  o["skew_mean_us"].get<double>(), o["skew_max_us"].get<double>(),
                  o["last_rank"].get<int>(), 100 * o["last_share"].get<double>());
    out += line;
  }
  if (!r["levels"].empty()) {
    out += "# levels of hierarchical algorithms: each rank's time in each level\n";
    std::snprintf(line, sizeof line, "%-16s %-28s %-9s %7s %12s %12s\n", "op", "level", "via",
                  "count", "time_p50_us", "time_p99_us");
    out += line;
    for (const auto& l : r["levels"]) {
      const std::string name =
          std::to_string(l["level"].get<int>()) + " " + l["name"].get<std::string>();
      std::snprintf(line, sizeof line, "%-16s %-28s %-9s %7d %12.1f %12.1f\n",
                    l["op"].get<std::string>().c_str(), name.c_str(),
                    l["via"].get<std::string>().empty() ? "-" : l["via"].get<std::string>().c_str(),
                    l["count"].get<int>(),
                    l["time_p50_us"].get<double>(), l["time_p99_us"].get<double>());
      out += line;
    }
  }
  out += "# arrival: the rank that issued each collective last (stragglers first)\n";
  std::snprintf(line, sizeof line, "%-6s %10s %7s %14s\n", "rank", "times_last", "share", "mean_late_us");
  out += line;
  for (const auto& s : r["stragglers"]) {
    std::snprintf(line, sizeof line, "%-6d %10d %6.0f%% %14.1f\n", s["rank"].get<int>(),
                  s["times_last"].get<int>(), 100 * s["share"].get<double>(),
                  s["mean_late_us"].get<double>());
    out += line;
  }
  std::snprintf(line, sizeof line, "# straggler: rank %d\n", r["straggler"].get<int>());
  out += line;
  out += "# overlap: share of each stream's busy time during which another stream of the rank was busy\n";
  for (const auto& s : r["streams"]) {
    std::snprintf(line, sizeof line, "rank %-4d %-44s busy %10.1f us  overlapped %5.1f%%\n",
                  s["rank"].get<int>(), s["track"].get<std::string>().c_str(),
                  s["busy_us"].get<double>(), s["overlap_pct"].get<double>());
    out += line;
  }
  for (const auto& c : r["clocks"]) {
    std::snprintf(line, sizeof line, "# clock rank %d: offset %.1f us +- %.1f us (%s)\n",
                  c["rank"].get<int>(), c["offset_us"].get<double>(), c["error_us"].get<double>(),
                  c["method"].get<std::string>().c_str());
    out += line;
  }
  return out;
}

}  // namespace chorus_trace
