// The per-call time of back-to-back calls (sweep.cc): consecutive calls grouped in
// batches (a round's calls), each batch's mean per call, the median over batches.
#pragma once
#include <algorithm>
#include <cstddef>
#include <vector>

namespace chorus_tune {

// The means of `calls_us` (each call's duration, in the order they ran back to back)
// grouped in batches of `batch` consecutive calls (the last one may be shorter). A call
// that waits for what earlier calls left undone counts with them, as a loop of calls
// pays it.
inline std::vector<double> batch_means(const std::vector<double>& calls_us, std::size_t batch) {
  std::vector<double> means;
  batch = std::max<std::size_t>(batch, 1);
  for (std::size_t i = 0; i < calls_us.size(); i += batch) {
    const std::size_t end = std::min(calls_us.size(), i + batch);
    double sum = 0;
    for (std::size_t j = i; j < end; ++j) sum += calls_us[j];
    means.push_back(sum / double(end - i));
  }
  return means;
}

// The median (the upper one of an even count); 0 for none. It drops a batch in which the
// rank was descheduled.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// A rank's time per call of one algorithm: each round's mean per call (`rounds[k]`: the
// durations of round k's calls, run back to back: its waits and stalls count, as a loop
// pays them), then the median over rounds (a round in which the rank was descheduled
// drops out). 0 for no rounds.
inline double time_per_call(const std::vector<std::vector<double>>& rounds) {
  std::vector<double> means;
  for (const std::vector<double>& calls : rounds)
    if (!calls.empty()) means.push_back(batch_means(calls, calls.size()).front());
  return median(means);
}

}  // namespace chorus_tune
