// Deadline: a point in steady time that every wait is bounded by.
#pragma once
#include <chrono>
#include <cstdint>

namespace chorus {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  // A deadline that never passes.
  static Deadline never() { return Deadline(Clock::time_point::max()); }
  static Deadline after(std::chrono::milliseconds d) { return after(d, Clock::now()); }
  // `d` after `from` (a reading of Clock the caller already has).
  static Deadline after(std::chrono::milliseconds d, Clock::time_point from) {
    if (d.count() <= 0) return Deadline(from);
    return Deadline(from + d);
  }
  explicit Deadline(Clock::time_point t) : at_(t) {}
  Deadline() : at_(Clock::time_point::max()) {}

  bool expired() const { return at_ != Clock::time_point::max() && Clock::now() >= at_; }
  bool is_never() const { return at_ == Clock::time_point::max(); }
  Clock::time_point at() const { return at_; }
  // Milliseconds left, clamped to [0, cap]; `cap` also applies to never().
  int remaining_ms(int cap = 1 << 30) const {
    if (is_never()) return cap;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
    if (left < 0) return 0;
    return left > cap ? cap : static_cast<int>(left);
  }
  // Microseconds left, clamped to [0, cap]; `cap` also applies to never().
  long remaining_us(long cap) const {
    if (is_never()) return cap;
    auto left = std::chrono::duration_cast<std::chrono::microseconds>(at_ - Clock::now()).count();
    if (left < 0) return 0;
    return left > cap ? cap : static_cast<long>(left);
  }
  // The earlier of two deadlines.
  static Deadline earliest(Deadline a, Deadline b) { return a.at_ < b.at_ ? a : b; }

 private:
  Clock::time_point at_;
};

}  // namespace chorus
