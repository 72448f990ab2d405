// The per-call time of back-to-back calls (sweep.cc): consecutive calls grouped in
// batches, each batch's mean per call, the median over batches.
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

}  // namespace chorus_tune
