// StreamQueue: one stream of a communicator — a FIFO of operations and the worker thread
// (started on the first push) that runs them one at a time, in push order.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace chorus::core {

// One queued operation. run() executes it and completes its WorkState; it must not throw.
class StreamTask {
 public:
  virtual ~StreamTask() = default;
  virtual void run() = 0;
};

class StreamQueue {
 public:
  // `name` as the user gave it; label() is the flight recorder's copy of it.
  StreamQueue(int id, std::string name);
  ~StreamQueue();  // stop()
  StreamQueue(const StreamQueue&) = delete;
  StreamQueue& operator=(const StreamQueue&) = delete;

  int id() const { return id_; }
  const std::string& name() const { return name_; }
  // The name as one dump token (no spaces, '=' or control characters; never empty).
  // Stable for the queue's lifetime (the flight recorder keeps the pointer).
  const char* label() const { return label_.c_str(); }

  // Appends `task`; starts the worker thread if needed. REQUIRES: not stopped.
  void push(std::unique_ptr<StreamTask> task);
  // Operations pushed and not yet finished (queued or running). Cheap (one atomic load).
  std::size_t outstanding() const { return outstanding_.load(std::memory_order_acquire); }
  // Blocks until outstanding() == 0 (bounded by the deadlines of the queued operations).
  void wait_idle();
  // Runs what is still queued, then joins the worker. Idempotent.
  void stop();

 private:
  void worker();

  const int id_;
  const std::string name_;
  const std::string label_;
  std::mutex mu_;
  std::condition_variable cv_;       // worker: work arrived / stop
  std::condition_variable idle_cv_;  // wait_idle(): outstanding reached 0
  std::deque<std::unique_ptr<StreamTask>> queue_;
  std::atomic<std::size_t> outstanding_{0};
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace chorus::core
