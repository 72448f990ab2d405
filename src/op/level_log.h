// LevelLog: the levels of a hierarchical algorithm (hier*.cc) inside one operation, for
// the timeline and chorus::Profiler (OpEvent::levels). Core hands one to the algorithm
// through CollArgs::levels only when something watches; LevelScope stamps one level
// around a phase and does nothing when there is no log.
#pragma once
#include <chrono>
#include <cstdint>

#include "chorus/profiler.h"

namespace chorus::op {

// The steady clock in ns (CLOCK_MONOTONIC), as the timeline stamps operations.
inline std::int64_t level_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Up to kMax levels of one operation on one rank, in the order they started. Not
// thread-safe: one operation runs on one thread.
class LevelLog {
 public:
  static constexpr int kMax = 8;  // the hierarchical algorithms run at most 3

  // Starts a level now: `name` and `via` in static storage. Returns its slot, or -1 when
  // the log is full (the level is not recorded).
  int begin(const char* name, int level, const char* via) {
    if (size_ >= kMax) return -1;
    OpLevel& e = entries_[size_];
    e.name = name;
    e.level = level;
    e.via = via;
    e.start_ns = level_now_ns();
    e.end_ns = e.start_ns;
    return size_++;
  }
  void end(int slot) {
    if (slot >= 0 && slot < size_) entries_[slot].end_ns = level_now_ns();
  }

  const OpLevel* data() const { return entries_; }
  int size() const { return size_; }

 private:
  OpLevel entries_[kMax];
  int size_ = 0;
};

// Records one level for the scope's lifetime (the end is stamped on every way out,
// failures included); with a null log it costs one check.
class LevelScope {
 public:
  LevelScope(LevelLog* log, int level, const char* name, const char* via = "")
      : log_(log), slot_(log != nullptr ? log->begin(name, level, via) : -1) {}
  ~LevelScope() {
    if (log_ != nullptr) log_->end(slot_);
  }
  LevelScope(const LevelScope&) = delete;
  LevelScope& operator=(const LevelScope&) = delete;

 private:
  LevelLog* log_;
  int slot_;
};

}  // namespace chorus::op
