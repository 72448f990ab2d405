#include "transport/shm/hand_off.h"

#include <algorithm>

namespace chorus::shm {

void HandOffMeter::add(std::int64_t ns) {
  if (ns <= 0 || ns > kMaxNs) return;
  if (busy_.exchange(true, std::memory_order_acquire)) return;
  batch_[filled_++] = ns;
  if (filled_ == kBatch) {
    filled_ = 0;
    std::nth_element(batch_.begin(), batch_.begin() + kBatch / 2, batch_.end());
    medians_[next_median_] = batch_[kBatch / 2];
    next_median_ = (next_median_ + 1) % 3;
    if (batches_ < 3) ++batches_;
    if (batches_ == 3) {
      std::array<std::int64_t, 3> m = medians_;
      std::sort(m.begin(), m.end());
      now_ns_.store(m[1], std::memory_order_relaxed);
      const std::int64_t low = floor_ns_.load(std::memory_order_relaxed);
      if (low == 0 || m[1] < low) floor_ns_.store(m[1], std::memory_order_relaxed);
    }
  }
  busy_.store(false, std::memory_order_release);
}

transport::HandOff HandOffMeter::read() const {
  return {static_cast<double>(now_ns_.load(std::memory_order_relaxed)),
          static_cast<double>(floor_ns_.load(std::memory_order_relaxed))};
}

}  // namespace chorus::shm
