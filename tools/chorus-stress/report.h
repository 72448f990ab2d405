// Statistics per operation label, the progress line and the final summary.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "stress.h"

namespace chorus_stress {

struct OpStats {
  Kind kind = Kind::kAllReduce;
  int nranks = 1;
  std::int64_t count = 0;
  double bytes = 0;  // summed op_bytes
  double seconds = 0, min_seconds = 0, max_seconds = 0;
  std::int64_t wrong = 0;
  double busbw() const;  // GB/s, from the mean time and mean size
};

class Report {
 public:
  // One step's outcomes and its communication time (first issue to last completion).
  void add(const std::vector<OpOutcome>& outcomes, double step_seconds);
  std::int64_t wrong() const { return wrong_; }
  // "elapsed 0:00:10  steps 120 (12.0/s)  traffic 3.4 GB  errors 0 | tp all_reduce 1.20 GB/s ..."
  std::string progress_line(double elapsed_seconds, std::int64_t steps) const;
  // One row per label: count, bytes, mean/min/max time, busbw.
  std::string summary_table() const;
  // The same as JSON (nlohmann), with the step count and elapsed time.
  std::string summary_json(std::int64_t steps, double elapsed_seconds) const;

 private:
  std::map<std::string, OpStats> stats_;
  std::vector<std::string> order_;  // labels in first-seen order
  double traffic_ = 0;
  double step_seconds_ = 0;  // summed communication time of the steps
  std::int64_t steps_ = 0;
  std::int64_t wrong_ = 0;
};

}  // namespace chorus_stress
