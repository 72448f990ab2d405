// WorkState: the shared completion record of one asynchronous operation (what a public
// chorus::Work points to): state, outcome, completion callbacks and a condition variable
// for waiters.
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "util/status.h"

namespace chorus::core {

class WorkState : public std::enable_shared_from_this<WorkState> {
 public:
  enum class State { kPending, kDone, kFailed };
  using Callback = std::function<void(const std::shared_ptr<WorkState>&)>;

  // `name` must point to static storage ("all_reduce", "send", ...).
  WorkState(std::int64_t seq, const char* name) : seq_(seq), name_(name) {}
  // An operation that failed before it could be issued (e.g. refused).
  static std::shared_ptr<WorkState> failed(std::int64_t seq, const char* name, Status s);

  // Records the outcome (the first call wins), runs the callbacks in registration order
  // on this thread, then wakes every waiter. Callbacks must not throw.
  void complete(Status s);

  // True once complete and its callbacks have run (on the completing thread itself, as
  // soon as the outcome is recorded, so a callback may wait on its own operation).
  bool is_complete() const;
  State state() const;
  // The outcome; OK while pending.
  Status status() const;
  // Waits until is_complete() or until `deadline` (steady clock); true when complete.
  // Sleeps on a condition variable, never spins.
  bool wait_until(std::chrono::steady_clock::time_point deadline) const;
  void wait() const;
  // Runs `cb` after completion (on the completing thread), or at once on this thread
  // when the operation is already complete.
  void on_complete(Callback cb);

  // Issued inside a group that has not ended yet, by thread `by`: it cannot complete
  // before that thread calls group_end(), so that thread must not wait for it.
  void set_deferred(std::thread::id by) {
    std::lock_guard<std::mutex> g(mu_);
    deferred_by_ = by;
  }
  void clear_deferred() { set_deferred(std::thread::id()); }
  // True when the calling thread would wait forever (see set_deferred).
  bool waiting_would_hang() const {
    std::lock_guard<std::mutex> g(mu_);
    return deferred_by_ == std::this_thread::get_id() && !finished_;
  }

  std::int64_t seq() const { return seq_.load(std::memory_order_acquire); }
  // A receive from any source: the rank it receives from (-1 until known, and for every
  // other operation) and its seq on that pair, set once the source is chosen.
  int source() const { return source_.load(std::memory_order_acquire); }
  void set_source(int rank, std::int64_t seq) {
    seq_.store(seq, std::memory_order_release);
    source_.store(rank, std::memory_order_release);
  }
  const char* name() const { return name_; }

 private:
  std::atomic<std::int64_t> seq_;
  std::atomic<int> source_{-1};
  const char* const name_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  State state_ = State::kPending;
  Status status_;
  std::vector<Callback> callbacks_;
  bool finished_ = false;    // outcome recorded and callbacks run
  std::thread::id completer_;  // the thread running the callbacks
  std::thread::id deferred_by_;  // see set_deferred()
  bool finished_locked() const;  // REQUIRES mu_
};

}  // namespace chorus::core
