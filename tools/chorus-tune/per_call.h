// chorus-tune's time per call of one algorithm on one rank (sweep.cc): the mean of each
// round's back-to-back calls, then the median over rounds.
#pragma once
#include <algorithm>
#include <vector>

namespace chorus_tune {

// The median (the upper one of an even count); 0 for none.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// `rounds[k]`: the durations of round k's calls, run back to back. A round's mean counts
// a call that waits for what earlier ones left undone and a call that stalls, as a loop
// of calls pays them; the median over rounds drops a round in which the rank was
// descheduled. Empty rounds are skipped; 0 for none.
inline double time_per_call(const std::vector<std::vector<double>>& rounds) {
  std::vector<double> means;
  for (const std::vector<double>& calls : rounds) {
    if (calls.empty()) continue;
    double sum = 0;
    for (double us : calls) sum += us;
    means.push_back(sum / double(calls.size()));
  }
  return median(means);
}

}  // namespace chorus_tune
