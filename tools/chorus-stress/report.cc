// Progress and summary output of chorus-stress.
#include "report.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace chorus_stress {

double OpStats::busbw() const {
  if (count == 0 || seconds <= 0) return 0.0;
  return bytes / seconds * busbw_factor(kind, nranks) / 1e9;
}

void Report::add(const std::vector<OpOutcome>& outcomes, double step_seconds) {
  step_seconds_ += step_seconds;
  ++steps_;
  for (const OpOutcome& o : outcomes) {
    auto [it, fresh] = stats_.try_emplace(o.label);
    OpStats& s = it->second;
    if (fresh) {
      order_.push_back(o.label);
      s.kind = o.kind;
      s.nranks = o.nranks;
      s.min_seconds = o.seconds;
    }
    ++s.count;
    s.bytes += static_cast<double>(o.bytes);
    s.seconds += o.seconds;
    s.min_seconds = std::min(s.min_seconds, o.seconds);
    s.max_seconds = std::max(s.max_seconds, o.seconds);
    traffic_ += static_cast<double>(o.bytes);
    if (o.wrong) {
      ++s.wrong;
      ++wrong_;
    }
  }
}

std::string Report::progress_line(double elapsed_seconds, std::int64_t steps) const {
  const auto secs = static_cast<long long>(elapsed_seconds);
  char head[192];
  std::snprintf(head, sizeof(head),
                "elapsed %lld:%02lld:%02lld  steps %lld (%.1f/s)  comm/step %.3f ms  traffic %.2f GB  "
                "errors %lld",
                secs / 3600, secs / 60 % 60, secs % 60, static_cast<long long>(steps),
                elapsed_seconds > 0 ? static_cast<double>(steps) / elapsed_seconds : 0.0,
                steps_ > 0 ? step_seconds_ / static_cast<double>(steps_) * 1e3 : 0.0,
                traffic_ / 1e9, static_cast<long long>(wrong_));
  std::string line = head;
  for (const std::string& label : order_) {
    char part[96];
    std::snprintf(part, sizeof(part), " | %s %.2f GB/s", label.c_str(), stats_.at(label).busbw());
    line += part;
  }
  return line;
}

std::string Report::summary_table() const {
  std::string out;
  char row[256];
  std::snprintf(row, sizeof(row), "%-26s %8s %12s %12s %12s %12s %10s %7s\n", "# op", "count",
                "bytes", "mean(us)", "min(us)", "max(us)", "busbw", "wrong");
  out += row;
  for (const std::string& label : order_) {
    const OpStats& s = stats_.at(label);
    std::snprintf(row, sizeof(row), "%-26s %8lld %12.4g %12.1f %12.1f %12.1f %10.2f %7lld\n",
                  label.c_str(), static_cast<long long>(s.count), s.bytes,
                  s.seconds / static_cast<double>(s.count) * 1e6, s.min_seconds * 1e6,
                  s.max_seconds * 1e6, s.busbw(), static_cast<long long>(s.wrong));
    out += row;
  }
  return out;
}

std::string Report::summary_json(std::int64_t steps, double elapsed_seconds) const {
  nlohmann::ordered_json ops = nlohmann::ordered_json::array();
  for (const std::string& label : order_) {
    const OpStats& s = stats_.at(label);
    ops.push_back({{"op", label},
                   {"ranks", s.nranks},
                   {"count", s.count},
                   {"bytes", s.bytes},
                   {"mean_us", s.seconds / static_cast<double>(s.count) * 1e6},
                   {"min_us", s.min_seconds * 1e6},
                   {"max_us", s.max_seconds * 1e6},
                   {"busbw_gbps", s.busbw()},
                   {"wrong", s.wrong}});
  }
  nlohmann::ordered_json doc = {{"steps", steps},
                                {"elapsed_s", elapsed_seconds},
                                {"comm_ms_per_step",
                                 steps_ > 0 ? step_seconds_ / static_cast<double>(steps_) * 1e3 : 0.0},
                                {"wrong", wrong_},
                                {"ops", ops}};
  return doc.dump(2);
}

}  // namespace chorus_stress
